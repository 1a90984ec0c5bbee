"""The ordered input pairs of a matrix mechanism as arrays, and their cheap certified bounds.

Theorem 4's bound for a finite randomizer given as a matrix ``P`` (rows inputs, columns
outputs) is the maximum over the ordered pairs ``(x0, x1)`` of distinct inputs of the pair
law's ``delta(eps)``; the pair law has atoms ``a = P[x0]/c``, ``b = P[x1]/c`` with mass
``c = min_x P[x]`` per output (Section 3.2, :func:`amp.mechanisms.base.pair_law_from_matrix`).
A ``d x d`` matrix has ``d (d - 1)`` pairs: at ``d = 256``, 65,280 laws of 256 atoms. Rather
than one :class:`~amp.mechanisms.gparv.GPARV` and one full evaluation per pair,
:class:`PairSet` keeps them as arrays:

* outputs whose columns are proportional (equal ratio columns ``P[:, y] / c(y)``, compared
  exactly) are merged, their masses summed: every pair law sees them as one atom;
* pairs whose laws are equal (the same sorted atoms and masses, compared exactly) are kept once;
* :meth:`PairSet.chernoff_upper` is the certified Chernoff bound of
  :func:`amp.core.tails.chernoff_upper` for many pairs at once (numpy over chunks of pairs),
  with the same atom noise ``16 u (a + e^eps b)`` as
  :class:`~amp.backends.dispatch.LawDelta` and the same rounding accounting, so each value is
  a certified upper bound on that pair's ``delta(eps)``. It is also the ranking used to find
  the worst pair quickly (an uncertified use: the ranking only decides what is refined first).

:func:`delta_max` is the pruned maximum at one ``eps``: rank, refine the top pair, drop every
pair whose Chernoff bound (then whose coarse certified bracket) is at most the refined upper
end, refine the survivors (optionally through an ``executor``). The eps search over pairs is
in :mod:`amp.pairsearch`.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from typing import Callable, Sequence

import numpy as np

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import TINY, U
from amp.core.result import Bound
from amp.core.tails import chernoff_certified_log
from amp.backends.dispatch import DEFAULT_ABS_TOL, LawDelta
from amp.mechanisms.base import validate_matrix
from amp.mechanisms.gparv import GPARV

__all__ = ["PairSet", "delta_max", "check_executor", "run_tasks", "CHUNK_ELEMENTS",
           "COARSE_REL_TOL"]

#: Pair-chunk size of the vectorised bounds, in matrix elements (pairs x outputs).
CHUNK_ELEMENTS = 1 << 21


def check_executor(executor: object) -> Executor | None:
    """``executor`` checked by the one rule of every entry (``amp.core.validate.executor``):
    ``None``, a :class:`concurrent.futures.Executor`, or a Dask ``Client`` (used through its
    ``get_executor()``); else ParameterError."""
    return V.executor(executor)  # type: ignore[return-value]


def run_tasks(fn: Callable, items: Sequence, executor: Executor | None) -> list:
    """``[fn(x) for x in items]``, through ``executor.map`` when one is given (results in
    order, so the outcome does not depend on the executor)."""
    if executor is None or len(items) <= 1:
        return [fn(x) for x in items]
    return list(executor.map(fn, items))


class PairSet:
    """The distinct ordered-pair laws of a finite randomizer ``P`` as arrays.

    Parameters
    ----------
    P : array_like
        The randomizer's matrix (validated by :func:`amp.mechanisms.base.validate_matrix`).
    eps0 : float
        Its local privacy level (carried into the laws).
    name : str
        Display name; law labels read ``"<name> pair (x0, x1)"``.

    Attributes
    ----------
    pairs : numpy.ndarray
        ``(k, 2)`` input indices ``(x0, x1)`` of the distinct pair laws (first of each class).
    total : int
        Number of ordered pairs ``d (d - 1)`` before merging equal laws.
    outputs, merged_outputs : int
        Number of output columns before and after merging proportional columns.

    Examples
    --------
    >>> import numpy as np
    >>> from amp.pairs import PairSet
    >>> P = np.array([[.6, .2, .2], [.2, .6, .2], [.2, .2, .6]])     # 3-RR
    >>> ps = PairSet(P, np.log(3))
    >>> ps.total, len(ps), ps.merged_outputs     # all six pairs: one law
    (6, 1, 3)
    """

    def __init__(self, P: object, eps0: float, name: str = "matrix"):
        M = validate_matrix(P)
        d = M.shape[0]
        c = M.min(axis=0)
        R = M / c                     # the exact floats of pair_law_from_matrix's a and b
        # outputs with equal ratio columns are one atom of every pair law
        _, first, inv = np.unique(R.T, axis=0, return_index=True, return_inverse=True)
        inv = np.asarray(inv).ravel()
        order = np.argsort(first)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        cm = np.zeros(first.size)
        np.add.at(cm, rank[inv], c)
        self.R = np.ascontiguousarray(R[:, first[order]])
        self.c = cm
        self.eps0 = float(eps0)
        self.name = name
        self.d = d
        self.outputs = M.shape[1]
        self.merged_outputs = self.R.shape[1]
        self.off_mass = max(0.0, 1.0 - float(cm.sum()))
        self.total = d * (d - 1)
        ii, jj = np.nonzero(~np.eye(d, dtype=bool))
        self.pairs = self._distinct(np.stack([ii, jj], axis=1))

    def _distinct(self, pairs: np.ndarray) -> np.ndarray:
        """First pair of each class of equal laws (atoms sorted, compared exactly).

        A fingerprint (three random projections of the sorted atoms and masses) finds the
        candidates: equal laws have equal sorted arrays, and the full arrays decide within a
        group of equal fingerprints (a rounding difference can only split a class, which
        keeps a law twice, never merge two different laws)."""
        m = self.merged_outputs
        W = np.random.default_rng(0).uniform(0.5, 1.5, size=(3, m))
        fp = np.empty((len(pairs), 3))
        step = max(1, CHUNK_ELEMENTS // max(1, m))
        for s in range(0, len(pairs), step):
            pr = pairs[s:s + step]
            z = self.R[pr[:, 0]] + 1j * self.R[pr[:, 1]]
            o = np.argsort(z, axis=1, kind="stable")
            zs = np.take_along_axis(z, o, axis=1)
            fp[s:s + len(pr)] = np.stack([zs.real @ W[0], zs.imag @ W[1],
                                          self.c[o] @ W[2]], axis=1)
        _, first, inv, counts = np.unique(fp, axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
        inv = np.asarray(inv).ravel()
        keep = set(int(i) for i in first[counts == 1])
        members = np.split(np.argsort(inv, kind="stable"), np.cumsum(counts)[:-1])
        for g in np.flatnonzero(counts > 1):
            reps: list[tuple[int, bytes]] = []
            for k in members[g]:
                key = self._key(pairs[k])
                if not any(key == rk for _, rk in reps):
                    reps.append((int(k), key))
            keep.update(k for k, _ in reps)
        return pairs[np.asarray(sorted(keep), dtype=np.int64)]

    def _key(self, pair: np.ndarray) -> bytes:
        """The law of ``pair`` as bytes: atoms ``(a, b)`` sorted, then their masses."""
        z = self.R[pair[0]] + 1j * self.R[pair[1]]
        o = np.argsort(z, kind="stable")
        return z[o].tobytes() + self.c[o].tobytes()

    def __len__(self) -> int:
        return len(self.pairs)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"PairSet({self.name}: {self.total} ordered pairs, {len(self)} distinct laws, "
                f"{self.merged_outputs} outputs)")

    def label(self, k: int) -> str:
        """Label of pair ``k`` (``"<name> pair (x0, x1)"``)."""
        x0, x1 = self.pairs[k]
        return f"{self.name} pair ({int(x0)}, {int(x1)})"

    def law(self, k: int) -> GPARV:
        """The GPARV law of pair ``k`` (the same law as
        :func:`~amp.mechanisms.base.pair_law_from_matrix`)."""
        x0, x1 = self.pairs[k]
        return GPARV(self.R[x0], self.R[x1], self.c, self.eps0, self.label(k))

    def max_eps(self, idx: np.ndarray | None = None) -> np.ndarray:
        """``log max a/b`` of the pairs ``idx`` (default: all; ``delta = 0`` from there on)."""
        idx = np.arange(len(self)) if idx is None else np.asarray(idx, dtype=np.int64)
        out = np.empty(len(idx))
        for s, pr in self._chunks(idx):
            out[s:s + len(pr)] = np.log((self.R[self.pairs[pr, 0]]
                                         / self.R[self.pairs[pr, 1]]).max(axis=1))
        return out

    def _chunks(self, idx: np.ndarray):
        step = max(1, CHUNK_ELEMENTS // max(1, self.merged_outputs + 1))
        for s in range(0, len(idx), step):
            yield s, idx[s:s + step]

    def chernoff_upper(self, eps: float, n: int, idx: np.ndarray | None = None) -> np.ndarray:
        """Certified upper bounds on ``delta(eps)`` of the pairs ``idx`` (default: all).

        Per pair, :func:`amp.core.tails.chernoff_upper` of the law's atoms
        ``g = a - e^eps b`` raised by their noise ``16 u (a + e^eps b)`` (the off-blanket atom
        0 of mass ``1 - gamma`` included): ``E[S_+] / n <= M(theta)^n / (e theta n)`` at a
        ``theta`` found by a safeguarded Newton search (any ``theta > 0`` is valid), times the
        same safety factor ``exp(n e_M + 64 u + 1e-12)``, ``e_M = 4 u (max |log p| +
        theta max |g| + 16)``. 0 when no atom can be positive; never rounded to 0 otherwise.
        """
        idx = np.arange(len(self)) if idx is None else np.asarray(idx, dtype=np.int64)
        out = np.empty(len(idx))
        E = math.exp(eps)
        lp = np.log(self.c)
        if self.off_mass > 0:
            lp = np.append(lp, math.log(self.off_mass))
        max_lp = float(np.abs(lp).max())
        for s, pr in self._chunks(idx):
            a = self.R[self.pairs[pr, 0]]
            b = self.R[self.pairs[pr, 1]]
            g = a - E * b
            g += 16 * U * (a + E * b)
            del a, b
            if self.off_mass > 0:
                g = np.concatenate([g, np.zeros((len(pr), 1))], axis=1)
            out[s:s + len(pr)] = _chernoff_rows(g, lp, max_lp, n)
        return out


def _chernoff_rows(g: np.ndarray, lp: np.ndarray, max_lp: float, n: int) -> np.ndarray:
    """Row-wise certified Chernoff bound (see :meth:`PairSet.chernoff_upper`)."""
    gmax = g.max(axis=1)
    live = gmax > 0
    res = np.zeros(g.shape[0])
    if not np.any(live):
        return res
    g = g[live]
    scale = np.abs(g).max(axis=1)
    lo = np.log(1e-12 / scale)
    hi = np.log(1e4 / scale)

    def moments(t):
        th = np.exp(t)
        z = lp + th[:, None] * g
        zm = z.max(axis=1)
        w = np.exp(z - zm[:, None])
        s0 = w.sum(axis=1)
        m1 = (w * g).sum(axis=1) / s0
        m2 = (w * g * g).sum(axis=1) / s0
        return th, zm, s0, m1, np.maximum(m2 - m1 * m1, 0.0)

    # h(t) = n K(e^t) - t - 1: h'(t) = n theta K'(theta) - 1 has the sign of the derivative of
    # the convex n K(theta) - log theta, so the root is bracketed by its sign
    t = 0.5 * (lo + hi)
    for _ in range(60):
        th, _, _, m1, var = moments(t)
        h1 = n * th * m1 - 1.0
        lo = np.where(h1 < 0, t, lo)
        hi = np.where(h1 >= 0, t, hi)
        h2 = n * th * m1 + n * th * th * var
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = t - h1 / h2
        ok = (h2 > 0) & (newton > lo) & (newton < hi)
        t_new = np.where(ok, newton, 0.5 * (lo + hi))
        if np.all(np.abs(t_new - t) <= 1e-9 * np.maximum(1.0, np.abs(t))):
            t = t_new
            break
        t = t_new
    th, zm, s0, _, _ = moments(t)
    logb = n * (zm + np.log(s0)) - 1.0 - t
    logb = chernoff_certified_log(logb, n, th, max_lp, scale)
    with np.errstate(over="ignore"):
        val = np.where(logb < 709, np.maximum(np.exp(np.minimum(logb, 709.0)), TINY), np.inf)
    res[live] = val
    return res


# ---------------------------------------------------------------------------- delta max
#: Relative width of the one coarse delta bracket that may prune a Chernoff survivor. Only its
#: upper end is used, and the FFT's upper end is close to the exact value even on a coarse
#: grid (the grid's convexity gap widens the lower end only).
COARSE_REL_TOL = 0.5


def _delta_task(args) -> Bound | None:
    law, n, method, eps, rel_tol, abs_tol, goal = args
    try:
        return LawDelta(law, n, method).delta(eps, rel_tol=rel_tol, abs_tol=abs_tol, goal=goal)
    except NumericalError:
        if rel_tol >= COARSE_REL_TOL:
            return None         # a coarse bracket that cannot be had decides nothing
        raise


def delta_max(ps: PairSet, n: int, eps: float, *, rel_tol: float, method: str = "auto",
              executor: Executor | None = None, abs_tol: float = DEFAULT_ABS_TOL,
              goal: float | None = None) -> tuple[float, float, list[Bound], dict]:
    """Certified ``[lower, upper]`` of ``max_pairs delta_pair(eps)``, pruned.

    1. Rank every pair by its certified Chernoff bound (:meth:`PairSet.chernoff_upper`).
    2. Refine the top pair: a full certified bracket ``[L*, U*]``.
    3. Prune: a pair whose Chernoff bound is ``<= U*`` has ``delta <= U*`` (it cannot raise
       the maximum's upper end, which is ``>= U*``); its lower end (``>= 0``) is not needed
       for the maximum's lower end (a max of lower ends of any pairs is a lower bound).
    4. Prune the same way a survivor whose coarse certified bracket
       (:data:`COARSE_REL_TOL`) has an upper end ``<= U*``.
    5. Refine the rest (``executor.map`` when given, stage 4 too): upper = the largest upper
       end over refined pairs, which dominates every pruned pair's true value; lower = the
       largest refined lower end.

    Every evaluation builds its own :class:`LawDelta` (so the result does not depend on the
    executor); ``abs_tol`` and ``goal`` are passed to it (``LawDelta.delta``: a bracket
    narrower than ``abs_tol`` is accepted; the structured path aims at ``goal``). Returns
    ``(lower, upper, refined parts, details)``.
    """
    ch = ps.chernoff_upper(eps, n)
    order = np.argsort(-ch, kind="stable")
    top = int(order[0])

    def run(ks: list[int], tol: float) -> list:
        return run_tasks(_delta_task, [(ps.law(k), n, method, eps, tol, abs_tol,
                                        None if goal is None else max(goal, tol)) for k in ks],
                         executor)

    first = run([top], rel_tol)[0]
    surv1 = [int(k) for k in order[1:] if ch[k] > first.upper]
    coarse = run(surv1, COARSE_REL_TOL) if rel_tol < COARSE_REL_TOL else [None] * len(surv1)
    surv2 = [k for k, r in zip(surv1, coarse) if r is None or r.upper > first.upper]
    parts = [first] + run(surv2, rel_tol)
    refined = [top] + surv2
    lo = max(p.lower for p in parts)
    hi = max(p.upper for p in parts)
    worst = refined[int(np.argmax([p.upper for p in parts]))]
    details = {"pairs": ps.total, "laws": len(ps), "outputs_merged": ps.merged_outputs,
               "pruned_chernoff": len(ps) - 1 - len(surv1),
               "pruned_coarse": len(surv1) - len(surv2), "refined": len(refined),
               "worst_pair": tuple(int(x) for x in ps.pairs[worst])}
    return lo, hi, parts, details
