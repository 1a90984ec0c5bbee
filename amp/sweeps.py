"""Sweeps: a grid of deployment questions answered in parallel, as one table.

``amp.sweep("krr", n=[1e4, 1e5], eps0=[1, 2, 4], delta=1e-6, k=10)`` asks ``amp.epsilon``
(or, with ``eps=`` instead of ``delta=``, ``amp.delta``) at every point of the grid
``mechanism x bound x n x eps0 x delta`` and returns a :class:`SweepTable`: one row per point,
in that (deterministic) order, with the inputs, ``value``, the certified bracket
``[lower, upper]`` and the ``method``; a point that cannot be certified keeps its row, with the
error message instead of numbers, and the rest of the sweep goes on.

Points that share ``(mechanism, bound, n, eps0)`` form one task, evaluated on one
:class:`~amp.privacy_profile.PrivacyProfile`, so its tables are built once for all the ``delta`` (or
``eps``) values of the task (``reuse=False``: one fresh profile per point, the very brackets
of ``amp.epsilon``). Tasks are independent and picklable (a mechanism travels as its
registry name and domain keywords, never as a closure), so any
:class:`concurrent.futures.Executor` runs them: a local process pool by default, the calling
process with ``executor=None`` (or ``workers=1``), or a Dask cluster through
:func:`dask_executor` (the ``dask`` extra: ``pip install 'amp-shuffle[dask]'``). The table does
not depend on the executor: every task runs the same deterministic code, with single-threaded
BLAS (through ``threadpoolctl``, installed with the ``dask`` extra), as Dask workers do by
default; multithreaded BLAS sums in another order, which can move a bracket's last bits.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from amp.core import validate as V
from amp.core.errors import AmpError, ParameterError
from amp.core.extras import require
from amp.core.floats import fmt_outward
from amp.backends.dispatch import DEFAULT_REL_TOL, METHODS
from amp.inversion import DEFAULT_EPS_REL_TOL, Progress
from amp.mechanisms import registry
from amp.privacy_profile import PrivacyProfile, check_bound
from amp.api import epsilon_for

__all__ = ["sweep", "SweepTable", "dask_executor", "COLUMNS"]

#: The columns of a sweep table; ``given`` is ``"delta"`` (an eps sweep) or ``"eps"`` (a delta
#: sweep) and ``quantity`` is the other one.
COLUMNS = ("mechanism", "params", "eps0", "n", "bound", "given", "quantity", "value", "lower",
           "upper", "method", "error")

#: The Dask setting of the allocator variable that a local cluster's workers do without.
TRIM_KEY = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"

#: Errors recorded in a point's row instead of aborting the sweep: an accuracy that cannot be
#: certified (NumericalError), a domain the mechanism refuses at this eps0 (ParameterError),
#: overflow and memory exhaustion. Any other exception is a bug and propagates.
POINT_ERRORS = (AmpError, ArithmeticError, MemoryError)


# ----------------------------------------------------------------------------- the table
@dataclass(frozen=True, eq=True)
class SweepTable:
    """The answers of a sweep, one row per grid point, in the grid's order.

    Attributes
    ----------
    rows : tuple of dict
        One dictionary per point with the keys of ``COLUMNS``: the inputs (``mechanism``,
        ``params`` such as ``"k=10"``, ``eps0``, ``n``, ``bound`` and the given ``delta`` or
        ``eps`` under its own name), ``quantity`` (``"eps"`` or ``"delta"``), ``value`` (the
        number to use: the upper end for ``bound="upper"``, the lower end for ``"lower"``),
        ``lower``, ``upper``, ``method``, and ``error`` (``None``, or the message of a point
        that could not be certified, whose numbers are then ``None``).
    given : {"delta", "eps"}
        The input that was swept: ``"delta"`` for ``eps(delta)`` questions, ``"eps"`` for
        ``delta(eps)`` questions.
    elapsed : float
        Wall-clock seconds of the sweep (not part of equality).

    Examples
    --------
    >>> import amp
    >>> t = amp.sweep("krr", n=[1000, 10_000], eps0=4, delta=1e-6, k=10,
    ...               executor=None)         # Theorem 4 eps at each n
    >>> len(t), t.given, [round(r["value"], 4) for r in t.rows]
    (2, 'delta', [1.5274, 0.3805])
    >>> print(t.to_csv().splitlines()[0])
    mechanism,params,eps0,n,bound,delta,quantity,value,lower,upper,method,error
    """

    rows: tuple
    given: str
    elapsed: float = 0.0

    def __post_init__(self) -> None:
        if self.given not in ("delta", "eps"):
            raise ValueError(f"given must be 'delta' or 'eps', got {self.given!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SweepTable):
            return NotImplemented
        return self.given == other.given and self.rows == other.rows

    def __hash__(self) -> int:  # pragma: no cover - rows hold dicts; equality is by value
        return hash((self.given, len(self.rows)))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    @property
    def columns(self) -> tuple[str, ...]:
        """Column names, with ``given`` replaced by the swept input's name."""
        return tuple(self.given if c == "given" else c for c in COLUMNS)

    @property
    def failed(self) -> list[dict]:
        """The rows of points that could not be certified."""
        return [r for r in self.rows if r["error"] is not None]

    def to_records(self) -> list[dict]:
        """The rows as a list of fresh dictionaries (JSON-ready: ``None`` for no number)."""
        return [dict(r) for r in self.rows]

    def to_json(self, **kwargs: object) -> str:
        """The rows as a JSON array of objects (keyword arguments go to ``json.dumps``)."""
        return json.dumps(self.to_records(), **kwargs)

    def to_csv(self) -> str:
        """The rows as CSV with a header line; floats in full precision (``repr``), an empty
        field for no number."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow(["" if r[c] is None else (repr(r[c]) if isinstance(r[c], float) else r[c])
                        for c in self.columns])
        return buf.getvalue()

    def __str__(self) -> str:
        shown = [c for c in self.columns if c != "error"]
        cells = [[_cell(r[c], c, r) for c in shown] + ([r["error"]] if r["error"] else [])
                 for r in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(shown)]
        line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths)).rstrip()
        out = [line(shown)]
        for row in cells:
            out.append(line(row[:len(shown)]) + ("  " + row[-1] if len(row) > len(shown) else ""))
        n_bad = len(self.failed)
        out.append(f"{len(self.rows)} point(s)" + (f", {n_bad} not certified" if n_bad else ""))
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"SweepTable({len(self.rows)} rows, given={self.given!r})"


def _cell(v: object, column: str = "", row: dict | None = None) -> str:
    """One printed cell; the bracket's ends and the value round outwards (an upper end up,
    a lower end down), so no printed bound is on the unsafe side of the certified one."""
    if v is None or v == "":
        return "-"
    if isinstance(v, float):
        if column == "upper" or (column == "value" and (row or {}).get("bound") != "lower"):
            return fmt_outward(v, up=True)
        if column in ("lower", "value"):
            return fmt_outward(v, up=False)
        return f"{v:.6g}"
    return str(v)


# ----------------------------------------------------------------------------- one task
def _run_task(task: tuple) -> list[dict]:
    """Answer every question of one ``(mechanism, bound, n, eps0)`` group (runs in a worker).

    ``task = (name, params, eps0, n, bound, method, given, values, rel_tol, reuse)``;
    ``params`` is a tuple of ``(keyword, value)`` pairs. Returns one partial row per value, in
    order. With ``reuse`` the values share one profile (asked in the given order, so the
    result is deterministic); without it each value gets a fresh one, as in ``amp.epsilon``.
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


