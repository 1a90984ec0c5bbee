"""``eps(delta)`` of the Table 1 rows at n = 10^11 and 10^12, where the answer is 0 or nearly.

    python bench/bench_huge_n.py --before /work/main            # both trees, side by side
    python bench/bench_huge_n.py --tree /work/main --save before.json   # one tree, saved
    python bench/bench_huge_n.py --table before.json after.json         # saved runs, side by side

Issue 37, item 3: ``amp.epsilon(amp.KRR(1.0, k=10), 10**11, 1e-6)`` took 10.9 s and 931 MB to
answer 0, BLH at 10^12 96 s and 2.7 GB, while ``amp.delta`` at the same ``n`` answers in
0.4 s. Cases: ``amp.epsilon(mechanism, n, 1e-6)`` (default ``rel_tol``) for every Table 1 row at
``eps0 = 1`` (10-RR, BLH, RAPPOR, OUE, HR) and ``n`` in ``--n`` (default 1e11 1e12); each in its
own process: wall time, CPU time and peak resident memory (``ru_maxrss`` of the child, which
includes the ~80 MB of importing numpy and scipy). Target: 10 s and 500 MB each, the upper end
never looser than before.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from child import run_child  # noqa: E402

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent
ROWS = ["10-RR", "BLH", "RAPPOR", "OUE", "HR"]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import amp
assert amp.__file__.startswith(sys.argv[1]), amp.__file__
mech, n = sys.argv[2], int(float(sys.argv[3]))
m = {"10-RR": lambda: amp.KRR(1.0, k=10), "RAPPOR": lambda: amp.RAPPOR(1.0),
     "OUE": lambda: amp.OUE(1.0), "BLH": lambda: amp.BLH(1.0),
     "HR": lambda: amp.HadamardResponse(1.0)}[mech]()
t, c0 = time.perf_counter(), time.process_time()
try:
    r = amp.epsilon(m, n, 1e-6)
    out = {"value": r.value, "bracket": [r.lower, r.upper], "method": r.method}
except Exception as exc:                                     # reported, not hidden
    out = {"error": f"{type(exc).__name__}: {exc}"[:160]}
out["seconds"] = time.perf_counter() - t
out["cpu_s"] = time.process_time() - c0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run_tree(tree: Path, ns: list[float], timeout: float, label: str,
             rows: list[str] = ROWS) -> dict:
    """Every case on ``tree``: ``{"mech n": result}`` (one line printed per case)."""
    out = {}
    for mech in rows:
        for n in ns:
            key = f"{mech} n={n:g}"
            r = run_child(CHILD, [str(tree), mech, str(n)], timeout)
            out[key] = r
            print(f"# {label:>6} {key:<16} {cell(r)}", flush=True)
    return out


def cell(r: dict) -> str:
    if "error" in r:
        return f"ERROR {r['error']}"
    lo, hi = r["bracket"]
    return (f"{r['seconds']:7.2f} s ({r.get('cpu_s', float('nan')):.2f} cpu) {r['peak_mb']:6.0f} MB"
            f"  [{lo:.6g}, {hi:.6g}]")


def table(before: dict, after: dict) -> str:
    """The two runs side by side, one row per case, and whether the upper end moved."""
    head = (f"{'case':<15}| {'before: time (cpu)':>22} {'peak':>7}  {'bracket':<30}"
            f"| {'after: time (cpu)':>22} {'peak':>7}  {'bracket':<30}| upper end")
    lines = [head, "-" * len(head)]
    keys = [k for k in before] + [k for k in after if k not in before]
    for key in keys:
        b, a = before.get(key, {"error": "not run"}), after.get(key, {"error": "not run"})
        lines.append(f"{key:<15}| {half(b)}| {half(a)}| {verdict(b, a)}")
    return "\n".join(lines)


def half(r: dict) -> str:
    if "error" in r:
        return f"{'ERROR ' + r['error'][:50]:<55}"
    lo, hi = r["bracket"]
    return (f"{r['seconds']:7.2f} s ({r.get('cpu_s', float('nan')):5.2f} cpu) {r['peak_mb']:5.0f} MB  "
            f"{f'[{lo:.8g}, {hi:.8g}]':<30}")


def verdict(b: dict, a: dict) -> str:
    if "error" in b or "error" in a:
        return "-"
    hb, ha = b["bracket"][1], a["bracket"][1]
    if ha == hb:
        return "same"
    if hb > 0 and abs(ha - hb) <= 1e-9 * hb:       # compare_versions.py's "same"
        return f"same to 1e-9 ({(ha - hb) / hb:+.1e})"
    return "tighter" if ha < hb else f"LOOSER ({ha / hb:.4g}x)" if hb > 0 else "LOOSER"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, nargs="+", default=[1e11, 1e12])
    ap.add_argument("--before", type=Path, help="the original tree, run first")
    ap.add_argument("--tree", type=Path, help="run only this tree (with --save)")
    ap.add_argument("--save", type=Path, help="write the run of --tree as JSON")
    ap.add_argument("--table", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                    help="print two saved runs side by side")
    ap.add_argument("--rows", nargs="+", default=ROWS, choices=ROWS)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--save-both", type=Path, help="also write both runs as JSON here")
    a = ap.parse_args()
    print("# amp.epsilon(mechanism, n, 1e-6), Table 1 rows at eps0 = 1, one process per case: "
          "wall time, peak RSS (ru_maxrss), certified bracket", flush=True)
    if a.table:
        before, after = (json.loads(p.read_text()) for p in a.table)
        print(f"# before: {a.table[0]}  after: {a.table[1]}")
        print(table(before, after))
        return
    print(f"# load average at start: {os.getloadavg()}", flush=True)
    if a.tree:
        res = run_tree(a.tree, a.n, a.timeout, "run", a.rows)
        if a.save:
            a.save.write_text(json.dumps(res, indent=1))
        return
    before = run_tree(a.before, a.n, a.timeout, "before", a.rows) if a.before else {}
    after = run_tree(NEW_TREE, a.n, a.timeout, "after", a.rows)
    print(f"# load average at end: {os.getloadavg()}", flush=True)
    if a.save_both:
        a.save_both.write_text(json.dumps({"before": before, "after": after}, indent=1))
    print(table(before, after))


if __name__ == "__main__":
    main()
