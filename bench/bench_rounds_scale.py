"""Many rounds at deployment scale, before and after, side by side (issue 27).

Part 1: ``amp.epsilon(amp.KRR(2.0, k=10), n, 1e-6, rounds=100)`` at n = 10^4 ... 10^9, each in
its own Python process (wall time, peak resident memory from ``ru_maxrss``), for the code under
``--before`` (default ``/work/wt/base``, on ``PYTHONPATH``; only n <= 10^6, where it fits in the
machine's memory) and this worktree. Targets: n = 10^6 in <= 5 s / 1 GB, n = 10^9 in <= 30 s /
1 GB.

Part 2: T = 1000 rounds at delta = 1e-8, 19 random k-RR cases (seed 27: k in 2..20, eps0 in
[0.3, 3], n in {100, 300, 1000}, q in {0.01, 0.05, 0.2}), answered or refused, before and after.

Run: .venv/bin/python bench/bench_rounds_scale.py [--max-log-n 3 --out FILE for the grid only]
(writes bench/results/bench_rounds_scale.txt)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CODE = r"""
import json, resource, sys, time
import amp
k, eps0, n, delta, T, q = sys.argv[1:7]
t = time.perf_counter()
try:
    r = amp.epsilon(amp.KRR(float(eps0), k=int(k)), int(n), float(delta), rounds=int(T),
                    sampling=float(q))
    out = {"lower": r.lower, "upper": r.upper}
except Exception as e:
    out = {"refused": f"{type(e).__name__}: {e}"[:150]}
out["seconds"] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["file"] = amp.__file__
print(json.dumps(out))
"""


def child(root: str, args: list, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    try:
        p = subprocess.run([sys.executable, "-c", CODE, *map(str, args)], capture_output=True,
                           text=True, timeout=timeout, env=env, cwd=root, check=False)
    except subprocess.TimeoutExpired:
        return {"refused": f"timeout after {timeout:g} s"}
    if p.returncode != 0 or not p.stdout.strip():
        return {"refused": f"exit {p.returncode}: " + (p.stderr.strip().splitlines()
                                                       or ["no output"])[-1][:120]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def cell(r: dict | None) -> str:
    if r is None:
        return f"{'(not run)':>44}"
    if "refused" in r:
        return f"{'REFUSED ' + r['refused'][:36]:>44}"
    return (f"[{r['lower']:.6g}, {r['upper']:.6g}] {r['seconds']:6.1f} s {r['peak_mb']:6.0f} MB")


def main() -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="/work/wt/base")
    ap.add_argument("--max-log-n", type=int, default=9)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_rounds_scale.txt"))
    a = ap.parse_args()
    after = str(HERE.parent)
    lines = [f"bench_rounds_scale: python {platform.python_version()}, {platform.machine()}; "
             f"before = {a.before}, after = {after}; load average at start "
             f"{os.getloadavg()[0]:.1f} (2 cores, shared: times are inflated accordingly)",
             "Part 1: 10-RR, eps0 = 2, delta = 1e-6, T = 100 rounds, q = 1: "
             "[lower, upper] time peak-RSS",
             f"{'n':>6} {'before':>44} | {'after':>44}"]
    print("\n".join(lines), flush=True)
    for e in range(4, a.max_log_n + 1):
        args = [10, 2.0, 10 ** e, 1e-6, 100, 1.0]
        b = child(a.before, args, a.timeout) if e <= 6 else None
        r = child(after, args, a.timeout)
        lines.append(f"{'1e%d' % e:>6} {cell(b)} | {cell(r)}")
        print(lines[-1], flush=True)
    if not a.skip_grid:
        lines.append("Part 2: T = 1000 rounds, delta = 1e-8, 19 random k-RR cases (seed 27)")
        lines.append(f"{'k':>3} {'eps0':>5} {'n':>5} {'q':>5} {'before':>44} | {'after':>44}")
        print("\n".join(lines[-2:]), flush=True)
        rng = np.random.default_rng(27)
        counts = {"before": 0, "after": 0}
        for _ in range(19):
            k = int(rng.integers(2, 21))
            eps0 = round(float(rng.uniform(0.3, 3.0)), 2)
            n = int(rng.choice([100, 300, 1000]))
            q = float(rng.choice([0.01, 0.05, 0.2]))
            args = [k, eps0, n, 1e-8, 1000, q]
            b, r = child(a.before, args, a.timeout), child(after, args, a.timeout)
            counts["before"] += "refused" not in b
            counts["after"] += "refused" not in r
            lines.append(f"{k:3d} {eps0:5.2f} {n:5d} {q:5.2f} {cell(b)} | {cell(r)}")
            print(lines[-1], flush=True)
        lines.append(f"answered: before {counts['before']} of 19, after {counts['after']} of 19")
    Path(a.out).write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
