"""``sf_run``: binomial upper tails carried along a run of ``n`` (structured backend).

Oracles: exact rational sums (``fractions``) for small ``n``; Boost's ``sf`` element by element
(the accuracy the structured backend assumes, ``eta(k, n, p)``) for large ``n``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import amp
from amp.backends.structured.binomial import eta, pmf, sf, sf_run
from amp.backends.structured.evaluator import Evaluator
from amp.backends.structured.model import CountModel
from amp.backends.structured.shape import structured_shape


def _exact_sf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= k) in exact rational arithmetic (p is the float, exactly)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    P = Fraction(p)
    Q = 1 - P
    tot = sum(math.comb(n, x) * P**x * Q**(n - x) for x in range(k, n + 1))
    return float(tot)


def _run(rng, n0: int, length: int, p: float, slope: float, jitter: float, breaks: int):
    n = np.arange(n0, n0 + length, dtype=np.int64)
    k = np.ceil(n * slope + jitter * rng.standard_normal(length).cumsum()).astype(np.int64)
    if breaks:
        cut = rng.choice(np.arange(1, length), size=breaks, replace=False)
        n = np.delete(n, cut)
        k = np.delete(k, cut)
    return k, n


@pytest.mark.parametrize("seed", range(6))
def test_small_n_against_exact_rationals(seed):
    rng = np.random.default_rng(seed)
    p = float(rng.uniform(0.05, 0.95))
    n0 = int(rng.integers(5, 120))
    k, n = _run(rng, n0, 80, p, float(rng.uniform(0.1, 1.0)), 0.3, breaks=3)
    k = np.clip(k, -1, n + 2)
    s, rel = sf_run(k, n, p)
    assert np.all(rel <= 1.25 * eta(k, n, p)) and np.all(rel >= 0)
    for ki, ni, si, ri in zip(k, n, s, rel):
        ex = _exact_sf(int(ki), int(ni), p)
        assert abs(si - ex) <= ri * ex + 1e-300, (ki, ni, si, ex, ri)


@pytest.mark.parametrize("n0,p,slope,jitter", [
    (10**4, 0.3, 0.31, 0.5), (10**6, 0.45, 0.452, 0.5), (10**8, 0.2, 0.2001, 0.5),
    (423_740_807, 0.5, 0.5, 0.4), (10**6, 0.7, 0.69, 2.0)])
def test_large_runs_against_boost(n0, p, slope, jitter):
    rng = np.random.default_rng(n0 % 1000)
    k, n = _run(rng, n0, 3000, p, slope, jitter, breaks=5)
    s, rel = sf_run(k, n, p)
    b = sf(k - 1, n, p)
    # carried values within their certified bound of Boost (itself within eta)
    assert np.all(np.abs(s - b) <= (rel + eta(k, n, p)) * b + 1e-300)
    assert np.all(rel <= 1.25 * eta(k, n, p))


def test_steps_of_more_than_one_break_the_run():
    n = np.arange(10**6, 10**6 + 10, dtype=np.int64)
    k = np.array([450_000 + 2 * i for i in range(10)], dtype=np.int64)   # k steps by 2
    s, rel = sf_run(k, n, 0.45)
    assert np.array_equal(s, sf(k - 1, n, 0.45))       # every element is a Boost anchor
    assert np.all(rel == eta(k, n, 0.45))


def test_the_recurrence_carries_most_values_at_large_n():
    """Along a window of T at n ~ 1e8 nearly every value is carried (few Boost calls)."""
    rng = np.random.default_rng(3)
    k, n = _run(rng, 10**8, 20000, 0.4, 0.4, 0.3, breaks=0)
    _, rel = sf_run(k, n, 0.4)
    assert np.mean(rel != eta(k, n, 0.4)) > 0.9     # Boost values carry exactly eta


def test_evaluator_linear_region_matches_boost_elementwise():
    """The Evaluator's linear-region sums with carried sf equal the Boost-only sums within the
    lin_err bound it reports (k-RR, n = 10^7, a few eps)."""
    mod = CountModel(structured_shape(amp.KRR(1.0, k=3).gparv()), 10**7, -60.0)
    Tf = mod.Ts.astype(float)
    for eps in (0.0005, 0.001, 0.002):
        ev = Evaluator(mod, eps, per_T=True)
        has = ev.has_lin
        assert has.sum() > 100
        b = np.zeros(mod.Ts.size)
        pm = np.zeros(mod.Ts.size)
        b[has] = sf(ev.x_hi[has] - 1, mod.Ts[has], mod.r)
        pm[has] = pmf(ev.x_hi[has], mod.Ts[has], mod.r)
        cbar = Tf * (ev.gX * mod.r + ev.gY * (1 - mod.r))
        lin_boost = (cbar - ev.beta * mod.m * mod.mu) * b + ev.A * (1 - mod.r) * ev.x_hi * pm
        assert np.all(np.abs(ev.lin_T - lin_boost) <= ev.lin_err_T + 1e-300)


def test_run_anchor_spacing():
    """32 up to n = 1e8 (as before), then ~sqrt(n / 1e8) times that, a power of two, capped."""
    from amp.backends.structured.binomial import RUN_ANCHOR, RUN_ANCHOR_MAX, run_anchor
    assert run_anchor(1e4) == run_anchor(1e8) == RUN_ANCHOR
    assert run_anchor(1e10) == 16 * RUN_ANCHOR
    assert run_anchor(1e11) == 32 * RUN_ANCHOR
    assert run_anchor(1e12) == 128 * RUN_ANCHOR
    assert run_anchor(1e18) == RUN_ANCHOR_MAX


@pytest.mark.parametrize("n0,p,slope,anchor", [
    (10**11, 0.5, 0.5, None), (10**11, 0.3, 0.3, 4096), (10**12, 0.57, 0.57, None),
    (10**9, 0.2, 0.2, 8192)])
def test_long_runs_at_huge_n_against_boost(n0, p, slope, anchor):
    """Runs longer than a block (RUN_BLOCK) with the wide anchor spacing of huge n: every
    carried value (sampled, and every element next to a block boundary) is within its
    certified bound of Boost's sf, its bound within 1.25 eta."""
    from amp.backends.structured.binomial import RUN_BLOCK
    rng = np.random.default_rng(n0 % 997)
    length = RUN_BLOCK + 5000
    k, n = _run(rng, n0, length, p, slope, 0.4, breaks=3)
    s, rel = sf_run(k, n, p, anchor)
    assert np.all(rel <= 1.25 * eta(k, n, p)) and np.all(rel >= 0)
    idx = np.unique(np.r_[np.arange(0, k.size, 211), np.arange(RUN_BLOCK - 3, RUN_BLOCK + 3),
                          k.size - 1])
    b = sf(k[idx] - 1, n[idx], p)
    assert np.all(np.abs(s[idx] - b) <= (rel[idx] + eta(k[idx], n[idx], p)) * b + 1e-300)
    # most values are carried (Boost: an anchor every `anchor` elements, and at breaks and
    # steps of k by 2, which the walk takes now and then)
    assert np.mean(rel != eta(k, n, p)) > 0.9


def test_blocks_and_spacing_change_only_the_anchors():
    """The same run with two anchor spacings: values agree within their certified bounds."""
    rng = np.random.default_rng(11)
    k, n = _run(rng, 10**10, 9000, 0.45, 0.45, 0.3, breaks=2)
    s1, r1 = sf_run(k, n, 0.45, 32)
    s2, r2 = sf_run(k, n, 0.45, 2048)
    assert np.all(np.abs(s1 - s2) <= (r1 + r2) * np.maximum(s1, s2))
