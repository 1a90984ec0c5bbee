"""Baselines for many rounds: what a deployment gets without composing Theorem 4's profile.

* :func:`per_round_composed_epsilon`: a certified per-round ``(eps_1, delta_1)`` composed ``T``
  times with the optimal homogeneous composition theorem (Kairouz, Oh, Viswanath, ICML 2015).
* :func:`clone_composed_epsilon`: the standard clone's privacy profile (Feldman, McMillan,
  Talwar, FOCS 2021; generic for ``eps0``-LDP randomizers) composed like amp's, with
  privacy loss distributions (the approach of Koskela, Heikkila, Honkela, "Tight accounting in
  the shuffle model of differential privacy", arXiv 2106.00477).

Both are valid upper bounds; :func:`amp.rounds.epsilon_sweep` (Theorem 4's profile composed) is
tighter than either.
"""

from __future__ import annotations

import math
from typing import Sequence

from amp.baselines.clone import clone_delta
from amp.core import validate as V
from amp.core.errors import NumericalError
from amp.inversion import epsilon_of_curve
from amp.mechanisms.base import Mechanism
from amp.privacy_profile import PrivacyProfile
from amp.rounds import (GRID_POINTS, ComposableProfile, Round, check_rounds, compose_pmf,
                        optimal_homogeneous_epsilon, pmf_epsilon_upper)
from amp.rounds.profile import UPPER_CELLS

__all__ = ["per_round_composed_epsilon", "clone_composed_epsilon"]


def per_round_composed_epsilon(mechanism: Mechanism, n: int, delta: float, rounds: int, *,
                               sampling: float = 1.0,
                               splits: Sequence[float] = (0.02, 0.1, 0.3, 0.6)) -> float:
    """Certified eps after ``rounds`` rounds from a per-round ``(eps_1, delta_1)``.

    ``eps_1`` is the certified Theorem 4 eps of one (subsampled) round at
    ``delta_1 = f delta / T``, composed with the optimal homogeneous composition theorem
    (:func:`amp.rounds.optimal_homogeneous_epsilon`); the best over the splits ``f``.

    Examples
    --------
    >>> import amp
    >>> from amp.baselines.composition import per_round_composed_epsilon
    >>> e = per_round_composed_epsilon(amp.KRR(2.0, k=10), 10_000, 1e-6, 10)
    >>> 0.5 < e < 2.0
    True
    """
    T = check_rounds(rounds)
    d = V.probability_open("delta", delta)
    rnd = Round(mechanism, n, sampling)
    prof = PrivacyProfile(rnd.randomizer, rnd.n)
    best = math.inf
    for f in splits:
        d1 = f * d / T
        for rel_tol in (1e-4, 1e-2):     # a tiny delta_1 may only resolve to a coarser eps
            try:
                e1 = max(epsilon_of_curve(c, d1, c.max_eps, rel_tol=rel_tol).upper
                         for c in prof.curves)
            except NumericalError:
                continue
            best = min(best, optimal_homogeneous_epsilon(e1, d1, T, d))
            break
    if not math.isfinite(best):
        raise NumericalError(f"no split of delta = {d:g} over {T} rounds gives a per-round "
                             "eps that can be certified (the per-round delta is below the "
                             "floating-point floor)")
    return best


class _CloneProfile(ComposableProfile):
    """The standard clone pair's profile in place of Theorem 4's (same construction)."""

    def upper(self, eps: float) -> float:
        return min(1.0, clone_delta(self.round.randomizer.eps0, self.round.n, eps).upper)


def clone_composed_epsilon(mechanism: Mechanism, n: int, delta: float,
                           rounds: Sequence[int], *, points: int = GRID_POINTS) -> list[float]:
    """Certified eps after each ``T`` of ``rounds``: the standard clone's profile composed
    ``T`` times (connect-the-dots PLD, dp-accounting), as :mod:`amp.rounds` composes Theorem
    4's. Generic in ``eps0``, so looser than :func:`amp.rounds.epsilon_sweep`.

    Examples
    --------
    >>> import amp
    >>> from amp.baselines.composition import clone_composed_epsilon
    >>> [round(e, 2) for e in clone_composed_epsilon(amp.KRR(2.0, k=10), 10_000, 1e-6, [1])]
    [0.16]
    """
    d = V.probability_open("delta", delta)
    prof = _CloneProfile(mechanism, n)
    one = prof.upper_pmf(prof.eps_cut / (UPPER_CELLS * points), points)
    out = []
    for T in rounds:
        pmf, pad = compose_pmf(one, check_rounds(T))
        out.append(pmf_epsilon_upper(pmf, d, pad))
    return out
