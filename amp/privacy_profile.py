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
A fixed :class:`~amp.mechanisms.mixture.Population`'s pair has the victim in one group and a
background per group; its divergence is bounded from below through a count statistic, the
maximum over the victim's group (:mod:`amp.backends.population_lower`). Its upper profile is
the sharpest amp has: each group at its own blanket mass over the Poisson-binomial count of
blanket draws, maximised over the victim's group and pair
(:mod:`amp.backends.population_upper`); ``method`` picks the backend of each count's
Theorem 4 bound, never another bound. (The common-blanket baseline, every user at the smallest
blanket mass, is at least this: ``PrivacyProfile(pop, n, laws=pop.gparv_laws())``.)

A matrix mechanism (``d (d - 1)`` ordered pairs) keeps its pair laws as arrays
(:class:`amp.pairs.PairSet`): its upper bound is the certified maximum computed by pruning
(pairs whose certified Chernoff bound or coarse bracket cannot raise the maximum's upper end
are not refined), its lower bound's pair and third inputs are chosen by the Chernoff ranking
(a heuristic choice; every choice gives a valid lower bound).
"""

from __future__ import annotations

from functools import partial
from typing import Iterable

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.result import Bound, flag_wider, held_or_raise
from amp.core.tails import chernoff_upper
from amp.core.floats import U
from amp.backends.dispatch import DEFAULT_ABS_TOL, DEFAULT_REL_TOL, METHODS, LawDelta
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism
from amp.mechanisms.mixture import Population
from amp.backends.continuous import make_curve
from amp.backends.population_lower import lower_pairs
from amp.backends.population_upper import VictimCurve, max_delta, shared_blanket, victim_curves
from amp.mechanisms.base import MatrixMechanism, Mechanism
from amp.mechanisms.subsampled import Subsampled
from amp.pairs import PairSet, check_executor, delta_max
from amp.inversion import (DEFAULT_EPS_REL_TOL, Progress, as_progress, epsilon_of_curve,
                           estimate_epsilon)
from amp.pairsearch import epsilon_max

__all__ = ["PrivacyProfile", "is_matrix", "laws_for", "lower_selection", "worst_pair",
           "check_mechanism", "check_bound", "check_rel_tol", "BOUNDS", "LOWER_LAWS_KEPT"]

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
    return V.eps_value(value, name)


def check_bound(bound: object) -> str:
    """``bound`` if it is ``"upper"`` or ``"lower"``, else ParameterError."""
    return V.choice("bound", bound, BOUNDS, "'upper' or 'lower'")


def laws_for(mechanism: Mechanism, bound: str, eps_hint: float | None = None,
             n: int | None = None) -> list[GPARV]:
    """The laws whose maximum gives the selected bound (see the module docstring).

    For the lower bound of a matrix (or an asymmetric finite form) the pair ``(x0, x1)`` is
    :func:`amp.privacy_profile.worst_pair` at ``eps_hint`` and ``n``, and of its Theorem 5 candidate laws (one per
    third input ``x2``) only the :data:`amp.privacy_profile.LOWER_LAWS_KEPT` with the largest Chernoff bound at
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
    """A matrix's Theorem 5 laws (:func:`amp.privacy_profile.worst_pair`, then the
    :data:`amp.privacy_profile.LOWER_LAWS_KEPT` candidate third inputs with the largest Chernoff bound)
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
    that lets :meth:`PrivacyProfile.epsilon` settle the weaker ones with one evaluation each."""
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


