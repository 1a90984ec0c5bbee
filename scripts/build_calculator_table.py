#!/usr/bin/env python
"""Build the static calculator's table of certified eps(delta) upper values.

The static book has no kernel, so chapter 10's static calculator reads a table that ``amp``
computed here: for each Table 1 mechanism, each ``eps0`` of a small grid, each ``n`` of a grid
from 1e2 to 1e9 and each ``delta`` of a grid from 1e-4 to 1e-12, the certified upper value of
``amp.epsilon_for(amp.profile(mechanism, n), delta)`` (Theorem 4's optimal decomposition bound;
one profile per (mechanism, eps0, n) serves all deltas).

Stored value (a valid upper bound, rounded in the safe direction)::

    stored = ceil_4_significant_digits(value * (1 + 2e-4))

``value`` is the upper end of a certified bracket (relative width <= rel_tol), so it is already
>= the exact bound. The factor ``1 + 2e-4`` makes the stored number also >= the upper end any
certified bracket of relative width 1e-4 (the CLI's default) can have at the same point, so the
page never shows less than ``python -m amp epsilon`` at a grid point; rounding up to 4 digits
costs at most 1e-3 more. Where the floating-point floor of the atoms forbids rel_tol 1e-4 (tiny
deltas), the cell is computed at rel_tol 1e-3, then 1e-2 (recorded per cell); a cell that cannot
be certified at all is stored as ``null`` with amp's message.

Output: ``book/_static/calculator/table.js`` (a script defining ``window.AMP_CALC_TABLE``, since
pages opened from file:// cannot fetch JSON) with the provenance (amp version, git commit,
command, date, rel_tol). Partial results are checkpointed in a ``.jsonl`` file so an interrupted
run resumes where it stopped.

Usage::

    .venv/bin/python scripts/build_calculator_table.py --sample      # time a few cells
    nohup .venv/bin/python scripts/build_calculator_table.py > artifacts/calc_table.log 2>&1 &
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "book" / "_static" / "calculator" / "table.js"

#: The mechanisms (Table 1 forms). ``same_as``: identical law in Table 1 (HR's row is BLH's).
MECHANISMS = [
    {"id": "krr3", "label": "3-RR (k-randomized response, k = 3)", "cli": "--mechanism krr --k 3"},
    {"id": "krr10", "label": "10-RR (k-randomized response, k = 10)", "cli": "--mechanism krr --k 10"},
    {"id": "krr100", "label": "100-RR (k-randomized response, k = 100)",
     "cli": "--mechanism krr --k 100"},
    {"id": "rappor", "label": "RAPPOR (Table 1 form)", "cli": "--mechanism rappor"},
    {"id": "oue", "label": "OUE (Table 1 form)", "cli": "--mechanism oue"},
    {"id": "blh", "label": "BLH (Table 1 form)", "cli": "--mechanism blh"},
    {"id": "hr", "label": "Hadamard response (Table 1 form, same row as BLH)",
     "cli": "--mechanism hadamard", "same_as": "blh"},
]
EPS0 = [1.0, 2.0, 4.0, 8.0]
REL_TOLS = (1e-4, 1e-3, 1e-2)   # tried in this order; the first that certifies is kept
CLI_REL_TOL = 1e-4              # the stored value dominates any bracket this narrow
SAFETY = Decimal(1) + Decimal(2) * Decimal(CLI_REL_TOL)
DIGITS = 4
#: n grid: 10 per decade up to 1e6, then 2 per decade up to 1e7, sized to the compute budget on
#: a shared 2-core machine (one eps(delta) costs 0.02-3 s of CPU at n <= 1e6, 0.1-0.7 s at 1e7,
#: 0.3-4 s at 1e8 and 2-20 s at 1e9). Larger n use the last row (valid, not tight). A denser
#: grid (about 20 n and 3 deltas per decade meet the 10% rounding target) resumes from the
#: checkpoint: --n-grid 20:2:6,20:6:9 --delta-per-decade 3 --dense-max-n 1000000000.
N_GRID = "10:2:6,2:6:7"
#: rows above this n are computed only at delta = 10^-k (coarse rows, see assemble)
DENSE_MAX_N = 10**6


def make_mechanism(mid: str, eps0: float):
    import amp
    if mid.startswith("krr"):
        return amp.KRR(eps0, k=int(mid[3:]))
    return {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH,
            "hr": amp.HadamardResponse}[mid](eps0)


def preferred(per_decade: int, lo_exp: int, hi_exp: int) -> list[float]:
    """Geometric grid 10**(lo_exp + j/per_decade), both ends included."""
    steps = (hi_exp - lo_exp) * per_decade
    return [10.0 ** (lo_exp + j / per_decade) for j in range(steps + 1)]


def n_grid(spec: str) -> list[int]:
    """Integers from the segments ``per_decade:lo_exp:hi_exp,...`` (3 significant digits)."""
    out: list[int] = []
    for seg in spec.split(","):
        per_decade, lo, hi = (int(x) for x in seg.split(":"))
        for x in preferred(per_decade, lo, hi):
            e = max(math.floor(math.log10(x)) - 2, 0)
            v = int(round(x / 10 ** e) * 10 ** e)
            if not out or v > out[-1]:
                out.append(v)
    return out


def delta_grid(per_decade: int) -> list[float]:
    """Deltas from 1e-4 down to 1e-12: 1 and 3 (per_decade=2) or 1 (per_decade=1) per decade."""
    mantissas = {1: [1], 2: [3, 1], 3: [5, 2, 1], 4: [5, 3, 2, 1]}[per_decade]
    out = [1e-4]
    for e in range(-5, -13, -1):
        out += [float(f"{m}e{e}") for m in mantissas]
    return sorted(set(out), reverse=True)


def store(value: float, eps0: float) -> str:
    """``value * (1 + 2e-4)`` rounded UP to 4 significant digits, as a decimal string.

    Capped at ``eps0``: the shuffled reports are eps0-DP by post-processing, so ``eps0`` is
    always a valid bound (amp's own answers never exceed it either).
    """
    if value == 0:          # delta >= delta(0): eps = 0 is certified
        return "0.000e+00"
    d = Decimal(value) * SAFETY
    e = d.adjusted() - (DIGITS - 1)
    q = Decimal(1).scaleb(e)
    r = (d / q).to_integral_value(rounding=ROUND_CEILING) * q
    s = f"{r:.{DIGITS - 1}e}"
    assert Decimal(s) >= d
    if value <= eps0 and Decimal(s) > Decimal(repr(eps0)):
        s = f"{Decimal(repr(eps0)):.{DIGITS - 1}e}"
        assert Decimal(s) == Decimal(repr(eps0))
    return s


def compute_cell(mid: str, eps0: float, n: int, deltas: list[float]) -> dict:
    """One (mechanism, eps0, n): one profile, eps(delta) for every delta of the grid."""
    import amp
    t0 = time.process_time()
    prof = amp.profile(make_mechanism(mid, eps0), n)
    values, tols, reasons = [], [], []
    for d in deltas:
        msg = None
        for rt in REL_TOLS:
            try:
                b = amp.epsilon_for(prof, d, rel_tol=rt)
            except amp.NumericalError as exc:
                msg = str(exc)
                continue
            if not (b.certified and b.bound == "upper" and b.value == b.upper
                    and math.isfinite(b.value) and b.value >= 0):
                msg = f"not a certified upper value: {b!r}"
                continue
            values.append(b.value)
            tols.append(rt)
            reasons.append(None)
            break
        else:
            values.append(None)
            tols.append(None)
            reasons.append(msg)
    return {"mech": mid, "eps0": eps0, "n": n, "values": values, "tols": tols,
            "reasons": reasons, "cpu": time.process_time() - t0}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def coarse_deltas(deltas: list[float]) -> list[float]:
    """The deltas 10^-k of the grid (the only ones computed in coarse rows)."""
    return [d for d in deltas if f"{d:.0e}".startswith("1e")]


def source_index(deltas: list[float], j: int) -> int:
    """Coarse rows: the index of the delta that answers delta[j], the largest 10^-k <= it."""
    coarse = coarse_deltas(deltas)
    return next(k for k in range(j, len(deltas)) if deltas[k] in coarse)


def assemble(cells: dict, ns: list[int], deltas: list[float], meta: dict,
             dense_max_n: int) -> dict:
    """The table object: tables[mech][eps0] = list over n of lists over delta (str or None).

    Rows with ``n > dense_max_n`` (``coarse_from`` on) hold amp values only at delta = 10^-k; the
    other entries repeat the value of the largest 10^-k below their delta (rounding delta down
    once more, at build time: still valid, since eps(delta) is non-increasing).
    """
    tables, tol_exc, reasons = {}, {}, {}
    coarse_from = next((i for i, n in enumerate(ns) if n > dense_max_n), len(ns))
    for m in MECHANISMS:
        src = m.get("same_as", m["id"])
        if "same_as" in m:
            continue
        per = tables.setdefault(src, {})
        for e0 in EPS0:
            rows = []
            for i, n in enumerate(ns):
                c = cells[(src, e0, n)]
                row = []
                for j in range(len(deltas)):
                    js = j if i < coarse_from else source_index(deltas, j)
                    v, tol, reason = c[deltas[js]]
                    key = f"{src}|{e0:g}|{i}|{js}"
                    if v is None:
                        row.append(None)
                        reasons[key] = reason
                    else:
                        row.append(store(v, e0))
                        if tol != REL_TOLS[0]:
                            tol_exc[key] = tol
                rows.append(row)
            per[f"{e0:g}"] = rows
    return {"meta": meta, "mechanisms": MECHANISMS, "eps0": EPS0, "n": ns, "delta": deltas,
            "coarse_from": coarse_from,
            "coarse_delta_index": [deltas.index(d) for d in coarse_deltas(deltas)],
            "tables": tables, "rel_tol_exceptions": tol_exc, "null_reasons": reasons}


def rounding_costs(table: dict) -> dict:
    """Worst rounding cost per table cell, from the table itself.

    A query with grid_n[i] <= n < grid_n[i+1] and delta[j] <= delta < delta[j-1] (deltas
    descending) is answered by cell (i, j); its exact bound is at least the one at
    (i+1, j-1), so value(i, j) / value(i+1, j-1) - 1 bounds the cost (up to the stored
    values' own rounding, <= 0.13%). Row j = 0 only answers delta = delta[0] (larger deltas
    are refused), so its neighbour is (i+1, 0). In a coarse neighbour row the neighbour is the
    computed delta 10^-k at or above delta[j-1]. The last n row answers every larger n: no
    relative bound, not counted.
    """
    costs, infinite = [], 0
    coarse_from, coarse = table["coarse_from"], table["coarse_delta_index"]
    for src, per in table["tables"].items():
        for e0, rows in per.items():
            for i in range(len(rows) - 1):
                for j in range(len(rows[i])):
                    j2 = max(j - 1, 0)
                    if i + 1 >= coarse_from:   # a computed delta >= delta[j2] (round it UP)
                        j2 = max(k for k in coarse if k <= j2)
                    a, b = rows[i][j], rows[i + 1][j2]
                    if a is None or b is None:
                        continue
                    a, b = float(a), float(b)
                    if b == 0:
                        infinite += a > 0
                        continue
                    costs.append((a / b - 1, src, e0, i, j))
    costs.sort(reverse=True)
    worst = costs[0] if costs else (0.0, None, None, None, None)
    return {"cells": len(costs) + infinite, "max": round(worst[0], 4),
            "max_at": {"mechanism": worst[1], "eps0": worst[2],
                       "n": table["n"][worst[3]] if worst[3] is not None else None,
                       "delta": table["delta"][worst[4]] if worst[4] is not None else None},
            "share_at_most_10pct": round(sum(c[0] <= 0.1 for c in costs) / max(len(costs), 1), 4),
            "unbounded": infinite}


def to_js(obj: dict) -> str:
    """JSON with the stored values as bare numbers (the 4-digit decimal strings unquoted)."""
    text = json.dumps(obj, separators=(",", ":"))
    # values were stored as strings "1.234e-05"; unquote only inside "tables"
    head, sep, tail = text.partition('"tables":')
    body, sep2, rest = tail.partition(',"rel_tol_exceptions":')
    import re
    body = re.sub(r'"(\d\.\d+e[+-]\d+)"', r"\1", body)
    return ("/* Generated by scripts/build_calculator_table.py: certified eps(delta) upper values "
            "computed by amp. Do not edit. */\nwindow.AMP_CALC_TABLE = "
            + head + sep + body + sep2 + rest + ";\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-grid", default=N_GRID,
                    help="segments per_decade:lo_exp:hi_exp of the n grid (default %(default)s)")
    ap.add_argument("--delta-per-decade", type=int, default=2, choices=(1, 2, 3, 4))
    ap.add_argument("--dense-max-n", type=int, default=DENSE_MAX_N,
                    help="rows with a larger n are computed only at delta = 10^-k")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--checkpoint", type=Path, default=REPO / "artifacts" / "calc_table.jsonl")
    ap.add_argument("--sample", action="store_true",
                    help="time a few cells (largest n, each mechanism and eps0) and exit")
    ap.add_argument("--computed-at-commit", default=None,
                    help="provenance when re-assembling from a checkpoint computed earlier: the "
                         "git commit the cells were computed with (default: HEAD now)")
    ap.add_argument("--note", default="", help="free provenance note stored in the table")
    args = ap.parse_args(argv)
    start_commit = args.computed_at_commit or _git("rev-parse", "HEAD")
    start_dirty = (None if args.computed_at_commit else      # unknown then: see --note
                   [line.split(maxsplit=1)[-1]
                    for line in _git("status", "--porcelain", "--", "amp").splitlines()])
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import amp

    ns, deltas = n_grid(args.n_grid), delta_grid(args.delta_per_decade)
    mids = [m["id"] for m in MECHANISMS if "same_as" not in m]
    if args.sample:
        tasks = [(m, e0, n) for m in mids for e0 in EPS0 for n in (10**6, 10**8)]
        deltas = [1e-4, 1e-8, 1e-12]
    else:
        tasks = [(m, e0, n) for m in mids for e0 in EPS0 for n in ns]
    # checkpoint: every computed (mechanism, eps0, n, delta); a denser grid reuses them
    cells: dict = {}
    cpu_total = 0.0
    if not args.sample and args.checkpoint.is_file():
        for line in args.checkpoint.read_text().splitlines():
            c = json.loads(line)
            if c["n"] not in ns:
                continue
            cpu_total += c["cpu"]
            per = cells.setdefault((c["mech"], c["eps0"], c["n"]), {})
            for d, v, tol, r in zip(c["deltas"], c["values"], c["tols"], c["reasons"]):
                per[d] = (v, tol, r)
    coarse = coarse_deltas(deltas)
    todo = []
    for t in tasks:
        want = deltas if (args.sample or t[2] <= args.dense_max_n) else coarse
        missing = [d for d in want if d not in cells.get(t, {})]
        if missing:
            todo.append((*t, missing))
    todo.sort(key=lambda t: (-t[2], t[1]))        # the expensive (large n) cells first
    print(f"grid: {len(mids)} mechanisms x {len(EPS0)} eps0 x {len(ns)} n x {len(deltas)} delta;"
          f" {len(todo)} of {len(tasks)} profiles to compute", flush=True)
    args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
    t0, cpu = time.time(), 0.0
    with ProcessPoolExecutor(max_workers=args.workers) as pool, \
            open(args.checkpoint, "a") as ck:
        futs = {pool.submit(compute_cell, *t): t for t in todo}
        for k, f in enumerate(as_completed(futs), 1):
            c = f.result()
            c["deltas"] = futs[f][3]
            c["git"] = start_commit
            cpu += c["cpu"]
            per = cells.setdefault((c["mech"], c["eps0"], c["n"]), {})
            for d, v, tol, r in zip(c["deltas"], c["values"], c["tols"], c["reasons"]):
                per[d] = (v, tol, r)
            if not args.sample:
                ck.write(json.dumps(c) + "\n")
                ck.flush()
            nulls = sum(v is None for v in c["values"])
            print(f"[{k}/{len(todo)} {time.time() - t0:7.1f}s] {c['mech']} eps0={c['eps0']:g} "
                  f"n={c['n']}: cpu {c['cpu']:.2f}s, {nulls} null", flush=True)
            if args.sample:
                print("   ", c["values"], c["tols"], flush=True)
    print(f"wall {time.time() - t0:.1f}s, cpu {cpu:.1f}s", flush=True)
    if args.sample:
        return 0
    meta = {
        "amp_version": amp.__version__,
        "git_commit": start_commit,
        "amp_uncommitted_files_at_start": start_dirty,
        "note": args.note,
        "command": "python scripts/build_calculator_table.py " + " ".join(argv or sys.argv[1:]),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rel_tol": REL_TOLS[0], "rel_tol_fallbacks": list(REL_TOLS[1:]),
        "stored": "ceil to 4 significant digits of value * (1 + 2e-4)",
        "bound": "upper (Theorem 4, optimal decomposition), amp.epsilon_for(amp.profile(m, n), delta)",
        "cpu_seconds": round(cpu_total + cpu, 1),
        "n_grid": args.n_grid, "delta_per_decade": args.delta_per_decade,
        "dense_max_n": args.dense_max_n,
    }
    table = assemble(cells, ns, deltas, meta, args.dense_max_n)
    table["meta"]["rounding_cost"] = rounding_costs(table)
    print("rounding cost:", table["meta"]["rounding_cost"], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_js(table))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
