"""Tests of amp.oracles.ground_truth: exact shuffled divergence by histogram enumeration."""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from amp.oracles.conjecture import random_ldp_matrix
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.exact import delta_enumerate
from amp.oracles.ground_truth import (MAX_HISTOGRAMS, ShuffledPair, datasets_to_pair,
                              epsilon_for_delta, histogram_law, hockey_stick,
                              merge_proportional_columns, n_histograms, shuffled_delta,
                              shuffled_divergence)
from amp.mechanisms import (BLH, KRR, OUE, RAPPOR, lower_law_from_matrix,
                            pair_law_from_matrix, validate_matrix)

EPS = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 1.7])


def brute_force(M: np.ndarray, X0, X1, eps: float) -> float:
    """Oracle: enumerate every output sequence, group by sorted tuple (multiset)."""
    P0: dict = collections.defaultdict(float)
    P1: dict = collections.defaultdict(float)
    for ys in itertools.product(range(M.shape[1]), repeat=len(X0)):
        key = tuple(sorted(ys))
        P0[key] += math.prod(M[x, y] for x, y in zip(X0, ys))
        P1[key] += math.prod(M[x, y] for x, y in zip(X1, ys))
    return math.fsum(max(P0[h] - math.exp(eps) * P1[h], 0.0) for h in P0)


def random_matrices():
    rng = np.random.default_rng(20240607)
    return [random_ldp_matrix(rng, k, m, e0)
            for (k, m, e0) in [(3, 3, 0.5), (3, 4, 1.0), (4, 3, 2.0), (4, 5, 1.5)]]


# --------------------------------------------------------------------- (a) Theorem 5
@pytest.mark.parametrize("k,eps0", [(3, 0.5), (3, 2.0), (4, 1.0), (5, 3.0)],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_theorem5_krr(k, eps0, n):
    M = KRR(eps0, k=k).matrix()
    got = shuffled_divergence(M, 0, 1, 2, EPS, n=n)
    want = np.array([delta_enumerate(lower_law_from_matrix(M, 0, 1, 2), n, e) for e in EPS])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("idx", range(4))
@pytest.mark.parametrize("n", [2, 4, 5])
def test_theorem5_random_matrices(idx, n):
    M = random_matrices()[idx]
    k = M.shape[0]
    for x0, x1, x2 in itertools.permutations(range(k), 3):
        got = shuffled_divergence(M, x0, x1, x2, EPS, n=n)
        law = lower_law_from_matrix(M, x0, x1, x2)
        want = np.array([delta_enumerate(law, n, e) for e in EPS])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("idx", range(2))
def test_theorem5_proof_allows_x2_equal_to_x0_or_x1(idx):
    """Appendix B never uses x2 != x0, x1: the formula also holds for x2 in {x0, x1}."""
    M = random_matrices()[idx]
    for x2 in (0, 1):
        got = shuffled_divergence(M, 0, 1, x2, EPS, n=4)
        want = [delta_enumerate(lower_law_from_matrix(M, 0, 1, x2), 4, e) for e in EPS]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


# --------------------------------------------------------------------- (b) Theorem 4
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_blanket_upper_bound_krr3_all_pairs(n, eps0):
    M = KRR(eps0, k=3).matrix()
    bound = {(a, b): np.array([delta_enumerate(pair_law_from_matrix(M, a, b), n, e)
                               for e in EPS])
             for a in range(3) for b in range(3) if a != b}
    for others in itertools.combinations_with_replacement(range(3), n - 1):
        pair = ShuffledPair.from_inputs(M, 0, 1, others)
        for (a, b), ub in bound.items():
            P = ShuffledPair.from_inputs(M, a, b, others)
            assert np.all(P.divergence(EPS) <= ub + 1e-12)
        assert np.all(pair.divergence(EPS) >= 0)


@pytest.mark.parametrize("idx", range(4))
def test_blanket_upper_bound_random_matrix_all_pairs(idx):
    M = random_matrices()[idx]
    k, n = M.shape[0], 3
    for x0, x1 in itertools.permutations(range(k), 2):
        ub = np.array([delta_enumerate(pair_law_from_matrix(M, x0, x1), n, e) for e in EPS])
        for others in itertools.combinations_with_replacement(range(k), n - 1):
            got = shuffled_divergence(M, x0, x1, others, EPS)
            assert np.all(got <= ub + 1e-12)


# --------------------------------------------------------------------- (c) hypothesis
@settings(max_examples=30, derandomize=True, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 4), m=st.integers(2, 4),
       eps0=st.floats(0.1, 3.0), n=st.integers(1, 4), eps=st.floats(0.0, 2.0),
       data=st.data())
