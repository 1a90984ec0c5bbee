"""The slowest settings of every widget of the live app: time and peak memory of a fresh kernel.

Run as ``python3 bench/bench_live_widgets.py [--only ch11 ...] [--quick]`` from the repository
root. For each widget of the live app (a widget cell of a chapter, ``scripts/live/prepare.py``)
a fresh Python process does what the app's kernel does: the chapter's imports and data, the
widget cell itself (timed as *open*), then each candidate setting is applied to the widget's
controls and one redraw is run as a change of control would run it (timed). Candidates are the
extreme values the controls allow (largest n, smallest delta, both ends of eps0, every
mechanism); the slowest one of each widget is marked. Peak memory is the child's maximum
resident set size including its own children (``os.wait4``: chapter 11's widget computes in a
forked child), so it is the figure of the kernel that would run the widget.

Safety on a shared machine: each child runs at ``nice 10`` under a soft address-space limit
(``--memory-gb``, default 8) and a wall limit (``--timeout``, default 900 s); a child over a
limit is reported as such, with what it had reached.

The output is one line per candidate and a table of the slowest setting per widget (for the
closing note of issue #24).

``--pages`` measures instead what a reader waits for when a chapter opens: the live app's
notebooks (``scripts/live/prepare.py`` into a temporary directory) each executed in a fresh
Jupyter kernel by nbclient, as Voila executes them (every cell, in order, the widget cells
included); the open time is from the kernel's start to the last cell's end. The peak memory
is the largest resident set of the kernel and its children, sampled every 0.2 s; the load
average is read before and after each page (the machine is shared: figures under load).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The chapters' own setup (their first cells) and widget cells, as in book/*.ipynb.
SETUP_STORED = ("from ampbook import stored, widgets\n"
                "data = stored.load_figures(\"data/figures.json\")\n")
WIDGETS = {
    "ch01 eps_vs_n_widget": {
        "setup": "from ampbook import widgets\n",
        "cell": 'widgets.eps_vs_n_widget(mechanism="k-RR", eps0=4.0, log10_n=(2, 6), '
                "delta_exponent=-6)",
        "kind": "interactive",
        # certified points at n = 10, 10^4, 10^7 (the range slider's ends), smallest delta
        # the slider allows (-12 before issue 24's second pass, -10 since), and at eps0 = 1
        # (the slowest certified points of a sweep: n near 10^4 and eps0 near 1)
        "candidates": [dict(mechanism=m, eps0=e, log10_n=(1, 7), delta_exponent=d,
                            certified=True)
                       for m in ("k-RR", "RAPPOR", "OUE", "BLH", "Hadamard response")
                       for e in (0.5, 1.0, 8.0) for d in (-12, -10, -6)],
        "group": 1,
    },
    "ch05 gparv_widget": {
        "setup": "from ampbook import widgets\n",
        "cell": 'widgets.gparv_widget(mechanism="k-RR", eps0=2.0, eps=0.5)',
        "kind": "interactive",
        "candidates": [dict(mechanism=m, eps0=e, eps=x)
                       for m in ("k-RR", "RAPPOR", "OUE", "BLH", "Hadamard response")
                       for e in (0.25, 6.0) for x in (0.0, 3.0)],
        "group": 100,
    },
    "ch06 joint_widget": {
        "setup": SETUP_STORED,
        "cell": 'widgets.joint_widget(data, mechanism="10-RR", eps0=2.0, n=10_000, k_max=8)',
        "kind": "interactive",
        "candidates": "joint",
        "group": 100,
    },
    "ch07 experiments_widget": {
        "setup": SETUP_STORED,
        "cell": 'widgets.experiments_widget(data, mechanism="10-RR", regime="large")',
        "kind": "interactive",
        "candidates": "experiments",
        "group": 100,
    },
    "ch10 calculator_widget": {
        "setup": "from ampbook import widgets\n",
        "cell": "widgets.calculator_widget()",
        "kind": "calculator",
        # the calculator's largest n (1e9 before issue 24's second pass, 1e7 since: larger n
        # is refused with a message; 1e8 for the figures behind that choice); delta has no
        # floor but (0, 1)
        # (k-RR needs its k; the others in their Table 1 form)
        "candidates": [dict(mechanism=m, size="10" if m == "k-RR" else "", n=nn, delta=d,
                            eps0=e, target="1", lower=True, run="eps")
                       for nn in ("1e7", "1e8", "1e9")
                       for m in ("k-RR", "RAPPOR", "OUE", "BLH", "Hadamard response")
                       for d in ("1e-12",) for e in ("0.5", "8")]
                      + [dict(mechanism=m, size="10" if m == "k-RR" else "", n=nn,
                              delta="1e-12", eps0="1", target="0.01", lower=False, run="eps0")
                         for nn in ("1e7", "1e8", "1e9") for m in ("k-RR", "RAPPOR")]
                      # the default delta
                      + [dict(mechanism=m, size="10" if m == "k-RR" else "", n=nn,
                              delta="1e-6", eps0="0.5", target="1", lower=True, run="eps")
                         for nn in ("1e7", "1e8", "1e9")
                         for m in ("k-RR", "RAPPOR", "BLH", "Hadamard response")],
        "group": 1,
    },
    "ch11 rounds_widget": {
        # as the chapter: its opening setting drawn from book/data/live (precomputed)
        "setup": "from ampbook.rounds import load_stored_rounds, rounds_widget\n"
                 'stored_rounds = load_stored_rounds("data/live/ch11_rounds.json")\n',
        "cell": 'rounds_widget(mechanism="k-RR", eps0=2.0, log10_n=4.0, sampling=1.0,\n'
                '              delta_exponent=-6, precomputed=stored_rounds["widget"])',
        "kind": "rounds",
        # the smallest delta the slider allows, and the default delta (answered)
        "candidates": [dict(mechanism=m, eps0=e, log10_n=4.5, sampling=q, delta_exponent=-10)
                       for m in ("k-RR", "RAPPOR", "OUE", "BLH", "Hadamard response")
                       for e in (0.5, 6.0) for q in (1.0, 0.05)]
                      + [dict(mechanism=m, eps0=e, log10_n=4.5, sampling=q, delta_exponent=-6)
                         for m in ("k-RR", "RAPPOR") for e in (0.5, 6.0) for q in (1.0, 0.05)],
        "group": 1,
    },
    "ch12 accuracy_widget": {
        "setup": "import accuracy_figs as F\nEPS, DELTA = 1.0, 1e-6\n",
        "cell": 'F.accuracy_widget(mechanism="krr", eps=EPS, delta=DELTA)',
        "kind": "interactive",
        "candidates": [dict(mechanism=m, n=10**7, eps=e)
                       for m in ("krr", "oue", "olh") for e in (0.25, 3.0)],
        "group": 1,
    },
}

CHILD = r'''
import contextlib, io, json, os, sys, time
os.environ["MPLBACKEND"] = "Agg"
book = sys.argv[1]
os.chdir(book)
sys.path.insert(0, book)
spec = json.loads(sys.argv[2])
import matplotlib.pyplot as plt

def _inline_show(*args, **kwargs):
    """What the kernel's inline backend does on show: render each figure to PNG, close."""
    for num in plt.get_fignums():
        plt.figure(num).savefig(io.BytesIO(), format="png", bbox_inches="tight")
    plt.close("all")

