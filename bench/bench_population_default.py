"""A population's default bound (issue 34 seam 1): before, ``amp.epsilon(pop, n, delta)`` gave
the common-blanket baseline and ``method="poisson-binomial"`` the sharper bound; now every
entry gives the sharper one. This prints the seam row and the speed targets, each case in its
own process with ``PYTHONPATH`` at a source tree (``--before`` for the old column).

Usage::

    python bench/bench_population_default.py [--before /tmp/amp_before] [--out FILE]

Rows: the seam (900 users of 10-RR at eps0 = 1 and 100 at eps0 = 4, delta = 1e-6), by
default and with ``method="poisson-binomial"``; the issue's speed targets: ten groups of 10-RR
(eps0 0.5 ... 5) at n = 10^4 (target <= 1 s) and n = 10^6 (target <= 5 s), eps(1e-6) at
rel_tol 1e-4 (the front door's default). Times are wall times of the call on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TREE = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
import amp
case, method = sys.argv[1], sys.argv[2]
if case == "seam":
    pop = amp.Population([(900, amp.KRR(1.0, k=10)), (100, amp.KRR(4.0, k=10))])
else:
    n = int(float(case.split("=")[1]))
    pop = amp.Population([(n // 10, amp.KRR(float(e), k=10)) for e in np.linspace(0.5, 5, 10)])
t = time.perf_counter()
r = amp.epsilon(pop, pop.n, 1e-6, method=method, rel_tol=1e-4)
print(json.dumps({"value": r.value, "lower": r.lower, "method": r.method,
                  "seconds": time.perf_counter() - t}))
"""

CASES = [("seam", "auto", "seam: 900 x eps0=1 + 100 x eps0=4, default"),
         ("seam", "poisson-binomial", "seam: same, method='poisson-binomial'"),
         ("ten n=1e4", "auto", "ten groups n=1e4, default (target <= 1 s)"),
         ("ten n=1e6", "auto", "ten groups n=1e6, default (target <= 5 s)")]


def run(tree: Path, case: str, method: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, case, method], env=env,
                           capture_output=True, text=True, timeout=timeout, cwd=str(tree))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:g} s"}
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1][:60]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def cell(r: dict | None) -> str:
    if r is None:
        return f"{'-':>32s}"
    if "error" in r:
        return f"{r['error'][:32]:>32s}"
    return f"{r['value']:10.6g} [{r['lower']:.6g}] {r['seconds']:7.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="source tree of the old version")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines = [f"bench_population_default: {os.cpu_count()} cores, load average "
             f"{os.getloadavg()[0]:.1f} at start ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
             "eps(1e-6) at rel_tol 1e-4: value [lower end of the bracket], wall time",
             f"{'case':44s} {'before':>32s} {'after':>32s}"]
    for line in lines:
        print(line, flush=True)
    for case, method, label in CASES:
        old = run(a.before, case, method, a.timeout) if a.before else None
        new = run(TREE, case, method, a.timeout)
        line = f"{label:44s} {cell(old)} {cell(new)}"
        print(line, flush=True)
        lines.append(line)
    if a.out:
        a.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
