"""The points at which the composed upper end certifies the one-round profile
(amp.rounds.points): any choice must give a valid bound, so the adaptive choice is checked
against an independent oracle, the exact ``T``-fold composition of the Theorem 4 pair itself.

Oracle. Theorem 4's profile is ``H(eps) = E[(A - e^eps B)_+] / n`` with ``(A, B)`` the sums of
``n`` i.i.d. blanket atoms ``(a, b)``. It is the hockey-stick divergence of the pair
``P(s) = Mult(s) A(s) / n``, ``Q(s) = Mult(s) B(s) / n`` on count vectors ``s`` (``E a = E b =
1``), enumerated exactly at small ``n``; its composed curve is ``E_P[(1 - e^(eps - L_1 - ... -
L_T))_+]``. Rounding every loss down to a fine grid only lowers it, so the numpy convolution
below is at most the true composed divergence of that pair, which the connect-the-dots pair
dominates: amp's upper end must be above it. Amp's bound is within ~0.1% of it (chords between
points), so a point value or point set that broke the domination by more than that fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import fftconvolve
from scipy.special import gammaln

import amp
from amp import rounds as R
from amp.rounds import points as P
from amp.rounds.profile import UPPER_CELLS
from amp.privacy_profile import PrivacyProfile

pytest.importorskip("dp_accounting")

MECH, N, T = amp.KRR(2.0, k=10), 30, 4


def _counts(m: int, n: int):
    if m == 1:
        yield [n]
        return
    for c in range(n + 1):
        for rest in _counts(m - 1, n - c):
            yield [c] + rest


def _blanket_pair(law, n: int):
    """``(A, B, P)`` over the count vectors of the ``n`` blanket atoms (off atom included)."""
    a, b = np.append(law.a, 0.0), np.append(law.b, 0.0)
    p = np.append(law.p, max(0.0, 1.0 - float(law.p.sum())))
    S = np.array(list(_counts(p.size, n)), dtype=float)
    logm = gammaln(n + 1.0) - gammaln(S + 1).sum(1) + (S * np.log(np.where(p > 0, p, 1))).sum(1)
    A, B = S @ a, S @ b
    return A, B, np.exp(logm) * A / n


def oracle_delta(law, n: int, T: int, eps: list[float], step: float = 2e-5) -> np.ndarray:
    """A lower estimate of the exact ``T``-fold composed divergence of the Theorem 4 pair."""
    A, B, Pm = _blanket_pair(law, n)
    inf = float(Pm[(Pm > 0) & (B == 0)].sum())
    fin = (Pm > 0) & (B > 0)
    idx = np.floor(np.log(A[fin] / B[fin]) / step).astype(np.int64)
    lo = int(idx.min())
    one = np.bincount(idx - lo, weights=Pm[fin])
    out, off = one, lo
    for _ in range(T - 1):
        out, off = np.maximum(fftconvolve(out, one), 0.0), off + lo
    loss = (np.arange(out.size) + off) * step
    res = []
    for e in eps:
        on = loss > e
        # 1e-12: the FFT convolution's own rounding (values ~1, ~1e5 terms), taken off
        res.append(float(np.sum(out[on] * -np.expm1(e - loss[on])))
                   + (1 - (1 - inf) ** T) - 1e-12)
    return np.array(res)


@pytest.fixture(scope="module")
def law():
    return PrivacyProfile(MECH, N).laws[0]


def test_oracle_is_theorem_4_for_one_round(law):
    """The enumerated pair's divergence is the certified profile (one round, fine grid)."""
    prof = PrivacyProfile(MECH, N)
    for e in (0.1, 0.6):
        b = prof.delta(e)
        o = oracle_delta(law, N, 1, [e], step=1e-6)[0]
        assert b.lower * (1 - 1e-4) - 1e-9 <= o <= b.upper * (1 + 1e-5) + 1e-9


def test_adaptive_points_are_used_and_fewer():
    prof = R.ComposableProfile(MECH, N)
    step = prof.eps_cut / (UPPER_CELLS * R.GRID_POINTS)
    kn = prof.knots(step, R.GRID_POINTS, T, eps=1.0)
    kmax = int(np.ceil(prof.eps_cut / step))
    assert kn is not None and kn[0] == 0 and kn[-1] == kmax
    assert kn.size < P.uniform_knots(kmax, R.GRID_POINTS).size
    assert prof.knots(step, R.GRID_POINTS, T, delta=1e-6) is not None


@pytest.mark.parametrize("n, adaptive", [(30, False), (100, True)])
def test_composed_delta_dominates_the_exact_composed_pair(n, adaptive, monkeypatch):
    """At n = 100 the chosen points pass their a posteriori check (only they are certified);
    at n = 30 the normal estimate is poor and the uniform grid's points are added. (The
    chosen points alone: at these n the uniform grid is otherwise always added,
    ``UNION_MAX_N``.)"""
    monkeypatch.setattr(P, "UNION_MAX_N", 0)
    seen = []
    check = R.ComposableProfile.knots_suffice
    monkeypatch.setattr(R.ComposableProfile, "knots_suffice",
                        lambda self, *a: seen.append(check(self, *a)) or seen[-1])
    law = PrivacyProfile(MECH, n).laws[0]
    for e in (0.5, 1.5):
        b = amp.delta(MECH, n, e, rounds=T)
        o = oracle_delta(law, n, T, [e])[0]
        assert b.upper >= o
        assert b.upper <= o * 1.01            # and close to it: the oracle is sharp
    assert seen == [adaptive, adaptive]


