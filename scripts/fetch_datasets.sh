#!/usr/bin/env bash
# Fetch the real categorical dataset of chapter 12 (accuracy), offline-servable afterwards.
#
#   scripts/fetch_datasets.sh [DEST]     (default DEST: book/data/vega, gitignored)
#
# Source: npm package vega-datasets@3.2.1 (package licence BSD-3-Clause), via `npm pack` from the
# npm registry. Extracts only data/zipcodes.csv: 42,049 US postal codes with their state (59
# values), a 2017 snapshot of the GeoNames postal code database
# (https://download.geonames.org/export/zip/, CC BY 4.0 as the package's datapackage.json states).
# The tarball and the CSV are checked against pinned SHA-256 values (reproducible build); a
# mismatch fails loudly.
set -euo pipefail

VERSION=3.2.1
PKG="vega-datasets@${VERSION}"
TGZ_SHA256=6f72fda460a9863fae5fcb32f85bcd49e1761fdea6dc6cf9f4962472881cc5a3
CSV_SHA256=8ad998c84fe40b33806130ba942f18beaf734617a150ad563eeaebdfc003bc62
DEST=${1:-book/data/vega}

if [[ -f "$DEST/zipcodes.csv" ]] && echo "$CSV_SHA256  $DEST/zipcodes.csv" | sha256sum -c --status; then
  echo "dataset already present: $DEST/zipcodes.csv ($PKG)"
  exit 0
fi
source "$(dirname "$0")/npm_fetch.sh"
npm_pack "$PKG"
tmp=$NPM_TMP
sha256_or_die "$NPM_TGZ" "$TGZ_SHA256" "the $PKG tarball"
tar -xzf "$NPM_TGZ" -C "$tmp" package/data/zipcodes.csv
sha256_or_die "$tmp/package/data/zipcodes.csv" "$CSV_SHA256" "zipcodes.csv of $PKG"

mkdir -p "$DEST"
cp "$tmp/package/data/zipcodes.csv" "$DEST/zipcodes.csv.tmp"
mv "$DEST/zipcodes.csv.tmp" "$DEST/zipcodes.csv"
echo "installed zipcodes.csv of $PKG into $DEST ($(wc -l < "$DEST/zipcodes.csv") lines)"
