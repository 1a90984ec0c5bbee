"""Many rounds: certified eps after T shuffled rounds of 10-RR (eps0 = 2, n = 10^4, delta = 1e-6),
with and without Poisson client subsampling q = 0.1 (amp.epsilon(..., rounds=T, sampling=q)).

Columns: the certified bracket [lower, upper] of the true composed eps (upper: dominating
connect-the-dots PLDs of Theorem 4's profile; lower: the Theorem 5 pair run every round), the
wall time, and the baseline: the per-round certified eps (amp.epsilon at a per-round delta0,
best of a few splits) composed with the optimal homogeneous composition theorem (Kairouz, Oh and
Viswanath 2015); last line: the standard clone's profile (Feldman, McMillan and Talwar 2021)
composed through the same connect-the-dots PLD (the approach of Koskela et al. 2021).
Targets: T = 100 in <= 5 s, T = 1000 in <= 30 s.

Run: .venv/bin/python bench/bench_rounds.py  (writes bench/results/bench_rounds.txt)
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import amp
from amp.baselines.composition import clone_composed_epsilon, per_round_composed_epsilon

EPS0, K, N, DELTA = 2.0, 10, 10_000, 1e-6
ROUNDS = (1, 10, 100, 1000)
SPLITS = (0.02, 0.1, 0.3, 0.6)      # per-round delta0 = f * DELTA / T for the baseline


def baseline(mech, T: int, q: float) -> float:
    return per_round_composed_epsilon(mech, N, DELTA, T, sampling=q, splits=SPLITS)


def main() -> str:
    mech = amp.KRR(EPS0, k=K)
    lines = [f"bench_rounds: 10-RR, eps0 = {EPS0:g}, n = {N}, delta = {DELTA:g}; "
             f"python {platform.python_version()}, {platform.machine()}",
             f"{'q':>5} {'T':>6} {'eps lower':>11} {'eps upper':>11} {'rel.width':>9} "
             f"{'time s':>7} {'baseline':>10} {'base s':>7}"]
    for q in (1.0, 0.1):
        for T in ROUNDS:
            t0 = time.perf_counter()
            r = amp.compose([(mech, N, q, T)], delta=DELTA)
            dt = time.perf_counter() - t0
            t0 = time.perf_counter()
            b = baseline(mech, T, q)
            db = time.perf_counter() - t0
            lines.append(f"{q:5g} {T:6d} {r.lower:11.6f} {r.upper:11.6f} {r.rel_width:9.2e} "
                         f"{dt:7.2f} {b:10.4f} {db:7.2f}")
            print(lines[-1], flush=True)
    t0 = time.perf_counter()
    cl = clone_composed_epsilon(mech, N, DELTA, ROUNDS)
    lines.append(f"standard clone profile composed the same way (q = 1), T = {ROUNDS}: "
                 + ", ".join(f"{e:.4f}" for e in cl)
                 + f"  ({time.perf_counter() - t0:.1f} s for all)")
    print(lines[-1], flush=True)
    one = amp.epsilon(mech, N, DELTA)
    lines.append(f"single round without composition (amp.epsilon): [{one.lower:.6f}, "
                 f"{one.upper:.6f}]")
    return "\n".join(lines)


if __name__ == "__main__":
    out = main()
    print(out)
    Path(__file__).with_name("results").joinpath("bench_rounds.txt").write_text(out + "\n")
