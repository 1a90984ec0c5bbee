"""Certified tail bounds, written once: binomial Chernoff (KL) tails and windows, the
Bernstein deviation, and the Chernoff bound on ``E[(G_1 + ... + G_n)_+] / n``.

No quantile function is used anywhere (``scipy.stats.binom.isf`` is not reliable far below
``1e-16``): every window comes from ``P(Bin(n, p) >= k) <= exp(-n KL(k/n || p))`` for
``k >= n p`` (and the mirror bound below the mean), valid at any tail level.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.floats import TINY, U
from amp.core.roots import bounded_minimum

__all__ = ["kl_bernoulli", "binom_log_tail_ge", "binom_log_tail_le", "binom_window",
           "binom_window_mass", "binom_chernoff_quantile", "bernstein_t", "chernoff_upper",
           "chernoff_certified_log"]


def kl_bernoulli(a: float, p: float) -> float:
    """Bernoulli Kullback-Leibler divergence ``KL(a || p)`` (``inf`` when undefined, never < 0)."""
    if a < 0 or a > 1:
        return math.inf
    out = 0.0
    if a > 0:
        if p <= 0:
            return math.inf
        out += a * math.log(a / p)
    if a < 1:
        if p >= 1:
            return math.inf
        out += (1 - a) * math.log((1 - a) / (1 - p))
    return max(out, 0.0)


def binom_log_tail_ge(n: int, p: float, k: int) -> float:
    """Chernoff bound on ``log P(Bin(n, p) >= k)`` (0 when ``k <= n p``, ``-inf`` if ``k > n``)."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    if k <= n * p:
        return 0.0
    return -n * kl_bernoulli(k / n, p)


def binom_log_tail_le(n: int, p: float, k: int) -> float:
    """Chernoff bound on ``log P(Bin(n, p) <= k)`` (0 when ``k >= n p``, ``-inf`` if ``k < 0``)."""
    if k < 0:
        return -math.inf
    if k >= n:
        return 0.0
    if k >= n * p:
        return 0.0
    return -n * kl_bernoulli(k / n, p)


def binom_window(n: int, p: float, log_tau: float) -> tuple[int, int, float, float]:
    """``[lo, hi]`` with ``log P(X < lo), log P(X > hi) <= log_tau`` for ``X ~ Bin(n, p)``
    (Chernoff), and the two log tail bounds actually reached."""
    if n <= 0 or p <= 0:
        return 0, 0, -math.inf, -math.inf
    if p >= 1:
        return n, n, -math.inf, -math.inf
    mu, sd = n * p, math.sqrt(n * p * (1 - p))
    w = math.sqrt(2 * -log_tau) * sd + 2 * (-log_tau) / 3 + 2
    hi = min(n, int(math.ceil(mu + w)))
    while hi < n and binom_log_tail_ge(n, p, hi + 1) > log_tau:
        hi = min(n, hi + max(1, int(0.1 * w)))
    step = max(1, int(0.02 * w))
    while hi - step > mu and binom_log_tail_ge(n, p, hi - step + 1) <= log_tau:
        hi -= step
    lo = max(0, int(math.floor(mu - w)))
    while lo > 0 and binom_log_tail_le(n, p, lo - 1) > log_tau:
        lo = max(0, lo - max(1, int(0.1 * w)))
    while lo + step < mu and binom_log_tail_le(n, p, lo + step - 1) <= log_tau:
        lo += step
    return lo, hi, binom_log_tail_le(n, p, lo - 1), binom_log_tail_ge(n, p, hi + 1)


def binom_window_mass(N: int, q: float, tail: float) -> tuple[int, int, float]:
    """The narrowest Chernoff window ``[lo, hi]`` of ``X ~ Bin(N, q)`` whose two tails are each
    ``<= tail`` (found by bisection), and a bound on ``P[X < lo] + P[X > hi]`` (0 when the
    window is ``[0, N]``)."""
    if N <= 0 or q <= 0:
        return 0, 0, 0.0
    if q >= 1:
        return N, N, 0.0
    log_tail = math.log(tail)
    mean = N * q

    def bound(k: int) -> float:          # log of the Chernoff bound of the tail at k
        return -N * kl_bernoulli(min(max(k / N, 0.0), 1.0), q)

    if bound(0) > log_tail:
        lo, out_lo = 0, 0.0
    else:
        a, b = 0, int(math.floor(mean))  # bound(a) <= log_tail < bound(b) (monotone)
        if bound(b) <= log_tail:
            a = b
        while b - a > 1:
            m = (a + b) // 2
            if bound(m) <= log_tail:
                a = m
            else:
                b = m
        lo, out_lo = a + 1, math.exp(bound(a))
    if bound(N) > log_tail:
        hi, out_hi = N, 0.0
    else:
        a, b = int(math.ceil(mean)), N   # bound(a) > log_tail >= bound(b)
        if bound(a) <= log_tail:
            b = a
        while b - a > 1:
            m = (a + b) // 2
            if bound(m) <= log_tail:
                b = m
            else:
                a = m
        hi, out_hi = b - 1, math.exp(bound(b))
    lo = min(lo, hi)
    return lo, hi, out_lo + out_hi


