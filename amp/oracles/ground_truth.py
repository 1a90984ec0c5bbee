"""Exact shuffled divergence of a finite randomizer, by enumeration of output histograms.

For a finite local randomizer given as a matrix ``P`` (rows inputs ``x``, columns outputs ``y``)
and neighbouring datasets

    X0 = (x0, z_2, ..., z_n),    X1 = (x1, z_2, ..., z_n),

the shuffler ``S`` reveals only the multiset of the ``n`` outputs, i.e. the histogram
``h in N^|Y|`` with ``sum(h) = n``. Its law is the convolution over users of their one-hot
categorical laws ``P[x_i, .]``. This module enumerates those histograms exactly (a sparse
dynamic programme keyed by packed count vectors) and evaluates the hockey-stick divergence

    D_{e^eps}(S(R^n(X0)) || S(R^n(X1))) = sum_h (Pr[h | X0] - e^eps Pr[h | X1])_+ ,

the left-hand side of Theorem 4 (Section 5.1) and of Theorem 5 (Section 5.3, proved in
Appendix B), and the object of the vulnerable-pair conjecture of Section 8. It is the ground
truth that every upper bound (Theorem 4) must dominate and that Theorem 5 computes for the
special pair ``z_2 = ... = z_n = x2``.

Cost: the number of histograms is at most ``C(n + m - 1, m - 1)`` for ``m`` outputs (after
merging proportional output columns, which is exact, see :func:`merge_proportional_columns`);
:data:`MAX_HISTOGRAMS` bounds it and a :class:`~amp.core.errors.ParameterError` is raised beyond.

Accuracy: every histogram probability is a sum of products of matrix entries computed in
float64 (relative error ~ ``n * 1e-16``); the divergence is a sum of non-negative terms, so its
absolute error is of order ``(1 + e^eps) * n * 1e-16``. No discretisation, no truncation.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.inversion import FunctionCurve, crossing
from amp.mechanisms.base import matrix_eps0, validate_matrix

__all__ = [
    "MAX_HISTOGRAMS", "n_histograms", "merge_proportional_columns", "histogram_law",
    "hockey_stick", "ShuffledPair", "shuffled_divergence", "shuffled_delta",
    "epsilon_for_delta", "datasets_to_pair",
    # building blocks (used by amp.oracles.conjecture)
    "as_matrix", "eps_array", "hs", "Packing", "check_cost", "histogram_dp",
]

#: Largest number of output histograms (upper bound ``C(n+m-1, m-1)``) accepted.
MAX_HISTOGRAMS = 2_000_000

#: Largest number of packed keys created in one step of the dynamic programme
#: (``#histograms * #outputs``); bounds memory to a few hundred MB.
MAX_WORK = 40_000_000

#: Relative tolerance for declaring two output columns proportional (merge is exact then).
COLUMN_RTOL = 1e-12

Direction = Literal["forward", "reverse", "max"]
_DIRECTIONS = ("forward", "reverse", "max")


# ---------------------------------------------------------------------------- helpers
def n_histograms(n: int, n_outputs: int) -> int:
    """Number of histograms of ``n`` outputs over ``n_outputs`` values: ``C(n+m-1, m-1)``."""
    return math.comb(n + n_outputs - 1, n_outputs - 1)


def merge_proportional_columns(M: np.ndarray) -> np.ndarray:
    """Merge output columns that are proportional across all inputs (an exact reduction).

    If ``P[x, y'] = c * P[x, y]`` for every input ``x``, then given "the output is y or y'"
    the choice between them has the same law ``(1, c)/(1 + c)`` for every input. Hence, for
    any dataset, the histogram over merged outputs is a sufficient statistic of the full
    histogram and every hockey-stick divergence between shuffled outputs is unchanged.

    Parameters
    ----------
    M : numpy.ndarray
        Validated randomizer matrix (rows inputs, positive columns).

    Returns
    -------
    numpy.ndarray
        Matrix with one column per class of proportional columns (column sums added).
    """
    shape = M / M.sum(axis=0, keepdims=True)           # each column normalised to sum 1
    q = np.round(shape / COLUMN_RTOL).astype(np.int64)
    _, inv = np.unique(q.T, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    out = np.zeros((M.shape[0], int(inv.max()) + 1))
    np.add.at(out.T, inv, M.T)
    return out


def as_matrix(P: object, merge_columns: bool) -> np.ndarray:
    """Validated randomizer matrix (:func:`amp.mechanisms.validate_matrix`, eps0 at most
    :data:`amp.core.validate.MAX_EPS0`), with proportional columns merged if asked."""
    M = validate_matrix(P)
    e0 = matrix_eps0(M)
    if e0 > V.MAX_EPS0:
        raise ParameterError(f"matrix eps0 = {e0} exceeds {V.MAX_EPS0}")
    return merge_proportional_columns(M) if merge_columns else M


def _input_index(name: str, value: object, n_inputs: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer input index, got {value!r}")
    v = int(value)
    if not 0 <= v < n_inputs:
        raise ParameterError(f"{name} must be an input index in [0, {n_inputs - 1}], got {v}")
    return v


def eps_array(eps: object) -> tuple[np.ndarray, bool]:
    """Validate ``eps`` (scalar or array, finite, >= 0); return (1-D array, was_scalar)."""
    try:
        arr = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"eps must be a real number or an array of them, got {eps!r}") \
            from None
    if arr.ndim > 1:
        raise ParameterError(f"eps must be a scalar or a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ParameterError("eps must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"eps must be finite, got {eps!r}")
    if np.any(arr < 0):
        raise ParameterError(f"eps must be >= 0, got {float(arr.min())}")
    if np.any(arr > 700):
        raise ParameterError(f"eps must be <= 700 (e^eps overflows), got {float(arr.max())}")
    return arr.ravel(), arr.ndim == 0


def hockey_stick(p: object, q: object, eps: object) -> float | np.ndarray:
    """Hockey-stick divergence ``D_{e^eps}(p || q) = sum_y (p(y) - e^eps q(y))_+`` (Section 2).

    Parameters
    ----------
    p, q : array_like
        Probability vectors of equal length (non-negative, summing to 1 within 1e-9).
    eps : float or array_like
        One or several ``eps >= 0``.

    Returns
    -------
    float or numpy.ndarray
        The divergence (a float for scalar ``eps``).
    """
    pa = np.asarray(p, dtype=float).ravel()
    qa = np.asarray(q, dtype=float).ravel()
    for name, a in (("p", pa), ("q", qa)):
        if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0) \
                or abs(a.sum() - 1) > 1e-9:
            raise ParameterError(f"{name} must be a probability vector, got {a!r}")
    if pa.shape != qa.shape:
        raise ParameterError(f"p and q must have equal length, got {pa.size} and {qa.size}")
    e, scalar = eps_array(eps)
    out = hs(pa, qa, e)
    return float(out[0]) if scalar else out


def hs(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``sum (p - e^eps q)_+`` for each eps (chunked to bound memory)."""
    ee = np.exp(eps)
    out = np.empty(ee.size)
    chunk = max(1, 4_000_000 // max(1, p.size))
    for s in range(0, ee.size, chunk):
        d = p[None, :] - ee[s:s + chunk, None] * q[None, :]
        out[s:s + chunk] = np.maximum(d, 0.0).sum(axis=1)
    return out


# ---------------------------------------------------------------------------- histogram DP
@dataclass(frozen=True)
class Packing:
    """Packing of count vectors (entries <= n) into ``words`` int64 words, base ``n + 1``."""

    m: int
    base: int
    per_word: int

    @property
    def words(self) -> int:
        return -(-self.m // self.per_word)

    @classmethod
    def for_(cls, n: int, m: int) -> "Packing":
        base = n + 1
        per_word = max(1, int(62 // math.log2(base))) if base > 1 else m
        while base ** per_word >= 2 ** 62:     # guard against log rounding
            per_word -= 1
        return cls(m=m, base=base, per_word=per_word)

    def unit(self, y: int) -> np.ndarray:
        """Packed key of the one-hot count vector ``e_y``."""
        u = np.zeros(self.words, dtype=np.int64)
        u[y // self.per_word] = self.base ** (y % self.per_word)
        return u

    def decode(self, keys: np.ndarray) -> np.ndarray:
        """Count vectors (rows) of packed keys of shape ``(H, words)``."""
        out = np.empty((keys.shape[0], self.m), dtype=np.int64)
        for y in range(self.m):
            w, j = divmod(y, self.per_word)
            out[:, y] = (keys[:, w] // self.base ** j) % self.base
        return out


def _merge_keys(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum ``weights`` (rows = series) over identical keys (rows of ``keys``)."""
    if keys.shape[1] == 1:
        uk, inv = np.unique(keys[:, 0], return_inverse=True)
        uk = uk[:, None]
    else:
        uk, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    out = np.vstack([np.bincount(inv, weights=w, minlength=uk.shape[0]) for w in weights])
    return uk, out


def check_cost(n: int, m: int) -> None:
    """Raise :class:`ParameterError` when ``n`` users over ``m`` outputs exceed
    :data:`MAX_HISTOGRAMS` histograms or :data:`MAX_WORK` keys per step."""
    h = n_histograms(n, m)
    if h > MAX_HISTOGRAMS:
        raise ParameterError(f"exact shuffled divergence too large: n={n} users over {m} "
                             f"outputs give up to {h} histograms (max {MAX_HISTOGRAMS})")
    if h * m > MAX_WORK:
        raise ParameterError(f"exact shuffled divergence too large: n={n} users over {m} "
                             f"outputs need {h * m} keys per step (max {MAX_WORK})")


def histogram_dp(M: np.ndarray, inputs: Sequence[int], pack: Packing,
                  last_rows: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the histogram of independent draws ``y_i ~ M[inputs[i]]``.

    If ``last_rows`` is given, one more user is added whose input is each of ``last_rows`` in
    turn; the result then has one probability row per entry of ``last_rows`` on common keys.
    """
    m = M.shape[1]
    units = np.vstack([pack.unit(y) for y in range(m)])                   # (m, words)
    keys = np.zeros((1, pack.words), dtype=np.int64)
    probs = np.ones((1, 1))
    for x in inputs:
        new_keys = (keys[None, :, :] + units[:, None, :]).reshape(-1, pack.words)
        new_w = (M[x][:, None] * probs[0][None, :]).reshape(1, -1)
        keys, probs = _merge_keys(new_keys, new_w)
    if last_rows is None:
        return keys, probs[0]
    new_keys = (keys[None, :, :] + units[:, None, :]).reshape(-1, pack.words)
    new_w = np.vstack([(M[x][:, None] * probs[0][None, :]).reshape(-1) for x in last_rows])
    return _merge_keys(new_keys, new_w)


def histogram_law(P: object, inputs: Sequence[int], *,
                  merge_columns: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the shuffled output ``S(R^n(X))`` of a dataset, as histograms.

    Parameters
    ----------
    P : array_like
        Randomizer matrix (rows inputs, columns outputs), validated by
        :func:`amp.mechanisms.validate_matrix` (all-zero columns dropped).
    inputs : sequence of int
        The dataset ``X = (x_1, ..., x_n)`` as input indices.
    merge_columns : bool
        Merge proportional output columns first (exact for divergences, changes the outputs).

    Returns
    -------
    counts : numpy.ndarray
        Histograms as rows of shape ``(H, m)``, each summing to ``n``.
    probs : numpy.ndarray
        Their probabilities (summing to 1 up to rounding).
    """
    M = as_matrix(P, merge_columns)
    xs = [_input_index(f"inputs[{i}]", x, M.shape[0]) for i, x in enumerate(inputs)]
    if not xs:
        raise ParameterError("inputs must contain at least one user")
    check_cost(len(xs), M.shape[1])
    pack = Packing.for_(len(xs), M.shape[1])
    keys, probs = histogram_dp(M, xs, pack)
    return pack.decode(keys), probs


# ---------------------------------------------------------------------------- the pair
@dataclass(frozen=True)
class ShuffledPair:
    """Exact laws of ``S(R^n(X0))`` and ``S(R^n(X1))`` for one neighbouring pair.

    Build with :meth:`from_inputs`. ``p0[h]``, ``p1[h]`` are the probabilities of the same
    histogram ``h`` (rows of :attr:`counts`) under ``X0 = (x0, others)`` and
    ``X1 = (x1, others)``.
    """

    x0: int
    x1: int
    others: tuple[int, ...]
    p0: np.ndarray = field(repr=False)
    p1: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)

    @classmethod
    def from_inputs(cls, P: object, x0: int, x1: int, others: Sequence[int] | int, *,
                    n: int | None = None, merge_columns: bool = True) -> "ShuffledPair":
        """Enumerate the histogram laws of ``X0 = (x0, others)`` and ``X1 = (x1, others)``.

        Parameters
        ----------
        P : array_like
            Randomizer matrix (rows inputs, columns outputs), finite eps0.
        x0, x1 : int
            The differing inputs of the first user; must differ.
        others : sequence of int or int
            Inputs of users ``2..n`` (order irrelevant), or one input ``x2`` repeated
            ``n - 1`` times (then ``n`` is required).
        n : int, optional
            Number of users; required when ``others`` is an int, else checked against
            ``len(others) + 1``.
        merge_columns : bool
            Merge proportional output columns first (exact; default True).
        """
        M = as_matrix(P, merge_columns)
        k = M.shape[0]
        a = _input_index("x0", x0, k)
        b = _input_index("x1", x1, k)
        if a == b:
            raise ParameterError(f"x0 and x1 must differ, got x0 = x1 = {a}")
        if isinstance(others, numbers.Integral) and not isinstance(others, bool):
            if n is None:
                raise ParameterError("n is required when others is a single input index")
            nn = V.users(n)
            x2 = _input_index("others", others, k)
            zs = (x2,) * (nn - 1)
        else:
            try:
                zs = tuple(_input_index(f"others[{i}]", z, k) for i, z in enumerate(others))
            except TypeError:
                raise ParameterError(f"others must be a sequence of input indices or one "
                                     f"index, got {others!r}") from None
            if n is not None and V.users(n) != len(zs) + 1:
                raise ParameterError(f"n must equal len(others) + 1 = {len(zs) + 1}, got {n}")
        zs = tuple(sorted(zs))
        nn = len(zs) + 1
        check_cost(nn, M.shape[1])
        pack = Packing.for_(nn, M.shape[1])
        keys, probs = histogram_dp(M, zs, pack, last_rows=(a, b))
        return cls(a, b, zs, probs[0], probs[1], pack.decode(keys))

    @property
    def n(self) -> int:
        """Number of users."""
        return len(self.others) + 1

    @property
    def n_histograms(self) -> int:
        """Number of histograms with positive probability."""
        return int(self.p0.size)

    def divergence(self, eps: object, direction: Direction = "forward") -> float | np.ndarray:
        """Exact ``D_{e^eps}`` between the shuffled outputs (Theorem 4's left-hand side).

        Parameters
        ----------
        eps : float or array_like
            One or several ``eps >= 0``.
        direction : {"forward", "reverse", "max"}
            ``D(S(X0) || S(X1))``, ``D(S(X1) || S(X0))``, or the larger of the two.

        Returns
        -------
        float or numpy.ndarray
            A float for scalar ``eps``, else an array aligned with ``eps``.
        """
        if direction not in _DIRECTIONS:
            raise ParameterError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")
        e, scalar = eps_array(eps)
        if direction == "forward":
            out = hs(self.p0, self.p1, e)
        elif direction == "reverse":
            out = hs(self.p1, self.p0, e)
        else:
            out = np.maximum(hs(self.p0, self.p1, e), hs(self.p1, self.p0, e))
        return float(out[0]) if scalar else out

    def max_eps(self, direction: Direction = "max") -> float:
        """Smallest eps with divergence exactly 0: ``log max_h p0[h]/p1[h]`` (per direction)."""
        if direction not in _DIRECTIONS:
            raise ParameterError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")
        f = float(np.max(np.log(self.p0) - np.log(self.p1)))
        r = float(np.max(np.log(self.p1) - np.log(self.p0)))
        val = {"forward": f, "reverse": r, "max": max(f, r)}[direction]
        return max(0.0, val)

    def epsilon_for_delta(self, delta: float, direction: Direction = "max",
                          tol: float = 1e-9) -> Bound:
        """Smallest ``eps >= 0`` with ``D_{e^eps} <= delta``: one search
        (:func:`amp.inversion.crossing`), conservative.

        ``D`` is continuous and non-increasing in eps, zero from :meth:`max_eps` on. The search
        keeps ``D(lower) > delta >= D(upper)`` and stops when ``upper - lower <= tol``
        (``lower = upper = 0`` when already ``D(0) <= delta``).

        Parameters
        ----------
        delta : float
            Target in ``(0, 1)``.
        direction : {"forward", "reverse", "max"}
            Which divergence (default the max of both directions).
        tol : float
            Bracket width (absolute), ``> 0``.

        Returns
        -------
        Bound
            ``quantity="eps"``, ``bound="ground-truth"``, ``[lower, upper]`` as above and
            ``value = upper``; ``details`` holds ``direction``, ``divergence_at_upper``
            (``D(upper) <= delta``) and the number of ``evaluations``.
        """
        d = V.probability_open("delta", delta)
        t = V.positive_float("tol", tol)
        if direction not in _DIRECTIONS:
            raise ParameterError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")

        def div(e: float) -> float:
            return float(self.divergence(e, direction))

        def bracket(e: float) -> tuple[float, float]:
            v = div(e)
            # crossing's estimate is log(sqrt(lower * upper)), which underflows below ~1e-154:
            # the lower end 0 is also valid (it only matters for targets below ~1e-154)
            return (v if v * v > 0 else 0.0), v

        d0 = div(0.0)
        if d0 <= d:
            return self._eps_bound(0.0, 0.0, d, direction, d0, 1)
        hi = self.max_eps(direction) * (1 + 1e-12) + 1e-15
        while div(hi) > d:                            # float noise at max_eps: widen
            hi = 2 * hi + 1e-12
        # relative width tol / hi at the scale max(lo, hi) <= hi gives upper - lower <= tol
        c = crossing(FunctionCurve(bracket, "histogram enumeration"), d, 0.0, hi,
                     decreasing=True, rel_tol=t / hi, good_end_known=True, bad_end_known=True,
                     max_evaluations=400)
        return self._eps_bound(c.lo, c.hi, d, direction, div(c.hi), c.evaluations + 2)

    def _eps_bound(self, lo: float, hi: float, delta: float, direction: str, at_hi: float,
                   evaluations: int) -> Bound:
        label = (f"shuffled pair x0={self.x0}, x1={self.x1}, others={self.others}"
                 if len(self.others) <= 8 else
                 f"shuffled pair x0={self.x0}, x1={self.x1}, {len(self.others)} others")
        return Bound("eps", lo, hi, "ground-truth", "histogram enumeration", self.n, label,
                     {"delta": delta}, details={"direction": direction,
                                                "divergence_at_upper": at_hi,
                                                "evaluations": evaluations})


# ---------------------------------------------------------------------------- functions
def datasets_to_pair(X0: Sequence[int], X1: Sequence[int]) -> tuple[int, int, tuple[int, ...]]:
    """Split neighbouring datasets into ``(x0, x1, others)``; they must differ in one position."""
    try:
        a, b = list(X0), list(X1)
    except TypeError:
        raise ParameterError(f"X0 and X1 must be sequences of input indices, got {X0!r}, "
                             f"{X1!r}") from None
    if len(a) == 0 or len(a) != len(b):
        raise ParameterError(f"X0 and X1 must be non-empty with equal length, got lengths "
                             f"{len(a)} and {len(b)}")
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if len(diff) != 1:
        raise ParameterError(f"X0 and X1 must differ in exactly one position, they differ in "
                             f"{len(diff)} (positions {diff[:5]})")
    i = diff[0]
    return a[i], b[i], tuple(a[:i] + a[i + 1:])


def shuffled_divergence(P: object, x0: int, x1: int, others: Sequence[int] | int,
                        eps: object, *, n: int | None = None, direction: Direction = "forward",
                        merge_columns: bool = True) -> float | np.ndarray:
    """Exact ``D_{e^eps}(S(R^n(X0)) || S(R^n(X1)))`` for ``X_b = (x_b, others)``.

    The left-hand side of Theorems 4 and 5 computed by histogram enumeration; for
    ``others = (x2,) * (n - 1)`` it equals Theorem 5's ``E[(sum G_i)_+]/n``.

    Parameters
    ----------
    P : array_like
        Randomizer matrix (rows inputs, columns outputs).
    x0, x1 : int
        Differing inputs.
    others : sequence of int or int
        Inputs of the other ``n - 1`` users, or one index repeated ``n - 1`` times.
    eps : float or array_like
        ``eps >= 0`` (scalar or 1-D array).
    n : int, optional
        Number of users (required when ``others`` is an int).
    direction : {"forward", "reverse", "max"}
        Which divergence.
    merge_columns : bool
        Merge proportional output columns (exact).

    Raises
    ------
    ParameterError
        Bad inputs, or more than :data:`MAX_HISTOGRAMS` histograms.
    """
    pair = ShuffledPair.from_inputs(P, x0, x1, others, n=n, merge_columns=merge_columns)
    return pair.divergence(eps, direction)


def shuffled_delta(P: object, X0: Sequence[int], X1: Sequence[int], eps: object, *,
                   direction: Direction = "forward") -> float | np.ndarray:
    """Exact ``D_{e^eps}(S(R^n(X0)) || S(R^n(X1)))`` for datasets differing in one position."""
    x0, x1, others = datasets_to_pair(X0, X1)
    return shuffled_divergence(P, x0, x1, others, eps, direction=direction)


def epsilon_for_delta(P: object, X0: Sequence[int], X1: Sequence[int], delta: float, *,
                      direction: Direction = "max", tol: float = 1e-9) -> Bound:
    """Smallest eps with exact shuffled divergence ``<= delta`` (one search, conservative):
    a :class:`~amp.core.result.Bound` of quantity ``"eps"``, ``value = upper``.

    See :meth:`ShuffledPair.epsilon_for_delta`; ``direction="max"`` (default) gives the eps
    of the pair in both directions, i.e. the pair is ``(eps, delta)``-indistinguishable.
    """
    x0, x1, others = datasets_to_pair(X0, X1)
    pair = ShuffledPair.from_inputs(P, x0, x1, others)
    return pair.epsilon_for_delta(delta, direction, tol)
