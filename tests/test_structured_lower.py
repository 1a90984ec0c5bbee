"""The structured path for Theorem 5 laws (issue 12, parts 3 and 4).

k-RR's Theorem 5 law (atoms ``(1/E, 1/E)``, ``(E, 1)``, ``(1, E)``, ``(1, 1)``) and the
background laws ``x2 = x0`` / ``x2 = x1`` of every Table 1 mechanism have the structured shape
with levels (:class:`amp.backends.structured.shape.StructuredShape`: ``sv``, ``lx``, ``ly``).
Oracles: exact enumeration of the count vectors (:func:`amp.backends.exact.delta_enumerate`),
the exact shuffled divergence of the explicit dataset pair
(:func:`amp.oracles.ground_truth.shuffled_divergence`), and the generic certified FFT.
"""

from __future__ import annotations

import math

import pytest

import amp
from amp.backends.dispatch import LawDelta, delta_bracket
from amp.backends.exact import delta_enumerate
from amp.backends.structured import supports
from amp.mechanisms import BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse
from amp.oracles.ground_truth import shuffled_divergence

from helpers import assert_lower, assert_upper

STRUCTURED_LOWER = [KRR(4.0, k=10), KRR(0.7, k=3), KRR(2.0, k=2), KRR(6.0, k=50)]
BIT_MECHS = [RAPPOR(4.0), OUE(1.0), BLH(2.0), HadamardResponse(3.0), OLH(2.0, g=4)]


def _structured_laws():
    out = []
    for m in STRUCTURED_LOWER:
        out += [(m, law) for law in m.lower_laws()]
    for m in BIT_MECHS:
        out += [(m, law) for law in m.lower_laws()[1:]]        # the two backgrounds
    return out


@pytest.mark.parametrize("mech,law", _structured_laws(),
                         ids=lambda x: x.label if hasattr(x, "label") else "")
def test_structured_lower_brackets_contain_exact_enumeration(mech, law):
    assert supports(law)
    for n in (9, 40):
        for frac in (0.02, 0.3, 0.7, 0.97):
            eps = frac * law.max_eps()
            exact = delta_enumerate(law, n, eps)
            r = LawDelta(law, n, "structured").delta(eps, rel_tol=1e-3, abs_tol=1e-13)
            assert r.method == "structured"
            assert_upper(r.upper, exact, rtol=1e-12, atol=1e-300)
            assert_lower(r.lower, exact, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("mech,law", _structured_laws()[::2],
                         ids=lambda x: x.label if hasattr(x, "label") else "")
def test_structured_lower_agrees_with_the_generic_fft(mech, law):
    n = 5_000
    for frac in (0.05, 0.2, 0.5):
        eps = frac * law.max_eps()
        s = LawDelta(law, n, "structured").delta(eps, rel_tol=1e-3, abs_tol=1e-30)
        f = delta_bracket(law, n, eps, method="fft", rel_tol=1e-2, abs_tol=1e-30)
        assert s.lower <= f.upper and f.lower <= s.upper, (eps, s, f)


@pytest.mark.parametrize("mech", [KRR(1.5, k=4), KRR(1.5, k=2), RAPPOR(1.5, d=3),
                                  OUE(2.0, d=2), BLH(1.5, d=3), OLH(1.0, g=3, d=3),
                                  HadamardResponse(1.5, d=3)], ids=lambda m: m.describe())
def test_every_lower_law_is_the_divergence_of_its_dataset_pair(mech):
    """Each Theorem 5 law, backgrounds included, gives exactly the shuffled divergence of
    ``(x0, x2, ..., x2)`` vs ``(x1, x2, ..., x2)`` (ground truth by histogram enumeration)."""
    M = mech.matrix()
    n = 6
    laws = mech.lower_laws()
    tags = [law.label for law in laws]
    assert sum("x2 = x0" in t or t.endswith(", 0)") for t in tags) == 1
    for law in laws:
        t = law.label
        x2 = (0 if "x2 = x0" in t else 1 if "x2 = x1" in t
              else int(t.rsplit(",", 1)[1].strip(" )")) if "triple" in t else 2)
        for eps in (0.05, 0.4, 1.0):
            ref = shuffled_divergence(M, 0, 1, x2, eps, n=n)
            got = delta_enumerate(law, n, eps)
            assert math.isclose(got, ref, rel_tol=1e-9, abs_tol=1e-15), (t, eps, got, ref)


def test_two_inputs_now_have_a_lower_bound():
    """With the backgrounds, k = 2 (no third value) still has a certified lower bound, below
    the upper bound."""
    m = KRR(1.0, k=2)
    low = amp.epsilon(m, 2_000, 1e-6, bound="lower")
    up = amp.epsilon(m, 2_000, 1e-6)
    assert 0 < low.value <= up.value
    assert all("background" in p.mechanism for p in low.parts)


def test_extreme_eps0_is_certified():
    """5-RR at eps0 = 9, n = 300: the FFT could not certify the Theorem 5 law; the
    structured path does, and the value is below the upper bound."""
    m = KRR(9.0, k=5)
    low = amp.epsilon(m, 300, 1e-6, bound="lower")
    up = amp.epsilon(m, 300, 1e-6)
    assert low.rel_width <= 1e-4 and "structured" in low.method
    assert low.value <= up.value <= 9.0


def test_lower_value_is_certified_from_below_by_enumeration():
    """At the returned lower eps, some law's exact delta exceeds the target."""
    m = KRR(3.0, k=4)
    n, target = 60, 1e-3
    r = amp.epsilon(m, n, target, bound="lower")
    assert max(delta_enumerate(law, n, r.lower) for law in m.lower_laws()) > target
    assert max(delta_enumerate(law, n, r.upper) for law in m.lower_laws()) <= target * (1 + 1e-9)


def test_backgrounds_can_be_left_out_and_joint_uses_the_paper_pair():
    m = RAPPOR(2.0)
    assert len(m.lower_laws()) == 3 and len(m.lower_laws(backgrounds=False)) == 1
    with pytest.raises(amp.ParameterError, match="k must be >= 3"):
        KRR(1.0, k=2).lower_laws(backgrounds=False)
    with pytest.raises(amp.ParameterError, match="d >= 3"):
        RAPPOR(1.0, d=2).lower_laws(backgrounds=False)
    J = amp.JointMechanism([KRR(1.0, k=3), KRR(1.0, k=3)])
    assert all("background" not in law.label for law in J.lower_laws())


def test_laws_certified_below_the_best_lower_end_are_not_searched():
    """BLH at eps0 = 4: the background x2 = x0 (structured, searched first) beats the paper's
    pair (FFT) and the background x2 = x1, whose searches are replaced by one loose evaluation
    each; the bracket is the one of searching every law."""
    from amp.inversion import epsilon_of_curve
    prof = amp.profile(BLH(4.0), 100_000, bound="lower")
    r = amp.epsilon_for(prof, 1e-6)
    assert r.details["pruned_laws"] == 2 and "x2 = x0" in r.details["worst_law"]
    full = [epsilon_of_curve(c, 1e-6, c.max_eps, bound="lower") for c in prof.curves]
    assert r.lower == max(p.lower for p in full) and r.upper == max(p.upper for p in full)
    skipped = [p for p in r.parts if p.details.get("pruned")]
    assert len(skipped) == 2 and "x2 = x0" not in " ".join(p.mechanism for p in skipped)
    # what was skipped really is below the answer
    assert full[0].upper <= r.lower and full[2].upper <= r.lower
