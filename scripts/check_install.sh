#!/usr/bin/env bash
# The library installs alone: build the wheel, install it into a fresh virtual environment (no
# requirements.txt; pip fetches numpy and scipy from PyPI or its cache), then call the CLI.
#
#   scripts/check_install.sh [PYTHON]     (default: the interpreter .venv was built from)
#
# Checks, in the fresh venv: the installed distributions are amp-shuffle, numpy and scipy only;
# `amp --version`; one certified CLI answer (`amp epsilon ... --json`); `import amp` does not
# import matplotlib; the wheel holds no book code (ampbook, amp.viz's modules) and `import amp.viz`
# fails with one line naming the book's package; a multi-round call (no dp-accounting) fails with
# a one-line message naming the extra (pip install 'amp-shuffle[rounds]').
# Prints the wheel build and install times.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${1:-}
if [[ -z $PY ]]; then
  if [[ -x $ROOT/.venv/bin/python ]]; then
    PY=$("$ROOT/.venv/bin/python" -c 'import sys; print(sys._base_executable)')
  else
    PY=python3
  fi
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/amp-install.XXXXXX")
# setuptools leaves build/ in the source tree: remove it afterwards unless it was already there
CLEAN_BUILD=""
[[ -e $ROOT/build ]] || CLEAN_BUILD="$ROOT/build"
trap 'rm -rf "$TMP" $CLEAN_BUILD' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo ">> building the wheel (pip wheel . --no-deps) with $PY"
t0=$(now)
"$PY" -m pip wheel "$ROOT" --no-deps --quiet -w "$TMP/dist"
WHEEL=$(ls "$TMP"/dist/amp_shuffle-*.whl)
t1=$(now)
echo "   $(basename "$WHEEL") built in $(elapsed "$t0" "$t1") s"

echo ">> fresh venv: $PY -m venv"
"$PY" -m venv "$TMP/venv"
VPY="$TMP/venv/bin/python"
cd "$TMP"            # never import amp from the source tree

echo ">> pip install $(basename "$WHEEL")  (numpy, scipy from PyPI or the pip cache)"
t2=$(now)
"$VPY" -m pip install --quiet "$WHEEL"
t3=$(now)
INSTALL_S=$(elapsed "$t2" "$t3")
echo "   installed in $INSTALL_S s"

echo ">> installed distributions"
DISTS=$("$VPY" -m pip list --format=freeze --exclude pip --exclude setuptools --exclude wheel)
echo "$DISTS" | sed 's/^/   /'
EXTRA=$(echo "$DISTS" | cut -d= -f1 | tr 'A-Z_' 'a-z-' | grep -vxE 'amp-shuffle|numpy|scipy' || true)
if [[ -n $EXTRA ]]; then
  echo "FAIL: the library pulled in more than numpy and scipy: $EXTRA"; exit 1
fi

echo ">> amp --version"
VERSION=$("$TMP/venv/bin/amp" --version)
echo "   $VERSION"
[[ $VERSION == "amp "* ]] || { echo "FAIL: unexpected --version output"; exit 1; }

CMD=(amp epsilon --mechanism krr --k 10 --eps0 4 --n 10000 --delta 1e-6 --json)
echo ">> ${CMD[*]}"
t4=$(now)
ANSWER=$("$TMP/venv/bin/amp" "${CMD[@]:1}")
t5=$(now)
echo "   $ANSWER"
echo "   (answered in $(elapsed "$t4" "$t5") s)"
"$VPY" - "$ANSWER" <<'EOF'
import json, sys
a = json.loads(sys.argv[1])
lo, hi = a["bracket"]
assert 0 < lo <= a["value"] == hi < 4, a
assert (hi - lo) / hi <= 1e-4, a
EOF

echo ">> the wheel is the library: no book code (issue 34)"
"$VPY" - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
book = [n for n in names if n.startswith(("ampbook/", "book/", "coursekit/"))
        or (n.startswith("amp/viz/") and n != "amp/viz/__init__.py")]
assert not book, book
print(f"   {len(names)} files, none of the book's (amp/viz/__init__.py and amp/accuracy.py are "
      "deprecated aliases that name the book's package)")
EOF
msg=$("$VPY" -c 'import amp.viz' 2>&1 || true)
last=$(echo "$msg" | tail -n 1)
echo "   import amp.viz -> $last"
[[ $last == ImportError:*"pip install -e book"* ]] || { echo "FAIL: import amp.viz should name the book's package"; exit 1; }

echo ">> import amp needs numpy and scipy only; a multi-round call names the extra"
"$VPY" -c 'import sys, amp; assert "matplotlib" not in sys.modules; print("   import amp: ok,", amp.__version__)'
# expect_extra WHAT CODE EXTRA: running CODE must fail with a last line naming the extra
expect_extra() {
  local msg rc last
  set +e
  msg=$("$VPY" -c "$2" 2>&1)
  rc=$?
  set -e
  last=$(echo "$msg" | tail -n 1)
  echo "   $1 -> exit $rc: $last"
  if [[ $rc -eq 0 || $last != *"pip install 'amp-shuffle[$3]'"* ]]; then
    echo "FAIL: expected an ImportError naming the extra [$3]"; exit 1
  fi
}
expect_extra "amp.epsilon(..., rounds=2)" \
  'import amp; amp.epsilon(amp.KRR(4.0, k=10), 1000, 1e-6, rounds=2)' rounds

echo
echo "clean install: wheel $(basename "$WHEEL"), install time ${INSTALL_S} s, $VERSION"
echo "clean install: CLI answer $ANSWER"
