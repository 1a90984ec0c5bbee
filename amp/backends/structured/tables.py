"""Nuisance tables: the cumulative law of ``V_m`` with certified lookups, and the exact tables.

Implements the *band* lookups and the ``exact`` nuisance tables of :mod:`amp.backends.structured`.
A :class:`Table` holds, on sorted atoms ``v_k`` of ``V_m``, ``F[i] = sum_{k < i} p_k`` and
``G[i] = sum_{k < i} (v_k - vc) p_k``, so ``g_m(c) = E[(c - beta V_m)_+]`` is one lookup
(summation by parts: no cancellation).  Certified error terms of a lookup
(:meth:`Table.lookup`): the relative error ``rel`` of every tabulated mass (plus an absolute
``abs_p`` per lattice point, :mod:`.lattice`), the rounding of the two-level cumulative sums,
the rounding of ``c`` (``h`` is ``F``-Lipschitz in ``c``), mass that may be double counted
(``alias``, subtracted from the lower end) and mass outside the table (``out``, ``c_+ out``
added to the upper end).

:func:`exact_table` (small ``n``): the exact atoms ``o + E z`` of ``V_m``, ``Z ~ Bin(m, qZ)``
(Boost pmf) and ``O | Z = z ~ Bin(m - z, kappa)`` (:func:`.binomial.binom_rows`), on Chernoff
windows; no approximation, the Chernoff mass outside the ``(o, z)`` window is an error term.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from amp.core.floats import U
from amp.core.tails import binom_window
from amp.backends.structured.binomial import ETA_BINOM, binom_rows, eta, pmf
from amp.backends.structured.nuisance import Nuisance

__all__ = ["Table", "cumulate", "cumulate_lattice", "exact_grid", "exact_table"]


# ----------------------------------------------------------------------------- cumulative sums
_CHUNK = 1024


def _cumsum(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Two-level cumulative sum: error <= (CHUNK + len/CHUNK + 2) u sum|x_k| (prefix); into
    ``out`` (length ``len(x)``; ``out`` may be ``x`` itself) when given.  Whole chunks are
    summed in place in ``out`` (no temporary of ``x``'s size: tables of 10^7 points at
    n ~ 1e11); the same additions in the same order as summing a zero-padded copy."""
    n = x.size
    if out is None:
        out = np.empty(n)
    full = n - n % _CHUNK
    rows = full // _CHUNK
    if rows:
        body = out[:full].reshape(rows, _CHUNK)
        np.cumsum(x[:full].reshape(rows, _CHUNK), axis=1, out=body)
    if full < n:
        np.cumsum(x[full:], out=out[full:])
    nrow = rows + (1 if full < n else 0)
    if nrow > 1:
        last = np.empty(nrow)
        if rows:
            last[:rows] = out[_CHUNK - 1:full:_CHUNK]
        if full < n:
            last[rows] = out[n - 1]
        off = np.zeros(nrow)
        off[1:] = np.cumsum(last[:-1])
        if rows:
            body += off[:rows, None]
        if full < n:
            out[full:] += off[rows]
    return out


def _cum_rel(n: int) -> float:
    """Relative error bound of :func:`_cumsum` over ``n`` terms (with a margin)."""
    return (_CHUNK + n / _CHUNK + 4) * U


