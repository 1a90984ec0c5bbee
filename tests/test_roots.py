"""``amp.core.roots``: the scalar searches that replace ``scipy.optimize`` on amp's first call.

Oracle: scipy itself. Both routines follow scipy's steps with the same floating-point
operations, so they must return the same numbers (to the last bit), on functions like amp's
(a saddle-point equation, a log Chernoff bound) and on a seeded set of random ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from amp.core.errors import NumericalError
from amp.core.roots import bisect, bounded_minimum, brent_root


def _saddle_eq(seed: int):
    rng = np.random.default_rng(seed)
    while True:                                  # a positive atom and a negative mean
        g = rng.normal(size=int(rng.integers(2, 7))) * 10 ** rng.uniform(-3, 2)
        p = rng.dirichlet(np.ones(g.size))
        if g.max() > 0 and float(np.dot(p, g)) < 0:
            break
    lp, gmax = np.log(p), g.max()
    f = lambda th: float(np.dot(np.exp(lp + th * (g - gmax)), g))   # noqa: E731
    hi = 1.0 / gmax
    while f(hi) < 0:
        hi *= 2
    return f, 0.0, hi


def _log_chernoff(seed: int):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=int(rng.integers(2, 8))) * 3
    g[0] = abs(g[0]) + 0.1
    p = rng.dirichlet(np.ones(g.size))
    n = int(10 ** rng.uniform(1, 11))
    lp = np.log(p)

    def logb(t: float) -> float:
        th = math.exp(t)
        z = lp + th * g
        zm = float(z.max())
        return n * (zm + math.log(float(np.exp(z - zm).sum()))) - 1.0 - math.log(th)

    scale = float(np.abs(g).max())
    return logb, math.log(1e-12 / scale), math.log(1e4 / scale)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("rtol", [1e-13, 1e-10, 4 * 2.0 ** -52])
def test_brent_root_is_scipy_brentq(seed, rtol):
    f, a, b = _saddle_eq(seed)
    ours = brent_root(f, a, b, xtol=1e-300 if seed % 2 else 2e-12, rtol=rtol, maxiter=500)
    ref = optimize.brentq(f, a, b, xtol=1e-300 if seed % 2 else 2e-12, rtol=rtol, maxiter=500)
    assert ours == ref


@pytest.mark.parametrize("f,a,b", [(lambda x: x * x - 2, 0.0, 2.0), (math.cos, 0.0, 3.0),
                                   (lambda x: math.exp(x) - 5, -3.0, 9.0),
                                   (lambda x: x ** 3 - 0.1, -1.0, 0.5), (lambda x: x - 1, 1.0, 4.0)],
                         ids=["sqrt2", "cos", "exp", "cube", "root-at-end"])
def test_brent_root_textbook(f, a, b):
    assert brent_root(f, a, b) == optimize.brentq(f, a, b)


def test_brent_root_refuses():
    with pytest.raises(ValueError, match="same sign"):
        brent_root(lambda x: x * x + 1, -1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        brent_root(lambda x: math.nan if x > 0.2 else x - 0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="rtol"):
        brent_root(lambda x: x, -1.0, 1.0, rtol=1e-17)
    with pytest.raises(NumericalError, match="did not converge"):
        brent_root(lambda x: math.exp(x) - 2, 0.0, 1.0, xtol=1e-300, maxiter=2)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("xatol", [1e-6, 1e-3, 1e-5])
def test_bounded_minimum_is_scipy_bounded(seed, xatol):
    f, lo, hi = _log_chernoff(seed)
    x, fx = bounded_minimum(f, lo, hi, xatol=xatol)
    r = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded",
                                 options={"xatol": xatol})
    assert (x, fx) == (float(r.x), float(r.fun))


@pytest.mark.parametrize("f,lo,hi", [(lambda x: (x - 0.3) ** 2, -1.0, 2.0),
                                     (lambda x: abs(x - 1.7), 0.0, 1.0),
                                     (lambda x: -math.sin(x), 0.0, 3.0),
                                     (lambda x: x ** 4 - x, -5.0, 5.0)],
                         ids=["parabola", "edge", "sin", "quartic"])
def test_bounded_minimum_textbook(f, lo, hi):
    x, fx = bounded_minimum(f, lo, hi)
    r = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded")
    assert (x, fx) == (float(r.x), float(r.fun))
    x2, _ = bounded_minimum(f, lo, hi, maxiter=3)
    r2 = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"maxiter": 3})
    assert x2 == float(r2.x)


def test_bounded_minimum_refuses():
    with pytest.raises(ValueError, match="finite"):
        bounded_minimum(lambda x: x, 0.0, math.inf)
    with pytest.raises(ValueError, match="exceeds"):
        bounded_minimum(lambda x: x, 1.0, 0.0)


def test_brent_root_fails_where_scipy_fails():
    """x^3 on [-1, 0.5] does not converge in 100 iterations for scipy either (its values
    underflow near the root): both refuse rather than return a point."""
    with pytest.raises(RuntimeError):
        optimize.brentq(lambda x: x ** 3, -1.0, 0.5)
    with pytest.raises(NumericalError):
        brent_root(lambda x: x ** 3, -1.0, 0.5)


def _hand_bisection(good, lo, hi, rel_tol, floor, steps):
    """The loop the library wrote eight times before :func:`bisect` (check, halve, move)."""
    for _ in range(steps):
        if hi - lo <= rel_tol * max(floor, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        if good(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


@pytest.mark.parametrize("root,lo,hi,rel_tol,floor,steps", [
    (0.3, 0.0, 1.0, 1e-9, 0.0, 200), (1e-7, 0.0, 5.0, 1e-3, 0.0, 40),
    (2.5, 0.0, 10.0, 0.0, 0.0, 40), (-30.5, -60.0, -1.0, 1e-13, 1.0, 200),
    (0.7, 0.0, 0.7000001, 1e-4, 0.0, 80)])
def test_bisect_keeps_the_predicate_at_its_ends(root, lo, hi, rel_tol, floor, steps):
    """Every point that became ``hi`` satisfied the predicate, every ``lo`` did not; the
    tolerance or the step count stops it; the same ends as the hand-written loop it replaced."""
    seen = []

    def good(x):
        seen.append(x)
        return x >= root

    a, b = bisect(good, lo, hi, rel_tol=rel_tol, floor=floor, steps=steps)
    assert (a, b) == _hand_bisection(lambda x: x >= root, lo, hi, rel_tol, floor, steps)
    assert a < root <= b or (a, b) == (lo, hi)
    assert len(seen) <= steps
    assert b - a <= rel_tol * max(floor, abs(b)) or len(seen) == steps
    assert all(x >= root for x in seen if x == b) and (a == lo or a < root)


def test_bisect_returns_the_given_ends_when_already_narrow():
    calls = []
    assert bisect(lambda x: calls.append(x) or True, 1.0, 1.0 + 1e-12, rel_tol=1e-9) == \
        (1.0, 1.0 + 1e-12)
    assert calls == []
