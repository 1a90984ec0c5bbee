"""The numerical assumptions behind "certified", each tested against an independent reference.

A certified bracket is proven *given* a few facts about the floating-point tools underneath.
Each fact is listed in the engine-room page ``book/engine/certified.md`` and the README; each
has a test here that fails if it breaks (a new scipy/Boost, libm, numpy FFT or dp-accounting):

1. scipy's binomial ``pmf``/``sf`` (Boost) at ``(k, n, p)`` are within the relative
   :func:`amp.backends.structured.binomial.eta` ``= floor + 32u |k - np|`` of
   the exact values (floor ``2e-10`` for the structured engine, ``FLOAT_REL = 1e-11`` for the
   baselines): ``pmf`` checked against mpmath at 50 digits up to ``n = 10^10``, ``sf`` up to
   ``2 10^5`` against mpmath and up to ``10^10`` against an ``fsum`` of Boost's own masses.
   (A constant ``2e-10`` was assumed before: Boost's error reaches ``6.6e-10`` at ``10^10``.)
2. libm's ``exp``/``log``/``expm1``/``log1p`` (Python's ``math`` and numpy's) are within one ulp
   (the engine's atom noise allows 2 ulp for ``a``, ``b`` and 16 ulp per atom in total);
3. the floating-point error of dp-accounting's FFT self-composition is below
   :func:`amp.rounds.fft_pad` (the model the composed bounds add): checked against an exact
   convolution in extended precision;
4. ``GPARV`` merges two atoms only into the conservative one for an upper-bound law (largest
   ``a``, smallest ``b``), so a merged law is never smaller than the unmerged one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from amp.backends.structured.binomial import ETA_BINOM, eta
from amp.baselines._search import FLOAT_REL
from amp.core.floats import U

mp = pytest.importorskip("mpmath")


# ----------------------------------------------------------------------- 1. binomial pmf / sf
def _pmf_exact(k: int, n: int, p) -> "mp.mpf":
    return mp.exp(mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)
                  + k * mp.log(p) + (n - k) * mp.log1p(-p))


def _sf_exact(k: int, n: int, p) -> "mp.mpf":
    """``P(Bin(n, p) > k)`` by summing the smaller side from its mode-side end (terms by the
    exact ratio recurrence, stopped when the next term is below 1e-45 of the sum)."""
    q = 1 - p
    if k + 1 > n * p:           # upper tail: sum j = k + 1, k + 2, ...
        j, t, s = k + 1, _pmf_exact(k + 1, n, p), mp.mpf(0)
        while t > s * mp.mpf("1e-45") and j <= n:
            s += t
            t *= mp.mpf(n - j) / (j + 1) * p / q
            j += 1
        return s
    j, t, s = k, _pmf_exact(k, n, p), mp.mpf(0)     # lower part: cdf(k), then 1 - cdf
    while t > s * mp.mpf("1e-45") and j >= 0:
        s += t
        t *= mp.mpf(j) / (n - j + 1) * q / p
        j -= 1
    return 1 - s


def _cases(count: int, n_max: float, seed: int):
    """(k, n, p) over the engine's ranges: n log-uniform up to n_max, p from the Table 1 rows'
    blanket and split probabilities, k from far below to far above the mean (Chernoff windows
    reach about 40 standard deviations)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n = int(10 ** rng.uniform(1, math.log10(n_max)))
        p = float(rng.choice([1e-12, 1e-6, 1e-3, 0.0179, 0.1192, 0.2689, 0.5, 0.7311, 0.8808,
                              0.98, 0.999]))
        sd = math.sqrt(n * p * (1 - p))
        z = float(rng.uniform(-12, 40))
        k = int(round(n * p + z * sd))
        if 0 <= k < n:
            out.append((k, n, p))
    return out


def _rel(x: float, exact) -> float:
    return float(abs(mp.mpf(x) - exact) / exact)


@pytest.mark.parametrize("k, n, p", _cases(40, 1e10, seed=1))
def test_boost_binomial_pmf_within_assumed_accuracy(k, n, p):
    with mp.workdps(50):
        exact = _pmf_exact(k, n, mp.mpf(p))
        if exact < mp.mpf("1e-290"):          # below the normal range: absolute floors apply
            pytest.skip("pmf below 1e-290")
        assert _rel(stats.binom.pmf(k, n, p), exact) <= float(eta(k, n, p, FLOAT_REL))


@pytest.mark.parametrize("k, n, p", _cases(24, 2e5, seed=2))
def test_boost_binomial_sf_within_assumed_accuracy(k, n, p):
    with mp.workdps(50):
        exact = _sf_exact(k, n, mp.mpf(p))
        if exact < mp.mpf("1e-290"):
            pytest.skip("sf below 1e-290")
        assert _rel(stats.binom.sf(k, n, p), exact) <= float(eta(k, n, p, FLOAT_REL))


