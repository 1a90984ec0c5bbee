"""Scalar searches without scipy: a bracketed root (Brent), a bounded minimum (Brent's
golden-section/parabolic search) and the one bisection of a predicate (:func:`bisect`).

They exist so that the first answer of a fresh process does not import ``scipy.optimize``
(with ``scipy.linalg``, ``scipy.sparse`` and ``scipy.spatial`` behind it: ~0.6-0.9 s, issue 34)
for a few scalar searches. Both follow the steps of the routines they replace, in the same
order and with the same floating-point operations, so they return the same numbers:
:func:`brent_root` those of ``scipy.optimize.brentq`` (Brent 1973, Chapter 4, in the form of
scipy's ``Zeros/brentq.c``), :func:`bounded_minimum` those of
``scipy.optimize.minimize_scalar(method="bounded")`` (``fminbound``; Brent 1973, Chapter 5);
``tests/test_roots.py`` checks both against scipy.

Where amp uses them nothing certified depends on how good their answer is: the saddle point of
an uncertified estimate (:mod:`amp.core.saddle`), a tilt at which a Chernoff bound is valid
for every value (:func:`amp.core.tails.chernoff_upper`, :mod:`amp.backends.cfinv`,
:mod:`amp.backends.fft`).
"""

from __future__ import annotations

import math
from typing import Callable

from amp.core.errors import NumericalError

__all__ = ["brent_root", "bounded_minimum", "bisect", "ROOT_XTOL", "ROOT_RTOL"]

ROOT_XTOL = 2e-12                     # scipy.optimize.brentq's defaults
ROOT_RTOL = 4 * 2.0 ** -52
_SQRT_EPS = math.sqrt(2.2e-16)        # fminbound's
_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


def brent_root(f: Callable[[float], float], a: float, b: float, *, xtol: float = ROOT_XTOL,
               rtol: float = ROOT_RTOL, maxiter: int = 100) -> float:
    """A root of ``f`` in ``[a, b]`` (``f(a)``, ``f(b)`` of opposite signs or one of them 0) to
    within ``xtol + rtol |x|``: inverse quadratic interpolation, secant steps and bisection
    (Brent's method).

    Raises
    ------
    ValueError
        When ``f(a)`` and ``f(b)`` have the same sign, ``f`` returns NaN, or a tolerance is too
        small (``xtol <= 0``, ``rtol < 4 u``).
    NumericalError
        When ``maxiter`` iterations do not converge.
    """
    if xtol <= 0:
        raise ValueError(f"xtol must be > 0, got {xtol!r}")
    if rtol < ROOT_RTOL:
        raise ValueError(f"rtol must be >= {ROOT_RTOL:g}, got {rtol!r}")

    def val(x: float) -> float:
        y = float(f(x))
        if math.isnan(y):
            raise ValueError(f"the function is NaN at {x!r}")
        return y

    x_prev, x_cur = float(a), float(b)
    f_prev, f_cur = val(x_prev), val(x_cur)
    if f_prev == 0:
        return x_prev
    if f_cur == 0:
        return x_cur
    if _negative(f_prev) == _negative(f_cur):
        raise ValueError(f"f({a!r}) and f({b!r}) have the same sign")
    # x_cur: the best estimate; x_blk: the other end of the bracket; x_prev: the last estimate
    x_blk = f_blk = step_prev = step_cur = 0.0
    for _ in range(maxiter):
        if f_prev != 0 and f_cur != 0 and _negative(f_prev) != _negative(f_cur):
            # the root lies between x_prev and x_cur (signs, not the product: it underflows)
            x_blk, f_blk = x_prev, f_prev
            step_prev = step_cur = x_cur - x_prev
        if abs(f_blk) < abs(f_cur):         # keep the smaller |f| at x_cur
            x_prev, x_cur, x_blk = x_cur, x_blk, x_cur
            f_prev, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = (xtol + rtol * abs(x_cur)) / 2
        half = (x_blk - x_cur) / 2
        if f_cur == 0 or abs(half) < tol:
            return x_cur
        if abs(step_prev) > tol and abs(f_cur) < abs(f_prev):
            if x_prev == x_blk:             # secant through the two ends
                trial = -f_cur * (x_cur - x_prev) / (f_cur - f_prev)
            else:                           # inverse quadratic through three points
                s_prev = (f_prev - f_cur) / (x_prev - x_cur)
                s_blk = (f_blk - f_cur) / (x_blk - x_cur)
                trial = -f_cur * (f_blk * s_blk - f_prev * s_prev) \
                    / (s_blk * s_prev * (f_blk - f_prev))
            if 2 * abs(trial) < min(abs(step_prev), 3 * abs(half) - tol):
                step_prev, step_cur = step_cur, trial
            else:
                step_prev = step_cur = half
        else:
            step_prev = step_cur = half
        x_prev, f_prev = x_cur, f_cur
        if abs(step_cur) > tol:
            x_cur += step_cur
        else:
            x_cur += tol if half > 0 else -tol
        f_cur = val(x_cur)
    raise NumericalError(f"root search did not converge in {maxiter} iterations "
                         f"(last point {x_cur!r})")


