"""The eps-free count model of one ``(shape, n)``: the ``T`` window, the Bernstein windows of
the nuisance, and the nuisance tables of every plan (built on demand, kept for reuse).

Implements the eps-free half of the Algorithm of :mod:`amp.backends.structured`: conditioning on
``T = X + Y ~ Bin(n, pX + pY)`` on a Chernoff window ``[T_lo, T_hi]``, the per-``T`` Bernstein
window ``[m mu - t, m mu + t]`` of ``V_m`` (``m = n - T``), and the tables a :class:`Plan`
needs (``exact``: :mod:`.tables`, ``zsplit``: :mod:`.zsplit`, ``lattice``: :mod:`.lattice`,
``T`` cut into blocks of ``b`` values).  Nothing here depends on ``eps``: one
:class:`CountModel` serves every ``eps`` (it is owned by a
:class:`~amp.backends.structured.backend.StructuredBackend`).

Certified error terms owned here: ``T`` outside its window (``E[T; T outside]`` by Chernoff,
multiplied by ``E - w`` in :mod:`.evaluator`); the Bernstein tail levels of the linear region
(``pm_l``: ``E[(V - m mu - t)_+] <= tau / kappa``) and of the zero region (``z_tau``); the
block-shift and integerisation gaps of the lattice plans (:meth:`CountModel.gap_coefs`,
``beta [s1 E Delta^2 / 2 + s0 E|Delta|]`` and ``beta [s1 E N^2 / 2 + s0 E|N|]`` with the
smoothing bounds of :mod:`.nuisance`) and the mean bias of the integerised split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp.core import memory

from amp.core.floats import U
from amp.core.tails import bernstein_t, binom_log_tail_ge, binom_log_tail_le, binom_window
from amp.backends.structured.binomial import eta, pmf
from amp.backends.structured.lattice import cf_denominators, lattice_cats, lattice_table
from amp.backends.structured.nuisance import Nuisance, smoothing_gap
from amp.backends.structured.shape import StructuredShape
from amp.backends.structured.tables import Table, exact_grid, exact_table
from amp.backends.structured.zsplit import ZSplitTables, build_zsplit, zsplit_geometry

__all__ = ["MAX_TABLE_POINTS", "Plan", "CountModel"]

MAX_TABLE_POINTS = 1 << 24             # lattice points of the tables of one plan (16 B each)


@dataclass
class Plan:
    """A nuisance-table plan: ``mode``, block size ``b`` (``T`` values per table) and lattice
    denominator ``K`` (``lattice`` only)."""

    mode: str          # "exact", "zsplit" or "lattice"
    b: int = 1
    K: int = 1


class CountModel:
    """Eps-free count machinery for one law shape and ``n`` (windows, weights, tables).

    ``log_tau`` is the log tail level of every window.  ``Ts`` is the Chernoff window of
    ``T = X + Y`` (``T >= 1``: ``S <= 0`` when ``T = 0``) and ``PT`` its Boost masses; ``ET_out``
    bounds ``E[T; T outside]``; ``m = n - Ts``; :meth:`window` gives, per slice of ``T``, the
    Bernstein window ``[v_z, v_l]`` of ``V_m``, ``pm_l`` bounding ``E[(V_m - v_l)_+]`` and
    ``z_tau`` bounding ``P(V_m < v_z)``.  ``nu`` is the :class:`~.nuisance.Nuisance` law of one other user.
    """

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
            self.nu = Nuisance(s.E, s.pO / tot, s.pZ / tot, s.pF / tot)
        else:
            self.nu = Nuisance(s.E, 0.0, 0.0, 1.0)
        self.log_tau = log_tau
        T_lo, T_hi, llo, lhi = binom_window(n, self.pT, log_tau)
        T_lo = max(T_lo, 1)
        self.T_lo, self.T_hi = T_lo, T_hi
        # about twenty float64 arrays over the window of T (checked before they exist)
        memory.check(160.0 * (T_hi - T_lo + 1),
                     f"the structured count model over {T_hi - T_lo + 1:,} counts (n = {n})")
        self.Ts = np.arange(T_lo, T_hi + 1, dtype=np.int64)
        self.PT = pmf(self.Ts, n, self.pT)
        self.eta_T = float(np.max(eta(self.Ts, n, self.pT))) if self.Ts.size else 0.0
        # E[T; T > T_hi] = n pT P(Bin(n-1, pT) >= T_hi);  T_lo P(T < T_lo)
        up = n * self.pT * math.exp(binom_log_tail_ge(n - 1, self.pT, T_hi)) if T_hi < n else 0.0
        low = (T_lo - 1) * math.exp(binom_log_tail_le(n, self.pT, T_lo - 1)) if T_lo > 1 else 0.0
        self.ET_out = up + low
        m = (n - self.Ts).astype(float)
        self.m = m
        nu = self.nu
        self.mu, self.var, self.bmax = nu.mu, nu.var, nu.bmax
        # the Bernstein window of V_m per T (v_z, v_l, pm_l, z_tau) is computed per slice of
        # T when needed (window(), element-wise: the same values), not kept (memory at n ~ 1e11)
        self.tables: dict = {}
        self.table_counts: dict = {}
        self.table_points = 0
        self.gap_cache: dict = {}
        self.small_laws: dict = {}
        self._blocks: dict = {}
        self._zsplit: ZSplitTables | None = None
        self._zgeom: tuple | None = None
        self._Ks: list[int] | None = None

    def window(self, sl: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(v_z, v_l, pm_l, z_tau)`` for the ``T`` in ``sl``: the Bernstein window
        ``[v_z, v_l] = [m mu - t, m mu + t]`` of ``V_m`` (``v_z`` clipped at 0), ``pm_l`` bounding
        ``E[(V_m - v_l)_+]`` and ``z_tau`` bounding ``P(V_m < v_z)`` (class docstring);
        element-wise in ``m = n - T``, so any slicing gives the same values."""
        m = self.m[sl]
        t = bernstein_t(m, self.var, self.bmax, -self.log_tau)
        v_z = m * self.mu - t
        v_l = m * self.mu + t
        kap = t / (2 * (m * self.var + self.bmax * t / 3) + 1e-300)
        tau = math.exp(self.log_tau)
        pm_l = np.where(v_l >= m * self.nu.vmax, 0.0, tau / np.maximum(kap, 1e-300))
        z_tau = np.where(v_z <= 0, 0.0, tau)
        return np.maximum(v_z, 0.0), v_l, pm_l, z_tau

    @property
    def zsplit_built(self) -> bool:
        """Whether the z-split tables of this model exist already (then they are free)."""
        return self._zsplit is not None

    def cf_denominators(self) -> list[int]:
        """Continued-fraction denominators ``K <= 1024`` of ``E`` (computed once)."""
        if self._Ks is None:
            self._Ks = cf_denominators(self.nu.E, 1024)
        return self._Ks

    def zsplit_geometry(self) -> tuple[int, int, int, int, int, int, float, float]:
        """:func:`.zsplit.zsplit_geometry` of this model (computed once)."""
        if self._zgeom is None:
            self._zgeom = zsplit_geometry(self)
        return self._zgeom

    def zsplit(self) -> ZSplitTables:
        """The eps-free tables of the z-split plan (built once)."""
        if self._zsplit is None:
            self._zsplit = build_zsplit(self)
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

    def block_of(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Block index and ``j = T_b - T`` for every ``T`` (blocks anchored at ``T = 0``;
        computed once per ``b``)."""
        hit = self._blocks.get(b)
        if hit is None:
            k = self.Ts // b
            Tb = np.minimum((k + 1) * b - 1, self.n)
            hit = self._blocks[b] = (k, Tb - self.Ts)
        return hit

    def small_law(self, j: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Exact law of the nuisance of ``j`` users (values, masses, outside mass, rel. error
        of the masses)."""
        law = self.small_laws.get(j)
        if law is None:
            vals, P, out, _, rel = exact_grid(self.nu, int(j), self.log_tau)
            law = (vals, P, out, rel)
            self.small_laws[j] = law
        return law

    def cached_count(self, pkey: tuple) -> int:
        """Number of tables of the plan key ``(mode, b, K)`` already built."""
        return self.table_counts.get(pkey, 0)

    def table(self, plan: Plan, k: int) -> Table:
        """The nuisance table of block ``k`` of ``plan`` (built once; under memory pressure only
        the tables of the current plan are kept)."""
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
                tab, _ = exact_table(self.nu, int(self.n - Tb), self.log_tau)
            else:
                Tb = min((k + 1) * plan.b - 1, self.n)
                m0 = self.n - Tb
                m_hi = min(self.n, m0 + plan.b - 1)
                t = float(bernstein_t(np.array(float(m_hi)), self.var, self.bmax,
                                      -self.log_tau)) + 2.0
                tab = lattice_table(self.nu, int(m0), plan.K, t + 2 * self.E)
            self.tables[key] = tab
            self.table_points += tab.size
            self.table_counts[pkey] = self.table_counts.get(pkey, 0) + 1
        return tab

    def gap_coefs(self, plan: Plan, blocks: np.ndarray, j: np.ndarray,
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
        _, _, vK = lattice_cats(nu, K)
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
            gj[sel] = smoothing_gap(opts_j, M2, M1)
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
