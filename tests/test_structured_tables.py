"""The certified building blocks of the structured path: binomial rows and tails
(amp.backends.structured.binomial), exact and lattice nuisance tables (tables, lattice), the
lattice plans' gap bounds (model, evaluator), and the Boost accuracy they rely on."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from amp.backends.structured.binomial import ETA_BINOM, binom_rows, excess_bound
from amp.backends.structured.evaluator import Evaluator, assemble, evaluate
from amp.backends.structured.lattice import cf_denominators, lattice_table
from amp.backends.structured.model import CountModel, Plan
from amp.backends.structured.nuisance import Nuisance
from amp.backends.structured.shape import structured_shape
from amp.backends.structured.tables import exact_table
from amp.mechanisms import BLH, KRR, OUE, RAPPOR

# absolute floor of every bracket: the float atoms are within 16 u (a + e^eps b) of the exact
# ratios, which moves delta by up to sum p * that (~1e-14 here) on each side
FLOOR = 1e-13


# ----------------------------------------------------------------------------- binomial rows
def test_binom_rows_and_excess_bound():
    Ns = np.arange(950, 1010)
    P, rel, sabs = binom_rows(Ns, 60, 160, 0.11)
    ref = stats.binom.pmf(np.arange(60, 161)[None, :], Ns[:, None], 0.11)
    big = ref > 1e-40 * ref.max(axis=1, keepdims=True)
    assert np.all(np.abs(P - ref)[big] <= (rel + 1e-13) * ref[big])
    assert np.all(np.where(big, 0.0, np.abs(P - ref)).sum(axis=1) <= sabs + 1e-300)
    assert rel < 1e-8
    for N, p, h in [(1000, 0.11, 140), (1000, 0.11, 110), (1000, 0.11, 80), (50, 0.5, 40),
                    (10_000, 0.002, 60)]:
        k = np.arange(h + 1, N + 1)
        exact = float(np.sum((k - h) * stats.binom.pmf(k, N, p)))
        bound = excess_bound(N, p, h)
        assert exact <= bound * (1 + 1e-9)
        if exact > 1e-200 and h > N * p:
            assert bound <= 50 * exact          # not absurdly loose in the tail


# ----------------------------------------------------------------------------- nuisance tables
def test_lattice_table_matches_exact_table():
    nu = Nuisance(math.exp(4.0), 0.12, 0.0022, 0.8778)
    m = 3000
    ex, _ = exact_table(nu, m, -50.0)
    lat = lattice_table(nu, m, 5, 2500.0)
    beta = 0.4
    c = beta * (m * nu.mu + np.linspace(-600, 600, 13))
    z = np.zeros_like(c)
    el, eu = ex.lookup(c, z, beta)
    ll, lu = lat.lookup(c, z, beta)
    # the integerised law is a mean-preserving spread: close, and never far below
    assert np.all(lu >= el * (1 - 1e-9) - 1e-12)
    assert np.allclose(ll, el, rtol=1e-3, atol=1e-5)


def test_exact_table_lookup_equals_direct_sum():
    """``E[(c - beta V_m)_+]`` from the exact table brackets the direct sum over the atoms."""
    nu = Nuisance(math.exp(1.5), 0.3, 0.1, 0.6)
    m, beta = 25, 0.8
    tab, _ = exact_table(nu, m, -60.0)
    # direct: V = O + E Z with (O, Z, off) multinomial(m; qO, qZ, qF)
    o, z = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    ok = o + z <= m
    o, z = o[ok], z[ok]
    logp = (math.lgamma(m + 1) - np.array([math.lgamma(a + 1) + math.lgamma(b + 1)
                                           + math.lgamma(m - a - b + 1) for a, b in zip(o, z)])
            + o * math.log(nu.qO) + z * math.log(nu.qZ) + (m - o - z) * math.log(nu.qF))
    v, p = o + nu.E * z, np.exp(logp)
    for c in beta * np.array([0.0, 3.0, m * nu.mu - 4.0, m * nu.mu, m * nu.mu + 7.5, 60.0]):
        direct = float(np.dot(p, np.maximum(c - beta * v, 0.0)))
        lo, up = tab.lookup(np.array([c]), np.zeros(1), beta)
        assert lo[0] <= direct * (1 + 1e-12) + 1e-300
        assert up[0] >= direct * (1 - 1e-12)
        assert up[0] - lo[0] <= 1e-8 * direct + 1e-15     # BINOM_REL ~ 6e-10 per end


def test_cf_denominators_improve():
    """Each continued-fraction denominator at least halves ``frac(K E)(1 - frac(K E)) / K^2``."""
    E = math.exp(4.0)
    Ks = cf_denominators(E, 1024)
    assert Ks[0] == 1 and Ks == sorted(Ks) and len(Ks) >= 3

    def v(K):
        fr = K * E - math.floor(K * E)
        return fr * (1 - fr) / K ** 2
    for a, b in zip(Ks, Ks[1:]):
        assert v(b) < 0.5 * v(a)


# ----------------------------------------------------------------------------- gap bounds
def test_lattice_plans_contain_exact_plan():
    """The lattice tables (integerisation, block shift) are certified: every plan's bracket
    contains the exact-table bracket."""
    cases = [(RAPPOR(4.0), 3000, 0.5), (OUE(1.0), 2000, 0.12), (BLH(2.0), 2000, 0.3),
             (KRR(4.0, k=10), 3000, 0.6), (RAPPOR(0.5, d=4), 800, 0.1)]
    for mech, n, eps in cases:
        sh = structured_shape(mech.gparv())
        mod = CountModel(sh, n, -60.0)
        ev = Evaluator(mod, eps)
        le, ue = assemble(evaluate(mod, ev, Plan("exact", b=8)), n, sh, eps)
        assert (ue - le) <= 1e-7 * ue + FLOOR
        for plan in (Plan("lattice", 1, 1), Plan("lattice", 16, 1),
                     Plan("lattice", 1 << 20, 1), Plan("lattice", 4, 3),
                     Plan("exact", 1, 1), Plan("exact", 64, 1), Plan("zsplit")):
            lo, up = assemble(evaluate(mod, ev, plan), n, sh, eps)
            assert lo <= ue and le <= up, (mech.describe(), plan, (le, ue), (lo, up))
            if plan.mode == "zsplit":                  # exact too: as narrow
                assert up - lo <= 1e-7 * up + FLOOR


# ----------------------------------------------------------------------------- what we rely on
def _ref_pmf(k, n, p):
    """Binomial pmf to ~30 digits (Decimal, Stirling series for the log-factorials)."""
    getcontext().prec = 40
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")

    def lgam1(z):
        z = Decimal(z)
        return (z * z.ln() - z + (2 * pi * z).ln() / 2 + 1 / (12 * z) - 1 / (360 * z ** 3)
                + 1 / (1260 * z ** 5) - 1 / (1680 * z ** 7))

    f = Fraction(p)
    pD = Decimal(f.numerator) / Decimal(f.denominator)
    return (lgam1(n) - lgam1(k) - lgam1(n - k) + k * pD.ln() + (n - k) * (1 - pD).ln()).exp()


def _ref_sf(k, n, p):
    getcontext().prec = 40
    f = Fraction(p)
    r = (Decimal(f.numerator) / Decimal(f.denominator)) / (1 - Decimal(f.numerator)
                                                         / Decimal(f.denominator))
    base = _ref_pmf(k + 1, n, p)
    cur, tot, i = Decimal(1), Decimal(0), k + 1
    while cur > tot * Decimal("1e-25") or tot == 0:
        tot += cur
        cur = cur * (n - i) / (i + 1) * r
        i += 1
    return base * tot


@pytest.mark.parametrize("n,p,z", [(10**6, 0.0284, 4.0), (10**7, 0.5, 6.0),
                                   (10**5, 0.3, 2.0)])
def test_boost_binomial_accuracy_assumption(n, p, z):
    """``ETA_BINOM``: scipy.stats.binom pmf/sf (Boost) relative accuracy at large n."""
    k = int(n * p + z * math.sqrt(n * p * (1 - p)))
    assert abs(stats.binom.pmf(k, n, p) / float(_ref_pmf(k, n, p)) - 1) < ETA_BINOM / 10
    assert abs(stats.binom.sf(k, n, p) / float(_ref_sf(k, n, p)) - 1) < ETA_BINOM / 10


def test_lattice_table_in_blocks_is_the_same_table(monkeypatch):
    """Building the characteristic function in blocks of frequencies (memory at n ~ 1e11)
    gives the same table: the same values, the error bound up to its summation order."""
    import amp.backends.structured.lattice as lat_mod
    nu = Nuisance(math.e, 0.6, 0.3, 0.1)
    whole = lattice_table(nu, 200_000, 5, 9000.0)
    monkeypatch.setattr(lat_mod, "LATTICE_BLOCK", 1000)
    blocks = lat_mod.lattice_table(nu, 200_000, 5, 9000.0)
    assert whole.size == blocks.size > 4 * 1000
    assert np.array_equal(whole.F, blocks.F) and np.array_equal(whole.G, blocks.G)
    assert blocks.abs_p == pytest.approx(whole.abs_p, rel=1e-12)
    assert (blocks.alias, blocks.out, blocks.pmax) == (whole.alias, whole.out, whole.pmax)


def test_evaluator_in_slices_of_T(monkeypatch):
    """The Evaluator's per-T arrays computed in slices of T (memory at n ~ 1e11): the same
    regions and band; the linear region's values within their certified bounds of each other
    (a slice starts a new sf run: another Boost anchor)."""
    import amp.backends.structured.evaluator as ev_mod
    mod = CountModel(structured_shape(RAPPOR(1.0).gparv()), 10**7, -41.4)
    eps = 0.004
    whole = Evaluator(mod, eps, 1e-13, per_T=True)
    monkeypatch.setattr(ev_mod, "EVAL_CHUNK", 997)
    sliced = ev_mod.Evaluator(mod, eps, 1e-13, per_T=True)
    lean = ev_mod.Evaluator(mod, eps, 1e-13)            # no per-T arrays: the same sums
    assert lean.sums() == sliced.sums() and not hasattr(lean, "lin_T")
    # the per-slice sums are the dot products of the per-T arrays with P(T), to rounding
    for got, arr in zip(whole.sums(), (whole.lin_T, whole.lin_err_T, whole.lin_tail_T,
                                       whole.zero_tail_T)):
        ref = math.fsum(mod.PT * arr)
        assert abs(got - ref) <= 1e-12 * math.fsum(np.abs(mod.PT * arr)) + 1e-300
    assert mod.Ts.size > 5 * 997
    for name in ("x_hi", "core", "has_lin", "nb"):
        assert np.array_equal(getattr(whole, name), getattr(sliced, name)), name
    assert whole.skip_up == sliced.skip_up and whole.total_band == sliced.total_band
    assert np.all(np.abs(whole.lin_T - sliced.lin_T) <= whole.lin_err_T + sliced.lin_err_T)
    assert np.allclose(whole.lin_tail_T, sliced.lin_tail_T, rtol=1e-8, atol=0)
    assert np.array_equal(whole.zero_tail_T, sliced.zero_tail_T)


@pytest.mark.parametrize("E, q, m0, K", [(math.e, (0.6, 0.3, 0.1), 200_000, 5),
                                         (math.e, (0.5, 0.0, 0.5), 10**6, 1),
                                         (math.exp(4.0), (0.12, 0.0022, 0.8778), 50_000, 1),
                                         (1.5, (0.2, 0.3, 0.5), 3_000_000, 2)])
def test_cf_cut_frequencies_are_negligible(E, q, m0, K):
    """Every frequency at or beyond ``cf_cut``'s index has ``|phi|^m0 <= e^-760`` (40-digit
    mpmath evaluation at the worst frequency found by a float scan of all of them), and the
    cut is not wasteful where the per-user law has mass at distance 1 from 0 (``K = 1``: at
    half its index ``|phi|^m0`` is far from negligible; with ``K > 1`` only the split ``(E, E)``
    pair is at distance 1 and the cut is conservative)."""
    mpmath = pytest.importorskip("mpmath")
    from amp.backends.structured.lattice import cf_cut, lattice_cats
    nu = Nuisance(E, q[0], q[1], q[2])
    qq, vv, _ = lattice_cats(nu, K)
    N = 2 * 4_000_000
    J = cf_cut(np.asarray(qq), np.asarray(vv, dtype=float), m0, N)
    assert 1 < J < N // 2 + 1                            # the cut is active here
    j = np.arange(J, N // 2 + 1)
    w = 2 * np.pi * j / N
    one_minus = sum(2 * qa * qb * (1 - np.cos(w * (va - vb)))
                    for a, (qa, va) in enumerate(zip(qq, vv))
                    for qb, vb in zip(qq[a + 1:], vv[a + 1:]))
    jw = int(j[np.argmin(one_minus)])                   # the largest |phi| beyond the cut
    mpmath.mp.dps = 40
    for jj in (J, jw):
        om = 2 * mpmath.pi * jj / N
        phi = sum(mpmath.mpf(qa) * mpmath.expj(om * va) for qa, va in zip(qq, vv))
        assert m0 * mpmath.log(abs(phi)) <= -760
    if K == 1:
        om = 2 * mpmath.pi * (J // 2) / N
        phi = sum(mpmath.mpf(qa) * mpmath.expj(om * va) for qa, va in zip(qq, vv))
        assert m0 * mpmath.log(abs(phi)) > -400


def test_lattice_table_with_cf_cut_is_the_same_table(monkeypatch):
    """The frequencies cut by ``cf_cut`` underflow anyway: the table built without the cut
    has the same values and the same error bounds (to their summation order)."""
    import amp.backends.structured.lattice as lat_mod
    nu = Nuisance(math.e, 0.6, 0.3, 0.1)
    cut = lattice_table(nu, 2_000_000, 5, 40_000.0)
    N = cut.size
    assert lat_mod.cf_cut(*[np.asarray(a, dtype=float) for a in lat_mod.lattice_cats(nu, 5)[:2]],
                          2_000_000, N) < N // 20              # most frequencies are cut
    monkeypatch.setattr(lat_mod, "cf_cut", lambda q, vv, m0, N: N // 2 + 1)
    full = lat_mod.lattice_table(nu, 2_000_000, 5, 40_000.0)
    assert full.size == N
    assert np.array_equal(full.F, cut.F) and np.array_equal(full.G, cut.G)
    assert cut.abs_p >= full.abs_p and cut.abs_p == pytest.approx(full.abs_p, rel=1e-9)
    assert (cut.alias, cut.out, cut.pmax, cut.span) == (full.alias, full.out, full.pmax,
                                                        full.span)


def _cumsum_padded(x):
    """The former two-level cumulative sum (a zero-padded copy, reshaped): the oracle of the
    in-place version's additions."""
    from amp.backends.structured.tables import _CHUNK
    n = x.size
    xp = np.zeros(n + (-n) % _CHUNK)
    xp[:n] = x
    inner = np.cumsum(xp.reshape(-1, _CHUNK), axis=1)
    off = np.zeros(inner.shape[0])
    off[1:] = np.cumsum(inner[:-1, -1])
    inner += off[:, None]
    return inner.ravel()[:n]


