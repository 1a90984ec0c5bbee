"""A fixed population over many rounds, from its Poisson-binomial blanket bound.

:func:`population_rounds` composes a fixed :class:`~amp.mechanisms.mixture.Population`'s rounds
as :func:`amp.rounds.compose` composes a mechanism's, with certified upper points taken from the
population's sharp bound (:mod:`amp.backends.population_upper`: each group at its own blanket
mass) instead of a profile's laws; :func:`population_round` is that round in composable form.
"""

from __future__ import annotations

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.backends.population_upper import max_delta, victim_curves
from amp.mechanisms.mixture import Population, sampled_population
from amp.mechanisms.subsampled import check_sampling
from amp.rounds.pmf import compose_pmf, pmf_epsilon_upper
from amp.rounds.profile import (GRID_POINTS, UPPER_CELLS, UPPER_REL_TOL, ComposableProfile,
                                check_rounds)

__all__ = ["population_rounds", "population_round", "PopulationRound", "METHOD"]

#: The method named in the answer (as the front door's ``method="poisson-binomial"``).
METHOD = "poisson-binomial"


class PopulationRound(ComposableProfile):
    """One round of a fixed population whose certified upper points are the Poisson-binomial
    bound (:func:`amp.backends.population_upper.max_delta` over the victims' curves)."""

    def __init__(self, pop: Population) -> None:
        super().__init__(pop, pop.n, with_profile=False)   # the curves are the bound
        self.curves = victim_curves(pop)

    def upper(self, eps: float) -> float:
        return min(1.0, max_delta(self.curves, eps, UPPER_REL_TOL, 0.0)[1])

    def max_eps(self) -> float:
        return max(c.max_eps for c in self.curves)


def population_round(pop: Population) -> PopulationRound:
    """One round of ``pop`` as a :class:`~amp.rounds.ComposableProfile` (:class:`PopulationRound`)."""
    return PopulationRound(pop)


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
    T = check_rounds(rounds)
    q = check_sampling(sampling)
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    if not isinstance(pop, Population):
        raise ParameterError(f"pop must be an amp Population, got {type(pop).__name__}")
    if baseline:
        prof = ComposableProfile(pop, pop.n, q)
    else:
        prof = population_round(sampled_population(pop, q))
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
