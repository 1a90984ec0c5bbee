"""The front door: certified ``delta``, ``eps`` and ``eps0`` of a shuffled local randomizer.

>>> import amp
>>> m = amp.KRR(4.0, k=10)
>>> r = amp.epsilon(m, 10_000, 1e-6)          # Theorem 4 (blanket) upper bound
>>> r.value == r.upper and r.rel_width <= 1e-4
True

Every function returns a :class:`~amp.core.result.Bound` (a list of them for a sequence of
inputs): the exact value of the selected bound lies in ``bound.bracket`` and ``bound.value`` is
the end to use. ``bound="upper"`` (default) is the optimal decomposition bound of Theorems 3-4,
``bound="lower"`` the explicit dataset pair of Theorem 5 (see :mod:`amp.profile`). Datasets are
neighbours when one user's input is replaced (both directions are covered).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import DEFAULT_REL_TOL, STRUCTURED_MIN_REL_TOL
from amp.inversion import (DEFAULT_EPS_REL_TOL, Progress, TOL_LOOSE, crossing,
                         epsilon_of_curve, estimate_epsilon)
from amp.mechanisms.table1 import Mechanism
from amp.profile import PrivacyProfile, check_bound, check_mechanism

__all__ = ["profile", "delta", "epsilon", "epsilon_for", "epsilon_estimate", "calibrate_eps0",
           "DEFAULT_REL_TOL", "DEFAULT_EPS_REL_TOL"]


def _rel_tol(value: object, name: str = "rel_tol") -> float:
    return V.positive_float(name, value, upper=0.5)


def profile(mechanism: Mechanism, n: int, *, bound: str = "upper",
            method: str = "auto") -> PrivacyProfile:
    """The certified privacy profile ``delta(eps)`` of ``mechanism`` for ``n`` users
    (:class:`~amp.profile.PrivacyProfile`): build once, then ask :func:`epsilon_for` or
    ``profile.delta(eps)`` many times; the eps-free tables are reused."""
    return PrivacyProfile(mechanism, n, bound=bound, method=method)


def delta(mechanism: Mechanism, n: int, eps: float | Iterable[float], *, bound: str = "upper",
          rel_tol: float = DEFAULT_REL_TOL, method: str = "auto") -> Bound | list[Bound]:
    """Certified ``delta(eps)`` of ``mechanism`` shuffled among ``n`` users.

    ``bound="upper"``: Theorem 4's blanket bound, max over pair laws (value = upper end).
    ``bound="lower"``: Theorem 5's value, max over third inputs (value = lower end).
    ``rel_tol``: largest relative width of the bracket. A sequence of ``eps`` gives a list.
    """
    check_mechanism(mechanism)
    check_bound(bound)
    rel_tol = _rel_tol(rel_tol)
    eps_hint = None if np.ndim(eps) else V.positive_float("eps", eps, allow_zero=True)
    prof = PrivacyProfile(mechanism, n, bound=bound, method=method, eps_hint=eps_hint)
    return prof.delta(eps, rel_tol=rel_tol)


def epsilon(mechanism: Mechanism, n: int, delta: float, *, bound: str = "upper",
            rel_tol: float = DEFAULT_EPS_REL_TOL, method: str = "auto",
            progress: Progress | None = None) -> Bound:
    """Certified ``eps(delta)``: the smallest eps whose selected bound is ``<= delta``.

    ``bound="upper"`` (default): ``value`` (the bracket's upper end) is a guaranteed-valid eps
    for the shuffled mechanism. ``bound="lower"``: ``value`` (the lower end) is certified below
    the mechanism's true eps. The bracket is at most ``rel_tol`` wide (relative; default
    ``1e-4``); :class:`~amp.core.errors.NumericalError` says why when that cannot be reached.
    """
    check_mechanism(mechanism)
    check_bound(bound)
    V.probability_open("delta", delta)
    return epsilon_for(PrivacyProfile(mechanism, n, bound=bound, method=method), delta,
                       rel_tol=rel_tol, progress=progress)


def epsilon_for(prof: PrivacyProfile, delta: float, *, rel_tol: float = DEFAULT_EPS_REL_TOL,
                progress: Progress | None = None) -> Bound:
    """Certified ``eps(delta)`` of a :class:`~amp.profile.PrivacyProfile` (reusing its tables).

    The profile is the maximum over its laws, so its ``eps(delta)`` is the maximum of the laws'
    thresholds: each law is searched (:func:`amp.inversion.crossing`) and the brackets' ends are
    combined by ``max``.
    """
    if not isinstance(prof, PrivacyProfile):
        raise ParameterError(f"prof must be a PrivacyProfile, got {type(prof).__name__}")
    delta_ = V.probability_open("delta", delta)
    rel_tol = _rel_tol(rel_tol)
    parts = [epsilon_of_curve(c, delta_, c.max_eps, rel_tol=rel_tol, bound=prof.bound,
                              n=prof.n, mechanism=c.law.label, progress=progress)
             for c in prof.curves]
    lo = max(p.lower for p in parts)
    hi = max(p.upper for p in parts)
    methods = ",".join(sorted({m for p in parts for m in p.method.split(",") if m}))
    return Bound("eps", lo, hi, prof.bound, methods, prof.n, prof.description,
                 {"delta": delta_}, parts=tuple(parts),
                 details={"evaluations": sum(p.details["evaluations"] for p in parts)})


def epsilon_estimate(mechanism: Mechanism, n: int, delta: float, *,
                     bound: str = "upper") -> float:
    """Uncertified saddle-point estimate of ``eps(delta)`` (max over the profile's laws): fast,
    for quick figures; NOT a privacy guarantee (use :func:`epsilon` for that)."""
    prof = PrivacyProfile(mechanism, n, bound=bound)
    delta_ = V.probability_open("delta", delta)
    return max(estimate_epsilon(c, delta_, c.max_eps) for c in prof.curves)


class _FamilyCurve:
    """``eps0 -> delta(eps)`` of ``make(eps0)`` for ``n`` users (a curve for the search)."""

    def __init__(self, make: Callable[[float], Mechanism], n: int, eps: float, method: str):
        self.make, self.n, self.eps, self.method = make, n, eps, method
        self.used: set[str] = set()

    def delta_for_search(self, eps0: float, tol: float, abs_tol: float) -> Bound:
        prof = PrivacyProfile(check_mechanism(self.make(eps0)), self.n, method=self.method)
        res = [c.delta_for_search(self.eps, max(tol, STRUCTURED_MIN_REL_TOL), abs_tol)
               for c in prof.curves]
        self.used.update(r.method for r in res)
        floor = max(float(r.details.get("floor", 0.0)) for r in res)
        return Bound("delta", min(max(r.lower for r in res), 1.0),
                     min(max(r.upper for r in res), 1.0), "upper", ",".join(sorted(self.used)),
                     self.n, inputs={"eps": self.eps}, details={"floor": floor})

    def estimate_log_delta(self, eps0: float) -> float:
        return math.nan


def calibrate_eps0(make: Callable[[float], Mechanism], n: int, eps: float, delta: float, *,
                   rel_tol: float = DEFAULT_EPS_REL_TOL, eps0_max: float = V.MAX_EPS0,
                   progress: Progress | None = None, method: str = "auto") -> Bound:
    """Largest local ``eps0`` whose certified shuffled guarantee meets ``(eps, delta)``.

    ``make(eps0)`` builds the mechanism (e.g. ``lambda e0: amp.KRR(e0, k=10)``). The value is
    certified: ``delta_upper(eps) <= delta`` for ``make(value)`` (Theorem 4). The bracket
    ``[value, upper]`` has ``delta_lower(eps) > delta`` at ``upper`` (or ``upper = eps0_max``),
    so it encloses the exact threshold of the blanket bound when that is monotone in ``eps0``
    (observed for every mechanism of the paper, not proven; the value is certified
    regardless). Returns a :class:`~amp.core.result.Bound` of quantity ``"eps0"``.
    """
    n = V.int_at_least("n", n, 1)
    eps = V.positive_float("eps", eps)
    delta_ = V.probability_open("delta", delta)
    rel_tol = _rel_tol(rel_tol)
    eps0_max = V.eps0_value(eps0_max, "eps0_max")
    if not callable(make):
        raise ParameterError(f"make must be a callable eps0 -> mechanism, got "
                             f"{type(make).__name__}")
    curve = _FamilyCurve(make, n, eps, method)

    def status(e0: float) -> int:
        r = curve.delta_for_search(e0, TOL_LOOSE, 1e-3 * delta_)
        if progress is not None:
            progress(f"eps0={e0:.6g}: delta in [{r.lower:.4g}, {r.upper:.4g}]")
        return 1 if r.upper <= delta_ else (-1 if r.lower > delta_ else 0)

    safe = min(eps, eps0_max)     # eps0 <= eps gives delta = 0 (G <= 0)
    unsafe, known_bad = None, False
    e0 = max(2 * eps, eps + 0.1)
    while unsafe is None:
        e0 = min(e0, eps0_max)
        s = status(e0)
        if s == 1 and e0 == eps0_max:       # the cap itself is certified: the answer
            return _eps0_bound(eps0_max, eps0_max, make, n, eps, delta_, curve)
        if s == 1:
            safe, e0 = e0, e0 * 2
        else:   # certified bad (s = -1), or ambiguous: the search below decides
            unsafe, known_bad = e0, s == -1
    try:
        c = crossing(curve, delta_, safe, unsafe, decreasing=False, rel_tol=rel_tol,
                     good_end_known=True, bad_end_known=known_bad, start=0.5 * (safe + unsafe),
                     progress=progress, name="eps0")
    except NumericalError as exc:
        raise NumericalError(f"eps0 calibration: {exc}") from None
    return _eps0_bound(c.lo, c.hi, make, n, eps, delta_, curve)


def _eps0_bound(lo: float, hi: float, make, n, eps, delta_, curve) -> Bound:
    return Bound("eps0", lo, hi, "upper", "search:" + ",".join(sorted(curve.used)),
                 n, check_mechanism(make(lo)).describe(), {"eps": eps, "delta": delta_})
