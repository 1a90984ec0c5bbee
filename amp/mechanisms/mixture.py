"""Mixed populations: a random mixture of randomizers, and fixed groups (a valid baseline).

**Random mixture** (:class:`Mixture`). Each user independently picks component ``i`` with weight
``w_i`` and reports ``(i, R_i(x))`` (the tag ``i`` is public). This is one local randomizer
``R(x)((i, y)) = w_i R_i(x)(y)``, eps0-LDP with ``eps0 = max_i eps0_i``. Its blanket
(Section 3.2) is ``c((i, y)) = inf_x w_i R_i(x)(y) = w_i c_i(y)``, so ``gamma = sum_i w_i
gamma_i``, and for a pair ``(x0, x1)`` the blanket ratios on ``(i, y)`` are
``w_i R_i(x_b)(y) / (w_i c_i(y)) = a_i(y), b_i(y)``, the component's own, with mass
``w_i c_i(y)``. So the GPARV law (Definition 2) of the pair is the ``w``-weighted mixture of the
components' laws of the same pair: atoms ``(a, b)`` of component ``i`` with masses ``w_i p``.
Theorem 5's variable mixes the same way (ratios ``R_i(x_b)(y)/R_i(x2)(y)``, mass
``w_i R_i(x2)(y)``) for the same triple ``(x0, x1, x2)`` in every component. Poisson
subsampling (:class:`amp.mechanisms.subsampled.Subsampled`) is the mixture of ``R`` (weight
``q``) and the void randomizer :class:`Void` (weight ``1 - q``, one output, law ``(1, 1)`` with
mass 1).

Which pair: a mixture needs the same pair in every component. When every component is
symmetric (one law for all pairs, over a shared domain) the mixture of their laws is exact for
every pair. When a component is a numeric randomizer whose one law dominates every pair's law in
the convex order (``convex_worst``: :mod:`amp.mechanisms.numeric`, worst pair the two ends of
its input interval), every component must be one over the same interval: each pair's mixture is
then below the mixture of the worst laws in the convex order (the order is preserved by
mixtures), which is itself the law of the pair of ends. Otherwise every component must be
finite: the mixture is the explicit tagged matrix ``[w_1 P_1 | w_2 P_2 | ...]`` and its pairs
are enumerated (:meth:`Mixture.matrix`).

**Fixed groups** (:class:`Population`): ``n_g`` users run ``M_g`` (e.g. personalised eps0). The
blanket argument needs one blanket shared by all users. With the pointwise largest common part
``c(y) = min_g min_x R_g(x)(y)`` every user's ``R_g(x) = c + (rest >= 0)``, which is a blanket
decomposition with the same ``(gamma, omega) = (sum c, c / sum c)`` for everyone; the proof of
Theorem 4 (the reduction to the victim's output plus ``M ~ Bin(n - 1, gamma)`` blanket draws,
whose divergence is ``psi(M + 1)/(M + 1)`` with ``psi(m) = E[(g(Z_1) + ... + g(Z_m))_+]``, then
size-biasing to ``E[(G_1 + ... + G_n)_+]/n``) uses the other users only through this
decomposition and the victim only through ``R_v(x_b) << omega``. So Theorem 4 holds with the
victim's ratios ``a = R_v(x0)/c``, ``b = R_v(x1)/c``, mass ``c``: this is the baseline
(every user at the smallest blanket mass), maximised over the victim's group and pair. The
sharper Poisson-binomial bound ``E_M[psi(M + 1)/(M + 1)]`` (each group at its own blanket mass
against the same ``omega``) is at most the baseline (``psi(m)/m`` is non-increasing, adding a
blanket draw being post-processing, and a Poisson-binomial count with masses ``>= gamma`` is
stochastically larger than ``Bin(n - 1, gamma)``); it is computed by
:mod:`amp.backends.population_upper` and is what every entry of amp answers.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from amp.core.errors import ParameterError
from amp.core.validate import show
from amp.mechanisms.base import (Mechanism, dedupe_laws, matrix_eps0, pair_law_from_matrix)
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.subsampled import Subsampled

__all__ = ["Mixture", "Void", "Population", "sampled_population"]

WEIGHT_SUM_TOL = 1e-9
_KINDS = ("third", "x2 = x0", "x2 = x1")


class Void(Mechanism):
    """The void randomizer: every input gives the same report ``⊥`` (one output, eps0 = 0).

    Its GPARV law is the atom ``(a, b) = (1, 1)`` with mass 1 (its blanket is everything), and
    so is every Theorem 5 variable. A :class:`Mixture` component, e.g. the ``1 - q`` part of
    Poisson subsampling.

    Examples
    --------
    >>> amp.Void().gparv().gamma
    1.0
    """

    symmetric = True
    finite = True

    def __init__(self, inputs: int | None = None):
        self.eps0 = 0.0
        self.inputs = inputs
        self.name = "void"

    def matrix(self) -> np.ndarray:
        if self.inputs is None:
            raise ParameterError("the void randomizer's matrix needs its number of inputs")
        return np.ones((self.inputs, 1))

    def gparv_laws(self) -> list[GPARV]:
        return [GPARV([1.0], [1.0], [1.0], 0.0, "void")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        return self.gparv_laws()

    def describe(self) -> str:
        return "void"


def _core(m: Mechanism) -> Mechanism:
    while isinstance(m, Subsampled):
        m = m.inner
    return m


def _one_law(m: Mechanism) -> bool:
    """True when ``m.gparv_laws()`` is one law that every pair's law is below in convex order
    (symmetric mechanisms: equal; numeric ones: proven in :mod:`amp.mechanisms.numeric`)."""
    c = _core(m)
    return (m.symmetric or bool(getattr(c, "convex_worst", False))) \
        and len(m.gparv_laws()) == 1


def _domain(m: Mechanism) -> tuple:
    """What must agree between components: ``("interval", lo, hi)`` for numeric randomizers,
    ``("size", d)`` for a finite categorical domain, ``("any",)`` for a large-domain form."""
    c = _core(m)
    if isinstance(c, Void):
        return ("void",)
    if getattr(c, "convex_worst", False):
        return ("interval",) + tuple(getattr(c, "domain"))
    for attr in ("k", "d"):
        v = getattr(c, attr, None)
        if isinstance(v, int):
            return ("size", v)
    if c.finite:
        try:
            return ("size", c.matrix().shape[0])
        except ParameterError:
            pass
    return ("any",)


def _mix(laws: list[GPARV], weights: list[float], eps0: float, label: str) -> GPARV:
    a = np.concatenate([law.a for law in laws])
    b = np.concatenate([law.b for law in laws])
    p = np.concatenate([w * law.p for law, w in zip(laws, weights)])
    return GPARV(a, b, p, eps0, label, lower=all(law.lower for law in laws))


def _kinds(m: Mechanism) -> dict[str, GPARV]:
    """A component's Theorem 5 laws by triple kind: the third value, ``x2 = x0``, ``x2 = x1``
    (recognised by the labels every mechanism of :mod:`amp.mechanisms` gives them)."""
    if isinstance(_core(m), Void):
        law = Void().gparv()
        return {k: law for k in _KINDS}
    out: dict[str, GPARV] = {}
    thirds = []
    for law in m.lower_laws():
        if "background x2 = x0" in law.label:
            out["x2 = x0"] = law
        elif "background x2 = x1" in law.label:
            out["x2 = x1"] = law
        else:
            thirds.append(law)
    if len(thirds) == 1:
        out["third"] = thirds[0]
    return out


class Mixture(Mechanism):
    """Random mixture: each user picks component ``i`` with weight ``w_i`` (tag public).

    Parameters
    ----------
    components : sequence of (weight, Mechanism)
        Positive weights summing to 1 (within ``1e-9``); the components share one input
        domain (module docstring). A :class:`Void` component models users who send nothing.

    Notes
    -----
    The blanket and the GPARV law (Definition 2, Section 5.1) are the ``w``-weighted mixtures
    of the components' (module docstring); Theorem 4's bound is then computed as for any
    mechanism, and Theorem 5's lower bound from the mixed Theorem 5 laws of the same triple.

    Examples
    --------
    >>> mix = amp.Mixture([(0.9, amp.KRR(1.0, k=10)),
    ...                    (0.1, amp.KRR(4.0, k=10))])
    >>> round(mix.gamma, 4)
    0.7838
    >>> round(amp.epsilon(mix, 10_000, 1e-6).value, 4)
    0.1128
    """

    def __init__(self, components):
        try:
            items = [(w, m) for w, m in components]
        except (TypeError, ValueError):
            raise ParameterError("components must be a sequence of (weight, mechanism) "
                                 "pairs") from None
        if not items:
            raise ParameterError("a mixture needs at least one component")
        for i, (w, m) in enumerate(items):
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w) \
                    or w <= 0:
                raise ParameterError(f"component {i}: weight must be a real number > 0, got "
                                     f"{show(w)}")
            if not isinstance(m, Mechanism):
                raise ParameterError(f"component {i}: must be an amp mechanism, got "
                                     f"{type(m).__name__}")
        total = math.fsum(float(w) for w, _ in items)
        if abs(total - 1) > WEIGHT_SUM_TOL:
            raise ParameterError(f"mixture weights must sum to 1, got {total!r}")
        self.weights = [float(w) for w, _ in items]
        self.components = [m for _, m in items]
        self.eps0 = max(m.eps0 for m in self.components)
        if self.eps0 <= 0:
            raise ParameterError("a mixture needs a component with eps0 > 0 (not only void)")
        doms = {_domain(m) for m in self.components} - {("void",), ("any",)}
        kinds = {d[0] for d in doms}
        if len(doms) > 1:
            raise ParameterError(f"mixture components must share one input domain, got "
                                 f"{sorted(doms)}")
        self.by_law = all(_one_law(m) for m in self.components)
        self.symmetric = self.by_law and "interval" not in kinds
        self.convex_worst = self.by_law and "interval" in kinds
        if self.convex_worst:
            self.domain = tuple(next(iter(doms))[1:])
        self.finite = all(m.finite for m in self.components)
        if not self.by_law and not self.finite:
            raise ParameterError("a mixture needs components that are all symmetric or all "
                                 "numeric over one interval (one worst law each), or all "
                                 "finite (the tagged matrix)")
        # each component as it describes itself (its eps0 included: "0.9 10-RR (eps0=1)")
        self.name = "mixture(" + ", ".join(f"{w:g} {m.describe()}" for w, m in
                                             zip(self.weights, self.components)) + ")"

    def matrix(self) -> np.ndarray:
        """The tagged matrix ``[w_1 P_1 | w_2 P_2 | ...]`` (rows: the shared inputs)."""
        mats = []
        rows = None
        for m in self.components:
            if not isinstance(_core(m), Void):
                rows = m.matrix().shape[0]
        for w, m in zip(self.weights, self.components):
            M = Void(rows).matrix() if isinstance(m, Void) else m.matrix()
            if M.shape[0] != rows:
                raise ParameterError(f"mixture components have {M.shape[0]} and {rows} inputs")
            mats.append(w * M)
        return np.hstack(mats)

    def gparv_laws(self) -> list[GPARV]:
        if not self.by_law:
            return super().gparv_laws()
        laws = [m.gparv_laws()[0] for m in self.components]
        return [_mix(laws, self.weights, self.eps0, f"{self.name}, blanket law")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws: each triple kind (third value, ``x2 = x0``, ``x2 = x1``) mixed over
        the components when every component has it (the same triple in each)."""
        if not self.by_law:
            return super().lower_laws(pair, backgrounds=backgrounds)
        if pair is not None:
            raise ParameterError("a mixture of symmetric or numeric components takes no pair")
        per = [_kinds(m) for m in self.components]
        out = []
        for kind in _KINDS if backgrounds else _KINDS[:1]:
            if all(kind in d for d in per):
                out.append(_mix([d[kind] for d in per], self.weights, self.eps0,
                                f"{self.name} Theorem 5 {kind}"))
        if not out:
            raise ParameterError(f"{self.name}: the components have no common Theorem 5 triple")
        return dedupe_laws(out)

    def describe(self) -> str:
        return self.name


