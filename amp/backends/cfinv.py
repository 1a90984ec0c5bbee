"""Certified ``delta`` by inverting the characteristic function of a smoothed, tilted sum.

For a law with finitely many atoms ``g_k`` (probabilities ``p_k``), ``n`` users and
``S = G_1 + ... + G_n``, this backend brackets ``H = E[S_+]`` (``delta = H / n``) at a cost that
does not grow with ``n``: no lattice, no rounding of atoms, only the exact characteristic
function ``r(t)^n`` evaluated at a few thousand frequencies.  It serves laws without the
structured shape (Theorem 5's seven-type law of the bit mechanisms, matrix pair laws) at large
``n``, where the lattice FFT (:mod:`amp.backends.fft`) needs ``~ sqrt(n)`` grid points.

Every step is an identity or a one-sided bound:

1. **Smoothing.** ``xi ~ N(0, s^2)`` independent of ``S``: ``H <= H_s = E[(S + xi)_+]`` (Jensen),
   and ``H_s - H = E[psi(S)]`` with ``psi(x) = E[(x + xi)_+] - x_+ <= s phi(x / s) =
   s^2 phi_s(x)`` (``phi_s`` the ``N(0, s^2)`` density), so ``H >= H_s - s^2 f(0)``, ``f`` the
   density of ``S + xi``.
2. **Tilting.** With ``K`` the cumulant generating function of ``G``, ``Lambda = n K(theta) +
   theta^2 s^2 / 2`` and ``dQ/dP = e^(theta (S + xi) - Lambda)``: ``H_s = e^Lambda E_Q[Y_+ e^(-theta
   Y)]`` and ``f(0) = e^Lambda f_Q(0)`` for ``Y = S + xi``, whose characteristic function under
   ``Q`` is ``chi(t) = r(t)^n e^(i theta s^2 t - s^2 t^2 / 2)``, ``r(t) = sum_k w_k e^(i t g_k)``,
   ``w_k = p_k e^(theta g_k - K(theta))``.  ``theta`` solves ``n K'(theta) = 2 / theta`` (the
   saddle point of ``M(z)^n / z^2``).
3. **Parseval.** ``E_Q[Y_+ e^(-theta Y)] = (1 / 2 pi) int chi(t) / (theta + i t)^2 dt`` and
   ``f_Q(0) = (1 / 2 pi) int chi(t) dt``.
4. **Trapezoid rule = aliasing only.** With step ``2 pi / L`` the infinite trapezoid sum equals
   ``sum_m kappa(m L)`` (Poisson summation), ``kappa(y) = E_Q[(y + Y)_+ e^(-theta (y + Y))]``
   (resp. ``f_Q(m L)``): the ``m = 0`` term is the integral, every other term is ``>= 0``
   (kept in the upper end) and bounded by Chernoff bounds of ``Y`` under ``Q`` (closed forms
   through ``K``), which the lower end subtracts.
5. **Truncation** at ``|t| <= t_J``: ``|r| <= 1`` gives ``|chi(t)| <= e^(-s^2 t^2 / 2)``, whose
   tail sum is bounded by an ``erfc``.
6. **Floating point.** Each term carries an element-wise bound: the tilted weights, the phases
   ``t g_k`` (``u |t g_k|`` each, and up to 8 ulp for ``cos``/``sin``), the dot products, the
   complex ``log``, the power ``n log r`` (through ``|e^a - e^b| <= |a - b| max(|e^a|, |e^b|)``,
   with ``|r_exact| <= |r~| + err``), the Gaussian factor and the sums; ``e^Lambda`` carries a
   relative bound ``n u (8 + 4 (theta max|g| + max|log p|) + 3 |K| + 2 k)``.

The float atoms are evaluated as they are; :class:`amp.backends.dispatch.LawDelta` widens the
bracket by their distance to the exact atoms (:func:`amp.core.floats.widen`).  ``s`` is chosen
so that the smoothing share of the width is about a quarter of ``rel_tol`` and halved while
the bracket is too wide; when that needs more than ``max_terms`` frequencies a
:class:`~amp.core.errors.NumericalError` is raised (the dispatcher then falls back to the FFT).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.lazy import lazy
from amp.core.errors import NumericalError
from amp.core.floats import TINY, U
from amp.core.result import Bound
from amp.core.roots import bounded_minimum, brent_root
from amp.core.saddle import log_mgf

# scipy is imported on first use (amp.core.lazy): import amp stays fast
special = lazy("scipy.special")

__all__ = ["cf_delta", "cf_cost", "DEFAULT_MAX_TERMS"]

DEFAULT_MAX_TERMS = 1 << 23          # most frequencies evaluated for one bracket
_CHUNK_CELLS = 1 << 19               # frequencies x atoms per vectorised block
_T_SCALE = 10.5                      # s * t_J: the Gaussian factor is e^-55 at the cut
_SIGMAS = 25.0                       # half-window of the tilted law, in its standard deviations


def _exp(x: float) -> float:
    """``e^x``, 0 below the smallest double (used only where 0 is the safe side, or with two
    ulps of ``TINY`` added)."""
    return math.exp(x) if x > -745.0 else 0.0


def _tilted(g: np.ndarray, lp: np.ndarray, lam: float) -> tuple[np.ndarray, float, float]:
    """Tilted weights ``w``, mean and variance of ``G`` under ``e^(lam G - K(lam))``."""
    z = lp + lam * g
    w = np.exp(z - z.max())
    w /= w.sum()
    m = float(np.dot(w, g))
    v = float(np.dot(w, (g - m) ** 2))
    return w, m, v


def _theta(g: np.ndarray, lp: np.ndarray, n: int) -> float:
    """The root of ``n K'(theta) theta = 2`` (unique: ``theta K'(theta)`` increases once
    ``K' > 0``, and is ``< 2 / n`` before)."""
    def h(th: float) -> float:
        return n * _tilted(g, lp, th)[1] * th - 2.0

    gmax = float(g.max())
    lo, hi = 0.0, 2.0 / (n * gmax)
    while h(hi) < 0:
        lo, hi = hi, 2 * hi
        if hi > 1e12 / gmax:
            raise NumericalError("cf: could not locate the tilt of the inversion contour")
    return brent_root(h, lo, hi, rtol=1e-10, maxiter=300)


