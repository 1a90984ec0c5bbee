"""Binomial masses with certified relative errors: Boost's pmf/sf, rows of masses by
recurrence, the largest point mass and the expected excess over a level.

Implements the *floating point* item of the certified error terms of
:mod:`amp.backends.structured`: Boost's binomial ``pmf``/``sf`` (``scipy.stats.binom``) at
``(k, n, p)`` are assumed accurate to the relative :func:`eta`
``= ETA_BINOM + 32 u |k - n p|`` (``ETA_BINOM = 2e-10``, ``u = 2^-53``). Boost's error grows
with the distance of ``k`` from the mean: observed up to ``6.6e-10`` at ``n = 10^10`` and
``9.2e-10`` at ``10^11`` far in the tails (above the constant ``2e-10`` assumed before), and
always below ``4.3 u |k - np|`` where it exceeds ``1e-12`` (``p`` from ``1e-12`` to ``0.999``,
``n`` up to ``10^11``; ``tests/test_assumptions.py`` checks :func:`eta` against 40-digit
references).
``scipy.special.bdtr*`` (Cephes) and ``binom.logpmf`` (``gammaln`` differences) are *not*
used: they lose ``1e-7`` at ``n = 10^8``.
:func:`sf_run` carries ``sf`` along a run of ``n`` from Boost anchors by exact recurrences
with ``pmf`` increments, with a certified relative error per value (at most ``1.25`` :func:`eta`).
:func:`binom_rows` builds whole rows from one Boost ``pmf`` per row and log-ratio recurrences,
returning the relative error of its cells (:data:`BINOM_REL` plus the recurrence's rounding)
and an absolute bound for the tiny cells.  :func:`excess_bound` is the upper-tail term
``E[(O - o_hi)_+]`` of the z-split tables (:mod:`.zsplit`).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core import scipy_adapter
from amp.core.lazy import lazy
from amp.core.floats import U
from amp.core.tails import binom_log_tail_ge

# scipy is imported on first use (amp.core.lazy): import amp stays fast.  Boost's binomial
# pmf/sf are the ufuncs scipy.stats.binom itself calls, read through amp.core.scipy_adapter
# (scipy's private names in one place); the support is handled here (0 outside).
special = lazy("scipy.special")
stats = lazy("scipy.stats")

__all__ = ["ETA_BINOM", "ETA_SLOPE", "BINOM_REL", "RUN_ANCHOR", "eta", "pmf", "sf", "logpmf",
           "sf_run", "run_anchor",
           "binom_max_pmf", "binom_rows", "excess_bound"]

ETA_BINOM = 2e-10                      # floor of the assumed relative accuracy of Boost pmf/sf
ETA_SLOPE = 32 * U                     # ... plus this times |k - np|: eta()
RUN_ANCHOR = 32                        # sf_run: one Boost sf per this many consecutive n
RUN_ANCHOR_N = 1e8                     # ... up to this n (then ~sqrt(n): run_anchor)
RUN_ANCHOR_MAX = 8192                  # ... and never more than this many
RUN_BLOCK = 1 << 18                    # sf_run: elements per block (memory)
BINOM_REL = 3 * ETA_BINOM + 1e-12     # Boost pmf at a row's anchor times another Boost pmf


def eta(k, n, p, floor: float = ETA_BINOM):
    """Assumed relative accuracy of Boost's ``pmf(k, n, p)`` and ``sf(k, n, p)``:
    ``floor + ETA_SLOPE |k - n p|`` (module docstring), element-wise."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if not 0.0 < p < 1.0:
        return np.full(np.broadcast(k, n).shape, float(floor))
    return floor + ETA_SLOPE * np.abs(k - n * p)


def _direct(k, n, p):
    """``(k, n)`` as float arrays when the Boost ufunc may be called directly (``0 < p < 1``,
    every ``n`` a non-negative integer), else ``None`` (then ``scipy.stats`` answers)."""
    if not 0.0 < p < 1.0:
        return None
    kf = np.asarray(k, dtype=float)
    nf = np.asarray(n, dtype=float)
    if not (np.all(nf >= 0) and np.all(nf == np.floor(nf))):
        return None
    return kf, nf


def pmf(k, n, p):
    """``P(Bin(n, p) = k)`` (Boost, relative accuracy :func:`eta`); 0 unless ``k`` is an
    integer in ``0..n``.

    The value of ``scipy.stats.binom.pmf``: the same Boost ufunc, called directly."""
    d = _direct(k, n, p)
    if d is None:
        return stats.binom.pmf(k, n, p)
    kf, nf = d
    inside = (kf >= 0) & (kf <= nf) & (kf == np.floor(kf))
    with np.errstate(invalid="ignore"):
        out = scipy_adapter.binom_pmf(np.where(inside, kf, 0.0), nf, p)
    return np.where(inside, out, 0.0)


