"""Sweeps: a grid of deployment questions, answered serially or in parallel, as one table.

``amp.sweep("krr", n=[1e4, 1e5], eps0=[1, 2, 4], delta=1e-6, k=10)`` asks ``amp.epsilon``
(or, with ``eps=`` instead of ``delta=``, ``amp.delta``) at every point of the grid
``mechanism x bound x rounds x sampling x n x eps0 x delta`` and returns a
:class:`~amp.sweeps.SweepTable`: one row per point, in that (deterministic) order, with the
inputs, ``value``, the certified bracket ``[lower, upper]`` and the ``method``; a point that
cannot be certified keeps its row, with the error message instead of numbers, and the rest of
the sweep goes on. The mechanism is anything :func:`amp.epsilon` takes (an object, e.g.
``amp.KRR(4.0, k=10)``, a ``MatrixMechanism`` or a ``Population``, whose ``eps0`` it fixes), an
LDP matrix, a factory ``eps0 -> mechanism`` or a registry name.

Points that share ``(mechanism, bound, rounds, sampling, n, eps0)`` form one task. A one-round
task is evaluated on one :class:`~amp.privacy_profile.PrivacyProfile`, so its tables are built
once for all the ``delta`` (or ``eps``) values of the task; ``reuse=False`` (and every
multi-round task) asks the front door once per point, the very brackets of ``amp.epsilon``.
Tasks run in the calling process by default; any :class:`concurrent.futures.Executor` runs them
instead (a mechanism travels to it as a pickled object, built in the calling process, never as
a closure): a local process pool (``workers=W`` or ``executor="process"``), or a Dask cluster
through :func:`~amp.sweeps.dask_executor` (the ``dask`` extra:
``pip install 'amp-shuffle[dask]'``). The table does not depend on the executor: every task
runs the same deterministic code, with single-threaded BLAS (through ``threadpoolctl``,
installed with the ``dask`` extra), as Dask workers do by default; multithreaded BLAS sums in
another order, which can move a bracket's last bits.
"""

from __future__ import annotations

import os
import pickle
import time
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from contextlib import nullcontext
from numbers import Real
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from amp.core import validate as V
from amp.core.errors import AmpError, NumericalError, ParameterError
from amp.core.extras import require
from amp.backends.dispatch import DEFAULT_REL_TOL, METHODS
from amp.inversion import DEFAULT_EPS_REL_TOL, Progress
from amp.mechanisms import registry
from amp.mechanisms.base import MatrixMechanism, Mechanism
from amp.mechanisms.subsampled import Subsampled, check_sampling
from amp.privacy_profile import PrivacyProfile, check_bound
from amp.rounds import check_rounds
from amp import api
from amp.sweeps.table import SweepTable

__all__ = ["sweep", "POINT_ERRORS"]

#: Errors recorded in a point's row instead of aborting the sweep: an accuracy that cannot be
#: certified (NumericalError), a domain the mechanism refuses at this eps0 (ParameterError),
#: overflow and memory exhaustion. Any other exception is a bug and propagates.
POINT_ERRORS = (AmpError, ArithmeticError, MemoryError)


# ----------------------------------------------------------------------------- one task
def _run_task(task: tuple) -> list[dict]:
    """Answer every question of one ``(mechanism, bound, rounds, sampling, n, eps0)`` group
    (runs in a worker).

    ``task = (mechanism, n, bound, rounds, sampling, method, given, values, rel_tol, reuse,
    tol_given)``. Returns one partial row per value, in order. With ``reuse`` (one round) the
    values share one profile (asked in the given order, so the result is deterministic);
    otherwise each value is one call of :func:`amp.epsilon` / :func:`amp.delta`.
    """
    with _single_threaded_blas():
        return _answer(*task)


