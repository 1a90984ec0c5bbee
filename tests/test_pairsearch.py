"""Direct tests of amp.pairsearch (reached otherwise only through amp.epsilon on matrices).

Contract of :func:`epsilon_max`: the returned bracket contains the maximum over the ordered
input pairs of each pair's Theorem 4 threshold ``eps_pair(delta)``; ``details["worst_pair"]``
is a pair attaining it (within the bracket); every law is either pruned (by Chernoff or by a
coarse bracket) or refined. Oracle: each pair's Theorem 4 curve by exact enumeration of the
atom counts at small n, built from the matrix here (blanket = column minima), and its
threshold by bisection.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from amp.pairs import PairSet
from amp.pairsearch import epsilon_max
from helpers import random_ldp_matrix


def compositions(n: int, k: int) -> np.ndarray:
    rows = [np.diff((-1,) + cut + (n + k - 1,)) - 1
            for cut in itertools.combinations(range(n + k - 1), k - 1)]
    return np.array(rows, dtype=float)


def pair_curve(M: np.ndarray, x0: int, x1: int, n: int):
    """eps -> E[(G_1 + ... + G_n)_+] / n of the pair (x0, x1), exactly (counts enumerated)."""
    c = M.min(axis=0)
    a, b = M[x0] / c, M[x1] / c
    p = np.append(c, max(0.0, 1.0 - c.sum()))
    C = compositions(n, p.size)
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    from scipy.special import gammaln
    logw = gammaln(n + 1) - gammaln(C + 1).sum(axis=1) + \
        np.where(C > 0, C * logp, 0.0).sum(axis=1)
    w = np.exp(logw)

    def delta(eps: float) -> float:
        g = np.append(a - math.exp(eps) * b, 0.0)
        return float(np.dot(w, np.maximum(C @ g, 0.0))) / n
    return delta


def threshold(curve, delta: float, hi: float) -> float:
    lo = 0.0
    if curve(0.0) <= delta:
        return 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if curve(mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("seed,d,m,eps0,n,delta", [(1, 4, 5, 2.0, 6, 0.02),
                                                    (2, 3, 6, 3.0, 5, 0.05)])
def test_maximum_over_pairs_against_enumeration(seed, d, m, eps0, n, delta):
    M = random_ldp_matrix(np.random.default_rng(seed), d, m, eps0)
    e0 = float(np.max(np.log(M.max(axis=0) / M.min(axis=0))))
    exact = {(i, j): threshold(pair_curve(M, i, j, n), delta, e0 + 1e-9)
             for i, j in itertools.permutations(range(d), 2)}
    want = max(exact.values())
    assert want > 0
    r = epsilon_max(PairSet(M, e0), n, delta, rel_tol=1e-3)
    assert r.lower <= want * (1 + 1e-9) and want <= r.upper * (1 + 1e-9)
    assert r.upper - r.lower <= 1e-3 * r.upper
    assert exact[r.details["worst_pair"]] >= r.lower * (1 - 1e-9)
    dt = r.details
    assert dt["pruned_chernoff"] + dt["pruned_coarse"] + dt["refined"] == dt["laws"]
    assert dt["pairs"] == d * (d - 1)


def test_symmetric_matrix_is_one_law():
    """k-RR as a matrix: all ordered pairs are one law; the answer is that law's threshold."""
    k, eps0, n, delta = 3, 1.5, 6, 0.02
    E = math.exp(eps0)
    M = (np.ones((k, k)) + (E - 1) * np.eye(k)) / (E + k - 1)
    want = threshold(pair_curve(M, 0, 1, n), delta, eps0)
    r = epsilon_max(PairSet(M, eps0), n, delta, rel_tol=1e-3)
    assert r.details["laws"] == 1 and r.details["pairs"] == 6
    assert r.lower <= want * (1 + 1e-9) and want <= r.upper * (1 + 1e-9)
