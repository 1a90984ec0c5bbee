"""eps(delta) at huge n, where the answer is 0 or nearly (issue 37, item 3).

Above ``QUICK_MIN_N`` users the eps search of a structured law first asks the cf inversion (a
certified bracket whose cost does not grow with ``n``, :meth:`LawDelta.quick_curve`): a
certified ``delta_upper(0) <= delta`` settles ``eps = 0`` at once, and otherwise its brackets
narrow the interval of the precise search (:func:`amp.inversion._quick_bracket`). These
tests check the certification of both outcomes (speed is measured by
``bench/bench_huge_n.py``); the threshold is lowered for the second so that it stays small.
"""

from __future__ import annotations

import resource

import pytest

import amp
from amp.backends import dispatch
from amp.backends.dispatch import LawDelta
from amp.inversion import _quick_bracket, epsilon_of_curve


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_eps_zero_is_settled_by_one_certified_delta_at_huge_n():
    """amp.epsilon(KRR(1, k=10), 10^11, 1e-6) took 10.9 s and 931 MB to answer 0: one cf
    bracket of delta(0) below the target settles it, [0, 0] (every eps >= 0 is valid)."""
    m = amp.KRR(1.0, k=10)
    before = _peak_mb()
    r = amp.epsilon(m, 10**11, 1e-6)
    assert (r.lower, r.upper) == (0.0, 0.0) and r.value == 0.0 and "cf" in r.method
    assert _peak_mb() - before < 150            # no structured table was built
    # the certificate: the bound's delta at eps = 0 is below the target
    assert amp.delta(m, 10**11, 0.0, method="cf", rel_tol=2e-2).upper <= 1e-6
    # Theorem 5's side (a lower bound of eps, 0 is always one) and a sequence of targets
    low = amp.epsilon(m, 10**11, 1e-6, bound="lower")
    assert low.value == 0.0 and low.lower == 0.0
    assert [b.value for b in amp.epsilon(m, 10**12, [1e-6, 1e-5])] == [0.0, 0.0]
    # at 1e12 the cf bracket cannot reach 2e-2 (its floor grows with n): a looser one decides
    r = amp.epsilon(amp.RAPPOR(1.0), 10**12, 1e-6)
    assert (r.lower, r.upper) == (0.0, 0.0) and r.method == "cf"
    assert _peak_mb() - before < 150


def test_the_settlement_needs_a_certified_upper_delta_below_the_target():
    law = amp.KRR(1.0, k=10).gparv()
    qc = LawDelta(law, 10**11, "cf")
    d0 = qc.delta_for_search(0.0, 2e-2, 0.0)
    # just above the upper end: settled; just below the lower end: not, and 0 is then bad
    assert _quick_bracket(qc, d0.upper * 1.001, law.max_eps(), 1e-4, None)[:3] == \
        (0.0, 0.0, True)
    lo, hi, bad, _, _ = _quick_bracket(qc, d0.lower * 0.9, law.max_eps(), 1e-4, None)
    assert bad and 0.0 <= lo < hi
    assert qc.delta_for_search(hi, 2e-2, 0.0).upper <= d0.lower * 0.9


@pytest.mark.parametrize("mech, n, delta", [(amp.RAPPOR(1.0), 10**7, 5e-5),
                                            (amp.KRR(1.0, k=10), 10**7, 3e-5),
                                            (amp.OUE(1.0), 3 * 10**6, 1e-4)])
def test_the_narrowed_search_is_certified_and_as_tight(monkeypatch, mech, n, delta):
    """With the threshold lowered, the cf curve narrows the search of a nonzero eps: the
    bracket meets rel_tol and overlaps the bracket of the search without it; its upper end is
    no looser than that one's by more than the rel_tol both meet. Its ends are certified by
    evaluations or, after the chord steps (amp.inversion_chord), by convexity from two of them,
    which can put an end closer to the threshold than one evaluation's bracket resolves: an
    independent evaluation at each end (1e-6 relative) must not contradict it (upper end:
    delta_lower <= delta, and delta_upper within 1e-5 of delta; lower end: delta_upper >
    delta)."""
    plain = amp.epsilon(mech, n, delta)
    monkeypatch.setattr(dispatch, "QUICK_MIN_N", 10**5)
    prof = amp.profile(mech, n)
    assert prof.curves[0].quick_curve() is not None
    r = amp.epsilon(mech, n, delta)
    assert "cf" in r.method and r.rel_width <= 1e-4
    assert r.lower <= plain.upper and plain.lower <= r.upper
    assert r.upper <= plain.upper * (1 + 1e-4)
    d = amp.delta(mech, n, r.upper, rel_tol=1e-6)
    assert d.lower <= delta and d.upper <= delta * (1 + 1e-5)
    if r.lower > 0:
        assert amp.delta(mech, n, r.lower, rel_tol=1e-6).upper > delta


def test_no_quick_curve_below_the_threshold_or_for_a_forced_method():
    law = amp.RAPPOR(1.0).gparv()
    assert LawDelta(law, dispatch.QUICK_MIN_N).quick_curve() is None
    assert LawDelta(law, dispatch.QUICK_MIN_N + 1, "structured").quick_curve() is None
    assert LawDelta(law, dispatch.QUICK_MIN_N + 1).quick_curve().method == "cf"
    # and the search without one is the plain one (the same bracket as before)
    c = LawDelta(law, 10**5)
    assert epsilon_of_curve(c, 1e-4, c.max_eps).details.get("quick") is None
