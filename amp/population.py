"""A fixed population's one-round answers from its sharpest bound, and the front door's checks.

The bound (each group at its own blanket mass, the Poisson-binomial count of blanket draws,
maximised over the victim's group and pair) and its certified bracket are derived and computed
in :mod:`amp.backends.population_upper`, whose curves :class:`amp.PrivacyProfile` asks for a
population. This module keeps the named entries around them: :func:`population_delta` and
:func:`population_epsilon` (the bound for one round, the same numbers as the front door) and the
front door's check of a population (:func:`front_door_population`). Many rounds:
:func:`amp.rounds.population.population_rounds`.

The maximum over victim groups and pairs is the bound; it is at most the common-blanket
baseline (every ``gamma_g`` at the smallest: ``E[f(T)]`` is then Theorem 4 itself).
"""

from __future__ import annotations

from amp.backends.population_upper import TAIL, max_delta, shared_blanket, victim_curves
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.inversion import as_progress
from amp.mechanisms.mixture import Population
from amp.pairs import check_executor
from amp.privacy_profile import PrivacyProfile

__all__ = ["population_delta", "population_epsilon", "is_population", "front_door_population",
           "METHOD"]

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
    progress, _ = as_progress(progress), check_executor(executor)
    delta = V.probability_open("delta", delta)
    rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    return PrivacyProfile(pop, pop.n).epsilon(delta, rel_tol=rel_tol, progress=progress,
                                              strict=True)

