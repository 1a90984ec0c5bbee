"""Guided steps of the eps search for precise curves (speed only; :mod:`amp.inversion`).

A curve whose certified brackets are narrow at no extra cost (``precise_brackets``, e.g. the
structured path of :class:`amp.backends.dispatch.LawDelta` at large ``n``, ~1e-8 relative)
lets the search aim: the curve's uncertified estimate of ``log F`` corrected by the measured
points, then the parabola through the three latest points, then one point a hair past the
predicted root on each side. About 5 certified evaluations where the plain search of
:func:`amp.inversion.crossing` makes 8 to 16.

Nothing here certifies anything: each function only chooses where the search ``s`` (the state
of one :func:`~amp.inversion.crossing` run) evaluates next; its ends move on certified
evaluations alone (``s.step``), exactly as in the plain search, and the search hands back to
the plain steps on anything unusual (an undecided point, a wider bracket, no convergence).
A wrong estimate (tested off by 1e3 in ``delta``, tests/test_inversion_guided.py) costs
evaluations, never validity.
"""

from __future__ import annotations

import math

from amp.core.errors import NumericalError

__all__ = ["PRECISE", "surely_bad", "bisect_root", "predict", "quadratic_root", "guided",
           "decidable", "slope"]

#: Relative width of a delta bracket below which the guided steps go on.
PRECISE = 3e-8


def surely_bad(s, x: float) -> bool:
    """The curve's uncertified estimate puts ``F(x)`` at more than twice the target (on
    the bad side), so the check of the bad end can wait: it is made only if the guided
    search finds no bad point (:func:`guided`). Speed only: the bad end is never returned
    as certified on the estimate's word (it is the interval's own end)."""
    try:
        v = float(s.curve.estimate_log_delta(x))
    except (ArithmeticError, ValueError, NumericalError):
        return False
    return math.isfinite(v) and v > math.log(s.target) + math.log(2.0)


