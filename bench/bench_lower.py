"""Theorem 5 lower eps at large n: time, peak memory and bracket width per mechanism.

Usage::

    python bench/bench_lower.py [--n 1e6 1e8] [--eps0 4] [--delta 1e-6]
                                [--before /tmp/amp_before] [--timeout 600]

Each case runs ``amp.epsilon(mech, n, delta, bound="lower")`` (default accuracy: eps bracket of
relative width <= 1e-4) in a NEW process, so that the peak resident memory (``ru_maxrss``) is
the case's own. Mechanisms: 10-RR, RAPPOR, OUE, BLH (Table 1 forms). With ``--before`` the
same cases also run on an older source tree (``git worktree add /tmp/amp_before <commit>``),
alternating with the new one, so both columns see the same machine load.

Printed per case: value (the certified lower eps), the bracket's relative width, the method,
the law that attains the maximum, wall time and peak memory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from child import run_child

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import amp
name, n, eps0, delta = sys.argv[2], int(float(sys.argv[3])), float(sys.argv[4]), float(sys.argv[5])
mech = {"10-RR": lambda: amp.KRR(eps0, k=10), "RAPPOR": lambda: amp.RAPPOR(eps0),
        "OUE": lambda: amp.OUE(eps0), "BLH": lambda: amp.BLH(eps0)}[name]()
t = time.perf_counter()
try:
    r = amp.epsilon(mech, n, delta, bound="lower")
    out = {"value": r.value, "bracket": [r.lower, r.upper], "rel_width": r.rel_width,
           "method": r.method,
           "law": max(r.parts, key=lambda b: b.lower).mechanism if r.parts else ""}
except Exception as exc:                                     # reported, not hidden
    out = {"error": f"{type(exc).__name__}: {exc}"[:160]}
out["seconds"] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

MECHS = ("10-RR", "RAPPOR", "OUE", "BLH")


def run(tree: Path, name: str, n: str, eps0: float, delta: float, timeout: float) -> dict:
    return run_child(CHILD, [str(tree), name, n, str(eps0), str(delta)], timeout)


def show(tag: str, r: dict) -> str:
    if "error" in r:
        return f"{tag:>6}  ERROR {r['error']}"
    return (f"{tag:>6}  value={r['value']:.10g}  width={r['rel_width']:.2e}  "
            f"method={r['method']:<22} time={r['seconds']:7.2f} s  "
            f"peak={r['peak_mb']:7.0f} MB  law={r['law']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="+", default=["1e6", "1e8"])
    ap.add_argument("--eps0", type=float, default=4.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--mechanisms", nargs="+", default=list(MECHS), choices=MECHS)
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=600.0)
    a = ap.parse_args()
    print(f"# lower eps (Theorem 5), eps0={a.eps0:g}, delta={a.delta:g}, default accuracy "
          "(eps bracket <= 1e-4 relative); one process per case")
    for n in a.n:
        for name in a.mechanisms:
            print(f"{name} n={n}", flush=True)
            trees = [("new", NEW_TREE)] + ([("before", a.before)] if a.before else [])
            for tag, tree in trees:
                print("  " + show(tag, run(tree, name, n, a.eps0, a.delta, a.timeout)),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
