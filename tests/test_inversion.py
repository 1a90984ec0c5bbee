"""The one certified inversion (amp.inversion): eps(delta) and eps0 calibration against exact
references (enumeration, closed-form curves), its certification semantics and its refusals."""

from __future__ import annotations

import math

import pytest

import amp
from amp.core.errors import NumericalError, ParameterError
from amp.backends.dispatch import LawDelta, delta_bracket
from amp.backends.exact import delta_enumerate
from amp.inversion import FunctionCurve, crossing, epsilon_of_curve, estimate_epsilon
from amp.mechanisms import BLH, KRR, OUE, RAPPOR


def _exact_eps(law, n, delta, tol=1e-9):
    """Smallest eps with exact delta(eps) <= target, by bisection on the enumeration."""
    lo, hi = 0.0, law.max_eps()
    if delta_enumerate(law, n, 0.0) <= delta:
        return 0.0
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        if delta_enumerate(law, n, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _search(law, n, delta, rel_tol=1e-3, method="auto"):
    return epsilon_of_curve(LawDelta(law, n, method), delta, law.max_eps(), rel_tol=rel_tol)


CASES = [(KRR(4.0, k=10), 25, 1e-2), (KRR(1.0, k=3), 30, 1e-3), (RAPPOR(2.0), 20, 1e-3),
         (OUE(1.0, d=3), 16, 1e-2), (BLH(3.0), 18, 1e-3)]


@pytest.mark.parametrize("mech, n, delta", CASES,
                         ids=lambda v: getattr(v, "describe", lambda: str(v))())
@pytest.mark.parametrize("rel_tol", [1e-3, 1e-5])
def test_eps_bracket_contains_exact(mech, n, delta, rel_tol):
    law = mech.gparv()
    truth = _exact_eps(law, n, delta)
    r = _search(law, n, delta, rel_tol)
    assert r.quantity == "eps" and r.value == r.upper
    assert r.lower <= truth <= r.upper * (1 + 1e-9)
    assert r.rel_width <= rel_tol


@pytest.mark.parametrize("mech, n, delta", CASES,
                         ids=lambda v: getattr(v, "describe", lambda: str(v))())
def test_lower_bound_eps_below_exact_lower_law(mech, n, delta):
    """bound="lower": the value is certified below the exact eps of the Theorem 5 pair."""
    if isinstance(mech, KRR) and mech.k < 3:
        pytest.skip("needs a third input")
    law = mech.lower_laws()[0]
    truth = _exact_eps(law, n, delta)
    r = amp.epsilon(mech, n, delta, bound="lower", rel_tol=1e-3)
    assert r.value == r.lower <= truth <= r.upper * (1 + 1e-9)


@pytest.mark.parametrize("n", [1000, 10_000])
def test_default_eps_accuracy(n):
    """Default settings: a certified bracket of relative width <= 1e-4."""
    r = amp.epsilon(KRR(4.0, k=10), n, 1e-6)
    assert r.lower > 0 and r.value == r.upper
    assert r.rel_width <= 1e-4
    # the ends are what they claim: delta_upper(upper) <= target < delta_lower(lower)
    assert amp.delta(KRR(4.0, k=10), n, r.upper).upper <= 1e-6
    assert amp.delta(KRR(4.0, k=10), n, r.lower).lower > 1e-6


def test_eps_is_zero_when_target_met_at_zero():
    r = _search(KRR(0.1, k=3).gparv(), 50, 0.5)
    assert r.upper == 0.0 and r.lower == 0.0


def test_estimate_is_close_but_separate():
    law = KRR(4.0, k=10).gparv()
    r = _search(law, 10_000, 1e-6, 1e-4)
    est = estimate_epsilon(LawDelta(law, 10_000), 1e-6, law.max_eps())
    assert est == pytest.approx(r.upper, rel=0.05)
    assert amp.api.epsilon_estimate(KRR(4.0, k=10), 10_000, 1e-6) == pytest.approx(est)


def test_lower_bound_below_upper():
    up = amp.epsilon(KRR(2.0, k=10), 2000, 1e-6)
    low = amp.epsilon(KRR(2.0, k=10), 2000, 1e-6, bound="lower")
    assert low.value <= up.value
    assert low.value > 0.8 * up.value   # the paper: upper and lower bounds are close


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n=10, delta=0.0), "delta must be > 0"),
    (dict(n=10, delta=1.0), r"delta must be in \(0, 1\)"),
    (dict(n=0, delta=0.1), "n must be >= 1"),
    (dict(n=10, delta=float("nan")), "delta must be finite"),
    (dict(n=10, delta=0.1, rel_tol=0.0), "rel_tol must be > 0"),
    (dict(n=10, delta=0.1, bound="middle"), "bound must be 'upper' or 'lower'"),
])
def test_bad_input(kwargs, msg):
    with pytest.raises(ParameterError, match=msg):
        amp.epsilon(KRR(1.0, k=3), **kwargs)