def test_composed_epsilon_is_valid_against_the_exact_composed_pair():
    n = 100
    law = PrivacyProfile(MECH, n).laws[0]
    r = amp.epsilon(MECH, n, 1e-6, rounds=T)
    at_upper, below = oracle_delta(law, n, T, [r.upper, r.upper * 0.995])
    assert at_upper <= 1e-6
    assert below > 1e-6                       # the check is sharp at this scale


def test_the_oracle_catches_a_curve_below_the_profile(monkeypatch):
    """The check above can fail: certified values lowered by 2% break it."""
    n = 100
    law = PrivacyProfile(MECH, n).laws[0]
    honest = R.ComposableProfile.upper
    monkeypatch.setattr(R.ComposableProfile, "upper", lambda self, e: 0.98 * honest(self, e))
    b = amp.delta(MECH, n, 1.0, rounds=T)
    assert b.upper < oracle_delta(law, n, T, [1.0])[0]


def test_any_knots_keep_both_ends(monkeypatch):
    monkeypatch.setattr(P, "UNION_MAX_N", 0)                 # the given knots alone
    prof = R.ComposableProfile(MECH, N)
    step = prof.eps_cut / 80
    kmax = int(np.ceil(prof.eps_cut / step))
    ks, d = prof.upper_points(step, 10, knots=np.array([37]), fallback=False)
    assert list(ks) == [-kmax, -37, 0, 37, kmax]
    assert np.all(np.diff(d) <= 0) and d[0] <= 1.0
    # the default grid is the uniform one of before
    ks, _ = prof.upper_points(step, 10)
    assert list(ks[ks >= 0]) == list(P.uniform_knots(kmax, 10))


def test_fewest_knots_meets_its_budget():
    t = np.exp(np.linspace(0, 0.1, 200))
    f = np.exp(-200 * (t - 1))
    W = np.exp(-((t - 1.03) / 0.01) ** 2)
    uni = np.round(np.linspace(0, 199, 21)).astype(int)
    budget = P.chord_excess(t, f, W, uni)
    got = P.fewest_knots(t, f, W, budget, uni.size)
    assert got is not None and got[0] == 0 and got[-1] == 199
    assert got.size < uni.size and P.chord_excess(t, f, W, got) <= budget * (1 + 1e-9)
    assert P.fewest_knots(t, f, W, 0.0, 3) is None


def test_normal_estimate_follows_the_profile():
    prof = PrivacyProfile(MECH, 10_000)
    for e in (0.0, 0.03, 0.06):
        est = P.normal_estimate(prof.laws, 10_000, np.array([e]))[0]
        assert est == pytest.approx(prof.delta(e).upper, rel=0.05)


def test_no_estimate_keeps_the_uniform_grid():
    prof = R.ComposableProfile(MECH, N)
    assert prof.knots(0.01, 20, 1, delta=1e-6) is None       # one round
    assert P.choose_knots(100, 20, 0.01, lambda e: np.full(e.shape, np.nan), None, 5,
                          delta=1e-6) is None


@pytest.mark.parametrize("mech, n, T", [(amp.KRR(2.0, k=10), 1000, 30),
                                        (amp.RAPPOR(1.0), 300, 10)])
def test_chosen_points_are_at_least_as_tight_as_the_uniform_grid(mech, n, T, monkeypatch):
    adaptive = amp.epsilon(mech, n, 1e-6, rounds=T)
    monkeypatch.setattr(R.ComposableProfile, "knots", lambda self, *a, **k: None)
    uniform = amp.epsilon(mech, n, 1e-6, rounds=T)
    assert adaptive.lower == uniform.lower
    assert adaptive.upper <= uniform.upper


def test_cheap_rounds_certify_the_uniform_grid_beside_the_chosen_points(monkeypatch):
    """At most UNION_MAX_N users per round every uniform grid point is certified as well, and
    the a posteriori check is then not needed (nor called)."""
    prof = R.ComposableProfile(MECH, N)
    step = prof.eps_cut / (UPPER_CELLS * R.GRID_POINTS)
    kn = prof.knots(step, R.GRID_POINTS, T, eps=1.0)
    kmax = int(np.ceil(prof.eps_cut / step))
    monkeypatch.setattr(R.ComposableProfile, "knots_suffice",
                        lambda self, *a: pytest.fail("check called"))
    ks, _ = P.certify(prof, step, R.GRID_POINTS, kn)
    assert set(P.uniform_knots(kmax, R.GRID_POINTS)) <= set(ks) and set(kn) <= set(ks)
    monkeypatch.setattr(P, "UNION_MAX_N", N - 1)             # above it: the chosen ones only
    ks2, _ = P.certify(prof, step, R.GRID_POINTS, kn, fallback=False)
    assert set(ks2) == set(kn) | {0, kmax}


def test_chosen_points_never_looser_than_uniform_where_they_once_were(monkeypatch):
    """The case where the first-order choice alone was looser than the uniform grid (eps <=
    1.59053 against 1.59049): with the uniform grid's points beside the chosen ones the upper
    end is at most the uniform grid's."""
    mech, n, T_ = amp.KRR(0.6, k=9), 300, 1000
    adaptive = amp.epsilon(mech, n, 1e-8, rounds=T_, sampling=0.2)
    monkeypatch.setattr(R.ComposableProfile, "knots", lambda self, *a, **k: None)
    uniform = amp.epsilon(mech, n, 1e-8, rounds=T_, sampling=0.2)
    assert adaptive.lower == uniform.lower
    assert adaptive.upper <= uniform.upper
