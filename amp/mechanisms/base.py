"""The mechanism protocol and finite randomizers given as matrices.

:class:`Mechanism` is what every local randomizer of :mod:`amp` offers (``eps0``, the pair laws
``gparv_laws()`` of Theorem 4, the Theorem 5 laws ``lower_laws()``, ``matrix()`` for finite
ones); :class:`MatrixMechanism` is any finite eps0-LDP randomizer given by its matrix (rows are
inputs, columns outputs), whose blanket ``c(y) = min_x P[x, y]`` (Section 3.2) and pair laws
are computed here (:func:`pair_law_from_matrix`, :func:`lower_law_from_matrix`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.validate import show
from amp.mechanisms.gparv import GPARV

__all__ = ["Mechanism", "MatrixMechanism", "Blanket", "blanket_of_matrix",
           "pair_law_from_matrix", "lower_law_from_matrix", "validate_matrix", "matrix_eps0",
           "dedupe_laws", "ROW_SUM_TOL"]

ROW_SUM_TOL = 1e-9


# ---------------------------------------------------------------------------- matrices
def validate_matrix(P: object) -> np.ndarray:
    """Check that ``P`` is a finite-eps0 LDP randomizer matrix; return it as float64.

    Requirements: 2-D with at least 2 rows (inputs) and 1 column (outputs); finite and
    non-negative entries; rows summing to 1 within ``1e-9``; finite eps0, i.e. in every column
    either all entries are 0 (the column is dropped) or all are > 0.
    """
    try:
        M = np.array(P, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"matrix is not numeric: {exc}") from None
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 1:
        raise ParameterError(f"matrix must be 2-D with >= 2 rows (inputs), got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ParameterError("matrix has non-finite entries")
    if np.any(M < 0):
        raise ParameterError("matrix has negative entries")
    sums = M.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > ROW_SUM_TOL)
    if bad.size:
        raise ParameterError(f"matrix rows must sum to 1 (to 1e-9); row {bad[0]} sums to "
                             f"{show(sums[bad[0]])}")
    zero_cols = np.all(M == 0, axis=0)
    M = M[:, ~zero_cols]
    if np.any(M == 0):
        j = int(np.flatnonzero(np.any(M == 0, axis=0))[0])
        raise ParameterError(f"matrix is not eps0-LDP for any finite eps0: output column {j} "
                             "is zero for some inputs and positive for others")
    return M


def matrix_eps0(M: np.ndarray) -> float:
    """Local privacy level ``max_y log(max_x P[x,y] / min_x P[x,y])`` of a validated matrix."""
    return float(np.max(np.log(M.max(axis=0)) - np.log(M.min(axis=0))))


@dataclass(frozen=True)
class Blanket:
    """Blanket decomposition ``R(x) = gamma * omega + (1 - gamma) * LO(x)`` (Section 3.2)."""

    c: np.ndarray          #: ``c(y) = min_x R(x)(y)``
    gamma: float           #: ``sum_y c(y)``
    omega: np.ndarray      #: blanket distribution ``c / gamma``
    leftover: np.ndarray   #: rows ``LO(x) = (R(x) - c) / (1 - gamma)`` (zeros if gamma == 1)


def blanket_of_matrix(M: np.ndarray) -> Blanket:
    """Blanket decomposition of a (validated) matrix, Section 3.2."""
    c = M.min(axis=0)
    gamma = float(c.sum())
    lo = (M - c) / (1 - gamma) if gamma < 1 else np.zeros_like(M)
    return Blanket(c=c, gamma=gamma, omega=c / gamma, leftover=lo)


def _inputs(M: np.ndarray, **xs: object) -> None:
    """Each named input must be a row index of ``M`` (no negative wrap-around)."""
    for name, x in xs.items():
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) \
                or not 0 <= int(x) < M.shape[0]:
            raise ParameterError(f"{name} must be an input index in [0, {M.shape[0] - 1}], "
                                 f"got {show(x)}")


def pair_law_from_matrix(M: np.ndarray, x0: int, x1: int, eps0: float | None = None,
                         label: str = "") -> GPARV:
    """GPARV law of the pair ``(x0, x1)``: ``a = M[x0]/c``, ``b = M[x1]/c`` with mass ``c``."""
    _inputs(M, x0=x0, x1=x1)
    c = M.min(axis=0)
    e0 = matrix_eps0(M) if eps0 is None else eps0
    return GPARV(M[x0] / c, M[x1] / c, c, e0, label or f"pair ({x0}, {x1})")


def lower_law_from_matrix(M: np.ndarray, x0: int, x1: int, x2: int,
                          eps0: float | None = None, label: str = "") -> GPARV:
    """Theorem 5's variable: ``a = M[x0]/M[x2]``, ``b = M[x1]/M[x2]`` with mass ``M[x2]``
    (the datasets ``(x0, x2, ..., x2)`` and ``(x1, x2, ..., x2)``; ``x2`` may equal ``x0``)."""
    _inputs(M, x0=x0, x1=x1, x2=x2)
    e0 = matrix_eps0(M) if eps0 is None else eps0
    return GPARV(M[x0] / M[x2], M[x1] / M[x2], M[x2], e0,
                 label or f"Theorem 5 triple ({x0}, {x1}, {x2})", lower=True)


def dedupe_laws(laws: list[GPARV]) -> list[GPARV]:
    """Keep one law per distinct atom set (order preserved)."""
    seen: set = set()
    out: list[GPARV] = []
    for law in laws:
        if law._key not in seen:
            seen.add(law._key)
            out.append(law)
    return out


# ---------------------------------------------------------------------------- base class
class Mechanism:
    """Base class of the ``eps0``-LDP local randomizers (Definition 1): their GPARV pair laws
    (Definition 2; Theorem 4 maximises over them), Theorem 5 laws and finite matrices.

    Examples
    --------
    >>> m = amp.KRR(4.0, k=10)
    >>> isinstance(m, amp.Mechanism), m.symmetric, round(m.gamma, 4)
    (True, True, 0.1572)
    """

    eps0: float
    name: str = "mechanism"
    #: True when every ordered pair of distinct inputs has the same GPARV law.
    symmetric: bool = False
    #: True when the object is the exact finite mechanism (has a matrix).
    finite: bool = True

    def matrix(self) -> np.ndarray:
        """Probability matrix (rows inputs, columns outputs)."""
        raise ParameterError(f"{self.name} in its large-domain (Table 1) form has no finite "
                             "matrix; give a domain size d")

    def blanket(self) -> Blanket:
        """Blanket decomposition of the finite matrix."""
        return blanket_of_matrix(self.matrix())

    @property
    def gamma(self) -> float:
        """Blanket mass of the randomizer (max over its pair laws; they agree)."""
        return max(law.gamma for law in self.gparv_laws())

    def gparv_laws(self) -> list[GPARV]:
        """Laws of the GPARV over which the blanket bound is maximised."""
        M = self.matrix()
        d = M.shape[0]
        laws = [pair_law_from_matrix(M, i, j, self.eps0, f"{self.name} pair ({i}, {j})")
                for i in range(d) for j in range(d) if i != j]
        return dedupe_laws(laws)

    def gparv(self) -> GPARV:
        """The GPARV law when the mechanism is symmetric (one law for all pairs)."""
        laws = self.gparv_laws()
        if len(laws) != 1:
            raise ParameterError(f"{self.name} has {len(laws)} distinct pair laws; use "
                                 "gparv_laws() and take the maximum bound over them")
        return laws[0]

    def lower_laws(self, pair: tuple[int, int] | None = None, *,
                   backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws for the pair ``(x0, x1)`` (default: (0, 1)): every third input
        ``x2``, then the backgrounds ``x2 = x0`` and ``x2 = x1`` (the datasets
        ``(x0, x0, ..., x0)`` vs ``(x1, x0, ..., x0)`` and their mirror; Appendix B's proof of
        Theorem 5 does not use ``x2 != x0, x1``). Labels name the triple. ``backgrounds=False``
        keeps the paper's pairs only (a third input is then needed)."""
        M = self.matrix()
        d = M.shape[0]
        x0, x1 = pair if pair is not None else (0, 1)
        if x0 == x1:
            raise ParameterError(f"pair must be two distinct inputs, got {(x0, x1)}")
        order = [x2 for x2 in range(d) if x2 not in (x0, x1)]
        if not backgrounds and not order:
            raise ParameterError("the Theorem 5 lower bound needs a third input (>= 3 inputs)")
        order += [x0, x1] if backgrounds else []
        laws = [lower_law_from_matrix(M, x0, x1, x2, self.eps0,
                                      f"{self.name} triple ({x0}, {x1}, {x2})")
                for x2 in order]
        return dedupe_laws(laws)

    def describe(self) -> str:
        """One-line description used in results and the CLI."""
        return self.name

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"<{self.describe()}>"


