"""Fixed groups at their own blanket masses: the Poisson-binomial blanket bound, certified.

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
:data:`PMF_RTOL`) and trimmed to their own Bernstein window after each step. With bin edges
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

Rounds: :func:`population_rounds` composes its certified points by :mod:`amp.rounds`.

The maximum over victim groups and pairs is the bound; it is at most the common-blanket
baseline (every ``gamma_g`` at the smallest: ``E[f(T)]`` is then Theorem 4 itself).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import LawDelta
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.mixture import Population

__all__ = ["pb_window", "population_delta", "population_epsilon", "population_rounds",
           "victim_curves", "VictimCurve", "sampled_population", "METHOD", "TAIL",
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
    few ulps (64 u of the largest is generous); ``exp`` and the direct convolutions of
    non-negative terms add ``< 1e-12`` relative per group."""
    u = np.finfo(float).eps
    from scipy.special import gammaln
    err = 0.0
    for n, p in groups:
        if n == 0 or p <= 0 or p >= 1:
            continue
        size = float(gammaln(n + 1)) + n * (abs(math.log(p)) + abs(math.log1p(-p))) + 1
        err += 64 * u * size + 1e-12
    return math.expm1(err) + PMF_RTOL


def _shared_blanket(pop: Population) -> tuple[np.ndarray, list[float]]:
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
                 rel: float, mean: float):
        self.law, self.group = law, group
        self.off, self.pmf, self.out = window
        self.cdf = np.cumsum(self.pmf)
        self.rel, self.mean_t = rel, mean
        self.max_eps = law.max_eps()
        self._ld: dict[int, LawDelta] = {}
        self._memo: dict[float, Bound] = {}      # the narrowest bracket met at each eps
        self.evaluations = 0

    def f(self, t: int) -> LawDelta:
        """Theorem 4's bound of the victim's law with ``t`` users (``gamma = 1``): ``f(t)``."""
        ld = self._ld.get(t)
        if ld is None:
            ld = self._ld[t] = LawDelta(self.law, t)
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
        from amp.core.floats import U
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
        while True:
            s = np.asarray(starts)
            mass = np.add.reduceat(self.pmf, s[:-1])
            single = np.diff(s) == 1
            fu = np.array([at(int(i)).upper for i in s[:-1]])
            # f is non-increasing: a bin [s_k, s_{k+1}) lies between f(s_k) and f(s_{k+1})
            fl = np.array([at(int(i)).lower if one else at(int(j)).lower
                           for i, j, one in zip(s[:-1], s[1:], single)])
            upper = min(1.0, float(np.sum(mass * fu)) * (1 + self.rel) + self.out)
            lower = max(0.0, float(np.sum(mass * fl)) * (1 - self.rel))
            # what splitting can remove: the drop of f's upper end across each bin (the rest
            # of the width is f's own bracket)
            fu_next = np.array([at(int(j)).upper for j in s[1:]])
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
        out = Bound("delta", min(lower, upper), upper, "upper", "poisson-binomial:" + methods,
                    None, self.law.label, {"eps": eps},
                    details={"counts_evaluated": len(F), "bins": len(starts) - 1,
                             "floor": floor})
        if known is None or out.upper - out.lower < known.upper - known.lower:
            self._memo[eps] = out
        return out


def victim_curves(pop: Population, tail: float = TAIL) -> list[VictimCurve]:
    """One :class:`VictimCurve` per victim group and distinct pair law (kept on ``pop``, so
    every question about the same population reuses the count laws and tables)."""
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    cache = pop.__dict__.setdefault("_pb_curves", {})
    if tail in cache:
        return cache[tail]
    omega, gam = _shared_blanket(pop)
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
        curves += [VictimCurve(law, v, window, rel, mean) for law in laws.values()]
    cache[tail] = curves
    pop.__dict__["_pb_gammas"] = gam
    return curves


