"""A deployment sweep three ways: serially, on a local process pool and on a Dask LocalCluster.

Usage::

    python bench/bench_sweep.py [--n-count 20] [--eps0-count 10] [--delta 1e-6] [--workers 2]
                                [--out bench/results/bench_sweep.txt]

The grid (issue 12's closing figure): 10-RR, ``n`` log-spaced over 1e3..1e8 (``--n-count``
values, rounded to integers) x ``eps0`` evenly spaced over 0.5..8 (``--eps0-count`` values), the
certified Theorem 4 ``eps(delta)`` at ``delta`` (default 1e-6, 20 x 10 = 200 points). It runs
``amp.sweep`` with ``executor=None`` (serial, in this process), ``workers=W`` (a local
``ProcessPoolExecutor``) and on a ``distributed.LocalCluster`` of ``W`` single-threaded worker
processes (cluster start-up timed apart), then checks that the three tables are identical
(every row's inputs, value, bracket, method and error; and the CSV text, floats in full
precision). Printed: the three wall times, the speed-ups, the check, and a few rows.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import amp  # noqa: E402
from amp.sweeps import dask_executor  # noqa: E402


def grid(n_count: int, eps0_count: int) -> tuple[list[int], list[float]]:
    ns = sorted({int(round(x)) for x in np.geomspace(1e3, 1e8, n_count)})
    eps0s = [float(x) for x in np.linspace(0.5, 8.0, eps0_count)]
    return ns, eps0s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-count", type=int, default=20)
    ap.add_argument("--eps0-count", type=int, default=10)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    a = ap.parse_args()

    ns, eps0s = grid(a.n_count, a.eps0_count)
    kw = dict(n=ns, eps0=eps0s, delta=a.delta, k=10)
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"bench_sweep: 10-RR, {len(ns)} n values in [{ns[0]}, {ns[-1]}] x {len(eps0s)} eps0 "
        f"values in [{eps0s[0]:g}, {eps0s[-1]:g}] = {len(ns) * len(eps0s)} points, "
        f"eps(delta={a.delta:g}), Theorem 4 upper bound, rel_tol 1e-4")
    say(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, amp "
        f"{amp.__version__}; workers = {a.workers}; load average at start "
        f"{os.getloadavg()[0]:.1f} (other processes share the cores: speed-ups need idle ones)")

    def children_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    t0, c0 = time.perf_counter(), time.process_time()
    serial = amp.sweep("krr", **kw, executor=None)
    t_serial, cpu_serial = time.perf_counter() - t0, time.process_time() - c0

    t0, c0 = time.perf_counter(), children_cpu()
    pooled = amp.sweep("krr", **kw, workers=a.workers)
    t_pool, cpu_pool = time.perf_counter() - t0, children_cpu() - c0

    t0, c0 = time.perf_counter(), children_cpu()
    with dask_executor(n_workers=a.workers, threads_per_worker=1) as ex:
        t_start = time.perf_counter() - t0
        t1 = time.perf_counter()
        dasked = amp.sweep("krr", **kw, executor=ex)
        t_dask = time.perf_counter() - t1
    t_dask_total = time.perf_counter() - t0
    cpu_dask = children_cpu() - c0

    say()
    say(f"{'run':<44} {'wall s':>8} {'speed-up':>9} {'CPU s':>8}")
    say(f"{'serial (executor=None)':<44} {t_serial:8.2f} {1.0:9.2f} {cpu_serial:8.2f}")
    say(f"{f'process pool (workers={a.workers})':<44} {t_pool:8.2f} {t_serial / t_pool:9.2f} "
        f"{cpu_pool:8.2f}")
    say(f"{f'Dask LocalCluster ({a.workers} x 1 thread), sweep':<44} {t_dask:8.2f} "
        f"{t_serial / t_dask:9.2f}")
    say(f"{'Dask LocalCluster, incl. cluster start-up':<44} {t_dask_total:8.2f} "
        f"{t_serial / t_dask_total:9.2f} {cpu_dask:8.2f}   (start-up {t_start:.2f} s)")
    say("CPU s: this process (serial) or the worker processes (pool, Dask: imports and "
        "start-up included); wall / CPU shows how much of the wall time the cores were ours")

    say(f"load average at end {os.getloadavg()[0]:.1f}")
    same_pool = pooled == serial and pooled.to_csv() == serial.to_csv()
    same_dask = dasked == serial and dasked.to_csv() == serial.to_csv()
    say()
    say(f"identical tables: process pool = serial: {same_pool}; Dask = serial: {same_dask} "
        f"({len(serial)} rows; inputs, value, bracket, method, error; CSV text equal)")
    failed = len(serial.failed)
    say(f"points not certified: {failed}")
    widths = [(r["upper"] - r["lower"]) / r["upper"] for r in serial if r["error"] is None]
    say(f"largest relative bracket width: {max(widths):.2e}")
    say()
    say("first and last rows (serial table):")
    text = str(serial).splitlines()
    for ln in text[:4] + ["..."] + text[-4:]:
        say("  " + ln)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text("\n".join(lines) + "\n")
    return 0 if (same_pool and same_dask) else 1


if __name__ == "__main__":
    raise SystemExit(main())