@pytest.mark.parametrize("n, p, z", [(10**8, 0.2689, 6.0), (10**9, 0.5, 9.0),
                                     (10**10, 0.1192, 8.0), (10**10, 0.5, 3.0)])
def test_boost_binomial_sf_at_large_n_matches_its_masses(n, p, z):
    """At large ``n`` the mpmath sum is too long: Boost's ``sf`` is compared with the exactly
    rounded sum (``math.fsum``) of Boost's own masses over the tail (each within the ``eta``
    the previous test checks, the rest of the tail below a Chernoff bound)."""
    sd = math.sqrt(n * p * (1 - p))
    k = int(n * p + z * sd)
    j = np.arange(k + 1, k + 1 + int(30 * sd) + 1000)
    masses = stats.binom.pmf(j, n, p)
    assert masses[-1] < 1e-40 * masses.max()          # the rest of the tail is negligible
    ref = math.fsum(masses)
    bound = float(np.max(eta(j, n, p))) + float(eta(k, n, p)) + 1e-14
    assert abs(stats.binom.sf(k, n, p) - ref) <= bound * ref


def test_eta_exceeds_the_old_constant_where_boost_does():
    """The growth is real: at n = 10^10, far in a tail, Boost's error is above 2e-10."""
    k, n, p = 8_809_101_681, 10**10, 0.8808          # 34 standard deviations above the mean
    with mp.workdps(50):
        err = _rel(stats.binom.pmf(k, n, p), _pmf_exact(k, n, mp.mpf(p)))
    assert ETA_BINOM < err <= float(eta(k, n, p))


# ----------------------------------------------------------------------- 2. libm
def test_libm_exp_log_within_one_ulp():
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.uniform(-700, 700, 300), rng.uniform(-1, 1, 300),
                         rng.uniform(0, 12, 300)])
    worst = 0.0
    with mp.workdps(50):
        for x in xs:
            x = float(x)
            e = mp.exp(x)
            for got in (math.exp(x), float(np.exp(x))):
                worst = max(worst, _rel(got, e))
            if abs(x) < 1:
                em = mp.expm1(x)
                if em != 0:
                    worst = max(worst, _rel(math.expm1(x), abs(em)) if em > 0 else
                                float(abs(mp.mpf(math.expm1(x)) - em) / abs(em)))
            if x > 0:
                lg = mp.log(x)
                if abs(lg) > mp.mpf("1e-300"):
                    for got in (math.log(x), float(np.log(x))):
                        worst = max(worst, float(abs(mp.mpf(got) - lg) / abs(lg)))
                worst = max(worst, _rel(math.log1p(x), mp.log1p(x)))
    assert worst <= 2 * U, f"worst relative error {worst:.3g} > 1 ulp"


# ----------------------------------------------------------------------- 3. the FFT pad
@pytest.mark.parametrize("length, times, shape", [(64, 2, "flat"), (200, 10, "peaked"),
                                                  (300, 30, "peaked"), (120, 80, "spiky")])
def test_fft_pad_bounds_dp_accounting_self_composition(length, times, shape):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common
    from amp.rounds import fft_pad

    rng = np.random.default_rng(length + times)
    x = np.arange(length)
    if shape == "flat":
        p = rng.uniform(0, 1, length)
    elif shape == "peaked":                      # a PLD-like bump with tiny tails
        p = np.exp(-0.5 * ((x - length / 3) / (length / 12)) ** 2) + 1e-300
    else:                                        # a few large atoms among tiny ones
        p = rng.uniform(0, 1e-12, length)
        p[rng.choice(length, 5, replace=False)] = rng.uniform(0.1, 1, 5)
    p = p / p.sum()
    lower, out = common.self_convolve(p, times, tail_mass_truncation=0)
    out = np.asarray(out)
    # exact reference: repeated squaring in extended precision (numpy longdouble)
    ref, base, t = np.array([1.0], dtype=np.longdouble), p.astype(np.longdouble), times
    while t:
        if t & 1:
            ref = np.convolve(ref, base)
        t >>= 1
        if t:
            base = np.convolve(base, base)
    ref = ref[lower:lower + len(out)]
    err = float(np.sum(np.abs(out.astype(np.longdouble) - ref)))
    pad = fft_pad(length * times, times, float(np.linalg.norm(p)))
    assert err <= pad, f"FFT error {err:.3g} above the pad {pad:.3g}"


@pytest.mark.parametrize("length, times, shape", [(64, 2, "flat"), (200, 10, "peaked"),
                                                  (300, 30, "peaked"), (120, 80, "spiky"),
                                                  (40, 300, "atom"), (60, 200, "peaked")])