def _single_threaded_blas():
    """Limit BLAS to one thread (threadpoolctl, when installed) for the duration of a task.

    Multithreaded BLAS splits ``np.dot`` sums by thread, so their last bits depend on the
    thread count; Dask workers run single-threaded BLAS by default. Every task doing the same
    makes a table the same bits on every executor (each bracket is certified either way)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:      # pragma: no cover - the dask extra installs it
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _answer(mech: Mechanism, n: int, bound: str, rounds: int, sampling: float, method: str,
            given: str, values: tuple, rel_tol: float, reuse: bool,
            tol_given: bool) -> list[dict]:
    out: list[dict] = []
    one_round = mech if sampling == 1 else None

    def fresh(eps_hint: float | None = None) -> PrivacyProfile:
        nonlocal one_round
        if one_round is None:
            one_round = Subsampled(mech, sampling)      # as amp.epsilon's per-round mechanism
        return PrivacyProfile(one_round, n, bound=bound, method=method, eps_hint=eps_hint)

    shared: PrivacyProfile | None = None
    for v in values:
        try:
            if rounds > 1 or not reuse:
                b = _front_door(mech, n, bound, rounds, sampling, method, given, v, rel_tol,
                                tol_given)
            else:
                if given == "eps" and bound == "lower":
                    prof = fresh(v)   # as amp.delta: a Theorem 5 pair picked at eps
                else:
                    shared = shared if shared is not None else fresh()
                    prof = shared
                # strict: a point that cannot reach rel_tol is a failed row (its error
                # column), not a flagged wider answer the table has no column for
                b = (api.epsilon_for(prof, v, rel_tol=rel_tol, strict=True) if given == "delta"
                     else prof.delta(v, rel_tol=rel_tol, strict=True))
            out.append({"value": b.value, "lower": b.lower, "upper": b.upper,
                        "method": b.method, "error": None})
        except POINT_ERRORS as exc:
            out.append(_failed(exc))
    return out


def _front_door(mech: Mechanism, n: int, bound: str, rounds: int, sampling: float,
                method: str, given: str, v: float, rel_tol: float, tol_given: bool):
    """One point as :func:`amp.epsilon` / :func:`amp.delta` answer it. With ``rounds > 1`` only
    the options the caller set are passed on (the front door says which apply)."""
    kw: dict = dict(bound=bound, rounds=rounds, sampling=sampling)
    if rounds == 1 or tol_given:
        kw["rel_tol"] = rel_tol
    if rounds == 1 or method != "auto":
        kw["method"] = method
    if given == "delta":
        return api.epsilon(mech, n, v, strict=True, **kw)    # as above: a failed row
    return api.delta(mech, n, v, strict=True, **kw)


def _failed(exc: BaseException) -> dict:
    # the search's WiderThanAsked is a NumericalError (its public name)
    name = "NumericalError" if isinstance(exc, NumericalError) else type(exc).__name__
    return {"value": None, "lower": None, "upper": None, "method": None,
            "error": f"{name}: {exc}"}


# ----------------------------------------------------------------------------- inputs
def _values(name: str, value: object, check) -> list:
    """A number or a sequence of numbers as a non-empty list of checked values
    (:func:`amp.core.validate.as_list`; a string is refused here, not taken as one value)."""
    if isinstance(value, (str, bytes, Mapping)):
        raise ParameterError(f"{name} must be a number or a sequence of numbers, got "
                             f"{V.show(value)}")
    return V.as_list(name, value, check)


class _Spec:
    """One mechanism of the sweep: ``build(eps0)`` for a family (a registry name or a
    factory), ``fixed`` for an object (its ``eps0`` and ``n`` are its own)."""

    def __init__(self, label: str, params: str = "", *,
                 build: Callable[[float], object] | None = None, fixed: Mechanism | None = None):
        self.label, self.params, self.build, self.fixed = label, params, build, fixed
        self.registered = False     # a registry name: the label is the name, not describe()

    def make(self, eps0: float) -> Mechanism:
        """The mechanism at ``eps0`` (refused eps0 or a factory that fails: ParameterError)."""
        try:
            mech = self.build(eps0)         # type: ignore[misc]
        except (AmpError, ArithmeticError):
            raise
        except Exception as exc:  # noqa: BLE001 - a user's factory: named in one line
            raise ParameterError(f"mechanism factory {self.label} failed at eps0={eps0:g}: "
                                 f"{type(exc).__name__}: {exc}") from None
        if not isinstance(mech, Mechanism):
            raise ParameterError(f"mechanism factory {self.label} must return an amp "
                                 f"mechanism, got {type(mech).__name__} at eps0={eps0:g}")
        return mech


def _is_matrix(x: object) -> bool:
    """A 2-D array, or a non-empty list of rows of real numbers (an LDP matrix)."""
    if isinstance(x, np.ndarray):
        return x.ndim == 2
    if not isinstance(x, (list, tuple)) or not x:
        return False
    return all(isinstance(row, (list, tuple, np.ndarray)) and len(row) > 0
               and all(isinstance(v, Real) and not isinstance(v, bool) for v in row)
               for row in x)


MECHANISM_FORMS = ("a registered name ({names}), an amp mechanism, an LDP matrix, a factory "
                   "eps0 -> mechanism, a (name, {{keyword: value}}) pair or a non-empty list "
                   "of these")


def _specs(mechanism: object, domain: dict) -> list[_Spec]:
    """The sweep's mechanisms from one of :data:`MECHANISM_FORMS`."""
    forms = MECHANISM_FORMS.format(names=", ".join(registry.MECHANISMS))
    if isinstance(mechanism, (str, Mechanism)) or _is_matrix(mechanism) \
            or (callable(mechanism) and not isinstance(mechanism, (list, tuple))):
        entries = [mechanism]
    elif isinstance(mechanism, Sequence) and not isinstance(mechanism, (str, bytes)) \
            and mechanism and not (len(mechanism) == 2 and isinstance(mechanism[0], str)
                                   and isinstance(mechanism[1], Mapping)):
        entries = list(mechanism)
    elif isinstance(mechanism, tuple) and len(mechanism) == 2:
        entries = [mechanism]
    else:
        raise ParameterError(f"mechanism must be {forms}, got {V.show(mechanism)}")
    specs = [_spec(e, domain, forms) for e in entries]
    if domain and not any(s.registered for s in specs):
        raise ParameterError(f"{', '.join(sorted(domain))} apply to registered mechanism "
                             "names only (build the object, or the factory, with them)")
    return specs


