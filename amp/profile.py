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

A matrix mechanism (``d (d - 1)`` ordered pairs) keeps its pair laws as arrays
(:class:`amp.pairs.PairSet`): its upper bound is the certified maximum computed by pruning
(pairs whose certified Chernoff bound or coarse bracket cannot raise the maximum's upper end
are not refined), its lower bound's pair and third inputs are chosen by the Chernoff ranking
(a heuristic choice; every choice gives a valid lower bound).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.core.tails import chernoff_upper
from amp.core.floats import U
from amp.backends.dispatch import DEFAULT_REL_TOL, METHODS, LawDelta
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism
from amp.mechanisms.laplace import make_curve
from amp.mechanisms.base import MatrixMechanism, Mechanism
from amp.mechanisms.subsampled import Subsampled
from amp.pairs import PairSet, check_executor, delta_max

__all__ = ["PrivacyProfile", "is_matrix", "laws_for", "lower_selection", "worst_pair",
           "check_mechanism", "check_bound", "BOUNDS", "LOWER_LAWS_KEPT"]

#: The two sides of the paper's objects.
BOUNDS = ("upper", "lower")
#: A matrix's Theorem 5 lower bound evaluates this many candidate laws (third inputs ``x2``),
#: the largest by their Chernoff bound: a max over fewer lower bounds is still a lower bound.
LOWER_LAWS_KEPT = 32


def check_mechanism(mechanism: object) -> Mechanism:
    """``mechanism`` if it is an :class:`~amp.mechanisms.Mechanism`, else ParameterError."""
    if not isinstance(mechanism, Mechanism):
        raise ParameterError("mechanism must be an amp mechanism (KRR, RAPPOR, OUE, OLH, BLH, "
                             "HadamardResponse, MatrixMechanism, JointMechanism), got "
                             f"{type(mechanism).__name__}")
    return mechanism


def check_eps(name: str, value: object) -> float:
    """A central ``eps`` in ``[0, MAX_EPS0]`` (:data:`amp.core.validate.MAX_EPS0`), else
    :class:`ParameterError`. Larger values are refused rather than overflowing ``exp(eps)``:
    every mechanism has ``eps0 <= MAX_EPS0``, and ``delta(eps) = 0`` for ``eps >= eps0``."""
    x = V.positive_float(name, value, allow_zero=True)
    if x > V.MAX_EPS0:
        raise ParameterError(f"{name} must be <= {V.MAX_EPS0:g} (delta(eps) = 0 for every "
                             f"eps >= eps0, and eps0 <= {V.MAX_EPS0:g}), got {x:g}")
    return x


def check_bound(bound: object) -> str:
    """``bound`` if it is ``"upper"`` or ``"lower"``, else ParameterError."""
    if bound not in BOUNDS:
        raise ParameterError(f"bound must be 'upper' or 'lower', got {show(bound)}")
    return bound  # type: ignore[return-value]


def laws_for(mechanism: Mechanism, bound: str, eps_hint: float | None = None,
             n: int | None = None) -> list[GPARV]:
    """The laws whose maximum gives the selected bound (see the module docstring).

    For the lower bound of a matrix (or an asymmetric finite form) the pair ``(x0, x1)`` is
    :func:`amp.profile.worst_pair` at ``eps_hint`` and ``n``, and of its Theorem 5 candidate laws (one per
    third input ``x2``) only the :data:`amp.profile.LOWER_LAWS_KEPT` with the largest Chernoff bound at
    ``eps_hint`` are kept (a heuristic choice: any subset of lower bounds is a lower bound).
    """
    check_bound(bound)
    if bound == "upper":
        return mechanism.gparv_laws()
    if isinstance(mechanism, JointMechanism):
        # its own Theorem 5 pairs (inputs distinct in every component), not a matrix pair
        return mechanism.lower_laws()
    if _picks_pair(mechanism):
        return lower_selection(mechanism, eps_hint, n)[0]
    return mechanism.lower_laws()


