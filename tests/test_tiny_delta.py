"""Tiny delta (issue 27): the Chernoff-tilted floating-point floor and the flagged bracket.

Oracles: the exact ``delta(eps)`` of k-RR's blanket law (Theorem 4) as an mpmath sum at 50
digits over the counts (:func:`krr_exact_delta`), and exact enumeration in mpmath of the
floor's quantity ``E[D 1{S + D > 0}]`` and of a law whose atoms are moved by their noise.
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import mpmath as mp
import numpy as np
import pytest

import amp
from amp.core.floats import U, atom_floor, tilted_floor, widen

mp.mp.dps = 50


# ------------------------------------------------------------------ the oracle
@lru_cache(maxsize=8)
def _krr_tables(k: int, eps0: float, n: int):
    """The eps-free part of :func:`krr_exact_delta`: ``E``, the masses ``P(x, y)`` of the
    counts of the ``(E, 1)`` and ``(1, E)`` atoms, and for the ``(1, 1)`` count ``o`` given the
    others (``Bin(m, q)``) the cumulative tables ``F[m][j] = P(o <= j)``,
    ``M[m][j] = sum_{o <= j} o P(o)``."""
    E = mp.e ** mp.mpf(eps0)
    den = E + k - 1
    pX = pY = 1 / den
    pO = (k - 2) / den
    pR = 1 - pX - pY                     # O or F
    q = pO / pR                          # P(O | not X, not Y)
    F, M = [], []
    r = q / (1 - q)
    for m in range(n + 1):
        v = (1 - q) ** m                 # P(o = 0), then the ratio recurrence
        cf, cm, fa, ma = mp.mpf(0), mp.mpf(0), [], []
        for o in range(m + 1):
            cf += v
            cm += o * v
            fa.append(cf)
            ma.append(cm)
            v = v * (m - o) / (o + 1) * r
        F.append(fa)
        M.append(ma)
    P = {}
    for x in range(n + 1):
        # P(x, y) = n! / (x! y! m!) pX^x pY^y pR^m, along y by the ratio recurrence
        v = mp.binomial(n, x) * pX ** x * pR ** (n - x)
        for y in range(n + 1 - x):
            P[x, y] = v
            v = v * (n - x - y) / (y + 1) * pY / pR
    return E, P, F, M


def krr_exact_delta(k: int, eps0: float, n: int, eps: float) -> mp.mpf:
    """Exact Theorem 4 ``delta(eps)`` of k-RR (50 digits): ``E[S_+] / n`` with
    ``S = (E - w) x + (1 - w E) y + (1 - w) o`` over the counts of the blanket law's atoms
    ``(E, 1)``, ``(1, E)`` (mass ``1 / (E + k - 1)`` each), ``(1, 1)`` (``(k - 2) / (E + k - 1)``)
    and ``G = 0`` (the rest), ``E = e^eps0``, ``w = e^eps`` (``eps0``, ``eps`` read as exact
    binary values).  The sum over ``o`` given ``(x, y)`` is in closed form through binomial
    cumulative sums: ``sum_{o <= o*} P(o) (c - (w - 1) o)``."""
    E, P, F, M = _krr_tables(k, eps0, n)
    w = mp.e ** mp.mpf(eps)
    total = mp.mpf(0)
    for (x, y), px in P.items():
        c = (E - w) * x + (1 - w * E) * y
        if c <= 0:
            continue
        m = n - x - y
        ostar = min(m, int(mp.floor(c / (w - 1)))) if w > 1 else m
        if mp.mpf(ostar) * (w - 1) >= c:          # (c - (w-1) o) must be > 0
            ostar -= 1
        if ostar < 0:
            continue
        total += px * (c * F[m][ostar] - (w - 1) * M[m][ostar])
    return total / n


def test_oracle_matches_amp_at_moderate_delta():
    """The oracle itself: agrees with amp's bracket where both are far from any floor."""
    k, e0, n, eps = 10, 1.0, 60, 0.3
    ref = float(krr_exact_delta(k, e0, n, eps))
    r = amp.delta(amp.KRR(e0, k=k), n, eps, method="exact")
    assert r.lower <= ref <= r.upper
    assert r.rel_width < 1e-6 and 1e-5 < ref < 1


# ------------------------------------------------------------------ tiny delta brackets
@pytest.mark.parametrize("k,e0,n", [(10, 1.0, 120), (2, 0.5, 100),
                                    pytest.param(100, 1.0, 160, marks=pytest.mark.slow)])
def test_tiny_delta_brackets_contain_the_exact_value(k, e0, n):
    """delta brackets at delta ~ 1e-10 ... 1e-17 (structured and exact paths), and the eps
    bracket at delta = 1e-14, contain the 50-digit exact value; the eps bracket is answered
    (not refused) and as narrow as asked."""
    m = amp.KRR(e0, k=k)
    target = 1e-14
    with warnings.catch_warnings():
        warnings.simplefilter("error", amp.AccuracyWarning)   # answered as asked, not flagged
        r = amp.epsilon(m, n, target)
    assert not r.wider_than_asked and r.rel_width <= 1e-4
    refs = {eps: krr_exact_delta(k, e0, n, eps) for eps in (r.lower, r.upper, 1.15 * r.upper)}
    assert refs[r.upper] <= target                            # the value is valid
    assert refs[r.lower] >= target                            # ... and the bracket tight
    for eps, ref in refs.items():
        ref = float(ref)
        for method in ("auto", "exact"):
            b = amp.delta(m, n, eps, method=method, rel_tol=0.5)
            assert b.lower <= ref <= b.upper, (method, eps, b.bracket, ref)


