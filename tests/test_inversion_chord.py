"""The chord steps of the eps search (:mod:`amp.inversion_chord`): the chord (upper) and
extrapolated-secant (lower) ends against exact high-precision crossings of lines (the tightest
convex case), the search on synthetic convex curves whose root is known in closed form, and on
the library's structured curves at moderate n (the chord steps switched on below their
``QUICK_MIN_N``) against a dense certified evaluation of the same curve and the plain search."""

from __future__ import annotations

import math
import random

import pytest

import amp.backends.dispatch as dispatch
import amp.inversion_chord as ic
from amp.backends.dispatch import LawDelta
from amp.core.result import Bound
from amp.inversion import epsilon_of_curve
from amp.inversion_chord import chord_search, chord_upper, secant_lower
from amp.mechanisms import KRR, RAPPOR

mpmath = pytest.importorskip("mpmath")


def _cases(seed: int, count: int):
    """``(xa, xb, ua, ub_or_lb, target)`` with a wide spread of scales: eps from 1e-9 to 30,
    gaps from 1e-12 relative to 30, the target anywhere between the two values (also within
    a few ulps of either)."""
    rng = random.Random(seed)
    for i in range(count):
        xa = 0.0 if i % 7 == 0 else 10 ** rng.uniform(-9, 0.5)
        gap = xa * 10 ** rng.uniform(-12, 0) if xa > 0 and i % 3 else 10 ** rng.uniform(-9, 1.5)
        xb = xa + gap
        if not xb > xa:
            continue
        hi_v = 10 ** rng.uniform(-15, -1)
        lo_v = hi_v * rng.choice([rng.uniform(0.01, 0.999999), 1 - 1e-9, 1 - 1e-15])
        frac = rng.choice([rng.random(), 1e-15, 1 - 1e-15, 0.0, 0.5])
        target = lo_v + frac * (hi_v - lo_v)
        yield xa, xb, hi_v, lo_v, target


def test_chord_upper_is_above_the_exact_crossing_of_the_chord():
    """For the chord through ``(w_a, ua)`` and ``(w_b, ub)`` (exact for a linear delta, the
    tightest convex case) the returned eps lies in ``[xa, xb]`` with the chord's value ``<=
    target`` there (50-digit arithmetic), and past the exact crossing by no more than the
    float crossing's rounding."""
    mpmath.mp.dps = 50
    checked = 0
    for xa, xb, ua, ub, target in _cases(1, 3000):
        if not (ua > target >= ub):
            continue
        x = chord_upper(xa, ua, xb, ub, target)
        assert x is not None and xa <= x <= xb
        wa, wb, w = (mpmath.expm1(mpmath.mpf(v)) for v in (xa, xb, x))
        theta = (w - wa) / (wb - wa)
        chord = mpmath.mpf(ua) - theta * (mpmath.mpf(ua) - mpmath.mpf(ub))
        assert chord <= target, (xa, xb, ua, ub, target, x)
        w_star = wa + (mpmath.mpf(ua) - target) / (mpmath.mpf(ua) - mpmath.mpf(ub)) * (wb - wa)
        x_star = mpmath.log1p(w_star)
        # tight: the float crossing's rounding (~u e^xb in w) and the doubling steps
        assert x - x_star <= 1e-13 * x_star + 64 * 2.0**-53 * math.exp(xb) + 1e-300 or x == xb
        checked += 1
    assert checked > 1000
    assert chord_upper(0.1, 1.0, 0.2, 2.0, 1.5) is None           # not straddling
    assert chord_upper(0.2, 2.0, 0.1, 1.0, 1.5) is None           # xa > xb


