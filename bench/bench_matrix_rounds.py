"""Matrix mechanisms beyond the one-shot question: many rounds with subsampling, and the eps0
calibration of a matrix family, with the pruned pair maximum (``amp.pairs.delta_max``).

    python bench/bench_matrix_rounds.py [--d 4 8 16] [--before /path/to/old/tree]

Cases (seeded random 2-LDP square matrices of ``bench/bench_pairs.py``): eps(1e-6) after 10
rounds at sampling 0.5 with n = 10^4 per round, and ``calibrate_eps0`` for (eps, delta) =
(0.3, 1e-6) at n = 10^4 over the family ``random_ldp_matrix(d, seed=0, eps0=e0)``. Each case
runs in its own process (wall time, peak memory); with ``--before`` the same cases run on an
older tree (e.g. a ``git worktree``) side by side.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from child import run_child, show

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import amp
from bench_pairs import random_ldp_matrix
case, d = sys.argv[3], int(sys.argv[4])
t = time.perf_counter()
try:
    if case == "rounds":
        M = amp.MatrixMechanism(random_ldp_matrix(d, seed=0, eps0=2.0))
        r = amp.epsilon(M, 10_000, 1e-6, rounds=10, sampling=0.5)
    else:
        r = amp.calibrate_eps0(lambda e0: amp.MatrixMechanism(random_ldp_matrix(d, seed=0,
                                                                                eps0=e0)),
                               10_000, 0.3, 1e-6)
    out = {"value": r.value, "bracket": [r.lower, r.upper], "method": r.method}
except Exception as exc:                                     # reported, not hidden
    out = {"error": f"{type(exc).__name__}: {exc}"[:160]}
out["seconds"] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(tree: Path, case: str, d: int, timeout: float) -> dict:
    return run_child(CHILD, [str(tree), str(HERE), case, str(d)], timeout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, nargs="+", default=[4, 8, 16])
    ap.add_argument("--cases", nargs="+", default=["rounds", "calibrate"])
    ap.add_argument("--before", type=Path)
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args()
    print("# matrix mechanisms: 10 rounds at sampling 0.5 (eps at delta=1e-6, n=1e4 per round), "
          "and calibrate_eps0 (eps=0.3, delta=1e-6, n=1e4); one process per case", flush=True)
    for case in a.cases:
        for d in a.d:
            print(f"{case} d={d}", flush=True)
            print("  " + show("new", run(NEW_TREE, case, d, a.timeout)), flush=True)
            if a.before:
                print("  " + show("before", run(a.before, case, d, a.timeout)), flush=True)


if __name__ == "__main__":
    main()
