"""The public entry of the structured path: :class:`StructuredBackend`, one per ``(law, n)``.

Implements the outer loop of the Algorithm of :mod:`amp.backends.structured`: the quick answers
(``S <= 0`` surely; ``eps = log E`` within rounding; a Chernoff bound below ``abs_tol``), the
choice of the tail level ``tau`` of the ``T`` window and of the nuisance windows from an
uncertified Bahadur-Rao estimate (so that the neglected masses stay ``~1e-3 * goal`` below
``E[S_+]``), one evaluation (:mod:`.model`, :mod:`.planner`, :mod:`.evaluator`), a deeper
window when the tails still dominate the width, and the final width check: a
:class:`~amp.core.errors.NumericalError` when the certified relative width exceeds ``rel_tol``
above the atoms' floating-point floor (:func:`.shape.floor_width`) and ``abs_tol``.

A backend owns its eps-free count model (:class:`.model.CountModel`: windows, weights, nuisance
tables), kept at the deepest tail level asked so far, so that evaluations at many ``eps`` (a
grid, or the ``eps(delta)`` search of :mod:`amp.inversion`) reuse the tables.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import TINY, U
from amp.core.result import Bound
from amp.core.saddle import saddle_log_delta
from amp.core.tails import chernoff_upper
from amp.backends.structured.evaluator import Evaluator, assemble, evaluate
from amp.backends.structured.model import CountModel
from amp.backends.structured.nuisance import LOG_TAU_V
from amp.backends.structured.planner import choose_plan
from amp.backends.structured.shape import (StructuredShape, atom_noise, floor_width,
                                        structured_shape)
from amp.mechanisms.gparv import GPARV

__all__ = ["StructuredBackend", "delta_bracket_structured", "bahadur_rao", "DEFAULT_ABS_TOL",
           "WIDTH_GOAL"]

DEFAULT_ABS_TOL = 1e-16                # brackets with upper - lower below this are accepted
WIDTH_GOAL = 1e-6                      # aimed relative width (never above rel_tol)
SKIP_REL = 1e-13                       # ends of the T window bounded (not evaluated) up to
                                       # about this times E[S_+] (Evaluator._core)
METHOD = "structured"


def bahadur_rao(shape: StructuredShape, n: int, eps: float) -> float:
    """Uncertified estimate of ``delta(eps)`` (Bahadur-Rao), used only to size windows and to
    start searches."""
    g = np.append(atom_noise(shape, eps)[0], 0.0)
    p = np.array([shape.pO, shape.pX, shape.pY, shape.pZ, shape.pF])
    keep = p > 0
    g, p = g[keep], p[keep]
    if g.max() <= 0:
        return 0.0
    if float(np.dot(p, g)) >= 0:
        return float(np.dot(p, np.maximum(g, 0)))
    first = float(np.dot(p, np.maximum(g, 0)))      # delta <= E[G_+] always
    try:
        logd = saddle_log_delta(g, p, n, rtol=1e-12)
    except (ValueError, ArithmeticError):           # only a hint: fall back to E[G_+]
        return first
    return min(first, math.exp(max(logd, -745.0)))


class StructuredBackend:
    """Certified ``delta(eps) = E[(G_1 + ... + G_n)_+] / n`` (Theorem 4) for one law with the
    Table 1 structure (:func:`.shape.supports`) and one ``n``.

    Parameters
    ----------
    law : GPARV
        A law whose blanket atoms are ``(1, 1)``, ``(E, 1)``, ``(1, E)``, ``(E, E)`` or
        ``(0, 0)`` for one ``E > 1``.
    n : int
        Number of users (``>= 1``).

    Raises
    ------
    ParameterError
        When ``law`` is not a :class:`~amp.mechanisms.gparv.GPARV`, ``n < 1``, or the law does
        not have the structured shape.
    """

    def __init__(self, law: GPARV, n: int):
        if not isinstance(law, GPARV):
            raise ParameterError(f"law must be a GPARV, got {type(law).__name__}")
        n = V.users(n)
        shape = structured_shape(law)
        if shape is None:
            raise ParameterError("law does not have the structured shape (atoms (1,1), (E,1), "
                                 "(1,E), (E,E), (0,0)); use amp.backends.dispatch.delta_bracket")
        self._law = law
        self._n = n
        self._shape = shape
        self._model: CountModel | None = None

    # ------------------------------------------------------------------ properties
    @property
    def law(self) -> GPARV:
        """The GPARV law."""
        return self._law

    @property
    def n(self) -> int:
        """The number of users."""
        return self._n

    @property
    def shape(self) -> StructuredShape:
        """The :class:`~amp.backends.structured.shape.StructuredShape` of the law."""
        return self._shape

    @property
    def max_eps(self) -> float:
        """``log E``: every atom is ``<= 0`` for ``eps >= log E``, so ``delta(eps) = 0`` there (up
        to the floating-point floor of the atoms).  ``0`` when no ``(E, 1)`` atom has mass (then
        ``S <= 0`` at every ``eps >= 0``)."""
        return math.log(self._shape.E) if self._shape.pX > 0 else 0.0

    # ------------------------------------------------------------------ the count model
    def count_model(self, log_tau: float) -> CountModel:
        """The eps-free count model with tail level at most ``log_tau`` (the deepest one built
        so far is kept and reused; a new one is built only when a deeper level is asked)."""
        mod = self._model
        if mod is None or mod.log_tau > log_tau + 1e-9:
            mod = CountModel(self._shape, self._n, log_tau)
            self._model = mod
        return mod

    # ------------------------------------------------------------------ questions
    def estimate_log_delta(self, eps: float) -> float:
        """``log`` of the uncertified Bahadur-Rao estimate of ``delta(eps)`` (``-inf`` when the
        estimate is 0); a starting point for searches, never a bound."""
        eps = V.positive_float("eps", eps, allow_zero=True)
        est = bahadur_rao(self._shape, self._n, eps)
        return math.log(est) if est > 0 else -math.inf

    def delta(self, eps: float, *, rel_tol: float = 2e-3, goal: float | None = None,
              abs_tol: float = DEFAULT_ABS_TOL, chernoff: bool = True) -> Bound:
        """Certified bracket of ``delta(eps)``.

        Parameters
        ----------
        eps : float
            Central ``eps >= 0``.
        rel_tol : float
            Largest accepted relative width ``(upper - lower) / upper`` (``<= 0.5``).
        goal : float, optional
            Relative width aimed at (``min(goal, rel_tol)``); default ``min(rel_tol, 1e-6)``.
        abs_tol : float
            Brackets with ``upper - lower <= abs_tol`` (plus the floating-point floor) are
            accepted whatever their relative width; a Chernoff bound ``<= abs_tol`` settles
            the question without tables (deltas far below any practical target).
        chernoff : bool
            ``False`` skips that Chernoff shortcut (when the caller already tried it).

        Returns
        -------
        Bound
            ``quantity="delta"``, ``bound="upper"``, ``method="structured"``; ``details`` holds
            the plan, the windows, the error terms (per user), the Bahadur-Rao estimate and
            ``floor``, the absolute width the atoms' floating-point floor alone adds.  Both ends
            include that floor: the float atoms ``E``, ``e^eps`` are within
            ``16 u (a + e^eps b)`` of the exact ones (:func:`amp.core.floats.atom_floor`).

        Raises
        ------
        NumericalError
            When the relative width cannot be brought below ``rel_tol``.
        """
        eps = V.positive_float("eps", eps, allow_zero=True)
        rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
        abs_tol = V.positive_float("abs_tol", abs_tol, allow_zero=True)
        if goal is not None:
            goal = V.positive_float("goal", goal)
        lower, upper, details = self._bracket(eps, rel_tol, goal, abs_tol, chernoff, None)
        details["floor"] = floor_width(self._shape, eps, upper, self._n)
        return Bound(quantity="delta", lower=lower, upper=upper, bound="upper", method=METHOD,
                     n=self._n, mechanism=self._law.label, inputs={"eps": eps},
                     details=details)

    # ------------------------------------------------------------------ one evaluation
    def _zero(self, eps: float, why: str, noise_level: float = 0.0
              ) -> tuple[float, float, dict]:
        shape = self._shape
        dev = shape.dev_a + math.exp(eps) * shape.dev_b + noise_level
        return 0.0, dev, {"why": why}

    def _bracket(self, eps: float, rel_tol: float, goal: float | None, abs_tol: float,
                 chernoff: bool, hint: float | None) -> tuple[float, float, dict]:
        """``(lower, upper, details)`` of ``delta(eps)``; ``hint`` (an estimate of ``delta``)
        is given only by the retry with deeper windows."""
        shape, n = self._shape, self._n
        E = shape.E
        w = math.exp(eps)                       # within 1 ulp of e^eps
        g4, noise4 = atom_noise(shape, eps)
        p4 = np.array([shape.pO, shape.pX, shape.pY, shape.pZ])
        live = p4 > 0
        if np.all(g4[live] + noise4[live] <= 0):
            return self._zero(eps, "S <= 0 surely")
        if shape.pX <= 0 or np.all(g4[live] <= noise4[live]):
            # every positive atom is rounding noise around 0 (eps = log E within rounding):
            # 0 <= delta <= E[G_+] <= sum p noise over the atoms that may be positive
            lvl = float(np.dot(p4[live], noise4[live] * (g4[live] > -noise4[live])))
            return self._zero(eps, "eps = log E within rounding", lvl)
        if chernoff and abs_tol > 0 and n > 1 and hint is None:
            # a delta far below any practical target: the Chernoff bound settles it cheaply
            ga = np.append(g4, 0.0)
            pa = np.array([shape.pO, shape.pX, shape.pY, shape.pZ, shape.pF])
            # every atom's noise is <= 16 u (1 + w) E max(lx, ly, sv)
            ch = chernoff_upper(ga, pa, n, np.full(5, 16 * U * (1 + w) * E
                                                   * max(shape.lx, shape.ly, shape.sv)))
            ch += shape.dev_a + w * shape.dev_b
            if ch <= abs_tol:
                return 0.0, ch, {"why": "Chernoff bound below abs_tol"}
        est = hint if hint is not None else bahadur_rao(shape, n, eps)
        # tail level of the T window and of the nuisance windows: the neglected masses
        # (E - w) E[T; outside] and beta V tails stay ~1e-3 * goal below the estimated E[S_+]
        d = E - 1.0
        pT = shape.pX + shape.pY
        goal = min(rel_tol, WIDTH_GOAL) if goal is None else min(goal, rel_tol)
        nu_mu = shape.sv * (shape.pO + E * shape.pZ) / max(1.0 - pT, 1e-300)
        scale = max(d * pT * max(shape.lx, shape.ly), math.expm1(eps) * nu_mu, 1e-300)
        log_tau = math.log(max(max(est, 1e-300) * 1e-3 * goal / scale, 1e-300))
        log_tau = min(max(log_tau, -700.0), LOG_TAU_V)
        mod = self.count_model(log_tau)
        # the ends of the T window that cannot matter at this eps are bounded, not evaluated
        ev = Evaluator(mod, eps, SKIP_REL)
        lin, err, lt, zt = ev.sums()
        E_ref = max(lin - err, 0.5 * est * n, TINY)
        plan = choose_plan(mod, ev, goal, E_ref, rel_tol)
        parts = evaluate(mod, ev, plan)
        lower, upper = assemble(parts, n, shape, eps)
        # the T window must not dominate the width
        tails = parts.T_tail + parts.lin_tail + parts.zero_tail
        # (tails far below the atoms' floating-point floor cannot matter)
        floor_n = floor_width(shape, eps, 0.0, n) * n
        if (tails > 1e-2 * goal * max(lower * n, TINY) and tails > 1e-3 * floor_n
                and mod.log_tau > -690):
            mod2 = self.count_model(max(mod.log_tau - 30.0, -700.0))
            if mod2 is not mod:
                return self._bracket(eps, rel_tol, goal, abs_tol, chernoff,
                                     hint=max(lower, TINY) if lower > 0 else est * 1e-6)
        width = (upper - lower) / upper if upper > 0 else 0.0
        # the atoms' floating-point slack (both ends) is a floor no computation can lower: the
        # width check applies to what lies above it
        # (accepted up to the untilted floor, as before the tilted one: a bracket this narrow
        # is never refused, though the tilted floor usually lets the plan do far better)
        if width > rel_tol and upper - lower > abs_tol + 1.01 * floor_width(shape, eps, upper):
            raise NumericalError(f"structured delta at eps={eps:g}, n={n}: certified relative "
                                 f"width {width:.3g} exceeds rel_tol={rel_tol:g}")
        details = {"plan": (plan.mode, plan.b, plan.K), "T_window": (mod.T_lo, mod.T_hi),
                   "band_elems": parts.band_elems, "table_points": parts.table_points,
                   "gap_j": parts.gap_j / n, "gap_int": parts.gap_i / n,
                   "T_tail": parts.T_tail / n, "skipped": parts.skip / n,
                   "T_evaluated": int(ev.core.sum()), "lin_err": parts.lin_err / n,
                   "tails": (parts.lin_tail + parts.zero_tail) / n, "estimate_BR": est}
        return lower, upper, details


def delta_bracket_structured(law: GPARV, n: int, eps: float | Iterable[float], *,
                             rel_tol: float = 2e-3, abs_tol: float = DEFAULT_ABS_TOL,
                             ) -> Bound | list[Bound]:
    """Certified ``[lower, upper]`` of ``delta(eps) = E[(G_1 + ... + G_n)_+] / n`` (Theorem 4)
    for a law with the Table 1 structure (see :func:`.shape.supports`).

    A thin wrapper over :meth:`StructuredBackend.delta`.  The relative width aimed at is
    ``min(rel_tol, 1e-6)``; a width above ``rel_tol`` raises
    :class:`~amp.core.errors.NumericalError` unless ``upper - lower <= abs_tol`` (deltas far
    below any practical target) plus the floating-point floor: the float atoms ``E``, ``e^eps``
    are within ``16 u (a + e^eps b)`` of the exact ones (:func:`amp.core.floats.atom_floor`:
    about ``64 u E[G_+]`` plus a relative ``32 u``, plus the noise of atoms near 0 such as
    ``E - e^eps`` at ``eps ~ eps0``); both ends always include it.  An iterable ``eps`` returns
    a list (in the input's order) and reuses the eps-free count machinery (windows, nuisance
    tables) of one backend.
    """
    backend = StructuredBackend(law, n)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    abs_tol = V.positive_float("abs_tol", abs_tol, allow_zero=True)
    if np.ndim(eps) == 0:
        return backend.delta(eps, rel_tol=rel_tol, abs_tol=abs_tol)
    return [backend.delta(float(e), rel_tol=rel_tol, abs_tol=abs_tol)
            for e in np.asarray(list(eps), dtype=float)]
