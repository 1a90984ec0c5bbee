"""amp.to_pld: one shuffled round as a dp-accounting PLD with every error term inside it.

Checked against amp's own certified brackets (one round: Theorem 4; T rounds: amp.rounds) and
composed with a dp-accounting Gaussian PLD. Small n so the tests stay fast.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("dp_accounting")

import amp
from amp.rounds import adapter as A
from amp.rounds import export as E
from amp.rounds.pmf import TRUNCATION
from amp import rounds as R
from amp.core.errors import ParameterError
from helpers import assert_lower, assert_upper

DELTA = 1e-6


@pytest.fixture(scope="module")
def krr4_1000():
    m = amp.KRR(4.0, k=10)
    return m, amp.to_pld(m, 1_000), amp.to_pld(m, 1_000, pessimistic=False)


@pytest.mark.parametrize("eps0,n", [(4.0, 1_000), (4.0, 10_000), (1.0, 1_000)],
                         ids=["e4-n1e3", "e4-n1e4", "e1-n1e3"])
def test_one_round_inside_and_near_theorem_4(eps0, n):
    m = amp.KRR(eps0, k=10)
    r = amp.epsilon(m, n, DELTA)
    up = amp.to_pld(m, n).get_epsilon_for_delta(DELTA)
    lo = amp.to_pld(m, n, pessimistic=False).get_epsilon_for_delta(DELTA)
    assert_upper(up, r.lower)                    # never below the certified lower end
    assert up <= r.upper * (1 + 3e-3)            # connect-the-dots: chords just above the curve
    assert lo <= r.upper


def test_the_issue_numbers():
    """Issue 26: a hand-wrapped internal PLD gave 0.38090, amp.epsilon 0.38049. Both are valid
    upper bounds (the exact value is in [0.380487, 0.380495]); the export's is the
    connect-the-dots one, and more grid points bring it down towards Theorem 4's."""
    m = amp.KRR(4.0, k=10)
    r = amp.epsilon(m, 10_000, DELTA)
    e120 = amp.to_pld(m, 10_000).get_epsilon_for_delta(DELTA)
    e480 = amp.to_pld(m, 10_000, points=480).get_epsilon_for_delta(DELTA)
    assert round(e120, 4) == 0.3809 and r.upper < e480 < e120


def test_curve_dominates_theorem_4(krr4_1000):
    m, up, lo = krr4_1000
    eps = [0.0, 0.5, 1.0, 2.0, 3.0]
    d_up = up.get_delta_for_epsilon(eps)
    d_lo = lo.get_delta_for_epsilon(eps)
    for e, du, dl in zip(eps, d_up, d_lo):
        b = amp.delta(m, 1_000, e)
        assert_upper(du, b.upper)                 # >= the certified upper end itself
        assert dl <= b.upper


SLOW = pytest.mark.slow
TABLE = [pytest.param(1.0, 1_000, id="e1-n1e3"), pytest.param(4.0, 1_000, id="e4-n1e3"),
         pytest.param(2.0, 10_000, id="e2-n1e4"),
         pytest.param(2.0, 1_000, id="e2-n1e3", marks=SLOW),
         pytest.param(1.0, 10_000, id="e1-n1e4", marks=SLOW),
         pytest.param(4.0, 10_000, id="e4-n1e4", marks=SLOW)]


@pytest.mark.parametrize("eps0,n", TABLE)
def test_self_composed_100_times_vs_amp_rounds(eps0, n, monkeypatch):
    m = amp.KRR(eps0, k=10)
    r = amp.epsilon(m, n, DELTA, rounds=100)
    up = amp.to_pld(m, n).self_compose(100).get_epsilon_for_delta(DELTA)
    lo = amp.to_pld(m, n, pessimistic=False).self_compose(100).get_epsilon_for_delta(DELTA)
    width = r.upper - r.lower
    assert_upper(up, r.lower)
    assert lo <= r.upper
    assert lo >= r.lower - 0.05 * width          # the same pair amp's lower end uses
    # The export certifies the uniform grid's points; amp's own composition at those points:
    # the export's allowance costs less than one of its bracket widths.
    monkeypatch.setattr(R.ComposableProfile, "knots", lambda self, *a, **k: None)
    ru = amp.epsilon(m, n, DELTA, rounds=100)
    assert ru.upper >= r.upper                   # amp's chosen points: never looser
    assert up <= ru.upper + (ru.upper - ru.lower)


