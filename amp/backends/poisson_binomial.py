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

    sum_k P(t_k <= T < t_{k+1}) f(t_{k+1} - 1) <= E[f(T)]
        <= sum_k P(t_k <= T < t_{k+1}) f(t_k) + (mass outside the window) * 1

(every count is its own bin when the window is short, and the bracket is then exact up to the
bracket of ``f``).

The maximum over victim groups and pairs is the bound. It is at most the common-blanket
baseline (:class:`~amp.mechanisms.mixture.Population`): with every ``gamma_g`` replaced by the
smallest, ``E[f(T)]`` is Theorem 4 itself.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import LawDelta
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.mixture import Population

__all__ = ["pb_window", "population_delta", "population_epsilon", "TAIL", "PMF_RTOL"]

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


def population_delta(pop: Population, eps: float, *, bins: int = 24,
                     tail: float = TAIL, reuse: dict | None = None) -> Bound:
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
    bins : int, default 24
        Quantile bins of the blanket count (more: a narrower bracket, more evaluations).
    tail : float, default 1e-30
        Bernstein tail mass cut from each binomial window (added to the upper end).
    reuse : dict, optional
        Keeps the per-count :class:`~amp.backends.dispatch.LawDelta` objects (their eps-free
        tables) between calls on the same population (:func:`population_epsilon` passes one).

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
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    omega, gam = _shared_blanket(pop)
    d = pop.stacked.shape[0] // len(pop.groups)
    lo_best, hi_best, worst = 0.0, 0.0, None
    for v in range(len(pop.groups)):
        counts = [(n - (g == v), min(1.0, gam[g])) for g, (n, _) in enumerate(pop.groups)]
        off, pmf, out = pb_window(counts, tail)
        rel = _pmf_rel_error(counts)
        cdf = np.cumsum(pmf)
        levels = np.concatenate([[1e-12, 1e-9, 1e-6, 1e-4, 1e-3], np.linspace(0, 1, bins + 1)
                                 [1:-1], 1 - np.array([1e-3, 1e-4, 1e-6, 1e-9, 1e-12])])
        if pmf.size <= 4 * bins:
            edges = np.arange(pmf.size + 1)                          # every count its own bin
        else:
            idx = np.unique(np.searchsorted(cdf, levels * cdf[-1]))
            edges = np.unique(np.concatenate([[0], idx, [pmf.size]]))   # pmf index edges
        mass = np.add.reduceat(pmf, edges[:-1])
        first = off + 1 + edges[:-1]                 # smallest T of each bin
        last = off + edges[1:]                       # largest T of each bin
        rows = pop.stacked[v * d:(v + 1) * d]
        laws = {}
        for i in range(d):
            for j in range(d):
                if i != j:
                    law = GPARV(rows[i] / omega, rows[j] / omega, omega, pop.eps0,
                                f"victim group {v}, pair ({i}, {j})")
                    laws.setdefault(law._key, law)
        for law in laws.values():
            store = {} if reuse is None else reuse
            cache = {}
            for t in np.unique(np.concatenate([first, last])):
                key = (law._key, int(t))
                if key not in store:
                    store[key] = LawDelta(law, int(t))
                cache[int(t)] = store[key].delta(eps)
            f_hi = np.array([cache[int(t)].upper for t in first])    # f non-increasing
            f_lo = np.array([cache[int(t)].lower for t in last])
            up = float(np.sum(mass * f_hi)) * (1 + rel) + out
            low = max(0.0, float(np.sum(mass * f_lo)) * (1 - rel))
            if up > hi_best:
                worst = law.label
            lo_best, hi_best = max(lo_best, low), max(hi_best, up)
    return Bound("delta", lo_best, min(hi_best, 1.0), "upper", "poisson-binomial", pop.n,
                 pop.name + ", Poisson-binomial blanket", {"eps": eps},
                 details={"worst": worst, "gammas": gam})


def population_epsilon(pop: Population, delta: float, *, rel_tol: float = 1e-3,
                       bins: int = 24) -> Bound:
    """Certified ``eps(delta)`` of :func:`population_delta` (Theorem 4's reduction with each
    group at its own blanket mass) by bisection.

    Parameters
    ----------
    pop : Population
        The fixed groups.
    delta : float
        Target ``delta`` in ``(0, 1)``.
    rel_tol : float, default 1e-3
        Relative width at which the bisection stops (it also stops when the delta bracket
        straddles the target).
    bins : int, default 24
        Passed to :func:`population_delta`.

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
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ParameterError(f"delta must be in (0, 1), got {delta!r}")
    lo, hi = 0.0, float(pop.eps0)       # delta(eps0) = 0: every victim ratio is <= e^eps0
    reuse: dict = {}
    while hi - lo > rel_tol * hi:
        mid = (lo + hi) / 2
        b = population_delta(pop, mid, bins=bins, reuse=reuse)
        if b.upper <= delta:
            hi = mid
        elif b.lower > delta:
            lo = mid
        else:
            break
    return Bound("eps", lo, hi, "upper", "poisson-binomial", pop.n,
                 pop.name + ", Poisson-binomial blanket", {"delta": delta})
