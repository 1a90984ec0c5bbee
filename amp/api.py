"""The front door: certified ``delta``, ``eps`` and ``eps0`` of a shuffled local randomizer.

>>> import amp
>>> m = amp.KRR(4.0, k=10)
>>> r = amp.epsilon(m, 10_000, 1e-6)       # Theorem 4 (blanket) bound
>>> r.value == r.upper and r.rel_width <= 1e-4
True

Every function returns a :class:`~amp.core.result.Bound` (a list of them for a sequence of
inputs): the exact value of the selected bound lies in ``bound.bracket`` and ``bound.value`` is
the end to use. ``bound="upper"`` (default) is the optimal decomposition bound of Theorems 3-4,
``bound="lower"`` the explicit dataset pair of Theorem 5 (see :mod:`amp.privacy_profile`). Datasets are
neighbours when one user's input is replaced (both directions are covered).
"""

from __future__ import annotations

from typing import Callable, Iterable

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.result import Bound, wider_or_raise
from amp.backends.dispatch import DEFAULT_REL_TOL, STRUCTURED_MIN_REL_TOL
from amp.inversion import (DEFAULT_EPS_REL_TOL, Progress, TOL_LOOSE, as_progress, crossing,
                           estimate_epsilon)
from amp.mechanisms.base import Mechanism
from amp.privacy_profile import (PrivacyProfile, check_bound, check_eps, check_mechanism,
                                  check_rel_tol)
from amp.pairs import check_executor, delta_max
from amp import rounds as R
from amp import population as P
from amp.mechanisms.subsampled import Subsampled
from amp.baselines import BOUNDS as BASELINES
from amp.frontdoor import (BOUND_CHOICES, ROUNDS_WHY, baseline_answer, check_bound_choice,
                           backend, check_method, no_method, population_answer, report_line,
                           width_ok)
from amp.backends.population_upper import max_delta

__all__ = ["profile", "delta", "epsilon", "epsilon_for", "epsilon_estimate", "calibrate_eps0",
           "compose",
           "DEFAULT_REL_TOL", "DEFAULT_EPS_REL_TOL"]


def _rel_tol(value: object, name: str = "rel_tol") -> float:
    return check_rel_tol(value, name)


def profile(mechanism: Mechanism, n: int, *, bound: str = "upper",
            method: str = "auto", executor: object = None, rel_tol: float | None = None,
            progress: Progress | bool | None = None) -> PrivacyProfile:
    """The certified privacy profile ``delta(eps)`` of ``mechanism`` for ``n`` users.

    Build once, then ask :func:`epsilon_for` or ``profile.delta(eps)`` many times: the eps-free
    tables of every pair law are reused. Implements the optimal decomposition (privacy blanket)
    bound of Theorems 3-4 (``bound="upper"``) or the lower bound of Theorem 5
    (``bound="lower"``), as a function of ``eps``.

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer, e.g. ``amp.KRR(4.0, k=10)`` (Table 1 rows, matrices, joint
        compositions).
    n : int
        Number of users, ``>= 1``.
    bound : {"upper", "lower"}, default "upper"
        Theorem 4's blanket bound or Theorem 5's lower bound.
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend; ``"auto"`` picks one per law and reports it in ``Bound.method``.
    executor : concurrent.futures.Executor, optional
        Runs a matrix mechanism's independent pair refinements (e.g.
        ``ProcessPoolExecutor(2)``; the CLI's ``--workers N``); default serial. The results
        are identical with and without one.
    rel_tol : float, optional
        Default relative width of the brackets the profile returns (``prof.delta``:
        ``2e-3``, ``prof.epsilon``: ``1e-4`` when not given).
    progress : callable or True, optional
        Default progress report of ``prof.delta`` / ``prof.epsilon`` (one-line messages;
        ``True``: lines on stderr).

    Returns
    -------
    PrivacyProfile
        The profile: the maximum over the mechanism's pair laws.

    Raises
    ------
    ParameterError
        A bad mechanism, ``n``, ``bound`` or ``method`` (the message names it).

    Examples
    --------
    >>> import amp
    >>> prof = amp.profile(amp.KRR(4.0, k=10), 10_000)
    >>> prof
    PrivacyProfile(10-RR (eps0=4), n=10000, bound='upper', 1 law(s))
    >>> [f"{b.value:.3e}" for b in prof.delta([0.3, 0.5])]
    ['2.628e-05', '2.786e-09']
    >>> round(prof.epsilon(1e-8).value, 3)
    0.476
    """
    return PrivacyProfile(mechanism, n, bound=bound, method=method, executor=executor,
                          rel_tol=rel_tol, progress=progress)


