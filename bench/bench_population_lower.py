"""Fixed populations, both sides (issue 37 item 4; issue 34 seam 1): the certified upper eps
(the default, each group at its own blanket mass) and Theorem 5's certified lower eps (the
victim in one group, a background per group), their ratio and times, beside homogeneous k-RR.

Usage::

    python bench/bench_population_lower.py [--quick] [--out bench/results/bench_population_lower.txt]

Rows (delta = 1e-6, eps at the front door's default rel_tol 1e-4):
- two groups: 90% of the users on 10-RR at eps0 = 1, 10% at eps0 = 4;
- ten groups: n/10 users each on 10-RR at eps0 = 0.5, 1.0, ..., 5.0;
- homogeneous 10-RR at eps0 = 1 and 4 (Theorem 4 / Theorem 5 of one mechanism), for scale;
each at n = 10^4 and 10^6 (``--quick``: 10^4 only). Every case runs in its own process
(``PYTHONPATH`` = this tree), so its time is its own; the machine is shared, so times are
comparable within a row only.

The tiny-n brute-force checks (every neighbouring dataset pair enumerated) are tests:
``tests/test_population_lower.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

TREE = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
import amp
kind, n, bound = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if kind == "two":
    m = amp.Population([(n * 9 // 10, amp.KRR(1.0, k=10)), (n // 10, amp.KRR(4.0, k=10))])
elif kind == "ten":
    m = amp.Population([(n // 10, amp.KRR(float(e), k=10)) for e in np.linspace(0.5, 5, 10)])
else:
    m = amp.KRR(float(kind.split("=")[1]), k=10)
t = time.perf_counter()
r = amp.epsilon(m, n, 1e-6, bound=bound)
print(json.dumps({"value": r.value, "lower": r.lower, "upper": r.upper, "method": r.method,
                  "seconds": time.perf_counter() - t}))
"""

CASES = [("two", "two groups 90% eps0=1, 10% eps0=4"),
         ("ten", "ten groups eps0=0.5..5"),
         ("krr=1", "10-RR eps0=1 (homogeneous)"),
         ("krr=4", "10-RR eps0=4 (homogeneous)")]


def run(kind: str, n: int, bound: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(TREE))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, kind, str(n), bound], env=env,
                           capture_output=True, text=True, timeout=timeout, cwd=str(TREE))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:g} s"}
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1][:80]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10^4 only")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    ns = [10_000] if a.quick else [10_000, 1_000_000]
    lines = [f"bench_population_lower: python {platform.python_version()}, {os.cpu_count()} "
             f"cores, load average {os.getloadavg()[0]:.1f} at start "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
             "delta = 1e-6; eps upper = amp.epsilon(m, n, 1e-6) (value = upper end), eps lower = "
             "bound='lower' (value = lower end); ratio = upper / lower",
             "",
             f"{'case':38s} {'n':>8s} {'eps upper':>11s} {'eps lower':>11s} {'ratio':>7s} "
             f"{'t upper':>8s} {'t lower':>8s}"]
    for line in lines:
        print(line, flush=True)
    for n in ns:
        for kind, label in CASES:
            up, lo = run(kind, n, "upper", a.timeout), run(kind, n, "lower", a.timeout)
            if "error" in up or "error" in lo:
                line = f"{label:38s} {n:8.0e}  upper: {up.get('error', 'ok')}  lower: " \
                       f"{lo.get('error', 'ok')}"
            else:
                line = (f"{label:38s} {n:8.0e} {up['value']:11.6g} {lo['value']:11.6g} "
                        f"{up['value'] / lo['value']:7.4f} {up['seconds']:7.2f}s "
                        f"{lo['seconds']:7.2f}s")
            print(line, flush=True)
            lines.append(line)
    if a.out:
        a.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
