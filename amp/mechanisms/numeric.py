"""Randomizers for numeric data: Duchi et al.'s one bit, square wave and the piecewise mechanism.

Each takes a real input in an interval and has a finite GPARV (Definition 2, Section 5.1): Duchi's
output is one bit, and the other two have piecewise-constant densities with two levels, so the
blanket likelihood ratios take finitely many values and the masses are interval lengths times
density levels. They are not symmetric (the law of a pair depends on the two inputs), so each
class states and proves which pair is worst:

* :class:`Duchi`: ``R(x)`` is affine in ``x``; Theorem 4's bound is jointly convex in the pair,
  so the maximum over ``[-1, 1]^2`` is at a vertex, i.e. the pair ``(-1, 1)`` (or its mirror).
* :class:`SquareWave` and :class:`PiecewiseMechanism`: the law of a pair with less window
  overlap is larger in the convex order, so the worst pair is the one with the smallest overlap
  (the two ends of the input interval).

The convex-order fact used twice (``W`` the blanket output, ``G = a(W) - e^eps b(W)`` with
probability ``gamma``, else 0): if ``L <=_cx L'`` then ``E[(G_1 + ... + G_n)_+]`` is at most the
same with ``G_i ~ L'`` (convex order is preserved by sums of independent copies, and
``x -> x_+`` is convex), so Theorem 4's bound of ``L`` is at most that of ``L'`` for every ``n``
and ``eps``; and convex order is preserved by mixing with a common law. Every class exposes
``pair_law(x0, x1)`` (the blanket law of any pair, for checks) and ``lower_law(x0, x1, x2)``
(Theorem 5's variable of the datasets ``(x0, x2, ..., x2)`` and ``(x1, x2, ..., x2)``).
"""

from __future__ import annotations

import math
import numbers

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.validate import show
from amp.mechanisms.base import Mechanism, dedupe_laws
from amp.mechanisms.gparv import GPARV

__all__ = ["Duchi", "SquareWave", "PiecewiseMechanism", "square_wave_b"]


