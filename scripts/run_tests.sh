#!/usr/bin/env bash
# The body of `make test` (the project's one test command; .ci/run runs `make book`, then this).
#
# Steps, in this order (each one timed; a failing step does not hide the others, except that the
# browser checks need what they check):
#   1. env      .venv from requirements.txt + `pip install -e .` (stamp: instant when done),
#               ipywidgets loader for the offline site (make venv assets)
#   2. chromium Debian chromium for the browser checks (apt-get install, only if missing)
#   3. book     `make book`: a full build (-W, every notebook executed) unless the site in
#               _build/html was built from the current sources (as right after `make book`)
#   4. doctest  pytest --doctest-modules amp (the examples of every docstring, i.e. of the book's
#               API reference)
#   5. install  scripts/check_install.sh: build the wheel, install it alone into a fresh venv
#               (numpy + scipy only), `amp --version` and one CLI answer; prints the install time
#   6. unit     pytest tests (pyproject addopts: -m 'not slow'), with the site required
#               (AMP_REQUIRE_SITE=1: tests of the built pages fail rather than skip without it),
#               side by side with
#   7. nbval    pytest --nbval-lax book/ (every notebook runs top to bottom; a cell over 300 s
#               fails; nbval bounds the kernel_info wait itself)
#   8. browser  pytest tests/test_browser.py against _build/html
#   9. lab      `make lab-venv` (.venv-live: JupyterLab 4, jupyterlab-myst, Voila), then
#               tests/test_lab.py: chapter 1 and a student chapter run in JupyterLab in Chromium
#  10. grade    `make grade-venv` (.venv-grade: nbgrader), then tests/test_assignments.py:
#               nbgrader's generate_assignment and autograde on the problem sets, offline
# The live app's browser check is `make live-check` (not a step yet: it failed once in four
# fresh-clone runs with a problem on one page at 1280 px, not reproduced since; see the target).
# Logs: artifacts/logs/<step>.log; screenshots: artifacts/screenshots/.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN="$ROOT/.venv/bin"
LOGS="$ROOT/artifacts/logs"
mkdir -p "$LOGS"
export PYTHONDONTWRITEBYTECODE=1
# no MPLBACKEND here: notebook kernels must keep the inline backend (figures in the book);
# the figure tests select Agg themselves

declare -a NAMES=() STATUS=() TIMES=()
FAILED=0
T0=$(date +%s)

# run_step NAME COMMAND...: run, tee the output to artifacts/logs/NAME.log, record status/time.
run_step() {
  local name=$1; shift
  local start end rc
  echo
  echo "=================================================================== [$name]"
  echo "+ $*"
  start=$(date +%s)
  set +e
  "$@" 2>&1 | tee "$LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  end=$(date +%s)
  NAMES+=("$name"); TIMES+=("$((end - start))")
  if [[ $rc -eq 0 ]]; then
    STATUS+=("ok")
  else
    STATUS+=("FAILED (exit $rc)"); FAILED=1
  fi
  return 0
}

# run_two NAME1 FUNCTION1 NAME2 FUNCTION2: two independent steps side by side (one core each on
# a 2-core machine: the unit tests and nbval, each mostly one process). Each output goes to its
# log and is printed when both have ended, the first step's first; each time is from the start.
run_two() {
  local n1=$1 c1=$2 n2=$3 c2=$4 start n rc end
  echo
  echo "=================================================================== [$n1 | $n2] side by side"
  start=$(date +%s)
  ( set +e; "$c1" > "$LOGS/$n1.log" 2>&1; echo $? > "$LOGS/$n1.rc"; date +%s > "$LOGS/$n1.end" ) &
  local p1=$!
  ( set +e; "$c2" > "$LOGS/$n2.log" 2>&1; echo $? > "$LOGS/$n2.rc"; date +%s > "$LOGS/$n2.end" ) &
  local p2=$!
  wait "$p1" "$p2" || true
  for n in "$n1" "$n2"; do
    echo
    echo "=================================================================== [$n]"
    cat "$LOGS/$n.log"
    rc=$(cat "$LOGS/$n.rc" 2>/dev/null || echo 99)
    end=$(cat "$LOGS/$n.end" 2>/dev/null || date +%s)
    NAMES+=("$n"); TIMES+=("$((end - start))")
    if [[ $rc -eq 0 ]]; then
      STATUS+=("ok")
    else
      STATUS+=("FAILED (exit $rc)"); FAILED=1
    fi
  done
  return 0
}

