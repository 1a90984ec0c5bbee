"""The front door: certified ``delta``, ``eps`` and ``eps0`` of a shuffled local randomizer.

>>> import amp
>>> m = amp.KRR(4.0, k=10)
>>> r = amp.epsilon(m, 10_000, 1e-6)       # Theorem 4 (blanket) bound
>>> r.value == r.upper and r.rel_width <= 1e-4
True

Every function returns a :class:`~amp.core.result.Bound` (a list of them for a sequence of
inputs): the exact value of the selected bound lies in ``bound.bracket`` and ``bound.value`` is
the end to use. ``bound="upper"`` (default) is the optimal decomposition bound of Theorems 3-4,
``bound="lower"`` the explicit dataset pair of Theorem 5 (see :mod:`amp.profile`). Datasets are
neighbours when one user's input is replaced (both directions are covered).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.result import Bound
from amp.backends.dispatch import DEFAULT_REL_TOL, STRUCTURED_MIN_REL_TOL
from amp.inversion import (DEFAULT_EPS_REL_TOL, Progress, TOL_LOOSE, crossing,
                         epsilon_of_curve, estimate_epsilon)
from amp.mechanisms.base import Mechanism
from amp.profile import PrivacyProfile, check_bound, check_eps, check_mechanism
from amp.pairs import delta_max
from amp.pairsearch import epsilon_max
from amp import rounds as R
from amp.mechanisms.subsampled import Subsampled

__all__ = ["profile", "delta", "epsilon", "epsilon_for", "epsilon_estimate", "calibrate_eps0",
           "compose",
           "DEFAULT_REL_TOL", "DEFAULT_EPS_REL_TOL"]


def _rel_tol(value: object, name: str = "rel_tol") -> float:
    return V.positive_float(name, value, upper=0.5)


def profile(mechanism: Mechanism, n: int, *, bound: str = "upper",
            method: str = "auto", executor: object = None) -> PrivacyProfile:
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
    >>> round(amp.epsilon_for(prof, 1e-8).value, 3)
    0.476
    """
    return PrivacyProfile(mechanism, n, bound=bound, method=method, executor=executor)


def delta(mechanism: Mechanism, n: int, eps: float | Iterable[float], *, bound: str = "upper",
          rel_tol: float = DEFAULT_REL_TOL, method: str = "auto", rounds: int = 1,
          sampling: float = 1.0, executor: object = None) -> Bound | list[Bound]:
    """Certified ``delta(eps)`` of ``mechanism`` shuffled among ``n`` users.

    ``bound="upper"``: Theorem 4's blanket bound (the optimal general clone decomposition,
    Theorem 3), the maximum over the mechanism's pair laws; ``value`` is the bracket's upper
    end. ``bound="lower"``: Theorem 5's explicit dataset pair, maximised over third inputs;
    ``value`` is the lower end. Computed by the certified version of Algorithm 4 (Section 5).

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer, e.g. ``amp.KRR(4.0, k=10)``.
    n : int
        Number of users, ``>= 1``.
    eps : float or sequence of float
        Central ``eps >= 0``; a sequence gives a list of results in the same order.
    bound : {"upper", "lower"}, default "upper"
        Theorem 4's blanket bound or Theorem 5's lower bound.
    rel_tol : float, default 2e-3
        Largest relative width ``(upper - lower) / upper`` of each bracket.
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The backend; ``"auto"`` picks and reports it in ``Bound.method``.
    rounds : int, default 1
        Number of adaptive rounds. ``rounds > 1``: the bracket encloses the true composed
        ``delta`` of the shuffled mechanism (upper: dominating connect-the-dots PLDs of
        Theorem 4's profile; lower: the Theorem 5 pair run every round; :mod:`amp.rounds`,
        needs ``pip install 'amp-shuffle[rounds]'``); ``rel_tol`` and ``method`` do not apply.
    sampling : float, default 1.0
        Poisson client subsampling rate ``q`` in ``(0, 1]``: each user takes part in a round
        with probability ``q`` (:class:`amp.mechanisms.subsampled.Subsampled`).
    executor : concurrent.futures.Executor, optional
        Runs a matrix mechanism's independent pair refinements (any
        ``concurrent.futures.Executor``, e.g. ``ProcessPoolExecutor(2)``; the CLI's
        ``--workers N``); default serial. Results are identical with and without one.

    Returns
    -------
    Bound or list of Bound
        Quantity ``"delta"``: the exact value of the selected bound lies in ``bracket``.

    Raises
    ------
    ParameterError
        Bad input (the message names the parameter).
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
    """
    check_mechanism(mechanism)
    check_bound(bound)
    eps_ = V.values("eps", eps, check_eps)
    T, q = R.check_rounds(rounds), R.check_sampling(sampling)
    if T > 1:
        one = lambda e: _side(R.delta_rounds(mechanism, n, e, T, sampling=q), bound)  # noqa: E731
        return [one(e) for e in eps_] if isinstance(eps_, list) else one(eps_)
    rel_tol = _rel_tol(rel_tol)
    prof = PrivacyProfile(_sampled(mechanism, q), n, bound=bound, method=method,
                          eps_hint=None if isinstance(eps_, list) else eps_, executor=executor)
    return prof.delta(eps_, rel_tol=rel_tol)


