"""Certified ``eps(delta)`` of a matrix mechanism's many pair laws: prune, then refine.

Theorem 4's ``eps(delta)`` of a finite randomizer is the maximum over its ordered input pairs
of each pair law's threshold ``eps_pair(delta) = min{eps : delta_pair(eps) <= delta}``
(each ``delta_pair`` is non-increasing in ``eps``). Searching every pair with the certified
FFT costs ``d (d - 1)`` searches; :func:`epsilon_max` certifies the same maximum with few:

1. **Rank** every pair by its certified Chernoff bound at a reference ``eps``
   (:meth:`amp.pairs.PairSet.chernoff_upper`, vectorised; the reference is the Chernoff
   threshold of one pair, a point near the answer).
2. **Refine the top pair**: its certified bracket ``[lo*, hi*]``
   (:func:`amp.inversion.epsilon_of_curve`).
3. **Prune by Chernoff**: a pair whose Chernoff bound at ``hi*`` is ``<= delta`` has
   ``delta_pair(hi*) <= delta``, hence ``eps_pair <= hi*``: it cannot raise the maximum's
   upper end, which is ``>= hi*``.
4. **Prune by a coarse bracket**: the survivors get one certified delta bracket at ``hi*`` at
   a loose relative width (:data:`amp.pairs.COARSE_REL_TOL`); ``upper <= delta`` prunes them the same
   way (a survivor whose bracket does not decide is refined).
5. **Refine the rest** (full searches): they may hold the maximum.

The result's upper end is the largest refined upper end (every pruned pair is certified
``<= hi*`` below it); its lower end is the largest refined lower end (a pair's lower end is a
lower bound of the maximum). Stages 4 and 5 are independent evaluations: they run through
``executor.map`` when an ``executor`` (any :class:`concurrent.futures.Executor`) is given, and
the result is identical with or without one (the set of evaluations is fixed by the stages,
every evaluation builds its own :class:`~amp.backends.dispatch.LawDelta`).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor

import numpy as np

from amp.core.errors import NumericalError
from amp.core.result import Bound
from amp.core.roots import bisect
from amp.backends.dispatch import LawDelta
from amp.inversion import Progress, epsilon_of_curve
from amp.pairs import COARSE_REL_TOL, PairSet, run_tasks

__all__ = ["epsilon_max", "COARSE_REL_TOL"]


def _eps_task(args) -> Bound:
    law, n, method, delta, rel_tol, strict = args
    curve = LawDelta(law, n, method)
    # a pair of equal rows has delta = 0 for every eps >= 0 (log max a/b = 0): search a tiny
    # interval rather than an empty one (its end is still certified by an evaluation)
    return epsilon_of_curve(curve, delta, max(curve.max_eps, 1e-12), rel_tol=rel_tol,
                            bound="upper", n=n, mechanism=law.label, strict=strict)


def _coarse_task(args) -> Bound | None:
    law, n, method, eps = args
    try:
        return LawDelta(law, n, method).delta(eps, rel_tol=COARSE_REL_TOL)
    except NumericalError:
        return None        # undecided: the pair is refined


def _reference_eps(ps: PairSet, n: int, delta: float, k: int) -> float:
    """Chernoff threshold of pair ``k`` (bisection): a reference point for the ranking."""
    idx = np.array([k])
    lo, hi = 0.0, float(ps.max_eps(idx)[0])
    if not math.isfinite(hi) or hi <= 0:
        return 0.0
    _, hi = bisect(lambda e: ps.chernoff_upper(e, n, idx)[0] <= delta, lo, hi, steps=40)
    return hi


def epsilon_max(ps: PairSet, n: int, delta: float, *, rel_tol: float, method: str = "auto",
                mechanism: str = "", executor: Executor | None = None,
                progress: Progress | None = None, strict: bool = True) -> Bound:
    """Certified ``eps(delta)`` of the maximum over the pair laws of ``ps`` (module docstring).

    Parameters
    ----------
    ps : PairSet
        The pair laws (:class:`amp.pairs.PairSet`).
    n : int
        Number of users.
    delta : float
        Target ``delta`` in ``(0, 1)``.
    rel_tol : float
        Relative width of each refined eps bracket.
    method : str
        The delta backend of the refinements (:class:`~amp.backends.dispatch.LawDelta`).
    mechanism : str
        Description carried into the result.
    executor : concurrent.futures.Executor, optional
        Runs stages 4 and 5 (independent pair evaluations); default serial.
    progress : callable, optional
        Called with one line per stage.
    strict : bool, default True
        A refined pair whose search cannot reach ``rel_tol``: ``True`` raises its
        :class:`~amp.core.errors.NumericalError`; ``False`` keeps the certified bracket its
        search holds, flagged (``wider_than_asked``; :func:`amp.inversion.epsilon_of_curve`):
        the maximum's bracket stays valid (its upper end is the largest refined upper end, a
        pruned pair is certified below ``hi*``, and every refined lower end is a lower bound),
        only wider; :class:`amp.PrivacyProfile` then flags the result.

    Returns
    -------
    Bound
        Quantity ``"eps"``, bound ``"upper"``, one part per refined pair. ``details``:
        ``pairs`` (ordered pairs), ``laws`` (distinct pair laws), ``outputs_merged``,
        ``pruned_chernoff``, ``pruned_coarse``, ``refined``, ``worst_pair`` (the refined pair
        with the largest upper end), ``reference_eps``, ``evaluations``, ``seconds``.

    Examples
    --------
    >>> import numpy as np
    >>> from amp.pairs import PairSet
    >>> from amp.pairsearch import epsilon_max
    >>> P = np.array([[.5, .3, .2], [.2, .5, .3],
    ...               [.3, .2, .5], [.4, .3, .3]])
    >>> r = epsilon_max(PairSet(P, 1.0), 1000, 1e-6, rel_tol=1e-4)
    >>> r.details["pairs"], r.details["refined"] <= 12
    (12, True)
    """
    t0 = time.perf_counter()

    def say(msg: str) -> None:
        if progress is not None:
            progress(f"{msg} ({time.perf_counter() - t0:.1f} s)")

    eps_ref = _reference_eps(ps, n, delta, 0)
    rank = ps.chernoff_upper(eps_ref, n)
    order = np.argsort(-rank, kind="stable")
    top = int(order[0])
    say(f"{len(ps)} pair laws ranked by Chernoff at eps={eps_ref:.6g}; refining pair "
        f"{tuple(int(x) for x in ps.pairs[top])}")
    first = _eps_task((ps.law(top), n, method, delta, rel_tol, strict))
    hi_star = first.upper
    ch = ps.chernoff_upper(hi_star, n)
    surv1 = [int(k) for k in np.argsort(-ch, kind="stable") if k != top and ch[k] > delta]
    say(f"top eps in [{first.lower:.8g}, {hi_star:.8g}]; {len(ps) - 1 - len(surv1)} pairs "
        f"pruned by Chernoff, {len(surv1)} left")
    coarse = run_tasks(_coarse_task, [(ps.law(k), n, method, hi_star) for k in surv1],
                       executor)
    surv2 = [k for k, r in zip(surv1, coarse) if r is None or r.upper > delta]
    say(f"{len(surv1) - len(surv2)} pruned by a coarse bracket at eps={hi_star:.8g}; "
        f"refining {len(surv2)}")
    rest = run_tasks(_eps_task, [(ps.law(k), n, method, delta, rel_tol, strict)
                                 for k in surv2], executor)
    parts = [first] + list(rest)
    refined = [top] + surv2
    lo = max(p.lower for p in parts)
    hi = max(p.upper for p in parts)
    worst = refined[int(np.argmax([p.upper for p in parts]))]
    methods = ",".join(sorted({m for p in parts for m in p.method.split(",") if m}
                              | {r.method for r in coarse if r is not None}))
    evals = sum(p.details["evaluations"] for p in parts) + len(coarse)
    details = {"pairs": ps.total, "laws": len(ps), "outputs_merged": ps.merged_outputs,
               "pruned_chernoff": len(ps) - 1 - len(surv1),
               "pruned_coarse": len(surv1) - len(surv2), "refined": len(refined),
               "worst_pair": tuple(int(x) for x in ps.pairs[worst]),
               "reference_eps": eps_ref, "evaluations": evals,
               "seconds": time.perf_counter() - t0}
    say(f"eps in [{lo:.8g}, {hi:.8g}], worst pair {details['worst_pair']}")
    return Bound("eps", lo, hi, "upper", methods, n, mechanism, {"delta": delta},
                 parts=tuple(parts), details=details)
