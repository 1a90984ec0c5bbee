"""The one dispatcher: certified ``delta(eps) = E[(G_1 + ... + G_n)_+] / n`` for one law.

:class:`LawDelta` holds one GPARV law (Theorem 4's blanket law of a pair, or Theorem 5's
variable) and ``n``. For each ``eps`` it computes the float atoms, their rounding noise and the
atoms' floating-point floor once, settles the question with a shortcut when it can, and
otherwise picks one backend:

``zero``
    ``G <= 0`` surely (``eps >= log max a/b``): ``delta = 0`` exactly; or every positive atom is
    rounding noise around 0, and ``delta <= sum p noise``.
``first-moment`` (auto)
    ``(sum G_i)_+ <= sum (G_i)_+`` gives ``delta <= E[G_+]``; used when already ``<= abs_tol``.
``chernoff`` (auto)
    ``x_+ <= e^(theta x - 1) / theta`` gives ``delta <= M(theta)^n / (e theta n)``
    (:func:`amp.core.tails.chernoff_upper`); used when ``<= abs_tol``.
``structured``
    Laws with the Table 1 shape: exact count sums with proven tail bounds
    (:mod:`amp.backends.structured`); its eps-free tables are built once per :class:`LawDelta` and
    reused for every ``eps``.
``exact``
    Multinomial enumeration (:mod:`amp.backends.exact`) when it is small (or as the fallback when
    the FFT cannot certify).
``exact-blanket-count``
    Conditioning on the number of blanket users (:mod:`amp.backends.blanket_count`) when
    ``n * gamma`` is small (extreme ``eps0``).
``cf``
    The smoothed characteristic-function inversion (:mod:`amp.backends.cfinv`): any law, a
    cost that does not grow with ``n``; used by ``auto`` before the FFT (Theorem 5's
    seven-type law of the bit mechanisms, matrix pair laws) for ``n >= CF_MIN_N`` and,
    below, when its expected cost (:func:`~amp.backends.cfinv.cf_cost`, times
    ``CF_COST_RATIO`` for its dearer terms) is below the FFT's
    (:func:`~amp.backends.fft.fft_cost`); both are certified, so the choice changes speed
    and width, never validity.
``fft``
    The certified tilted-lattice FFT (:mod:`amp.backends.fft`), any law and any ``n``.
``...-light-atoms`` (fallback when the FFT cannot certify)
    Atoms so negative that one of them makes ``S <= 0`` are dropped exactly:
    ``E[S_+] = P(light)^n E[S'_+]`` (``LawDelta._without_heavy``).

The enumeration backends and the cf inversion evaluate the float atoms exactly; their brackets
are widened here by the atoms' distance to the exact ones (:func:`amp.core.floats.widen`). The
FFT carries that distance in its rounding slack and the structured path in its own accounting,
so every returned bracket is certified for the exact law. ``details["floor"]`` records the
absolute width that this widening alone adds (no computation can make a bracket narrower).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Iterable

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import TINY, U, atom_floor, widen
from amp.core.result import Bound
from amp.core.saddle import saddle_log_delta
from amp.core.tails import chernoff_upper
from amp.backends.blanket_count import blanket_count_delta
from amp.backends.cfinv import DEFAULT_MAX_TERMS, cf_cost, cf_delta
from amp.backends.exact import delta_enumerate, n_compositions
from amp.backends.fft import DEFAULT_MAX_POINTS, fft_cost, fft_delta
from amp.backends.structured import StructuredBackend, supports
from amp.mechanisms.gparv import GPARV

__all__ = ["LawDelta", "delta_bracket", "METHODS", "DEFAULT_REL_TOL", "DEFAULT_ABS_TOL",
           "DEFAULT_MAX_POINTS"]

DEFAULT_REL_TOL = 2e-3               # relative width of a certified delta bracket
DEFAULT_ABS_TOL = 1e-16              # brackets with upper - lower below this are accepted
EXACT_MAX_COMPOSITIONS = 20_000      # enumeration is used below this many count vectors
EXACT_FALLBACK_COMPOSITIONS = 2_000_000  # ... and as a fallback when the FFT cannot certify
STRUCTURED_MIN_REL_TOL = 2e-3        # the structured path aims at `goal`, refuses above this
CF_MIN_N = 100_001                   # auto: the cf inversion above this n (before the FFT)
CF_COST_RATIO = 3.0                  # auto, below CF_MIN_N: cf first when 3 cf_cost <= fft_cost
CF_AUTO_MAX_TERMS = 1 << 21          # auto: cf gives way to the FFT beyond this many frequencies
QUICK_MIN_N = 10**10                 # above: eps searches of structured laws ask cf first
METHODS = ("auto", "structured", "cf", "fft", "exact")


class LawDelta:
    """Certified ``delta(eps)`` of one law for ``n`` users; build once, evaluate at many ``eps``.

    Parameters
    ----------
    law : GPARV
        Law of the GPARV (Theorem 4) or of Theorem 5's variable.
    n : int
        Number of users, ``>= 1``.
    method : {"auto", "structured", "cf", "fft", "exact"}
        ``auto`` (default) uses the shortcuts, then the structured path for laws with the
        Table 1 shape, enumeration when small, the blanket-count path at extreme ``eps0``,
        the characteristic-function inversion for ``n >= CF_MIN_N`` or when it is expected
        to be cheaper than the FFT, otherwise (or when that refuses) the FFT; the result's
        ``method`` says which ran. Forcing ``structured`` on a
        law without that shape raises :class:`ParameterError`.
    max_points : int
        Largest FFT length before :class:`NumericalError` is raised.
    """

    #: ``delta(eps) = E[(sum_i a_i - e^eps b_i)_+] / n`` is convex in ``w = e^eps`` (an
    #: expectation of convex functions of ``w``): the eps search may bound it by chords and
    #: secants of certified points (:mod:`amp.inversion_chord`)
    convex_in_w = True

    def __init__(self, law: GPARV, n: int, method: str = "auto",
                 max_points: int = DEFAULT_MAX_POINTS):
        if not isinstance(law, GPARV):
            raise ParameterError(f"law must be a GPARV (e.g. mechanism.gparv()), got "
                                 f"{type(law).__name__}")
        self.law = law
        self.n = V.users(n)
        self.method = V.choice("method", method, METHODS, f"one of {', '.join(METHODS)}")
        self.max_points = V.int_at_least("max_points", max_points, 16)
        self._structured: StructuredBackend | None = None
        if method in ("auto", "structured") and self.n > 1:
            if supports(law):
                self._structured = StructuredBackend(law, self.n)
            elif method == "structured":
                raise ParameterError(
                    "method='structured' needs a law whose blanket atoms are (1,1), (E,1), "
                    "(1,E), (E,E) for one E (Table 1 mechanisms and their finite forms); this "
                    "law is not")

    # ------------------------------------------------------------------ properties
    @property
    def max_eps(self) -> float:
        """Smallest ``eps`` from which ``delta = 0`` exactly (``log max a/b``; ``inf`` if none)."""
        return self.law.max_eps()

    @property
    def structured(self) -> bool:
        """True when the structured exact path serves this law."""
        return self._structured is not None

    # ------------------------------------------------------------------ evaluation
    def delta(self, eps: float, *, rel_tol: float = DEFAULT_REL_TOL, goal: float | None = None,
              abs_tol: float = DEFAULT_ABS_TOL) -> Bound:
        """Certified ``[lower, upper]`` of ``delta(eps)``.

        ``rel_tol``: largest relative width accepted (else :class:`NumericalError`), unless
        ``upper - lower <= abs_tol`` (deltas far below any practical target) or the width is
        the atoms' floating-point floor. ``goal``: the width aimed at by the structured path
        (default ``min(rel_tol, 1e-6)``; other backends stop as soon as ``rel_tol`` is met).
        """
        eps = V.positive_float("eps", eps, allow_zero=True)
        rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
        abs_tol = V.positive_float("abs_tol", abs_tol, allow_zero=True)
        return self._delta(eps, rel_tol, goal, abs_tol)

    def delta_for_search(self, eps: float, tol: float, abs_tol: float) -> Bound:
        """A bracket aimed at relative width ``tol``, for the eps search (:mod:`amp.inversion`):
        the structured path aims at ``tol`` and accepts up to ``max(tol, 2e-3)``; the others
        are asked for ``tol`` itself."""
        if self._structured is not None:
            return self._delta(eps, max(tol, STRUCTURED_MIN_REL_TOL), tol, abs_tol)
        return self._delta(eps, tol, None, abs_tol)

    def quick_curve(self) -> "LawDelta | None":
        """The same law on the cf inversion (:mod:`amp.backends.cfinv`), for a structured law
        at ``n > QUICK_MIN_N`` under ``auto``, else ``None``: there one structured evaluation
        costs seconds and most of a gigabyte (its windows grow like ``sqrt(n)``) while a cf
        bracket, certified too but only to ``~1e-2`` relative, costs milliseconds. The eps
        search (:func:`amp.inversion.epsilon_of_curve`) settles ``eps = 0`` with it, or
        narrows its interval, before any structured evaluation. Speed only: both are
        certified brackets of the same ``delta(eps)``."""
        if self._structured is None or self.method != "auto" or self.n <= QUICK_MIN_N:
            return None
        quick = self.__dict__.get("_quick")
        if quick is None:
            quick = self._quick = LawDelta(self.law, self.n, "cf", self.max_points)
        return quick

    @property
    def precise_brackets(self) -> bool:
        """True when every bracket is narrow at no extra cost (the structured path, ~1e-8
        relative): the eps search then steers by :meth:`estimate_log_delta` corrected by the
        measured points (the guided steps of :mod:`amp.inversion_guided`), never certifying by it."""
        return self._structured is not None

    def search_tol(self, rel_tol: float) -> float | None:
        """The delta width an eps search at ``rel_tol`` should ask for when narrow brackets
        are cheap here (structured path: ``10 rel_tol`` within ``[1e-6, 2e-3]``, which locates
        the crossing to ``~ 10 rel_tol / slope``, inside the eps bracket for the slopes of
        ``delta(eps)``; the search narrows it where needed); ``None`` when they are not (FFT),
        so the search widens them while it locates the crossing."""
        if self._structured is not None:
            return min(STRUCTURED_MIN_REL_TOL, max(1e-6, 10 * rel_tol))
        return None

    def estimate_log_delta(self, eps: float) -> float:
        """Uncertified saddle-point (Bahadur-Rao) estimate of ``log delta(eps)``; a starting
        point for searches, never a bound (``-inf`` when ``delta(eps) = 0``)."""
        if self._structured is not None:
            return self._structured.estimate_log_delta(eps)
        g, p = self.law.atoms(eps)
        keep = p > 0
        g, p = g[keep], p[keep]
        if g.max() <= 0:
            return -math.inf
        if float(np.dot(g, p)) >= -1e-9 * float(np.dot(p, np.abs(g))):
            sd = math.sqrt(float(np.dot(p, g * g)))
            return math.log(sd / math.sqrt(2 * math.pi * self.n))
        return saddle_log_delta(g, p, self.n)

    def _delta(self, eps: float, rel_tol: float, goal: float | None, abs_tol: float) -> Bound:
        law, n, method = self.law, self.n, self.method
        g, p = law.atoms(eps)
        # per-atom magnitude |a| + e^eps |b|: g = a - e^eps b carries an absolute error
        # <= ~4 u * magnitude (inputs a, b within 2 u relative of the exact ratios)
        mag = law.magnitudes(eps)
        noise = 16 * U * mag
        if np.all(g + noise <= 0):
            return self._bound(eps, 0.0, 0.0, "zero", 0.0)
        # the exact atoms are within `noise` of g: paths that evaluate the float atoms exactly
        # are widened by `widen` (a relative 32u on the atoms, absolute noise where they cancel)
        # (and the Chernoff-tilted bound of amp.core.floats.tilted_floor, whichever is less);
        # computed only where a bracket uses it: the structured path below certifies the exact
        # atoms itself and never reads it (it costs about a millisecond per call)
        floor_of = partial(atom_floor, g, p, noise, n)
        if np.all(g <= noise):
            # every positive atom is floating-point noise around 0 (eps = log max a/b): the
            # exact atoms are <= noise, so E[S_+]/n <= E[G_+] <= sum p noise over atoms near 0
            return self._bound(eps, 0.0, float(np.dot(p, noise * (g > -noise))), "zero",
                               floor_of().width)
        # (sum G_i)_+ <= sum (G_i)_+, so delta <= E[G_+]: a certified bound that needs no FFT
        ch = math.inf
        if method == "auto":
            first_moment = math.fsum(p * np.maximum(g + noise, 0.0)) * (1 + 1e-12)
            if first_moment <= abs_tol:
                return self._bound(eps, 0.0, first_moment, "first-moment", floor_of().width)
            if n > 1 and abs_tol > 0:
                ch = chernoff_upper(g, p, n, noise)
                if ch <= abs_tol:
                    return self._bound(eps, 0.0, ch, "chernoff", floor_of().width)
        struct_err = None
        if self._structured is not None:
            try:
                # the structured path certifies the exact atoms itself (its own floor); the
                # Chernoff bound, when computed, is another certified upper end: keep the less
                r = self._structured.delta(eps, rel_tol=rel_tol, goal=goal, abs_tol=abs_tol,
                                           chernoff=method != "auto")
                return replace(r, upper=max(ch, r.lower)) if ch < r.upper else r
            except (NumericalError, ArithmeticError, ValueError, MemoryError) as exc:
                if method == "structured":
                    raise
                # auto: fall through to the generic certified paths below (a memory refusal is
                # the reason quoted if they fail too)
                struct_err = exc if "of memory" in str(exc) else None
        floor = floor_of()
        floor_width = floor.width
        k = int(np.count_nonzero(p > 0))
        if method == "exact" or (method == "auto" and (
                n == 1 or n_compositions(n, k) <= EXACT_MAX_COMPOSITIONS)):
            return self._exact(eps, g, p, floor, floor_width)
        if method == "auto":
            small = blanket_count_delta(law, n, eps)
            if small is not None:
                lo, up = widen(small.lower, small.upper, floor)
                return replace(small, lower=lo, upper=up, details={"floor": floor_width})
        if method == "cf" or (method == "auto" and (
                n >= CF_MIN_N or CF_COST_RATIO * cf_cost(g, p, n, rel_tol)
                <= fft_cost(g, p, n, rel_tol))):
            try:
                r = cf_delta(g, p, n, eps, rel_tol, law.label, abs_tol,
                             CF_AUTO_MAX_TERMS if method == "auto" else DEFAULT_MAX_TERMS)
                lo, up = widen(r.lower, r.upper, floor)
                return replace(r, lower=lo, upper=up,
                               details={**r.details, "floor": floor_width})
            except (NumericalError, ArithmeticError, ValueError):
                if method == "cf":
                    raise
                # auto: the lattice FFT below
        try:
            r = fft_delta(g, p, n, eps, rel_tol, self.max_points, law.label, abs_tol, mag)
        except NumericalError as exc:
            if method == "auto" and n_compositions(n, k) <= EXACT_FALLBACK_COMPOSITIONS:
                return self._exact(eps, g, p, floor, floor_width)
            if method == "auto":
                red = self._without_heavy(eps, g, p, noise, rel_tol, goal, abs_tol)
                if red is not None:
                    return replace(red, details={**red.details, "floor": floor_width})
            if struct_err is not None and "of memory" not in str(exc):
                raise NumericalError(f"delta at eps={eps:g}: {struct_err}") from exc
            raise
        # the FFT's mean-preserving rounding already carries the atoms' noise as slack
        # (amp.backends.fft, step 1), so its bracket is certified for the exact atoms as it is
        return replace(r, details={**r.details, "floor": floor_width})

    def _without_heavy(self, eps: float, g: np.ndarray, p: np.ndarray, noise: np.ndarray,
                       rel_tol: float, goal: float | None, abs_tol: float) -> Bound | None:
        """Exact reduction when some atoms are *heavy* (the FFT's fallback, e.g. ``eps`` a
        hair below ``log max a/b`` with a large ``eps0``: atoms ``~ -e^(2 eps0)`` beside
        positive atoms ``~ e^eps0 - e^eps``, too skewed for a lattice).

        An atom ``h`` is heavy when ``h + (n - 1) max(g) <= 0`` for the exact atoms (float
        atoms plus their noise): any configuration with a heavy user has ``S <= 0``. So
        ``E[S_+] = P(light)^n E[S'_+]`` exactly, ``S'`` a sum of ``n`` users of the light law
        (the light atoms, probabilities divided by ``P(light)``), itself certified by a
        :class:`LawDelta` (its enumeration is often small). ``P(light)^n`` and the renormalised
        probabilities carry a relative ``1 +- (64 n u + 1e-12)``. ``None`` when no atom is
        heavy or the light law cannot be certified either."""
        n = self.n
        gmax = float(np.max(g + noise))
        if gmax <= 0 or n < 2:
            return None
        heavy = g + noise + (n - 1) * gmax <= 0
        if not np.any(heavy) or np.all(heavy):
            return None
        law = self.law
        off = law.off_mass > 0                  # atoms() appends the off-blanket atom 0
        on = heavy[:-1] if off else heavy
        p_heavy = math.fsum(p[heavy])
        if p_heavy >= 1.0:
            return None
        p_light = 1.0 - p_heavy
        key = (eps, tuple(np.flatnonzero(heavy)))
        cache = self.__dict__.setdefault("_light", {})
        sub = cache.get(key)
        if sub is None:
            sub_law = GPARV(law.a[~on], law.b[~on], law.p[~on] / p_light, law.eps0,
                            f"{law.label} (light atoms)")
            sub = LawDelta(sub_law, n, "auto", self.max_points)
            cache.clear()
            cache[key] = sub
        log_f = n * math.log1p(-p_heavy)
        kappa = 64 * n * U + 1e-12
        if log_f < -700:
            return self._bound(eps, 0.0, TINY, "exact-light-atoms", 0.0)
        f = math.exp(log_f)
        try:
            r = sub._delta(eps, rel_tol, goal, abs_tol / f)
        except (NumericalError, ParameterError):
            return None
        lo = r.lower * f * (1 - kappa)
        up = max(r.upper * f * (1 + kappa), TINY) if r.upper > 0 else 0.0
        return Bound("delta", lo, up, "upper", f"{r.method}-light-atoms", n, law.label,
                     {"eps": eps}, details={"heavy_mass": p_heavy, "light_method": r.method})

    def _exact(self, eps, g, p, floor, floor_width) -> Bound:
        if self.n == 1:
            v = math.fsum(p * np.maximum(g, 0.0))
        else:
            v = delta_enumerate(self.law, self.n, eps)
        # enumeration sums positive terms with log-space weights: relative error << 1e-10
        lo, up = widen(v * (1 - 1e-10), v * (1 + 1e-10), floor)
        return self._bound(eps, lo, max(up, TINY), "exact", floor_width)

    def _bound(self, eps: float, lower: float, upper: float, method: str,
               floor_width: float) -> Bound:
        return Bound("delta", lower, upper, "upper", method, self.n, self.law.label,
                     {"eps": eps}, details={"floor": floor_width})


def delta_bracket(law: GPARV, n: int, eps: float | Iterable[float], *,
                  rel_tol: float = DEFAULT_REL_TOL, method: str = "auto",
                  max_points: int = DEFAULT_MAX_POINTS,
                  abs_tol: float = DEFAULT_ABS_TOL) -> Bound | list[Bound]:
    """Certified ``[lower, upper]`` of ``E[(G_1 + ... + G_n)_+] / n`` for ``law`` at ``eps``
    (Theorem 4 for a blanket law, Theorem 5 for a lower law): :meth:`LawDelta.delta`.

    A scalar ``eps`` gives one :class:`~amp.core.result.Bound`; an iterable gives a list (the
    law's tables are built once and reused).
    """
    ev = LawDelta(law, n, method, max_points)
    if np.ndim(eps) == 0:
        return ev.delta(eps, rel_tol=rel_tol, abs_tol=abs_tol)
    return [ev.delta(e, rel_tol=rel_tol, abs_tol=abs_tol) for e in _eps_list(eps)]


def _eps_list(eps: Iterable[float]) -> list[float]:
    try:
        return [float(e) for e in np.asarray(list(eps), dtype=float).ravel()]
    except (TypeError, ValueError):
        raise ParameterError(f"eps must be a number or a sequence of numbers, got {show(eps)}") \
            from None
