"""Figure data of chapter 11 (amp.viz.rounds) and the many-round baselines
(amp.baselines.composition): amp's composed profile is never above either baseline, and the
baselines agree with dp-accounting-free references where one exists."""

from __future__ import annotations

import math

import pytest

import amp
from amp.baselines.composition import clone_composed_epsilon, per_round_composed_epsilon
from amp.rounds import optimal_homogeneous_epsilon
from amp.viz.rounds import rounds_curves


def test_baselines_are_above_amp_and_ordered_in_T():
    mech, n, d = amp.KRR(2.0, k=10), 10_000, 1e-6
    c = rounds_curves(mech, n, d, (1, 10, 100))
    assert all(lo <= up for lo, up in zip(c.lower, c.upper))
    assert all(u < cl for u, cl in zip(c.upper, c.clone))
    assert all(u < b for u, b in zip(c.upper[1:], c.per_round[1:]))
    assert list(c.clone) == sorted(c.clone) and list(c.per_round) == sorted(c.per_round)


def test_per_round_baseline_is_the_optimal_composition_of_a_certified_eps():
    mech, n, d = amp.KRR(2.0, k=10), 10_000, 1e-6
    T = 10
    ref = min(optimal_homogeneous_epsilon(amp.epsilon(mech, n, f * d / T).upper, f * d / T,
                                          T, d) for f in (0.02, 0.1, 0.3, 0.6))
    # the same certified per-round eps up to the search accuracy (1e-4), composed the same way
    assert per_round_composed_epsilon(mech, n, d, T) == pytest.approx(ref, rel=2e-4)


def test_composed_clone_one_round_is_above_the_clone_eps():
    """One round of the composed clone profile: a certified eps at least the clone's own."""
    e1 = clone_composed_epsilon(amp.KRR(2.0, k=10), 10_000, 1e-6, [1])[0]
    direct = __import__("amp.baselines", fromlist=["clone_epsilon"]).clone_epsilon(
        2.0, 10_000, 1e-6)
    assert direct.lower <= e1 * (1 + 1e-9) and math.isfinite(e1)
    assert e1 <= direct.upper * 1.02          # the PLD grid costs at most a little


def test_sampled_curves_have_no_clone_baseline():
    c = rounds_curves(amp.KRR(2.0, k=10), 10_000, 1e-6, (1, 10), sampling=0.1, baselines=False)
    assert c.per_round is None and c.clone is None and c.sampling == 0.1
