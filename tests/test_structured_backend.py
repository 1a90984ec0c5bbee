"""The structured backend (amp.backends.structured.StructuredBackend): exact for small n (against
enumeration), inside the generic FFT bracket for large n, the z-split plan, the public API."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import delta_bracket
from amp.backends.exact import delta_enumerate
from amp.backends.structured import (StructuredBackend, delta_bracket_structured, structured_shape,
                                  supports)
from amp.backends.structured.evaluator import Evaluator, assemble, evaluate
from amp.backends.structured.model import CountModel, Plan
from amp.backends.structured.nuisance import LOG_TAU_V
from amp.backends.structured.shape import floor_width
from amp.mechanisms import BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse
from amp.mechanisms.gparv import GPARV

from helpers import assert_lower, assert_upper

TABLE1 = [KRR(4.0, k=10), KRR(0.5, k=3), KRR(1.0, k=2), RAPPOR(4.0), OUE(1.0), BLH(2.0),
          HadamardResponse(0.7), OLH(1.5, g=3)]
# absolute floor of every bracket: the float atoms are within 16 u (a + e^eps b) of the exact
# ratios, which moves delta by up to sum p * that (~1e-14 here) on each side
FLOOR = 1e-13
FINITE = [RAPPOR(0.5, d=4), RAPPOR(2.0, d=3), OUE(3.0, d=3), BLH(1.0, d=3), BLH(4.0, d=4)]


def _eps_grid(eps0):
    return [0.0, 0.05 * eps0, 0.3 * eps0, 0.8 * eps0, 0.999 * eps0, eps0, 1.2 * eps0]


def _exact(law, n, eps):
    if n == 1:
        g, p = law.atoms(eps)
        return float(np.dot(p, np.maximum(g, 0.0)))
    return delta_enumerate(law, n, eps)


def _forced(law, n, eps, plan, log_tau=-60.0):
    """The structured bracket of ``delta(eps)`` with the nuisance plan forced."""
    sh = structured_shape(law)
    mod = CountModel(sh, n, log_tau)
    ev = Evaluator(mod, eps)
    return assemble(evaluate(mod, ev, plan), n, sh, eps)


# ----------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
@pytest.mark.parametrize("n", [1, 2, 9, 40])
def test_equals_enumeration_small_n(mech, n):
    law = mech.gparv()
    backend = StructuredBackend(law, n)
    for eps in _eps_grid(mech.eps0):
        exact = _exact(law, n, eps)
        r = backend.delta(eps)
        assert r.method == "structured"
        assert_upper(r.upper, exact)
        assert_lower(r.lower, exact)
        if exact > 1e-13:
            assert r.upper - r.lower <= 1e-7 * exact + FLOOR, (eps, exact, r)
        elif exact == 0.0:
            assert r.lower == 0.0


def test_random_structured_laws_against_enumeration(rng):
    for _ in range(25):
        E = math.exp(rng.uniform(0.2, 4.0))
        p = rng.dirichlet(np.ones(5) * rng.uniform(0.3, 3.0))
        if rng.random() < 0.3:
            p[3] = 0.0                                  # no (E, E) atom
        if rng.random() < 0.3:
            p[2] *= rng.uniform(0.0, 1.0)               # asymmetric (E,1) / (1,E)
        p = p / p.sum()
        law = GPARV([1.0, E, 1.0, E], [1.0, 1.0, E, E], p[:4] * rng.uniform(0.5, 1.0),
                    math.log(E))
        n = int(rng.integers(2, 31))
        for eps in (0.0, rng.uniform(0, math.log(E)), 0.97 * math.log(E)):
            exact = delta_enumerate(law, n, eps)
            r = delta_bracket_structured(law, n, eps, rel_tol=0.5)
            assert r.lower <= exact <= r.upper, (E, p, n, eps, exact, r)
            if exact > 1e-13:
                floor = floor_width(structured_shape(law), eps, r.upper)
                assert (r.upper - r.lower) <= 1e-7 * exact + 1.01 * floor


@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
def test_zsplit_plan_equals_enumeration(mech):
    """The z-split plan (Z rows, conditional binomial O tables) is exact up to tails."""
    law = mech.gparv()
    for n in (2, 9, 40):
        for eps in _eps_grid(mech.eps0)[:5]:
            exact = _exact(law, n, eps)
            lo, up = _forced(law, n, eps, Plan("zsplit"))
            assert_upper(up, exact)
            assert_lower(lo, exact)
            if exact > 1e-13:
                assert up - lo <= 1e-7 * exact + FLOOR, (n, eps, exact, lo, up)


def test_zsplit_random_laws_against_enumeration(rng):
    for _ in range(25):
        E = math.exp(rng.uniform(0.2, 5.0))
        p = rng.dirichlet(np.ones(5) * rng.uniform(0.3, 3.0))
        if rng.random() < 0.3:
            p[rng.integers(0, 4)] = 0.0                 # a missing atom type
        p = p / p.sum()
        law = GPARV([1.0, E, 1.0, E], [1.0, 1.0, E, E], p[:4] * rng.uniform(0.5, 1.0),
                    math.log(E))
        if structured_shape(law).pX <= 0:
            continue
        n = int(rng.integers(2, 31))
        for eps in (0.0, rng.uniform(0, math.log(E)), 0.97 * math.log(E)):
            exact = delta_enumerate(law, n, eps)
            lo, up = _forced(law, n, eps, Plan("zsplit"), log_tau=float(rng.uniform(-60, -8)))
            assert lo <= exact <= up, (E, p, n, eps, exact, lo, up)


def test_zero_beyond_eps0_and_list_input():
    law = RAPPOR(2.0).gparv()
    rs = delta_bracket_structured(law, 500, [0.5, 2.0, 3.0])
    assert isinstance(rs, list) and len(rs) == 3
    assert rs[0].upper > 0 and rs[2].upper == 0.0
    # at eps = eps0 (up to rounding of e^eps) only a rounding-level upper bound remains
    assert rs[1].lower == 0.0 and rs[1].upper <= 1e-14


def test_brackets_consistent_in_eps():
    law = OUE(3.0).gparv()
    rs = delta_bracket_structured(law, 20_000, np.linspace(0.05, 0.6, 8))
    for a, b in zip(rs, rs[1:]):
        assert b.lower <= a.upper          # delta is non-increasing in eps


# ----------------------------------------------------------------------------- vs the FFT engine
@pytest.mark.parametrize("mech,n,eps", [
    (KRR(4.0, k=10), 1_000, 1.5), (RAPPOR(4.0), 1_000, 1.5), (OUE(4.0), 1_000, 0.95),
    (BLH(4.0), 1_000, 1.35), (KRR(1.0, k=10), 1_000, 0.08), (RAPPOR(1.0), 1_000, 0.107),
    (KRR(4.0, k=10), 10_000, 0.384), (RAPPOR(4.0), 10_000, 0.3645), (OUE(1.0), 10_000, 0.03),
    (KRR(4.0, k=10), 100_000, 0.111), (BLH(4.0), 100_000, 0.0826),
], ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_inside_fft_bracket(mech, n, eps):
    law = mech.gparv()
    rs = StructuredBackend(law, n).delta(eps)
    rf = delta_bracket(law, n, eps, method="fft")
    assert rs.lower <= rf.upper and rf.lower <= rs.upper          # the brackets overlap
    assert rs.lower >= rf.lower
    # the FFT's upper end can be tighter than our (much narrower) bracket by less than its width
    assert rs.upper <= rf.upper + (rs.upper - rs.lower) + 1e-15
    assert rs.rel_width <= 2e-3


# ----------------------------------------------------------------------------- the backend API
def test_backend_result_is_a_bound_with_details():
    law = KRR(4.0, k=10).gparv()
    b = StructuredBackend(law, 1000)
    assert b.law is law and b.n == 1000 and b.shape == structured_shape(law)
    r = b.delta(1.5)
    assert isinstance(r, Bound)
    assert (r.quantity, r.bound, r.method, r.n, r.mechanism) == (
        "delta", "upper", "structured", 1000, law.label)
    assert r.inputs == {"eps": 1.5} and r.value == r.upper and 0 < r.lower < r.upper
    for key in ("plan", "T_window", "band_elems", "table_points", "gap_j", "gap_int", "T_tail",
                "lin_err", "tails", "estimate_BR", "floor"):
        assert key in r.details
    # the atoms' floating-point floor (with the Chernoff-tilted bound at this n: far below
    # the old one) is part of the width, never all of it
    assert r.details["floor"] == floor_width(b.shape, 1.5, r.upper, b.n)
    assert r.details["floor"] < 1e-3 * floor_width(b.shape, 1.5, r.upper)
    assert 0 < r.details["floor"] < r.upper - r.lower


def test_backend_reuses_its_count_model_across_eps():
    """The eps-free tables are built once per backend and shared by every eps."""
    law = KRR(4.0, k=10).gparv()
    b = StructuredBackend(law, 1_000)
    first = b.delta(1.5)
    mod = b.count_model(LOG_TAU_V)            # the model the evaluation built (none deeper)
    assert mod.log_tau <= LOG_TAU_V and (len(mod.tables) > 0 or mod.zsplit_built)
    for eps in (1.2, 1.8, 1.35):
        b.delta(eps)
        assert b.count_model(LOG_TAU_V) is mod
    assert b.delta(1.5).bracket == first.bracket
    # another backend owns its own model: no module-global cache
    other = StructuredBackend(law, 1_000)
    assert other.count_model(LOG_TAU_V) is not mod
    assert other.delta(1.5).bracket == first.bracket


def test_backend_max_eps_and_estimate():
    law = RAPPOR(2.0).gparv()
    b = StructuredBackend(law, 500)
    assert b.max_eps == pytest.approx(2.0, rel=1e-12)
    assert b.delta(b.max_eps * 1.0001).upper == 0.0
    assert b.estimate_log_delta(b.max_eps * 1.0001) == -math.inf
    # the Bahadur-Rao estimate is uncertified but close to the certified bracket
    r = b.delta(0.5)
    est = b.estimate_log_delta(0.5)
    assert abs(est - math.log(r.upper)) < 0.2
    # no (E, 1) atom: delta = 0 at every eps >= 0
    E = math.exp(1.0)
    flat = StructuredBackend(GPARV([1.0, 1.0, E], [1.0, E, E], [0.3, 0.3, 0.2], 1.0), 50)
    assert flat.max_eps == 0.0
    r0 = flat.delta(0.0)                      # (1,1) and (E,E) atoms are 0 up to rounding
    assert r0.lower == 0.0 and r0.upper <= 1e-14 and flat.delta(0.5).upper == 0.0


def test_backend_chernoff_shortcut_can_be_skipped():
    """A delta far below ``abs_tol`` is settled by the Chernoff bound unless ``chernoff=False``,
    which computes the full certified bracket (inside the Chernoff one)."""
    law = KRR(4.0, k=10).gparv()
    b = StructuredBackend(law, 1_000)
    eps = 2.5                                 # delta ~ 3.2e-12
    quick = b.delta(eps, abs_tol=1e-10)
    assert quick.lower == 0.0 and "Chernoff" in quick.details["why"]
    full = b.delta(eps, abs_tol=1e-10, chernoff=False)
    assert "why" not in full.details and 0 < full.lower <= full.upper <= quick.upper
    assert full.upper - full.lower <= 1e-10


def test_goal_narrows_the_bracket():
    """``goal`` is the width aimed at: a loose goal may take a cheap lattice plan, a tight one
    an exact plan; the two brackets overlap."""
    law = BLH(4.0).gparv()
    loose = StructuredBackend(law, 100_000).delta(0.0826, rel_tol=1e-2, goal=1e-2)
    tight = StructuredBackend(law, 100_000).delta(0.0826, rel_tol=1e-2, goal=1e-7)
    assert tight.rel_width <= 1e-6 < loose.rel_width <= 1e-2
    assert tight.lower <= loose.upper and loose.lower <= tight.upper


# ----------------------------------------------------------------------------- inputs
def test_bad_inputs():
    law = RAPPOR(2.0).gparv()
    with pytest.raises(ParameterError, match="structured shape"):
        StructuredBackend(RAPPOR(4.0).lower_laws()[0], 100)
    with pytest.raises(ParameterError, match="GPARV"):
        StructuredBackend(RAPPOR(2.0), 100)
    with pytest.raises(ParameterError):
        delta_bracket_structured(RAPPOR(4.0).lower_laws()[0], 100, 0.5)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 0, 0.5)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 100, -0.1)
    with pytest.raises(ParameterError):
        delta_bracket_structured(law, 100, 0.1, rel_tol=0.0)
    b = StructuredBackend(law, 100)
    with pytest.raises(ParameterError, match="goal"):
        b.delta(0.1, goal=-1e-3)
    with pytest.raises(ParameterError, match="rel_tol"):
        b.delta(0.1, rel_tol=0.7)
    with pytest.raises(ParameterError, match="eps"):
        b.delta(float("nan"))
    assert supports(law) and not supports(RAPPOR(4.0).lower_laws()[0])
