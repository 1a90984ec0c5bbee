"""What shuffling buys in accuracy (Chapter 12): frequency estimation three ways at one central
``(eps, delta)``.

Usage::

    python bench/bench_accuracy.py [--eps 1] [--delta 1e-6] [--reps 200] [--seed 12]
                                   [--out bench/results/bench_accuracy.txt]

For k-RR, OUE and OLH (``g = round(e^eps0 + 1)``, Wang et al. 2017) and ``n`` = 10^3 .. 10^6:
``eps0`` calibrated with :func:`amp.calibrate_eps0` so that the ``n`` shuffled reports are
certified ``(eps, delta)``-DP (replace-one neighbours); the error of the unbiased frequency
estimates with the shuffler (that ``eps0``), without it (local only, ``eps0 = eps``) and of the
central Laplace mechanism (scale ``2/eps`` on each count, ``(eps, 0)``-DP). Errors are on
frequencies (counts / n): the mean squared error per value and the largest absolute error over
values, each averaged over ``--reps`` independent runs (Monte Carlo, seeded); the exact expected
MSE (:meth:`ampbook.accuracy.FrequencyOracle.variance`) is printed beside the Monte Carlo one.
Two populations of ``n`` users, drawn with replacement (seeded): a Zipf law over 100 values
(exponent 1.1), and the ``state`` column (59 values) of ``zipcodes.csv`` from the npm package
``vega-datasets@3.2.1`` (``make assets`` fetches it into ``book/data/vega``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "book"))

import amp  # noqa: E402
from ampbook import accuracy as A  # noqa: E402
import accuracy_figs as F  # noqa: E402   (book/accuracy_figs.py: the dataset loader)

NS = [10**3, 10**4, 10**5, 10**6]


def table(title: str, freqs: np.ndarray, eps: float, delta: float, reps: int,
          seed: int) -> list[str]:
    curves = F.error_curves(freqs, NS, eps, delta, reps, seed)
    lines = [title, "",
             f"{'oracle':6s} {'n':>9s} {'eps0':>7s} {'g':>7s} | "
             f"{'MSE shuffled':>12s} {'(exact)':>9s} {'MSE local':>10s} {'MSE central':>11s} | "
             f"{'max shuffled':>12s} {'max local':>9s} {'max central':>11s} | "
             f"{'local/shuf':>10s} {'shuf/central':>12s}"]
    for name, rows in curves.items():
        for r in rows:
            o = r.shuffled
            if amp.delta(o.mechanism(), r.n, eps).upper > delta:    # pragma: no cover
                raise AssertionError(f"{name} n={r.n}: calibrated eps0 not certified")
            lines.append(
                f"{F.NAMES[name]:6s} {r.n:>9,d} {o.eps0:7.3f} {o.g or '-':>7} | "
                f"{r.mse['shuffled']:12.2e} {r.expected_mse['shuffled']:9.2e} "
                f"{r.mse['local']:10.2e} {r.mse['central']:11.2e} | "
                f"{r.max_abs['shuffled']:12.2e} {r.max_abs['local']:9.2e} "
                f"{r.max_abs['central']:11.2e} | "
                f"{r.mse['local'] / r.mse['shuffled']:10.3g} "
                f"{r.mse['shuffled'] / r.mse['central']:12.3g}")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--out", default=str(HERE / "results" / "bench_accuracy.txt"))
    args = p.parse_args(argv)
    start = time.perf_counter()
    labels, counts = F.state_counts()
    head = [f"bench_accuracy: central eps = {args.eps:g}, delta = {args.delta:g} (replace-one); "
            f"{args.reps} runs per cell (seed {args.seed}); amp {amp.__version__}",
            "errors on frequencies (counts / n): MSE = mean over values of (f_hat - f)^2; "
            "max = largest |f_hat - f| over values; both averaged over the runs",
            "shuffled: eps0 certified by amp.calibrate_eps0 (checked: delta_upper(eps) <= delta); "
            "local: eps0 = eps, no shuffler; central: Laplace(2/eps) on each count",
            "(exact): the exact expected MSE of the shuffled estimate "
            "(Var[f_hat_v] averaged over v)", ""]
    body = table("Zipf population: 100 values, exponent 1.1, n users drawn with replacement",
                 A.zipf_frequencies(100, 1.1), args.eps, args.delta, args.reps, args.seed)
    body += table(f"zipcodes.csv (vega-datasets@3.2.1), column state: {len(labels)} values, "
                  f"{counts.sum():,} rows; n users drawn with replacement",
                  counts / counts.sum(), args.eps, args.delta, args.reps, args.seed)
    text = "\n".join(head + body + [f"total {time.perf_counter() - start:.1f} s"]) + "\n"
    print(text, end="")
    Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
