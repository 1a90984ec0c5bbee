"""Matrix mechanisms, prune then refine: eps(1e-6) at n = 1e4 of a random 2-LDP d x d matrix.

Usage::

    python bench/bench_pairs.py [--d 16 32 64 256] [--exhaustive 16 32] [--n 10000]
                                [--delta 1e-6] [--seed 0] [--workers 0]

The matrix (stated so the figures can be reproduced): ``L ~ U[0, 1]^(d x d)`` from
``numpy.random.default_rng(seed)``, rows ``exp(t L)`` normalised to sum 1, and ``t`` set by
bisection so that the matrix's eps0 (``amp.mechanisms.base.matrix_eps0``, the max over output
columns of ``log max/min``) is 2 (to ~1e-12; printed). Each row is one fresh
``amp.epsilon(MatrixMechanism(P), n, delta)`` (default accuracy, relative width <= 1e-4), run
pruned (the library's path) and, for the sizes in ``--exhaustive``, with every pair law
searched in full (``amp.inversion.epsilon_of_curve`` per law, ends combined by max: the path
before pruning; :func:`exhaustive`). Printed
per row: wall time, the certified bracket, pairs total / pruned by Chernoff / pruned by a coarse
bracket / refined, the worst pair, and the process's peak resident memory so far
(``resource.getrusage``, ru_maxrss). ``time s`` is wall time, ``cpu s`` this process's CPU time
(``time.process_time``; pool workers not included): on a shared machine the CPU time is the
figure to compare with the targets (64 x 64 in 60 s, 256 x 256 in 10 min). ``--workers N`` runs the pair evaluations through a
``ProcessPoolExecutor(N)`` (0: serial).
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import amp
from amp.backends.dispatch import LawDelta
from amp.inversion import epsilon_of_curve
from amp.mechanisms.base import matrix_eps0


def random_ldp_matrix(d: int, seed: int = 0, eps0: float = 2.0) -> np.ndarray:
    """Rows ``exp(t L)`` normalised, ``L ~ U[0, 1]``, ``t`` chosen so that eps0 = ``eps0``."""
    L = np.random.default_rng(seed).uniform(0.0, 1.0, size=(d, d))

    def mk(t: float) -> np.ndarray:
        E = np.exp(t * L)
        return E / E.sum(axis=1, keepdims=True)

    lo, hi = 0.0, 20.0
    for _ in range(200):
        t = 0.5 * (lo + hi)
        lo, hi = (lo, t) if matrix_eps0(mk(t)) > eps0 else (t, hi)
    return mk(lo)


def exhaustive(mech: amp.MatrixMechanism, n: int, delta: float) -> tuple[amp.Bound, int]:
    """Every pair law searched (:func:`amp.inversion.epsilon_of_curve`, no pruning of any
    kind), the brackets' ends combined by max: the path before pruning."""
    parts = []
    laws = mech.gparv_laws()
    for law in laws:
        c = LawDelta(law, n)
        parts.append(epsilon_of_curve(c, delta, c.max_eps, n=n, mechanism=law.label))
    return amp.Bound("eps", max(p.lower for p in parts), max(p.upper for p in parts),
                     parts=tuple(parts)), len(laws)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[16, 32, 64, 256])
    ap.add_argument("--exhaustive", type=int, nargs="*", default=[16, 32])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()
    print(f"amp {amp.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, seed {args.seed}, n = {args.n}, delta = {args.delta:g}, "
          f"workers = {args.workers or 'serial'}")
    print(f"{'d':>4} {'path':>10} {'time s':>8} {'cpu s':>7}  {'eps [certified bracket]':<36} "
          f"{'pairs':>6} {'chern':>6} {'coarse':>6} {'refin':>6} {'worst':>10} {'peak MB':>8}")
    ex = ProcessPoolExecutor(args.workers) if args.workers > 0 else None
    try:
        for d in args.d:
            P = random_ldp_matrix(d, args.seed)
            mech = amp.MatrixMechanism(P, name=f"random{d}")
            print(f"# d = {d}: eps0 of the matrix = {mech.eps0:.15g}", flush=True)
            t0, c0 = time.perf_counter(), time.process_time()
            r = amp.epsilon(mech, args.n, args.delta, executor=ex)
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            det = r.details
            print(f"{d:>4} {'pruned':>10} {dt:8.1f} {dc:7.1f}  {r.value:.8f} [{r.lower:.8f}, "
                  f"{r.upper:.8f}] {det['pairs']:>6} {det['pruned_chernoff']:>6} "
                  f"{det['pruned_coarse']:>6} {det['refined']:>6} "
                  f"{str(det['worst_pair']):>10} {peak_mb():8.0f}", flush=True)
            if d in args.exhaustive:
                t0, c0 = time.perf_counter(), time.process_time()
                e, laws = exhaustive(mech, args.n, args.delta)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                worst = max(e.parts, key=lambda p: p.upper).mechanism.split("pair ")[-1]
                print(f"{d:>4} {'exhaustive':>10} {dt:8.1f} {dc:7.1f}  {e.value:.8f} [{e.lower:.8f}, "
                      f"{e.upper:.8f}] {laws:>6} {0:>6} {0:>6} {laws:>6} "
                      f"{worst:>10} {peak_mb():8.0f}", flush=True)
                same = abs(e.upper - r.upper) <= 1e-4 * e.upper
                overlap = r.lower <= e.upper and e.lower <= r.upper
                print(f"# d = {d}: pruned vs exhaustive upper ends differ by "
                      f"{abs(e.upper - r.upper) / e.upper:.2e} relative (same value: {same}); "
                      f"brackets overlap: {overlap}", flush=True)
    finally:
        if ex is not None:
            ex.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
