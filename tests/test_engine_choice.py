"""The engine chosen by expected cost (issue 27): the cf inversion and the FFT are both
certified, so the choice between them must never change validity.

Oracle: exact enumeration of the Theorem 5 laws (``method="exact"``) at small ``n``; at
larger ``n`` the two certified engines must overlap."""

from __future__ import annotations

import numpy as np
import pytest

import amp
from amp.backends.cfinv import cf_cost
from amp.backends.dispatch import LawDelta
from amp.backends.fft import fft_cost

BITS = [amp.RAPPOR(1.0), amp.OUE(1.0), amp.BLH(1.0), amp.HadamardResponse(1.0)]


def _generic_lower_laws(m):
    return [law for law in m.lower_laws() if not LawDelta(law, 10).structured]


@pytest.mark.parametrize("m", BITS, ids=lambda m: m.describe()[:6])
def test_cf_fft_and_exact_brackets_agree_at_small_n(m):
    """n = 12: cf, FFT and exact enumeration brackets of every generic Theorem 5 law all
    contain the enumeration's value (they pairwise overlap)."""
    n = 12
    for law in _generic_lower_laws(m):
        for eps in (0.2, 0.6):
            ex = LawDelta(law, n, "exact").delta(eps, rel_tol=0.5)
            for meth in ("cf", "fft", "auto"):
                r = LawDelta(law, n, meth).delta(eps, rel_tol=2e-3)
                assert r.lower <= ex.upper and ex.lower <= r.upper, (meth, eps, r, ex)
                assert r.lower <= ex.upper * (1 + 1e-12)


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_auto_picks_the_cheaper_certified_engine(n):
    """At n = 1e4-1e5 the lower bound's generic law goes through cf (expected cost far below
    the FFT's), and the cf and FFT brackets of delta overlap."""
    m = amp.RAPPOR(1.0)
    law = _generic_lower_laws(m)[0]
    eps = 0.0264829 if n == 10_000 else 0.00757317
    g, p = law.atoms(eps)
    assert 3 * cf_cost(g, p, n, 2e-3) < fft_cost(g, p, n, 2e-3)
    auto = LawDelta(law, n).delta(eps)
    assert auto.method == "cf"
    fft = LawDelta(law, n, "fft").delta(eps)
    assert auto.lower <= fft.upper and fft.lower <= auto.upper


def test_lower_eps_never_above_the_exact_reference():
    """The Theorem 5 eps (auto engine) is never above the bracket from exact enumeration."""
    n = 12
    for m in BITS[:2]:
        auto = amp.epsilon(m, n, 1e-3, bound="lower", rel_tol=1e-3)
        ex = amp.epsilon(m, n, 1e-3, bound="lower", method="exact", rel_tol=1e-3)
        assert auto.value <= ex.upper and np.isclose(auto.value, ex.value, rtol=2e-3)
