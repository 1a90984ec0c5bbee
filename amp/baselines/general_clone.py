"""General clone paradigm (Section 4): decompositions, the reduction pair and its divergence.

A decomposition of a finite randomizer ``R`` (matrix ``P``, rows inputs) for the pair
``(x0, x1)`` is (Definition 1 of Section 4.1, equation (2))::

    R(x0) = sum_j a_j Q1^j,    R(x1) = sum_j b_j Q1^j,
    R(x)  = sum_j c_j Q1^j + beta Q_x      for every input x (the other users' inputs),

with ``sum a = sum b = sum c + beta = 1``. Its reduction pair ``(P0^GC, P1^GC)``
(Definition 2 of Section 4.1) is the law of the histogram over ``{1, ..., k+1}`` of one draw
of ``A0`` (``A1``) and ``n - 1`` draws of ``A2`` (``P[A2 = j] = c_j``, ``P[A2 = k+1] = beta``).

Exact divergence
----------------
Only the first draw differs. For indices with ``c_j > 0`` and a histogram ``h`` of ``n``
draws, ``P[Mult_{n-1}(c, beta) = h - e_j] = P[Mult_n(c, beta) = h] h_j / (n c_j)``, so

    P0^GC(h) = P[Mult_n = h] (1/n) sum_j a_j h_j / c_j     (same for P1 with b).

Indices with ``c_j = 0`` are only reached by the first draw and reveal it. Hence

    D_{e^eps}(P0^GC || P1^GC) = sum_{j: c_j = 0} (a_j - e^eps b_j)_+
                                + (1/n) E[(G_1 + ... + G_n)_+],

with ``G_i`` i.i.d., ``G = (a_j - e^eps b_j) / c_j`` w.p. ``c_j`` (``c_j > 0``) and ``0`` w.p.
``beta`` -- a GPARV-type law (:meth:`GeneralCloneDecomposition.law`), evaluated exactly by
multinomial enumeration (:func:`amp.backends.exact.delta_enumerate`). This is checked against
brute-force enumeration of histograms in ``tests/test_general_clone.py``.

For the blanket decomposition (Theorem 4, point masses on every output) this law *is* the
GPARV of the pair, so the general clone divergence equals the blanket value; for any other
decomposition it is at least the blanket value (Theorem 3 of Section 4.2).

Constructors: :func:`standard_clone_decomposition` (Lemma 2 + the ``1/(2 e^eps0)`` clones of
Section 3.1), :func:`blanket_decomposition` (Theorem 4), :func:`merged_krr_decomposition`
(Example 4.0).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from amp.core.lazy import lazy
from amp.baselines._search import eps_array, results
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.exact import MAX_COMPOSITIONS
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.base import matrix_eps0
from amp.mechanisms.table1 import KRR

# scipy is imported on first use (amp.core.lazy): import amp stays fast
gammaln = lazy("scipy.special", "gammaln")

__all__ = ["GeneralCloneDecomposition", "standard_clone_decomposition",
           "blanket_decomposition", "merged_krr_decomposition", "general_clone_delta",
           "REPRO_TOL"]

#: Tolerance of the sum and reproduction checks.
REPRO_TOL = 1e-9
_REL = 1e-11   # relative allowance around the enumerated value (delta_enumerate ~1e-13)

Leftovers = np.ndarray | Callable[[int], np.ndarray] | None


def _vec(name: str, v: object) -> np.ndarray:
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numeric, got {v!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} has non-finite entries")
    if np.any(arr < 0):
        raise ParameterError(f"{name} must be non-negative, got min {arr.min()!r}")
    return arr


def _check_matrix(P: object) -> np.ndarray:
    M = _vec("P", P)
    if M.ndim != 2 or M.shape[0] < 2:
        raise ParameterError(f"P must be 2-D with >= 2 rows (inputs), got shape {M.shape}")
    s = M.sum(axis=1)
    if np.any(np.abs(s - 1) > REPRO_TOL):
        i = int(np.argmax(np.abs(s - 1)))
        raise ParameterError(f"P rows must sum to 1; row {i} sums to {s[i]!r}")
    return M


@dataclass(frozen=True)
class GeneralCloneDecomposition:
    """A general clone decomposition (Section 4.1, equation (2)).

    Parameters
    ----------
    a, b, c : array_like, shape (k,)
        Weights of the shared components for ``R(x0)``, ``R(x1)`` and every input.
    beta : float
        Weight of the per-input leftover; ``sum(c) + beta = 1``.
    Q1 : array_like, shape (k, m)
        Shared components (rows are distributions over the ``m`` outputs).
    Q_rest : array (d, m), callable ``x -> distribution`` or None
        Leftover distribution ``Q_x`` of every input ``x`` (needed when ``beta > 0``).
    P : array_like, shape (d, m), optional
        The randomizer matrix. When given, the decomposition is checked to reproduce it:
        ``P[x0] = a @ Q1``, ``P[x1] = b @ Q1`` and ``P[x] = c @ Q1 + beta Q_x`` for *every*
        input ``x`` (other users may hold any input, including ``x0`` and ``x1``), to
        :data:`REPRO_TOL`.
    x0, x1 : int
        The differing inputs.
    eps0 : float, optional
        Local privacy level (default: from ``P``; otherwise ``max |log a_j / b_j|``).
    label : str
        Description.

    Raises
    ------
    ParameterError
        Negative entries, sums off by more than :data:`REPRO_TOL`, wrong shapes, or a
        decomposition that does not reproduce ``P``; the message names the offending part.
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    beta: float
    Q1: np.ndarray
    Q_rest: Leftovers = None
    P: np.ndarray | None = None
    x0: int = 0
    x1: int = 1
    eps0: float | None = None
    label: str = ""
    _extra: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        a, b, c = _vec("a", self.a).ravel(), _vec("b", self.b).ravel(), _vec("c", self.c).ravel()
        if not (a.size == b.size == c.size) or a.size == 0:
            raise ParameterError(f"a, b, c must be non-empty with equal lengths, got "
                                 f"{a.size}, {b.size}, {c.size}")
        beta = float(_vec("beta", self.beta))
        Q1 = _vec("Q1", self.Q1)
        if Q1.ndim == 1:
            Q1 = Q1[None, :]
        if Q1.ndim != 2 or Q1.shape[0] != a.size:
            raise ParameterError(f"Q1 must have shape (k, |Y|) with k = {a.size}, got "
                                 f"{Q1.shape}")
        for name, total in (("a", a.sum()), ("b", b.sum()), ("c + beta", c.sum() + beta)):
            if abs(total - 1) > REPRO_TOL:
                raise ParameterError(f"{name} must sum to 1 (to {REPRO_TOL:g}), got {total!r}")
        rows = Q1.sum(axis=1)
        if np.any(np.abs(rows - 1) > REPRO_TOL):
            j = int(np.argmax(np.abs(rows - 1)))
            raise ParameterError(f"Q1 rows must be distributions; row {j} sums to {rows[j]!r}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "Q1", Q1)
        if self.Q_rest is not None and not callable(self.Q_rest):
            object.__setattr__(self, "Q_rest", _vec("Q_rest", self.Q_rest))
        if self.P is not None:
            M = _check_matrix(self.P)
            object.__setattr__(self, "P", M)
            self._check_reproduces(M)
            if self.eps0 is None:
                with np.errstate(divide="ignore"):
                    e0 = matrix_eps0(M[:, M.max(axis=0) > 0])
                object.__setattr__(self, "eps0", e0)
        if self.eps0 is None:
            pos = (a > 0) & (b > 0)
            e0 = float(np.max(np.abs(np.log(a[pos] / b[pos])))) if np.any(pos) else 0.0
            object.__setattr__(self, "eps0", e0)

    # ------------------------------------------------------------------ checks
    def leftover(self, x: int) -> np.ndarray:
        """Leftover distribution ``Q_x`` of input ``x``."""
        if self.Q_rest is None:
            raise ParameterError("Q_rest is required when beta > 0")
        q = self.Q_rest(x) if callable(self.Q_rest) else self.Q_rest[x]
        return _vec(f"Q_rest[{x}]", q).ravel()

    def _check_reproduces(self, M: np.ndarray) -> None:
        d, m = M.shape
        if self.Q1.shape[1] != m:
            raise ParameterError(f"Q1 has {self.Q1.shape[1]} outputs but P has {m}")
        for name, x in (("x0", self.x0), ("x1", self.x1)):
            if not (0 <= int(x) < d):
                raise ParameterError(f"{name} must be an input index in [0, {d}), got {x}")
        if self.x0 == self.x1:
            raise ParameterError(f"x0 and x1 must differ, got {self.x0}")
        for name, w, x, which in (("a", self.a, self.x0, "x0"), ("b", self.b, self.x1, "x1")):
            err = float(np.max(np.abs(w @ self.Q1 - M[x])))
            if err > REPRO_TOL:
                raise ParameterError(f"decomposition does not reproduce R({which}): "
                                     f"max |{name} @ Q1 - P[{x}]| = {err:.3g}")
        common = self.c @ self.Q1
        for x in range(d):
            if self.beta > 0:
                q = self.leftover(x)
                if q.shape != (m,) or abs(q.sum() - 1) > REPRO_TOL:
                    raise ParameterError(f"Q_rest[{x}] must be a distribution over {m} outputs")
                rec = common + self.beta * q
            else:
                rec = common
            err = float(np.max(np.abs(rec - M[x])))
            if err > REPRO_TOL:
                raise ParameterError(f"decomposition does not reproduce R({x}): max |c @ Q1 + "
                                     f"beta Q_{x} - P[{x}]| = {err:.3g}")

    # ------------------------------------------------------------------ the reduction pair
    @property
    def k(self) -> int:
        """Number of shared components."""
        return int(self.a.size)

    def law(self) -> GPARV | None:
        """Law of ``G``: ``(a_j/c_j, b_j/c_j)`` w.p. ``c_j`` for ``c_j > 0`` (None if all
        ``c_j = 0``); the atom 0 has mass ``beta``."""
        pos = self.c > 0
        if not np.any(pos):
            return None
        return GPARV(self.a[pos] / self.c[pos], self.b[pos] / self.c[pos], self.c[pos],
                     float(self.eps0), self.label or "general clone")

    def revealed(self, eps: float) -> float:
        """``sum_{j: c_j = 0} (a_j - e^eps b_j)_+`` (components only the first user reaches)."""
        z = self.c <= 0
        return float(np.sum(np.maximum(self.a[z] - math.exp(eps) * self.b[z], 0.0)))

    def divergence(self, n: int, eps: float) -> float:
        """``D_{e^eps}(P0^GC || P1^GC)`` by the exact formula of the module docstring."""
        n = V.users(n)
        eps = V.positive_float("eps", eps, allow_zero=True)
        law = self.law()
        body = _enumerate(law, n, eps) if law is not None else 0.0
        return body + self.revealed(eps)

    def swapped(self) -> "GeneralCloneDecomposition":
        """The decomposition of the reversed pair ``(x1, x0)``."""
        return GeneralCloneDecomposition(self.b, self.a, self.c, self.beta, self.Q1,
                                         self.Q_rest, self.P, self.x1, self.x0, self.eps0,
                                         self.label + " (reversed)")


def _enumerate(law: GPARV, n: int, eps: float) -> float:
    """Exact ``E[(G_1 + ... + G_n)_+] / n`` by multinomial enumeration (stars and bars).

    Same quantity as :func:`amp.backends.exact.delta_enumerate`, with the count vectors generated in
    vectorised chunks; raises :class:`ParameterError` above
    :data:`amp.backends.exact.MAX_COMPOSITIONS` count vectors.
    """
    g, p = law.atoms(eps)
    keep = p > 0
    g, p = g[keep], p[keep]
    k = g.size
    if g.max() <= 0:
        return 0.0
    if k == 1:
        return max(float(g[0]), 0.0)
    total = math.comb(n + k - 1, k - 1)
    if total > MAX_COMPOSITIONS:
        raise ParameterError(f"exact enumeration too large: n={n} with {k} atoms gives "
                             f"{total} count vectors (max {MAX_COMPOSITIONS})")
    logp = np.log(p)
    lg = gammaln(np.arange(n + 2))          # lg[m] = log((m-1)!)
    parts: list[float] = []
    combos = itertools.combinations(range(n + k - 1), k - 1)
    chunk = 200_000
    while True:
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, chunk)),
                           dtype=np.int64)
        if flat.size == 0:
            break
        bars = flat.reshape(-1, k - 1)
        edges = np.empty((bars.shape[0], k + 1), dtype=np.int64)
        edges[:, 0], edges[:, 1:k], edges[:, k] = -1, bars, n + k - 1
        C = np.diff(edges, axis=1) - 1
        s = C @ g
        pos = s > 0
        if np.any(pos):
            Cp = C[pos]
            logw = lg[n + 1] - lg[Cp + 1].sum(axis=1) + (Cp * logp).sum(axis=1)
            parts.extend((np.exp(logw) * s[pos]).tolist())
    return math.fsum(parts) / n


