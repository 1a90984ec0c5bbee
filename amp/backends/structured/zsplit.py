"""The z-split nuisance tables: exact evaluation of ``g_m(c)`` by conditioning on ``Z``.

Implements the ``zsplit`` nuisance tables of :mod:`amp.backends.structured` (moderate ``n``, large
``E``): given ``Z = z``, ``O ~ Bin(m - z, kappa)``, so
``g_m(c) = sum_z P(Z = z) E[(c - beta E z - beta O)_+]``.  One table of ``Z`` rows (one per
``T``) and one of cumulative ``O`` rows (one per ``N = m - z``), both on common Chernoff
windows (:func:`zsplit_geometry`, :func:`build_zsplit`); per band element the ``z`` with
``c - beta E z`` above the ``O`` window are a closed form, those below contribute a tail only,
and the ``~ (o window) / E`` in between are one lookup each (:func:`zsplit_eval`).  No
approximation; all sums are of non-negative terms (summation by parts).

Certified error terms owned here: the Chernoff masses ``tau_Z``, ``tau_O`` outside the common
windows (every row, by stochastic monotonicity in the number of trials), the upper tail
``beta E[(O - o_hi)_+]`` of the closed form (:func:`.binomial.excess_bound`), the relative and
absolute errors of the binomial rows (:func:`.binomial.binom_rows`) and of the nested
cumulative sums, and the rounding of ``c'`` and of the table index.

The functions take the eps-free count model (:class:`.model.CountModel`) as ``mod``; this
module does not import it (the model imports this one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp.core.floats import U
from amp.core.tails import binom_window
from amp.backends.structured.binomial import binom_rows, excess_bound

__all__ = ["ZSplitTables", "zsplit_geometry", "build_zsplit", "zsplit_eval"]


def _cum_seq(W: int) -> float:
    """Relative error bound of two nested sequential cumulative sums of ``W`` non-negative
    terms (``numpy.cumsum`` along an axis): ``2 W u`` with a margin."""
    return 2.02 * (W + 1) * U


def _cumcum(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise ``F[:, i] = sum_{j < i} P[:, j]`` and ``FF[:, i] = sum_{j < i} F[:, j]``
    (``i = 0..W``); sums of non-negative terms (relative error ``<= _cum_seq(W)``)."""
    R, W = P.shape
    F = np.zeros((R, W + 1))
    np.cumsum(P, axis=1, out=F[:, 1:])
    FF = np.zeros((R, W + 1))
    np.cumsum(F[:, :-1], axis=1, out=FF[:, 1:])
    return F, FF


@dataclass
class ZSplitTables:
    """Eps-free tables of the z-split plan for one model (see :func:`zsplit_eval`).

    ``V = O + E Z``: ``Z ~ Bin(m, qZ)`` (rows ``m = n - T`` for the ``T`` window, common window
    ``[z_lo, z_hi]``) and, given ``Z = z``, ``O ~ Bin(N, kappa)`` with ``N = m - z`` (rows
    ``N_min..N_max``, common window ``[o_lo, o_hi]``).  Stochastic monotonicity in the number of
    trials makes the common windows' tail bounds hold for every row."""

    z_lo: int
    z_hi: int
    o_lo: int
    o_hi: int
    N_min: int
    kappa: float
    PZ: np.ndarray          # (rows T, Wz) masses of Z
    PZc: np.ndarray         # cumulative (rows T, Wz + 1)
    PZcc: np.ndarray        # cumulative of the cumulative
    FO: np.ndarray          # (rows N, Wo + 1) cumulative masses of O, raveled
    FFO: np.ndarray         # cumulative of the cumulative, raveled
    Wo: int
    rel_Z: float
    rel_O: float
    sabs_Z: float
    sabs_O: float
    tau_Z: float            # P(Z < z_lo) + P(Z > z_hi) (every row)
    tau_O: float            # P(O < o_lo) + P(O > o_hi) (every row)
    e_O: float              # E[(O - o_hi)_+] (every row)
    size: int


