"""Shared pieces of the baseline bounds: the result type, input handling, binomial windows and
the certified ``eps(delta)`` inversion.

Result convention
-----------------
Every baseline returns a :class:`BaselineResult`. ``value`` is the number a user should use
(for an upper bound: its certified upper end); ``[lower, upper]`` encloses the exact value of
*that bound* (e.g. the exact hockey-stick divergence of the clone reduction pair); for closed
forms ``lower == upper == value``. When ``eps`` is a float the fields are floats; when ``eps``
is an array they are ``numpy`` arrays of the same shape (``method``, ``certified`` and ``note``
are shared by all entries).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError

__all__ = ["BaselineResult", "eps_array", "pack", "chernoff_window", "invert_delta",
           "delta_targets", "FLOAT_REL"]

#: Relative floating-point allowance used for numerically evaluated (non-closed-form) bounds:
#: scipy's binomial ``pmf``/``sf`` (Boost ``ibeta``) are accurate to a few hundred ulps; this
#: allowance is more than 10^4 times that and is added on the safe side of every bracket.
FLOAT_REL = 1e-11


@dataclass(frozen=True)
class BaselineResult:
    """Result of a baseline bound (scalar fields for scalar input, arrays for array input).

    Attributes
    ----------
    value : float or numpy.ndarray
        What a user should use: for ``delta(eps)`` the certified upper end of ``delta``; for
        ``eps(delta)`` the smallest ``eps`` found at which the bound certifies ``delta``.
    lower, upper : float or numpy.ndarray
        Bracket of the exact value of this bound (``lower == upper == value`` for closed forms).
    method : str
        Name of the bound and evaluation route.
    certified : bool
        ``True`` when ``value`` is a valid privacy guarantee for every entry; ``False`` for
        invalid/claimed bounds (stronger clone) and outside a closed form's validity regime.
    note : str
        Source, formula variant and caveats.
    """

    value: float | np.ndarray
    lower: float | np.ndarray
    upper: float | np.ndarray
    method: str
    certified: bool
    note: str = ""


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


def pack(scalar: bool, shape: tuple, value: np.ndarray, lower: np.ndarray, upper: np.ndarray,
         method: str, certified: bool, note: str) -> BaselineResult:
    """Build a :class:`BaselineResult` with floats (``scalar``) or arrays of ``shape``."""
    if scalar:
        return BaselineResult(float(value.ravel()[0]), float(lower.ravel()[0]),
                              float(upper.ravel()[0]), method, certified, note)
    return BaselineResult(value.reshape(shape), lower.reshape(shape), upper.reshape(shape),
                          method, certified, note)


# ----------------------------------------------------------------------------- binomial windows
def _kl(x: float, q: float) -> float:
    """Bernoulli KL divergence ``KL(x || q)`` (natural log), ``0 <= x <= 1``, ``0 < q < 1``."""
    out = 0.0
    if x > 0:
        out += x * math.log(x / q)
    if x < 1:
        out += (1 - x) * math.log((1 - x) / (1 - q))
    return out


def chernoff_window(N: int, q: float, tail: float) -> tuple[int, int, float]:
    """Window ``[lo, hi]`` of ``X ~ Bin(N, q)`` with a rigorous bound on the mass outside.

    Uses the Chernoff-Hoeffding bounds ``P[X <= k] <= exp(-N KL(k/N || q))`` for ``k <= Nq``
    and ``P[X >= k] <= exp(-N KL(k/N || q))`` for ``k >= Nq`` (no quantile function is used, so
    the bound stays valid at tail probabilities far below ``1e-16``).

    Returns
    -------
    lo, hi : int
        The window (``0 <= lo <= hi <= N``).
    outside : float
        Upper bound on ``P[X < lo] + P[X > hi]`` (``<= 2 * tail``; 0 when the window is
        ``[0, N]``).
    """
    if N <= 0 or q <= 0:
        return 0, 0, 0.0
    if q >= 1:
        return N, N, 0.0
    log_tail = math.log(tail)
    mean = N * q

    def bound(k: int) -> float:          # log of the Chernoff bound of the tail at k
        return -N * _kl(min(max(k / N, 0.0), 1.0), q)

    # lower side: smallest lo such that P[X <= lo - 1] <= tail, i.e. bound(lo - 1) <= log_tail
    if bound(0) > log_tail:
        lo, out_lo = 0, 0.0
    else:
        a, b = 0, int(math.floor(mean))  # bound(a) <= log_tail < bound(b) (monotone)
        if bound(b) <= log_tail:
            a = b
        while b - a > 1:
            m = (a + b) // 2
            if bound(m) <= log_tail:
                a = m
            else:
                b = m
        lo, out_lo = a + 1, math.exp(bound(a))
    if bound(N) > log_tail:
        hi, out_hi = N, 0.0
    else:
        a, b = int(math.ceil(mean)), N   # bound(a) > log_tail >= bound(b)
        if bound(a) <= log_tail:
            b = a
        while b - a > 1:
            m = (a + b) // 2
            if bound(m) <= log_tail:
                b = m
            else:
                a = m
        hi, out_hi = b - 1, math.exp(bound(b))
    lo = min(lo, hi)
    return lo, hi, out_lo + out_hi


# ----------------------------------------------------------------------------- eps(delta)
def invert_delta(delta_fn: Callable[[float], tuple[float, float]], target: float,
                 eps_max: float, *, xtol: float = 1e-9, max_iter: int = 200
                 ) -> tuple[float, float, float, bool]:
    """Smallest ``eps`` in ``[0, eps_max]`` with certified ``delta(eps) <= target`` (bisection).

    Parameters
    ----------
    delta_fn : callable
        ``eps -> (lower, upper)`` bracket of the bound's ``delta`` at ``eps``.
    target : float
        Target ``delta``.
    eps_max : float
        An ``eps`` at which ``upper <= target`` is known to hold (checked).
    xtol : float
        Relative width ``(hi - lo) / hi`` at which the bisection stops.

    Returns
    -------
    value, lo, hi, certified_lo : tuple
        ``value = hi`` is certified (``upper(hi) <= target``). ``lo`` has
        ``lower(lo) > target`` when ``certified_lo`` is True, so for a bound that is
        non-increasing in ``eps`` the exact crossing point lies in ``[lo, hi]``.
    """
    xtol = V.positive_float("xtol", xtol, upper=0.5)
    lo_d, up_d = delta_fn(0.0)
    if up_d <= target:
        return 0.0, 0.0, 0.0, True
    hi = float(eps_max)
    if delta_fn(hi)[1] > target:
        raise NumericalError(f"delta({hi}) exceeds the target {target}; no eps found")
    lo = 0.0
    lo_cert = lo_d > target
    lo_certified_value = 0.0
    for _ in range(max_iter):
        if hi - lo <= xtol * hi:
            break
        mid = 0.5 * (lo + hi)
        l_mid, u_mid = delta_fn(mid)
        if u_mid <= target:
            hi = mid
        else:
            lo = mid
            if l_mid > target:
                lo_certified_value, lo_cert = mid, True
    return hi, (lo_certified_value if lo_cert else 0.0), hi, lo_cert
