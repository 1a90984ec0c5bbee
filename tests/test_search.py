"""eps(delta) and eps0 calibration: certified brackets against exact enumeration."""

from __future__ import annotations

import math

import pytest

from amp import api as B
from amp.core.errors import NumericalError, ParameterError
from amp.delta.exact import delta_enumerate
from amp.mechanisms import KRR, OUE, RAPPOR, BLH
from amp.epsilon import approx_epsilon, epsilon_bracket


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


@pytest.mark.parametrize("mech, n, delta", [
    (KRR(4.0, k=10), 25, 1e-2), (KRR(1.0, k=3), 30, 1e-3), (RAPPOR(2.0), 20, 1e-3),
    (OUE(1.0, d=3), 16, 1e-2), (BLH(3.0), 18, 1e-3),
], ids=lambda v: getattr(v, "describe", lambda: str(v))())
def test_epsilon_bracket_contains_exact(mech, n, delta):
    law = mech.gparv()
    truth = _exact_eps(law, n, delta)
    r = epsilon_bracket(law, n, delta, rel_tol=1e-3)
    assert r.lower <= truth <= r.upper
    assert r.upper <= truth * 1.005 + 1e-12


@pytest.mark.parametrize("n", [1000, 10_000])
def test_default_eps_accuracy_self_certified(n):
    """Default settings: eps value within 0.5% of the exact (bracket width <= 0.5%)."""
    r = B.epsilon(KRR(4.0, k=10), n, 1e-6)
    assert r.lower > 0 and r.value == r.upper
    assert r.upper <= 1.005 * r.lower


def test_epsilon_is_zero_when_target_met_at_zero():
    law = KRR(0.1, k=3).gparv()
    r = epsilon_bracket(law, 50, 0.5)
    assert r.upper == 0.0


def test_approx_epsilon_is_close():
    law = KRR(4.0, k=10).gparv()
    r = epsilon_bracket(law, 10_000, 1e-6)
    assert approx_epsilon(law, 10_000, 1e-6) == pytest.approx(r.upper, rel=0.05)


def test_lower_bound_below_upper():
    up = B.epsilon(KRR(2.0, k=10), 2000, 1e-6)
    low = B.epsilon(KRR(2.0, k=10), 2000, 1e-6, bound="lower")
    assert low.value <= up.value
    assert low.value > 0.8 * up.value   # the paper: upper and lower bounds are close


def test_calibrate_eps0_round_trip():
    n, eps, delta = 2000, 0.8, 1e-6
    r = B.calibrate_eps0(lambda e: KRR(e, k=10), n, eps, delta, rel_tol=2e-3)
    assert r.lower <= r.upper <= r.lower * 1.002 + 1e-9
    # the returned eps0 is certified: its upper delta at eps is <= the target
    assert B.delta(KRR(r.value, k=10), n, eps).upper <= delta
    assert B.delta(KRR(r.upper * 1.01, k=10), n, eps).lower > delta


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n=10, delta=0.0), "delta must be > 0"),
    (dict(n=10, delta=1.0), r"delta must be in \(0, 1\)"),
    (dict(n=0, delta=0.1), "n must be >= 1"),
    (dict(n=10, delta=float("nan")), "delta must be finite"),
])
def test_bad_input(kwargs, msg):
    with pytest.raises(ParameterError, match=msg):
        epsilon_bracket(KRR(1.0, k=3).gparv(), **kwargs)


# ----------------------------------------------------------------------------- structured search
@pytest.mark.parametrize("mech, n", [(KRR(4.0, k=10), 3_000), (RAPPOR(1.0), 20_000),
                                     (OUE(4.0), 5_000), (BLH(2.0), 10_000),
                                     (RAPPOR(2.0, d=3), 2_000)],
                         ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_structured_search_agrees_with_generic_fft(mech, n):
    law = mech.gparv()
    rs = epsilon_bracket(law, n, 1e-6, rel_tol=1e-4)
    assert rs.method == "structured" and rs.rel_width <= 1e-4
    rf = epsilon_bracket(law, n, 1e-6, rel_tol=2e-3, method="fft")
    assert rf.method == "fft"
    assert rs.lower <= rf.upper and rf.lower <= rs.upper       # both certified: they overlap


def test_structured_search_small_n_vs_enumeration():
    law = KRR(2.0, k=4).gparv()
    for n, delta in ((6, 1e-2), (15, 1e-3)):
        exact = _exact_eps(law, n, delta)
        r = epsilon_bracket(law, n, delta, rel_tol=1e-5)
        assert r.method == "structured"
        assert r.lower <= exact <= r.upper * (1 + 1e-9)


def test_structured_search_tiny_delta_target():
    """Small targets are resolved down to the floating-point floor of the atoms (~1e-14),
    below which the search says so instead of returning noise."""
    law = RAPPOR(3.0).gparv()
    r = epsilon_bracket(law, 5_000, 1e-12, rel_tol=1e-3)
    assert r.method == "structured" and 0 < r.lower < r.upper and r.rel_width <= 1e-3
    from amp.delta.dispatch import delta_bracket
    assert delta_bracket(law, 5_000, r.upper, abs_tol=0.0, method="structured").upper <= 1e-12
    assert delta_bracket(law, 5_000, r.lower, abs_tol=0.0, method="structured").lower > 1e-12
    with pytest.raises(NumericalError, match="floating-point floor"):
        epsilon_bracket(law, 5_000, 1e-20, rel_tol=1e-3)


def test_calibration_cap_is_certified_before_it_is_returned():
    make = lambda e: KRR(e, k=10)  # noqa: E731
    # at n = 10^4 every eps0 <= 3 meets (0.5, 1e-6): the cap is returned, and it is safe
    r = B.calibrate_eps0(make, 10_000, 0.5, 1e-6, eps0_max=3.0)
    assert r.value == 3.0 and B.delta(make(3.0), 10_000, 0.5).upper <= 1e-6
    # a cap above the threshold (~4.43) is not returned: the search bisects below it
    r = B.calibrate_eps0(make, 10_000, 0.5, 1e-6, eps0_max=5.0)
    assert 4.3 < r.value < 4.5 and B.delta(make(r.value), 10_000, 0.5).upper <= 1e-6
