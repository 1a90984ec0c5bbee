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
   grid points with ``0`` and ``eps_m`` will do: :mod:`amp.rounds_points` chooses ~40 of the
   120 (those the composed answer depends on; its docstring says how).
3. *Connect the dots* (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022, Algorithm 1;
   Zhu, Dong, Wang, AISTATS 2022). The pessimistic connect-the-dots PLD of these points
   (``pld_pmf.create_pmf_pessimistic_connect_dots``) is the PLD of a pair whose hockey-stick
   curve is the piecewise-linear interpolation in ``t`` of the points, through ``(0, 1)`` and
   constant (mass at infinity) beyond ``eps_m``. A chord lies above a convex function, so this
   curve is ``>= H`` at every ``eps``: the pair dominates every round in both directions. The
   masses are computed in floating point; ``_repair`` clips negative residues, measures
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
``D = h1 - h2`` (:mod:`amp.pld_lower`, ``O(sqrt n)``). The PLD is built *optimistically*: mass
outside the enumerated window is dropped, masses are scaled down by ``1 - 1e-9`` and losses are
rounded down to the grid, each of which lowers ``delta(eps) = E[(1 - e^(eps - L))_+]``; after
composition the FFT pad and the
truncation mass are subtracted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from amp.core.lazy import lazy
from amp.core import memory
from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.result import Bound
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.subsampled import Subsampled, check_sampling
from amp.mechanisms.base import Mechanism
from amp import pld_adapter as A
from amp.pld_lower import (check_compose_memory, corner_width, difference_pair_losses,
                            difference_pmf, eps_lower as _eps_lower, eps_upper as _eps_upper,
                            fft_pad, repair as _repair, self_compose_pad)
from amp.pairs import delta_max
from amp.privacy_profile import per_round_population, PrivacyProfile, check_mechanism, laws_for
from amp.rounds_points import (certify, mirror, profile_estimate, profile_knots,
                               profile_knots_suffice, tail_upper)

# scipy is imported on first use (amp.core.lazy): import amp stays fast
gammaln = lazy("scipy.special", "gammaln")

__all__ = ["Round", "ComposableProfile", "compose", "epsilon_rounds", "delta_rounds",
           "epsilon_sweep", "optimal_homogeneous_delta", "optimal_homogeneous_epsilon",
           "compose_pmf", "pmf_epsilon_upper",
           "check_rounds", "check_sampling", "TAIL_DELTA", "GRID_POINTS", "self_compose_pad",
           "difference_pmf"]

U = 2.0 ** -53
#: Per-round delta below which the rest of the curve goes to the mass at infinity.
TAIL_DELTA = 1e-25
#: Grid points of the connect-the-dots construction per round (on each side of eps = 0).
GRID_POINTS = 120
#: Relative width of the certified delta brackets at the grid points.
UPPER_REL_TOL = 2e-3
#: Width the structured path aims at there (as cheap; 2e-3 may stop ~1e-3 above the value).
UPPER_GOAL = 2e-5
#: Loss-grid cells per connect-the-dots interval (upper) and cells of the lower PLD's range.
UPPER_CELLS, LOWER_CELLS = 8, 20_000
#: Truncated tail mass of dp-accounting's self-composition.
TRUNCATION = 1e-15
MAX_ROUNDS = 10 ** 7


def _accounting():
    """dp_accounting's PLD pmf module (the ``rounds`` extra)."""
    return A.pmf_module()


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