def general_clone_delta(decomposition: GeneralCloneDecomposition, n: int,
                        eps: float | np.ndarray) -> Bound | list[Bound]:
    """Exact ``D_{e^eps}(P0^GC || P1^GC)`` of a general clone decomposition (Section 4.1).

    Evaluated by multinomial enumeration (moderate ``n``; a :class:`ParameterError` is raised
    when the enumeration is too large). Returns ``quantity="delta"``,
    ``bound="general-clone"`` (a list for an array ``eps``); ``[lower, upper]`` adds a relative
    allowance of 1e-11 around the enumerated value and ``value = upper``.

    Examples
    --------
    >>> from amp.baselines import (general_clone_delta,
    ...     merged_krr_decomposition, standard_clone_decomposition)
    >>> best = merged_krr_decomposition(10, 4.0)    # Example 4.0
    >>> std = standard_clone_decomposition(amp.KRR(4.0, k=10).matrix())
    >>> [round(general_clone_delta(d, 100, 0.5).value, 4)
    ...  for d in (best, std)]
    [0.2367, 0.4444]
    >>> round(amp.delta(amp.KRR(4.0, k=10), 100, 0.5).value, 4)
    0.2367
    """
    if not isinstance(decomposition, GeneralCloneDecomposition):
        raise ParameterError(f"decomposition must be a GeneralCloneDecomposition, got "
                             f"{type(decomposition).__name__}")
    n = V.users(n)
    arr, scalar = eps_array(eps)
    v = np.array([decomposition.divergence(n, float(e)) for e in arr.ravel()])
    lower, upper = v * (1 - _REL), np.minimum(v * (1 + _REL), 1.0)
    note = ("general clone reduction pair (Section 4.1), exact via D = sum_{c_j=0}(a_j - e^eps "
            "b_j)_+ + E[(sum G_i)_+]/n; " + (decomposition.label or ""))
    return results(scalar, "delta", arr, lower, upper, bound="general-clone",
                   method="general clone (exact enumeration)", n=n,
                   mechanism=decomposition.label or "general clone decomposition",
                   certified=True, note=note)


