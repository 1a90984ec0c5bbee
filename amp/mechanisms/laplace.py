"""The Laplace mechanism on a bounded interval, certified by discretising its GPARV in convex order.

``Laplace(eps0, low, high)``: an input ``x`` in ``[low, high]`` is reported as
``y = x + Z``, ``Z ~ Lap(b)`` with density ``exp(-|z| / b) / (2 b)`` and ``b = (high - low) /
eps0`` (Dwork, McSherry, Nissim and Smith, TCC 2006: the sensitivity of the identity on the
interval is ``high - low``, so the mechanism is ``eps0``-LDP, Definition 1). The paper's published
code has this randomizer too, evaluated by cutting ``[0, 1]`` into 10,000 cells plus two tails
with a density-times-width approximation: an uncertified number. Here it is certified.

Blanket (Section 3.2). For ``x`` in ``[low, high]`` the distance ``|y - x|`` is largest at the
endpoint farther from ``y``, so ``omega(y) = inf_x r_x(y) = min(r_low(y), r_high(y))``: ``r_high``
left of the midpoint, ``r_low`` right of it, and ``gamma = e^(-eps0/2)``. In the normalised
output ``u = (y - low) / (high - low)`` (scale ``1/eps0``), for the pair ``(low, high)`` the
blanket ratios are ``(a, b) = (rho, 1)`` on ``u <= 1/2`` with ``rho = e^(eps0 max(0,
1 - 2u))`` and ``(1, rho)`` on the mirror; the tails ``u < 0`` and ``u > 1`` are the exact
atoms ``(E, 1)`` and ``(1, E)`` of mass ``e^(-eps0)/2`` each (``E = e^eps0``: the ratios are
constant there). Changing variables, ``rho`` has density ``K rho^(-3/2)`` on ``[1, E]`` with
``K = e^(-eps0/2)/4``: a cell ``[s^2, t^2]`` has mass ``2K (t - s)/(s t)`` and mean ``s t``
(closed forms; the same holds on every piece of Theorem 5's variable below).

Certified discretisation (``math-notes.md``). ``E[(G_1 + ... + G_n)_+]`` is convex in the law
of each (independent) ``G_i``, and on a cell ``G = a - e^eps b`` is affine in ``rho``. Upper
law: on every cell the two-point law on the cell's ends with the cell's exact mean (a
mean-preserving spread: larger in the convex order); lower law: the cell's mean as a point mass
(Jensen). Both are eps-free :class:`GPARV` laws, and Theorem 4's exact value for the continuous
law lies between theirs. :class:`amp.backends.continuous.ContinuousDelta` refines the cells (doubling their number)
until ``[lower of the Jensen law, upper of the two-point law]`` meets the asked width, else
raises :class:`NumericalError`.

Float safety. Cell ends are the floats ``s_k`` (the cells are defined by them, so they are
exact); the atoms ``s_k^2`` and ``s_k s_{k+1}`` are within ``u`` of exact (the backends allow
``16 u``). The masses carry a relative error ``<= 8 u`` (a few roundings of exact inputs; then
all are scaled down by ``16 u`` so that a total of 1 stays below 1 in floats) and
the float piece ends ``e^(+-eps0 t/2)`` leave slivers of mass ``<= 2 K u (1/s_lo + 1/s_hi)``.
Replacing one user's law ``L`` by ``L'`` with the same total moves ``E[(S)_+]`` by at most
``int |g| d|L - L'|`` (``x -> E[(x + T)_+]`` is 1-Lipschitz and the difference has total 0; the
slack goes to the atom 0 of users off the blanket, which costs nothing), so ``delta`` moves by at
most ``sum_j |g_j| |w_j - w'_j|``: :meth:`LaplaceLaw.pad` bounds it (with room to spare)
and every bracket is widened by it on both sides.

Worst pair: see :class:`Laplace` (a proof that the endpoints are worst for every ``n``, ``eps``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.mechanisms.base import Mechanism, dedupe_laws
from amp.mechanisms.gparv import GPARV

__all__ = ["Laplace", "LaplaceLaw", "ContinuousGPARV", "DEFAULT_LEVEL", "MAX_LEVEL"]

#: Cells per piece at level ``j``: ``BASE_CELLS * 2**j``, uniform in ``sqrt(rho)``.
BASE_CELLS = 16
#: Level of the fixed law returned by ``gparv_laws()`` / ``lower_laws()``.
DEFAULT_LEVEL = 3
#: Finest level :class:`ContinuousDelta` tries before it refuses.
MAX_LEVEL = 9
#: ``method="auto"``: the cf inversion is tried first from this ``n`` on (below, the dispatcher
#: picks: enumeration, blanket counts or the FFT).
CF_FIRST_N = 2_000
#: Relative error allowed for every computed mass (a few roundings, <= 8 u, and the scaling
#: down by 16 u in :meth:`LaplaceLaw.cells`: 24 u, padded to 64 u).
MASS_REL = 64 * U


@dataclass(frozen=True)
class Piece:
    """Part of a continuous law: ``(a, b) = (ca rho^ea, cb rho^eb)`` (``ea, eb`` in {0, 1},
    so affine in ``rho``) with ``rho = s^2``, ``s`` in ``[s_lo, s_hi]``, and density
    ``K rho^(-3/2)`` (mass ``2K (t - s)/(s t)`` on ``[s^2, t^2]``, mean ``rho`` there ``s t``)."""

    ca: float
    ea: int
    cb: float
    eb: int
    s_lo: float
    s_hi: float
    K: float


@dataclass(frozen=True)
class LaplaceLaw:
    """A continuous GPARV law (blanket pair or Theorem 5 variable) of the Laplace mechanism:
    pieces with density ``K rho^(-3/2)`` plus exact atoms ``(a, b, p)``."""

    pieces: tuple[Piece, ...]
    atoms: tuple[tuple[float, float, float], ...]
    eps0: float
    label: str
    theorem5: bool = False

    def subsampled(self, q: float) -> "LaplaceLaw":
        """``q R + (1 - q) void`` (:mod:`amp.mechanisms.subsampled`): masses times ``q`` and
        the atom ``(1, 1)`` with mass ``1 - q``."""
        if q == 1.0:
            return self
        pieces = tuple(Piece(p.ca, p.ea, p.cb, p.eb, p.s_lo, p.s_hi, q * p.K)
                       for p in self.pieces)
        atoms = tuple((a, b, q * w) for a, b, w in self.atoms) + ((1.0, 1.0, 1.0 - q),)
        return LaplaceLaw(pieces, atoms, self.eps0, f"{self.label}, sampled q={q:g}",
                          self.theorem5)

    # -------------------------------------------------------------- discretisation
    @staticmethod
    def grid(piece: Piece, level: int) -> np.ndarray:
        """Cell ends ``s_k`` of a piece: ``BASE_CELLS 2^level`` cells uniform in ``s =
        sqrt(rho)``, from ``s_lo`` to ``s_hi`` exactly. (For the ``K rho^(-3/2)`` density the
        gap between the two laws is ``~ sum_cells m (rho-width)^2``, smallest for a grid
        uniform in about ``rho^(1/4)`` to ``rho^(1/2)``; uniform in ``sqrt(rho)`` measured best.)"""
        N = BASE_CELLS << level
        s = np.linspace(piece.s_lo, piece.s_hi, N + 1)
        s[0], s[-1] = piece.s_lo, piece.s_hi
        return np.unique(s)

    def cells(self, level: int, side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(a, b, p)`` of the discretised law: ``side="upper"`` two-point laws on the cells'
        ends with the cells' means, ``"lower"`` the means as point masses; plus the atoms."""
        A, B, P = [], [], []
        for pc in self.pieces:
            if not pc.s_hi > pc.s_lo or pc.K <= 0:
                continue
            s = self.grid(pc, level)
            lo, hi = s[:-1], s[1:]
            d = hi - lo
            if side == "upper":
                tot = lo + hi
                w_lo = 2 * pc.K * d / (lo * tot)        # m t / (s + t)
                w_hi = 2 * pc.K * d / (hi * tot)        # m s / (s + t)
                rho = np.concatenate([lo * lo, hi * hi])
                w = np.concatenate([w_lo, w_hi])
            else:
                rho = lo * hi
                w = 2 * pc.K * d / (lo * hi)
            A.append(pc.ca * rho if pc.ea else np.full(rho.size, pc.ca))
            B.append(pc.cb * rho if pc.eb else np.full(rho.size, pc.cb))
            P.append(w)
        for a, b, w in self.atoms:
            A.append(np.array([a]))
            B.append(np.array([b]))
            P.append(np.array([w]))
        # masses scaled down by 16 u (inside MASS_REL): a law of total mass 1 (Theorem 5)
        # keeps a float total below 1, so the slack goes to the atom 0 (see pad)
        return np.concatenate(A), np.concatenate(B), np.concatenate(P) * (1 - 16 * U)

    def law(self, level: int, side: str) -> GPARV:
        """The discretised law at ``level`` as a :class:`GPARV` (``side`` "upper" or "lower";
        the lower one merges atoms downwards, ``lower=True``)."""
        a, b, p = self.cells(level, side)
        cells = sum(len(self.grid(pc, level)) - 1 for pc in self.pieces if pc.s_hi > pc.s_lo)
        tag = "two-point" if side == "upper" else "cell means"
        return ContinuousGPARV(a, b, p, self.eps0,
                               f"{self.label} [{tag}, {cells} cells]",
                               lower=side == "lower", spec=self, level=level)

    def pad(self, eps: float) -> float:
        """Bound on ``|delta(float law) - delta(exact discretised law)|`` at ``eps`` (module
        docstring): ``sum_j |g_j| |w_j - w'_j|`` with ``|g| <= a + e^eps b``, the masses'
        relative error ``MASS_REL`` (8 times the rounding analysis) and the slivers at the
        float piece ends (mass ``<= 8 * 2K u (1/s_lo + 1/s_hi)`` each piece)."""
        c = math.exp(eps)
        tot = 0.0
        for pc in self.pieces:
            if not pc.s_hi > pc.s_lo:
                continue
            amax = pc.ca * (pc.s_hi ** 2 if pc.ea else 1.0)
            bmax = pc.cb * (pc.s_hi ** 2 if pc.eb else 1.0)
            mass = 2 * pc.K * (pc.s_hi - pc.s_lo) / (pc.s_lo * pc.s_hi)
            sliver = 16 * pc.K * U * (1 / pc.s_lo + 1 / pc.s_hi)
            tot += (mass * MASS_REL + sliver) * (amax + c * bmax)
        for a, b, w in self.atoms:
            tot += w * MASS_REL * (a + c * b)
        return tot * (1 + 1e-9)

    @property
    def max_eps(self) -> float:
        """``log max a/b`` over the exact law (the largest ratio sits at a piece end or atom)."""
        r = [a / b for a, b, _ in self.atoms if b > 0]
        for pc in self.pieces:
            if pc.s_hi > pc.s_lo:
                for s in (pc.s_lo, pc.s_hi):
                    a = pc.ca * (s * s if pc.ea else 1.0)
                    r.append(a / (pc.cb * (s * s if pc.eb else 1.0)))
        return max(0.0, math.log(max(r)))


