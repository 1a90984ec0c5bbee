"""Kernel stalls: the book's chapters executed through nbclient, as `make book` executes them.

Issue 33: with ipykernel 7.4.0 a chapter now and then waited nbclient's whole timeout for a
``kernel_info`` reply that never came (the cells themselves take seconds). This script executes
every chapter notebook of ``book/`` through ``nbclient`` (timeout 180 s, kernel started in
``book/``, as myst-nb does) under one or more Python environments, interleaved (one chapter in
environment A, the same chapter in B, ...), so that a noisy machine loads both alike.

For each execution it records the wall time, the cells' time (the sum over code cells of
``shell.execute_reply - iopub.execute_input``, nbclient's own timestamps) and the overhead
(wall - cells: kernel start, the ``kernel_info`` round trip, gaps between cells, shutdown; each
part is recorded: ``to_first_cell``, ``max_gap``, ``after_last_cell``). An execution *stalls* when
its overhead exceeds ``--stall`` seconds (default 20; a healthy start is 1-4 s) or when it took
more than twice its cells' time plus that margin. The guard of the book build
(``book/_ext/amp_kernel_guard.py``) is deliberately NOT installed here: this measures the kernel.

    .venv/bin/python bench/bench_kernel_stall.py --python /path/a/bin/python \\
        --python .venv/bin/python --rounds 3 --minutes 60 --out bench/results/kernel_stall.txt

Each line of the log is one execution (JSON), so an interrupted run still has its data; the
summary table is printed (and appended to --out) at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

RUNNER = r"""
import json, sys, time
from datetime import datetime
import nbformat, nbclient
path, timeout = sys.argv[1], float(sys.argv[2])
if sys.argv[4] == "guard":            # the book build's guard (book/_ext/amp_kernel_guard.py)
    sys.path.insert(0, sys.argv[3] + "/_ext")
    import amp_kernel_guard
    amp_kernel_guard.install(lambda: path)
nb = nbformat.read(path, as_version=4)
t0 = time.time()
err = None
try:
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": sys.argv[3]}}).execute()
except Exception as e:  # a timeout or a failing cell: recorded, not raised
    err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
wall = time.time() - t0
cells, first, last, gap, gap_at = 0.0, None, None, 0.0, None
for i, c in enumerate(nb.cells):
    ex = c.get("metadata", {}).get("execution", {})
    a, b = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
    if a and b:
        ta = datetime.fromisoformat(a.replace("Z", "+00:00")).timestamp()
        tb = datetime.fromisoformat(b.replace("Z", "+00:00")).timestamp()
        cells += tb - ta
        first = ta if first is None else min(first, ta)
        if last is not None and ta - last > gap:   # between one reply and the next input
            gap, gap_at = ta - last, i
        last = tb
import ipykernel
print(json.dumps({"wall": wall, "cells": cells, "to_first_cell": None if first is None else first - t0,
                  "max_gap": gap, "max_gap_before_cell": gap_at,
                  "after_last_cell": None if last is None else t0 + wall - last,
                  "error": err, "ipykernel": ipykernel.__version__}))
"""


def chapters() -> list[Path]:
    return sorted(BOOK.glob("[0-9]*.ipynb"))


def run_one(python: str, nb: Path, timeout: float, guard: bool = False) -> dict:
    out = subprocess.run([python, "-c", RUNNER, str(nb), str(timeout), str(BOOK),
                          "guard" if guard else "bare"], cwd=BOOK, capture_output=True, text=True)
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        rec = {"wall": float("nan"), "cells": float("nan"), "to_first_cell": None,
               "error": f"runner failed: {out.stderr.strip().splitlines()[-1:]}",
               "ipykernel": "?"}
    rec.update(python=python, notebook=nb.name, guard=guard)
    return rec


def _env(rec: dict) -> str:
    """The ipykernel version, and whether the book build's guard ran."""
    return rec["ipykernel"] + (" + guard" if rec.get("guard") else "")


def is_stall(rec: dict, margin: float) -> bool:
    over = rec["wall"] - rec["cells"]
    return over > margin or rec["wall"] > 2 * rec["cells"] + margin