# ----------------------------------------------------------------------------- constructors
def _pair(P: object, x0: int, x1: int) -> tuple[np.ndarray, int, int]:
    M = _check_matrix(P)
    d = M.shape[0]
    x0 = V.int_at_least("x0", x0, 0)
    x1 = V.int_at_least("x1", x1, 0)
    for name, x in (("x0", x0), ("x1", x1)):
        if x >= d:
            raise ParameterError(f"{name} must be < {d} (number of inputs), got {x}")
    if x0 == x1:
        raise ParameterError(f"x0 and x1 must differ, got {x0}")
    return M, x0, x1


def standard_clone_decomposition(P: object, x0: int = 0, x1: int = 1,
                                 eps0: float | None = None) -> GeneralCloneDecomposition:
    """The standard clone decomposition (Section 3.1) as a general clone decomposition.

    Lemma 2 (Kairouz et al.) for the pair, with ``E = e^eps0`` and ``alpha = E/(E+1)``::

        Q1^0 = (E R(x0) - R(x1)) / (E - 1),
        Q1^1 = (E R(x1) - R(x0)) / (E - 1),
        R(x0) = alpha Q1^0 + (1-alpha) Q1^1,
        R(x1) = (1-alpha) Q1^0 + alpha Q1^1,

    and every input ``R(x) = Q1^0/(2E) + Q1^1/(2E) + (1 - 1/E) LO(x)`` with
    ``LO(x) = (R(x) - (R(x0) + R(x1))/(2E)) / (1 - 1/E)`` (non-negative by eps0-LDP).

    Parameters
    ----------
    P : array_like
        Randomizer matrix (rows inputs).
    x0, x1 : int
        The pair.
    eps0 : float, optional
        Local privacy level used for the decomposition (default: the matrix's own ``eps0``;
        a larger value is also valid).
    """
    M, x0, x1 = _pair(P, x0, x1)
    with np.errstate(divide="ignore"):
        e_mat = matrix_eps0(M[:, M.max(axis=0) > 0])
    if not math.isfinite(e_mat):
        raise ParameterError("the matrix is not eps0-LDP for any finite eps0 (an output has "
                             "probability 0 for some inputs only)")
    e0 = e_mat if eps0 is None else V.eps0_value(eps0)
    if e0 <= 0:
        raise ParameterError("the standard clone decomposition needs eps0 > 0 (rows differ)")
    if e0 < e_mat - 1e-12:
        raise ParameterError(f"eps0 = {e0} is below the matrix's local privacy level {e_mat}")
    E = math.exp(e0)
    R0, R1 = M[x0], M[x1]
    Q0 = (E * R0 - R1) / (E - 1)
    Qb = (E * R1 - R0) / (E - 1)
    for name, q in (("Q1^0", Q0), ("Q1^1", Qb)):
        if np.any(q < -1e-12):
            raise ParameterError(f"{name} has negative entries: the matrix is not "
                                 f"{e0:g}-LDP for this pair")
    Q0, Qb = np.maximum(Q0, 0.0), np.maximum(Qb, 0.0)
    alpha = E / (E + 1)
    beta = 1 - 1 / E
    LO = (M - (R0 + R1) / (2 * E)) / beta
    if np.any(LO < -1e-12):
        raise ParameterError(f"leftover LO(x) has negative entries: the matrix is not "
                             f"{e0:g}-LDP")
    LO = np.maximum(LO, 0.0)
    return GeneralCloneDecomposition([alpha, 1 - alpha], [1 - alpha, alpha],
                                     [1 / (2 * E), 1 / (2 * E)], beta, np.vstack([Q0, Qb]), LO,
                                     M, x0, x1, e0, f"standard clone decomposition "
                                     f"(eps0={e0:g}, pair ({x0}, {x1}))")


