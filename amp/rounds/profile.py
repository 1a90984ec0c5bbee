"""One shuffled round in composable form: :class:`Round` and :class:`ComposableProfile`.

A :class:`ComposableProfile` turns one round's certified privacy profile into the two privacy
loss distributions that composition needs: the pessimistic connect-the-dots PLD of certified
upper points (a dominating pair of the round; steps 1-3 of the :mod:`amp.rounds` docstring) and
the optimistic PLDs of Theorem 5's explicit pair (:mod:`amp.rounds.lower`). A subclass that
certifies its upper points another way (a fixed population's Poisson-binomial bound,
:mod:`amp.rounds.population`; the clone baseline, :mod:`amp.baselines.composition`) overrides
:meth:`ComposableProfile.upper` and :meth:`ComposableProfile.max_eps`; every other step is the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.roots import bisect
from amp.mechanisms.base import Mechanism
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.subsampled import Subsampled, check_sampling
from amp.pairs import delta_max
from amp.privacy_profile import PrivacyProfile, check_mechanism, laws_for, per_round_population
from amp.rounds import adapter as A
from amp.rounds.lower import explicit_pair_losses, explicit_pair_pmf
from amp.rounds.pmf import repair
from amp.rounds.points import (certify, mirror, profile_estimate, profile_knots,
                               profile_knots_suffice, tail_upper)

__all__ = ["Round", "ComposableProfile", "as_round", "check_rounds", "TAIL_DELTA",
           "GRID_POINTS", "UPPER_REL_TOL", "UPPER_GOAL", "UPPER_CELLS", "MAX_ROUNDS"]

#: Per-round delta below which the rest of the curve goes to the mass at infinity.
TAIL_DELTA = 1e-25
#: Grid points of the connect-the-dots construction per round (on each side of eps = 0).
GRID_POINTS = 120
#: Relative width of the certified delta brackets at the grid points.
UPPER_REL_TOL = 2e-3
#: Width the structured path aims at there (as cheap; 2e-3 may stop ~1e-3 above the value).
UPPER_GOAL = 2e-5
#: Loss-grid cells per connect-the-dots interval (upper).
UPPER_CELLS = 8
MAX_ROUNDS = 10 ** 7


def check_rounds(rounds: object) -> int:
    """A number of rounds: an integer ``>= 1`` (a float such as ``1.0`` is refused), else
    :class:`ParameterError`."""
    return V.strict_int_at_least("rounds", rounds, 1)


@dataclass(frozen=True)
class Round:
    """``times`` identical rounds of ``mechanism`` shuffled among ``n`` users, each user taking
    part with probability ``sampling``: one entry of :func:`amp.compose`'s list.

    Each round is bounded by the blanket bound of Theorem 4 (§5.1) for its randomizer (the
    subsampled one ``q R + (1 - q) void`` when ``sampling = q < 1``), and the rounds compose
    adaptively. ``amp.epsilon(m, n, delta, rounds=T, sampling=q)`` is the same as
    ``amp.compose([amp.Round(m, n, q, T)], delta=delta)``.

    Examples
    --------
    >>> import amp
    >>> r = amp.Round(amp.KRR(1.0, k=10), 5_000, sampling=0.5, times=3)
    >>> r.n, r.sampling, r.times
    (5000, 0.5, 3)
    >>> amp.Round(amp.KRR(1.0, k=10), 5_000, times=0)
    Traceback (most recent call last):
    ...
    amp.core.errors.ParameterError: rounds must be >= 1, got 0
    """

    mechanism: Mechanism
    n: int
    sampling: float = 1.0
    times: int = 1

    def __post_init__(self) -> None:
        check_mechanism(self.mechanism)
        object.__setattr__(self, "n", V.users(self.n))
        object.__setattr__(self, "sampling", check_sampling(self.sampling))
        object.__setattr__(self, "times", check_rounds(self.times))
        if self.times > MAX_ROUNDS:
            raise ParameterError(f"rounds must be <= {MAX_ROUNDS}, got {self.times}")

    @property
    def randomizer(self) -> Mechanism:
        """The per-round randomizer ``q R + (1 - q) void``."""
        return self.mechanism if self.sampling == 1 else Subsampled(self.mechanism,
                                                                     self.sampling)


def as_round(r: object) -> Round:
    """``r`` as a :class:`Round` (a tuple ``(mechanism, n[, sampling[, times]])`` is accepted)."""
    if isinstance(r, Round):
        return r
    if isinstance(r, tuple) and 2 <= len(r) <= 4:
        return Round(*r)
    raise ParameterError("each round must be an amp.Round or a tuple (mechanism, n[, "
                         f"sampling[, times]]), got {type(r).__name__} {V.show(r)[:60]}")


# ---------------------------------------------------------------------------- one round
class ComposableProfile:
    """One round's certified profile in composable form: pessimistic and optimistic PLDs.

    ``upper_pmf(step)``: connect-the-dots PLD from certified upper points of
    :class:`~amp.privacy_profile.PrivacyProfile` (``bound="upper"``), a dominating pair of the round.
    ``lower_pmf(step)``: optimistic PLD of the explicit Theorem 5 pair (module docstring).
    """

    def __init__(self, mechanism: Mechanism, n: int, sampling: float = 1.0,
                 lower_pair: tuple[int, int] | None = None, *, with_profile: bool = True):
        self.round = Round(mechanism, n, sampling)
        # a fixed population composes its common-blanket baseline here (its laws: one pair
        # law each, a valid profile); amp.epsilon(pop, ..., rounds=T) composes its sharper
        # Poisson-binomial points instead (amp.rounds.population.population_rounds)
        rnd = self.round.randomizer
        laws = rnd.gparv_laws() if per_round_population(rnd) is not None else None
        #: None for a subclass whose :meth:`upper` certifies its points another way
        #: (``with_profile=False``)
        self.profile = PrivacyProfile(rnd, self.round.n, laws=laws) if with_profile else None
        self.lower_pair = lower_pair
        #: the question the points are placed for, ``(times, delta, eps)``
        #: (:func:`amp.rounds.points.profile_knots`), else None
        self.question: tuple | None = None
        self._cut: float | None = None

    def upper(self, eps: float) -> float:
        """Certified ``>= H(eps)``: the profile's upper end (the maximum over its pair laws;
        a width of 2e-3 is enough for a grid point)."""
        # A matrix's pairs are pruned (amp.pairs.delta_max: its upper end dominates every
        # pair's exact value, refined or pruned)
        prof = self.profile
        if prof.pairs is not None:
            return min(1.0, delta_max(prof.pairs, prof.n, eps, rel_tol=UPPER_REL_TOL,
                                      method=prof.method, goal=UPPER_REL_TOL)[1])
        return min(1.0, max(c.delta(eps, rel_tol=UPPER_REL_TOL, goal=UPPER_GOAL).upper
                            for c in prof.curves))

    def max_eps(self) -> float:
        """``eps`` from which the bound is 0 (the largest ``log max a/b`` over the laws)."""
        prof = self.profile
        if prof.pairs is not None:
            return float(prof.pairs.max_eps().max())
        return max(c.max_eps for c in prof.curves)

    def tail_upper(self, eps: float) -> float:
        """Cheap certified upper end for locating the grid end
        (:func:`amp.rounds.points.tail_upper`: Chernoff), else :meth:`upper`."""
        if self.estimate(np.zeros(1)) is None:
            return self.upper(eps)
        return tail_upper(self.profile.laws, self.round.n, eps)

    @property
    def eps_cut(self) -> float:
        """A grid end ``eps_m`` with certified ``delta_upper(eps_m) <= TAIL_DELTA`` (or the
        eps from which the bound is 0), located with :meth:`tail_upper` (any ``eps_m`` is
        valid: the value certified there becomes the mass at infinity)."""
        if self._cut is None:
            hi = self.max_eps()
            if not math.isfinite(hi):
                hi = 1.0
                while self.tail_upper(hi) > TAIL_DELTA:
                    hi *= 2
                    if hi > 1e3:
                        raise NumericalError("the per-round profile does not reach "
                                             f"{TAIL_DELTA:g} below eps = 1000")
            lo = 0.0
            if self.tail_upper(0.0) > TAIL_DELTA:
                _, hi = bisect(lambda e: self.tail_upper(e) <= TAIL_DELTA, lo, hi,
                               rel_tol=1e-3, steps=40)
            self._cut = max(hi, 1e-9)
        return self._cut

    def upper_points(self, step: float, points: int = GRID_POINTS,
                     knots: np.ndarray | None = None, *, fallback: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Grid indices ``k_i`` (``eps_i = k_i step``, symmetric about 0) and convex upper values
        ``>= H(eps_i)``; for ``eps < 0``, ``H(eps) <= 1 - e^eps + e^eps H(-eps)`` (the identity
        ``D_t(P||Q) = 1 - t + t D_{1/t}(Q||P)`` and ``(Q, P)`` is a neighbouring pair too).
        ``knots`` (non-negative indices; default the uniform ``points + 1`` up to ``eps_cut``)
        and ``fallback``: :func:`amp.rounds.points.certify` (any set is valid)."""
        return mirror(*certify(self, step, points, knots, fallback), step)

    def upper_pmf(self, step: float, points: int = GRID_POINTS, *, sparse: bool = False,
                  knots: np.ndarray | None = None):
        """Pessimistic connect-the-dots PLD (dp-accounting ``DensePLDPmf``) on ``step``.

        ``sparse``: the rounding margin of :func:`~amp.rounds.pmf.repair` counts the pmf's nonzero masses
        (zeros add no rounding to the curve's sums) instead of its length; a long pmf on a fine
        step then moves far less mass to infinity (:func:`amp.to_pld`). ``knots``: see
        :meth:`upper_points`."""
        pmf_mod = A.pmf_module()
        ks, d = self.upper_points(step, points, knots)
        pmf = pmf_mod.create_pmf_pessimistic_connect_dots(step, ks, d).to_dense_pmf()
        return repair(pmf, ks, d, step, sparse)

    def estimate(self, eps: np.ndarray) -> np.ndarray | None:
        """:func:`amp.rounds.points.profile_estimate` (``None`` with own certified values)."""
        if type(self).upper is not ComposableProfile.upper:
            return None
        return profile_estimate(self.profile, self.round.n, eps)

    def knots(self, step: float, points: int, times: int, *, delta: float | None = None,
              eps: float | None = None) -> np.ndarray | None:
        """:func:`amp.rounds.points.profile_knots` (``None``: the uniform grid)."""
        return profile_knots(self, step, points, times, delta, eps)

    def knots_suffice(self, step: float, points: int, ks: np.ndarray, u: np.ndarray) -> bool:
        """:func:`amp.rounds.points.profile_knots_suffice` (the a posteriori check)."""
        return profile_knots_suffice(self, step, points, ks, u)

    def lower_laws(self) -> list[GPARV]:
        """Theorem 5 laws of the round's randomizer (at most 8); with ``lower_pair`` set, the
        laws of that input pair (the first is the third input ``x2`` = the smallest other)."""
        if self.lower_pair is not None:
            return self.round.randomizer.lower_laws(self.lower_pair)[:8]
        return laws_for(self.round.randomizer, "lower", None, self.round.n)[:8]

    def lower_pmfs(self, step: float | None = None) -> list:
        """Optimistic PLDs of the explicit Theorem 5 pairs (one per law)."""
        return [explicit_pair_pmf(law, self.round.n, step, self._losses(i, law))
                for i, law in enumerate(self.lower_laws())]

    def _losses(self, i: int, law: GPARV):
        """:func:`~amp.rounds.lower.explicit_pair_losses` of the ``i``-th lower law, computed once."""
        cache = self.__dict__.setdefault("_loss_cache", {})
        if i not in cache:
            cache[i] = explicit_pair_losses(law, self.round.n)
        return cache[i]

    def lower_range(self) -> float:
        """Width of the lower pair's loss range (for the choice of a common step)."""
        return min(self._losses(i, law)[2] for i, law in enumerate(self.lower_laws()))
