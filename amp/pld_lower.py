"""The lower pair of many rounds at large ``n``, and the error pad of a self-composition.

Split from :mod:`amp.rounds` (which uses both): :func:`difference_pair_losses` post-processes
the three-group Theorem 5 pair to ``D = h1 - h2`` with the law of ``D`` from one FFT
(:func:`difference_pmf`, certified error), ``O(sqrt n)`` instead of ``O(n)``;
:func:`self_compose_pad` bounds the floating-point error of dp-accounting's self-composition
from the transform itself.
"""

from __future__ import annotations

import math

import numpy as np

from amp import pld_adapter as A
from amp.core import memory
from amp.core.errors import NumericalError
from amp.core.floats import U

__all__ = ["convex_minorant", "repair", "eps_upper", "eps_lower", "DIFF_SD", "difference_pmf", "step_tail", "difference_pair_losses",
           "self_compose_pad", "fft_pad", "check_compose_memory", "corner_width"]

#: Standard deviations of ``D`` kept by :func:`difference_pair_losses` (the rest is dropped).
DIFF_SD = 12.0


def difference_pmf(n: int, p1: float, p2: float, c0: int, half: int):
    """``P(D = c0 + d)`` for ``|d| <= half``, ``D = h1 - h2`` of ``Mult(n; p1, p2, p0)`` (a sum of
    ``n`` i.i.d. steps ``+1, -1, 0``), by the inversion ``P(D = c0 + d) = (1/M) sum_k
    psi(theta_k)^n e^(i theta_k f) e^(-i theta_k d)`` (one FFT of length ``M >= 2 half + 16``),
    ``psi = phi e^(-i theta mu)`` the centred characteristic function of a
    step (``mu = p1 - p2``, ``n mu = c0 + f``), with an absolute error bound: ``(values, err)``.
    ``log psi`` is taken as ``log1p`` of ``z = psi - 1``, summed from ``e^(ix) - 1 = -2 sin^2(x/2)
    + i sin x`` so that its error ``dz`` vanishes at ``theta = 0``: the power's relative error is
    about ``n dz ~ u sqrt(n)`` where ``|psi|^n`` is not negligible, not ``n u``.

    Aliasing: the exact inverse transform is ``sum_j P(D = c0 + d + j M)``, above
    ``P(D = c0 + d)`` by at most ``P(|D - c0| >= M - half)`` (Chernoff, :func:`step_tail`), added
    to ``err``. Floating point: ``log psi`` is within ``1.01 dz / (|1 + z| - dz)`` plus a few
    ``u |log psi|``; times ``n``, plus the rounding of ``n log psi + i theta f``, a bound ``e_k``
    on the exponent's error and
    ``|psi_k^n| (e^e_k - 1 + 4u)`` on each term (exp's own rounding inside). The FFT adds
    at most ``10 log2(M) u (1/M) sum |psi_k^n|`` per value (the element-wise form of
    ``amp.rounds.fft_pad``'s model: each output is ``(1/M)`` times a sum of ``M`` terms of modulus
    ``|psi_k^n|``, rounded through ``log2 M`` butterfly levels)."""
    p0 = 1.0 - p1 - p2
    M = 1 << max(4, int(math.ceil(math.log2(2 * half + 16))))
    memory.check(200.0 * M, f"the lower pair's FFT of {M:,} points (n = {n})")
    k = np.arange(M)
    theta = 2 * math.pi * np.where(k < M // 2, k, k - M) / M
    mu = p1 - p2
    f = n * mu - c0
    # z = psi - 1 = sum_j p_j (e^(i x_j) - 1), e^(ix) - 1 = -2 sin^2(x/2) + i sin x: the
    # real parts share one sign and the imaginary parts cancel to first order (centred), so
    # |z - fl(z)| <= 6u sum_j p_j (2 sin^2(x_j/2) + |sin x_j|) =: dz, small near theta = 0
    re = np.zeros(M)
    im = np.zeros(M)
    size = np.zeros(M)
    for pj, vj in ((p0, 0.0), (p1, 1.0), (p2, -1.0)):
        x = theta * (vj - mu)
        s2 = 2 * np.sin(0.5 * x) ** 2
        sx = np.sin(x)
        re -= pj * s2
        im += pj * sx
        size += pj * (s2 + np.abs(sx))
    dz = 6 * U * size * 1.01
    one = np.hypot(1 + re, im)                    # |1 + z|
    # log(1 + z) = log1p(2 re + re^2 + im^2) / 2 + i atan2(im, 1 + re), each within a few u
    lg = 0.5 * np.log1p(2 * re + re * re + im * im) + 1j * np.arctan2(im, 1 + re)
    a = np.maximum(one - dz, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        vals = np.exp(n * lg + 1j * theta * f)
        e_log = (n * (1.01 * dz / a + 8 * U * np.abs(lg) + 4 * U * (re * re + im * im) / a)
                 + 8 * U * (1 + n * np.abs(lg) + abs(f) * np.abs(theta)))
    vals = np.where(a > 0, vals, 0.0)
    mod = np.abs(vals)
    per = np.where(a > 0, mod * (np.expm1(np.minimum(e_log, 700.0)) + 4 * U), 0.0)
    out = np.fft.fft(vals)                       # sum_k vals_k e^(-i theta_k d)
    d = np.arange(-half, half + 1)
    got = out.real[d % M] / M
    err = float(per.sum()) / M + 10 * math.log2(M) * U * float(mod.sum()) / M * 1.01
    err += step_tail(n, p1, p2, c0, M - half)
    return got, err


def step_tail(n: int, p1: float, p2: float, c0: int, t: int) -> float:
    """Chernoff bound on ``P(|D - c0| >= t)``: ``min_s E e^(+-s (D - c0)) e^(-s t)``, each side
    (every ``s`` tried gives a valid bound)."""
    p0 = 1.0 - p1 - p2
    up = dn = 0.0
    for s in np.geomspace(1e-7, 5, 300):
        up = min(up, n * math.log(p0 + p1 * math.exp(s) + p2 * math.exp(-s)) - s * (t + c0))
        dn = min(dn, n * math.log(p0 + p1 * math.exp(-s) + p2 * math.exp(s)) - s * (t - c0))
    return (math.exp(up) + math.exp(dn)) * (1 + 1e-9)


def difference_pair_losses(g, n: int):
    """Lower-bound losses and masses of the three-group Theorem 5 pair post-processed to
    ``D = h1 - h2`` (a function of the histogram, so a valid pair whose hockey-stick is below
    the full pair's; the information lost is the spread of ``h1 + h2`` at fixed ``D``, a
    relative ``O(1/sqrt n)`` effect on the loss). With ``v = (+1, -1, 0)`` and size-biasing
    ``sum_{D(h) = d} Mult_n(h) h_j = n p_j P_{n-1}(D = d - v_j)``, so
    ``P_b(D = d) = sum_j alpha_bj p_j P_{n-1}(D = d - v_j)``: ``O(sqrt n)`` work from one FFT
    (:func:`difference_pmf`). Losses ``log(P0_low / P1_up)`` and masses ``P0_low`` are at most
    the post-processed pair's; ``|d|`` beyond ``DIFF_SD`` standard deviations is dropped."""
    (p1, a1, b1), (p2, a2, b2), (p0, a0, b0) = g
    tot = p1 + p2 + p0
    p1, p2, p0 = p1 / tot, p2 / tot, p0 / tot
    N = n - 1
    c0 = int(round(N * (p1 - p2)))
    sd = math.sqrt(N * (p1 + p2)) + 1
    half = int(DIFF_SD * sd) + 2
    vals, err = difference_pmf(N, p1, p2, c0, half)
    lo = np.maximum(vals - err, 0.0)
    up = vals + err
    # index i <-> D = c0 + i - half; P(d - 1) at i - 1, P(d + 1) at i + 1
    i = np.arange(1, vals.size - 1)
    x0 = a1 * p1 * lo[i - 1] + a2 * p2 * lo[i + 1] + a0 * p0 * lo[i]
    x1 = b1 * p1 * up[i - 1] + b2 * p2 * up[i + 1] + b0 * p0 * up[i]
    q0 = x0 * (1 - 8 * U)
    q1 = x1 * (1 + 8 * U)
    # kept: where every value used exceeds 1000 times its error; in the far tails the error
    # bound dominates, the losses there mean little and would only stretch the loss grid
    # (dropping mass only lowers delta)
    good = (q0 > 1e-300) & (q1 > 0) & (np.minimum(np.minimum(vals[i - 1], vals[i + 1]),
                                                  vals[i]) > 1e3 * err)
    loss = np.log(q0[good]) - np.log(q1[good])
    loss = loss - 4 * U * (np.abs(loss) + 40)
    width = float(np.ptp(loss)) if loss.size else 0.0
    return loss, q0[good] * (1 - 1e-9), width


def self_compose_pad(probs: np.ndarray, times: int, truncation: float = 1e-15) -> float:
    """Bound on the change of any delta from the floating-point error of dp-accounting's
    ``self_convolve`` of ``probs`` (``ifft(fft(p, L)^T)``, ``L`` its FFT length), sharper than
    ``amp.rounds.fft_pad`` for many rounds because it looks at the transform itself.

    Model (element-wise, the form of ``amp.rounds.fft_pad``'s for one output): each computed value of
    a length-``L`` FFT is within ``e = 10 log2(L) u |p|_1`` of the exact one (every output sums
    the inputs with unit weights through ``log2 L`` rounded butterfly levels). With
    ``m_k = |fl(FFT p)_k| + 2e`` (we recompute the transform; dp-accounting's is within ``e`` of
    the exact one, as ours is), the ``T``-th power's error is at most
    ``E_k = T e m_k^(T-1) + r_k m_k^T``, ``r_k = 4u (T (|log m_k| + pi) + 2 log2 T + 4)`` for
    the rounding of the power itself (by repeated multiplication or ``exp(T log)``). The inverse
    transform's L1 error is at most ``|E|_2`` (``|ifft v|_1 <= sqrt(L) |ifft v|_2 = |v|_2``) plus
    its own rounding, ``10 log2(L) u sum_k m_k^T``. Far from frequency 0, ``m_k^(T-1)`` is tiny,
    which is what ``amp.rounds.fft_pad``'s norm-wise model cannot see; the larger of ``m_k`` and 1 is
    never exceeded. Checked against a longdouble convolution (``tests/test_assumptions.py``)."""
    from scipy import fft as sfft
    from dp_accounting.pld import common
    p = np.asarray(probs, dtype=float)
    T = int(times)
    lo, hi = common.compute_self_convolve_bounds(p, T, truncation)
    L = sfft.next_fast_len(max(hi - lo + 1, p.size))
    lg = math.log2(max(L, 2))
    e = 10 * lg * U * float(np.sum(np.abs(p))) * 1.01
    m = np.minimum(np.abs(sfft.fft(p, L)) + 2 * e, 1.0 + 2 * e)
    with np.errstate(divide="ignore", under="ignore"):
        lm = np.log(m)
        mt1 = np.exp((T - 1) * lm)
    r = 4 * U * (T * (np.abs(lm) + math.pi) + 2 * math.log2(T) + 4)
    E = T * e * mt1 + r * mt1 * m
    return float(np.sqrt(np.sum(E * E)) + 10 * lg * U * np.sum(mt1 * m) * 1.01) * 1.01


def fft_pad(size: int, times: int, l2: float) -> float:
    """Bound on the change of any delta from the floating-point error of one dp-accounting
    self-composition (``ifft(fft(p)^T)`` of length ``size``, ``|p|_2 = l2``) or, for
    ``times = 1``, one ``fftconvolve``: ``sqrt(L) |err|_2`` with the L2 model of the FFT."""
    L = max(int(size), 2)
    lg = math.log2(L)
    err2 = U * (10 * lg * (times + 2) * l2 * 1.01 + 4 * times + 10 * lg + 2)
    return math.sqrt(L) * err2


def check_compose_memory(probs: np.ndarray, times: int, truncation: float) -> None:
    """Refuse (:func:`amp.core.memory.check`) a self-composition whose FFT would not fit: the
    complex transforms, their power, the inverse and the pad's own transform, ~100 B/point."""
    from dp_accounting.pld import common
    from scipy import fft as sfft
    lo, hi = common.compute_self_convolve_bounds(probs, times, truncation)
    L = sfft.next_fast_len(max(hi - lo + 1, len(probs)))
    memory.check(100.0 * L, f"composing {times} rounds over {L:,} loss grid points")


def corner_width(n: int, al, be, w1: np.ndarray, w2: np.ndarray) -> float:
    """Loss range of the three-group pair over the window ``w1 x w2`` of counts (the loss is
    monotone in each count, so the corners give it): the grid step's scale."""
    c1 = np.array([w1[0], w1[0], w1[-1], w1[-1]], dtype=float)
    c2 = np.array([w2[0], w2[-1], w2[0], w2[-1]], dtype=float)
    c0 = np.maximum(n - c1 - c2, 0.0)
    lc = np.log((al[0] * c1 + al[1] * c2 + al[2] * c0) / (be[0] * c1 + be[1] * c2 + be[2] * c0))
    return float(np.ptp(lc))


# ---------------------------------------------------------------- connect-the-dots helpers
def convex_minorant(t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Greatest convex minorant of ``{(0, 1)} U {(t_i, u_i)}``, evaluated at ``t``."""
    xs = np.concatenate([[0.0], t])
    ys = np.concatenate([[1.0], u])
    hull: list[int] = []
    for i in range(xs.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            # drop i1 if it lies on or above the segment i0 -> i
            if (ys[i1] - ys[i0]) * (xs[i] - xs[i0]) >= (ys[i] - ys[i0]) * (xs[i1] - xs[i0]):
                hull.pop()
            else:
                break
        hull.append(i)
    out = np.interp(xs, xs[hull], ys[hull])[1:]
    return np.minimum(np.maximum(out, 0.0), u)


def repair(pmf, ks, d, step, sparse: bool = False):
    """Clip negative rounding residues, measure the shortfall of the pmf's curve below the
    points ``d`` at the grid (the curve is piecewise linear in ``e^eps`` between them, so the
    grid is where to look) and cover it: scale the finite masses by ``1 - s`` and move ``s``
    times their total to infinity, which raises the curve by ``s (total - delta_finite(eps))``.
    The margin for the rounding of the measurement is ``4 u (m + 4)``, ``m`` the number of
    summed masses: the pmf's length, or with ``sparse`` its nonzero masses (a zero adds
    nothing and no rounding to dp-accounting's running sums)."""
    probs = np.maximum(np.asarray(A.probs(pmf), dtype=float), 0.0)
    inf = float(A.infinity_mass(pmf))
    lower = int(A.lower_index(pmf))
    dense = A.dense_pmf(step, lower, probs, inf, True)
    got = np.asarray(dense.get_delta_for_epsilon(np.asarray(ks * step, dtype=float)))
    terms = int(np.count_nonzero(probs)) if sparse else probs.size
    short = max(float(np.max(d - got)), 0.0) + 4 * U * (terms + 4)
    total = float(probs.sum())
    room = total - float(np.max(got - inf))
    if room <= 100 * short:
        raise NumericalError("connect-the-dots PLD: cannot absorb the rounding shortfall")
    s = short / room * (1 + 1e-6)
    # total mass 1 (the curve at eps -> -inf): a rounding deficit goes to infinity as well
    deficit = max(0.0, 1.0 - total - inf) + 4 * U
    return A.dense_pmf(step, lower, probs * (1 - s), inf + s * total + deficit, True)


# ---------------------------------------------------------------------------- lower pair


# ---------------------------------------------------------------- certified inversion
def eps_upper(pmf, target: float, asked: float | None = None) -> float:
    """Smallest eps (rounded up) with the pmf's delta ``<= target`` (verified); ``asked``: the
    delta the user asked (``target`` is it minus the error pad), quoted in the refusal."""
    e = float(pmf.get_epsilon_for_delta(target))
    if not math.isfinite(e):
        asked = target if asked is None else asked
        raise NumericalError(f"the composed bound never reaches delta = {asked:g}: its mass at "
                             f"infinity is {float(A.infinity_mass(pmf)):.3g}, plus an error "
                             f"pad of {asked - target:.3g}; use fewer rounds or a larger delta")
    e = e * (1 + 1e-9) + 1e-12
    for _ in range(60):
        if float(pmf.get_delta_for_epsilon(e)) * (1 + 8 * U * pmf.size) <= target:
            return e
        e = e * (1 + 1e-6) + 1e-9
    raise NumericalError("could not verify the composed eps")   # pragma: no cover


def eps_lower(pmf, target: float) -> float:
    """An eps below which the pmf's delta exceeds ``target`` (rounded down, verified)."""
    e = float(pmf.get_epsilon_for_delta(target))
    if not math.isfinite(e) or e <= 0:
        return 0.0
    e = e * (1 - 1e-9) - 1e-12
    for _ in range(60):
        if e <= 0:
            return 0.0
        if float(pmf.get_delta_for_epsilon(e)) * (1 - 8 * U * pmf.size) > target:
            return e
        e = e * (1 - 1e-6) - 1e-9
    return 0.0