plt.show = _inline_show
errors = []
t0 = time.perf_counter()
ns = {}
exec(spec["setup"], ns)
w = eval(spec["cell"], ns)
opened = time.perf_counter() - t0
if hasattr(w, "f"):                       # interactive: an exception is logged, not raised
    _f = w.f

    def _traced(**kwargs):
        try:
            return _f(**kwargs)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            raise

    w.f = _traced
candidates = spec["candidates"]
if candidates == "joint":
    from ampbook.experiments import EXPERIMENT_MECHANISMS
    n_max = max(c.options[-1][1] for c in w.kwargs_widgets if c._kwarg == "n")
    candidates = [dict(mechanism=m, eps0=e, n=n_max, k_max=8)
                  for m in EXPERIMENT_MECHANISMS for e in (0.1, 4.0)]
elif candidates == "experiments":
    mech = [c for c in w.kwargs_widgets if c._kwarg == "mechanism"][0]
    candidates = [dict(mechanism=m, regime=r, ours=True, baselines=True, joint=True)
                  for m in mech.options for r in ("low", "large")]
rows = []
for setting in candidates:
    buf = io.StringIO()
    t = time.perf_counter()
    note = ""
    with contextlib.redirect_stdout(buf):
        if spec["kind"] == "interactive":
            controls = {c._kwarg: c for c in w.kwargs_widgets}
            for c in controls.values():
                c.unobserve(w.update, names="value")
            for k, v in setting.items():
                controls[k].value = v
            for c in controls.values():
                c.observe(w.update, names="value")
            t = time.perf_counter()
            w.update()
            note = getattr(getattr(w, "status", None), "value", "")
        elif spec["kind"] == "rounds":
            for c in w.controls.values():
                c.unobserve(w.redraw, names="value")
            for k, v in setting.items():
                w.controls[k].value = v
            t = time.perf_counter()
            w.redraw()
            note = w.status.value
        elif spec["kind"] == "calculator":
            fields = {}
            def walk(box):
                for c in getattr(box, "children", ()):
                    walk(c)
                    if getattr(c, "description", None):
                        fields[c.description] = c
            walk(w)
            fields["mechanism"].value = setting["mechanism"]
            fields["k or d"].value = setting["size"]
            fields["n"].value = setting["n"]
            fields["δ"].value = setting["delta"]
            fields["ε₀"].value = setting["eps0"]
            fields["target ε"].value = setting["target"]
            [c for d, c in fields.items() if d.startswith("with the lower")][0].value = \
                setting["lower"]
            t = time.perf_counter()
            w.run(setting["run"])
            status = [c for c in w.children if type(c).__name__ == "HTML"]
            note = " | ".join(c.value for c in status[1:3])
    seconds = time.perf_counter() - t
    _inline_show()
    text = (buf.getvalue().replace("\x1b[2K", "").replace("\r", "") + " " + note
            + " ".join(errors)).strip()
    errors.clear()
    if len(text) > 300:
        text = text[:170] + " ... " + text[-120:]
    rows.append({"setting": setting, "seconds": round(seconds, 3), "note": text})
