"""The structured engine at scale (issue 27): the skipped ends of the ``T`` window, the band in
chunks, Boost's binomial ufuncs called directly.

Oracles: exact enumeration of ``delta(eps)`` (:func:`amp.backends.exact.delta_enumerate`, no
structured code), and a direct sum of ``P(T) E[S_+ | T]`` over the skipped ``T`` (k-RR: the
counts ``X | T`` and ``O | m`` are binomial; every term summed); ``scipy.stats.binom``
itself for the ufuncs.  The engine's shortcuts are forced far beyond their defaults
(``SKIP_REL = 1e-2``, windows of a few ``T``, chunks of 5 elements) so that a term on the
wrong side would show.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import amp.backends.structured.backend as SB
import amp.backends.structured.evaluator as SE
from amp.backends.exact import delta_enumerate
from amp.backends.structured import StructuredBackend
from amp.backends.structured.binomial import logpmf, pmf, sf
from amp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse


@pytest.fixture
def forced_skip(monkeypatch):
    """Skip the ends of the window up to 1e-2 of the Chernoff total, in any window."""
    monkeypatch.setattr(SB, "SKIP_REL", 1e-2)
    monkeypatch.setattr(SE, "CORE_MIN_T", 4)


def _exact_given_T(law_shape, n, eps, T):
    """``P(T) E[S_+ | T]`` for a k-RR law (no ``(E, E)`` atom), every term summed."""
    s = law_shape
    pT = s.pX + s.pY
    r = s.pX / pT
    qO = s.pO / (1.0 - pT)
    w = math.exp(eps)
    gX, gY, beta = s.lx * (s.E - w), s.ly * (1 - w * s.E), s.sv * math.expm1(eps)
    m = n - T
    x = np.arange(T + 1)
    o = np.arange(m + 1)
    px = stats.binom.pmf(x, T, r)
    po = stats.binom.pmf(o, m, qO)
    c = gX * x + gY * (T - x)
    inner = np.maximum(c[:, None] - beta * o[None, :], 0.0) @ po
    return float(stats.binom.pmf(T, n, pT) * (px @ inner))


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.2, 0.5])
def test_skip_bound_dominates_the_skipped_contribution(monkeypatch, eps):
    """``skip_up`` (Chernoff, with the nuisance) is at least the exact contribution of the
    ``T`` it skips; with a budget of 1e-2 some ``T`` are skipped on both sides."""
    monkeypatch.setattr(SE, "CORE_MIN_T", 4)
    n = 400
    b = StructuredBackend(KRR(1.0, k=10).gparv(), n)
    mod = b.count_model(-41.4)
    ev = SE.Evaluator(mod, eps, 1e-2)
    skipped = np.flatnonzero(~ev.core)
    assert skipped.size > 0 and ev.core.any()
    exact = sum(_exact_given_T(b.shape, n, eps, int(mod.Ts[i])) for i in skipped)
    assert ev.skip_up >= exact
    # the evaluated T form one run (the ends are skipped, never the middle)
    core = np.flatnonzero(ev.core)
    assert core[-1] - core[0] + 1 == core.size


MECHS = [KRR(1.0, k=10), KRR(0.5, k=3), RAPPOR(1.0), OUE(1.0), BLH(1.0),
         HadamardResponse(1.0)]


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: m.describe()[:18])
def test_bracket_with_forced_skipping_contains_exact(forced_skip, mech):
    """With the ends skipped at 1e-2, the bracket still contains the exact value; where the
    skipped part is more than the width, the upper end without ``skip_up`` would be below
    the exact value (the term is needed, and on the right side)."""
    n = 48
    law = mech.gparv()
    b = StructuredBackend(law, n)
    needed = 0
    for eps in (0.0, 0.1, 0.3, 0.6):
        exact = delta_enumerate(law, n, eps)
        r = b.delta(eps, rel_tol=0.5)
        assert r.lower <= exact <= r.upper, (eps, exact, r.lower, r.upper)
        sk = r.details.get("skipped", 0.0)
        if sk > 0 and r.upper - sk < exact:
            needed += 1
    assert needed >= 1


@pytest.mark.parametrize("mech", [KRR(1.0, k=10), RAPPOR(1.0)], ids=["krr", "rappor"])
def test_band_chunks_give_the_same_bracket(monkeypatch, mech):
    """Chunks of 5 band elements, rebuilt on every pass (no cache), give the bracket of the
    default chunking to rounding; the chunks tile the band (T in order, no overlap)."""
    n = 3000
    law = mech.gparv()
    eps = [0.02, 0.08]
    ref = [StructuredBackend(law, n).delta(e) for e in eps]
    monkeypatch.setattr(SE, "BAND_CHUNK", 5)
    monkeypatch.setattr(SE, "BAND_CACHE_BYTES", 0)
    b = StructuredBackend(law, n)
    new = [b.delta(e) for e in eps]
    for r0, r1 in zip(ref, new):
        assert r1.lower == pytest.approx(r0.lower, rel=1e-12)
        assert r1.upper == pytest.approx(r0.upper, rel=1e-12)
    ev = SE.Evaluator(b.count_model(-41.4), 0.05)
    chunks = list(ev.band_chunks())
    assert len(chunks) > 10
    iT = np.concatenate([c[0] for c in chunks])
    assert iT.size == ev.total_band and np.all(np.diff(iT) >= 0)
    assert sum(c[0].size for c in chunks) == int(ev.nb.sum())


def test_binomial_ufuncs_equal_scipy_stats():
    """:func:`pmf`, :func:`sf` call Boost's ufuncs directly: bitwise the values of
    ``scipy.stats.binom`` (inside and outside the support, integer and float ``k``)."""
    rng = np.random.default_rng(7)
    for n in (0, 1, 7, 1000, 10**9, 10**10):
        for p in (1e-9, 0.3, 0.5, 0.97):
            sd = math.sqrt(n * p * (1 - p) + 1)
            k = np.unique(np.r_[np.arange(-3, 4), n - 2 + np.arange(5),
                                np.floor(n * p + rng.normal(0, 5 * sd, 40))]).astype(np.int64)
            for kk in (k, k.astype(float)):
                assert np.array_equal(pmf(kk, n, p), stats.binom.pmf(kk, n, p))
                assert np.array_equal(sf(kk, n, p), stats.binom.sf(kk, n, p))
            ok = k >= 0
            assert np.array_equal(logpmf(k[ok], n, p), stats.binom.logpmf(k[ok], n, p))
    assert pmf(np.array([2.5]), 10, 0.3)[0] == 0.0          # not an integer: no mass
