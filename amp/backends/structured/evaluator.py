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

__all__ = ["REL_SAFETY", "MAX_BAND", "BAND_CHUNK", "BAND_CACHE_BYTES", "Parts", "Evaluator", "evaluate", "assemble"]

REL_SAFETY = 1e-9                      # relative factor on sums of non-negative terms
MAX_BAND = 40_000_000                  # band elements per evaluation
BAND_CHUNK = 1 << 17                   # band elements per chunk (memory and cache)
BAND_CACHE_BYTES = 96 << 20            # the band is kept between passes up to this size
CORE_MIN_T = 256                       # windows of fewer T are evaluated whole (Evaluator._core)
EVAL_CHUNK = 1 << 18                   # T values per slice of the per-T arrays (Evaluator)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``sum a_k b_k`` by ``np.einsum``, not ``np.dot``: the latter calls a threaded BLAS
    that is 10-50x slower on a loaded machine.  Rounding: any order of recursive summation
    of ``N`` products is within ``(N + 1) u sum |a_k b_k|`` of the exact sum; the band is
    summed per chunk (``N <= BAND_CHUNK``, then a few hundred chunk sums) and the ``T`` sums
    have ``N`` = the window (``< 10^7``), so that is below the ``REL_SAFETY`` every sum of
    non-negative terms carries (:func:`assemble`)."""
    return float(np.einsum("i,i->", a, b))


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
    skip: float = 0.0                  # bound of the skipped ends of the T window (upper only)
    band_elems: int = 0
    table_points: int = 0
    rel_safety: float = REL_SAFETY     # >= 1.25 (Boost's eta on PT + on the band's anchors)
    details: dict = field(default_factory=dict)


class Evaluator:
    """Per-``eps`` quantities shared by the planning and the table passes.

    ``skip_rel`` (default 0): the ``T`` at both ends of the window whose whole contribution
    ``P(T) E[S_+ | T]`` is certified (Chernoff) to total at most about ``skip_rel`` times
    ``E[S_+]`` are not evaluated (:meth:`_core`); their bound ``skip_up`` is added to the upper
    end (the lower end counts them as 0).  The bracket moves by about that relative amount
    while the work over ``T`` shrinks from the whole window of the model (kept for every
    ``eps``) to the ``T`` that matter at this ``eps``.
    """

    def __init__(self, mod: CountModel, eps: float, skip_rel: float = 0.0,
                 per_T: bool = False):
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
        nT = mod.Ts.size
        # every per-T array is computed in slices of EVAL_CHUNK values of T (the same
        # element-wise operations): the temporaries of one slice at a time (memory at
        # n ~ 1e11); the linear region's four per-T terms are summed per slice against P(T)
        # (sums(); kept as arrays only with per_T=True, for tests)
        slices = [slice(i, min(nT, i + EVAL_CHUNK)) for i in range(0, max(nT, 1), EVAL_CHUNK)]
        self.x_hi = np.empty(nT, dtype=np.int64)
        x_lo = np.empty(nT, dtype=np.int64)
        for sl in slices:
            self.x_hi[sl], x_lo[sl] = self._regions(sl)
        core = self._core(skip_rel, slices)
        self.core = core
        self.has_lin = (self.x_hi <= mod.Ts) & core
        self.per_T = per_T
        if per_T:
            self.lin_T = np.empty(nT)
            self.lin_err_T = np.empty(nT)
            self.lin_tail_T = np.empty(nT)
            self.zero_tail_T = np.empty(nT)
        self._sums = [0.0, 0.0, 0.0, 0.0]
        self.nb = np.empty(nT, dtype=np.int64)
        for sl in slices:
            self._linear(sl, x_lo[sl])
        del x_lo
        self.total_band = int(self.nb.sum())

    def _regions(self, sl: slice) -> tuple[np.ndarray, np.ndarray]:
        """``(x_hi, x_lo)`` of the ``T`` in ``sl``: the linear region is ``x >= x_hi``, the
        zero region ``x <= x_lo``."""
        mod = self.mod
        Tf = mod.Ts[sl].astype(float)
        beta, A, gY = self.beta, self.A, self.gY
        v_z, v_l, _, _ = mod.window(sl)
        # regions of x (with a relative safety margin against rounding of c)
        qh = (beta * v_l - gY * Tf) / A
        qz = (beta * v_z - gY * Tf) / A
        x_hi = np.ceil(qh + 1e-12 * np.abs(qh) + 1e-9)
        x_lo = np.floor(qz - 1e-12 * np.abs(qz) - 1e-9)
        x_hi = np.clip(x_hi, 0, Tf + 1)
        # a short linear region is summed term by term in the band instead (its closed form
        # cancels when x_hi is close to T)
        x_hi = np.where(Tf + 1 - x_hi <= 64, Tf + 1, x_hi)
        x_lo = np.clip(x_lo, -1, Tf)
        x_lo = np.minimum(x_lo, x_hi - 1)
        return x_hi.astype(np.int64), x_lo.astype(np.int64)

    def _linear(self, sl: slice, x_lo: np.ndarray) -> None:
        """The linear region's value, its rounding bound and the Bernstein tails of the ``T``
        in ``sl`` (``lin_T``, ``lin_err_T``, ``lin_tail_T``, ``zero_tail_T``) and their band
        sizes ``nb``."""
        mod = self.mod
        r, beta, gY, A = mod.r, self.beta, self.gY, self.A
        Ts = mod.Ts[sl]
        Tf = Ts.astype(float)
        x_hi = self.x_hi[sl]
        has_lin = self.has_lin[sl]
        core = self.core[sl]
        Psf = np.zeros(Ts.size)
        eta_pm = eta(x_hi, Ts, r).ravel()            # Boost's pmf at x_hi (and sf, if Boost)
        eta_sf = eta_pm.copy()
        Ppm = np.zeros(Ts.size)
        if np.any(has_lin):
            # P(x >= x_hi) along the run of T (Boost anchors, exact recurrences between them;
            # each value with its certified relative error, at most 1.25 eta)
            Psf[has_lin], eta_sf[has_lin] = sf_run(x_hi[has_lin], Ts[has_lin], r)
            Ppm[has_lin] = pmf(x_hi[has_lin], Ts[has_lin], r)
        m = mod.m[sl]
        v_z, _, pm_l, z_tau = mod.window(sl)
        cbar = Tf * (self.gX * r + gY * (1 - r))
        base = cbar - beta * m * mod.mu
        t1 = base * Psf
        t2 = A * (1 - r) * x_hi * Ppm
        lin = t1 + t2
        lin_err = (np.maximum(eta_sf, eta_pm) * np.abs(t1) + eta_pm * np.abs(t2)
                   + 8 * U * (np.abs(cbar) + beta * m * mod.mu) * Psf
                   + 4 * U * np.abs(t2))
        lin_tail = beta * pm_l * Psf * (1 + eta_sf)   # an upper tail: sf up
        nonempty_zero = x_lo >= 0
        zero_tail = np.where(nonempty_zero & core, beta * v_z * z_tau, 0.0)
        PT = mod.PT[sl]
        for i, a in enumerate((lin, lin_err, lin_tail, zero_tail)):
            self._sums[i] += _dot(PT, a)
        if self.per_T:
            self.lin_T[sl], self.lin_err_T[sl] = lin, lin_err
            self.lin_tail_T[sl], self.zero_tail_T[sl] = lin_tail, zero_tail
        self.nb[sl] = np.where(core, np.maximum(x_hi - x_lo - 1, 0), 0)

    def _core(self, rel: float, slices: list | None = None) -> np.ndarray:
        """The ``T`` evaluated (a boolean mask over the window); sets ``skip_up``.

        Given ``T``, ``S = c(T, X) - beta V_m`` with ``X ~ Bin(T, r)``, ``c = A X + gY T`` and
        the nuisance ``V_m`` of the ``m = n - T`` others (independent of ``X``), and
        ``y_+ <= e^(theta y) / (e theta)`` for every ``theta > 0``, so (Chernoff)

            ``E[S_+ | T] <= B_T = exp(theta gY T + T log(1 - r + r e^(theta A))
            + m log E[e^(-theta beta v)]) / (e theta)``,

        the least over a few ``theta`` around the minimiser at the centre of the window.  With
        ``C = sum_T P_up(T) B_T`` (at most a small factor above ``E[S_+]``: the Bahadur-Rao
        factor), the ends of the window (from below and from above) whose sums of
        ``P_up(T) B_T`` stay within ``rel C / 2`` each are skipped: their contribution lies in
        ``[0, sum P_up(T) B_T]``; ``skip_up`` is that sum times 2 (a margin far above the
        rounding of the logs, ``< 1e-9`` relative; ``P_up`` carries Boost's ``eta_T``).  The
        bracket moves by at most ``2 rel C``, about ``rel`` times ``E[S_+]`` up to that factor.
        """
        mod = self.mod
        nT = mod.Ts.size
        self.skip_up = 0.0
        core = np.ones(nT, dtype=bool)
        A, gY, r, beta = self.A, self.gY, mod.r, self.beta
        nu = mod.nu
        if rel <= 0 or nT < CORE_MIN_T or not (A > 0 and 0.0 < r < 1.0):
            return core
        if slices is None:
            slices = [slice(0, nT)]
        ic = int(np.argmax(mod.PT))
        Tc, mc = float(mod.Ts[ic]), float(mod.m[ic])

        def parts_of(th: float) -> tuple[float, float]:
            # per active user: log(1 - r + r e^(x)) = x + log1p((1 - r) expm1(-x)), x = theta A
            # (no overflow); plus theta gY.  Per nuisance user: log E[e^(-theta beta v)]
            x = th * A
            act = th * gY + x + math.log1p((1 - r) * math.expm1(-x))
            nui = math.log1p(nu.qO * math.expm1(-th * beta)
                             + nu.qZ * math.expm1(-th * beta * nu.E))
            return act, nui

        def f(th: float) -> float:
            act, nui = parts_of(th)
            return act * Tc + nui * mc - 1.0 - math.log(th)

        grid = [10.0 ** (k / 8.0) for k in range(-160, 40)]
        try:
            vals = [f(t) for t in grid]
        except (OverflowError, ValueError):
            return core
        k0 = int(np.argmin(vals))
        th0 = grid[k0]
        ths = [th0 * fac for fac in (0.5, 0.71, 0.84, 1.0, 1.19, 1.41, 2.0)]
        parts = [parts_of(th) for th in ths]
        contrib = np.empty(nT)
        for sl in slices:
            Tf = mod.Ts[sl].astype(float)
            m = mod.m[sl]
            with np.errstate(over="ignore", invalid="ignore"):
                logB = np.full(Tf.size, np.inf)
                for th, (act, nui) in zip(ths, parts):
                    logB = np.minimum(logB, act * Tf + nui * m - 1.0 - math.log(th))
                c = mod.PT[sl] * (1 + mod.eta_T) * np.exp(np.minimum(logB, 700.0))
            contrib[sl] = np.where(np.isfinite(c), c, np.inf)
        total = float(contrib.sum())
        if not math.isfinite(total) or total <= 0:
            return core
        half = 0.5 * rel * total
        left = np.cumsum(contrib)
        right = np.cumsum(contrib[::-1])[::-1]
        core = ~((left <= half) | (right <= half))
        if not core.any():
            return np.ones(nT, dtype=bool)
        self.skip_up = 2.0 * float(contrib[~core].sum())
        return core

    def sums(self) -> tuple[float, float, float, float]:
        """``E[. ; linear region]``, its rounding bound, and the Bernstein tails of the linear
        and zero regions, each summed over ``T`` (S units): the sums of the slices' sums
        (:func:`_dot` per slice, then one addition per slice: within the ``REL_SAFETY`` of
        every sum of non-negative terms, as one sum over the window; the linear value and its
        rounding bound as before)."""
        lin, err, lt, zt = self._sums
        return lin, err, lt, zt

    # -- the band, built in chunks of consecutive T ------------------------------------
    def chunks(self) -> list[tuple[int, int]]:
        """Ranges ``[i0, i1)`` of ``T`` indices whose bands hold at most :data:`BAND_CHUNK`
        elements each (one ``T`` with a longer band is a chunk of its own): every pass over
        the band works on one chunk at a time, so its temporaries stay small (memory, cache)
        whatever ``n``; the sums over the chunks are the sums over the band."""
        if getattr(self, "_ranges", None) is None:
            nT = self.nb.size
            cum = np.cumsum(self.nb)
            cuts = [0]
            while cuts[-1] < nT:
                i0 = cuts[-1]
                base = int(cum[i0 - 1]) if i0 else 0
                i1 = int(np.searchsorted(cum, base + BAND_CHUNK, side="right"))
                cuts.append(min(nT, max(i1, i0 + 1)))
            self._ranges = list(zip(cuts[:-1], cuts[1:]))
        return self._ranges

    def band_chunks(self):
        """The band chunk by chunk (:meth:`chunks`): ``(iT, x, lp_lo, lp_up, band_rel)`` per
        chunk, ``band_rel`` the recurrence's relative error bound on that chunk's masses.  The
        chunks are kept after the first pass when they fit in :data:`BAND_CACHE_BYTES`, else
        rebuilt on every pass (the same values)."""
        if self.total_band == 0:
            return
        if self.total_band > MAX_BAND:
            raise NumericalError(f"structured delta at eps={self.eps:g}, n={self.mod.n} needs "
                                 f"{self.total_band} band evaluations (max {MAX_BAND})")
        cached = getattr(self, "_cache", None)
        if cached is not None:
            yield from cached
            return
        keep = self.total_band * 32 <= BAND_CACHE_BYTES
        store = []
        for i0, i1 in self.chunks():
            ch = self._make_band(i0, i1)
            if ch[0].size == 0:
                continue
            if keep:
                store.append(ch)
            yield ch
        if keep:
            self._cache = store

    def band_mass(self) -> tuple[float, int]:
        """``(W, size)``: the band's total mass ``sum_T P(T) sum_x P_up(x | T)`` (upper masses)
        and its number of elements, for the planner (:mod:`.planner`)."""
        bm = np.zeros(self.nb.size)
        for iT, x, lp_lo, lp_up, _ in self.band_chunks():
            bm += np.bincount(iT, weights=np.exp(lp_up), minlength=bm.size)
        return float((self.mod.PT * bm).sum()), self.total_band

    def band(self):
        """Flattened band: T index, x, log-pmf bounds (lower, upper) of ``P(x | T)`` (all
        chunks concatenated; the engine itself works chunk by chunk)."""
        parts = list(self.band_chunks())
        if not parts:
            e = np.zeros(0)
            return np.zeros(0, np.int64), np.zeros(0, np.int64), e, e
        return tuple(np.concatenate([c[i] for c in parts]) for i in range(4))

    def _make_band(self, i0: int, i1: int):
        mod = self.mod
        nb = self.nb
        Ts = mod.Ts
        r = mod.r
        sel = i0 + np.flatnonzero(nb[i0:i1] > 0)
        if sel.size == 0:
            e = np.zeros(0)
            return np.zeros(0, np.int64), np.zeros(0, np.int64), e, e, 0.0
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
        self.eta_top = max(getattr(self, "eta_top", 0.0),
                           float(np.max(eta(x_top, Ts[sel], r))))
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
        band_rel = float(np.expm1(err[valid].max())) if valid.any() else 0.0
        self.band_rel = max(getattr(self, "band_rel", 0.0), band_rel)
        iT = np.repeat(sel, nbs)
        x = X[valid]
        lp_lo = (np.where(under, -np.inf, lp_top)[:, None] + cs)[valid]
        lp_up = (lp_top_up[:, None] + cs)[valid]
        return iT, x.astype(np.int64), lp_lo, lp_up, band_rel


def evaluate(mod: CountModel, ev: Evaluator, plan: Plan) -> Parts:
    """Certified pieces of ``E[S_+]`` at one ``eps`` with the given table plan.

    The band is taken chunk by chunk (:meth:`Evaluator.band_chunks`); each chunk's pieces are
    sums of the same per-element terms as over the whole band (non-negative terms, and the
    gaps), so the pieces are the band's up to the order of the additions (covered, like every
    sum of non-negative terms, by ``REL_SAFETY``).  The masses of a chunk carry that chunk's
    recurrence error bound (at most the band's)."""
    parts = Parts()
    lin, err, lt, zt = ev.sums()
    parts.lin, parts.lin_err, parts.lin_tail, parts.zero_tail = lin, err, lt, zt
    parts.T_tail = max(ev.gX, 0.0) * mod.ET_out
    parts.skip = ev.skip_up
    parts.band_elems = ev.total_band
    seen: set = set()
    zs = mod.zsplit() if (plan.mode == "zsplit" and ev.total_band and ev.beta != 0.0) else None
    for chunk in ev.band_chunks():
        _evaluate_chunk(mod, ev, plan, parts, chunk, seen, zs)
    if zs is not None:
        parts.table_points = zs.size
    # the sums' relative safety covers Boost's error on the masses of T and on the band's
    # anchors (their eta; at the floor 1.25 (2e-10 + 2e-10) < REL_SAFETY, as before)
    parts.rel_safety = max(REL_SAFETY, 1.25 * (mod.eta_T + getattr(ev, "eta_top", 0.0)))
    return parts


def _evaluate_chunk(mod: CountModel, ev: Evaluator, plan: Plan, parts: Parts, chunk,
                    seen: set, zs) -> None:
    """Add one band chunk's pieces to ``parts`` (:func:`evaluate`)."""
    iT, x, lp_lo, lp_up, band_rel = chunk
    beta = ev.beta
    Ts = mod.Ts
    T = Ts[iT]
    c = ev.A * x + ev.gY * T.astype(float)
    with np.errstate(under="ignore"):
        pl = np.exp(lp_lo) * (1 - band_rel - 4 * U)
        pu = np.exp(lp_up) * (1 + band_rel + 4 * U) + 1e-300
    w = mod.PT[iT]
    blocks, jT = mod.block_of(plan.b)
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
        parts.band_lo += _dot(pl * w, hl)
        parts.band_up += _dot(pu * w, hu)
        return
    if plan.mode == "zsplit":
        lo, up = zsplit_eval(mod, zs, iT, c, c_err, beta)
        parts.band_lo += _dot(pl * w, lo)
        parts.band_up += _dot(pu * w, up)
        return
    if plan.mode == "exact":
        # exact: g(c) = sum_v P(V_j = v) h_{m0}(c - beta v) over the exact law of the j users
        # added to the block's reference m0 (no approximation)
        order = np.argsort(iT, kind="stable")
        cut = np.flatnonzero(np.diff(iT[order])) + 1
        for g in np.split(order, cut):
            t_idx = int(iT[g[0]])
            kb = int(blocks[t_idx])
            tab = mod.table(plan, kb)
            if kb not in seen:
                seen.add(kb)
                parts.table_points += tab.size
            uj, wj, outj, relj = mod.small_law(int(jT[t_idx]))
            cq = (c[g][:, None] - beta * uj[None, :]).ravel()
            eq = np.repeat(c_err[g] + 4 * U * beta * float(uj.max()), uj.size)
            lo, up = tab.lookup(cq, eq, beta)
            lo = lo.reshape(g.size, uj.size)
            up = up.reshape(g.size, uj.size)
            wl = wj * (1 - relj)
            wu = wj * (1 + relj)
            # masses outside the small law's window (and its tiny cells' errors) add <= c_+
            hl[g] = np.maximum(np.einsum("ij,j->i", lo, wl) - outj * np.maximum(c[g], 0.0), 0.0)
            hu[g] = np.einsum("ij,j->i", up, wu) + outj * np.maximum(c[g] + c_err[g], 0.0)
        parts.band_lo += _dot(pl * w, hl)
        parts.band_up += _dot(pu * w, hu)
        return
    gj, gi, bias = mod.gap_coefs(plan, blocks, jT)
    cprime = c - beta * jj * mod.mu
    # the band runs in T order, so the blocks of a chunk are consecutive runs
    cut = np.flatnonzero(np.diff(bl)) + 1
    if np.all(np.diff(bl) >= 0):
        groups = [slice(a, b) for a, b in zip(np.r_[0, cut], np.r_[cut, bl.size])]
    else:
        order = np.argsort(bl, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(bl[order])) + 1)
    for g in groups:
        kb = int(bl[g][0])
        tab = mod.table(plan, kb)
        if kb not in seen:
            seen.add(kb)
            parts.table_points += tab.size
        lo, up = tab.lookup(cprime[g], c_err[g], beta)
        hl[g] = lo
        hu[g] = up
    mass_up = pu * w
    gjb = beta * gj[iT]
    gib = beta * gi[iT] + beta * bias * mod.m[iT]
    parts.band_lo += _dot(pl * w, np.maximum(hl - gib, 0.0))
    parts.band_up += _dot(mass_up, hu + gjb)
    parts.gap_j += _dot(mass_up, gjb)
    parts.gap_i += _dot(mass_up, gib)


def assemble(parts: Parts, n: int, shape: StructuredShape, eps: float
             ) -> tuple[float, float]:
    """Certified ``(lower, upper)`` of ``delta(eps)`` from the pieces of one evaluation."""
    rs = parts.rel_safety
    lower = (parts.lin - parts.lin_err) * (1 - rs) + parts.band_lo * (1 - rs)
    upper = ((parts.lin + parts.lin_err + parts.lin_tail + parts.zero_tail) * (1 + rs)
             + parts.band_up * (1 + rs) + parts.T_tail + parts.skip)
    lower = max(0.0, lower) / n
    upper = upper / n
    # idealisation of the atoms, and their floating-point distance to the exact ratios
    dev = shape.dev_a + math.exp(eps) * shape.dev_b
    lower, upper = widen(max(0.0, lower - dev), upper + dev, shape_atom_floor(shape, eps, n))
    return lower, max(upper, lower, TINY)

