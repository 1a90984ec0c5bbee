"""Tests of amp.oracles.appendix_a: the blanket counts N0, N1 of k-RR (Appendix A)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from amp.oracles.appendix_a import (MAX_N, CountLaw, appendix_a_report, b1_revealed_delta,
                            blanket_parameters, conditional_delta, dependent_law,
                            enumerate_blanket_counts, exact_delta, independent_law,
                            paper_literal_law, simulate_blanket_counts, total_variation)
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms import KRR

CASES = [(3, 0.5, 1), (3, 1.0, 2), (3, 2.0, 5), (3, 1.0, 8), (4, 1.0, 4), (4, 3.0, 8)]


def sequence_oracle(k: int, eps0: float, n: int) -> np.ndarray:
    """Joint pmf of (N, N0, N1) by enumerating each other user's outcome (k + 1 values)."""
    p, gam = blanket_parameters(k, eps0)
    J = np.zeros((n, n + 1, n))
    # outcome -1: not in the blanket; outcome y in [k]: blanket output y
    probs = {-1: 1 - gam, **{y: p for y in range(k)}}
    for seq in itertools.product(range(-1, k), repeat=n - 1):
        w = math.prod(probs[s] for s in seq)
        N = sum(s >= 0 for s in seq)
        J[N, 1 + seq.count(0), seq.count(1)] += w
    return J


@pytest.mark.parametrize("k,eps0,n", CASES, ids=str)
def test_dependent_law_is_exact(k, eps0, n):
    law = dependent_law(k, eps0, n)
    enum = enumerate_blanket_counts(k, eps0, n)
    np.testing.assert_allclose(law.joint, enum.joint, rtol=0, atol=1e-15)
    assert law.pmf.sum() == pytest.approx(1.0, abs=1e-13)


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (4, 2.0, 5), (2, 1.0, 6)], ids=str)
def test_dependent_law_matches_per_user_enumeration(k, eps0, n):
    np.testing.assert_allclose(dependent_law(k, eps0, n).joint, sequence_oracle(k, eps0, n),
                               rtol=0, atol=1e-15)


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (4, 1.0, 8)], ids=str)
def test_literal_statement_is_wrong(k, eps0, n):
    lit = paper_literal_law(k, eps0, n)
    exact = enumerate_blanket_counts(k, eps0, n)
    assert lit.pmf.sum() == pytest.approx(1.0, abs=1e-13)
    # undefined Bin(-1, .) exactly when all N blanket draws hit x0: E[(1/k)^N]
    _, gam = blanket_parameters(k, eps0)
    assert lit.ill_defined_mass == pytest.approx((1 - gam + gam / k) ** (n - 1), rel=1e-12)
    assert total_variation(lit, exact) > 0.05
    # the literal N1 has one binomial trial fewer, so its mean is too small
    n1 = np.arange(exact.pmf.shape[1])
    assert (lit.pmf.sum(axis=0) @ n1) < (exact.pmf.sum(axis=0) @ n1) - 1e-3


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (4, 1.0, 8), (10, 4.0, 30)], ids=str)
def test_independent_law_has_right_marginals_wrong_joint(k, eps0, n):
    ind = independent_law(k, eps0, n)
    dep = dependent_law(k, eps0, n)
    np.testing.assert_allclose(ind.pmf.sum(axis=0), dep.pmf.sum(axis=0), atol=1e-14)
    np.testing.assert_allclose(ind.pmf.sum(axis=1), dep.pmf.sum(axis=1), atol=1e-14)
    n0 = np.arange(dep.pmf.shape[0])[:, None]
    n1 = np.arange(dep.pmf.shape[1])[None, :]

    def cov(P):
        return float((P * n0 * n1).sum() - (P * n0).sum() * (P * n1).sum())

    assert cov(ind.pmf) == pytest.approx(0.0, abs=1e-12)
    p, _ = blanket_parameters(k, eps0)
    # multinomial counts: Cov(B0, B1) = -(n - 1) p^2
    assert cov(dep.pmf) == pytest.approx(-(n - 1) * p * p, rel=1e-10)
    assert total_variation(ind, dep) > 1e-3


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (4, 2.0, 8)], ids=str)
def test_simulation_agrees_with_dependent_law(k, eps0, n):
    S = 100_000
    sim = simulate_blanket_counts(k, eps0, n, S, seed=12345)
    dep = dependent_law(k, eps0, n)
    sd = np.sqrt(dep.joint * (1 - dep.joint) / S)
    # every cell within 5 standard errors (plus one count for empty cells)
    assert np.all(np.abs(sim.joint - dep.joint) <= 5 * sd + 1.0 / S)
    noise = 0.5 * math.sqrt(2 / math.pi) * np.sqrt(dep.pmf * (1 - dep.pmf) / S).sum()
    assert total_variation(sim, dep) < 2 * noise
    assert total_variation(sim, independent_law(k, eps0, n)) > 5 * noise
    assert total_variation(sim, paper_literal_law(k, eps0, n)) > 20 * noise
    again = simulate_blanket_counts(k, eps0, n, S, seed=12345)
    np.testing.assert_array_equal(sim.joint, again.joint)


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 2), (3, 1.0, 6), (4, 2.0, 8), (10, 4.0, 40)],
                         ids=str)
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 0.9])
def test_equation_1_reproduces_theorem4(k, eps0, n, eps):
    dep = dependent_law(k, eps0, n)
    ref = delta_enumerate(KRR(eps0, k=k).gparv(), n, eps)
    assert exact_delta(dep, k, eps0, eps) == pytest.approx(ref, rel=1e-10, abs=1e-15)
    # revealing b1 can only lose: (1 - gamma) D(A0||A1) >= D(P0^B||P1^B), equality at eps=0
    rev = b1_revealed_delta(dep, k, eps0, eps)
    assert rev >= ref - 1e-14
    if eps == 0.0:
        assert rev == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (4, 2.0, 8), (10, 4.0, 40)], ids=str)
