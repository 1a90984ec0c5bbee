"""Dask for :func:`amp.sweep`: a :class:`concurrent.futures.Executor` on a local or remote Dask
cluster (the ``dask`` extra, ``pip install 'amp-shuffle[dask]'``)."""

from __future__ import annotations

from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Iterator

from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.extras import require

__all__ = ["dask_executor", "TRIM_KEY"]

#: The Dask setting of the allocator variable that a local cluster's workers do without.
TRIM_KEY = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"


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
