"""Fixed groups at their own blanket masses: the Poisson-binomial blanket bound's entries.

The bound (each group at its own blanket mass, the Poisson-binomial count of blanket draws,
maximised over the victim's group and pair) and its certified bracket are derived and computed
in :mod:`amp.backends.population_upper`, whose curves :class:`amp.PrivacyProfile` asks for a
population. This module keeps the functions around them: :func:`population_delta` and
:func:`population_epsilon` (the bound for one round, the same numbers as the front door),
:func:`sampled_population`, and the rounds: :func:`population_rounds` composes its certified
points by :mod:`amp.rounds` (or, ``baseline=True``, the common-blanket baseline's).

The maximum over victim groups and pairs is the bound; it is at most the common-blanket
baseline (every ``gamma_g`` at the smallest: ``E[f(T)]`` is then Theorem 4 itself).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.mechanisms.mixture import Population
from amp.backends.population_upper import (PMF_RTOL, TAIL, VictimCurve, max_delta, pb_window,
                                           shared_blanket, victim_curves)

__all__ = ["pb_window", "population_delta", "population_epsilon", "population_rounds",
           "victim_curves", "VictimCurve", "sampled_population", "METHOD", "TAIL",
           "PMF_RTOL"]

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
    lo, hi, worst = max_delta(curves, eps, rel_tol, abs_tol)
    res = Bound("delta", min(lo, hi), hi, "upper", "poisson-binomial", pop.n,
                pop.name + ", Poisson-binomial blanket", {"eps": eps},
                details={"worst": worst, "gammas": tuple(shared_blanket(pop)[1])})
    if report is not None:
        report(f"delta(eps={eps:.6g}) in [{res.lower:.6g}, {res.upper:.6g}] (worst: {worst})")
    return res


def population_epsilon(pop: Population, delta: float, *, rel_tol: float = 1e-3,
                       progress=None, executor: object = None) -> Bound:
    """Certified ``eps(delta)`` of :func:`population_delta` (Theorem 4's reduction with each
    group at its own blanket mass): ``amp.epsilon(pop, pop.n, delta)``, which is this bound
    (the population's :class:`amp.PrivacyProfile`, searched victim by victim with pruning).

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
    >>> base = amp.PrivacyProfile(pop, pop.n, laws=pop.gparv_laws())
    >>> r.value <= base.epsilon(1e-3).value          # below the common-blanket baseline
    True
    """
    from amp.core import validate as V
    from amp.inversion import as_progress
    from amp.pairs import check_executor
    from amp.privacy_profile import PrivacyProfile
    progress, _ = as_progress(progress), check_executor(executor)
    delta = V.probability_open("delta", delta)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    return PrivacyProfile(pop, pop.n).epsilon(delta, rel_tol=rel_tol, progress=progress,
                                              strict=True)


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
            return min(1.0, max_delta(self.curves, eps, UPPER_REL_TOL, 0.0)[1])

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
