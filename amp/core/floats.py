"""Floating-point safety shared by every backend.

The atoms of a GPARV law are computed in float64 (``g = a - e^eps b``), so every path that
evaluates ``delta`` for the float atoms must widen its bracket by the atoms' distance to the
exact ones (:func:`atom_floor`, :func:`widen`). :data:`U` is the unit round-off and
:data:`TINY` the smallest positive double (a certified upper end is never rounded to 0).
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

__all__ = ["U", "TINY", "ATOM_RHO", "atom_floor", "widen", "fmt_outward", "round_outward"]

U = np.finfo(float).eps / 2          # unit round-off
TINY = np.nextafter(0.0, 1.0)        # smallest positive double (a safe non-zero upper end)
ATOM_RHO = 32 * U                    # relative noise of an atom with |g| >= (|a| + e^eps |b|)/2


def atom_floor(g: np.ndarray, p: np.ndarray, noise: np.ndarray) -> tuple[float, float, float]:
    """How far the exact ``delta`` can be from the ``delta`` of the float atoms ``g``.

    Every exact atom lies within ``noise`` (``16 u (|a| + e^eps |b|)``) of ``g``.  Atoms with
    ``|g| >= 2 noise / 32u`` (no cancellation) are within a relative ``rho = 32 u``; scaling
    the positive part ``P`` of ``S`` up by ``1 + rho`` and the negative part ``N`` down by
    ``1 - rho`` gives ``(S')_+ <= (1 + rho) ((P - N)_+ + 2.01 rho P)`` with ``E[P] = n E[G_+]``
    (only positive atoms count: huge negative atoms such as ``1 - e^eps E`` cost nothing).  The
    other (cancellation-prone) atoms move ``S`` by at most their ``noise`` each.  Returns
    ``(rho, E[G_+] (noise included), sum p noise over the cancellation-prone atoms)``; see
    :func:`widen`."""
    g = np.asarray(g, dtype=float)
    p = np.asarray(p, dtype=float)
    noise = np.asarray(noise, dtype=float)
    rel = np.abs(g) * ATOM_RHO >= noise
    gpos = float(np.dot(p, np.maximum(g + noise, 0.0)))
    absn = float(np.dot(p[~rel], noise[~rel]))
    return ATOM_RHO, gpos, absn


def widen(lower: float, upper: float, floor: tuple[float, float, float]
          ) -> tuple[float, float]:
    """``(lower, upper)`` for the float atoms -> certified for the exact atoms
    (:func:`atom_floor`); an upper end of 0 stays 0 only when no atom can be positive."""
    rho, gpos, absn = floor
    up = (1 + rho) * (upper + 2.01 * rho * gpos) * (1 + 4 * U) + absn
    lo = (1 - rho) * (lower - 2.01 * rho * gpos) * (1 - 4 * U) - absn
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