def test_self_compose_pad_bounds_dp_accounting_self_composition(length, times, shape):
    """The transform-aware pad of many rounds (amp.rounds.self_compose_pad) against the same
    longdouble reference; "atom" is a subsampled round (99% of the mass on one loss), where
    it is well below fft_pad's norm-wise bound."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common
    from amp.rounds import fft_pad, self_compose_pad

    rng = np.random.default_rng(length * times)
    x = np.arange(length)
    if shape == "flat":
        p = rng.uniform(0, 1, length)
    elif shape == "peaked":
        p = np.exp(-0.5 * ((x - length / 3) / (length / 12)) ** 2) + 1e-300
    elif shape == "spiky":
        p = rng.uniform(0, 1e-12, length)
        p[rng.choice(length, 5, replace=False)] = rng.uniform(0.1, 1, 5)
    else:
        p = rng.uniform(0, 1, length)
        p = 0.01 * p / p.sum()
        p[length // 2] += 0.99
    p = p / p.sum()
    lower, out = common.self_convolve(p, times, tail_mass_truncation=0)
    out = np.asarray(out)
    ref, base, t = np.array([1.0], dtype=np.longdouble), p.astype(np.longdouble), times
    while t:
        if t & 1:
            ref = np.convolve(ref, base)
        t >>= 1
        if t:
            base = np.convolve(base, base)
    ref = ref[lower:lower + len(out)]
    err = float(np.sum(np.abs(out.astype(np.longdouble) - ref)))
    pad = self_compose_pad(p, times, truncation=0)
    assert err <= pad, f"FFT error {err:.3g} above the pad {pad:.3g}"
    if shape == "atom":
        assert pad < 0.25 * fft_pad(length * times, times, float(np.linalg.norm(p)))


# ----------------------------------------------------------------------- 4. GPARV merging
def test_gparv_merge_keeps_the_conservative_atom_for_upper_laws():
    from amp.backends.exact import delta_enumerate
    from amp.mechanisms.gparv import GPARV, MERGE_RTOL

    e = math.exp(1.0)
    a = [e, e * (1 + 0.4 * MERGE_RTOL), 1.0, 1.0]
    b = [1.0, 1.0 * (1 - 0.4 * MERGE_RTOL), e, 1.0]
    p = [0.1, 0.1, 0.2, 0.3]
    merged = GPARV(a, b, p, 1.0)
    assert merged.a.size == 3                     # the two near-equal atoms became one
    i = int(np.argmax(merged.p))
    top = int(np.flatnonzero(np.isclose(merged.a, e))[0])
    assert merged.a[top] == max(a[:2]) and merged.b[top] == min(b[:2])
    # the merged law's delta is at least the unmerged one's (exact enumeration of both)
    separate = GPARV(a[:1] + [a[2], a[3]], b[:1] + [b[2], b[3]], [0.2, 0.2, 0.3], 1.0)
    for eps in (0.1, 0.4):
        assert delta_enumerate(merged, 8, eps) >= delta_enumerate(separate, 8, eps) * (1 - 1e-12)
    assert i >= 0


def test_gparv_merge_keeps_the_smaller_atom_for_lower_laws():
    """A Theorem 5 law (``lower=True``) merges near-equal atoms into the smaller one, so its
    value can only go down (a valid lower bound stays valid)."""
    from amp.backends.exact import delta_enumerate
    from amp.mechanisms.gparv import GPARV, MERGE_RTOL

    e = math.exp(1.0)
    a = [e, e * (1 + 0.4 * MERGE_RTOL), 1.0, 1.0]
    b = [1.0, 1.0 * (1 - 0.4 * MERGE_RTOL), e, 1.0]
    p = [0.1, 0.1, 0.2, 0.3]
    merged = GPARV(a, b, p, 1.0, lower=True)
    top = int(np.flatnonzero(np.isclose(merged.a, e))[0])
    assert merged.a.size == 3 and merged.a[top] == min(a[:2]) and merged.b[top] == max(b[:2])
    up = GPARV(a[1:], b[1:], [0.2, 0.2, 0.3], 1.0)       # the larger atom alone
    for eps in (0.1, 0.4):
        assert delta_enumerate(merged, 8, eps) <= delta_enumerate(up, 8, eps)


def test_every_theorem5_law_is_marked_lower():
    """Every mechanism's Theorem 5 laws carry ``lower=True`` (merged on the safe side); every
    pair law of the upper bound carries ``lower=False``."""
    import amp
    from amp.mechanisms.joint import JointMechanism
    mechs = [amp.KRR(2.0, k=5), amp.KRR(2.0, k=2), amp.RAPPOR(2.0), amp.OUE(2.0), amp.BLH(2.0),
             amp.HadamardResponse(2.0), amp.RAPPOR(2.0, d=3), amp.OLH(2.0, g=3),
             amp.MatrixMechanism(amp.KRR(1.0, k=3).matrix()),
             JointMechanism([amp.KRR(1.0, k=3), amp.KRR(1.0, k=3)]),
             amp.Duchi(1.0), amp.SquareWave(1.0), amp.PiecewiseMechanism(1.0),
             amp.Mixture([(0.5, amp.KRR(1.0, k=4)), (0.5, amp.KRR(2.0, k=4))])]
    for m in mechs:
        assert all(law.lower for law in m.lower_laws()), m
        assert not any(law.lower for law in m.gparv_laws()), m
