"""What shuffling buys in accuracy: frequency estimation with k-RR, OUE and OLH.

Each of ``n`` users holds a value ``x_i`` in ``[k] = {0, ..., k-1}``; the analyst wants the
frequencies ``f_v = n_v / n`` (``n_v`` users hold ``v``). The three local randomizers below are
*pure* frequency oracles (Wang et al. 2017, Section 4): a report ``y`` *supports* a set ``S(y)``
of values, and for every value ``v``

    Pr[v in S(Y) | x = v] = p,        Pr[v in S(Y) | x != v] = q,        p > q.

==========  =========================  ==============================  =================
oracle      report ``y``               ``p``                           ``q``
==========  =========================  ==============================  =================
k-RR        a value in ``[k]``         ``e^eps0 / (e^eps0 + k - 1)``   ``1 / (e^eps0 + k - 1)``
OUE         ``k`` bits                 ``1/2``                         ``1 / (e^eps0 + 1)``
OLH         hash ``h``, bucket in [g]  ``e^eps0 / (e^eps0 + g - 1)``   ``1 / g``
==========  =========================  ==============================  =================

With ``C_v`` the number of reports that support ``v``, ``C_v ~ Bin(n_v, p) + Bin(n - n_v, q)``
(two independent binomials), and the frequency estimator of Wang et al. (2017, Eq. (1))

    f_hat_v = (C_v / n - q) / (p - q)

is unbiased: ``E[C_v] = n_v p + (n - n_v) q``. Its exact variance (the population fixed) is

    Var[f_hat_v] = (n_v p (1 - p) + (n - n_v) q (1 - q)) / (n^2 (p - q)^2).

The central baseline adds Laplace noise of scale ``2 / eps`` (or two-sided geometric noise with
``alpha = e^(-eps/2)``) to each true count: under replace-one neighbours (:data:`amp.NEIGHBOURING`)
a histogram moves by 1 in two cells, an L1 sensitivity of 2, so it is ``(eps, 0)``-DP (Dwork et
al. 2006; Ghosh et al. 2009). numpy only; every random draw takes a seeded ``numpy`` Generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from amp.api import calibrate_eps0
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.mechanisms.base import Mechanism
from amp.mechanisms.table1 import KRR, OLH, OUE

__all__ = ["ORACLES", "FrequencyOracle", "olh_buckets", "oracle", "family", "calibrated_oracle",
           "histogram", "zipf_frequencies", "central_counts", "central_variance", "mse",
           "max_abs_error", "SETTINGS", "Comparison", "compare"]

#: The frequency oracles of this module (names as in :mod:`amp.mechanisms.registry`).
ORACLES: tuple[str, ...] = ("krr", "oue", "olh")
NOISES: tuple[str, ...] = ("laplace", "geometric")
#: The three ways of meeting a central ``eps`` that :func:`compare` measures.
SETTINGS: tuple[str, ...] = ("shuffled", "local", "central")
#: Largest eps0 for OLH: ``g = round(e^eps0 + 1)`` must stay an exact, modest integer.
MAX_OLH_EPS0 = 30.0


def histogram(values: object, k: int | None = None) -> np.ndarray:
    """True histogram ``(n_0, ..., n_{k-1})`` as int64; raises unless it is a 1-D array of
    non-negative integers with a positive sum (and length ``k`` when ``k`` is given)."""
    h = np.asarray(values)
    if h.ndim != 1 or h.size < 2:
        raise ParameterError(f"histogram must be 1-D with at least 2 cells, got shape {h.shape}")
    if not np.issubdtype(h.dtype, np.number) or np.issubdtype(h.dtype, np.complexfloating):
        raise ParameterError(f"histogram must hold counts, got dtype {h.dtype}")
    if not np.all(np.isfinite(h)) or np.any(h < 0) or np.any(h != np.round(h)):
        bad = h[~(np.isfinite(h) & (h >= 0) & (h == np.round(h)))][0]
        raise ParameterError(f"histogram counts must be integers >= 0, got {V.show(bad)}")
    h = h.astype(np.int64)
    if h.sum() < 1:
        raise ParameterError(f"histogram must count at least one user, got sum {int(h.sum())}")
    if k is not None and h.size != k:
        raise ParameterError(f"histogram must have k = {k} cells, got {h.size}")
    return h


def _reps(reps: int | None) -> tuple[int, ...]:
    return () if reps is None else (V.int_at_least("reps", reps, 1),)


def _rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy Generator (np.random.default_rng(seed)), "
                             f"got {type(rng).__name__}")
    return rng


def olh_buckets(eps0: float) -> int:
    """Wang et al.'s (2017, Section 4.4) variance-minimising number of OLH buckets,
    ``g = round(e^eps0 + 1)`` (at least 2)."""
    e0 = V.positive_float("eps0", eps0, upper=MAX_OLH_EPS0)
    return max(2, round(math.exp(e0) + 1))


@dataclass(frozen=True)
class FrequencyOracle:
    """A pure frequency oracle: ``name`` in :data:`ORACLES`, local ``eps0``, domain size ``k``
    and, for OLH, the number of buckets ``g`` (``None`` for k-RR and OUE).

    OLH is simulated with a fully random hash ``h: [k] -> [g]``: given ``x`` and the reported
    bucket ``b``, the indicators ``1{h(v) = b}``, ``v != x``, are independent Bernoulli(1/g),
    so (as for OUE, whose bits are independent) the support counts of different values are
    independent. For k-RR they are not (each report supports one value): see :meth:`simulate`.

    Examples
    --------
    >>> import numpy as np
    >>> from ampbook import accuracy as A
    >>> o = A.oracle("krr", 1.0, 3)
    >>> round(o.p, 4), round(o.q, 4)
    (0.5761, 0.2119)
    >>> hist = np.array([600, 300, 100])
    >>> counts = o.simulate(hist, np.random.default_rng(0), reps=4000)
    >>> f_hat = o.estimate(counts, 1000)        # (reps, k) frequencies
    >>> bool(np.all(abs(f_hat.mean(axis=0) - hist / 1000) < 0.01))
    True
    >>> [round(float(v), 5) for v in o.variance(hist)]
    [0.00161, 0.00143, 0.00132]
    """

    name: str
    eps0: float
    k: int
    g: int | None = None

    def __post_init__(self) -> None:
        if self.name not in ORACLES:
            raise ParameterError(f"oracle must be one of {', '.join(ORACLES)}, got "
                                 f"{V.show(self.name)}")
        object.__setattr__(self, "eps0", V.eps0_value(self.eps0))
        object.__setattr__(self, "k", V.int_at_least("k", self.k, 2))
        if self.name == "olh":
            if self.g is None:
                raise ParameterError("g is required for olh (e.g. olh_buckets(eps0))")
            object.__setattr__(self, "g", V.int_at_least("g", self.g, 2))
        elif self.g is not None:
            raise ParameterError(f"g applies to olh only, got g = {V.show(self.g)} for "
                                 f"{self.name}")

    @property
    def p(self) -> float:
        """``Pr[v in S(Y) | x = v]`` (module table)."""
        if self.name == "oue":
            return 0.5
        m = self.k if self.name == "krr" else self.g
        return 1.0 / (1.0 + (m - 1) * math.exp(-self.eps0))     # e^eps0 / (e^eps0 + m - 1)

    @property
    def q(self) -> float:
        """``Pr[v in S(Y) | x != v]`` (module table)."""
        if self.name == "krr":
            return math.exp(-self.eps0) / (1.0 + (self.k - 1) * math.exp(-self.eps0))
        if self.name == "oue":
            return 1.0 / (math.exp(self.eps0) + 1.0)
        return 1.0 / self.g

    def mechanism(self) -> Mechanism:
        """The :mod:`amp` mechanism whose shuffled privacy this oracle has: ``KRR(eps0, k)``
        (exact), ``OUE(eps0, d=k)`` (exact finite form) or ``OLH(eps0, g)`` (Table 1's
        large-domain form: a valid, possibly looser, bound for the full hash family over
        ``[k]``, whose constant functions only enlarge the blanket)."""
        if self.name == "krr":
            return KRR(self.eps0, k=self.k)
        if self.name == "oue":
            return OUE(self.eps0, d=self.k)
        return OLH(self.eps0, g=self.g)

    def simulate(self, hist: object, rng: np.random.Generator,
                 reps: int | None = None) -> np.ndarray:
        """Support counts ``C_v`` of the ``n = sum(hist)`` reports, drawn exactly in law from
        binomials (cost independent of ``n``); shape ``(k,)`` or ``(reps, k)``.

        OUE, OLH: independent ``Bin(n_v, p) + Bin(n - n_v, q)``. k-RR: each user keeps ``x``
        with probability ``p - q`` and otherwise reports a uniform value of ``[k]`` (which gives
        ``p`` and ``q``), so ``C = K + M`` with ``K_v ~ Bin(n_v, p - q)`` independent and
        ``M ~ Multinomial(n - sum K, uniform)``.
        """
        h, gen, shape = histogram(hist, self.k), _rng(rng), _reps(reps)
        n = int(h.sum())
        size = shape + (self.k,)
        if self.name == "krr":
            kept = gen.binomial(np.broadcast_to(h, size), self.p - self.q)
            rest = n - kept.sum(axis=-1)
            return kept + gen.multinomial(rest, np.full(self.k, 1.0 / self.k))
        return (gen.binomial(np.broadcast_to(h, size), self.p)
                + gen.binomial(np.broadcast_to(n - h, size), self.q))

    def estimate(self, counts: object, n: int) -> np.ndarray:
        """Unbiased frequencies ``f_hat_v = (C_v / n - q) / (p - q)`` (Wang et al. 2017)."""
        n = V.users(n)
        c = np.asarray(counts, dtype=float)
        if c.shape[-1:] != (self.k,):
            raise ParameterError(f"counts must end with k = {self.k} cells, got shape {c.shape}")
        return (c / n - self.q) / (self.p - self.q)

    def variance(self, hist: object) -> np.ndarray:
        """Exact ``Var[f_hat_v]`` per value:
        ``(n_v p(1-p) + (n - n_v) q(1-q)) / (n^2 (p-q)^2)`` (Wang et al. 2017)."""
        h = histogram(hist, self.k).astype(float)
        n, p, q = h.sum(), self.p, self.q
        return (h * p * (1 - p) + (n - h) * q * (1 - q)) / (n * (p - q)) ** 2


def oracle(name: str, eps0: float, k: int) -> FrequencyOracle:
    """The oracle ``name`` with local ``eps0`` over ``[k]``; OLH takes
    ``g = olh_buckets(eps0)``."""
    return FrequencyOracle(name, eps0, k, olh_buckets(eps0) if name == "olh" else None)


def family(name: str, k: int) -> Callable[[float], Mechanism]:
    """``eps0 -> mechanism`` of :func:`oracle` (what :func:`amp.calibrate_eps0` takes)."""
    FrequencyOracle(name, 1.0, k, 2 if name == "olh" else None)      # check name and k now
    return lambda eps0: oracle(name, eps0, k).mechanism()


def calibrated_oracle(name: str, k: int, n: int, eps: float, delta: float, *,
                      rel_tol: float = 1e-4) -> FrequencyOracle:
    """The oracle whose ``n`` shuffled reports are ``(eps, delta)``-DP (replace-one): its
    ``eps0`` is the certified value of :func:`amp.calibrate_eps0` for :func:`family`, so
    ``delta_upper(eps) <= delta`` for its mechanism (Theorem 4 of the paper).

    Examples
    --------
    >>> import amp
    >>> from ampbook import accuracy as A
    >>> o = A.calibrated_oracle("krr", 59, 10_000, 1.0, 1e-6)
    >>> round(o.eps0, 3)
    5.685
    >>> amp.delta(o.mechanism(), 10_000, 1.0).upper <= 1e-6
    True
    """
    bound = calibrate_eps0(family(name, k), n, eps, delta, rel_tol=rel_tol)
    return oracle(name, bound.value, k)


def zipf_frequencies(k: int, s: float) -> np.ndarray:
    """Zipf law over ``[k]``: ``f_v = (v + 1)^(-s) / sum_u (u + 1)^(-s)``."""
    k = V.int_at_least("k", k, 2)
    s = V.positive_float("s", s)
    w = np.arange(1, k + 1, dtype=float) ** -s
    return w / w.sum()


def _noise(noise: str) -> str:
    if noise not in NOISES:
        raise ParameterError(f"noise must be one of {', '.join(NOISES)}, got {V.show(noise)}")
    return noise


def central_counts(hist: object, eps: float, rng: np.random.Generator,
                   reps: int | None = None, noise: str = "laplace") -> np.ndarray:
    """True counts plus noise that makes the histogram ``(eps, 0)``-DP under replace-one
    neighbours (L1 sensitivity 2): Laplace of scale ``2 / eps`` (Dwork et al. 2006) or the
    two-sided geometric law ``Pr[Z = z] ∝ alpha^|z|``, ``alpha = e^(-eps/2)`` (Ghosh et al.
    2009), drawn as a difference of two geometric variables. Divide by ``n`` for frequencies."""
    h, gen, shape = histogram(hist), _rng(rng), _reps(reps)
    eps = V.positive_float("eps", eps)
    size = shape + h.shape
    if _noise(noise) == "laplace":
        return h + gen.laplace(0.0, 2.0 / eps, size)
    succ = -math.expm1(-eps / 2)                  # 1 - alpha, success probability
    return h + (gen.geometric(succ, size) - gen.geometric(succ, size))


def central_variance(eps: float, noise: str = "laplace") -> float:
    """Variance of the central noise on one count: ``2 (2/eps)^2 = 8/eps^2`` (Laplace) or
    ``2 alpha / (1 - alpha)^2``, ``alpha = e^(-eps/2)`` (geometric).

    Examples
    --------
    >>> from ampbook import accuracy as A
    >>> A.central_variance(1.0), round(A.central_variance(1.0, "geometric"), 3)
    (8.0, 7.835)
    """
    eps = V.positive_float("eps", eps)
    if _noise(noise) == "laplace":
        return 8.0 / eps ** 2
    alpha = math.exp(-eps / 2)
    return 2 * alpha / math.expm1(-eps / 2) ** 2


def mse(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Mean squared error per value, ``mean_v (f_hat_v - f_v)^2`` (over the last axis)."""
    return np.mean((np.asarray(estimate) - np.asarray(truth)) ** 2, axis=-1)