def is_matrix(mechanism: Mechanism) -> bool:
    """True for a :class:`MatrixMechanism`, subsampled or not: its upper profile is the pruned
    maximum over the pairs of its matrix (:class:`amp.pairs.PairSet`). The subsampled one's
    matrix is ``[q P | (1 - q)]``, whose pair laws are the subsampled laws
    (:mod:`amp.mechanisms.subsampled`)."""
    return isinstance(mechanism, MatrixMechanism) or (
        isinstance(mechanism, Subsampled) and isinstance(mechanism.inner, MatrixMechanism))


def _picks_pair(mechanism: Mechanism) -> bool:
    return not isinstance(mechanism, JointMechanism) and (
        isinstance(mechanism, MatrixMechanism) or (mechanism.finite and not mechanism.symmetric))


def lower_selection(mechanism: Mechanism, eps_hint: float | None, n: int | None
                    ) -> tuple[list[GPARV], dict]:
    """A matrix's Theorem 5 laws (:func:`amp.profile.worst_pair`, then the
    :data:`amp.profile.LOWER_LAWS_KEPT` candidate third inputs with the largest Chernoff bound)
    and a record of the choice."""
    eps = 0.0 if eps_hint is None else eps_hint
    nn = 1 if n is None else n
    pair = worst_pair(mechanism, eps, nn)
    cands = mechanism.lower_laws(pair)
    laws = _top_laws(cands, eps, nn, LOWER_LAWS_KEPT)
    info = {"lower_pair": pair, "lower_candidates": len(cands), "lower_laws_kept": len(laws),
            "lower_selection": f"heuristic: Chernoff ranking at eps={eps:g} (any pair and "
                               "any subset of third inputs is a valid lower bound)"}
    return laws, info


def _top_laws(laws: list[GPARV], eps: float, n: int, keep: int) -> list[GPARV]:
    """The ``keep`` laws with the largest Chernoff bound at ``eps``, largest first (ties:
    first): a cheap ranking (not a certificate) of which lower laws to evaluate, in the order
    that lets :func:`amp.epsilon_for` settle the weaker ones with one evaluation each."""
    if len(laws) <= 1:
        return laws
    score = [chernoff_upper(*law.atoms(eps), n, 16 * U * law.magnitudes(eps)) for law in laws]
    best = np.argsort(-np.asarray(score), kind="stable")[:keep]
    return [laws[int(i)] for i in best]


