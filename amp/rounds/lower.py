"""Theorem 5's explicit dataset pair of one round as a privacy loss distribution.

The pair ``X0 = (x0, x2, ..., x2)``, ``X1 = (x1, x2, ..., x2)`` of Theorem 5 (§5.3): its shuffled
histogram is post-processed to the counts of three groups of outputs (``a > b``, ``a < b``,
``a = b``; exact for k-RR), whose laws are the size-biased multinomials
``P_b(h) = Mult(h) X_b(h) / n`` (``math-notes.md``); post-processing only lowers a divergence.
Above :data:`LOWER_POINTS` lattice points the counts are post-processed further to
``D = h1 - h2`` (:func:`difference_pair_losses`, ``O(sqrt n)``). :func:`explicit_pair_pmf` builds
the pair's PLD *optimistically* (mass outside the enumerated window dropped, masses scaled down
by ``1 - 1e-9``, losses rounded down to the grid: each lowers ``delta(eps)``);
:func:`pair_pmf_pessimistic` builds the same pair's PLD from above, so that the two bracket the
pair's exact curve (``bound="lower"`` of :func:`amp.rounds.compose_lower`).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core import memory
from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.core.lazy import lazy
from amp.mechanisms.gparv import GPARV
from amp.rounds import adapter as A

__all__ = ["LOWER_POINTS", "LOWER_CELLS", "DIFF_SD", "groups", "explicit_pair_losses",
           "pair_is_reduced", "explicit_pair_pmf", "pair_pmf_pessimistic", "lower_step",
           "difference_pmf", "step_tail", "difference_pair_losses", "corner_width"]

gammaln = lazy("scipy.special", "gammaln")   # imported on first use

#: Above this many lattice points in the 2-D window, the three-group lower pair is
#: post-processed to ``D = h1 - h2`` (:func:`difference_pair_losses`).
LOWER_POINTS = 2_000_000
#: Loss-grid cells of the lower PLD's range.
LOWER_CELLS = 20_000
DIFF_SD = 12.0


def groups(law: GPARV) -> list[tuple[float, float, float]]:
    """Lump the Theorem 5 atoms by the sign of ``a - b``: ``(pi, alpha, beta)`` per group."""
    out = []
    for sel in (law.a > law.b, law.a < law.b, law.a == law.b):
        p = law.p[sel]
        if p.size and p.sum() > 0:
            pi = float(p.sum())
            out.append((pi, float(np.dot(law.a[sel], p)) / pi, float(np.dot(law.b[sel], p)) / pi))
    return out


def explicit_pair_losses(law: GPARV, n: int):
    """Losses ``log X0/X1`` and masses ``P0`` of the lumped Theorem 5 pair on a window (above
    ``LOWER_POINTS``: of the pair reduced to ``D = h1 - h2``, losses and masses rounded down,
    :func:`pair_is_reduced`; only an optimistic PLD may be built from those)."""
    g = groups(law)
    if len(g) < 2:
        raise ParameterError("the Theorem 5 pair needs outputs that favour each input")
    pis = np.array([x[0] for x in g])
    pis = pis / pis.sum()
    al = np.array([x[1] for x in g])
    be = np.array([x[2] for x in g])
    w1, w2 = window(n, pis[0]), window(n, pis[1])     # (first, last): no array yet

    if len(g) == 3 and size(w1) * size(w2) > LOWER_POINTS:
        loss, mass, _ = difference_pair_losses([(pi, a, b) for pi, a, b in zip(pis, al, be)],
                                                n)
        # the grid step's range as the enumeration below would find it (window corners)
        return loss, mass, corner_width(n, al, be, np.array(w1), np.array(w2))
    # about twenty-five float64 arrays over the enumerated counts (checked before they exist)
    points = size(w1) * (size(w2) if len(g) == 3 else 1)
    memory.check(200.0 * points, f"the lower pair's enumeration over {points:,} counts "
                                 f"(n = {n})")
    h1 = np.arange(w1[0], w1[1] + 1)[:, None]
    h2 = np.arange(w2[0], w2[1] + 1)[None, :] if len(g) == 3 else (n - h1)
    h0 = n - h1 - h2
    ok = h0 >= 0
    h1, h2, h0 = np.broadcast_arrays(h1, h2, h0)
    h1, h2, h0 = h1[ok].astype(float), h2[ok].astype(float), h0[ok].astype(float)
    hs = [h1, h2, h0][:len(g)]
    logm = gammaln(n + 1.0) - sum(gammaln(h + 1.0) for h in hs) \
        + sum(h * math.log(pi) for h, pi in zip(hs, pis) if pi > 0)
    x0 = sum(a * h for a, h in zip(al, hs))
    x1 = sum(b * h for b, h in zip(be, hs))
    keep = (x0 > 0) & (x1 > 0)
    loss = np.log(x0[keep]) - np.log(x1[keep])
    mass = np.exp(logm[keep] + np.log(x0[keep] / n)) * (1 - 1e-9)
    sig = mass > 1e-300
    loss, mass = loss[sig], mass[sig]
    return loss, mass, float(loss.max() - loss.min()) if loss.size else 0.0


def window(n: int, pi: float) -> tuple[int, int]:
    """First and last count of the window of ``Bin(n, pi)`` enumerated by
    :func:`explicit_pair_losses` (12 standard deviations, plus one, each side)."""
    m, sd = n * pi, math.sqrt(n * pi * (1 - pi)) + 1
    return max(0, int(m - 12 * sd)), min(n, int(m + 12 * sd) + 2)


def size(w: tuple[int, int]) -> int:
    return w[1] - w[0] + 1


def pair_is_reduced(law: GPARV, n: int) -> bool:
    """Whether :func:`explicit_pair_losses` reduces the pair to ``D = h1 - h2`` (then its
    losses and masses are lower bounds: good for the optimistic PLD only)."""
    g = groups(law)
    if len(g) != 3:
        return False
    pis = np.array([x[0] for x in g])
    pis = pis / pis.sum()
    return size(window(n, pis[0])) * size(window(n, pis[1])) > LOWER_POINTS


def explicit_pair_pmf(law: GPARV, n: int, step: float | None, losses=None):
    """Optimistic dense PLD of the lumped Theorem 5 pair (losses rounded down to ``step``);
    ``losses``: :func:`explicit_pair_losses` of ``(law, n)`` if already computed."""
    loss, mass, width = losses if losses is not None else explicit_pair_losses(law, n)
    step = step or max(width, 1e-6) / LOWER_CELLS
    idx = np.floor((loss - 1e-12 * (np.abs(loss) + 1)) / step).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=mass)
    return A.dense_pmf(step, lo, probs, 0.0, False)


def pair_pmf_pessimistic(law: GPARV, n: int, step: float):
    """Pessimistic dense PLD of the lumped Theorem 5 pair of ``law`` (module docstring): its
    hockey-stick curve is ``>=`` the pair's exact curve at every ``eps``."""
    loss, mass, _ = explicit_pair_losses(law, n)
    raw = mass / (1 - 1e-9)                        # undo the optimistic scaling
    pis = np.array([g[0] for g in groups(law)])
    pis = pis / pis.sum()
    # |error of log mass| <= 16 u (sum of the magnitudes of its terms): gammaln(n + 1), the
    # gammaln(h + 1) (their sum <= gammaln(n + 1)), h log pi and log(x0 / n)
    mag = 2 * float(gammaln(n + 1.0)) + n * float(np.sum(np.abs(np.log(pis[pis > 0])))) \
        + math.log(n + 1.0) + 100
    r = math.expm1(16 * U * mag)
    idx = np.ceil((loss + 1e-12 * (np.abs(loss) + 1)) / step).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=raw * (1 + r))
    inside = float(np.sum(raw)) * (1 - r) * (1 - 4 * U * (raw.size + 4))
    inf = max(0.0, 1.0 - inside) + 4 * U
    return A.dense_pmf(step, lo, probs, min(inf, 1.0), True)


def lower_step(profs: list, total: int) -> float:
    """Loss step of the optimistic PLDs of ``profs`` (:class:`~amp.rounds.ComposableProfile`): ``1e-3 / T`` (rounding every loss down costs at most
    ``T step`` in eps), within ``[range / 200000, range / 20000]`` of the narrowest range."""
    width = min(p.lower_range() for p in profs)
    return max(min(width / LOWER_CELLS, 1e-3 / total), width / (10 * LOWER_CELLS), 1e-9)


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


def corner_width(n: int, al, be, w1: np.ndarray, w2: np.ndarray) -> float:
    """Loss range of the three-group pair over the window ``w1 x w2`` of counts (the loss is
    monotone in each count, so the corners give it): the grid step's scale."""
    c1 = np.array([w1[0], w1[0], w1[-1], w1[-1]], dtype=float)
    c2 = np.array([w2[0], w2[-1], w2[0], w2[-1]], dtype=float)
    c0 = np.maximum(n - c1 - c2, 0.0)
    lc = np.log((al[0] * c1 + al[1] * c2 + al[2] * c0) / (be[0] * c1 + be[1] * c2 + be[2] * c0))
    return float(np.ptp(lc))
