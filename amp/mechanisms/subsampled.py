"""Poisson client subsampling: each user takes part with probability ``q``, else sends nothing.

A user who does not take part sends nothing, which the analyst cannot tell apart from a user
who sends a fixed *void* report ``⊥`` (the number of voids is ``n`` minus the number of reports
the shuffler delivers). So ``n`` users with subsampling rate ``q`` are ``n`` users of the local
randomizer

    R_q(x) = q R(x) + (1 - q) ⊥ ,

an eps0-LDP randomizer with one more output (its column is ``1 - q`` for every input).

Its GPARV laws follow from the definitions (Section 3.2 and Definition 2). The blanket is
``c_q(y) = q c(y)`` for ``y != ⊥`` and ``c_q(⊥) = 1 - q``, so ``gamma_q = q gamma + 1 - q``.
On a real output the ratios ``R_q(x0)(y) / c_q(y) = R(x0)(y) / c(y)`` are unchanged and the
mass ``q c(y)`` is ``q`` times the old one; the void has ratio 1 under both inputs. Hence the
law of ``(a, b)`` is

    atoms (a_j, b_j) with probabilities q p_j,  plus the atom (1, 1) with probability 1 - q,

and the off-blanket mass is ``1 - gamma_q = q (1 - gamma)``. Theorem 5's variable transforms in
the same way (ratios ``R(x_b)(y) / R(x2)(y)`` unchanged on real outputs, mass ``q R(x2)(y)``,
void ``(1, 1)`` with mass ``1 - q``). :class:`Subsampled` uses these transformed laws, so a Table 1
mechanism stays on the structured path; ``tests/test_rounds.py`` checks them against the laws of
the explicit matrix ``[q P | (1 - q) 1]``.
"""

from __future__ import annotations

import sys

import numpy as np

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.base import Mechanism

__all__ = ["Subsampled", "subsample_law"]


def subsample_law(law: GPARV, q: float) -> GPARV:
    """The law of ``q R + (1 - q) ⊥`` from the law of ``R``: masses times ``q``, plus the void
    atom ``(1, 1)`` with mass ``1 - q`` (module docstring)."""
    if q == 1.0:
        return law
    spec = getattr(law, "spec", None)
    if spec is not None:        # a discretised continuous law (Laplace): subsample the law
        return spec.subsampled(q).law(law.level, "lower" if law.lower else "upper")
    return GPARV(np.append(law.a, 1.0), np.append(law.b, 1.0),
                 np.append(q * law.p, 1.0 - q), law.eps0,
                 f"{law.label}, sampled q={q:g}", lower=law.lower)


def check_sampling(q: object) -> float:
    """A subsampling rate in ``(0, 1]``, else :class:`ParameterError`."""
    x = V.positive_float("sampling", q)
    if x > 1:
        raise ParameterError(f"sampling must be in (0, 1], got {x}")
    if x < sys.float_info.min:
        raise ParameterError(f"sampling must be at least {sys.float_info.min:.4g} (a normal "
                             f"float: subnormal rates lose their digits), got {x:g}")
    return x


class Subsampled(Mechanism):
    """``mechanism`` with Poisson client subsampling at rate ``q`` (module docstring).

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer ``R`` of a participating user.
    q : float
        Probability that a user takes part in the round, in ``(0, 1]``.

    Examples
    --------
    >>> from amp.mechanisms.table1 import KRR
    >>> m = Subsampled(KRR(2.0, k=10), 0.1)
    >>> gamma = 0.1 * KRR(2.0, k=10).gamma + 0.9
    >>> round(m.gparv().gamma, 6) == round(gamma, 6)
    True
    """

    def __init__(self, mechanism: Mechanism, q: float):
        if not isinstance(mechanism, Mechanism):
            raise ParameterError(f"mechanism must be an amp mechanism, got "
                                 f"{type(mechanism).__name__}")
        if isinstance(mechanism, Subsampled):      # q1 (q2 R + (1-q2) ⊥) + (1-q1) ⊥
            q, mechanism = check_sampling(q) * mechanism.q, mechanism.inner
        self.inner = mechanism
        self.q = check_sampling(q)
        self.eps0 = mechanism.eps0
        self.symmetric = mechanism.symmetric
        self.finite = mechanism.finite
        self.name = f"{mechanism.name} sampled q={self.q:g}"

    def matrix(self) -> np.ndarray:
        """``[q P | (1 - q)]``: the inner matrix scaled by ``q`` and the void column."""
        M = self.inner.matrix()
        return np.hstack([self.q * M, np.full((M.shape[0], 1), 1.0 - self.q)]) \
            if self.q < 1 else M

    def gparv_laws(self) -> list[GPARV]:
        return [subsample_law(law, self.q) for law in self.inner.gparv_laws()]

    def lower_laws(self, pair: tuple[int, int] | None = None, *,
                   backgrounds: bool = True) -> list[GPARV]:
        laws = self.inner.lower_laws(pair, backgrounds=backgrounds)
        return [subsample_law(law, self.q) for law in laws]

    def describe(self) -> str:
        return f"{self.inner.describe()}, sampled q={self.q:g}"