def epsilon(mechanism: Mechanism, n: int, delta: float | Iterable[float], *,
            bound: str = "upper",
            rel_tol: float = DEFAULT_EPS_REL_TOL, method: str = "auto",
            progress: Progress | None = None, rounds: int = 1,
            sampling: float = 1.0, executor: object = None,
            strict: bool = False) -> Bound | list[Bound]:
    """Certified ``eps(delta)``: the smallest eps whose selected bound is ``<= delta``.

    ``bound="upper"`` (default): ``value`` (the bracket's upper end) is a guaranteed-valid eps
    for the shuffled mechanism (Theorem 4, the optimal decomposition bound). ``bound="lower"``:
    ``value`` (the lower end) is certified below the mechanism's true eps (Theorem 5). The
    search inverts the certified ``delta(eps)`` curve (:func:`amp.inversion.crossing`).

    Parameters
    ----------
    mechanism : Mechanism
        The local randomizer, e.g. ``amp.RAPPOR(4.0)``.
    n : int
        Number of users, ``>= 1``.
    delta : float or sequence of float
        Target ``delta`` in ``(0, 1)``; a sequence gives a list of results in the same order
        (one profile is built and reused).
    bound : {"upper", "lower"}, default "upper"
        Theorem 4's blanket bound or Theorem 5's lower bound.
    rel_tol : float, default 1e-4
        Largest relative width of the returned bracket.
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend.
    progress : callable, optional
        Called with one-line progress messages during long searches.
    rounds : int, default 1
        Number of adaptive rounds. ``rounds > 1``: ``[lower, upper]`` encloses the true
        composed ``eps(delta)`` of the shuffled mechanism; ``upper`` is certified (dominating
        connect-the-dots PLDs of Theorem 4's profile, composed), ``lower`` comes from the
        Theorem 5 dataset pair run every round (:mod:`amp.rounds`, needs ``pip install
        'amp-shuffle[rounds]'``); ``rel_tol`` and ``method`` do not apply.
    sampling : float, default 1.0
        Poisson client subsampling rate ``q`` in ``(0, 1]`` (a user who does not take part
        sends nothing; :class:`amp.mechanisms.subsampled.Subsampled`).
    executor : concurrent.futures.Executor, optional
        Runs a matrix mechanism's independent pair evaluations (any
        ``concurrent.futures.Executor``, e.g. ``ProcessPoolExecutor(2)``; the CLI's
        ``--workers N``); default serial. Results are identical with and without one.
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
        Bad input (the message names the parameter).
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
    """
    check_mechanism(mechanism)
    check_bound(bound)
    deltas = V.values("delta", delta, V.probability_open)
    T, q = R.check_rounds(rounds), R.check_sampling(sampling)
    if T > 1:
        one = lambda d: _side(R.epsilon_rounds(mechanism, n, d, T, sampling=q), bound)  # noqa: E731
        return [one(d) for d in deltas] if isinstance(deltas, list) else one(deltas)
    prof = PrivacyProfile(_sampled(mechanism, q), n, bound=bound, method=method,
                          executor=executor)
    if isinstance(deltas, list):
        return [epsilon_for(prof, d, rel_tol=rel_tol, progress=progress, strict=strict)
                for d in deltas]
    return epsilon_for(prof, deltas, rel_tol=rel_tol, progress=progress, strict=strict)


def _sampled(mechanism: Mechanism, q: float) -> Mechanism:
    """The per-round randomizer: ``Subsampled`` when ``sampling < 1``."""
    return mechanism if q == 1 else Subsampled(mechanism, q)


def _side(b: Bound, bound: str) -> Bound:
    """A composed bracket with ``value`` on the side the caller selected."""
    return b if bound == "upper" else replace(b, bound="lower")


