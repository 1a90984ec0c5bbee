"""Figures and the widget of Chapter 12 (What shuffling buys: accuracy); book-only helpers.

The estimators, their variances and the simulation live in :mod:`ampbook.accuracy` (unit-tested);
this module loads the chapter's dataset, caches calibrations, and draws. matplotlib and
ipywidgets are imported when a figure or the widget is built.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import numpy as np

from ampbook import accuracy as A

#: The zip code table of vega-datasets@3.2.1, fetched by ``make assets``
#: (``scripts/fetch_datasets.sh``).
DATA = Path(__file__).resolve().parent / "data" / "vega" / "zipcodes.csv"
NAMES = {"krr": "k-RR", "oue": "OUE", "olh": "OLH"}
COLOURS = {"shuffled": "C0", "local": "C3", "central": "C2"}
LABELS = {"shuffled": r"shuffled ($\varepsilon_0$ calibrated)",
          "local": r"local only ($\varepsilon_0 = \varepsilon$)",
          "central": "central (Laplace)"}
MARKERS = {"shuffled": "o", "local": "s", "central": "^"}


def state_counts(path: Path = DATA) -> tuple[list[str], np.ndarray]:
    """States (59 codes) and their numbers of zip codes, most frequent first."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} is missing: run `make assets` "
                                "(scripts/fetch_datasets.sh fetches vega-datasets@3.2.1)")
    with open(path, newline="", encoding="utf-8") as f:
        states = [row["state"] for row in csv.DictReader(f)]
    labels, counts = np.unique(states, return_counts=True)
    order = np.lexsort((labels, -counts))                  # by count, then by name
    return [str(s) for s in labels[order]], counts[order].astype(np.int64)


#: Calibrations computed in advance (``scripts/live/precompute.py``, provenance inside): the
#: certified ``eps0`` of :func:`ampbook.accuracy.calibrated_oracle` for every question of the
#: chapter and its widget, as that function returned it.
STORED = Path(__file__).resolve().parent / "data" / "live" / "ch12_calibrations.json"


@lru_cache(maxsize=1)
def _stored_eps0(path: Path = STORED) -> dict:
    import json
    if not Path(path).exists():
        return {}
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["calibrations"]
    return {(r["name"], r["k"], r["n"], r["eps"], r["delta"]): r["eps0"] for r in rows}


@lru_cache(maxsize=None)
def calibrated(name: str, k: int, n: int, eps: float, delta: float) -> A.FrequencyOracle:
    """:func:`ampbook.accuracy.calibrated_oracle`, computed once per question; a question of
    :data:`STORED` is answered from there (the same oracle: ``A.oracle(name, eps0, k)`` with
    the stored certified ``eps0``; the chapter's hidden checks compare with a fresh
    calibration)."""
    eps0 = _stored_eps0().get((name, int(k), int(n), float(eps), float(delta)))
    if eps0 is not None:
        return A.oracle(name, eps0, k)
    return A.calibrated_oracle(name, k, n, eps, delta)


