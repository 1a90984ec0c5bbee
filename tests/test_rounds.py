"""Many rounds and client subsampling (amp.rounds, amp.mechanisms.subsampled) against exact
composed divergences of tiny shuffled datasets (products of exact histogram laws)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import amp
from amp import rounds as R
from amp.rounds import adapter as A
from amp.rounds import lower as L
from amp.rounds import pmf as PM
from amp.rounds.profile import UPPER_CELLS
from amp.cli import main
from amp.mechanisms.subsampled import Subsampled, subsample_law
from amp.mechanisms.base import lower_law_from_matrix, pair_law_from_matrix
from amp.oracles.ground_truth import ShuffledPair, hockey_stick
from helpers import assert_lower, assert_upper, random_ldp_matrix

pytest.importorskip("dp_accounting")

EPS = [0.0, 0.4, 1.0]


def _matrix3() -> np.ndarray:
    return random_ldp_matrix(np.random.default_rng(7), 3, 3, 1.5)


def _void(M: np.ndarray, q: float) -> np.ndarray:
    return np.hstack([q * M, np.full((M.shape[0], 1), 1 - q)])


def _product(p: np.ndarray, T: int) -> np.ndarray:
    out = p
    for _ in range(T - 1):
        out = np.outer(out, p).ravel()
    return out


def _exact_composed(M: np.ndarray, x0: int, x1: int, others, T: int, eps) -> np.ndarray:
    """Exact D_{e^eps} of the T-fold product of one pair's shuffled laws, both directions."""
    pair = ShuffledPair.from_inputs(M, x0, x1, list(others))
    a, b = _product(pair.p0, T), _product(pair.p1, T)
    a, b = a / a.sum(), b / b.sum()
    return np.maximum(hockey_stick(a, b, eps), hockey_stick(b, a, eps))


def _pairs(M: np.ndarray, n: int):
    """Several neighbouring pairs: Theorem 5 pairs and mixed ones."""
    d = M.shape[0]
    out = []
    for x0, x1 in itertools.permutations(range(d), 2):
        for x2 in range(d):
            out.append((x0, x1, [x2] * (n - 1)))
    out.append((0, 1, [(i % d) for i in range(n - 1)]))
    out.append((1, 2, [2] * (n - 2) + [0]))
    return out


CASES = [
    pytest.param(amp.KRR(1.5, k=3), 4, 1.0, id="3RR-n4"),
    pytest.param(amp.MatrixMechanism(_matrix3()), 4, 1.0, id="matrix3-n4"),
    pytest.param(amp.KRR(1.5, k=3), 4, 0.5, id="3RR-n4-q0.5"),
    pytest.param(amp.MatrixMechanism(_matrix3()), 3, 0.4, id="matrix3-n3-q0.4"),
]


@pytest.mark.parametrize("T", [2, 3])
@pytest.mark.parametrize("mech,n,q", CASES)
def test_composed_delta_brackets_every_pair(mech, n, q, T):
    M = mech.matrix()
    Mq = M if q == 1 else _void(M, q)
    bounds = [amp.delta(mech, n, e, rounds=T, sampling=q) for e in EPS]
    ups = np.array([b.upper for b in bounds])
    los = np.array([b.lower for b in bounds])
    worst = np.zeros(len(EPS))
    for x0, x1, others in _pairs(M, n):
        ex = _exact_composed(Mq, x0, x1, others, T, EPS)
        worst = np.maximum(worst, ex)
        for u, t in zip(ups, ex):
            assert_upper(u, t, atol=1e-13)
    for lo, t in zip(los, worst):          # lower <= the largest exact composed delta
        assert_lower(lo, t, atol=1e-13)
    assert np.all(los <= ups)


@pytest.mark.parametrize("T", [2, 3])
def test_lower_is_below_its_own_pair(T):
    """k-RR: amp's lower uses the Theorem 5 pair (x0, x1, x2...); compare with that pair."""
    m, n = amp.KRR(1.2, k=3), 5
    M = m.matrix()
    ex = _exact_composed(M, 0, 1, [2] * (n - 1), T, EPS)
    pair = ShuffledPair.from_inputs(M, 0, 1, [2] * (n - 1))
    fwd = hockey_stick(_product(pair.p0, T), _product(pair.p1, T), EPS)
    for e, t, f in zip(EPS, ex, fwd):
        b = amp.delta(m, n, e, rounds=T)
        assert_lower(b.lower, f, atol=1e-13)
        assert_upper(b.upper, t, atol=1e-13)
        assert b.lower >= 0.9 * f - 1e-12          # and it is not vacuous


