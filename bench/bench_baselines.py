"""Timings of the baseline bounds (``python3 bench/bench_baselines.py``).

For ``n = 10^4`` and ``10^6`` at ``eps0 = 4``: one ``eps(delta = 1e-6)`` and one ``delta(eps)``
(at the eps found) for the numerical standard clone (Theorem 3) and the blanket + Bennett bound
(generic and 10-RR).
"""

from __future__ import annotations

import time
from typing import Callable

from amp.baselines import bennett_delta, bennett_epsilon, clone_delta, clone_epsilon
from amp.mechanisms import KRR

EPS0 = 4.0
DELTA = 1e-6


def timed(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    print(f"eps0 = {EPS0}, delta = {DELTA}")
    print(f"{'bound':<22}{'n':>9}{'eps(delta)':>14}{'time':>10}{'delta(eps)':>14}{'time':>10}")
    rows = [("clone (exact)", lambda n: clone_epsilon(EPS0, n, DELTA),
             lambda n, e: clone_delta(EPS0, n, e)),
            ("bennett (generic)", lambda n: bennett_epsilon(EPS0, n, DELTA),
             lambda n, e: bennett_delta(EPS0, n, e)),
            ("bennett (10-RR)", lambda n: bennett_epsilon(KRR(EPS0, k=10), n, DELTA),
             lambda n, e: bennett_delta(KRR(EPS0, k=10), n, e))]
    for name, f_eps, f_delta in rows:
        for n in (10**4, 10**6):
            t_e, r_e = timed(lambda: f_eps(n))
            t_d, r_d = timed(lambda: f_delta(n, r_e.value))
            print(f"{name:<22}{n:>9}{r_e.value:>14.6g}{t_e * 1e3:>8.1f}ms"
                  f"{r_d.value:>14.4g}{t_d * 1e3:>8.1f}ms")


if __name__ == "__main__":
    main()