def _spec(e: object, domain: dict, forms: str) -> _Spec:
    if isinstance(e, Mechanism):
        return _Spec(e.describe(), fixed=e)
    if isinstance(e, np.ndarray) or (isinstance(e, list) and _is_matrix(e)):
        if not _is_matrix(e):
            raise ParameterError(f"an LDP matrix must be 2-D, got an array of shape "
                                 f"{np.shape(e)}")
        m = MatrixMechanism(e)
        return _Spec(m.describe(), fixed=m)
    if isinstance(e, str) or (isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str)
                              and isinstance(e[1], Mapping)):
        name, params = (e, dict(domain)) if isinstance(e, str) else (e[0], dict(e[1]))
        params = {k: (V.positive_float(k, v) if k == "b" else V.int_at_least(k, v, 1))
                  for k, v in params.items() if v is not None}
        build = registry.factory(name, **params)   # unknown name, missing or foreign keyword
        s = _Spec(name.lower(), ",".join(f"{k}={x}" for k, x in sorted(params.items())),
                  build=build)
        s.registered = True
        return s
    if callable(e) and not isinstance(e, (tuple, list)):
        return _Spec(getattr(e, "__qualname__", None) or type(e).__name__, build=e)
    raise ParameterError(f"mechanism entries must be {forms}; got {V.show(e)}")


def _resolve_executor(executor: object, workers: object, n_tasks: int
                      ) -> tuple[Executor | None, bool]:
    """(executor or None for serial, whether this call owns it and must shut it down)."""
    if workers is not None:
        workers = V.int_at_least("workers", workers, 1)
    if executor is None:
        if workers is None or workers == 1 or n_tasks <= 1:
            return None, False
        executor = "process"
    if isinstance(executor, str):
        if executor != "process":
            raise ParameterError(f"executor must be 'process', None or a "
                                 f"concurrent.futures.Executor, got {V.show(executor)}")
        count = min(workers if workers is not None else (os.cpu_count() or 1), n_tasks)
        if count <= 1:
            return None, False
        from concurrent.futures import ProcessPoolExecutor
        return ProcessPoolExecutor(max_workers=count), True
    if workers is not None:
        raise ParameterError("workers applies to the local process pool only; size the "
                             "executor you pass instead")
    # the one rule of every entry: an Executor, or a Dask Client through its get_executor()
    return V.executor(executor), False     # type: ignore[return-value]