def delta(mechanism: Mechanism, n: int, eps: float | Iterable[float], *, bound: str = "upper",
          rel_tol: float | None = None, method: str = "auto", rounds: int = 1,
          sampling: float = 1.0, executor: object = None,
          progress: Progress | bool | None = None,
          strict: bool = False) -> Bound | list[Bound]:
    """Certified ``delta(eps)`` of ``mechanism`` shuffled among ``n`` users.

    ``bound="upper"``: Theorem 4's blanket bound (the optimal general clone decomposition,
    Theorem 3), the maximum over the mechanism's pair laws; ``value`` is the bracket's upper
    end. ``bound="lower"``: Theorem 5's explicit dataset pair, maximised over third inputs;
    ``value`` is the lower end. Computed by the certified version of Algorithm 4 (Section 5).
    A baseline's name (``"clone"``, ``"clone-closed"``, ``"hoeffding"``, ``"bennett"``,
    ``"stronger-clone"``: the CLI's ``--bound`` choices) gives that baseline
    (:mod:`amp.baselines`), the same numbers as ``python -m amp delta ... --bound NAME``.

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer, e.g. ``amp.KRR(4.0, k=10)``.
    n : int
        Number of users, ``>= 1``.
    eps : float or sequence of float
        Central ``eps >= 0``; a sequence gives a list of results in the same order.
    bound : {"upper", "lower", "clone", "clone-closed", "hoeffding", "bennett", \
"stronger-clone"}, default "upper"
        Theorem 4's blanket bound, Theorem 5's lower bound, or a baseline
        (:data:`BOUND_CHOICES`; the stronger clone is NOT a valid bound and warns).
    rel_tol : float, optional
        Largest relative width ``(upper - lower) / upper`` of each bracket; default ``2e-3``
        (one round). A bracket with ``upper <= 1e-16`` (a ``delta`` far below any
        practical target, e.g. ``[0, 8e-24]``) is an answer whatever its relative width; one
        that cannot be certified to ``rel_tol`` (the atoms' floating-point floor) is flagged
        or refused, see ``strict``. Where the width is not set by ``rel_tol`` (``rounds > 1``:
        fixed by the composition; a baseline: its own accuracy), a given ``rel_tol`` is
        checked and a wider bracket raises :class:`ParameterError` saying the width reached.
    method : {"auto", "structured", "cf", "fft", "exact", "poisson-binomial"}, default "auto"
        The backend; ``"auto"`` picks and reports it in ``Bound.method`` (one round of
        ``"upper"``/``"lower"`` only; elsewhere anything but ``"auto"`` is refused).
        For an :class:`amp.Population` every method gives the same bound, the sharpest amp
        has (each group at its own blanket mass, :mod:`amp.backends.population_upper`;
        ``rounds > 1``: composed from it); the method is the backend of each count, and
        ``"poisson-binomial"`` is accepted as that bound's name (``"auto"``).
    rounds : int, default 1
        Number of adaptive rounds. ``rounds > 1``: ``"upper"``: the bracket encloses the true
        composed ``delta`` of the shuffled mechanism, its upper end from dominating
        connect-the-dots PLDs of Theorem 4's profile (:mod:`amp.rounds`); ``"lower"``: the
        bracket encloses the composed ``delta`` of the Theorem 5 pair run every round, its
        lower end (``value``) below the true one (:func:`amp.rounds.compose_lower`). Needs
        ``pip install 'amp-shuffle[rounds]'``.
    sampling : float, default 1.0
        Poisson client subsampling rate ``q`` in ``(0, 1]``: each user takes part in a round
        with probability ``q`` (:class:`amp.mechanisms.subsampled.Subsampled`).
    executor : concurrent.futures.Executor, optional
        Runs independent sub-questions: a matrix mechanism's pair refinements (e.g.
        ``ProcessPoolExecutor(2)``; the CLI's ``--workers N``); default serial. Results are
        identical with and without one. Not used for the points of a sequence (they run in
        turn on one profile, whose caches narrow later brackets), with ``rounds > 1`` (one
        composition per ``eps``) nor by a baseline (vectorised over ``eps``).
    progress : callable or True, optional
        Called with one line per ``eps`` answered (``True``: lines on stderr).
    strict : bool, default False
        As in :func:`epsilon`: when ``rel_tol`` cannot be certified (e.g. ``rel_tol=1e-13``,
        below the floating-point floor of the atoms): ``False`` returns the valid bracket
        held, flagged (``wider_than_asked``, ``achieved_rel_tol``, an
        :class:`amp.AccuracyWarning`); ``True`` raises :class:`NumericalError` instead.

    Returns
    -------
    Bound or list of Bound
        Quantity ``"delta"``: the exact value of the selected bound lies in ``bracket``.

    Raises
    ------
    ParameterError
        Bad input (the message names the parameter), or a ``rel_tol`` that cannot be met.
    NumericalError
        ``rel_tol`` cannot be certified.

    Examples
    --------
    >>> import amp
    >>> m = amp.KRR(4.0, k=10)
    >>> r = amp.delta(m, 10_000, 0.5)
    >>> f"{r.value:.4e}", r.value == r.upper, r.rel_width <= 2e-3
    ('2.7864e-09', True, True)
    >>> low = amp.delta(m, 10_000, 0.3, bound="lower")       # Theorem 5
    >>> up = amp.delta(m, 10_000, 0.3)
    >>> low.value <= up.value
    True
    >>> clone = amp.delta(m, 10_000, 0.3, bound="clone")  # Theorem 3
    >>> clone.value > up.value
    True
    """
    check_mechanism(mechanism)
    bound = check_bound_choice(bound)
    method = check_method(method)
    eps_ = V.values("eps", eps, check_eps)
    T, q = R.check_rounds(rounds), R.check_sampling(sampling)
    tol = None if rel_tol is None else _rel_tol(rel_tol)
    report = as_progress(progress)
    ex = check_executor(executor)
    if bound in BASELINES:
        return baseline_answer("delta", bound, mechanism, n, eps_, tol, method, T, q, report)
    pop = population_answer("delta", mechanism, n, eps_, bound, method, T, q, tol, report,
                            strict)
    if pop is not None:
        return pop
    if T > 1:
        no_method(method, "rounds > 1")

        def one(e: float) -> Bound:
            b = (R.delta_rounds(mechanism, n, e, T, sampling=q) if bound == "upper" else
                 R.compose_lower([R.Round(mechanism, n, q, T)], eps=e))
            return report_line(report, width_ok(b, tol, f"with rounds={T}", ROUNDS_WHY))
        return [one(e) for e in eps_] if isinstance(eps_, list) else one(eps_)
    prof = PrivacyProfile(_sampled(mechanism, q), n, bound=bound, method=backend(method),
                          eps_hint=None if isinstance(eps_, list) else eps_, executor=ex)
    return prof.delta(eps_, rel_tol=DEFAULT_REL_TOL if tol is None else tol, progress=report,
                      strict=strict)