def cumulate_lattice(origin: int, K: int, p: np.ndarray, vc: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cumulate` on the lattice ``v_k = (origin + k) / K`` without an array of the
    values (memory: tables of 10^7 points at n ~ 1e11); the same float operations
    (``v_k`` is the float ``(origin + k) / K``, then ``v_k - vc``, then times ``p_k``)."""
    F = np.zeros(p.size + 1)
    G = np.zeros(p.size + 1)
    _cumsum(p, F[1:])
    # (v_k - vc) p_k into G[1:] itself, a block at a time, then its cumulative sum in place
    t = G[1:]
    for i in range(0, p.size, 1 << 20):
        j = min(p.size, i + (1 << 20))
        v = np.arange(origin + i, origin + j, dtype=np.float64)   # integers: exact (< 2^53)
        v /= K
        v -= vc
        np.multiply(v, p[i:j], out=t[i:j])
    _cumsum(t, t)
    return F, G


def cumulate(vals: np.ndarray, p: np.ndarray, vc: float) -> tuple[np.ndarray, np.ndarray]:
    """``F[i] = sum_{k < i} p_k`` and ``G[i] = sum_{k < i} (v_k - vc) p_k`` (:class:`Table`)."""
    F = np.zeros(p.size + 1)
    G = np.zeros(p.size + 1)
    _cumsum(p, F[1:])
    t = vals - vc
    t *= p
    _cumsum(t, G[1:])
    return F, G


# ----------------------------------------------------------------------------- tables
@dataclass
class Table:
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


# ----------------------------------------------------------------------------- exact tables
#: :func:`exact_grid`'s window-determined part, keyed by the nuisance law, ``m`` and the
#: integer windows (a pure function of them), shared by every count model of the same law: a
#: fixed population's victim asks the same small laws at hundreds of counts ``n`` (their tail
#: levels differ, their windows mostly do not). Least recently used first out; at most
#: :data:`GRID_CACHE_CELLS` cells in all, none of more than :data:`GRID_CACHE_ENTRY`.
_GRID_CACHE: OrderedDict = OrderedDict()
_GRID_LOCK = threading.Lock()
GRID_CACHE_CELLS = 2_000_000
GRID_CACHE_ENTRY = 200_000
_grid_cells = [0]


@lru_cache(maxsize=8192)
def _window(m: int, q: float, log_tau: float) -> tuple[int, int, float, float]:
    """:func:`amp.core.tails.binom_window` (a pure function), remembered: the count models of
    one law share their tail level, so their small laws ask the same windows again."""
    return binom_window(m, q, log_tau)


def _grid_core(nu: Nuisance, m: int, z_lo: int, z_hi: int, o_lo: int, o_hi: int):
    """``(values, masses, sabs, rel, cells)`` of :func:`exact_grid` on the windows given (all
    cells, zero masses included)."""
    zs = np.arange(z_lo, z_hi + 1)
    os_ = np.arange(o_lo, o_hi + 1)
    pz = pmf(zs, m, nu.qZ) if nu.qZ > 0 else np.ones(1)
    po, rel, sabs = binom_rows(m - zs, o_lo, o_hi, nu.kappa)
    if 0 < nu.qZ < 1:                     # pz's Boost error beyond the floor BINOM_REL counts
        rel += max(0.0, float(np.max(eta(zs, m, nu.qZ))) - ETA_BINOM)
    P = (pz[:, None] * po).ravel()
    vals = (os_[None, :].astype(float) + nu.E * zs[:, None]).ravel()
    return vals, P, sabs, rel, int(zs.size * os_.size)


def exact_grid(nu: Nuisance, m: int, log_tau: float):
    """Masses ``P(O = o, Z = z)`` of ``m`` nuisance users on a Chernoff window, as
    ``(values o + E z, masses, outside mass bound, cells, rel)``: ``Z ~ Bin(m, qZ)`` (Boost
    pmf), ``O | Z = z ~ Bin(m - z, kappa)`` rows from :func:`binom_rows`; the masses carry a
    relative error ``<= rel``, the rows' tiny cells an absolute one (added to the outside mass).
    The cells on given windows are computed once (:data:`_GRID_CACHE`): the same numbers."""
    if m <= 0:
        return np.zeros(1), np.ones(1), 0.0, 1, 0.0
    out = 0.0
    if nu.qZ > 0:
        z_lo, z_hi, a1, a2 = _window(int(m), nu.qZ, log_tau)
        out += math.exp(a1) + math.exp(a2)
    else:
        z_lo = z_hi = 0
    if nu.qO > 0:
        o_lo, o_hi, a1, a2 = _window(int(m), nu.qO, log_tau)
        out += math.exp(a1) + math.exp(a2)
    else:
        o_lo = o_hi = 0
    key = (nu.E, nu.qO, nu.qZ, nu.qF, int(m), z_lo, z_hi, o_lo, o_hi)
    with _GRID_LOCK:
        hit = _GRID_CACHE.get(key)
        if hit is not None:
            _GRID_CACHE.move_to_end(key)
    if hit is None:
        hit = _grid_core(nu, m, z_lo, z_hi, o_lo, o_hi)
        size = hit[0].size
        if size <= GRID_CACHE_ENTRY:
            with _GRID_LOCK:
                if key not in _GRID_CACHE:
                    _GRID_CACHE[key] = hit
                    _grid_cells[0] += size
                while _grid_cells[0] > GRID_CACHE_CELLS:
                    _grid_cells[0] -= _GRID_CACHE.popitem(last=False)[1][0].size
    vals, P, sabs, rel, cells = hit
    out += sabs                           # sum_z P(z) sabs_z <= max_z sabs_z
    keep = P > 0
    return vals[keep], P[keep], min(1.0, out), cells, rel


def exact_table(nu: Nuisance, m: int, log_tau: float) -> tuple[Table, int]:
    """Exact atoms ``o + E z`` of ``V_m`` (sorted) with cumulative mass and first moment."""
    vals, P, out, cells, rel = exact_grid(nu, m, log_tau)
    order = np.argsort(vals, kind="stable")
    vals, P = vals[order], P[order]
    vc = m * nu.mu
    F, G = cumulate(vals, P, vc)
    span = float(np.max(np.abs(vals - vc))) if vals.size else 0.0
    # the lower end may over-count the tiny cells' errors: subtract them like aliasing
    return Table(vals, F, G, vc, rel=rel, abs_p=0.0, alias=out, out=out, size=vals.size,
                 span=span), cells

