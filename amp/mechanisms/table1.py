"""Local randomizers: the paper's Table 1 rows and exact finite-domain mechanisms.

Every mechanism offers

* ``eps0``: its local privacy level;
* ``gparv_laws()``: the eps-free laws (:class:`amp.mechanisms.gparv.GPARV`) of the pairs ``(x0, x1)`` over
  which the blanket bound (Theorem 4) must be maximised. Symmetric mechanisms return one law
  (every ordered pair has the same law); a generic matrix returns one law per distinct pair;
* ``lower_laws()``: laws of Theorem 5's variable for dataset pairs
  ``X0 = (x0, x2, ..., x2)``, ``X1 = (x1, x2, ..., x2)``, first with a third value ``x2``
  (the paper's pair), then the backgrounds ``x2 = x0`` and ``x2 = x1`` (any neighbouring pair
  is a valid lower bound); the lower bound is their maximum;
* ``matrix()`` for finite mechanisms: rows are inputs, columns outputs.

Two forms exist for each Table 1 mechanism (see ``../shared/notes/math-notes.md``):

* ``d=None`` (default): the paper's Table 1 row, the large-domain limit, in closed form;
* ``d=<int>``: the exact finite mechanism over ``d`` inputs (k-RR is always exact). Its blanket
  can be larger than Table 1's (e.g. the all-ones RAPPOR output, constant hash functions, the
  all-ones Hadamard column), which gives a tighter valid bound for that concrete mechanism.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.mechanisms.base import Mechanism
from amp.mechanisms.gparv import GPARV

__all__ = ["KRR", "RAPPOR", "OUE", "OLH", "BLH", "HadamardResponse", "bit_backgrounds"]


def bit_backgrounds(eps0: float, p_own: float, p_other: float, name: str) -> list[GPARV]:
    """Theorem 5 laws of the backgrounds ``x2 = x0`` and ``x2 = x1`` for a mechanism whose
    likelihood ratios are ``R(x)(y) / R(x')(y) = e^(eps0 (u_x - u_x'))`` with one bit ``u_x``
    per input (unary encodings: bit ``x`` of ``y``; local hashing and Hadamard response:
    ``[y in the set of x]``), and, under ``y ~ R(x2)``, ``u_x2 ~ Bern(p_own)`` independent of
    ``u_x ~ Bern(p_other)`` for ``x != x2``.

    ``x2 = x0`` (datasets ``(x0, x0, ..., x0)`` and ``(x1, x0, ..., x0)``): ``a = 1``,
    ``b = e^(eps0 (u1 - u0))``; ``x2 = x1``: ``a = e^(eps0 (u0 - u1))``, ``b = 1``. Appendix B's
    proof of Theorem 5 does not use ``x2 != x0, x1``, so these are valid lower bounds too.
    """
    laws = []
    for own, tag in ((0, "x2 = x0"), (1, "x2 = x1")):
        a_, b_, p_ = [], [], []
        for u_own, u_oth in itertools.product((0, 1), repeat=2):
            r = math.exp(eps0 * (u_oth - u_own)) if u_oth != u_own else 1.0
            a_.append(1.0 if own == 0 else r)
            b_.append(r if own == 0 else 1.0)
            p_.append((p_own if u_own else 1 - p_own) * (p_other if u_oth else 1 - p_other))
        laws.append(GPARV(a_, b_, p_, eps0, f"{name} Theorem 5 background {tag}, "
                                            f"eps0={eps0:g}", lower=True))
    return laws


# ---------------------------------------------------------------------------- k-RR
class KRR(Mechanism):
    """k-ary randomized response (Warner 1965; Example 4.0), exact for every ``k >= 2``.

    ``kRR(x) = x`` w.p. ``(e^eps0 - 1)/(e^eps0 + k - 1)``, else uniform on ``[k]``.
    Table 1 row: atoms ``1 - e^(eps+eps0)`` and ``e^eps0 - e^eps`` with ``p``, ``1 - e^eps`` with
    ``(k - 2) p``, ``0`` with ``(e^eps0 - 1) p``, where ``p = 1/(e^eps0 + k - 1)``.
    Parameters: ``eps0 > 0``; the domain size ``k >= 2`` (keyword-only).

    Examples
    --------
    >>> round(amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6).value, 4)
    0.3805
    """

    symmetric = True

    def __init__(self, eps0: float, *, k: int):
        self.eps0 = V.eps0_value(eps0)
        self.k = V.int_at_least("k", k, 2)
        self.name = f"{self.k}-RR"

    @property
    def p(self) -> float:
        """``p = 1/(e^eps0 + k - 1)``, the blanket mass of each output (Example 4.0)."""
        return 1.0 / (math.exp(self.eps0) + self.k - 1)

    def matrix(self) -> np.ndarray:
        e0, p = math.exp(self.eps0), self.p
        M = np.full((self.k, self.k), p)
        np.fill_diagonal(M, e0 * p)
        return M

    def gparv_laws(self) -> list[GPARV]:
        e0, p, k = math.exp(self.eps0), self.p, self.k
        return [GPARV([e0, 1.0, 1.0], [1.0, e0, 1.0], [p, p, (k - 2) * p], self.eps0,
                      f"{self.name}, eps0={self.eps0:g}")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws: the paper's pair (others hold a third value ``x2``; needs
        ``k >= 3``), then the backgrounds ``x2 = x0`` and ``x2 = x1`` (any ``k >= 2``)."""
        if pair is not None:
            # k-RR is symmetric: every pair of distinct inputs gives this law; still check it
            ok = (isinstance(pair, (tuple, list)) and len(pair) == 2
                  and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                          and 0 <= int(x) < self.k for x in pair) and pair[0] != pair[1])
            if not ok:
                raise ParameterError(f"pair must be two distinct inputs in [0, {self.k - 1}], "
                                     f"got {show(pair)}")
        e0, p, k = math.exp(self.eps0), self.p, self.k
        tag = f"eps0={self.eps0:g}"
        laws = []
        if k >= 3:
            # y ~ R(x2): y = x2 w.p. e0 p, y = x0 or x1 w.p. p each, another value w.p. (k-3) p
            laws.append(GPARV([1 / e0, e0, 1.0, 1.0], [1 / e0, 1.0, e0, 1.0],
                              [e0 * p, p, p, (k - 3) * p], self.eps0,
                              f"{self.name} Theorem 5, {tag}", lower=True))
        if not backgrounds:
            if not laws:
                raise ParameterError(f"k must be >= 3 for the Theorem 5 pair with a third "
                                     f"value, got {self.k}")
            return laws
        # x2 = x0: y = x0 w.p. e0 p (b = 1/e0), y = x1 w.p. p (b = e0), else (1, 1); x2 = x1
        # is its mirror image
        laws.append(GPARV([1.0, 1.0, 1.0], [1 / e0, e0, 1.0], [e0 * p, p, (k - 2) * p],
                          self.eps0, f"{self.name} Theorem 5 background x2 = x0, {tag}",
                          lower=True))
        laws.append(GPARV([1 / e0, e0, 1.0], [1.0, 1.0, 1.0], [e0 * p, p, (k - 2) * p],
                          self.eps0, f"{self.name} Theorem 5 background x2 = x1, {tag}",
                          lower=True))
        return laws

    def describe(self) -> str:
        return f"{self.name} (eps0={self.eps0:g})"