def _max_delta(curves: list[VictimCurve], eps: float, tol: float, abs_tol: float
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


#: the front door's ``method`` for this bound (:func:`amp.epsilon`, :func:`amp.delta`,
#: :func:`amp.calibrate_eps0`)
METHOD = "poisson-binomial"


def is_population(m: object) -> bool:
    return isinstance(m, Population)


def front_door_population(m: object, n: int, bound: str) -> Population:
    """``m`` as the population the front door answers for (its own ``n``, the upper bound),
    else :class:`ParameterError` naming what is wrong."""
    if not isinstance(m, Population):
        raise ParameterError(f"method {METHOD!r} needs an amp.Population (fixed groups), got "
                             f"{type(m).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n != m.n:
        raise ParameterError(f"n must be the population's number of users {m.n}, got {n!r}")
    if bound != "upper":
        raise ParameterError("bound='lower' of a fixed population is one round of its Theorem 5 "
                             "pair (amp.backends.population_lower); it is not composed over "
                             "rounds > 1 here: use bound='upper' or rounds=1")
    return m


def sampled_population(pop: Population, q: float) -> Population:
    """The per-round population when each user takes part with probability ``q``: every group
    runs :class:`~amp.mechanisms.subsampled.Subsampled` (its matrix has the void output)."""
    if q == 1:
        return pop
    from amp.mechanisms.subsampled import Subsampled
    return Population([(n, Subsampled(m, q)) for n, m in pop.groups])


def population_delta(pop: Population, eps: float, *, rel_tol: float = 2e-3,
                     abs_tol: float = 0.0, tail: float = TAIL, progress=None,
                     executor: object = None) -> Bound:
    """Certified Poisson-binomial blanket bound on ``delta(eps)`` of a fixed population.

    Theorem 4's reduction (Section 5.1) with one blanket shared by all users and each group at
    its own blanket mass (module docstring), maximised over the victim's group and pair of
    inputs. At most the common-blanket baseline ``amp.delta(pop, pop.n, eps)``.

    Parameters
    ----------
    pop : Population
        The fixed groups (finite mechanisms with the same inputs and outputs).
    eps : float
        Central ``eps >= 0``.
    rel_tol : float, default 2e-3
        Relative width aimed at (bins of the blanket count are refined until it is met).
    abs_tol : float, default 0
        An upper end below this is returned as it is.
    tail : float, default 1e-30
        Bernstein tail mass cut from each binomial window (added to the upper end).
    progress, executor
        As in :func:`amp.delta`; the executor is checked, not used (victims run in turn).

    Returns
    -------
    Bound
        ``delta``: the exact value of the Poisson-binomial bound lies in ``bracket``;
        ``value`` (the upper end) is a valid delta of the shuffled population.

    Examples
    --------
    >>> pop = amp.Population([(900, amp.KRR(1.0, k=10)),
    ...                       (100, amp.KRR(4.0, k=10))])
    >>> pb = amp.population_delta(pop, 0.5)
    >>> pb.value <= amp.delta(pop, pop.n, 0.5).value
    True
    """
    from amp.core import validate as V
    from amp.inversion import as_progress
    from amp.pairs import check_executor
    eps, report = V.eps_value(eps), as_progress(progress)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    abs_tol = V.positive_float("abs_tol", abs_tol, allow_zero=True)
    tail = V.positive_float("tail", tail, upper=1e-3)
    check_executor(executor)
    curves = victim_curves(pop, tail)
    lo, hi, worst = _max_delta(curves, eps, rel_tol, abs_tol)
    res = Bound("delta", min(lo, hi), hi, "upper", "poisson-binomial", pop.n,
                pop.name + ", Poisson-binomial blanket", {"eps": eps},
                details={"worst": worst, "gammas": pop.__dict__.get("_pb_gammas")})
    if report is not None:
        report(f"delta(eps={eps:.6g}) in [{res.lower:.6g}, {res.upper:.6g}] (worst: {worst})")
    return res


def population_epsilon(pop: Population, delta: float, *, rel_tol: float = 1e-3,
                       progress=None, executor: object = None) -> Bound:
    """Certified ``eps(delta)`` of :func:`population_delta` (Theorem 4's reduction with each
    group at its own blanket mass).

    The bound is the maximum over victims, so its ``eps(delta)`` is the largest of the
    victims' thresholds. Victims are taken in decreasing order of an (uncertified) estimate;
    the first is searched (:func:`amp.inversion.epsilon_of_curve`), and every further victim
    is first evaluated once at the best lower end ``L`` found so far: ``delta_upper(L) <=
    delta`` certifies that its threshold is ``<= L`` (it cannot raise the maximum), else it is
    searched too.

    Parameters
    ----------
    pop : Population
        The fixed groups.
    delta : float
        Target ``delta`` in ``(0, 1)``.
    rel_tol : float, default 1e-3
        Largest relative width of the returned bracket (each ten times narrower costs about
        ten times more counts; the front door passes its own, 1e-4 by default).
    progress, executor
        As in :func:`amp.epsilon`; the executor is checked, not used (victims run in turn).

    Returns
    -------
    Bound
        ``eps``: ``upper`` is an eps whose certified upper delta is ``<= delta`` (a valid eps
        of the shuffled population); ``lower`` one whose certified lower end is ``> delta``
        (or 0), so the exact eps of the Poisson-binomial bound lies in ``bracket``.

    Examples
    --------
    >>> pop = amp.Population([(90, amp.KRR(1.0, k=10)),
    ...                       (10, amp.KRR(4.0, k=10))])
    >>> r = amp.population_epsilon(pop, 1e-3, rel_tol=1e-2)
    >>> r.value <= amp.epsilon(pop, pop.n, 1e-3).value
    True
    """
    from amp.core import validate as V
    from amp.inversion import as_progress, epsilon_of_curve, estimate_epsilon
    from amp.pairs import check_executor
    progress, _ = as_progress(progress), check_executor(executor)
    delta = V.probability_open("delta", delta)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    curves = victim_curves(pop)

    def guess(c: VictimCurve) -> float:
        try:
            return estimate_epsilon(c, delta, c.max_eps)
        except (ParameterError, ArithmeticError, ValueError):
            return c.max_eps
    order = sorted(range(len(curves)), key=lambda i: -guess(curves[i]))
    parts: list[Bound | None] = [None] * len(curves)
    best, pruned = 0.0, 0
    abs_tol = min(1e-16, 1e-3 * delta)
    for i in order:
        c = curves[i]
        if best > 0:
            # a Chernoff bound first (no tables), then one coarse certified bracket
            ch = c.chernoff(best)
            chk = Bound("delta", 0.0, ch, "upper", "chernoff") if ch <= delta else \
                c.delta(best, 0.05, abs_tol)
            if chk.upper <= delta:
                parts[i] = Bound("eps", 0.0, best, "upper", chk.method, pop.n, c.law.label,
                                 {"delta": delta}, details={"pruned": True})
                pruned += 1
                continue
        parts[i] = epsilon_of_curve(c, delta, c.max_eps, rel_tol=rel_tol, n=pop.n,
                                    mechanism=c.law.label, progress=progress)
        best = max(best, parts[i].lower)
    lo = max(p.lower for p in parts)
    hi = max(p.upper for p in parts)
    worst = max(parts, key=lambda b: b.upper).mechanism
    return Bound("eps", lo, hi, "upper", "poisson-binomial", pop.n,
                 pop.name + ", Poisson-binomial blanket", {"delta": delta}, parts=tuple(parts),
                 details={"worst_law": worst, "pruned_laws": pruned,
                          "evaluations": sum(c.evaluations for c in curves),
                          "gammas": pop.__dict__.get("_pb_gammas")})


def _population_round(pop: Population):
    """One round of ``pop`` as a :class:`amp.rounds.ComposableProfile` whose certified upper
    points are the Poisson-binomial bound (instead of a profile's laws)."""
    from amp.rounds import ComposableProfile, Round

    class PopulationRound(ComposableProfile):
        def __init__(self) -> None:            # no PrivacyProfile: the curves are the bound
            self.round = Round(pop, pop.n)
            self.profile = None
            self.lower_pair = None
            self._cut = None
            self.curves = victim_curves(pop)

        def _upper(self, eps: float) -> float:
            from amp.rounds import UPPER_REL_TOL
            return min(1.0, _max_delta(self.curves, eps, UPPER_REL_TOL, 0.0)[1])

        def _max_eps(self) -> float:
            return max(c.max_eps for c in self.curves)

    return PopulationRound()


def population_rounds(pop: Population, rounds: int, *, delta: float | None = None,
                      eps: float | None = None, sampling: float = 1.0,
                      baseline: bool = False, points: int | None = None) -> Bound:
    """Certified ``eps(delta)`` (give ``delta``) or ``delta(eps)`` (give ``eps``) of a fixed
    population after ``rounds`` adaptive rounds, from the Poisson-binomial bound.

    Why it composes validly. :mod:`amp.rounds` needs, at each point of an eps grid, a number
    ``>= H(eps)``, the supremum over neighbouring datasets (both orders) of the hockey-stick
    divergence of one round; from such points the greatest convex minorant (in ``e^eps``) and
    the pessimistic connect-the-dots PLD give a pair dominating the round (steps 1-3 of the
    :mod:`amp.rounds` docstring: they use nothing but pointwise upper values of ``H``). The
    Poisson-binomial bound is such a value at every ``eps``: for every victim group, every
    ordered pair of inputs (so both orders) and every choice of the others' inputs, the
    shuffled output is a post-processing of the victim's report with the blanket draws
    (module docstring), whatever the others' inputs. So the certified upper end of
    :func:`population_delta` at each grid point feeds the same construction, and the
    product of the dominating pairs is composed as in :func:`amp.rounds.compose`.

    With ``baseline=True`` the points are the common-blanket baseline's instead (every user
    at the smallest blanket mass: :class:`~amp.mechanisms.mixture.Population`'s laws, a valid
    profile for the same reason); ``amp.epsilon(pop, pop.n, delta, rounds=T)`` composes that
    one, ``method="poisson-binomial"`` this module's.

    The lower end is 0: a fixed population has no Theorem 5 dataset pair here (its users are
    not identically distributed), so only the upper end is informative.

    Parameters
    ----------
    pop : Population
        The fixed groups.
    rounds : int
        Number of adaptive rounds ``T >= 1``.
    delta, eps : float, optional
        Give exactly one.
    sampling : float, default 1.0
        Each user takes part in a round with probability ``q`` (every group subsampled:
        :func:`sampled_population`).
    baseline : bool, default False
        Compose the common-blanket baseline's points instead.
    points : int, optional
        Grid points of the connect-the-dots construction per side (default
        :data:`amp.rounds.GRID_POINTS`; fewer: faster and looser, equally valid).

    Returns
    -------
    Bound
        ``[0, upper]``; ``upper`` is a valid composed eps (or delta).

    Examples
    --------
    >>> pop = amp.Population([(5, amp.KRR(1.0, k=3)), (5, amp.KRR(2.0, k=3))])
    >>> r = amp.epsilon(pop, pop.n, 1e-2, rounds=2)
    >>> 0 < r.value <= amp.epsilon(pop, pop.n, 1e-2, rounds=2).value
    True
    """
    from amp.core import validate as V
    from amp.core.floats import U
    from amp.rounds import (GRID_POINTS, UPPER_CELLS, check_rounds, check_sampling,
                            compose_pmf, pmf_epsilon_upper)
    T = check_rounds(rounds)
    q = check_sampling(sampling)
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    if baseline:
        from amp.rounds import ComposableProfile
        prof = ComposableProfile(pop, pop.n, q)
    else:
        prof = _population_round(sampled_population(pop, q))
    points = GRID_POINTS if points is None else V.int_at_least("points", points, 8)
    step = prof.eps_cut / (UPPER_CELLS * points)
    up, pad = compose_pmf(prof.upper_pmf(step, points), T)
    desc = f"{T} x {pop.name} (sampling {q:g}), " + (
        "baseline (common blanket)" if baseline else "Poisson-binomial blanket")
    method = "pld:connect-dots," + ("baseline" if baseline else METHOD)
    info = {"rounds": T, "sampling": q, "pad_upper": pad, "lower": "none for a population"}
    if delta is not None:
        d = V.probability_open("delta", delta)
        e_up = pmf_epsilon_upper(up, d, pad)
        return Bound("eps", 0.0, e_up, "upper", method, pop.n,
                     desc, {"delta": d}, details=info)
    e = V.eps_value(eps)
    d_up = min(1.0, float(up.get_delta_for_epsilon(e)) * (1 + 8 * U * up.size) + pad)
    return Bound("delta", 0.0, d_up, "upper", method, pop.n,
                 desc, {"eps": e}, details=info)