def epsilon(mechanism: Mechanism, n: int, delta: float | Iterable[float], *,
            bound: str = "upper",
            rel_tol: float | None = None, method: str = "auto",
            progress: Progress | bool | None = None, rounds: int = 1,
            sampling: float = 1.0, executor: object = None,
            strict: bool = False) -> Bound | list[Bound]:
    """Certified ``eps(delta)``: the smallest eps whose selected bound is ``<= delta``.

    ``bound="upper"`` (default): ``value`` (the bracket's upper end) is a guaranteed-valid eps
    for the shuffled mechanism (Theorem 4, the optimal decomposition bound). ``bound="lower"``:
    ``value`` (the lower end) is certified below the mechanism's true eps (Theorem 5). The
    search inverts the certified ``delta(eps)`` curve (:meth:`PrivacyProfile.epsilon
    <amp.PrivacyProfile.epsilon>`). A baseline's name (``"clone"``,
    ``"clone-closed"``, ``"hoeffding"``, ``"bennett"``, ``"stronger-clone"``: the CLI's
    ``--bound`` choices) gives that baseline (:mod:`amp.baselines`), the same numbers as
    ``python -m amp epsilon ... --bound NAME``.

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer, e.g. ``amp.RAPPOR(4.0)``.
    n : int
        Number of users, ``>= 1``.
    delta : float or sequence of float
        Target ``delta`` in ``(0, 1)``; a sequence gives a list of results in the same order
        (one profile is built and reused).
    bound : {"upper", "lower", "clone", "clone-closed", "hoeffding", "bennett", \
"stronger-clone"}, default "upper"
        Theorem 4's blanket bound, Theorem 5's lower bound, or a baseline
        (:data:`BOUND_CHOICES`; the stronger clone is NOT a valid bound and warns; the closed
        form raises :class:`ParameterError` outside its validity condition).
    rel_tol : float, optional
        Largest relative width of the returned bracket; default ``1e-4`` (one round). With
        ``rounds > 1`` the width is fixed by the composition and with a baseline by its own
        search (all but ``"clone-closed"``: ``rel_tol`` is their search tolerance ``xtol``,
        default ``1e-9``): a given ``rel_tol`` is checked, and a wider bracket raises
        :class:`ParameterError` saying the width reached.
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend (one round of ``"upper"``/``"lower"`` only; elsewhere anything
        but ``"auto"`` is refused).
        For an :class:`amp.Population` every method gives the same bound, the sharpest amp
        has (each group at its own blanket mass, :mod:`amp.backends.population_upper`;
        ``rounds > 1``: composed from it); the method is the backend of each count, and
        ``"poisson-binomial"`` is accepted as that bound's name (``"auto"``).
    progress : callable or True, optional
        Called with one-line progress messages during long searches (``True``: lines on
        stderr).
    rounds : int, default 1
        Number of adaptive rounds. ``rounds > 1``: ``"upper"``: ``[lower, upper]`` encloses
        the true composed ``eps(delta)``; ``upper`` is certified (dominating connect-the-dots
        PLDs of Theorem 4's profile, composed, :mod:`amp.rounds`), ``lower`` comes from the
        Theorem 5 dataset pair run every round. ``"lower"``: the bracket encloses the exact
        composed ``eps(delta)`` of that pair, and ``value`` (its lower end, the same number)
        is below the true composed eps (:func:`amp.rounds.compose_lower`), as for one round. Needs
        ``pip install 'amp-shuffle[rounds]'``.
    sampling : float, default 1.0
        Poisson client subsampling rate ``q`` in ``(0, 1]`` (a user who does not take part
        sends nothing; :class:`amp.mechanisms.subsampled.Subsampled`).
    executor : concurrent.futures.Executor, optional
        Runs independent sub-questions: a matrix mechanism's pair evaluations (any
        ``concurrent.futures.Executor``, e.g. ``ProcessPoolExecutor(2)``; the CLI's
        ``--workers N``); default serial. Results are identical with and without one. Not
        used for the points of a sequence (in turn, on one profile), with ``rounds > 1`` nor
        by a baseline.
    strict : bool, default False
        When ``rel_tol`` cannot be certified (e.g. a tiny ``delta`` at the floating-point
        floor): ``False`` returns the valid bracket held, flagged (``wider_than_asked``,
        ``achieved_rel_tol``, an :class:`amp.AccuracyWarning`); ``True`` raises
        :class:`NumericalError` instead.

    Returns
    -------
    Bound or list of Bound
        Quantity ``"eps"``; ``value`` is the number to use. For a matrix mechanism,
        ``details`` reports the pairs, how many were pruned and refined, and the worst pair
        (:func:`amp.pairsearch.epsilon_max`).

    Raises
    ------
    ParameterError
        Bad input (the message names the parameter), or a ``rel_tol`` that cannot be met.
    NumericalError
        The accuracy ``rel_tol`` cannot be certified (the message says why).

    Examples
    --------
    >>> import amp
    >>> r = amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6)
    >>> round(r.value, 4), r.value == r.upper, r.rel_width <= 1e-4
    (0.3805, True, True)
    >>> round(amp.epsilon(amp.OUE(4.0), 10_000, 1e-6).value, 4)
    0.2788
    >>> clone = amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6, bound="clone")
    >>> round(clone.value, 4)
    0.6009
    """
    check_mechanism(mechanism)
    bound = check_bound_choice(bound)
    method = check_method(method)
    deltas = V.values("delta", delta, V.probability_open)
    T, q = R.check_rounds(rounds), R.check_sampling(sampling)
    tol = None if rel_tol is None else _rel_tol(rel_tol)
    report = as_progress(progress)
    ex = check_executor(executor)
    if bound in BASELINES:
        return baseline_answer("epsilon", bound, mechanism, n, deltas, tol, method, T, q, report)
    pop = population_answer("epsilon", mechanism, n, deltas, bound, method, T, q, tol,
                            report)
    if pop is not None:
        return pop
    if T > 1:
        no_method(method, "rounds > 1")

        def one(d: float) -> Bound:
            b = (R.epsilon_rounds(mechanism, n, d, T, sampling=q) if bound == "upper" else
                 R.compose_lower([R.Round(mechanism, n, q, T)], delta=d))
            return report_line(report, width_ok(b, tol, f"with rounds={T}", ROUNDS_WHY))
        return [one(d) for d in deltas] if isinstance(deltas, list) else one(deltas)
    prof = PrivacyProfile(_sampled(mechanism, q), n, bound=bound, method=backend(method),
                          executor=ex)
    return prof.epsilon(deltas, rel_tol=DEFAULT_EPS_REL_TOL if tol is None else tol,
                        progress=report, strict=strict)