@dataclass(frozen=True)
class ContinuousGPARV(GPARV):
    """A :class:`GPARV` that is the discretisation (at ``level``) of a continuous law ``spec``.

    As a plain law it is valid on its side (the two-point law dominates the continuous one in
    the convex order, the cell means are dominated by it), so every path that takes
    ``gparv_laws()`` (rounds, baselines, mixtures) stays certified; :class:`ContinuousDelta`
    (what :class:`~amp.profile.PrivacyProfile` uses for it) refines ``spec`` instead."""

    spec: LaplaceLaw | None = field(default=None, repr=False, compare=False)
    level: int = field(default=DEFAULT_LEVEL, repr=False, compare=False)


# ---------------------------------------------------------------------------- the mechanism
def _blanket_law(eps0: float, label: str) -> LaplaceLaw:
    """Blanket law of the endpoint pair (module docstring)."""
    K = math.exp(-eps0 / 2) / 4
    E = math.exp(eps0)
    h = math.exp(eps0 / 2)
    tail = math.exp(-eps0) / 2
    pieces = (Piece(1.0, 1, 1.0, 0, 1.0, h, K), Piece(1.0, 0, 1.0, 1, 1.0, h, K))
    return LaplaceLaw(pieces, ((E, 1.0, tail), (1.0, E, tail)), eps0, label)


