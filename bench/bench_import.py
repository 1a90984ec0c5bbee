"""Import time of ``amp`` before and after the lazy scipy imports (issue #27), side by side.

Usage::

    python bench/bench_import.py [--before /work/wt/base] [--after .] [--repeat 5]
                                 [--out bench/results/bench_import.txt]

Each measurement is a fresh interpreter started in the tree's root (so ``import amp`` takes that
tree's package), the two trees interleaved run by run so both see the same machine load; the
figure is the best (smallest) of ``--repeat`` runs. Measured:

- ``import amp``: wall seconds of the statement inside the interpreter (``time.perf_counter``);
- ``-X importtime``: the cumulative microseconds Python's import profiler reports for ``amp``;
- ``import + first call``: ``import amp`` and one certified ``amp.epsilon(amp.KRR(4.0, k=10),
  10_000, 1e-6)`` (a lazy import moves cost to the first call that needs it: this row shows
  what a one-question script pays in total);
- the scipy modules ``import amp`` leaves loaded, and the answer (the same in both trees).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

IMPORT = ("import time; t = time.perf_counter(); import amp; dt = time.perf_counter() - t; "
          "import sys, json; print(json.dumps({'s': dt, 'scipy': sorted(m for m in sys.modules "
          "if m.startswith('scipy.') and m.count('.') == 1)}))")
FIRST = ("import time; t = time.perf_counter(); import amp; "
         "r = amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6); dt = time.perf_counter() - t; "
         "import json; print(json.dumps({'s': dt, 'bracket': list(r.bracket)}))")


def run(tree: Path, code: str, *flags: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)


def importtime_us(tree: Path) -> int:
    """Cumulative microseconds of the top-level ``amp`` import (``-X importtime``)."""
    err = run(tree, "import amp", "-X", "importtime").stderr
    for line in err.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == "amp":
            return int(parts[1])
    raise RuntimeError(f"no 'amp' line in -X importtime output of {tree}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, default=Path("/work/wt/base"),
                    help="tree of the version before (default: the session-start worktree)")
    ap.add_argument("--after", type=Path, default=HERE.parent)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    a = ap.parse_args()
    trees = {"before": a.before.resolve(), "after": a.after.resolve()}
    for name, t in trees.items():
        if not (t / "amp" / "__init__.py").is_file():
            ap.error(f"--{name}: {t} has no amp/__init__.py")

    res = {k: {"import": [], "importtime": [], "first": []} for k in trees}
    info: dict = {}
    for _ in range(a.repeat):
        for k, t in trees.items():         # interleaved: both trees see the same load
            imp = json.loads(run(t, IMPORT).stdout)
            res[k]["import"].append(imp["s"])
            res[k]["importtime"].append(importtime_us(t) / 1e6)
            first = json.loads(run(t, FIRST).stdout)
            res[k]["first"].append(first["s"])
            info[k] = (imp["scipy"], first["bracket"])

    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    say("bench_import: `import amp` in a fresh interpreter, best of "
        f"{a.repeat} interleaved runs per tree")
    say(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}; load average "
        f"{os.getloadavg()[0]:.1f} (shared machine: compare the two columns, not across runs)")
    say(f"before: {trees['before']}")
    say(f"after:  {trees['after']}")
    say("")
    say(f"{'seconds (best of ' + str(a.repeat) + ')':<40} {'before':>9} {'after':>9} "
        f"{'after/before':>13}")
    for key, label in (("import", "import amp (perf_counter)"),
                       ("importtime", "import amp (-X importtime, cumulative)"),
                       ("first", "import amp + first amp.epsilon call")):
        b, f = min(res["before"][key]), min(res["after"][key])
        say(f"{label:<40} {b:9.3f} {f:9.3f} {f / b:13.2f}")
    say("")
    for k in trees:
        mods, bracket = info[k]
        say(f"{k}: scipy subpackages loaded by `import amp`: {', '.join(mods) or 'none'}")
        say(f"{k}: eps bracket of the first call: [{bracket[0]!r}, {bracket[1]!r}]")
    same = info["before"][1] == info["after"][1]
    say(f"first-call answers identical: {same}")
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text("\n".join(lines) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
