"""Direct tests of amp.backends.structured.planner (reached otherwise only inside the
structured backend).

Contract of :func:`choose_plan`: it returns a :class:`Plan` whose mode is one of ``exact``,
``zsplit``, ``lattice``, within the table budgets, and "a poor choice costs time or width, never
correctness": evaluating with the chosen plan, or with any other plan, gives a certified
bracket. Oracles: every plan's bracket contains the value of the independent FFT backend's
bracket (they must overlap), and at small n the exact enumeration of the atom counts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import amp
from amp.backends.fft import DEFAULT_MAX_POINTS, fft_delta
from amp.backends.structured.backend import StructuredBackend
from amp.backends.structured.evaluator import Evaluator, assemble, evaluate
from amp.backends.structured.model import MAX_TABLE_POINTS, Plan
from amp.backends.structured.planner import EXACT_BUDGET, ZSPLIT_BUDGET, choose_plan

CASES = [(amp.KRR(1.0, k=10), 400, 0.15), (amp.KRR(4.0, k=50), 3000, 0.5),
         (amp.RAPPOR(2.0), 300, 0.3)]


def setup(mech, n, eps):
    sb = StructuredBackend(mech.gparv(), n)
    mod = sb.count_model(math.log(1e-30))
    ev = Evaluator(mod, eps)
    lin, err, _, _ = ev.sums()
    return sb, mod, ev, max(lin - err, 1e-300)


def bracket(sb, mod, ev, plan, n, eps):
    return assemble(evaluate(mod, ev, plan), n, sb.shape, eps)


@pytest.mark.parametrize("mech,n,eps", CASES)
def test_chosen_plan_within_budgets(mech, n, eps):
    sb, mod, ev, E_ref = setup(mech, n, eps)
    plan = choose_plan(mod, ev, 1e-6, E_ref, 2e-3)
    assert isinstance(plan, Plan) and plan.mode in ("exact", "zsplit", "lattice")
    nblocks = (int(mod.Ts[-1]) // plan.b) - (int(mod.Ts[0]) // plan.b) + 1
    if plan.mode == "exact":
        assert nblocks * mod.exact_cells(float(mod.m.max())) <= EXACT_BUDGET
    elif plan.mode == "zsplit":
        z_lo, z_hi, o_lo, o_hi, N_min, N_max, _, _ = mod.zsplit_geometry()
        assert mod.Ts.size * (z_hi - z_lo + 1) + (N_max - N_min + 1) * (o_hi - o_lo + 2) \
            <= ZSPLIT_BUDGET
    else:
        assert plan.K >= 1 and plan.b >= 1
        assert nblocks <= MAX_TABLE_POINTS


@pytest.mark.parametrize("mech,n,eps", CASES[1:])
def test_every_plan_is_certified(mech, n, eps):
    """The chosen plan and the alternatives all bracket the same value: each overlaps the
    independent FFT bracket, and the chosen one meets the asked width."""
    sb, mod, ev, E_ref = setup(mech, n, eps)
    law = mech.gparv()
    g, p = law.atoms(eps)
    ref = fft_delta(g, p, n, eps, 1e-2, DEFAULT_MAX_POINTS, "ref", 0.0, law.magnitudes(eps))
    chosen = choose_plan(mod, ev, 1e-6, E_ref, 2e-3)
    plans = [chosen, Plan("exact", b=1), Plan("zsplit"), Plan("lattice", b=4, K=1)]
    for plan in plans:
        try:
            lo, up = bracket(sb, mod, ev, plan, n, eps)
        except (MemoryError, ValueError):        # a plan too large for this model
            assert plan is not chosen
            continue
        assert lo <= ref.upper * (1 + 1e-9) and ref.lower <= up * (1 + 1e-9), plan
    lo, up = bracket(sb, mod, ev, chosen, n, eps)
    assert up - lo <= 2e-3 * up


def test_small_n_against_enumeration():
    """n = 8 users of 3-RR: every plan's bracket contains the exact value (count enumeration)."""
    from test_fft_backend import enumerate_delta
    mech, n = amp.KRR(2.0, k=3), 8
    for eps in (0.1, 0.6):
        sb, mod, ev, E_ref = setup(mech, n, eps)
        g, p = mech.gparv().atoms(eps)
        exact = enumerate_delta(g, p, n)
        for plan in (choose_plan(mod, ev, 1e-6, E_ref, 2e-3), Plan("exact", b=1),
                     Plan("zsplit"), Plan("lattice", b=2, K=1)):
            lo, up = bracket(sb, mod, ev, plan, n, eps)
            assert lo <= exact * (1 + 1e-9) and exact <= up * (1 + 1e-9), plan


def test_no_plan_within_the_table_limit_is_a_numerical_error():
    """At very large n, large eps0 and small eps every plan can exceed the table limit: the
    forced structured engine refuses with NumericalError (it raised a bare ValueError from
    min() of no candidates; found by bench/audit_session14.py), and auto answers (cf)."""
    import amp
    mech, n = amp.HadamardResponse(4.6687998633711185), 6_541_333_584
    with pytest.raises(amp.NumericalError, match="no evaluation plan"):
        amp.delta(mech, n, 6e-4, method="structured")
    r = amp.delta(mech, n, 6e-4)
    assert 0 < r.lower <= r.upper < 1e-9
