"""Many rounds at deployment scale, before and after, side by side (issue 27).

Part 1: ``amp.epsilon(amp.KRR(2.0, k=10), n, 1e-6, rounds=100)`` at n = 10^4 ... 10^9, each in
its own Python process (wall time, peak resident memory from ``ru_maxrss``), for the code under
``--before`` (default ``/work/wt/base``, on ``PYTHONPATH``; up to ``--before-max-log-n``) and
this worktree, with the load average at each row's start (the machine is shared).
Targets: n = 10^6 in <= 5 s / 1 GB, n = 10^9 in <= 30 s / 1 GB.

Part 2: T = 1000 rounds at delta = 1e-8, 19 random k-RR cases (seed 27: k in 2..20, eps0 in
[0.3, 3], n in {100, 300, 1000}, q in {0.01, 0.05, 0.2}), answered or refused, before and after.

Part 3 (``--cases``): 33 rounds questions (k-RR, RAPPOR, OUE; n = 100 ... 10^5; T = 10, 100;
eps at delta = 1e-6 and delta at eps), before and after, each bracket SAME (at 6 significant
digits), TIGHTER or LOOSER: ``bench/compare_versions.py`` has no rounds rows.

Run: .venv/bin/python bench/bench_rounds_scale.py [--skip-grid] [--cases] [--min-log-n 4
--max-log-n 9 --before-max-log-n 9] (writes bench/results/bench_rounds_scale.txt)
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

CASES_CODE = r"""
import json, sys, amp
out = []
for name, eps0, k, n, T, what, x in json.loads(sys.argv[1]):
    mech = getattr(amp, name)(eps0, k=k) if k else getattr(amp, name)(eps0)
    try:
        r = (amp.epsilon(mech, n, x, rounds=T) if what == "eps" else
             amp.delta(mech, n, x, rounds=T))
        out.append([r.lower, r.upper])
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}"[:80])
print(json.dumps(out))
"""
#: Part 3: rounds cases (compare_versions.py has no rounds rows): mechanism, eps0, k, n, T,
#: question ("eps" at delta or "delta" at eps), and its value.
CASES = [(m, e0, k, n, T, "eps", 1e-6)
         for m, e0, k in (("KRR", 2.0, 10), ("KRR", 0.5, 2), ("KRR", 4.0, 100),
                          ("RAPPOR", 1.0, 0), ("OUE", 2.0, 0))
         for n in (100, 1000, 10_000) for T in (10, 100)] + [
    ("KRR", 2.0, 10, n, T, "delta", x) for n, T, x in ((1000, 10, 1.0), (10_000, 100, 0.5),
                                                       (100_000, 30, 0.1))]


def cases(root: str, timeout: float) -> list:
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.run([sys.executable, "-c", CASES_CODE, json.dumps(CASES)],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=root,
                       check=False)
    return json.loads(p.stdout.strip().splitlines()[-1])


def verdict(b, r) -> str:
    """SAME / TIGHTER / LOOSER of a bracket (lower end never above, upper never below)."""
    if isinstance(b, str) or isinstance(r, str):
        return "ANSWERED" if isinstance(b, str) and not isinstance(r, str) else (
            "SAME" if isinstance(b, str) else "REFUSED")
    if f"{r[0]:.6g}" == f"{b[0]:.6g}" and f"{r[1]:.6g}" == f"{b[1]:.6g}":
        return "SAME"
    return "TIGHTER" if r[0] >= b[0] and r[1] <= b[1] else "LOOSER"


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
    ap.add_argument("--min-log-n", type=int, default=4)
    ap.add_argument("--max-log-n", type=int, default=9)
    ap.add_argument("--before-max-log-n", type=int, default=6,
                    help="run --before only up to this n (it needs ~21 GB at 1e7 at ad39a14)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--cases", action="store_true", help="Part 3: rounds cases, verdicts")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_rounds_scale.txt"))
    a = ap.parse_args()
    after = str(HERE.parent)
    lines = [f"bench_rounds_scale: python {platform.python_version()}, {platform.machine()}; "
             f"before = {a.before}, after = {after}; load average at start "
             f"{os.getloadavg()[0]:.1f} (2 cores, shared: times are inflated accordingly)",
             "Part 1: 10-RR, eps0 = 2, delta = 1e-6, T = 100 rounds, q = 1: "
             "[lower, upper] time peak-RSS",
             f"{'n':>6} {'before':>44} | {'after':>44}  (load average at the row's start)"]
    print("\n".join(lines), flush=True)
    for e in range(a.min_log_n, a.max_log_n + 1):
        args = [10, 2.0, 10 ** e, 1e-6, 100, 1.0]
        load = os.getloadavg()[0]
        b = child(a.before, args, a.timeout) if e <= a.before_max_log_n else None
        r = child(after, args, a.timeout)
        lines.append(f"{'1e%d' % e:>6} {cell(b)} | {cell(r)}  load {load:.1f}")
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
    if a.cases:
        lines.append("Part 3: rounds cases, before | after (6 significant digits) and verdict")
        before, after_ = cases(a.before, 20 * a.timeout), cases(after, 20 * a.timeout)
        count: dict = {}
        for c, b, r in zip(CASES, before, after_):
            v = verdict(b, r)
            count[v] = count.get(v, 0) + 1
            show = [x if isinstance(x, str) else f"[{x[0]:.6g}, {x[1]:.6g}]" for x in (b, r)]
            lines.append(f"{c[0]:>6} {c[1]:4} k={c[2]:<3} n={c[3]:<6} T={c[4]:<3} {c[5]}"
                         f"({c[6]:g}) {show[0]:>26} | {show[1]:>26} {v}")
            print(lines[-1], flush=True)
        lines.append("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(count.items())))
        print(lines[-1], flush=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
