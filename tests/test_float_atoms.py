"""The float atoms are within a few ulps of the exact ratios; every bracket accounts for it.

Found by an adversarial sweep: RAPPOR's E lost digits through ``1 - p1`` (bounds 5% low at
eps0 = 35, ZeroDivisionError at eps0 >= 74), and at ``eps`` within ~1e-9 of ``eps0`` the atom
``E - e^eps`` cancels, so its rounding is large relative to ``delta``."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from amp import api as bounds
from amp.baselines.clone import clone_delta
from amp.backends.dispatch import chernoff_upper, delta_bracket
from amp.core.errors import NumericalError, ParameterError
from amp.mechanisms import KRR, OUE, RAPPOR, BLH, lower_law_from_matrix, pair_law_from_matrix

getcontext().prec = 50


def _exp(x: float) -> Decimal:
    return Decimal(x).exp()          # exact binary value of x, 50 digits


def _single_user_delta(pX: Decimal, eps0: float, eps: float) -> Decimal:
    """n = 1: delta = E[G_+] = pX (e^eps0 - e^eps)_+ (only the (E, 1) atom is positive)."""
    return pX * max(_exp(eps0) - _exp(eps), Decimal(0))


@pytest.mark.parametrize("eps0", [0.01, 1.0, 16.0, 35.0, 45.0, 100.0, 300.0])
def test_unary_encoding_atoms_are_exact_ratios(eps0):
    E = math.exp(eps0)
    for mech in (RAPPOR(eps0), RAPPOR(eps0, d=3), OUE(eps0), OUE(eps0, d=4)):
        for law in mech.gparv_laws() + mech.lower_laws():
            for v in np.r_[law.a, law.b]:
                if v > 0:
                    assert min(abs(v / t - 1) for t in (1.0, E, 1 / E)) <= 2.3e-16


@pytest.mark.parametrize("eps0,rel", [(0.01, 1e-9), (2.0, 1e-9), (16.0, 1e-9), (35.0, 1e-9),
                                      (35.0, 0.0)])
def test_rappor_single_user_near_eps0_against_decimal(eps0, rel):
    eps = eps0 * (1 - rel)
    h = _exp(eps0 / 2)
    ref = float(_single_user_delta(1 / (h + 1) ** 2, eps0, eps))
    r = bounds.delta(RAPPOR(eps0), 1, eps)
    assert r.lower <= ref <= r.upper, (r.lower, ref, r.upper)


@pytest.mark.parametrize("n", [1, 5])
def test_krr_near_eps0_all_paths_bracket_the_exact_value(n):
    eps0, eps = 0.01, 0.01 * (1 - 1e-9)
    law = KRR(eps0, k=2).gparv()
    if n == 1:
        ref = float(_single_user_delta(1 / (_exp(eps0) + 1), eps0, eps))
    else:
        # n = 5: exact multinomial sum in Decimal over the counts of the (E,1) and (1,E) atoms
        E, w = _exp(eps0), _exp(eps)
        q = 1 / (E + 1)                                   # mass of (E,1) and of (1,E)
        tot = Decimal(0)
        for x in range(n + 1):
            for y in range(n + 1 - x):
                s = x * (E - w) + y * (1 - w * E)
                if s > 0:
                    tot += (math.comb(n, x) * math.comb(n - x, y) * q ** (x + y)
                            * (1 - 2 * q) ** (n - x - y)) * s
        ref = float(tot / n)
    for method in ("auto", "exact", "structured") if n > 1 else ("auto", "exact"):
        r = delta_bracket(law, n, eps, method=method, rel_tol=0.5)
        assert r.lower <= ref <= r.upper, (method, r, ref)


def test_chernoff_bound_never_underflows_to_zero():
    g, p = KRR(1.0, k=10).gparv().atoms(0.5)
    assert chernoff_upper(g, p, 10**20) > 0.0
    # the front door's largest n (amp.core.validate.MAX_N: counts are int64), and beyond it a
    # refusal naming n rather than an answer
    assert bounds.delta(KRR(1.0, k=10), 10**18, 0.5).upper > 0.0
    with pytest.raises(ParameterError, match="n must be <= 1e"):
        bounds.delta(KRR(1.0, k=10), 10**20, 0.5)


def test_clear_errors_on_bad_arguments():
    with pytest.raises(ParameterError, match="mechanism"):
        bounds.delta(None, 10, 0.1)
    with pytest.raises(ParameterError, match="mechanism"):
        bounds.epsilon("krr", 10, 1e-6)
    with pytest.raises(ParameterError, match="GPARV"):
        delta_bracket("x", 10, 0.1)
    with pytest.raises(ParameterError, match="mechanism"):
        bounds.calibrate_eps0(lambda e: 5, 100, 0.5, 1e-6)
    with pytest.raises(ParameterError):
        bounds.calibrate_eps0(lambda e: KRR(e, k=3), 100, 0.5, 1e-6, eps0_max=float("nan"))
    M = KRR(1.0, k=4).matrix()
    for bad in (-1, 4, 1.0):
        with pytest.raises(ParameterError):
            lower_law_from_matrix(M, 0, 1, bad)
        with pytest.raises(ParameterError):
            pair_law_from_matrix(M, bad, 1)
    with pytest.raises(NumericalError, match="closed_form"):
        clone_delta(1.0, 10**18, 0.1)


def test_large_eps0_unary_encodings_do_not_crash():
    for mech in (RAPPOR(100.0), RAPPOR(100.0, d=3), OUE(100.0), BLH(100.0)):
        r = bounds.delta(mech, 10, 50.0)
        assert 0.0 <= r.lower <= r.upper <= 1.0


def test_clear_errors_in_baseline_inversions_and_pairs():
    from amp.baselines.blanket_bounds import hoeffding_epsilon
    from amp.baselines.clone import clone_epsilon
    for bad in ("a", ["a"], []):
        with pytest.raises(ParameterError):
            clone_epsilon(1.0, 10, bad)
    for xtol in (0.0, -1.0, float("nan")):
        with pytest.raises(ParameterError, match="xtol"):
            clone_epsilon(1.0, 10, 1e-3, xtol=xtol)
        with pytest.raises(ParameterError, match="xtol"):
            hoeffding_epsilon(1.0, 1000, 1e-3, xtol=xtol)
    for pair in ((5, 9), (1, 1), (-1, 2)):
        with pytest.raises(ParameterError, match="pair"):
            KRR(1.0, k=4).lower_laws(pair=pair)
    assert KRR(1.0, k=4).lower_laws(pair=(1, 3))[0].same_law(KRR(1.0, k=4).lower_laws()[0])
