"""Certified lattice FFT for ``delta = E[(G_1 + ... + G_n)_+] / n`` (Theorem 4, Algorithm 4),
for any finite law and any ``n``.

The paper's Algorithm 4 rounds every atom of ``G`` up to a grid of step ``l``, convolves the
whole support by FFT and integrates the positive part. Its error grows like ``n * l`` and its
grid like ``n * support / l``. This module keeps the idea (a lattice, an FFT) and makes every
error term explicit and one-sided, so that the result is a *certified bracket*
``[lower, upper]`` of the exact value:

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
The atoms' own rounding (``g = a - e^eps b`` is within ``16 u (|a| + e^eps |b|)`` of the exact
atom) enters step 1's slack, so the bracket holds for the exact atoms.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.lazy import lazy
from amp.core import memory
from amp.core.errors import NumericalError
from amp.core.floats import TINY, U
from amp.core.result import Bound
from amp.core.roots import bounded_minimum
from amp.core.saddle import log_mgf, saddle_theta

# scipy is imported on first use (amp.core.lazy): import amp stays fast
sfft = lazy("scipy.fft")
special = lazy("scipy.special")

__all__ = ["fft_delta", "fft_cost", "DEFAULT_MAX_POINTS"]

DEFAULT_MAX_POINTS = 1 << 26         # largest FFT length (about 1.6 GB of work arrays)
#: Peak bytes per lattice point of one evaluation, an over-estimate (checked before allocating).
BYTES_PER_POINT = 400


def _result(eps, n, lower, upper, label, grid_step=None, points=None, details=None) -> Bound:
    d = {"grid_step": grid_step, "points": points}
    d.update(details or {})
    return Bound("delta", lower, upper, "upper", "fft", n, label, {"eps": eps}, details=d)


def fft_cost(g: np.ndarray, p: np.ndarray, n: int, rel_tol: float) -> float:
    """Expected cost of :func:`fft_delta` (``N log2 N`` of the first lattice, ``N`` from the
    first grid step and a +-9 sd window of the tilted sum); a guide for choosing an engine
    (:mod:`amp.backends.dispatch`), never part of a bound."""
    keep = p > 0
    g, p = g[keep], p[keep]
    try:
        theta_c = saddle_theta(g, p)
    except (ArithmeticError, ValueError):
        return math.inf
    w = np.exp(theta_c * (g - g.max()) + np.log(p))
    w /= w.sum()
    mu = float(np.dot(w, g))
    sd = math.sqrt(max(float(np.dot(w, (g - mu) ** 2)), 1e-300))
    step = min(math.sqrt(rel_tol / (8.0 * (n * theta_c ** 2 + 1.0 / sd ** 2))), sd / 4)
    N = 18.0 * math.sqrt(n) * sd / step + 4
    return N * max(math.log2(N), 1.0)


def fft_delta(g: np.ndarray, p: np.ndarray, n: int, eps: float, rel_tol: float,
              max_points: int, label: str, abs_tol: float, mag: np.ndarray) -> Bound:
    """Certified ``[lower, upper]`` of ``E[(G_1 + ... + G_n)_+] / n`` for the float atoms ``g``
    (probabilities ``p``) at ``eps``: shrink the grid step until the bracket's relative width is
    ``<= rel_tol`` (or its absolute width ``<= abs_tol``).

    ``mag`` holds ``|a| + e^eps |b|`` per atom (for the rounding slack). Raises
    :class:`~amp.core.errors.NumericalError` when that needs more than ``max_points``."""
    keep = p > 0
    g, p, mag = g[keep], p[keep], mag[keep]
    # continuous saddle point and tilted spread, to pick the first grid step
    theta_c = saddle_theta(g, p)
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


def _chernoff_right(m: np.ndarray, logq: np.ndarray, n: int, K: float) -> tuple[float, float]:
    """Chernoff bound on log P(T >= K) for T a sum of n i.i.d. lattice variables; returns
    (log bound, the lambda used). Any lambda > 0 gives a valid bound."""
    def obj(lam: float) -> float:
        return n * log_mgf(m, logq, lam) - lam * K

    mmax = float(np.max(np.abs(m))) + 1.0
    hi = 50.0 / mmax
    lam, _ = bounded_minimum(obj, min(1e-12, 0.5 * hi), hi, xatol=1e-10 / mmax)
    return min(0.0, obj(lam)), lam


def _fft_once(g: np.ndarray, p: np.ndarray, n: int, eps: float, step: float,
              max_points: int, label: str, mag: np.ndarray) -> Bound | None:
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
        return _result(eps, n, 0.0, 0.0, label, l, 0)
    logw = np.log(w)
    # --- 2. tilt at the lattice saddle point
    theta = saddle_theta(m, w)
    logM = log_mgf(m, logw, theta)
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
    # peak bytes per point: several float64/complex arrays of length N and numpy's temporaries
    # (24 GB was observed at 2^26 points before this check)
    memory.check(BYTES_PER_POINT * N, f"the lattice FFT of {N:,} points (n = {n})")
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
    return _result(eps, n, lower, upper, label, l, N, details)


def _finish_upper(E_scaled: float, n: int, logM: float) -> float:
    """``E_scaled * M^n / n`` computed in log space, never rounded down to 0."""
    if E_scaled <= 0:
        return TINY
    logv = math.log(E_scaled) + n * logM - math.log(n)
    if logv < -744:
        return TINY
    return math.exp(logv)
