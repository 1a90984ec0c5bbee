"""Shared pieces of the baseline bounds: input handling, the result builder and the certified
``eps(delta)`` inversion (through :func:`amp.inversion.crossing`).

Result convention
-----------------
Every baseline returns :class:`amp.core.result.Bound` objects: one for a scalar input, a
``list`` (in the input's order, flattened) for an array input. ``bound`` is the baseline's
name (``"clone"``, ``"clone-closed"``, ``"hoeffding"``, ``"bennett"``, ``"stronger-clone"``,
``"general-clone"``), ``value`` is the upper end (the number a user should use), and
``[lower, upper]`` encloses the exact value of *that bound* (e.g. the exact hockey-stick
divergence of the clone reduction pair); for closed forms ``lower == upper``.
``certified=False`` marks numbers that are not valid guarantees (the flawed stronger clone, a
closed form outside its regime, the authors'-code Bennett expression). The source, formula
variant and caveats are in ``details["note"]``.
"""

from __future__ import annotations

import numbers
from typing import Callable, Sequence

import numpy as np

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound, Quantity
from amp.inversion import FunctionCurve, crossing

__all__ = ["eps_array", "delta_targets", "eps0_of", "results", "invert_delta", "describe_source",
           "FLOAT_REL", "MAX_EVALUATIONS", "MAX_EVALUATIONS_CLOSED"]

#: Relative floating-point allowance used for numerically evaluated (non-closed-form) bounds,
#: added on the safe side of every bracket; for scipy's binomial ``pmf``/``sf`` (Boost) it is
#: the floor of :func:`amp.backends.structured.binomial.eta`, whose error grows with
#: ``|k - n p|`` (``1.5e-11`` observed at ``n = 10^6``, ``6.6e-10`` at ``10^10``).
FLOAT_REL = 1e-11

#: Largest number of delta evaluations of one ``eps(delta)`` search (numerical bounds).
MAX_EVALUATIONS = 200
#: The same for closed forms (microseconds per evaluation): their curves can drop by orders
#: of magnitude just below ``eps0``, where the search's secant steps shrink the bracket slowly.
MAX_EVALUATIONS_CLOSED = 5000


def eps_array(eps: object, name: str = "eps") -> tuple[np.ndarray, bool]:
    """Validate ``eps`` (float or array of finite values ``>= 0``); return ``(array, scalar)``."""
    if isinstance(eps, (bool, np.bool_)):
        raise ParameterError(f"{name} must be a real number or an array, got {eps!r}")
    if isinstance(eps, numbers.Real):
        return np.array([V.positive_float(name, eps, allow_zero=True)]), True
    try:
        arr = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a real number or an array, got {eps!r}") from None
    if arr.ndim == 0:
        return np.array([V.positive_float(name, float(arr), allow_zero=True)]), True
    if arr.size == 0:
        raise ParameterError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = arr[~(np.isfinite(arr) & (arr >= 0))][0]
        raise ParameterError(f"{name} must be finite and >= 0, got {bad}")
    return arr, False


def delta_targets(delta: object, name: str = "delta") -> tuple[np.ndarray, bool]:
    """Validate target ``delta`` values in ``(0, 1)``; return ``(array, scalar)``."""
    if isinstance(delta, numbers.Real) and not isinstance(delta, bool):
        return np.array([V.probability_open(name, delta)]), True
    try:
        arr = np.asarray(delta, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number or an array of numbers in (0, 1), "
                             f"got {delta!r}") from None
    if arr.size == 0:
        raise ParameterError(f"{name} must not be empty")
    if arr.ndim == 0:
        return np.array([V.probability_open(name, float(arr))]), True
    for d in arr.ravel():
        V.probability_open(name, float(d))
    return arr, False


def eps0_of(source: object) -> float:
    """``eps0`` from a float, a :class:`~amp.mechanisms.gparv.GPARV` or a mechanism."""
    if isinstance(source, numbers.Real) and not isinstance(source, bool):
        return V.eps0_value(source)
    e0 = getattr(source, "eps0", None)
    if e0 is None:
        raise ParameterError(f"expected eps0 (a float), a GPARV law or a mechanism, got "
                             f"{source!r}")
    return V.eps0_value(float(e0))


def describe_source(source: object, eps0: float) -> str:
    """The ``mechanism`` field of a baseline's result: the mechanism's or law's description,
    or the generic randomizer for a bare ``eps0``."""
    describe = getattr(source, "describe", None)
    if callable(describe):
        return str(describe())
    label = getattr(source, "label", "")
    if label:
        return str(label)
    return f"any eps0-LDP randomizer (eps0={eps0:g})"


