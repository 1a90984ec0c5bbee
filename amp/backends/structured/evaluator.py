"""Per-``eps`` evaluation of ``E[S_+]`` on a count model, and the assembly of the bracket.

Implements the eps-dependent half of the Algorithm of :mod:`amp.backends.structured`.  With
``w = e^eps``, ``beta = w - 1``, ``c(T, x) = (E - w) x + (1 - w E)(T - x)`` and the Bernstein
window of ``V_m`` from the model (:mod:`.model`), :class:`Evaluator` splits every ``T`` into

* the linear region ``x >= x_hi(T)``, summed in closed form:
  ``sum_{x>=k} P(x)(c(x) - beta m mu) = (cbar - beta m mu) P(x >= k) + A (1-r) k P(x = k)``
  (Boost ``pmf``; ``sf`` carried along the run of ``T`` by :func:`.binomial.sf_run`, with
  its certified relative error; a short linear region is summed term by term in the band
  instead, because the closed form cancels when ``x_hi`` is close to ``T``);
* the zero region ``x <= x_lo(T)``, whose value is a tail only;
* the band in between, where :func:`evaluate` looks ``g_m(c)`` up in the nuisance tables of the
  chosen plan (:mod:`.tables`, :mod:`.zsplit`, :mod:`.lattice`), with ``P(x | T)`` by a
  log-ratio recurrence from one Boost ``pmf`` per ``T``.

:func:`assemble` adds the certified error terms of the package docstring: the explicit bound of
the cancelling closed form (``lin_err``: ``ETA_BINOM`` on the ``pmf`` term, the ``sf``'s own
certified relative error on the other, plus their rounding), the
Bernstein tails of the linear and zero regions, ``(E - w) E[T; T outside]``, the recurrence's
rounding of the band masses (``band_rel``), the relative factor ``1 +- REL_SAFETY`` on the
sums of non-negative terms, the idealisation ``dev_a + e^eps dev_b`` and the floating-point
floor of the atoms (:func:`amp.core.floats.widen`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from amp.core.errors import NumericalError
from amp.core.floats import TINY, U, widen
from amp.backends.structured.binomial import eta, logpmf, pmf, sf_run
from amp.backends.structured.model import CountModel, Plan
from amp.backends.structured.shape import StructuredShape, shape_atom_floor
from amp.backends.structured.zsplit import zsplit_eval

__all__ = ["REL_SAFETY", "MAX_BAND", "Parts", "Evaluator", "evaluate", "assemble"]

REL_SAFETY = 1e-9                      # relative factor on sums of non-negative terms
MAX_BAND = 40_000_000                  # band elements per evaluation


@dataclass
class Parts:
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
    rel_safety: float = REL_SAFETY     # >= 1.25 (Boost's eta on PT + on the band's anchors)
    details: dict = field(default_factory=dict)


class Evaluator:
    """Per-``eps`` quantities shared by the planning and the table passes."""

    def __init__(self, mod: CountModel, eps: float):
        self.mod = mod
        self.eps = eps
        E = mod.E
        w = math.exp(eps)
        sh = mod.shape
        # the nuisance coefficient (V = O + E Z counts the levels sv, sv E) and the active
        # atoms lx (E - w), ly (1 - w E); all levels are 1 for Theorem 4's blanket laws
        self.beta = sh.sv * math.expm1(eps)
        self.gX = sh.lx * (E - w)
        self.gY = sh.ly * (1.0 - w * E)
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
        eta_pm = eta(self.x_hi, Ts, r).ravel()       # Boost's pmf at x_hi (and sf, if Boost)
        eta_sf = eta_pm.copy()
        Ppm = np.zeros(Ts.size)
        if np.any(has_lin):
            # P(x >= x_hi) along the run of T (Boost anchors, exact recurrences between them;
            # each value with its certified relative error, at most 1.25 eta)
            Psf[has_lin], eta_sf[has_lin] = sf_run(self.x_hi[has_lin], Ts[has_lin], r)
            Ppm[has_lin] = pmf(self.x_hi[has_lin], Ts[has_lin], r)
        cbar = Tf * (self.gX * r + gY * (1 - r))
        base = cbar - beta * mod.m * mod.mu
        t1 = base * Psf
        t2 = A * (1 - r) * self.x_hi * Ppm
        lin = t1 + t2
        lin_err = (np.maximum(eta_sf, eta_pm) * np.abs(t1) + eta_pm * np.abs(t2)
                   + 8 * U * (np.abs(cbar) + beta * mod.m * mod.mu) * Psf + 4 * U * np.abs(t2))
        self.lin_T = lin
        self.lin_err_T = lin_err
        self.lin_tail_T = beta * mod.pm_l * Psf * (1 + eta_sf)     # an upper tail: sf up
        nonempty_zero = self.x_lo >= 0
        self.zero_tail_T = np.where(nonempty_zero, beta * mod.v_z * mod.z_tau, 0.0)
        self.nb = np.maximum(self.x_hi - self.x_lo - 1, 0)
        self.total_band = int(self.nb.sum())

    def sums(self) -> tuple[float, float, float, float]:
        """``E[. ; linear region]``, its rounding bound, and the Bernstein tails of the linear
        and zero regions, each summed over ``T`` (S units)."""
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
        p_top = pmf(x_top, Ts[sel], r)
        # the relative safety of the sums must cover Boost's error on these anchors too
        self.eta_top = float(np.max(eta(x_top, Ts[sel], r)))
        with np.errstate(divide="ignore"):
            lp_top = np.log(p_top)
        under = p_top < 1e-290
        lp_top_up = lp_top.copy()
        if np.any(under):
            # tiny masses: scipy's gammaln-based log-pmf (abs. error << 1e-3 in the log) with a
            # margin for the upper end; 0 for the lower end
            lp_top_up[under] = logpmf(x_top[under], Ts[sel][under], r) + 1e-3
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


def evaluate(mod: CountModel, ev: Evaluator, plan: Plan) -> Parts:
    """Certified pieces of ``E[S_+]`` at one ``eps`` with the given table plan."""
    parts = Parts()
    lin, err, lt, zt = ev.sums()
    parts.lin, parts.lin_err, parts.lin_tail, parts.zero_tail = lin, err, lt, zt
    parts.T_tail = max(ev.gX, 0.0) * mod.ET_out
    iT, x, lp_lo, lp_up = ev.band()
    # the sums' relative safety covers Boost's error on the masses of T and on the band's
    # anchors (their eta; at the floor 1.25 (2e-10 + 2e-10) < REL_SAFETY, as before)
    parts.rel_safety = max(REL_SAFETY, 1.25 * (mod.eta_T + getattr(ev, "eta_top", 0.0)))
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
    blocks, jT = mod.block_of(plan.b)
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
        lo, up = zsplit_eval(mod, zs, iT, c, c_err, beta)
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


def assemble(parts: Parts, n: int, shape: StructuredShape, eps: float
             ) -> tuple[float, float]:
    """Certified ``(lower, upper)`` of ``delta(eps)`` from the pieces of one evaluation."""
    rs = parts.rel_safety
    lower = (parts.lin - parts.lin_err) * (1 - rs) + parts.band_lo * (1 - rs)
    upper = ((parts.lin + parts.lin_err + parts.lin_tail + parts.zero_tail) * (1 + rs)
             + parts.band_up * (1 + rs) + parts.T_tail)
    lower = max(0.0, lower) / n
    upper = upper / n
    # idealisation of the atoms, and their floating-point distance to the exact ratios
    dev = shape.dev_a + math.exp(eps) * shape.dev_b
    lower, upper = widen(max(0.0, lower - dev), upper + dev, shape_atom_floor(shape, eps, n))
    return lower, max(upper, lower, TINY)

