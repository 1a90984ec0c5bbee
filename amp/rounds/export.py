"""One shuffled round as a dp-accounting ``PrivacyLossDistribution``, every error term inside it.

:func:`amp.to_pld` hands a privacy engineer the round in the form dp-accounting composes with
anything else (a DP-SGD run's Gaussian PLD, Laplace counts, other shuffled rounds).

Pessimistic (``pessimistic=True``; the upper side). The object is the mixture
``(1 - a) D + a inf`` where

* ``D`` is the connect-the-dots PLD that :mod:`amp.rounds` builds from certified upper points of
  Theorem 4's profile (steps 1-3 of that module's docstring): in exact arithmetic its
  hockey-stick curve is ``>= H(eps)``, the true curve of one round, at every ``eps`` (both
  orders of the neighbouring pair), i.e. it is a *dominating pair* of the round; the rounding of
  its masses is measured and moved to its mass at infinity (:func:`amp.rounds.pmf.repair`);
* ``a`` is the floating-point allowance :func:`float_allowance`: the mixture's curve is
  ``a + (1 - a) delta_D(eps)``, and ``k`` copies composed carry ``1 - (1 - a)^k >= k a (1 -
  k a / 2)`` at infinity, which raises the composed curve by at least ``k a (1 - k a / 2)
  (1 - delta)``. ``a`` is chosen so that ``k`` copies cover, on pmfs of at most
  ``max_length`` grid points, the floating-point error of ``k`` dp-accounting composition
  steps (``compose`` or ``self_compose``; ``fft_pad(max_length, 1, 1)`` each, the error model
  :mod:`amp.rounds` uses, which also bounds one copy's share of a ``self_compose``),
  dp-accounting's tail truncation (``1e-15`` per step, twice), and the rounding of the final
  ``get_delta_for_epsilon`` / ``get_epsilon_for_delta`` (relative ``8 u L``) for answers with
  ``delta <= 0.01``, as long as ``k a <= 0.05``. The usual patterns stay inside it: copies
  self-composed (one step), then composed with the rest (one step); composing one copy with
  100 other PLDs one at a time (100 steps) does not: compose the others first.

Dominating pairs compose under adaptive composition (Zhu, Dong and Wang, AISTATS 2022,
Theorem 10), so dp-accounting's own ``compose``, ``self_compose`` and ``get_epsilon_for_delta``
give valid upper bounds with nothing added afterwards. What the allowance does not cover: the
floating-point error of composition steps among *other* PLDs (a Gaussian self-composed 1000
times is dp-accounting's own computation, as without ``amp``), and the other PLDs' own
validity: use pessimistic ones for the same neighbouring relation, *replace one user's input*
(``amp.NEIGHBOURING``; e.g. ``from_gaussian_mechanism(...,
neighboring_relation=NeighboringRelation.REPLACE_ONE)``).

The single-round eps from the export is the connect-the-dots value, slightly above
``amp.epsilon``'s (which inverts Theorem 4 directly): the chords between grid points lie above
the convex curve. At 10-RR, ``eps0 = 4``, ``n = 10^4``, ``delta = 1e-6`` the export gives
0.38088 (0.38089 at the round's own coarser step ``eps_m / (8 points)``, about ``0.0011``)
and ``amp.epsilon`` 0.380495 with the exact value in ``[0.380487, 0.380495]``: both are
valid upper bounds, ``amp.epsilon`` the tighter one; raise ``points`` to close the gap.

Optimistic (``pessimistic=False``; the lower side). The PLD of the explicit Theorem 5 dataset
pair ``(x0, x2, ..., x2)`` vs ``(x1, x2, ..., x2)``, post-processed to three group counts
(``math-notes.md``), built optimistically (losses rounded down to the grid, mass outside the
enumerated window dropped): one instance of the round, so its curve, and that of its ``T``-fold
self-composition, is below the true curve of ``T`` rounds *of this mechanism*. It says nothing
about a composition with other mechanisms. In exact arithmetic only: dp-accounting's
floating-point error and the ``tail_mass_truncation`` it adds to the mass at infinity (even for
optimistic pmfs) are not inside it; ``amp.epsilon(..., rounds=T).lower`` subtracts them.
"""

from __future__ import annotations

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.mechanisms.base import Mechanism
from amp.rounds import adapter as A
from amp.rounds.lower import lower_step
from amp.rounds.pmf import TRUNCATION, fft_pad
from amp.rounds.profile import GRID_POINTS, UPPER_CELLS, ComposableProfile

__all__ = ["to_pld", "float_allowance", "MAX_LENGTH", "DELTA_MAX", "DEFAULT_STEP"]

#: Default loss grid step of a pessimistic export: dp-accounting's own default
#: (``value_discretization_interval=1e-4`` of ``from_gaussian_mechanism``,
#: ``from_laplace_mechanism``, ...), so an export composes with its PLDs as they come
#: (dp-accounting composes only PLDs with the same step). A finer step than the round's own
#: ``eps_m / (8 points)`` only brings the connect-the-dots curve closer to Theorem 4's.
DEFAULT_STEP = 1e-4
#: Default longest FFT (grid points of a composed pmf, after dp-accounting's tail truncation)
#: whose floating-point error the allowance covers: 2^20 (100 self-compositions of a default
#: export of 10-RR at n = 10^4 use about 160,000; a Gaussian PLD at step 1e-4, a few 10^4).
MAX_LENGTH = 2 ** 20
#: Largest delta at which the allowance also covers the rounding of the final evaluation.
DELTA_MAX = 0.01