skip_step() {
  NAMES+=("$1"); TIMES+=("0"); STATUS+=("NOT RUN ($2)"); FAILED=1
}

last_ok() { [[ ${STATUS[${#STATUS[@]}-1]} == ok* ]]; }

ensure_chromium() {
  if [[ -x /usr/bin/chromium ]]; then
    /usr/bin/chromium --version 2>/dev/null || true
    return 0
  fi
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y chromium
  /usr/bin/chromium --version
}

unit_tests() {
  local rc=0
  # the site is required (a test of the built pages fails rather than skips) when the book built
  AMP_REQUIRE_SITE="$SITE_OK" AMP_SITE_DIR="$SITE" "$BIN/python" -m pytest tests \
    --ignore=tests/test_browser.py --ignore=tests/test_lab.py --ignore=tests/test_assignments.py \
    -p no:cacheprovider || rc=$?
  if [[ $rc -eq 5 ]]; then
    echo "WARNING: no unit tests collected under tests/ (pytest exit 5)"
    return 0
  fi
  return $rc
}

doctests() {
  # every module of the package, examples in the docstrings (the API reference pages show them)
  "$BIN/python" -m pytest --doctest-modules amp -p no:cacheprovider -o addopts="" -q
}

nbval_book() {
  local rc=0
  AMP_CHECK_STRICT=1 "$BIN/python" -m pytest --nbval-lax --nbval-current-env \
    --nbval-cell-timeout=300 -p no:cacheprovider book/ || rc=$?
  if [[ $rc -eq 5 ]]; then
    echo "nbval: no notebooks under book/ (pytest exit 5), nothing to check"
    return 0
  fi
  return $rc
}

SITE="$ROOT/_build/html"
SHOTS="$ROOT/artifacts/screenshots"
SITE_OK=0

run_step env make --no-print-directory venv assets
if last_ok; then
  run_step chromium ensure_chromium
  run_step book make --no-print-directory book
  SITE_OK=0; last_ok && SITE_OK=1
  run_step doctest doctests
  run_step install scripts/check_install.sh
  run_two unit unit_tests nbval nbval_book
  if [[ $SITE_OK -eq 1 ]]; then
    run_step browser env AMP_REQUIRE_SITE=1 AMP_SITE_DIR="$SITE" AMP_SCREENSHOT_DIR="$SHOTS" \
      "$BIN/python" -m pytest tests/test_browser.py -p no:cacheprovider -v
  else
    skip_step browser "the book did not build"
  fi
  run_step lab-env make --no-print-directory lab-venv
  if last_ok; then
    run_step lab env AMP_REQUIRE_LAB=1 AMP_SCREENSHOT_DIR="$SHOTS" \
      "$BIN/python" -m pytest tests/test_lab.py -p no:cacheprovider -v
  else
    skip_step lab "no interactive venv"
  fi
  run_step grade-env make --no-print-directory grade-venv
  if last_ok; then
    run_step grade env AMP_REQUIRE_GRADE=1 "$BIN/python" -m pytest tests/test_assignments.py \
      -p no:cacheprovider -v
  else
    skip_step grade "no nbgrader venv"
  fi
else
  for s in chromium book doctest install unit nbval browser lab-env lab grade-env grade; do
    skip_step "$s" "no environment"
  done
fi

TOTAL=$(( $(date +%s) - T0 ))
echo
echo "=================================================================== summary"
for i in "${!NAMES[@]}"; do
  printf '  %-9s %-28s %5ss\n' "${NAMES[$i]}" "${STATUS[$i]}" "${TIMES[$i]}"
done
printf '  %-9s %-28s %5ss\n' "total" "" "$TOTAL"
echo "  logs: artifacts/logs/   screenshots: artifacts/screenshots/   site: _build/html/"
if [[ $FAILED -ne 0 ]]; then
  echo "make test: FAILED"
  exit 1
fi
echo "make test: all steps passed"
