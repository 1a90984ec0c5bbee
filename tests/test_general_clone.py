"""General clone paradigm (Section 4): decompositions, Theorem 3 and Theorem 4 numerically."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from amp.baselines.clone import clone_delta
from amp.baselines.general_clone import (GeneralCloneDecomposition, blanket_decomposition,
                                         general_clone_delta, merged_krr_decomposition,
                                         standard_clone_decomposition)
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.exact import delta_enumerate
from amp.mechanisms import (BLH, KRR, OUE, RAPPOR, HadamardResponse, matrix_eps0,
                            pair_law_from_matrix)

RANDOM_LDP = np.array([[0.40, 0.25, 0.20, 0.15],
                       [0.20, 0.35, 0.15, 0.30],
                       [0.25, 0.20, 0.30, 0.25]])


# ----------------------------------------------------------------------------- oracles
def brute_force_divergence(dec: GeneralCloneDecomposition, n: int, eps: float) -> float:
    """Enumerate every histogram of (first draw, n-1 other draws) of the GC reduction pair."""
    k = dec.k
    probs = np.append(dec.c, dec.beta)
    first0 = np.append(dec.a, 0.0)
    first1 = np.append(dec.b, 0.0)
    P0: dict = {}
    P1: dict = {}
    for rest in itertools.product(range(k + 1), repeat=n - 1):
        pr = math.prod(probs[j] for j in rest)
        if pr == 0:
            continue
        base = np.bincount(np.array(rest, dtype=int), minlength=k + 1)
        for j in range(k + 1):
            h = base.copy()
            h[j] += 1
            key = tuple(h)
            P0[key] = P0.get(key, 0.0) + pr * first0[j]
            P1[key] = P1.get(key, 0.0) + pr * first1[j]
    E = math.exp(eps)
    return math.fsum(max(P0[h] - E * P1.get(h, 0.0), 0.0) for h in P0)


def scaled_blanket(P: np.ndarray, x0: int, x1: int, lam: float) -> GeneralCloneDecomposition:
    """A valid non-optimal decomposition: point masses with common part ``lam * min_x R(x)``."""
    c = lam * P.min(axis=0)
    beta = 1 - c.sum()
    return GeneralCloneDecomposition(P[x0], P[x1], c, beta, np.eye(P.shape[1]),
                                     (P - c) / beta, P, x0, x1)


def decompositions(P: np.ndarray, x0: int, x1: int) -> dict:
    return {"standard clone": standard_clone_decomposition(P, x0, x1),
            "blanket": blanket_decomposition(P, x0, x1),
            "scaled blanket 0.6": scaled_blanket(P, x0, x1, 0.6),
            "standard clone, eps0+0.5": standard_clone_decomposition(
                P, x0, x1, eps0=matrix_eps0(P) + 0.5)}


# ----------------------------------------------------------------------------- formula
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_exact_formula_matches_brute_force(n: int) -> None:
    P = KRR(1.2, k=4).matrix()
    decs = list(decompositions(P, 0, 1).values()) + [merged_krr_decomposition(4, 1.2)]
    decs += [decompositions(RANDOM_LDP, 2, 0)["standard clone"]]
    for dec in decs:
        for eps in (0.0, 0.25, 0.8):
            bf = brute_force_divergence(dec, n, eps)
            r = general_clone_delta(dec, n, eps)
            assert r.lower <= bf * (1 + 1e-12) + 1e-300
            assert r.upper >= bf * (1 - 1e-12)
            assert r.value == pytest.approx(bf, rel=1e-9, abs=1e-15)


def test_result_type_scalar_and_array() -> None:
    """A scalar eps gives one Bound, an array a list of Bound in input order."""
    dec = merged_krr_decomposition(4, 1.2)
    r = general_clone_delta(dec, 6, 0.25)
    assert isinstance(r, Bound) and r.quantity == "delta" and r.bound == "general-clone"
    assert r.certified and r.lower <= r.value == r.upper and r.inputs == {"eps": 0.25}
    arr = general_clone_delta(dec, 6, np.array([0.0, 0.25, 0.8]))
    assert isinstance(arr, list) and [b.inputs["eps"] for b in arr] == [0.0, 0.25, 0.8]
    assert arr[1] == r


def test_zero_common_weight_component_is_revealed() -> None:
    """A component with c_j = 0 (only the first user reaches it) is handled exactly."""
    a, b, c = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.0, 0.6, 0.1]
    dec = GeneralCloneDecomposition(a, b, c, 0.3, np.eye(3))
    for n in (1, 2, 4):
        for eps in (0.0, 0.4):
            assert dec.divergence(n, eps) == pytest.approx(
                brute_force_divergence(dec, n, eps), rel=1e-10, abs=1e-15)


# ----------------------------------------------------------------------------- Theorems 3, 4
MATRICES = {"4-RR": (KRR(1.2, k=4).matrix(), 0, 1),
            "random": (RANDOM_LDP, 0, 1),
            "random (2,1)": (RANDOM_LDP, 2, 1),
            "RAPPOR d=3": (RAPPOR(1.0, d=3).matrix(), 0, 1),
            "BLH d=3": (BLH(1.0, d=3).matrix(), 1, 2)}


@pytest.mark.parametrize("name", list(MATRICES))
def test_theorem3_blanket_below_every_decomposition(name: str) -> None:
    P, x0, x1 = MATRICES[name]
    law = pair_law_from_matrix(P, x0, x1)
    for n in (2, 9, 18):
        for eps in (0.0, 0.2, 0.6):
            blanket = delta_enumerate(law, n, eps)
            for dname, dec in decompositions(P, x0, x1).items():
                gc = general_clone_delta(dec, n, eps)
                assert gc.value >= blanket, (dname, n, eps)


@pytest.mark.parametrize("name", list(MATRICES))
def test_theorem4_blanket_decomposition_equals_blanket(name: str) -> None:
    P, x0, x1 = MATRICES[name]
    dec = blanket_decomposition(P, x0, x1)
    law = pair_law_from_matrix(P, x0, x1)
    for n in (1, 7, 18):
        for eps in (0.0, 0.3):
            assert general_clone_delta(dec, n, eps).value == pytest.approx(
                delta_enumerate(law, n, eps), rel=1e-10, abs=1e-300)


def test_merged_krr_is_optimal() -> None:
    """Example 4.0: the merged k-RR decomposition gives the blanket value."""
    for k in (2, 3, 6):
        dec = merged_krr_decomposition(k, 1.5)
        law = KRR(1.5, k=k).gparv()
        for n in (5, 20):
            assert dec.divergence(n, 0.2) == pytest.approx(delta_enumerate(law, n, 0.2),
                                                           rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("name", list(MATRICES))
def test_standard_clone_decomposition_gives_clone_bound(name: str) -> None:
    P, x0, x1 = MATRICES[name]
    dec = standard_clone_decomposition(P, x0, x1)
    e0 = matrix_eps0(P)
    for n in (3, 25):
        for eps in (0.05, 0.4):
            assert dec.divergence(n, eps) == pytest.approx(clone_delta(e0, n, eps).value,
                                                           rel=1e-9, abs=1e-300)


TABLE1_FINITE = {"5-RR": KRR(1.5, k=5), "RAPPOR d=3": RAPPOR(1.5, d=3), "OUE d=3": OUE(1.5, d=3),
                 "BLH d=3": BLH(1.5, d=3), "HR d=3": HadamardResponse(1.5, d=3)}


@pytest.mark.parametrize("name", list(TABLE1_FINITE))
def test_clone_dominates_blanket_table1(name: str) -> None:
    mech = TABLE1_FINITE[name]
    for n in (5, 20):
        for eps in (0.1, 0.5, 1.0):
            blanket = max(delta_enumerate(law, n, eps) for law in mech.gparv_laws())
            assert clone_delta(mech.eps0, n, eps).lower >= blanket


def test_swapped_pair() -> None:
    dec = standard_clone_decomposition(RANDOM_LDP, 0, 2)
    sw = dec.swapped()
    assert (sw.x0, sw.x1) == (2, 0)
    assert sw.divergence(6, 0.1) == pytest.approx(
        standard_clone_decomposition(RANDOM_LDP, 2, 0).divergence(6, 0.1), rel=1e-12)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,word", [
    (dict(a=[-0.1, 1.1], b=[0.5, 0.5], c=[0.5, 0.5], beta=0.0), "a"),
    (dict(a=[0.5, 0.5], b=[0.6, 0.5], c=[0.5, 0.5], beta=0.0), "b"),
    (dict(a=[0.5, 0.5], b=[0.5, 0.5], c=[0.3, 0.3], beta=0.3), "c + beta"),
    (dict(a=[0.5, 0.5], b=[0.5, 0.5], c=[0.5, 0.5], beta=-0.1), "beta"),
    (dict(a=[0.5, 0.5, 0.0], b=[0.5, 0.5, 0.0], c=[0.5, 0.5, 0.0], beta=0.0), "Q1"),
], ids=["neg-a", "sum-b", "sum-c", "neg-beta", "shape"])
def test_bad_coefficients(kwargs: dict, word: str) -> None:
    with pytest.raises(ParameterError, match=word.replace("+", r"\+")):
        GeneralCloneDecomposition(Q1=np.eye(2), **kwargs)


def test_non_reproducing_decomposition_is_rejected() -> None:
    P = KRR(1.0, k=3).matrix()
    good = blanket_decomposition(P, 0, 1)
    with pytest.raises(ParameterError, match="does not reproduce R"):
        GeneralCloneDecomposition(good.b, good.a, good.c, good.beta, good.Q1, good.Q_rest,
                                  P, 0, 1)
    with pytest.raises(ParameterError, match="does not reproduce R"):
        GeneralCloneDecomposition(good.a, good.b, good.c, good.beta, good.Q1,
                                  np.roll(good.Q_rest, 1, axis=0), P, 0, 1)


def test_constructor_input_checks() -> None:
    with pytest.raises(ParameterError, match="x1"):
        blanket_decomposition(RANDOM_LDP, 0, 7)
    with pytest.raises(ParameterError, match="differ"):
        standard_clone_decomposition(RANDOM_LDP, 1, 1)
    with pytest.raises(ParameterError, match="eps0"):
        standard_clone_decomposition(RANDOM_LDP, 0, 1, eps0=0.1)
    with pytest.raises(ParameterError, match="P rows"):
        blanket_decomposition([[0.5, 0.4], [0.5, 0.5]], 0, 1)