def float_allowance(max_length: int = MAX_LENGTH) -> float:
    """Mass ``a`` each exported round moves to infinity (:mod:`amp.rounds.export` docstring):
    ``1.1 (fft_pad(L, 1, 1) + 2e-15 + 8 u L DELTA_MAX)`` with ``L = max_length``; the factor
    1.1 covers ``(1 - k a / 2)(1 - delta) >= 0.97 * 0.99``."""
    L = V.int_at_least("max_length", max_length, 2)
    return 1.1 * (fft_pad(L, 1, 1.0) + 2 * TRUNCATION + 8 * U * L * DELTA_MAX)


def to_pld(mechanism: Mechanism, n: int, *, sampling: float = 1.0, pessimistic: bool = True,
           value_discretization_interval: float | None = None,
           points: int = GRID_POINTS, max_length: int = MAX_LENGTH):
    """One shuffled round as a dp-accounting ``PrivacyLossDistribution`` (every error inside).

    Pessimistic (default): a dominating pair of one round of ``mechanism`` shuffled among ``n``
    users (each taking part with probability ``sampling``), from certified upper points of
    Theorem 4's profile (Section 5.1) joined by connect-the-dots, plus a floating-point
    allowance at infinity. Its ``get_epsilon_for_delta(delta)``, alone or after dp-accounting's
    ``compose`` / ``self_compose`` with any other pessimistic PLD (same neighbouring relation:
    replace one user's input), is a valid upper bound, with nothing to add. Optimistic
    (``pessimistic=False``): the Theorem 5 pair (Section 5.3), whose ``T``-fold
    self-composition gives a lower bound for ``T`` rounds of this mechanism only, in exact
    arithmetic (:mod:`amp.rounds.export` lists what is and is not inside each).

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer.
    n : int
        Number of users shuffled together.
    sampling : float, default 1.0
        Poisson client subsampling rate ``q`` in ``(0, 1]``.
    pessimistic : bool, default True
        ``True``: the upper side (dominating pair); ``False``: the lower side (Theorem 5 pair).
    value_discretization_interval : float, optional
        The loss grid step. dp-accounting composes only PLDs with the same step and direction:
        the pessimistic default is dp-accounting's own default, ``1e-4``
        (:data:`~amp.rounds.export.DEFAULT_STEP`), so the export composes with
        ``from_gaussian_mechanism(...)`` and the like as they come; pass another step to
        match PLDs built with one (a coarser step, e.g. ``1e-3``, gives shorter pmfs and a
        slightly larger, still valid, eps). The optimistic default is a step losing at most about ``1e-3`` in eps over 100
        self-compositions (its PLD composes only with itself).
    points : int, default 120
        Certified grid points on each side of ``eps = 0`` (pessimistic; more: closer to
        Theorem 4's curve).
    max_length : int, default 2**20
        Longest composed pmf (grid points) whose floating-point error the allowance covers;
        raise it for longer compositions (the allowance grows like ``sqrt(max_length)``). A
        round whose own pmf is longer (a fine step over a wide loss range) is refused.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Symmetric; replace-one neighbouring.

    Raises
    ------
    ParameterError
        For a bad argument, or a pessimistic pmf longer than ``max_length`` (the allowance
        would not cover a single composition step of it).

    Examples
    --------
    Ten shuffled rounds (10-RR, ``eps0 = 4``, ``n = 1000``), then a Gaussian count (noise
    ``sigma = 10``, replace-one), composed in dp-accounting (both at the default step
    ``1e-4``):

    >>> import amp
    >>> from dp_accounting import NeighboringRelation
    >>> from dp_accounting.pld import privacy_loss_distribution as pld
    >>> one = amp.to_pld(amp.KRR(4.0, k=10), 1_000)
    >>> g = pld.from_gaussian_mechanism(
    ...     10.0, neighboring_relation=NeighboringRelation.REPLACE_ONE)
    >>> both = one.self_compose(10).compose(g)
    >>> round(both.get_epsilon_for_delta(1e-6), 2)
    4.87

    A step of ``1e-3`` on both sides gives shorter pmfs (the same eps to 2 digits here):

    >>> coarse = amp.to_pld(amp.KRR(4.0, k=10), 1_000, value_discretization_interval=1e-3)
    >>> g3 = pld.from_gaussian_mechanism(
    ...     10.0, value_discretization_interval=1e-3,
    ...     neighboring_relation=NeighboringRelation.REPLACE_ONE)
    >>> round(coarse.self_compose(10).compose(g3).get_epsilon_for_delta(1e-6), 2)
    4.87
    """
    if not isinstance(pessimistic, bool):
        raise ParameterError(f"pessimistic must be True or False, got {V.show(pessimistic)}")
    step = (None if value_discretization_interval is None else
            V.positive_float("value_discretization_interval", value_discretization_interval))
    points = V.int_at_least("points", points, 8)
    a = float_allowance(max_length)
    prof = ComposableProfile(mechanism, n, sampling)
    if not pessimistic:
        step = step or lower_step([prof], 100)
        return A.wrap(prof.lower_pmfs(step)[0])
    step = step or DEFAULT_STEP
    pmf = prof.upper_pmf(step, points, sparse=True)
    probs = A.probs(pmf)
    if len(probs) > max_length:
        raise ParameterError(
            f"the round's pmf has {len(probs)} grid points at value_discretization_interval="
            f"{step:g}, more than max_length={max_length}: the floating-point allowance would "
            f"not cover composing it; pass a coarser value_discretization_interval (e.g. "
            f"{prof.eps_cut / (UPPER_CELLS * points):.3g}, the round's own) or a larger "
            "max_length")
    mixed = A.dense_pmf(step, A.lower_index(pmf), probs * (1 - a),
                        A.infinity_mass(pmf) * (1 - a) + a, True)
    return A.wrap(mixed)
