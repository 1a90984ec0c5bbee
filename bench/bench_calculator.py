#!/usr/bin/env python
"""Rounding cost of chapter 10's static calculator against amp's direct answer.

Draws random questions (mechanism and eps0 uniform over the table's, n log-uniform in each n
range, delta log-uniform in [1e-12, 1e-4]), answers each with the page's lookup (the Python
mirror ``answer`` of scripts/build_calculator_table.py, which tests/test_calculator_table.py
checks against calculator.js) and with ``amp.epsilon_for(amp.profile(m, n), delta)`` (certified
upper value, rel_tol 1e-4), and prints per n range the median / 90% / max of

    cost = page / amp - 1

over the questions whose answers differ by more than ``--near-zero`` (absolute); the others
(eps near 0, where no relative bound exists) are counted apart with their largest absolute
difference. A page answer below amp's certified lower end would be an invalid bound: counted
and reported (must be 0). Also prints the size of table.js.

Usage::

    nice -n 10 .venv/bin/python bench/bench_calculator.py | tee bench/results/bench_calculator.txt
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tests"))

#: n ranges and the number of questions in each (the large ones cost seconds to minutes each)
RANGES = [(1e2, 1e4, 40), (1e4, 1e6, 40), (1e6, 1e7, 25), (1e7, 1e8, 6), (1e8, 1e9, 4)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the sample counts")
    ap.add_argument("--near-zero", type=float, default=2e-3)
    ap.add_argument("--n-min", type=float, default=0, help="only the n ranges from here")
    ap.add_argument("--n-max", type=float, default=math.inf, help="only the n ranges up to here")
    ap.add_argument("--steep", type=int, default=0, metavar="Q",
                    help="also Q questions in each window of B.STEEP_WINDOWS (eps0 fixed), "
                         "where eps falls steeply with n (rows at whole n there)")
    ap.add_argument("--adversarial", type=int, default=0, metavar="Q",
                    help="also the Q questions where rounding n down costs most by the table's "
                         "own reading: n = n_b - 1 just below a row, at the delta where the "
                         "rows n_a < n_b answer furthest apart (n_b <= 1e7)")
    ap.add_argument("--adversarial-steep", type=int, default=0, metavar="Q",
                    help="the same, among the pairs of rows inside B.STEEP_WINDOWS only")
    ap.add_argument("--adversarial-n", type=float, nargs=2, default=(0, 1e7),
                    metavar=("N_MIN", "N_MAX"),
                    help="the adversarial pairs' range: n_a >= N_MIN, n_b <= N_MAX (default "
                         "0 1e7; above 1e7 amp can take minutes per question)")
    ap.add_argument("--before", type=Path, default=None, metavar="TABLE_JS",
                    help="also answer every question from this (earlier) table.js and print "
                         "its costs beside (the same questions, the same amp answers)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import amp
    import build_calculator_table as B
    from test_calculator_table import MECHS, TABLE_JS, load_table

    table = load_table()
    before = load_table(args.before) if args.before else None

    def counted(page: float, amp_upper: float) -> bool:
        """A relative cost is counted unless the answer is within --near-zero of amp's and
        more than 10% above it (eps near 0: no relative bound exists there)."""
        return not (page - amp_upper <= args.near_zero
                    and (amp_upper == 0 or page / amp_upper - 1 > 0.10))
    if before is not None:
        print(f"before: {args.before} ({args.before.stat().st_size / 1024:.0f} kB, "
              f"{before['meta']['rows']} rows); 'was' columns answer from it")
    rng = random.Random(args.seed)
    ids = [m["id"] for m in table["mechanisms"]]
    print(f"table.js: {TABLE_JS.stat().st_size / 1024:.0f} kB, {table['meta']['rows']} rows, "
          f"{table['meta']['pairs']} pairs, n grid {len(table['n'])} values "
          f"({table['n'][0]} .. {table['n'][-1]:.3g}); amp {amp.__version__}")
    per_decade = {}
    for lo_exp in range(2, 9):
        k = sum(10 ** lo_exp <= n < 10 ** (lo_exp + 1) for n in table["n"])
        per_decade[f"1e{lo_exp}-1e{lo_exp + 1}"] = k
    print("grid n per decade:", per_decade)
    print(f"{'n range':>12} {'q':>4} {'median':>8} {'90%':>8} {'max':>8} {'near0':>6} "
          f"{'maxabs0':>9} {'invalid':>7} {'amp s':>7}")
    lines = []
    groups = [(lo, hi, count, None) for lo, hi, count in RANGES
              if lo >= args.n_min and hi <= args.n_max]
    # the windows where the table's refinement did not converge (eps0 fixed)
    groups += [(lo, hi, args.steep, e0) for e0, lo, hi in B.STEEP_WINDOWS if args.steep]
    for lo, hi, count, e0_fixed in groups:
        if e0_fixed is not None:
            print(f"steep window eps0={e0_fixed:g}:", flush=True)
        costs, near, near_abs, invalid, worst, t0 = [], 0, 0.0, 0, None, time.time()
        was = []                                  # the --before table's costs (same questions)
        refused = 0
        for _ in range(max(1, round(count * args.scale))):
            mid, e0 = rng.choice(ids), rng.choice(table["eps0"])
            e0 = e0 if e0_fixed is None else e0_fixed
            n = int(10 ** rng.uniform(math.log10(lo), math.log10(hi)))
            delta = 10 ** rng.uniform(-12, -4)
            page = B.answer(table, mid, e0, n, delta)["eps"]
            prof, b = amp.profile(MECHS[mid](e0), n), None
            for rt in (1e-3, 1e-2):
                try:
                    b = amp.epsilon_for(prof, delta, rel_tol=rt)
                    break
                except amp.NumericalError as exc:
                    print(f"  amp refused rel_tol {rt:g} at {mid} eps0={e0} n={n} "
                          f"delta={delta:.3g}: {str(exc)[:90]}")
            if b is None:
                refused += 1
                continue
            if before is not None:
                # the earlier page: its table, and its lookup (the lattice point, no chord)
                old = B.answer(before, mid, e0, n, delta, chord=False)["eps"]
                if old < b.lower:
                    invalid += 1
                    print(f"  INVALID (before): {mid} eps0={e0} n={n} delta={delta:.3g}")
                if counted(old, b.upper):
                    was.append(old / b.upper - 1)
            if page < b.lower:
                invalid += 1
                print(f"  INVALID: {mid} eps0={e0} n={n} delta={delta:.3g}: page {page} < "
                      f"amp {b.bracket}")
            if not counted(page, b.upper):
                near += 1
                near_abs = max(near_abs, page - b.upper)
                continue
            c = page / b.upper - 1
            costs.append(c)
            if worst is None or c > worst[0]:
                worst = (c, mid, e0, n, delta, page, b.upper)
        costs.sort()
        q = len(costs)
        row = (f"{f'{lo:.0e}-{hi:.0e}':>12} {q:>4} "
               + (f"{100 * statistics.median(costs):7.1f}% {100 * costs[max(0, math.ceil(0.9 * q) - 1)]:7.1f}% "
                  f"{100 * costs[-1]:7.1f}%" if q else f"{'-':>8} {'-':>8} {'-':>8}")
               + f" {near:>6} {near_abs:9.2e} {invalid:>7} {time.time() - t0:7.1f}"
               + (f"  ({refused} questions amp could not certify)" if refused else ""))
        print(row, flush=True)
        if before is not None and was:
            was.sort()
            print(f"{'was':>12} {len(was):>4} {100 * statistics.median(was):7.1f}% "
                  f"{100 * was[max(0, math.ceil(0.9 * len(was)) - 1)]:7.1f}% "
                  f"{100 * was[-1]:7.1f}%   (the --before table, same questions)", flush=True)
        if worst:
            print(f"{'':>12} worst: {worst[1]} eps0={worst[2]:g} n={worst[3]} "
                  f"delta={worst[4]:.3g}: page {worst[5]} vs amp {worst[6]:.6g}", flush=True)
        lines.append(row)
    lo_n, hi_n = args.adversarial_n
    if args.adversarial:
        adversarial(table, args.adversarial, args.near_zero, n_min=lo_n, n_max=hi_n)
    if args.adversarial_steep:
        adversarial(table, args.adversarial_steep, args.near_zero, steep_only=True)
    print("cost = page/amp - 1 over questions off by more than "
          f"{args.near_zero:g} or by more than 10%; near0 = answers within {args.near_zero:g} "
          "of amp but more than 10% above it (eps near 0; maxabs0 = largest difference); "
          "invalid = page below amp's certified lower end (must be 0)")
    print("meta:", json.dumps({k: table["meta"][k] for k in
                               ("date_utc", "git_commits", "cpu_seconds", "rows_not_computed",
                                "rows_only_first_table") if k in table["meta"]}))
    return 0


def adversarial(table: dict, count: int, near_zero: float, n_max: float = 1e7,
                steep_only: bool = False, n_min: float = 0) -> None:
    """The ``count`` costliest questions by the table's own reading, asked of amp.

    For each pair of consecutive rows ``n_a < n_b`` (same mechanism and eps0, ``n_b <=
    n_max``) and 200 deltas log-spaced over the page's range, the ratio of their answers; the
    question ``(n_b - 1, delta)`` of the largest ratios is answered by row ``n_a`` (or a better
    one below it) while amp's answer there is about row ``n_b``'s: the worst case of rounding
    n down, plus the slack of each row's own answer. Printed: the cost ``page / amp - 1`` of
    each (an answer below amp's certified lower end is flagged INVALID)."""
    import amp
    import build_calculator_table as B
    from test_calculator_table import MECHS
    deltas = B.page_deltas(200)
    found = []
    for m in table["mechanisms"]:
        if "same_as" in m:
            continue
        for e0 in table["eps0"]:
            rows = table["rows"][m["id"]][f"{e0:g}"]
            have = [(g, r) for g, r in zip(table["n"], rows)
                    if r is not None and n_min <= g <= n_max]
            for (na, ra), (nb, rb) in zip(have, have[1:]):
                if steep_only and not (B.in_steep_window(e0, na) and B.in_steep_window(e0, nb)):
                    continue
                best = B.worst_ratio(table, e0, ra, rb, deltas, near_zero)
                if best:
                    found.append((best[0], m["id"], e0, na, nb, best[1]))
    found.sort(reverse=True)
    costs, t0 = [], time.time()
    print(f"adversarial: the {count} largest answer ratios of neighbouring rows (of "
          f"{len(found)} pairs, {n_min:.0e} <= n_a, n_b <= {n_max:.0e}"
          f"{', steep windows only' if steep_only else ''}"
          "), asked at n = n_b - 1:")
    for ratio, mid, e0, na, nb, d in found[:count]:
        n = nb - 1
        page = B.answer(table, mid, e0, n, d)["eps"]
        b = None
        for rt in (1e-3, 1e-2, 1e-1):
            try:
                b = amp.epsilon_for(amp.profile(MECHS[mid](e0), n), d, rel_tol=rt)
                break
            except amp.NumericalError:
                continue
        if b is None:
            print(f"  {mid:>6} eps0={e0:g} n={n} delta={d:.3g}: amp could not certify eps")
            continue
        cost = page / b.upper - 1
        costs.append(cost)
        flag = "  INVALID" if page < b.lower else ""
        print(f"  {mid:>6} eps0={e0:g} rows {na}..{nb} delta={d:.3g}: rows' ratio {ratio:.4f}, "
              f"page {page} vs amp {b.upper:.6g} at n={n}: cost {100 * cost:.1f}%{flag}",
              flush=True)
    if costs:
        costs.sort()
        print(f"adversarial: {len(costs)} questions, median {100 * statistics.median(costs):.1f}%"
              f", max {100 * costs[-1]:.1f}% ({time.time() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