def zsplit_geometry(mod) -> tuple[int, int, int, int, int, int, float, float]:
    """Windows ``(z_lo, z_hi, o_lo, o_hi, N_min, N_max)`` of the z-split tables of ``mod`` and
    the tail masses ``tau_Z``, ``tau_O`` outside them (every row)."""
    nu = mod.nu
    kappa = nu.kappa
    m_min, m_max = int(mod.m.min()), int(mod.m.max())
    z_lo, _, tz, _ = binom_window(m_min, nu.qZ, mod.log_tau)
    _, z_hi, _, tz2 = binom_window(m_max, nu.qZ, mod.log_tau)
    N_min, N_max = max(m_min - z_hi, 0), max(m_max - z_lo, 0)
    o_lo, _, to, _ = binom_window(N_min, kappa, mod.log_tau)
    _, o_hi, _, to2 = binom_window(N_max, kappa, mod.log_tau)
    tau_Z = min(1.0, (math.exp(tz) if z_lo > 0 else 0.0) + math.exp(tz2))
    tau_O = min(1.0, (math.exp(to) if o_lo > 0 else 0.0) + math.exp(to2))
    return z_lo, z_hi, o_lo, o_hi, N_min, N_max, tau_Z, tau_O


def build_zsplit(mod) -> ZSplitTables:
    """The eps-free tables of the z-split plan of the count model ``mod``."""
    nu = mod.nu
    z_lo, z_hi, o_lo, o_hi, N_min, N_max, tau_Z, tau_O = mod.zsplit_geometry()
    kappa = nu.kappa
    PZ, rel_Z, sabs_Z = binom_rows(mod.m.astype(np.int64), z_lo, z_hi, nu.qZ)
    PZc, PZcc = _cumcum(PZ)
    PO, rel_O, sabs_O = binom_rows(np.arange(N_min, N_max + 1), o_lo, o_hi, kappa)
    FO, FFO = _cumcum(PO)
    Wo = o_hi - o_lo + 1
    return ZSplitTables(z_lo, z_hi, o_lo, o_hi, N_min, kappa, PZ, PZc, PZcc, FO.ravel(),
                        FFO.ravel(), Wo, rel_Z, rel_O, sabs_Z, sabs_O,
                        tau_Z=tau_Z, tau_O=tau_O,
                        e_O=excess_bound(N_max, kappa, o_hi), size=PZ.size + FO.size)