def per_round_population(mechanism: Mechanism) -> Population | None:
    """The fixed population one round of ``mechanism`` is (every group subsampled at the
    product of the rates of the :class:`Subsampled` layers around it), else ``None``."""
    q, core = 1.0, mechanism
    while isinstance(core, Subsampled):
        q, core = q * core.q, core.inner
    if not isinstance(core, Population):
        return None
    return core if q == 1.0 else Population([(n, Subsampled(m, q)) for n, m in core.groups])


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
        Runs the independent sub-questions of one answer: the refinements of a matrix's
        surviving pairs (``delta`` and ``eps``), e.g. ``ProcessPoolExecutor(2)`` or a Dask
        client's executor; default serial. Results are identical with and without one.
        :meth:`delta` and :meth:`epsilon` take their own. The points of a sequence of ``eps``
        or ``delta`` run in turn, never through it: a profile's caches (structured gap
        tables) make a later answer depend on the earlier ones (a narrower valid bracket), so
        running them out of order would change the brackets.
    rel_tol : float, optional
        Default relative width of every bracket this profile returns (default: each method's
        own, ``2e-3`` for ``delta`` and ``1e-4`` for ``epsilon``).
    progress : callable or True, optional
        Default progress report of :meth:`delta` and :meth:`epsilon` (a callable taking
        one-line messages, or ``True`` for lines on stderr).

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
    >>> round(prof.epsilon(1e-6).value, 4)
    0.3805
    """

    def __init__(self, mechanism: Mechanism, n: int, *, bound: str = "upper",
                 method: str = "auto", laws: list[GPARV] | None = None,
                 eps_hint: float | None = None, executor: object = None,
                 rel_tol: float | None = None, progress: object = None):
        self.mechanism = check_mechanism(mechanism)
        self.n = V.users(n)
        self.bound = check_bound(bound)
        core = self.mechanism
        while isinstance(core, Subsampled):
            core = core.inner
        fixed = getattr(core, "n_users", None)      # a fixed population knows its n
        if fixed is not None and fixed != self.n:
            raise ParameterError(f"n must be the population's number of users {fixed}, got "
                                 f"{self.n}")
        self.method = V.choice("method", method, METHODS, f"one of {', '.join(METHODS)}")
        self.executor = check_executor(executor)
        self.rel_tol = None if rel_tol is None else check_rel_tol(rel_tol)
        self.progress = as_progress(progress)
        #: the pair laws as arrays (a matrix's upper profile), else None
        self.pairs: PairSet | None = None
        self.population: Population | None = None
        #: how a matrix's lower-bound laws were chosen (:func:`lower_selection`), else {}
        self.selection: dict = {}
        self._laws: list[GPARV] | None = None
        self._curves: list[LawDelta] | None = None
        if laws is None and self.bound == "upper" and is_matrix(self.mechanism):
            self.pairs = PairSet(self.mechanism.matrix(), self.mechanism.eps0,
                                 self.mechanism.name)
            return
        pop = per_round_population(self.mechanism) if laws is None else None
        if pop is not None and self.bound == "upper":
            gam = shared_blanket(pop)[1]
            if max(gam) <= min(gam) * (1 + 1e-12):
                # every group at the same blanket mass (one group; or subsampled groups, whose
                # void report sets every mass): the Poisson-binomial count is Bin(n - 1,
                # gamma) and the bound is Theorem 4 of the common-blanket laws, exactly
                laws, pop = self.mechanism.gparv_laws(), None
        #: the fixed population one round is (upper: its victims' Poisson-binomial curves)
        self.population = pop
        if pop is not None and self.bound == "upper":
            self._curves = victim_curves(pop, method=self.method)
            self._laws = [c.law for c in self._curves]
            self.selection = {"gammas": tuple(gam)}
            return
        if pop is not None and self.bound == "lower":
            # Theorem 5's pair of a fixed population: one certified curve per victim group
            self._curves = lower_pairs(pop.stacked, [g for g, _ in pop.groups], pop.name)
            self._laws = [c.law for c in self._curves]      # their labels
            self.selection = {"lower_selection": "per victim group: the pair of largest "
                              "total variation, each group's background of least variance "
                              "of the count statistic (any choice is a valid lower bound)"}
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

    def delta(self, eps: float | Iterable[float], *, rel_tol: float | None = None,
              progress: object = None, executor: object = None,
              strict: bool = False) -> Bound | list[Bound]:
        """Certified ``delta(eps)`` (the maximum over the profile's laws).

        A scalar ``eps`` gives one :class:`~amp.core.result.Bound` (``value``: its upper end
        for ``bound="upper"``, its lower end for ``bound="lower"``); a sequence gives a list.
        ``rel_tol`` (default: the profile's, else ``2e-3``) is the largest relative width of
        each bracket, unless ``upper <= 1e-16`` (a ``delta`` far below any practical
        target, e.g. ``[0, 8e-24]``); ``progress`` (a callable or ``True``) gets one line per
        ``eps``; ``executor`` (default: the profile's) runs a matrix's pair refinements.
        ``strict`` as in :meth:`epsilon`: a bracket that cannot be certified to ``rel_tol``
        (the atoms' floating-point floor, e.g. ``rel_tol=1e-13``) comes back flagged
        (``Bound.wider_than_asked``, ``achieved_rel_tol``, an :class:`amp.AccuracyWarning`),
        or with ``strict=True`` raises :class:`NumericalError`.
        """
        eps_ = V.values("eps", eps, check_eps)
        rel_tol = check_rel_tol(self._rel_tol(rel_tol, DEFAULT_REL_TOL))
        report = self._progress(progress)
        ex = self.executor if executor is None else check_executor(executor)
        one = partial(_delta_task, self, rel_tol, ex, report, bool(strict))
        return [one(e) for e in eps_] if isinstance(eps_, list) else one(eps_)

    def epsilon(self, delta: float | Iterable[float], *, rel_tol: float | None = None,
                progress: object = None, executor: object = None,
                strict: bool = False) -> Bound | list[Bound]:
        """Certified ``eps(delta)`` of the profile (reusing its tables): the inverse of
        :meth:`delta`.

        The profile is the maximum over its laws, so its ``eps(delta)`` is the maximum of the
        laws' thresholds: each law is searched (:func:`amp.inversion.crossing`) and the
        brackets' ends are combined by ``max``. The bound is the profile's (Theorem 4 or
        Theorem 5). A matrix mechanism's upper profile prunes its pairs first
        (:func:`amp.pairsearch.epsilon_max`: pairs certified not to raise the maximum are not
        searched; ``details`` gives the counts and the worst pair).

        Parameters
        ----------
        delta : float or sequence of float
            Target ``delta`` in ``(0, 1)``; a sequence gives a list in the same order.
        rel_tol : float, optional
            Largest relative width of each bracket (default: the profile's, else ``1e-4``).
        progress : callable or True, optional
            Called with one-line progress messages (``True``: lines on stderr).
        executor : concurrent.futures.Executor, optional
            Runs a matrix's pair evaluations (default: the profile's); the points of a
            sequence run in turn (see the class). Results are identical with and without one.
        strict : bool, default False
            When ``rel_tol`` cannot be certified (e.g. a tiny ``delta`` at the floating-point
            floor): ``False`` returns the valid bracket held, flagged
            (``Bound.wider_than_asked``, ``achieved_rel_tol``, an
            :class:`amp.AccuracyWarning`); ``True`` raises :class:`NumericalError` instead.

        Returns
        -------
        Bound or list of Bound
            Quantity ``"eps"``, one part per law in ``parts``; ``details["worst_law"]`` names
            the law that attains the maximum (for ``bound="lower"``: the dataset pair),
            ``details["pruned_laws"]`` counts the laws settled by one evaluation.

        Examples
        --------
        >>> import amp
        >>> prof = amp.profile(amp.KRR(4.0, k=10), 10_000)
        >>> [round(b.value, 4) for b in prof.epsilon([1e-6, 1e-8])]
        [0.3805, 0.476]
        >>> prof.epsilon(1e-6) == amp.epsilon_for(prof, 1e-6)
        True
        """
        deltas = V.values("delta", delta, V.probability_open)
        rel_tol = check_rel_tol(self._rel_tol(rel_tol, DEFAULT_EPS_REL_TOL))
        report = self._progress(progress)
        ex = self.executor if executor is None else check_executor(executor)
        one = partial(_epsilon_task, self, rel_tol, ex, report, bool(strict))
        return [one(d) for d in deltas] if isinstance(deltas, list) else one(deltas)

    def _rel_tol(self, rel_tol: float | None, default: float) -> float:
        if rel_tol is not None:
            return rel_tol
        return default if self.rel_tol is None else self.rel_tol

    def _progress(self, progress: object) -> Progress | None:
        return self.progress if progress is None else as_progress(progress)

    def _epsilon_one(self, delta_: float, rel_tol: float, executor, progress,
                     strict: bool = True) -> Bound:
        if self.population is not None and self.bound == "upper":
            return _flag_wider(_victims_epsilon(self, delta_, rel_tol, progress, strict),
                               rel_tol)
        if self.pairs is not None:
            return _flag_wider(epsilon_max(self.pairs, self.n, delta_, rel_tol=rel_tol,
                                           method=self.method, mechanism=self.description,
                                           executor=executor, progress=progress,
                                           strict=strict), rel_tol)
        parts, pruned = _laws_epsilon(self, delta_, rel_tol, progress, strict)
        lo = max(p.lower for p in parts)
        hi = max(p.upper for p in parts)
        methods = ",".join(sorted({m for p in parts for m in p.method.split(",") if m}))
        side = (lambda b: b.lower) if self.bound == "lower" else (lambda b: b.upper)
        res = Bound("eps", lo, hi, self.bound, methods, self.n, self.description,
                    {"delta": delta_}, parts=tuple(parts),
                    details={"evaluations": sum(p.details["evaluations"] for p in parts),
                             "worst_law": max(parts, key=side).mechanism,
                             "pruned_laws": pruned, **self.selection})
        return _flag_wider(res, rel_tol)

    def _delta_one(self, eps: float, rel_tol: float, executor=None) -> Bound:
        details: dict = {}
        if self.population is not None and self.bound == "upper":
            lo, hi, worst = max_delta(self.curves, eps, rel_tol, DEFAULT_ABS_TOL)
            methods = ",".join(sorted({m for c in self.curves for m in c.methods_used}))
            return Bound("delta", min(lo, hi), hi, "upper", "poisson-binomial:" + methods,
                         self.n, self.description, {"eps": eps},
                         details={"worst": worst, **self.selection})
        if self.pairs is not None:
            lo, hi, res, details = delta_max(self.pairs, self.n, eps, rel_tol=rel_tol,
                                             method=self.method, executor=executor)
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


def check_rel_tol(value: object, name: str = "rel_tol") -> float:
    """A relative bracket width in ``(0, 0.5]``, else :class:`ParameterError`."""
    return V.positive_float(name, value, upper=0.5)


def _delta_task(prof: PrivacyProfile, rel_tol: float, executor, progress, strict: bool,
                eps: float) -> Bound:
    """One ``delta(eps)`` of ``prof``, reported; a bracket the backends certified only wider
    than ``rel_tol`` (they accept one at the atoms' floating-point floor) flagged or refused
    (:func:`amp.core.result.held_or_raise`, as ``eps`` brackets are)."""
    r = delta_as_asked(prof._delta_one(eps, rel_tol, executor), rel_tol, strict,
                       stacklevel=4)       # the caller of amp.delta
    if progress is not None:
        progress(f"delta(eps={eps:.6g}) in [{r.lower:.4g}, {r.upper:.4g}]")
    return r


def delta_as_asked(r: Bound, rel_tol: float, strict: bool, stacklevel: int = 2) -> Bound:
    """``r``, a certified ``delta`` bracket, as :func:`amp.delta` returns it: flagged or,
    ``strict``, refused when wider than ``rel_tol`` (the backends accept one at the atoms'
    floating-point floor) unless wholly below ``1e-16`` (:func:`amp.core.result.held_or_raise`,
    the rule of ``eps`` brackets). ``stacklevel`` 1 points the warning at the caller."""
    eps = r.inputs.get("eps", float("nan"))
    return held_or_raise(r, rel_tol, strict, f"delta at eps={eps:g}",
                         f"rel_tol={rel_tol:g} cannot be certified (the floating-point floor "
                         "of the atoms or the backend's own accuracy); certified bracket "
                         f"[{r.lower:.12g}, {r.upper:.12g}], relative width {r.rel_width:.3g}",
                         abs_tol=DEFAULT_ABS_TOL, stacklevel=stacklevel + 1)


def _epsilon_task(prof: PrivacyProfile, rel_tol: float, executor, progress, strict: bool,
                  delta_: float) -> Bound:
    """One ``eps(delta)`` of ``prof``."""
    return prof._epsilon_one(delta_, rel_tol, executor, progress, strict)


def _flag_wider(res: Bound, rel_tol: float) -> Bound:
    """Flag (:func:`amp.core.result.flag_wider`) a certified bracket wider than ``rel_tol``
    that a law's search returned instead of refusing (``strict=False``)."""
    flagged = [p for p in res.parts if p.wider_than_asked]
    if not flagged or res.rel_width <= rel_tol:
        return res
    return flag_wider(res, rel_tol, flagged[0].details.get("wider_reason", ""), stacklevel=4)


def _laws_epsilon(prof: PrivacyProfile, delta_: float, rel_tol: float,
                  progress: Progress | None, strict: bool = True
                  ) -> tuple[list[Bound], int]:
    """One eps bracket per law of ``prof`` (in the profile's order), cheap laws first.

    Once a law's bracket has a lower end ``L > 0``, every further law is first evaluated
    once at ``L`` with a loose bracket: ``delta_upper(L) <= delta`` certifies
    that its threshold is ``<= L``, so it cannot raise the maximum's lower end (``L``) nor its
    upper end (``>= L``); its part is then ``[0, L]`` (``details["pruned"]``) and its search
    is skipped. Otherwise it is searched in full. The combined bracket ``[max lower, max
    upper]`` is the same as searching every law."""
    curves = prof.curves
    order = sorted(range(len(curves)), key=lambda i: not curves[i].structured)
    abs_tol = min(1e-16, 1e-3 * delta_)

    def check(c, best: float) -> Bound | None:
        chk = None
        # a cheap certified curve first where one structured evaluation is costly
        pre = getattr(c, "quick_curve", None)
        for cur in ([pre()] if callable(pre) and pre() is not None else []) + [c]:
            try:
                chk = cur.delta_for_search(best, 0.05, abs_tol)
            except NumericalError:
                chk = None
            if chk is not None and chk.upper <= delta_:
                break
        return chk

    return _prune_then_search(prof, curves, order, delta_, check, lambda c: epsilon_of_curve(
        c, delta_, c.max_eps, rel_tol=rel_tol, bound=prof.bound, n=prof.n,
        mechanism=c.law.label, progress=progress, strict=strict))


def _prune_then_search(prof: PrivacyProfile, curves: list, order: list[int], delta_: float,
                       check, search) -> tuple[list[Bound], int]:
    """The one prune-then-refine loop over a profile's curves, in ``order``: once a bracket
    has a lower end ``L > 0``, a further curve whose certified ``check(c, L)`` has an upper
    end ``<= delta_`` has its threshold ``<= L`` and cannot raise the maximum: its part is
    ``[0, L]`` (``details["pruned"]``); every other curve is searched (``search(c)``).
    Returns the parts in the curves' order and the number pruned."""
    parts: list[Bound | None] = [None] * len(curves)
    best, pruned = 0.0, 0
    for i in order:
        c = curves[i]
        if best > 0:
            chk = check(c, best)
            if chk is not None and chk.upper <= delta_:
                parts[i] = Bound("eps", 0.0, best, prof.bound, chk.method, prof.n, c.law.label,
                                 {"delta": delta_}, details={"evaluations": 1, "pruned": True})
                pruned += 1
                continue
        parts[i] = search(c)
        best = max(best, parts[i].lower)
    return parts, pruned  # type: ignore[return-value]


def _victims_epsilon(prof: PrivacyProfile, delta_: float, rel_tol: float,
                     progress: Progress | None, strict: bool = True) -> Bound:
    """``eps(delta)`` of a population's upper profile: the largest of its victims'
    thresholds (:mod:`amp.backends.population_upper`).

    Victims are taken in decreasing order of an (uncertified) estimate; the first is searched
    (:func:`amp.inversion.epsilon_of_curve`), and every further victim is first checked at the
    best lower end ``L`` found so far, by its Chernoff bound (no tables) and then one coarse
    certified bracket: ``delta_upper(L) <= delta`` certifies that its threshold is ``<= L`` (it
    cannot raise the maximum), else it is searched too."""
    curves: list[VictimCurve] = prof.curves  # type: ignore[assignment]

    def guess(c: VictimCurve) -> float:
        try:
            return estimate_epsilon(c, delta_, c.max_eps)
        except (ParameterError, ArithmeticError, ValueError):
            return c.max_eps
    order = sorted(range(len(curves)), key=lambda i: -guess(curves[i]))
    abs_tol = min(1e-16, 1e-3 * delta_)

    def check(c: VictimCurve, best: float) -> Bound:
        ch = c.chernoff(best)          # no tables; else one coarse certified bracket
        return Bound("delta", 0.0, ch, "upper", "chernoff") if ch <= delta_ else \
            c.delta(best, 0.05, abs_tol)

    parts, pruned = _prune_then_search(prof, curves, order, delta_, check,
                                       lambda c: epsilon_of_curve(
                                           c, delta_, c.max_eps, rel_tol=rel_tol, n=prof.n,
                                           mechanism=c.law.label, progress=progress,
                                           strict=strict))
    done = [p for p in parts if p is not None]
    methods = ",".join(sorted({m for c in curves for m in c.methods_used}))
    return Bound("eps", max(p.lower for p in done), max(p.upper for p in done), "upper",
                 "poisson-binomial:" + methods, prof.n, prof.description, {"delta": delta_},
                 parts=tuple(done),
                 details={"worst_law": max(done, key=lambda b: b.upper).mechanism,
                          "pruned_laws": pruned,
                          "evaluations": sum(c.evaluations for c in curves), **prof.selection})
