"""Floating-point safety shared by every backend.

The atoms of a GPARV law are computed in float64 (``g = a - e^eps b``), so every path that
evaluates ``delta`` for the float atoms must widen its bracket by the atoms' distance to the
exact ones (:func:`atom_floor`, :func:`widen`). :data:`U` is the unit round-off and
:data:`TINY` the smallest positive double (a certified upper end is never rounded to 0).
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import NamedTuple

import numpy as np

from amp.core.roots import bisect

__all__ = ["U", "TINY", "ATOM_RHO", "Floor", "atom_floor", "tilted_floor", "widen",
           "fmt_outward", "round_outward"]

U = np.finfo(float).eps / 2          # unit round-off
TINY = np.nextafter(0.0, 1.0)        # smallest positive double (a safe non-zero upper end)
ATOM_RHO = 32 * U                    # relative noise of an atom with |g| >= (|a| + e^eps |b|)/2


class Floor(NamedTuple):
    """The atoms' floating-point floor (:func:`atom_floor`): the relative bound ``rho``, the
    positive mean ``gpos = E[G_+]``, the noise ``absn`` of the cancellation-prone atoms, and
    ``tilt``, a bound on ``E[D 1{S + D > 0}] / n`` (:func:`tilted_floor`; ``inf`` when not
    computed)."""

    rho: float
    gpos: float
    absn: float
    tilt: float = math.inf

    @property
    def width(self) -> float:
        """The absolute width :func:`widen` adds to a bracket (both ends, ``upper`` ~ 0)."""
        return 2 * min(2.01 * self.rho * self.gpos + self.absn, self.tilt)


def atom_floor(g: np.ndarray, p: np.ndarray, noise: np.ndarray,
               n: int | None = None, p_zero: float = 0.0) -> Floor:
    """How far the exact ``delta`` can be from the ``delta`` of the float atoms ``g``.

    Every exact atom lies within ``noise`` (``16 u (|a| + e^eps |b|)``) of ``g``.  Atoms with
    ``|g| >= 2 noise / 32u`` (no cancellation) are within a relative ``rho = 32 u``; scaling
    the positive part ``P`` of ``S`` up by ``1 + rho`` and the negative part ``N`` down by
    ``1 - rho`` gives ``(S')_+ <= (1 + rho) ((P - N)_+ + 2.01 rho P)`` with ``E[P] = n E[G_+]``
    (only positive atoms count: huge negative atoms such as ``1 - e^eps E`` cost nothing).  The
    other (cancellation-prone) atoms move ``S`` by at most their ``noise`` each.  Returns
    ``(rho, E[G_+] (noise included), sum p noise over the cancellation-prone atoms, tilt)``;
    with ``n`` given, ``tilt`` is the Chernoff-tilted bound of :func:`tilted_floor` (``p_zero``:
    the mass of further atoms ``G = 0`` without noise, left out of ``p``), far smaller at small
    ``delta``; see :func:`widen`, which uses the smaller of the two."""
    g = np.asarray(g, dtype=float)
    p = np.asarray(p, dtype=float)
    noise = np.asarray(noise, dtype=float)
    rel = np.abs(g) * ATOM_RHO >= noise
    gpos = float(np.dot(p, np.maximum(g + noise, 0.0)))
    absn = float(np.dot(p[~rel], noise[~rel]))
    tilt = math.inf if n is None else tilted_floor(g, p, noise, n, p_zero)
    return Floor(ATOM_RHO, gpos, absn, tilt)


def _lse(x: np.ndarray) -> tuple[float, float]:
    """``log sum exp(x)`` and a bound on its absolute rounding error (``exp``/``log`` within
    one ulp, :file:`book/engine/certified.md`; the sum of ``k`` terms within ``k u``)."""
    x = x[np.isfinite(x)]
    if x.size == 0:
        return -math.inf, 0.0
    m = float(x.max())
    s = float(np.sum(np.exp(x - m)))
    v = m + math.log(s)
    return v, 8 * U * (x.size + 4 + 2 * float(np.max(np.abs(x))) + abs(m) + abs(v))


def tilted_floor(g: np.ndarray, p: np.ndarray, noise: np.ndarray, n: int,
                 p_zero: float = 0.0) -> float:
    """A Chernoff-tilted bound on the atoms' floating-point floor, per user.

    The exact atoms are ``G' = G + e``, ``|e| <= nu(G)`` (``noise``).  With ``S = sum G_i`` and
    ``D = sum nu(G_i)``: ``(S - D)_+ <= S'_+ <= (S + D)_+`` and ``(S + D)_+ - S_+`` and
    ``S_+ - (S - D)_+`` are both ``<= D 1{S + D > 0}``, so the exact ``delta`` is within
    ``W = E[D 1{S + D > 0}] / n`` of the float atoms' ``delta``.  For any ``theta >= 0``,
    ``1{S + D > 0} <= exp(theta (S + D))`` and the users are independent:

        W <= E[nu(G) e^(theta h(G))] * E[e^(theta h(G))]^(n - 1),    h = g + nu,

    the noise weighted where the sum can actually be near zero (the old bound
    ``2.01 rho E[G_+]`` weights every positive atom, at any ``delta``).  ``theta`` minimises
    the (convex) logarithm by bisection on its derivative; the logarithm is evaluated with its
    rounding error bounded (:func:`_lse`, times ``n``), so the returned value is an upper
    bound on ``W`` for the float atoms given (``p`` taken as exact). ``p_zero`` is the mass of
    atoms ``G = 0`` with no noise (the off-blanket atom). ``0`` when ``S + D <= 0`` surely."""
    g = np.asarray(g, dtype=float)
    p = np.asarray(p, dtype=float)
    nu = np.asarray(noise, dtype=float)
    keep = p > 0
    g, p, nu = g[keep], p[keep], nu[keep]
    # mass not given (a law whose masses sum below 1 by rounding, or zero atoms left out)
    # counted as atoms G = 0 with no noise: their factor e^(theta h) = 1 is then not lost
    p_zero = p_zero + max(0.0, 1.0 - float(np.sum(p)) - p_zero)
    if p_zero > 0:
        g, p, nu = np.append(g, 0.0), np.append(p, p_zero), np.append(nu, 0.0)
    if g.size == 0 or n < 1:
        return 0.0
    # h >= g + nu exactly (the float sum rounds by at most u |g + nu|)
    h = g + nu + 2 * U * (np.abs(g) + nu)
    if float(h.max()) <= 0:
        return 0.0
    with np.errstate(divide="ignore"):
        la = np.log(p * nu)
        lp = np.log(p)
    m1 = n - 1

    def dlog(theta: float) -> float:
        xa, xb = la + theta * h, lp + theta * h
        wa = np.exp(xa - xa[np.isfinite(xa)].max()) if np.isfinite(xa).any() else None
        wb = np.exp(xb - xb.max())
        da = float(np.dot(wa, h) / wa.sum()) if wa is not None else 0.0
        return da + m1 * float(np.dot(wb, h) / wb.sum())

    def value(theta: float) -> float:
        a, ea = _lse(la + theta * h)
        b, eb = _lse(lp + theta * h)
        if a == -math.inf:
            return 0.0
        lw = a + m1 * b
        err = ea + m1 * eb + 4 * U * (abs(a) + abs(m1 * b) + 1)
        return math.exp(min(lw + err, 700.0)) * (1 + 8 * U)

    best = value(0.0)
    if dlog(0.0) < 0:
        hi = 1.0 / float(np.max(np.abs(h)))
        while dlog(hi) < 0 and hi < 1e300:
            hi *= 4.0
        # any theta >= 0 is valid: near the optimum suffices
        lo, hi = bisect(lambda t: not dlog(t) < 0, 0.0, hi, rel_tol=1e-4, steps=80)
        best = min(best, value(lo), value(hi))
    return best


def widen(lower: float, upper: float, floor: tuple) -> tuple[float, float]:
    """``(lower, upper)`` for the float atoms -> certified for the exact atoms
    (:func:`atom_floor`); an upper end of 0 stays 0 only when no atom can be positive.

    Two valid widenings are computed and the tighter kept: the relative one
    (``rho``, ``E[G_+]``, the cancellation-prone noise) and, when ``floor`` carries it, the
    Chernoff-tilted absolute one of :func:`tilted_floor`."""
    rho, gpos, absn = floor[:3]
    tilt = floor[3] if len(floor) > 3 else math.inf
    up = (1 + rho) * (upper + 2.01 * rho * gpos) * (1 + 4 * U) + absn
    lo = (1 - rho) * (lower - 2.01 * rho * gpos) * (1 - 4 * U) - absn
    if tilt < math.inf:
        up = min(up, (upper + tilt) * (1 + 4 * U))
        lo = max(lo, (lower - tilt) * (1 - 4 * U) if lower > tilt else 0.0)
    return max(lo, 0.0), up


def fmt_outward(x: float, digits: int = 6, *, up: bool) -> str:
    """``x`` with ``digits`` significant digits, rounded up (``up=True``) or down, never to
    nearest: a printed upper bound is never below the certified one, a printed lower bound
    never above (``fmt_outward(0.3804940540, up=True) == '0.380495'``, where ``'.6g'`` gives
    ``'0.380494'``). The rounding is done on the float's exact decimal value.

    Examples
    --------
    >>> fmt_outward(0.3804940540, up=True), fmt_outward(0.3804940540, up=False)
    ('0.380495', '0.380494')
    >>> fmt_outward(2.5e-7, 3, up=True), fmt_outward(0.0, up=True)
    ('2.5e-07', '0')
    """
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    # q has at most `digits` significant digits, so the double nearest to it prints them back
    # exactly at that precision (digits <= 15): the string is q itself
    return f"{float(round_outward(x, digits, up=up)):.{digits}g}"


def round_outward(x: float, digits: int = 6, *, up: bool) -> Decimal:
    """The exact decimal value of the float ``x`` rounded to ``digits`` significant digits
    towards ``+inf`` (``up=True``) or ``-inf``: the number behind :func:`fmt_outward` (and the
    widgets' display), for ``x`` finite and non-zero."""
    d = Decimal(float(x))                          # the float's exact value
    return d.quantize(Decimal(1).scaleb(d.adjusted() - (digits - 1)),
                      rounding=ROUND_CEILING if up else ROUND_FLOOR)