@pytest.mark.parametrize("mech,n,q", CASES[:3])
def test_composed_epsilon_is_valid(mech, n, q):
    """At amp's upper eps every pair's exact composed delta is <= the target; at its lower
    eps the Theorem 5 pair's is >= the target."""
    T, target = 2, 0.05
    r = amp.epsilon(mech, n, target, rounds=T, sampling=q)
    assert r.quantity == "eps" and r.lower <= r.value == r.upper
    M = mech.matrix()
    Mq = M if q == 1 else _void(M, q)
    worst_at_lo = 0.0
    for x0, x1, others in _pairs(M, n):
        assert _exact_composed(Mq, x0, x1, others, T, [r.upper])[0] <= target * (1 + 1e-9)
        worst_at_lo = max(worst_at_lo,
                          _exact_composed(Mq, x0, x1, others, T, [r.lower])[0])
    assert worst_at_lo >= target * (1 - 1e-9)


def test_one_round_agrees_with_epsilon():
    m, n, d = amp.KRR(2.0, k=10), 2_000, 1e-6
    one = amp.epsilon(m, n, d)
    comp = amp.compose([(m, n)], delta=d)
    assert comp.lower <= one.upper and comp.upper >= one.lower
    assert comp.upper <= one.upper * 1.002             # connect-the-dots costs little
    assert comp.lower >= amp.epsilon(m, n, d, bound="lower").lower * 0.998
    assert amp.epsilon(m, n, d, rounds=1) == one       # rounds=1 keeps the old path


def test_many_rounds_monotone_and_tight():
    m, n, d = amp.KRR(2.0, k=10), 2_000, 1e-6
    prev = 0.0
    for T in (1, 30):
        r = amp.epsilon(m, n, d, rounds=T) if T > 1 else amp.compose([(m, n)], delta=d)
        assert r.upper > prev and r.rel_width < 0.02
        prev = r.upper
    low = amp.epsilon(m, n, d, rounds=30, bound="lower")
    # the lower side brackets Theorem 5's pair composed (issue #26): the same lower end, an
    # upper end never above the "upper" one (it was that bracket relabelled)
    assert low.value == low.lower == r.lower and low.upper <= r.upper


def test_heterogeneous_compose_between_homogeneous():
    a, b = amp.KRR(1.0, k=5), amp.KRR(2.0, k=5)
    mix = amp.compose([(a, 2000, 1.0, 2), (b, 2000, 1.0, 2)], delta=1e-6)
    aa = amp.epsilon(a, 2000, 1e-6, rounds=4)
    bb = amp.epsilon(b, 2000, 1e-6, rounds=4)
    assert aa.lower <= mix.upper and mix.lower <= bb.upper
    assert aa.upper <= mix.upper * 1.01 and mix.upper <= bb.upper * 1.01


# ---------------------------------------------------------------------------- subsampling
@pytest.mark.parametrize("mech", [amp.KRR(1.5, k=4), amp.RAPPOR(1.0, d=3),
                                  amp.MatrixMechanism(_matrix3())], ids=["4RR", "RAPPOR3", "M3"])
@pytest.mark.parametrize("q", [0.05, 0.3, 1.0])
def test_subsampled_laws_match_the_explicit_matrix(mech, q):
    s = Subsampled(mech, q)
    M = s.matrix()
    assert M.shape[1] == mech.matrix().shape[1] + (q < 1)
    laws = s.gparv_laws()
    d = M.shape[0]
    for i, j in itertools.permutations(range(d), 2):
        law = pair_law_from_matrix(M, i, j)
        assert any(_close(law, x) for x in laws)
        assert abs(law.gamma - (q * pair_law_from_matrix(mech.matrix(), i, j).gamma + 1 - q)) \
            < 1e-12
    low = lower_law_from_matrix(M, 0, 1, 2)
    assert any(_close(low, x) for x in s.lower_laws((0, 1)))


