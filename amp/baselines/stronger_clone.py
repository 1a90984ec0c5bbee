"""The stronger clone *claimed* bound (Section 3.3) -- NOT a valid upper bound.

Feldman, McMillan, Talwar, "Stronger privacy amplification by shuffling for Renyi and
approximate differential privacy", SODA 2023 (Feldman et al. 2023a), claimed that for every
``eps0``-LDP randomizer the shuffled divergence is at most ``D_{e^eps}(P0(eps0, p) ||
P1(eps0, p))`` with (Section 3.3 of the paper)

    C ~ Bin(n-1, 2p),  A ~ Bin(C, 1/2),  Delta1 ~ Bern(e^eps0 p),
    Delta2 ~ Bin(1 - Delta1, p / (1 - e^eps0 p)),
    P0(eps0, p) = (A + Delta1, C - A + Delta2),   P1(eps0, p) = (A + Delta2, C - A + Delta1),

with ``p`` from the decomposition of Theorem 6 (their Corollary 3.4), and, by the monotonicity
in ``p`` (Lemma 7), the generic claim (1) with ``p = 1/(e^eps0 + 1)``. The post-processing
function of the SODA version is flawed: the first user's left-over ``Q_1`` is mixed with the
other users' left-overs, and the function cannot know which one to sample. The corrected arXiv
version (Feldman et al. 2023b, arXiv:2208.04591) shows the general bound only for a restricted
class of randomizers; the general claim is unproven. The paper therefore never presents it as a
bound, and neither does this module: every function here emits a :class:`StrongerCloneWarning`
and returns ``certified=False`` (``bound="stronger-clone"``).

The divergence of the claimed pair is computed exactly with the clone engine
(:func:`amp.baselines.clone.clone_family_delta`): the first user adds ``(1, 0)`` w.p.
``e^eps0 p``, ``(0, 1)`` w.p. ``p`` and ``(0, 0)`` w.p. ``1 - (e^eps0 + 1) p``; at
``p = 1/(e^eps0 + 1)`` the last case vanishes and the pair is the standard clone pair with
clone probability ``2/(e^eps0 + 1)`` instead of ``e^-eps0``.

:func:`stronger_clone_p` computes, by a linear program, the largest ``p`` for which the
decomposition of Theorem 6 exists for a finite randomizer and a given set of inputs; it is
used to test the specific claim on small instances (``tests/test_stronger_clone.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Iterable

import numpy as np

from amp.core.lazy import lazy
from amp.baselines._search import (delta_targets, describe_source, eps0_of, eps_array,
                                   invert_delta, results)
from amp.baselines.clone import DEFAULT_TAIL_MASS, clone_family_delta
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound

# scipy is imported on first use (amp.core.lazy): import amp stays fast
optimize = lazy("scipy.optimize")

__all__ = ["StrongerCloneWarning", "stronger_clone_claimed_delta",
           "stronger_clone_claimed_epsilon", "stronger_clone_p",
           "stronger_clone_counterexample"]

NOT_VALID = ("NOT a valid bound: stronger clone claim of Feldman, McMillan, Talwar (SODA 2023) "
             "whose post-processing is flawed (corrected arXiv version, Feldman et al. 2023b, "
             "proves it only for a restricted class of randomizers); Section 3.3 of the paper")


class StrongerCloneWarning(UserWarning):
    """Emitted whenever the (invalid) stronger clone claim is evaluated."""


def _check_p(eps0: float, p: float | None) -> float:
    pmax = 1.0 / (math.exp(eps0) + 1)
    if p is None:
        return pmax
    p = V.positive_float("p", p, allow_zero=True)
    if p > pmax * (1 + 1e-12):
        raise ParameterError(f"p must be in [0, 1/(e^eps0 + 1)] = [0, {pmax:.6g}], got {p}")
    return min(p, pmax)


def _family(eps0: float, p: float) -> tuple[float, float, float, float]:
    """``(clone_prob, w2, log_ratio, w0)`` of the claimed pair for the clone engine."""
    E = math.exp(eps0)
    return 2 * p, p, eps0, max(0.0, 1 - (E + 1) * p)


def stronger_clone_claimed_delta(eps0: float, n: int, eps: float | np.ndarray, *,
                                 p: float | None = None,
                                 tail_mass: float = DEFAULT_TAIL_MASS
                                 ) -> Bound | list[Bound]:
    """Exact ``D_{e^eps}(P0(eps0, p) || P1(eps0, p))`` of the stronger clone claim.

    **NOT a valid upper bound** (flawed post-processing; see the module docstring). Emits a
    :class:`StrongerCloneWarning` and returns ``certified=False``. ``p`` defaults to the
    generic ``1/(e^eps0 + 1)`` of claim (1). ``[lower, upper]`` encloses the exact divergence
    of the claimed pair.

    Examples
    --------
    >>> import warnings
    >>> from amp.baselines import stronger_clone_claimed_delta
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     r = stronger_clone_claimed_delta(4.0, 10_000, 0.5)
    >>> f"{r.value:.3e}", r.certified
    ('1.988e-08', False)
    """
    warnings.warn(StrongerCloneWarning(NOT_VALID), stacklevel=2)
    eps0 = eps0_of(eps0)
    n = V.users(n)
    p = _check_p(eps0, p)
    arr, scalar = eps_array(eps)
    q, w2, lr, w0 = _family(eps0, p)
    lower, upper = clone_family_delta(n, q, w2, lr, w0, arr, tail_mass)
    zero = arr.ravel() >= eps0
    lower[zero], upper[zero] = 0.0, 0.0
    return results(scalar, "delta", arr, lower, upper, bound="stronger-clone",
                   method="stronger clone (claimed, invalid)", n=n,
                   mechanism=describe_source(None, eps0), certified=False,
                   note=f"{NOT_VALID}; p = {p:.6g}")


def stronger_clone_claimed_epsilon(eps0: float, n: int, delta: float | np.ndarray, *,
                                   p: float | None = None,
                                   tail_mass: float = DEFAULT_TAIL_MASS,
                                   xtol: float = 1e-9) -> Bound | list[Bound]:
    """``eps(delta)`` of the stronger clone claim by one certified search
    (:func:`amp.inversion.crossing`, relative tolerance ``xtol``). **NOT a valid bound**: emits a
    :class:`StrongerCloneWarning` and returns ``certified=False``.

    Examples
    --------
    >>> import warnings
    >>> from amp.baselines import stronger_clone_claimed_epsilon as sc
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     r = sc(4.0, 10_000, 1e-6)
    >>> round(r.value, 4), r.certified
    (0.4108, False)
    """
    warnings.warn(StrongerCloneWarning(NOT_VALID), stacklevel=2)
    eps0 = eps0_of(eps0)
    n = V.users(n)
    p = _check_p(eps0, p)
    xtol = V.positive_float("xtol", xtol, upper=0.5)
    targets, scalar = delta_targets(delta)
    q, w2, lr, w0 = _family(eps0, p)

    def fn(e: float) -> tuple[float, float]:
        if e >= eps0:
            return 0.0, 0.0
        lo, up = clone_family_delta(n, q, w2, lr, w0, np.array([e]), tail_mass)
        return float(lo[0]), float(up[0])

    method = "stronger clone (claimed, invalid) eps(delta)"
    found = [invert_delta(fn, float(d), eps0, rel_tol=xtol, method=method)
             for d in targets.ravel()]
    return results(scalar, "eps", targets, [f[0] for f in found], [f[1] for f in found],
                   bound="stronger-clone", method=method, n=n,
                   mechanism=describe_source(None, eps0), certified=False,
                   note=f"{NOT_VALID}; p = {p:.6g}",
                   details=[{"evaluations": f[2]} for f in found])


def stronger_clone_p(P: object, x0: int, x1: int, others: Iterable[int] | None = None,
                     eps0: float | None = None) -> float:
    """Largest ``p`` of Theorem 6's decomposition for a finite randomizer (linear program).

    Variables ``u0 = p Q1^0``, ``u1 = p Q1^1`` (non-negative vectors over the outputs) and
    ``p``; constraints ``sum u0 = sum u1 = p``, ``R(x0) - R(x1) = (e^eps0 - 1)(u0 - u1)``
    (equal left-over ``Q_1`` for both), ``R(x0) - e^eps0 u0 - u1 >= 0``,
    ``R(x) - u0 - u1 >= 0`` for every ``x`` in ``others`` (default: all inputs),
    ``p <= 1/(e^eps0 + 1)``. Returns ``-1.0`` when infeasible.
    """
    M = np.asarray(P, dtype=float)
    d, m = M.shape
    if eps0 is None:
        eps0 = float(np.max(np.log(M.max(axis=0)) - np.log(M.min(axis=0))))
    E = math.exp(eps0)
    xs = list(range(d)) if others is None else sorted(set(int(x) for x in others))
    # variables: u0 (m), u1 (m), p
    nv = 2 * m + 1
    c = np.zeros(nv)
    c[-1] = -1.0
    A_eq, b_eq = [], []
    row = np.zeros(nv); row[:m] = 1; row[-1] = -1; A_eq.append(row); b_eq.append(0.0)
    row = np.zeros(nv); row[m:2 * m] = 1; row[-1] = -1; A_eq.append(row); b_eq.append(0.0)
    for y in range(m):
        row = np.zeros(nv); row[y] = E - 1; row[m + y] = -(E - 1)
        A_eq.append(row); b_eq.append(M[x0, y] - M[x1, y])
    A_ub, b_ub = [], []
    for y in range(m):
        row = np.zeros(nv); row[y] = E; row[m + y] = 1
        A_ub.append(row); b_ub.append(M[x0, y])
        for x in xs:
            row = np.zeros(nv); row[y] = 1; row[m + y] = 1
            A_ub.append(row); b_ub.append(M[x, y])
    bounds = [(0, None)] * (2 * m) + [(0, 1 / (E + 1))]
    res = optimize.linprog(c, A_ub=np.array(A_ub), b_ub=np.array(b_ub), A_eq=np.array(A_eq),
                           b_eq=np.array(b_eq), bounds=bounds, method="highs")
    return min(float(res.x[-1]), 1 / (E + 1)) if res.status == 0 else -1.0


def stronger_clone_counterexample(eps0: float = 1.0, p: float | None = None
                                  ) -> tuple[np.ndarray, float, dict]:
    """A 3-input, 4-output ``eps0``-LDP randomizer with Theorem 6's decomposition at ``p``.

    Outputs ``(0, 1, *, 2)``; inputs ``x0, x1, x2`` are rows ``0, 1, 2``::

        R(x0) = e^eps0 p 1_0 + p 1_1 + q0 Q_1,     R(x1) = p 1_0 + e^eps0 p 1_1 + q0 Q_1,
        R(x2) = p 1_0 + p 1_1 + (1 - 2p) Q_2,      q0 = 1 - (e^eps0 + 1) p,

    with ``Q_1 = (0, 0, s, 1 - s)`` and ``Q_2 = (0, 0, r, 1 - r)`` chosen so that the first
    user's left-over ``Q_1`` is as recognisable as ``eps0``-LDP allows (ratios ``e^eps0`` and
    ``e^-eps0`` on ``*`` and ``2``). Needs ``p <= 1/(e^eps0 + 2)``; default
    ``p = 0.2/(e^eps0 + 2)``. The stronger clone claim
    fails on it (``tests/test_stronger_clone.py``, Chapter 3 of the book).

    Returns ``(matrix, p, parts)`` with the components ``Q0, Q1, Q_1, Q_2`` and ``q0``.
    """
    E = math.exp(eps0)
    if p is None:
        p = 0.2 / (E + 2)
    if not 0 < p <= 1 / (E + 2):
        raise ParameterError(f"p must be in (0, 1/(e^eps0 + 2)] = (0, {1 / (E + 2):.6g}], got {p}")
    q0, B = 1 - (E + 1) * p, 1 - 2 * p
    r = (q0 - B / E) / (B * (E - 1 / E))
    s = E * B * r / q0
    parts = {"Q0": np.array([1.0, 0, 0, 0]), "Q1": np.array([0, 1.0, 0, 0]),
             "Q_1": np.array([0, 0, s, 1 - s]), "Q_2": np.array([0, 0, r, 1 - r]), "q0": q0}
    M = np.vstack([E * p * parts["Q0"] + p * parts["Q1"] + q0 * parts["Q_1"],
                   p * parts["Q0"] + E * p * parts["Q1"] + q0 * parts["Q_1"],
                   p * parts["Q0"] + p * parts["Q1"] + B * parts["Q_2"]])
    return M, float(p), parts
