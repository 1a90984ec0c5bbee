"""Laplace on a bounded interval (amp.mechanisms.laplace), against independent oracles.

Oracles, written here from the definition ``r_x(y) = (eps0/2) exp(-eps0 |y - x|)`` on the
normalised interval [0, 1] (not from the module's closed forms):
* numerical integration on a fine y-grid of the worst-pair inequality behind the proof;
* the blanket mass, Property 2.1 and cell masses by scipy.integrate.quad of the densities;
* E[(G_1 + G_2)_+] of a much finer midpoint discretisation of the GPARV in y (pairwise sums);
* the exact shuffled divergence of two users by a double integral over the output pair;
* finite matrices (output binned, several inputs): amp.MatrixMechanism, whose pairs' maximum
  must stay below Laplace's certified upper end and reach close to it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import amp
from amp.backends.dispatch import LawDelta
from amp.backends.continuous import ContinuousDelta
from amp.mechanisms.laplace import Laplace
from helpers import assert_lower, assert_upper


def dens(eps0: float, x: float, y):
    return eps0 / 2 * np.exp(-eps0 * np.abs(np.asarray(y) - x))


def blanket(eps0: float, y):
    return np.minimum(dens(eps0, 0.0, y), dens(eps0, 1.0, y))


# ------------------------------------------------------------------ worst pair (the proof)
@pytest.mark.parametrize("eps0", [2.5, pytest.param(0.7, marks=pytest.mark.slow)])
def test_worst_pair_inequality_on_a_grid(eps0):
    """H_{u,v}(al, be) = int (r_u - al r_v - be omega)_+ <= H_{0,1}: the inequality that makes
    the endpoint pair's GPARV the largest in the convex order (Laplace docstring)."""
    y = np.linspace(-14 / eps0, 1 + 14 / eps0, 40_001)
    dy = y[1] - y[0]
    om = blanket(eps0, y)
    xs = np.linspace(0, 1, 7)
    R = {x: dens(eps0, x, y) for x in xs}
    for al in [0.0, 0.1, 0.5, 1.0, 1.7, 5.0]:
        for be in [0.0, 0.2, 1.0, 3.0, 20.0]:
            ref = np.sum(np.maximum(R[0.0] - al * R[1.0] - be * om, 0)) * dy
            for u in xs:
                for v in xs:
                    h = np.sum(np.maximum(R[u] - al * R[v] - be * om, 0)) * dy
                    assert h <= ref + 1e-6, (u, v, al, be, h, ref)


@pytest.mark.parametrize("eps0", [1.0, pytest.param(3.0, marks=pytest.mark.slow)])
def test_interior_pairs_below_endpoints_theorem4(eps0):
    """Theorem 4 at n = 2 of interior pairs (fine binned pair laws, exact enumeration) never
    above the endpoint pair's certified upper end."""
    edges = np.concatenate([[-np.inf], np.linspace(0, 1, 81), [np.inf]])

    def P(x):
        def F(t):
            return np.where(t < x, 0.5 * np.exp(-eps0 * (x - t)),
                            1 - 0.5 * np.exp(-eps0 * np.abs(t - x)))
        return np.diff(F(edges))
    xs = [0.0, 0.2, 0.5, 0.8, 1.0]
    M = np.array([P(x) for x in xs])
    M /= M.sum(axis=1, keepdims=True)
    c = np.minimum(M[0], M[-1])          # the blanket: min over inputs is at an endpoint
    assert np.allclose(c, M.min(axis=0), rtol=1e-12)
    top = ContinuousDelta(Laplace(eps0).continuous_law(), 2)
    for eps in [0.1, 0.4]:
        up = top.delta(eps, rel_tol=0.05).upper
        for i in range(5):
            for j in range(5):
                if i != j:
                    law = amp.GPARV(M[i] / c, M[j] / c, c, eps0)
                    v = LawDelta(law, 2, "exact").delta(eps).upper
                    assert_upper(up, v)