def bisect_root(f, lo: float, hi: float, rel_tol: float) -> float | None:
    """Midpoint of ``[lo, hi]`` after bisecting for the sign change of ``f`` (``f > 0`` at
    ``lo``, ``f <= 0`` at ``hi``, as the caller has checked) until ``hi - lo <= rel_tol * hi``
    (at most 200 halvings); ``None`` when ``f`` is NaN at a midpoint. Exceptions of ``f``
    propagate. Only ever applied to uncertified estimates, to choose where to evaluate
    (:func:`predict`, :meth:`amp.inversion._Search.start_point`)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        fm = f(mid)
        if math.isnan(fm):
            return None
        if fm > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= rel_tol * hi:
            break
    return 0.5 * (lo + hi)


def predict(s) -> float | None:
    """Root of ``est(x) + c(x) = log target`` inside the bracket, ``est`` the curve's
    uncertified estimate of ``log F`` and ``c`` its error measured at the two latest
    evaluations (the centres of their brackets; outside the bracket too: every point is a
    measurement of the same curve), interpolated linearly in ``x`` (constant
    with one, zero with none): the estimate's shape, the measurements' level; then refined
    by :func:`quadratic_root` (or, for two latest points within ``1e-3`` of each other, their
    secant). ``None`` when the bracket holds no such root."""
    est = s.curve.estimate_log_delta
    tgt = math.log(s.target)
    corr: list[tuple[float, float]] = []
    for x, y in reversed(s.pts):
        if len(corr) == 2:
            break
        try:
            e = float(est(x))
        except (ArithmeticError, ValueError, NumericalError):
            continue
        if math.isfinite(e) and all(x != x0 for x0, _ in corr):
            corr.append((x, y - e))
    sign = 1.0 if s.decreasing else -1.0
    if len(corr) == 2 and abs(corr[0][0] - corr[1][0]) <= 1e-3 * abs(corr[0][0]):
        # two close points: the secant of the measurements themselves is better than
        # the estimate's shape (its own rounding and inner root finding, ~1e-8 in log)
        (x2, y2), (x1, y1) = [(x, y) for x, y in reversed(s.pts)
                              if x in (corr[0][0], corr[1][0])][:2]
        if y1 != y2:
            x = x2 + (tgt - y2) * (x2 - x1) / (y2 - y1)
            return x if s.inside(x) else None

    def f(x: float) -> float:       # > 0 left of the root (either direction)
        c = 0.0
        if len(corr) == 1:
            c = corr[0][1]
        elif len(corr) == 2:
            (x1, d1), (x2, d2) = corr
            c = d1 + (d2 - d1) * (x - x1) / (x2 - x1)
        return sign * (float(est(x)) + c - tgt)

    a, b = min(s.good, s.bad), max(s.good, s.bad)
    lo, hi = a + 1e-9 * (b - a), b - 1e-9 * (b - a)
    try:
        flo, fhi = f(lo), f(hi)
        if not (flo > 0 and fhi <= 0) or math.isnan(flo) or math.isnan(fhi):
            return None
        r = bisect_root(f, lo, hi, 1e-13)
    except (ArithmeticError, ValueError, NumericalError):
        return None
    if r is None:
        return None
    q = quadratic_root(s, r)
    return q if q is not None else r


def quadratic_root(s, r: float) -> float | None:
    """Root near ``r`` of the parabola through the three latest evaluations (``x``, log of
    the bracket's centre), when they lie within a factor 1.5 of each other: once the
    points are close, the measured curvature beats the estimate's shape (its own slope is
    off by up to ~20% at large ``n``). ``None`` when it has no root inside the bracket
    within 10% of ``r``."""
    pts: list[tuple[float, float]] = []
    for x, y in reversed(s.pts):
        if x > 0 and all(x != x0 for x0, _ in pts):
            pts.append((x, y))
        if len(pts) == 3:
            break
    if len(pts) < 3 or max(p[0] for p in pts) > 1.5 * min(p[0] for p in pts):
        return None
    (x0, y0), (x1, y1), (x2, y2) = pts
    d01, d12 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
    c2 = (d12 - d01) / (x2 - x0)
    tgt = math.log(s.target)
    x = r
    for _ in range(30):                 # Newton on the parabola from r
        v = y0 + d01 * (x - x0) + c2 * (x - x0) * (x - x1) - tgt
        dv = d01 + c2 * ((x - x0) + (x - x1))
        if dv == 0 or not math.isfinite(v / dv):
            return None
        step = v / dv
        x -= step
        if abs(step) <= 1e-15 * abs(x):
            break
    else:
        return None
    return x if s.inside(x) and abs(x - r) <= 0.1 * abs(r) else None


def guided(s, polish: str) -> float | None:
    """Guided steps for precise curves (``curve.precise_brackets``), each near the
    predicted root ``r`` (:func:`predict`): at ``r`` itself while the root is being
    located (the prediction moved more than ``3e-3`` and the product of its last two
    moves, its error for a superlinear method, is above ``rel_tol / 3``); then a hair
    past ``r`` on the side of the answer end (``polish``; ``rel_tol / 5000`` away, or as
    far as the brackets' width needs to decide it); then ``rel_tol / 100`` past ``r`` on
    the other side (ten times further after each miss). When the prediction is that
    good, the bracket closes in two evaluations, both ends far closer to the threshold
    than ``rel_tol``. Ends move only on certified evaluations (``s.step``, as in the
    plain search): the predictions steer, they certify nothing. Hands over to the plain
    search (returning its next point, or ``None``) on an undecided or uncertifiable
    point, a bracket wider than ``PRECISE`` (relative; at moderate ``n`` the structured
    path aims at the width asked, and the plain search is tuned for that), a prediction
    outside the bracket, predictions that stop converging, or after 10 steps."""
    toward_good = 1.0 if s.decreasing else -1.0
    answer_dir = toward_good if polish == "good" else -toward_good
    moves: list[float] = []
    last: float | None = None
    misses = 0
    for _ in range(10):
        r = predict(s)
        if r is None or r <= 0:
            return None
        if last is not None:
            moves.append(abs(r - last) / r)
            if len(moves) >= 3 and moves[-1] > 0.5 * moves[-2] and moves[-1] > 1e-6:
                return None                     # the predictions stopped converging
        err = moves[-1] * moves[-2] if len(moves) >= 2 else math.inf
        answer, other = (s.good, s.bad) if polish == "good" else \
            (s.bad, s.good)
        tight = max(s.rel_tol / 5000, decidable(s))
        answer_ok = 0 <= (answer - r) * answer_dir <= 2 * tight * r
        # the other end too within ~rel_tol / 100 of the root (so the bracket is not
        # only within rel_tol but tighter than the plain search's, one evaluation more)
        other_ok = 0 <= (r - other) * answer_dir <= \
            2 * s.rel_tol / 100 * 10 ** min(misses, 2) * r
        if s.closed() and answer_ok and other_ok:
            return None
        if err > s.rel_tol / 3 and (last is None or abs(r - last) > 3e-3 * r):
            x = r                               # still locating the root
        elif not answer_ok:
            x = r * (1 + answer_dir * tight)    # the answer end, a hair past the root
        else:                                   # the other end (further on each miss)
            x = r * (1 - answer_dir * s.rel_tol / 100 * 10 ** min(misses, 2))
            misses += 1
        if not s.inside(x):
            return None
        try:
            s.step(x)
        except NumericalError as exc:
            return s.unresolved(x, exc)
        _, lo, up = s.hist[-1]
        if s.last_ambiguous or not (0 < up and up - lo <= PRECISE * up):
            return None             # not precise here: the plain search goes on
        last = x
    return None


def decidable(s) -> float:
    """Relative distance from the root at which the latest bracket's relative width
    still decides the side (three widths, at the observed slope)."""
    if not s.hist:
        return 0.0
    _, lo, up = s.hist[-1]
    k = slope(s)
    if up <= 0 or not k:
        return 0.0
    return 3 * (up - lo) / up / k


def slope(s) -> float | None:
    """``|d log F / d log x|`` through the two latest points of the search (``None`` when
    unknown)."""
    if len(s.pts) >= 2:
        (x1, y1), (x2, y2) = s.pts[-2], s.pts[-1]
        if x1 > 0 and x2 > 0 and x1 != x2 and y1 != y2:
            return abs((y2 - y1) / (math.log(x2) - math.log(x1)))
    return None
