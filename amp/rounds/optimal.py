"""The optimal composition theorem for ``T`` homogeneous ``(eps, delta0)``-DP rounds.

A baseline of the rounds chapter: what a per-round ``(eps_1, delta_1)`` guarantee gives after
composition when nothing else is known of the round (Kairouz, Oh and Viswanath 2015; Murtagh and
Vadhan 2016). :func:`amp.baselines.composition.per_round_composed_epsilon` uses it.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.lazy import lazy
from amp.core.roots import bisect

__all__ = ["optimal_homogeneous_delta", "optimal_homogeneous_epsilon"]

gammaln = lazy("scipy.special", "gammaln")   # imported on first use


def optimal_homogeneous_delta(eps: float, delta0: float, T: int, eps_total: float) -> float:
    """Exact ``delta`` of ``T`` adaptive ``(eps, delta0)``-DP rounds at ``eps_total`` (the optimal
    composition theorem, Kairouz, Oh and Viswanath 2015; Murtagh and Vadhan 2016): the
    ``T``-fold product of the randomized-response pair, ``1 - (1 - delta0)^T (1 - D)`` with
    ``D = sum_i Bin(T, i, e^eps/(1+e^eps)) (1 - e^(eps_total - (2i - T) eps))_+``."""
    i = np.arange(T + 1, dtype=float)
    logb = (gammaln(T + 1.0) - gammaln(i + 1) - gammaln(T - i + 1)
            + i * (eps - np.logaddexp(0, eps)) + (T - i) * (-np.logaddexp(0, eps)))
    loss = (2 * i - T) * eps
    on = loss > eps_total
    D = float(np.sum(np.exp(logb[on]) * -np.expm1(eps_total - loss[on])))
    return -math.expm1(T * math.log1p(-delta0)) + math.exp(T * math.log1p(-delta0)) * D


def optimal_homogeneous_epsilon(eps: float, delta0: float, T: int, delta: float) -> float:
    """Smallest ``eps_total`` (bisection, rounded up) with
    :func:`optimal_homogeneous_delta` ``<= delta``; ``inf`` when ``1 - (1-delta0)^T >= delta``."""
    if optimal_homogeneous_delta(eps, delta0, T, T * eps) > delta:
        return math.inf
    lo, hi = 0.0, T * eps
    if optimal_homogeneous_delta(eps, delta0, T, 0.0) <= delta:
        return 0.0
    _, hi = bisect(lambda e: optimal_homogeneous_delta(eps, delta0, T, e) <= delta, lo, hi,
                   rel_tol=1e-9)
    return hi