def _as_round(r: object) -> Round:
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
                 lower_pair: tuple[int, int] | None = None):
        self.round = Round(mechanism, n, sampling)
        # a fixed population composes its common-blanket baseline here (its laws: one pair
        # law each, a valid profile); amp.epsilon(pop, ..., rounds=T) composes its sharper
        # Poisson-binomial points instead (amp.backends.poisson_binomial.population_rounds)
        rnd = self.round.randomizer
        laws = rnd.gparv_laws() if per_round_population(rnd) is not None else None
        self.profile = PrivacyProfile(rnd, self.round.n, laws=laws)
        self.lower_pair = lower_pair
        self._cut: float | None = None

    def _upper(self, eps: float) -> float:
        # certified upper end, max over the pair laws; width 2e-3 is enough for a grid point.
        # A matrix's pairs are pruned (amp.pairs.delta_max: its upper end dominates every
        # pair's exact value, refined or pruned)
        prof = self.profile
        if prof.pairs is not None:
            return min(1.0, delta_max(prof.pairs, prof.n, eps, rel_tol=UPPER_REL_TOL,
                                      method=prof.method, goal=UPPER_REL_TOL)[1])
        return min(1.0, max(c.delta(eps, rel_tol=UPPER_REL_TOL, goal=UPPER_GOAL).upper
                            for c in prof.curves))

    def _max_eps(self) -> float:
        """``eps`` from which the bound is 0 (the largest ``log max a/b`` over the laws)."""
        prof = self.profile
        if prof.pairs is not None:
            return float(prof.pairs.max_eps().max())
        return max(c.max_eps for c in prof.curves)

    def _tail_upper(self, eps: float) -> float:
        """Cheap certified upper end for locating the grid end
        (:func:`amp.rounds_points.tail_upper`: Chernoff), else :meth:`_upper`."""
        if self.estimate(np.zeros(1)) is None:
            return self._upper(eps)
        return tail_upper(self.profile.laws, self.round.n, eps)

    @property
    def eps_cut(self) -> float:
        """A grid end ``eps_m`` with certified ``delta_upper(eps_m) <= TAIL_DELTA`` (or the
        eps from which the bound is 0), located with :meth:`_tail_upper` (any ``eps_m`` is
        valid: the value certified there becomes the mass at infinity)."""
        if self._cut is None:
            hi = self._max_eps()
            if not math.isfinite(hi):
                hi = 1.0
                while self._tail_upper(hi) > TAIL_DELTA:
                    hi *= 2
                    if hi > 1e3:
                        raise NumericalError("the per-round profile does not reach "
                                             f"{TAIL_DELTA:g} below eps = 1000")
            lo = 0.0
            if self._tail_upper(0.0) > TAIL_DELTA:
                for _ in range(40):
                    if hi - lo <= 1e-3 * hi:
                        break
                    mid = 0.5 * (lo + hi)
                    if self._tail_upper(mid) <= TAIL_DELTA:
                        hi = mid
                    else:
                        lo = mid
            self._cut = max(hi, 1e-9)
        return self._cut

    def upper_points(self, step: float, points: int = GRID_POINTS,
                     knots: np.ndarray | None = None, *, fallback: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Grid indices ``k_i`` (``eps_i = k_i step``, symmetric about 0) and convex upper values
        ``>= H(eps_i)``; for ``eps < 0``, ``H(eps) <= 1 - e^eps + e^eps H(-eps)`` (the identity
        ``D_t(P||Q) = 1 - t + t D_{1/t}(Q||P)`` and ``(Q, P)`` is a neighbouring pair too).
        ``knots`` (non-negative indices; default the uniform ``points + 1`` up to ``eps_cut``)
        and ``fallback``: :func:`amp.rounds_points.certify` (any set is valid)."""
        return mirror(*certify(self, step, points, knots, fallback), step)

    def upper_pmf(self, step: float, points: int = GRID_POINTS, *, sparse: bool = False,
                  knots: np.ndarray | None = None):
        """Pessimistic connect-the-dots PLD (dp-accounting ``DensePLDPmf``) on ``step``.

        ``sparse``: the rounding margin of ``_repair`` counts the pmf's nonzero masses
        (zeros add no rounding to the curve's sums) instead of its length; a long pmf on a fine
        step then moves far less mass to infinity (:func:`amp.to_pld`). ``knots``: see
        :meth:`upper_points`."""
        pmf_mod = _accounting()
        ks, d = self.upper_points(step, points, knots)
        pmf = pmf_mod.create_pmf_pessimistic_connect_dots(step, ks, d).to_dense_pmf()
        return _repair(pmf, ks, d, step, sparse)

    def estimate(self, eps: np.ndarray) -> np.ndarray | None:
        """:func:`amp.rounds_points.profile_estimate` (``None`` with own certified values)."""
        if type(self)._upper is not ComposableProfile._upper:
            return None
        return profile_estimate(self.profile, self.round.n, eps)

    def knots(self, step: float, points: int, times: int, *, delta: float | None = None,
              eps: float | None = None) -> np.ndarray | None:
        """:func:`amp.rounds_points.profile_knots` (``None``: the uniform grid)."""
        return profile_knots(self, step, points, times, delta, eps)

    def _knots_suffice(self, step: float, points: int, ks: np.ndarray, u: np.ndarray) -> bool:
        """:func:`amp.rounds_points.profile_knots_suffice` (the a posteriori check)."""
        return profile_knots_suffice(self, step, points, ks, u)

    def lower_laws(self) -> list[GPARV]:
        """Theorem 5 laws of the round's randomizer (at most 8); with ``lower_pair`` set, the
        laws of that input pair (the first is the third input ``x2`` = the smallest other)."""
        if self.lower_pair is not None:
            return self.round.randomizer.lower_laws(self.lower_pair)[:8]
        return laws_for(self.round.randomizer, "lower", None, self.round.n)[:8]

    def lower_pmfs(self, step: float | None = None) -> list:
        """Optimistic PLDs of the explicit Theorem 5 pairs (one per law)."""
        return [_explicit_pair_pmf(law, self.round.n, step, self._losses(i, law))
                for i, law in enumerate(self.lower_laws())]

    def _losses(self, i: int, law: GPARV):
        """:func:`_explicit_pair_losses` of the ``i``-th lower law, computed once."""
        cache = self.__dict__.setdefault("_loss_cache", {})
        if i not in cache:
            cache[i] = _explicit_pair_losses(law, self.round.n)
        return cache[i]

    def lower_range(self) -> float:
        """Width of the lower pair's loss range (for the choice of a common step)."""
        return min(self._losses(i, law)[2] for i, law in enumerate(self.lower_laws()))


def _groups(law: GPARV) -> list[tuple[float, float, float]]:
    """Lump the Theorem 5 atoms by the sign of ``a - b``: ``(pi, alpha, beta)`` per group."""
    out = []
    for sel in (law.a > law.b, law.a < law.b, law.a == law.b):
        p = law.p[sel]
        if p.size and p.sum() > 0:
            pi = float(p.sum())
            out.append((pi, float(np.dot(law.a[sel], p)) / pi, float(np.dot(law.b[sel], p)) / pi))
    return out


def _explicit_pair_losses(law: GPARV, n: int):
    """Losses ``log X0/X1`` and masses ``P0`` of the lumped Theorem 5 pair on a window (above
    ``LOWER_POINTS``: of the pair reduced to ``D = h1 - h2``, losses and masses rounded down,
    :func:`_pair_is_reduced`; only an optimistic PLD may be built from those)."""
    g = _groups(law)
    if len(g) < 2:
        raise ParameterError("the Theorem 5 pair needs outputs that favour each input")
    pis = np.array([x[0] for x in g])
    pis = pis / pis.sum()
    al = np.array([x[1] for x in g])
    be = np.array([x[2] for x in g])
    w1, w2 = _window(n, pis[0]), _window(n, pis[1])     # (first, last): no array yet

    if len(g) == 3 and _size(w1) * _size(w2) > LOWER_POINTS:
        loss, mass, _ = difference_pair_losses([(pi, a, b) for pi, a, b in zip(pis, al, be)],
                                                n)
        # the grid step's range as the enumeration below would find it (window corners)
        return loss, mass, corner_width(n, al, be, np.array(w1), np.array(w2))
    # about twenty-five float64 arrays over the enumerated counts (checked before they exist)
    points = _size(w1) * (_size(w2) if len(g) == 3 else 1)
    memory.check(200.0 * points, f"the lower pair's enumeration over {points:,} counts "
                                 f"(n = {n})")
    h1 = np.arange(w1[0], w1[1] + 1)[:, None]
    h2 = np.arange(w2[0], w2[1] + 1)[None, :] if len(g) == 3 else (n - h1)
    h0 = n - h1 - h2
    ok = h0 >= 0
    h1, h2, h0 = np.broadcast_arrays(h1, h2, h0)
    h1, h2, h0 = h1[ok].astype(float), h2[ok].astype(float), h0[ok].astype(float)
    hs = [h1, h2, h0][:len(g)]
    logm = gammaln(n + 1.0) - sum(gammaln(h + 1.0) for h in hs) \
        + sum(h * math.log(pi) for h, pi in zip(hs, pis) if pi > 0)
    x0 = sum(a * h for a, h in zip(al, hs))
    x1 = sum(b * h for b, h in zip(be, hs))
    keep = (x0 > 0) & (x1 > 0)
    loss = np.log(x0[keep]) - np.log(x1[keep])
    mass = np.exp(logm[keep] + np.log(x0[keep] / n)) * (1 - 1e-9)
    sig = mass > 1e-300
    loss, mass = loss[sig], mass[sig]
    return loss, mass, float(loss.max() - loss.min()) if loss.size else 0.0


def _window(n: int, pi: float) -> tuple[int, int]:
    """First and last count of the window of ``Bin(n, pi)`` enumerated by
    :func:`_explicit_pair_losses` (12 standard deviations, plus one, each side)."""
    m, sd = n * pi, math.sqrt(n * pi * (1 - pi)) + 1
    return max(0, int(m - 12 * sd)), min(n, int(m + 12 * sd) + 2)


def _size(w: tuple[int, int]) -> int:
    return w[1] - w[0] + 1


def _pair_is_reduced(law: GPARV, n: int) -> bool:
    """Whether :func:`_explicit_pair_losses` reduces the pair to ``D = h1 - h2`` (then its
    losses and masses are lower bounds: good for the optimistic PLD only)."""
    g = _groups(law)
    if len(g) != 3:
        return False
    pis = np.array([x[0] for x in g])
    pis = pis / pis.sum()
    return _size(_window(n, pis[0])) * _size(_window(n, pis[1])) > LOWER_POINTS


def _explicit_pair_pmf(law: GPARV, n: int, step: float | None, losses=None):
    """Optimistic dense PLD of the lumped Theorem 5 pair (losses rounded down to ``step``);
    ``losses``: :func:`_explicit_pair_losses` of ``(law, n)`` if already computed."""
    loss, mass, width = losses if losses is not None else _explicit_pair_losses(law, n)
    step = step or max(width, 1e-6) / LOWER_CELLS
    idx = np.floor((loss - 1e-12 * (np.abs(loss) + 1)) / step).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=mass)
    return A.dense_pmf(step, lo, probs, 0.0, False)


# ---------------------------------------------------------------------------- lower pair, 1-D
#: Above this many lattice points in the 2-D window, the three-group lower pair is
#: post-processed to ``D = h1 - h2`` (:func:`amp.pld_lower.difference_pair_losses`).
LOWER_POINTS = 2_000_000
# ---------------------------------------------------------------------------- composition
def _self_compose(pmf, times: int):
    """``pmf`` composed ``times`` times and the pad of that step (the smaller of
    :func:`self_compose_pad` and :func:`fft_pad`; both are bounds)."""
    if times == 1:
        return pmf, 0.0
    probs = A.probs(pmf)
    size = len(probs) * times
    check_compose_memory(probs, times, TRUNCATION)
    out = pmf.self_compose(times, tail_mass_truncation=TRUNCATION)
    return out, min(fft_pad(size, times, float(np.linalg.norm(probs))),
                    self_compose_pad(probs, times))


def _compose_all(pmfs: list[tuple[object, int]]):
    """Compose ``[(pmf, times), ...]``; returns the pmf and the total floating-point pad."""
    acc, pad = None, 0.0
    for pmf, times in pmfs:
        p, e = _self_compose(pmf, times)
        pad += e
        if acc is None:
            acc = p
        else:
            pad += fft_pad(len(A.probs(acc)) + len(A.probs(p)), 1, 1.0)
            acc = acc.compose(p)
    return acc, pad


def _upper_pmf(rounds: list[Round], points: int, *, delta: float | None = None,
               eps: float | None = None):
    """The composed pessimistic PLD and its pad; one kind of round asked at ``delta`` (or
    ``eps``) is certified at :meth:`ComposableProfile.knots`, others at the uniform grid."""
    profs = [ComposableProfile(r.mechanism, r.n, r.sampling) for r in rounds]
    step = min(p.eps_cut for p in profs) / (UPPER_CELLS * points)
    knots = [None] * len(rounds)
    if len(rounds) == 1 and (delta is not None or eps is not None):
        knots[0] = profs[0].knots(step, points, rounds[0].times, delta=delta, eps=eps)
    acc, pad = _compose_all([(p.upper_pmf(step, points, knots=kn), r.times)
                             for p, r, kn in zip(profs, rounds, knots)])
    return acc, pad + TRUNCATION


def _lower_step(profs: list[ComposableProfile], total: int) -> float:
    """Loss step of the optimistic PLDs: ``1e-3 / T`` (rounding every loss down costs at most
    ``T step`` in eps), within ``[range / 200000, range / 20000]`` of the narrowest range."""
    width = min(p.lower_range() for p in profs)
    return max(min(width / LOWER_CELLS, 1e-3 / total), width / (10 * LOWER_CELLS), 1e-9)


def _lower_pmfs(rounds: list[Round]):
    """The optimistic composed PLD of one Theorem 5 dataset pair run in every round (the first
    law of each round; the same inputs in every round) and its pad."""
    # one dataset pair for all rounds: the inputs (x0, x1, x2) must be the same in every round;
    # heterogeneous rounds with an asymmetric mechanism use the inputs (0, 1, 2) throughout
    fixed = len(rounds) > 1 and not all(r.randomizer.symmetric for r in rounds)
    profs = [ComposableProfile(r.mechanism, r.n, r.sampling, (0, 1) if fixed else None)
             for r in rounds]
    total = sum(r.times for r in rounds)
    step = _lower_step(profs, total)
    per = [p.lower_pmfs(step) for p in profs]
    pmf, pad = _compose_all([(pm[0], r.times) for pm, r in zip(per, rounds)])
    return pmf, pad + 2 * TRUNCATION * len(rounds)


def _describe(rounds: list[Round]) -> str:
    return "; ".join(f"{r.times} x {r.randomizer.describe()} (n={r.n})" for r in rounds)


def compose(rounds: Iterable[object], *, delta: float | None = None, eps: float | None = None,
            points: int = GRID_POINTS) -> Bound:
    """Certified ``eps(delta)`` (give ``delta``) or ``delta(eps)`` (give ``eps``) after the
    given rounds, composed adaptively; heterogeneous rounds allowed.

    ``rounds``: :class:`Round` objects or tuples ``(mechanism, n[, sampling[, times]])``.
    Returns a :class:`~amp.core.result.Bound` whose bracket ``[lower, upper]`` encloses the true
    composed value of the shuffled mechanism: ``upper`` from the dominating connect-the-dots
    pairs, ``lower`` from one Theorem 5 dataset pair run in every round (module docstring;
    the same inputs in every round: for heterogeneous rounds of an asymmetric mechanism the
    inputs ``(0, 1, 2)``, so the mechanisms must index the same input domain).
    Raises :class:`~amp.core.errors.NumericalError` when the floating-point pad reaches the
    target ``delta``.
    """
    single = isinstance(rounds, Round) or (isinstance(rounds, tuple) and bool(rounds)
                                           and isinstance(rounds[0], Mechanism))
    if single or isinstance(rounds, (str, bytes)) or not hasattr(rounds, "__iter__"):
        raise ParameterError("rounds must be a list of amp.Round or of tuples "
                             f"(mechanism, n[, sampling[, times]]), got {V.show(rounds)[:60]}")
    rs = [_as_round(r) for r in rounds]
    if not rs:
        raise ParameterError("rounds must not be empty")
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    points = V.int_at_least("points", points, 8)
    d_ask = None if delta is None else V.probability_open("delta", delta)
    e_ask = None if eps is None else V.eps_value(eps)
    up, pad_up = _upper_pmf(rs, points, delta=d_ask, eps=e_ask)
    lo_pmf, pad_lo = _lower_pmfs(rs)
    total = sum(r.times for r in rs)
    desc = _describe(rs)
    n = rs[0].n if len({r.n for r in rs}) == 1 else None
    info = {"rounds": total, "sampling": rs[0].sampling if len({r.sampling for r in rs}) == 1
            else None, "pad_upper": pad_up, "pad_lower": pad_lo,
            "step_upper": A.step(up), "step_lower": A.step(lo_pmf)}
    if delta is not None:
        d = V.probability_open("delta", delta)
        if pad_up >= 0.5 * d:
            raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                                 f"{pad_up:.3g} of the composed PLD; ask for a larger delta")
        e_up = _eps_upper(up, d - pad_up, d)
        e_lo = _eps_lower(lo_pmf, d + pad_lo)
        e_lo = min(e_lo, e_up)
        return Bound("eps", e_lo, e_up, "upper", "pld:connect-dots", n, desc,
                     {"delta": d}, details=info)
    e = V.eps_value(eps)
    d_up = min(1.0, float(up.get_delta_for_epsilon(e)) * (1 + 8 * U * up.size) + pad_up)
    d_lo = max(0.0, float(lo_pmf.get_delta_for_epsilon(e)) * (1 - 8 * U * lo_pmf.size) - pad_lo)
    return Bound("delta", min(d_lo, d_up), d_up, "upper", "pld:connect-dots", n, desc,
                 {"eps": e}, details=info)


