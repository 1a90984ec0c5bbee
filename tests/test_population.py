"""Mixed populations (amp.mechanisms.mixture): the random mixture against its explicit tagged
matrix, subsampling as a mixture with the void randomizer, and fixed groups against brute-force
shuffled output distributions of every pair of neighbouring datasets at tiny n."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import amp
from amp.backends.exact import delta_enumerate
from amp.core.errors import ParameterError
from amp.mechanisms.base import lower_law_from_matrix, pair_law_from_matrix
from amp.mechanisms.mixture import Mixture, Population, Void
from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave
from amp.mechanisms.subsampled import Subsampled
from amp.oracles.ground_truth import shuffled_divergence
from amp.backends.population_upper import pb_window
from amp.population import population_delta, population_epsilon
from helpers import assert_upper


def krr_matrix(eps0: float, k: int) -> np.ndarray:
    E = math.exp(eps0)
    return (np.full((k, k), 1.0) + (E - 1) * np.eye(k)) / (E + k - 1)


def sw_cells(eps0: float, vs) -> np.ndarray:
    """Square wave (default b) on the cells cut by the windows of the inputs ``vs``."""
    E = math.exp(eps0)
    b = (eps0 * E - E + 1) / (2 * E * (E - 1 - eps0))
    q = 1 / (2 * b * E + 1)
    pts = sorted({-b, 1 + b} | {t for v in vs for t in (v - b, v + b)})
    cells = list(zip(pts[:-1], pts[1:]))
    return np.array([[(t - s) * (E * q if abs((s + t) / 2 - v) <= b else q) for s, t in cells]
                     for v in vs])


def same_hockey(law1, law2, eps_list=(0.0, 0.2, 0.6), n=5):
    for e in eps_list:
        assert math.isclose(delta_enumerate(law1, n, e), delta_enumerate(law2, n, e),
                            rel_tol=1e-9, abs_tol=1e-15)


# ------------------------------------------------------------------ random mixture
MIXES = {
    "krr-3": ([(0.3, 1.0), (0.7, 3.0)], 3),
    "krr-4-three": ([(0.5, 0.5), (0.25, 2.0), (0.25, 4.0)], 4),
}


@pytest.mark.parametrize("name", MIXES)
def test_mixture_is_the_tagged_matrix(name):
    comps, k = MIXES[name]
    mix = Mixture([(w, amp.KRR(e, k=k)) for w, e in comps])
    T = np.hstack([w * krr_matrix(e, k) for w, e in comps])
    assert mix.gparv().same_law(pair_law_from_matrix(T, 0, 1, mix.eps0)) or \
        same_hockey(mix.gparv(), pair_law_from_matrix(T, 0, 1)) is None
    lows = mix.lower_laws()
    want = [lower_law_from_matrix(T, 0, 1, x2) for x2 in (2, 0, 1)]
    assert len(lows) == 3
    for got, w in zip(lows, want):
        same_hockey(got, w)
    for e in (0.05, 0.3):
        for n in (3, 50):
            up = amp.delta(mix, n, e).value
            assert math.isclose(up, amp.delta(amp.MatrixMechanism(T), n, e).value,
                                rel_tol=5e-3, abs_tol=1e-15)


@pytest.mark.parametrize("name", MIXES)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_mixture_upper_above_brute_force(name, n):
    comps, k = MIXES[name]
    mix = Mixture([(w, amp.KRR(e, k=k)) for w, e in comps])
    T = np.hstack([w * krr_matrix(e, k) for w, e in comps])
    for e in (0.0, 0.2, 0.5):
        up = amp.delta(mix, n, e).value
        low = amp.delta(mix, n, e, bound="lower").value
        best = 0.0
        for x0, x1 in itertools.permutations(range(k), 2):
            for others in itertools.combinations_with_replacement(range(k), n - 1):
                best = max(best, shuffled_divergence(T, x0, x1, list(others), e))
        assert_upper(up, best, atol=1e-13)
        assert low <= best * (1 + 1e-9) + 1e-14


def test_subsampling_is_a_mixture_with_void():
    for q in (0.1, 0.6):
        for m in (amp.KRR(2.0, k=5), amp.RAPPOR(1.0), SquareWave(2.0)):
            mix = Mixture([(q, m), (1 - q, Void())])
            same_hockey(mix.gparv(), Subsampled(m, q).gparv())
            for got, want in zip(mix.lower_laws(), Subsampled(m, q).lower_laws()):
                same_hockey(got, want)


def test_numeric_mixture_against_cells():
    """Two square waves (personalised eps0) on one interval: the mixture's bound equals
    Theorem 4 of the tagged cell matrix (max over its pairs) and is above brute force."""
    vs = [0.0, 0.4, 1.0]
    mix = Mixture([(0.5, SquareWave(1.0)), (0.5, SquareWave(3.0))])
    T = np.hstack([0.5 * sw_cells(1.0, vs), 0.5 * sw_cells(3.0, vs)])
    for e in (0.1, 0.4):
        up = amp.delta(mix, 3, e).value
        assert math.isclose(up, amp.delta(amp.MatrixMechanism(T), 3, e).value, rel_tol=5e-3)
        for x0, x1 in itertools.permutations(range(3), 2):
            for others in itertools.combinations_with_replacement(range(3), 2):
                assert_upper(up, shuffled_divergence(T, x0, x1, list(others), e), atol=1e-13)
    for e0 in (1.0, 3.0):
        r = amp.epsilon(mix, 10_000, 1e-6)
        assert r.value <= amp.epsilon(SquareWave(3.0), 10_000, 1e-6).value


def test_mixture_of_matrices_uses_the_tagged_matrix(rng):
    from helpers import random_ldp_matrix
    P1, P2 = random_ldp_matrix(rng, 3, 3, 1.0), random_ldp_matrix(rng, 3, 4, 2.0)
    mix = Mixture([(0.4, amp.MatrixMechanism(P1)), (0.6, amp.MatrixMechanism(P2))])
    T = np.hstack([0.4 * P1, 0.6 * P2])
    assert not mix.by_law
    for e in (0.1, 0.5):
        got = amp.delta(mix, 4, e).value
        assert math.isclose(got, amp.delta(amp.MatrixMechanism(T), 4, e).value, rel_tol=5e-3)


@pytest.mark.parametrize("bad", [
    lambda: Mixture([]), lambda: Mixture([(0.5, amp.KRR(1.0, k=3))]),
    lambda: Mixture([(0.5, amp.KRR(1.0, k=3)), (0.5, amp.KRR(1.0, k=4))]),
    lambda: Mixture([(0.5, SquareWave(1.0)), (0.5, Duchi(1.0))]),
    lambda: Mixture([(0.5, SquareWave(1.0)), (0.5, amp.KRR(1.0, k=4))]),
    lambda: Mixture([(-0.5, amp.KRR(1.0, k=3)), (1.5, amp.KRR(1.0, k=3))]),
    lambda: Mixture([(1.0, Void())]), lambda: Mixture([(1.0, "krr")]),
    lambda: Population([]), lambda: Population([(0, amp.KRR(1.0, k=3))]),
    lambda: Population([(2, amp.KRR(1.0, k=3)), (2, amp.KRR(1.0, k=4))]),
    lambda: Population([(2, amp.RAPPOR(1.0))]),
    lambda: amp.delta(Population([(2, amp.KRR(1.0, k=3))]), 3, 0.1),
    lambda: amp.delta(Population([(2, amp.KRR(1.0, k=3))]), 2, 0.1, bound="lower", rounds=2),
])
def test_bad_input(bad):
    with pytest.raises(ParameterError):
        bad()


def test_mixture_duchi_piecewise_share_the_interval():
    mix = Mixture([(0.5, Duchi(1.0)), (0.5, PiecewiseMechanism(2.0))])
    assert mix.convex_worst and mix.domain == (-1.0, 1.0)
    assert amp.epsilon(mix, 10_000, 1e-6, bound="lower").value <= \
        amp.epsilon(mix, 10_000, 1e-6).value


# ------------------------------------------------------------------ fixed groups
POPS = {
    "3rr-2+2": [(2, 0.5), (2, 2.0)],
    "3rr-1+3": [(1, 3.0), (3, 1.0)],
    "3rr-3+2": [(3, 1.0), (2, 2.5)],
    "3rr-2+2+2": [(2, 0.3), (2, 1.5), (2, 3.0)],
}


@pytest.mark.parametrize("name", POPS)
def test_population_bounds_above_brute_force(name):
    """Every victim (each group), every pair of inputs, every multiset of the others' inputs
    per group: the exact shuffled divergence is at most the Poisson-binomial bound, which is
    at most amp's common-blanket baseline."""
    spec = POPS[name]
    k = 3
    pop = Population([(n, amp.KRR(e, k=k)) for n, e in spec])
    S = np.vstack([krr_matrix(e, k) for _, e in spec])
    for e in (0.0, 0.15, 0.5):
        up = amp.delta(pop, pop.n, e).value
        pb = population_delta(pop, e)
        assert pb.lower <= pb.upper <= up * (1 + 1e-9)
        best = 0.0
        for v, (nv, _) in enumerate(spec):
            sizes = [n - (g == v) for g, (n, _) in enumerate(spec)]
            choices = [list(itertools.combinations_with_replacement(range(k), s))
                       for s in sizes]
            for x0, x1 in itertools.permutations(range(k), 2):
                for combo in itertools.product(*choices):
                    others = [g * k + x for g, xs in enumerate(combo) for x in xs]
                    best = max(best, shuffled_divergence(S, v * k + x0, v * k + x1, others, e))
        assert_upper(up, best, atol=1e-13)
        assert_upper(pb.upper, best, atol=1e-13)


def test_population_of_one_group_is_theorem_4():
    pop = Population([(500, amp.KRR(2.0, k=5))])
    for e in (0.1, 0.4):
        assert math.isclose(amp.delta(pop, 500, e).value, amp.delta(amp.KRR(2.0, k=5), 500, e)
                            .value, rel_tol=1e-9)


def test_population_baseline_is_everyone_at_the_smallest_blanket():
    """k-RR groups share the uniform blanket: the baseline is at least Theorem 4 of the group
    with the largest eps0 (its victim's law) and at most 1."""
    pop = Population([(900, amp.KRR(1.0, k=10)), (100, amp.KRR(4.0, k=10))])
    assert math.isclose(pop.gamma, amp.KRR(4.0, k=10).gamma, rel_tol=1e-12)
    base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws())
    for e in (0.2, 0.5):
        assert base.delta(e).value >= amp.delta(amp.KRR(4.0, k=10), 1000, e).value \
            * (1 - 1e-9)
        # the default (each group at its own blanket mass) is at most the baseline
        assert amp.delta(pop, pop.n, e).value <= base.delta(e).value
    sampled = amp.epsilon(pop, pop.n, 1e-6, sampling=0.5)
    assert sampled.value <= base.epsilon(1e-6).value


def test_pb_window_against_direct_convolution():
    from scipy.stats import binom
    groups = [(7, 0.3), (5, 0.8), (11, 0.05)]
    full = np.ones(1)
    for n, p in groups:
        full = np.convolve(full, binom.pmf(np.arange(n + 1), n, p))
    off, pmf, out = pb_window(groups)
    np.testing.assert_allclose(pmf, full[off:off + pmf.size], rtol=1e-10, atol=0)
    assert full[:off].sum() + full[off + pmf.size:].sum() <= out
    off, pmf, out = pb_window([(200_000, 0.4), (50_000, 0.9)])
    assert abs(pmf.sum() - 1) <= 1e-9 and out <= 1e-28


def test_population_epsilon_between_mixture_like_and_baseline():
    pop = Population([(900, amp.KRR(1.0, k=10)), (100, amp.KRR(4.0, k=10))])
    r = population_epsilon(pop, 1e-3, rel_tol=1e-2)
    base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws()).epsilon(1e-3)
    assert r.lower <= r.upper <= base.value
    assert population_delta(pop, r.upper).upper <= 1e-3


# ------------------------------------------------------------------ CLI population files
def test_cli_population_file(tmp_path, capsys):
    import json
    from amp.cli import main
    rows = [{"users": 90, "mechanism": "krr", "eps0": 1, "k": 10},
            {"users": 10, "mechanism": "krr", "eps0": 4, "k": 10}]
    (tmp_path / "p.json").write_text(json.dumps(rows))
    (tmp_path / "p.csv").write_text("users,mechanism,eps0,k\n90,krr,1,10\n10,krr,4,10\n")
    pop = Population([(90, amp.KRR(1.0, k=10)), (10, amp.KRR(4.0, k=10))])
    want = amp.epsilon(pop, 100, 1e-3).value
    for name in ("p.json", "p.csv"):
        code = main(["epsilon", "-m", "population", "--population", str(tmp_path / name),
                     "--n", "100", "--delta", "1e-3", "--json"])
        assert code in (0, None)
        assert math.isclose(json.loads(capsys.readouterr().out)["value"], want, rel_tol=1e-9)


def test_cli_population_n_defaults_to_its_users(tmp_path, capsys):
    """--n may be omitted for a population (its total); a different --n is refused; any other
    mechanism still needs --n (one line, exit 2)."""
    import json
    from amp.cli import main
    (tmp_path / "p.csv").write_text("users,mechanism,eps0,k\n90,krr,1,10\n10,krr,4,10\n")
    f = str(tmp_path / "p.csv")
    out = {}
    for cmd, q in (("epsilon", ["--delta", "1e-3"]), ("delta", ["--eps", "0.5"])):
        for extra in ([], ["--n", "100"]):
            code = main([cmd, "-m", "population", "--population", f, *q, *extra, "--json"])
            assert code in (0, None)
            out[cmd, len(extra)] = json.loads(capsys.readouterr().out)
        assert out[cmd, 0]["value"] == out[cmd, 2]["value"] and out[cmd, 0]["n"] == 100
    assert main(["epsilon", "-m", "population", "--population", f, "--n", "99",
                 "--delta", "1e-3"]) == 2
    assert "100" in capsys.readouterr().err
    code = main(["epsilon", "-m", "krr", "--k", "10", "--eps0", "1", "--delta", "1e-3"])
    err = capsys.readouterr().err
    assert code == 2 and "n is required" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text,msg", [
    ("users,mechanism,eps0,k\n90,krr,1,10\n-3,krr,4,10\n", "row 2"),
    ("users,mechanism,eps0,k\n90,krr,1,10\n10,nope,4,10\n", "row 2"),
    ("users,mechanism,k\n90,krr,10\n", "row 1: missing eps0"),
    ("users,mechanism,eps0,k\n90,krr,1,10\n10,krr,4,5\n", "population"),
])
def test_cli_population_bad_rows(tmp_path, capsys, text, msg):
    from amp.cli import main
    (tmp_path / "bad.csv").write_text(text)
    code = main(["epsilon", "-m", "population", "--population", str(tmp_path / "bad.csv"),
                 "--n", "100", "--delta", "1e-3"])
    err = capsys.readouterr().err
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ Poisson-binomial paths
def test_binned_bracket_contains_every_count_bracket(monkeypatch):
    """Windows longer than SMALL_WINDOW are binned: the binned bracket of E[f(T)] must meet
    the bracket computed with every count its own bin (both contain the exact value), and a
    tighter tolerance gives a bracket inside the looser one's neighbourhood."""
    import amp.backends.population_upper as PB
    pop = Population([(150, amp.KRR(1.0, k=4)), (50, amp.KRR(3.0, k=4))])
    curves = PB.victim_curves(pop)
    assert max(c.pmf.size for c in curves) > PB.SMALL_WINDOW
    for e in (0.1,):
        loose = [c.delta(e, 0.05) for c in curves]
        tight = [c.delta(e, 1e-3) for c in curves]
        monkeypatch.setattr(PB, "SMALL_WINDOW", 10 ** 6)
        full = [c.delta(e, 1e-3) for c in curves]
        monkeypatch.undo()
        for lo, ti, fu in zip(loose, tight, full):
            for b in (lo, ti):
                assert b.lower <= fu.upper * (1 + 1e-12) and fu.lower <= b.upper * (1 + 1e-12)
            # the requested width, unless f's own brackets are wider (their float floor)
            assert ti.upper - ti.lower <= 1e-3 * ti.upper + 2 * ti.details["floor"]
            assert ti.upper <= lo.upper * (1 + 1e-9)
        for c, fu in zip(curves, full):                 # the pruning bound is an upper bound
            assert c.chernoff(e) >= fu.lower


def test_front_door_poisson_binomial():
    pop = Population([(90, amp.KRR(1.0, k=10)), (10, amp.KRR(4.0, k=10))])
    r = amp.epsilon(pop, pop.n, 1e-3, method="poisson-binomial", rel_tol=1e-3)
    assert r.rel_width <= 1e-3
    base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws())
    assert r.upper <= base.epsilon(1e-3).lower                     # sharper than the baseline
    # the default is the same bound (issue 34: method= only picks a backend)
    default = amp.epsilon(pop, pop.n, 1e-3)
    assert default.lower <= r.upper and r.lower <= default.upper
    assert default.upper <= base.epsilon(1e-3).lower
    assert amp.delta(pop, pop.n, r.upper, method="poisson-binomial").upper <= 1e-3
    assert amp.delta(pop, pop.n, r.lower, method="poisson-binomial").upper > 1e-3
    d = amp.delta(pop, pop.n, [0.2, 0.6], method="poisson-binomial")
    assert d[0].upper >= d[1].upper and d[0].upper <= amp.delta(pop, pop.n, 0.2).upper


@pytest.mark.parametrize("q", [0.5])
def test_sampled_population_above_brute_force(q):
    """sampling=q: every group runs q R_g + (1 - q) void; brute force on the stacked matrix of
    the subsampled groups."""
    spec = [(2, 0.5), (2, 2.5)]
    k = 3
    pop = Population([(n, amp.KRR(e, k=k)) for n, e in spec])
    S = np.vstack([Subsampled(amp.KRR(e, k=k), q).matrix() for _, e in spec])
    for e in (0.05, 0.3):
        pb = amp.delta(pop, pop.n, e, method="poisson-binomial", sampling=q)
        assert pb.upper <= amp.delta(pop, pop.n, e, sampling=q).upper * (1 + 1e-9)
        best = 0.0
        for v in range(2):
            sizes = [n - (g == v) for g, (n, _) in enumerate(spec)]
            choices = [list(itertools.combinations_with_replacement(range(k), s))
                       for s in sizes]
            for x0, x1 in itertools.permutations(range(k), 2):
                for combo in itertools.product(*choices):
                    others = [g * k + x for g, xs in enumerate(combo) for x in xs]
                    best = max(best, shuffled_divergence(S, v * k + x0, v * k + x1, others, e))
        assert_upper(pb.upper, best, atol=1e-13)


def test_rounds_above_exact_two_round_composition():
    """rounds=2 (baseline points and Poisson-binomial points, both composed by connect-the-
    dots PLDs): never below the exact hockey-stick of two rounds, each round any neighbouring
    pair with the victim at the same place (products of the exact shuffled laws)."""
    from amp.oracles.ground_truth import ShuffledPair, hockey_stick
    spec = [(2, 0.5), (1, 2.0)]
    k = 3
    pop = Population([(n, amp.KRR(e, k=k)) for n, e in spec])
    S = np.vstack([krr_matrix(e, k) for _, e in spec])
    pairs = {}
    for v in range(2):
        sizes = [n - (g == v) for g, (n, _) in enumerate(spec)]
        choices = [list(itertools.combinations_with_replacement(range(k), s)) for s in sizes]
        for x0, x1 in itertools.permutations(range(k), 2):
            for combo in itertools.product(*choices):
                others = [g * k + x for g, xs in enumerate(combo) for x in xs]
                sp = ShuffledPair.from_inputs(S, v * k + x0, v * k + x1, others,
                                              merge_columns=False)
                pairs.setdefault(v, []).append(sp)
    eps_list = (0.3, 1.0, 2.0)
    exact = np.zeros(len(eps_list))
    for v, ps in pairs.items():
        for a in ps:
            for b in ps:
                p = np.outer(a.p0, b.p0).ravel()
                r = np.outer(a.p1, b.p1).ravel()
                exact = np.maximum(exact, hockey_stick(p, r, np.array(eps_list)))
    assert exact.max() > 1e-3                                         # a real check
    from amp.rounds.population import population_rounds
    for baseline in (True, False):
        # a coarse grid (valid for any number of points) keeps the test fast
        got = [population_rounds(pop, 2, eps=e, baseline=baseline, points=24)
               for e in eps_list]
        for g, ex in zip(got, exact):
            assert g.lower == 0.0
            assert_upper(g.upper, ex, atol=1e-12)
    # the front door composes the same (baseline by default)
    assert amp.delta(pop, pop.n, 1.0, rounds=2).upper >= exact[1]


def test_calibrate_population_family():
    """A family of populations (personalised eps0 at fixed ratios 1 : 3): the calibrated
    eps0 meets the target under the Poisson-binomial bound and is at least the baseline's."""
    make = lambda e0: Population([(90, amp.KRR(e0, k=10)), (10, amp.KRR(3 * e0, k=10))])  # noqa
    pb = amp.calibrate_eps0(make, 100, 1.0, 1e-3, method="poisson-binomial", rel_tol=1e-2)
    base = amp.calibrate_eps0(make, 100, 1.0, 1e-3, rel_tol=1e-2)
    assert population_delta(make(pb.value), 1.0).upper <= 1e-3
    assert pb.value >= base.value * (1 - 1e-9)


@pytest.mark.parametrize("bad", [
    lambda: amp.epsilon(amp.KRR(1.0, k=3), 10, 1e-3, method="poisson-binomial"),
    lambda: amp.epsilon(Population([(2, amp.KRR(1.0, k=3))]), 3, 1e-3,
                        method="poisson-binomial"),
    lambda: amp.delta(amp.KRR(1.0, k=3), 2, 0.1, method="poisson-binomial"),
    lambda: amp.epsilon(Population([(2, amp.KRR(1.0, k=3))]), 2, 1e-3, rounds=2,
                        bound="lower"),
])
def test_poisson_binomial_bad_input(bad):
    with pytest.raises(ParameterError):
        bad()


def test_population_functions_take_progress_and_executor_like_the_front_door():
    """rel_tol, progress and executor on every front-door function (issue 26): the population
    functions accept them; the executor is checked (and not used: victims run in turn)."""
    from concurrent.futures import ThreadPoolExecutor
    pop = amp.Population([(90, amp.KRR(1.0, k=10)), (10, amp.KRR(4.0, k=10))])
    lines: list[str] = []
    with ThreadPoolExecutor(1) as ex:
        d = amp.population_delta(pop, 0.5, progress=lines.append, executor=ex)
        e = amp.population_epsilon(pop, 1e-3, rel_tol=1e-2, progress=lines.append,
                                   executor=ex)
    assert d == amp.population_delta(pop, 0.5)
    assert e.bracket == amp.population_epsilon(pop, 1e-3, rel_tol=1e-2).bracket
    assert lines and lines[0].startswith("delta(eps=0.5) in [")
    with pytest.raises(amp.ParameterError):
        amp.population_delta(pop, 0.5, executor=5)
    with pytest.raises(amp.ParameterError):
        amp.population_epsilon(pop, 1e-3, progress=5)


def test_describe_says_each_groups_eps0(tmp_path, capsys):
    """Issue 34, seam 3: a population (and a mixture) names each group's mechanism with its
    eps0, as the mechanisms' own ``describe()`` do; results and the CLI carry it."""
    import json
    from amp.cli import main
    pop = Population([(900, amp.KRR(1.0, k=10)), (100, amp.KRR(4.0, k=10))])
    assert pop.describe() == "population(900 x 10-RR (eps0=1), 100 x 10-RR (eps0=4))"
    mix = Mixture([(0.9, amp.KRR(1.0, k=10)), (0.1, amp.KRR(4.0, k=10))])
    assert mix.describe() == "mixture(0.9 10-RR (eps0=1), 0.1 10-RR (eps0=4))"
    r = amp.delta(pop, pop.n, 1.0, method="poisson-binomial")
    assert r.mechanism.startswith("population(900 x 10-RR (eps0=1), 100 x 10-RR (eps0=4))")
    (tmp_path / "p.csv").write_text("users,mechanism,eps0,k\n90,krr,1,10\n10,krr,4,10\n")
    assert main(["delta", "-m", "population", "--population", str(tmp_path / "p.csv"),
                 "--eps", "0.5", "--json"]) in (0, None)
    got = json.loads(capsys.readouterr().out)["mechanism"]
    assert got.startswith("population(90 x 10-RR (eps0=1), 10 x 10-RR (eps0=4))"), got


def test_default_is_the_sharpest_from_every_entry(tmp_path):
    """Issue 34, seam 1: the same (sharpest) bound from amp.epsilon, method='poisson-binomial',
    amp.profile, amp.sweep, amp.delta and the CLI; method= only names a backend; it is below
    the common-blanket baseline, which stays available by explicit laws."""
    import json
    from amp.cli import main
    pop = Population([(45, amp.KRR(1.0, k=10)), (5, amp.KRR(4.0, k=10))])
    d = 1e-3
    r = amp.epsilon(pop, pop.n, d)
    assert r.method.startswith("poisson-binomial")
    assert amp.epsilon(pop, pop.n, d, method="poisson-binomial").bracket == r.bracket
    assert amp.profile(pop, pop.n).epsilon(d).bracket == r.bracket
    row = amp.sweep(pop, delta=d).to_records()[0]
    assert (row["lower"], row["upper"]) == r.bracket
    base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws()).epsilon(d)
    assert r.upper < base.lower
    assert amp.delta(pop, pop.n, r.upper, rel_tol=1e-6).upper <= d
    f = tmp_path / "p.csv"
    f.write_text("users,mechanism,eps0,k\n45,krr,1,10\n5,krr,4,10\n")
    out = tmp_path / "o.json"
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["epsilon", "-m", "population", "--population", str(f), "--delta", str(d),
              "--json", "--quiet"])
    ans = json.loads(buf.getvalue())
    assert math.isclose(ans["value"], r.value, rel_tol=1e-12)
    # rounds: the Poisson-binomial points composed, below the composed baseline
    two = amp.epsilon(pop, pop.n, d, rounds=2)
    from amp.rounds.population import population_rounds
    assert two.value <= population_rounds(pop, 2, delta=d, baseline=True).value
    # a family of populations: calibrated on the same bound
    fam = lambda e0: Population([(45, amp.KRR(e0, k=10)), (5, amp.KRR(4 * e0, k=10))])
    c = amp.calibrate_eps0(fam, 50, 1.0, d, rel_tol=1e-2)
    assert amp.delta(fam(c.value), 50, 1.0).upper <= d


def test_nothing_is_cached_on_the_population():
    pop = Population([(45, amp.KRR(1.0, k=10)), (5, amp.KRR(4.0, k=10))])
    before = dict(pop.__dict__)
    amp.epsilon(pop, pop.n, 1e-3, rel_tol=1e-2)
    population_delta(pop, 0.5)
    assert set(pop.__dict__) == set(before)
