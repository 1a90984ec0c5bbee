"""Tests of amp.oracles.conjecture: exhaustive search of the vulnerable pair (Section 8)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.oracles.conjecture import (MAX_PAIRS, PairSpec, n_pairs, noise_floor, random_ldp_matrix,
                            search)
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.oracles.ground_truth import shuffled_divergence
from amp.mechanisms import KRR, lower_law_from_matrix, matrix_eps0


# --------------------------------------------------------------------- random matrices
@pytest.mark.parametrize("shape", [(3, 3), (3, 4), (5, 2)])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0])
def test_random_ldp_matrix_is_exactly_eps0(shape, eps0):
    rng = np.random.default_rng(7)
    P = random_ldp_matrix(rng, *shape, eps0)
    assert P.shape == shape
    assert np.all(P > 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert eps0 - 1e-9 <= matrix_eps0(P) <= eps0 + 1e-12


def test_random_ldp_matrix_seeded_and_bad_input():
    a = random_ldp_matrix(np.random.default_rng(1), 3, 3, 1.0)
    b = random_ldp_matrix(np.random.default_rng(1), 3, 3, 1.0)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ParameterError, match="rng"):
        random_ldp_matrix(1, 3, 3, 1.0)
    with pytest.raises(ParameterError, match="n_inputs must be >= 2"):
        random_ldp_matrix(np.random.default_rng(1), 1, 3, 1.0)
    with pytest.raises(ParameterError, match="eps0 must be > 0"):
        random_ldp_matrix(np.random.default_rng(1), 3, 3, -1.0)


# --------------------------------------------------------------------- search
def test_pairspec_forms():
    assert PairSpec(0, 1, (2, 2)).conjectured_form
    assert not PairSpec(0, 1, (0, 0)).conjectured_form
    assert PairSpec(0, 1, (0, 0)).constant_others
    assert not PairSpec(0, 1, (2, 0)).constant_others
    assert n_pairs(3, 4) == 3 * 2 * 10


@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_krr_conjecture_holds_at_small_eps(k, n):
    """k-RR (eps0 = 1): the conjectured pair is a maximiser for eps <= 0.25 (found here)."""
    M = KRR(1.0, k=k).matrix()
    eps = [0.0, 0.1, 0.25]
    rep = search(M, n, eps, label=f"{k}-RR")
    assert rep.holds, rep.table()
    for f in rep.findings:
        assert f.argmax.conjectured_form and f.ratio == pytest.approx(1.0, abs=1e-9)
        law = lower_law_from_matrix(M, 0, 1, 2)
        assert f.conjectured_value == pytest.approx(delta_enumerate(law, n, f.eps), rel=1e-9)
    assert rep.n_pairs == n_pairs(k, n)


def test_krr_counterexample_n2_is_exact():
    """k-RR, n = 2, eps near eps0: X0 = (x0, x0), X1 = (x1, x0) beats the conjectured pair.

    Only the histogram {x0, x0} has likelihood ratio e^eps0 > e^eps, so (p = 1/(e^eps0+k-1))
    D = e^eps0 p^2 (e^eps0 - e^eps) for the counterexample and p^2 (e^eps0 - e^eps) for the
    conjectured pair: ratio e^eps0 exactly.
    """
    k, eps0, eps = 3, 1.0, 0.9
    E0 = math.exp(eps0)
    p = 1 / (E0 + k - 1)
    rep = search(KRR(eps0, k=k).matrix(), 2, [eps])
    f = rep.findings[0]
    assert not f.holds and not rep.holds
    assert f.argmax.others == (f.argmax.x0,)
    assert f.max_value == pytest.approx(E0 * p * p * (E0 - math.exp(eps)), rel=1e-12)
    assert f.conjectured_value == pytest.approx(p * p * (E0 - math.exp(eps)), rel=1e-12)
    assert f.ratio == pytest.approx(E0, rel=1e-12)
    assert f.holds_constant and f.constant_pair.others == (f.constant_pair.x0,)
    assert "COUNTEREXAMPLE" in rep.summary()


def test_krr_counterexample_mixed_multiset():
    """3-RR, eps0 = 1, n = 4, eps = 0.6: the maximiser has mixed others {x2, x2, x0}."""
    M = KRR(1.0, k=3).matrix()
    f = search(M, 4, [0.6]).findings[0]
    assert not f.holds and not f.holds_constant
    a = f.argmax
    assert sorted(set(a.others)) != [a.others[0]]
    assert f.ratio > 1.1
    # the reported value is the ground truth of that pair
    assert f.max_value == pytest.approx(shuffled_divergence(M, a.x0, a.x1, a.others, 0.6),
                                        rel=1e-12)


def test_search_values_are_ground_truth_random_matrix():
    P = random_ldp_matrix(np.random.default_rng(3), 3, 4, 1.0)
    rep = search(P, 3, [0.0, 0.5])
    for f in rep.findings:
        for spec, val in ((f.argmax, f.max_value), (f.conjectured_pair, f.conjectured_value),
                          (f.constant_pair, f.constant_value)):
            assert val == pytest.approx(
                shuffled_divergence(P, spec.x0, spec.x1, spec.others, f.eps), rel=1e-12)
        assert f.max_value >= f.constant_value >= f.conjectured_value
        assert f.holds == (f.max_value <= f.conjectured_value * (1 + rep.rtol)
                           + noise_floor(f.eps, rep.n))


def test_table_and_summary_text():
    rep = search(KRR(1.0, k=3).matrix(), 3, [0.1, 0.9], label="3-RR")
    t = rep.table()
    assert "3-RR" in t and "eps=0.1" in t and "CEX" in t
    assert rep.summary().startswith("3-RR n=3: COUNTEREXAMPLE at 1/2")


@pytest.mark.parametrize("call,match", [
    (lambda: search(KRR(1.0, k=2).matrix(), 3, [0.1]), ">= 3 inputs"),
    (lambda: search(KRR(1.0, k=3).matrix(), 1, [0.1]), "n must be >= 2"),
    (lambda: search(KRR(1.0, k=3).matrix(), 3, [-0.1]), "eps must be >= 0"),
    (lambda: search(KRR(1.0, k=3).matrix(), 3, [0.1], rtol=0), "rtol must be > 0"),
    (lambda: search(KRR(1.0, k=40).matrix(), 6, [0.1]), "too large"),
])
def test_bad_inputs(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
    assert MAX_PAIRS > 0


def test_constant_pair_curves_match_ground_truth():
    from amp.oracles.conjecture import constant_pair_curves
    P = random_ldp_matrix(np.random.default_rng(5), 3, 4, 1.5)
    eps = [0.0, 0.3, 1.0]
    curves = constant_pair_curves(P, 0, 1, 4, eps)
    assert set(curves) == {0, 1, 2}
    for x2, vals in curves.items():
        np.testing.assert_allclose(vals, shuffled_divergence(P, 0, 1, x2, eps, n=4),
                                   rtol=1e-9, atol=1e-15)
    with pytest.raises(ParameterError, match="x0 and x1 must differ"):
        constant_pair_curves(P, 1, 1, 4, eps)