def compose(rounds: Iterable[object], *, delta: float | None = None,
            eps: float | None = None) -> Bound:
    """Certified ``eps(delta)`` (give ``delta``) or ``delta(eps)`` (give ``eps``) after
    heterogeneous adaptive rounds, each its own mechanism, ``n`` and sampling rate.

    ``rounds``: :class:`amp.rounds.Round` objects or tuples ``(mechanism, n[, sampling[,
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
    return R.compose(rounds, delta=delta, eps=eps)


def epsilon_for(prof: PrivacyProfile, delta: float, *, rel_tol: float = DEFAULT_EPS_REL_TOL,
                progress: Progress | None = None, strict: bool = True) -> Bound:
    """Certified ``eps(delta)`` of a :class:`~amp.profile.PrivacyProfile` (reusing its tables).

    The profile is the maximum over its laws, so its ``eps(delta)`` is the maximum of the laws'
    thresholds: each law is searched (:func:`amp.inversion.crossing`) and the brackets' ends are
    combined by ``max``. The bound is the profile's (Theorem 4 or Theorem 5). A matrix
    mechanism's upper profile prunes its pairs first (:func:`amp.pairsearch.epsilon_max`:
    pairs certified not to raise the maximum are not searched; ``details`` gives the counts
    and the worst pair), using the profile's ``executor``.

    Parameters
    ----------
    prof : PrivacyProfile
        A profile from :func:`profile` (or :class:`~amp.profile.PrivacyProfile`).
    delta : float
        Target ``delta`` in ``(0, 1)``.
    rel_tol : float, default 1e-4
        Largest relative width of the returned bracket.
    progress : callable, optional
        Called with one-line progress messages during long searches.
    strict : bool, default True
        ``False``: a bracket wider than ``rel_tol`` but certified is returned flagged
        (``wider_than_asked``, an :class:`amp.AccuracyWarning`) instead of raising
        :class:`NumericalError` (:func:`epsilon`'s default).

    Returns
    -------
    Bound
        Quantity ``"eps"``, with one part per law in ``parts``; ``details["worst_law"]`` names
        the law that attains the maximum (for ``bound="lower"``: the dataset pair, e.g. a
        background ``x2 = x0``), ``details["pruned_laws"]`` counts the laws settled by one
        evaluation (a law certified below the best lower end is not searched).

    Examples
    --------
    >>> import amp
    >>> prof = amp.profile(amp.KRR(4.0, k=10), 10_000)
    >>> [round(amp.epsilon_for(prof, d).value, 4) for d in (1e-6, 1e-8)]
    [0.3805, 0.476]
    """
    if not isinstance(prof, PrivacyProfile):
        raise ParameterError(f"prof must be a PrivacyProfile, got {type(prof).__name__}")
    delta_ = V.probability_open("delta", delta)
    rel_tol = _rel_tol(rel_tol)
    if prof.pairs is not None:
        return epsilon_max(prof.pairs, prof.n, delta_, rel_tol=rel_tol, method=prof.method,
                           mechanism=prof.description, executor=prof.executor,
                           progress=progress)
    parts, pruned = _laws_epsilon(prof, delta_, rel_tol, progress, strict)
    lo = max(p.lower for p in parts)
    hi = max(p.upper for p in parts)
    methods = ",".join(sorted({m for p in parts for m in p.method.split(",") if m}))
    side = (lambda b: b.lower) if prof.bound == "lower" else (lambda b: b.upper)
    res = Bound("eps", lo, hi, prof.bound, methods, prof.n, prof.description,
                {"delta": delta_}, parts=tuple(parts),
                details={"evaluations": sum(p.details["evaluations"] for p in parts),
                         "worst_law": max(parts, key=side).mechanism,
                         "pruned_laws": pruned, **prof.selection})
    return _flag_wider(res, rel_tol)


def _flag_wider(res: Bound, rel_tol: float) -> Bound:
    """Flag (``details``, :class:`amp.AccuracyWarning`) a certified bracket wider than
    ``rel_tol`` that a law's search returned instead of refusing (``strict=False``)."""
    flagged = [p for p in res.parts if p.wider_than_asked]
    if not flagged or res.rel_width <= rel_tol:
        return res
    import warnings
    from amp.core.errors import AccuracyWarning
    why = flagged[0].details.get("wider_reason", "")
    note = (f"eps bracket [{res.lower:.8g}, {res.upper:.8g}] (relative width "
            f"{res.rel_width:.2g}) is certified but wider than asked (rel_tol={rel_tol:g})"
            + (f": {why.split(': ', 1)[-1].split('; certified bracket')[0]}" if why else ""))
    warnings.warn(note, AccuracyWarning, stacklevel=3)
    return replace(res, details={**res.details, "wider_than_asked": True,
                                 "achieved_rel_tol": res.rel_width, "wider_note": note})


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
    parts: list[Bound | None] = [None] * len(curves)
    best, pruned = 0.0, 0
    abs_tol = min(1e-16, 1e-3 * delta_)
    for i in order:
        c = curves[i]
        if best > 0:
            try:
                chk = c.delta_for_search(best, 0.05, abs_tol)
            except NumericalError:
                chk = None
            if chk is not None and chk.upper <= delta_:
                parts[i] = Bound("eps", 0.0, best, prof.bound, chk.method, prof.n, c.law.label,
                                 {"delta": delta_}, details={"evaluations": 1, "pruned": True})
                pruned += 1
                continue
        parts[i] = epsilon_of_curve(c, delta_, c.max_eps, rel_tol=rel_tol, bound=prof.bound,
                                    n=prof.n, mechanism=c.law.label, progress=progress,
                                    strict=strict)
        best = max(best, parts[i].lower)
    return parts, pruned  # type: ignore[return-value]


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

    def __init__(self, make: Callable[[float], Mechanism], n: int, eps: float, method: str):
        self.make, self.n, self.eps, self.method = make, n, eps, method
        self.used: set[str] = set()

    def delta_for_search(self, eps0: float, tol: float, abs_tol: float) -> Bound:
        prof = PrivacyProfile(check_mechanism(self.make(eps0)), self.n, method=self.method)
        tol = max(tol, STRUCTURED_MIN_REL_TOL)
        if prof.pairs is not None:
            # a matrix: the pruned maximum over its pairs (amp.pairs.delta_max)
            res = delta_max(prof.pairs, self.n, self.eps, rel_tol=tol, method=self.method,
                            abs_tol=abs_tol, goal=tol)[2]
        else:
            res = [c.delta_for_search(self.eps, tol, abs_tol) for c in prof.curves]
        self.used.update(r.method for r in res)
        floor = max(float(r.details.get("floor", 0.0)) for r in res)
        return Bound("delta", min(max(r.lower for r in res), 1.0),
                     min(max(r.upper for r in res), 1.0), "upper", ",".join(sorted(self.used)),
                     self.n, inputs={"eps": self.eps}, details={"floor": floor})


def calibrate_eps0(make: Callable[[float], Mechanism], n: int, eps: float, delta: float, *,
                   rel_tol: float = DEFAULT_EPS_REL_TOL, eps0_max: float = V.MAX_EPS0,
                   progress: Progress | None = None, method: str = "auto") -> Bound:
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
    progress : callable, optional
        Called with one-line progress messages.
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend.

    Returns
    -------
    Bound
        Quantity ``"eps0"``; ``value`` (the lower end) is the largest certified-safe ``eps0``.

    Examples
    --------
    >>> import amp
    >>> family = lambda e0: amp.KRR(e0, k=10)
    >>> r = amp.calibrate_eps0(family, 10_000, 0.5, 1e-6)
    >>> round(r.value, 3), r.value == r.lower
    (4.428, True)
    >>> amp.delta(amp.KRR(r.value, k=10), 10_000, 0.5).value <= 1e-6
    True
    """
    n = V.int_at_least("n", n, 1)
    eps = V.positive_float("eps", eps)
    delta_ = V.probability_open("delta", delta)
    rel_tol = _rel_tol(rel_tol)
    eps0_max = V.eps0_value(eps0_max, "eps0_max")
    if not callable(make):
        raise ParameterError(f"make must be a callable eps0 -> mechanism, got "
                             f"{type(make).__name__}")
    curve = _FamilyCurve(make, n, eps, method)

    def status(e0: float) -> int:
        r = curve.delta_for_search(e0, TOL_LOOSE, 1e-3 * delta_)
        if progress is not None:
            progress(f"eps0={e0:.6g}: delta in [{r.lower:.4g}, {r.upper:.4g}]")
        return 1 if r.upper <= delta_ else (-1 if r.lower > delta_ else 0)

    safe = min(eps, eps0_max)     # eps0 <= eps gives delta = 0 (G <= 0)
    unsafe, known_bad = None, False
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
    except NumericalError as exc:
        raise NumericalError(f"eps0 calibration: {exc}") from None
    return _eps0_bound(c.lo, c.hi, make, n, eps, delta_, curve)


def _eps0_bound(lo: float, hi: float, make, n, eps, delta_, curve) -> Bound:
    return Bound("eps0", lo, hi, "upper", "search:" + ",".join(sorted(curve.used)),
                 n, check_mechanism(make(lo)).describe(), {"eps": eps, "delta": delta_})
