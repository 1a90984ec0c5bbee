"""Certified ``delta`` for GPARV laws with the Table 1 structure (Theorem 4, Section 5.1).

Shape
-----
For every Table 1 row (k-RR, RAPPOR, OUE, BLH, HR) and their exact finite forms, the blanket
atoms ``(a, b)`` of the GPARV law (:class:`amp.mechanisms.gparv.GPARV`) lie in
``{(1, 1), (E, 1), (1, E), (E, E)}`` for one ``E > 1`` (here ``E = e^eps0``), plus the atom
``G = 0`` (mass ``1 - gamma``, or explicit ``(0, 0)`` atoms).  With ``w = e^eps``,
``beta = w - 1`` and the multinomial counts ``X`` of ``(E, 1)``, ``Y`` of ``(1, E)``, ``O`` of
``(1, 1)`` and ``Z`` of ``(E, E)``,

    S = G_1 + ... + G_n = (E - w) X + (1 - w E) Y - beta V,      V = O + E Z,

and ``delta(eps) = E[S_+] / n``.  The count law does not depend on ``eps``.

Algorithm (``delta_bracket_structured``)
----------------------------------------
Condition on ``T = X + Y ~ Bin(n, pX + pY)``; given ``T``, ``X ~ Bin(T, r)`` (``r = pX/(pX+pY)``)
and the *nuisance* ``V`` of the ``m = n - T`` other users are independent.  For every ``T`` in a
Chernoff window and ``c(T, x) = (E - w) x + (1 - w E)(T - x)`` the inner value is
``g_m(c) = E[(c - beta V_m)_+]``, split by a Bernstein window ``[m mu - t, m mu + t]`` of ``V_m``:

* ``c >= beta (m mu + t)`` (linear region, all ``x >= x_hi(T)``): ``g = c - beta m mu`` up to
  ``+ beta E[(V - m mu - t)_+]`` (Bernstein).  The sum over ``x`` is closed form:
  ``sum_{x>=k} P(x)(c(x) - beta m mu) = (cbar - beta m mu) P(x >= k) + A (1-r) k P(x = k)``.
* ``c <= beta (m mu - t)`` (zero region): ``0 <= g <= beta (m mu - t) P(V <= m mu - t)``.
* the few ``x`` in between (the *band*, ``~ 2 beta t / A`` of them, ``A = (E-1)(1+w)``):
  ``g`` from a table of the nuisance law (cumulative mass and first moment), one lookup each.

Nuisance tables (eps-free, reused across ``eps``):

* ``exact`` (small ``n``): one table per ``T`` with the exact atoms ``o + E z`` (multinomial
  masses from Boost's binomial pmf); no approximation.
* ``zsplit`` (moderate ``n``, large ``E``): condition on ``Z``: given ``Z = z``, ``O`` is
  ``Bin(m - z, kappa)``, so ``g_m(c) = sum_z P(Z = z) E[(c - beta E z - beta O)_+]``.  One table
  of ``Z`` rows (one per ``T``) and one of cumulative ``O`` rows (one per ``N = m - z``), both
  on common Chernoff windows; per band element the ``z`` with ``c - beta E z`` above the ``O``
  window are a closed form (``E[(c' - beta O)_+] = c' - beta N kappa`` up to an upper tail),
  those below contribute a tail only, and the ``~ (o window) / E`` in between are one lookup
  each.  No approximation; all sums are of non-negative terms (summation by parts).
* ``lattice``: ``T`` is cut into blocks of ``b`` consecutive values; block ``[T_b - b + 1, T_b]``
  uses the law of ``V'_{m0}``, ``m0 = n - T_b``, computed by inverting its characteristic function
  (closed form, centred, ``exp(m0 log phi)``) with an inverse FFT on the lattice ``Z / K``.
  Two controlled approximations, each with a proven second-order bound:

  - *integerisation* (only with ``(E, E)`` atoms): each ``(E, E)`` user's ``E`` is replaced by
    ``floor(K E)/K`` or ``ceil(K E)/K`` with the probabilities that keep its mean.  This is a
    mean-preserving spread, so the table value is an **upper** bound; the lower end subtracts
    ``beta [s1 E N^2 / 2 + s0 E|N|]`` where ``N`` is the rounding noise and ``s1 l + s0`` bounds
    the mass of any interval of length ``l`` under ``V`` (from the binomial law of ``O`` given
    ``Z``, or of ``Z`` given ``O``).  ``K`` is a continued-fraction denominator of ``E`` (small
    ``frac(K E)(1 - frac(K E)) / K^2``).
  - *block shift*: for ``T`` in the block, ``V'_m = V'_{m0} + V'_j`` with ``j = T_b - T`` extra
    users; Jensen gives ``g >= h(c - beta j mu)`` (table value), and the same smoothing argument
    bounds the excess by ``beta [s1 E Delta^2 / 2 + s0 E|Delta|]``, ``Delta = V'_j - j mu``.

  Block size ``b`` and ``K`` are chosen from these bounds so that their share of the bracket is
  small (``b`` = whole window at ``n = 10^8``).

Certified error terms (all added to the upper end / subtracted from the lower end)
---------------------------------------------------------------------------------
* ``T`` outside its window: ``S_+ <= (E - w) T``, so ``(E - w) E[T; T outside]`` (Chernoff).
* Bernstein tails of ``V_m`` in the linear and zero regions (above).
* the table's own error: for lattice tables, the element-wise bound on the inverted
  characteristic function (rounding of ``log phi``, of ``exp``, of the inverse FFT:
  ``10 u log2 N``), aliasing (Bernstein mass outside the FFT window), mass outside the window;
  for exact tables the Chernoff mass outside the ``(o, z)`` window.
* the two gaps above (lattice tables only).
* floating point: Boost's binomial ``pmf``/``sf`` (``scipy.stats.binom``) are assumed accurate
  to a relative ``2e-10`` (observed ``< 2e-11`` at ``n = 10^8`` against 40-digit references;
  ``scipy.special.bdtr*`` (Cephes) and ``binom.logpmf`` (``gammaln`` differences) are *not*
  used: they lose ``1e-7`` at ``n = 10^8``); the two cancelling closed forms get explicit
  bounds; all other sums are of non-negative terms and carry a relative factor ``1 +- 1e-9``.

A :class:`~amp.core.errors.NumericalError` is raised when the bracket cannot be made narrower than
``rel_tol``.  :func:`epsilon_bracket_structured` searches ``eps(delta)`` reusing the count
machinery (the tables are computed once per ``(law, n)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
from scipy import fft as sfft
from scipy import optimize, stats

from amp.core import validate as V
from amp.delta.dispatch import DEFAULT_ABS_TOL, DeltaResult, atom_floor, chernoff_upper, widen
from amp.core.errors import NumericalError, ParameterError
from amp.mechanisms.gparv import GPARV
from amp.epsilon import saddle_log_delta

__all__ = ["supports", "delta_bracket_structured", "epsilon_bracket_structured",
           "StructuredShape", "structured_shape"]

U = np.finfo(float).eps / 2            # unit round-off
TINY = np.nextafter(0.0, 1.0)
SHAPE_RTOL = 1e-12                     # atoms within this relative distance count as equal
ETA_BINOM = 2e-10                      # assumed relative accuracy of Boost binom pmf / sf
REL_SAFETY = 1e-9                      # relative factor on sums of non-negative terms
LOG_TAU_V = -math.log(1e18)            # Bernstein tail level of the nuisance windows
WIDTH_GOAL = 1e-6                      # aimed relative width (never above rel_tol)
EXACT_BUDGET = 8_000_000               # (o, z) cells summed over the tables of a plan
MAX_BAND = 40_000_000                  # band elements per evaluation
MAX_TABLE_POINTS = 1 << 24             # lattice points of the tables of one plan (16 B each)


# ----------------------------------------------------------------------------- the shape
@dataclass(frozen=True)
class StructuredShape:
    """Masses of the four blanket atom types and the off atom, with the common ratio ``E``.

    ``pO``: ``(1, 1)``; ``pX``: ``(E, 1)``; ``pY``: ``(1, E)``; ``pZ``: ``(E, E)``;
    ``pF``: ``G = 0`` (``1 - gamma`` and explicit ``(0, 0)`` atoms).  ``dev_a``/``dev_b``
    are ``sum_j p_j |a_j - a_j'|`` (resp. ``b``) between the law and its idealised shape
    (0 for the library's mechanisms); they are added to the bracket.
    """

    E: float
    pO: float
    pX: float
    pY: float
    pZ: float
    pF: float
    dev_a: float = 0.0
    dev_b: float = 0.0


def structured_shape(law: GPARV) -> StructuredShape | None:
    """The :class:`StructuredShape` of ``law``, or ``None`` if it does not have that shape."""
    a = np.asarray(law.a, dtype=float)
    b = np.asarray(law.b, dtype=float)
    p = np.asarray(law.p, dtype=float)
    tol = SHAPE_RTOL
    is0a, is0b = np.abs(a) <= tol, np.abs(b) <= tol
    off = is0a & is0b
    if np.any(is0a ^ is0b):
        return None
    one_a, one_b = np.abs(a - 1) <= tol, np.abs(b - 1) <= tol
    cand = np.concatenate([a[~off & ~one_a], b[~off & ~one_b]])
    if cand.size:
        E = float(cand.max())
        if E <= 1 + 1e-9 or np.any(np.abs(cand - E) > tol * E):
            return None
    else:
        E = 2.0                       # only (1,1)/(0,0) atoms: any E works (S <= 0)
    e_a, e_b = np.abs(a - E) <= tol * E, np.abs(b - E) <= tol * E
    if np.any(~off & ~(one_a | e_a)) or np.any(~off & ~(one_b | e_b)):
        return None
    ideal_a = np.where(off, 0.0, np.where(one_a, 1.0, E))
    ideal_b = np.where(off, 0.0, np.where(one_b, 1.0, E))
    pO = float(p[~off & one_a & one_b].sum())
    pX = float(p[~off & e_a & one_b].sum())
    pY = float(p[~off & one_a & e_b].sum())
    pZ = float(p[~off & e_a & e_b].sum())
    pF = max(0.0, 1.0 - (pO + pX + pY + pZ))
    dev_a = float(np.dot(p, np.abs(a - ideal_a)))
    dev_b = float(np.dot(p, np.abs(b - ideal_b)))
    return StructuredShape(E, pO, pX, pY, pZ, pF, dev_a, dev_b)


def supports(law: GPARV) -> bool:
    """True when every atom of ``law`` is ``(1,1), (E,1), (1,E), (E,E)`` or ``(0,0)`` for one
    ``E > 1`` (within ``1e-12`` relative): the shape of every Table 1 row and finite form."""
    try:
        return structured_shape(law) is not None
    except (ValueError, FloatingPointError):   # pragma: no cover - defensive
        return False


# ----------------------------------------------------------------------------- helpers
def _kl(a: float, p: float) -> float:
    """Bernoulli Kullback-Leibler divergence ``KL(a || p)`` (``inf`` when undefined)."""
    if a < 0 or a > 1:
        return math.inf
    out = 0.0
    if a > 0:
        if p <= 0:
            return math.inf
        out += a * math.log(a / p)
    if a < 1:
        if p >= 1:
            return math.inf
        out += (1 - a) * math.log((1 - a) / (1 - p))
    return max(out, 0.0)


def _log_tail_ge(n: int, p: float, k: int) -> float:
    """Chernoff bound on ``log P(Bin(n, p) >= k)`` (0 when ``k <= n p``)."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    if k <= n * p:
        return 0.0
    return -n * _kl(k / n, p)


def _log_tail_le(n: int, p: float, k: int) -> float:
    """Chernoff bound on ``log P(Bin(n, p) <= k)``."""
    if k < 0:
        return -math.inf
    if k >= n:
        return 0.0
    if k >= n * p:
        return 0.0
    return -n * _kl(k / n, p)


def _binom_window(n: int, p: float, log_tau: float) -> tuple[int, int, float, float]:
    """``[lo, hi]`` with ``log P(X < lo), log P(X > hi) <= log_tau`` (Chernoff), and the two
    log tail bounds actually reached."""
    if n <= 0 or p <= 0:
        return 0, 0, -math.inf, -math.inf
    if p >= 1:
        return n, n, -math.inf, -math.inf
    mu, sd = n * p, math.sqrt(n * p * (1 - p))
    w = math.sqrt(2 * -log_tau) * sd + 2 * (-log_tau) / 3 + 2
    hi = min(n, int(math.ceil(mu + w)))
    while hi < n and _log_tail_ge(n, p, hi + 1) > log_tau:
        hi = min(n, hi + max(1, int(0.1 * w)))
    step = max(1, int(0.02 * w))
    while hi - step > mu and _log_tail_ge(n, p, hi - step + 1) <= log_tau:
        hi -= step
    lo = max(0, int(math.floor(mu - w)))
    while lo > 0 and _log_tail_le(n, p, lo - 1) > log_tau:
        lo = max(0, lo - max(1, int(0.1 * w)))
    while lo + step < mu and _log_tail_le(n, p, lo + step - 1) <= log_tau:
        lo += step
    return lo, hi, _log_tail_le(n, p, lo - 1), _log_tail_ge(n, p, hi + 1)


def _pmf(k, n, p):
    return stats.binom.pmf(k, n, p)


def _sf(k, n, p):
    return stats.binom.sf(k, n, p)


def _binom_max_pmf(k: int, p: float) -> float:
    """Largest point mass of ``Bin(k, p)`` (an upper bound, with the Boost accuracy margin)."""
    if k <= 0 or p <= 0 or p >= 1:
        return 1.0
    mode = int(math.floor((k + 1) * p))
    cand = [c for c in (mode - 1, mode, min(k, mode + 1)) if 0 <= c <= k]
    return min(1.0, float(np.max(_pmf(np.array(cand), k, p))) * (1 + 1e-8))


def _bernstein_t(m: np.ndarray, var: float, bmax: float, L: float) -> np.ndarray:
    """``t`` with ``exp(-t^2 / (2 (m var + bmax t / 3))) = exp(-L)``."""
    c = bmax * L / 3.0
    return c + np.sqrt(c * c + 2.0 * m * var * L)


def _cf_denominators(E: float, kmax: int) -> list[int]:
    """Denominators ``K <= kmax`` of the best rational approximations of ``E`` (ascending)."""
    out = []
    for K in range(1, kmax + 1):
        fr = K * E - math.floor(K * E)
        v = fr * (1 - fr) / K ** 2
        if not out or v < out[-1][1] * 0.5:
            out.append((K, v))
    return [k for k, _ in out]


# ----------------------------------------------------------------------------- nuisance
@dataclass
class _Nuisance:
    """Law of one non-informative user given ``T``: value 0 (off), 1 (``(1,1)``), E (``(E,E)``)."""

    E: float
    qO: float
    qZ: float
    qF: float

    @property
    def mu(self) -> float:
        return self.qO + self.E * self.qZ

    @property
    def kappa(self) -> float:
        """``P((1,1) | not (E,E))``: given ``Z = z``, ``O ~ Bin(m - z, kappa)``."""
        return self.qO / (self.qO + self.qF) if self.qO + self.qF > 0 else 0.0

    @property
    def var(self) -> float:
        return max(0.0, self.qO + self.E ** 2 * self.qZ - self.mu ** 2)

    @property
    def bmax(self) -> float:
        vals = [v for v, q in ((0.0, self.qF), (1.0, self.qO), (self.E, self.qZ)) if q > 0]
        return max([abs(v - self.mu) for v in vals] + [1e-300])

    @property
    def vmax(self) -> float:
        return self.E if self.qZ > 0 else (1.0 if self.qO > 0 else 0.0)

    def _smooth(self, q: float, q_other: float, m: int) -> tuple[float, float]:
        """``(pmax, tail)`` from the binomial law of the count with cell mass ``q`` given the
        count with mass ``q_other`` (at most its Chernoff quantile, ``tail`` beyond it)."""
        if q <= 0 or self.qF <= 0 or m <= 0:
            return 1.0, 0.0
        if q_other > 0:
            _, hi, _, lt = _binom_window(m, q_other, -46.0)
            tail = math.exp(lt)
        else:
            hi, tail = 0, 0.0
        return _binom_max_pmf(m - hi, q / (q + self.qF)), tail

    def smooth_O(self, m: int) -> tuple[float, float]:
        """``(pmax, tail)``: ``P(V_m in I) <= pmax (|I| + 1) + tail`` from ``O | Z`` binomial."""
        return self._smooth(self.qO, self.qZ, m)

    def smooth_Z(self, m: int) -> tuple[float, float]:
        """``(pmax, tail)``: ``P(V_m in I) <= pmax (|I|/E + 1) + tail`` from ``Z | O``."""
        return self._smooth(self.qZ, self.qO, m)


def _gap(options: list[tuple[float, float]], M2, M1):
    """``min`` over smoothing bounds ``(s1, s0)`` of ``s1 M2 / 2 + s0 M1`` (Jensen gap / beta);
    ``P(V in I) <= s1 |I| + s0`` for every interval ``I``."""
    M2 = np.asarray(M2, dtype=float)
    M1 = np.asarray(M1, dtype=float)
    out = M1.copy()
    for s1, s0 in options:
        out = np.minimum(out, min(1.0, s0) * M1 + s1 * M2 / 2)
    return np.where(M2 > 0, out, 0.0)


@dataclass
class _Table:
    """Cumulative law of a nuisance variable on sorted atoms ``vals`` (V units).

    ``F[i] = sum_{k < i} p_k`` and ``G[i] = sum_{k < i} (v_k - vc) p_k`` (``i = 0..len``), so that
    ``E[(c - beta V)_+] = (c - beta vc) F[i] - beta G[i]`` with ``i = #{v_k <= c / beta}``.
    Errors: each tabulated mass is within ``rel * p + abs_p`` of the truth (``abs_p`` only for
    lattices); ``alias`` mass may be double counted (lower end subtracts it); ``out`` mass lies
    outside the table (upper end adds ``c * out``).
    """

    vals: np.ndarray | None      # None for a lattice: v_k = (origin + k) / K
    F: np.ndarray
    G: np.ndarray
    vc: float
    rel: float
    abs_p: float
    alias: float
    out: float
    origin: int = 0
    K: int = 1
    size: int = 0
    pmax: float = 1.0            # sup of the point masses (lattice smoothing)
    span: float = 0.0            # max |v - vc| over the atoms

    def index(self, cb: np.ndarray) -> np.ndarray:
        """Number of atoms ``<= cb`` (``cb = c / beta``, V units)."""
        if self.vals is None:
            i = np.floor(cb * self.K) - self.origin + 1
            return np.clip(i, 0, self.size).astype(np.int64)
        return np.searchsorted(self.vals, cb, side="right")

    def lookup(self, c: np.ndarray, c_err: np.ndarray, beta: float
               ) -> tuple[np.ndarray, np.ndarray]:
        """Certified ``(lower, upper)`` of ``E[(c* - beta V)_+]`` for every ``c*`` within
        ``c_err`` of ``c`` (``beta > 0``)."""
        cb = c / beta
        i = self.index(cb)
        F, G = self.F[i], self.G[i]
        cc = c - beta * self.vc
        h = cc * F - beta * G
        # h is F-Lipschitz in c: perturbations of c (and of the index) cost <= F(c + r) r
        rad = c_err + 8 * U * np.abs(c)
        i_hi = self.index((c + rad) / beta + 4 * U * np.abs(cb))
        Fab = F + 2 * i * self.abs_p                     # >= sum of |tabulated masses|
        err = (_cum_rel(self.size) + 4 * U) * (np.abs(cc) + beta * self.span) * Fab \
            + 4 * U * np.abs(h) + self.F[i_hi] * rad
        hu = h * (1 + self.rel) + err
        hl = h * (1 - self.rel) - err
        if self.abs_p > 0:
            # sum_{k < i} (c - beta v_k) abs_p with v_k = (origin + k)/K
            v0 = self.origin / self.K
            s = i_hi * (c + rad - beta * v0) - beta * (i_hi * (i_hi - 1) / 2.0) / self.K
            hu = hu + self.abs_p * np.maximum(s, 0.0)
            hl = hl - self.abs_p * np.maximum(s, 0.0)
        v_lo = (self.origin / self.K) if self.vals is None else (
            float(self.vals[0]) if self.size else 0.0)
        hl = hl - self.alias * np.maximum(c - beta * v_lo, 0.0)
        hu = hu + self.out * np.maximum(c + rad, 0.0)
        return np.maximum(hl, 0.0), np.maximum(hu, 0.0)


_CHUNK = 1024


def _cumsum(x: np.ndarray) -> np.ndarray:
    """Two-level cumulative sum: error <= (CHUNK + len/CHUNK + 2) u sum|x_k| (prefix)."""
    n = x.size
    pad = (-n) % _CHUNK
    xp = np.concatenate([x, np.zeros(pad)]).reshape(-1, _CHUNK)
    inner = np.cumsum(xp, axis=1)
    off = np.zeros(inner.shape[0])
    off[1:] = np.cumsum(inner[:-1, -1])
    return (inner + off[:, None]).ravel()[:n]


def _cum_rel(n: int) -> float:
    return (_CHUNK + n / _CHUNK + 4) * U


def _cumulate(vals: np.ndarray, p: np.ndarray, vc: float) -> tuple[np.ndarray, np.ndarray]:
    F = np.zeros(p.size + 1)
    G = np.zeros(p.size + 1)
    F[1:] = _cumsum(p)
    G[1:] = _cumsum((vals - vc) * p)
    return F, G


BINOM_REL = 3 * ETA_BINOM + 1e-12     # Boost pmf at a row's anchor times another Boost pmf


def _binom_rows(Ns: np.ndarray, lo: int, hi: int, p: float):
    """Masses ``P(Bin(N, p) = o)`` for every row ``N`` in ``Ns`` and ``o = lo..hi``.

    Returns ``(P, rel, sabs)``: ``P`` has shape ``(len(Ns), hi - lo + 1)``; every cell is within
    ``rel * P + (its share of sabs)`` of the truth (``rel = BINOM_REL + recurrence error``) and
    ``sabs`` bounds, for every row, the sum of the absolute errors of the cells below ``1e-40``
    of the row maximum.  One Boost ``pmf``
    per row (at the row's mode, clipped to the window), log-ratio recurrences along the row
    (their rounding is bounded as in :func:`_exact_grid`)."""
    Ns = np.asarray(Ns, dtype=np.int64)
    os_ = np.arange(lo, hi + 1)
    Og = np.broadcast_to(os_[None, :].astype(float), (Ns.size, os_.size))
    k = Ns[:, None].astype(float)
    if p <= 0:
        return (Og == 0).astype(float), BINOM_REL, 0.0
    if p >= 1:
        return (Og == k).astype(float), BINOM_REL, 0.0
    mode = np.clip(np.floor((Ns + 1) * p), lo, np.minimum(hi, Ns))
    pm = _pmf(mode, Ns, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log((k - Og) / (Og + 1.0)) + math.log(p / (1 - p))     # log P(o+1)/P(o)
    r = np.where((Og < k) & (Og >= 0), r, -np.inf)
    rf = np.where(np.isfinite(r), r, -1e300)
    C = np.zeros_like(r)
    C[:, 1:] = np.cumsum(rf[:, :-1], axis=1)
    mi = (mode - lo).astype(np.int64)[:, None]
    Cm = np.take_along_axis(C, mi, axis=1)
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        P = np.where((Og <= k) & (Og >= 0), pm[:, None] * np.exp(C - Cm), 0.0)
        d_o = np.abs(np.arange(os_.size)[None, :] - mi) + 2.0
        lerr = 2 * d_o * U * (np.abs(C - Cm) + 4.0 + 2 * np.log(k + 2.0))
    P = np.where(np.isfinite(P), P, 0.0)
    lerr = np.where(np.isfinite(lerr) & (P > 0), lerr, 0.0)
    big = P >= 1e-40 * np.maximum(P.max(axis=1, keepdims=True), 1e-300)
    rel_rec = float(np.expm1(lerr[big].max())) if big.any() else 0.0
    small = np.where(big, 0.0, P * np.expm1(np.minimum(lerr, 700.0)) + 1e-300)
    sabs = float(small.sum(axis=1).max()) if small.size else 0.0
    if np.any(pm < 1e-300):            # rows whose anchor underflowed: every cell is suspect
        sabs += os_.size * 1e-300
    return P, BINOM_REL + rel_rec, min(1.0, sabs)


def _exact_grid(nu: _Nuisance, m: int, log_tau: float):
    """Masses ``P(O = o, Z = z)`` of ``m`` nuisance users on a Chernoff window, as
    ``(values o + E z, masses, outside mass bound, cells, rel)``: ``Z ~ Bin(m, qZ)`` (Boost
    pmf), ``O | Z = z ~ Bin(m - z, kappa)`` rows from :func:`_binom_rows`; the masses carry a
    relative error ``<= rel``, the rows' tiny cells an absolute one (added to the outside mass)."""
    if m <= 0:
        return np.zeros(1), np.ones(1), 0.0, 1, 0.0
    out = 0.0
    if nu.qZ > 0:
        z_lo, z_hi, a1, a2 = _binom_window(m, nu.qZ, log_tau)
        out += math.exp(a1) + math.exp(a2)
    else:
        z_lo = z_hi = 0
    if nu.qO > 0:
        o_lo, o_hi, a1, a2 = _binom_window(m, nu.qO, log_tau)
        out += math.exp(a1) + math.exp(a2)
    else:
        o_lo = o_hi = 0
    zs = np.arange(z_lo, z_hi + 1)
    os_ = np.arange(o_lo, o_hi + 1)
    pz = _pmf(zs, m, nu.qZ) if nu.qZ > 0 else np.ones(1)
    po, rel, sabs = _binom_rows(m - zs, o_lo, o_hi, nu.kappa)
    out += sabs                           # sum_z P(z) sabs_z <= max_z sabs_z
    P = (pz[:, None] * po).ravel()
    vals = (os_[None, :].astype(float) + nu.E * zs[:, None]).ravel()
    keep = P > 0
    return vals[keep], P[keep], min(1.0, out), int(zs.size * os_.size), rel


def _exact_table(nu: _Nuisance, m: int, log_tau: float) -> tuple[_Table, int]:
    """Exact atoms ``o + E z`` of ``V_m`` (sorted) with cumulative mass and first moment."""
    vals, P, out, cells, rel = _exact_grid(nu, m, log_tau)
    order = np.argsort(vals, kind="stable")
    vals, P = vals[order], P[order]
    vc = m * nu.mu
    F, G = _cumulate(vals, P, vc)
    span = float(np.max(np.abs(vals - vc))) if vals.size else 0.0
    # the lower end may over-count the tiny cells' errors: subtract them like aliasing
    return _Table(vals, F, G, vc, rel=rel, abs_p=0.0, alias=out, out=out, size=vals.size,
                  span=span), cells


def _lattice_cats(nu: _Nuisance, K: int) -> tuple[list[float], list[int], float]:
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


def _lattice_table(nu: _Nuisance, m0: int, K: int, half_width_V: float) -> _Table:
    """Law of the integerised nuisance ``V'_{m0}`` on ``Z/K`` by characteristic-function
    inversion (inverse real FFT), with element-wise error bounds."""
    if m0 <= 0:
        return _Table(None, np.array([0.0, 1.0]), np.zeros(2), 0.0, 0.0, 0.0, 0.0, 0.0,
                      origin=0, K=K, size=1, pmax=1.0)
    q, v, _ = _lattice_cats(nu, K)
    q = np.asarray(q, dtype=float)
    vv = np.asarray(v, dtype=float)
    mu_l = float(np.dot(q, vv))
    var_l = max(float(np.dot(q, (vv - mu_l) ** 2)), 0.0)
    b_l = float(np.max(np.abs(vv - mu_l))) + 1e-300
    c0 = int(round(m0 * mu_l))
    L = -LOG_TAU_V
    t_al = float(_bernstein_t(np.array(float(m0)), var_l, b_l, L)) + abs(c0 - m0 * mu_l) + 2
    H = int(math.ceil(max(half_width_V * K, t_al))) + 4
    N = sfft.next_fast_len(2 * H + 2, real=True)
    if N % 2:
        N += 1
    origin = c0 - N // 2
    # Bernstein mass outside [origin, origin + N): both sides at distance >= N/2 - |c0 - mean|
    d_out = N / 2 - abs(c0 - m0 * mu_l) - 1
    tau = 2 * math.exp(-d_out ** 2 / (2 * (m0 * var_l + b_l * d_out / 3))) if d_out > 0 else 1.0
    tau = min(1.0, tau)
    # centred log characteristic function at omega_j = 2 pi j / N, j = 0..N/2
    s = c0 / m0
    j = np.arange(N // 2 + 1)
    omega = (2 * math.pi / N) * j
    zr = np.zeros(j.size)
    zi = np.zeros(j.size)
    for qc, vc_ in zip(q, vv):
        th = omega * (vc_ - s)
        sh = np.sin(0.5 * th)
        zr -= 2.0 * qc * sh * sh
        zi += qc * np.sin(th)
    del sh, th
    absz = np.hypot(zr, zi)
    one_z = np.hypot(1.0 + zr, zi)                 # |phi|
    with np.errstate(divide="ignore", invalid="ignore"):
        Lr = 0.5 * np.log1p(2.0 * zr + absz * absz)
        Li = np.arctan2(zi, 1.0 + zr)
    U1 = float(np.dot(q, np.abs(vv - s) + abs(s)))
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
    mult = np.full(j.size, 2.0)
    mult[0] = 1.0
    mult[-1] = 1.0
    log2N = math.log2(N)
    eps_p = 1.01 * (float(np.dot(mult, e)) + 10 * U * log2N * float(np.dot(mult, modulus))) / N
    del zr, zi, absz, one_z, Lr, Li, mag, phase, delta, ex, e_good, e_far, e
    p = sfft.irfft(psi, N)
    del psi, modulus
    idx = np.arange(N)
    vals_V = (origin + idx) / K
    vc = m0 * nu.mu
    F, G = _cumulate(vals_V, p, vc)
    pmax = min(1.0, float(p.max()) + eps_p)
    pmax = max(pmax, tau)
    span = max(abs(vals_V[0] - vc), abs(vals_V[-1] - vc))
    return _Table(None, F, G, vc, rel=2e-12, abs_p=eps_p, alias=tau, out=tau, origin=origin,
                  K=K, size=N, pmax=pmax, span=span)


# ----------------------------------------------------------------------------- z-split tables
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
class _ZSplit:
    """Eps-free tables of the z-split plan for one model (see :func:`_zsplit_eval`).

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


def _zsplit_geometry(mod) -> tuple[int, int, int, int, int, int, float, float]:
    """Windows ``(z_lo, z_hi, o_lo, o_hi, N_min, N_max)`` of the z-split tables of ``mod`` and
    the tail masses ``tau_Z``, ``tau_O`` outside them (every row)."""
    nu = mod.nu
    kappa = nu.kappa
    m_min, m_max = int(mod.m.min()), int(mod.m.max())
    z_lo, _, tz, _ = _binom_window(m_min, nu.qZ, mod.log_tau)
    _, z_hi, _, tz2 = _binom_window(m_max, nu.qZ, mod.log_tau)
    N_min, N_max = max(m_min - z_hi, 0), max(m_max - z_lo, 0)
    o_lo, _, to, _ = _binom_window(N_min, kappa, mod.log_tau)
    _, o_hi, _, to2 = _binom_window(N_max, kappa, mod.log_tau)
    tau_Z = min(1.0, (math.exp(tz) if z_lo > 0 else 0.0) + math.exp(tz2))
    tau_O = min(1.0, (math.exp(to) if o_lo > 0 else 0.0) + math.exp(to2))
    return z_lo, z_hi, o_lo, o_hi, N_min, N_max, tau_Z, tau_O


def _excess_bound(N: int, p: float, h: int) -> float:
    """``E[(Bin(N, p) - h)_+]`` upper bound: Chernoff terms ``P(X >= k)``, ``k > h``, decay at
    least geometrically with ratio ``e^-lam``, ``lam = log((h+1)(1-p) / ((N-h-1) p))``."""
    if h >= N or p <= 0:
        return 0.0
    if p >= 1:
        return float(N - h)
    k = h + 1
    if k <= N * p:
        return N * p - h + math.sqrt(N * p * (1 - p))        # not a tail: mean excess + sd
    lam = math.log(k * (1 - p) / max((N - k) * p, 1e-300)) if N > k else math.inf
    first = math.exp(_log_tail_ge(N, p, k))
    return first / -math.expm1(-lam) if lam < math.inf else first


def _build_zsplit(mod) -> _ZSplit:
    nu = mod.nu
    z_lo, z_hi, o_lo, o_hi, N_min, N_max, tau_Z, tau_O = mod.zsplit_geometry()
    kappa = nu.kappa
    PZ, rel_Z, sabs_Z = _binom_rows(mod.m.astype(np.int64), z_lo, z_hi, nu.qZ)
    PZc, PZcc = _cumcum(PZ)
    PO, rel_O, sabs_O = _binom_rows(np.arange(N_min, N_max + 1), o_lo, o_hi, kappa)
    FO, FFO = _cumcum(PO)
    Wo = o_hi - o_lo + 1
    return _ZSplit(z_lo, z_hi, o_lo, o_hi, N_min, kappa, PZ, PZc, PZcc, FO.ravel(),
                   FFO.ravel(), Wo, rel_Z, rel_O, sabs_Z, sabs_O,
                   tau_Z=tau_Z, tau_O=tau_O,
                   e_O=_excess_bound(N_max, kappa, o_hi), size=PZ.size + FO.size)


def _zsplit_eval(mod, zs: _ZSplit, T_idx: np.ndarray, c: np.ndarray, c_err: np.ndarray,
                 beta: float) -> tuple[np.ndarray, np.ndarray]:
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


# ----------------------------------------------------------------------------- the model
@dataclass
class _Plan:
    mode: str          # "exact", "zsplit" or "lattice"
    b: int = 1
    K: int = 1


class _Model:
    """Eps-free count machinery for one law shape and ``n`` (windows, weights, tables)."""

    def __init__(self, shape: StructuredShape, n: int, log_tau: float):
        self.shape = shape
        self.n = n
        s = shape
        self.E = s.E
        self.d = s.E - 1.0
        self.pT = min(1.0, s.pX + s.pY)
        self.r = s.pX / (s.pX + s.pY)
        rest = max(0.0, 1.0 - self.pT)
        if rest > 0:
            tot = s.pO + s.pZ + s.pF
            self.nu = _Nuisance(s.E, s.pO / tot, s.pZ / tot, s.pF / tot)
        else:
            self.nu = _Nuisance(s.E, 0.0, 0.0, 1.0)
        self.log_tau = log_tau
        T_lo, T_hi, llo, lhi = _binom_window(n, self.pT, log_tau)
        T_lo = max(T_lo, 1)
        self.T_lo, self.T_hi = T_lo, T_hi
        self.Ts = np.arange(T_lo, T_hi + 1, dtype=np.int64)
        self.PT = _pmf(self.Ts, n, self.pT)
        # E[T; T > T_hi] = n pT P(Bin(n-1, pT) >= T_hi);  T_lo P(T < T_lo)
        up = n * self.pT * math.exp(_log_tail_ge(n - 1, self.pT, T_hi)) if T_hi < n else 0.0
        low = (T_lo - 1) * math.exp(_log_tail_le(n, self.pT, T_lo - 1)) if T_lo > 1 else 0.0
        self.ET_out = up + low
        m = (n - self.Ts).astype(float)
        self.m = m
        nu = self.nu
        self.mu, self.var, self.bmax = nu.mu, nu.var, nu.bmax
        L = -log_tau
        t = _bernstein_t(m, self.var, self.bmax, L)
        self.v_z = m * self.mu - t
        self.v_l = m * self.mu + t
        kap = t / (2 * (m * self.var + self.bmax * t / 3) + 1e-300)
        tau = math.exp(log_tau)
        self.pm_l = np.where(self.v_l >= m * nu.vmax, 0.0, tau / np.maximum(kap, 1e-300))
        self.z_tau = np.where(self.v_z <= 0, 0.0, tau)
        self.v_z = np.maximum(self.v_z, 0.0)
        self.tables: dict = {}
        self.table_counts: dict = {}
        self.table_points = 0
        self.gap_cache: dict = {}
        self.small_laws: dict = {}
        self._zsplit: _ZSplit | None = None
        self._zgeom: tuple | None = None
        self._Ks: list[int] | None = None

    def cf_denominators(self) -> list[int]:
        if self._Ks is None:
            self._Ks = _cf_denominators(self.nu.E, 1024)
        return self._Ks

    def zsplit_geometry(self) -> tuple[int, int, int, int, int, int, float, float]:
        if self._zgeom is None:
            self._zgeom = _zsplit_geometry(self)
        return self._zgeom

    def zsplit(self) -> _ZSplit:
        """The eps-free tables of the z-split plan (built once)."""
        if self._zsplit is None:
            self._zsplit = _build_zsplit(self)
        return self._zsplit

    # -- plans ---------------------------------------------------------------------------
    def exact_cells(self, m: float) -> float:
        """Approximate number of ``(o, z)`` cells of an exact table for ``m`` users."""
        L = -self.log_tau
        c = 1.0
        for q in (self.nu.qO, self.nu.qZ):
            if q > 0:
                c *= min(m + 1, 2 * math.sqrt(2 * L * m * q * (1 - q)) + 2 * L / 3 + 3)
        return c

    def _block(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Block index and ``j = T_b - T`` for every ``T`` (blocks anchored at ``T = 0``)."""
        k = self.Ts // b
        Tb = np.minimum((k + 1) * b - 1, self.n)
        return k, Tb - self.Ts

    def small_law(self, j: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Exact law of the nuisance of ``j`` users (values, masses, outside mass, rel. error
        of the masses)."""
        law = self.small_laws.get(j)
        if law is None:
            vals, P, out, _, rel = _exact_grid(self.nu, int(j), self.log_tau)
            law = (vals, P, out, rel)
            self.small_laws[j] = law
        return law

    def cached_count(self, pkey: tuple) -> int:
        return self.table_counts.get(pkey, 0)

    def table(self, plan: _Plan, k: int) -> _Table:
        key = (plan.mode, plan.b, plan.K, int(k))
        tab = self.tables.get(key)
        if tab is None:
            pkey = key[:3]
            # memory: keep the tables of one plan only once the cap is reached
            if self.table_points + 1 > MAX_TABLE_POINTS // 2:
                for kk in [kk for kk in self.tables if kk[:3] != pkey]:
                    self.table_points -= self.tables.pop(kk).size
                    self.table_counts[kk[:3]] -= 1
            if plan.mode == "exact":
                Tb = min((k + 1) * plan.b - 1, self.n)
                tab, _ = _exact_table(self.nu, int(self.n - Tb), self.log_tau)
            else:
                Tb = min((k + 1) * plan.b - 1, self.n)
                m0 = self.n - Tb
                m_hi = min(self.n, m0 + plan.b - 1)
                t = float(_bernstein_t(np.array(float(m_hi)), self.var, self.bmax,
                                       -self.log_tau)) + 2.0
                tab = _lattice_table(self.nu, int(m0), plan.K, t + 2 * self.E)
            self.tables[key] = tab
            self.table_points += tab.size
            self.table_counts[pkey] = self.table_counts.get(pkey, 0) + 1
        return tab

    def gap_coefs(self, plan: _Plan, blocks: np.ndarray, j: np.ndarray,
                  ) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-``T`` coefficients ``(gj, gi)``: the block-shift and integerisation gaps are
        ``beta * gj`` and ``beta * gi``; plus the integerisation mean bias per user / ``beta``."""
        if plan.mode in ("exact", "zsplit"):
            z = np.zeros(self.Ts.size)
            return z, z, 0.0
        ck = ("gap", plan.b, plan.K)
        if ck in self.gap_cache:
            return self.gap_cache[ck]
        nu = self.nu
        K = plan.K
        _, _, vK = _lattice_cats(nu, K)
        var_l = nu.var + nu.qZ * vK
        gj = np.zeros(self.Ts.size)
        gi = np.zeros(self.Ts.size)
        for kb in np.unique(blocks):
            sel = blocks == kb
            tab = self.table(plan, int(kb))
            m_blk = self.m[sel]
            m_min = int(m_blk.min())
            m0 = int(self.n - min((int(kb) + 1) * plan.b - 1, self.n))
            pO, tO = nu.smooth_O(max(m0, 0))
            opts_j = [(pO, pO + tO), (K * tab.pmax, tab.pmax)]
            jj = j[sel].astype(float)
            M2 = jj * var_l
            M1 = np.sqrt(M2)
            gj[sel] = _gap(opts_j, M2, M1)
            if vK > 0:
                pO2, tO2 = nu.smooth_O(m_min)
                pZ2, tZ2 = nu.smooth_Z(m_min)
                m_max = float(m_blk.max())
                M2i = m_max * nu.qZ * vK
                M1i = math.sqrt(M2i)
                worst = m_max * vK / 2 + math.sqrt(m_max * vK)   # E N^2/2 + E|N| for Z = m
                gi[sel] = min(pO2 * (M2i / 2 + M1i) + tO2 * worst,
                              pZ2 * (M2i / 2 / nu.E + M1i) + tZ2 * worst)
        bias = 4 * U * nu.E * nu.qZ * K          # |mean error of the split| per user (V units)
        self.gap_cache[ck] = (gj, gi, bias)
        return gj, gi, bias


_MODELS: dict = {}


def _model(shape: StructuredShape, n: int, log_tau: float) -> _Model:
    key = (shape, n)
    mod = _MODELS.get(key)
    if mod is None or mod.log_tau > log_tau + 1e-9:
        mod = _Model(shape, n, log_tau)
        if len(_MODELS) >= 6:
            _MODELS.pop(next(iter(_MODELS)))
        _MODELS[key] = mod
    return mod


# ----------------------------------------------------------------------------- evaluation
@dataclass
class _Parts:
    """Pieces of one evaluation of ``E[S_+]`` (S units, not divided by n)."""

    lin: float = 0.0
    lin_err: float = 0.0
    lin_tail: float = 0.0
    zero_tail: float = 0.0
    band_lo: float = 0.0
    band_up: float = 0.0
    gap_j: float = 0.0
    gap_i: float = 0.0
    T_tail: float = 0.0
    band_elems: int = 0
    table_points: int = 0
    details: dict = field(default_factory=dict)


class _Evaluator:
    """Per-``eps`` quantities shared by the planning and the table passes."""

    def __init__(self, mod: _Model, eps: float):
        self.mod = mod
        self.eps = eps
        E = mod.E
        w = math.exp(eps)
        self.beta = math.expm1(eps)
        self.gX = E - w
        self.gY = 1.0 - w * E
        self.A = self.gX - self.gY
        Ts = mod.Ts
        Tf = Ts.astype(float)
        beta, A, gY = self.beta, self.A, self.gY
        # regions of x (with a relative safety margin against rounding of c)
        qh = (beta * mod.v_l - gY * Tf) / A
        qz = (beta * mod.v_z - gY * Tf) / A
        x_hi = np.ceil(qh + 1e-12 * np.abs(qh) + 1e-9)
        x_lo = np.floor(qz - 1e-12 * np.abs(qz) - 1e-9)
        x_hi = np.clip(x_hi, 0, Tf + 1)
        # a short linear region is summed term by term in the band instead (its closed form
        # cancels when x_hi is close to T)
        x_hi = np.where(Tf + 1 - x_hi <= 64, Tf + 1, x_hi)
        x_lo = np.clip(x_lo, -1, Tf)
        x_lo = np.minimum(x_lo, x_hi - 1)
        self.x_hi = x_hi.astype(np.int64)
        self.x_lo = x_lo.astype(np.int64)
        r = mod.r
        has_lin = self.x_hi <= Ts
        self.has_lin = has_lin
        Psf = np.zeros(Ts.size)
        Ppm = np.zeros(Ts.size)
        if np.any(has_lin):
            Psf[has_lin] = _sf(self.x_hi[has_lin] - 1, Ts[has_lin], r)
            Ppm[has_lin] = _pmf(self.x_hi[has_lin], Ts[has_lin], r)
        cbar = Tf * (self.gX * r + gY * (1 - r))
        base = cbar - beta * mod.m * mod.mu
        t1 = base * Psf
        t2 = A * (1 - r) * self.x_hi * Ppm
        lin = t1 + t2
        lin_err = (ETA_BINOM * (np.abs(t1) + np.abs(t2))
                   + 8 * U * (np.abs(cbar) + beta * mod.m * mod.mu) * Psf + 4 * U * np.abs(t2))
        self.lin_T = lin
        self.lin_err_T = lin_err
        self.lin_tail_T = beta * mod.pm_l * Psf
        nonempty_zero = self.x_lo >= 0
        self.zero_tail_T = np.where(nonempty_zero, beta * mod.v_z * mod.z_tau, 0.0)
        self.nb = np.maximum(self.x_hi - self.x_lo - 1, 0)
        self.total_band = int(self.nb.sum())

    def sums(self) -> tuple[float, float, float, float]:
        m = self.mod
        PT = m.PT
        lin = float(np.dot(PT, self.lin_T))
        err = float(np.dot(PT, self.lin_err_T))
        lt = float(np.dot(PT, self.lin_tail_T))
        zt = float(np.dot(PT, self.zero_tail_T))
        return lin, err, lt, zt

    def band(self):
        """Flattened band: T index, x, log-pmf bounds (lower, upper) of ``P(x | T)``."""
        if getattr(self, "_band", None) is None:
            self._band = self._make_band()
        return self._band

    def _make_band(self):
        mod = self.mod
        nb = self.nb
        tot = self.total_band
        if tot == 0:
            e = np.zeros(0)
            return np.zeros(0, np.int64), np.zeros(0, np.int64), e, e
        if tot > MAX_BAND:
            raise NumericalError(f"structured delta at eps={self.eps:g}, n={mod.n} needs "
                                 f"{tot} band evaluations (max {MAX_BAND})")
        Ts = mod.Ts
        r = mod.r
        sel = np.flatnonzero(nb > 0)
        nbs = nb[sel]
        L = int(nbs.max())
        # 2-D (T, k) layout, k = 0..nb-1 going down from x_top = x_hi - 1
        kk = np.arange(L)[None, :]
        valid = kk < nbs[:, None]
        x_top = (self.x_hi - 1)[sel]
        Tsel = Ts[sel].astype(float)
        X = x_top[:, None] - kk                       # x values (garbage where not valid)
        p_top = _pmf(x_top, Ts[sel], r)
        with np.errstate(divide="ignore"):
            lp_top = np.log(p_top)
        under = p_top < 1e-290
        lp_top_up = lp_top.copy()
        if np.any(under):
            # tiny masses: scipy's gammaln-based log-pmf (abs. error << 1e-3 in the log) with a
            # margin for the upper end; 0 for the lower end
            lp_top_up[under] = stats.binom.logpmf(x_top[under], Ts[sel][under], r) + 1e-3
        # log P(x)/P(x+1) = log((x+1)(1-r)) - log((T-x) r), for k >= 1 (x = x_top - k)
        Xs = np.where(valid, X, 0).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.log((Xs + 1.0) * (1 - r)) - np.log((Tsel[:, None] - Xs) * r)
        step = np.where(valid & (kk >= 1), step, 0.0)
        cs = np.cumsum(step, axis=1)
        # relative error of exp(cs): each step ~ 4u (|log terms| + 1), the cumsum k u sum|step|
        with np.errstate(invalid="ignore"):
            logmag = 2 * np.log(Tsel + 2.0) + abs(math.log(r)) + (
                abs(math.log1p(-r)) if r < 1 else 0.0) + 2.0
            abs_cs = np.cumsum(np.abs(np.where(np.isfinite(step), step, 0.0)), axis=1)
            err = (kk * 4 * U * logmag[:, None] + (kk + 1) * U * abs_cs)
        err = np.where(np.isfinite(err), err, 0.0)
        self.band_rel = float(np.expm1(err[valid].max())) if valid.any() else 0.0
        iT = np.repeat(sel, nbs)
        x = X[valid]
        lp_lo = (np.where(under, -np.inf, lp_top)[:, None] + cs)[valid]
        lp_up = (lp_top_up[:, None] + cs)[valid]
        return iT, x.astype(np.int64), lp_lo, lp_up


def _evaluate(mod: _Model, ev: _Evaluator, plan: _Plan) -> _Parts:
    """Certified pieces of ``E[S_+]`` at one ``eps`` with the given table plan."""
    parts = _Parts()
    lin, err, lt, zt = ev.sums()
    parts.lin, parts.lin_err, parts.lin_tail, parts.zero_tail = lin, err, lt, zt
    parts.T_tail = max(ev.gX, 0.0) * mod.ET_out
    iT, x, lp_lo, lp_up = ev.band()
    parts.band_elems = int(x.size)
    if x.size == 0:
        return parts
    beta = ev.beta
    Ts = mod.Ts
    T = Ts[iT]
    c = ev.A * x + ev.gY * T.astype(float)
    with np.errstate(under="ignore"):
        pl = np.exp(lp_lo) * (1 - ev.band_rel - 4 * U)
        pu = np.exp(lp_up) * (1 + ev.band_rel + 4 * U) + 1e-300
    w = mod.PT[iT]
    blocks, jT = mod._block(plan.b)
    gj, gi, bias = mod.gap_coefs(plan, blocks, jT)
    hl = np.empty(x.size)
    hu = np.empty(x.size)
    bl = blocks[iT]
    jj = jT[iT].astype(float)
    # c rounding: |c| terms ~ A x, gY T
    c_err = 8 * U * (np.abs(ev.A * x) + np.abs(ev.gY) * T + beta * jj * mod.mu)
    if beta == 0.0:
        # eps = 0: g(c) = c_+ exactly (the nuisance has coefficient 0)
        hl = np.maximum(c, 0.0) * (1 - 4 * U)
        hu = np.maximum(c, 0.0) * (1 + 4 * U) + c_err
        parts.band_lo = float(np.dot(pl * w, hl))
        parts.band_up = float(np.dot(pu * w, hu))
        return parts
    if plan.mode == "zsplit":
        zs = mod.zsplit()
        lo, up = _zsplit_eval(mod, zs, iT, c, c_err, beta)
        parts.table_points = zs.size
        parts.band_lo = float(np.dot(pl * w, lo))
        parts.band_up = float(np.dot(pu * w, up))
        return parts
    if plan.mode == "exact":
        # exact: g(c) = sum_v P(V_j = v) h_{m0}(c - beta v) over the exact law of the j users
        # added to the block's reference m0 (no approximation)
        order = np.argsort(iT, kind="stable")
        cut = np.flatnonzero(np.diff(iT[order])) + 1
        points = 0
        seen = set()
        for g in np.split(order, cut):
            t_idx = int(iT[g[0]])
            kb = int(blocks[t_idx])
            tab = mod.table(plan, kb)
            if kb not in seen:
                seen.add(kb)
                points += tab.size
            uj, wj, outj, relj = mod.small_law(int(jT[t_idx]))
            cq = (c[g][:, None] - beta * uj[None, :]).ravel()
            eq = np.repeat(c_err[g] + 4 * U * beta * float(uj.max()), uj.size)
            lo, up = tab.lookup(cq, eq, beta)
            lo = lo.reshape(g.size, uj.size)
            up = up.reshape(g.size, uj.size)
            wl = wj * (1 - relj)
            wu = wj * (1 + relj)
            # masses outside the small law's window (and its tiny cells' errors) add <= c_+
            hl[g] = np.maximum(lo @ wl - outj * np.maximum(c[g], 0.0), 0.0)
            hu[g] = up @ wu + outj * np.maximum(c[g] + c_err[g], 0.0)
        parts.table_points = points
        parts.band_lo = float(np.dot(pl * w, hl))
        parts.band_up = float(np.dot(pu * w, hu))
        return parts
    cprime = c - beta * jj * mod.mu
    order = np.argsort(bl, kind="stable")
    bl_sorted = bl[order]
    cut = np.flatnonzero(np.diff(bl_sorted)) + 1
    groups = np.split(order, cut)
    points = 0
    for g in groups:
        kb = int(bl[g[0]])
        tab = mod.table(plan, kb)
        points += tab.size
        lo, up = tab.lookup(cprime[g], c_err[g], beta)
        hl[g] = lo
        hu[g] = up
    parts.table_points = points
    mass_up = pu * w
    gjb = beta * gj[iT]
    gib = beta * gi[iT] + beta * bias * mod.m[iT]
    parts.band_lo = float(np.dot(pl * w, np.maximum(hl - gib, 0.0)))
    parts.band_up = float(np.dot(mass_up, hu + gjb))
    parts.gap_j = float(np.dot(mass_up, gjb))
    parts.gap_i = float(np.dot(mass_up, gib))
    return parts


def _assemble(parts: _Parts, n: int, shape: StructuredShape, eps: float
              ) -> tuple[float, float]:
    lower = (parts.lin - parts.lin_err) * (1 - REL_SAFETY) + parts.band_lo * (1 - REL_SAFETY)
    upper = ((parts.lin + parts.lin_err + parts.lin_tail + parts.zero_tail) * (1 + REL_SAFETY)
             + parts.band_up * (1 + REL_SAFETY) + parts.T_tail)
    lower = max(0.0, lower) / n
    upper = upper / n
    # idealisation of the atoms, and their floating-point distance to the exact ratios
    dev = shape.dev_a + math.exp(eps) * shape.dev_b
    lower, upper = widen(max(0.0, lower - dev), upper + dev, _atom_floor(shape, eps))
    return lower, max(upper, lower, TINY)


# ----------------------------------------------------------------------------- planning
COST_POINT = 0.8e-6        # seconds per lattice point of a nuisance table (measured)
COST_CELL = 0.3e-6         # seconds per (o, z) cell of an exact table
COST_TABLE = 1e-3          # overhead per table
COST_LOOK = 0.15e-6        # seconds per exact-table lookup (band element x small-law atom)
COST_ZCELL = 0.1e-6        # seconds per cell of the z-split tables (measured 60-110 ns)
COST_ZMID = 0.08e-6        # seconds per (band element, middle z) pair (measured 12-90 ns)
COST_ZELEM = 0.1e-6        # seconds per band element of the z-split plan
ZSPLIT_BUDGET = 4_000_000  # cells of the z-split tables (about 6 x 8 bytes each while built)
PLAN_TIERS = ((1.0, 0.15), (10.0, 0.6), (100.0, 1.5), (1e12, 10.0))   # (goal factor, seconds)


def _lattice_points(mod: _Model, K: int, b: int) -> int:
    m_hi = float(min(mod.n, float(mod.m.max()) + b))
    t = float(_bernstein_t(np.array(m_hi), mod.var, mod.bmax, -mod.log_tau))
    return int(2 * (t + 2 * mod.E + 4) * K + 64)


def _plan_for(mod: _Model, ev: _Evaluator, goal_rel: float, E_ref: float,
              rel_tol: float) -> _Plan:
    """Choose the nuisance-table plan.

    Candidates: exact tables, or lattice tables for ``K`` in the continued-fraction
    denominators of ``E`` and block sizes ``b`` (powers of two).  For each, the two gap bounds
    are estimated from the band masses (the table-free part of the evaluation) and the cost
    from the table sizes.  The cheapest plan whose estimated gaps stay below ``goal/2`` is
    taken, trying the goals ``goal_rel * f`` within the time budgets of ``PLAN_TIERS``.
    """
    nu = mod.nu
    nT = mod.Ts.size
    iT, x, lp_lo, lp_up = ev.band()
    bm = np.zeros(nT)
    if x.size:
        np.add.at(bm, iT, np.exp(lp_up))
    wm = mod.PT * bm                                 # band mass per T
    W = float(wm.sum())
    beta = ev.beta
    if W == 0 or beta == 0:
        return _Plan("lattice", b=1 << 40, K=1)
    n_band = int(x.size)
    # z-split: exact (no gap), cells of the Z and O tables once, ~(o window)/E pairs per element
    z_lo, z_hi, o_lo, o_hi, N_min, N_max, _, _ = mod.zsplit_geometry()
    Wz, Wo = z_hi - z_lo + 1, o_hi - o_lo + 1
    zcells = nT * Wz + (N_max - N_min + 1) * (Wo + 1)
    z_eval = n_band * COST_ZELEM + n_band * min(Wo / nu.E + 2.0, float(Wz)) * COST_ZMID
    if mod._zsplit is not None and z_eval <= 0.05:
        return _Plan("zsplit")                        # built for this model: keep using it
    Ks = [1] if nu.qZ <= 0 else mod.cf_denominators()
    m_min = int(mod.m.min())
    m_max = float(mod.m.max())
    pO, tO = nu.smooth_O(max(m_min, 0))
    pZ, tZ = nu.smooth_Z(max(m_min, 0))
    cands = []                                        # (cost, est_abs, plan)
    bs = [1]
    while bs[-1] < 2 * nT:
        bs.append(bs[-1] * 2)
    m_hi = float(mod.m.max())
    for b in bs:
        nblocks = (int(mod.Ts[-1]) // b) - (int(mod.Ts[0]) // b) + 1
        cells = mod.exact_cells(m_hi)
        if nblocks * cells > EXACT_BUDGET:
            continue
        todo = max(0, nblocks - mod.cached_count(("exact", b, 1)))
        cost = (todo * (cells * COST_CELL + COST_TABLE)
                + n_band * mod.exact_cells(float(min(b, nT))) * COST_LOOK)
        cands.append((cost, 0.0, _Plan("exact", b=b)))
    if zcells <= ZSPLIT_BUDGET:
        build = 0.0 if mod._zsplit is not None else zcells * COST_ZCELL + COST_TABLE
        cands.append((build + z_eval, 0.0, _Plan("zsplit")))
    T0 = int(mod.Ts[0])
    goal_min = min(goal_rel, 0.5 * rel_tol) * E_ref
    for K in Ks[:8]:
        _, _, vK = _lattice_cats(nu, K)
        var_l = nu.var + nu.qZ * vK
        if vK > 0:
            M2 = m_max * nu.qZ * vK
            worst = m_max * vK / 2 + math.sqrt(m_max * vK)
            gi = min(pO * (M2 / 2 + math.sqrt(M2)) + tO * worst,
                     pZ * (M2 / 2 / nu.E + math.sqrt(M2)) + tZ * worst)
        else:
            gi = 0.0
        est_i = beta * gi * W
        sdV = math.sqrt(max(m_min * var_l, 1e-300))
        pV = 1.05 / (math.sqrt(2 * math.pi) * sdV * K) if sdV > 5 else 1.0
        s1 = min(pO, K * pV)
        s0 = min(pO + tO, pV)
        pts1 = _lattice_points(mod, K, 1)
        for b in bs:
            # j is roughly uniform on [0, b): mean of s0 sqrt(j var) + s1 j var / 2
            jm = min(b, nT)
            est_j = beta * W * (s0 * math.sqrt(var_l * jm) * (2.0 / 3.0) + s1 * var_l * jm / 4)
            nblocks = (int(mod.Ts[-1]) // b) - (T0 // b) + 1
            pts = pts1 + int(2 * K * (math.sqrt(2 * 41.4 * var_l * b) + 1))
            if nblocks * pts > MAX_TABLE_POINTS:
                continue
            todo = max(0, nblocks - mod.cached_count(("lattice", b, K)))
            cost = todo * (pts * COST_POINT + COST_TABLE)
            cands.append((cost, est_i + est_j, _Plan("lattice", b=b, K=K)))
        if est_i <= 0.05 * goal_min or pts1 * COST_POINT > PLAN_TIERS[-1][1]:
            break
    for fac, budget in PLAN_TIERS:
        goal_abs = min(goal_rel * fac, 0.5 * rel_tol) * E_ref
        ok = [c for c in cands if c[1] <= 0.5 * goal_abs and c[0] <= budget]
        if ok:
            return min(ok, key=lambda c: c[0])[2]
    return min(cands, key=lambda c: (c[1], c[0]))[2]


def _bahadur_rao(shape: StructuredShape, n: int, eps: float) -> float:
    """Uncertified estimate of ``delta(eps)`` (Bahadur-Rao), used only to size windows and to
    start searches."""
    E, w = shape.E, math.exp(eps)
    g = np.array([1 - w, E - w, 1 - w * E, E - w * E, 0.0])
    p = np.array([shape.pO, shape.pX, shape.pY, shape.pZ, shape.pF])
    keep = p > 0
    g, p = g[keep], p[keep]
    if g.max() <= 0:
        return 0.0
    if float(np.dot(p, g)) >= 0:
        return float(np.dot(p, np.maximum(g, 0)))
    first = float(np.dot(p, np.maximum(g, 0)))      # delta <= E[G_+] always
    try:
        logd = saddle_log_delta(g, p, n, rtol=1e-12)
    except (ValueError, ArithmeticError):           # only a hint: fall back to E[G_+]
        return first
    return min(first, math.exp(max(logd, -745.0)))


# ----------------------------------------------------------------------------- public API
def _check(law: GPARV, n: int) -> tuple[StructuredShape, int]:
    if not isinstance(law, GPARV):
        raise ParameterError(f"law must be a GPARV, got {type(law).__name__}")
    n = V.int_at_least("n", n, 1)
    shape = structured_shape(law)
    if shape is None:
        raise ParameterError("law does not have the structured shape (atoms (1,1), (E,1), "
                             "(1,E), (E,E), (0,0)); use amp.delta.dispatch.delta_bracket")
    return shape, n


def _atom_noise(shape: StructuredShape, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Atoms ``g`` of the four blanket types and their floating-point noise
    ``16 u (a + w b)`` (the float ``E`` and ``e^eps`` are within a few ulps of the exact ones)."""
    E, w = shape.E, math.exp(eps)
    g = np.array([1 - w, E - w, 1 - w * E, E - w * E])
    noise = 16 * U * np.array([1 + w, E + w, 1 + w * E, E + w * E])
    return g, noise


def _atom_floor(shape: StructuredShape, eps: float) -> tuple[float, float, float]:
    """:func:`amp.delta.dispatch.atom_floor` of the four blanket types (see :func:`amp.delta.dispatch.widen`)."""
    g, noise = _atom_noise(shape, eps)
    return atom_floor(g, np.array([shape.pO, shape.pX, shape.pY, shape.pZ]), noise)


def _floor_width(shape: StructuredShape, eps: float, upper: float) -> float:
    """Width that :func:`amp.delta.dispatch.widen` alone adds to a bracket ending at ``upper``."""
    rho, gpos, absn = _atom_floor(shape, eps)
    return 2 * (rho * upper + 2.01 * rho * gpos + absn) + 16 * U * upper


def _zero(eps: float, n: int, shape: StructuredShape, label: str, why: str,
          noise_level: float = 0.0) -> DeltaResult:
    dev = shape.dev_a + math.exp(eps) * shape.dev_b + noise_level
    return DeltaResult(eps, n, 0.0, dev, "structured", label=label, details={"why": why})


def _delta_one(shape: StructuredShape, n: int, eps: float, rel_tol: float, label: str,
               hint: float | None = None, goal: float | None = None,
               abs_tol: float = DEFAULT_ABS_TOL) -> DeltaResult:
    E = shape.E
    w = math.exp(eps)                       # within 1 ulp of e^eps
    g4, noise4 = _atom_noise(shape, eps)
    p4 = np.array([shape.pO, shape.pX, shape.pY, shape.pZ])
    live = p4 > 0
    if np.all(g4[live] + noise4[live] <= 0):
        return _zero(eps, n, shape, label, "S <= 0 surely")
    if shape.pX <= 0 or np.all(g4[live] <= noise4[live]):
        # every positive atom is rounding noise around 0 (eps = log E within rounding):
        # 0 <= delta <= E[G_+] <= sum p noise over the atoms that may be positive
        lvl = float(np.dot(p4[live], noise4[live] * (g4[live] > -noise4[live])))
        return _zero(eps, n, shape, label, "eps = log E within rounding", lvl)
    if abs_tol > 0 and n > 1 and hint is None:
        # a delta far below any practical target: the Chernoff bound settles it cheaply
        ga = np.array([1 - w, E - w, 1 - w * E, E - w * E, 0.0])
        pa = np.array([shape.pO, shape.pX, shape.pY, shape.pZ, shape.pF])
        ch = chernoff_upper(ga, pa, n, np.full(5, 16 * U * (1 + w) * E))
        ch += shape.dev_a + w * shape.dev_b
        if ch <= abs_tol:
            return DeltaResult(eps, n, 0.0, ch, "structured", label=label,
                               details={"why": "Chernoff bound below abs_tol"})
    est = hint if hint is not None else _bahadur_rao(shape, n, eps)
    # tail level of the T window and of the nuisance windows: the neglected masses
    # (E - w) E[T; outside] and beta V tails stay ~1e-3 * goal below the estimated E[S_+]
    d = E - 1.0
    pT = shape.pX + shape.pY
    goal = min(rel_tol, WIDTH_GOAL) if goal is None else min(goal, rel_tol)
    nu_mu = (shape.pO + E * shape.pZ) / max(1.0 - pT, 1e-300)
    scale = max(d * pT, math.expm1(eps) * nu_mu, 1e-300)
    log_tau = math.log(max(max(est, 1e-300) * 1e-3 * goal / scale, 1e-300))
    log_tau = min(max(log_tau, -700.0), LOG_TAU_V)
    mod = _model(shape, n, log_tau)
    ev = _Evaluator(mod, eps)
    lin, err, lt, zt = ev.sums()
    E_ref = max(lin - err, 0.5 * est * n, TINY)
    plan = _plan_for(mod, ev, goal, E_ref, rel_tol)
    parts = _evaluate(mod, ev, plan)
    lower, upper = _assemble(parts, n, shape, eps)
    # the T window must not dominate the width
    tails = parts.T_tail + parts.lin_tail + parts.zero_tail
    # (tails far below the atoms' floating-point floor cannot matter)
    floor_n = _floor_width(shape, eps, 0.0) * n
    if (tails > 1e-2 * goal * max(lower * n, TINY) and tails > 1e-3 * floor_n
            and mod.log_tau > -690):
        mod2 = _model(shape, n, max(mod.log_tau - 30.0, -700.0))
        if mod2 is not mod:
            return _delta_one(shape, n, eps, rel_tol, label,
                              hint=max(lower, TINY) if lower > 0 else est * 1e-6, goal=goal,
                              abs_tol=abs_tol)
    width = (upper - lower) / upper if upper > 0 else 0.0
    # the atoms' floating-point slack (both ends) is a floor no computation can lower: the
    # width check applies to what lies above it
    if width > rel_tol and upper - lower > abs_tol + 1.01 * _floor_width(shape, eps, upper):
        raise NumericalError(f"structured delta at eps={eps:g}, n={n}: certified relative width "
                             f"{width:.3g} exceeds rel_tol={rel_tol:g}")
    details = {"plan": (plan.mode, plan.b, plan.K), "T_window": (mod.T_lo, mod.T_hi),
               "band_elems": parts.band_elems, "table_points": parts.table_points,
               "gap_j": parts.gap_j / n, "gap_int": parts.gap_i / n,
               "T_tail": parts.T_tail / n, "lin_err": parts.lin_err / n,
               "tails": (parts.lin_tail + parts.zero_tail) / n, "estimate_BR": est}
    return DeltaResult(eps, n, lower, upper, "structured", None, parts.table_points, label,
                       details)


def delta_bracket_structured(law: GPARV, n: int, eps: float | Iterable[float], *,
                             rel_tol: float = 2e-3, abs_tol: float = DEFAULT_ABS_TOL,
                             ) -> DeltaResult | list[DeltaResult]:
    """Certified ``[lower, upper]`` of ``delta(eps) = E[(G_1 + ... + G_n)_+] / n`` (Theorem 4)
    for a law with the Table 1 structure (see :func:`supports`).

    The relative width aimed at is ``min(rel_tol, 1e-6)``; a width above ``rel_tol`` raises
    :class:`~amp.core.errors.NumericalError` unless ``upper - lower <= abs_tol`` (as in
    :func:`amp.delta.dispatch.delta_bracket`: deltas far below any practical target) plus the
    floating-point floor: the float atoms ``E``, ``e^eps`` are within ``16 u (a + e^eps b)`` of
    the exact ones (:func:`amp.delta.dispatch.atom_floor`: about ``64 u E[G_+]`` plus a relative
    ``32 u``, plus the noise of atoms near 0 such as ``E - e^eps`` at ``eps ~ eps0``); both ends
    always include it.  An iterable
    ``eps`` returns a list and reuses the eps-free count machinery (windows, nuisance tables).
    """
    shape, n = _check(law, n)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    abs_tol = V.positive_float("abs_tol", abs_tol, allow_zero=True)
    if np.ndim(eps) == 0:
        return _delta_one(shape, n, V.positive_float("eps", eps, allow_zero=True), rel_tol,
                          law.label, abs_tol=abs_tol)
    return [_delta_one(shape, n, V.positive_float("eps", e, allow_zero=True), rel_tol,
                       law.label, abs_tol=abs_tol) for e in np.asarray(list(eps), dtype=float)]


def epsilon_bracket_structured(law: GPARV, n: int, delta: float, rel_tol: float = 1e-5,
                               history: list | None = None) -> tuple[float, float]:
    """Certified ``(eps_lo, eps_hi)`` around ``eps(delta) = min{eps : delta(eps) <= delta}``.

    ``delta_upper(eps_hi) <= delta`` (``eps_hi`` is a valid central eps) and, unless
    ``eps_lo == 0``, ``delta_lower(eps_lo) > delta`` (the exact ``eps(delta) > eps_lo``);
    ``eps_hi - eps_lo <= rel_tol * eps_hi``.  A Bahadur-Rao estimate gives the start, a secant
    on ``log delta`` converges, and two probes at ``eps (1 -+ rel_tol / 3)`` certify the two
    ends.  Every step is a certified evaluation sharing one count model (the tables are built
    once).  Returns ``(0, 0)`` when ``delta(0) <= delta``.  ``history``, if given, receives
    ``(eps, delta_lower, delta_upper)`` of every evaluation.
    """
    shape, n = _check(law, n)
    delta = V.probability_open("delta", delta)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    label = law.label
    if shape.pX <= 0:
        return 0.0, 0.0
    eps_max = math.log(shape.E)
    # delta is certified to a relative width ~goal; the eps bracket can then be closed to
    # ~goal / |d log delta / d log eps| (>> rel_tol unless delta is close to delta(0))
    goal = min(2e-3, max(2e-6, 10 * rel_tol))
    cache: dict[float, DeltaResult] = {}

    def ev(e: float, g: float = goal) -> DeltaResult:
        key = (e, g)
        if key not in cache:
            cache[key] = _delta_one(shape, n, e, max(2e-3, g), label, goal=g,
                                    abs_tol=min(DEFAULT_ABS_TOL, 1e-3 * delta))
        return cache[key]

    r0 = ev(0.0)
    if r0.upper <= delta:
        return 0.0, 0.0
    lo, hi = 0.0, eps_max
    pts: list[tuple[float, float]] = []

    def probe(e: float, g: float = goal) -> float:
        nonlocal lo, hi
        r = ev(e, g)
        if r.upper <= delta:
            hi = min(hi, e)
        elif r.lower > delta:
            lo = max(lo, e)
        est = math.sqrt(max(r.lower, 1e-300) * r.upper) if r.lower > 0 else r.upper
        f = math.log(max(est, 1e-300)) - math.log(delta)
        pts.append((e, f))
        return f

    def f_br(e: float) -> float:
        return math.log(max(_bahadur_rao(shape, n, e), 1e-300)) - math.log(delta)

    try:
        e = optimize.brentq(f_br, eps_max * 1e-12, eps_max * (1 - 1e-9), xtol=1e-12, rtol=1e-10)
    except ValueError:
        e = 0.5 * eps_max
    g = goal
    for _ in range(40):
        if hi - lo <= rel_tol * hi:
            break
        if not lo < e < hi:
            e = 0.5 * (lo + hi)
        f = probe(e, g)
        if hi - lo <= rel_tol * hi:
            break
        if len(pts) >= 2 and pts[-2][1] != f:
            (e1, f1), (e2, f2) = pts[-2], pts[-1]
            e_new = e2 - f2 * (e2 - e1) / (f2 - f1)
        else:
            h = max(1e-9, 1e-4 * e)
            slope = (f_br(e + h) - f_br(max(e - h, 0.0))) / (e + h - max(e - h, 0.0))
            e_new = e - f / slope if slope < 0 else 0.5 * (lo + hi)
        if not lo < e_new < hi:
            e_new = 0.5 * (lo + hi)
        if abs(e_new - e) <= 0.1 * rel_tol * e_new:
            # converged: certify both ends around the root
            a, b = e_new * (1 - rel_tol / 3), e_new * (1 + rel_tol / 3)
            if b < hi:
                probe(b, g)
            if a > lo:
                probe(a, g)
            if hi - lo > rel_tol * hi:
                g = max(g / 10, 1e-7)           # the bracket did not close: tighten delta
            e = 0.5 * (a + b) if not lo < e_new < hi else e_new
            continue
        e = e_new
    if hi - lo > rel_tol * hi:
        raise NumericalError(f"epsilon search did not reach rel_tol={rel_tol:g} "
                             f"(bracket [{lo:.9g}, {hi:.9g}])")
    if history is not None:
        history.extend((e, r.lower, r.upper) for (e, _g), r in cache.items())
    return lo, hi
