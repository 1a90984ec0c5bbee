"""Certified engine: the bracket always contains the exact value (multinomial enumeration)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amp.backends.dispatch import delta_bracket
from amp.core.errors import NumericalError, ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms.gparv import GPARV
from amp.mechanisms import (BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse, lower_law_from_matrix, pair_law_from_matrix)

from helpers import assert_lower, assert_upper, random_ldp_matrix

MECHS = [KRR(4.0, k=10), KRR(0.5, k=3), KRR(1.0, k=2), RAPPOR(4.0), RAPPOR(0.5, d=4), OUE(1.0),
         OUE(3.0, d=3), BLH(2.0), BLH(1.0, d=3), OLH(1.5, g=3), HadamardResponse(0.7),
         HadamardResponse(2.0, d=5)]


def _eps_grid(eps0):
    return [0.0, 0.05 * eps0, 0.3 * eps0, 0.8 * eps0, eps0, 1.2 * eps0]


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: m.describe())
@pytest.mark.parametrize("n", [1, 2, 9, 33])
def test_fft_bracket_contains_exact(mech, n):
    for law in mech.gparv_laws():
        for eps in _eps_grid(mech.eps0):
            exact = delta_enumerate(law, n, eps) if n > 1 else float(
                np.dot(*[law.atoms(eps)[1], np.maximum(law.atoms(eps)[0], 0)]))
            r = delta_bracket(law, n, eps, method="fft" if n > 1 else "auto")
            assert_upper(r.upper, exact)
            assert_lower(r.lower, exact)
            if exact > 1e-12:
                assert r.upper <= exact * 1.01, (eps, exact, r)


@pytest.mark.parametrize("mech", [m for m in MECHS if not isinstance(m, KRR) or m.k >= 3],
                         ids=lambda m: m.describe())
def test_theorem5_laws_bracket(mech):
    for law in mech.lower_laws():
        for eps in (0.0, 0.2 * mech.eps0, 0.7 * mech.eps0):
            exact = delta_enumerate(law, 12, eps)
            r = delta_bracket(law, 12, eps, method="fft")
            assert r.lower <= exact <= r.upper


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(d=st.integers(2, 4), m=st.integers(2, 5), eps0=st.floats(0.1, 3.0),
       n=st.integers(2, 18), frac=st.floats(0.0, 1.0), seed=st.integers(0, 10_000))
def test_random_ldp_matrices(d, m, eps0, n, frac, seed):
    M = random_ldp_matrix(np.random.default_rng(seed), d, m, eps0)
    law = pair_law_from_matrix(M, 0, 1)
    eps = frac * law.max_eps()
    exact = delta_enumerate(law, n, eps)
    r = delta_bracket(law, n, eps, method="fft")
    assert r.lower <= exact <= r.upper
    if d >= 3:
        low = lower_law_from_matrix(M, 0, 1, 2)
        exact = delta_enumerate(low, n, eps)
        r = delta_bracket(low, n, eps, method="fft")
        assert r.lower <= exact <= r.upper


def test_exact_method_and_auto_selection():
    # RAPPOR's Theorem 5 law (seven atom types) has no structured shape: enumeration when
    # small, then the cheaper of cf and FFT (cf here: its expected cost is far lower), both
    # certified and overlapping; k-RR's has it (nuisance levels 1/E and 1): structured at any n
    law = RAPPOR(1.0).lower_laws()[0]
    r = delta_bracket(law, 6, 0.2)
    assert r.method == "exact"
    assert r.lower <= delta_enumerate(law, 6, 0.2) <= r.upper
    auto, fft = delta_bracket(law, 5000, 0.05), delta_bracket(law, 5000, 0.05, method="fft")
    assert auto.method == "cf" and auto.lower <= fft.upper and fft.lower <= auto.upper
    low = KRR(1.0, k=5).lower_laws()[0]
    for n in (6, 5000):
        r = delta_bracket(low, n, 0.05)
        rf = delta_bracket(low, n, 0.05, method="exact" if n == 6 else "fft")
        assert r.method == "structured" and r.lower <= rf.upper and rf.lower <= r.upper
    # the blanket law of a Table 1 mechanism goes to the structured path, at any n
    up = KRR(1.0, k=5).gparv()
    for n in (6, 5000):
        r = delta_bracket(up, n, 0.05)
        assert r.method == "structured"
        rf = delta_bracket(up, n, 0.05, method="exact" if n == 6 else "fft")
        assert r.lower <= rf.upper and rf.lower <= r.upper


def test_forced_methods():
    up = RAPPOR(2.0).gparv()
    assert delta_bracket(up, 300, 0.4, method="structured").method == "structured"
    assert delta_bracket(up, 300, 0.4, method="fft").method == "fft"
    with pytest.raises(ParameterError, match="structured"):
        delta_bracket(RAPPOR(2.0, d=3).lower_laws()[0], 300, 0.4, method="structured")


def test_chernoff_shortcut_is_an_upper_bound():
    from amp.backends.dispatch import chernoff_upper
    law = KRR(1.0, k=4).gparv()
    for n in (2, 5, 20):
        for eps in (0.1, 0.5, 0.9):
            g, p = law.atoms(eps)
            assert chernoff_upper(g, p, n) >= delta_enumerate(law, n, eps)
    # deltas far below abs_tol are settled by the bound, with lower end 0
    r = delta_bracket(OUE(3.0).gparv(), 20_000, 0.2857)
    assert r.method == "chernoff" and r.lower == 0.0 and 0 < r.upper <= 1e-16
    exact = delta_bracket(OUE(3.0).gparv(), 20_000, 0.2857, method="structured", abs_tol=0.0)
    # the atoms' floor is weighted where the sum can be near 0 (tilted_floor): a delta
    # ~4e-25 is resolved, and the Chernoff shortcut is above it
    assert 0 < exact.lower and exact.rel_width < 1e-6 and exact.upper <= r.upper


def test_zero_beyond_eps0():
    law = KRR(2.0, k=10).gparv()
    r = delta_bracket(law, 1000, 2.5)
    assert (r.lower, r.upper, r.method) == (0.0, 0.0, "zero")
    # at eps = eps0 the positive atom is floating-point noise: certified tiny upper end
    r = delta_bracket(law, 1000, 2.0)
    assert r.lower == 0.0 and r.upper < 1e-13


def test_vectorised_eps_and_monotone():
    law = RAPPOR(2.0).gparv()
    eps = np.linspace(0, 1.5, 7)
    res = delta_bracket(law, 500, eps)
    ups = [r.upper for r in res]
    lows = [r.lower for r in res]
    # certified monotonicity: each upper end is above the next lower end
    assert all(u >= l2 for u, l2 in zip(ups, lows[1:]))
    assert all(u1 > u2 for u1, u2 in zip(ups, ups[1:]) if u2 > 1e-12)


def test_decreasing_in_n():
    law = KRR(2.0, k=10).gparv()
    prev = math.inf
    for n in (100, 300, 1000, 3000):
        r = delta_bracket(law, n, 0.5)
        assert r.upper < prev
        prev = r.lower


@pytest.mark.parametrize("n, eps", [(1000, 1.0), (10_000, 0.4), (100_000, 0.12)])
def test_default_accuracy_self_certified(n, eps):
    """Default settings: upper <= 1.01 * lower, so upper is within 1% of the exact value."""
    r = delta_bracket(KRR(4.0, k=10).gparv(), n, eps)
    assert r.lower > 0 and r.upper <= 1.01 * r.lower


def test_refuses_unreachable_accuracy():
    with pytest.raises(NumericalError, match="cannot certify"):
        delta_bracket(KRR(4.0, k=10).gparv(), 10_000, 0.3, rel_tol=1e-6, max_points=1 << 14,
                      method="fft")


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n=0, eps=0.1), "n must be >= 1"),
    (dict(n=10, eps=-0.1), "eps must be >= 0"),
    (dict(n=10, eps=float("nan")), "eps must be finite"),
    (dict(n=10, eps=0.1, rel_tol=0.0), "rel_tol must be > 0"),
    (dict(n=10, eps=0.1, method="magic"), "method must be"),
    (dict(n=2.5, eps=0.1), "n must be an integer"),
])
def test_bad_input(kwargs, msg):
    with pytest.raises(ParameterError, match=msg):
        delta_bracket(KRR(1.0, k=3).gparv(), **kwargs)


def test_gparv_validation():
    with pytest.raises(ParameterError):
        GPARV([1.0], [1.0, 2.0], [0.5], 1.0)
    with pytest.raises(ParameterError):
        GPARV([1.0], [1.0], [1.5], 1.0)
    with pytest.raises(ParameterError):
        GPARV([-1.0], [1.0], [0.5], 1.0)


@pytest.mark.parametrize("n", [5, 30, 300])
def test_few_blanket_users_path_extreme_eps0(n):
    """Extreme eps0 (n * gamma small): exact conditioning on the number of blanket users."""
    laws = [KRR(9.0, k=5).gparv()] + (KRR(9.0, k=5).lower_laws()[:1] if n <= 30 else [])
    for law in laws:
        for eps in (0.5, 4.0, 8.5):
            r = delta_bracket(law, n, eps)
            if n <= 30:
                exact = delta_enumerate(law, n, eps)
                assert r.lower <= exact <= r.upper
            assert r.method in ("exact", "exact-blanket-count", "structured", "chernoff", "fft")
            if r.method not in ("chernoff", "fft"):
                assert r.upper <= r.lower * (1 + 1e-6) + 1e-300


def test_first_moment_shortcut_is_an_upper_bound():
    law = BLH(3.0).gparv()
    eps = 3.0 * (1 - 1e-9)
    r = delta_bracket(law, 12, eps, abs_tol=1e-3)
    assert r.method == "first-moment"
    assert r.lower == 0.0 and r.upper >= delta_enumerate(law, 12, eps)


def test_extreme_eps0_epsilon_search():
    from amp.api import epsilon
    r = epsilon(KRR(30.0, k=5), 1000, 1e-6)
    assert r.lower <= r.upper <= 30.0 and r.upper > 29.9


@pytest.mark.parametrize("make,n", [(lambda: RAPPOR(8.0), 20), (lambda: OUE(8.0), 25),
                                    (lambda: KRR(8.0, k=50), 20), (lambda: BLH(7.0), 22)])
def test_heavy_atom_reduction_matches_enumeration(make, n):
    """Dropping the atoms of which one makes S <= 0 (E[S_+] = P(light)^n E[S'_+]) is exact:
    the reduced bracket contains the full enumeration, near log max a/b where the FFT fails."""
    from amp.backends.dispatch import LawDelta
    from amp.core.floats import U
    m = make()
    for law in (m.lower_laws()[0], m.gparv_laws()[0]):
        ld = LawDelta(law, n)
        for eps in (0.85 * law.max_eps(), 0.95 * law.max_eps(), law.max_eps() - 0.01):
            g, p = law.atoms(eps)
            r = ld._without_heavy(eps, g, p, 16 * U * law.magnitudes(eps), 1e-6, 1e-8, 0.0)
            assert r is not None and r.method.endswith("-light-atoms")
            exact = delta_enumerate(law, n, eps)
            assert r.lower <= exact * (1 + 1e-9) and exact <= r.upper * (1 + 1e-9)
            assert r.upper - r.lower <= 1e-4 * r.upper


def test_heavy_atom_reduction_declines_without_heavy_atoms():
    from amp.backends.dispatch import LawDelta
    from amp.core.floats import U
    law = KRR(1.0, k=3).gparv()
    ld = LawDelta(law, 50)
    g, p = law.atoms(0.5)
    assert ld._without_heavy(0.5, g, p, 16 * U * law.magnitudes(0.5), 1e-3, None, 0.0) is None