def _alias_bound(g: np.ndarray, lp: np.ndarray, n: int, theta: float, K0: float, s: float,
                 L: float, mu: float, sd: float) -> float:
    """Upper bound on ``sum_{m != 0} kappa(m L)`` (step 4), from Chernoff bounds of ``Y``
    under ``Q``; each Chernoff parameter is optimised numerically (any value is valid)."""
    def lam_q(lam: float) -> float:              # log E_Q[e^(lam Y)]
        return (n * (log_mgf(g, lp, theta + lam) - K0) + lam * theta * s * s
                + lam * lam * s * s / 2)

    def best(logb, lam0: float) -> float:        # min over lam > 0 of the log-bound logb(lam)
        _, f_min = bounded_minimum(lambda x: logb(math.exp(x)), math.log(lam0) - 12,
                                   math.log(lam0) + 6, xatol=1e-3)
        return min(f_min, logb(lam0))

    # m <= -1: E_Q[(Y - M L)_+] <= e^(Lambda_Q(lam) - lam M L) / (e lam), summed over M >= 1
    def log_low(lam: float) -> float:
        c = -lam * L
        return lam_q(lam) - 1 - math.log(lam) + c - math.log(-math.expm1(c))

    # m >= 1: (M L / 2) e^(-theta M L / 2) + Q(Y < -M L / 2) / (e theta), summed over M >= 1
    def log_high(lam: float) -> float:
        c = -lam * L / 2
        return lam_q(-lam) - 1 - math.log(theta) + c - math.log(-math.expm1(c))

    a = math.exp(-theta * L / 2)
    geo = (L / 2) * a / (1 - a) ** 2
    lo_ = best(log_low, max((L - mu) / (sd * sd), 1e-300))
    hi_ = best(log_high, max((L / 2 + mu) / (sd * sd), 1e-300))
    # the float K's carry a relative error far below the 1% margin taken here
    out = 1.01 * (geo + math.exp(min(lo_, 700.0)) + math.exp(min(hi_, 700.0)))
    return out if math.isfinite(out) else math.inf


