"""The generalized privacy amplification random variable (GPARV), as an eps-free law.

For a pair of inputs ``(x0, x1)`` of a local randomizer ``R`` with blanket ``c(y) = min_x R(x)(y)``
and ``gamma = sum_y c(y)`` (Section 3.2), the GPARV of Definition 2 (Section 5.1) is

    G_eps = a(W) - e^eps * b(W)  with probability gamma, W ~ omega = c / gamma,
    G_eps = 0                    with probability 1 - gamma,

where ``a(y) = R(x0)(y) / c(y)`` and ``b(y) = R(x1)(y) / c(y)`` are the blanket likelihood ratios,
both in ``[1, e^eps0]`` for an eps0-LDP randomizer.  The law of the pair ``(a, b)`` does not depend
on ``eps``, so :class:`GPARV` stores it once and produces the atoms of ``G_eps`` for any ``eps``.

The same form also carries the random variable of Theorem 5 (the lower bound): there ``a, b`` are
the ratios ``R(x0)(y)/R(x2)(y)``, ``R(x1)(y)/R(x2)(y)`` with ``y ~ R(x2)`` and ``gamma = 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from amp.core.errors import ParameterError

#: Relative tolerance under which two atoms are considered the same when merging.
MERGE_RTOL = 1e-12


@dataclass(frozen=True)
class GPARV:
    """Eps-free law of a GPARV: blanket atoms ``(a_j, b_j)`` with probabilities ``p_j``.

    Attributes
    ----------
    a : numpy.ndarray
        Likelihood ratio of the first differing input ``x0`` on the blanket atoms (``>= 0``).
    b : numpy.ndarray
        Likelihood ratio of the second differing input ``x1`` on the blanket atoms.
    p : numpy.ndarray
        Probabilities of the atoms; their sum is ``gamma`` (the rest, ``1 - gamma``, is the atom
        ``G = 0``, i.e. a user who did not sample from the blanket).
    eps0 : float
        Local privacy level of the randomizer the law comes from (used for Property 2 checks).
    label : str
        Human-readable description (mechanism and pair), shown in results.
    lower : bool
        True for a lower-bound law (Theorem 5's pairs): atoms that agree to
        ``MERGE_RTOL`` merge into the smaller representative instead of the larger one.

    Notes
    -----
    The generalized privacy amplification random variable of Definition 2 (Section 5.1):
    ``G_eps = a(W) - e^eps b(W)`` with probability ``gamma`` and ``0`` otherwise. Its mean is
    ``1 - e^eps`` (Property 2.1) and its atoms lie in ``[1 - e^(eps+eps0), e^eps0 - e^eps]``
    (Property 2.2). Theorem 4's bound is ``delta(eps) = E[(G_1 + ... + G_n)_+] / n`` over ``n``
    i.i.d. copies, computed by (a certified version of) Algorithm 4.

    Examples
    --------
    >>> import amp, math
    >>> law = amp.KRR(4.0, k=10).gparv()
    >>> law.a.size, round(law.gamma, 6), law.max_eps()
    (3, 0.157237, 4.0)
    >>> math.isclose(law.mean(0.5), 1 - math.exp(0.5))        # Property 2.1
    True
    >>> g = amp.GPARV([1.0, 2.0], [2.0, 1.0], [0.25, 0.25], math.log(2))
    >>> g.gamma, g.off_mass
    (0.5, 0.5)
    """

    a: np.ndarray
    b: np.ndarray
    p: np.ndarray
    eps0: float
    label: str = ""
    lower: bool = False
    _key: tuple = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        a = np.asarray(self.a, dtype=float).ravel()
        b = np.asarray(self.b, dtype=float).ravel()
        p = np.asarray(self.p, dtype=float).ravel()
        if not (a.shape == b.shape == p.shape) or a.size == 0:
            raise ParameterError("GPARV needs non-empty arrays a, b, p of equal length")
        for name, arr in (("a", a), ("b", b), ("p", p)):
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise ParameterError(f"GPARV {name} must be finite and >= 0")
        total = float(p.sum())
        if total > 1 + 1e-9:
            raise ParameterError(f"GPARV probabilities sum to {total} > 1")
        keep = p > 0
        a, b, p = _merge(a[keep], b[keep], p[keep], lower=self.lower)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "_key", (tuple(np.round(a, 12)), tuple(np.round(b, 12)),
                                          tuple(np.round(p, 15))))

    # ------------------------------------------------------------------ derived quantities
    @property
    def gamma(self) -> float:
        """Blanket mass ``gamma = sum_j p_j`` (total variation similarity, Section 3.2)."""
        return float(min(1.0, self.p.sum()))

    @property
    def off_mass(self) -> float:
        """Probability ``1 - gamma`` of the atom ``G = 0``."""
        return max(0.0, 1.0 - float(self.p.sum()))

    def atoms(self, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """Values and probabilities of ``G_eps`` (including the atom 0 of mass ``1 - gamma``)."""
        g = self.a - np.exp(eps) * self.b
        if self.off_mass > 0:
            return np.append(g, 0.0), np.append(self.p, self.off_mass)
        return g, self.p.copy()

    def magnitudes(self, eps: float) -> np.ndarray:
        """``a + e^eps b`` per atom of :meth:`atoms` (0 for the off atom): the float atom
        ``a - e^eps b`` is within ``~4 u`` times this of the exact one (``a, b`` within ``2 u``
        of the exact ratios); the certified paths pad it to ``16 u`` times this."""
        mag = self.a + math.exp(eps) * self.b
        return np.append(mag, 0.0) if self.off_mass > 0 else mag

    def mean(self, eps: float) -> float:
        """``E[G_eps]``; equals ``1 - e^eps`` for a blanket GPARV (Property 2.1)."""
        g, p = self.atoms(eps)
        return float(np.dot(g, p))

    def support(self, eps: float) -> tuple[float, float]:
        """``(min G_eps, max G_eps)`` including the atom 0 of users off the blanket.

        On the blanket the atoms lie in ``[1 - e^(eps+eps0), e^eps0 - e^eps]`` (Property 2.2);
        for ``eps > eps0`` the off-blanket atom 0 lies above that interval.
        """
        g, _ = self.atoms(eps)
        return float(g.min()), float(g.max())

    def max_eps(self) -> float:
        """Smallest eps at which ``G_eps <= 0`` surely, hence ``delta(eps) = 0``."""
        pos = self.b > 0
        if np.any(self.a[~pos] > 0):
            return float("inf")
        r = self.a[pos] / self.b[pos]
        return float(np.log(r.max())) if r.max() > 0 else 0.0

    def swapped(self) -> "GPARV":
        """The law of the reversed pair ``(x1, x0)``."""
        return GPARV(self.b, self.a, self.p, self.eps0, self.label + " (reversed)")

    def same_law(self, other: "GPARV") -> bool:
        """True when both laws have the same atoms (up to :data:`MERGE_RTOL`)."""
        return self._key == other._key

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"GPARV({self.label or 'law'}: {self.a.size} atoms, gamma={self.gamma:.6g}, "
                f"eps0={self.eps0:.6g})")


def _merge(a: np.ndarray, b: np.ndarray, p: np.ndarray, *, lower: bool = False):
    """Merge atoms whose ``(a, b)`` agree to :data:`MERGE_RTOL`, into a representative on the
    law's safe side: the largest ``a`` and smallest ``b`` of the group for an upper-bound law
    (``G`` can only grow, so ``E[(G_1 + ... + G_n)_+]`` too), the smallest ``a`` and largest
    ``b`` for a lower-bound law (``lower=True``, Theorem 5: it can only shrink)."""
    if a.size <= 1:
        return a, b, p
    scale = max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    q = MERGE_RTOL * scale
    ka = np.round(a / q).astype(np.int64)
    kb = np.round(b / q).astype(np.int64)
    keys = np.stack([ka, kb], axis=1)
    _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    pm = np.zeros(first.size)
    np.add.at(pm, inv, p)
    # conservative representative: the largest a and smallest b of the merged group (upper),
    # the smallest a and largest b (lower)
    am = np.full(first.size, np.inf if lower else -np.inf)
    bm = np.full(first.size, -np.inf if lower else np.inf)
    (np.minimum if lower else np.maximum).at(am, inv, a)
    (np.maximum if lower else np.minimum).at(bm, inv, b)
    order = np.lexsort((bm, am))
    return am[order], bm[order], pm[order]