def population(freqs: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` users drawn with replacement from ``freqs`` (a seeded multinomial)."""
    return np.random.default_rng([seed, n]).multinomial(n, freqs)


def error_curves(freqs: np.ndarray, ns: list[int], eps: float, delta: float, reps: int,
                 seed: int, names: tuple[str, ...] = A.ORACLES) -> dict[str, list[A.Comparison]]:
    """For each oracle and each ``n``: :func:`ampbook.accuracy.compare` on a population of ``n``
    users drawn from ``freqs``, with the shuffled oracle calibrated at ``(n, eps, delta)``."""
    k = len(freqs)
    out: dict[str, list[A.Comparison]] = {name: [] for name in names}
    for n in ns:
        hist = population(freqs, n, seed)
        for i, name in enumerate(names):
            rng = np.random.default_rng([seed, n, i])
            out[name].append(A.compare(hist, calibrated(name, k, n, eps, delta), eps, rng, reps))
    return out


def plot_error_vs_n(curves: dict[str, list[A.Comparison]], metric: str = "mse",
                    title: str = ""):
    """One panel per oracle: ``metric`` (``"mse"``: exact expected MSE as lines, Monte Carlo
    as markers; ``"max_abs"``: Monte Carlo mean of the largest error) against ``n``."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(curves), figsize=(9.6, 3.4), sharey=True,
                             layout="constrained")
    for ax, (name, rows) in zip(np.atleast_1d(axes), curves.items()):
        ns = [r.n for r in rows]
        for s in A.SETTINGS:
            values = [getattr(r, metric)[s] for r in rows]
            if metric == "mse":
                ax.plot(ns, [r.expected_mse[s] for r in rows], color=COLOURS[s], lw=1.5,
                        label=LABELS[s])
                ax.plot(ns, values, MARKERS[s], color=COLOURS[s], ms=4, mfc="none")
            else:
                ax.plot(ns, values, marker=MARKERS[s], color=COLOURS[s], ms=4, lw=1.5,
                        label=LABELS[s])
        ax.set(xscale="log", yscale="log", xlabel="number of users $n$", title=NAMES[name])
        ax.grid(True, alpha=0.3)
    ylabel = ("mean squared error per value (frequencies)" if metric == "mse"
              else "largest absolute error (frequencies)")
    np.atleast_1d(axes)[0].set_ylabel(ylabel)
    np.atleast_1d(axes)[0].legend(fontsize="small")
    if title:
        fig.suptitle(title)
    return fig


def one_draw(hist: np.ndarray, name: str, eps: float, delta: float,
             seed: int) -> tuple[A.FrequencyOracle, dict[str, np.ndarray]]:
    """One estimate of the frequencies of ``hist`` in each setting (shuffled, local, central)."""
    n, k = int(hist.sum()), len(hist)
    shuffled = calibrated(name, k, n, eps, delta)
    local = A.oracle(name, eps, k)
    rng = np.random.default_rng(seed)
    est = {"shuffled": shuffled.estimate(shuffled.simulate(hist, rng), n),
           "local": local.estimate(local.simulate(hist, rng), n),
           "central": A.central_counts(hist, eps, rng) / n}
    return shuffled, est


def plot_estimates(labels: list[str], hist: np.ndarray, est: dict[str, np.ndarray],
                   title: str = ""):
    """True frequencies (bars) and one estimate per setting (markers), values in the order
    of ``labels``."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9.6, 3.6), layout="constrained")
    x = np.arange(len(labels))
    ax.bar(x, hist / hist.sum(), color="0.85", label="true frequency")
    for s in A.SETTINGS:
        ax.plot(x, est[s], MARKERS[s], color=COLOURS[s], ms=3.5, label=LABELS[s])
    ax.axhline(0, color="0.3", lw=0.6)
    ax.set_xticks(x, labels, rotation=90, fontsize=6)
    ax.set(xlim=(-1, len(labels)), ylabel="frequency")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", ncols=2)
    if title:
        ax.set_title(title)
    return fig


#: The widget's choices of n: the dataset itself, or users drawn from its frequencies (their
#: calibrations are stored: :data:`STORED`).
WIDGET_NS = {"42,049 (the dataset)": 0, "1,000": 10**3, "10,000": 10**4, "100,000": 10**5,
             "1,000,000": 10**6, "10,000,000": 10**7}


def accuracy_widget(mechanism: str = "krr", eps: float = 1.0, delta: float = 1e-6,
                    seed: int = 12):
    """Interactive Figure 12.1: one estimate of the state frequencies, shuffled vs local only
    vs central, for a chosen oracle, number of users and central ``eps`` (needs a kernel;
    a new ``n`` or ``eps`` calibrates ``eps0`` again, about a second; status line and locked
    controls while drawing, a failure said in red:
    :func:`ampbook.widgets.interactive_with_status`)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ampbook.widgets import interactive_with_status
    labels, counts = state_counts()

    def draw(mechanism, n, eps):
        hist = counts if n == 0 else population(counts / counts.sum(), n, seed)
        shuffled, est = one_draw(hist, mechanism, eps, delta, seed)
        truth = hist / hist.sum()
        plot_estimates(labels, hist, est, title=(
            f"{NAMES[mechanism]}, n = {hist.sum():,}, ε = {eps:g}, δ = {delta:g}: "
            f"shuffled ε₀ = {shuffled.eps0:.3f}"))
        plt.show()
        for s in A.SETTINGS:
            print(f"{s:9s} largest error {A.max_abs_error(est[s], truth):.2e}"
                  f"   mean squared error {A.mse(est[s], truth):.2e}")

    return interactive_with_status(
        draw, busy="up to a few seconds at n = 10,000,000",
        mechanism=widgets.Dropdown(options=[(v, k) for k, v in NAMES.items()], value=mechanism,
                                   description="oracle"),
        n=widgets.Dropdown(options=list(WIDGET_NS.items()), value=0, description="n"),
        eps=widgets.FloatSlider(value=eps, min=0.25, max=3.0, step=0.25,
                                continuous_update=False, description="central ε"),
    )