def epsilon_rounds(mechanism: Mechanism, n: int, delta: float, rounds: int, *,
                   sampling: float = 1.0, points: int = GRID_POINTS) -> Bound:
    """Certified ``eps(delta)`` after ``rounds`` adaptive rounds (:func:`compose`)."""
    return compose([Round(mechanism, n, sampling, check_rounds(rounds))], delta=delta,
                   points=points)


def delta_rounds(mechanism: Mechanism, n: int, eps: float, rounds: int, *,
                 sampling: float = 1.0, points: int = GRID_POINTS) -> Bound:
    """Certified ``delta(eps)`` after ``rounds`` adaptive rounds (:func:`compose`)."""
    return compose([Round(mechanism, n, sampling, check_rounds(rounds))], eps=eps,
                   points=points)


def epsilon_sweep(mechanism: Mechanism, n: int, delta: float, rounds: Sequence[int], *,
                  sampling: float = 1.0, points: int = GRID_POINTS) -> list[Bound]:
    """:func:`epsilon_rounds` for several numbers of rounds, building the per-round PLDs once
    (the lower PLD's step is chosen for the largest ``T``); same certificates (figures)."""
    d = V.probability_open("delta", delta)
    Ts = [check_rounds(T) for T in rounds]
    if not Ts:
        return []
    prof = ComposableProfile(mechanism, n, sampling)
    step = prof.eps_cut / (UPPER_CELLS * points)
    up1 = prof.upper_pmf(step, points)
    lo1 = prof.lower_pmfs(_lower_step([prof], max(Ts)))[0]
    out = []
    for T in Ts:
        up, pad_up = _self_compose(up1, T)
        lo, pad_lo = _self_compose(lo1, T)
        pad_up += TRUNCATION
        pad_lo += 2 * TRUNCATION
        if pad_up >= 0.5 * d:
            raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                                 f"{pad_up:.3g} of the composed PLD; ask for a larger delta")
        e_up = _eps_upper(up, d - pad_up, d)
        e_lo = min(_eps_lower(lo, d + pad_lo), e_up)
        out.append(Bound("eps", e_lo, e_up, "upper", "pld:connect-dots", prof.round.n,
                         _describe([Round(mechanism, n, sampling, T)]), {"delta": d},
                         details={"rounds": T, "sampling": prof.round.sampling,
                                  "pad_upper": pad_up, "pad_lower": pad_lo}))
    return out