# ---------------------------------------------------------------------------- unary encodings
class _UnaryEncoding(Mechanism):
    """Unary encoding: input ``x`` in ``[d]`` -> ``d`` independent bits, bit ``x`` is 1 w.p.
    ``p1``, every other bit w.p. ``q``. ``eps0 = log(p1 (1 - q) / ((1 - p1) q))``."""

    symmetric = True
    p1: float
    q: float
    p1c: float               # 1 - p1, computed without cancellation
    qc: float                # 1 - q
    MAX_MATRIX_D = 14

    def __init__(self, eps0: float, *, d: int | None = None):
        self.eps0 = V.eps0_value(eps0)
        self.d = None if d is None else V.int_at_least("d", d, 2)
        self.finite = self.d is not None
        self._set_probs()

    def _set_probs(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _r(self, bit: int) -> float:
        """Ratio ``R(x)(y) / base(y)`` as a function of the bit ``y_x``."""
        return self.p1 / self.q if bit else self.p1c / self.qc

    def _rr(self, u: int, v: int) -> float:
        """``_r(u) / _r(v)``: ``e^(eps0 (u - v))`` exactly (``r1 / r0 = e^eps0`` by design),
        computed from ``eps0`` (one rounding) rather than as a ratio of ratios."""
        return math.exp(self.eps0 * (u - v)) if u != v else 1.0

    def matrix(self) -> np.ndarray:
        if self.d is None:
            return super().matrix()
        if self.d > self.MAX_MATRIX_D:
            raise ParameterError(f"d = {self.d} too large for an explicit 2^d matrix "
                                 f"(max {self.MAX_MATRIX_D}); the closed forms need no matrix")
        d = self.d
        Y = np.array(list(itertools.product([0, 1], repeat=d)), dtype=float)  # 2^d x d
        base = np.prod(np.where(Y == 1, self.q, self.qc), axis=1)
        M = np.empty((d, Y.shape[0]))
        for x in range(d):
            M[x] = base * np.where(Y[:, x] == 1, self.p1 / self.q, self.p1c / self.qc)
        return M

    def gparv_laws(self) -> list[GPARV]:
        r1, r0 = self._r(1), self._r(0)
        q = self.q
        P0 = {1: q, 0: self.qc}
        a_, b_, p_ = [], [], []
        # blanket c(y) = base(y) * min_x r(y_x); min is r(0) unless every bit of y is 1.
        if self.d is None:
            flags = [(0, 1.0)]
        else:
            m1 = q ** (self.d - 2)
            flags = [(0, 1.0 - m1), (1, m1)]
        for u in (0, 1):
            for w in (0, 1):
                for all_ones_rest, mass in flags:
                    if mass <= 0:
                        continue
                    bmin = 1 if (u == 1 and w == 1 and all_ones_rest) else 0
                    rmin = r1 if bmin else r0
                    a_.append(self._rr(u, bmin))
                    b_.append(self._rr(w, bmin))
                    p_.append(P0[u] * P0[w] * mass * rmin)
        form = "Table 1" if self.d is None else f"d={self.d}"
        return [GPARV(a_, b_, p_, self.eps0, f"{self.name} ({form}), eps0={self.eps0:g}")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws: the paper's pair (a third value ``x2``; needs ``d >= 3`` for the
        finite form), then the backgrounds ``x2 = x0`` and ``x2 = x1``."""
        q, p1 = self.q, self.p1
        laws = []
        if self.d is None or self.d >= 3:
            a_, b_, p_ = [], [], []
            for u0, u1, u2 in itertools.product((0, 1), repeat=3):
                prob = ((q if u0 else self.qc) * (q if u1 else self.qc)
                        * (p1 if u2 else self.p1c))
                a_.append(self._rr(u0, u2))
                b_.append(self._rr(u1, u2))
                p_.append(prob)
            laws.append(GPARV(a_, b_, p_, self.eps0,
                              f"{self.name} Theorem 5, eps0={self.eps0:g}", lower=True))
        if not backgrounds and not laws:
            raise ParameterError("the Theorem 5 pair with a third value needs d >= 3")
        return laws + (bit_backgrounds(self.eps0, p1, q, self.name) if backgrounds else [])

    def describe(self) -> str:
        form = "Table 1 large-domain row" if self.d is None else f"d={self.d}"
        return f"{self.name} ({form}, eps0={self.eps0:g})"


class RAPPOR(_UnaryEncoding):
    """Basic one-time RAPPOR (Erlingsson et al. 2014): each bit flipped with probability
    ``1/(e^(eps0/2)+1)``. ``RAPPOR(eps0)``: Table 1's row; ``RAPPOR(eps0, d=d)``: exact.

    Examples
    --------
    >>> round(amp.epsilon(amp.RAPPOR(4.0), 10_000, 1e-6).value, 4)
    0.3611
    """

    name = "RAPPOR"

    def _set_probs(self) -> None:
        h = math.exp(self.eps0 / 2)
        self.p1 = h / (h + 1)
        self.q = 1 / (h + 1)
        self.p1c = 1 / (h + 1)
        self.qc = h / (h + 1)


class OUE(_UnaryEncoding):
    """Optimized unary encoding (Wang et al. 2017): ``p1 = 1/2``, ``q = 1/(e^eps0 + 1)``.
    ``OUE(eps0)``: Table 1's row; ``OUE(eps0, d=d)``: the exact mechanism over ``[d]``.

    Examples
    --------
    >>> round(amp.epsilon(amp.OUE(4.0), 10_000, 1e-6).value, 4)
    0.2788
    """

    name = "OUE"

    def _set_probs(self) -> None:
        E = math.exp(self.eps0)
        self.p1 = 0.5
        self.q = 1 / (E + 1)
        self.p1c = 0.5
        self.qc = E / (E + 1)


# ---------------------------------------------------------------------------- local hashing
class OLH(Mechanism):
    """Local hashing with ``g`` buckets (Wang et al. 2017); ``g = 2`` is BLH.

    Output ``(h, y)``: ``h`` uniform from the hash family, ``y = h(x)`` w.p.
    ``e^eps0/(e^eps0 + g - 1)``, each other bucket w.p. ``1/(e^eps0 + g - 1)``.
    Large-domain form (``d=None``): hash values of distinct inputs are independent and
    uniform and no hash is constant (Table 1's BLH row for ``g = 2``). Finite form: the full
    family of all ``g^d`` functions ``[d] -> [g]``, whose constant functions enlarge the blanket.
    Parameters: ``eps0 > 0``; keyword-only ``g >= 2`` and ``d`` (``None``: Table 1 form).

    Examples
    --------
    >>> round(amp.epsilon(amp.OLH(4.0, g=5), 10_000, 1e-6).value, 4)
    0.3544
    """

    symmetric = True
    MAX_MATRIX_COLS = 200_000

    def __init__(self, eps0: float, *, g: int = 2, d: int | None = None):
        self.eps0 = V.eps0_value(eps0)
        self.g = V.int_at_least("g", g, 2)
        self.d = None if d is None else V.int_at_least("d", d, 2)
        self.finite = self.d is not None
        self.name = "BLH" if self.g == 2 else f"OLH(g={self.g})"

    def matrix(self) -> np.ndarray:
        if self.d is None:
            return super().matrix()
        g, d = self.g, self.d
        ncols = g ** d * g
        if ncols > self.MAX_MATRIX_COLS:
            raise ParameterError(f"g^d * g = {ncols} outputs is too many for an explicit matrix")
        e0 = math.exp(self.eps0)
        H = np.array(list(itertools.product(range(g), repeat=d)))   # g^d x d
        M = np.empty((d, H.shape[0], g))
        for x in range(d):
            hit = H[:, x][:, None] == np.arange(g)[None, :]
            M[x] = np.where(hit, e0, 1.0) / (e0 + g - 1) / H.shape[0]
        return M.reshape(d, -1)

    def gparv_laws(self) -> list[GPARV]:
        e0, g = math.exp(self.eps0), self.g
        Z = e0 + g - 1
        if self.d is None:
            gam = g / Z
            probs = {(1, 1): 1 / g**2, (1, 0): (g - 1) / g**2, (0, 1): (g - 1) / g**2,
                     (0, 0): (g - 1) ** 2 / g**2}
            a_ = [e0 if u else 1.0 for (u, w) in probs]
            b_ = [e0 if w else 1.0 for (u, w) in probs]
            p_ = [gam * v for v in probs.values()]
            label = f"{self.name} (Table 1), eps0={self.eps0:g}"
        else:
            d = self.d
            # counts of (h, y) pairs over g^(d+1), split by (u, w, constant)
            tot = float(g) ** (d + 1)
            n11 = float(g) ** (d - 1)
            cnt = {(1, 1, 0): n11 - g, (1, 1, 1): float(g),
                   (1, 0, 0): (g - 1) * n11, (0, 1, 0): (g - 1) * n11,
                   (0, 0, 0): (g - 1) ** 2 * n11}
            a_, b_, p_ = [], [], []
            for (u, w, const), c in cnt.items():
                if c <= 0:
                    continue
                if const:
                    a_.append(1.0), b_.append(1.0), p_.append(c / tot * g * e0 / Z)
                else:
                    a_.append(e0 if u else 1.0), b_.append(e0 if w else 1.0)
                    p_.append(c / tot * g / Z)
            label = f"{self.name} (d={d}), eps0={self.eps0:g}"
        return [GPARV(a_, b_, p_, self.eps0, label)]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        """Theorem 5 laws: the paper's pair (a third value ``x2``; needs ``d >= 3`` for the
        finite form), then the backgrounds ``x2 = x0`` and ``x2 = x1``."""
        e0, g = math.exp(self.eps0), self.g
        Z = e0 + g - 1
        laws = []
        if self.d is None or self.d >= 3:
            f = {1: e0, 0: 1.0}
            a_, b_, p_ = [], [], []
            for u0, u1, u2 in itertools.product((0, 1), repeat=3):
                pu2 = e0 / Z if u2 else (g - 1) / Z
                pu0 = 1 / g if u0 else (g - 1) / g
                pu1 = 1 / g if u1 else (g - 1) / g
                a_.append(f[u0] / f[u2]), b_.append(f[u1] / f[u2]), p_.append(pu0 * pu1 * pu2)
            laws.append(GPARV(a_, b_, p_, self.eps0,
                              f"{self.name} Theorem 5, eps0={self.eps0:g}", lower=True))
        if not backgrounds and not laws:
            raise ParameterError("the Theorem 5 pair with a third value needs d >= 3")
        return laws + (bit_backgrounds(self.eps0, e0 / Z, 1 / g, self.name) if backgrounds
                       else [])

    def describe(self) -> str:
        form = "Table 1 large-domain row" if self.d is None else f"d={self.d}"
        return f"{self.name} ({form}, eps0={self.eps0:g})"


class BLH(OLH):
    """Binary local hashing (Wang et al. 2017): :class:`OLH` with ``g = 2`` buckets.

    ``BLH(eps0)`` is Table 1's BLH row; ``BLH(eps0, d=d)`` the exact finite form over ``[d]``.

    Examples
    --------
    >>> round(amp.epsilon(amp.BLH(4.0), 10_000, 1e-6).value, 4)
    0.2848
    """

    def __init__(self, eps0: float, *, d: int | None = None):
        super().__init__(eps0, g=2, d=d)


# ---------------------------------------------------------------------------- Hadamard
class HadamardResponse(Mechanism):
    """Hadamard response (Acharya et al. 2019).

    Input ``x`` in ``[d]`` uses row ``x + 1`` of the ``K x K`` Sylvester Hadamard matrix,
    ``K = 2^ceil(log2(d + 1))``; ``C_x = {j : H[x+1, j] = +1}`` (size ``K/2``). Output ``j`` is
    uniform on ``C_x`` w.p. ``e^eps0/(e^eps0 + 1)``, else uniform on its complement.
    Large-domain form (``d=None``): Table 1's HR row (same as BLH): pairwise-independent sets
    and no column shared by every input. The finite form includes column 0 (all ones), which
    belongs to every ``C_x`` and enlarges the blanket. Parameters: ``eps0 > 0``, ``d``.

    Examples
    --------
    >>> amp.HadamardResponse(4.0, d=5).describe()
    'HR (d=5, K=8, eps0=4)'
    """

    MAX_K = 4096

    def __init__(self, eps0: float, *, d: int | None = None):
        self.eps0 = V.eps0_value(eps0)
        self.d = None if d is None else V.int_at_least("d", d, 2)
        self.finite = self.d is not None
        self.symmetric = self.d is None
        self.name = "HR"

    @property
    def K(self) -> int:
        """Hadamard size ``2^ceil(log2(d + 1))``."""
        if self.d is None:
            raise ParameterError("K is defined only for a finite domain size d")
        return 1 << int(math.ceil(math.log2(self.d + 1)))

    def matrix(self) -> np.ndarray:
        if self.d is None:
            return super().matrix()
        K = self.K
        if K > self.MAX_K:
            raise ParameterError(f"K = {K} too large for an explicit matrix (max {self.MAX_K})")
        H = np.array([[1]])
        while H.shape[0] < K:
            H = np.block([[H, H], [H, -H]])
        e0 = math.exp(self.eps0)
        rows = H[1:self.d + 1]
        return np.where(rows == 1, e0, 1.0) * 2 / (K * (e0 + 1))

    def gparv_laws(self) -> list[GPARV]:
        if self.d is not None:
            return super().gparv_laws()
        e0 = math.exp(self.eps0)
        p = 1 / (2 * (e0 + 1))
        return [GPARV([1.0, e0, 1.0, e0], [1.0, 1.0, e0, e0], [p, p, p, p], self.eps0,
                      f"HR (Table 1), eps0={self.eps0:g}")]

    def lower_laws(self, pair=None, *, backgrounds: bool = True) -> list[GPARV]:
        if self.d is not None:
            return super().lower_laws(pair, backgrounds=backgrounds)
        e0 = math.exp(self.eps0)
        f = {1: e0, 0: 1.0}
        a_, b_, p_ = [], [], []
        for u0, u1, u2 in itertools.product((0, 1), repeat=3):
            pu2 = e0 / (e0 + 1) if u2 else 1 / (e0 + 1)
            a_.append(f[u0] / f[u2]), b_.append(f[u1] / f[u2]), p_.append(0.25 * pu2)
        return ([GPARV(a_, b_, p_, self.eps0, f"HR Theorem 5, eps0={self.eps0:g}", lower=True)]
                + (bit_backgrounds(self.eps0, e0 / (e0 + 1), 0.5, "HR") if backgrounds else []))

    def describe(self) -> str:
        form = "Table 1 large-domain row" if self.d is None else f"d={self.d}, K={self.K}"
        return f"HR ({form}, eps0={self.eps0:g})"
