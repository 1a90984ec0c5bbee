"""Fixed populations (issue 25): the Poisson-binomial blanket bound against the common-blanket
baseline, before and after, side by side in one run.

Usage::

    python bench/bench_population.py [--before /work/wt/base] [--timeout 600]
                                     [--out bench/results/bench_population.txt]

Every case runs in its own Python process (its wall time and peak memory are its own), once
with ``PYTHONPATH`` at ``--before`` (the session-start worktree) and once at this worktree.

Rows:

1. Performance: ten groups of 100,000 users, 10-RR with personalised eps0 = 0.5, 1.0, ..., 5.0
   (``n = 10^6``), eps(1e-6): the baseline (``amp.epsilon(pop, pop.n, delta)``) and the
   Poisson-binomial bound (``amp.population_epsilon``; before: its bisection at rel_tol 1e-3;
   after: the certified curve search at rel_tol 1e-3 and 1e-4).
2. The closing-note table (n = 10^4, delta = 1e-6): 10-RR with eps0 {1, 4} in 90/10 and 50/50
   splits, and three randomizers as fixed groups over ten inputs (10-RR eps0 = 2, a ring
   randomizer eps0 = 3, a seeded random LDP matrix eps0 = 1.5): baseline vs Poisson-binomial
   (at rel_tol 1e-3: the random matrix's 90 pair laws are not structured, so each count of
   the blanket law costs an FFT).

The tiny-n brute-force checks are tests (exact shuffled output distributions of every
neighbouring pair): ``tests/test_population.py::test_population_bounds_above_brute_force``
(one round), ``::test_sampled_population_above_brute_force`` (client sampling) and
``::test_rounds_above_exact_two_round_composition`` (two rounds, exact composition).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import json, resource, sys, time
import numpy as np
import amp
from amp.population import population_epsilon

def ring(eps0, k=10):
    E = np.exp(eps0)
    M = np.ones((k, k))
    for x in range(k):
        for d in (-1, 0, 1):
            M[x, (x + d) % k] = E
    return amp.MatrixMechanism(M / M.sum(axis=1, keepdims=True), name=f"ring (eps0={eps0:g})")

def random_ldp(eps0, k=10, seed=0):
    rng = np.random.default_rng(seed)
    M = np.exp(rng.uniform(0.0, eps0, size=(k, k))) * rng.dirichlet(np.ones(k))
    return amp.MatrixMechanism(M / M.sum(axis=1, keepdims=True), name=f"random (eps0<={eps0:g})")

def population(name):
    K = lambda e: amp.KRR(e, k=10)
    if name == "ten-groups":
        return amp.Population([(100_000, K(float(e))) for e in np.linspace(0.5, 5.0, 10)])
    if name == "90/10":
        return amp.Population([(9_000, K(1.0)), (1_000, K(4.0))])
    if name == "50/50":
        return amp.Population([(5_000, K(1.0)), (5_000, K(4.0))])
    if name == "three":
        return amp.Population([(3_334, K(2.0)), (3_333, ring(3.0)), (3_333, random_ldp(1.5))])
    raise SystemExit(name)

name, how, delta, rel = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
pop = population(name)
t = time.perf_counter()
if how == "baseline":
    r = amp.epsilon(pop, pop.n, delta)
else:
    r = population_epsilon(pop, delta, rel_tol=rel)
sec = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"value": r.value, "bracket": [r.lower, r.upper], "seconds": sec,
                  "peak_mb": peak, "method": r.method}))
'''


def run(root: Path, args: list[str], timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                           timeout=timeout, check=False, env=env, cwd=str(root))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    if p.returncode != 0 or not p.stdout.strip():
        return {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:160]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def cell(r: dict | None) -> str:
    if r is None:
        return f"{'-':>38}"
    if "error" in r:
        return f"{'ERROR ' + r['error'][:31]:>38}"
    lo, hi = r["bracket"]
    return f"{hi:9.6f} [{lo:.6f}] {r['seconds']:7.2f} s {r['peak_mb']:5.0f} MB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="/work/wt/base")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_population.txt"))
    ap.add_argument("--skip-before-pb", action="store_true",
                    help="skip the slow 'before' Poisson-binomial row of the ten groups")
    a = ap.parse_args(argv)
    before = Path(a.before)
    lines = [f"bench_population: python {platform.python_version()}, {os.cpu_count()} cores, "
             f"load average {os.getloadavg()[0]:.1f} at start (shared machine: times are "
             "comparable within a row only)",
             "each cell: upper eps (the value) [lower end of the bracket], wall time, peak memory",
             ""]
    print("\n".join(lines), flush=True)

    def row(label: str, *cells: str) -> None:
        s = f"{label:<34} " + "  ".join(cells)
        lines.append(s)
        print(s, flush=True)

    row("case", f"{'before':>38}", f"{'after':>38}")
    # 1. performance
    d = "1e-6"
    t0 = time.time()
    row("ten groups n=1e6, baseline", cell(run(before, ["ten-groups", "baseline", d, "1e-4"],
                                               a.timeout)),
        cell(run(ROOT, ["ten-groups", "baseline", d, "1e-4"], a.timeout)))
    pb_before = None if a.skip_before_pb else run(before, ["ten-groups", "pb", d, "1e-3"],
                                                  a.timeout)
    row("ten groups n=1e6, PB rel_tol 1e-3", cell(pb_before),
        cell(run(ROOT, ["ten-groups", "pb", d, "1e-3"], a.timeout)))
    row("ten groups n=1e6, PB rel_tol 1e-4", cell(None),
        cell(run(ROOT, ["ten-groups", "pb", d, "1e-4"], a.timeout)))
    # 2. closing-note table
    lines.append("")
    print("")
    row("n=1e4, delta=1e-6", f"{'baseline (after, rel_tol 1e-4)':>38}",
        f"{'Poisson-binomial (after, 1e-3)':>38}")
    for name in ("90/10", "50/50", "three"):
        row(f"  {name}", cell(run(ROOT, [name, "baseline", d, "1e-4"], a.timeout)),
            cell(run(ROOT, [name, "pb", d, "1e-3"], a.timeout)))
    lines.append("")
    lines.append(f"total {time.time() - t0:.0f} s; tiny-n brute-force checks: see this file's "
                 "docstring (tests/test_population.py)")
    print(lines[-1])
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