def binom_chernoff_quantile(n: int, p: float, log_eta: float) -> int:
    """A (not necessarily smallest) ``m`` with Chernoff bound ``P(Bin(n, p) >= m) <= e^log_eta``
    (``n + 1`` when none is below ``n``)."""
    m = max(1, int(math.ceil(n * p)) + 1)
    while m <= n and binom_log_tail_ge(n, p, m) > log_eta:
        m += max(1, m // 16)
    return min(m, n + 1)


def bernstein_t(m: np.ndarray, var: float, bmax: float, L: float) -> np.ndarray:
    """``t`` with ``exp(-t^2 / (2 (m var + bmax t / 3))) = exp(-L)`` (Bernstein's inequality for
    a sum of ``m`` variables of variance ``var`` bounded by ``bmax``)."""
    c = bmax * L / 3.0
    return c + np.sqrt(c * c + 2.0 * m * var * L)


def chernoff_certified_log(log_bound, n: int, theta, max_abs_log_p: float, max_abs_g):
    """The log of a certified Chernoff bound on ``E[S_+] / n`` from the computed
    ``log_bound = n log M(theta) - 1 - log theta`` (``M(theta) = E[exp(theta G)]``): adds the
    rounding of ``log M``, ``e_M = 4 u (max |log p| + theta max |g| + 16)`` (log p, theta g, the
    sum and the log, a few ``u`` each), times ``n`` through the power, ``64 u`` and ``1e-12``
    for ``exp``'s own rounding and the rest, and divides by ``n``. Scalars or arrays (one
    ``theta`` and ``max |g|`` per row): the one error term of :func:`chernoff_upper` and of a
    matrix's pairs (:meth:`amp.pairs.PairSet.chernoff_upper`)."""
    err_log_m = 4 * U * (max_abs_log_p + theta * max_abs_g + 16)
    return log_bound + (n * err_log_m + 64 * U + 1e-12 - math.log(n))


def chernoff_upper(g: np.ndarray, p: np.ndarray, n: int, noise: np.ndarray | None = None
                   ) -> float:
    """Certified upper bound on ``E[(G_1 + ... + G_n)_+] / n`` from the moment generating function.

    For every ``theta > 0``, ``x_+ <= exp(theta x - 1) / theta``, so
    ``E[S_+] <= M(theta)^n / (e theta)`` with ``M(theta) = E[exp(theta G)]``. ``theta`` is
    chosen numerically (any value is valid). Atoms are raised by ``noise`` (their floating-point
    error) and the result carries a relative safety factor ``exp(n e_M + 64 u)``, where
    ``e_M = 4 u (max |log p| + theta max|g| + 16)`` bounds the rounding of ``log M`` (the
    ``n``-th power multiplies it by ``n``), plus ``exp``'s own rounding. Cheap (no lattice): used
    to settle deltas far below any practical target without a full evaluation.
    """
    g = np.asarray(g, dtype=float)
    if noise is not None:
        g = g + np.asarray(noise, dtype=float)
    p = np.asarray(p, dtype=float)
    keep = p > 0
    g, p = g[keep], p[keep]
    if g.size == 0 or g.max() <= 0:
        return 0.0
    lp = np.log(p)
    scale = float(np.abs(g).max())

    def logb(t: float) -> float:
        th = math.exp(t)
        z = lp + th * g
        zm = float(z.max())
        return n * (zm + math.log(float(np.exp(z - zm).sum()))) - 1.0 - math.log(th)

    lo_t, hi_t = math.log(1e-12 / scale), math.log(1e4 / scale)
    t_min, f_min = bounded_minimum(logb, lo_t, hi_t, xatol=1e-6)
    best, t = min((f_min, t_min), (logb(lo_t), lo_t), (logb(hi_t), hi_t))
    best = chernoff_certified_log(best, n, math.exp(t), float(np.abs(lp).max()), scale)
    # never 0: the bound is positive (exp underflow at huge n must not read as "delta = 0")
    return max(math.exp(best), TINY) if best < 709 else math.inf
