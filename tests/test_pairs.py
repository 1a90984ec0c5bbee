"""Matrix mechanisms: the pair laws as arrays (amp.pairs), the pruned maximum of delta and eps
(amp.pairs.delta_max, amp.pairsearch.epsilon_max), the executor, and the lower bound's pair.

Oracles: exact multinomial enumeration of every pair law (amp.backends.exact.delta_enumerate,
no FFT, no Chernoff, no pruning) and the exact shuffled divergence of explicit datasets
(amp.oracles.ground_truth); the exhaustive path (every pair searched) for the bracket."""

from __future__ import annotations

import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import amp
from amp.backends.dispatch import LawDelta
from amp.backends.exact import delta_enumerate
from amp.core.floats import U
from amp.core.tails import chernoff_certified_log, chernoff_upper
from amp.inversion import epsilon_of_curve
from amp.mechanisms.base import matrix_eps0, pair_law_from_matrix
from amp.oracles.ground_truth import shuffled_divergence
from amp.pairs import PairSet
from amp.privacy_profile import LOWER_LAWS_KEPT, laws_for, worst_pair


def random_matrix(d: int, seed: int, eps0: float = 2.0, outputs: int | None = None
                  ) -> np.ndarray:
    """Rows ``exp(t U[0, 1])`` normalised, ``t`` set by bisection so that the matrix's eps0
    is ``eps0`` (to ~1e-12)."""
    rng = np.random.default_rng(seed)
    L = rng.uniform(0, 1, size=(d, outputs or d))

    def mk(t: float) -> np.ndarray:
        E = np.exp(t * L)
        return E / E.sum(axis=1, keepdims=True)

    lo, hi = 0.0, 20.0
    for _ in range(100):
        t = 0.5 * (lo + hi)
        lo, hi = (lo, t) if matrix_eps0(mk(t)) > eps0 else (t, hi)
    return mk(lo)


def exact_pair_deltas(M: np.ndarray, n: int, eps: float) -> dict:
    """Exact delta(eps) of every ordered pair's blanket law (enumeration)."""
    d = M.shape[0]
    return {(i, j): delta_enumerate(pair_law_from_matrix(M, i, j), n, eps)
            for i in range(d) for j in range(d) if i != j}