def _triple_law(eps0: float, t: float, label: str) -> LaplaceLaw:
    """Theorem 5's variable for the inputs ``(low, high)`` and the others at the normalised
    ``x2 = t`` in ``[0, 1]``: ``a = r_low / r_x2``, ``b = r_high / r_x2``, ``y ~ r_x2``.

    Pieces (``u`` the normalised output): ``u < 0``: the atom ``(e^(eps0 t), e^(eps0 (t - 1)))``
    with mass ``e^(-eps0 t)/2``; ``[0, t]``: ``a = rho`` in ``[e^(-eps0 t), e^(eps0 t)]``,
    ``b = e^(eps0 (t - 1))``, ``K = e^(-eps0 t/2)/4``; ``[t, 1]``: ``a = e^(-eps0 t)``,
    ``b = rho`` in ``[e^(eps0 (t - 1)), e^(eps0 (1 - t))]``, ``K = e^(-eps0 (1 - t)/2)/4``;
    ``u > 1``: the atom ``(e^(-eps0 t), e^(eps0 (1 - t)))`` with mass ``e^(-eps0 (1 - t))/2``."""
    e, tc = eps0, 1.0 - t
    pieces = (Piece(1.0, 1, math.exp(-e * tc), 0, math.exp(-e * t / 2), math.exp(e * t / 2),
                    math.exp(-e * t / 2) / 4),
              Piece(math.exp(-e * t), 0, 1.0, 1, math.exp(-e * tc / 2), math.exp(e * tc / 2),
                    math.exp(-e * tc / 2) / 4))
    atoms = ((math.exp(e * t), math.exp(-e * tc), math.exp(-e * t) / 2),
             (math.exp(-e * t), math.exp(e * tc), math.exp(-e * tc) / 2))
    return LaplaceLaw(pieces, atoms, eps0, label, theorem5=True)