def _sampled(mechanism: Mechanism, q: float) -> Mechanism:
    """The per-round randomizer: ``Subsampled`` when ``sampling < 1``."""
    return mechanism if q == 1 else Subsampled(mechanism, q)


def compose(rounds: Iterable[object], *, delta: float | None = None,
            eps: float | None = None, bound: str = "upper", rel_tol: float | None = None,
            progress: Progress | bool | None = None, executor: object = None) -> Bound:
    """Certified ``eps(delta)`` (give ``delta``) or ``delta(eps)`` (give ``eps``) after
    heterogeneous adaptive rounds, each its own mechanism, ``n`` and sampling rate.

    ``rounds``: :class:`amp.Round` objects or tuples ``(mechanism, n[, sampling[,
    times]])``. The bracket encloses the true composed value (:func:`amp.rounds.compose`):
    the upper end composes each round's Theorem 4 profile, the lower end each round's
    Theorem 5 pair. Needs the ``rounds`` extra (``pip install 'amp-shuffle[rounds]'``).

    Parameters
    ----------
    rounds : iterable of Round or tuple
        The rounds, each ``(mechanism, n)``, ``(mechanism, n, sampling)`` or
        ``(mechanism, n, sampling, times)``.
    delta : float, optional
        Target ``delta``: the answer is ``eps(delta)``. Give exactly one of ``delta``, ``eps``.
    eps : float, optional
        Central ``eps``: the answer is ``delta(eps)``.
    bound : {"upper", "lower"}, default "upper"
        ``"upper"``: the bracket encloses the true composed value, ``value`` its certified
        upper end. ``"lower"``: the bracket encloses the composed value of one Theorem 5
        dataset pair run in every round, ``value`` (its lower end) below the true one
        (:func:`amp.rounds.compose_lower`).
    rel_tol : float, optional
        The bracket's width is set by the composition, not by a tolerance: a given
        ``rel_tol`` is checked, and a wider bracket raises :class:`ParameterError` saying the
        width reached.
    progress : callable or True, optional
        Called with one line when the answer is known (``True``: a line on stderr).
    executor : concurrent.futures.Executor, optional
        Not used (accepted for a uniform signature; the composition is one sequence of FFTs).

    Returns
    -------
    Bound
        Quantity ``"eps"`` or ``"delta"`` of the composition.

    Examples
    --------
    >>> import amp
    >>> rounds = [(amp.KRR(2.0, k=10), 10_000),
    ...           (amp.KRR(1.0, k=10), 5_000, 0.5, 3)]
    >>> r = amp.compose(rounds, delta=1e-6)
    >>> r.lower <= r.value == r.upper
    True
    """
    bound = check_bound(bound)
    tol = None if rel_tol is None else _rel_tol(rel_tol)
    report = as_progress(progress)
    check_executor(executor)
    b = (R.compose(rounds, delta=delta, eps=eps) if bound == "upper" else
         R.compose_lower(rounds, delta=delta, eps=eps))
    return report_line(report, width_ok(b, tol, "for a composition", ROUNDS_WHY))