def _close(u, v) -> bool:
    """Same atoms (a, b) with the same masses, to 1e-12 (atoms merged by (a, b))."""
    def table(law):
        keys = np.round(np.stack([law.a, law.b], axis=1), 9)
        out = {}
        for k, p in zip(map(tuple, keys), law.p):
            out[k] = out.get(k, 0.0) + p
        return out
    tu, tv = table(u), table(v)
    return tu.keys() == tv.keys() and all(abs(tu[k] - tv[k]) < 1e-12 for k in tu)


def test_subsampled_one_round_against_exact():
    m, n, q = amp.KRR(2.0, k=3), 5, 0.3
    Mq = _void(m.matrix(), q)
    for e in EPS:
        b = amp.delta(m, n, e, sampling=q)
        truth = max(_exact_composed(Mq, x0, x1, o, 1, [e])[0] for x0, x1, o in _pairs(Mq, n))
        assert_upper(b.upper, truth, atol=1e-14)


def test_subsample_law_identity_and_nesting():
    m = amp.KRR(2.0, k=5)
    law = m.gparv()
    assert subsample_law(law, 1.0) is law
    nested = Subsampled(Subsampled(m, 0.5), 0.4)
    assert nested.q == pytest.approx(0.2) and nested.inner is m


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,msg", [
    ({"rounds": 0}, "rounds must be >= 1"),
    ({"rounds": 2.5}, "rounds must be an integer"),
    ({"sampling": 0.0}, "sampling must be > 0"),
    ({"sampling": 1.5}, "sampling must be in (0, 1]"),
    ({"sampling": "x"}, "sampling must be a real number"),
])
def test_bad_inputs(kw, msg):
    with pytest.raises(amp.ParameterError, match=msg.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        amp.epsilon(amp.KRR(2.0, k=5), 100, 1e-6, **kw)


def test_bad_compose_inputs():
    with pytest.raises(amp.ParameterError, match="exactly one"):
        amp.compose([(amp.KRR(2.0, k=5), 100)])
    with pytest.raises(amp.ParameterError, match="must not be empty"):
        amp.compose([], delta=1e-6)
    with pytest.raises(amp.ParameterError, match="each round"):
        amp.compose([amp.KRR(2.0, k=5)], delta=1e-6)
    with pytest.raises(amp.ParameterError):
        Subsampled("krr", 0.5)


@pytest.mark.parametrize("extra", [["--rounds", "0"], ["--sampling", "1.5"],
                                   ["--sampling", "0"]])
def test_cli_bad_values_exit_2(extra, capsys):
    code = main(["epsilon", "-m", "krr", "--k", "5", "--eps0", "2", "--n", "100",
                 "--delta", "1e-6", *extra])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_cli_rounds_json(capsys):
    code = main(["epsilon", "-m", "krr", "--k", "10", "--eps0", "2", "--n", "10000",
                 "--delta", "1e-6", "--rounds", "10", "--sampling", "0.1", "--json"])
    ans = json.loads(capsys.readouterr().out)
    assert code == 0 and ans["rounds"] == 10 and ans["sampling"] == 0.1
    assert ans["bracket"][0] <= ans["value"] == ans["bracket"][1]
    code = main(["delta", "-m", "krr", "--k", "10", "--eps0", "2", "--n", "10000",
                 "--eps", "0.3", "--rounds", "3", "--json"])
    ans = json.loads(capsys.readouterr().out)
    assert code == 0 and ans["quantity"] == "delta" and ans["rounds"] == 3


def test_fft_pad_grows_with_rounds():
    assert R.fft_pad(1000, 10, 0.1) < R.fft_pad(1000, 1000, 0.1) < 1e-9


@pytest.mark.parametrize("eps,d0,T", [(0.3, 1e-7, 10), (1.0, 0.0, 5), (0.05, 1e-9, 200)])
def test_optimal_homogeneous_composition_matches_dp_accounting(eps, d0, T):
    """The Kairouz et al. closed form against dp-accounting's exact (eps, delta) PLD."""
    from dp_accounting.pld import common, privacy_loss_distribution as pld
    acc = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, d0),
                                      value_discretization_interval=eps / 50)
    acc = acc.self_compose(T)
    for E in (0.0, 0.5 * eps * T ** 0.5, eps * T ** 0.5):
        ours = R.optimal_homogeneous_delta(eps, d0, T, E)
        assert ours == pytest.approx(acc.get_delta_for_epsilon(E), rel=1e-6, abs=1e-12)
    e = R.optimal_homogeneous_epsilon(eps, d0, T, 1e-3)
    assert R.optimal_homogeneous_delta(eps, d0, T, e) <= 1e-3