@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 3 * 1024, 5000, 70_001])
def test_cumsum_in_place_is_the_padded_sum(n):
    """``_cumsum`` without a padded copy (into ``out``, or into ``x`` itself) makes the same
    additions in the same order as the padded version: bit-identical results."""
    from amp.backends.structured.tables import _cumsum
    x = np.random.default_rng(n).standard_normal(n) * np.exp(np.linspace(-30, 30, n))
    ref = _cumsum_padded(x)
    assert np.array_equal(_cumsum(x), ref)
    out = np.full(n, np.nan)
    assert _cumsum(x, out) is out and np.array_equal(out, ref)
    y = x.copy()
    _cumsum(y, y)
    assert np.array_equal(y, ref)


def test_cumulate_lattice_is_cumulate():
    """The lattice's cumulative sums built block by block in place are bit-identical to
    :func:`cumulate` over the array of the lattice's values (more than one block of 2^20)."""
    from amp.backends.structured.tables import cumulate, cumulate_lattice
    size, origin, K, vc = (1 << 20) + 4099, -123_457, 7, -17_000.3
    p = np.random.default_rng(3).random(size)
    F, G = cumulate_lattice(origin, K, p, vc)
    F0, G0 = cumulate(np.arange(origin, origin + size, dtype=np.int64) / K, p, vc)
    assert np.array_equal(F, F0) and np.array_equal(G, G0)


def test_count_model_window_is_elementwise():
    """``CountModel.window`` per slice of T: the Bernstein window of the whole window of T,
    element for element (computed once over all T as an oracle, with the formulas of its
    docstring)."""
    from amp.core.tails import bernstein_t
    mod = CountModel(structured_shape(RAPPOR(1.0).gparv()), 10**7, -41.4)
    nT = mod.Ts.size
    m = mod.m
    t = bernstein_t(m, mod.var, mod.bmax, -mod.log_tau)
    v_z, v_l = m * mod.mu - t, m * mod.mu + t
    kap = t / (2 * (m * mod.var + mod.bmax * t / 3) + 1e-300)
    pm_l = np.where(v_l >= m * mod.nu.vmax, 0.0, math.exp(mod.log_tau) / np.maximum(kap, 1e-300))
    z_tau = np.where(v_z <= 0, 0.0, math.exp(mod.log_tau))
    ref = (np.maximum(v_z, 0.0), v_l, pm_l, z_tau)
    for a, b in [(0, nT), (0, 1), (nT // 3, nT // 2 + 7), (nT - 5, nT)]:
        for got, want in zip(mod.window(slice(a, b)), ref):
            assert np.array_equal(got, want[a:b])
