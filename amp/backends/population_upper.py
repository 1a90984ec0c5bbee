"""Fixed groups at their own blanket masses: the Poisson-binomial blanket bound, certified.

The curves of a population's upper profile (:class:`amp.PrivacyProfile` asks them; the
wrappers :func:`amp.population_delta`, :func:`amp.population_epsilon` and the rounds live in
:mod:`amp.population`; over rounds: :mod:`amp.rounds.population`).

For a :class:`~amp.mechanisms.mixture.Population` (``n_g`` users run ``R_g``), take the shared
blanket ``omega = c / sum c`` with ``c(y) = min_g min_x R_g(x)(y)`` and, per group, its own
blanket mass ``gamma_g = min_{x, y} R_g(x)(y) / omega(y)`` (``R_g(x) >= gamma_g omega``). For a
victim in group ``v`` with inputs ``x0, x1`` the reduction of Theorem 4 (Section 5.1) keeps the
victim's output and ``M`` blanket draws of the others, ``M ~ PoissonBinomial`` (``n_g - [g = v]``
users with mass ``gamma_g`` per group), so (``../shared/notes/math-notes.md``, "Mixed
populations")

    delta(eps) <= E[f(T)],  T = M + 1,  f(t) = psi(t) / t,  psi(t) = E[(g(Z_1)+...+g(Z_t))_+],

``g = (R_v(x0) - e^eps R_v(x1)) / omega``, ``Z_i ~ omega``. ``f(t)`` is Theorem 4's bound of the
law ``(a, b) = (R_v(x0)/omega, R_v(x1)/omega)`` with mass ``omega`` (``gamma = 1``) for ``t``
users, computed certified by :class:`~amp.backends.dispatch.LawDelta`. It is the hockey-stick
divergence of the victim's output shuffled with ``t - 1`` blanket draws, so it is non-increasing
in ``t`` (adding a draw is post-processing) and ``f(t) <= f(1) <= 1``.

Certified bracket. The law of ``T`` is computed on a window: each group's binomial pmf from
log-gamma on ``[mu - s, mu + s]`` (Bernstein: the mass outside is at most ``tail``), the partial
sums convolved directly (non-negative terms, relative error ``< 1e-12``; padded by
``PMF_RTOL``) and trimmed to their own Bernstein window after each step. With bin edges
``t_0 < ... < t_K`` (quantiles of ``T``) and ``f`` non-increasing,

    sum_k P(t_k <= T < t_{k+1}) f(t_{k+1}) <= E[f(T)]
        <= sum_k P(t_k <= T < t_{k+1}) f(t_k) + (mass outside the window) * 1

(``f(t_{k+1}) <= f(t_{k+1} - 1)``, so each ``f`` evaluated serves two bins; a one-count bin
uses its own ``f``; every count is its own bin when the window is short, and the bracket is
then exact up to the bracket of ``f``). The upper ends of ``f``'s certified brackets go into
the upper sum, the lower ends into the lower sum, and both sums are padded by the relative
error of the computed probabilities.

Cost. The law of ``T`` once per victim group, the eps-free tables of each ``f(t)`` once per
count (:class:`VictimCurve`), bins refined only where ``f`` drops: a few dozen counts per
``eps``; the width falls like ``1 / (bins)``, so ten times narrower costs about ten times more
counts. Victims certified below the maximum's lower end take one coarse evaluation.

The maximum over victim groups and pairs is the bound; it is at most the common-blanket
baseline (every ``gamma_g`` at the smallest: ``E[f(T)]`` is then Theorem 4 itself).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.backends.dispatch import LawDelta
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.mixture import Population

__all__ = ["pb_window", "victim_curves", "shared_blanket", "max_delta", "VictimCurve", "TAIL",
           "PMF_RTOL"]

TAIL = 1e-30          #: Bernstein tail mass cut per window
PMF_RTOL = 1e-9       #: relative pad on every computed probability (float error << this)


def _bernstein_halfwidth(var: float, tail: float) -> float:
    """``s`` with ``2 exp(-s^2 / (2 (var + s/3))) <= tail`` (sum of [0, 1] variables)."""
    L = 2 * math.log(2 / tail)
    return L / 6 + math.sqrt(L * L / 36 + L * var)


def _binom_window(n: int, p: float, tail: float) -> tuple[int, np.ndarray]:
    if p >= 1.0:
        return n, np.ones(1)
    if p <= 0.0:
        return 0, np.ones(1)
    mu, var = n * p, n * p * (1 - p)
    s = _bernstein_halfwidth(var, tail)
    lo, hi = max(0, math.floor(mu - s)), min(n, math.ceil(mu + s))
    k = np.arange(lo, hi + 1, dtype=float)
    from scipy.special import gammaln
    logp = (gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + k * math.log(p)
            + (n - k) * math.log1p(-p))
    return lo, np.exp(logp)


def pb_window(groups: list[tuple[int, float]], tail: float = TAIL
              ) -> tuple[int, np.ndarray, float]:
    """``(offset, pmf, outside)``: the law of a sum of independent ``Bin(n_g, gamma_g)`` on
    ``offset + arange(len(pmf))`` and a bound on the mass cut away (Bernstein per window)."""
    off, pmf, out = 0, np.ones(1), 0.0
    mean, var = 0.0, 0.0
    for n, p in groups:
        if n == 0:
            continue
        lo, w = _binom_window(n, p, tail)
        out += tail if 0.0 < p < 1.0 else 0.0
        pmf = np.convolve(pmf, w)
        off += lo
        mean, var = mean + n * p, var + n * p * (1 - p)
        s = _bernstein_halfwidth(var, tail)
        a, b = max(off, math.floor(mean - s)), min(off + pmf.size - 1, math.ceil(mean + s))
        if a > off or b < off + pmf.size - 1:
            pmf = pmf[a - off:b - off + 1]
            off = a
            out += tail
    return off, pmf, out


def _pmf_rel_error(groups: list[tuple[int, float]]) -> float:
    """Relative error bound of the computed window probabilities: each log-pmf is a sum of a
    few terms of size at most ``gammaln(n + 1) + n |log p| + n |log(1 - p)|``, each within a
    few ulps (``128 u``, 64 ulps of 1, times the largest is generous); ``exp`` and the direct
    convolutions of non-negative terms add ``< 1e-12`` relative per group."""
    from scipy.special import gammaln
    err = 0.0
    for n, p in groups:
        if n == 0 or p <= 0 or p >= 1:
            continue
        size = float(gammaln(n + 1)) + n * (abs(math.log(p)) + abs(math.log1p(-p))) + 1
        err += 128 * U * size + 1e-12
    return math.expm1(err) + PMF_RTOL


def shared_blanket(pop: Population) -> tuple[np.ndarray, list[float]]:
    S = pop.stacked
    c = S.min(axis=0)
    omega = c / c.sum()
    d = S.shape[0] // len(pop.groups)
    gam = [float(np.min(S[g * d:(g + 1) * d] / omega)) for g in range(len(pop.groups))]
    return omega, gam


#: quantile levels of the first bins of the blanket count (then refined where the bracket is
#: wide: :meth:`VictimCurve.delta`)
LEVELS = (1e-12, 0.02, 0.5, 0.98, 1 - 1e-12)
#: the first bins when a loose bracket is asked (``tol >= 0.05``: pruning, coarse passes)
COARSE_LEVELS = (1e-12, 0.5, 1 - 1e-12)
#: a window of at most this many counts has every count as its own bin (exact up to f's bracket)
SMALL_WINDOW = 48
#: most counts evaluated for one ``eps`` (the bracket is returned as it is then)
MAX_POINTS = 400


class VictimCurve:
    """``eps -> E[f(T)]`` for one victim (group ``v``, pair of inputs): the Poisson-binomial
    blanket bound of that victim, a certified curve (the :class:`amp.inversion.Curve` protocol,
    so :func:`amp.inversion.crossing` can search it).

    The law of ``T = M + 1`` is computed once (:func:`pb_window`) and the per-count
    :class:`~amp.backends.dispatch.LawDelta` objects (their eps-free tables) are kept, so every
    ``eps`` of a search reuses them. Each evaluation brackets ``E[f(T)]`` on bins of counts
    (module docstring): it starts from the quantile bins :data:`LEVELS` and splits, at its
    median, the bin whose ``f`` drops most (times its mass) until the bracket meets the asked
    width, or what splitting could still remove is below a tenth of it (the rest is the
    brackets of ``f``, asked at a quarter of it), or :data:`MAX_POINTS` counts were evaluated.
    """

    def __init__(self, law: GPARV, group: int, window: tuple[int, np.ndarray, float],
                 rel: float, mean: float, method: str = "auto"):
        self.law, self.group, self.method = law, group, method
        self.off, self.pmf, self.out = window
        self.cdf = np.cumsum(self.pmf)
        self.rel, self.mean_t = rel, mean
        self.max_eps = law.max_eps()
        self._ld: dict[int, LawDelta] = {}
        self._memo: dict[float, Bound] = {}      # the narrowest bracket met at each eps
        self.evaluations = 0
        #: the backends that answered the counts so far
        self.methods_used: set[str] = set()

    def f(self, t: int) -> LawDelta:
        """Theorem 4's bound of the victim's law with ``t`` users (``gamma = 1``): ``f(t)``."""
        ld = self._ld.get(t)
        if ld is None:
            ld = self._ld[t] = LawDelta(self.law, t, self.method)
        return ld

    @property
    def structured(self) -> bool:
        return self.f(max(1, int(round(self.mean_t)))).structured

    def estimate_log_delta(self, eps: float) -> float:
        """Uncertified: the estimate of ``log f`` at the mean count (a starting point)."""
        return self.f(max(1, int(round(self.mean_t)))).estimate_log_delta(eps)

    def search_tol(self, rel_tol: float) -> float | None:
        """``None``: narrow brackets cost counts here, so the search asks for loose ones
        while it locates the crossing (as for the FFT)."""
        return None

    def delta_for_search(self, eps: float, tol: float, abs_tol: float) -> Bound:
        return self.delta(eps, tol, abs_tol)

    def chernoff(self, eps: float) -> float:
        """A certified upper end of ``E[f(T)]`` without tables: on the coarse bins, each
        ``f(s_k)`` replaced by its Chernoff bound (:func:`amp.core.tails.chernoff_upper`,
        the atoms raised by their floating-point error). Cheap; for pruning victims."""
        from amp.core.tails import chernoff_upper
        g, p = self.law.atoms(eps)
        noise = 16 * U * self.law.magnitudes(eps)
        size = self.pmf.size
        if size <= SMALL_WINDOW:
            s = np.arange(size + 1)
        else:
            idx = np.searchsorted(self.cdf, np.asarray(COARSE_LEVELS) * self.cdf[-1])
            s = np.array(sorted({0, size, *(int(min(max(i, 1), size - 1)) for i in idx)}))
        mass = np.add.reduceat(self.pmf, s[:-1])
        fu = np.array([min(1.0, chernoff_upper(g, p, int(self.off + 1 + i), noise))
                       for i in s[:-1]])
        return min(1.0, float(np.sum(mass * fu)) * (1 + self.rel) + self.out)

    def delta(self, eps: float, tol: float = 2e-3, abs_tol: float = 0.0) -> Bound:
        """Certified bracket of ``E[f(T)]`` at ``eps``, aimed at relative width ``tol``
        (or absolute ``abs_tol``). A bracket already computed at this ``eps`` that meets the
        request is returned again (so a question repeated after a search sees the same
        certified numbers)."""
        known = self._memo.get(eps)
        if known is not None and (known.upper <= abs_tol
                                  or known.upper - known.lower <= tol * known.upper):
            return known
        size = self.pmf.size
        ftol = max(0.25 * tol, 1e-9)
        F: dict[int, Bound] = {}

        def at(i: int) -> Bound:         # f's bracket at T = off + 1 + i
            b = F.get(i)
            if b is None:
                b = F[i] = self.f(self.off + 1 + i).delta_for_search(eps, ftol, 0.5 * abs_tol)
            return b

        if size <= SMALL_WINDOW:
            starts = list(range(size + 1))
        else:
            levels = COARSE_LEVELS if tol >= 0.05 else LEVELS
            idx = np.searchsorted(self.cdf, np.asarray(levels) * self.cdf[-1])
            starts = sorted({0, size, *(int(min(max(i, 1), size - 1)) for i in idx)})
        # f's bracket ends by index, filled as counts are evaluated (in increasing order of
        # the bin edges, each once): the bins' sums read them as arrays
        f_up = np.full(size + 1, np.nan)
        f_lo = np.full(size + 1, np.nan)
        while True:
            s = np.asarray(starts)
            for i in s[np.isnan(f_up[s])]:
                b = at(int(i))
                f_up[i], f_lo[i] = b.upper, b.lower
            mass = np.add.reduceat(self.pmf, s[:-1])
            single = np.diff(s) == 1
            fu = f_up[s[:-1]]
            # f is non-increasing: a bin [s_k, s_{k+1}) lies between f(s_k) and f(s_{k+1})
            fl = np.where(single, f_lo[s[:-1]], f_lo[s[1:]])
            upper = min(1.0, float(np.sum(mass * fu)) * (1 + self.rel) + self.out)
            lower = max(0.0, float(np.sum(mass * fl)) * (1 - self.rel))
            # what splitting can remove: the drop of f's upper end across each bin (the rest
            # of the width is f's own bracket)
            fu_next = f_up[s[1:]]
            w = np.where(single, 0.0, mass * np.maximum(fu - fu_next, 0.0))
            if (upper <= abs_tol or upper - lower <= tol * upper
                    or float(w.sum()) <= 0.1 * tol * upper or len(F) >= MAX_POINTS):
                break
            k = int(np.argmax(w))
            before = float(self.cdf[s[k] - 1]) if s[k] > 0 else 0.0
            j = int(np.searchsorted(self.cdf, before + 0.5 * mass[k]))
            starts = sorted(set(starts) | {min(max(j, int(s[k]) + 1), int(s[k + 1]) - 1)})
        self.evaluations += len(F)
        floor = max(float(b.details.get("floor", 0.0)) for b in F.values())
        methods = ",".join(sorted({m for b in F.values() for m in b.method.split(",") if m}))
        self.methods_used.update(m for m in methods.split(",") if m)
        out = Bound("delta", min(lower, upper), upper, "upper", "poisson-binomial:" + methods,
                    None, self.law.label, {"eps": eps},
                    details={"counts_evaluated": len(F), "bins": len(starts) - 1,
                             "floor": floor})
        if known is None or out.upper - out.lower < known.upper - known.lower:
            self._memo[eps] = out
        return out


def victim_curves(pop: Population, tail: float = TAIL, method: str = "auto"
                  ) -> list[VictimCurve]:
    """One :class:`VictimCurve` per victim group and distinct pair law; ``method`` is the
    backend of each count's :class:`~amp.backends.dispatch.LawDelta`. Nothing is stored on
    ``pop``: the caller (a :class:`amp.PrivacyProfile`) keeps the curves, and with them the
    count laws and tables every later question reuses."""
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    omega, gam = shared_blanket(pop)
    d = pop.stacked.shape[0] // len(pop.groups)
    curves = []
    for v in range(len(pop.groups)):
        counts = [(n - (g == v), min(1.0, gam[g])) for g, (n, _) in enumerate(pop.groups)]
        window = pb_window(counts, tail)
        rel = _pmf_rel_error(counts)
        mean = 1 + sum(n * p for n, p in counts)
        rows = pop.stacked[v * d:(v + 1) * d]
        laws: dict = {}
        seen: set = set()
        for i in range(d):
            for j in range(d):
                if i != j:
                    # the same (a, b, mass) triples up to the order of outputs: the same law
                    # (a cheap key first; GPARV's own key merges what is left)
                    trip = np.stack([rows[i], rows[j], omega])
                    raw = trip[:, np.lexsort(trip[::-1])].tobytes()
                    if raw in seen:
                        continue
                    seen.add(raw)
                    law = GPARV(rows[i] / omega, rows[j] / omega, omega, pop.eps0,
                                f"victim group {v}, pair ({i}, {j}), Poisson-binomial "
                                f"blanket of {pop.name}")
                    laws.setdefault(law._key, law)
        curves += [VictimCurve(law, v, window, rel, mean, method) for law in laws.values()]
    return curves


def max_delta(curves: list[VictimCurve], eps: float, tol: float, abs_tol: float
               ) -> tuple[float, float, str | None]:
    """``(lower, upper, worst)`` of the maximum over the victims: a coarse pass first, then
    only the victims whose upper end can raise the maximum are refined to ``tol``."""
    coarse = [c.delta(eps, 0.5, abs_tol) for c in curves]
    order = sorted(range(len(curves)), key=lambda i: -coarse[i].upper)
    lo, hi, worst = 0.0, 0.0, None
    for i in order:
        b = coarse[i]
        if b.upper > lo and b.upper - b.lower > tol * b.upper and b.upper > abs_tol:
            b = curves[i].delta(eps, tol, abs_tol)
        if b.upper > hi:
            hi, worst = b.upper, curves[i].law.label
        lo = max(lo, b.lower)
    return lo, min(hi, 1.0), worst