def sf(k, n, p):
    """``P(Bin(n, p) > k)`` (Boost, relative accuracy :func:`eta`); 1 below 0, 0 from ``n``.

    The value of ``scipy.stats.binom.sf``: the same Boost ufunc (at ``floor(k)``), called
    directly."""
    d = _direct(k, n, p)
    if d is None:
        return stats.binom.sf(k, n, p)
    kf, nf = d
    kf = np.floor(kf)
    inside = (kf >= 0) & (kf < nf)
    with np.errstate(invalid="ignore"):
        out = scipy_adapter.binom_sf(np.where(inside, kf, 0.0), nf, p)
    return np.where(inside, out, np.where(kf < 0, 1.0, 0.0))


def logpmf(k, n, p):
    """``log P(Bin(n, p) = k)`` by ``gammaln`` differences, the formula of
    ``scipy.stats.binom.logpmf`` (absolute error far below ``1e-3`` in the log; used only
    where the pmf underflows, with that margin)."""
    k = np.floor(np.asarray(k, dtype=float))
    n = np.asarray(n, dtype=float)
    g = special.gammaln
    combiln = g(n + 1) - (g(k + 1) + g(n - k + 1))
    return combiln + special.xlogy(k, p) + special.xlog1py(n - k, -p)


def run_anchor(n_max: float) -> int:
    """Spacing of the Boost anchors of :func:`sf_run` along a run whose largest ``n`` is
    ``n_max``: :data:`RUN_ANCHOR` up to ``RUN_ANCHOR_N = 10^8``, then ``RUN_ANCHOR`` times the
    power of two at or above ``sqrt(n_max / 10^8)`` (at most :data:`RUN_ANCHOR_MAX`).

    Boost's ``sf`` near the bulk costs more as ``n`` grows (about 25 us at ``n = 10^8``, 200 us
    at ``10^11``, 400 us at ``10^12``, ``bench/bench_huge_n.py``) and a run (a window of ``T``)
    has ``~ sqrt(n)`` elements, so a fixed spacing spends ``n^(3/4)`` in anchors: 8 s of a
    10 s evaluation at ``n = 10^11``.  A spacing ``~ sqrt(n)`` keeps the anchors' count, and
    the increments' mass summed over one spacing (``spacing x`` a point mass ``~ 1/sqrt(n)``,
    the share of the carried error beyond the anchor's), what they are at ``10^8``.  Speed
    only: every carried value keeps its certified error (else Boost's ``sf``)."""
    if not n_max > RUN_ANCHOR_N:
        return RUN_ANCHOR
    f = 2 ** math.ceil(math.log2(math.sqrt(n_max / RUN_ANCHOR_N)))
    return int(min(RUN_ANCHOR * f, RUN_ANCHOR_MAX))


