"""Timings that used to be assertions in the unit tests.

Run as ``python3 bench/bench_former_timed_tests.py``. Tests assert no wall time (a loaded
machine makes them fail for nothing); the speed figures they guarded are printed here
instead, next to the limit the test used to assert:

* ``tests/test_clone.py``: ``clone_delta(4, 10**6, 0.05)`` (was "< 2 s");
* ``tests/test_joint.py``: ``gparv_laws()`` of the 10-joint 10-RR and 10-joint RAPPOR at total
  ``eps0 = 4`` (was "< 5 s" for both);
* ``tests/test_viz_widgets.py``: one redraw of the joint widget (was "< 1.5 s") is timed with
  every other widget of the live app in ``bench/bench_live_widgets.py``.

Each figure is the best of ``--repeat`` runs (the first one, with import and cache warm-up, is
printed separately).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from amp.baselines.clone import clone_delta
from amp.mechanisms import KRR, RAPPOR
from amp.mechanisms.joint import joint_copies


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(first call, best of the following ``repeat``) wall times in seconds."""
    times = []
    for _ in range(repeat + 1):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times[0], min(times[1:]) if repeat else times[0]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    rows = [
        ("clone_delta(4, 1e6, 0.05)", "tests/test_clone.py", 2.0,
         lambda: clone_delta(4.0, 10**6, 0.05)),
        ("10-joint 10-RR + RAPPOR gparv_laws", "tests/test_joint.py", 5.0,
         lambda: (joint_copies(KRR, 10, 4.0, k=10).gparv_laws(),
                  joint_copies(RAPPOR, 10, 4.0).gparv_laws())),
    ]
    print(f"{'what':<38}{'first s':>9}{'best s':>9}{'old limit':>11}  test")
    for name, test, limit, fn in rows:
        first, best = timed(fn, args.repeat)
        print(f"{name:<38}{first:>9.3f}{best:>9.3f}{limit:>10.1f}s  {test}")


if __name__ == "__main__":
    main()
