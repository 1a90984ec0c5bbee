"""Choice of the nuisance-table plan for one evaluation: estimated costs and gap bounds.

Implements the sentence "Block size ``b`` and ``K`` are chosen from these bounds so that their
share of the bracket is small" of :mod:`amp.backends.structured`, and the choice between the
``exact``, ``zsplit`` and ``lattice`` tables.  No certified quantity is computed here: a plan
only decides which (always certified) tables :func:`.evaluator.evaluate` uses, so a poor choice
costs time or width, never correctness.  The costs are measured timings (seconds per lattice
point, table cell, lookup); the gap estimates mirror :meth:`.model.CountModel.gap_coefs`.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import NumericalError
from amp.core.tails import bernstein_t
from amp.backends.structured.evaluator import Evaluator
from amp.backends.structured.lattice import lattice_cats
from amp.backends.structured.model import MAX_TABLE_POINTS, CountModel, Plan

__all__ = ["choose_plan", "EXACT_BUDGET", "ZSPLIT_BUDGET", "PLAN_TIERS"]

EXACT_BUDGET = 8_000_000   # (o, z) cells summed over the tables of a plan
COST_POINT = 0.8e-6        # seconds per lattice point of a nuisance table (measured)
COST_CELL = 0.3e-6         # seconds per (o, z) cell of an exact table
COST_TABLE = 1e-3          # overhead per table
COST_LOOK = 0.15e-6        # seconds per exact-table lookup (band element x small-law atom)
COST_ZCELL = 0.1e-6        # seconds per cell of the z-split tables (measured 60-110 ns)
COST_ZMID = 0.08e-6        # seconds per (band element, middle z) pair (measured 12-90 ns)
COST_ZELEM = 0.1e-6        # seconds per band element of the z-split plan
ZSPLIT_BUDGET = 4_000_000  # cells of the z-split tables (about 6 x 8 bytes each while built)
PLAN_TIERS = ((1.0, 0.15), (10.0, 0.6), (100.0, 1.5), (1e12, 10.0))   # (goal factor, seconds)


def _lattice_points(mod: CountModel, K: int, b: int) -> int:
    """Points of one lattice table with denominator ``K`` for blocks of ``b`` values of ``T``."""
    m_hi = float(min(mod.n, float(mod.m.max()) + b))
    t = float(bernstein_t(np.array(m_hi), mod.var, mod.bmax, -mod.log_tau))
    return int(2 * (t + 2 * mod.E + 4) * K + 64)


def choose_plan(mod: CountModel, ev: Evaluator, goal_rel: float, E_ref: float,
                rel_tol: float) -> Plan:
    """Choose the nuisance-table plan.

    Candidates: exact tables (block sizes ``b``), the z-split tables, or lattice tables for
    ``K`` in the continued-fraction denominators of ``E`` and block sizes ``b`` (powers of
    two).  For each, the two gap bounds are estimated from the band masses (the table-free
    part of the evaluation) and the cost from the table sizes.  The cheapest plan whose
    estimated gaps stay below ``goal/2`` is taken, trying the goals ``goal_rel * f`` within the
    time budgets of ``PLAN_TIERS``.
    """
    nu = mod.nu
    nT = mod.Ts.size
    W, n_band = ev.band_mass()                       # band mass (over T) and size
    beta = ev.beta
    if W == 0 or beta == 0:
        return Plan("lattice", b=1 << 40, K=1)
    # z-split: exact (no gap), cells of the Z and O tables once, ~(o window)/E pairs per element
    z_lo, z_hi, o_lo, o_hi, N_min, N_max, _, _ = mod.zsplit_geometry()
    Wz, Wo = z_hi - z_lo + 1, o_hi - o_lo + 1
    zcells = nT * Wz + (N_max - N_min + 1) * (Wo + 1)
    z_eval = n_band * COST_ZELEM + n_band * min(Wo / nu.E + 2.0, float(Wz)) * COST_ZMID
    if mod.zsplit_built and z_eval <= 0.05:
        return Plan("zsplit")                        # built for this model: keep using it
    Ks = [1] if nu.qZ <= 0 else mod.cf_denominators()
    m_min = int(mod.m.min())
    m_max = float(mod.m.max())
    pO, tO = nu.smooth_O(max(m_min, 0))
    pZ, tZ = nu.smooth_Z(max(m_min, 0))
    cands = []                                        # (cost, est_abs, plan)
    bs = [1]
    while bs[-1] < 2 * nT:
        bs.append(bs[-1] * 2)
    m_hi = float(mod.m.max())
    for b in bs:
        nblocks = (int(mod.Ts[-1]) // b) - (int(mod.Ts[0]) // b) + 1
        cells = mod.exact_cells(m_hi)
        if nblocks * cells > EXACT_BUDGET:
            continue
        todo = max(0, nblocks - mod.cached_count(("exact", b, 1)))
        cost = (todo * (cells * COST_CELL + COST_TABLE)
                + n_band * mod.exact_cells(float(min(b, nT))) * COST_LOOK)
        cands.append((cost, 0.0, Plan("exact", b=b)))
    if zcells <= ZSPLIT_BUDGET:
        build = 0.0 if mod.zsplit_built else zcells * COST_ZCELL + COST_TABLE
        cands.append((build + z_eval, 0.0, Plan("zsplit")))
    T0 = int(mod.Ts[0])
    goal_min = min(goal_rel, 0.5 * rel_tol) * E_ref
    for K in Ks[:8]:
        _, _, vK = lattice_cats(nu, K)
        var_l = nu.var + nu.qZ * vK
        if vK > 0:
            M2 = m_max * nu.qZ * vK
            worst = m_max * vK / 2 + math.sqrt(m_max * vK)
            gi = min(pO * (M2 / 2 + math.sqrt(M2)) + tO * worst,
                     pZ * (M2 / 2 / nu.E + math.sqrt(M2)) + tZ * worst)
        else:
            gi = 0.0
        est_i = beta * gi * W
        sdV = math.sqrt(max(m_min * var_l, 1e-300))
        pV = 1.05 / (math.sqrt(2 * math.pi) * sdV * K) if sdV > 5 else 1.0
        s1 = min(pO, K * pV)
        s0 = min(pO + tO, pV)
        pts1 = _lattice_points(mod, K, 1)
        for b in bs:
            # j is roughly uniform on [0, b): mean of s0 sqrt(j var) + s1 j var / 2
            jm = min(b, nT)
            est_j = beta * W * (s0 * math.sqrt(var_l * jm) * (2.0 / 3.0) + s1 * var_l * jm / 4)
            nblocks = (int(mod.Ts[-1]) // b) - (T0 // b) + 1
            pts = pts1 + int(2 * K * (math.sqrt(2 * 41.4 * var_l * b) + 1))
            if nblocks * pts > MAX_TABLE_POINTS:
                continue
            todo = max(0, nblocks - mod.cached_count(("lattice", b, K)))
            cost = todo * (pts * COST_POINT + COST_TABLE)
            cands.append((cost, est_i + est_j, Plan("lattice", b=b, K=K)))
        if est_i <= 0.05 * goal_min or pts1 * COST_POINT > PLAN_TIERS[-1][1]:
            break
    for fac, budget in PLAN_TIERS:
        goal_abs = min(goal_rel * fac, 0.5 * rel_tol) * E_ref
        ok = [c for c in cands if c[1] <= 0.5 * goal_abs and c[0] <= budget]
        if ok:
            return min(ok, key=lambda c: c[0])[2]
    if not cands:
        # every exact, zsplit and lattice plan needs more table points than MAX_TABLE_POINTS
        # (very large n at large eps0 and small eps): refuse, never guess
        raise NumericalError("the structured engine has no evaluation plan within its table "
                             f"limit ({MAX_TABLE_POINTS:,} points) for this question; "
                             "method='auto' or method='cf' answers it")
    return min(cands, key=lambda c: (c[1], c[0]))[2]