def _check_picklable(mechs: list[Mechanism]) -> None:
    """Refuse, before any work starts, a mechanism that cannot travel to a worker process."""
    for m in mechs:
        try:
            pickle.dumps(m)
        except Exception as exc:  # noqa: BLE001 - pickling errors have many types
            raise ParameterError(f"mechanism {m.describe()} cannot be sent to the executor's "
                                 f"workers ({type(exc).__name__}: {exc}); run the sweep "
                                 "serially (executor=None) or pass a picklable mechanism "
                                 "(a registered name, an amp object)") from None


# ----------------------------------------------------------------------------- the sweep
def sweep(mechanism: object, n: int | Iterable[int] | None = None,
          eps0: float | Iterable[float] | None = None, *,
          delta: float | Iterable[float] | None = None,
          eps: float | Iterable[float] | None = None,
          bound: str | Sequence[str] = "upper", rounds: int | Iterable[int] = 1,
          sampling: float | Iterable[float] = 1.0, rel_tol: float | None = None,
          method: str = "auto", executor: Executor | str | None = None,
          workers: int | None = None, progress: Progress | None = None,
          reuse: bool = True, **domain: int) -> SweepTable:
    """Certified ``eps(delta)`` (or ``delta(eps)``) over a grid of deployments, as a table.

    Every point is one question of :func:`amp.epsilon` (give ``delta``) or :func:`amp.delta`
    (give ``eps``) for the mechanism at local ``eps0`` shuffled among ``n`` users, over
    ``rounds`` adaptive rounds each user joins with probability ``sampling``: Theorem 4's
    blanket bound (``bound="upper"``) or Theorem 5's lower bound (``"lower"``), each certified
    by the search of Algorithm 4. Rows come in the order
    ``mechanism, bound, rounds, sampling, n, eps0, delta`` (each in the order given).

    Parameters
    ----------
    mechanism : str, Mechanism, array_like, callable or list
        What :func:`amp.epsilon` takes: an amp mechanism (``amp.KRR(4.0, k=10)``, a
        ``MatrixMechanism``, a ``JointMechanism``, a ``Population``...; its ``eps0`` is its
        own, so give no ``eps0``), an LDP matrix (rows inputs, a ``MatrixMechanism``), a
        factory ``eps0 -> mechanism`` (e.g. ``lambda e: amp.KRR(e, k=10)``, called in this
        process), a name of ``amp.mechanisms.registry`` (``"krr"``, ``"rappor"``, ``"oue"``,
        ``"blh"``, ``"olh"``, ``"hadamard"``, ...) whose domain keywords are ``**domain``, a
        pair ``(name, {keyword: value})``, or a list of these.
    n : int or sequence of int
        Numbers of users, each ``>= 1``; may be omitted when every mechanism is a
        ``Population`` (its own number of users).
    eps0 : float or sequence of float, optional
        Local privacy levels, each ``> 0``, for the names and factories (required by them;
        refused when every mechanism is an object or a matrix).
    delta : float or sequence of float, optional
        Target ``delta`` values in ``(0, 1)``: each point is ``eps(delta)``.
    eps : float or sequence of float, optional
        Central ``eps >= 0``: each point is ``delta(eps)``. Give exactly one of ``delta``,
        ``eps``.
    bound : {"upper", "lower"} or a sequence of them, default "upper"
        Theorem 4's blanket bound or Theorem 5's lower bound.
    rounds : int or sequence of int, default 1
        Adaptive rounds ``T`` (``T > 1``: the composed bracket of :func:`amp.epsilon` with
        ``rounds=T``, needs the ``rounds`` extra).
    sampling : float or sequence of float, default 1.0
        Poisson client subsampling rates ``q`` in ``(0, 1]``, as in :func:`amp.epsilon`.
    rel_tol : float, optional
        Largest relative bracket width of each point (default: that of :func:`amp.epsilon`,
        ``1e-4``, or of :func:`amp.delta`, ``2e-3``).
    method : {"auto", "structured", "cf", "fft", "exact"}, default "auto"
        The ``delta`` backend.
    executor : None, "process" or concurrent.futures.Executor, default None
        Where the tasks run: ``None`` the calling process, serially (unless ``workers > 1``);
        ``"process"`` a local :class:`~concurrent.futures.ProcessPoolExecutor` of ``workers``
        processes (default ``os.cpu_count()``) created and shut down by this call; or any
        executor you own (not shut down), e.g. a Dask ``Client`` or its ``get_executor()``
        (see :func:`amp.sweeps.dask_executor`; the rule of every entry,
        ``amp.core.validate.executor``). Use processes: threads of one process share its
        BLAS thread setting, which each task pins to 1.
    workers : int, optional
        ``workers > 1``: a local process pool of that size; ``1`` (or omitted): serial.
    progress : callable, optional
        Called with a one-line message each time a task finishes.
    reuse : bool, default True
        Ask the ``delta`` (or ``eps``) values of one one-round task on one profile, reusing
        its tables. A profile keeps the deepest tables it has built, so a bracket can then
        differ from a lone :func:`amp.epsilon` call within ``rel_tol`` (it is certified either
        way, and the table is the same on every executor). ``False``: one front-door call per
        point, the very brackets of :func:`amp.epsilon` / :func:`amp.delta` (with
        single-threaded BLAS, see the module docstring).
    **domain : int
        Domain keywords of the registered names (``k`` for ``krr``, ``g`` for ``olh``, ``d``).

    Returns
    -------
    SweepTable
        One row per point with the inputs, ``value``, ``lower``, ``upper`` and ``method``; a
        point that cannot be certified has its error message in ``error`` (numbers ``None``).
        ``to_csv()``, ``to_json()``, ``to_records()``, ``to_pandas()`` (with pandas).

    Raises
    ------
    ParameterError
        Bad input, before any work starts (the message names the parameter).
    amp.core.extras.MissingExtraError
        ``rounds > 1`` without the ``rounds`` extra (before any work starts).

    Examples
    --------
    >>> import amp
    >>> t = amp.sweep("krr", n=[1000, 10_000], eps0=[2, 4], delta=1e-6, k=10)
    >>> [(r["n"], r["eps0"], round(r["value"], 4)) for r in t]
    [(1000, 2.0, 0.2728), (1000, 4.0, 1.5274), (10000, 2.0, 0.0798),
     (10000, 4.0, 0.3805)]
    >>> m = amp.KRR(4.0, k=10)
    >>> t.rows[3]["value"] == amp.epsilon(m, 10_000, 1e-6).value
    True
    >>> t2 = amp.sweep(m, n=10_000, delta=[1e-6, 1e-8])    # an object: its eps0
    >>> [round(r["value"], 4) for r in t2]
    [0.3805, 0.476]
    >>> t3 = amp.sweep(lambda e: amp.OUE(e), n=10_000, eps0=[1, 4], delta=1e-6)
    >>> [round(r["value"], 4) for r in t3]
    [0.0297, 0.2788]
    >>> print(t)                                     # doctest: +SKIP
    mechanism  params  eps0      n  rounds  sampling  bound  delta  quantity     value ...
    """
    t0 = time.perf_counter()
    specs = _specs(mechanism, domain)
    families = [s for s in specs if s.fixed is None]
    if eps0 is None and families:
        raise ParameterError(f"eps0 is required for mechanism {families[0].label!r} (a name "
                             "or a factory); an object or a matrix fixes its own")
    if eps0 is not None and not families:
        raise ParameterError("eps0 comes from the mechanism (an object or a matrix fixes its "
                             "own); do not pass eps0")
    eps0s = [] if eps0 is None else _values("eps0", eps0, lambda nm, x: V.eps0_value(x, nm))
    ns = None if n is None else _values("n", n, lambda nm, x: V.users(x, nm))
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (eps(delta) questions) and eps "
                             "(delta(eps) questions)")
    if delta is not None:
        given, values = "delta", _values("delta", delta, V.probability_open)
    else:
        given, values = "eps", _values("eps", eps, lambda nm, x: V.eps_value(x, nm))
    # one bound or several: anything else (bound=Decimal("0.5"), None) is refused as a bound
    bounds = V.as_list("bound", bound, lambda nm, b: check_bound(b))
    Ts = _values("rounds", rounds, lambda nm, x: check_rounds(x))
    qs = _values("sampling", sampling, lambda nm, x: check_sampling(x))
    V.choice("method", method, METHODS, f"one of {', '.join(METHODS)}")
    default_tol = DEFAULT_EPS_REL_TOL if given == "delta" else DEFAULT_REL_TOL
    tol = default_tol if rel_tol is None else V.positive_float("rel_tol", rel_tol, upper=0.5)
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be callable, got {type(progress).__name__}")
    if not isinstance(reuse, bool):
        raise ParameterError(f"reuse must be True or False, got {V.show(reuse)}")
    if any(T > 1 for T in Ts):
        require("dp_accounting", "rounds", purpose="amp.sweep with rounds > 1")

    # the mechanisms, built here (refused (name, eps0) pairs and failing factories: bad input,
    # said now), each with its eps0 axis and numbers of users
    groups = []     # (spec, [(eps0, mechanism)], [n])
    for s in specs:
        pts = [(s.fixed.eps0, s.fixed)] if s.fixed is not None else \
            [(e0, s.make(e0)) for e0 in eps0s]
        groups.append((s, pts, _users(s, pts, ns)))
    tasks, labels = [], []
    for s, pts, s_ns in groups:
        for b in bounds:
            for T in Ts:
                for q in qs:
                    for nn in s_ns:
                        for e0, mech in pts:
                            tasks.append((mech, nn, b, T, q, method, given, tuple(values), tol,
                                          reuse, rel_tol is not None))
                            labels.append((s.label if s.registered else mech.describe(),
                                           s.params, e0, nn, T, q, b))
    pool, owned = _resolve_executor(executor, workers, len(tasks))
    try:
        if pool is not None and not isinstance(pool, ThreadPoolExecutor):
            _check_picklable([m for _, pts, _ in groups for _, m in pts])
    except ParameterError:
        if owned:
            pool.shutdown()     # type: ignore[union-attr]
        raise
    results = _execute(tasks, pool, owned, progress, len(values))

    rows = []
    for (label, params, e0, nn, T, q, b), answers in zip(labels, results):
        for v, ans in zip(values, answers):
            rows.append({"mechanism": label, "params": params, "eps0": e0, "n": nn,
                         "rounds": T, "sampling": q, "bound": b, given: v,
                         "quantity": "eps" if given == "delta" else "delta", **ans})
    return SweepTable(tuple(rows), given, time.perf_counter() - t0)