def _finite(name: str, x: object) -> float:
    """A finite real number, else ParameterError."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(x)):
        raise ParameterError(f"{name} must be a finite real number, got {x!r}")
    return float(x)


class Laplace(Mechanism):
    """The Laplace mechanism on ``[low, high]`` (Dwork, McSherry, Nissim and Smith, TCC 2006).

    Input ``x`` in ``[low, high]``, output ``y = x + Lap(b)`` with density
    ``r_x(y) = exp(-|y - x| / b) / (2 b)``, ``b = (high - low) / eps0``: ``eps0``-LDP
    (Definition 1), since ``|y - x| - |y - x'| <= high - low``. The paper's published code
    evaluates it by cutting ``[0, 1]`` into 10,000 cells plus two tails (density times width,
    uncertified); here Theorem 4's bound of its continuous GPARV is bracketed in the convex
    order (module docstring), and the bracket is refined until it meets the asked width.

    Blanket (Section 3.2): ``omega(y) = min(r_low(y), r_high(y))`` (for ``x`` in the interval
    the distance ``|y - x|`` is largest at the endpoint farther from ``y``), ``gamma =
    e^(-eps0/2)``.

    Worst pair (proof). Normalise to ``[0, 1]`` (scale ``1/eps0``), write ``P_x`` for the law of
    ``r_x`` and ``Omega`` for the blanket measure. For the pair ``(u, v)`` the GPARV at ``eps``
    has mean ``1 - e^eps`` (Property 2.1) for every pair, and for ``t`` real
    ``E[(G - t)_+] = H_{u,v}(e^eps, t) + (1 - gamma)(-t)_+`` when ``t >= 0``, where
    ``H_{u,v}(al, be) = int (r_u - al r_v - be omega)_+ = sup_A [P_u(A) - al P_v(A) -
    be Omega(A)]``; for ``t = -s < 0``, ``E[(G - t)_+] = E[G] - t + e^eps H_{v,u}(e^-eps,
    s e^-eps)``. So if ``H_{u,v}(al, be) <= H_{0,1}(al, be) = H_{1,0}(al, be)`` (mirror
    ``y -> 1 - y``) for all ``al, be >= 0``, every pair's GPARV is below the endpoints' in the
    convex order, and Theorem 4's bound (convex in each user's law, module docstring of
    :mod:`amp.mechanisms.numeric`) is largest at the endpoints for every ``n`` and ``eps``.
    Proof of the inequality: by the mirror assume ``u <= 1/2``. The optimal set is
    ``S = {f < 1}``, ``f = al r_v/r_u + be omega/r_u``; ``omega/r_u`` is non-decreasing (``u <=
    1/2``), ``r_v/r_u`` is non-decreasing if ``u <= v`` and is non-increasing, constant outside
    ``[v, u]``, if ``v < u``. We map ``S`` to a set ``A`` for the pair ``(0, 1)`` or ``(1, 0)``
    with ``P_0(A)`` (resp. ``P_1(A)``) ``= P_u(S)``, the other input's mass ``<= P_v(S)`` and
    ``Omega(A) <= Omega(S)`` (``omega`` is symmetric about ``1/2`` and increasing left of it):

    * ``u <= v``: ``f`` is non-decreasing, ``S = (-inf, s)``; ``A = S - u`` for ``(0, 1)``:
      ``P_1(A) = P_{1+u}(S) <= P_v(S)`` (``1 + u >= v``), ``Omega(A) <= Omega(S)``.
    * ``v < u``: ``f`` is constant on ``(-inf, v]``, decreasing on ``[v, u]``, increasing on
      ``[u, 1/2]``, constant after, so ``S`` is empty, all of the line, or an interval around
      ``u`` with ends ``s1`` in ``[v, u]`` (or ``-inf``) and ``s2`` in ``[u, 1/2]`` (or
      ``+inf``). If ``s2 <= 1/2``: reflect, ``A = 1 + u - S`` for ``(1, 0)``: ``P_1(A) =
      P_u(S)``, ``P_0(A) = P_{1+u}(S) <= P_v(S)`` (``1 + u`` is farther from ``S`` than ``v``:
      ``1 + u - s2 >= u + 1/2 > u - v >= s1 - v``; if ``s1 = -inf``, ``P_v(S) >= 1/2 >
      P_{1+u}(S)``), and ``Omega(A) = Omega(S - u) <= Omega(S)`` (``S`` left of ``1/2``). If
      ``s2 = +inf``: translate, ``A = S + 1 - u``: ``P_0(A) = P_{u-1}(S) <= P_v(S)`` (``S``
      is a right half-line, ``u - 1 < v``) and ``Omega(A) = Omega((-inf, u - s1)) <=
      Omega((-inf, 1 - s1)) = Omega(S)``.

    In each case ``H_{u,v} = P_u(S) - al P_v(S) - be Omega(S) <= H`` of the endpoint pair.
    ``tests/test_laplace.py`` checks ``H`` on a grid of pairs by numerical integration and
    Theorem 4's bound of interior pairs against the endpoints'.

    Theorem 5 (lower bound): the pair ``(low, high)`` with the others at the midpoint, and the
    backgrounds ``x2 = low`` and ``x2 = high``; each is bracketed in the same way (its pieces
    are again ``K rho^(-3/2)`` densities), and its lower end (cell means, Jensen) is used.

    Parameters
    ----------
    eps0 : float
        Local privacy level, ``> 0``.
    low, high : float
        The input interval, ``low < high``. Theorem 4's and Theorem 5's laws do not depend on
        it (only on ``eps0``): the mechanism is scale and shift invariant.

    Examples
    --------
    >>> import math
    >>> m = amp.Laplace(1.0)
    >>> round(m.gamma, 6) == round(math.exp(-0.5), 6)       # e^(-eps0/2)
    True
    >>> r = amp.epsilon(m, 10_000, 1e-6, rel_tol=1e-3)
    >>> r.lower <= r.upper <= r.lower * 1.001
    True
    """

    symmetric = False
    finite = False
    #: ``gparv_laws()`` is one law that dominates every pair's law in the convex order.
    convex_worst = True

    def __init__(self, eps0: float, low: float = 0.0, high: float = 1.0):
        self.eps0 = V.eps0_value(eps0)
        lo_, hi_ = _finite("low", low), _finite("high", high)
        if not hi_ > lo_:
            raise ParameterError(f"high must be > low, got low={lo_:g}, high={hi_:g}")
        self.low, self.high = lo_, hi_
        self.b = (hi_ - lo_) / self.eps0
        self.domain = (lo_, hi_)
        self.name = "Laplace"

    def density(self, x: float, y: float) -> float:
        """``r_x(y) = exp(-|y - x| / b) / (2 b)`` for an input ``x`` in ``[low, high]``."""
        if not self.low <= x <= self.high:
            raise ParameterError(f"x must be in [{self.low:g}, {self.high:g}], got {x!r}")
        return math.exp(-abs(y - x) / self.b) / (2 * self.b)

    def continuous_law(self) -> LaplaceLaw:
        """The continuous blanket law of the worst pair ``(low, high)`` (module docstring)."""
        return _blanket_law(self.eps0, f"Laplace worst pair (low, high), eps0={self.eps0:g}")

    def gparv_laws(self) -> list[GPARV]:
        return [self.continuous_law().law(DEFAULT_LEVEL, "upper")]

    def lower_law(self, x2: float, label: str = "") -> LaplaceLaw:
        """Theorem 5's continuous variable for ``(low, high)`` with the others at ``x2``."""
        if not self.low <= x2 <= self.high:
            raise ParameterError(f"x2 must be in [{self.low:g}, {self.high:g}], got {x2!r}")
        t = (x2 - self.low) / (self.high - self.low)
        return _triple_law(self.eps0, t, label or f"Laplace Theorem 5 triple (low, high, "
                                                   f"{x2:g}), eps0={self.eps0:g}")

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws of the pair ``(low, high)`` (the only pair offered: ``pair`` must be
        ``None``): the others at the midpoint, then ``x2 = low`` and ``x2 = high``."""
        if pair is not None and tuple(pair) != (self.low, self.high):
            raise ParameterError("Laplace's Theorem 5 laws are for the pair (low, high)")
        tag = f"eps0={self.eps0:g}"
        mid = (self.low + self.high) / 2
        xs = [(mid, f"Laplace Theorem 5, x2 = midpoint, {tag}")]
        if backgrounds:
            xs += [(self.low, f"Laplace Theorem 5 background x2 = low, {tag}"),
                   (self.high, f"Laplace Theorem 5 background x2 = high, {tag}")]
        return dedupe_laws([self.lower_law(x, lab).law(DEFAULT_LEVEL, "lower")
                            for x, lab in xs])

    def describe(self) -> str:
        if (self.low, self.high) == (0.0, 1.0):
            return f"Laplace (eps0={self.eps0:g})"
        return f"Laplace on [{self.low:g}, {self.high:g}] (eps0={self.eps0:g})"