def _answer(name: str, params: tuple, eps0: float, n: int, bound: str, method: str,
            given: str, values: tuple, rel_tol: float, reuse: bool) -> list[dict]:
    out: list[dict] = []
    try:
        mech = registry.make(name, eps0, **dict(params))
    except POINT_ERRORS as exc:     # the whole group fails alike (e.g. a refused domain)
        return [_failed(exc) for _ in values]

    def fresh(eps_hint: float | None = None) -> PrivacyProfile:
        return PrivacyProfile(mech, n, bound=bound, method=method, eps_hint=eps_hint)

    shared: PrivacyProfile | None = None
    for v in values:
        try:
            if given == "eps" and bound == "lower":
                prof = fresh(v)   # as amp.delta: a Theorem 5 pair picked at eps (finite forms)
            elif reuse:
                shared = shared if shared is not None else fresh()
                prof = shared
            else:
                prof = fresh()
            b = (epsilon_for(prof, v, rel_tol=rel_tol) if given == "delta"
                 else prof.delta(v, rel_tol=rel_tol))
            out.append({"value": b.value, "lower": b.lower, "upper": b.upper,
                        "method": b.method, "error": None})
        except POINT_ERRORS as exc:
            out.append(_failed(exc))
    return out


def _failed(exc: BaseException) -> dict:
    return {"value": None, "lower": None, "upper": None, "method": None,
            "error": f"{type(exc).__name__}: {exc}"}


