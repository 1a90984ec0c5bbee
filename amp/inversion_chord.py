"""Few-evaluation eps search for convex, precise curves (speed; :func:`amp.inversion.epsilon_of_curve`).

Where one certified evaluation is expensive (the structured path at ``n >~ 10^11``: seconds and
most of the memory budget each) and its brackets are narrow (``~2e-8`` relative), three
evaluations settle ``eps(delta)`` to far better than the default ``rel_tol``, because
``delta(eps)`` is **convex in** ``w = e^eps``: for every configuration of the users
``S(w) = sum_i (a_i - w b_i)`` is affine in ``w``, so ``S(w)_+`` is convex, and so is its
expectation ``delta = E[S_+] / n`` (Theorem 4's bound, Theorem 5's variable alike: a GPARV's
atoms ``(a, b)`` and their masses do not depend on ``eps``, :meth:`amp.mechanisms.gparv.GPARV.atoms`;
every certified bracket of a :class:`~amp.backends.dispatch.LawDelta`, whichever path made it,
brackets that one function of the exact atoms; a curve says so with ``convex_in_w = True``). For exact points ``w_a < w_b`` with certified brackets
``[L_a, U_a]``, ``[L_b, U_b]``:

* **chord** (upper bound): for ``w`` in ``[w_a, w_b]``,
  ``delta(w) <= U_a + (U_b - U_a) (w - w_a) / (w_b - w_a)``; where that chord is
  ``<= target`` (from its crossing ``w*`` up to ``w_b``, when ``U_b <= target < U_a``) every
  ``eps = log w`` is a valid eps: the upper end.
* **secant extrapolation** (lower bound): for ``w >= w_b``,
  ``delta(w) >= L_b + (w - w_b) (L_b - U_a) / (w_b - w_a)`` (convexity: the slope of the
  curve at or after ``w_b`` is at least that of its secant over ``[w_a, w_b]``); where this
  line is ``> target`` (``w`` below its crossing) the threshold lies further right: the
  lower end. (``L_b - U_a <= 0`` always; when it is 0 the line gives only ``w_b`` itself.)

Both crossings are first computed in floats, in ``e = expm1(eps) = w - 1`` (no cancellation
at small eps); each is then **checked in exact rationals**
(:class:`fractions.Fraction`) from enclosures of ``expm1`` at the points involved (the float
``expm1`` widened by ``4 u``; libm is within one ulp, as the library assumes of ``exp`` and
``log``), and moved towards the evaluated point that bounds it (by ``1e-15`` of itself, then
doubling steps) until the check passes (else that point itself is the end). So an end never rests on the rounding of the float steps.

The steps (:func:`chord_search`): one evaluation at the cheap curve's root (the quick cf
bracket of :func:`amp.inversion._quick_bracket`); one on the other side, aimed by the slope
of the secant through it and the cheap bracket that pins that slope best (eps = 0, usually)
with a 50% overshoot, or by the secant of two precise points on one side; then, the root known from the chord of two precise
points on either side to ``~1e-8``, one point a few bracket widths (at the measured slope)
on the bad side of it. The ends are then the chord's crossing (upper) and the extrapolated
secant's (lower), each certified by the inequalities above; every choice of a point only
steers. Anything unusual (an undecided bracket, a bracket wider than :data:`PRECISE`, more
than :data:`MAX_EVALUATIONS` points, a result wider than ``rel_tol``, inconsistent brackets)
hands over to the plain search (:func:`amp.inversion.crossing`), which then runs as it would
have without these steps; its ends are intersected with the ends certified here
(:func:`amp.inversion.epsilon_of_curve`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from amp.core.errors import NumericalError
from amp.core.floats import U

__all__ = ["chord_search", "chord_upper", "secant_lower", "MAX_EVALUATIONS", "PRECISE"]

#: Largest relative width of an evaluation's bracket for the steps here (else: plain search).
PRECISE = 1e-6
#: Evaluations made here at most (then the plain search goes on from what is certified).
MAX_EVALUATIONS = 5
#: First relative move of a float crossing that fails its exact check (then doubled).
SAFE_EPS = 1e-15
_U4 = Fraction(4 * U)


def _expm1_in(x: float) -> tuple[Fraction, Fraction]:
    """Exact rationals enclosing ``expm1(x)`` for ``x >= 0``: the float ``math.expm1(x)``
    widened by ``4 u`` relative on each side (libm's ``expm1`` is within one ulp, ``<= 2 u``
    relative, as the library assumes of ``exp``/``log``: :file:`book/engine/certified.md`)."""
    e = Fraction(math.expm1(x))
    return e * (1 - _U4), e * (1 + _U4)


def chord_upper(xa: float, ua: float, xb: float, ub: float, target: float) -> float | None:
    """Smallest certified-valid eps found on the chord of the upper ends between ``xa < xb``
    (``ua > target >= ub``), or ``None`` when the inputs do not straddle the target.

    For ``w`` in ``[w_a, w_b]`` (``w = e^eps``), ``theta = (w - w_a) / (w_b - w_a)``,
    convexity gives ``delta(w) <= (1 - theta) delta(w_a) + theta delta(w_b) <= ua - theta (ua
    - ub)``, which is ``<= target`` once ``theta >= theta* = (ua - target) / (ua - ub)``. The
    float crossing is a guess; it is *checked* in exact rationals: ``theta`` is bounded below by
    ``(e_x^- - e_a^+) / (e_b^+ - e_a^-)`` from the enclosures of ``w - 1 = expm1`` at the three
    points (:func:`_expm1_in`), and the chord bound ``ua - theta^- (ua - ub)`` must be ``<=
    target`` exactly; a guess that fails is moved towards ``xb`` (which is itself valid:
    ``ub <= target``) and checked again."""
    if not (0.0 <= xa < xb and ua > target >= ub):
        return None
    ea, eb = math.expm1(xa), math.expm1(xb)
    theta = (ua - target) / (ua - ub)                 # chord fraction of the crossing, in (0, 1]
    x0 = min(xb, max(xa, math.log1p(ea + theta * (eb - ea))))
    a_lo, a_hi = _expm1_in(xa)
    b_lo, b_hi = _expm1_in(xb)
    need = (Fraction(ua) - Fraction(target)) / (Fraction(ua) - Fraction(ub))
    x, step = x0, SAFE_EPS * x0 + 1e-300
    while x < xb:
        x_lo, _x_hi = _expm1_in(x)
        if (x_lo - a_hi) / (b_hi - a_lo) >= need:     # theta^- >= theta*: chord <= target
            return x
        x, step = x0 + step, 2 * step                 # doubling steps: xb within ~1100
    return xb


def secant_lower(xa: float, ua: float, xb: float, lb: float, target: float) -> float | None:
    """Largest certified-bad eps found on the secant through ``(xa, ua)`` and ``(xb, lb)``
    extended right of ``xb`` (``xa < xb``, ``lb > target``), or ``None`` when the line does not
    decrease (``ua <= lb``: then ``xb`` itself is the best it gives) or no point beyond ``xb``
    passes the check.

    For ``w >= w_b``, ``phi = (w - w_b) / (w_b - w_a) >= 0``, convexity (the slope of
    ``delta`` on ``[w_b, w]`` is at least that of its secant on ``[w_a, w_b]``) gives
    ``delta(w) >= delta(w_b) + phi (delta(w_b) - delta(w_a)) >= lb - phi (ua - lb)``, which is
    ``> target`` while ``phi < phi* = (lb - target) / (ua - lb)``: every such ``eps`` is bad.
    The float crossing is a guess, *checked* in exact rationals: ``phi`` is bounded above by
    ``(e_x^+ - e_b^-) / (e_b^- - e_a^+)`` (:func:`_expm1_in`), and that bound must be ``<
    phi*``; a guess that fails is moved towards ``xb`` and checked again."""
    if not (0.0 <= xa < xb and lb > target and ua > lb):
        return None
    ea, eb = math.expm1(xa), math.expm1(xb)
    phi = (lb - target) / (ua - lb)                   # (w - w_b) / (w_b - w_a) at the crossing
    x0 = max(xb, math.log1p(eb + phi * (eb - ea)))
    a_lo, a_hi = _expm1_in(xa)
    b_lo, b_hi = _expm1_in(xb)
    if not b_lo > a_hi:
        return None
    limit = (Fraction(lb) - Fraction(target)) / (Fraction(ua) - Fraction(lb))
    x, step = x0, SAFE_EPS * x0 + 1e-300
    while x > xb:
        _x_lo, x_hi = _expm1_in(x)
        if (x_hi - b_lo) / (b_lo - a_hi) < limit:     # phi^+ < phi*: the line > target
            return x
        x, step = x0 - step, 2 * step
    return None


class _Points:
    """The precise evaluations made here: ``(x, lower, upper)``, and the certified ends."""

    def __init__(self, curve, target, bad, good, tol, abs_tol, progress, name):
        self.curve, self.target, self.tol, self.abs_tol = curve, target, tol, abs_tol
        self.bad, self.good = bad, good
        self.progress, self.name = progress, name
        self.pts: list[tuple[float, float, float]] = []
        self.methods: set[str] = set()

    def eval(self, x: float) -> int:
        """+1 good, -1 bad, 0 undecided or imprecise (then the caller stops)."""
        r = self.curve.delta_for_search(x, self.tol, self.abs_tol)
        self.methods.add(r.method)
        self.pts.append((x, r.lower, r.upper))
        if self.progress is not None:
            self.progress(f"{self.name}={x:.10g}: delta in [{r.lower:.10g}, {r.upper:.10g}] "
                          f"(chord search, {len(self.pts)} evaluations)")
        if r.upper <= self.target:
            self.good = min(self.good, x)
        elif r.lower > self.target:
            self.bad = max(self.bad, x)
        else:
            return 0
        if not (r.upper > 0 and r.upper - r.lower <= PRECISE * r.upper):
            return 0
        return 1 if r.upper <= self.target else -1

    def side(self, p) -> int:
        return 1 if p[2] <= self.target else (-1 if p[1] > self.target else 0)

    def nearest(self, s: int):
        """The precise point on side ``s`` nearest the root (largest bad, smallest good)."""
        cand = [p for p in self.pts if self.side(p) == s]
        if not cand:
            return None
        return max(cand, key=lambda p: p[0]) if s < 0 else min(cand, key=lambda p: p[0])

    def ends(self) -> tuple[float, float]:
        """Certified ``(lo, hi)``: the held ends, every chord between two evaluated points
        whose upper ends straddle the target (:func:`chord_upper`) and every secant through
        two evaluated points extended past a certified-bad one (:func:`secant_lower`). Each
        end is certified on its own; ``lo <= hi`` is then a consistency check (a failure
        would mean a wrong bracket somewhere: :class:`NumericalError`, so that the caller
        falls back to its plain search from what it held before)."""
        lo, hi = self.bad, self.good
        for a in self.pts:
            for b in self.pts:
                if not a[0] < b[0]:
                    continue
                c = chord_upper(a[0], a[2], b[0], b[2], self.target)
                if c is not None:
                    hi = min(hi, c)
                s = secant_lower(a[0], a[2], b[0], b[1], self.target)
                if s is not None:
                    lo = max(lo, s)
        if not lo <= hi:
            raise NumericalError(f"chord search: inconsistent brackets (lo {lo!r} > hi {hi!r})")
        return lo, hi


def _centre(lo: float, up: float) -> float:
    return math.sqrt(lo * up) if lo > 0 else up


def chord_search(curve, target: float, bad: float, good: float, *, rel_tol: float,
                 tol: float, abs_tol: float, seed=(), cheap=(), progress=None,
                 name: str = "eps"):
    """Certified bracket of ``eps(target)`` by the chord steps of the module docstring.

    ``[bad, good]``: the certified bracket held (``bad = 0`` or ``delta_lower(bad) >
    target``; ``delta_upper(good) <= target``); ``seed``: the cheap curve's measurements
    ``(x, log delta)``, nearest the target last; ``cheap``: its brackets ``(x, lower,
    upper)`` (they aim the second point; nothing here relies on them being right). Returns ``(lo, hi, points, methods,
    done)``: the certified bracket (never wider than ``[bad, good]``), the evaluations made
    ``(x, lower, upper)``, the methods, and whether ``hi - lo <= rel_tol * hi`` (else the
    caller's plain search goes on from ``[lo, hi]``)."""
    P = _Points(curve, target, bad, good, tol, abs_tol, progress, name)
    tgt = math.log(target)

    def result(done: bool):
        lo, hi = P.ends()
        return lo, hi, P.pts, P.methods, done

    def inside(x: float) -> bool:
        return P.bad < x < P.good

    # 1. the cheap curve's root: the secant of its two measured points nearest the target
    #    (at least 1% apart), else the middle
    sd = [(abs(y - tgt), x, y) for x, y in seed if x > 0]
    sd.sort()
    x1 = 0.5 * (bad + good)
    slope_log = None                                  # d log delta / d eps from the seed
    pair = [q for q in sd[1:] if abs(q[1] - sd[0][1]) >= 1e-2 * max(q[1], sd[0][1])] if sd else []
    if pair and pair[0][2] != sd[0][2]:
        (_, xa, ya), (_, xb, yb) = sd[0], pair[0]
        slope_log = (yb - ya) / (xb - xa)
        r = xb + (tgt - yb) * (xb - xa) / (yb - ya)
        if inside(r):
            x1 = r
    try:
        s1 = P.eval(x1)
        if s1 == 0:
            return result(False)
        # 2. the other side, 50% past the root as aimed by the slope of the secant through
        #    this point and the cheap curve's bracket that pins it best, or by the seed's
        #    slope of log delta, whichever steps further (uncertified use: aiming only;
        #    convexity biases such secants by a few percent)
        x, lo_, up_ = P.pts[-1]
        f1 = _centre(lo_, up_)
        x2, best = None, math.inf
        for xc, lc, uc in cheap:
            if xc == x or not (uc > 0):
                continue
            sc = (0.5 * (lc + uc) - f1) / (xc - x)            # dF/dx, < 0
            unc = 0.5 * (uc - lc) / abs(xc - x) / abs(sc) if sc < 0 else math.inf
            if unc < min(best, 0.3):
                best, x2 = unc, x + 1.5 * (target - f1) / sc
        if slope_log is not None and slope_log < 0:
            xs = x + 1.5 * (tgt - math.log(f1)) / slope_log
            if x2 is None or abs(xs - x) > abs(x2 - x):
                x2 = xs
        while len(P.pts) < MAX_EVALUATIONS:
            if P.nearest(1) is not None and P.nearest(-1) is not None:
                break
            if x2 is None or not inside(x2):
                x2 = 0.5 * (P.bad + P.good)
            if P.eval(x2) == 0:
                return result(False)
            # still one side: the secant (in log delta) of the two latest precise points,
            # 20% past its root
            (xa, la, ua), (xb, lb, ub) = P.pts[-2], P.pts[-1]
            ya, yb = math.log(_centre(la, ua)), math.log(_centre(lb, ub))
            x2 = xb + 1.2 * (tgt - yb) * (xb - xa) / (yb - ya) if ya != yb and xa != xb \
                else None
        a, b = P.nearest(-1), P.nearest(1)
        if a is None or b is None:
            return result(False)
        # 3. the root from the nearest points on either side: the lesser of the crossings of
        #    the chord of their centres in expm1(eps) (right of the root: convexity) and of
        #    their secant in log delta; one point a few bracket widths (at the measured slope)
        #    below it, on the bad side
        for spread in (3.0, 30.0):
            a, b = P.nearest(-1), P.nearest(1)
            ca, cb = _centre(a[1], a[2]), _centre(b[1], b[2])
            ea, eb = math.expm1(a[0]), math.expm1(b[0])
            root = math.log1p(ea + (ca - target) / (ca - cb) * (eb - ea))
            if ca > cb > 0:
                la, lb = math.log(ca), math.log(cb)
                root = min(root, a[0] + (tgt - la) * (b[0] - a[0]) / (lb - la))
            width = max((a[2] - a[1]) / a[2], (b[2] - b[1]) / b[2])
            k = abs(math.log(ca / cb) / math.log(b[0] / a[0])) if a[0] > 0 else 0.0
            if not k > 0:
                break
            x3 = root * (1 - spread * width / k - 1e-12)
            if not (a[0] < x3 < b[0]) or len(P.pts) >= MAX_EVALUATIONS:
                break
            s3 = P.eval(x3)
            if s3 == 0 or s3 < 0:
                break
        lo, hi = P.ends()
        return lo, hi, P.pts, P.methods, hi - lo <= rel_tol * hi
    except NumericalError:
        return result(False)