def _input(name: str, x: object, lo: float, hi: float) -> float:
    """An input of a numeric randomizer: a finite real in ``[lo, hi]``, else ParameterError."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)) \
            or not lo <= float(x) <= hi:
        raise ParameterError(f"{name} must be a real number in [{lo:g}, {hi:g}], got {show(x)}")
    return float(x)


# ---------------------------------------------------------------------------- Duchi
class Duchi(Mechanism):
    """Duchi, Jordan and Wainwright's one-bit mechanism for ``x`` in ``[-1, 1]`` (FOCS 2013;
    JASA 2018): output ``+1`` w.p. ``1/2 + x (e^eps0 - 1) / (2 (e^eps0 + 1))``, else ``-1``
    (the analyst rescales by ``(e^eps0 + 1)/(e^eps0 - 1)``).

    Blanket (Section 3.2): ``omega(y) = inf_x R(x)(y) = 1/(e^eps0 + 1)`` for both outputs, so
    ``gamma = 2/(e^eps0 + 1)``. With ``lam(x) = (1 + x)/2`` the ratios are
    ``R(x)(+1)/omega = lam E + (1 - lam)`` and ``R(x)(-1)/omega = lam + (1 - lam) E``
    (``E = e^eps0``).

    Worst pair (proof). ``R(x) = lam(x) R(1) + (1 - lam(x)) R(-1)``, so for the pair
    ``(x0, x1)`` the blanket ratios are ``a = lam0 a_1 + (1 - lam0) a_{-1}`` and
    ``b = lam1 a_1 + (1 - lam1) a_{-1}``, affine in ``(lam0, lam1)``, against the fixed blanket
    (which is the mechanism's, not the pair's). Theorem 4's bound is
    ``F(lam0, lam1) = E[(sum_i B_i (a(W_i) - e^eps b(W_i)))_+] / n`` with the blanket indicators
    ``B_i`` and outputs ``W_i`` independent of the pair: for each realisation the sum is affine
    in ``(lam0, lam1)`` and ``x -> x_+`` is convex, so ``F`` is jointly convex on ``[0, 1]^2``
    and attains its maximum at a vertex. At ``lam0 = lam1`` the sum is
    ``(1 - e^eps) sum B_i a(W_i) <= 0`` and ``F = 0``; the vertices ``(0, 1)`` and ``(1, 0)``
    give the same law (mirror ``y -> -y``). So the pair ``(-1, 1)`` is worst for every ``n`` and
    ``eps``; its law is 2-RR's, ``(a, b) = (1, E), (E, 1)`` each with mass ``1/(E + 1)``.
    (The same law even dominates every pair's law in the convex order: each is a two-point law,
    masses ``gamma/2``, centred at the common mean, whose spread ``|2 lam0 - 1 - e^eps (2 lam1 -
    1)| (E - 1)`` is largest at the vertex.) ``tests/test_numeric_mechanisms.py`` checks this on
    a grid of pairs and against exact shuffled divergences.

    Theorem 5 (lower bound): the pair ``(-1, 1)`` with the others at ``x2 = 0``, and the
    backgrounds ``x2 = x0`` and ``x2 = x1``.

    Examples
    --------
    >>> m = amp.Duchi(1.0)
    >>> round(m.gamma, 6)              # 2 / (e + 1)
    0.537883
    >>> round(amp.epsilon(m, 10_000, 1e-6).value, 4)
    0.0432
    """

    symmetric = False
    finite = False
    #: ``gparv_laws()`` is one law that dominates every pair's law in the convex order.
    convex_worst = True
    domain = (-1.0, 1.0)

    def __init__(self, eps0: float):
        self.eps0 = V.eps0_value(eps0)
        self.name = "Duchi"

    def _ratios(self, x: float) -> tuple[float, float]:
        """``R(x)(+1) / omega, R(x)(-1) / omega`` (exact for ``x = +-1``)."""
        E = math.exp(self.eps0)
        if x == 1.0:
            return E, 1.0
        if x == -1.0:
            return 1.0, E
        lam = (1.0 + x) / 2
        return lam * E + (1 - lam), lam + (1 - lam) * E

    def prob_plus(self, x: float) -> float:
        """``P(+1 | x) = 1/2 + x (e^eps0 - 1) / (2 (e^eps0 + 1))``."""
        x = _input("x", x, -1.0, 1.0)
        return 0.5 + x * math.tanh(self.eps0 / 2) / 2

    def pair_law(self, x0: float, x1: float) -> GPARV:
        """Blanket law (Theorem 4) of the pair ``(x0, x1)``, any inputs in ``[-1, 1]``."""
        x0, x1 = _input("x0", x0, -1.0, 1.0), _input("x1", x1, -1.0, 1.0)
        w = 1.0 / (math.exp(self.eps0) + 1)
        (a_p, a_m), (b_p, b_m) = self._ratios(x0), self._ratios(x1)
        return GPARV([a_p, a_m], [b_p, b_m], [w, w], self.eps0,
                     f"Duchi pair ({x0:g}, {x1:g}), eps0={self.eps0:g}")

    def lower_law(self, x0: float, x1: float, x2: float, label: str = "") -> GPARV:
        """Theorem 5's variable: ``a = R(x0)(y)/R(x2)(y)``, ``b = R(x1)(y)/R(x2)(y)``,
        ``y ~ R(x2)``."""
        x0, x1 = _input("x0", x0, -1.0, 1.0), _input("x1", x1, -1.0, 1.0)
        x2 = _input("x2", x2, -1.0, 1.0)
        (a_p, a_m), (b_p, b_m), (c_p, c_m) = (self._ratios(x0), self._ratios(x1),
                                              self._ratios(x2))
        w = 1.0 / (math.exp(self.eps0) + 1)
        return GPARV([a_p / c_p, a_m / c_m], [b_p / c_p, b_m / c_m], [w * c_p, w * c_m],
                     self.eps0, label or f"Duchi Theorem 5 triple ({x0:g}, {x1:g}, {x2:g}), "
                                         f"eps0={self.eps0:g}", lower=True)

    def gparv_laws(self) -> list[GPARV]:
        E = math.exp(self.eps0)
        w = 1.0 / (E + 1)
        return [GPARV([1.0, E], [E, 1.0], [w, w], self.eps0,
                      f"Duchi worst pair (-1, 1), eps0={self.eps0:g}")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws of the worst pair ``(-1, 1)``: ``x2 = 0``, then the backgrounds
        ``x2 = x0`` and ``x2 = x1`` (``pair`` may name another pair of inputs)."""
        x0, x1 = (-1.0, 1.0) if pair is None else pair
        tag = f"eps0={self.eps0:g}"
        laws = [self.lower_law(x0, x1, 0.0, f"Duchi Theorem 5, x2 = 0, {tag}")]
        if backgrounds:
            laws += [self.lower_law(x0, x1, x0, f"Duchi Theorem 5 background x2 = x0, {tag}"),
                     self.lower_law(x0, x1, x1, f"Duchi Theorem 5 background x2 = x1, {tag}")]
        return dedupe_laws(laws)

    def describe(self) -> str:
        return f"Duchi one-bit (eps0={self.eps0:g})"