# ----------------------------------------------------------------------------- inputs
def _values(name: str, value: object, check) -> list:
    """A scalar or a sequence as a non-empty list of checked values."""
    if isinstance(value, (str, bytes, Mapping)):
        raise ParameterError(f"{name} must be a number or a sequence of numbers, got "
                             f"{V.show(value)}")
    try:
        items = list(value) if isinstance(value, Iterable) else [value]
    except TypeError:
        items = [value]
    if getattr(value, "ndim", None) == 0:
        items = [value]
    if not items:
        raise ParameterError(f"{name} must not be empty")
    return [check(name, x) for x in items]


def _specs(mechanism: object, domain: dict) -> list[tuple[str, tuple]]:
    """``[(registry name, sorted domain pairs)]`` from a name or a list of names/pairs."""
    if isinstance(mechanism, str):
        entries = [mechanism]
    elif isinstance(mechanism, Sequence) and mechanism:
        entries = list(mechanism)
    else:
        raise ParameterError("mechanism must be a registered name "
                             f"({', '.join(registry.MECHANISMS)}) or a non-empty list of them, "
                             f"got {V.show(mechanism)}")
    specs = []
    for e in entries:
        if isinstance(e, str):
            name, params = e, dict(domain)
        elif isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) \
                and isinstance(e[1], Mapping):
            name, params = e[0], dict(e[1])
        else:
            raise ParameterError("mechanism entries must be names or (name, {keyword: value}) "
                                 f"pairs, got {V.show(e)}")
        params = {k: (V.positive_float(k, v) if k == "b" else V.int_at_least(k, v, 1))
                  for k, v in params.items() if v is not None}
        registry.factory(name, **params)       # unknown name, missing or foreign keyword
        specs.append((name.lower(), tuple(sorted(params.items()))))
    return specs


def _resolve_executor(executor: object, workers: object, n_tasks: int
                      ) -> tuple[Executor | None, bool]:
    """(executor or None for serial, whether this call owns it and must shut it down)."""
    if workers is not None:
        workers = V.int_at_least("workers", workers, 1)
    if executor is None:
        return None, False
    if isinstance(executor, str):
        if executor != "process":
            raise ParameterError(f"executor must be 'process', None or a "
                                 f"concurrent.futures.Executor, got {V.show(executor)}")
        count = workers if workers is not None else (os.cpu_count() or 1)
        count = min(count, n_tasks)
        if count <= 1:
            return None, False
        return ProcessPoolExecutor(max_workers=count), True
    if isinstance(executor, Executor) or callable(getattr(executor, "submit", None)):
        if workers is not None:
            raise ParameterError("workers applies to the default process pool only; size the "
                                 "executor you pass instead")
        return executor, False     # type: ignore[return-value]
    raise ParameterError(f"executor must be 'process', None or a concurrent.futures.Executor, "
                         f"got {type(executor).__name__}")