def epsilon_for(prof: PrivacyProfile, delta: float | Iterable[float], *,
                rel_tol: float | None = None, progress: Progress | bool | None = None,
                executor: object = None, strict: bool = False) -> Bound | list[Bound]:
    """Certified ``eps(delta)`` of a profile: an alias of :meth:`PrivacyProfile.epsilon
    <amp.PrivacyProfile.epsilon>` (``amp.epsilon_for(prof, d)`` is
    ``prof.epsilon(d)``, same arguments, same numbers; ``strict`` as in :func:`epsilon`): the
    smallest eps where Theorem 4's bound (Theorem 5's for a lower profile) is below ``delta``.

    Parameters
    ----------
    prof : PrivacyProfile
        A profile from :func:`profile`.
    delta : float or sequence of float
        Target ``delta`` in ``(0, 1)``; a sequence gives a list in the same order.
    rel_tol, progress, executor, strict
        As in :meth:`PrivacyProfile.epsilon <amp.PrivacyProfile.epsilon>`.

    Returns
    -------
    Bound or list of Bound
        Quantity ``"eps"``, as :meth:`PrivacyProfile.epsilon
        <amp.PrivacyProfile.epsilon>` returns it.

    Examples
    --------
    >>> import amp
    >>> prof = amp.profile(amp.KRR(4.0, k=10), 10_000)
    >>> [round(amp.epsilon_for(prof, d).value, 4) for d in (1e-6, 1e-8)]
    [0.3805, 0.476]
    """
    if not isinstance(prof, PrivacyProfile):
        raise ParameterError(f"prof must be a PrivacyProfile, got {type(prof).__name__}")
    return prof.epsilon(delta, rel_tol=rel_tol, progress=progress, executor=executor,
                        strict=strict)


