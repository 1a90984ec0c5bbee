"""Inverse questions on top of a certified delta engine.

* :func:`epsilon_bracket`: the smallest ``eps`` with ``delta(eps) <= target`` for a law, as a
  certified bracket ``[lower, upper]``: ``delta_lower(lower) > target`` proves the exact
  ``eps(target) > lower``; ``delta_upper(upper) <= target`` proves ``upper`` is valid.
* :func:`calibrate_eps0`: the largest local ``eps0`` of a mechanism family whose certified
  shuffled guarantee meets a target ``(eps, delta)`` for ``n`` users.

Both accept any callable ``bracket(eps) -> (lower, upper)``-like engine through the
``evaluate`` argument, so the same search serves the blanket bound, Theorem 5's lower bound and
the baselines.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy import optimize

from amp.core import validate as V
from amp.delta.dispatch import DEFAULT_REL_TOL, DeltaResult, delta_bracket
from amp.core.errors import NumericalError, ParameterError
from amp.mechanisms.gparv import GPARV

__all__ = ["EpsilonResult", "epsilon_bracket", "approx_epsilon", "Progress"]

#: Default relative width of a certified eps bracket.
DEFAULT_EPS_REL_TOL = 1e-3

Progress = Callable[[str], None]


@dataclass(frozen=True)
class EpsilonResult:
    """Certified bracket of ``eps(delta)``: the exact value lies in ``[lower, upper]``.

    ``value`` is ``upper`` (a valid eps for the target delta)."""

    delta: float
    n: int
    lower: float
    upper: float
    evaluations: int
    method: str
    label: str = ""
    history: tuple = field(default=(), repr=False, compare=False)

    @property
    def value(self) -> float:
        """The certified upper end: a guaranteed-valid eps."""
        return self.upper

    @property
    def rel_width(self) -> float:
        """``(upper - lower) / upper`` (0 when both are 0)."""
        return 0.0 if self.upper == 0 else (self.upper - self.lower) / self.upper


def saddle_log_delta(g: np.ndarray, p: np.ndarray, n: int, rtol: float = 1e-10) -> float:
    """Uncertified Bahadur-Rao estimate of ``log(E[(G_1 + ... + G_n)_+] / n)`` for atoms ``g``
    (probabilities ``p > 0``) with ``E[G] < 0 < max g``:
    ``M(theta)^n / (theta^2 sqrt(2 pi n) sigma_theta n)`` at the saddle point ``theta``.
    Raises ``ValueError`` if the saddle point cannot be bracketed."""
    gmax = g.max()
    lp = np.log(p)

    def f(th):
        return float(np.dot(np.exp(lp + th * (g - gmax)), g))
    th_hi = 1.0 / gmax
    while f(th_hi) < 0:
        th_hi *= 2
        if th_hi > 1e300:
            raise ValueError("saddle point out of range")
    th = optimize.brentq(f, 0, th_hi, rtol=rtol)
    z = lp + th * g
    zm = z.max()
    logM = zm + math.log(np.exp(z - zm).sum())
    q = np.exp(z - logM)
    var = float(np.dot(q, g * g) - np.dot(q, g) ** 2)
    return n * logM - math.log(th * th * math.sqrt(2 * math.pi * n * max(var, 1e-300))) \
        - math.log(n)


def approx_epsilon(law: GPARV, n: int, delta: float) -> float:
    """Uncertified saddle-point (Bahadur-Rao) estimate of ``eps(delta)``; a starting point.

    ``E[S_+] ~ M(theta)^n / (theta^2 sqrt(2 pi n) sigma_theta)`` at the saddle point theta.
    """
    hi = law.max_eps()
    if not math.isfinite(hi):
        hi = 50.0

    def log_est(eps: float) -> float:
        g, p = law.atoms(eps)
        if g.max() <= 0:
            return -math.inf
        if float(np.dot(g, p)) >= -1e-9 * float(np.dot(p, np.abs(g))):
            sd = math.sqrt(float(np.dot(p, g * g)))
            return math.log(sd / math.sqrt(2 * math.pi * n))
        return saddle_log_delta(g, p, n)

    target = math.log(delta)
    if log_est(0.0) <= target:
        return 0.0
    lo, hi_e = 0.0, hi * (1 - 1e-9)
    if log_est(hi_e) > target:
        return hi_e
    for _ in range(100):
        mid = 0.5 * (lo + hi_e)
        if log_est(mid) > target:
            lo = mid
        else:
            hi_e = mid
        if hi_e - lo < 1e-6 * hi_e:
            break
    return hi_e


def epsilon_bracket(law: GPARV, n: int, delta: float, *, rel_tol: float = DEFAULT_EPS_REL_TOL,
                    delta_rel_tol: float | None = None, method: str = "auto",
                    evaluate: Callable[[float, float], DeltaResult] | None = None,
                    progress: Progress | None = None, max_evaluations: int = 60
                    ) -> EpsilonResult:
    """Certified bracket of the smallest ``eps`` with ``delta(eps) <= delta`` for one law.

    Parameters
    ----------
    law : GPARV
        The law (blanket GPARV of a pair, or Theorem 5's variable).
    n, delta :
        Number of users and target ``delta`` in (0, 1).
    rel_tol : float
        Stop when ``(upper - lower) <= rel_tol * upper``.
    delta_rel_tol : float, optional
        Relative width asked of each delta bracket; by default derived from ``rel_tol`` and the
        observed slope of ``log delta`` in ``log eps``.
    evaluate : callable, optional
        ``evaluate(eps, delta_rel_tol) -> DeltaResult``; defaults to
        :func:`amp.delta.dispatch.delta_bracket` on ``law``.
    progress : callable, optional
        Receives one line of text per evaluation.

    Raises
    ------
    NumericalError
        When ``rel_tol`` cannot be reached (the delta engine cannot resolve the target).
    """
    n = V.int_at_least("n", n, 1)
    delta = V.probability_open("delta", delta)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    if evaluate is None and method in ("auto", "structured") and n > 1:
        from amp.delta.structured import core as _st     # lazy: amp.delta.structured imports amp.delta.dispatch
        if _st.supports(law):
            t0 = time.perf_counter()
            hist_s: list = []
            try:
                lo_s, hi_s = _st.epsilon_bracket_structured(law, n, delta, rel_tol=rel_tol,
                                                            history=hist_s)
            except (NumericalError, ArithmeticError, ValueError, MemoryError):
                if method == "structured":
                    raise
            else:
                if progress is not None:
                    progress(f"structured eps search: [{lo_s:.6g}, {hi_s:.6g}] "
                             f"({len(hist_s)} evaluations, {time.perf_counter() - t0:.1f} s)")
                return EpsilonResult(delta, n, lo_s, hi_s, len(hist_s), "structured",
                                     law.label, tuple(hist_s))
        elif method == "structured":
            raise ParameterError("method='structured' needs a law with the Table 1 shape")
    if evaluate is None:
        def evaluate(e: float, tol: float) -> DeltaResult:
            # deciding "delta <= target?" needs no accuracy far below the target
            return delta_bracket(law, n, e, rel_tol=tol, method=method,
                                 abs_tol=0.1 * tol * delta)
    hi = law.max_eps()
    if not math.isfinite(hi):
        raise ParameterError("the law has no finite eps with delta = 0; cannot search eps")
    lo = 0.0
    hist: list[tuple[float, float, float]] = []
    used_method = ""
    slope = 5.0
    dtol = delta_rel_tol if delta_rel_tol is not None else \
        min(0.05, max(DEFAULT_REL_TOL / 4, 0.3 * rel_tol * slope))
    t0 = time.perf_counter()

    def run(e: float) -> DeltaResult:
        nonlocal used_method
        # the first evaluations only locate the crossing: a loose bracket is enough
        tol = max(dtol, 0.05) if len(hist) < 3 and delta_rel_tol is None else dtol
        while True:
            try:
                r = evaluate(e, tol)
                break
            except NumericalError:
                if tol >= 0.2:
                    raise
                tol = min(0.2, tol * 4)
        used_method = r.method
        hist.append((e, r.lower, r.upper))
        if progress is not None:
            progress(f"eps={e:.6g}: delta in [{r.lower:.4g}, {r.upper:.4g}] "
                     f"({len(hist)} evaluations, {time.perf_counter() - t0:.1f} s)")
        return r

    # eps = 0 suffices? (a loose bracket is enough to decide; failure just means "no")
    try:
        r0 = evaluate(0.0, 0.05)
        hist.append((0.0, r0.lower, r0.upper))
        if r0.upper <= delta:
            return EpsilonResult(delta, n, 0.0, 0.0, len(hist), r0.method, law.label,
                                 tuple(hist))
    except NumericalError:
        pass
    try:
        guess = approx_epsilon(law, n, delta)
    except (ArithmeticError, ValueError):   # only a starting point: fall back to bisection
        guess = 0.5 * hi
    e = min(max(guess, 1e-12 * hi), hi * (1 - 1e-12))
    ambiguous = 0
    while hi - lo > rel_tol * hi:
        if len(hist) >= max_evaluations:
            raise NumericalError(f"eps search did not converge in {max_evaluations} "
                                 f"evaluations; bracket [{lo:.6g}, {hi:.6g}]")
        r = run(e)
        if r.upper <= delta:
            hi = min(hi, e)
        elif r.lower > delta:
            lo = max(lo, e)
        else:
            ambiguous += 1
            if ambiguous > 8:
                raise NumericalError(
                    f"cannot resolve eps to relative width {rel_tol:g}: delta brackets at "
                    f"eps={e:.6g} contain the target; certified bracket so far "
                    f"[{lo:.6g}, {hi:.6g}]"
                    + (" (the target is near the floating-point floor of the atoms, about "
                       "1e-14: ask for a larger rel_tol or a larger delta)"
                       if r.upper - r.lower < 1e-12 else ""))
            dtol = max(dtol / 4, 1e-6)
        # slope of log delta vs log eps from the two most recent distinct points
        pts = [(x, math.sqrt(a * b) if a > 0 else b) for x, a, b in hist if x > 0 and b > 0]
        if len(pts) >= 2:
            (x1, y1), (x2, y2) = pts[-2], pts[-1]
            if x1 != x2 and y1 > 0 and y2 > 0 and y1 != y2:
                s = (math.log(y2) - math.log(y1)) / (math.log(x2) - math.log(x1))
                if s < 0:
                    slope = -s
                    if delta_rel_tol is None and ambiguous == 0:
                        dtol = min(0.05, max(DEFAULT_REL_TOL / 4, 0.3 * rel_tol * slope))
        e = _next_guess(pts, delta, lo, hi, rel_tol)
        if ambiguous and hist and abs(e - hist[-1][0]) < 0.05 * rel_tol * hi:
            # the target sits inside the last bracket: step off it, alternating sides
            e = hist[-1][0] + (0.3 if ambiguous % 2 else -0.3) * rel_tol * hi
            e = min(max(e, lo + 0.01 * (hi - lo)), hi - 0.01 * (hi - lo))
    return EpsilonResult(delta, n, lo, hi, len(hist), used_method, law.label, tuple(hist))


def _next_guess(pts: Sequence[tuple[float, float]], delta: float, lo: float, hi: float,
                rel_tol: float) -> float:
    """Secant step on ``log delta`` vs ``eps`` aimed just inside the side not yet certified."""
    width = hi - lo
    fallback = 0.5 * (lo + hi)
    if len(pts) < 2 or width <= 0:
        return fallback
    # the two points closest to the target in log delta
    tgt = math.log(delta)
    near = sorted(pts, key=lambda t: abs(math.log(t[1]) - tgt))[:2]
    (x1, y1), (x2, y2) = near
    if x1 == x2 or y1 == y2:
        return fallback
    l1, l2 = math.log(y1), math.log(y2)
    x = x1 + (tgt - l1) * (x2 - x1) / (l2 - l1)
    # aim slightly past the crossing towards the side that still needs proof
    step = 0.3 * rel_tol * hi
    last_x, last_y = pts[-1]
    x = x + step if last_y > delta else x - step
    margin = 0.02 * width
    if not (lo + margin < x < hi - margin):
        x = min(max(x, lo + margin), hi - margin)
    if not (lo < x < hi):
        return fallback
    return x