# ------------------------------------------------------------------ the law's closed forms
@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
def test_law_masses_and_means_against_quadrature(eps0):
    spec = Laplace(eps0).continuous_law()
    gam = integrate.quad(lambda y: blanket(eps0, y), -np.inf, 0.5)[0] * 2
    for side in ("upper", "lower"):
        law = spec.law(2, side)
        assert math.isclose(law.gamma, gam, rel_tol=1e-12)
        assert math.isclose(law.gamma, math.exp(-eps0 / 2), rel_tol=1e-12)
        for eps in (0.0, 0.3, eps0):
            assert math.isclose(law.mean(eps), 1 - math.exp(eps), rel_tol=1e-11, abs_tol=1e-13)
    # a cell [s^2, t^2] of a = r_0 / r_1 on the left half is the y-cell [u(t), u(s)]
    s, t = 1.1, 1.3
    u = lambda r: (1 - 2 * math.log(r) / eps0) / 2     # a = e^(eps0 (1 - 2u)) = r^2
    if u(t) >= 0:
        m = integrate.quad(lambda y: blanket(eps0, y), u(t), u(s))[0]
        m0 = integrate.quad(lambda y: dens(eps0, 0.0, y), u(t), u(s))[0]
        K = math.exp(-eps0 / 2) / 4
        assert math.isclose(m, 2 * K * (t - s) / (s * t), rel_tol=1e-9)
        assert math.isclose(m0 / m, s * t, rel_tol=1e-9)       # the cell's mean of a


def fine_delta_n2(eps0: float, eps: float, cells: int = 3000) -> float:
    """E[(G_1 + G_2)_+] / 2 of a midpoint discretisation of the GPARV in y (uncertified,
    very fine), tails as exact atoms, plus the atom 0 off the blanket."""
    y = (np.arange(cells) + 0.5) / cells
    w = blanket(eps0, y) / cells
    g = (dens(eps0, 0.0, y) - math.exp(eps) * dens(eps0, 1.0, y)) / blanket(eps0, y)
    E = math.exp(eps0)
    tail = math.exp(-eps0) / 2
    g = np.concatenate([g, [E - math.exp(eps), 1 - E * math.exp(eps), 0.0]])
    w = np.concatenate([w, [tail, tail, 0.0]])
    w[-1] = 1 - w.sum()
    s = g[:, None] + g[None, :]
    return float(np.sum(w[:, None] * w[None, :] * np.maximum(s, 0))) / 2


@pytest.mark.parametrize("eps0,eps", [pytest.param(1.0, 0.2, marks=pytest.mark.slow),
                                      (3.0, 0.5), (3.0, 1.5)])
def test_brackets_nest_and_contain_fine_discretisation(eps0, eps):
    spec = Laplace(eps0).continuous_law()
    truth = fine_delta_n2(eps0, eps)
    prev = (0.0, math.inf)
    for level in range(0, 3):
        up = LawDelta(spec.law(level, "upper"), 2, "exact").delta(eps)
        lo = LawDelta(spec.law(level, "lower"), 2, "exact").delta(eps)
        pad = spec.pad(eps)
        hi, lw = up.upper + pad, lo.lower - pad
        assert lw <= truth * (1 + 1e-6) and truth <= hi * (1 + 1e-6)
        assert prev[0] <= lw * (1 + 1e-9) and hi <= prev[1] * (1 + 1e-9)    # nested
        prev = (lw, hi)
    assert (prev[1] - prev[0]) / prev[1] < 1e-2                 # and they converge
    r = ContinuousDelta(spec, 2).delta(eps, rel_tol=1e-2)
    assert r.lower <= truth * (1 + 1e-6) <= r.upper * (1 + 2e-6)
    assert r.upper - r.lower <= 1e-2 * r.upper


def shuffled_two_users(eps0: float, x0: float, x1: float, x2: float, eps: float) -> float:
    """Exact D_{e^eps} of the shuffled outputs of (x0, x2) vs (x1, x2): the unordered pair
    {y, y'} has density r_a(y) r_c(y') + r_a(y') r_c(y); a double midpoint sum."""
    L = 12 / eps0
    k = 2400
    y = -L + (np.arange(k) + 0.5) * (1 + 2 * L) / k
    dy = (1 + 2 * L) / k
    p = lambda a: (np.outer(dens(eps0, a, y), dens(eps0, x2, y))
                   + np.outer(dens(eps0, x2, y), dens(eps0, a, y)))
    d = np.maximum(p(x0) - math.exp(eps) * p(x1), 0)
    return float(np.sum(np.triu(d, 1)) * dy * dy + 0.5 * np.sum(np.diag(d)) * dy * dy)