def worst_pair(mechanism: Mechanism, eps: float | None, n: int | None) -> tuple[int, int]:
    """The ordered pair of inputs with the largest Chernoff bound on its blanket law's
    ``delta(eps)`` (:meth:`amp.pairs.PairSet.chernoff_upper`, all pairs at once; ties: first).

    A heuristic choice, not a certificate: any pair gives a valid Theorem 5 lower bound, and
    the Chernoff bound ranks pairs as their exact ``delta`` does up to a nearly constant
    factor. ``eps`` defaults to 0 and ``n`` to 1."""
    M = mechanism.matrix()
    if M.shape[0] < 3:
        raise ParameterError("the Theorem 5 lower bound needs a third input (>= 3 inputs)")
    ps = PairSet(M, mechanism.eps0, mechanism.name)
    ch = ps.chernoff_upper(0.0 if eps is None else eps, 1 if n is None else n)
    x0, x1 = ps.pairs[int(np.argmax(ch))]
    return int(x0), int(x1)


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
    executor : concurrent.futures.Executor, optional
        Runs the independent refinements of a matrix's surviving pairs (``delta`` here,
        ``eps`` in :func:`amp.epsilon_for`), e.g. ``ProcessPoolExecutor(2)`` or a Dask
        client's executor; default serial. Results are identical with and without one.

    Notes
    -----
    A :class:`~amp.mechanisms.base.MatrixMechanism`'s upper profile keeps its pair laws as
    arrays (:class:`amp.pairs.PairSet`, in ``pairs``) and answers by pruning: pairs whose
    certified Chernoff bound cannot raise the maximum's upper end are not refined
    (:func:`amp.pairs.delta_max`, :mod:`amp.pairsearch`); ``Bound.details`` reports the
    counts and the worst pair. ``laws`` and ``curves`` are then built on first access.

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
                 eps_hint: float | None = None, executor: object = None):
        self.mechanism = check_mechanism(mechanism)
        self.n = V.int_at_least("n", n, 1)
        self.bound = check_bound(bound)
        core = self.mechanism
        while isinstance(core, Subsampled):
            core = core.inner
        fixed = getattr(core, "n_users", None)      # a fixed population knows its n
        if fixed is not None and fixed != self.n:
            raise ParameterError(f"n must be the population's number of users {fixed}, got "
                                 f"{self.n}")
        if method not in METHODS:
            raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {show(method)}")
        self.method = method
        self.executor = check_executor(executor)
        #: the pair laws as arrays (a matrix's upper profile), else None
        self.pairs: PairSet | None = None
        #: how a matrix's lower-bound laws were chosen (:func:`lower_selection`), else {}
        self.selection: dict = {}
        self._laws: list[GPARV] | None = None
        self._curves: list[LawDelta] | None = None
        if laws is None and self.bound == "upper" and is_matrix(self.mechanism):
            self.pairs = PairSet(self.mechanism.matrix(), self.mechanism.eps0,
                                 self.mechanism.name)
            return
        if laws is None and self.bound == "lower" and _picks_pair(self.mechanism):
            laws, self.selection = lower_selection(self.mechanism, eps_hint, self.n)
        elif laws is None:
            laws = laws_for(self.mechanism, self.bound, eps_hint, self.n)
        elif not laws or not all(isinstance(law, GPARV) for law in laws):
            raise ParameterError("laws must be a non-empty list of GPARV laws")
        self._laws = list(laws)

    @property
    def laws(self) -> list[GPARV]:
        """The laws whose maximum is the profile (a matrix's pair laws: built on access)."""
        if self._laws is None and self.pairs is not None:
            self._laws = [self.pairs.law(k) for k in range(len(self.pairs))]
        if self._laws is None:
            raise ParameterError("the profile has no laws")     # unreachable by construction
        return self._laws

    @property
    def curves(self) -> list[LawDelta]:
        """One :class:`~amp.backends.dispatch.LawDelta` per law (built on first access)."""
        if self._curves is None:
            # a discretised continuous law (Laplace) refines its cells: ContinuousDelta
            self._curves = [make_curve(law, self.n, self.method) for law in self.laws]
        return self._curves

    def __repr__(self) -> str:
        k = len(self.pairs) if self.pairs is not None else len(self.laws)
        return (f"PrivacyProfile({self.mechanism.describe()}, n={self.n}, bound={show(self.bound)}, "
                f"{k} law(s))")

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
        eps_ = V.values("eps", eps, check_eps)
        if isinstance(eps_, list):
            return [self._delta_one(e, rel_tol) for e in eps_]
        return self._delta_one(eps_, rel_tol)

    def _delta_one(self, eps: float, rel_tol: float) -> Bound:
        details: dict = {}
        if self.pairs is not None:
            lo, hi, res, details = delta_max(self.pairs, self.n, eps, rel_tol=rel_tol,
                                             method=self.method, executor=self.executor)
        else:
            res = [c.delta(eps, rel_tol=rel_tol) for c in self.curves]
            lo, hi = max(r.lower for r in res), max(r.upper for r in res)
            details = dict(self.selection)
        # both are at most 1 (E[S_+]/n <= E[G_+] <= sum p a <= 1 for a mechanism's laws; a
        # hockey-stick divergence is <= 1): clip the safety pads
        lo, hi = min(lo, 1.0), min(hi, 1.0)
        methods = ",".join(sorted({r.method for r in res}))
        return Bound("delta", lo, hi, self.bound, methods, self.n, self.description,
                     {"eps": eps}, parts=tuple(res), details=details)
