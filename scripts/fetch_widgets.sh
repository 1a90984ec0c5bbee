#!/usr/bin/env bash
# Fetch the ipywidgets loader for the static book, offline-servable (no CDN at view time).
#
#   scripts/fetch_widgets.sh [DEST]     (default DEST: book/_static/widgets, gitignored)
#
# Source: npm package @jupyter-widgets/html-manager@1.0.15 (ipywidgets 8), via `npm pack` from the
# npm registry. Copies dist/embed.js (self-contained: no require.js; it finds its fonts next to
# itself through document.currentScript) and the .woff2 font files it references. embed.js is
# checked against a pinned SHA-256 so that the build is reproducible.
set -euo pipefail

VERSION=1.0.15
PKG="@jupyter-widgets/html-manager@${VERSION}"
EMBED_SHA256=8f6d2d3f856d8595d1841dec3019d99bbe74d331f2a5178c2a33bfec729e3d6a
DEST=${1:-book/_static/widgets}

if [[ -f "$DEST/embed.js" ]] && echo "$EMBED_SHA256  $DEST/embed.js" | sha256sum -c --status; then
  echo "widgets loader already present: $DEST/embed.js ($PKG)"
  exit 0
fi
source "$(dirname "$0")/npm_fetch.sh"
npm_pack "$PKG"
tmp=$NPM_TMP
tar -xzf "$NPM_TGZ" -C "$tmp"
sha256_or_die "$tmp/package/dist/embed.js" "$EMBED_SHA256" "embed.js of $PKG"

rm -rf "$DEST.tmp"
mkdir -p "$DEST.tmp"
cp "$tmp"/package/dist/embed.js "$tmp"/package/dist/embed.js.LICENSE.txt "$DEST.tmp"/
cp "$tmp"/package/dist/*.woff2 "$DEST.tmp"/
cp "$tmp"/package/LICENSE "$DEST.tmp"/LICENSE 2>/dev/null || true
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "installed $PKG loader into $DEST ($(du -sh "$DEST" | cut -f1))"