@pytest.mark.parametrize("eps0,eps", [(1.0, 0.1), (2.0, 0.4)])
def test_bounds_around_exact_two_user_divergence(eps0, eps):
    m = Laplace(eps0)
    up = amp.delta(m, 2, eps, rel_tol=1e-2)
    lo = amp.delta(m, 2, eps, bound="lower", rel_tol=1e-2)
    for x2 in (0.0, 0.5, 1.0):
        exact = shuffled_two_users(eps0, 0.0, 1.0, x2, eps)
        assert_upper(up.value, exact, rtol=1e-4)
    # Theorem 5 is the exact divergence of (low, x2) vs (high, x2) with x2 = low, mid, high
    best = max(shuffled_two_users(eps0, 0.0, 1.0, x2, eps) for x2 in (0.0, 0.5, 1.0))
    assert_lower(lo.value, best, rtol=1e-4)
    assert lo.value >= 0.97 * best


# ------------------------------------------------------------------ finite discretised forms
def binned_matrix(eps0: float, xs, bins: int) -> np.ndarray:
    edges = np.concatenate([[-np.inf], np.linspace(0, 1, bins + 1), [np.inf]])
    rows = []
    for x in xs:
        F = np.where(edges < x, 0.5 * np.exp(-eps0 * (x - edges)),
                     1 - 0.5 * np.exp(-eps0 * np.abs(edges - x)))
        rows.append(np.diff(F))
    M = np.array(rows)
    return M / M.sum(axis=1, keepdims=True)


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [1.0, 4.0])
def test_eps_bracket_against_finite_binned_randomizers(eps0):
    """Binning the output is post-processing: the binned randomizer's exact Theorem 4 eps is
    below Laplace's certified upper end, and approaches it as the bins shrink."""
    n, delta = 2000, 1e-5
    lap = amp.epsilon(Laplace(eps0), n, delta, rel_tol=1e-3)
    vals = []
    for bins in (20, 400):
        fin = amp.epsilon(amp.MatrixMechanism(binned_matrix(eps0, [0.0, 0.5, 1.0], bins)),
                          n, delta, rel_tol=1e-4)
        assert_upper(lap.upper, fin.upper)
        vals.append(fin.lower)
    assert vals[0] < vals[1]
    assert vals[1] >= lap.lower * (1 - 2e-3)


# ------------------------------------------------------------------ front door, CLI
@pytest.mark.slow
def test_front_door_everywhere():
    m = amp.Laplace(2.0, low=-3.0, high=5.0)
    base = amp.Laplace(2.0)
    r = amp.epsilon(m, 5000, 1e-6, rel_tol=1e-3)
    r0 = amp.epsilon(base, 5000, 1e-6, rel_tol=1e-3)
    assert r.upper == r0.upper                          # scale and shift invariant
    assert r.rel_width <= 1e-3 and "laplace-cells" in r.method
    lo = amp.epsilon(m, 5000, 1e-6, bound="lower", rel_tol=1e-3)
    assert lo.value <= r.value
    s = amp.epsilon(m, 5000, 1e-6, sampling=0.3, rel_tol=1e-3)
    assert s.value < r.value and "laplace-cells" in s.method
    prof = amp.profile(m, 5000)
    assert prof.delta(r.upper).upper <= 1e-6
    c = amp.calibrate_eps0(lambda e: amp.Laplace(e), 5000, r.upper, 1e-6, rel_tol=1e-2)
    assert c.lower <= 2.0 * (1 + 1e-2) and c.upper >= 2.0 * (1 - 1e-2)


def test_bad_parameters():
    with pytest.raises(amp.ParameterError):
        amp.Laplace(1.0, low=1.0, high=1.0)
    with pytest.raises(amp.ParameterError):
        amp.Laplace(1.0, low=float("nan"))
    with pytest.raises(amp.ParameterError):
        amp.Laplace(0.0)


def test_small_n_front_door_and_cli(capsys):
    """n = 2 (exact enumeration of the cell laws): upper, lower, sampling, profile, CLI."""
    m = amp.Laplace(1.5, low=-2.0, high=2.0)
    up = amp.delta(m, 2, 0.3, rel_tol=1e-2)
    lo = amp.delta(m, 2, 0.3, bound="lower", rel_tol=1e-2)
    sa = amp.delta(m, 2, 0.3, sampling=0.5, rel_tol=1e-2)
    assert 0 < lo.value <= up.value and sa.value < up.value
    assert "laplace-cells" in up.method and "laplace-cells" in sa.method
    assert amp.profile(m, 2).delta(0.3, rel_tol=1e-2).upper == up.upper
    from amp.cli import main
    assert main(["delta", "-m", "laplace", "--eps0", "1.5", "--n", "2", "--eps", "0.3"]) == 0
    assert "Laplace" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_laplace_epsilon(capsys):
    from amp.cli import main
    assert main(["epsilon", "-m", "laplace", "--eps0", "1", "--n", "2000", "--delta",
                 "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "Laplace" in out
