"""Certified evaluation of ``delta = E[(G_1 + ... + G_n)_+] / n`` (Theorem 4, Algorithm 4).

The paper's Algorithm 4 rounds every atom of ``G`` up to a grid of step ``l``, convolves the
whole support by FFT and integrates the positive part. Its error grows like ``n * l`` and its
grid like ``n * support / l``. This module keeps the idea (a lattice, an FFT) and makes every
error term explicit and one-sided, so that the result is a *certified bracket*
``[lower, upper]`` of the exact value, whose upper end is the answer a user should use.

Method ``"fft"`` (any finite law, any ``n``):

1. **Mean-preserving rounding.** Each atom ``g`` is split between the two neighbouring grid
   points with weights that keep its mean (nudged up by a tiny slack that absorbs the rounding
   of ``g / l``). Then ``S' = S + D`` with ``E[D | G] >= 0``; since ``x -> x_+`` is convex,
   ``E[S'_+] >= E[S_+]`` (Jensen): the lattice value is an upper bound, with error of second
   order in ``l`` instead of the first-order ``n * l`` of rounding up.
2. **Lower end.** ``E[S'_+] - E[S_+] <= E[psi((|S'| - r)_+)] + 2 psi(0) exp(-r^2 / 2v) + bias``,
   where ``v = n l^2 / 4`` is the Hoeffding variance proxy of ``D`` given the ``G``'s and
   ``psi(x) = sqrt(2 pi v) erfc(x / sqrt(2 v))`` bounds ``E[(|D| - x)_+]``; every term is
   computed from the same lattice law, so the lower end is certified too.
3. **Exponential tilting.** The lattice law is tilted by ``e^(theta k)`` at its saddle point
   (the tilted sum has mean 0), so the FFT window only needs to cover a few standard deviations
   of the tilted sum, and the tiny upper tail that matters is computed with *relative* rather
   than absolute floating-point error. ``P(k) = M^n e^(-theta k) Q(k)``.
4. **Truncation and wrap-around.** The tilted mass outside the window is bounded by Chernoff
   bounds; wrap-around only *adds* mass to the circular result (used as is for the upper end,
   subtracted with its bound for the lower end); the neglected tail of the positive part is
   bounded in closed form.
5. **Floating point.** The FFT, the ``n``-th power and the inverse FFT get an explicit
   element-wise error bound (``~ c u log2(N)`` per transform, times ``n |x|^(n-1)`` through the
   power) added on the safe side; ``M^n`` and the probabilities carry a relative safety factor
   ``1 +- 64 n u``.

The grid step is chosen from the requested relative width ``rel_tol`` of the bracket and halved
until the bracket is narrow enough; when that needs more than ``max_points`` lattice points a
:class:`~amp.core.errors.NumericalError` is raised instead of returning a wide or noisy value.

Method ``"exact"`` enumerates multinomial counts (small ``n``, or as a fallback when the FFT
cannot certify); method ``"zero"`` is used when ``G <= 0`` surely (``eps >= log max a/b``),
where ``delta = 0`` exactly; method ``"first-moment"`` returns ``[0, E[G_+]]`` (valid because
``(sum G_i)_+ <= sum (G_i)_+``) when that is already below ``abs_tol``; method ``"chernoff"``
returns ``[0, M(theta)^n / (e theta n)]`` (valid because ``x_+ <= e^(theta x - 1) / theta``) when
that is below ``abs_tol``. Laws with the Table 1 shape go to :mod:`amp.delta.structured` (method
``"structured"``: exact count sums with proven tail bounds), which is faster and tighter at every
``n``; ``auto`` falls back to the paths here if it cannot certify.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable

import numpy as np
from scipy import fft as sfft
from scipy import optimize, special

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.delta.exact import delta_enumerate, n_compositions
from amp.mechanisms.gparv import GPARV

__all__ = ["DeltaResult", "delta_bracket", "chernoff_upper", "DEFAULT_REL_TOL",
           "DEFAULT_MAX_POINTS", "METHODS"]

U = np.finfo(float).eps / 2          # unit round-off
TINY = np.nextafter(0.0, 1.0)        # smallest positive double (used as a safe non-zero upper)
DEFAULT_REL_TOL = 2e-3               # relative width of the certified delta bracket
DEFAULT_MAX_POINTS = 1 << 26         # largest FFT length (about 1.6 GB of work arrays)
DEFAULT_ABS_TOL = 1e-16              # brackets with upper - lower below this are accepted
EXACT_MAX_COMPOSITIONS = 20_000      # enumeration is used below this many count vectors
EXACT_FALLBACK_COMPOSITIONS = 2_000_000  # ... and as a fallback when the FFT cannot certify
METHODS = ("auto", "structured", "fft", "exact")


@dataclass(frozen=True)
class DeltaResult:
    """Certified bracket of ``delta(eps) = E[(sum_i G_i)_+] / n`` for one law and one ``eps``.

    ``lower <= exact <= upper`` holds with certainty (up to the documented floating-point
    safety factors); ``value`` is ``upper``, the number to use.
    """

    eps: float
    n: int
    lower: float
    upper: float
    method: str
    grid_step: float | None = None
    points: int | None = None
    label: str = ""
    details: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def value(self) -> float:
        """The certified upper end (what a user should use as delta)."""
        return self.upper

    @property
    def estimate(self) -> float:
        """An uncertified point estimate inside the bracket (geometric mean when possible)."""
        if self.lower > 0:
            return math.sqrt(self.lower * self.upper)
        return self.upper

    @property
    def rel_width(self) -> float:
        """``(upper - lower) / upper`` (0 when both are 0)."""
        return 0.0 if self.upper == 0 else (self.upper - self.lower) / self.upper


# ----------------------------------------------------------------------------- public API
def delta_bracket(law: GPARV, n: int, eps: float | Iterable[float], *,
                  rel_tol: float = DEFAULT_REL_TOL, method: str = "auto",
                  max_points: int = DEFAULT_MAX_POINTS,
                  abs_tol: float = DEFAULT_ABS_TOL) -> DeltaResult | list[DeltaResult]:
    """Certified ``[lower, upper]`` of ``E[(G_1 + ... + G_n)_+] / n`` for the law at ``eps``.

    Parameters
    ----------
    law : GPARV
        Law of the GPARV (Theorem 4) or of Theorem 5's variable.
    n : int
        Number of users, ``>= 1``.
    eps : float or iterable of floats
        Central privacy level(s) ``>= 0``; an iterable gives a list of results.
    rel_tol : float
        Target relative width ``(upper - lower) / upper`` of the bracket (``fft`` method).
    method : {"auto", "structured", "fft", "exact"}
        ``auto`` returns the zero / first-moment / Chernoff bound when it already settles the
        question (``upper <= abs_tol``), then uses the structured exact path
        (:mod:`amp.delta.structured`) for laws with the Table 1 shape, exact enumeration when it is
        small, otherwise ``fft``; the result's ``method`` says which ran. Forcing
        ``structured`` on a law without that shape raises :class:`ParameterError`.
    max_points : int
        Largest FFT length allowed before :class:`NumericalError` is raised.
    abs_tol : float
        A bracket with ``upper - lower <= abs_tol`` is accepted even if its relative width
        exceeds ``rel_tol`` (deltas far below any practical target, e.g. ``eps`` close to
        the largest value with ``delta > 0``); the upper end stays certified.
    """
    if not isinstance(law, GPARV):
        raise ParameterError(f"law must be a GPARV (e.g. mechanism.gparv()), got "
                             f"{type(law).__name__}")
    n = V.int_at_least("n", n, 1)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if np.ndim(eps) == 0:
        return _delta_one(law, n, V.positive_float("eps", eps, allow_zero=True), rel_tol,
                          method, max_points, abs_tol)
    return [_delta_one(law, n, V.positive_float("eps", e, allow_zero=True), rel_tol, method,
                       max_points, abs_tol) for e in np.asarray(list(eps), dtype=float)]


def _delta_one(law: GPARV, n: int, eps: float, rel_tol: float, method: str,
               max_points: int, abs_tol: float = DEFAULT_ABS_TOL) -> DeltaResult:
    g, p = law.atoms(eps)
    # per-atom magnitude |a| + e^eps |b|: g = a - e^eps b carries an absolute error
    # <= ~4 u * magnitude (inputs a, b within 2 u relative of the exact ratios)
    mag = law.a + math.exp(eps) * law.b
    if law.off_mass > 0:
        mag = np.append(mag, 0.0)
    noise = 16 * U * mag
    if np.all(g + noise <= 0):
        return DeltaResult(eps, n, 0.0, 0.0, "zero", label=law.label)
    # the exact atoms are within `noise` of g: paths that evaluate the float atoms exactly
    # are widened by `widen` (a relative 32u on the atoms, absolute noise where they cancel)
    floor = atom_floor(g, p, noise)
    if np.all(g <= noise):
        # every positive atom is floating-point noise around 0 (eps = log max a/b): the exact
        # atoms are <= noise, so E[S_+]/n <= E[G_+] <= sum p noise over atoms near 0
        return DeltaResult(eps, n, 0.0, float(np.dot(p, noise * (g > -noise))), "zero",
                           label=law.label)
    # (sum G_i)_+ <= sum (G_i)_+, so delta <= E[G_+]: a certified bound that needs no FFT
    first_moment = math.fsum(p * np.maximum(g + noise, 0.0)) * (1 + 1e-12)
    if method == "auto" and first_moment <= abs_tol:
        return DeltaResult(eps, n, 0.0, first_moment, "first-moment", label=law.label)
    if method == "auto" and n > 1 and abs_tol > 0:
        ch = chernoff_upper(g, p, n, noise)
        if ch <= abs_tol:
            return DeltaResult(eps, n, 0.0, ch, "chernoff", label=law.label)
    if method in ("auto", "structured") and n > 1:
        from amp.delta.structured import core as _st      # lazy: amp.delta.structured imports this module
        if _st.supports(law):
            try:
                return _st.delta_bracket_structured(law, n, eps, rel_tol=rel_tol,
                                                    abs_tol=abs_tol)
            except (NumericalError, ArithmeticError, ValueError, MemoryError):
                if method == "structured":
                    raise
                # auto: fall through to the generic certified paths below
        elif method == "structured":
            raise ParameterError(
                "method='structured' needs a law whose blanket atoms are (1,1), (E,1), (1,E), "
                "(E,E) for one E (Table 1 mechanisms and their finite forms); this law is not")
    k = int(np.count_nonzero(p > 0))
    if method == "exact" or (method == "auto" and (
            n == 1 or n_compositions(n, k) <= EXACT_MAX_COMPOSITIONS)):
        if n == 1:
            v = math.fsum(p * np.maximum(g, 0.0))
        else:
            v = delta_enumerate(law, n, eps)
        # enumeration sums positive terms with log-space weights: relative error << 1e-10
        lo, up = widen(v * (1 - 1e-10), v * (1 + 1e-10), floor)
        return DeltaResult(eps, n, lo, max(up, TINY), "exact", label=law.label)
    if method == "auto":
        small = _few_blanket_users(law, n, eps)
        if small is not None:
            lo, up = widen(small.lower, small.upper, floor)
            return replace(small, lower=lo, upper=up)
    try:
        return _fft_certified(g, p, n, eps, rel_tol, max_points, law.label, abs_tol, mag)
    except NumericalError:
        if method == "auto" and n_compositions(n, k) <= EXACT_FALLBACK_COMPOSITIONS:
            v = delta_enumerate(law, n, eps)
            lo, up = widen(v * (1 - 1e-10), v * (1 + 1e-10), floor)
            return DeltaResult(eps, n, lo, max(up, TINY), "exact", label=law.label)
        raise


# ----------------------------------------------------------------------------- float atoms
ATOM_RHO = 32 * U          # relative noise of an atom with |g| >= (|a| + e^eps |b|) / 2


def atom_floor(g: np.ndarray, p: np.ndarray, noise: np.ndarray) -> tuple[float, float, float]:
    """How far the exact ``delta`` can be from the ``delta`` of the float atoms ``g``.

    Every exact atom lies within ``noise`` (``16 u (|a| + e^eps |b|)``) of ``g``.  Atoms with
    ``|g| >= 2 noise / 32u`` (no cancellation) are within a relative ``rho = 32 u``; scaling
    the positive part ``P`` of ``S`` up by ``1 + rho`` and the negative part ``N`` down by
    ``1 - rho`` gives ``(S')_+ <= (1 + rho) ((P - N)_+ + 2.01 rho P)`` with ``E[P] = n E[G_+]``
    (only positive atoms count: huge negative atoms such as ``1 - e^eps E`` cost nothing).  The
    other (cancellation-prone) atoms move ``S`` by at most their ``noise`` each.  Returns
    ``(rho, E[G_+] (noise included), sum p noise over the cancellation-prone atoms)``; see
    :func:`widen`."""
    g = np.asarray(g, dtype=float)
    p = np.asarray(p, dtype=float)
    noise = np.asarray(noise, dtype=float)
    rel = np.abs(g) * ATOM_RHO >= noise
    gpos = float(np.dot(p, np.maximum(g + noise, 0.0)))
    absn = float(np.dot(p[~rel], noise[~rel]))
    return ATOM_RHO, gpos, absn


def widen(lower: float, upper: float, floor: tuple[float, float, float]
          ) -> tuple[float, float]:
    """``(lower, upper)`` for the float atoms -> certified for the exact atoms
    (:func:`atom_floor`); an upper end of 0 stays 0 only when no atom can be positive."""
    rho, gpos, absn = floor
    up = (1 + rho) * (upper + 2.01 * rho * gpos) * (1 + 4 * U) + absn
    lo = (1 - rho) * (lower - 2.01 * rho * gpos) * (1 - 4 * U) - absn
    return max(lo, 0.0), up


# ----------------------------------------------------------------------------- Chernoff
def chernoff_upper(g: np.ndarray, p: np.ndarray, n: int, noise: np.ndarray | None = None
                   ) -> float:
    """Certified upper bound on ``E[(G_1 + ... + G_n)_+] / n`` from the moment generating function.

    For every ``theta > 0``, ``x_+ <= exp(theta x - 1) / theta``, so
    ``E[S_+] <= M(theta)^n / (e theta)`` with ``M(theta) = E[exp(theta G)]``. ``theta`` is
    chosen numerically (any value is valid). Atoms are raised by ``noise`` (their floating-point
    error) and the result carries a relative safety factor ``exp(n e_M + 64 u)``, where
    ``e_M = 4 u (max |log p| + theta max|g| + 16)`` bounds the rounding of ``log M`` (the
    ``n``-th power multiplies it by ``n``), plus ``exp``'s own rounding. Cheap (no lattice): used to settle deltas
    far below any practical target without a full evaluation.
    """
    g = np.asarray(g, dtype=float)
    if noise is not None:
        g = g + np.asarray(noise, dtype=float)
    p = np.asarray(p, dtype=float)
    keep = p > 0
    g, p = g[keep], p[keep]
    if g.size == 0 or g.max() <= 0:
        return 0.0
    lp = np.log(p)
    scale = float(np.abs(g).max())

    def logb(t: float) -> float:
        th = math.exp(t)
        z = lp + th * g
        zm = float(z.max())
        return n * (zm + math.log(float(np.exp(z - zm).sum()))) - 1.0 - math.log(th)

    lo_t, hi_t = math.log(1e-12 / scale), math.log(1e4 / scale)
    r = optimize.minimize_scalar(logb, bounds=(lo_t, hi_t), method="bounded",
                                 options={"xatol": 1e-6})
    best, t = min((float(r.fun), float(r.x)), (logb(lo_t), lo_t), (logb(hi_t), hi_t))
    # rounding of log M at this theta: log p (|log p| u each), theta g (|theta g| u each), the
    # sum and the log (a few u): each term's relative error, times n through the power
    err_logM = 4 * U * (float(np.abs(lp).max()) + math.exp(t) * scale + 16)
    best += n * err_logM + 64 * U + 1e-12 - math.log(n)
    # never 0: the bound is positive (exp underflow at huge n must not read as "delta = 0")
    return max(math.exp(best), TINY) if best < 709 else math.inf


# ----------------------------------------------------------------------------- few users
def _few_blanket_users(law: GPARV, n: int, eps: float) -> DeltaResult | None:
    """Exact evaluation by conditioning on ``M ~ Bin(n, gamma)`` users on the blanket.

    ``E[S_+] = sum_m P(M = m) E[(L_1 + ... + L_m)_+]`` with ``L`` the blanket atoms (Lemma 2
    of the paper, Balle et al.'s form). Used when ``n * gamma`` is small (extreme eps0), where
    the law of ``G`` is too skewed for a lattice. The neglected ``M > m_max`` part is bounded
    by ``P(M > m_max) * max(L_+) * E[M | M > m_max]`` via ``E[M 1{M > m}] = n gamma P(M' >= m)``
    with ``M' ~ Bin(n - 1, gamma)``; it is added to the upper end. Returns None when the
    enumeration would be too large.
    """
    from scipy import stats

    gam = law.gamma
    if law.off_mass <= 0 or n * gam > 40:
        return None
    Lv = law.a - math.exp(eps) * law.b
    pv = law.p / law.p.sum()
    k = Lv.size
    m_max = min(n, _binom_chernoff_quantile(n, gam, -69.0))      # P(M >= m_max) <= e^-69
    total = sum(n_compositions(m, k) for m in range(1, m_max + 1))
    if total > EXACT_FALLBACK_COMPOSITIONS:
        return None
    acc = []
    sub = GPARV(law.a, law.b, pv, law.eps0)
    for m in range(1, m_max + 1):
        pm = float(stats.binom.pmf(m, n, gam))
        if pm == 0.0:
            continue
        acc.append(pm * m * delta_enumerate(sub, m, eps) if m > 1
                   else pm * math.fsum(pv * np.maximum(Lv, 0.0)))
    val = math.fsum(acc) / n
    # tail: E[S_+ 1{M > m_max}] <= max(L_+) E[M 1{M > m_max}] = max(L_+) n gam P(M' >= m_max)
    tail = max(float(Lv.max()), 0.0) * gam * math.exp(_binom_log_upper_tail(n - 1, gam, m_max))
    upper = max(val * (1 + 1e-9) + tail * 1.01, TINY) if Lv.max() > 0 else 0.0
    return DeltaResult(eps, n, max(0.0, val * (1 - 1e-9)), upper, "exact-blanket-count",
                       label=law.label)


def _binom_log_upper_tail(n: int, p: float, m: int) -> float:
    """Chernoff bound on ``log P(Bin(n, p) >= m)`` (0 when ``m <= n p``; ``-inf`` if m > n)."""
    if m > n:
        return -math.inf
    if m <= n * p:
        return 0.0
    x = m / n
    kl = x * math.log(x / p) + ((1 - x) * math.log((1 - x) / (1 - p)) if x < 1 else
                                -math.log(1 - p) * 0 - 0.0)
    if x >= 1:
        kl = -math.log(p)
    return -n * kl


def _binom_chernoff_quantile(n: int, p: float, log_eta: float) -> int:
    """Smallest ``m`` with Chernoff bound ``P(Bin(n, p) >= m) <= e^log_eta``."""
    m = max(1, int(math.ceil(n * p)) + 1)
    while m <= n and _binom_log_upper_tail(n, p, m) > log_eta:
        m += max(1, m // 16)
    return min(m, n + 1)


# ----------------------------------------------------------------------------- FFT method
def _fft_certified(g: np.ndarray, p: np.ndarray, n: int, eps: float, rel_tol: float,
                   max_points: int, label: str, abs_tol: float,
                   mag: np.ndarray) -> DeltaResult:
    """Adaptive driver: shrink the grid step until the bracket is within ``rel_tol``.

    ``mag`` holds ``|a| + e^eps |b|`` per atom (for the rounding slack)."""
    keep = p > 0
    g, p, mag = g[keep], p[keep], mag[keep]
    # continuous saddle point and tilted spread, to pick the first grid step
    theta_c = _saddle(g, p)
    w = np.exp(theta_c * (g - g.max()) + np.log(p))
    w /= w.sum()
    mu = float(np.dot(w, g))
    sd = math.sqrt(max(float(np.dot(w, (g - mu) ** 2)), 1e-300))
    scale2 = n * theta_c ** 2 + 1.0 / sd ** 2
    step = min(math.sqrt(rel_tol / (8.0 * scale2)), sd / 4)
    last = None
    for _ in range(12):
        res = _fft_once(g, p, n, eps, step, max_points, label, mag)
        if res is None:
            break
        last = res
        if res.upper == 0 or res.rel_width <= rel_tol or res.upper - res.lower <= abs_tol:
            return res
        # width ~ step^2: shrink accordingly (with margin)
        ratio = res.rel_width / rel_tol
        step /= min(8.0, max(1.3, math.sqrt(ratio) * 1.2))
    width = "n/a" if last is None else f"{last.rel_width:.3g}"
    raise NumericalError(
        f"cannot certify delta at eps={eps:g}, n={n} to relative width {rel_tol:g} within "
        f"{max_points} FFT points (best width reached: {width}); ask for a larger rel_tol "
        "or allow more points (max_points)")


def _saddle(g: np.ndarray, p: np.ndarray) -> float:
    """theta >= 0 with sum p g e^(theta g) = 0 (0 if the mean is >= 0)."""
    if float(np.dot(p, g)) >= 0:
        return 0.0
    gmax = g.max()
    lp = np.log(p)

    def f(th: float) -> float:
        return float(np.dot(np.exp(lp + th * (g - gmax)), g))

    if f(0.0) >= 0:           # mean 0 up to rounding (exp(log p) != p): no tilt needed
        return 0.0
    hi = 1.0 / max(gmax, 1e-300)
    while f(hi) < 0:
        hi *= 2
        if hi > 1e300:
            raise NumericalError("could not locate the saddle point of the GPARV law")
    return optimize.brentq(f, 0.0, hi, xtol=1e-300, rtol=1e-13, maxiter=500)


def _log_mgf(m: np.ndarray, logq: np.ndarray, lam: float) -> float:
    """log sum_j q_j e^(lam m_j) (stable)."""
    z = logq + lam * m
    zmax = z.max()
    return float(zmax + math.log(np.exp(z - zmax).sum()))


def _chernoff_right(m: np.ndarray, logq: np.ndarray, n: int, K: float) -> tuple[float, float]:
    """Chernoff bound on log P(T >= K) for T a sum of n i.i.d. lattice variables; returns
    (log bound, the lambda used). Any lambda > 0 gives a valid bound."""
    def obj(lam: float) -> float:
        return n * _log_mgf(m, logq, lam) - lam * K

    mmax = float(np.max(np.abs(m))) + 1.0
    hi = 50.0 / mmax
    r = optimize.minimize_scalar(obj, bounds=(min(1e-12, 0.5 * hi), hi), method="bounded",
                                 options={"xatol": 1e-10 / mmax})
    lam = float(r.x)
    return min(0.0, obj(lam)), lam


def _fft_once(g: np.ndarray, p: np.ndarray, n: int, eps: float, step: float,
              max_points: int, label: str, mag: np.ndarray) -> DeltaResult | None:
    """One certified lattice evaluation at grid step ``step``; None if it needs too many points."""
    l = step
    # --- 1. mean-preserving rounding (slack absorbs the rounding error of g / l)
    x = g / l
    lo = np.floor(x)
    frac = x - lo
    # g = a - e^eps b carries an absolute error <= ~4 u (|a| + e^eps |b|) = 4 u mag
    slack = 16 * U * mag / l + 4 * U * (np.abs(x) + 1.0)
    on_grid = (frac == 0) & (g == lo * l)
    frac_up = np.where(on_grid, 0.0, np.minimum(1.0, frac + slack))
    bias = float(np.max(np.where(on_grid, 0.0, np.minimum(1.0, frac + slack) - frac)))
    pos = np.concatenate([lo, lo + 1]).astype(np.int64)
    wts = np.concatenate([p * (1 - frac_up), p * frac_up])
    keep = wts > 0
    pos, wts = pos[keep], wts[keep]
    order = np.argsort(pos)
    pos, wts = pos[order], wts[order]
    uniq, inv = np.unique(pos, return_inverse=True)
    w = np.zeros(uniq.size)
    np.add.at(w, inv, wts)
    m = uniq.astype(float)
    if m.max() <= 0:                       # S' <= 0 surely, and S <= S' in convex order
        return DeltaResult(eps, n, 0.0, 0.0, "fft", l, 0, label)
    logw = np.log(w)
    # --- 2. tilt at the lattice saddle point
    theta = _saddle(m, w)
    logM = _log_mgf(m, logw, theta)
    logq = logw + theta * m - logM
    q = np.exp(logq)
    mu = float(np.dot(q, m))
    var = float(np.dot(q, (m - mu) ** 2))
    sd_n = math.sqrt(n * var) if var > 0 else 1.0
    center = n * mu
    # --- 3. window from Chernoff bounds on the tilted sum
    want = 1e-13
    W = 9.0
    for _ in range(40):
        K_hi = math.ceil(center + W * sd_n + 2)
        K_lo = math.floor(center - W * sd_n - 2)
        lr, lam_r = _chernoff_right(m, logq, n, K_hi + 1)
        ll, lam_l = _chernoff_right(-m, logq, n, -(K_lo - 1))
        if lr < math.log(want) and ll < math.log(want):
            break
        W *= 1.25
    K_lo = min(K_lo, -1)
    K_hi = max(K_hi, 1)
    N = sfft.next_fast_len(K_hi - K_lo + 1, real=True)
    if N > max_points:
        return None
    K_hi = K_lo + N - 1
    lr, lam_r = _chernoff_right(m, logq, n, K_hi + 1)
    ll, lam_l = _chernoff_right(-m, logq, n, -(K_lo - 1))
    tail_r = math.exp(lr)       # Q(T > K_hi)
    tail_l = math.exp(ll)       # Q(T < K_lo)
    tau_out = min(1.0, tail_r + tail_l)
    # --- 4. circular n-fold convolution of the tilted lattice law
    arr = np.zeros(N)
    np.add.at(arr, (uniq % N).astype(np.int64), q)
    xh = sfft.rfft(arr)
    del arr
    log2N = math.log2(N)
    e_f = 10 * U * log2N * float(q.sum())          # forward FFT, element-wise
    with np.errstate(divide="ignore"):
        lnax = np.log(np.abs(xh))
    live = n * lnax > -745.0                       # coefficients whose n-th power is not 0
    lnl = lnax[live]
    mod_n = np.exp(n * lnl)                        # |x|^n
    yh = np.zeros_like(xh)
    yh[live] = mod_n * np.exp(1j * (n * np.angle(xh[live])))
    mult = np.full(xh.size, 2.0)
    mult[0] = 1.0
    if N % 2 == 0:
        mult[-1] = 1.0
    ml = mult[live]
    # error of the n-th power: n e_f (|x| + e_f)^(n-1) + pow rounding; dead coefficients
    # (|x|^n < e^-745) contribute at most their bound n e_f (|x| + e_f)^(n-1) <= n e_f e^-700
    with np.errstate(under="ignore"):
        err_live = (n * e_f * np.exp((n - 1) * np.log(np.exp(lnl) + e_f))
                    + mod_n * 4 * n * U * (np.abs(lnl) + 4))
    dead = float(mult.sum() - ml.sum())
    err_sum = float(np.dot(ml, err_live)) + dead * n * e_f * math.exp(-700.0)
    eps_fp = 1.01 * (err_sum + 10 * U * log2N * float(np.dot(ml, mod_n))) / N
    del xh, lnax, live, mult
    C = sfft.irfft(yh, N)
    del yh
    Ck = np.roll(C, -(K_lo % N))            # Ck[i] = C[(K_lo + i) mod N]
    ks = np.arange(K_lo, K_hi + 1)
    # --- 5. upper end of E[S'_+] (in lattice units, times M^n)
    posk = ks > 0
    kp = ks[posk].astype(float)
    wpos = kp * np.exp(-theta * kp)                      # weight k e^(-theta k)
    up_sum = float(np.dot(wpos, np.maximum(Ck[posk], 0.0) + eps_fp))
    # neglected right tail: sum_{k>K_hi} k e^{-theta k} Q(k) <= e^{n Lambda(lam)} sum k e^{-(theta+lam)k}
    a = theta + lam_r
    logL = lr + lam_r * (K_hi + 1)                       # n*Lambda(lam_r)
    K1 = K_hi + 1
    ea = math.exp(-a)
    tail_sum = math.exp(logL - a * K1) * (K1 / (1 - ea) + ea / (1 - ea) ** 2)
    up_sum += tail_sum
    # lower end of E[S'_+]: subtract the wrap-around (<= tau_out) at the largest weight
    maxw = float(wpos.max()) if wpos.size else 0.0
    lo_sum = float(np.dot(wpos, np.maximum(Ck[posk] - eps_fp, 0.0))) - maxw * tau_out
    # --- 6. convexity gap E[S'_+] - E[S_+] (value units)
    v = n * l * l / 4.0
    sv = math.sqrt(v)
    psi0 = math.sqrt(2 * math.pi * v)
    best_gap = math.inf
    nlogM = n * logM
    scale = math.exp(nlogM) if nlogM > -745 else 0.0
    z_values = (4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 15.0)
    # P(S' > -r) / M^n for the largest r (an upper bound for every smaller r)
    ib = max(0, int(math.floor(-max(z_values) * sv / l)) - K_lo)
    with np.errstate(under="ignore", over="ignore"):
        pb = float(np.dot(np.exp(-theta * ks[ib:]), np.maximum(Ck[ib:], 0.0) + eps_fp))
    pb += tail_r
    for z in z_values:
        r = z * sv
        # beyond reach: psi < psi0 * 1e-349 and psi * e^(-theta k) decreases in |k|
        reach = r + max(40.0 * sv, theta / l * v + sv)
        # outside [-reach, reach] the gap weight must decrease away from 0 (checked here)
        if not (abs(K_lo) * l > reach and K_hi * l > reach):
            continue
        i0 = max(0, int(math.floor(-reach / l)) - K_lo)
        i1 = min(N, int(math.ceil(reach / l)) - K_lo + 1)
        kf = ks[i0:i1].astype(float)
        with np.errstate(under="ignore", over="ignore"):
            psi = psi0 * special.erfc(np.maximum(np.abs(kf) * l - r, 0.0) / (math.sqrt(2) * sv))
            wgap = psi * np.exp(-theta * kf)
        gsum = float(np.dot(wgap, np.maximum(Ck[i0:i1], 0.0) + eps_fp))
        # everything beyond: weight <= the edge weight, mass <= 1 + N eps_fp (+ outside mass)
        edge = max(float(wgap[0]), float(wgap[-1]))
        gsum += edge * (1.0 + N * eps_fp + tau_out)
        # the upward bias c = n l bias adds at most c P(S + c > 0) <= c (P(S' > -r) + e^(-r^2/2v))
        with np.errstate(under="ignore"):
            hoeff = math.exp(-r * r / (2 * v))
            cand = (gsum * scale + 2 * psi0 * hoeff
                    + n * l * bias * min(1.0, pb * scale + hoeff))
        best_gap = min(best_gap, cand)
    # --- 7. assemble, with a relative safety factor for M^n and the probabilities
    kappa = 64 * n * U + 1e-12
    upper = _finish_upper(l * up_sum, n, logM) * (1 + kappa)
    if math.isfinite(best_gap):
        gap = best_gap
        lowE = l * max(lo_sum, 0.0) * scale
        lower = min(upper, max(0.0, (lowE - gap) / n * (1 - kappa)))
    else:
        gap, lower = math.inf, 0.0
    details = {"theta": theta, "logM": logM, "window": (K_lo, K_hi), "tau_out": tau_out,
               "eps_fp": eps_fp, "gap": gap / n, "tail_sum": tail_sum}
    return DeltaResult(eps, n, lower, upper, "fft", l, N, label, details)


def _finish_upper(E_scaled: float, n: int, logM: float) -> float:
    """``E_scaled * M^n / n`` computed in log space, never rounded down to 0."""
    if E_scaled <= 0:
        return TINY
    logv = math.log(E_scaled) + n * logM - math.log(n)
    if logv < -744:
        return TINY
    return math.exp(logv)