# ---------------------------------------------------------------------------- baseline
def optimal_homogeneous_delta(eps: float, delta0: float, T: int, eps_total: float) -> float:
    """Exact ``delta`` of ``T`` adaptive ``(eps, delta0)``-DP rounds at ``eps_total`` (the optimal
    composition theorem, Kairouz, Oh and Viswanath 2015; Murtagh and Vadhan 2016): the
    ``T``-fold product of the randomized-response pair, ``1 - (1 - delta0)^T (1 - D)`` with
    ``D = sum_i Bin(T, i, e^eps/(1+e^eps)) (1 - e^(eps_total - (2i - T) eps))_+``."""
    i = np.arange(T + 1, dtype=float)
    logb = (gammaln(T + 1.0) - gammaln(i + 1) - gammaln(T - i + 1)
            + i * (eps - np.logaddexp(0, eps)) + (T - i) * (-np.logaddexp(0, eps)))
    loss = (2 * i - T) * eps
    on = loss > eps_total
    D = float(np.sum(np.exp(logb[on]) * -np.expm1(eps_total - loss[on])))
    return -math.expm1(T * math.log1p(-delta0)) + math.exp(T * math.log1p(-delta0)) * D


def optimal_homogeneous_epsilon(eps: float, delta0: float, T: int, delta: float) -> float:
    """Smallest ``eps_total`` (bisection, rounded up) with
    :func:`optimal_homogeneous_delta` ``<= delta``; ``inf`` when ``1 - (1-delta0)^T >= delta``."""
    if optimal_homogeneous_delta(eps, delta0, T, T * eps) > delta:
        return math.inf
    lo, hi = 0.0, T * eps
    if optimal_homogeneous_delta(eps, delta0, T, 0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if optimal_homogeneous_delta(eps, delta0, T, mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi


def compose_pmf(pmf, times: int):
    """``times``-fold composition of a one-round PLD pmf (dp-accounting's convolution), with
    the bound on its floating-point and truncation error: ``(pmf, pad)``; every delta read off
    the result must be raised by ``pad`` (used by baselines composed the same way)."""
    out, pad = _self_compose(pmf, check_rounds(times))
    return out, pad + TRUNCATION


def pmf_epsilon_upper(pmf, delta: float, pad: float) -> float:
    """Certified upper eps of a pessimistic composed pmf at ``delta`` (its error ``pad``
    accounted for; :class:`NumericalError` when ``delta`` is within it)."""
    d = V.probability_open("delta", delta)
    if pad >= 0.5 * d:
        raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                             f"{pad:.3g} of the composed PLD; ask for a larger delta")
    return _eps_upper(pmf, d - pad, d)
