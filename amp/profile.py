"""The certified privacy profile ``delta(eps)`` of a shuffled mechanism for ``n`` users.

:class:`PrivacyProfile` is the object every question is asked of. It holds the mechanism's pair
laws and one :class:`~amp.backends.dispatch.LawDelta` per law (so the structured tables and other
eps-free work are built once), and answers ``delta`` at one ``eps`` or a grid.

``bound="upper"``: the optimal decomposition bound (privacy blanket = best general clone,
Theorems 3 and 4), the maximum over the mechanism's ordered input pairs ``(x0, x1)``: an upper
bound on the hockey-stick divergence ``D_{e^eps}(M(X0) || M(X1))`` for every pair of
neighbouring datasets (replace-one), both directions included (the pairs are ordered).

``bound="lower"``: Theorem 5, the exact shuffled divergence of the explicit pair
``X0 = (x0, x2, ..., x2)``, ``X1 = (x1, x2, ..., x2)``, maximised over the third inputs ``x2``
(for matrices, at the worst pair of the upper bound): the true privacy curve is at least this.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import DEFAULT_REL_TOL, METHODS, LawDelta, delta_bracket
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism
from amp.mechanisms.base import MatrixMechanism, Mechanism, pair_law_from_matrix

__all__ = ["PrivacyProfile", "laws_for", "check_mechanism", "check_bound", "BOUNDS"]

#: The two sides of the paper's objects.
BOUNDS = ("upper", "lower")


def check_mechanism(mechanism: object) -> Mechanism:
    """``mechanism`` if it is an :class:`~amp.mechanisms.Mechanism`, else ParameterError."""
    if not isinstance(mechanism, Mechanism):
        raise ParameterError("mechanism must be an amp mechanism (KRR, RAPPOR, OUE, OLH, BLH, "
                             "HadamardResponse, MatrixMechanism, JointMechanism), got "
                             f"{type(mechanism).__name__}")
    return mechanism


def check_bound(bound: object) -> str:
    """``bound`` if it is ``"upper"`` or ``"lower"``, else ParameterError."""
    if bound not in BOUNDS:
        raise ParameterError(f"bound must be 'upper' or 'lower', got {show(bound)}")
    return bound  # type: ignore[return-value]


def laws_for(mechanism: Mechanism, bound: str, eps_hint: float | None = None,
             n: int | None = None) -> list[GPARV]:
    """The laws whose maximum gives the selected bound (see the module docstring).

    For the lower bound of a matrix (or an asymmetric finite form) the pair ``(x0, x1)`` is the
    one with the largest blanket upper bound at ``eps_hint`` and ``n`` (ties: first).
    """
    check_bound(bound)
    if bound == "upper":
        return mechanism.gparv_laws()
    if isinstance(mechanism, JointMechanism):
        # its own Theorem 5 pairs (inputs distinct in every component), not a matrix pair
        return mechanism.lower_laws()
    if isinstance(mechanism, MatrixMechanism) or (mechanism.finite and not mechanism.symmetric):
        return mechanism.lower_laws(_worst_pair(mechanism, eps_hint, n))
    return mechanism.lower_laws()


def _worst_pair(mechanism: Mechanism, eps: float | None, n: int | None) -> tuple[int, int]:
    """Ordered pair of inputs with the largest blanket upper bound (ties: first)."""
    M = mechanism.matrix()
    d = M.shape[0]
    if d < 3:
        raise ParameterError("the Theorem 5 lower bound needs a third input (>= 3 inputs)")
    eps = 0.0 if eps is None else eps
    nn = 1 if n is None else n
    best, best_pair, seen = -1.0, (0, 1), []
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            law = pair_law_from_matrix(M, i, j, mechanism.eps0)
            if any(law.same_law(o) for o in seen):
                continue
            seen.append(law)
            v = delta_bracket(law, nn, eps, rel_tol=0.05).upper
            if v > best:
                best, best_pair = v, (i, j)
    return best_pair


class PrivacyProfile:
    """Certified ``delta(eps)`` of ``mechanism`` shuffled among ``n`` users.

    The privacy profile of the optimal decomposition bound (Theorems 3-4, ``bound="upper"``)
    or of Theorem 5's dataset pair (``bound="lower"``): the maximum over the mechanism's pair
    laws (``laws``, one certified curve each in ``curves``), each evaluated by the
    certified version of Algorithm 4. Usually built with :func:`amp.profile`.

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer (``KRR(eps0, k=10)``, ``RAPPOR(eps0)``, ``MatrixMechanism(P)``...).
    n : int
        Number of users, ``>= 1``.
    bound : {"upper", "lower"}
        Theorem 4's blanket bound (default) or Theorem 5's lower bound (module docstring).
    method : {"auto", "structured", "fft", "exact"}
        Delta backend (:class:`~amp.backends.dispatch.LawDelta`); ``auto`` picks and reports.
    laws : list of GPARV, optional
        Override the laws whose maximum is the profile (advanced).
    eps_hint : float, optional
        Where to pick the worst pair of a matrix's lower bound (default ``eps = 0``).

    Examples
    --------
    >>> import amp
    >>> from amp import KRR, PrivacyProfile
    >>> prof = PrivacyProfile(KRR(4.0, k=10), n=10_000)
    >>> d = prof.delta(0.5)
    >>> d.lower <= d.upper and d.value == d.upper
    True
    >>> f"{d.value:.4e}"
    '2.7864e-09'
    >>> round(amp.epsilon_for(prof, 1e-6).value, 4)
    0.3805
    """

    def __init__(self, mechanism: Mechanism, n: int, *, bound: str = "upper",
                 method: str = "auto", laws: list[GPARV] | None = None,
                 eps_hint: float | None = None):
        self.mechanism = check_mechanism(mechanism)
        self.n = V.int_at_least("n", n, 1)
        self.bound = check_bound(bound)
        if method not in METHODS:
            raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {show(method)}")
        self.method = method
        if laws is None:
            laws = laws_for(self.mechanism, self.bound, eps_hint, self.n)
        elif not laws or not all(isinstance(law, GPARV) for law in laws):
            raise ParameterError("laws must be a non-empty list of GPARV laws")
        self.laws: list[GPARV] = list(laws)
        self.curves: list[LawDelta] = [LawDelta(law, self.n, method) for law in self.laws]

    def __repr__(self) -> str:
        return (f"PrivacyProfile({self.mechanism.describe()}, n={self.n}, bound={show(self.bound)}, "
                f"{len(self.laws)} law(s))")

    @property
    def description(self) -> str:
        """The mechanism's description."""
        return self.mechanism.describe()

    def delta(self, eps: float | Iterable[float], *,
              rel_tol: float = DEFAULT_REL_TOL) -> Bound | list[Bound]:
        """Certified ``delta(eps)`` (the maximum over the profile's laws).

        A scalar ``eps`` gives one :class:`~amp.core.result.Bound` (``value``: its upper end
        for ``bound="upper"``, its lower end for ``bound="lower"``); a sequence gives a list.
        """
        if np.ndim(eps) == 0:
            return self._delta_one(V.positive_float("eps", eps, allow_zero=True), rel_tol)
        vals = np.asarray(list(eps), dtype=float).ravel()
        return [self._delta_one(V.positive_float("eps", float(e), allow_zero=True), rel_tol)
                for e in vals]

    def _delta_one(self, eps: float, rel_tol: float) -> Bound:
        res = [c.delta(eps, rel_tol=rel_tol) for c in self.curves]
        # both are at most 1 (E[S_+]/n <= E[G_+] <= sum p a <= 1 for a mechanism's laws; a
        # hockey-stick divergence is <= 1): clip the safety pads
        lo = min(max(r.lower for r in res), 1.0)
        hi = min(max(r.upper for r in res), 1.0)
        methods = ",".join(sorted({r.method for r in res}))
        return Bound("delta", lo, hi, self.bound, methods, self.n, self.description,
                     {"eps": eps}, parts=tuple(res))
