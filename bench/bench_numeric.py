"""Numeric randomizers: Laplace's certified eps(delta) bracket, and the closing-note table.

Usage::

    python bench/bench_numeric.py [--part laplace|table|all] [--rel-tol 1e-3] [--no-paper]

Part ``laplace`` (issue #25's targets): ``amp.epsilon(amp.Laplace(eps0), n, 1e-6,
rel_tol=1e-3)`` for eps0 in {0.5, 1, 2, 4} and n in {1e4, 1e6, 1e8}: the certified bracket
(lower end: the cell-means law, upper end: the two-point law; Theorem 4 of the continuous law
lies between), its relative width, the cells per piece at the end, wall and CPU time
(targets: width <= 1e-3, <= 2 s at n <= 1e6, <= 10 s at 1e8; on a shared machine compare the
CPU time).

Part ``table`` (the closing note): Laplace, PiecewiseMechanism, SquareWave, Duchi at eps0 = 1,
2, 4 and n = 1e4, 1e6: amp's certified upper eps (Theorem 4, value = upper end) and lower eps
(Theorem 5, value = lower end) at delta = 1e-6, each with its bracket and time; and, for
Laplace, the number the paper's published code's method gives: [0, 1] cut into 10,000 cells
plus the two tails, each cell an atom at its midpoint with mass density x width. That law is
UNCERTIFIED (a midpoint rule, neither above nor below the continuous law in any proven
order); it is re-implemented here (``paper_style_law``) and evaluated by amp's certified
engine, so the only difference from amp's number is the discretisation.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time

import numpy as np

sys.path.insert(0, ".")
import amp  # noqa: E402
from amp.core.errors import NumericalError  # noqa: E402


def paper_style_law(eps0: float, cells: int = 10_000) -> amp.GPARV:
    """The published code's discretisation (uncertified): midpoints of ``cells`` equal cells of
    [0, 1] with mass ``omega(mid) / cells``, the two tails as atoms (their exact masses),
    ratios ``r_0 / omega`` and ``r_1 / omega`` at the midpoints."""
    y = (np.arange(cells) + 0.5) / cells
    r0 = eps0 / 2 * np.exp(-eps0 * y)
    r1 = eps0 / 2 * np.exp(-eps0 * (1 - y))
    om = np.minimum(r0, r1)
    E = math.exp(eps0)
    tail = math.exp(-eps0) / 2
    a = np.concatenate([r0 / om, [E, 1.0]])
    b = np.concatenate([r1 / om, [1.0, E]])
    p = np.concatenate([om / cells, [tail, tail]])
    return amp.GPARV(a, b, p, eps0, f"paper-style Laplace, {cells} cells (uncertified)")


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        out = fn()
    except NumericalError as exc:
        out = exc
    return out, time.perf_counter() - t0, time.process_time() - c0


def part_laplace(rel_tol: float) -> None:
    print(f"== Laplace eps(1e-6), rel_tol={rel_tol:g} (targets: width <= 1e-3; <= 2 s at "
          "n <= 1e6, <= 10 s at 1e8)")
    print(f"{'eps0':>5} {'n':>6} {'lower':>12} {'upper':>12} {'rel width':>10} "
          f"{'cells':>6} {'wall s':>7} {'cpu s':>7}")
    for e0 in (0.5, 1.0, 2.0, 4.0):
        for n in (10**4, 10**6, 10**8):
            prof = amp.profile(amp.Laplace(e0), n)
            r, wall, cpu = timed(lambda: amp.epsilon_for(prof, 1e-6, rel_tol=rel_tol))
            if isinstance(r, Exception):
                print(f"{e0:>5g} {n:>6.0e}  refused: {r}")
                continue
            cells = 16 << prof.curves[0].level
            print(f"{e0:>5g} {n:>6.0e} {r.lower:>12.6g} {r.upper:>12.6g} "
                  f"{r.rel_width:>10.2e} {cells:>6d} {wall:>7.2f} {cpu:>7.2f}", flush=True)


def part_table(rel_tol: float, paper: bool) -> None:
    print(f"\n== Closing-note table: eps at delta = 1e-6 (upper: Theorem 4, lower: Theorem 5), "
          f"rel_tol={rel_tol:g}")
    print(f"{'mechanism':<26} {'eps0':>4} {'n':>6} {'upper eps [bracket]':>32} {'s':>6} "
          f"{'lower eps [bracket]':>32} {'s':>6}")
    makers = [("Laplace", amp.Laplace), ("PiecewiseMechanism", amp.PiecewiseMechanism),
              ("SquareWave", amp.SquareWave), ("Duchi", amp.Duchi)]
    for name, make in makers:
        for e0 in (1.0, 2.0, 4.0):
            for n in (10**4, 10**6):
                m = make(e0)
                cols = []
                for bound in ("upper", "lower"):
                    r, wall, _ = timed(lambda: amp.epsilon(m, n, 1e-6, bound=bound,
                                                           rel_tol=rel_tol))
                    if isinstance(r, Exception):
                        cols.append(f"{'refused':>32} {wall:>6.1f}")
                    else:
                        br = f"{r.value:.5g} [{r.lower:.6g}, {r.upper:.6g}]"
                        cols.append(f"{br:>32} {wall:>6.1f}")
                print(f"{name:<26} {e0:>4g} {n:>6.0e} {cols[0]} {cols[1]}", flush=True)
    if not paper:
        return
    print("\n== Laplace: amp's certified bracket vs the paper code's method (10,000 midpoint "
          "cells + 2 tails: UNCERTIFIED, as the paper's code does; its law evaluated by amp)")
    print(f"{'eps0':>4} {'n':>6} {'amp certified [lower, upper]':>32} {'paper-style':>12} "
          f"{'inside?':>8} {'s':>6}")
    for e0 in (1.0, 2.0, 4.0):
        law = paper_style_law(e0)
        for n in (10**4, 10**6):
            lap = amp.epsilon(amp.Laplace(e0), n, 1e-6, rel_tol=rel_tol)
            prof = amp.PrivacyProfile(amp.Laplace(e0), n, laws=[law])
            r, wall, _ = timed(lambda: amp.epsilon_for(prof, 1e-6, rel_tol=1e-4))
            if isinstance(r, Exception):
                print(f"{e0:>4g} {n:>6.0e} [{lap.lower:.6g}, {lap.upper:.6g}]  paper-style "
                      f"refused: {r}")
                continue
            inside = "yes" if lap.lower <= r.value <= lap.upper else "NO"
            br = f"[{lap.lower:.6g}, {lap.upper:.6g}]"
            print(f"{e0:>4g} {n:>6.0e} {br:>32} {r.value:>12.6g} {inside:>8} {wall:>6.1f}",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["laplace", "table", "all"], default="all")
    ap.add_argument("--rel-tol", type=float, default=1e-3)
    ap.add_argument("--no-paper", action="store_true")
    args = ap.parse_args()
    print(f"amp {amp.__version__}, Python {platform.python_version()}, {platform.machine()} "
          "(shared 2-core machine: wall times vary with the load; cpu s is this process)")
    if args.part in ("laplace", "all"):
        part_laplace(args.rel_tol)
    if args.part in ("table", "all"):
        part_table(args.rel_tol, not args.no_paper)


if __name__ == "__main__":
    main()