import resource
print(json.dumps({"open_s": round(opened, 3), "rows": rows,
                  "self_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="widget keys starting with these")
    ap.add_argument("--quick", action="store_true", help="first candidate of each widget only")
    ap.add_argument("--match", default=None,
                    help="only candidate settings whose JSON contains this text")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--memory-gb", type=float, default=8.0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--pages", nargs="*", default=None,
                    help="time the opening of the live app's pages instead (all chapters, or "
                         "those whose file names start with these)")
    args = ap.parse_args(argv)
    if args.pages is not None:
        return time_pages(args.pages, args.timeout, args.json)
    results = {}
    for name, w in WIDGETS.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        cands = w["candidates"]
        if isinstance(cands, list):
            if args.match:
                cands = [c for c in cands
                         if args.match in json.dumps(c, ensure_ascii=False)]
            cands = cands[:1] if args.quick else cands
            groups = [cands[i:i + w["group"]] for i in range(0, len(cands), w["group"])]
        else:
            groups = [cands]
        rows = []
        for g in groups:
            spec = {"setup": w["setup"], "cell": w["cell"], "kind": w["kind"], "candidates": g}
            r = run_child(spec, args.timeout, args.memory_gb)
            if "error" in r:
                print(f"{name}: {g if isinstance(g, str) else g[0]} ... ERROR {r['error']} "
                      f"(peak {r['peak_mb']:.0f} MB, {r['wall_s']} s)", flush=True)
                rows.append({"setting": g, "seconds": None, "peak_mb": r["peak_mb"],
                             "open_s": None, "note": r["error"]})
                continue
            load = round(os.getloadavg()[0], 2)
            for row in r["rows"]:
                row.update(peak_mb=round(r["peak_mb"]), open_s=r["open_s"],
                           group_size=len(r["rows"]), load=load)
                rows.append(row)
                print(f"{name}: {json.dumps(row['setting'], ensure_ascii=False)}  "
                      f"redraw {row['seconds']:.2f} s  (process peak {row['peak_mb']} MB, "
                      f"open {row['open_s']:.1f} s, load {load})  {row['note'][:120]!r}",
                      flush=True)
        results[name] = rows
    print("\nslowest setting per widget (redraw time; peak RSS of the fresh process that ran "
          "it, its children included):")
    print(f"{'widget':<26}{'open s':>8}{'redraw s':>10}{'peak MB':>9}{'load':>6}  "
          "setting / note")
    for name, rows in results.items():
        timed = [r for r in rows if r["seconds"] is not None]
        failed = [r for r in rows if r["seconds"] is None]
        if timed:
            r = max(timed, key=lambda r: r["seconds"])
            print(f"{name:<26}{r['open_s']:>8.1f}{r['seconds']:>10.2f}{r['peak_mb']:>9}"
                  f"{r['load']:>6.2f}  "
                  f"{json.dumps(r['setting'], ensure_ascii=False)}"
                  + (f" [{r['group_size']} settings in one process]"
                     if r.get("group_size", 1) > 1 else "")
                  + (f"  note: {r['note'][:100]}" if r["note"] else ""))
        for r in failed:
            print(f"{name:<26}{'':>8}{'-':>10}{r['peak_mb']:>9.0f}  {r['setting']}: {r['note']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return 0


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its descendants (Linux ``/proc``), in MB."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0]) / 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def time_pages(prefixes: list[str], timeout: float, out_json: Path | None) -> int:
    """Open time of each live page: the app notebook executed in a fresh kernel (nbclient)."""
    import threading

    import nbformat
    from nbclient import NotebookClient

    os.nice(10)                               # the kernels inherit it
    env_backend = os.environ.pop("MPLBACKEND", None)   # the kernel's inline backend, as Voila
    # the kernels import this checkout's amp (not another editable install)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "live" / "prepare.py"),
                        "--out", tmp], check=True, stdout=subprocess.DEVNULL)
        app = Path(tmp) / "app"
        pages = sorted(p for p in app.glob("[0-9]*.ipynb")
                       if not prefixes or any(p.name.startswith(x) for x in prefixes))
        for page in pages:
            nb = nbformat.read(page, as_version=4)
            client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                    resources={"metadata": {"path": str(app)}},
                                    allow_errors=True)
            cell_times: list[tuple[float, str]] = []
            started: dict = {}
            client.on_cell_execute = lambda cell, cell_index: started.update(
                t=time.perf_counter())
            client.on_cell_executed = lambda cell, cell_index, execute_reply: cell_times.append(
                (time.perf_counter() - started["t"], cell.source.splitlines()[0][:60]
                 if cell.source else ""))
            peak = [0.0]
            stop = threading.Event()

            def sample() -> None:
                while not stop.wait(0.2):
                    km = client.km
                    proc = getattr(getattr(km, "provisioner", None), "process", None)
                    if proc is not None:
                        peak[0] = max(peak[0], _tree_rss_mb(proc.pid))

            load0 = os.getloadavg()
            t0 = time.perf_counter()
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            error = ""
            try:
                client.execute()
            except Exception as exc:  # noqa: BLE001 - a timeout is a result
                error = f"{type(exc).__name__}: {str(exc)[:200]}"
            seconds = time.perf_counter() - t0
            stop.set()
            sampler.join()
            load1 = os.getloadavg()
            errors = [(i, o) for i, c in enumerate(nb.cells) if c.cell_type == "code"
                      for o in c.get("outputs", []) if o.get("output_type") == "error"]
            if errors and not error:
                i, o = errors[0]
                where = [ln for ln in o.get("traceback", []) if "---->" in ln][-1:] or [""]
                line = re.sub(r"\x1b\[[0-9;]*m", "", where[0])[:160]
                error = f"cell {i}: {o['ename']}: {o['evalue'][:200]} {line}"
            slow = sorted(cell_times, reverse=True)[:3]
            row = {"page": page.stem, "open_s": round(seconds, 1), "peak_mb": round(peak[0]),
                   "load_before": [round(x, 2) for x in load0],
                   "load_after": [round(x, 2) for x in load1],
                   "slowest_cells": [[round(t, 1), src] for t, src in slow], "error": error}
            results.append(row)
            print(f"{page.stem:<24} open {seconds:6.1f} s  kernel peak {peak[0]:6.0f} MB  "
                  f"load {load0[0]:.2f} -> {load1[0]:.2f}  slowest cells: "
                  + "; ".join(f"{t:.1f} s {src!r}" for t, src in slow)
                  + (f"  ERROR {error}" if error else ""), flush=True)
    if env_backend is not None:
        os.environ["MPLBACKEND"] = env_backend
    if out_json:
        out_json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return 0


def run_child(spec: dict, timeout: float, memory_gb: float) -> dict:
    """One fresh process: its JSON result, wall seconds and peak RSS in MB (children
    included), read by ``os.wait4`` (``Popen.communicate`` would reap it first)."""
    cap = int(memory_gb * 1024 ** 3)

    def limits() -> None:
        os.nice(10)
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))

    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT / "book"),
                                 json.dumps(spec)], stdout=out, stderr=err,
                                preexec_fn=limits, env=env)
        pid = proc.pid
        deadline = t0 + timeout
        killed = ""
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                break
            if time.perf_counter() > deadline:
                os.kill(pid, signal.SIGKILL)
                killed = f"stopped by the bench after {timeout:g} s"
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    res: dict = {"wall_s": round(time.perf_counter() - t0, 1), "peak_mb": usage.ru_maxrss / 1024}
    if killed:
        res["error"] = killed
    elif proc.returncode != 0 or not stdout.strip():
        tail = (stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:200]
        res["error"] = (f"exit {proc.returncode} (killed: over the {memory_gb:g} GB cap?) "
                        if proc.returncode < 0 else "") + tail
    else:
        res.update(json.loads(stdout.strip().splitlines()[-1]))
    return res


if __name__ == "__main__":
    sys.exit(main())