def sf_run(k, n, p, anchor: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``P(Bin(n_i, p) >= k_i)`` for a run of ``n`` (mostly consecutive), each with a certified
    relative error (at most ``1.25`` :func:`eta`), for a fraction of the cost of Boost's ``sf``.

    Boost's ``sf`` costs microseconds near the bulk of a large binomial; ``pmf`` is ~20x cheaper.
    Along a run ``n_{i+1} = n_i + 1`` with ``|k_{i+1} - k_i| <= 1`` the exact identities
    (``X_{n+1} = X_n + Bernoulli(p)``)

    * ``P(X_{n+1} >= k)     = P(X_n >= k) + p P(X_n = k - 1)``,
    * ``P(X_{n+1} >= k + 1) = P(X_n >= k) - (1 - p) P(X_n = k)``,
    * ``P(X_{n+1} >= k - 1) = P(X_n >= k) + P(X_n = k - 1) + p P(X_n = k - 2)``

    carry the value from a Boost ``sf`` anchor (every ``anchor`` elements, default
    :func:`run_anchor` of the largest ``n``, and wherever the run breaks) by a cumulative sum
    of Boost ``pmf`` increments.  The absolute error of a
    carried value is bounded by ``eta s_anchor + sum (eta_i + 4u) |increments|`` (the
    masses and their products) ``+ u sum |partial sums| + u |value|`` (the rounding of the
    cumulative sum and of the final addition), all computed alongside (times ``1.001``); its
    relative error is that bound over ``value - bound``.  Where it exceeds ``1.25 eta``
    (a value that fell far below its anchor, where the subtractions cancel) the element is
    recomputed by Boost's ``sf``.  Long runs are taken in blocks of :data:`RUN_BLOCK` elements
    (a block starts with an anchor), so the temporaries stay ~100 MB whatever ``n``.

    Returns ``(s, rel)``: the values and each one's certified relative error bound
    (:func:`eta` for Boost values, the computed bound, ``<= 1.25 eta``, for carried ones).
    """
    k = np.asarray(k, dtype=np.int64).ravel()
    n = np.asarray(n, dtype=np.int64).ravel()
    size = k.size
    if size < 2 or not 0.0 < p < 1.0:
        return (sf(k - 1, n, p) if size else np.zeros(0)), eta(k, n, p).ravel()
    if anchor is None:
        anchor = run_anchor(float(n.max()))
    anchor = int(anchor)
    block = max(anchor, RUN_BLOCK - RUN_BLOCK % anchor)
    if size <= block:
        return _sf_run_block(k, n, p, anchor)
    s = np.empty(size)
    rel = np.empty(size)
    for i in range(0, size, block):
        s[i:i + block], rel[i:i + block] = _sf_run_block(k[i:i + block], n[i:i + block], p,
                                                         anchor)
    return s, rel


def _sf_run_block(k: np.ndarray, n: np.ndarray, p: float, anchor: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sf_run` on one block (its first element is an anchor)."""
    size = k.size
    rel = eta(k, n, p).ravel()                    # Boost's, for every element
    if size < 2:
        return sf(k - 1, n, p), rel
    idx = np.arange(size)
    dk = np.diff(k)
    inside = (k >= 2) & (k <= n)
    link = (np.diff(n) == 1) & (np.abs(dk) <= 1) & inside[:-1] & inside[1:]
    brk = np.r_[True, ~link]
    start = np.maximum.accumulate(np.where(brk, idx, 0))
    pos = idx - start
    anchor_at = (pos % anchor) == 0
    seg = np.cumsum(anchor_at) - 1                  # segment of each element
    apos = pos % anchor                              # position inside its segment
    a_idx = np.flatnonzero(anchor_at)
    s_a = sf(k[a_idx] - 1, n[a_idx], p)
    # increments into the carried elements (from element i - 1)
    car = np.flatnonzero(~anchor_at)
    s = np.empty(size)
    s[a_idx] = s_a
    if car.size:
        T = n[car - 1]
        kk = k[car - 1]
        d = dk[car - 1]
        q = 1.0 - p
        # the masses each step needs, computed only where needed
        up, down = d == 1, d == -1
        pm1 = np.zeros(car.size)                     # P(X_T = k - 1): k stays or steps down
        pm1[~up] = pmf(kk[~up] - 1, T[~up], p)
        p0 = np.zeros(car.size)                      # P(X_T = k): k steps up
        p0[up] = pmf(kk[up], T[up], p)
        m2 = np.zeros(car.size)                      # P(X_T = k - 2): k steps down
        if np.any(down):
            m2[down] = pmf(kk[down] - 2, T[down], p)
        inc = np.where(d == 0, p * pm1, np.where(d == 1, -(q * p0), pm1 + p * m2))
        absinc = np.where(d == 0, p * pm1, np.where(d == 1, q * p0, pm1 + p * m2))
        # Boost's error on each increment's masses (at k - 2 .. k: the largest of the three)
        eta_inc = ETA_BINOM + ETA_SLOPE * (np.abs(kk - T * p) + 2.0)
        J = a_idx.size
        sc = seg[car]
        fi = sc * anchor + apos[car]                 # flat (segment, position) of each step
        M = np.zeros(J * anchor)
        Ma = np.zeros(J * anchor)
        Me = np.zeros(J * anchor)
        M[fi] = inc
        Ma[fi] = absinc
        Me[fi] = eta_inc * absinc
        C = np.cumsum(M.reshape(J, anchor), axis=1).ravel()
        CA = np.cumsum(Ma.reshape(J, anchor), axis=1).ravel()
        CE = np.cumsum(Me.reshape(J, anchor), axis=1).ravel()
        CC = np.cumsum(np.abs(C).reshape(J, anchor), axis=1).ravel()
        sa = s_a[sc]
        val = sa + C[fi]
        err = 1.001 * (rel[a_idx][sc] * sa + CE[fi] + 4 * U * CA[fi] + U * CC[fi]) \
            + U * np.abs(val)
        with np.errstate(divide="ignore", invalid="ignore"):
            r_c = np.where(val - err > 0, err / (val - err), np.inf)
        ok = r_c <= 1.25 * rel[car]             # else Boost's own sf is the better value
        s[car[ok]] = val[ok]
        rel[car[ok]] = r_c[ok]
        bad = car[~ok]
        if bad.size:
            s[bad] = sf(k[bad] - 1, n[bad], p)
    return s, rel


def binom_max_pmf(k: int, p: float) -> float:
    """Largest point mass of ``Bin(k, p)`` (an upper bound, with the Boost accuracy margin)."""
    if k <= 0 or p <= 0 or p >= 1:
        return 1.0
    mode = int(math.floor((k + 1) * p))
    cand = [c for c in (mode - 1, mode, min(k, mode + 1)) if 0 <= c <= k]
    return min(1.0, float(np.max(pmf(np.array(cand), k, p))) * (1 + 1e-8))


def binom_rows(Ns: np.ndarray, lo: int, hi: int, p: float):
    """Masses ``P(Bin(N, p) = o)`` for every row ``N`` in ``Ns`` and ``o = lo..hi``.

    Returns ``(P, rel, sabs)``: ``P`` has shape ``(len(Ns), hi - lo + 1)``; every cell is within
    ``rel * P + (its share of sabs)`` of the truth (``rel = BINOM_REL + recurrence error``) and
    ``sabs`` bounds, for every row, the sum of the absolute errors of the cells below ``1e-40``
    of the row maximum.  One Boost ``pmf``
    per row (at the row's mode, clipped to the window), log-ratio recurrences along the row
    (their rounding is bounded as in :func:`.tables.exact_grid`)."""
    Ns = np.asarray(Ns, dtype=np.int64)
    os_ = np.arange(lo, hi + 1)
    Og = np.broadcast_to(os_[None, :].astype(float), (Ns.size, os_.size))
    k = Ns[:, None].astype(float)
    if p <= 0:
        return (Og == 0).astype(float), BINOM_REL, 0.0
    if p >= 1:
        return (Og == k).astype(float), BINOM_REL, 0.0
    mode = np.clip(np.floor((Ns + 1) * p), lo, np.minimum(hi, Ns))
    pm = pmf(mode, Ns, p)
    # the anchors' Boost error beyond the ETA_BINOM that BINOM_REL already counts
    extra = float(np.max(eta(mode, Ns, p))) - ETA_BINOM if Ns.size else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log((k - Og) / (Og + 1.0)) + math.log(p / (1 - p))     # log P(o+1)/P(o)
    r = np.where((Og < k) & (Og >= 0), r, -np.inf)
    rf = np.where(np.isfinite(r), r, -1e300)
    C = np.zeros_like(r)
    C[:, 1:] = np.cumsum(rf[:, :-1], axis=1)
    mi = (mode - lo).astype(np.int64)[:, None]
    Cm = np.take_along_axis(C, mi, axis=1)
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        P = np.where((Og <= k) & (Og >= 0), pm[:, None] * np.exp(C - Cm), 0.0)
        d_o = np.abs(np.arange(os_.size)[None, :] - mi) + 2.0
        lerr = 2 * d_o * U * (np.abs(C - Cm) + 4.0 + 2 * np.log(k + 2.0))
    P = np.where(np.isfinite(P), P, 0.0)
    lerr = np.where(np.isfinite(lerr) & (P > 0), lerr, 0.0)
    big = P >= 1e-40 * np.maximum(P.max(axis=1, keepdims=True), 1e-300)
    rel_rec = float(np.expm1(lerr[big].max())) if big.any() else 0.0
    small = np.where(big, 0.0, P * np.expm1(np.minimum(lerr, 700.0)) + 1e-300)
    sabs = float(small.sum(axis=1).max()) if small.size else 0.0
    if np.any(pm < 1e-300):            # rows whose anchor underflowed: every cell is suspect
        sabs += os_.size * 1e-300
    return P, BINOM_REL + 3 * extra + rel_rec, min(1.0, sabs)


def excess_bound(N: int, p: float, h: int) -> float:
    """``E[(Bin(N, p) - h)_+]`` upper bound: Chernoff terms ``P(X >= k)``, ``k > h``, decay at
    least geometrically with ratio ``e^-lam``, ``lam = log((h+1)(1-p) / ((N-h-1) p))``."""
    if h >= N or p <= 0:
        return 0.0
    if p >= 1:
        return float(N - h)
    k = h + 1
    if k <= N * p:
        return N * p - h + math.sqrt(N * p * (1 - p))        # not a tail: mean excess + sd
    lam = math.log(k * (1 - p) / max((N - k) * p, 1e-300)) if N > k else math.inf
    first = math.exp(binom_log_tail_ge(N, p, k))
    return first / -math.expm1(-lam) if lam < math.inf else first

