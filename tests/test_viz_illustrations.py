"""Uncertified computations drawn in the book (:mod:`ampbook.illustrations`), each against an
oracle: exact enumeration, exact shuffled divergences, the clone baseline."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from amp import KRR
from amp.baselines import clone_delta
from amp.baselines.stronger_clone import (StrongerCloneWarning, stronger_clone_claimed_delta,
                                          stronger_clone_counterexample)
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms import matrix_eps0
from amp.oracles.ground_truth import ShuffledPair, shuffled_divergence
from ampbook import illustrations as il


@pytest.mark.parametrize("rounding", ["up", "mean"])
@pytest.mark.parametrize("step", [0.5, 0.1, 0.02])
def test_algorithm4_is_an_upper_bound(rounding, step):
    law = KRR(1.5, k=5).gparv()
    n, eps = 12, 0.4
    exact = delta_enumerate(law, n, eps)
    value = il.algorithm4_delta(law, n, eps, step, rounding)
    assert value >= exact * (1 - 1e-9)
    assert value - exact <= step + 1e-12          # Section 5.2: error <= l after dividing by n


def test_algorithm4_mean_rule_beats_round_up_and_bad_input():
    law = KRR(2.0, k=10).gparv()
    exact = delta_enumerate(law, 20, 0.5)
    up = il.algorithm4_delta(law, 20, 0.5, 0.01, "up")
    mean = il.algorithm4_delta(law, 20, 0.5, 0.01, "mean")
    assert exact <= mean < up
    with pytest.raises(ParameterError, match="rounding"):
        il.algorithm4_delta(law, 20, 0.5, 0.01, "down")
    with pytest.raises(ParameterError, match="grid_step"):
        il.algorithm4_delta(law, 20, 0.5, 0.0)


def test_simulate_shuffle_is_seeded_and_consistent():
    R = KRR(1.0, k=3).matrix()
    data = [0, 2, 2, 1, 2]
    a = il.simulate_shuffle(R, data, 20_000, seed=7)
    b = il.simulate_shuffle(R, data, 20_000, seed=7)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (20_000, 3) and np.all(a.sum(axis=1) == len(data))
    expected = R[data].sum(axis=0)
    np.testing.assert_allclose(a.mean(axis=0), expected, atol=0.05)


def test_empirical_divergence_tracks_exact_divergence():
    R = KRR(2.0, k=3).matrix()
    X0, X1 = [0, 2, 2, 2], [1, 2, 2, 2]
    c0 = il.simulate_shuffle(R, X0, 100_000, seed=1)
    c1 = il.simulate_shuffle(R, X1, 100_000, seed=2)
    eps = np.array([0.0, 0.5, 1.0])
    est = il.empirical_divergence(c0, c1, eps)
    exact = ShuffledPair.from_inputs(R, 0, 1, X0[1:]).divergence(eps)
    assert est.shape == (3,)
    np.testing.assert_allclose(est, exact, atol=0.01)
    assert il.empirical_divergence(c0, c0, 0.0)[0] == 0.0


@pytest.mark.parametrize("n,eps0", [(1, 1.0), (5, 0.5), (30, 2.0)])
def test_clone_pair_table_matches_clone_delta(n, eps0):
    keys, p0, p1 = il.clone_pair_table(n, eps0)
    assert p0.sum() == pytest.approx(1, abs=1e-12) and p1.sum() == pytest.approx(1, abs=1e-12)
    assert all(1 <= u + v <= n for u, v in keys)      # C + 1 outputs carry a count
    for eps in (0.0, 0.2, 0.8 * eps0):
        hs = float(np.maximum(p0 - math.exp(eps) * p1, 0).sum())
        r = clone_delta(eps0, n, eps)
        assert r.lower - 1e-12 <= hs <= r.upper + 1e-12


def test_clone_pair_table_bad_n():
    with pytest.raises(ParameterError):
        il.clone_pair_table(0, 1.0)


def test_stronger_clone_counterexample():
    """The Chapter 3 counterexample (drawn next to :func:`ampbook.plots.plot_delta_comparison`):
    an eps0-LDP randomizer whose true shuffled divergence exceeds the stronger clone's claim."""
    M, p, parts = stronger_clone_counterexample(1.0)
    E = math.e
    assert np.all(M > 0) and np.allclose(M.sum(axis=1), 1, atol=1e-15)
    assert matrix_eps0(M) == pytest.approx(1.0, abs=1e-12)
    rebuilt = p * parts["Q0"] + p * parts["Q1"] + (1 - 2 * p) * parts["Q_2"]
    assert np.allclose(rebuilt, M[2]) and 0 < p <= 1 / (E + 1)
    true = shuffled_divergence(M, 0, 1, 2, 0.6, n=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StrongerCloneWarning)
        claim = stronger_clone_claimed_delta(1.0, 10, 0.6, p=p)
    assert true > 30 * claim.upper
    with pytest.raises(ParameterError, match="p must be"):
        stronger_clone_counterexample(1.0, 0.5)
