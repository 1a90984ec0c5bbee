#!/usr/bin/env bash
# The body of `make test` (the project's one test command; .ci/run runs `make book`, then this).
#
# Steps, in this order (each one timed; a failing step does not hide the others, except that the
# checks of the site need the site):
#   1. env      .venv from requirements.txt + `pip install -e .` (stamp: instant when done),
#               ipywidgets loader for the offline site (make venv assets)
#   2. chromium Debian chromium for the browser checks (apt-get install, only if missing)
#   3. book     `make book`: a full build (-W, every notebook executed) unless the site in
#               _build/html was built from the current sources (as right after `make book`)
#   4. doctest  pytest --doctest-modules amp book/ampbook (the examples of every docstring:
#               the library's API reference and the book's own package)
#   5. install  scripts/check_install.sh: build the wheel, install it alone into a fresh venv
#               (numpy + scipy only), `amp --version` and one CLI answer; prints the install time
# Then two lanes side by side, one core each (a 2-core machine; the venvs of lanes B's later
# steps are installed in the background from the start, mostly download and disk):
#   lane A  unit     pytest tests (pyproject addopts: -m 'not slow'), with the site required
#                    (AMP_REQUIRE_SITE=1: tests of the built pages fail rather than skip)
#   lane B  nbval    pytest --nbval-lax book/ (every notebook runs top to bottom; a cell over
#                    300 s fails; nbval bounds the kernel_info wait itself)
#           browser  pytest tests/test_browser.py against _build/html
#           lab-env  `make lab-venv` (.venv-live: JupyterLab 4, jupyterlab-myst, Voila)
#           lab      tests/test_lab.py: chapter 1 and a student chapter run in JupyterLab in
#                    Chromium
#           live     `make live-check`: the live app (Voila) served on a free port and checked in
#                    Chromium at 1280 and 390 px
#           grade-env `make grade-venv` (.venv-grade: nbgrader)
#           grade    tests/test_assignments.py: nbgrader's generate_assignment and autograde on
#                    the problem sets, offline
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

# Lanes: steps run in the background write artifacts/logs/<step>.{log,rc,start,end}; `collect`
# prints each log in order when its lane has ended and records its status and time.
lane_step() {      # lane_step NAME COMMAND...: one step of a lane (its output only to its log)
  local name=$1; shift
  date +%s > "$LOGS/$name.start"
  ( set +e; "$@" > "$LOGS/$name.log" 2>&1; echo $? > "$LOGS/$name.rc" )
  date +%s > "$LOGS/$name.end"
  return 0
}

venv_ready() {     # venv_ready NAME PID: wait for a background venv step, then true if it passed
  while [[ ! -f $LOGS/$1.end ]] && kill -0 "$2" 2>/dev/null; do sleep 2; done
  [[ $(cat "$LOGS/$1.rc" 2>/dev/null) == 0 ]]
}

lane_skip() {      # lane_skip NAME REASON: a step of a lane that could not run
  echo "NOT RUN ($2)" > "$LOGS/$1.log"; echo skip > "$LOGS/$1.rc"
}

collect() {        # collect NAME...: print and record the steps of the lanes that have ended
  local n rc t
  for n in "$@"; do
    echo
    echo "=================================================================== [$n]"
    cat "$LOGS/$n.log" 2>/dev/null || echo "(no log)"
    rc=$(cat "$LOGS/$n.rc" 2>/dev/null || echo 99)
    t=0
    [[ -f $LOGS/$n.start && -f $LOGS/$n.end ]] && t=$(( $(cat "$LOGS/$n.end") - $(cat "$LOGS/$n.start") ))
    NAMES+=("$n"); TIMES+=("$t")
    if [[ $rc == 0 ]]; then
      STATUS+=("ok")
    elif [[ $rc == skip ]]; then
      STATUS+=("NOT RUN ($(sed 's/^NOT RUN (//; s/)$//' "$LOGS/$n.log"))"); FAILED=1
    else
      STATUS+=("FAILED (exit $rc)"); FAILED=1
    fi
  done
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
  "$BIN/python" -m pytest --doctest-modules amp book/ampbook -p no:cacheprovider -o addopts="" -q
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
  rm -f "$LOGS"/*.rc "$LOGS"/*.start "$LOGS"/*.end
  # the two extra venvs, in the background from now on (pip: download and disk, little CPU)
  ( lane_step lab-env make --no-print-directory lab-venv ) &
  VENV_LIVE=$!
  ( lane_step grade-env make --no-print-directory grade-venv ) &
  VENV_GRADE=$!
  echo
  echo "=================================================================== [unit | nbval, browser, lab, live, grade] two lanes"
  ( lane_step unit unit_tests ) &
  LANE_A=$!
  (
    lane_step nbval nbval_book
    if [[ $SITE_OK -eq 1 ]]; then
      lane_step browser env AMP_REQUIRE_SITE=1 AMP_SITE_DIR="$SITE" AMP_SCREENSHOT_DIR="$SHOTS" \
        "$BIN/python" -m pytest tests/test_browser.py -p no:cacheprovider -v
    else
      lane_skip browser "the book did not build"
    fi
    if venv_ready lab-env "$VENV_LIVE"; then
      lane_step lab env AMP_REQUIRE_LAB=1 AMP_SCREENSHOT_DIR="$SHOTS" \
        "$BIN/python" -m pytest tests/test_lab.py -p no:cacheprovider -v
      lane_step live env AMP_SCREENSHOT_DIR="$SHOTS" make --no-print-directory live-check
    else
      lane_skip lab "no interactive venv"; lane_skip live "no interactive venv"
    fi
    if venv_ready grade-env "$VENV_GRADE"; then
      lane_step grade env AMP_REQUIRE_GRADE=1 "$BIN/python" -m pytest tests/test_assignments.py \
        -p no:cacheprovider -v
    else
      lane_skip grade "no nbgrader venv"
    fi
  ) &
  LANE_B=$!
  lanes_t0=$(date +%s)
  while kill -0 "$LANE_A" 2>/dev/null || kill -0 "$LANE_B" 2>/dev/null; do   # progress
    sleep 5
    (( ($(date +%s) - lanes_t0) % 60 < 5 )) || continue
    line=""
    for n in lab-env grade-env unit nbval browser lab live grade; do
      if [[ -f $LOGS/$n.end ]]; then
        r=$(cat "$LOGS/$n.rc" 2>/dev/null); line+=" $n:$([[ $r == 0 ]] && echo ok || echo FAILED)"
      elif [[ -f $LOGS/$n.start ]]; then
        line+=" $n:running"
      fi
    done
    echo "[lanes $(( ($(date +%s) - lanes_t0) / 60 )) min]$line"
  done
  wait "$LANE_A" "$LANE_B" "$VENV_LIVE" "$VENV_GRADE" 2>/dev/null || true
  collect unit nbval browser lab-env lab live grade-env grade
else
  for s in chromium book doctest install unit nbval browser lab-env lab live grade-env grade; do
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