def summary(recs: list[dict], margin: float) -> str:
    lines = [f"stall = overhead (wall - cells) > {margin:.0f} s, or wall > 2 x cells + {margin:.0f} s",
             "",
             "| ipykernel | python | executions | stalls | errors | worst overhead (s) | worst "
             "execution (notebook: wall / cells) |",
             "|---|---|---|---|---|---|---|"]
    for py in sorted({(r["python"], r.get("guard", False)) for r in recs}):
        rs = [r for r in recs if (r["python"], r.get("guard", False)) == py]
        ok = [r for r in rs if r["wall"] == r["wall"]]
        worst = max(ok, key=lambda r: r["wall"] - r["cells"]) if ok else None
        lines.append(
            f"| {_env(rs[0])} | {py[0]} | {len(rs)} | {sum(is_stall(r, margin) for r in ok)} | "
            f"{sum(1 for r in rs if r['error'])} | "
            f"{(worst['wall'] - worst['cells']) if worst else float('nan'):.1f} | "
            + (f"{worst['notebook']}: {worst['wall']:.1f} / {worst['cells']:.1f} |" if worst else "- |"))
    stalls = [r for r in recs if r["wall"] == r["wall"] and is_stall(r, margin)]
    if stalls:
        lines += ["", "Stalled executions, and where the time went (to the first cell: kernel start "
                  "and kernel_info; largest gap between one cell's reply and the next cell's "
                  "input; after the last cell: shutdown; older logs lack the last two):", "",
                  "| notebook | ipykernel | wall (s) | cells (s) | to first cell (s) | "
                  "largest gap (s, before cell) | after last cell (s) |", "|---|---|---|---|---|---|---|"]
        for r in stalls:
            def f(x):
                return "-" if x is None else f"{x:.1f}"
            gap = ("-" if r.get("max_gap") is None else
                   f"{r['max_gap']:.1f} (cell {r.get('max_gap_before_cell')})")
            lines.append(f"| {r['notebook']} | {_env(r)} | {r['wall']:.1f} | "
                         f"{r['cells']:.1f} | {f(r.get('to_first_cell'))} | {gap} | "
                         f"{f(r.get('after_last_cell'))} |")
    per_nb = {}
    for r in recs:
        per_nb.setdefault((r["notebook"], _env(r)), []).append(r)
    lines += ["", "| notebook | ipykernel | n | median wall (s) | median cells (s) | max overhead (s) |",
              "|---|---|---|---|---|---|"]
    for (nb, ver), rs in sorted(per_nb.items()):
        walls = sorted(r["wall"] for r in rs)
        cells = sorted(r["cells"] for r in rs)
        lines.append(f"| {nb} | {ver} | {len(rs)} | {walls[len(walls) // 2]:.1f} | "
                     f"{cells[len(cells) // 2]:.1f} | {max(r['wall'] - r['cells'] for r in rs):.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", default=[],
                    help="a Python with nbclient and ipykernel (repeat to compare environments)")
    ap.add_argument("--rounds", type=int, default=1, help="executions of each chapter per python")
    ap.add_argument("--minutes", type=float, default=float("inf"), help="stop after this long")
    ap.add_argument("--timeout", type=float, default=180.0, help="nbclient timeout (the book's)")
    ap.add_argument("--stall", type=float, default=20.0, help="overhead that counts as a stall (s)")
    ap.add_argument("--only", nargs="*", help="notebook names (default: every chapter)")
    ap.add_argument("--log", type=Path, default=ROOT / "artifacts" / "kernel_stall.jsonl")
    ap.add_argument("--out", type=Path, help="append the summary table here")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--guard", choices=("off", "on", "both"), default="off",
                    help="run under the book build's guard (book/_ext/amp_kernel_guard.py): "
                         "off (the kernel alone), on, or both interleaved")
    ap.add_argument("--summarize", type=Path, metavar="LOG",
                    help="only print (and append to --out) the table of an existing log")
    args = ap.parse_args(argv)
    if args.summarize:
        recs = [json.loads(line) for line in args.summarize.read_text().splitlines() if line]
        table = summary(recs, args.stall)
        print(table)
        if args.out:
            with args.out.open("a") as f:
                f.write(f"\n## {args.summarize.name} ({len(recs)} executions)\n\n{table}\n")
        return 0

    nbs = [p for p in chapters() if not args.only or p.name in args.only]
    rng = random.Random(args.seed)
    args.log.parent.mkdir(parents=True, exist_ok=True)
    recs: list[dict] = []
    t_end = time.time() + 60 * args.minutes
    with args.log.open("a") as log:
        for rnd in range(args.rounds):
            order = nbs[:]
            rng.shuffle(order)
            for nb in order:
                guards = {"off": [False], "on": [True], "both": [False, True]}[args.guard]
                pys = [(py, g) for py in args.python for g in guards]
                rng.shuffle(pys)
                for py, guard in pys:
                    if time.time() > t_end:
                        break
                    rec = run_one(py, nb, args.timeout, guard)
                    rec["round"] = rnd
                    recs.append(rec)
                    log.write(json.dumps(rec) + "\n")
                    log.flush()
                    flag = "STALL" if is_stall(rec, args.stall) else ""
                    print(f"[{rnd}] {_env(rec):>15} {nb.name:<36} wall {rec['wall']:6.1f} s"
                          f"  cells {rec['cells']:6.1f} s  {flag} {rec['error'] or ''}", flush=True)
    table = summary(recs, args.stall)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as f:
            f.write(f"\n## {time.strftime('%Y-%m-%d %H:%M')} rounds={args.rounds}\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
