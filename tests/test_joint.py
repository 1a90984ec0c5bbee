"""Tests of amp.mechanisms.joint: joint composition (Section 6) against explicit product matrices."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism, MAX_MATRIX_ENTRIES, joint_copies
from amp.oracles.joint_pairs import subset_deltas
from amp.mechanisms import (BLH, KRR, OUE, RAPPOR, HadamardResponse, MatrixMechanism,
                            lower_law_from_matrix, pair_law_from_matrix)

RTOL = 1e-10


# ---------------------------------------------------------------------------- helpers
def law_key(law: GPARV, digits: int = 9) -> dict:
    """Atoms merged on a coarse relative grid: {(round a, round b): p}."""
    out: dict = {}
    for a, b, p in zip(law.a, law.b, law.p):
        key = (float(f"{a:.{digits}e}"), float(f"{b:.{digits}e}"))
        out[key] = out.get(key, 0.0) + p
    return out


def assert_same_law(x: GPARV, y: GPARV, rtol: float = 1e-10) -> None:
    kx, ky = law_key(x), law_key(y)
    assert sorted(kx) == sorted(ky), f"atoms differ:\n{sorted(kx)}\n{sorted(ky)}"
    for key in kx:
        assert kx[key] == pytest.approx(ky[key], rel=rtol, abs=1e-15)


def assert_same_delta(x: GPARV, y: GPARV, n: int, eps_list=(0.0, 0.3, 1.0)) -> None:
    for eps in eps_list:
        dx, dy = delta_enumerate(x, n, eps), delta_enumerate(y, n, eps)
        assert dx == pytest.approx(dy, rel=RTOL, abs=1e-14), (n, eps)


def law_set(laws) -> set:
    return {tuple(sorted((k, round(v, 12)) for k, v in law_key(law).items())) for law in laws}


def all_matrix_pair_laws(J: JointMechanism) -> list[GPARV]:
    M = J.matrix()
    d = M.shape[0]
    return [pair_law_from_matrix(M, i, j, J.eps0) for i in range(d) for j in range(d) if i != j]


SMALL_JOINTS = {
    "3-RR x2": lambda: JointMechanism([KRR(0.7, k=3)] * 2),
    "3-RR x3": lambda: JointMechanism([KRR(0.5, k=3)] * 3),
    "4-RR x2": lambda: JointMechanism([KRR(1.3, k=4)] * 2),
    "4-RR x3": lambda: JointMechanism([KRR(0.9, k=4)] * 3),
    "RAPPOR d3 x2": lambda: JointMechanism([RAPPOR(1.1, d=3)] * 2),
    "OUE d3 x2": lambda: JointMechanism([OUE(0.8, d=3)] * 2),
    "BLH d3 x2": lambda: JointMechanism([BLH(1.2, d=3)] * 2),
    "3-RR + RAPPOR d3": lambda: JointMechanism([KRR(0.6, k=3), RAPPOR(1.0, d=3)]),
    "4-RR + 3-RR + OUE d3": lambda: JointMechanism([KRR(0.4, k=4), KRR(0.9, k=3), OUE(0.5, d=3)]),
}


# ---------------------------------------------------------------------------- (a) vs matrix
@pytest.mark.parametrize("case", list(SMALL_JOINTS), ids=list(SMALL_JOINTS))
def test_pair_laws_match_product_matrix(case):
    J = SMALL_JOINTS[case]()
    M = J.matrix()
    pairs = J.pairs()
    assert len(pairs) >= 1
    for jp in pairs:
        x0 = [0] * J.m
        x1 = [1 if i in jp.differ else 0 for i in range(J.m)]
        ref = pair_law_from_matrix(M, J.input_index(x0), J.input_index(x1), J.eps0)
        assert_same_law(jp.law, ref)
        assert_same_delta(jp.law, ref, n=5 if J.m == 2 else 4)


@pytest.mark.parametrize("case", ["3-RR x2", "3-RR + RAPPOR d3", "RAPPOR d3 x2"])
def test_candidates_are_exactly_the_matrix_pair_laws(case):
    """Every ordered pair of distinct joint inputs has one of the candidate laws and back."""
    J = SMALL_JOINTS[case]()
    assert law_set(J.gparv_laws()) == law_set(all_matrix_pair_laws(J))


def random_matrix_mechanism(seed: int, d: int = 3, outputs: int = 4) -> MatrixMechanism:
    rng = np.random.default_rng(seed)
    P = rng.uniform(0.5, 2.0, size=(d, outputs))
    return MatrixMechanism(P / P.sum(axis=1, keepdims=True))


def test_non_symmetric_component_candidates_match_matrix():
    """A generic matrix has several pair and same-input laws; all combinations are candidates."""
    mech = random_matrix_mechanism(3)
    assert len(mech.gparv_laws()) == 6
    J = JointMechanism([mech, mech])
    assert law_set(J.gparv_laws()) == law_set(all_matrix_pair_laws(J))
    J2 = JointMechanism([mech, KRR(0.5, k=3)])
    assert law_set(J2.gparv_laws()) == law_set(all_matrix_pair_laws(J2))
    J3 = JointMechanism([HadamardResponse(1.0, d=3), KRR(0.5, k=3)])
    assert law_set(J3.gparv_laws()) == law_set(all_matrix_pair_laws(J3))


def test_same_input_law_is_marginal_of_pair_law():
    """Law of (a, a) = atoms (a, a, p) of any pair law with first input x: check on a matrix."""
    mech = random_matrix_mechanism(7, d=4, outputs=6)
    J = JointMechanism([mech, KRR(0.4, k=3)])
    M = J.matrix()
    # differ only in the KRR component, the matrix component fixed at input 2
    for x in range(4):
        ref = pair_law_from_matrix(M, J.input_index([x, 0]), J.input_index([x, 1]), J.eps0)
        assert any(jp.law.same_law(ref) or law_set([jp.law]) == law_set([ref])
                   for jp in J.pairs() if jp.differ == (1,))


def test_pair_law_subset_matches_pairs():
    J = JointMechanism([KRR(0.5, k=3), KRR(0.7, k=4), RAPPOR(0.6)])
    by_differ = {jp.differ: jp.law for jp in J.pairs()}
    assert len(by_differ) == 7
    for S, law in by_differ.items():
        assert_same_law(J.pair_law(S), law)
    assert_same_law(J.pair_law(), by_differ[(0, 1, 2)])


def test_multinomial_power_equals_sequential_product():
    """Identical components use multinomial types; pair_law multiplies one by one."""
    J = joint_copies(KRR, 5, 3.0, k=4)
    for jp in J.pairs():
        assert_same_law(J.pair_law(jp.differ), jp.law, rtol=1e-12)
    J = joint_copies(OUE, 4, 2.0, d=3)
    for jp in J.pairs():
        assert_same_law(J.pair_law(jp.differ), jp.law, rtol=1e-12)


def test_symmetric_flag():
    assert JointMechanism([KRR(1.0, k=3)]).symmetric
    assert JointMechanism([KRR(1.0, k=3)]).gparv().same_law(KRR(1.0, k=3).gparv())
    assert not JointMechanism([KRR(1.0, k=3)] * 2).symmetric


# ---------------------------------------------------------------------------- (b) one component
@pytest.mark.parametrize("mech", [KRR(1.0, k=5), RAPPOR(2.0), OUE(1.5, d=4), BLH(1.0),
                                  HadamardResponse(1.0, d=3), HadamardResponse(2.0)],
                         ids=["5-RR", "RAPPOR", "OUE d4", "BLH", "HR d3", "HR"])
def test_joint_of_one_component_is_the_component(mech):
    J = JointMechanism([mech])
    assert J.eps0 == mech.eps0
    assert law_set(J.gparv_laws()) == law_set(mech.gparv_laws())
    assert J.gamma == pytest.approx(mech.gamma, rel=1e-14)


# ---------------------------------------------------------------------------- (c) order
def test_component_order_does_not_matter():
    comps = [KRR(0.6, k=3), RAPPOR(1.0, d=3), BLH(0.8)]
    ref = JointMechanism(comps)
    for perm in itertools.permutations(comps):
        J = JointMechanism(list(perm))
        assert law_set(J.gparv_laws()) == law_set(ref.gparv_laws())
        assert_same_law(J.pair_law(), ref.pair_law())
    rev = JointMechanism(comps[::-1])
    assert_same_delta(rev.pair_law(), ref.pair_law(), n=2)


# ---------------------------------------------------------------------------- (d) gamma
@pytest.mark.parametrize("case", list(SMALL_JOINTS), ids=list(SMALL_JOINTS))
def test_gamma_is_product_of_gammas(case):
    J = SMALL_JOINTS[case]()
    g = math.prod(c.gamma for c in J.components)
    assert J.gamma == pytest.approx(g, rel=1e-13)
    assert J.blanket().gamma == pytest.approx(g, rel=1e-12)
    for law in J.gparv_laws():
        assert law.gamma == pytest.approx(g, rel=1e-12)


def test_eps0_is_sum_theorem_1():
    J = JointMechanism([KRR(0.6, k=3), RAPPOR(1.0, d=3)])
    assert J.eps0 == pytest.approx(1.6)
    M = J.matrix()
    eps0_matrix = float(np.max(np.log(M.max(axis=0)) - np.log(M.min(axis=0))))
    assert eps0_matrix <= J.eps0 + 1e-12


# ---------------------------------------------------------------------------- (e) Property 2
@pytest.mark.parametrize("J", [
    joint_copies(KRR, 4, 4.0, k=10), joint_copies(RAPPOR, 3, 6.0), joint_copies(OUE, 2, 3.0),
    joint_copies(BLH, 3, 2.0), JointMechanism([KRR(1.0, k=3), RAPPOR(2.0, d=5), OUE(0.5)]),
    JointMechanism([HadamardResponse(1.0, d=3), KRR(1.0, k=3)]),
], ids=["4-joint 10-RR", "3-joint RAPPOR", "2-joint OUE", "3-joint BLH", "heterogeneous",
        "HR d3 + 3-RR"])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_property_2(J, eps):
    for law in J.gparv_laws():
        assert law.mean(eps) == pytest.approx(1 - math.exp(eps), rel=1e-11, abs=1e-12)
        lo, hi = law.support(eps)
        assert lo >= (1 - math.exp(eps + J.eps0)) * (1 + 1e-12) - 1e-12
        assert hi <= (math.exp(J.eps0) - math.exp(eps)) * (1 + 1e-12) + 1e-12


# ---------------------------------------------------------------------------- (f) Theorem 5
LOWER_CASES = {
    "3-RR x2": lambda: JointMechanism([KRR(0.7, k=3)] * 2),
    "4-RR x3": lambda: JointMechanism([KRR(0.9, k=4)] * 3),
    "RAPPOR d3 x2": lambda: JointMechanism([RAPPOR(1.1, d=3)] * 2),
    "OUE d3 x2": lambda: JointMechanism([OUE(0.8, d=3)] * 2),
    "BLH d3 x2": lambda: JointMechanism([BLH(1.2, d=3)] * 2),
    "3-RR + RAPPOR d3": lambda: JointMechanism([KRR(0.6, k=3), RAPPOR(1.0, d=3)]),
}


@pytest.mark.parametrize("case", list(LOWER_CASES), ids=list(LOWER_CASES))
def test_lower_law_matches_product_matrix(case):
    J = LOWER_CASES[case]()
    M = J.matrix()
    laws = J.lower_laws()
    assert len(laws) == 1
    ref = lower_law_from_matrix(M, J.input_index([0] * J.m), J.input_index([1] * J.m),
                                J.input_index([2] * J.m), J.eps0)
    assert_same_law(laws[0], ref)
    assert_same_delta(laws[0], ref, n=4)
    # product of the component Theorem 5 laws
    assert laws[0].gamma == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("case", ["3-RR x2", "3-RR + RAPPOR d3"])
def test_lower_subset_laws_match_product_matrix(case):
    J = LOWER_CASES[case]()
    M = J.matrix()
    # option 0: differ (0, 1, 2); option 1: x0 = x1 = 0 != x2 = 2; option 2: x0 = x1 = x2 = 2
    triples = {0: (0, 1, 2), 1: (0, 0, 2), 2: (2, 2, 2)}
    pairs = J.lower_pairs(subsets=True)
    # options per component: differ / same != x2 / same == x2; identical components are
    # multisets (3 types for two identical ones), distinct components all 3^2 - 2^2 = 5
    assert len(pairs) == (3 if len(set(c.name for c in J.components)) == 1 else 5)
    for jp in pairs:
        xs = [triples[c] for c in jp.choice]
        idx = [J.input_index([t[r] for t in xs]) for r in range(3)]
        ref = lower_law_from_matrix(M, *idx, J.eps0)
        assert_same_law(jp.law, ref)


def test_lower_law_needs_three_inputs():
    with pytest.raises(ParameterError):
        JointMechanism([KRR(1.0, k=2), KRR(1.0, k=3)]).lower_laws()
    with pytest.raises(ParameterError):
        JointMechanism([KRR(1.0, k=3)]).lower_laws(pair=(0, 1))


# ---------------------------------------------------------------------------- (g) bad input
@pytest.mark.parametrize("bad", [[], (), None, KRR(1.0, k=3), [KRR(1.0, k=3), "KRR"], [1.0],
                                 "abc"],
                         ids=["empty list", "empty tuple", "None", "bare mechanism",
                              "string component", "float component", "string"])
def test_bad_components_raise(bad):
    with pytest.raises(ParameterError):
        JointMechanism(bad)


def test_bad_arguments_raise():
    J = JointMechanism([KRR(1.0, k=3)] * 2)
    with pytest.raises(ParameterError):
        J.pair_law([])
    with pytest.raises(ParameterError):
        J.pair_law([2])
    with pytest.raises(ParameterError):
        J.input_index([0, 3])
    with pytest.raises(ParameterError):
        JointMechanism([random_matrix_mechanism(1)] * 2).pair_law()
    with pytest.raises(ParameterError):
        JointMechanism.copies(KRR(1.0, k=3), 0)
    with pytest.raises(ParameterError):
        JointMechanism.copies(KRR, 2)
    with pytest.raises(ParameterError):
        joint_copies(KRR, 2, -1.0, k=3)
    with pytest.raises(ParameterError):
        joint_copies(lambda eps0: "not a mechanism", 2, 1.0)
    with pytest.raises(ParameterError):
        JointMechanism([KRR(200.0, k=3), KRR(200.0, k=3)])       # total eps0 too large
    with pytest.raises(ParameterError):
        subset_deltas(KRR(1.0, k=3), 3, 0.5)
    with pytest.raises(ParameterError):
        JointMechanism([RAPPOR(1.0)] * 2).matrix()             # large-domain component
    with pytest.raises(ParameterError):
        JointMechanism([KRR(1.0, k=40)] * 3).matrix()            # size cap
    assert 40 ** 6 > MAX_MATRIX_ENTRIES


def test_too_many_candidates_raise():
    comps = [KRR(0.1 * (i + 1), k=3 + i) for i in range(13)]
    with pytest.raises(ParameterError, match="candidate pair types"):
        JointMechanism(comps).gparv_laws()


# ---------------------------------------------------------------------------- constructors
def test_joint_copies_splits_budget():
    J = joint_copies(KRR, 3, 4.0, k=10)
    assert J.m == 3 and J.eps0 == pytest.approx(4.0)
    assert all(c.eps0 == pytest.approx(4.0 / 3) and c.k == 10 for c in J.components)
    assert J.name == "3-joint 10-RR"
    # identical symmetric components: one law per number of differing components
    assert [len(jp.differ) for jp in J.pairs()] == [3, 2, 1]
    J2 = joint_copies(RAPPOR, 2, 3.0)
    assert J2.components[0].eps0 == pytest.approx(1.5)
    J3 = JointMechanism.copies(KRR(1.0, k=10), 4)
    assert J3.eps0 == pytest.approx(4.0) and J3.m == 4


def test_many_identical_components():
    """Ten identical components (their time: bench/bench_former_timed_tests.py)."""
    J = joint_copies(KRR, 10, 4.0, k=10)
    laws = J.gparv_laws()
    J2 = joint_copies(RAPPOR, 10, 4.0)
    laws2 = J2.gparv_laws()
    assert len(laws) == 10 and len(laws2) == 10
    # the full-differ law has one atom per multiset of component atoms (after merging)
    assert laws[0].a.size == math.comb(10 + 2, 2)
    for mech, ls in ((J, laws), (J2, laws2)):
        for law in ls:
            assert law.mean(0.7) == pytest.approx(1 - math.exp(0.7), rel=1e-10)
            assert law.gamma == pytest.approx(mech.gamma, rel=1e-12)


# ---------------------------------------------------------------------------- worst pair
def test_subset_deltas_sorted_and_full_pair_worst_small_case():
    J = joint_copies(KRR, 2, 4.0, k=3)
    res = subset_deltas(J, 5, 0.5)
    assert [r.delta for r in res] == sorted((r.delta for r in res), reverse=True)
    assert {r.differ for r in res} == {(0, 1), (0,)}
    # finding (not a theorem): here the pair differing in every component is the worst
    assert res[0].differ == (0, 1)
    low = subset_deltas(J, 5, 0.5, lower=True)
    assert len(low) == 3      # (differ, differ), (differ, same != x2), (differ, same == x2)
    # every Theorem 5 value is a valid lower bound: it cannot exceed the blanket upper bound
    assert max(r.delta for r in low) <= res[0].delta * (1 + 1e-12)


def test_theorem5_lower_bound_of_finite_joint_mechanisms():
    """bounds.delta/epsilon(bound="lower") use the joint Theorem 5 pairs (not a matrix pair):
    the lower bound is the exact delta of those laws and stays below the upper bound."""
    from amp import api as bounds
    from amp.backends.exact import delta_enumerate as enum
    for J in (JointMechanism([KRR(1.0, k=3)] * 2), JointMechanism([KRR(1.0, k=4), KRR(0.5, k=3)])):
        n, eps = 6, 0.3
        lo = bounds.delta(J, n, eps, bound="lower")
        exact = max(enum(law, n, eps) for law in J.lower_laws())
        assert lo.lower <= exact <= lo.upper
        assert lo.upper <= bounds.delta(J, n, eps).upper
        e_lo = bounds.epsilon(J, 1000, 1e-6, bound="lower")
        assert 0 < e_lo.value <= bounds.epsilon(J, 1000, 1e-6).value