def bounded_minimum(f: Callable[[float], float], lo: float, hi: float, *,
                    xatol: float = 1e-5, maxiter: int = 500) -> tuple[float, float]:
    """``(x, f(x))``: a local minimum of ``f`` on ``[lo, hi]`` to within about ``xatol`` (golden
    sections and parabolic steps, Brent's ``fmin``); at most ``maxiter`` evaluations. A NaN
    value of ``f`` ends the search (the best point so far is returned)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"bounds must be finite, got ({lo!r}, {hi!r})")
    if lo > hi:
        raise ValueError(f"lower bound {lo!r} exceeds upper bound {hi!r}")
    a, b = float(lo), float(hi)
    # x: best point so far; w: second best; v: the previous w
    v = w = x = a + _GOLDEN * (b - a)
    fx = float(f(x))
    fv = fw = fx
    calls = 1
    d = e = 0.0
    mid = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(x) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(x - mid) > tol2 - 0.5 * (b - a):
        golden = True
        if abs(e) > tol1:                   # try a parabola through x, w, v
            golden = False
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = d
            if abs(p) < abs(0.5 * q * r) and p > q * (a - x) and p < q * (b - x):
                d = (p + 0.0) / q
                u = x + d
                if (u - a) < tol2 or (b - u) < tol2:
                    d = tol1 * _sign1(mid - x)
            else:
                golden = True
        if golden:
            e = (a - x) if x >= mid else (b - x)
            d = _GOLDEN * e
        u = x + _sign1(d) * _nan_max(abs(d), tol1)
        fu = float(f(u))
        calls += 1
        if fu <= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, fv = w, fw
            w, fw = x, fx
            x, fx = u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv = w, fw
                w, fw = u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
        mid = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(x) + xatol / 3.0
        tol2 = 2.0 * tol1
        if calls >= maxiter:
            break
    return x, fx


def _negative(t: float) -> bool:
    """The sign bit of ``t`` (C's ``signbit``)."""
    return math.copysign(1.0, t) < 0


def _sign1(t: float) -> float:
    """``sign(t)``, and 1 at 0 (``np.sign(t) + (t == 0)``)."""
    return 1.0 if t >= 0 else (-1.0 if t < 0 else t)


def _nan_max(s: float, t: float) -> float:
    """``np.maximum(s, t)``: NaN if either is NaN."""
    if s != s or t != t:
        return math.nan
    return s if s >= t else t


def bisect(good: Callable[[float], bool], lo: float, hi: float, *, rel_tol: float = 0.0,
           floor: float = 0.0, steps: int = 200) -> tuple[float, float]:
    """``(lo, hi)`` after halving ``[lo, hi]`` towards the boundary of a predicate: ``good(mid)``
    moves ``hi`` to ``mid``, otherwise ``lo`` moves there. Stops before a halving once ``hi -
    lo <= rel_tol * max(floor, |hi|)``, or after ``steps`` halvings.

    The ends are the caller's (neither is evaluated here): every point that became ``hi`` had
    ``good`` true and every point that became ``lo`` had it false, so what ``good`` certifies
    (for example ``delta(mid) <= target``) holds at the returned ``hi`` whenever it held at the
    given one. The one bisection of the library: its callers differ only in the predicate, the
    tolerance and the number of steps."""
    for _ in range(steps):
        if hi - lo <= rel_tol * max(floor, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        if good(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi
