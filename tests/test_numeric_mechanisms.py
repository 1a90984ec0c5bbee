"""Numeric randomizers (amp.mechanisms.numeric): Duchi, square wave, piecewise mechanism.

Oracles, independent of the code under test: each mechanism's output space cut, for a chosen set
of inputs, into the finitely many cells on which every density is constant, giving an exact
matrix (cell probability = length x density level, written here from the papers' definitions);
its Theorem 4 bound over all pairs (MatrixMechanism) and the exact shuffled divergences of
explicit datasets by histogram enumeration (amp.oracles.ground_truth).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import amp
from amp.backends.exact import delta_enumerate
from amp.core.errors import ParameterError
from amp.mechanisms.base import pair_law_from_matrix
from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave, square_wave_b
from amp.oracles.ground_truth import shuffled_divergence
from helpers import assert_lower, assert_upper

EPS = [0.0, 0.1, 0.3, 0.7]


# ------------------------------------------------------------------ oracles from definitions
def duchi_matrix(eps0: float, xs) -> np.ndarray:
    E = math.exp(eps0)
    plus = [0.5 + x * (E - 1) / (2 * (E + 1)) for x in xs]
    return np.array([[p, 1 - p] for p in plus])


def window_matrix(lo_out, hi_out, windows, p, q) -> np.ndarray:
    """Rows: inputs with high-density windows; columns: the cells between all window ends."""
    pts = sorted({lo_out, hi_out} | {t for w in windows for t in w})
    cells = [(s, t) for s, t in zip(pts[:-1], pts[1:]) if t > s]
    return np.array([[(t - s) * (p if w[0] <= (s + t) / 2 <= w[1] else q) for s, t in cells]
                     for w in windows])


def sw_matrix(eps0: float, b: float, vs) -> np.ndarray:
    E = math.exp(eps0)
    q = 1 / (2 * b * E + 1)
    return window_matrix(-b, 1 + b, [(v - b, v + b) for v in vs], E * q, q)


def pm_matrix(eps0: float, ts) -> np.ndarray:
    h = math.exp(eps0 / 2)
    C = (h + 1) / (h - 1)
    p = (math.exp(eps0) - h) / (2 * h + 2)
    wins = [((C + 1) / 2 * t - (C - 1) / 2, (C + 1) / 2 * t - (C - 1) / 2 + C - 1) for t in ts]
    return window_matrix(-C, C, wins, p, p / math.exp(eps0))


CASES = {
    "duchi-1": (lambda: Duchi(1.0), lambda xs: duchi_matrix(1.0, xs), [-1, -0.4, 0, 0.5, 1]),
    "duchi-3": (lambda: Duchi(3.0), lambda xs: duchi_matrix(3.0, xs), [-1, -0.3, 0.2, 1]),
    "sw-1": (lambda: SquareWave(1.0), lambda xs: sw_matrix(1.0, square_wave_b(1.0), xs),
             [0, 0.2, 0.5, 0.9, 1]),
    "sw-3-b0.7": (lambda: SquareWave(3.0, b=0.7), lambda xs: sw_matrix(3.0, 0.7, xs),
                  [0, 0.25, 0.5, 1]),
    "sw-2-b0.5": (lambda: SquareWave(2.0, b=0.5), lambda xs: sw_matrix(2.0, 0.5, xs),
                  [0, 0.3, 1]),
    "pm-1": (lambda: PiecewiseMechanism(1.0), lambda xs: pm_matrix(1.0, xs),
             [-1, -0.5, 0, 0.3, 1]),
    "pm-4": (lambda: PiecewiseMechanism(4.0), lambda xs: pm_matrix(4.0, xs), [-1, 0, 0.6, 1]),
}


def ends(xs):
    return xs.index(min(xs)), xs.index(max(xs))


# ------------------------------------------------------------------ the laws
@pytest.mark.parametrize("case", CASES)
def test_worst_law_is_the_matrix_pair_law_of_the_ends(case):
    make, matrix, xs = CASES[case]
    m, M = make(), matrix(xs)
    i, j = ends(xs)
    law = pair_law_from_matrix(M, i, j, m.eps0)
    assert law.same_law(m.gparv()) or np.allclose(
        np.sort(law.p), np.sort(m.gparv().p), rtol=1e-12)
    assert math.isclose(m.gamma, M.min(axis=0).sum(), rel_tol=1e-12)
    for e in EPS:                         # Property 2.1
        assert math.isclose(m.gparv().mean(e), 1 - math.exp(e), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("case", CASES)
def test_pair_laws_match_the_matrix(case):
    make, matrix, xs = CASES[case]
    m, M = make(), matrix(xs)
    for i, j in itertools.permutations(range(len(xs)), 2):
        want = pair_law_from_matrix(M, i, j, m.eps0)
        got = m.pair_law(xs[i], xs[j])
        for e in EPS:
            a, p = want.atoms(e)
            b, r = got.atoms(e)
            assert math.isclose(np.dot(np.maximum(a, 0), p), np.dot(np.maximum(b, 0), r),
                                rel_tol=1e-9, abs_tol=1e-14)
            assert math.isclose(np.dot(a ** 2, p), np.dot(b ** 2, r), rel_tol=1e-9)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n", [2, 5])
def test_worst_pair_on_a_grid(case, n):
    """Theorem 4 of every grid pair (exact enumeration) is at most the worst pair's."""
    make, _, xs = CASES[case]
    m = make()
    lo, hi = m.domain
    grid = np.linspace(lo, hi, 7)
    for e in EPS:
        worst = delta_enumerate(m.gparv(), n, e)
        for x0, x1 in itertools.product(grid, repeat=2):
            assert delta_enumerate(m.pair_law(x0, x1), n, e) <= worst * (1 + 1e-9) + 1e-15