class Population(Mechanism):
    """Fixed groups: ``n_g`` users run ``M_g`` (finite, same inputs and outputs).

    Use it with its own number of users: ``amp.epsilon(pop, pop.n, delta)`` (another ``n`` is
    refused). Every entry (:func:`amp.delta`, :func:`amp.epsilon`, :func:`amp.profile`,
    :func:`amp.sweep`, ``rounds=``, :func:`amp.calibrate_eps0`, the CLI) answers with the
    sharpest certified bound amp has: each group at its own blanket mass against one shared
    blanket, the Poisson-binomial count of blanket draws, maximised over the victim's group
    and pair (:mod:`amp.backends.population_upper`); ``method=`` only picks the backend of
    each count. ``bound="lower"``: Theorem 5's pair with the victim in one group and a
    background per group (:mod:`amp.backends.population_lower`), one round.

    This object's own laws (``gparv_laws()``) are the valid, looser common-blanket baseline
    (module docstring): Theorem 4 (Section 5.1) with ``c(y) = min_g min_x R_g(x)(y)`` and the
    victim's ratios, every user at the smallest blanket mass;
    ``amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws())`` computes it (over rounds:
    ``amp.rounds.population.population_rounds`` with ``baseline=True``).

    Examples
    --------
    >>> pop = amp.Population([(9_000, amp.KRR(1.0, k=10)),
    ...                       (1_000, amp.KRR(4.0, k=10))])
    >>> pop.n, round(pop.gamma, 4)
    (10000, 0.1572)
    >>> round(amp.epsilon(pop, pop.n, 1e-6).value, 4)   # each group's own blanket
    0.1597
    >>> base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws())
    >>> round(base.epsilon(1e-6).value, 4)              # the common blanket
    0.3805
    """

    symmetric = False
    finite = False

    def __init__(self, groups):
        try:
            items = [(n, m) for n, m in groups]
        except (TypeError, ValueError):
            raise ParameterError("groups must be a sequence of (users, mechanism) pairs") \
                from None
        if not items:
            raise ParameterError("a population needs at least one group")
        mats = []
        for i, (n, m) in enumerate(items):
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise ParameterError(f"group {i}: users must be an integer >= 1, got {show(n)}")
            if not isinstance(m, Mechanism):
                raise ParameterError(f"group {i}: must be an amp mechanism, got "
                                     f"{type(m).__name__}")
            try:
                M = m.matrix()
            except ParameterError as exc:
                raise ParameterError(f"group {i}: a population needs finite mechanisms "
                                     f"(a matrix): {exc}") from None
            if mats and M.shape != mats[0].shape:
                raise ParameterError(f"group {i}: matrix shape {M.shape} differs from group "
                                     f"0's {mats[0].shape} (same inputs and outputs needed)")
            mats.append(M)
        self.groups = [(int(n), m) for n, m in items]
        self.n = sum(n for n, _ in self.groups)
        #: the stacked matrix: group g's rows are ``g * d .. g * d + d - 1``
        self.stacked = np.vstack(mats)
        self.eps0 = max(matrix_eps0(M) for M in mats)
        self.n_users = self.n
        # each group as its mechanism describes itself (its eps0 included, issue 34)
        self.name = "population(" + ", ".join(f"{n} x {m.describe()}"
                                              for n, m in self.groups) + ")"

    def gparv_laws(self) -> list[GPARV]:
        d = self.stacked.shape[0] // len(self.groups)
        laws = []
        for g, (_, m) in enumerate(self.groups):
            for i in range(d):
                for j in range(d):
                    if i != j:
                        laws.append(pair_law_from_matrix(
                            self.stacked, g * d + i, g * d + j, self.eps0,
                            f"{self.name}: victim in group {g}, pair ({i}, {j})"))
        return dedupe_laws(laws)

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        raise ParameterError("a fixed population's Theorem 5 pair is not one GPARV law (the "
                             "other users are not identically distributed): its lower bound "
                             "is amp.delta/amp.epsilon/amp.profile with bound='lower' "
                             "(amp.backends.population_lower)")

    def describe(self) -> str:
        return self.name


def sampled_population(pop: Population, q: float) -> Population:
    """The per-round population when each user takes part with probability ``q``: every group
    runs :class:`~amp.mechanisms.subsampled.Subsampled` (its matrix has the void output)."""
    if q == 1:
        return pop
    return Population([(n, Subsampled(m, q)) for n, m in pop.groups])