def blanket_decomposition(P: object, x0: int = 0, x1: int = 1) -> GeneralCloneDecomposition:
    """Theorem 4's decomposition: point masses on every output, ``a_j = R(x0)(y_j)``,
    ``b_j = R(x1)(y_j)``, ``c_j = min_x R(x)(y_j)``, ``beta = 1 - gamma``,
    ``Q_x = (R(x) - c) / beta``."""
    M, x0, x1 = _pair(P, x0, x1)
    c = M.min(axis=0)
    beta = max(0.0, 1.0 - float(c.sum()))
    LO = (M - c) / beta if beta > 0 else None
    return GeneralCloneDecomposition(M[x0], M[x1], c, beta, np.eye(M.shape[1]), LO, M, x0, x1,
                                     None, f"blanket decomposition (pair ({x0}, {x1}))")


def merged_krr_decomposition(k: int, eps0: float) -> GeneralCloneDecomposition:
    """Example 4.0: the optimal decomposition of k-RR with merged components, pair ``(0, 1)``.

    Components ``1_{x0}``, ``1_{x1}`` and ``U`` (uniform on the other ``k - 2`` values; omitted
    when ``k = 2``), with ``p = 1/(e^eps0 + k - 1)``, ``q = (k-2) p``::

        a = (e^eps0 p, p, q),  b = (p, e^eps0 p, q),  c = (p, p, q),
        beta = (e^eps0 - 1) p,  Q_x = 1_x.
    """
    mech = KRR(eps0, k=k)
    k, E, p = mech.k, math.exp(mech.eps0), mech.p
    M = mech.matrix()
    comps = [np.eye(k)[0], np.eye(k)[1]]
    a, b, c = [E * p, p], [p, E * p], [p, p]
    if k > 2:
        U = np.zeros(k)
        U[2:] = 1.0 / (k - 2)
        comps.append(U)
        a.append((k - 2) * p), b.append((k - 2) * p), c.append((k - 2) * p)
    return GeneralCloneDecomposition(a, b, c, (E - 1) * p, np.vstack(comps), np.eye(k), M, 0,
                                     1, mech.eps0, f"merged {k}-RR decomposition (Example 4.0)")