# ----------------------------------------------------------------------------- the sweep
def sweep(mechanism: str | Sequence, n: int | Iterable[int], eps0: float | Iterable[float], *,
          delta: float | Iterable[float] | None = None,
          eps: float | Iterable[float] | None = None,
          bound: str | Sequence[str] = "upper", rel_tol: float | None = None,
          method: str = "auto", executor: Executor | str | None = "process",
          workers: int | None = None, progress: Progress | None = None,
          reuse: bool = True, **domain: int) -> SweepTable:
    """Certified ``eps(delta)`` (or ``delta(eps)``) over a grid of deployments, as a table.

    Every point is one call of :func:`amp.epsilon` (give ``delta``) or :func:`amp.delta`
    (give ``eps``) for the registered mechanism at local ``eps0`` shuffled among ``n`` users:
    Theorem 4's blanket bound (``bound="upper"``) or Theorem 5's lower bound (``"lower"``),
    each certified by the search of Algorithm 4. Rows come in the order
    ``mechanism, bound, n, eps0, delta`` (each in the order given).

    Parameters
    ----------
    mechanism : str or list
        A name of ``amp.mechanisms.registry`` (``"krr"``, ``"rappor"``, ``"oue"``, ``"blh"``,
        ``"olh"``, ``"hadamard"``), whose domain keywords are given as ``**domain``, or a list
        of names and ``(name, {keyword: value})`` pairs.
    n : int or sequence of int
        Numbers of users, each ``>= 1``.
    eps0 : float or sequence of float
        Local privacy levels, each ``> 0``.
    delta : float or sequence of float, optional
        Target ``delta`` values in ``(0, 1)``: each point is ``eps(delta)``.
    eps : float or sequence of float, optional
        Central ``eps >= 0``: each point is ``delta(eps)``. Give exactly one of ``delta``,
        ``eps``.
    bound : {"upper", "lower"} or a sequence of them, default "upper"
        Theorem 4's blanket bound or Theorem 5's lower bound.
    rel_tol : float, optional
        Largest relative bracket width of each point (default: that of :func:`amp.epsilon`,
        ``1e-4``, or of :func:`amp.delta`, ``2e-3``).
    method : {"auto", "structured", "fft", "exact"}, default "auto"
        The ``delta`` backend.
    executor : "process", None or concurrent.futures.Executor, default "process"
        Where the tasks run: ``"process"`` a local
        :class:`~concurrent.futures.ProcessPoolExecutor` of ``workers`` processes (default
        ``os.cpu_count()``) created and shut down by this call; ``None`` the calling process,
        serially; or any executor you own (not shut down), e.g. Dask's
        ``Client(...).get_executor()`` (see :func:`amp.sweeps.dask_executor`). Use processes:
        threads of one process share its BLAS thread setting, which each task pins to 1.
    workers : int, optional
        Size of the default process pool; ``workers=1`` runs serially in-process.
    progress : callable, optional
        Called with a one-line message each time a task finishes.
    reuse : bool, default True
        Ask the ``delta`` (or ``eps``) values of one ``(mechanism, bound, n, eps0)`` on one
        profile, reusing its tables. A profile keeps the deepest tables it has built, so a
        bracket can then differ from a lone :func:`amp.epsilon` call within ``rel_tol`` (it is
        certified either way, and the table is the same on every executor). ``False``: a
        fresh profile per point, the very brackets of :func:`amp.epsilon` / :func:`amp.delta`
        (with single-threaded BLAS, see the module docstring).
    **domain : int
        Domain keywords of the mechanism (``k`` for ``krr``, ``g`` for ``olh``, ``d``).

    Returns
    -------
    SweepTable
        One row per point with the inputs, ``value``, ``lower``, ``upper`` and ``method``; a
        point that cannot be certified has its error message in ``error`` (numbers ``None``).

    Raises
    ------
    ParameterError
        Bad input, before any work starts (the message names the parameter).
    amp.core.extras.MissingExtraError
        From :func:`amp.sweeps.dask_executor` when the ``dask`` extra is not installed.

    Examples
    --------
    >>> import amp
    >>> t = amp.sweep("krr", n=[1000, 10_000], eps0=[2, 4], delta=1e-6,
    ...               k=10, executor=None)
    >>> [(r["n"], r["eps0"], round(r["value"], 4)) for r in t]
    [(1000, 2.0, 0.2728), (1000, 4.0, 1.5274), (10000, 2.0, 0.0798),
     (10000, 4.0, 0.3805)]
    >>> m = amp.KRR(4.0, k=10)
    >>> t.rows[3]["value"] == amp.epsilon(m, 10_000, 1e-6).value
    True
    >>> print(t)                                     # doctest: +SKIP
    mechanism  params  eps0      n  bound  delta  quantity     value ...
    """
    t0 = time.perf_counter()
    specs = _specs(mechanism, domain)
    ns = _values("n", n, lambda nm, x: V.int_at_least(nm, x, 1))
    eps0s = _values("eps0", eps0, lambda nm, x: V.eps0_value(x, nm))
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (eps(delta) questions) and eps "
                             "(delta(eps) questions)")
    if delta is not None:
        given, values = "delta", _values("delta", delta, V.probability_open)
    else:
        given, values = "eps", _values(
            "eps", eps, lambda nm, x: V.positive_float(nm, x, allow_zero=True))
    bounds = [bound] if isinstance(bound, str) else list(bound) if bound is not None else []
    if not bounds:
        raise ParameterError("bound must not be empty")
    bounds = [check_bound(b) for b in bounds]
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {V.show(method)}")
    default_tol = DEFAULT_EPS_REL_TOL if given == "delta" else DEFAULT_REL_TOL
    tol = default_tol if rel_tol is None else V.positive_float("rel_tol", rel_tol, upper=0.5)
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be callable, got {type(progress).__name__}")
    for name, params in specs:          # refused (name, eps0) pairs: bad input, said now
        for e0 in eps0s:
            registry.make(name, e0, **dict(params))

    if not isinstance(reuse, bool):
        raise ParameterError(f"reuse must be True or False, got {V.show(reuse)}")
    tasks = [(name, params, e0, nn, b, method, given, tuple(values), tol, reuse)
             for name, params in specs for b in bounds for nn in ns for e0 in eps0s]
    pool, owned = _resolve_executor(executor, workers, len(tasks))
    results = _execute(tasks, pool, owned, progress, len(values))

    rows = []
    for task, answers in zip(tasks, results):
        name, params, e0, nn, b = task[:5]
        for v, ans in zip(values, answers):
            rows.append({"mechanism": name, "params": ",".join(f"{k}={x}" for k, x in params),
                         "eps0": e0, "n": nn, "bound": b, given: v,
                         "quantity": "eps" if given == "delta" else "delta", **ans})
    return SweepTable(tuple(rows), given, time.perf_counter() - t0)


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
        # largest n first (the costliest tasks, as a rule): a shorter tail on few workers
        order = sorted(range(total), key=lambda i: -tasks[i][3])
        futures = {pool.submit(_run_task, tasks[i]): i for i in order}
        out: list = [None] * total
        for done, fut in enumerate(as_completed(futures), start=1):
            out[futures[fut]] = fut.result()
            report(done)
        return out
    finally:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)