def test_secant_lower_is_below_the_exact_crossing_of_the_line():
    """The secant through ``(w_a, ua)`` and ``(w_b, lb)``, extended past ``w_b``: the returned
    eps (when any) is ``>= xb`` with the line's value ``> target`` there (50-digit arithmetic),
    and below the exact crossing by no more than the float crossing's rounding."""
    mpmath.mp.dps = 50
    checked = 0
    for xa, xb, ua, lb, target in _cases(2, 3000):
        target = lb * (1 - 10 ** random.Random(xb).uniform(-15, -0.01))
        if not (lb > target and ua > lb):
            continue
        x = secant_lower(xa, ua, xb, lb, target)
        if x is None:
            continue
        assert x >= xb
        wa, wb, w = (mpmath.expm1(mpmath.mpf(v)) for v in (xa, xb, x))
        phi = (w - wb) / (wb - wa)
        line = mpmath.mpf(lb) - phi * (mpmath.mpf(ua) - mpmath.mpf(lb))
        assert line > target, (xa, xb, ua, lb, target, x)
        phi_star = (mpmath.mpf(lb) - target) / (mpmath.mpf(ua) - mpmath.mpf(lb))
        x_star = mpmath.log1p(wb + phi_star * (wb - wa))
        # tight: the enclosures of expm1 at xa and xb (4 u each) scaled by the extrapolation
        slack = 64 * 2.0**-53 * (1 + 2 * phi_star) * math.exp(xb) / mpmath.exp(x_star)
        assert x_star - x <= 1e-13 * x_star + slack + 1e-300
        checked += 1
    assert checked > 1000
    assert secant_lower(0.1, 1.0, 0.2, 1.0, 0.5) is None           # flat: nothing beyond xb
    assert secant_lower(0.1, 2.0, 0.2, 1.0, 1.5) is None           # xb not bad


class ConvexCurve:
    """``delta(eps) = D0 exp(-lam (e^eps - 1))``, convex and decreasing in ``w = e^eps``, with
    brackets ``[delta (1 - r_lo), delta (1 + r_up)]`` that vary from point to point (the exact
    value anywhere inside); root ``log1p(log(D0 / target) / lam)`` in closed form."""

    convex_in_w = True
    precise_brackets = True

    def __init__(self, D0: float, lam: float, width: float, seed: int = 0):
        self.D0, self.lam, self.width = D0, lam, width
        self.rng = random.Random(seed)
        self.calls: list[float] = []

    def value(self, x: float) -> float:
        return self.D0 * math.exp(-self.lam * math.expm1(x))

    def root(self, target: float) -> float:
        return math.log1p(math.log(self.D0 / target) / self.lam)

    def search_tol(self, rel_tol: float) -> float:
        return 1e-6

    def delta_for_search(self, x: float, tol: float, abs_tol: float) -> Bound:
        self.calls.append(x)
        v = self.value(x)
        a = self.rng.random()
        # the value computed here is within ~1e-15 of the exact one: margins of 1e-12
        lo = v * (1 - a * self.width - 1e-12)
        up = v * (1 + (1 - a) * self.width + 1e-12)
        return Bound("delta", lo, up, "upper", "synthetic", inputs={"eps": x})


@pytest.mark.parametrize("D0, lam, target", [(1.16e-6, 3.0e5, 1e-6), (1e-3, 40.0, 1e-6),
                                             (0.3, 2.5, 1e-9), (2e-6, 1e7, 1e-6)])
def test_chord_search_brackets_the_known_root(D0, lam, target):
    """Seeded as the eps search seeds it (two rough measurements of ``log delta`` near the
    root, a cheap bracket at 0), the chord steps settle the search in at most
    :data:`MAX_EVALUATIONS` evaluations with a bracket that contains the exact root and is far
    narrower than ``rel_tol`` = 1e-4."""
    curve = ConvexCurve(D0, lam, 2e-8)
    root = curve.root(target)
    seed = [(root * 0.9, math.log(curve.value(root * 0.9) * 1.003)),
            (root * 1.05, math.log(curve.value(root * 1.05) * 0.998))]
    cheap = [(0.0, D0 * 0.99, D0 * 1.01)]
    lo, hi, pts, methods, done = chord_search(curve, target, 0.0, root * 1.3, rel_tol=1e-4,
                                              tol=1e-6, abs_tol=0.0, seed=seed, cheap=cheap)
    assert done and len(pts) <= ic.MAX_EVALUATIONS and methods == {"synthetic"}
    assert lo <= root <= hi
    assert hi - lo <= 1e-5 * hi


def test_chord_search_hands_over_what_it_certified():
    """Brackets wider than :data:`PRECISE` stop the steps after one evaluation (not settled);
    what they return is still a bracket of the root."""
    curve = ConvexCurve(1e-3, 40.0, 1e-4)
    root = curve.root(1e-6)
    lo, hi, pts, _, done = chord_search(curve, 1e-6, 0.0, 2 * root, rel_tol=1e-4, tol=1e-6,
                                        abs_tol=0.0, seed=[], cheap=[])
    assert not done and len(pts) == 1 and lo <= root <= hi


