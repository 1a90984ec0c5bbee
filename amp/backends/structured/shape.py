"""The Table 1 shape of a GPARV law and the floating-point floor of its atoms.

Implements the *Shape* section of :mod:`amp.backends.structured`: a law has the shape when every
blanket atom ``(a, b)`` is ``(1, 1)``, ``(E, 1)``, ``(1, E)``, ``(E, E)`` or ``(0, 0)`` for one
``E > 1`` (within :data:`SHAPE_RTOL` relative); :class:`StructuredShape` keeps the five masses
and ``E``.  Certified error terms owned here:

* the idealisation of the atoms, ``dev_a + e^eps dev_b`` (``sum_j p_j |a_j - a_j'|`` and the
  same for ``b``, between the law and its idealised shape; 0 for the library's mechanisms);
* the floating-point floor: the float atoms ``E``, ``e^eps`` are within ``16 u (a + e^eps b)``
  of the exact ones (:func:`atom_noise`), which :func:`amp.core.floats.widen` adds to both ends
  (:func:`shape_atom_floor`); :func:`floor_width` is the width that alone adds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp.core.floats import U, atom_floor
from amp.mechanisms.gparv import GPARV

__all__ = ["SHAPE_RTOL", "StructuredShape", "structured_shape", "supports", "atom_noise",
           "shape_atom_floor", "floor_width"]

SHAPE_RTOL = 1e-12                     # atoms within this relative distance count as equal


@dataclass(frozen=True)
class StructuredShape:
    """Masses of the four blanket atom types and the off atom, with the common ratio ``E``.

    ``pO``: ``(1, 1)``; ``pX``: ``(E, 1)``; ``pY``: ``(1, E)``; ``pZ``: ``(E, E)``;
    ``pF``: ``G = 0`` (``1 - gamma`` and explicit ``(0, 0)`` atoms).  ``dev_a``/``dev_b``
    are ``sum_j p_j |a_j - a_j'|`` (resp. ``b``) between the law and its idealised shape
    (0 for the library's mechanisms); they are added to the bracket.
    """

    E: float
    pO: float
    pX: float
    pY: float
    pZ: float
    pF: float
    dev_a: float = 0.0
    dev_b: float = 0.0


def structured_shape(law: GPARV) -> StructuredShape | None:
    """The :class:`StructuredShape` of ``law``, or ``None`` if it does not have that shape."""
    a = np.asarray(law.a, dtype=float)
    b = np.asarray(law.b, dtype=float)
    p = np.asarray(law.p, dtype=float)
    tol = SHAPE_RTOL
    is0a, is0b = np.abs(a) <= tol, np.abs(b) <= tol
    off = is0a & is0b
    if np.any(is0a ^ is0b):
        return None
    one_a, one_b = np.abs(a - 1) <= tol, np.abs(b - 1) <= tol
    cand = np.concatenate([a[~off & ~one_a], b[~off & ~one_b]])
    if cand.size:
        E = float(cand.max())
        if E <= 1 + 1e-9 or np.any(np.abs(cand - E) > tol * E):
            return None
    else:
        E = 2.0                       # only (1,1)/(0,0) atoms: any E works (S <= 0)
    e_a, e_b = np.abs(a - E) <= tol * E, np.abs(b - E) <= tol * E
    if np.any(~off & ~(one_a | e_a)) or np.any(~off & ~(one_b | e_b)):
        return None
    ideal_a = np.where(off, 0.0, np.where(one_a, 1.0, E))
    ideal_b = np.where(off, 0.0, np.where(one_b, 1.0, E))
    pO = float(p[~off & one_a & one_b].sum())
    pX = float(p[~off & e_a & one_b].sum())
    pY = float(p[~off & one_a & e_b].sum())
    pZ = float(p[~off & e_a & e_b].sum())
    pF = max(0.0, 1.0 - (pO + pX + pY + pZ))
    dev_a = float(np.dot(p, np.abs(a - ideal_a)))
    dev_b = float(np.dot(p, np.abs(b - ideal_b)))
    return StructuredShape(E, pO, pX, pY, pZ, pF, dev_a, dev_b)


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
    g = np.array([1 - w, E - w, 1 - w * E, E - w * E])
    noise = 16 * U * np.array([1 + w, E + w, 1 + w * E, E + w * E])
    return g, noise


def shape_atom_floor(shape: StructuredShape, eps: float) -> tuple[float, float, float]:
    """:func:`amp.core.floats.atom_floor` of the four blanket types (see
    :func:`amp.core.floats.widen`)."""
    g, noise = atom_noise(shape, eps)
    return atom_floor(g, np.array([shape.pO, shape.pX, shape.pY, shape.pZ]), noise)


def floor_width(shape: StructuredShape, eps: float, upper: float) -> float:
    """Width that :func:`amp.core.floats.widen` alone adds to a bracket ending at ``upper``."""
    rho, gpos, absn = shape_atom_floor(shape, eps)
    return 2 * (rho * upper + 2.01 * rho * gpos + absn) + 16 * U * upper

