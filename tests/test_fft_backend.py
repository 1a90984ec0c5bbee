"""Direct tests of amp.backends.fft (reached otherwise only through LawDelta's fallbacks).

Contract of :func:`amp.backends.fft.fft_delta`: for float atoms ``g`` with probabilities ``p``
(a full law summing to 1: ``GPARV.atoms`` includes the atom 0 of mass ``1 - gamma``) it returns a certified bracket ``[lower, upper]`` of ``E[(G_1 + ... + G_n)_+] / n`` whose
relative width is at most ``rel_tol`` (or absolute width at most ``abs_tol``), and raises
NumericalError rather than return a wider bracket when that needs more than ``max_points``.
Oracle: exact enumeration of the multinomial counts of the atoms (independent code below).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import amp
from amp.backends.fft import DEFAULT_MAX_POINTS, fft_delta
from amp.core.errors import NumericalError


def enumerate_delta(g, p, n) -> float:
    """E[(sum of n iid draws)_+] / n by summing over every vector of atom counts."""
    g = [float(x) for x in g]
    p = [float(x) for x in p]
    assert abs(math.fsum(p) - 1) < 1e-12
    k = len(g)
    total = 0.0
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        counts = np.diff((-1,) + cut + (n + k - 1,)) - 1
        s = float(np.dot(counts, g))
        if s <= 0:
            continue
        logw = math.lgamma(n + 1) + sum(c * math.log(q) - math.lgamma(c + 1)
                                        for c, q in zip(counts, p) if c)
        total += math.exp(logw) * s
    return total / n


LAWS = {
    "3-RR": amp.KRR(1.5, k=3).gparv(),
    "10-RR": amp.KRR(3.0, k=10).gparv(),
    "RAPPOR": amp.RAPPOR(2.0).gparv(),
}


@pytest.mark.parametrize("name", LAWS)
@pytest.mark.parametrize("n", [4, 12])
def test_bracket_contains_exact_enumeration(name, n):
    law = LAWS[name]
    for eps in (0.05, 0.4):
        g, p = law.atoms(eps)
        exact = enumerate_delta(g, p, n)
        r = fft_delta(g, p, n, eps, 1e-2, DEFAULT_MAX_POINTS, name, 0.0, law.magnitudes(eps))
        assert r.lower <= exact * (1 + 1e-10) + 1e-300
        assert exact <= r.upper * (1 + 1e-10)
        assert r.upper - r.lower <= 1e-2 * r.upper
        assert r.method == "fft" and r.details["points"] >= 2


def test_random_law_against_enumeration(rng):
    """A law with arbitrary (non-lattice) atoms, some positive: the lattice rounding must
    still be one-sided."""
    for _ in range(3):
        g = rng.normal(-0.3, 1.0, size=3)
        g[0] = abs(g[0]) + 0.5                # a positive atom (the callers settle G <= 0)
        p = rng.dirichlet(np.ones(3))         # a full law (the atom 0 is one of them)
        exact = enumerate_delta(g, p, 9)
        r = fft_delta(g, p, 9, 0.0, 1e-3, DEFAULT_MAX_POINTS, "random", 0.0, np.abs(g) + 1)
        assert r.lower <= exact * (1 + 1e-10) and exact <= r.upper * (1 + 1e-10)


def test_large_n_against_direct_convolution():
    """Integer atoms: the exact law of the sum by repeated numpy convolution (n = 150)."""
    g = np.array([-2.0, -1.0, 3.0])
    p = np.array([0.5, 0.3, 0.2])            # mean -1.9 + 0.6 < 0
    n = 150
    lo = -2 * n
    pmf = np.ones(1)
    step = np.zeros(6)
    step[[0, 1, 5]] = p                       # values -2, -1, 3 shifted by 2
    for _ in range(n):
        pmf = np.convolve(pmf, step)
    vals = lo + np.arange(pmf.size)
    exact = float(np.sum(pmf[vals > 0] * vals[vals > 0])) / n
    assert exact > 1e-12
    r = fft_delta(g, p, n, 0.0, 1e-3, DEFAULT_MAX_POINTS, "int", 0.0, np.abs(g) + 1)
    assert r.lower <= exact * (1 + 1e-9) and exact <= r.upper * (1 + 1e-9)


def test_refuses_rather_than_widens():
    law = LAWS["10-RR"]
    g, p = law.atoms(0.1)
    with pytest.raises(NumericalError):
        fft_delta(g, p, 50_000, 0.1, 1e-9, 1 << 10, "tight", 0.0, law.magnitudes(0.1))
