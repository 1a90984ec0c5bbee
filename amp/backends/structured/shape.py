"""The Table 1 shape of a GPARV law and the floating-point floor of its atoms.

Implements the *Shape* section of :mod:`amp.backends.structured`: a law has the shape when every
blanket atom ``(a, b)`` is ``(1, 1)``, ``(E, 1)``, ``(1, E)``, ``(E, E)`` or ``(0, 0)`` for one
``E > 1`` (within :data:`SHAPE_RTOL` relative), or the same types at other levels
(``(lx E, lx)``, ``(ly, ly E)``, ``(sv, sv)``, ``(sv E, sv E)``: Theorem 5's laws of k-RR and
the backgrounds of every Table 1 mechanism); :class:`StructuredShape` keeps the five masses,
``E`` and the levels.  Certified error terms owned here:

* the idealisation of the atoms, ``dev_a + e^eps dev_b`` (``sum_j p_j |a_j - a_j'|`` and the
  same for ``b``, between the law and its idealised shape; 0 for the library's mechanisms);
* the floating-point floor: the float atoms ``E``, ``e^eps`` are within ``16 u (a + e^eps b)``
  of the exact ones (:func:`atom_noise`), which :func:`amp.core.floats.widen` adds to both ends
  (:func:`shape_atom_floor`); :func:`floor_width` is the width that alone adds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from amp.core.floats import U, Floor, atom_floor
from amp.mechanisms.gparv import GPARV

__all__ = ["SHAPE_RTOL", "StructuredShape", "structured_shape", "supports", "atom_noise",
           "shape_atom_floor", "floor_width"]

SHAPE_RTOL = 1e-12                     # atoms within this relative distance count as equal


@dataclass(frozen=True)
class StructuredShape:
    """Masses of the four atom types and the off atom, with the common ratio ``E`` and the
    levels of the types.

    ``pX``: ``(lx E, lx)``; ``pY``: ``(ly, ly E)``; ``pO``: ``(sv, sv)``; ``pZ``: ``(sv E, sv E)``;
    ``pF``: ``G = 0`` (``1 - gamma`` and explicit ``(0, 0)`` atoms).  Theorem 4's blanket laws
    have ``lx = ly = sv = 1`` (atoms ``(E, 1), (1, E), (1, 1), (E, E)``); Theorem 5's laws of
    k-RR (``sv = 1/E``: the atoms ``(1/E, 1/E)`` of outputs ``x2`` and ``(1, 1)`` of the others)
    and the laws of the backgrounds ``x2 = x0`` or ``x2 = x1`` (``lx`` or ``ly = 1/E``) have other
    levels.  ``dev_a``/``dev_b`` are ``sum_j p_j |a_j - a_j'|`` (resp. ``b``) between the law and
    its idealised shape (0 for the library's mechanisms); they are added to the bracket.
    """

    E: float
    pO: float
    pX: float
    pY: float
    pZ: float
    pF: float
    dev_a: float = 0.0
    dev_b: float = 0.0
    lx: float = 1.0
    ly: float = 1.0
    sv: float = 1.0


def _level(values: np.ndarray, tol: float) -> float | None:
    """The common value of ``values`` (their maximum) if all agree to ``tol`` relative."""
    v = float(values.max())
    return v if np.all(np.abs(values - v) <= tol * v) else None


def structured_shape(law: GPARV) -> StructuredShape | None:
    """The :class:`StructuredShape` of ``law``, or ``None`` if it does not have that shape.

    Every atom ``(a, b)`` other than ``(0, 0)`` must have ``a / b`` in ``{E, 1, 1/E}`` for one
    ``E > 1``; the atoms with ``a / b = E`` one common ``b`` (``lx``), those with ``b / a = E``
    one common ``a`` (``ly``), and those with ``a = b`` at most two levels ``sv`` and ``sv E``.
    """
    a = np.asarray(law.a, dtype=float)
    b = np.asarray(law.b, dtype=float)
    p = np.asarray(law.p, dtype=float)
    tol = SHAPE_RTOL
    is0a, is0b = np.abs(a) <= tol, np.abs(b) <= tol
    off = is0a & is0b
    if np.any(is0a ^ is0b):
        return None
    on = ~off
    a1, b1, p1 = a[on], b[on], p[on]
    same = np.abs(a1 - b1) <= tol * np.maximum(a1, b1)
    up, down = (a1 > b1) & ~same, (b1 > a1) & ~same
    ratios = np.concatenate([a1[up] / b1[up], b1[down] / a1[down]])
    levels = np.sort(a1[same])
    if ratios.size:
        E = _level(ratios, 4 * tol)
        if E is None or E <= 1 + 1e-9:
            return None
    elif levels.size and levels[-1] > levels[0] * (1 + 4 * tol):
        E = float(levels[-1] / levels[0])     # two nuisance levels only (S <= 0 surely)
    else:
        E = 2.0                               # only (s, s)/(0, 0) atoms: any E works (S <= 0)
    lx = _level(b1[up], tol) if up.any() else 1.0
    ly = _level(a1[down], tol) if down.any() else 1.0
    if lx is None or ly is None:
        return None
    # nuisance levels: {1, E} keeps the blanket form (sv = 1); otherwise {sv} or {sv, sv E}
    if levels.size == 0:
        sv = 1.0
    else:
        lo_, hi_ = float(levels[0]), float(levels[-1])
        fits = lambda s: np.all((np.abs(levels - s) <= tol * s)          # noqa: E731
                                | (np.abs(levels - s * E) <= tol * s * E))
        if fits(1.0):
            sv = 1.0
        elif fits(lo_):
            sv = lo_
        elif fits(hi_ / E):
            sv = hi_ / E
        else:
            return None
    is_o = same & (np.abs(a1 - sv) <= tol * sv)
    is_z = same & ~is_o
    ideal_a = np.where(up, lx * E, np.where(down, ly, np.where(is_o, sv, sv * E)))
    ideal_b = np.where(up, lx, np.where(down, ly * E, np.where(is_o, sv, sv * E)))
    pO, pX = float(p1[is_o].sum()), float(p1[up].sum())
    pY, pZ = float(p1[down].sum()), float(p1[is_z].sum())
    pF = max(0.0, 1.0 - (pO + pX + pY + pZ))
    dev_a = float(np.dot(p1, np.abs(a1 - ideal_a)))
    dev_b = float(np.dot(p1, np.abs(b1 - ideal_b)))
    return StructuredShape(E, pO, pX, pY, pZ, pF, dev_a, dev_b, lx, ly, sv)


def supports(law: GPARV) -> bool:
    """True when every atom of ``law`` is ``(1,1), (E,1), (1,E), (E,E)`` or ``(0,0)`` for one
    ``E > 1`` (within ``1e-12`` relative): the shape of every Table 1 row and finite form."""
    try:
        return structured_shape(law) is not None
    except (ValueError, FloatingPointError):   # pragma: no cover - defensive
        return False


# ----------------------------------------------------------------------------- float atoms
def atom_noise(shape: StructuredShape, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Atoms ``g`` of the four blanket types and their floating-point noise
    ``16 u (a + w b)`` (the float ``E`` and ``e^eps`` are within a few ulps of the exact ones)."""
    E, w = shape.E, math.exp(eps)
    lx, ly, sv = shape.lx, shape.ly, shape.sv
    g = np.array([sv * (1 - w), lx * (E - w), ly * (1 - w * E), sv * (E - w * E)])
    noise = 16 * U * np.array([sv * (1 + w), lx * (E + w), ly * (1 + w * E), sv * (E + w * E)])
    return g, noise


@lru_cache(maxsize=512)
def shape_atom_floor(shape: StructuredShape, eps: float, n: int | None = None) -> Floor:
    """:func:`amp.core.floats.atom_floor` of the four blanket types (see
    :func:`amp.core.floats.widen`); with ``n``, also the Chernoff-tilted bound of
    :func:`amp.core.floats.tilted_floor` (the off atom ``G = 0`` has mass ``pF``)."""
    g, noise = atom_noise(shape, eps)
    return atom_floor(g, np.array([shape.pO, shape.pX, shape.pY, shape.pZ]), noise, n,
                      p_zero=shape.pF)


def floor_width(shape: StructuredShape, eps: float, upper: float,
                n: int | None = None) -> float:
    """Width that :func:`amp.core.floats.widen` alone adds to a bracket ending at ``upper``
    (``n``: with the tilted bound of :func:`amp.core.floats.tilted_floor`)."""
    fl = shape_atom_floor(shape, eps, n)
    rho, gpos, absn = fl[:3]
    return 2 * (rho * upper + min(2.01 * rho * gpos + absn, fl.tilt)) + 16 * U * upper