# ----------------------------------------------------------------------------- backends agree
@pytest.mark.parametrize("mech, n", [(KRR(4.0, k=10), 3_000), (RAPPOR(1.0), 20_000),
                                     (OUE(4.0), 5_000), (BLH(2.0), 10_000),
                                     (RAPPOR(2.0, d=3), 2_000)],
                         ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_structured_search_agrees_with_generic_fft(mech, n):
    law = mech.gparv()
    rs = _search(law, n, 1e-6, 1e-4)
    assert rs.method == "structured" and rs.rel_width <= 1e-4
    rf = _search(law, n, 1e-6, 2e-3, method="fft")
    assert rf.method == "fft" and rf.rel_width <= 2e-3
    assert rs.lower <= rf.upper and rf.lower <= rs.upper       # both certified: they overlap


def test_structured_search_small_n_vs_enumeration():
    law = KRR(2.0, k=4).gparv()
    for n, delta in ((6, 1e-2), (15, 1e-3)):
        exact = _exact_eps(law, n, delta)
        r = _search(law, n, delta, 1e-5)
        assert r.method == "structured"
        assert r.lower <= exact <= r.upper * (1 + 1e-9)


def test_tiny_delta_target_and_floor_refusal():
    """Small targets are resolved: the atoms' floating-point floor is weighted by where the
    sum can be near zero (``amp.core.floats.tilted_floor``), so it falls with delta (1e-20
    is answered, both ends certified); an accuracy beyond the floor is refused (strict
    search) with the certified bracket held."""
    law = RAPPOR(3.0).gparv()
    r = _search(law, 5_000, 1e-12, 1e-3)
    assert r.method == "structured" and 0 < r.lower < r.upper and r.rel_width <= 1e-3
    assert delta_bracket(law, 5_000, r.upper, abs_tol=0.0, method="structured").upper <= 1e-12
    assert delta_bracket(law, 5_000, r.lower, abs_tol=0.0, method="structured").lower > 1e-12
    r = _search(law, 5_000, 1e-20, 1e-3)
    assert r.rel_width <= 1e-3
    assert delta_bracket(law, 5_000, r.upper, abs_tol=0.0, method="structured").upper <= 1e-20
    assert delta_bracket(law, 5_000, r.lower, abs_tol=0.0, method="structured").lower > 1e-20
    with pytest.raises(NumericalError, match=r"certified bracket so far"):
        _search(law, 5_000, 1e-12, 1e-13)


# ----------------------------------------------------------------------------- eps0 calibration
def test_calibrate_eps0_round_trip():
    n, eps, delta = 2000, 0.8, 1e-6
    r = amp.calibrate_eps0(lambda e: KRR(e, k=10), n, eps, delta, rel_tol=2e-3)
    assert r.quantity == "eps0" and r.value == r.lower
    assert r.lower <= r.upper <= r.lower * 1.002 + 1e-9
    # the returned eps0 is certified: its upper delta at eps is <= the target
    assert amp.delta(KRR(r.value, k=10), n, eps).upper <= delta
    assert amp.delta(KRR(r.upper * 1.01, k=10), n, eps).lower > delta


def test_calibration_cap_is_certified_before_it_is_returned():
    make = lambda e: KRR(e, k=10)  # noqa: E731
    # at n = 10^4 every eps0 <= 3 meets (0.5, 1e-6): the cap is returned, and it is safe
    r = amp.calibrate_eps0(make, 10_000, 0.5, 1e-6, eps0_max=3.0)
    assert r.value == 3.0 and amp.delta(make(3.0), 10_000, 0.5).upper <= 1e-6
    # a cap above the threshold (~4.43) is not returned: the search stops below it
    r = amp.calibrate_eps0(make, 10_000, 0.5, 1e-6, eps0_max=5.0)
    assert 4.3 < r.value < 4.5 and amp.delta(make(r.value), 10_000, 0.5).upper <= 1e-6


# ----------------------------------------------------------------------------- the search itself
def _exp_curve(rel=1e-12):
    """F(x) = exp(-x) with a certified bracket of relative width ~2 rel."""
    return FunctionCurve(lambda x: (math.exp(-x) * (1 - rel), math.exp(-x) * (1 + rel)))


@pytest.mark.parametrize("target", [0.5, 1e-3, 1e-9])
@pytest.mark.parametrize("rel_tol", [1e-2, 1e-6])
def test_crossing_decreasing_against_closed_form(target, rel_tol):
    c = crossing(_exp_curve(), target, 0.0, 40.0, rel_tol=rel_tol)
    truth = -math.log(target)
    assert c.lo <= truth <= c.hi and c.hi - c.lo <= rel_tol * c.hi
    assert math.exp(-c.hi) * (1 + 1e-12) <= target < math.exp(-c.lo) * (1 - 1e-12)


@pytest.mark.parametrize("target", [0.1, 1e-4])
def test_crossing_increasing_keeps_the_safe_end_low(target):
    """Increasing curve (delta in eps0): lo is safe (F_upper(lo) <= target), hi is not."""
    curve = FunctionCurve(lambda x: (x ** 3 * (1 - 1e-12), x ** 3 * (1 + 1e-12)))
    c = crossing(curve, target, 0.0, 1.0, decreasing=False, rel_tol=1e-5)
    truth = target ** (1 / 3)
    assert c.lo <= truth <= c.hi and c.hi - c.lo <= 1e-5 * c.hi
    assert c.lo ** 3 * (1 + 1e-12) <= target


def test_crossing_refuses_an_unresolvable_target():
    """A curve whose bracket never narrows (floor 1e-3 wide) cannot decide a target inside it."""
    curve = FunctionCurve(lambda x: (max(math.exp(-x) - 1e-3, 0.0), math.exp(-x) + 1e-3))
    with pytest.raises(NumericalError, match="cannot resolve"):
        crossing(curve, 0.01, 0.0, 40.0, rel_tol=1e-6)


def test_crossing_bad_interval():
    with pytest.raises(ParameterError, match="search interval"):
        crossing(_exp_curve(), 0.1, 2.0, 1.0)


def test_crossing_steps_past_points_the_curve_cannot_certify():
    """A curve that raises NumericalError near one end (as a law does a hair below
    log max a/b) is searched elsewhere: the bracket is still certified; four such points
    make the search give up with the curve's message and the bracket so far."""
    def fn(x):
        if x > 9.99:
            raise NumericalError("no bracket here")
        return math.exp(-x), math.exp(-x)

    c = crossing(FunctionCurve(fn), math.exp(-3.0), 0.0, 10.0, rel_tol=1e-6, start=9.999)
    assert c.lo <= 3.0 <= c.hi and c.hi - c.lo <= 1e-6 * c.hi

    def inside(x):
        if 0.5 < x < 9.5:
            raise NumericalError("never")
        return math.exp(-x), math.exp(-x)

    with pytest.raises(NumericalError, match=r"never \(the x search could not certify 4"):
        crossing(FunctionCurve(inside), math.exp(-3.0), 0.0, 10.0)


def test_eps_a_hair_below_eps0_is_answered():
    """HR (BLH's row) at eps0 = 8, n = 24972: eps(1.55e-10) is within 1e-5 of eps0, and the
    search's first point (from the estimate) sat where no bracket can be certified; it used to
    refuse. The answer's ends are checked against the structured brackets either side."""
    m = amp.HadamardResponse(8.0)
    b = amp.epsilon(m, 24972, 1.55e-10)
    assert 7.999 < b.lower <= b.upper <= 8.0 and b.upper - b.lower <= 1e-4 * b.upper
    law = LawDelta(m.gparv_laws()[0], 24972)
    assert law.delta(b.upper, rel_tol=1e-2).upper <= 1.55e-10
    assert law.delta(b.lower, rel_tol=1e-2).lower > 1.55e-10
    assert law.delta(7.9999, rel_tol=1e-2).lower > 1.55e-10      # the crossing is above