def test_random_ldp_properties(seed, k, m, eps0, n, eps, data):
    rng = np.random.default_rng(seed)
    M = random_ldp_matrix(rng, k, m, eps0)
    x0, x1 = data.draw(st.permutations(range(k)))[:2]
    others = tuple(data.draw(st.lists(st.integers(0, k - 1), min_size=n - 1,
                                      max_size=n - 1)))
    X0, X1 = (x0,) + others, (x1,) + others
    pair = ShuffledPair.from_inputs(M, x0, x1, others)
    fwd = pair.divergence(eps)
    # exact against an independent oracle (all output sequences)
    assert fwd == pytest.approx(brute_force(M, X0, X1, eps), rel=1e-9, abs=1e-14)
    # upper bound of Theorem 4
    assert fwd <= delta_enumerate(pair_law_from_matrix(M, x0, x1), n, eps) + 1e-12
    # directions
    assert pair.divergence(eps, "reverse") == pytest.approx(
        shuffled_divergence(M, x1, x0, others, eps), rel=1e-12, abs=1e-15)
    assert pair.divergence(eps, "max") == max(fwd, pair.divergence(eps, "reverse"))
    # local DP implies the shuffled output is eps0-DP: D = 0 for eps >= eps0
    assert pair.divergence(eps0 + 1e-9) <= 1e-14


# --------------------------------------------------------------------- (d) n = 1
@pytest.mark.parametrize("idx", range(4))
def test_n1_is_hockey_stick_of_rows(idx):
    M = random_matrices()[idx]
    for x0, x1 in itertools.permutations(range(M.shape[0]), 2):
        got = shuffled_divergence(M, x0, x1, (), EPS)
        want = hockey_stick(M[x0], M[x1], EPS)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-16)
        direct = [sum(max(M[x0, y] - math.exp(e) * M[x1, y], 0) for y in range(M.shape[1]))
                  for e in EPS]
        np.testing.assert_allclose(got, direct, rtol=1e-12, atol=1e-16)


# --------------------------------------------------------------------- (e) monotone
@pytest.mark.parametrize("direction", ["forward", "reverse", "max"])
def test_monotone_in_eps_and_zero_beyond_max_eps(direction):
    M = random_matrices()[3]
    pair = ShuffledPair.from_inputs(M, 0, 2, (1, 1, 3))
    grid = np.linspace(0, 2.0, 201)
    d = pair.divergence(grid, direction)
    assert np.all(np.diff(d) <= 1e-15)
    assert 0 <= d[0] <= 1
    assert pair.divergence(pair.max_eps(direction) + 1e-9, direction) <= 1e-15
    assert pair.max_eps(direction) <= 1.5 + 1e-9            # eps0 of the matrix


def test_eps0_zero_at_eps0_krr():
    M = KRR(1.3, k=4).matrix()
    assert shuffled_divergence(M, 0, 1, (2, 3, 0), 1.3 + 1e-12, direction="max") < 1e-14


# --------------------------------------------------------------------- structure
def test_histogram_law_sums_and_means():
    M = random_matrices()[3]
    X = [0, 1, 1, 3, 2]
    counts, probs = histogram_law(M, X)
    assert probs.sum() == pytest.approx(1.0, abs=1e-13)
    assert np.all(counts.sum(axis=1) == len(X))
    assert counts.shape[0] <= n_histograms(len(X), M.shape[1])
    np.testing.assert_allclose(probs @ counts, M[X].sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("mech", [BLH(1.0, d=3), RAPPOR(1.0, d=3), OUE(2.0, d=3)],
                         ids=lambda m: m.name)
def test_merge_proportional_columns_is_exact(mech):
    M = validate_matrix(mech.matrix())
    merged = merge_proportional_columns(M)
    assert merged.shape[1] <= M.shape[1]
    np.testing.assert_allclose(merged.sum(axis=1), 1.0, atol=1e-12)
    a = shuffled_divergence(M, 0, 1, (2, 0), EPS, merge_columns=False)
    b = shuffled_divergence(M, 0, 1, (2, 0), EPS, merge_columns=True)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-15)


def test_blh_merges_to_distinct_patterns():
    M = validate_matrix(BLH(1.0, d=3).matrix())
    assert M.shape[1] == 16
    assert merge_proportional_columns(M).shape[1] == 7   # 8 patterns; the 2 constant merge


def test_shuffled_delta_matches_pair_and_position_free():
    M = KRR(1.0, k=3).matrix()
    a = shuffled_delta(M, [2, 0, 1], [2, 1, 1], EPS)      # differ in position 1
    b = shuffled_divergence(M, 0, 1, (2, 1), EPS)
    np.testing.assert_allclose(a, b, rtol=1e-14)
    assert datasets_to_pair([2, 0, 1], [2, 1, 1]) == (0, 1, (2, 1))


