"""The nuisance law: one user who is neither ``(E, 1)`` nor ``(1, E)``, given ``T``.

Implements the *nuisance* part of the Algorithm of :mod:`amp.backends.structured`: given
``T = X + Y``, each of the ``m = n - T`` other users contributes ``V`` = 0 (off), 1 (``(1, 1)``)
or ``E`` (``(E, E)``); ``V_m`` is their sum.  :class:`Nuisance` holds the per-user law (mean,
variance, Bernstein range) and the *smoothing* bounds ``P(V_m in I) <= s1 |I| + s0`` from the
binomial law of ``O`` given ``Z`` (or of ``Z`` given ``O``); :func:`smoothing_gap` turns them
into the two gaps of the lattice tables (certified error terms *integerisation* and *block
shift*: ``beta [s1 E N^2 / 2 + s0 E|N|]``).  :data:`LOG_TAU_V` is the Bernstein tail level of
the nuisance windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp.core.tails import binom_window
from amp.backends.structured.binomial import binom_max_pmf

__all__ = ["LOG_TAU_V", "Nuisance", "smoothing_gap"]

LOG_TAU_V = -math.log(1e18)            # Bernstein tail level of the nuisance windows


@dataclass
class Nuisance:
    """Law of one non-informative user given ``T``: value 0 (off), 1 (``(1,1)``), E (``(E,E)``)."""

    E: float
    qO: float
    qZ: float
    qF: float

    @property
    def mu(self) -> float:
        """Mean ``E[V]`` of one user."""
        return self.qO + self.E * self.qZ

    @property
    def kappa(self) -> float:
        """``P((1,1) | not (E,E))``: given ``Z = z``, ``O ~ Bin(m - z, kappa)``."""
        return self.qO / (self.qO + self.qF) if self.qO + self.qF > 0 else 0.0

    @property
    def var(self) -> float:
        """Variance of ``V`` of one user."""
        return max(0.0, self.qO + self.E ** 2 * self.qZ - self.mu ** 2)

    @property
    def bmax(self) -> float:
        """Bernstein range ``max |V - mu|`` over the atoms with mass."""
        vals = [v for v, q in ((0.0, self.qF), (1.0, self.qO), (self.E, self.qZ)) if q > 0]
        return max([abs(v - self.mu) for v in vals] + [1e-300])

    @property
    def vmax(self) -> float:
        """Largest value of ``V`` with mass."""
        return self.E if self.qZ > 0 else (1.0 if self.qO > 0 else 0.0)

    def _smooth(self, q: float, q_other: float, m: int) -> tuple[float, float]:
        """``(pmax, tail)`` from the binomial law of the count with cell mass ``q`` given the
        count with mass ``q_other`` (at most its Chernoff quantile, ``tail`` beyond it)."""
        if q <= 0 or self.qF <= 0 or m <= 0:
            return 1.0, 0.0
        if q_other > 0:
            _, hi, _, lt = binom_window(m, q_other, -46.0)
            tail = math.exp(lt)
        else:
            hi, tail = 0, 0.0
        return binom_max_pmf(m - hi, q / (q + self.qF)), tail

    def smooth_O(self, m: int) -> tuple[float, float]:
        """``(pmax, tail)``: ``P(V_m in I) <= pmax (|I| + 1) + tail`` from ``O | Z`` binomial."""
        return self._smooth(self.qO, self.qZ, m)

    def smooth_Z(self, m: int) -> tuple[float, float]:
        """``(pmax, tail)``: ``P(V_m in I) <= pmax (|I|/E + 1) + tail`` from ``Z | O``."""
        return self._smooth(self.qZ, self.qO, m)


def smoothing_gap(options: list[tuple[float, float]], M2, M1) -> np.ndarray:
    """``min`` over smoothing bounds ``(s1, s0)`` of ``s1 M2 / 2 + s0 M1`` (Jensen gap / beta);
    ``P(V in I) <= s1 |I| + s0`` for every interval ``I``."""
    M2 = np.asarray(M2, dtype=float)
    M1 = np.asarray(M1, dtype=float)
    out = M1.copy()
    for s1, s0 in options:
        out = np.minimum(out, min(1.0, s0) * M1 + s1 * M2 / 2)
    return np.where(M2 > 0, out, 0.0)

