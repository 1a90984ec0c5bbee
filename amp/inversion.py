"""The one certified inversion: the threshold where a certified, monotone curve crosses a target.

Every "eps for a delta" question of :mod:`amp` is answered here, once: the blanket bound's
``eps(delta)`` (Theorem 4), Theorem 5's lower ``eps(delta)``, the baselines' ``eps(delta)``
(:mod:`amp.baselines`) and, in the other direction, the largest local ``eps0`` whose guarantee
meets a target (``calibrate_eps0`` in :mod:`amp.api`).

The curve is any object with the :class:`Curve` protocol: ``delta_for_search(x, tol, abs_tol)``
returns a certified bracket of ``F(x)`` (a :class:`~amp.core.result.Bound`), and the optional
``estimate_log_delta(x)`` gives an uncertified estimate of ``log F(x)`` to start from.
:class:`amp.backends.dispatch.LawDelta` is one (its structured tables are built once and reused by
every evaluation of the search); :class:`FunctionCurve` wraps a plain function.

What is certified. For a curve that is non-increasing in ``x`` (``delta(eps)``), the search
returns ``[lo, hi]`` with ``F_upper(hi) <= target`` (so ``hi`` is a valid ``eps``) and either
``lo = 0`` or ``F_lower(lo) > target`` (so the exact threshold ``eps(target) > lo``). For a
non-decreasing curve (``delta`` as a function of ``eps0``) the roles swap: ``F_upper(lo) <=
target`` (``lo`` is safe) and ``F_lower(hi) > target``. The search never returns a bracket wider
than ``rel_tol`` (relative to its larger end): when the delta brackets cannot resolve the target
(it sits inside the floating-point floor of the computation) it raises
:class:`~amp.core.errors.NumericalError` saying so, with the floor's value. (Speed only: curves
with ``precise_brackets`` are searched by the guided steps of :mod:`amp.inversion_guided`.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.core.roots import bisect
from amp.inversion_chord import chord_search
from amp.inversion_guided import bisect_root, guided as guided_steps, surely_bad

__all__ = ["Curve", "FunctionCurve", "Crossing", "crossing", "epsilon_of_curve", "estimate_epsilon",
           "DEFAULT_EPS_REL_TOL", "Progress", "as_progress", "WiderThanAsked"]

#: Default relative width of a certified eps bracket (API and CLI).
DEFAULT_EPS_REL_TOL = 1e-4
#: Loosest and tightest relative width asked of a delta bracket during a search.
TOL_LOOSE, TOL_MIN = 2e-3, 1e-9

Progress = Callable[[str], None]


def as_progress(progress: object) -> Progress | None:
    """The front door's ``progress`` argument as a callable (or ``None``): a callable is used
    as is (called with one-line messages), ``True`` prints each line to stderr prefixed
    ``amp:``, ``None`` / ``False`` report nothing; anything else is a ParameterError."""
    if progress is None or progress is False:
        return None
    if progress is True:
        import sys

        def to_stderr(msg: str) -> None:
            print(f"amp: {msg}", file=sys.stderr, flush=True)
        return to_stderr
    if callable(progress):
        return progress  # type: ignore[return-value]
    raise ParameterError("progress must be a callable taking one message, True (lines on "
                         f"stderr) or None, got {type(progress).__name__}")


class WiderThanAsked(NumericalError):
    """The search stopped short of ``rel_tol`` (floating-point floor, undecided points, too
    many evaluations) while holding the certified bracket ``[lo, hi]`` of the threshold
    (the same guarantee as a full answer, only wider): a :class:`NumericalError` for callers
    that demand the accuracy, a flagged answer for :func:`epsilon_of_curve` with
    ``strict=False``."""

    def __init__(self, message: str, lo: float, hi: float, methods: tuple = ()):
        super().__init__(message)
        self.lo, self.hi = float(lo), float(hi)
        self.methods = tuple(methods)


class Curve(Protocol):
    """What the search needs of a certified curve ``x -> F(x)``.

    Optional: ``estimate_log_delta(x)``, an uncertified estimate of ``log F(x)`` (``-inf`` for
    0) used only for the starting point, and ``search_tol(rel_tol)``, the delta width to ask
    for when narrow brackets are cheap (:class:`amp.backends.dispatch.LawDelta` has both)."""

    def delta_for_search(self, x: float, tol: float, abs_tol: float) -> Bound:
        """Certified bracket of ``F(x)``, aimed at relative width ``tol``."""


@dataclass
class FunctionCurve:
    """A :class:`Curve` from ``fn(x) -> (lower, upper)`` (a baseline's bracket at ``x``).

    ``tol`` is ignored (the function has its own accuracy); with no estimate of ``log F`` the
    search starts in the middle and steers by the secant of the measured brackets."""

    fn: Callable[[float], tuple[float, float]]
    method: str = ""

    def delta_for_search(self, x: float, tol: float, abs_tol: float) -> Bound:
        lo, up = self.fn(x)
        lo, up = float(lo), float(up)
        return Bound("delta", min(lo, up), up, "upper", self.method, inputs={"eps": x})


@dataclass(frozen=True)
class Crossing:
    """Result of :func:`crossing`: the certified bracket ``[lo, hi]`` of the threshold."""

    lo: float
    hi: float
    evaluations: int
    methods: tuple[str, ...]
    history: tuple = field(default=(), repr=False)


def crossing(curve: Curve, target: float, lo: float, hi: float, *, decreasing: bool = True,
             rel_tol: float = DEFAULT_EPS_REL_TOL, good_end_known: bool = True,
             bad_end_known: bool = False, start: float | None = None, abs_tol: float | None = None,
             max_evaluations: int = 80, progress: Progress | None = None,
             name: str = "x", polish: str = "good", seed: tuple = ()) -> Crossing:
    """Certified bracket of the threshold where a monotone certified curve crosses ``target``.

    Parameters
    ----------
    curve : Curve
        Certified brackets of ``F(x)``.
    target : float
        The level (a target ``delta``), ``> 0``.
    lo, hi : float
        The search interval, ``0 <= lo < hi``. With ``decreasing=True`` the good end (where
        ``F <= target``) is ``hi``; otherwise it is ``lo``.
    decreasing : bool
        ``F`` non-increasing (``delta`` in ``eps``) or non-decreasing (``delta`` in ``eps0``).
    good_end_known : bool
        The good end is known to satisfy ``F <= target`` without an evaluation (``delta = 0``
        from ``hi = log max a/b`` on); otherwise it is evaluated and, if it fails,
        :class:`NumericalError` is raised.
    bad_end_known : bool
        The bad end is known to have ``F_lower > target`` (not evaluated again).
    start : float, optional
        A first point to evaluate (else from ``curve.estimate_log_delta``, else the middle).
    rel_tol : float
        Stop when ``|good - bad| <= rel_tol * max(good, bad)``.
    name : str
        What ``x`` is (``"eps"``, ``"eps0"``), for progress lines and messages.
    polish : {"good", "bad"}
        The end that is the answer, moved closer to the threshold once the bracket meets
        ``rel_tol`` (the good end for an upper bound, the bad end for a lower bound).
    seed : sequence of (x, log F(x)), optional
        Measurements of the same curve made elsewhere (e.g. by a cheaper, wider curve) that
        steer the first steps as if the search had made them; they certify nothing (the ends
        move only on this search's own evaluations).

    Returns
    -------
    Crossing
        ``decreasing``: ``F_upper(hi) <= target`` and (``lo`` = the interval's start or
        ``F_lower(lo) > target``). Otherwise ``F_upper(lo) <= target`` and (``hi`` = the
        interval's end or ``F_lower(hi) > target``).
    """
    if not (0 <= lo < hi) or not math.isfinite(hi):
        raise ParameterError(f"search interval must satisfy 0 <= lo < hi < inf, got [{lo}, {hi}]")
    if not target > 0:
        raise ParameterError(f"target must be > 0, got {target}")
    rel_tol = float(rel_tol)
    abs_tol = min(1e-16, 1e-3 * target) if abs_tol is None else abs_tol
    s = _Search(curve, target, decreasing, rel_tol, abs_tol, max_evaluations, progress, name)
    s.pts.extend((float(x), float(y)) for x, y in seed)
    good, bad = (hi, lo) if decreasing else (lo, hi)
    if not good_end_known:
        r = s.eval(good, TOL_LOOSE)
        if r.upper > target:
            raise NumericalError(f"the curve does not reach the target {target:g} at the end "
                                 f"of the search interval (x = {good:.6g}: bracket "
                                 f"[{r.lower:.4g}, {r.upper:.4g}])")
    # precise curves: guided steps, the bad end checked only if they need it (below)
    guided = (start is None and s.cheap and getattr(curve, "precise_brackets", False)
              and callable(getattr(curve, "estimate_log_delta", None)))
    # the bad end: if it is already good, the threshold is the interval's end itself
    if not bad_end_known and not (guided and surely_bad(s, bad)):
        r = s.eval(bad, 0.05)       # deciding "already met at the end?" needs no accuracy
        if r.upper <= target:
            return s.result(bad, bad)
        bad_end_known = True
    s.good, s.bad = good, bad
    x = guided_steps(s, polish) if guided else start
    if guided and not s.closed() and not bad_end_known and s.bad == bad:
        if s.eval(bad, 0.05).upper <= target:   # no bad point found: the check after all
            return s.result(bad, bad)
    if x is None:   # the plain search's first point, or its next one after guided steps
        x = s.aim(s._secant()) if guided and s.sides else s.start_point()
    while not s.closed():
        x = s.clamp(x)
        try:
            root = s.step(x)
        except NumericalError as exc:
            x = s.unresolved(x, exc)    # this point cannot be certified: look elsewhere
            continue
        if s.closed():
            break
        on_root = s.last_ambiguous and not s.last_loose
        if on_root or (root is not None and abs(root - x) <= 0.1 * rel_tol * abs(root)):
            # converged (or sitting on the root): certify both sides of it
            c = x if on_root or root is None else root
            undecided = s.ambiguous
            for y in (c * (1 + rel_tol / 3), c * (1 - rel_tol / 3)):
                if s.inside(y) and not s.closed():
                    try:
                        s.step(y)
                    except NumericalError as exc:
                        s.unresolved(y, exc)
            if not s.closed() and (on_root or s.ambiguous > undecided):
                s.tighten()         # a side stayed undecided: narrower delta brackets needed
            x = c
            continue
        x = s.aim(root)
    s.polish(polish)
    lo_, hi_ = (s.bad, s.good) if decreasing else (s.good, s.bad)
    return s.result(lo_, hi_)


class _Search:
    """State of one :func:`crossing` run (good and bad ends, tolerance, history)."""

    def __init__(self, curve, target, decreasing, rel_tol, abs_tol, max_evaluations, progress,
                 name="x"):
        self.curve, self.target, self.decreasing, self.name = curve, target, decreasing, name
        self.rel_tol, self.abs_tol = rel_tol, abs_tol
        self.max_evaluations, self.progress = max_evaluations, progress
        # how narrow the delta brackets are asked to be: a curve for which narrow brackets
        # are cheap (structured, exact) says so; otherwise (FFT) loose brackets first, then
        # narrow enough to resolve rel_tol at the observed slope |d log F / d log x|
        pref = getattr(curve, "search_tol", None)
        self.cheap = callable(pref) and pref(rel_tol) is not None
        self.tol = pref(rel_tol) if self.cheap else self._slope_tol(5.0)
        self.good = self.bad = math.nan
        self.hist: list[tuple[float, float, float]] = []
        self.pts: list[tuple[float, float]] = []           # (x, log of the bracket's centre)
        self.methods: set[str] = set()
        self.ambiguous = 0                  # evaluations whose bracket contained the target
        self.floor_hits = 0                 # ... of them at the floating-point floor
        self.floor = 0.0
        self.floor_x: float | None = None
        self.last_ambiguous = False
        self.last_loose = False             # the last step used a deliberately loose bracket
        self.widths: list[float] = []       # bracket width before each evaluation
        self.failed: list[float] = []       # points the curve could not certify at all
        self.sides: list[int] = []          # +1 good, -1 bad, 0 undecided, per step
        self.t0 = time.perf_counter()

    # -- bookkeeping -------------------------------------------------------------------
    def eval(self, x: float, tol: float) -> Bound:
        if len(self.hist) >= self.max_evaluations:
            a, b = min(self.good, self.bad), max(self.good, self.bad)
            raise WiderThanAsked(
                f"the search did not converge in {self.max_evaluations} evaluations; certified "
                f"bracket so far [{a:.6g}, {b:.6g}]", a, b, tuple(self.methods))
        while True:
            try:
                r = self.curve.delta_for_search(x, tol, self.abs_tol)
                break
            except NumericalError:
                if tol >= 0.05:
                    raise
                tol = min(0.05, tol * 10)        # a looser bracket may still decide
        self.hist.append((x, r.lower, r.upper))
        self.methods.add(r.method)
        if r.upper > 0:     # log of the bracket's centre (no underflow of lower * upper)
            c = 0.5 * (math.log(r.lower) + math.log(r.upper)) if r.lower > 0 else \
                math.log(r.upper)
            self.pts.append((x, c))
        self.widths.append(abs(self.good - self.bad) if self.good == self.good else math.inf)
        if self.progress is not None:
            self.progress(f"{self.name}={x:.8g}: delta in [{r.lower:.4g}, {r.upper:.4g}] "
                          f"({len(self.hist)} evaluations, {time.perf_counter() - self.t0:.1f} s)")
        return r

    def result(self, lo: float, hi: float) -> Crossing:
        return Crossing(lo, hi, len(self.hist), tuple(sorted(self.methods)), tuple(self.hist))

    def closed(self) -> bool:
        a, b = self.good, self.bad
        return abs(a - b) <= self.rel_tol * max(abs(a), abs(b))

    def aim(self, root: float | None) -> float:
        """Next point: just past the secant root, on the side the last evaluation was not on
        (so the next answer tends to close the bracket), or the middle when the secant has no
        root or creeps (the bracket did not halve over three evaluations on one side: a cliff
        in the curve)."""
        w = self.widths + [abs(self.good - self.bad)]
        sides = self.sides[-3:]
        creeping = len(w) >= 4 and w[-1] > 0.5 * w[-4] and len(set(sides)) == 1
        if root is None or creeping:
            return self.middle()
        if not self.sides or self.sides[-1] == 0:
            return root
        # +1: the last point was good; move from the root towards the bad end, and vice versa
        towards_bad = self.bad - self.good
        step = 0.3 * self.rel_tol * abs(root)
        x = root + math.copysign(step, towards_bad) * self.sides[-1]
        return x if self.inside(x) else root

    def inside(self, x: float) -> bool:
        return min(self.good, self.bad) < x < max(self.good, self.bad)

    def middle(self) -> float:
        return 0.5 * (self.good + self.bad)

    def clamp(self, x: float) -> float:
        """``x`` strictly inside the bracket (a hair away from its ends)."""
        a, b = min(self.good, self.bad), max(self.good, self.bad)
        m = 1e-9 * (b - a)
        if not math.isfinite(x):
            return self.middle()
        return min(max(x, a + m), b - m)

    # -- tolerance ---------------------------------------------------------------------
    def _slope_tol(self, slope: float) -> float:
        return min(0.05, max(5e-4, 0.3 * self.rel_tol * slope))

    def _update_tol(self) -> None:
        """FFT-like curves: follow the observed slope (unless ambiguity tightened it)."""
        if self.cheap or self.ambiguous:
            return
        slope = self._slope()
        if slope is not None:
            self.tol = self._slope_tol(slope)

    # -- one step ----------------------------------------------------------------------
    def step(self, x: float) -> float | None:
        """Evaluate at ``x``, move an end, and return the secant estimate of the root."""
        loose = not self.cheap and not self.ambiguous and len(self.hist) < 4
        self.last_loose = loose and self.tol < 0.05
        r = self.eval(x, max(self.tol, 0.05) if loose else self.tol)
        if r.upper <= self.target:
            self.good = x
            self.sides.append(1)
        elif r.lower > self.target:
            self.bad = x
            self.sides.append(-1)
        else:
            self.sides.append(0)
            self._ambiguous(x, r)
        self.last_ambiguous = not (r.upper <= self.target or r.lower > self.target)
        self._update_tol()
        return self._secant()

    def _ambiguous(self, x: float, r: Bound) -> None:
        """The delta bracket at ``x`` contains the target. At the floating-point floor a
        narrower bracket cannot help: after three such points the search refuses, saying so."""
        self.ambiguous += 1
        floor = float(r.details.get("floor", 0.0) or 0.0) if r.details else 0.0
        width = r.upper - r.lower
        if width <= 1.5 * floor + 4 * U * r.upper + self.abs_tol:
            self.floor_hits += 1
            self.floor = max(self.floor, width, floor)
            self.floor_x = x
        if self.floor_hits >= 3:
            self._refuse(True)

    def unresolved(self, x: float, exc: NumericalError) -> float:
        """The curve raised :class:`NumericalError` at ``x`` even with a loose bracket (e.g. a
        start point a hair from ``log max a/b``, where the atoms nearly cancel). Nothing is
        learned about ``x``, so no end moves; the next point is the middle of the widest gap
        between the bracket's ends and the failed points. After four such points the search
        gives up with the curve's own message and the certified bracket so far."""
        self.failed.append(x)
        self.sides.append(0)
        a, b = min(self.good, self.bad), max(self.good, self.bad)
        if len(self.failed) >= 4:
            raise WiderThanAsked(f"{exc} (the {self.name} search could not certify "
                                 f"{len(self.failed)} points; certified bracket so far "
                                 f"[{a:.8g}, {b:.8g}])", a, b, tuple(self.methods)) from exc
        cuts = sorted([a, b] + [f for f in self.failed if a < f < b])
        lo, hi = max(zip(cuts, cuts[1:]), key=lambda c: c[1] - c[0])
        return 0.5 * (lo + hi)

    def tighten(self) -> None:
        """Points on both sides of the root were undecided: ask for narrower delta brackets
        (refusing once that cannot help)."""
        if self.floor_hits >= 2 or self.tol <= TOL_MIN or self.ambiguous > 12:
            self._refuse(self.floor_hits > 0)
        self.tol = max(self.tol / 10, TOL_MIN)

    def _refuse(self, at_floor: bool) -> None:
        a, b = min(self.good, self.bad), max(self.good, self.bad)
        reached = (b - a) / b if b > 0 else math.inf
        x = self.floor_x if self.floor_x is not None else self.hist[-1][0]
        fl = self.floor
        if not at_floor:
            why = (f"the delta brackets near {self.name}={x:.6g} still contain the target at "
                   f"relative width {self.tol:.2g}")
        elif self.target <= 10 * fl:
            why = (f"the target delta={self.target:.3g} is below the floating-point floor of "
                   f"the computation near {self.name}={x:.6g}: no delta bracket there can be "
                   f"narrower than about {fl:.2g} (the rounding of the atoms), so delta <= "
                   f"target can be neither certified nor refuted; ask for delta >= "
                   f"{_round_up(fl * 10):.0e}")
        else:
            why = (f"near {self.name}={x:.6g} no delta bracket can be narrower than about "
                   f"{fl:.2g} (the floating-point floor of the atoms), which limits the "
                   f"{self.name} bracket to a relative width of about {reached:.2g}; ask for "
                   f"rel_tol >= {_round_up(1.5 * reached):.0e}")
        raise WiderThanAsked(f"cannot resolve {self.name} to relative width {self.rel_tol:g}: "
                             f"{why}; certified bracket so far [{a:.8g}, {b:.8g}]", a, b,
                             tuple(self.methods))

    def polish(self, end: str = "good") -> None:
        """Once the bracket meets ``rel_tol``, move the end that is the answer (``"good"``: a
        valid eps, ``"bad"``: a certified lower value) closer to the root: a point
        ``rel_tol / 50`` from the secant root on that side, then (where narrow brackets are
        cheap) ``rel_tol / 2000``; a point that lands on the other side re-aims (at most four
        points in all, one where evaluations are expensive); an end moves only on a certified
        answer, and an undecided point ends the polish."""
        stages = [1 / 50, 1 / 2000] if self.cheap else [1 / 50]
        toward_good = 1.0 if (end == "good") == self.decreasing else -1.0
        for _ in range(4 if self.cheap else 1):
            if not stages or len(self.hist) >= self.max_evaluations:
                return
            frac = stages[0]
            root = self._secant()
            if root is None:
                root = self.middle()
            x = root + toward_good * self.rel_tol * frac * abs(root)
            if not self.inside(x):
                return
            # aim at rel_tol (narrower structured plans can cost a second or more); where
            # narrow brackets are cheap, one retry resolves what the point's distance to the
            # root needs (that distance times the slope |d log F / d log x|), if that is
            # still >= 1e-4 (loose rel_tol: a few cheap evaluations)
            tol = min(self.tol, max(1e-6, self.rel_tol))
            retries = 1 if self.cheap else 0
            while True:
                try:
                    r = self.eval(x, tol)
                except NumericalError:
                    return
                if r.upper <= self.target or r.lower > self.target or retries == 0:
                    break
                retries -= 1
                need = 0.3 * self.rel_tol * frac * (self._slope() or 10.0)
                if need >= tol or need < 1e-4:
                    break       # narrower than 1e-4 can cost seconds: the polish ends
                tol = need
            if r.upper <= self.target:
                self.good = x
            elif r.lower > self.target:
                self.bad = x
            else:
                return
            if (r.upper <= self.target) == (end == "good"):
                stages.pop(0)           # the answer moved; else aim again from a better root

    # -- estimates -----------------------------------------------------------------------
    def _slope(self) -> float | None:
        """``|d log F / d log x|`` through the two latest points (``None`` when unknown)."""
        if len(self.pts) >= 2:
            (x1, y1), (x2, y2) = self.pts[-2], self.pts[-1]
            if x1 > 0 and x2 > 0 and x1 != x2 and y1 != y2:
                return abs((y2 - y1) / (math.log(x2) - math.log(x1)))
        return None

    def _secant(self) -> float | None:
        """Secant root of ``log F - log target`` through the two latest points inside the
        bracket (or at its ends); ``None`` when there is none."""
        tgt = math.log(self.target)
        pts = [(x, y) for x, y in self.pts if self.inside(x) or x in (self.good, self.bad)]
        if len(pts) < 2:
            return None
        (x1, y1), (x2, y2) = pts[-2], pts[-1]
        if x1 == x2 or y1 == y2:
            return None
        x = x2 + (tgt - y2) * (x2 - x1) / (y2 - y1)
        return x if self.inside(x) else None

    def start_point(self) -> float:
        """Root of the curve's uncertified estimate (bisection on ``log F``), or the middle."""
        est = getattr(self.curve, "estimate_log_delta", None)
        if est is None:
            return self.middle()
        a, b = min(self.good, self.bad), max(self.good, self.bad)
        tgt = math.log(self.target)
        sign = 1.0 if self.decreasing else -1.0

        def f(x: float) -> float:
            return sign * (est(x) - tgt)

        lo, hi = a + 1e-12 * (b - a), b - 1e-9 * (b - a)
        try:
            flo, fhi = f(lo), f(hi)
            if math.isnan(flo) or math.isnan(fhi):
                return self.middle()
            if flo <= 0:            # f > 0 left of the root, in both directions
                return lo
            if fhi > 0:
                return hi
            r = bisect_root(f, lo, hi, 1e-10)
        except (ArithmeticError, ValueError):
            return self.middle()
        return self.middle() if r is None else r


def _round_up(x: float) -> float:
    """``x`` rounded up to one significant digit (for messages)."""
    e = math.floor(math.log10(x)) if x > 0 else 0
    return math.ceil(x / 10 ** e) * 10 ** e if x > 0 else 0.0


def epsilon_of_curve(curve: Curve, delta: float, max_eps: float, *,
                     rel_tol: float = DEFAULT_EPS_REL_TOL, bound: str = "upper",
                     n: int | None = None, mechanism: str = "",
                     progress: Progress | None = None, strict: bool = True) -> Bound:
    """Certified ``eps(delta) = min{eps >= 0 : F(eps) <= delta}`` of one non-increasing curve
    that is 0 from ``max_eps`` on (a law's :class:`~amp.backends.dispatch.LawDelta`, whose
    ``max_eps = log max a/b``).

    Returns a :class:`~amp.core.result.Bound` of quantity ``"eps"``: ``upper`` is a valid eps
    (``F_upper(upper) <= delta``), ``lower`` is 0 or has ``F_lower(lower) > delta``; for a
    curve that is convex in ``e^eps`` (``convex_in_w``, searched by the chord steps of
    :mod:`amp.inversion_chord`) either end may instead be certified by convexity from two
    evaluated points (``F(upper) <= delta``, ``F(lower) > delta`` for the true ``F``), closer
    to the threshold than one evaluation's bracket resolves. When
    ``rel_tol`` cannot be reached (:class:`WiderThanAsked`): ``strict=True`` raises it,
    ``strict=False`` returns the certified bracket held, flagged in ``details``
    (``wider_than_asked``, ``achieved_rel_tol``, ``wider_reason``).
    """
    if not math.isfinite(max_eps):
        raise ParameterError("the curve has no finite eps with delta = 0; cannot search eps")
    # delta = 0 exactly from the exact log max a/b on; the float max_eps may sit a few ulps
    # below it, so it is certified by an evaluation (its atoms are rounding noise, delta <= the
    # noise), else the search starts from a point safely past it
    hi = max_eps
    if curve.delta_for_search(hi, TOL_LOOSE, 0.0).upper > delta:
        hi = max_eps * (1 + 64 * U) + 1e-300
    lo, bad_known, quick = 0.0, False, None
    cheap_brackets: list = []
    pre = getattr(curve, "quick_curve", None)
    qc = pre() if callable(pre) else None
    if qc is not None:
        quick = _quick_bracket(qc, delta, hi, rel_tol, progress, cheap_brackets)
        lo, q_hi, bad_known, methods, seed = quick
        if q_hi == 0.0 or (q_hi - lo) <= rel_tol * q_hi:     # settled by the cheap curve
            return Bound("eps", lo, q_hi, bound, methods, n, mechanism, {"delta": delta},
                         details={"evaluations": 0, "quick": True})
        hi = q_hi
    seed = quick[4] if quick is not None else ()
    chord = None
    if (quick is not None and getattr(curve, "convex_in_w", False)
            and getattr(curve, "precise_brackets", False)
            and callable(getattr(curve, "search_tol", None))):
        # expensive, precise, convex in e^eps: the chord steps (amp.inversion_chord), which
        # settle most searches in three evaluations; else (not settled, or anything raised)
        # the plain search below runs as it would have, its ends intersected with theirs
        try:
            chord = chord_search(curve, delta, lo, hi, rel_tol=rel_tol,
                                 tol=curve.search_tol(rel_tol),
                                 abs_tol=min(1e-16, 1e-3 * delta), seed=seed,
                                 cheap=cheap_brackets, progress=progress)
        except (NumericalError, ArithmeticError, ValueError):
            chord = None
    if chord is not None:
        c_lo, c_hi, pts, c_methods, done = chord
        if done:
            methods = sorted((set(c_methods) | set(quick[3].split(","))) - {""})
            return Bound("eps", c_lo, c_hi, bound, ",".join(methods), n, mechanism,
                         {"delta": delta}, details={"evaluations": len(pts),
                                                    "history": tuple(pts), "chord": True})
        # not settled: the plain search runs as it would have without the chord steps (the
        # same interval and seed: the same points, so never a wider bracket than it gives),
        # and its ends are intersected with the chord steps' certified ones
    try:
        c = crossing(curve, delta, lo, hi, decreasing=True, rel_tol=rel_tol,
                     bad_end_known=bad_known, progress=progress, name="eps",
                     polish="bad" if bound == "lower" else "good",
                     seed=seed)
        if chord is not None:
            c = Crossing(max(c.lo, chord[0]), min(c.hi, chord[1]),
                         c.evaluations + len(chord[2]),
                         tuple(sorted(set(c.methods) | set(chord[3]))),
                         tuple(chord[2]) + c.history)
        if quick is not None and quick[3]:
            c = Crossing(c.lo, c.hi, c.evaluations,
                         tuple(sorted(set(c.methods) | set(quick[3].split(",")))), c.history)
    except WiderThanAsked as exc:
        if strict or not (0.0 <= exc.lo <= exc.hi < math.inf):
            raise
        # the bracket held when the search stopped can be wide (an undecided point early
        # on): searches at looser rel_tol narrow it; every bracket they return, or hold when
        # they stop, contains the threshold, so their intersection does too
        lo, hi, why, tol = exc.lo, exc.hi, str(exc), rel_tol
        if chord is not None:                   # certified too: the intersection holds
            lo, hi = max(lo, chord[0]), min(hi, chord[1])
        used = set(exc.methods)
        for _ in range(4):
            tol *= 10
            if hi <= 0 or (hi - lo) <= tol * hi or tol >= 0.5:
                break
            try:
                c = crossing(curve, delta, lo, hi, decreasing=True, rel_tol=tol,
                             progress=progress, name="eps", bad_end_known=lo > 0,
                             polish="bad" if bound == "lower" else "good")
                lo, hi = max(lo, c.lo), min(hi, c.hi)
                used.update(c.methods)
                break
            except WiderThanAsked as again:
                used.update(again.methods)
                if 0.0 <= again.lo <= again.hi < math.inf:
                    lo, hi = max(lo, again.lo), min(hi, again.hi)
            except NumericalError:
                break
        return Bound("eps", lo, hi, bound, ",".join(sorted(used)), n, mechanism,
                     {"delta": delta},
                     details={"evaluations": 0, "wider_than_asked": True,
                              "achieved_rel_tol": (hi - lo) / hi if hi > 0 else 0.0,
                              "wider_reason": why})
    return Bound("eps", c.lo, c.hi, bound, ",".join(c.methods), n, mechanism,
                 {"delta": delta}, details={"evaluations": c.evaluations,
                                            "history": c.history})


#: Relative distances from the cheap curve's root estimate at which :func:`_quick_bracket`
#: tries to certify each side (the first that decides is kept).
QUICK_SIDES = (3e-3, 1e-2, 3e-2, 0.1, 0.3)
#: Evaluations of the cheap curve's own crossing (it stalls where its brackets, ~1e-3
#: relative at n = 1e11, contain the target: a few are enough to locate the root).
QUICK_EVALUATIONS = 12
#: Relative widths asked of the cheap curve's brackets at one point, in turn.
QUICK_TOLS = (2e-2, 5e-2, 0.2, 0.5)


class _Recorder:
    """A curve that keeps every bracket it returned: ``seen``, a list of ``(x, Bound)``."""

    def __init__(self, curve: Curve):
        self.curve, self.seen = curve, []

    def delta_for_search(self, x: float, tol: float, abs_tol: float) -> Bound:
        r = self.curve.delta_for_search(x, tol, abs_tol)
        self.seen.append((x, r))
        return r

    def loose(self, x: float, abs_tol: float) -> Bound:
        """A bracket at ``x`` as narrow as the curve reaches among :data:`QUICK_TOLS` (the cf
        inversion's floating-point floor grows with ``n``: ~2e-2 relative at n = 1e12)."""
        for tol in QUICK_TOLS[:-1]:
            try:
                return self.delta_for_search(x, tol, abs_tol)
            except NumericalError:
                pass
        return self.delta_for_search(x, QUICK_TOLS[-1], abs_tol)

    def estimate_log_delta(self, x: float) -> float:
        return self.curve.estimate_log_delta(x)


def _quick_bracket(qc: Curve, delta: float, hi: float, rel_tol: float,
                   progress: Progress | None, brackets: list | None = None
                   ) -> tuple[float, float, bool, str, list]:
    """``(lo, hi, lo_is_bad, methods, seed)``: the eps search's interval narrowed by a cheap
    certified curve of the same ``delta(eps)`` (:func:`epsilon_of_curve`).

    ``delta_upper(0) <= delta`` settles ``eps(delta) = 0`` exactly (``(0, 0)``: every eps is
    valid, ``delta`` being non-increasing). Otherwise the cheap curve locates the root (a
    short crossing) and certifies a point on each side of it (:data:`QUICK_SIDES`): ``hi``
    with ``delta_upper(hi) <= delta`` (a valid eps) and ``lo = 0`` or ``delta_lower(lo) >
    delta`` (``lo_is_bad``: certified, not to be checked again). ``seed``: the cheap
    curve's measurements ``(x, log of the bracket's centre)``, which steer the precise
    search's first steps (:func:`crossing`). Whatever the cheap curve cannot certify leaves
    the interval as it was. ``brackets`` (a list, optional) receives every certified bracket
    of the cheap curve, ``(x, lower, upper)`` (eps = 0 included)."""
    abs_tol = min(1e-16, 1e-3 * delta)
    rec = _Recorder(qc)
    if brackets is not None:
        rec.seen = _Into(rec.seen, brackets)
    try:
        r0 = rec.loose(0.0, abs_tol)
    except NumericalError:
        return 0.0, hi, False, "", []
    if progress is not None:
        progress(f"eps=0: delta in [{r0.lower:.4g}, {r0.upper:.4g}] ({r0.method}, the quick "
                 "check)")
    if r0.upper <= delta:
        return 0.0, 0.0, True, r0.method, []
    try:
        crossing(rec, delta, 0.0, hi, decreasing=True, rel_tol=max(rel_tol, 1e-3),
                 bad_end_known=True, progress=progress, name="eps",
                 max_evaluations=QUICK_EVALUATIONS)
    except NumericalError:        # WiderThanAsked included: what it saw is in rec.seen
        pass

    def ends() -> tuple[float, float]:
        good = min([x for x, r in rec.seen if r.upper <= delta] + [hi])
        bad = max([x for x, r in rec.seen if r.lower > delta] + [0.0])
        return bad, good

    # the root as the cheap curve sees it: the secant (in log delta) of the measured point
    # nearest the target and the next nearest at least 1% away from it (closer points differ
    # by less than their brackets' width), then a certified point on each side of it
    pts = sorted((abs(math.log(_centre(r)) - math.log(delta)), x, math.log(_centre(r)))
                 for x, r in rec.seen if x > 0 and r.upper > 0)
    pair = [q for q in pts[1:] if pts and abs(q[1] - pts[0][1]) >= 1e-2 * max(q[1], pts[0][1])]
    bad, good = ends()
    if pair and pair[0][2] != pts[0][2]:
        (_, x1, y1), (_, x2, y2) = pts[0], pair[0]
        root = x2 + (math.log(delta) - y2) * (x2 - x1) / (y2 - y1)
        if progress is not None:
            progress(f"eps: the quick curve puts the root near {root:.6g}")
        for side in (1.0, -1.0):        # good side (larger eps), then bad side
            for k in QUICK_SIDES:
                bad, good = ends()
                x = root * (1 + side * k)
                if not bad < x < good:
                    continue
                try:
                    r = rec.loose(x, abs_tol)
                except NumericalError:
                    break
                if (r.upper <= delta) if side > 0 else (r.lower > delta):
                    break
        bad, good = ends()
    # the points nearest the target last: the search steers by its latest points
    seed = [(x, y) for _, x, y in sorted(
        ((abs(math.log(_centre(r)) - math.log(delta)), x, math.log(_centre(r)))
         for x, r in rec.seen if x > 0 and r.upper > 0), reverse=True)]
    methods = ",".join(sorted({r.method for _, r in rec.seen}))
    if not bad < good:          # brackets that contradict monotonicity: trust none of them
        return 0.0, hi, False, "", []
    return bad, good, bad > 0 or r0.lower > delta, methods, seed


class _Into(list):
    """A list of ``(x, Bound)`` that also appends ``(x, lower, upper)`` to ``out``."""

    def __init__(self, items, out: list):
        super().__init__(items)
        self.out = out

    def append(self, item) -> None:
        super().append(item)
        x, r = item
        self.out.append((float(x), float(r.lower), float(r.upper)))


def _centre(r: Bound) -> float:
    return math.sqrt(r.lower * r.upper) if r.lower > 0 else r.upper


def estimate_epsilon(curve: Curve, delta: float, max_eps: float) -> float:
    """Uncertified saddle-point estimate of ``eps(delta)`` of one curve (bisection on
    ``curve.estimate_log_delta``): for quick figures and starting points, never a guarantee."""
    if not math.isfinite(max_eps):
        raise ParameterError("the curve has no finite eps with delta = 0")
    tgt = math.log(delta)

    def above(x: float) -> bool:
        v = curve.estimate_log_delta(x)
        return not math.isnan(v) and v > tgt

    if not above(0.0):
        return 0.0
    lo, hi = 0.0, max_eps * (1 - 1e-9)
    if above(hi):
        return hi
    _, hi = bisect(lambda e: not above(e), lo, hi, rel_tol=1e-6, steps=100)
    return hi