# ---------------------------------------------------------------------------- windows
class _WindowMechanism(Mechanism):
    """Two-level density on ``[A, B]``: ``p = E q`` on the window ``[l(x), l(x) + w]`` of the
    input ``x`` in ``[lo, hi]`` (``l`` increasing and affine), ``q`` elsewhere.

    The blanket is ``omega(y) = inf_x r_x(y)``: ``p`` on the region covered by every window,
    ``[l(hi), l(lo) + w]`` (empty when ``l(hi) >= l(lo) + w``), ``q`` elsewhere. A pair law
    (or Theorem 5 variable) is computed on the cells cut by the windows' ends: on each cell
    every density is constant, the ratios are ``E^(s - s_ref)`` with levels ``s`` in ``{0, 1}``
    and the mass is the cell length times the reference density."""

    symmetric = False
    finite = False
    convex_worst = True
    A: float
    B: float
    lo: float
    hi: float
    width: float
    q: float

    def left(self, x: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _window(self, x: float) -> tuple[float, float]:
        l_ = self.left(x)
        return l_, l_ + self.width

    def common_region(self) -> tuple[float, float] | None:
        """``[l(hi), l(lo) + w]``, the outputs in every window (``None`` when empty or a point),
        where the blanket density is ``p`` instead of ``q``."""
        s, t = self.left(self.hi), self.left(self.lo) + self.width
        return (s, t) if t > s else None

    def _cell_law(self, x0: float, x1: float, ref: float | None, label: str) -> GPARV:
        wins = [self._window(x0), self._window(x1)]
        common = self.common_region()
        if ref is not None:
            wins.append(self._window(ref))
        elif common is not None:
            wins.append(common)
        pts = sorted({min(max(t, self.A), self.B) for w in wins for t in w}
                     | {self.A, self.B})
        E = math.exp(self.eps0)
        a_, b_, p_ = [], [], []
        for s, t in zip(pts[:-1], pts[1:]):
            if t <= s:
                continue
            mid = (s + t) / 2
            lev = [1 if w[0] <= mid <= w[1] else 0 for w in wins]
            s0, s1 = lev[0], lev[1]
            sr = lev[2] if len(wins) == 3 else 0
            a_.append(math.exp(self.eps0 * (s0 - sr)) if s0 != sr else 1.0)
            b_.append(math.exp(self.eps0 * (s1 - sr)) if s1 != sr else 1.0)
            p_.append(self.q * (t - s) * (E if sr else 1.0))
        return GPARV(a_, b_, p_, self.eps0, label, lower=ref is not None)   # Theorem 5: lower

    def pair_law(self, x0: float, x1: float) -> GPARV:
        """Blanket law (Theorem 4) of any pair of inputs, from the interval lengths."""
        x0 = _input("x0", x0, self.lo, self.hi)
        x1 = _input("x1", x1, self.lo, self.hi)
        return self._cell_law(x0, x1, None, f"{self.name} pair ({x0:g}, {x1:g}), "
                                            f"eps0={self.eps0:g}")

    def lower_law(self, x0: float, x1: float, x2: float, label: str = "") -> GPARV:
        """Theorem 5's variable of the datasets ``(x0, x2, ..., x2)``, ``(x1, x2, ..., x2)``."""
        x0 = _input("x0", x0, self.lo, self.hi)
        x1 = _input("x1", x1, self.lo, self.hi)
        x2 = _input("x2", x2, self.lo, self.hi)
        return self._cell_law(x0, x1, x2, label or f"{self.name} Theorem 5 triple "
                                                   f"({x0:g}, {x1:g}, {x2:g}), eps0={self.eps0:g}")

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws of the worst pair (the ends): the others at the middle input, then
        the backgrounds ``x2 = x0`` and ``x2 = x1``."""
        x0, x1 = (self.lo, self.hi) if pair is None else pair
        tag = f"eps0={self.eps0:g}"
        mid = (self.lo + self.hi) / 2
        laws = [self.lower_law(x0, x1, mid, f"{self.name} Theorem 5, x2 = {mid:g}, {tag}")]
        if backgrounds:
            laws += [self.lower_law(x0, x1, x0, f"{self.name} Theorem 5 background x2 = x0, "
                                                f"{tag}"),
                     self.lower_law(x0, x1, x1, f"{self.name} Theorem 5 background x2 = x1, "
                                                f"{tag}")]
        return dedupe_laws(laws)


def square_wave_b(eps0: float) -> float:
    """Li et al.'s default half-width ``b = (eps0 e^eps0 - e^eps0 + 1) / (2 e^eps0 (e^eps0 - 1 -
    eps0))`` (it maximises their mutual-information bound; ``b -> 1/2`` as ``eps0 -> 0`` and
    ``b < 1/2`` for ``eps0 > 0``). Series near 0 avoid the cancellation."""
    e0 = V.eps0_value(eps0)
    if e0 < 1e-3:
        return 0.5 * (1 + 2 * e0 / 3) / (1 + 4 * e0 / 3)
    E = math.exp(e0)
    return (e0 * E - E + 1) / (2 * E * (math.expm1(e0) - e0))


class SquareWave(_WindowMechanism):
    """Square wave mechanism (Li, Wang, Lopuhaä-Zwakenberg, Li and Škorić, SIGMOD 2020).

    Input ``v`` in ``[0, 1]``, output in ``[-b, 1 + b]`` with density ``p`` on ``|y - v| <= b``
    and ``q`` elsewhere, ``p = e^eps0 q``, ``q = 1/(2 b e^eps0 + 1)``. Default ``b``:
    ``square_wave_b`` (the paper's formula).

    Blanket: the windows ``[v - b, v + b]`` all contain ``[1 - b, b]``, which is empty (or a
    point) when ``b <= 1/2``: then ``omega = q`` everywhere and ``gamma = q (1 + 2 b)``. When
    ``b > 1/2``, ``omega = p`` on ``[1 - b, b]``.

    Law of a pair ``(v0, v1)`` (``E = e^eps0``, windows ``W0``, ``W1`` with overlap
    ``L = max(0, 2b - |v0 - v1|)``, common region of length ``o = max(0, 2b - 1)``): atoms
    ``(E, 1)`` and ``(1, E)`` with mass ``q (2b - L)`` each, ``(E, E)`` with ``q (L - o)``, and
    ``(1, 1)`` with ``q (1 + 2b - |W0 u W1|)`` outside both windows plus ``E q o`` on the common
    region.

    Worst pair (proof). Decreasing the overlap by ``m`` moves mass ``q m`` from each of
    ``(E, E)`` and ``(1, 1)`` to each of ``(E, 1)`` and ``(1, E)`` (the common region is in
    every window and does not move). The values of ``G = a - e^eps b`` on the two moved pairs
    are ``{E (1 - e^eps), 1 - e^eps}`` and ``{E - e^eps, 1 - E e^eps}``, equal weights, the
    same sum ``(E + 1)(1 - e^eps)``, and spreads ``(E - 1)(e^eps - 1) <= (E - 1)(e^eps + 1)``:
    the second two-point law is a mean-preserving spread of the first, so the law with less
    overlap is larger in the convex order (module docstring) and Theorem 4's bound is larger for
    every ``n`` and ``eps``. The overlap ``max(0, 2b - |v0 - v1|)`` is smallest at
    ``|v0 - v1| = 1``: the pair ``(0, 1)`` is worst. Its law: ``(E, 1)``, ``(1, E)`` with mass
    ``q min(2b, 1)`` each, ``(1, 1)`` with mass ``q max(0, 1 - 2b) + E q max(0, 2b - 1)``.

    Examples
    --------
    >>> m = amp.SquareWave(1.0)
    >>> round(m.b, 4), round(m.gamma, 4)
    (0.2561, 0.6321)
    """

    def __init__(self, eps0: float, b: float | None = None):
        self.eps0 = V.eps0_value(eps0)
        self.b = square_wave_b(self.eps0) if b is None else V.positive_float("b", b)
        E = math.exp(self.eps0)
        self.q = 1.0 / (2 * self.b * E + 1)
        self.p = E * self.q
        self.A, self.B, self.lo, self.hi = -self.b, 1.0 + self.b, 0.0, 1.0
        self.width = 2 * self.b
        self.name = "SquareWave"
        self.domain = (0.0, 1.0)

    def left(self, x: float) -> float:
        return x - self.b

    def gparv_laws(self) -> list[GPARV]:
        E, q, b = math.exp(self.eps0), self.q, self.b
        side = q * min(2 * b, 1.0)
        rest = q * max(0.0, 1 - 2 * b) + E * q * max(0.0, 2 * b - 1)
        return [GPARV([E, 1.0, 1.0], [1.0, E, 1.0], [side, side, rest], self.eps0,
                      f"SquareWave worst pair (0, 1), b={b:.6g}, eps0={self.eps0:g}")]

    def describe(self) -> str:
        return f"SquareWave (b={self.b:.6g}, eps0={self.eps0:g})"


class PiecewiseMechanism(_WindowMechanism):
    """Piecewise mechanism (Wang, Xiao, Yang, Zhao, Hui, Shin, Shin and Yu, ICDE 2019).

    Input ``t`` in ``[-1, 1]``, output in ``[-C, C]``, ``C = (e^(eps0/2) + 1)/(e^(eps0/2) - 1)``;
    density ``p = (e^eps0 - e^(eps0/2)) / (2 e^(eps0/2) + 2)`` on ``[l(t), r(t)]`` with
    ``l(t) = (C + 1) t / 2 - (C - 1)/2``, ``r(t) = l(t) + C - 1``, and ``p / e^eps0`` elsewhere.

    Blanket: ``l`` runs over ``[-C, 1]`` and ``r`` over ``[-1, C]``, so no output lies in every
    window (``[l(1), r(-1)] = [1, -1]`` is empty): ``omega = p / e^eps0`` everywhere, and
    ``gamma = 2 C p / e^eps0 = e^(-eps0/2)``.

    Worst pair (proof) for Theorem 4 (Section 5.1): as for :class:`SquareWave` (no common
    region here), the law with less
    window overlap ``max(0, C - 1 - (C + 1) |t0 - t1| / 2)`` is larger in the convex order. At
    ``|t0 - t1| = 2`` the overlap is ``max(0, -2) = 0``: the pair ``(-1, 1)`` (windows
    ``[-C, -1]`` and ``[1, C]``) is worst, and so is every pair with disjoint windows (same
    law). With ``h = e^(eps0/2)``: atoms ``(E, 1)``, ``(1, E)`` with mass ``1/(h (h + 1))``
    each and ``(1, 1)`` with mass ``(h - 1)/(h (h + 1))``.

    Examples
    --------
    >>> m = amp.PiecewiseMechanism(2.0)
    >>> round(m.gamma, 6)              # e^(-eps0/2)
    0.367879
    """

    def __init__(self, eps0: float):
        self.eps0 = V.eps0_value(eps0)
        h = math.exp(self.eps0 / 2)
        hm1 = math.expm1(self.eps0 / 2)
        self.C = (h + 1) / hm1
        self.p = h * hm1 / (2 * (h + 1))
        self.q = hm1 / (2 * h * (h + 1))          # p / e^eps0
        self.A, self.B, self.lo, self.hi = -self.C, self.C, -1.0, 1.0
        self.width = self.C - 1
        self.name = "Piecewise"
        self.domain = (-1.0, 1.0)

    def left(self, x: float) -> float:
        if x == -1.0:
            return -self.C
        if x == 1.0:
            return 1.0
        return (self.C + 1) / 2 * x - (self.C - 1) / 2

    def gparv_laws(self) -> list[GPARV]:
        E = math.exp(self.eps0)
        h = math.exp(self.eps0 / 2)
        side = 1.0 / (h * (h + 1))
        rest = math.expm1(self.eps0 / 2) / (h * (h + 1))
        return [GPARV([E, 1.0, 1.0], [1.0, E, 1.0], [side, side, rest], self.eps0,
                      f"Piecewise worst pair (-1, 1), eps0={self.eps0:g}")]

    def describe(self) -> str:
        return f"Piecewise mechanism (eps0={self.eps0:g})"