def test_independent_law_gives_different_divergence(k, eps0, n):
    dep, ind = dependent_law(k, eps0, n), independent_law(k, eps0, n)
    for eps in (0.1, 0.5):
        a = conditional_delta(dep, eps)
        b = conditional_delta(ind, eps)
        assert abs(a - b) > 1e-5 * a
    with pytest.raises(ParameterError, match="does not define N"):
        exact_delta(ind, k, eps0, 0.1)


def test_enumeration_equals_conditional_divergence_from_first_principles():
    """D(A0||A1) with the ratio N0/N1 equals a direct computation over (N, Y) histograms."""
    k, eps0, n, eps = 3, 1.0, 4, 0.3
    p, gam = blanket_parameters(k, eps0)
    from scipy.stats import binom
    total = 0.0
    for N in range(n):
        w = binom.pmf(N, n - 1, gam)
        # multisets Y = {first output} + N uniform draws; A_a(Y) = P[{x_a} + U_N = Y]
        P0: dict = {}
        P1: dict = {}
        for seq in itertools.product(range(k), repeat=N):
            for a, D in ((0, P0), (1, P1)):
                key = tuple(sorted((a,) + seq))
                D[key] = D.get(key, 0.0) + k ** (-N)
        total += w * sum(max(P0[h] - math.exp(eps) * P1.get(h, 0.0), 0.0) for h in P0)
    assert conditional_delta(dependent_law(k, eps0, n), eps) == pytest.approx(total,
                                                                               rel=1e-12)


def test_report_runs_and_orders_tv():
    r = appendix_a_report(3, 1.0, 6, 0.3, n_samples=50_000, seed=3)
    tv = list(r.tv.values())
    assert tv[0] < 2 * r.tv_noise < tv[2] < tv[1]
    assert r.exact_from_law["dependent (correct)"] == pytest.approx(r.reference, rel=1e-10)
    assert "Appendix A" in r.summary() and "independent" in r.summary()


@pytest.mark.parametrize("call,match", [
    (lambda: dependent_law(1, 1.0, 5), "k must be >= 2"),
    (lambda: dependent_law(3, 0.0, 5), "eps0 must be > 0"),
    (lambda: dependent_law(3, 1.0, 0), "n must be >= 1"),
    (lambda: dependent_law(3, 1.0, MAX_N + 1), "n must be <="),
    (lambda: simulate_blanket_counts(3, 1.0, 5, 0), "n_samples must be >= 1"),
    (lambda: conditional_delta(dependent_law(3, 1.0, 4), -1.0), "eps must be >= 0"),
    (lambda: total_variation(np.ones(3), np.ones((3, 1))), "same dimension"),
    (lambda: conditional_delta(CountLaw("bad", np.array([[1.0]])), 0.1), "N0 = 0"),
])
def test_bad_inputs(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
