"""A fixed population's Theorem 5 lower bound (amp.backends.population_lower) and its sharpest
upper bound, against an enumeration written here: the law of the shuffled output (the multiset
of reports) of a concrete dataset, built user by user over histograms, and the hockey-stick
divergence of two such laws. Nothing of amp's computation is used by the oracle; from amp it
reads only the matrices and which dataset pair its lower bound chose."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import amp
from amp.backends.population_lower import LowerPair, lower_pairs, trinomial_diff
from amp.mechanisms.mixture import Population
from amp.mechanisms.subsampled import Subsampled


# ------------------------------------------------------------------ the oracle
def histogram_law(rows: list[np.ndarray]) -> dict[tuple, float]:
    """Law of the histogram of the reports of independent users whose output laws are
    ``rows`` (the shuffled output is this multiset)."""
    k = rows[0].size
    law = {(0,) * k: 1.0}
    for r in rows:
        nxt: dict[tuple, float] = {}
        for h, p in law.items():
            for y in range(k):
                if r[y] > 0:
                    h2 = h[:y] + (h[y] + 1,) + h[y + 1:]
                    nxt[h2] = nxt.get(h2, 0.0) + p * r[y]
        law = nxt
    return law


def hockey(P: dict, Q: dict, eps: float) -> float:
    E = math.exp(eps)
    return math.fsum(max(0.0, P.get(h, 0.0) - E * Q.get(h, 0.0)) for h in set(P) | set(Q))


def pair_delta(S: np.ndarray, d: int, groups: list[int], v: int, x0: int, x1: int,
               inputs: list[list[int]], eps: float) -> float:
    """Exact divergence of the datasets: victim (group ``v``) holds ``x0`` vs ``x1``; the
    others of group ``g`` hold ``inputs[g]`` (one input each)."""
    others = [S[g * d + x] for g in range(len(groups)) for x in inputs[g]]
    P = histogram_law([S[v * d + x0]] + others)
    Q = histogram_law([S[v * d + x1]] + others)
    return hockey(P, Q, eps)


def true_delta(S: np.ndarray, d: int, groups: list[int], eps: float) -> float:
    """The population's exact delta(eps): the maximum over every victim group, ordered pair
    of inputs and multiset of the others' inputs per group (users of a group are alike)."""
    best = 0.0
    for v in range(len(groups)):
        sizes = [n - (g == v) for g, n in enumerate(groups)]
        choices = [list(itertools.combinations_with_replacement(range(d), s)) for s in sizes]
        for x0, x1 in itertools.permutations(range(d), 2):
            for combo in itertools.product(*choices):
                best = max(best, pair_delta(S, d, groups, v, x0, x1,
                                            [list(c) for c in combo], eps))
    return best


def krr(e: float, k: int) -> np.ndarray:
    E = math.exp(e)
    return (np.ones((k, k)) + (E - 1) * np.eye(k)) / (E + k - 1)


# small populations: (users, matrix) per group
RNG = np.random.default_rng(37)


def _random_matrix(d: int, k: int) -> np.ndarray:
    M = RNG.uniform(0.2, 1.0, size=(d, k))
    return M / M.sum(axis=1, keepdims=True)


POPS = {
    "3rr-2+2": [(2, krr(0.5, 3)), (2, krr(2.5, 3))],
    "3rr-1+3": [(1, krr(3.0, 3)), (3, krr(1.0, 3))],
    "4rr-3+2": [(3, krr(1.0, 4)), (2, krr(2.0, 4))],
    "3rr-2+2+2": [(2, krr(0.3, 3)), (2, krr(1.5, 3)), (2, krr(3.0, 3))],
    "matrix-3x3": [(2, _random_matrix(3, 3)), (3, _random_matrix(3, 3))],
    "2rr-3+3": [(3, krr(0.7, 2)), (3, krr(2.0, 2))],
}
EPS = (0.0, 0.1, 0.4, 1.0)


def _pop(spec) -> tuple[Population, np.ndarray, list[int], int]:
    pop = Population([(n, amp.MatrixMechanism(M)) for n, M in spec])
    return pop, pop.stacked, [n for n, _ in spec], spec[0][1].shape[0]


@pytest.mark.parametrize("name", POPS)
def test_lower_below_its_own_pair_and_its_statistic_exact(name):
    """Each victim's certified value is at most the exact divergence of the concrete dataset
    pair it names (n <= 6), and its bracket contains the statistic's divergence computed by
    enumeration (so the computation is right, not only low)."""
    pop, S, groups, d = _pop(POPS[name])
    assert pop.n <= 6
    for c in lower_pairs(S, groups, pop.name):
        inputs = [[c.backgrounds[g]] * (n - (g == c.group)) for g, n in enumerate(groups)]
        x0, x1 = c.pair
        phi = np.sign(S[c.group * d + x0] - S[c.group * d + x1]).astype(int)
        for e in EPS:
            b = c.delta(e)
            exact = pair_delta(S, d, groups, c.group, x0, x1, inputs, e)
            assert b.lower <= exact * (1 + 1e-12) + 1e-15, (e, b, exact)
            # the statistic D = sum phi(report), by enumeration of its own law
            stat = {}
            for which, xv in ((0, x0), (1, x1)):
                law = histogram_law([S[c.group * d + xv]] + [S[g * d + x] for g in
                                    range(len(groups)) for x in inputs[g]])
                dist: dict = {}
                for h, p in law.items():
                    key = int(np.dot(h, phi))
                    dist[key] = dist.get(key, 0.0) + p
                stat[which] = dist
            s = hockey(stat[0], stat[1], e)
            assert b.lower <= s * (1 + 1e-12) + 1e-15 and s <= b.upper * (1 + 1e-12) + 1e-15
            assert b.upper - b.lower <= 1e-9 * max(s, 1e-6)


