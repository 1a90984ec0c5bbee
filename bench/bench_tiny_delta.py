"""Tiny delta, the lower bound's engine and n = 10^9-10^10 (issue 27), before and after.

    python bench/bench_tiny_delta.py --before /work/wt/base [--sections grid lower large]
                                     [--timeout 120] [--out bench/results/bench_tiny_delta.txt]
                                     [--deltas 1e-14] [--ns 1e3 1e8] [--rows RAPPOR HR]

Every case runs in its own process (wall time, peak resident memory), on this tree and, with
``--before``, on an older tree (``PYTHONPATH``-style ``sys.path`` insert), side by side:

* ``grid``: ``amp.epsilon(m, n, delta)`` (Theorem 4, default ``rel_tol = 1e-4``) for
  ``delta`` in {1e-10, 1e-12, 1e-14}, ``n`` in {1e3, 1e4, 1e6, 1e8} and every Table 1 row at
  eps0 = 1 (10-RR, RAPPOR, OUE, BLH, Hadamard response): ``answered`` (bracket as asked),
  ``flagged`` (a valid bracket wider than asked, ``Bound.wider_than_asked``), ``refused``
  (``NumericalError``), with the bracket's relative width;
* ``lower``: ``amp.epsilon(m, n, 1e-6, bound="lower")`` (Theorem 5) at n = 1e4, 1e5;
* ``large``: ``amp.epsilon(m, n, 1e-6)`` at n = 1e9, 1e10.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from child import run_child

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent

CHILD = r"""
import json, resource, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import amp
name, n, delta, bound = sys.argv[2], int(float(sys.argv[3])), float(sys.argv[4]), sys.argv[5]
e0 = 1.0
m = {"10-RR": lambda: amp.KRR(e0, k=10), "RAPPOR": lambda: amp.RAPPOR(e0),
     "OUE": lambda: amp.OUE(e0), "BLH": lambda: amp.BLH(e0),
     "HR": lambda: amp.HadamardResponse(e0)}[name]()
t = time.perf_counter()
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = amp.epsilon(m, n, delta, bound=bound)
    flagged = bool(getattr(r, "wider_than_asked", False))
    out = {"status": "flagged" if flagged else "answered", "value": r.value,
           "bracket": [r.lower, r.upper], "rel_width": r.rel_width, "method": r.method}
except amp.NumericalError as exc:
    out = {"status": "refused", "error": str(exc)[:100]}
except Exception as exc:                                     # reported, not hidden
    out = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:100]}
out["seconds"] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

ROWS = ("10-RR", "RAPPOR", "OUE", "BLH", "HR")


def one(tree: Path, name: str, n: float, delta: float, bound: str, timeout: float) -> dict:
    r = run_child(CHILD, [str(tree), name, str(n), str(delta), bound], timeout)
    r.setdefault("status", "timeout" if "timeout" in r.get("error", "") else "error")
    return r


def cell(r: dict) -> str:
    s = r["status"]
    if s in ("answered", "flagged"):
        return (f"{s:8s} w={r['rel_width']:8.2e} eps={r['value']:.6g} "
                f"{r['seconds']:6.2f}s {r['peak_mb']:5.0f}MB")
    if s == "refused":
        return f"refused  {r.get('seconds', 0):6.2f}s"
    return f"{s:8s} {r.get('error', '')[:40]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path)
    ap.add_argument("--sections", nargs="+", default=["grid", "lower", "large"])
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--rows", nargs="+", default=list(ROWS))
    ap.add_argument("--deltas", nargs="+", type=float, default=[1e-10, 1e-12, 1e-14])
    ap.add_argument("--ns", nargs="+", type=float, default=[1e3, 1e4, 1e6, 1e8])
    ap.add_argument("--large-ns", nargs="+", type=float, default=[1e9, 1e10])
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    def case(tag: str, name: str, n: float, delta: float, bound: str) -> tuple[dict, dict]:
        new = one(NEW_TREE, name, n, delta, bound, a.timeout)
        old = one(a.before, name, n, delta, bound, a.timeout) if a.before else {"status": "-"}
        say(f"{tag:34s} | before: {cell(old) if a.before else '-':58s} | after: {cell(new)}")
        return old, new

    say("# bench_tiny_delta: eps0 = 1, 10-RR (k = 10), RAPPOR, OUE, BLH, HR; one process "
        f"per case, timeout {a.timeout:g} s; w = relative width of the eps bracket")
    counts: dict[str, dict[str, int]] = {"before": {}, "after": {}}
    if "grid" in a.sections:
        say("## grid: amp.epsilon(m, n, delta), Theorem 4, rel_tol 1e-4")
        for delta in a.deltas:
            for n in a.ns:
                for name in a.rows:
                    old, new = case(f"{name:6s} n={n:<6g} delta={delta:g}", name, n, delta,
                                    "upper")
                    for k, r in (("before", old), ("after", new)):
                        counts[k][r["status"]] = counts[k].get(r["status"], 0) + 1
        say(f"## grid counts: before {counts['before']}  after {counts['after']}")
    if "lower" in a.sections:
        say("## lower: amp.epsilon(m, n, 1e-6, bound='lower'), Theorem 5")
        for n in (1e4, 1e5):
            for name in a.rows:
                case(f"{name:6s} n={n:<6g} lower", name, n, 1e-6, "lower")
    if "large" in a.sections:
        say("## large n: amp.epsilon(m, n, 1e-6), Theorem 4")
        for n in a.large_ns:
            for name in a.rows:
                case(f"{name:6s} n={n:<6g} delta=1e-06", name, n, 1e-6, "upper")
    if a.out:
        a.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