def max_abs_error(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Largest absolute error over values, ``max_v |f_hat_v - f_v|`` (over the last axis)."""
    return np.max(np.abs(np.asarray(estimate) - np.asarray(truth)), axis=-1)


@dataclass(frozen=True)
class Comparison:
    """Errors of frequency estimates on one population at one central ``eps``, three ways:
    ``shuffled`` (the calibrated oracle, its reports shuffled), ``local`` (the same oracle with
    ``eps0 = eps``, no shuffler) and ``central`` (true counts plus :func:`central_counts` noise).

    ``mse`` and ``max_abs`` are Monte Carlo means over ``reps`` draws of :func:`mse` and
    :func:`max_abs_error` of the frequencies; ``expected_mse`` is exact (the mean over values
    of ``Var[f_hat_v]``, and ``central_variance(eps) / n^2`` for the central baseline).
    """

    shuffled: FrequencyOracle
    local: FrequencyOracle
    n: int
    eps: float
    noise: str
    reps: int
    mse: dict[str, float]
    max_abs: dict[str, float]
    expected_mse: dict[str, float]


def compare(hist: object, shuffled: FrequencyOracle, eps: float, rng: np.random.Generator,
            reps: int = 100, noise: str = "laplace") -> Comparison:
    """Measure :class:`Comparison` for the population ``hist`` (the true counts) and the
    calibrated oracle ``shuffled`` (e.g. from :func:`calibrated_oracle` at this ``n``)."""
    h = histogram(hist, shuffled.k)
    eps, reps, gen = V.positive_float("eps", eps), V.int_at_least("reps", reps, 1), _rng(rng)
    n = int(h.sum())
    truth = h / n
    local = oracle(shuffled.name, eps, shuffled.k)
    est = {"shuffled": shuffled.estimate(shuffled.simulate(h, gen, reps), n),
           "local": local.estimate(local.simulate(h, gen, reps), n),
           "central": central_counts(h, eps, gen, reps, noise) / n}
    return Comparison(
        shuffled, local, n, eps, noise, reps,
        mse={s: float(np.mean(mse(est[s], truth))) for s in SETTINGS},
        max_abs={s: float(np.mean(max_abs_error(est[s], truth))) for s in SETTINGS},
        expected_mse={"shuffled": float(np.mean(shuffled.variance(h))),
                      "local": float(np.mean(local.variance(h))),
                      "central": central_variance(eps, noise) / n ** 2})