def test_tiny_delta_answered_at_the_issue_case():
    """The issue's refusal (100-RR, eps0 = 1, n = 10007, delta = 1e-12: 'ask for rel_tol >=
    6e-03') is now answered as asked, and delta = 1e-14 too."""
    m = amp.KRR(1.0, k=100)
    for d in (1e-12, 1e-14):
        r = amp.epsilon(m, 10_007, d)
        assert r.rel_width <= 1e-4 and not r.wider_than_asked
        assert 0.014 < r.value < 0.02


# ------------------------------------------------------------------ the tilted floor
def _compositions(n, k):
    if k == 1:
        yield (n,)
        return
    for i in range(n + 1):
        for rest in _compositions(n - i, k - 1):
            yield (i,) + rest


def _enumerate(g, p, n, nu=None):
    """Exact (mpmath) ``E[S_+] / n`` or, with ``nu``, ``E[D 1{S + D > 0}] / n``, over the
    count vectors of the atoms (multinomial weights)."""
    tot = mp.mpf(0)
    g = [mp.mpf(float(v)) for v in g]
    p = [mp.mpf(float(v)) for v in p]
    nu = None if nu is None else [mp.mpf(float(v)) for v in nu]
    for c in _compositions(n, len(g)):
        w = mp.factorial(n)
        for ci, pi in zip(c, p):
            w *= pi ** ci / mp.factorial(ci)
        s = sum(ci * gi for ci, gi in zip(c, g))
        if nu is None:
            tot += w * s if s > 0 else 0
        else:
            d = sum(ci * vi for ci, vi in zip(c, nu))
            tot += w * d if s + d > 0 else 0
    return tot / n


@pytest.mark.parametrize("seed", range(8))
def test_tilted_floor_bounds_the_exact_quantity(seed):
    """``tilted_floor`` >= the exact ``E[D 1{S + D > 0}] / n`` (enumeration), with noise made
    large (1e-3 relative) so the quantity is far above rounding, and the bracket widened
    by it contains the exact delta of atoms moved anywhere within their noise."""
    rng = np.random.default_rng(seed)
    k, n = 4, 9
    g = np.sort(rng.normal(-0.4, 1.0, k))
    g[-1] = abs(g[-1]) + 0.05
    p = rng.dirichlet(np.ones(k))
    nu = 1e-3 * (np.abs(g) + 1)
    w = tilted_floor(g, p, nu, n)
    ref = _enumerate(g, p, n, nu)
    assert w >= float(ref) * (1 - 1e-12)
    d = float(_enumerate(g, p, n))
    lo, up = widen(d * (1 - 1e-14), d * (1 + 1e-14), atom_floor(g, p, nu, n))
    for shift in (nu, -nu, nu * rng.uniform(-1, 1, k)):
        exact = float(_enumerate(g + shift, p, n))
        assert lo <= exact <= up


def test_tilted_floor_is_far_below_the_old_one_at_tiny_delta():
    """Where the sum is rarely near zero the tilted term is orders below ``2.01 rho E[G_+]``
    (the old floor), and it is never used when larger (``widen`` keeps the smaller)."""
    law = amp.KRR(1.0, k=100).gparv()
    eps = 0.0158
    g, p = law.atoms(eps)
    noise = 16 * U * law.magnitudes(eps)
    fl = atom_floor(g, p, noise, 10_007)
    old = 2.01 * fl.rho * fl.gpos + fl.absn
    assert fl.tilt < 1e-3 * old
    assert fl.width == 2 * fl.tilt
    small = atom_floor(g, p, noise, 1)
    assert small.width <= 2 * old


def test_tilted_floor_zero_when_sum_cannot_be_positive():
    assert tilted_floor(np.array([-1.0, -2.0]), np.array([0.5, 0.5]),
                        np.array([1e-15, 1e-15]), 100) == 0.0


# ------------------------------------------------------------------ flagged wider
def test_flagged_wider_bracket_is_valid_and_warned():
    """Asked for more than the floor allows: the valid bracket comes back flagged (field and
    warning) and contains the exact value; ``strict=True`` refuses as before."""
    m, n = amp.KRR(1.0, k=10), 120
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        r = amp.epsilon(m, n, 1e-10, rel_tol=1e-13)
    assert r.wider_than_asked and r.achieved_rel_tol > 1e-13
    assert r.details["achieved_rel_tol"] == r.achieved_rel_tol
    assert r.as_dict()["wider_than_asked"] is True
    assert krr_exact_delta(10, 1.0, n, r.upper) <= 1e-10 <= krr_exact_delta(10, 1.0, n,
                                                                             r.lower)
    with pytest.raises(amp.NumericalError, match="rel_tol"):
        amp.epsilon(m, n, 1e-10, rel_tol=1e-13, strict=True)
    ok = amp.epsilon(m, n, 1e-10)
    assert not ok.wider_than_asked and "wider_than_asked" not in ok.as_dict()


def test_cli_flags_a_wider_bracket(capsys):
    from amp.cli import main
    rc = main(["epsilon", "-m", "krr", "--k", "10", "--eps0", "1", "--n", "120",
               "--delta", "1e-10", "--rel-tol", "1e-13", "--json", "--quiet"])
    out = capsys.readouterr()
    assert rc == 0
    assert '"wider_than_asked": true' in out.out
    assert out.err.count("\n") == 1 and "wider than asked" in out.err