def epsilon_estimate(mechanism: Mechanism, n: int, delta: float, *,
                     bound: str = "upper") -> float:
    """Uncertified saddle-point estimate of ``eps(delta)`` (max over the profile's laws).

    Fast, for quick figures of the Theorem 4 (or Theorem 5) curve; NOT a privacy guarantee
    (use :func:`amp.epsilon` for that). Meant for smooth curves (large ``n``).

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer.
    n : int
        Number of users.
    delta : float
        Target ``delta`` in ``(0, 1)``.
    bound : {"upper", "lower"}, default "upper"
        Which curve to estimate.

    Returns
    -------
    float
        An estimate of ``eps(delta)``, not certified.

    Examples
    --------
    >>> import amp
    >>> from amp.api import epsilon_estimate
    >>> round(epsilon_estimate(amp.KRR(4.0, k=10), 10_000, 1e-6), 2)
    0.38
    """
    prof = PrivacyProfile(mechanism, n, bound=bound)
    delta_ = V.probability_open("delta", delta)
    return max(estimate_epsilon(c, delta_, c.max_eps) for c in prof.curves)


class _FamilyCurve:
    """``eps0 -> delta(eps)`` of ``make(eps0)`` for ``n`` users (a curve for the search)."""

    def __init__(self, make: Callable[[float], Mechanism], n: int, eps: float, method: str,
                 executor: object = None):
        self.make, self.n, self.eps, self.method = make, n, eps, method
        self.executor = executor
        self.used: set[str] = set()

    def delta_for_search(self, eps0: float, tol: float, abs_tol: float) -> Bound:
        m = check_mechanism(self.make(eps0))
        if self.method == "poisson-binomial":      # the old name of a population's bound
            P.front_door_population(m, self.n, "upper")
        prof = PrivacyProfile(m, self.n, method=backend(self.method))
        tol = max(tol, STRUCTURED_MIN_REL_TOL)
        if prof.population is not None:             # a family of fixed populations
            lo, hi, _ = max_delta(prof.curves, self.eps, tol, abs_tol)
            self.used.add("poisson-binomial")
            return Bound("delta", min(lo, hi), hi, "upper", ",".join(sorted(self.used)),
                         self.n, inputs={"eps": self.eps})
        if prof.pairs is not None:
            # a matrix: the pruned maximum over its pairs (amp.pairs.delta_max)
            res = delta_max(prof.pairs, self.n, self.eps, rel_tol=tol, method=self.method,
                            abs_tol=abs_tol, goal=tol, executor=self.executor)[2]
        else:
            res = [c.delta_for_search(self.eps, tol, abs_tol) for c in prof.curves]
        self.used.update(r.method for r in res)
        floor = max(float(r.details.get("floor", 0.0)) for r in res)
        return Bound("delta", min(max(r.lower for r in res), 1.0),
                     min(max(r.upper for r in res), 1.0), "upper", ",".join(sorted(self.used)),
                     self.n, inputs={"eps": self.eps}, details={"floor": floor})