def test_krr_has_one_law_and_it_is_its_own_reverse():
    law = amp.KRR(1.5, k=4).gparv()
    assert law.swapped().same_law(law)            # (x1, x0) has the law of (x0, x1)
    laws = amp.MatrixMechanism(_matrix3()).gparv_laws()
    assert all(any(x.swapped().same_law(y) for y in laws) for x in laws)   # both orders


def test_one_round_pld_dominates_exact_pairs_off_grid():
    """The connect-the-dots PLD of one round is above every pair's exact divergence at eps
    between grid points, and for eps < 0 (where the reverse direction enters)."""
    m, n = amp.KRR(1.5, k=3), 4
    prof = R.ComposableProfile(m, n)
    step = prof.eps_cut / (UPPER_CELLS * 40)
    pmf = prof.upper_pmf(step, points=40)
    grid = np.linspace(-2.0, 2.0, 57) + 0.37 * step
    got = np.asarray(pmf.get_delta_for_epsilon(np.sort(grid)))
    M = m.matrix()
    for x0, x1, others in _pairs(M, n):
        pair = ShuffledPair.from_inputs(M, x0, x1, list(others))
        for e, g in zip(np.sort(grid), got):
            assert_upper(g, hockey_stick(pair.p0, pair.p1, float(e)) if e >= 0 else
                         1 - np.exp(e) + np.exp(e) * hockey_stick(pair.p1, pair.p0, float(-e)),
                         atol=1e-13)


def test_delta_below_the_float_pad_is_refused():
    with pytest.raises(amp.NumericalError, match="floating-point error bound"):
        amp.epsilon(amp.KRR(2.0, k=10), 2_000, 1e-14, rounds=300)


def test_heterogeneous_matrix_rounds_against_exact():
    """Two different rounds of one asymmetric matrix (n = 3 and n = 4 users): the lower end
    uses one dataset pair for both and stays below the exact composed divergence."""
    mech = amp.MatrixMechanism(_matrix3())
    M = mech.matrix()
    for e in (0.0, 0.4):
        b = amp.compose([(mech, 3), (mech, 4, 0.5)], eps=e)
        pa = ShuffledPair.from_inputs(M, 0, 1, [2, 2])
        pb = ShuffledPair.from_inputs(_void(M, 0.5), 0, 1, [2, 2, 2])
        fwd = hockey_stick(np.outer(pa.p0, pb.p0).ravel(), np.outer(pa.p1, pb.p1).ravel(), e)
        assert_lower(b.lower, fwd, atol=1e-13)
        for x0, x1, o in _pairs(M, 3):
            qa = ShuffledPair.from_inputs(M, x0, x1, o)
            qb = ShuffledPair.from_inputs(_void(M, 0.5), x0, x1, list(o) + [o[0]])
            a = np.outer(qa.p0, qb.p0).ravel()
            c = np.outer(qa.p1, qb.p1).ravel()
            assert_upper(b.upper, max(hockey_stick(a, c, e), hockey_stick(c, a, e)), atol=1e-13)