# ----------------------------------------------------------------------------- Dask
@contextmanager
def dask_executor(address: str | None = None, *, n_workers: int | None = None,
                  threads_per_worker: int = 1, timeout: float = 10.0) -> Iterator[Executor]:
    """A :class:`concurrent.futures.Executor` on a Dask cluster, for :func:`amp.sweep`.

    ``address`` given: connect a ``distributed.Client`` to that scheduler (e.g.
    ``"tcp://10.0.0.5:8786"``); otherwise start a ``distributed.LocalCluster`` of
    ``n_workers`` worker processes (default: one per core) with ``threads_per_worker`` threads
    each. Yields ``client.get_executor()``; on exit the client (and a cluster started here) is
    closed. Workers must be able to ``import amp`` (the same version as the caller).
    Needs the ``dask`` extra (``pip install 'amp-shuffle[dask]'``).

    Parameters
    ----------
    address : str, optional
        Address of a running Dask scheduler.
    n_workers : int, optional
        Worker processes of the local cluster (ignored with ``address``).
    threads_per_worker : int, default 1
        Threads per worker of the local cluster (the tasks are CPU-bound: keep 1).
    timeout : float, default 10
        Seconds to wait for the scheduler at ``address``.

    Yields
    ------
    concurrent.futures.Executor
        Dask's ``ClientExecutor``.

    Raises
    ------
    amp.core.extras.MissingExtraError
        ``distributed`` is not installed (one line naming the extra).
    ParameterError
        No scheduler answers at ``address`` within ``timeout`` seconds.

    Examples
    --------
    >>> import amp
    >>> from amp.sweeps import dask_executor
    >>> with dask_executor(n_workers=2) as ex:             # doctest: +SKIP
    ...     t = amp.sweep("krr", n=[1e4, 1e5], eps0=[2, 4], delta=1e-6,
    ...                   k=10, executor=ex)
    """
    distributed = require("distributed", "dask", purpose="amp.sweep on a Dask cluster")
    dask = require("dask", "dask", purpose="amp.sweep on a Dask cluster")
    if n_workers is not None:
        n_workers = V.int_at_least("n_workers", n_workers, 1)
    threads_per_worker = V.int_at_least("threads_per_worker", threads_per_worker, 1)
    timeout = V.positive_float("timeout", timeout)
    cluster = None
    if address is None:
        # Dask's default MALLOC_TRIM_THRESHOLD_ for workers also fixes glibc's mmap threshold:
        # every large array is then mapped afresh (measured: 5.7x page faults, +35% CPU at
        # n = 1e8); the workers keep the default allocator (and Dask's one BLAS thread)
        with dask.config.set({TRIM_KEY: None}):
            cluster = distributed.LocalCluster(n_workers=n_workers,
                                               threads_per_worker=threads_per_worker,
                                               processes=True, host="127.0.0.1",
                                               dashboard_address=None)
        client = distributed.Client(cluster)
    else:
        try:
            client = distributed.Client(str(address), timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise ParameterError(f"no Dask scheduler answers at address {V.show(address)} "
                                 f"({exc})") from None
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