@pytest.mark.parametrize("name", POPS)
def test_front_door_lower_below_truth_below_upper(name):
    """amp.delta(bound="lower") <= the population's exact delta (every neighbouring dataset
    pair, enumerated) <= amp.delta's default upper bound, and the eps answers agree."""
    pop, S, groups, d = _pop(POPS[name])
    for e in EPS:
        truth = true_delta(S, d, groups, e)
        low = amp.delta(pop, pop.n, e, bound="lower")
        up = amp.delta(pop, pop.n, e)
        assert low.bound == "lower" and low.value == low.lower
        assert low.value <= truth * (1 + 1e-12) + 1e-15
        assert up.value >= truth * (1 - 1e-12) - 1e-15, (e, up, truth)


def test_sampled_population_lower_below_truth():
    spec = [(2, krr(0.5, 3)), (2, krr(2.5, 3))]
    pop, _, groups, d = _pop(spec)
    q = 0.5
    S = np.vstack([Subsampled(amp.MatrixMechanism(M), q).matrix() for _, M in spec])
    for e in (0.05, 0.3):
        truth = true_delta(S, d, groups, e)
        low = amp.delta(pop, pop.n, e, bound="lower", sampling=q)
        assert low.value <= truth * (1 + 1e-12) + 1e-15
        assert amp.delta(pop, pop.n, e, sampling=q).value >= truth * (1 - 1e-12)


GRID = {
    "two-groups": [(900, 1.0), (100, 4.0)],
    "ten-groups": [(1000, float(e)) for e in np.linspace(0.5, 5, 10)],
}


@pytest.mark.parametrize("name", [
    "two-groups",
    # the slowest test of the default run (2 min on a loaded 2-core machine): make test runs
    # the two-group grid; this one with -m slow
    pytest.param("ten-groups", marks=pytest.mark.slow),
])
def test_lower_below_upper_on_a_grid(name):
    pop = Population([(n, amp.KRR(e, k=10)) for n, e in GRID[name]])
    es = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0]
    lows = amp.delta(pop, pop.n, es, bound="lower")
    ups = amp.delta(pop, pop.n, es)
    for lo, up in zip(lows, ups):
        assert lo.value <= up.value
    assert [lo.value for lo in lows] == sorted((lo.value for lo in lows), reverse=True)
    for d in (1e-3, 1e-6):
        lo = amp.epsilon(pop, pop.n, d, bound="lower")
        up = amp.epsilon(pop, pop.n, d)
        assert lo.value <= up.value and lo.bound == "lower"
        assert amp.delta(pop, pop.n, lo.value, bound="lower").value > d * (1 - 1e-9)


def test_one_group_close_to_theorem_5():
    """A population of one k-RR group: the count statistic keeps most of Theorem 5's pair
    (this is a sharpness check; validity is the brute-force tests above)."""
    m = amp.KRR(1.0, k=10)
    pop = Population([(10_000, m)])
    lo = amp.epsilon(pop, pop.n, 1e-6, bound="lower").value
    ref = amp.epsilon(m, 10_000, 1e-6, bound="lower").value
    assert lo <= amp.epsilon(m, 10_000, 1e-6).value
    assert lo >= 0.99 * ref


def test_trinomial_diff_against_enumeration():
    from scipy.stats import multinomial
    for n, pp, pm in [(9, 0.2, 0.3), (12, 0.05, 0.7), (5, 0.0, 0.4), (6, 0.5, 0.5)]:
        off, pmf, out, rel = trinomial_diff(n, pp, pm)
        exact: dict = {}
        for a in range(n + 1):
            for b in range(n + 1 - a):
                exact[a - b] = exact.get(a - b, 0.0) + float(
                    multinomial.pmf([a, b, n - a - b], n, [pp, pm, max(0.0, 1 - pp - pm)]))
        for i, p in enumerate(pmf):
            assert abs(p - exact.get(off + i, 0.0)) <= 1e-12 * max(p, 1e-300) + 1e-15
        assert rel < 1e-10
    off, pmf, out, rel = trinomial_diff(10 ** 6, 0.09, 0.09)
    assert abs(math.fsum(pmf.tolist()) - 1) <= 1e-12 and out <= 1e-24 and rel < 1e-9


def test_population_lower_through_every_entry(tmp_path, capsys):
    pop = Population([(90, amp.KRR(1.0, k=10)), (10, amp.KRR(4.0, k=10))])
    prof = amp.profile(pop, pop.n, bound="lower")
    a = prof.epsilon(1e-3)
    b = amp.epsilon(pop, pop.n, 1e-3, bound="lower")
    assert a.value == b.value and a.bound == "lower"
    rows = amp.sweep(pop, delta=1e-3, bound="lower").to_records()
    assert math.isclose(rows[0]["value"], b.value, rel_tol=1e-12)
    with pytest.raises(amp.ParameterError):
        amp.epsilon(pop, pop.n, 1e-3, bound="lower", rounds=2)


def test_lower_pair_refuses_an_infinite_ratio():
    S = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.25, 0.5, 0.25]])
    with pytest.raises(amp.ParameterError):
        LowerPair(S, [3], 0, (0, 1), [2], "x")