def calibrate_eps0(make: Callable[[float], Mechanism], n: int, eps: float, delta: float, *,
                   rel_tol: float = DEFAULT_EPS_REL_TOL, eps0_max: float = V.MAX_EPS0,
                   progress: Progress | bool | None = None, method: str = "auto",
                   executor: object = None, strict: bool = False) -> Bound:
    """Largest local ``eps0`` whose certified shuffled guarantee meets ``(eps, delta)``.

    ``make(eps0)`` builds the mechanism (e.g. ``lambda e0: amp.KRR(e0, k=10)``). The value is
    certified: ``delta_upper(eps) <= delta`` for ``make(value)`` (Theorem 4). The bracket
    ``[value, upper]`` has ``delta_lower(eps) > delta`` at ``upper`` (or ``upper = eps0_max``),
    so it encloses the exact threshold of the blanket bound when that is monotone in ``eps0``
    (observed for every mechanism of the paper, not proven; the value is certified
    regardless).

    Parameters
    ----------
    make : callable
        ``eps0 -> Mechanism``, the family to calibrate.
    n : int
        Number of users, ``>= 1``.
    eps : float
        Target central ``eps > 0``.
    delta : float
        Target ``delta`` in ``(0, 1)``.
    rel_tol : float, default 1e-4
        Largest relative width of the returned bracket.
    eps0_max : float, optional
        Largest ``eps0`` searched.
    progress : callable or True, optional
        Called with one-line progress messages (``True``: lines on stderr).
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend.
        ``make(eps0)`` may return an :class:`amp.Population` (e.g. personalised eps0 at
        fixed ratios, ``lambda e0: amp.Population([(900, amp.KRR(e0, k=10)), (100,
        amp.KRR(2 * e0, k=10))])``); ``eps0`` is then the family's parameter and the bound
        is the population's (each group at its own blanket mass); ``"poisson-binomial"``
        is accepted as its name and then requires a population.
    executor : concurrent.futures.Executor, optional
        Runs a matrix family's independent pair refinements at each probed ``eps0`` (the
        probes themselves run in turn: each depends on the last); default serial. Results
        are identical with and without one.
    strict : bool, default False
        ``True``: an uncertifiable ``rel_tol`` raises; ``False``: the bracket held, flagged.

    Returns
    -------
    Bound
        Quantity ``"eps0"``, ``bound="upper"`` (Theorem 4's curve), ``side == "lower"``: ``value``
        is the bracket's *lower* end, the largest certified-safe ``eps0``; the exact threshold of
        Theorem 4's bound lies in the bracket and ``upper`` is not safe to use. ``as_dict()`` and
        ``str()`` say so (``"side": "lower"``; ``eps0 <= value ..., calibrated with Theorem 4``).

    Examples
    --------
    >>> import amp
    >>> family = lambda e0: amp.KRR(e0, k=10)
    >>> r = amp.calibrate_eps0(family, 10_000, 0.5, 1e-6)
    >>> round(r.value, 3), r.value == r.lower, r.side
    (4.428, True, 'lower')
    >>> amp.delta(amp.KRR(r.value, k=10), 10_000, 0.5).value <= 1e-6
    True
    """
    n = V.users(n)
    eps = V.eps_value(eps, allow_zero=False)
    delta_ = V.probability_open("delta", delta)
    rel_tol = _rel_tol(rel_tol)
    progress = as_progress(progress)
    executor = check_executor(executor)
    eps0_max = V.eps0_value(eps0_max, "eps0_max")
    method = check_method(method)
    if not callable(make):
        raise ParameterError(f"make must be a callable eps0 -> mechanism, got "
                             f"{type(make).__name__}")
    curve = _FamilyCurve(make, n, eps, method, executor)

    def status(e0: float) -> int:
        r = curve.delta_for_search(e0, TOL_LOOSE, 1e-3 * delta_)
        if progress is not None:
            progress(f"eps0={e0:.6g}: delta in [{r.lower:.4g}, {r.upper:.4g}]")
        return 1 if r.upper <= delta_ else (-1 if r.lower > delta_ else 0)

    safe = min(eps, eps0_max)     # eps0 <= eps gives delta = 0 (G <= 0)
    unsafe, known_bad = None, False
    if check_mechanism(make(safe)).eps0 > eps:
        # the family's parameter is not its mechanism's eps0 (e.g. a population whose groups
        # run multiples of it): eps0 <= eps does not give delta = 0 here, so the safe end is
        # certified by an evaluation, halving the parameter until one is
        while (s := status(safe)) != 1:
            unsafe, known_bad = safe, s == -1
            safe *= 0.5
            if safe < 1e-9 * eps:
                raise ParameterError(f"no eps0 of the family down to {safe:.3g} has a certified "
                                     f"delta(eps={eps:g}) <= {delta_:g}")
    e0 = max(2 * eps, eps + 0.1)
    while unsafe is None:
        e0 = min(e0, eps0_max)
        s = status(e0)
        if s == 1 and e0 == eps0_max:       # the cap itself is certified: the answer
            return _eps0_bound(eps0_max, eps0_max, make, n, eps, delta_, curve)
        if s == 1:
            safe, e0 = e0, e0 * 2
        else:   # certified bad (s = -1), or ambiguous: the search below decides
            unsafe, known_bad = e0, s == -1
    try:
        c = crossing(curve, delta_, safe, unsafe, decreasing=False, rel_tol=rel_tol,
                     good_end_known=True, bad_end_known=known_bad, start=0.5 * (safe + unsafe),
                     progress=progress, name="eps0")
    except NumericalError as exc:   # a bracket held (WiderThanAsked): flagged unless strict
        return wider_or_raise(exc, strict, rel_tol, "eps0 calibration",
                              lambda lo, hi: _eps0_bound(lo, hi, make, n, eps, delta_, curve))
    return _eps0_bound(c.lo, c.hi, make, n, eps, delta_, curve)


def _eps0_bound(lo: float, hi: float, make, n, eps, delta_, curve) -> Bound:
    return Bound("eps0", lo, hi, "upper", "search:" + ",".join(sorted(curve.used)),
                 n, check_mechanism(make(lo)).describe(), {"eps": eps, "delta": delta_})