def zsplit_eval(mod, zs: ZSplitTables, T_idx: np.ndarray, c: np.ndarray,
                c_err: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Certified ``(lower, upper)`` of ``g(c) = E[(c - beta V_m)_+]``, ``m = n - T``, for every
    band element (``T = Ts[T_idx]``), exact up to tails and rounding.

    ``g(c) = sum_z P(Z = z) H_{m-z}(c - beta E z)`` with ``H_N(c') = E[(c' - beta O_N)_+]``.
    ``c' = c - beta E z`` decreases in ``z``:

    * ``c' >= beta o_hi`` (``z <= z1``): ``H = c' - beta N kappa + beta E[(O - c'/beta)_+]``, in
      ``[c' - beta N kappa, ... + beta E[(O - o_hi)_+]]``; the ``z``-sum is closed form,
      ``sum_{z <= z1} P(z) (a1 + b (z1 - z)) = a1 P(Z <= z1) + b sum_{j < z1} P(Z <= j)`` with
      ``a1 = c - beta m kappa - b z1``, ``b = beta (E - kappa)`` (no cancellation).
    * ``c' < beta o_lo`` (``z >= z0``): ``0 <= H <= c'_+ P(O < o_lo)``.
    * the ``~ (o_hi - o_lo) / E + 3`` values in between (one ``z`` of margin on each side, so
      that rounding cannot misplace a ``z``): ``H = (c' - beta k) F(k) + beta FF(k)``,
      ``k = min(floor(c' / beta), o_hi)``, from the cumulative tables of ``O`` (summation by
      parts: no cancellation), plus ``c'_+ P(O outside)``.

    Rounding: ``H`` is ``F``-Lipschitz in ``c'`` and an off-by-one index changes it by the
    boundary atom's ``(c' - beta k) P(k)`` with ``|c' - beta k|`` at rounding level; both are
    covered by ``rad * (F(k + 1) + P(O < o_lo))`` per pair.  Relative errors of the tabulated
    masses and their cumulative sums multiply non-negative terms."""
    E = mod.E
    kap = zs.kappa
    m = mod.m[T_idx]
    cb = c / beta
    # one z of margin on each side: c'/beta moves by E > 1 per z, so the zones below hold
    # whatever the rounding of cb
    z1 = np.floor((cb - zs.o_hi) / E) - 1
    z0 = np.floor((cb - zs.o_lo) / E) + 2
    z1c = np.clip(z1, zs.z_lo - 1, zs.z_hi).astype(np.int64)
    z0c = np.clip(z0, zs.z_lo, zs.z_hi + 1).astype(np.int64)
    z0c = np.maximum(z0c, z1c + 1)
    Wz = zs.z_hi - zs.z_lo + 1
    # linear zone
    li = z1c - zs.z_lo + 1
    Pc = zs.PZc[T_idx, li]
    CC = zs.PZcc[T_idx, li]
    b = beta * (E - kap)
    a1 = c - beta * m * kap - b * z1c
    lin = a1 * Pc + b * CC
    mag_lin = np.abs(a1) * Pc + b * CC
    ea1 = c_err + 8 * U * (np.abs(c) + beta * m * kap + b * np.abs(z1c))
    r_lin = zs.rel_Z + _cum_seq(Wz) + 8 * U
    # middle zone, flattened
    nm = z0c - z1c - 1
    tot = int(nm.sum())
    mid = np.zeros(c.size)
    if tot:
        ez = np.repeat(np.arange(c.size), nm)
        start = np.cumsum(nm) - nm
        zz = (z1c + 1)[ez] + (np.arange(tot) - start[ez])
        cp = c[ez] - (beta * E) * zz
        k = np.floor(cp / beta)
        kk = np.clip(k, zs.o_lo - 1, zs.o_hi)
        i = (kk - zs.o_lo + 1).astype(np.int64)
        # rows N = m - z (z > m has P(Z = z) = 0: any row will do)
        iN = np.clip(m[ez] - zz - zs.N_min, 0, zs.FO.size // (zs.Wo + 1) - 1).astype(np.int64)
        flat = iN * (zs.Wo + 1) + i
        F = zs.FO[flat]
        FF = zs.FFO[flat]
        h = np.maximum(cp - beta * kk, 0.0) * F + beta * FF
        wz = zs.PZ[T_idx[ez], zz - zs.z_lo]
        mid = np.bincount(ez, weights=wz * h, minlength=c.size)
        # rounding of c' and k: H is F-Lipschitz, an off-by-one index moves it by the boundary
        # atom's (c' - beta k) P(k); both <= rad * (F(k + 1) + P(O < o_lo))
        rad = 2 * c_err[ez] + 16 * U * (np.abs(cp) + np.abs(c[ez]) + beta * E * np.abs(zz)
                                        + beta * (np.abs(kk) + 2))
        F1 = zs.FO[flat + (i < zs.Wo)]
        mid_err = np.bincount(ez, weights=wz * rad * (F1 + zs.tau_O), minlength=c.size)
    else:
        mid_err = np.zeros(c.size)
    r_mid = zs.rel_Z + zs.rel_O + _cum_seq(zs.Wo + 1) + 16 * U
    cpos = np.maximum(c + c_err, 0.0)
    absm = (cpos + np.abs(a1) + b * Wz) * zs.sabs_Z + beta * (zs.Wo + 2) * zs.sabs_O
    lo = lin - r_lin * mag_lin - ea1 * Pc + mid * (1 - r_mid) - mid_err * (1 + r_mid) - absm
    up = (lin + r_lin * mag_lin + ea1 * Pc + (mid + mid_err) * (1 + r_mid) + absm
          + beta * zs.e_O * Pc + cpos * (zs.tau_Z + zs.tau_O))
    return np.maximum(lo, 0.0), np.maximum(up, 0.0)