def exact_pair_eps(M: np.ndarray, n: int, delta: float, i: int, j: int) -> tuple[float, float]:
    """Bracket of the exact eps(delta) of pair (i, j) by bisection on the enumerated curve."""
    law = pair_law_from_matrix(M, i, j)
    lo, hi = 0.0, law.max_eps()
    if delta_enumerate(law, n, 0.0) <= delta:
        return 0.0, 0.0
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if delta_enumerate(law, n, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return lo, hi


def exhaustive_eps(mech: amp.MatrixMechanism, n: int, delta: float) -> tuple[float, float]:
    """Every pair law searched in full (no pruning of any kind), ends combined by max."""
    parts = []
    for law in mech.gparv_laws():
        c = LawDelta(law, n)
        parts.append(epsilon_of_curve(c, delta, c.max_eps))
    return max(p.lower for p in parts), max(p.upper for p in parts)


# ---------------------------------------------------------------------------- PairSet
def test_pairset_laws_are_the_matrix_pair_laws():
    M = random_matrix(5, seed=1)
    ps = PairSet(M, matrix_eps0(M))
    assert ps.total == 20 and len(ps) == 20 and ps.merged_outputs == 5
    for k, (i, j) in enumerate(ps.pairs):
        assert ps.law(k).same_law(pair_law_from_matrix(M, int(i), int(j)))


def test_pairset_merges_proportional_columns_and_equal_laws():
    # 4-RR as a matrix, with output 0 split into two proportional columns (0.4 / 0.6)
    e = math.exp(1.0)
    K = np.full((4, 4), 1.0) + np.eye(4) * (e - 1)
    K /= K.sum(axis=1, keepdims=True)
    split = np.column_stack([0.4 * K[:, 0], 0.6 * K[:, 0], K[:, 1:]])
    ps = PairSet(K, 1.0)
    assert ps.total == 12 and len(ps) == 1            # all 12 pairs have one law
    ps2 = PairSet(split, 1.0)
    # columns 0 and 1 have the same ratio column in floats only if the split is exact
    assert ps2.outputs == 5 and ps2.merged_outputs in (4, 5)
    r1 = amp.epsilon(amp.MatrixMechanism(K), 2000, 1e-6)
    r2 = amp.epsilon(amp.KRR(1.0, k=4), 2000, 1e-6)
    assert r1.lower <= r2.upper and r2.lower <= r1.upper
    assert r1.details["laws"] == 1 and r1.details["refined"] == 1


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_vectorised_chernoff_is_the_scalar_one_and_an_upper_bound(eps):
    M = random_matrix(4, seed=2, outputs=3)
    ps = PairSet(M, matrix_eps0(M))
    n = 15
    got = ps.chernoff_upper(eps, n)
    for k in range(len(ps)):
        law = ps.law(k)
        g, p = law.atoms(eps)
        mag = law.a + math.exp(eps) * law.b
        mag = np.append(mag, 0.0) if law.off_mass > 0 else mag
        ref = chernoff_upper(g, p, n, 16 * U * mag)
        assert got[k] == pytest.approx(ref, rel=1e-6)     # both optimise theta numerically
        assert got[k] >= delta_enumerate(law, n, eps)     # certified (exact oracle)


# ---------------------------------------------------------------------------- delta
@pytest.mark.parametrize("seed,d,n,eps", [(3, 4, 20, 0.2), (4, 5, 12, 0.5), (5, 4, 25, 0.05)],
                         ids=["d4-n20", "d5-n12", "d4-n25-eps.05"])
def test_pruned_delta_brackets_the_exact_maximum(seed, d, n, eps):
    M = random_matrix(d, seed, outputs=3)
    mech = amp.MatrixMechanism(M)
    r = amp.delta(mech, n, eps)
    exact = exact_pair_deltas(M, n, eps)
    true_max = max(exact.values())
    assert r.upper >= true_max * (1 - 1e-9)
    assert r.lower <= true_max * (1 + 1e-9)
    det = r.details
    assert det["pairs"] == d * (d - 1)
    assert det["refined"] + det["pruned_chernoff"] + det["pruned_coarse"] == det["laws"]
    assert det["laws"] <= det["pairs"]
    assert det["refined"] >= 1 and len(r.parts) == det["refined"]
    # the named worst pair is the exact maximum up to the bracket's width
    assert exact[det["worst_pair"]] >= r.lower * (1 - 1e-9)
    # Theorem 4 dominates the true shuffled divergence of explicit datasets
    for (i, j) in [det["worst_pair"], (0, 1)]:
        k = next(x for x in range(d) if x not in (i, j))
        assert shuffled_divergence(M, i, j, [k] * (n - 1), eps) <= r.upper * (1 + 1e-9)


# ---------------------------------------------------------------------------- eps
@pytest.mark.parametrize("seed,d,n,delta", [(6, 4, 20, 1e-3), (7, 5, 16, 1e-2)],
                         ids=["d4-n20", "d5-n16"])
def test_pruned_eps_brackets_the_exact_maximum(seed, d, n, delta):
    M = random_matrix(d, seed, outputs=3)
    mech = amp.MatrixMechanism(M)
    r = amp.epsilon(mech, n, delta, rel_tol=1e-4)
    brackets = {(i, j): exact_pair_eps(M, n, delta, i, j)
                for i in range(d) for j in range(d) if i != j}
    lo_true = max(b[0] for b in brackets.values())
    hi_true = max(b[1] for b in brackets.values())
    assert r.upper >= lo_true * (1 - 1e-9)            # the upper end is a valid eps
    assert r.lower <= hi_true * (1 + 1e-9)
    det = r.details
    assert det["pairs"] == d * (d - 1)
    assert det["pruned_chernoff"] + det["pruned_coarse"] + det["refined"] == det["laws"]
    assert det["worst_pair"] in brackets
    # the exhaustive path (every law searched in full) gives an overlapping bracket
    lo, hi = exhaustive_eps(mech, n, delta)
    assert r.lower <= hi and lo <= r.upper
    assert r.upper <= hi * (1 + 1e-4)


@pytest.mark.parametrize("d,n", [(4, 1000), pytest.param(8, 3000, marks=pytest.mark.slow)],
                         ids=["d4-n1000", "d8-n3000"])
def test_pruning_prunes_and_keeps_the_exhaustive_value(d, n):
    """With the FFT (n in the thousands) most pairs are pruned; the value is the exhaustive
    one (every law searched) to the search's accuracy, and their brackets overlap."""
    M = random_matrix(d, seed=8)
    mech = amp.MatrixMechanism(M)
    r = amp.epsilon(mech, n, 1e-6)
    det = r.details
    assert det["pruned_chernoff"] + det["pruned_coarse"] >= d * (d - 1) // 2
    assert det["refined"] < det["laws"]
    lo, hi = exhaustive_eps(mech, n, 1e-6)
    assert r.lower <= hi and lo <= r.upper
    assert abs(r.upper - hi) <= 1e-4 * hi


def _near_tied_matrix() -> np.ndarray:
    """Rows 2, 3 are rows 0, 1 perturbed by ~1e-9 (row 4 uniform): the pairs (0, 1), (2, 3)
    and their mixes have laws that differ by ~1e-9."""
    base = np.array([[0.70, 0.10, 0.10, 0.10],
                     [0.10, 0.70, 0.10, 0.10],
                     [0.25, 0.25, 0.25, 0.25]])
    pert = base[:2] * (1 + 1e-9 * np.array([[1, -1, 1, -1], [-1, 1, -1, 1]]))
    pert /= pert.sum(axis=1, keepdims=True)
    return np.vstack([base[:2], pert, base[2:]])


TIED = {(0, 1), (1, 0), (2, 3), (3, 2), (0, 3), (3, 0), (2, 1), (1, 2)}


def test_near_tied_pairs_are_both_kept_for_delta():
    """The Chernoff bound of a near-tied pair is above the refined maximum: it cannot be
    pruned, so both are refined and the bracket holds for each."""
    M = _near_tied_matrix()
    n, eps = 3000, 0.15
    r = amp.delta(amp.MatrixMechanism(M), n, eps)
    labels = {p.mechanism for p in r.parts}
    kept = {pair for pair in TIED if f"matrix pair {pair}" in labels}
    assert len(kept) >= 2 and r.details["worst_pair"] in TIED
    for (i, j) in TIED:
        b = LawDelta(pair_law_from_matrix(M, i, j), n).delta(eps)
        assert b.lower <= r.upper and b.upper >= r.lower


def test_near_tied_pairs_eps():
    """Near-tied pairs for eps: each is refined or certified below the top pair's upper end
    (a coarse bracket at it); the upper end is a valid eps for every tied pair."""
    M = _near_tied_matrix()
    n, delta = 3000, 1e-6
    r = amp.epsilon(amp.MatrixMechanism(M), n, delta)
    det = r.details
    assert det["worst_pair"] in TIED
    assert det["refined"] + det["pruned_coarse"] >= 2      # a tied pair was checked by FFT
    for (i, j) in TIED:
        law = pair_law_from_matrix(M, i, j)
        assert LawDelta(law, n).delta(r.upper).upper <= delta * (1 + 1e-2)
        assert LawDelta(law, n).delta(r.lower * (1 - 1e-3)).lower > delta


# ---------------------------------------------------------------------------- executor
@pytest.fixture(scope="module")
def mech6():
    return amp.MatrixMechanism(random_matrix(6, seed=9))


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_executor_gives_identical_results(mech6, kind):
    serial_eps = amp.epsilon(mech6, 3000, 1e-6)
    serial_delta = amp.delta(mech6, 3000, serial_eps.upper * 0.95)
    pool = ThreadPoolExecutor(2) if kind == "thread" else ProcessPoolExecutor(
        2, mp_context=multiprocessing.get_context("spawn"))    # no fork of a threaded process
    with pool as ex:
        par_eps = amp.epsilon(mech6, 3000, 1e-6, executor=ex)
        par_delta = amp.delta(mech6, 3000, serial_eps.upper * 0.95, executor=ex)
        prof = amp.profile(mech6, 3000, executor=ex)
        par_for = amp.epsilon_for(prof, 1e-6)
    assert par_eps == serial_eps and par_for == serial_eps
    assert par_delta == serial_delta
    for key in ("pruned_chernoff", "pruned_coarse", "refined", "worst_pair"):
        assert par_eps.details[key] == serial_eps.details[key]
    det = serial_delta.details                        # the executor had work to share
    assert det["pruned_coarse"] + det["refined"] >= 2
    assert par_delta.details == {**det}


@pytest.mark.parametrize("bad", [4, "pool", object()], ids=["int", "str", "object"])
def test_bad_executor_is_a_clear_error(mech6, bad):
    with pytest.raises(amp.ParameterError, match="executor"):
        amp.epsilon(mech6, 100, 1e-6, executor=bad)
    with pytest.raises(amp.ParameterError, match="executor"):
        amp.profile(mech6, 100, executor=bad)
    with pytest.raises(amp.ParameterError, match="executor"):
        amp.delta(mech6, 100, 0.5, executor=bad)


# ---------------------------------------------------------------------------- lower bound
def test_worst_pair_is_the_chernoff_argmax():
    M = random_matrix(64, seed=10)
    mech = amp.MatrixMechanism(M)
    pair = worst_pair(mech, 0.05, 10_000)
    ps = PairSet(M, mech.eps0)
    ch = ps.chernoff_upper(0.05, 10_000)
    assert ch[list(map(tuple, ps.pairs)).index(pair)] == ch.max()
    laws = laws_for(mech, "lower", 0.05, 10_000)
    assert 1 <= len(laws) <= LOWER_LAWS_KEPT


def test_matrix_lower_bound_below_upper_and_below_truth():
    M = random_matrix(6, seed=11, outputs=3)
    mech = amp.MatrixMechanism(M)
    n, eps = 12, 0.3
    low = amp.delta(mech, n, eps, bound="lower")
    up = amp.delta(mech, n, eps)
    assert low.value <= up.value
    # the lower bound is the exact divergence of some dataset pair: below the worst one
    best = max(shuffled_divergence(M, i, j, [k] * (n - 1), eps)
               for i in range(6) for j in range(6) for k in range(6) if i != j)
    assert low.value <= best * (1 + 1e-9)


def test_dask_local_cluster_executor_gives_identical_results(mech6):
    distributed = pytest.importorskip("distributed")
    serial = amp.epsilon(mech6, 3000, 1e-6)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        par = amp.epsilon(mech6, 3000, 1e-6, executor=client.get_executor())
        bare = amp.epsilon(mech6, 3000, 1e-6, executor=client)   # used via get_executor()
    assert par == serial and par.details["worst_pair"] == serial.details["worst_pair"]
    assert bare == serial


def test_one_executor_rule_on_every_entry(mech6):
    """Every entry checks ``executor`` by one rule (amp.core.validate.executor): the same
    refusal, naming the argument, from epsilon, delta, profile and sweep."""
    class Submits:                       # has submit() but is no Executor: refused everywhere
        def submit(self, fn, *a):
            raise AssertionError("not to be called")

    calls = [lambda ex: amp.epsilon(mech6, 3000, 1e-6, executor=ex),
             lambda ex: amp.delta(mech6, 3000, 0.5, executor=ex),
             lambda ex: amp.profile(mech6, 3000, executor=ex),
             lambda ex: amp.sweep("krr", n=[300, 3000], eps0=[1.0], delta=1e-6, k=4,
                                  executor=ex)]
    for bad in (Submits(), "threads", 3):
        msgs = set()
        for call in calls:
            with pytest.raises(amp.ParameterError, match="executor must be") as info:
                call(bad)
            msgs.add(str(info.value).split(", got")[0])
        assert len(msgs) <= 2, msgs      # sweep's message adds its 'process' option


def test_lower_bound_details_say_how_the_laws_were_chosen(monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["amp.privacy_profile"], "LOWER_LAWS_KEPT", 8)
    mech = amp.MatrixMechanism(random_matrix(12, seed=12))
    r = amp.epsilon(mech, 2000, 1e-6, bound="lower")
    det = r.details
    assert det["lower_laws_kept"] == 8 < det["lower_candidates"] <= LOWER_LAWS_KEPT
    assert "heuristic" in det["lower_selection"]
    assert det["lower_pair"] == worst_pair(mech, 0.0, 2000)
    up = amp.epsilon(mech, 2000, 1e-6)
    assert r.value <= up.value


def test_one_chernoff_certificate_for_scalars_and_rows():
    """The error term of the scalar bound and of a matrix's rows is one function: elementwise
    the same numbers, and never less than the computed log plus its rounding allowance."""
    raw = np.array([-40.0, -3.5, 0.25])
    th = np.array([1e-3, 2.0, 50.0])
    scale = np.array([1.0, 3.0, 0.5])
    rows = chernoff_certified_log(raw, 1000, th, 7.0, scale)
    one = [chernoff_certified_log(float(r), 1000, float(t), 7.0, float(s))
           for r, t, s in zip(raw, th, scale)]
    assert rows.tolist() == one
    assert np.all(rows >= raw - math.log(1000) + 1000 * 4 * U * (7.0 + th * scale + 16))