# ---------------------------------------------------------------- the 1-D lower pair (large n)
def _trinomial_difference(n: int, p1: float, p2: float) -> dict:
    """Exact ``P(h1 - h2 = d)`` of ``Mult(n; p1, p2, 1 - p1 - p2)`` by full enumeration (mpmath)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    p0 = 1 - mp.mpf(p1) - mp.mpf(p2)
    out: dict = {}
    for h1 in range(n + 1):
        for h2 in range(n + 1 - h1):
            v = (mp.factorial(n) / (mp.factorial(h1) * mp.factorial(h2)
                                   * mp.factorial(n - h1 - h2))
                 * mp.mpf(p1) ** h1 * mp.mpf(p2) ** h2 * p0 ** (n - h1 - h2))
            out[h1 - h2] = out.get(h1 - h2, 0) + v
    return out


@pytest.mark.parametrize("n, p1, p2", [(60, 0.061, 0.061), (80, 0.45, 0.061), (50, 0.3, 0.5)])
def test_difference_pmf_within_its_error_bound(n, p1, p2):
    """The FFT values of P(D = d) are within the stated error of a 40-digit enumeration."""
    exact = _trinomial_difference(n, p1, p2)
    c0 = int(round(n * (p1 - p2)))
    half = 25
    got, err = R.difference_pmf(n, p1, p2, c0, half)
    worst = max(abs(float(exact.get(c0 + d, 0)) - got[d + half]) for d in range(-half, half + 1))
    assert worst <= err
    assert err < 1e-12                            # and the bound is not vacuous


def _curve(loss, mass, eps):
    return np.array([float(np.sum(mass * np.maximum(-np.expm1(e - loss), 0.0))) for e in eps])


@pytest.mark.parametrize("law_index", [0, 1])
def test_difference_pair_is_below_the_full_pair_and_close(law_index, monkeypatch):
    """The pair post-processed to D = h1 - h2 (used above LOWER_POINTS) has a hockey-stick
    curve below the full three-group pair's enumeration (a valid lower pair) and, for the
    symmetric k-RR law, within 1% of it down to delta = 1e-4 (20% in the far tail at this
    small n; the gap shrinks like 1/sqrt(n))."""
    n = 3000
    law = R.ComposableProfile(amp.KRR(2.0, k=10), n).lower_laws()[law_index]
    full_loss, full_mass, _ = L.explicit_pair_losses(law, n)
    monkeypatch.setattr(L, "LOWER_POINTS", 0)
    loss, mass, _ = L.explicit_pair_losses(law, n)
    eps = np.linspace(0.0, 0.3, 13)
    full, diff = _curve(full_loss, full_mass, eps), _curve(loss, mass, eps)
    assert np.all(diff <= full * (1 + 1e-12))
    if law_index == 0:
        assert np.all(diff[full > 1e-4] >= 0.99 * full[full > 1e-4])
        assert np.all(diff[full > 1e-9] >= 0.8 * full[full > 1e-9])


@pytest.mark.slow
def test_difference_lower_bracket_matches_the_enumeration(monkeypatch):
    """T = 100 rounds: the composed lower eps from the D pair is within 0.2% below the one from
    the full enumeration, and the upper end is untouched."""
    mech, n = amp.KRR(2.0, k=10), 20_000
    full = amp.epsilon(mech, n, 1e-6, rounds=100)
    monkeypatch.setattr(L, "LOWER_POINTS", 0)
    diff = amp.epsilon(mech, n, 1e-6, rounds=100)
    assert diff.upper == full.upper
    assert full.lower * 0.998 <= diff.lower <= full.lower * (1 + 1e-9)


def test_refusal_quotes_the_asked_delta():
    """The mass-at-infinity refusal names the delta the user asked, not delta minus the pad."""
    pmf = A.dense_pmf(0.1, 0, np.array([0.5, 0.5 - 1e-6]), 1e-6, True)
    with pytest.raises(amp.NumericalError, match=r"never reaches delta = 1e-07: its mass at "
                                                 r"infinity is 1e-06, plus an error pad of 5e-08"):
        PM.eps_upper(pmf, 5e-8, 1e-7)


def test_many_subsampled_rounds_at_small_delta_are_answered():
    """T = 1000 rounds at delta = 1e-8 (10-RR, eps0 = 0.5, n = 100, q = 0.01) was refused by the
    norm-wise FFT pad (about 3e-8); the transform-aware pad answers, inside the exact
    reference bracket [0.4275, 0.4450] of the issue (27)."""
    r = amp.epsilon(amp.KRR(0.5, k=10), 100, 1e-8, rounds=1000, sampling=0.01)
    assert r.details["pad_upper"] < 1e-9
    assert 0.4275 <= r.lower <= r.upper <= 0.4450
