"""Many shuffled rounds, with client subsampling: certified ``eps`` / ``delta`` after composition.

Each round runs a (possibly subsampled, :class:`~amp.mechanisms.subsampled.Subsampled`) local
randomizer shuffled among ``n`` users; rounds may be chosen adaptively. The answer is a bracket
``[lower, upper]`` of the true composed ``eps(delta)`` (or ``delta(eps)``) of the mechanism.

Why ``upper`` is valid (privacy loss distributions of dp-accounting, composed):

1. *Profile.* ``H(eps)``, the supremum over neighbouring datasets (both orders) of
   ``D_{e^eps}(M(X) || M(X'))``, is at most the certified upper end of Theorem 4's blanket
   bound (:class:`~amp.privacy_profile.PrivacyProfile`, ``Bound.upper``): the shuffled output is a
   post-processing of the blanket reduction, so the bound holds for every dataset pair. For a
   mechanism with several pair laws the bound is their maximum over ordered input pairs; we
   need no single pair dominating all laws, because that maximum bounds the supremum ``H``
   pointwise and the steps below use nothing else. (k-RR and the Table 1 rows have one law,
   equal to its own reverse; a matrix lists every ordered pair, so both orders are covered.)
   For ``eps < 0``: ``D_t(P||Q) = 1 - t + t D_{1/t}(Q||P)`` with ``t = e^eps``, and ``(Q, P)``
   is a neighbouring pair too, so ``H(eps) <= 1 - e^eps + e^eps u(-eps)``.
2. *Convexity.* As a function of ``t = e^eps``, ``H`` is a supremum of convex non-increasing
   functions, so it is convex and non-increasing with ``H(t = 0) = 1``. On a grid
   ``-eps_m < ... < 0 < ... < eps_m`` (multiples of ``step``, ``eps_m`` where the bound is
   ``<= 1e-25``) we take the upper values, their running minimum from the left (valid, ``H``
   decreases), and the greatest convex minorant of these points together with ``(t = 0, 1)``.
   The chord interpolation of the true values is a convex minorant of the upper values, hence
   lies below that greatest one: the minorant stays ``>= H`` at every grid point. Any set of
   grid points with ``0`` and ``eps_m`` will do: :mod:`amp.rounds.points` chooses ~40 of the
   120 (those the composed answer depends on; its docstring says how).
3. *Connect the dots* (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022, Algorithm 1;
   Zhu, Dong, Wang, AISTATS 2022). The pessimistic connect-the-dots PLD of these points
   (``pld_pmf.create_pmf_pessimistic_connect_dots``) is the PLD of a pair whose hockey-stick
   curve is the piecewise-linear interpolation in ``t`` of the points, through ``(0, 1)`` and
   constant (mass at infinity) beyond ``eps_m``. A chord lies above a convex function, so this
   curve is ``>= H`` at every ``eps``: the pair dominates every round in both directions. The
   masses are computed in floating point; :func:`~amp.rounds.pmf.repair` clips negative residues, measures
   the curve at the grid points (it is linear in ``t`` between them) and moves the measured
   shortfall, with a margin, to the mass at infinity.
4. *Composition.* Dominating pairs compose under adaptive composition (Zhu, Dong and Wang,
   Theorem 10): the product of the rounds' pairs dominates the ``T`` rounds, and dp-accounting's
   convolution of losses is the product's PLD. Its tail truncation is pessimistic (the mass goes
   to infinity). The floating-point error of its FFTs is bounded by :func:`fft_pad` (the L2
   error model ``|fl(FFT x) - FFT x|_2 <= 10 log2(L) u |FFT x|_2``, propagated through the
   ``T``-th power and the inverse transform, then turned into an L1 bound on the pmf) or, for a
   self-composition, by the smaller :func:`self_compose_pad`, which weights each frequency's
   error by ``|FFT x|_k^(T-1)`` (tiny away from frequency 0 after many rounds). It is
   added to every ``delta``. Before composing, the memory of the transforms is checked
   (:func:`amp.core.memory.check`). For ``eps(delta)`` the PLD is inverted at ``delta - pad`` and
   checked at the returned eps.

Why ``lower`` is valid: the Theorem 5 dataset pair ``X0 = (x0, x2, ..., x2)``,
``X1 = (x1, x2, ..., x2)`` run ``T`` times is one instance of the ``T`` rounds, so the hockey-stick
of its product is a lower bound on the true curve. Its histogram is post-processed to the counts
of three groups of outputs (``a > b``, ``a < b``, ``a = b``; exact for k-RR), whose laws are the
size-biased multinomials ``P_b(h) = Mult(h) X_b(h) / n`` (``math-notes.md``); post-processing only
lowers a divergence. Above ``LOWER_POINTS`` lattice points the counts are post-processed to
``D = h1 - h2`` (:mod:`amp.rounds.lower`, ``O(sqrt n)``). The PLD is built *optimistically*: mass
outside the enumerated window is dropped, masses are scaled down by ``1 - 1e-9`` and losses are
rounded down to the grid, each of which lowers ``delta(eps) = E[(1 - e^(eps - L))_+]``; after
composition the FFT pad and the
truncation mass are subtracted.

The package, one concept a module (imports go down this list):

``adapter``      the one place that reads dp-accounting's PLD internals
``pmf``          certified arithmetic on dense PLDs: compose, pad, repair, read eps
``lower``        Theorem 5's explicit pair of a round as a PLD (the lower side)
``points``       where the upper end's certified points are placed
``profile``      one round in composable form (:class:`Round`, :class:`ComposableProfile`)
``compose``      rounds composed: :func:`compose`, :func:`compose_lower` and the homogeneous cases
``optimal``      the optimal composition theorem (a baseline)
``population``   a fixed population over many rounds
``export``       one round as a dp-accounting PLD (:func:`amp.to_pld`)
"""

from amp.mechanisms.subsampled import check_sampling
from amp.rounds.composition import (compose, compose_lower, delta_rounds, epsilon_rounds,
                                    epsilon_sweep)
from amp.rounds.lower import difference_pmf
from amp.rounds.optimal import optimal_homogeneous_delta, optimal_homogeneous_epsilon
from amp.rounds.pmf import compose_pmf, fft_pad, pmf_epsilon_upper, self_compose_pad
from amp.rounds.profile import (GRID_POINTS, TAIL_DELTA, ComposableProfile, Round,
                                check_rounds)

__all__ = ["Round", "ComposableProfile", "compose", "compose_lower", "epsilon_rounds",
           "delta_rounds", "epsilon_sweep", "optimal_homogeneous_delta",
           "optimal_homogeneous_epsilon", "compose_pmf", "pmf_epsilon_upper", "check_rounds",
           "check_sampling", "TAIL_DELTA", "GRID_POINTS", "self_compose_pad", "fft_pad",
           "difference_pmf"]
