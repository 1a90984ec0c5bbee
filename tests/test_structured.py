"""Structured delta engine (amp.delta.structured): exact for small n, inside the FFT bracket for large n."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import amp.delta.structured.core as S
from amp.delta.dispatch import delta_bracket
from amp.core.errors import ParameterError
from amp.delta.exact import delta_enumerate
from amp.mechanisms.gparv import GPARV
from amp.mechanisms import (BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse, pair_law_from_matrix)
from amp.delta.structured import (delta_bracket_structured, epsilon_bracket_structured,
                            structured_shape, supports)

from helpers import assert_lower, assert_upper, random_ldp_matrix

TABLE1 = [KRR(4.0, k=10), KRR(0.5, k=3), KRR(1.0, k=2), RAPPOR(4.0), OUE(1.0), BLH(2.0),
          HadamardResponse(0.7), OLH(1.5, g=3)]
# absolute floor of every bracket: the float atoms are within 16 u (a + e^eps b) of the exact
# ratios, which moves delta by up to sum p * that (~1e-14 here) on each side
FLOOR = 1e-13
FINITE = [RAPPOR(0.5, d=4), RAPPOR(2.0, d=3), OUE(3.0, d=3), BLH(1.0, d=3), BLH(4.0, d=4)]


def _eps_grid(eps0):
    return [0.0, 0.05 * eps0, 0.3 * eps0, 0.8 * eps0, 0.999 * eps0, eps0, 1.2 * eps0]


def _exact(law, n, eps):
    if n == 1:
        g, p = law.atoms(eps)
        return float(np.dot(p, np.maximum(g, 0.0)))
    return delta_enumerate(law, n, eps)


# ----------------------------------------------------------------------------- supports
@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
def test_supports_table1_and_finite_forms(mech):
    law = mech.gparv()
    assert supports(law)
    sh = structured_shape(law)
    assert sh.dev_a == 0 and sh.dev_b == 0
    assert math.isclose(sh.E, math.exp(mech.eps0), rel_tol=1e-12)
    total = sh.pO + sh.pX + sh.pY + sh.pZ + sh.pF
    assert math.isclose(total, 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("mech", [KRR(4.0, k=10), RAPPOR(1.0, d=4), OUE(2.0, d=3), BLH(1.0, d=3)],
                         ids=lambda m: m.describe())
def test_supports_false_on_theorem5_laws(mech):
    for law in mech.lower_laws():
        assert not supports(law)


def test_supports_false_on_random_matrices(rng):
    for _ in range(20):
        M = random_ldp_matrix(rng, 3, 4, 1.5)
        assert not supports(pair_law_from_matrix(M, 0, 1))
    # two different ratios, or a ratio below 1
    assert not supports(GPARV([2.0, 1.0, 3.0], [1.0, 2.0, 1.0], [0.2, 0.2, 0.1], 1.1))
    assert not supports(GPARV([0.5, 1.0], [1.0, 0.5], [0.3, 0.3], 1.0))
    assert not supports(GPARV([2.0, 0.0], [1.0, 1.0], [0.3, 0.3], 1.0))


def test_supports_explicit_off_atom_and_tolerance():
    E = math.exp(1.3)
    law = GPARV([E, 1.0, 0.0, 1.0], [1.0, E * (1 + 1e-13), 0.0, 1.0], [0.2, 0.2, 0.3, 0.3], 1.3)
    sh = structured_shape(law)
    assert sh is not None and sh.pF == pytest.approx(0.3) and sh.dev_a + sh.dev_b > 0
    assert not supports(GPARV([E, 1.0], [1.0, E * (1 + 1e-9)], [0.2, 0.2], 1.3))


# ----------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
@pytest.mark.parametrize("n", [1, 2, 9, 40])
def test_equals_enumeration_small_n(mech, n):
    law = mech.gparv()
    for eps in _eps_grid(mech.eps0):
        exact = _exact(law, n, eps)
        r = delta_bracket_structured(law, n, eps)
        assert r.method == "structured"
        assert_upper(r.upper, exact)
        assert_lower(r.lower, exact)
        if exact > 1e-13:
            assert r.upper - r.lower <= 1e-7 * exact + FLOOR, (eps, exact, r)
        elif exact == 0.0:
            assert r.lower == 0.0


def test_random_structured_laws_against_enumeration(rng):
    for _ in range(25):
        E = math.exp(rng.uniform(0.2, 4.0))
        p = rng.dirichlet(np.ones(5) * rng.uniform(0.3, 3.0))
        if rng.random() < 0.3:
            p[3] = 0.0                                  # no (E, E) atom
        if rng.random() < 0.3:
            p[2] *= rng.uniform(0.0, 1.0)               # asymmetric (E,1) / (1,E)
        p = p / p.sum()
        law = GPARV([1.0, E, 1.0, E], [1.0, 1.0, E, E], p[:4] * rng.uniform(0.5, 1.0),
                    math.log(E))
        n = int(rng.integers(2, 31))
        for eps in (0.0, rng.uniform(0, math.log(E)), 0.97 * math.log(E)):
            exact = delta_enumerate(law, n, eps)
            r = delta_bracket_structured(law, n, eps, rel_tol=0.5)
            assert r.lower <= exact <= r.upper, (E, p, n, eps, exact, r)
            if exact > 1e-13:
                floor = S._floor_width(structured_shape(law), eps, r.upper)
                assert (r.upper - r.lower) <= 1e-7 * exact + 1.01 * floor


def _forced(law, n, eps, plan, log_tau=-60.0):
    """The structured bracket of ``delta(eps)`` with the nuisance plan forced."""
    sh = structured_shape(law)
    mod = S._Model(sh, n, log_tau)
    ev = S._Evaluator(mod, eps)
    return S._assemble(S._evaluate(mod, ev, plan), n, sh, eps)


@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
def test_zsplit_plan_equals_enumeration(mech):
    """The z-split plan (Z rows, conditional binomial O tables) is exact up to tails."""
    law = mech.gparv()
    for n in (2, 9, 40):
        for eps in _eps_grid(mech.eps0)[:5]:
            exact = _exact(law, n, eps)
            lo, up = _forced(law, n, eps, S._Plan("zsplit"))
            assert_upper(up, exact)
            assert_lower(lo, exact)
            if exact > 1e-13:
                assert up - lo <= 1e-7 * exact + FLOOR, (n, eps, exact, lo, up)


def test_zsplit_random_laws_against_enumeration(rng):
    for _ in range(25):
        E = math.exp(rng.uniform(0.2, 5.0))
        p = rng.dirichlet(np.ones(5) * rng.uniform(0.3, 3.0))
        if rng.random() < 0.3:
            p[rng.integers(0, 4)] = 0.0                 # a missing atom type
        p = p / p.sum()
        law = GPARV([1.0, E, 1.0, E], [1.0, 1.0, E, E], p[:4] * rng.uniform(0.5, 1.0),
                    math.log(E))
        if structured_shape(law).pX <= 0:
            continue
        n = int(rng.integers(2, 31))
        for eps in (0.0, rng.uniform(0, math.log(E)), 0.97 * math.log(E)):
            exact = delta_enumerate(law, n, eps)
            lo, up = _forced(law, n, eps, S._Plan("zsplit"), log_tau=float(rng.uniform(-60, -8)))
            assert lo <= exact <= up, (E, p, n, eps, exact, lo, up)


def test_binom_rows_and_excess_bound():
    Ns = np.arange(950, 1010)
    P, rel, sabs = S._binom_rows(Ns, 60, 160, 0.11)
    ref = stats.binom.pmf(np.arange(60, 161)[None, :], Ns[:, None], 0.11)
    big = ref > 1e-40 * ref.max(axis=1, keepdims=True)
    assert np.all(np.abs(P - ref)[big] <= (rel + 1e-13) * ref[big])
    assert np.all(np.where(big, 0.0, np.abs(P - ref)).sum(axis=1) <= sabs + 1e-300)
    assert rel < 1e-8
    for N, p, h in [(1000, 0.11, 140), (1000, 0.11, 110), (1000, 0.11, 80), (50, 0.5, 40),
                    (10_000, 0.002, 60)]:
        k = np.arange(h + 1, N + 1)
        exact = float(np.sum((k - h) * stats.binom.pmf(k, N, p)))
        bound = S._excess_bound(N, p, h)
        assert exact <= bound * (1 + 1e-9)
        if exact > 1e-200 and h > N * p:
            assert bound <= 50 * exact          # not absurdly loose in the tail


def test_zero_beyond_eps0_and_list_input():
    law = RAPPOR(2.0).gparv()
    rs = delta_bracket_structured(law, 500, [0.5, 2.0, 3.0])
    assert isinstance(rs, list) and len(rs) == 3
    assert rs[0].upper > 0 and rs[2].upper == 0.0
    # at eps = eps0 (up to rounding of e^eps) only a rounding-level upper bound remains
    assert rs[1].lower == 0.0 and rs[1].upper <= 1e-14


def test_brackets_consistent_in_eps():
    law = OUE(3.0).gparv()
    rs = delta_bracket_structured(law, 20_000, np.linspace(0.05, 0.6, 8))
    for a, b in zip(rs, rs[1:]):
        assert b.lower <= a.upper          # delta is non-increasing in eps


# ----------------------------------------------------------------------------- vs the FFT engine
@pytest.mark.parametrize("mech,n,eps", [
    (KRR(4.0, k=10), 1_000, 1.5), (RAPPOR(4.0), 1_000, 1.5), (OUE(4.0), 1_000, 0.95),
    (BLH(4.0), 1_000, 1.35), (KRR(1.0, k=10), 1_000, 0.08), (RAPPOR(1.0), 1_000, 0.107),
    (KRR(4.0, k=10), 10_000, 0.384), (RAPPOR(4.0), 10_000, 0.3645), (OUE(1.0), 10_000, 0.03),
    (KRR(4.0, k=10), 100_000, 0.111), (BLH(4.0), 100_000, 0.0826),
], ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_inside_fft_bracket(mech, n, eps):
    law = mech.gparv()
    rs = delta_bracket_structured(law, n, eps)
    rf = delta_bracket(law, n, eps, method="fft")
    assert rs.lower <= rf.upper and rf.lower <= rs.upper          # the brackets overlap
    assert rs.lower >= rf.lower
    # the FFT's upper end can be tighter than our (much narrower) bracket by less than its width
    assert rs.upper <= rf.upper + (rs.upper - rs.lower) + 1e-15
    assert rs.rel_width <= 2e-3


# ----------------------------------------------------------------------------- gap bounds
def test_lattice_plans_contain_exact_plan():
    """The lattice tables (integerisation, block shift) are certified: every plan's bracket
    contains the exact-table bracket."""
    cases = [(RAPPOR(4.0), 3000, 0.5), (OUE(1.0), 2000, 0.12), (BLH(2.0), 2000, 0.3),
             (KRR(4.0, k=10), 3000, 0.6), (RAPPOR(0.5, d=4), 800, 0.1)]
    for mech, n, eps in cases:
        sh = structured_shape(mech.gparv())
        mod = S._Model(sh, n, -60.0)
        ev = S._Evaluator(mod, eps)
        le, ue = S._assemble(S._evaluate(mod, ev, S._Plan("exact", b=8)), n, sh, eps)
        assert (ue - le) <= 1e-7 * ue + FLOOR
        for plan in (S._Plan("lattice", 1, 1), S._Plan("lattice", 16, 1),
                     S._Plan("lattice", 1 << 20, 1), S._Plan("lattice", 4, 3),
                     S._Plan("exact", 1, 1), S._Plan("exact", 64, 1), S._Plan("zsplit")):
            lo, up = S._assemble(S._evaluate(mod, ev, plan), n, sh, eps)
            assert lo <= ue and le <= up, (mech.describe(), plan, (le, ue), (lo, up))
            if plan.mode == "zsplit":                  # exact too: as narrow
                assert up - lo <= 1e-7 * up + FLOOR


def test_lattice_table_matches_exact_table():
    nu = S._Nuisance(math.exp(4.0), 0.12, 0.0022, 0.8778)
    m = 3000
    ex, _ = S._exact_table(nu, m, -50.0)
    lat = S._lattice_table(nu, m, 5, 2500.0)
    beta = 0.4
    c = beta * (m * nu.mu + np.linspace(-600, 600, 13))
    z = np.zeros_like(c)
    el, eu = ex.lookup(c, z, beta)
    ll, lu = lat.lookup(c, z, beta)
    # the integerised law is a mean-preserving spread: close, and never far below
    assert np.all(lu >= el * (1 - 1e-9) - 1e-12)
    assert np.allclose(ll, el, rtol=1e-3, atol=1e-5)


# ----------------------------------------------------------------------------- epsilon search
@pytest.mark.parametrize("mech,n", [(KRR(4.0, k=10), 200_000), (RAPPOR(4.0), 200_000),
                                    (OUE(1.0), 50_000), (BLH(2.0), 2_000)],
                         ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_epsilon_bracket_certified(mech, n):
    law = mech.gparv()
    delta = 1e-6
    lo, hi = epsilon_bracket_structured(law, n, delta, rel_tol=1e-5)
    assert 0 < lo < hi and hi - lo <= 1e-5 * hi
    assert delta_bracket_structured(law, n, hi).upper <= delta
    assert delta_bracket_structured(law, n, lo).lower > delta


def test_epsilon_bracket_small_n_vs_enumeration():
    law = BLH(1.0, d=3).gparv()
    n, delta = 30, 1e-3
    lo, hi = epsilon_bracket_structured(law, n, delta, rel_tol=1e-4)
    assert delta_enumerate(law, n, hi) <= delta < delta_enumerate(law, n, lo)


def test_epsilon_zero_when_delta_large():
    law = KRR(1.0, k=10).gparv()
    assert epsilon_bracket_structured(law, 200, 0.5) == (0.0, 0.0)


# ----------------------------------------------------------------------------- inputs
def test_bad_inputs():
    law = RAPPOR(2.0).gparv()
    with pytest.raises(ParameterError):
        delta_bracket_structured(KRR(4.0, k=10).lower_laws()[0], 100, 0.5)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 0, 0.5)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 100, -0.1)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 100, 0.1, rel_tol=0.0)
    with pytest.raises(ParameterError):
        epsilon_bracket_structured(law, 100, 1.5)


# ----------------------------------------------------------------------------- what we rely on
def _ref_pmf(k, n, p):
    """Binomial pmf to ~30 digits (Decimal, Stirling series for the log-factorials)."""
    getcontext().prec = 40
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")

    def lgam1(z):
        z = Decimal(z)
        return (z * z.ln() - z + (2 * pi * z).ln() / 2 + 1 / (12 * z) - 1 / (360 * z ** 3)
                + 1 / (1260 * z ** 5) - 1 / (1680 * z ** 7))

    f = Fraction(p)
    pD = Decimal(f.numerator) / Decimal(f.denominator)
    return (lgam1(n) - lgam1(k) - lgam1(n - k) + k * pD.ln() + (n - k) * (1 - pD).ln()).exp()


def _ref_sf(k, n, p):
    getcontext().prec = 40
    f = Fraction(p)
    r = (Decimal(f.numerator) / Decimal(f.denominator)) / (1 - Decimal(f.numerator)
                                                         / Decimal(f.denominator))
    base = _ref_pmf(k + 1, n, p)
    cur, tot, i = Decimal(1), Decimal(0), k + 1
    while cur > tot * Decimal("1e-25") or tot == 0:
        tot += cur
        cur = cur * (n - i) / (i + 1) * r
        i += 1
    return base * tot


@pytest.mark.parametrize("n,p,z", [(10**6, 0.0284, 4.0), (10**7, 0.5, 6.0),
                                   (10**5, 0.3, 2.0)])
def test_boost_binomial_accuracy_assumption(n, p, z):
    """``ETA_BINOM``: scipy.stats.binom pmf/sf (Boost) relative accuracy at large n."""
    k = int(n * p + z * math.sqrt(n * p * (1 - p)))
    assert abs(stats.binom.pmf(k, n, p) / float(_ref_pmf(k, n, p)) - 1) < S.ETA_BINOM / 10
    assert abs(stats.binom.sf(k, n, p) / float(_ref_sf(k, n, p)) - 1) < S.ETA_BINOM / 10