def _users(spec: _Spec, pts: list, ns: list[int] | None) -> list[int]:
    """The numbers of users of one mechanism: ``n``, or a population's own (which ``n`` must
    then equal)."""
    fixed = {getattr(m, "n_users", None) for _, m in pts} - {None}
    if not fixed:
        if ns is None:
            raise ParameterError(f"n is required for mechanism {spec.label!r} (only a "
                                 "population has its own number of users)")
        return ns
    if len(fixed) > 1:
        raise ParameterError(f"the populations of mechanism {spec.label!r} differ in their "
                             f"numbers of users ({sorted(fixed)}): sweep them one by one")
    (own,) = fixed
    if ns is not None and any(x != own for x in ns):
        raise ParameterError(f"n must be the population's number of users {own}, got "
                             f"{V.show(ns)}")
    return [own]


def _execute(tasks: list[tuple], pool: Executor | None, owned: bool,
             progress: Progress | None, per_task: int) -> list[list[dict]]:
    """Run the tasks serially or on ``pool``; results in the tasks' order."""
    total = len(tasks)

    def report(done: int) -> None:
        if progress is not None:
            progress(f"sweep: {done}/{total} tasks done ({done * per_task}/{total * per_task} "
                     "points)")

    if pool is None:
        out = []
        for i, t in enumerate(tasks):
            out.append(_run_task(t))
            report(i + 1)
        return out
    try:
        # largest n x rounds first (the costliest tasks, as a rule): a shorter tail
        order = sorted(range(total), key=lambda i: -tasks[i][1] * tasks[i][3])
        futures = {pool.submit(_run_task, tasks[i]): i for i in order}
        out: list = [None] * total
        for done, fut in enumerate(as_completed(futures), start=1):
            out[futures[fut]] = fut.result()
            report(done)
        return out
    finally:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