def test_allowance_is_in_the_composition(krr4_1000):
    """k copies carry 1 - (1 - a)^k at infinity: the composed curve is raised by at least
    k a (1 - k a / 2)(1 - delta) over the same composition without the allowance, which
    covers amp's own pad for the self-composition."""
    m, up, _ = krr4_1000
    a, k = E.float_allowance(), 100
    pmf = A.pmf_of(up)
    bare = A.wrap(A.dense_pmf(A.step(pmf), A.lower_index(pmf), A.probs(pmf) / (1 - a),
                              (A.infinity_mass(pmf) - a) / (1 - a), True))
    with_a, without = up.self_compose(k), bare.self_compose(k)
    for e in (5.0, 10.0, 15.0):
        d = without.get_delta_for_epsilon(e)
        assert with_a.get_delta_for_epsilon(e) - d >= 0.99 * k * a * (1 - k * a / 2) * (1 - d)
    comp = A.pmf_of(without)
    pad = R.fft_pad(len(A.probs(comp)), k, float(np.linalg.norm(A.probs(pmf))))
    assert len(A.probs(comp)) <= E.MAX_LENGTH and k * a >= pad + 2 * TRUNCATION


def test_composed_with_a_gaussian():
    m = amp.KRR(4.0, k=10)
    step = 1e-3
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld
    shuffled = amp.to_pld(m, 1_000, value_discretization_interval=step).self_compose(10)
    gauss = pld.from_gaussian_mechanism(10.0, value_discretization_interval=step,
                                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
    both = shuffled.compose(gauss)
    e_s, e_g = (p.get_epsilon_for_delta(DELTA) for p in (shuffled, gauss))
    e = both.get_epsilon_for_delta(DELTA)
    assert math.isfinite(e) and e > max(e_s, e_g)
    assert_upper(e, amp.epsilon(m, 1_000, DELTA, rounds=10).lower)


def test_sampling_matches_amp_rounds():
    m = amp.KRR(2.0, k=10)
    r = amp.epsilon(m, 1_000, DELTA, rounds=10, sampling=0.5)
    up = amp.to_pld(m, 1_000, sampling=0.5).self_compose(10).get_epsilon_for_delta(DELTA)
    assert r.lower <= up <= r.upper + (r.upper - r.lower)


def test_discretization_and_direction():
    m = amp.KRR(2.0, k=10)
    up = amp.to_pld(m, 1_000, value_discretization_interval=1e-3)
    lo = amp.to_pld(m, 1_000, pessimistic=False, value_discretization_interval=1e-3)
    assert A.step(A.pmf_of(up)) == 1e-3 and A.is_pessimistic(A.pmf_of(up))
    assert not A.is_pessimistic(A.pmf_of(lo))
    with pytest.raises(ValueError, match="Estimation types"):   # dp-accounting refuses to mix
        up.compose(lo)


@pytest.mark.parametrize("kw,msg", [({"pessimistic": "yes"}, "pessimistic"),
                                    ({"value_discretization_interval": -1.0},
                                     "value_discretization_interval"),
                                    ({"max_length": 1}, "max_length"),
                                    ({"sampling": 0.0}, "sampling"),
                                    ({"points": 2}, "points")],
                         ids=["pessimistic", "step", "max_length", "sampling", "points"])
def test_bad_input(kw, msg):
    with pytest.raises(ParameterError, match=msg):
        amp.to_pld(amp.KRR(2.0, k=10), 1_000, **kw)


@pytest.mark.parametrize("mech", [amp.OUE(2.0), amp.MatrixMechanism(np.array(
    [[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.15, 0.25, 0.6]]))], ids=["OUE", "matrix"])
def test_other_mechanisms_one_round(mech):
    r = amp.epsilon(mech, 2_000, DELTA)
    up = amp.to_pld(mech, 2_000).get_epsilon_for_delta(DELTA)
    lo = amp.to_pld(mech, 2_000, pessimistic=False).get_epsilon_for_delta(DELTA)
    assert r.lower <= up <= r.upper * (1 + 3e-3)
    assert lo <= r.upper


# ------------------------------------------------------------------ issue 34, seam 5
def test_default_step_composes_with_dp_accountings_default():
    """The export's default step is dp-accounting's own (1e-4): the issue's composition with a
    subsampled Gaussian built with its defaults works as it comes (replace-one, amp's
    neighbouring relation) and gives an eps above each part's."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld
    m = amp.KRR(4.0, k=10)
    up = amp.to_pld(m, 1_000)
    assert A.step(A.pmf_of(up)) == E.DEFAULT_STEP == 1e-4
    g = pld.from_gaussian_mechanism(1.0, sampling_prob=0.01,
                                    neighboring_relation=NeighboringRelation.REPLACE_ONE)
    both = up.compose(g)                          # was: Discretization intervals are different
    e = both.get_epsilon_for_delta(DELTA)
    assert math.isfinite(e) and e > max(up.get_epsilon_for_delta(DELTA),
                                        g.get_epsilon_for_delta(DELTA))


def _gaussian_hockey_stick(t: np.ndarray, mu: float) -> np.ndarray:
    """Exact ``D_{e^t}(N(0, 1) || N(mu, 1))`` for every real ``t`` (closed form)."""
    from scipy.special import log_ndtr, ndtr
    return ndtr(mu / 2 - t / mu) - np.exp(t + log_ndtr(-mu / 2 - t / mu))


def test_composed_eps_is_above_an_exact_composition():
    """Certified after composing: the export (default step) composed with dp-accounting's
    Gaussian is >= the exact eps of one explicit shuffled pair of datasets composed with the
    exact Gaussian, a lower bound on the true composed eps. The pair (x0 = 0, x1 = 1, the other
    19 users at 2, 3-RR, eps0 = 2) is enumerated exactly (:mod:`amp.oracles.ground_truth`);
    a product's hockey-stick divergence is ``sum_h p0(h) D_G(eps - loss(h))``, in closed form
    for the Gaussian (replace-one: dp-accounting shifts the mean by 2 sensitivities)."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy.optimize import brentq
    from amp.oracles.ground_truth import ShuffledPair
    eps0, k, n, sigma = 2.0, 3, 20, 2.0
    e = math.exp(eps0)
    P = np.full((k, k), 1 / (e + k - 1))
    np.fill_diagonal(P, e / (e + k - 1))
    pair = ShuffledPair.from_inputs(P, 0, 1, 2, n=n)
    mu = 2.0 / sigma

    def exact_delta(eps: float) -> float:
        return max(float(np.dot(p, _gaussian_hockey_stick(eps - np.log(p / q), mu)))
                   for p, q in ((pair.p0, pair.p1), (pair.p1, pair.p0)))

    g = pld.from_gaussian_mechanism(sigma, neighboring_relation=NeighboringRelation.REPLACE_ONE)
    assert g.get_epsilon_for_delta(DELTA) >= brentq(
        lambda x: float(_gaussian_hockey_stick(np.array(x), mu)) - DELTA, 0.0, 20.0)
    exact = brentq(lambda x: exact_delta(x) - DELTA, 0.0, 20.0, xtol=1e-10)
    composed = amp.to_pld(amp.KRR(eps0, k=k), n).compose(g).get_epsilon_for_delta(DELTA)
    assert_upper(composed, exact)
    assert composed <= exact + 0.25           # and not vacuous (the pair is Theorem 5's)


def test_a_pmf_longer_than_max_length_is_refused():
    """The allowance covers pmfs of at most ``max_length`` points: a round longer than that
    (a fine step over a wide loss range) is refused, naming both ways out."""
    m = amp.KRR(8.0, k=10)
    with pytest.raises(ParameterError, match="max_length=1000.*coarser"):
        amp.to_pld(m, 100, max_length=1000)
    assert A.step(A.pmf_of(amp.to_pld(m, 100, value_discretization_interval=0.05,
                                      max_length=1000))) == 0.05
