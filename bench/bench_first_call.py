"""The first ``amp.epsilon`` call in a fresh process against one published Algorithm 4 delta.

Usage::

    python bench/bench_first_call.py [--n 10000] [--eps0 4] [--k 10] [--delta 1e-6] [--repeat 3]
    python bench/bench_first_call.py --before /tmp/amp_before     # an older tree, side by side

Each repetition starts a NEW Python process per tree, which imports ``amp`` (timed
separately), makes the first ``amp.epsilon(KRR(eps0, k=k), n, delta)`` call at the default
accuracy (certified bracket of relative width <= 1e-4), then evaluates ONE ``delta`` at amp's
eps with the paper's Algorithm 4 as published (``bench/algorithm4_published.py``, grid step
``(e^eps0 - 1)/1200``), in the same process. Printed per process: import time, first-call time
(wall, and CPU time of the process: closer to an idle machine's wall time when the machine is
shared), Algorithm 4's time, their ratio, and the scipy subpackages the process imported
(``scipy.optimize`` pulls in ``linalg``, ``sparse`` and ``spatial``). With ``--before`` the two
trees alternate, so the load affects both columns alike.

Each tree's ``amp`` is byte-compiled first (``compileall``, into its ignored ``__pycache__``):
an installed package has its ``.pyc`` files, and a process that compiles every module (e.g.
under ``PYTHONDONTWRITEBYTECODE``) measures the compiler, not ``amp``. Issue 34's goal: import
plus first answer in at most 0.3 s on an idle machine.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import amp
t1, c1 = time.perf_counter(), time.process_time()
assert amp.__file__.startswith(sys.argv[6]), amp.__file__
n, eps0, k, delta = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
mech = amp.KRR(eps0, k=k)
r = amp.epsilon(mech, n, delta)
t2, c2 = time.perf_counter(), time.process_time()
scipy_mods = sorted(m[6:] for m in sys.modules if m.startswith("scipy.") and m.count(".") == 1
                    and not m[6:].startswith("_") and m[6:] not in ("version",))
sys.path.insert(0, sys.argv[5])
from algorithm4_published import delta_published
t3 = time.perf_counter()
d = delta_published(mech.gparv(), n, r.value, eps0)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "import_cpu": c1 - c0, "first": t2 - t1,
                  "first_cpu": c2 - c1, "alg4": t4 - t3, "eps": r.value,
                  "bracket": r.bracket, "alg4_delta": d, "scipy": scipy_mods}))
"""


def run(tree: Path, a: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, str(a.n), str(a.eps0), str(a.k),
                          str(a.delta), str(HERE), str(tree)], capture_output=True, text=True,
                         env=env, check=True, cwd=str(tree))   # cwd: its amp first
    return json.loads(out.stdout)


def line(tag: str, r: dict) -> str:
    lo, hi = r["bracket"]
    tot, tot_cpu = r["import"] + r["first"], r["import_cpu"] + r["first_cpu"]
    return (f"{tag:<7}{r['import']:6.3f} ({r['import_cpu']:.3f}) {r['first']:7.3f} "
            f"({r['first_cpu']:.3f}) {tot:7.3f} ({tot_cpu:.3f}) {r['alg4']:8.2f} "
            f"{r['alg4'] / r['first']:6.0f}x  {r['eps']:.7f} [{lo:.7f}, {hi:.7f}]  "
            f"({r['alg4_delta']:.4g})  scipy: {','.join(r['scipy'])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--eps0", type=float, default=4.0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, help="an older source tree, run alternately")
    a = ap.parse_args()
    trees = [("before", a.before.resolve())] if a.before else []
    trees.append(("after" if a.before else "", HERE.parent))
    for _, tree in trees:
        compileall.compile_dir(str(tree / "amp"), quiet=1)
    print(f"{a.k}-RR, eps0 = {a.eps0:g}, n = {a.n}, delta = {a.delta:g}: fresh process each row; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(f"{'':<7}{'import s (cpu)':>14} {'first eps s (cpu)':>17} {'both s (cpu)':>15} "
          f"{'Alg.4 s':>8} {'ratio':>7}  eps [certified bracket]  (Alg. 4 delta at eps)")
    for _ in range(a.repeat):
        for tag, tree in trees:
            print(line(tag, run(tree, a)), flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
