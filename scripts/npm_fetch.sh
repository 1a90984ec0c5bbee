# Shared by scripts/fetch_widgets.sh and scripts/fetch_datasets.sh (source it, do not run it):
# fetch one npm package's tarball into a temporary folder and check pinned SHA-256 values.
#
#   npm_pack PKG          -> sets NPM_TMP (removed on exit) and NPM_TGZ (the tarball's path)
#   sha256_or_die FILE SHA WHAT
#                         -> exits 1 with "error: WHAT does not match the pinned SHA-256 SHA"

npm_pack() {
  command -v npm >/dev/null || { echo "error: npm not found (apt-get install -y npm)" >&2; exit 1; }
  NPM_TMP=$(mktemp -d)
  trap 'rm -rf "$NPM_TMP"' EXIT
  echo "fetching $1 from the npm registry ..."
  (cd "$NPM_TMP" && npm pack --silent "$1" >/dev/null)
  NPM_TGZ=$(ls "$NPM_TMP"/*.tgz)
}

sha256_or_die() {
  echo "$2  $1" | sha256sum -c --status \
    || { echo "error: $3 does not match the pinned SHA-256 $2" >&2; exit 1; }
}
