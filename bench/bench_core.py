"""Core timings: ``delta`` and ``epsilon`` for 10-RR (eps0 = 4, delta = 1e-6), n = 10^3..10^5.

Usage: ``python bench/bench_core.py``. For each n it prints, with the default settings, the
certified eps(1e-6) (upper bound, Theorem 4, and lower bound, Theorem 5) and one delta(eps) at
that eps, each with its wall time, method and certified bracket; the upper bound is timed with
the automatic method (structured path) and with the generic FFT path (``method="fft"``), side by
side in one process. Each figure is the best of 3 cold runs (every call builds a new profile,
so no table is reused between runs).
"""

from __future__ import annotations

import gc
import time

import amp

MECH = amp.KRR(4.0, k=10)
DELTA = 1e-6


def best_of(fn, repeat: int = 3):
    """Best wall time of ``repeat`` cold runs and the last result (each call of the front door
    builds a new profile, so no table is reused between runs)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def row(what: str, n: int, dt: float, r) -> str:
    w = (r.upper - r.lower) / r.upper if r.upper > 0 else 0.0
    return (f"{what:22} {n:>7d} {dt:8.3f} s  {r.value:.7g}  [{r.lower:.7g}, {r.upper:.7g}]  "
            f"rel.width {w:.1e}  ({r.method})")


def main() -> None:
    print(f"{MECH.describe()}, delta = {DELTA:g}; best of 3 cold runs")
    for n in (10**3, 10**4, 10**5):
        for method in ("auto", "fft"):
            dt, r = best_of(lambda: amp.epsilon(MECH, n, DELTA, method=method))
            print(row(f"epsilon upper ({method})", n, dt, r), flush=True)
            eps = r.value
            dt, d = best_of(lambda: amp.delta(MECH, n, eps, method=method))
            print(row(f"delta upper ({method})", n, dt, d), flush=True)
        dt, r = best_of(lambda: amp.epsilon(MECH, n, DELTA, bound="lower"), repeat=1)
        print(row("epsilon lower", n, dt, r), flush=True)
        dt, d = best_of(lambda: amp.delta(MECH, n, r.value, bound="lower"), repeat=1)
        print(row("delta lower", n, dt, d), flush=True)


if __name__ == "__main__":
    main()
