"""Lattice nuisance tables: the integerised nuisance law by characteristic-function inversion.

Implements the ``lattice`` nuisance tables of :mod:`amp.backends.structured`.  The value ``E`` of
an ``(E, E)`` user is replaced by ``floor(K E)/K`` or ``ceil(K E)/K`` with the probabilities
that keep its mean (:func:`lattice_cats`; ``K`` a continued-fraction denominator of ``E``,
:func:`cf_denominators`, so that the rounding variance ``frac(K E)(1 - frac(K E)) / K^2`` is
small); the law of the sum ``V'_{m0}`` on ``Z / K`` is the inverse real FFT of
``exp(m0 log phi)`` (closed form, centred) (:func:`lattice_table`).  The integerisation and
block-shift gaps are bounded in :mod:`.nuisance` / :mod:`.model`.

Certified error terms owned here (the *table's own error* of the package docstring): the
element-wise bound on the inverted characteristic function (rounding of ``log phi``, of
``exp``, of the inverse FFT: ``10 u log2 N``) as an absolute error per lattice point
(``abs_p``), aliasing (the Bernstein mass outside the FFT window, ``alias``) and the mass
outside the window (``out``).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.lazy import lazy
from amp.core.floats import U
from amp.core.tails import bernstein_t
from amp.backends.structured.nuisance import LOG_TAU_V, Nuisance
from amp.backends.structured.tables import Table, cumulate_lattice

# scipy is imported on first use (amp.core.lazy): import amp stays fast
sfft = lazy("scipy.fft")

__all__ = ["cf_denominators", "lattice_cats", "lattice_table", "cf_cut", "LATTICE_BLOCK",
           "CF_NEGLIGIBLE"]

#: Frequencies whose element-wise terms :func:`lattice_table` holds at once (tables up to
#: ``2 LATTICE_BLOCK`` points are one block; larger ones, n ~ 10^11, keep ~0.3 GB less).
LATTICE_BLOCK = 1 << 18
#: Bound used for every frequency that :func:`cf_cut` certifies negligible (its ``|psi_j|``,
#: error and modulus are all at most this; the true values are below ``e^-760``).
CF_NEGLIGIBLE = 1e-300


def cf_denominators(E: float, kmax: int) -> list[int]:
    """Denominators ``K <= kmax`` of the best rational approximations of ``E`` (ascending)."""
    out = []
    for K in range(1, kmax + 1):
        fr = K * E - math.floor(K * E)
        v = fr * (1 - fr) / K ** 2
        if not out or v < out[-1][1] * 0.5:
            out.append((K, v))
    return [k for k, _ in out]


def lattice_cats(nu: Nuisance, K: int) -> tuple[list[float], list[int], float]:
    """Categories of the integerised per-user value (lattice units): probabilities, values and
    the rounding variance ``frac (1 - frac) / K^2`` per ``(E,E)`` user (V units)."""
    q, v = [], []
    if nu.qF > 0:
        q.append(nu.qF), v.append(0)
    if nu.qO > 0:
        q.append(nu.qO), v.append(K)
    vK = 0.0
    if nu.qZ > 0:
        KE = K * nu.E
        a = math.floor(KE)
        fr = KE - a
        if fr > 0:
            q += [nu.qZ * (1 - fr), nu.qZ * fr]
            v += [a, a + 1]
            vK = fr * (1 - fr) / K ** 2
        else:
            q.append(nu.qZ), v.append(a)
    return q, v, vK


def lattice_table(nu: Nuisance, m0: int, K: int, half_width_V: float) -> Table:
    """Law of the integerised nuisance ``V'_{m0}`` on ``Z/K`` by characteristic-function
    inversion (inverse real FFT), with element-wise error bounds."""
    if m0 <= 0:
        return Table(None, np.array([0.0, 1.0]), np.zeros(2), 0.0, 0.0, 0.0, 0.0, 0.0,
                     origin=0, K=K, size=1, pmax=1.0)
    q, v, _ = lattice_cats(nu, K)
    q = np.asarray(q, dtype=float)
    vv = np.asarray(v, dtype=float)
    mu_l = float(np.dot(q, vv))
    var_l = max(float(np.dot(q, (vv - mu_l) ** 2)), 0.0)
    b_l = float(np.max(np.abs(vv - mu_l))) + 1e-300
    c0 = int(round(m0 * mu_l))
    L = -LOG_TAU_V
    t_al = float(bernstein_t(np.array(float(m0)), var_l, b_l, L)) + abs(c0 - m0 * mu_l) + 2
    H = int(math.ceil(max(half_width_V * K, t_al))) + 4
    N = sfft.next_fast_len(2 * H + 2, real=True)
    if N % 2:
        N += 1
    origin = c0 - N // 2
    # Bernstein mass outside [origin, origin + N): both sides at distance >= N/2 - |c0 - mean|
    d_out = N / 2 - abs(c0 - m0 * mu_l) - 1
    tau = 2 * math.exp(-d_out ** 2 / (2 * (m0 * var_l + b_l * d_out / 3))) if d_out > 0 else 1.0
    tau = min(1.0, tau)
    # centred log characteristic function at omega_j = 2 pi j / N, j = 0..N/2, in blocks of
    # LATTICE_BLOCK frequencies (the element-wise terms of one block at a time: memory)
    s = c0 / m0
    nj = N // 2 + 1
    U1 = float(np.dot(q, np.abs(vv - s) + abs(s)))
    # the frequencies j >= J carry |psi_j| <= CF_NEGLIGIBLE (certified, cf_cut): psi_j = 0
    # there (irfft zero-pads), each with that error bound and modulus bound
    J = cf_cut(q, vv, m0, N)
    psi = np.empty(J, dtype=complex)
    sum_e = sum_mod = 0.0
    for j0 in range(0, J, LATTICE_BLOCK):
        j = np.arange(j0, min(J, j0 + LATTICE_BLOCK))
        psi[j0:j0 + j.size], e_b, mod_b = _lattice_cf(q, vv, s, m0, N, j, U1)
        # trapezoid weights: 1 at j = 0 and j = N/2, 2 elsewhere
        mult = np.full(j.size, 2.0)
        mult[j == 0] = 1.0
        mult[j == nj - 1] = 1.0
        sum_e += float(np.dot(mult, e_b))
        sum_mod += float(np.dot(mult, mod_b))
    sum_e += 2.0 * (nj - J) * CF_NEGLIGIBLE
    sum_mod += 2.0 * (nj - J) * CF_NEGLIGIBLE
    log2N = math.log2(N)
    eps_p = 1.01 * (sum_e + 10 * U * log2N * sum_mod) / N
    p = sfft.irfft(psi, N)
    del psi
    vc = m0 * nu.mu
    F, G = cumulate_lattice(origin, K, p, vc)
    pmax = min(1.0, float(p.max()) + eps_p)
    pmax = max(pmax, tau)
    span = max(abs(origin / K - vc), abs((origin + N - 1) / K - vc))
    return Table(None, F, G, vc, rel=2e-12, abs_p=eps_p, alias=tau, out=tau, origin=origin,
                 K=K, size=N, pmax=pmax, span=span)


def cf_cut(q: np.ndarray, vv: np.ndarray, m0: int, N: int) -> int:
    """Smallest ``J`` (at most ``N // 2 + 1``) such that every frequency
    ``omega_j = 2 pi j / N`` with ``J <= j <= N / 2`` has ``|phi(omega_j)|^m0 <= e^-760``
    (far below :data:`CF_NEGLIGIBLE`), ``phi`` the characteristic function of the integerised
    per-user law (masses ``q`` on the integers ``vv``).

    Why: ``|phi(w)|^2 = 1 - 2 sum_{a<b} q_a q_b (1 - cos(w (v_a - v_b)))``, every term
    ``>= 0``; keeping only the pairs at distance 1 (``s1 = sum q_a q_b`` over them) and using
    that ``1 - cos w`` increases on ``[0, pi]``, ``|phi(w)|^2 <= 1 - 2 s1 (1 - cos w_J)`` for
    every ``w`` in ``[w_J, pi]``; with ``1 - cos x >= x^2/2 - x^4/24`` and
    ``log(1 - y) <= -y``, ``|phi(w)|^m0 <= exp(-m0 s1 (w_J^2/2)(1 - w_J^2/12))``.  ``J`` is
    the first index where that exponent (computed with relative margins of ``1e-9`` against
    its rounding) reaches 760 (the float masses sum to 1 within ~1e-15, which moves that
    exponent by ~m0 1e-15, far inside the margin of 760 over the 690 of
    :data:`CF_NEGLIGIBLE`).  No distance-1 pair (a periodic lattice): no cut (``N//2 + 1``).
    At ``n = 10^11`` about 300 of 2.4 million frequencies remain (the others underflow anyway:
    the cut saves their evaluation, not accuracy)."""
    nj = N // 2 + 1
    s1 = 0.0
    for a in range(len(q)):
        for b in range(a + 1, len(q)):
            if abs(float(vv[a]) - float(vv[b])) == 1.0:
                s1 += float(q[a]) * float(q[b])
    s1 *= 1 - 1e-9
    if not (s1 > 0 and m0 > 0):
        return nj
    # first guess from w_J^2 ~ 2 * 760 / (m0 s1), then walk up until the bound holds
    w_need = math.sqrt(2 * 760.0 / (m0 * s1))
    J = max(1, int(math.floor(w_need * N / (2 * math.pi))))
    while J < nj:
        w = (2 * math.pi * J / N) * (1 - 1e-9)
        if w <= math.pi and m0 * s1 * (0.5 * w * w) * (1 - w * w / 12) * (1 - 1e-9) >= 760.0:
            return J
        J = J + max(1, J // 64)
    return nj


def _lattice_cf(q: np.ndarray, vv: np.ndarray, s: float, m0: int, N: int, j: np.ndarray,
                U1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the frequencies ``omega_j = 2 pi j / N`` of one block: the irfft input ``psi_j``
    (``E[exp(-i omega (V - origin))]``, the centred characteristic function to the power
    ``m0``), its element-wise error bound ``e_j`` and its modulus (:func:`lattice_table`)."""
    omega = (2 * math.pi / N) * j
    zr = np.zeros(j.size)
    zi = np.zeros(j.size)
    for qc, vc_ in zip(q, vv):
        th = omega * (vc_ - s)
        sh = np.sin(0.5 * th)
        zr -= 2.0 * qc * sh * sh
        zi += qc * np.sin(th)
    absz = np.hypot(zr, zi)
    one_z = np.hypot(1.0 + zr, zi)                 # |phi|
    with np.errstate(divide="ignore", invalid="ignore"):
        Lr = 0.5 * np.log1p(2.0 * zr + absz * absz)
        Li = np.arctan2(zi, 1.0 + zr)
    eps_z = 11 * U * omega * U1 + 4 * U * absz
    mag = m0 * Lr
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        modulus = np.exp(mag)
        # irfft needs E[exp(-i omega (V - origin))] = conj(centred CF) * (-1)^j
        phase = math.pi * j - m0 * Li
        psi = modulus * (np.cos(phase) + 1j * np.sin(phase))
        good = one_z - eps_z > 0.5
        delta = np.where(good, (eps_z + 8 * U * absz * (1 + absz))
                         / (one_z * np.maximum(one_z - eps_z, 1e-300)) + 4 * U * np.abs(Lr + 1j * Li),
                         np.inf)
        ex = m0 * delta + 2 * U * (np.abs(m0 * Li) + np.abs(mag)) + 2 * U
        e_good = modulus * (np.expm1(np.minimum(ex, 700.0)) + 8 * U)
        # far region: |psi - psi~| <= |psi~| + (|phi~| + eps_z)^m0
        e_far = modulus + np.exp(m0 * np.log(np.minimum(1.0, one_z + eps_z)))
        e = np.where(good & (ex < 1.0), e_good, e_far)
    return psi, e, modulus
