"""Stronger clone claim (Section 3.3; Feldman, McMillan, Talwar, SODA 2023) -- not a bound."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from amp.baselines import BOUNDS
from amp.baselines.clone import clone_delta, clone_family_delta
from amp.baselines.stronger_clone import (StrongerCloneWarning, stronger_clone_claimed_delta,
                                          stronger_clone_counterexample,
                                          stronger_clone_claimed_epsilon, stronger_clone_p)
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms import KRR, lower_law_from_matrix, matrix_eps0


def claimed(eps0: float, n: int, eps, p: float | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StrongerCloneWarning)
        return stronger_clone_claimed_delta(eps0, n, eps, p=p)


def claimed_pair(n: int, eps0: float, p: float) -> tuple[dict, dict]:
    """P0(eps0, p), P1(eps0, p) by direct enumeration of (C, A, Delta1, Delta2)."""
    E = math.exp(eps0)
    cases = [((1, 0), E * p), ((0, 1), p), ((0, 0), 1 - (E + 1) * p)]
    P0: dict = {}
    P1: dict = {}
    for c in range(n):
        pc = stats.binom.pmf(c, n - 1, 2 * p) if n > 1 else 1.0
        for a in range(c + 1):
            pa = pc * math.comb(c, a) / 2.0 ** c
            for (d1, d2), pd in cases:
                k0, k1 = (a + d1, c - a + d2), (a + d2, c - a + d1)
                P0[k0] = P0.get(k0, 0.0) + pa * pd
                P1[k1] = P1.get(k1, 0.0) + pa * pd
    return P0, P1


def hockey(P: dict, Q: dict, eps: float) -> float:
    E = math.exp(eps)
    return math.fsum(max(P[k] - E * Q.get(k, 0.0), 0.0) for k in P)


def test_warns_and_is_never_certified() -> None:
    with pytest.warns(StrongerCloneWarning, match="NOT a valid bound"):
        r = stronger_clone_claimed_delta(2.0, 100, 0.3)
    assert not r.certified and "NOT a valid bound" in r.details["note"]
    assert r.bound == "stronger-clone" and r.quantity == "delta" and r.value == r.upper
    with pytest.warns(StrongerCloneWarning):
        e = stronger_clone_claimed_epsilon(2.0, 1000, 1e-3)
    assert not e.certified and e.bound == "stronger-clone" and e.quantity == "eps"
    assert claimed(2.0, 1000, e.value).upper <= 1e-3 < claimed(2.0, 1000, e.lower).lower
    with pytest.warns(StrongerCloneWarning):
        assert not BOUNDS["stronger-clone"].delta(KRR(2.0, k=4), 50, 0.2).certified
    assert not BOUNDS["stronger-clone"].valid
    assert "NOT a valid upper bound" in stronger_clone_claimed_delta.__doc__


@pytest.mark.parametrize("n", [1, 2, 6, 30])
@pytest.mark.parametrize("eps0,frac", [(1.0, 1.0), (2.0, 0.5), (0.5, 0.1)])
def test_claimed_pair_matches_brute_force(n: int, eps0: float, frac: float) -> None:
    p = frac / (math.exp(eps0) + 1)
    P0, P1 = claimed_pair(n, eps0, p)
    eps = np.array([0.0, 0.1, 0.8 * eps0])
    r = claimed(eps0, n, eps, p)
    assert isinstance(r, list) and [b.inputs["eps"] for b in r] == list(eps)
    for e, b in zip(eps, r):
        lo, up = b.lower, b.upper
        exact = hockey(P0, P1, e)
        assert lo <= exact * (1 + 1e-12) + 1e-300 and up >= exact * (1 - 1e-12)
        assert up - exact <= 1e-9 * exact + 1e-55
        assert hockey(P1, P0, e) == pytest.approx(exact, rel=1e-12, abs=1e-300)


def test_generic_claim_is_clone_pair_with_more_clones() -> None:
    """At p = 1/(e^eps0+1) the pair is the clone pair with clone probability 2/(e^eps0+1)."""
    E = math.exp(3.0)
    lo, up = clone_family_delta(10**4, 2 / (E + 1), 1 / (E + 1), 3.0, 0.0,
                                np.array([0.1, 0.3]))
    assert np.allclose([b.value for b in claimed(3.0, 10**4, np.array([0.1, 0.3]))], up,
                       rtol=1e-12)
    for e in (0.05, 0.2, 0.5):       # the claim is below the (valid) standard clone
        assert claimed(3.0, 10**4, e).value < clone_delta(3.0, 10**4, e).value


def test_lemma7_monotone_in_p() -> None:
    E = math.exp(2.0)
    ps = np.linspace(0.02, 1, 8) / (E + 1)
    for e in (0.1, 0.4):
        vals = [claimed(2.0, 200, e, p).value for p in ps]
        assert all(b >= a for a, b in zip(vals, vals[1:]))


# ----------------------------------------------------------------------------- counterexample
def true_divergence_brute(M: np.ndarray, n: int, eps: float) -> float:
    """D(S(R(x0), R(x2), ..) || S(R(x1), R(x2), ..)) by enumerating output histograms."""
    m = M.shape[1]
    rest = {(0,) * m: 1.0}
    for _ in range(n - 1):
        nxt: dict = {}
        for h, pr in rest.items():
            for y in range(m):
                hh = list(h)
                hh[y] += 1
                nxt[tuple(hh)] = nxt.get(tuple(hh), 0.0) + pr * M[2, y]
        rest = nxt
    P0: dict = {}
    P1: dict = {}
    for h, pr in rest.items():
        for y in range(m):
            hh = list(h)
            hh[y] += 1
            key = tuple(hh)
            P0[key] = P0.get(key, 0.0) + pr * M[0, y]
            P1[key] = P1.get(key, 0.0) + pr * M[1, y]
    return hockey(P0, P1, eps)


def test_counterexample_to_the_stronger_clone_reduction() -> None:
    """An eps0-LDP randomizer with Theorem 6's decomposition at p, whose true shuffled
    divergence on X0 = (x0, x2, ..., x2), X1 = (x1, x2, ..., x2) exceeds
    D(P0(eps0, p) || P1(eps0, p)) -- the flawed post-processing is not just a proof gap."""
    eps0 = 1.0
    E = math.exp(eps0)
    p = 0.2 / (E + 2)
    M, _, parts = stronger_clone_counterexample(eps0, p)
    # a genuine eps0-LDP randomizer ...
    assert np.all(M > 0) and np.allclose(M.sum(axis=1), 1, atol=1e-15)
    assert matrix_eps0(M) == pytest.approx(eps0, abs=1e-12)
    # ... with the decomposition of Theorem 6 at parameter p (all parts are distributions)
    for key in ("Q0", "Q1", "Q_1", "Q_2"):
        assert np.all(parts[key] >= 0) and parts[key].sum() == pytest.approx(1, abs=1e-15)
    assert 0 < p <= 1 / (E + 1) and parts["q0"] > 0
    cases = [(2, 0.6, 2.5), (5, 0.6, 7.0), (10, 0.6, 30.0), (10, 0.3, 1.9)]
    for n, eps, factor in cases:
        true = delta_enumerate(lower_law_from_matrix(M, 0, 1, 2), n, eps)   # Theorem 5
        assert true == pytest.approx(true_divergence_brute(M, n, eps), rel=1e-10)
        claim = claimed(eps0, n, eps, p)
        assert true > factor * claim.upper, (n, eps, true, claim.upper)


def test_counterexample_scope() -> None:
    """Honest scope: on the same instance the claim at the largest admissible p (linear
    program) and the generic claim (1) are *not* violated; our searches (k-RR, random 3x2..4x5
    matrices, n <= 10, and local optimisation of 3x3 / 3x4 matrices) found no violation of
    those -- only of the reduction at a given admissible p."""
    eps0 = 1.0
    E = math.exp(eps0)
    p = 0.2 / (E + 2)
    M, _, _ = stronger_clone_counterexample(eps0, p)
    pmax = stronger_clone_p(M, 0, 1, others=[2], eps0=eps0)
    assert p < pmax <= 1 / (E + 1)
    for n, eps in ((2, 0.6), (10, 0.6), (10, 0.3)):
        true = delta_enumerate(lower_law_from_matrix(M, 0, 1, 2), n, eps)
        assert true <= claimed(eps0, n, eps, pmax).lower
        assert true <= claimed(eps0, n, eps).lower


def test_3rr_admits_the_generic_p() -> None:
    """For 3-RR the decomposition exists with p = 1/(e^eps0+1), q0 = 0: then it is a valid
    general clone decomposition and the claim holds (here with equality of the parameters)."""
    E = math.exp(1.5)
    assert stronger_clone_p(KRR(1.5, k=3).matrix(), 0, 1) == pytest.approx(1 / (E + 1), rel=1e-6)


@pytest.mark.parametrize("call", [
    lambda: stronger_clone_claimed_delta(1.0, 10, 0.1, p=0.5),
    lambda: stronger_clone_claimed_delta(1.0, 0, 0.1),
    lambda: stronger_clone_claimed_epsilon(1.0, 10, 2.0),
], ids=["p", "n", "delta"])
def test_bad_input(call) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StrongerCloneWarning)
        with pytest.raises(ParameterError):
            call()