def results(scalar: bool, quantity: Quantity, given: np.ndarray, lower: Sequence[float],
            upper: Sequence[float], *, bound: str, method: str, n: int, mechanism: str,
            certified: bool | Sequence[bool], note: str | Sequence[str],
            details: Sequence[dict] | None = None) -> Bound | list[Bound]:
    """One :class:`~amp.core.result.Bound` per input (``scalar``: the Bound itself, else a
    ``list`` in the input's flattened order).

    ``given`` holds the inputs (``eps`` for a ``delta`` question, ``delta`` for an ``eps``
    question); ``certified`` and ``note`` are shared (a single value) or one per input.
    """
    key = "eps" if quantity == "delta" else "delta"
    xs = np.asarray(given, dtype=float).ravel()
    m = xs.size
    cert = [bool(certified)] * m if isinstance(certified, (bool, np.bool_)) else \
        [bool(c) for c in certified]
    notes = [note] * m if isinstance(note, str) else list(note)
    extra = [{}] * m if details is None else list(details)
    out = [Bound(quantity, float(lo), float(up), bound, method, n, mechanism,
                 {key: float(x)}, certified=c, details={"note": t, **d})
           for x, lo, up, c, t, d in zip(xs, lower, upper, cert, notes, extra)]
    return out[0] if scalar else out


def _curve(fn: Callable[[float], tuple[float, float]], end: int, method: str) -> FunctionCurve:
    """The curve ``x -> (v, v)`` of one end (0: lower, 1: upper) of a delta bracket.

    :func:`amp.inversion.crossing` takes ``log(sqrt(lower * upper))`` as its secant estimate,
    which underflows below ~1e-154: there the lower end 0 (also valid) is reported; it only
    undecides points for targets below ~1e-154 (the search then raises
    :class:`~amp.core.errors.NumericalError`, never a wrong value).
    """
    def one(x: float) -> tuple[float, float]:
        v = fn(x)[end]
        return (v if v * v > 0 else 0.0), v

    return FunctionCurve(one, method)


def invert_delta(delta_fn: Callable[[float], tuple[float, float]], target: float,
                 eps_max: float, *, rel_tol: float, method: str = "",
                 max_evaluations: int = MAX_EVALUATIONS) -> tuple[float, float, int]:
    """Certified ``eps(target)`` of a baseline's ``delta(eps)`` bracket on ``[0, eps_max]``.

    The search is :func:`amp.inversion.crossing` (relative tolerance ``rel_tol``) on the upper
    end of the bracket, ``FunctionCurve(eps -> upper(eps))``: its good end ``hi`` has
    ``upper(hi) <= target`` and is the certified answer (``eps_max`` is checked to have
    ``upper <= target``, :class:`~amp.core.errors.NumericalError` otherwise). The lower end of
    the result is the search's bad end when ``lower`` certifies it there; when the delta bracket
    is too wide for that (the exact clone sums near ``n = 10^7``), a second crossing on
    ``eps -> lower(eps)`` over ``[0, bad end]`` finds the largest certified point.

    Returns
    -------
    lo, hi, evaluations : tuple
        ``upper(hi) <= target``; ``lo = 0`` or ``lower(lo) > target``, so for a bound that is
        non-increasing in ``eps`` the exact crossing point lies in ``[lo, hi]``
        (``lo = hi = 0`` when ``upper(0) <= target``).
    """
    memo: dict[float, tuple[float, float]] = {}

    def fn(x: float) -> tuple[float, float]:
        if x not in memo:
            lo, up = delta_fn(x)
            memo[x] = (float(lo), float(up))
        return memo[x]

    target = float(target)
    c = crossing(_curve(fn, 1, method), target, 0.0, float(eps_max), decreasing=True,
                 rel_tol=rel_tol, good_end_known=False, max_evaluations=max_evaluations)
    lo, evaluations = c.lo, c.evaluations
    if lo > 0 and not fn(lo)[0] > target:
        c2 = crossing(_curve(fn, 0, method), target, 0.0, lo, decreasing=True,
                      rel_tol=rel_tol, good_end_known=True, max_evaluations=max_evaluations)
        lo, evaluations = c2.lo, evaluations + c2.evaluations
    return lo, c.hi, evaluations
