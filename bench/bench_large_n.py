"""Theorem 4's bound at large n on the structured path: ``eps(delta)`` and a row of ``delta(eps)``.

    python bench/bench_large_n.py [--n 1e7 1e8 1e9] [--before /path/to/old/tree]
    python bench/bench_large_n.py --cases t1 --n 1e9 1e10 --before /work/wt/base /work/main

Cases, each in its own process (wall time, CPU time, peak memory), the same on older trees
with ``--before`` (e.g. git worktrees; several trees run one after another), side by side:

* ``eps``: ``amp.epsilon(mechanism, n, 1e-10)`` (default rel_tol 1e-4) for 3-RR with eps0 = 1
  and RAPPOR with eps0 = 2;
* ``t1`` (``--cases t1``, issue 27): ``amp.epsilon(mechanism, n, 1e-6)`` (default rel_tol) for
  every Table 1 row at eps0 = 1 (10-RR, RAPPOR, OUE, BLH, HR), e.g. at ``--n 1e9 1e10``
  (targets: 3 s at 1e9; 10 s and 500 MB at 1e10; the time includes scipy's first import);
* ``row``: ``amp.profile(mechanism, n).delta(eps, rel_tol=1e-2)`` at 20 log-spaced eps between
  eps(1e-4) and eps(1e-12), what one row of the static calculator's table asks
  (``scripts/build_calculator_table.py``); the sum of the upper ends is printed as a check.

The binomial upper tails of the linear region (``amp.backends.structured.binomial.sf_run``)
were one Boost ``sf`` per ``T`` of the window (~3e5 at n = 1e9, microseconds each near the
bulk): the bench shows what carrying them along the run of ``T`` saves.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from child import run_child, show

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent

CHILD = r"""
import json, resource, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import amp
case, mech, n = sys.argv[2], sys.argv[3], int(float(sys.argv[4]))
if case == "t1":       # Table 1 rows at eps0 = 1 (as bench_tiny_delta.py defines them)
    m = {"10-RR": lambda: amp.KRR(1.0, k=10), "RAPPOR": lambda: amp.RAPPOR(1.0),
         "OUE": lambda: amp.OUE(1.0), "BLH": lambda: amp.BLH(1.0),
         "HR": lambda: amp.HadamardResponse(1.0)}[mech]()
else:
    m = amp.KRR(1.0, k=3) if mech == "krr3" else amp.RAPPOR(2.0)
t, c0 = time.perf_counter(), time.process_time()
try:
    if case == "t1":
        r = amp.epsilon(m, n, 1e-6)
        out = {"value": r.value, "bracket": [r.lower, r.upper], "method": r.method}
    elif case == "eps":
        r = amp.epsilon(m, n, 1e-10)
        out = {"value": r.value, "bracket": [r.lower, r.upper], "method": r.method}
    else:
        lo, hi = float(sys.argv[5]), float(sys.argv[6])
        prof = amp.profile(m, n)
        bs = prof.delta(np.geomspace(lo, hi, 20), rel_tol=1e-2)
        out = {"value": sum(b.upper for b in bs), "bracket": [sum(b.lower for b in bs),
               sum(b.upper for b in bs)], "method": ",".join(sorted({b.method for b in bs}))}
except Exception as exc:                                     # reported, not hidden
    out = {"error": f"{type(exc).__name__}: {exc}"[:160]}
out["seconds"] = time.perf_counter() - t
out["cpu_s"] = time.process_time() - c0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

# eps(1e-4) and eps(1e-12) ranges of the rows (from the calculator's table; only place points)
ROW_RANGE = {("krr3", 1e7): (9.1e-5, 1.95e-3), ("krr3", 1e8): (2e-5, 6e-4),
             ("krr3", 1e9): (6e-6, 1.8e-4), ("rappor", 1e7): (5.8e-4, 4.35e-3),
             ("rappor", 1e8): (1e-4, 1.33e-3), ("rappor", 1e9): (3e-5, 4e-4)}


DEFAULT_MECHS = ["krr3", "rappor"]
T1_ROWS = ["10-RR", "RAPPOR", "OUE", "BLH", "HR"]


def line(tag: str, r: dict) -> str:
    """:func:`child.show` plus the CPU seconds of the child (wall time on a shared machine
    counts the other processes too)."""
    out = show(tag, r, 12)
    return out + (f"  cpu={r['cpu_s']:.2f} s" if "cpu_s" in r else "")


def run(tree: Path, case: str, mech: str, n: float, timeout: float) -> dict:
    extra = [str(x) for x in ROW_RANGE[(mech, n)]] if case == "row" else []
    return run_child(CHILD, [str(tree), case, mech, str(n), *extra], timeout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, nargs="+", default=[1e7, 1e8, 1e9])
    ap.add_argument("--mechanisms", nargs="+", default=DEFAULT_MECHS)
    ap.add_argument("--cases", nargs="+", default=["eps", "row"])
    ap.add_argument("--before", type=Path, nargs="+", default=[],
                    help="older trees, each run beside the new one (e.g. the session's start "
                         "and the current main)")
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args()
    import os
    print("# Theorem 4 at large n: eps(1e-10) (rel_tol 1e-4) and a 20-point delta row "
          "(rel_tol 1e-2); 3-RR eps0=1, RAPPOR eps0=2; t1: eps(1e-6) of the Table 1 rows at "
          "eps0=1; one process per case", flush=True)
    print(f"# load average at start: {os.getloadavg()}", flush=True)
    for i, tree in enumerate(a.before):
        print(f"# before{i + 1 if len(a.before) > 1 else ''} = {tree}", flush=True)
    for case in a.cases:
        mechs = T1_ROWS if case == "t1" and a.mechanisms == DEFAULT_MECHS else a.mechanisms
        for mech in mechs:
            for n in a.n:
                print(f"{case} {mech} n={n:g}", flush=True)
                print("  " + line("new", run(NEW_TREE, case, mech, n, a.timeout)), flush=True)
                for i, tree in enumerate(a.before):
                    tag = "before" if len(a.before) == 1 else f"before{i + 1}"
                    print("  " + line(tag, run(tree, case, mech, n, a.timeout)), flush=True)
    print(f"# load average at end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
