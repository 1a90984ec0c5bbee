"""Deployment-scale bench: amp's delta paths against the published Algorithm 4, side by side.

Usage::

    python bench/bench_scale.py                  # everything below (~10-20 min on 2 cores)
    python bench/bench_scale.py --quick          # n <= 10^5, no joint section (~2 min)
    python bench/bench_scale.py --sections grid  # one section: grid, curve, joint

Sections (all in one process, so the machine's load affects every column alike):

``grid``
    For 10-RR, RAPPOR, OUE and BLH (Table 1 rows) at eps0 in {1, 4}, n in {10^3 ... 10^8},
    delta = 1e-6: ``eps(delta)`` by amp's automatic selection (the structured exact path for
    these laws; ``--rel-tol``, default 1e-4) and by amp's generic certified FFT path
    (``method="fft"``, rel-tol 1e-3, n <= 10^5 by default); wall time, peak traced memory
    (``tracemalloc``: numpy buffers included), eps, certified bracket and its relative width.
    The baseline column is ONE ``delta`` evaluation of the published Algorithm 4
    (``bench/algorithm4_published.py``) at amp's eps, its time and its error relative to amp's
    certified delta bracket at that eps; cells whose FFT would need more than
    ``--baseline-mem-gb`` are skipped and say so.
``curve``
    A figure curve: eps at delta = 1e-6 for 100 log-spaced n from 10^3 to 10^5 (10-RR,
    eps0 = 4, rel-tol 1e-3), total time.
``joint``
    The generic path on a joint composition: eps for 3-joint 10-RR (eps0/3 each, eps0 = 4) at
    n = 10^6, rel-tol 1e-2 (certified bracket within 1%).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from algorithm4_published import delta_published, memory_bytes  # noqa: E402

import amp  # noqa: E402
from amp import BLH, KRR, OUE, RAPPOR  # noqa: E402
from amp.backends.dispatch import delta_bracket  # noqa: E402

DELTA = 1e-6
MECHS = {"10-RR": lambda e: KRR(e, k=10), "RAPPOR": RAPPOR, "OUE": OUE, "BLH": BLH}


def _fresh() -> None:
    """Collect garbage between runs. Every cell starts cold anyway: ``amp.epsilon`` builds a new
    profile (one ``LawDelta`` per law, with its own structured tables) on each call."""
    gc.collect()


def _call(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return exc


def measure(fn, twice: bool = True):
    """(result, seconds, peak traced MB); exceptions are returned as the result.

    ``twice``: time a cold run without tracing, then measure memory in a second cold run under
    ``tracemalloc`` (whose per-allocation overhead would distort the time of many small
    allocations). Otherwise one traced run gives both (fine for a few large numpy buffers).
    """
    _fresh()
    if twice:
        t = time.perf_counter()
        out = _call(fn)
        dt = time.perf_counter() - t
        _fresh()
    tracemalloc.start()
    t = time.perf_counter()
    out2 = _call(fn)
    if not twice:
        out, dt = out2, time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, dt, peak


def fmt_eps(r) -> str:
    if isinstance(r, Exception):
        return f"{type(r).__name__}: {str(r)[:60]}"
    w = (r.upper - r.lower) / r.upper if r.upper > 0 else 0.0
    return f"{r.value:.7g} [{r.lower:.7g}, {r.upper:.7g}] w={w:.1e} ({r.method})"


def grid(ns, eps0s, rel_tol, fft_max_n, base_mem_gb, log):
    print("\n== grid: eps(delta=1e-6); amp auto (structured) | amp generic fft | "
          "published Algorithm 4 (one delta evaluation)")
    print(f"{'mechanism':8} {'eps0':>4} {'n':>9} | {'auto s':>7} {'MB':>6}  eps [bracket] width"
          f" | {'fft s':>7} {'MB':>6} eps | {'Alg4 s':>7} {'MB':>6} rel.err")
    for name, make in MECHS.items():
        for eps0 in eps0s:
            mech = make(eps0)
            law = mech.gparv()
            for n in ns:
                log(f"{name} eps0={eps0} n={n:.0e}")
                ra, ta, ma = measure(lambda: amp.epsilon(mech, n, DELTA, rel_tol=rel_tol))
                cells = [f"{name:8} {eps0:>4g} {n:>9.0e} | {ta:7.2f} {ma:6.0f}  {fmt_eps(ra)}"]
                if n <= fft_max_n:
                    rf, tf, mf = measure(lambda: amp.epsilon(mech, n, DELTA, rel_tol=1e-3,
                                                             method="fft"))
                    cells.append(f"{tf:7.2f} {mf:6.0f} "
                                 f"{rf.value if not isinstance(rf, Exception) else rf!r:.7}")
                else:
                    cells.append(f"{'skip':>7} {'':>6} (n > {fft_max_n:.0e})")
                if isinstance(ra, Exception):
                    cells.append("no amp eps to compare at")
                else:
                    eps = ra.value
                    need = memory_bytes(law, n, eps, eps0) / 2**30
                    if need > base_mem_gb:
                        cells.append(f"{'skip':>7} needs ~{need:.1f} GB > {base_mem_gb:g} GB")
                    else:
                        rb, tb, mb = measure(lambda: delta_published(law, n, eps, eps0), twice=False)
                        ref = delta_bracket(law, n, eps, rel_tol=1e-6)
                        if isinstance(rb, Exception):
                            cells.append(f"{tb:7.2f} {mb:6.0f} {rb!r:.40}")
                        else:
                            err = rb / ref.upper - 1 if rb >= ref.upper else rb / ref.lower - 1
                            cells.append(f"{tb:7.2f} {mb:6.0f} {err:+.2%} "
                                         f"(speed-up of amp's eps search: {tb / ta:.0f}x)")
                print(" | ".join(cells), flush=True)


def curve(log):
    print("\n== curve: eps(1e-6) for 100 values of n in [1e3, 1e5], 10-RR eps0 = 4, rel-tol 1e-3")
    mech = KRR(4.0, k=10)
    ns = np.unique(np.round(np.logspace(3, 5, 100)).astype(int))
    _fresh()
    t = time.perf_counter()
    vals = [amp.epsilon(mech, int(n), DELTA, rel_tol=1e-3).value for n in ns]
    dt = time.perf_counter() - t
    print(f"{len(ns)} points in {dt:.2f} s; eps(1e3) = {vals[0]:.5g}, eps(1e5) = {vals[-1]:.5g}; "
          f"monotone: {all(a >= b for a, b in zip(vals, vals[1:]))}")


def joint(log):
    print("\n== joint (generic FFT path): 3-joint 10-RR, eps0 = 4 (4/3 each), n = 1e6, "
          "rel-tol 1e-2")
    mech = amp.JointMechanism([KRR(4.0 / 3, k=10) for _ in range(3)])
    r, dt, mb = measure(lambda: amp.epsilon(mech, 10**6, DELTA, rel_tol=1e-2,
                                            progress=lambda s: log("  " + s)), twice=False)
    print(f"{dt:.1f} s, peak {mb:.0f} MB: {fmt_eps(r)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n <= 1e5, no joint section")
    ap.add_argument("--sections", default="grid,curve,joint")
    ap.add_argument("--rel-tol", type=float, default=1e-4)
    ap.add_argument("--fft-max-n", type=float, default=1e5)
    ap.add_argument("--baseline-mem-gb", type=float, default=3.0)
    ap.add_argument("--eps0", default="1,4")
    args = ap.parse_args(argv)
    ns = [10**k for k in range(3, 6 if args.quick else 9)]
    sections = args.sections.split(",")
    if args.quick and "joint" in sections:
        sections.remove("joint")

    def log(s: str) -> None:
        print(f"[bench] {s}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    if "grid" in sections:
        grid(ns, [float(e) for e in args.eps0.split(",")], args.rel_tol, args.fft_max_n,
             args.baseline_mem_gb, log)
    if "curve" in sections:
        curve(log)
    if "joint" in sections:
        joint(log)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