# ------------------------------------------------------------------ bounds vs exact truth
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n", [2, 4])
def test_upper_bound_above_exact_shuffled_divergences(case, n):
    make, matrix, xs = CASES[case]
    m, M = make(), matrix(xs)
    k = len(xs)
    for e in (0.1, 0.4):
        up = amp.delta(m, n, e).value
        mat = amp.delta(amp.MatrixMechanism(M), n, e).value
        assert math.isclose(up, mat, rel_tol=5e-3, abs_tol=1e-14)     # Theorem 4, same pair
        for x0, x1 in itertools.permutations(range(k), 2):
            for others in itertools.combinations_with_replacement(range(k), n - 1):
                truth = shuffled_divergence(M, x0, x1, list(others), e)
                assert_upper(up, truth, atol=1e-13)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n", [3, 6])
def test_lower_bound_is_an_exact_dataset_pair(case, n):
    make, matrix, xs = CASES[case]
    m = make()
    lo, hi = m.domain
    mid = (lo + hi) / 2
    inputs = [lo, hi, mid]
    M = matrix(inputs)
    for e in (0.05, 0.3):
        low = amp.delta(m, n, e, bound="lower").value
        truths = [shuffled_divergence(M, 0, 1, x2, e, n=n) for x2 in (2, 0, 1)]
        assert_lower(low, max(truths), rtol=1e-9, atol=1e-14)
        assert low >= max(truths) * (1 - 5e-3) - 1e-14
        assert low <= amp.delta(m, n, e).value


# ------------------------------------------------------------------ the front door
@pytest.mark.parametrize("make", [lambda: Duchi(2.0), lambda: SquareWave(2.0),
                                  lambda: PiecewiseMechanism(2.0)], ids=["duchi", "sw", "pm"])
def test_front_door(make):
    m = make()
    up = amp.epsilon(m, 10_000, 1e-6)
    low = amp.epsilon(m, 10_000, 1e-6, bound="lower")
    assert 0 < low.value <= up.value < m.eps0
    prof = amp.profile(m, 10_000)
    assert prof.delta(up.value).value <= 1e-6 * (1 + 1e-9)
    two = amp.epsilon(m, 10_000, 1e-6, sampling=0.5)
    assert two.value <= up.value
    e0 = amp.calibrate_eps0(lambda e: type(m)(e), 10_000, up.value, 1e-6)
    assert e0.value <= 2.0 * (1 + 1e-3)


def test_duchi_is_binary_rr():
    for e0 in (0.5, 2.0):
        assert Duchi(e0).gparv().same_law(amp.KRR(e0, k=2).gparv())


def test_square_wave_default_b():
    for e0 in (0.5, 1.0, 4.0):
        E = math.exp(e0)
        want = (e0 * E - E + 1) / (2 * E * (E - 1 - e0))
        assert math.isclose(square_wave_b(e0), want, rel_tol=1e-9)
        assert square_wave_b(e0) < 0.5
    assert math.isclose(square_wave_b(1e-5), 0.5, rel_tol=1e-4)


def test_piecewise_blanket_mass():
    for e0 in (0.5, 2.0, 6.0):
        assert math.isclose(PiecewiseMechanism(e0).gamma, math.exp(-e0 / 2), rel_tol=1e-12)


@pytest.mark.parametrize("bad", [
    lambda: Duchi(0.0), lambda: Duchi(-1), lambda: SquareWave(1.0, b=0),
    lambda: SquareWave(1.0, b=float("nan")), lambda: PiecewiseMechanism("a"),
    lambda: Duchi(1.0).pair_law(-1.5, 1), lambda: SquareWave(1.0).pair_law(0, 1.2),
    lambda: PiecewiseMechanism(1.0).lower_law(-1, 1, 2), lambda: Duchi(1.0).prob_plus(True),
])
def test_bad_input(bad):
    with pytest.raises(ParameterError):
        bad()


# ------------------------------------------------------------------ registry and CLI
@pytest.mark.parametrize("argv,cls", [
    (["-m", "duchi"], Duchi), (["-m", "piecewise"], PiecewiseMechanism),
    (["-m", "squarewave"], SquareWave), (["-m", "squarewave", "--b", "0.7"], SquareWave)])
def test_cli_and_registry(argv, cls, capsys):
    import json
    from amp.cli import main
    from amp.mechanisms import registry
    name = argv[1]
    b = float(argv[3]) if len(argv) > 2 else None
    mech = registry.make(name, 2.0, b=b)
    assert isinstance(mech, cls)
    code = main(["epsilon", *argv, "--eps0", "2", "--n", "10000", "--delta", "1e-6", "--json"])
    assert code in (0, None)
    ans = json.loads(capsys.readouterr().out)
    assert math.isclose(ans["value"], amp.epsilon(mech, 10_000, 1e-6).value, rel_tol=1e-9)


def test_cli_refuses_b_for_other_mechanisms(capsys):
    from amp.cli import main
    code = main(["epsilon", "-m", "duchi", "--b", "0.3", "--eps0", "2", "--n", "100",
                 "--delta", "1e-6"])
    assert code == 2
    assert "--b does not apply" in capsys.readouterr().err