class MatrixMechanism(Mechanism):
    """Any finite randomizer given as a row-stochastic matrix (rows inputs, columns outputs).

    ``P`` (array_like, rows sum to 1, every column positive) is validated
    (:func:`validate_matrix`) and ``eps0`` is computed from it (Definition 1); ``name`` is
    for display. Its bound is the maximum over all ordered pairs of distinct inputs.

    Examples
    --------
    >>> m = amp.MatrixMechanism([[.6, .2, .2], [.2, .6, .2], [.2, .2, .6]])
    >>> m.describe(), round(amp.epsilon(m, 1000, 1e-6).value, 4)
    ('matrix (3 inputs x 3 outputs, eps0=1.09861)', 0.1491)
    """

    def __init__(self, P: object, name: str = "matrix"):
        self._M = validate_matrix(P)
        self.eps0 = matrix_eps0(self._M)
        if self.eps0 > V.MAX_EPS0:
            raise ParameterError(f"matrix eps0 = {self.eps0} exceeds {V.MAX_EPS0}")
        self.name = name

    def matrix(self) -> np.ndarray:
        return self._M.copy()

    def describe(self) -> str:
        d, m = self._M.shape
        return f"{self.name} ({d} inputs x {m} outputs, eps0={self.eps0:.6g})"