def test_epsilon_for_delta_bracket():
    M = KRR(2.0, k=4).matrix()
    X0, X1 = [0, 2, 2, 2, 3], [1, 2, 2, 2, 3]
    res = epsilon_for_delta(M, X0, X1, 1e-3, tol=1e-10)
    pair = ShuffledPair.from_inputs(M, 0, 1, (2, 2, 2, 3))
    assert isinstance(res, Bound) and res.quantity == "eps" and res.inputs == {"delta": 1e-3}
    assert res.eps == res.value == res.upper and res.n == 5
    assert res.upper - res.lower <= 1e-10
    assert pair.divergence(res.upper, "max") <= 1e-3
    assert pair.divergence(res.lower, "max") > 1e-3
    assert res.details["divergence_at_upper"] <= 1e-3
    assert res.details["direction"] == "max"
    easy = epsilon_for_delta(M, X0, X1, 0.9)
    assert easy.eps == 0.0 and easy.lower == 0.0
    # one direction, against a dense grid of the exact divergence (independent of the search)
    fwd = pair.epsilon_for_delta(1e-2, "forward", tol=1e-8)
    grid = np.linspace(0.0, pair.max_eps("forward") + 1e-9, 4001)
    first = grid[np.argmax(pair.divergence(grid, "forward") <= 1e-2)]
    assert fwd.lower <= first and fwd.upper <= first + 1e-8
    assert first - fwd.upper <= grid[1] - grid[0]


# --------------------------------------------------------------------- (f) bad input
@pytest.mark.parametrize("kwargs,match", [
    (dict(x0=0, x1=0, others=(2,)), "x0 and x1 must differ"),
    (dict(x0=0, x1=5, others=(2,)), "x1 must be an input index"),
    (dict(x0=-1, x1=1, others=(2,)), "x0 must be an input index"),
    (dict(x0=0.5, x1=1, others=(2,)), "x0 must be an integer"),
    (dict(x0=0, x1=1, others=(2, 7)), r"others\[1\]"),
    (dict(x0=0, x1=1, others=2), "n is required"),
    (dict(x0=0, x1=1, others=(2, 2), n=5), "n must equal"),
    (dict(x0=0, x1=1, others=2, n=0), "n must be >= 1"),
    (dict(x0=0, x1=1, others=None), "others must be a sequence"),
])
def test_bad_pair_inputs(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        ShuffledPair.from_inputs(KRR(1.0, k=3).matrix(), **kwargs)


@pytest.mark.parametrize("eps,match", [(-0.1, "eps must be >= 0"), (float("nan"), "finite"),
                                       ([[0.1]], "1-D"), ([], "empty"), ("a", "real")])
def test_bad_eps(eps, match):
    pair = ShuffledPair.from_inputs(KRR(1.0, k=3).matrix(), 0, 1, (2,))
    with pytest.raises(ParameterError, match=match):
        pair.divergence(eps)


def test_bad_matrix_direction_delta_and_size():
    with pytest.raises(ParameterError, match="rows must sum to 1"):
        shuffled_divergence([[0.5, 0.6], [0.5, 0.5]], 0, 1, (), 0.1)
    with pytest.raises(ParameterError, match="not eps0-LDP"):
        shuffled_divergence([[1.0, 0.0], [0.5, 0.5]], 0, 1, (), 0.1)
    pair = ShuffledPair.from_inputs(KRR(1.0, k=3).matrix(), 0, 1, (2,))
    with pytest.raises(ParameterError, match="direction"):
        pair.divergence(0.1, "both")
    with pytest.raises(ParameterError, match="delta must be in"):
        pair.epsilon_for_delta(1.5)
    with pytest.raises(ParameterError, match="direction"):
        pair.epsilon_for_delta(0.1, "both")
    with pytest.raises(ParameterError, match="too large"):
        shuffled_divergence(KRR(1.0, k=30).matrix(), 0, 1, 2, 0.1, n=12)
    assert n_histograms(12, 30) > MAX_HISTOGRAMS
    with pytest.raises(ParameterError, match="exactly one position"):
        shuffled_delta(KRR(1.0, k=3).matrix(), [0, 1], [1, 0], 0.1)
    with pytest.raises(ParameterError, match="equal length"):
        shuffled_delta(KRR(1.0, k=3).matrix(), [0, 1], [1], 0.1)
    with pytest.raises(ParameterError, match="probability vector"):
        hockey_stick([0.5, 0.6], [0.5, 0.5], 0.0)


def test_building_blocks_are_public():
    """amp.oracles.conjecture uses these; none of them is private any more."""
    import amp.oracles.ground_truth as gt
    for name in ("as_matrix", "eps_array", "hs", "Packing", "check_cost", "histogram_dp"):
        assert name in gt.__all__ and getattr(gt, name).__doc__