def test_inconsistent_brackets_are_refused():
    """A curve whose brackets contradict convexity's consequences (a certified-good point below
    a certified-bad one) raises NumericalError from the chord steps; the eps search then runs
    its plain search."""
    P = ic._Points(None, 1.0, 0.0, 10.0, 1e-6, 0.0, None, "eps")
    P.pts = [(1.0, 0.5, 0.6), (2.0, 1.5, 1.6)]     # good at 1, bad at 2: not decreasing
    P.bad, P.good = 2.0, 1.0
    with pytest.raises(ic.NumericalError):
        P.ends()


# --------------------------------------------------------------------- the library's curves
def _dense_check(ld: LawDelta, target: float, lo: float, hi: float, pts, grid: list[float]):
    """Independent evaluation of the same curve (certified brackets at ``grid``): no point
    certified good lies below ``lo``, none certified bad above ``hi``; and the curve is convex
    as evaluated: between two of the search's points every grid bracket's lower end lies
    below the chord of their upper ends (the inequality the chord end rests on)."""
    evals = [(x, ld.delta_for_search(x, 1e-6, 0.0)) for x in grid]
    for x, r in evals:
        if r.upper <= target:
            assert x >= lo, (x, lo)
        if r.lower > target:
            assert x <= hi, (x, hi)
    for xa, _, ua in pts:
        for xb, _, ub in pts:
            if not xa < xb:
                continue
            for x, r in evals:
                if xa < x < xb:
                    theta = math.expm1(x) - math.expm1(xa)
                    theta /= math.expm1(xb) - math.expm1(xa)
                    assert r.lower <= ua + theta * (ub - ua) + 1e-12 * ua
    return evals


@pytest.mark.parametrize("mech, n, delta", [(RAPPOR(1.0), 10**7, 1e-6),
                                            (KRR(1.0, k=10), 10**8, 1e-8),
                                            (RAPPOR(2.0), 10**7, 1e-7)])
def test_chord_eps_search_on_structured_curves(monkeypatch, mech, n, delta):
    """The chord steps switched on at moderate n (``QUICK_MIN_N`` lowered): their bracket is
    consistent with a dense certified evaluation of the same curve, intersects the plain
    search's bracket (both contain the threshold) and is no wider at either end (upper end not
    above the plain one by more than 1e-9 relative, lower end not below it)."""
    law = mech.gparv()
    monkeypatch.setattr(dispatch, "QUICK_MIN_N", 10**5)
    ld = LawDelta(law, n)
    chord = epsilon_of_curve(ld, delta, ld.max_eps, n=n)
    monkeypatch.setattr(LawDelta, "convex_in_w", False)
    plain_ld = LawDelta(law, n)
    plain = epsilon_of_curve(plain_ld, delta, plain_ld.max_eps, n=n)
    assert max(chord.lower, plain.lower) <= min(chord.upper, plain.upper)
    assert chord.upper <= plain.upper * (1 + 1e-9)
    assert chord.lower >= plain.lower
    pts = [p for p in chord.details.get("history", ()) if len(p) == 3]
    assert pts, chord.details
    lo, hi = plain.lower, plain.upper
    grid = [lo + (hi - lo) * k / 8 for k in range(-2, 11)]
    _dense_check(ld, delta, chord.lower, chord.upper, pts, grid)


def test_fallback_is_never_wider_than_the_plain_search(monkeypatch):
    """When the chord steps do not settle the search (here: every bracket counts as
    imprecise), the plain search runs as without them and its ends are intersected with
    theirs: the bracket is within the plain search's."""
    law = RAPPOR(1.0).gparv()
    n, delta = 10**7, 1e-6
    monkeypatch.setattr(dispatch, "QUICK_MIN_N", 10**5)
    monkeypatch.setattr(ic, "PRECISE", 1e-30)
    ld = LawDelta(law, n)
    r = epsilon_of_curve(ld, delta, ld.max_eps, n=n)
    assert not r.details.get("chord")
    monkeypatch.setattr(LawDelta, "convex_in_w", False)
    ld0 = LawDelta(law, n)
    r0 = epsilon_of_curve(ld0, delta, ld0.max_eps, n=n)
    assert r0.lower <= r.lower <= r.upper <= r0.upper