def _frequencies(s: float, L: float, gabs: float, max_terms: int, where: str) -> tuple[float, int]:
    """Step ``2 pi / L`` and count ``J`` of frequencies up to ``t_J = 10.5 / s``, or a refusal."""
    dt = 2 * math.pi / L
    J = int(math.ceil(_T_SCALE / s / dt))
    if J > max_terms:
        raise NumericalError(f"cf: delta {where} needs more than {max_terms} frequencies")
    if J * dt * gabs > 1e12:           # phases t g_k this large lose their accuracy
        raise NumericalError(f"cf: phases beyond 1e12 for delta {where}")
    return dt, J


def _trapezoid(g: np.ndarray, w: np.ndarray, n: int, theta: float, s: float, dt: float, J: int,
               Kth: float, gabs: float, lpabs: float) -> tuple[float, float, float, float]:
    """Trapezoid sums ``T = dt/2pi sum_j ghat chi`` and ``T0 = dt/2pi sum_j chi`` over
    ``|j| <= J`` (real parts; the terms at ``-t`` are the conjugates), with bounds on their
    floating-point errors."""
    k = g.size
    sum_t = sum_t0 = 0.0
    abs_t = abs_t0 = 0.0
    err_t = err_t0 = 0.0
    # the tilted weights' relative error (exp of lp + theta g - K) and cos/sin (<= 8 ulp each)
    base_w = 32 + 4 * (theta * gabs + abs(Kth) + lpabs)
    chunk = max(256, _CHUNK_CELLS // k)
    for j0 in range(0, J + 1, chunk):
        j = np.arange(j0, min(J + 1, j0 + chunk), dtype=float)
        t = j * dt
        ph = np.multiply.outer(t, g)
        rr = np.cos(ph) @ w
        ri = np.sin(ph) @ w
        R = np.hypot(rr, ri)
        eps_r = U * (base_w + 3 * k + 3 * t * gabs)       # |r~ - r| (absolute)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            logr = np.log(rr + 1j * ri)
            lchi = n * logr - (s * s / 2) * t * t + 1j * (theta * s * s) * t
            chi = np.exp(lchi)
            ghat = 1.0 / (theta + 1j * t) ** 2
            # |chi_S exact - chi_S computed| (the Gaussian factor is applied below)
            up_n = np.exp(n * np.log(R + eps_r)) * (1 + 1e-12)      # >= |r exact|^n
            D = n * eps_r / np.maximum(R - eps_r, 1e-300) + n * U * (3 * np.abs(logr) + 2)
            small = (R <= 2 * eps_r) | (D > 50)
            gauss = np.exp(-(s * s / 2) * t * t)
            chis = np.exp(n * logr.real)                             # |chi_S computed|
            err_s = np.where(small, up_n + chis, up_n * np.expm1(np.minimum(D, 50.0)))
            err_s = err_s + 4 * U * chis
            rel_g = U * (16 + 3 * theta * s * s * t + s * s * t * t)  # Gaussian factor, ghat
            e0 = gauss * err_s + np.abs(chi) * rel_g
            e1 = np.abs(ghat) * e0 + np.abs(ghat * chi) * 4 * U
        term = (ghat * chi).real
        term0 = chi.real
        wts = np.full(j.size, 2.0)
        if j0 == 0:
            wts[0] = 1.0
        if not (np.all(np.isfinite(term)) and np.all(np.isfinite(e1))):
            raise NumericalError("cf: non-finite characteristic function values")
        sum_t += float(np.dot(wts, term))
        sum_t0 += float(np.dot(wts, term0))
        abs_t += float(np.dot(wts, np.abs(ghat * chi)))
        abs_t0 += float(np.dot(wts, np.abs(chi)))
        err_t += float(np.dot(wts, e1))
        err_t0 += float(np.dot(wts, e0))
    c = dt / (2 * math.pi)
    # recursive-summation bound (any order, BLAS included): terms per chunk + chunks + slack
    nb = min(J + 1, chunk) + J // chunk + 1 + 8
    return (c * sum_t, c * (err_t + nb * U * abs_t) * (1 + 8 * U),
            c * sum_t0, c * (err_t0 + nb * U * abs_t0) * (1 + 8 * U))


def cf_cost(g: np.ndarray, p: np.ndarray, n: int, rel_tol: float) -> float:
    """Expected cost of :func:`cf_delta` (frequencies times atoms of its first attempt), from
    the same tilt, smoothing and window it would use; ``inf`` when it would refuse. Only a
    guide for choosing an engine (:mod:`amp.backends.dispatch`), never part of a bound."""
    keep = p > 0
    g = np.asarray(g, dtype=float)[keep]
    p = np.asarray(p, dtype=float)[keep]
    if g.size == 0 or float(g.max()) <= 0:
        return math.inf
    try:
        lp = np.log(p)
        theta = _theta(g, lp, n)
        _, m1, v1 = _tilted(g, lp, theta)
    except (NumericalError, ArithmeticError, ValueError):
        return math.inf
    s = math.sqrt(0.25 * rel_tol) / theta
    mu = n * m1 + theta * s * s
    sd = math.sqrt(n * v1 + s * s)
    L = max(mu + _SIGMAS * sd, 2 * (_SIGMAS * sd - mu), 140.0 / theta)
    return math.ceil(_T_SCALE / s * L / (2 * math.pi)) * float(g.size)


def cf_delta(g: np.ndarray, p: np.ndarray, n: int, eps: float, rel_tol: float, label: str,
             abs_tol: float = 0.0, max_terms: int = DEFAULT_MAX_TERMS) -> Bound:
    """Certified ``[lower, upper]`` of ``E[(G_1 + ... + G_n)_+] / n`` for the float atoms ``g``
    (probabilities ``p``) at ``eps``, by the smoothed characteristic-function inversion of the
    module docstring; relative width ``<= rel_tol`` (or absolute ``<= abs_tol``).

    Raises :class:`~amp.core.errors.NumericalError` when that cannot be reached with at most
    ``max_terms`` frequencies (never a wide or noisy value)."""
    keep = p > 0
    g = np.asarray(g, dtype=float)[keep]
    p = np.asarray(p, dtype=float)[keep]
    if g.size == 0 or float(g.max()) <= 0:
        raise NumericalError("cf: needs a positive atom (delta = 0 is the dispatcher's)")
    lp = np.log(p)
    gabs = float(np.abs(g).max())
    lpabs = float(np.abs(lp).max())
    k = g.size
    theta = _theta(g, lp, n)
    K0 = log_mgf(g, lp, theta)
    w, m1, v1 = _tilted(g, lp, theta)
    if not (math.isfinite(K0) and v1 > 0):
        raise NumericalError("cf: degenerate tilted law")
    lam = n * K0
    # relative error of the float exponent Lambda = n K(theta) + theta^2 s^2 / 2
    e_lam = (n * U * (8 + 4 * (theta * gabs + lpabs) + 3 * abs(K0) + 2 * k)
             + 4 * U * abs(lam) + 1e-15)
    if e_lam > 0.5 * rel_tol:
        raise NumericalError(f"cf: the floating-point error of M(theta)^n ({e_lam:.1e}) leaves "
                             f"no room for relative width {rel_tol:g} at n={n}")
    where = f"at eps={eps:g} for n={n} to relative width {rel_tol:g}"
    s = math.sqrt(0.25 * rel_tol) / theta       # the smoothing's share ~ rel_tol / 4
    last = None
    for _attempt in range(4):
        mu = n * m1 + theta * s * s
        sd = math.sqrt(n * v1 + s * s)
        L = max(mu + _SIGMAS * sd, 2 * (_SIGMAS * sd - mu), 140.0 / theta)
        dt, J = _frequencies(s, L, gabs, max_terms, where)
        T, eT, T0, eT0 = _trapezoid(g, w, n, theta, s, dt, J, K0, gabs, lpabs)
        alias = _alias_bound(g, lp, n, theta, K0, s, L, mu, sd)
        grown = 0
        while alias > 1e-3 * rel_tol * max(T, 0.0) and grown < 6:
            L *= 2                                 # the Chernoff bounds fall fast with L
            grown += 1
            alias = _alias_bound(g, lp, n, theta, K0, s, L, mu, sd)
        if grown:
            dt, J = _frequencies(s, L, gabs, max_terms, where)
            T, eT, T0, eT0 = _trapezoid(g, w, n, theta, s, dt, J, K0, gabs, lpabs)
        tc = J * dt                     # the left-out tail sum is <= its integral from J dt
        erfc = special.erfc(s * tc / math.sqrt(2))
        trunc = (1 / (math.pi * tc * tc)) * math.sqrt(math.pi / 2) / s * erfc
        trunc0 = (1 / math.pi) * math.sqrt(math.pi / 2) / s * erfc
        lam_s = lam + theta * theta * s * s / 2
        i_hi = T + trunc + eT
        i_lo = T - trunc - eT - alias
        f_hi = T0 + trunc0 + eT0
        if not (math.isfinite(i_hi) and math.isfinite(f_hi)) or i_hi <= 0:
            raise NumericalError("cf: non-finite or non-positive trapezoid sums")
        # e^Lambda / n in log space: a delta below the smallest double gets the upper end TINY
        # (the exact value is below it) and the lower end 0
        log_hi = lam_s + e_lam - math.log(n) + 8 * U
        log_lo = lam_s - e_lam - math.log(n) - 8 * U
        if log_hi + math.log(i_hi) > 700:
            raise NumericalError("cf: the tilted prefactor overflows")
        # each log and sum below rounds by <= u of its magnitude: 4 u (|x| + |log i| + 1) each
        li = math.log(i_hi)
        x_up = log_hi + li + 4 * U * (abs(log_hi) + abs(li) + 1)
        up = math.exp(x_up) if x_up > -700 else 2 * TINY + _exp(x_up)   # subnormals: + 2 ulp
        if f_hi > 0:
            lf = 2 * math.log(s) + math.log(f_hi)
            bias = _exp(log_hi + lf + 4 * U * (abs(log_hi) + abs(lf) + 1))
        else:
            bias = 0.0
        if i_lo > 0:
            li = math.log(i_lo)
            x_lo = log_lo + li - 4 * U * (abs(log_lo) + abs(li) + 1)
        else:
            x_lo = -math.inf
        lo = max(math.exp(x_lo) - bias, 0.0) if x_lo > -700 else 0.0
        last = f"[{float(lo):.6g}, {float(up):.6g}]"
        if up - lo <= rel_tol * up or up - lo <= abs_tol:
            return Bound("delta", lo, up, "upper", "cf", n, label, {"eps": eps},
                         details={"smoothing": s, "theta": theta, "frequencies": J,
                                  "window": L, "alias": alias, "bias": bias})
        # the smoothing's share scales like s^2: aim it at half of what the rest leaves
        rest = (up - lo) - bias
        room = rel_tol * up - rest
        if room <= 0.05 * rel_tol * up or bias <= 0:
            break
        s *= max(math.sqrt(0.5 * room / bias), 0.05)
    raise NumericalError(f"cf: cannot reach relative width {rel_tol:g} at eps={eps:g} "
                         f"(last bracket {last})")
