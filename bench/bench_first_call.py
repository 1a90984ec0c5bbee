"""The first ``amp.epsilon`` call in a fresh process against one published Algorithm 4 delta.

Usage::

    python bench/bench_first_call.py [--n 10000] [--eps0 4] [--k 10] [--delta 1e-6] [--repeat 3]

Each repetition starts a NEW Python process, which imports ``amp`` (timed separately), makes
the first ``amp.epsilon(KRR(eps0, k=k), n, delta)`` call at the default accuracy (certified
bracket of relative width <= 1e-4), then evaluates ONE ``delta`` at amp's eps with the paper's
Algorithm 4 as published (``bench/algorithm4_published.py``, grid step ``(e^eps0 - 1)/1200``),
in the same process. Printed: import time, first-call time, Algorithm 4 time, their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import amp
t1 = time.perf_counter()
n, eps0, k, delta = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
mech = amp.KRR(eps0, k=k)
r = amp.epsilon(mech, n, delta)
t2 = time.perf_counter()
sys.path.insert(0, sys.argv[5])
from algorithm4_published import delta_published
t3 = time.perf_counter()
d = delta_published(mech.gparv(), n, r.value, eps0)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "alg4": t4 - t3, "eps": r.value,
                  "bracket": r.bracket, "alg4_delta": d}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--eps0", type=float, default=4.0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    print(f"{a.k}-RR, eps0 = {a.eps0:g}, n = {a.n}, delta = {a.delta:g}: fresh process each row")
    print(f"{'import s':>9s} {'first eps s':>12s} {'Alg. 4 delta s':>15s} {'ratio':>7s}  eps "
          f"[certified bracket]  (Alg. 4 delta at eps)")
    for _ in range(a.repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, str(a.n), str(a.eps0), str(a.k),
                              str(a.delta), str(HERE)], capture_output=True, text=True,
                             env=env, check=True)
        r = json.loads(out.stdout)
        lo, hi = r["bracket"]
        print(f"{r['import']:9.3f} {r['first']:12.3f} {r['alg4']:15.2f} "
              f"{r['alg4'] / r['first']:6.0f}x  {r['eps']:.7f} [{lo:.7f}, {hi:.7f}]  "
              f"({r['alg4_delta']:.4g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
