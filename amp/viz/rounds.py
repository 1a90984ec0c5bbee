"""Figures and a widget for many shuffled rounds (book chapter 11; :mod:`amp.rounds`).

:func:`rounds_curves` computes, for ``T`` rounds: amp's certified upper and lower eps (Theorem 4's
profile composed, :func:`amp.rounds.epsilon_sweep`), and the two baselines of
:mod:`amp.baselines.composition` (per-round eps with optimal composition; the standard clone's
profile composed). :func:`plot_rounds` draws them; :func:`rounds_widget` redraws for a chosen
mechanism, ``eps0``, ``n`` and sampling rate ``q`` (needs a kernel; the static book shows the
default figure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from amp.baselines.composition import clone_composed_epsilon, per_round_composed_epsilon
from amp.core.extras import require
from amp.mechanisms.base import Mechanism
from amp.rounds import epsilon_sweep
from amp.viz.style import new_axes, pyplot, show
from amp.viz.widgets import MECHANISMS, make_mechanism

__all__ = ["RoundsCurves", "rounds_curves", "plot_rounds", "rounds_widget"]


@dataclass(frozen=True)
class RoundsCurves:
    """eps after ``T`` rounds (one entry per ``T``): amp's certified ``upper``/``lower``, the
    per-round baseline ``per_round`` and the composed standard clone ``clone`` (``None`` where
    not computed)."""

    rounds: tuple[int, ...]
    upper: tuple[float, ...]
    lower: tuple[float, ...]
    per_round: tuple[float, ...] | None
    clone: tuple[float, ...] | None
    label: str
    sampling: float


def rounds_curves(mechanism: Mechanism, n: int, delta: float, rounds: Sequence[int], *,
                  sampling: float = 1.0, baselines: bool = True) -> RoundsCurves:
    """The data of :func:`plot_rounds` (certified; the baselines only when ``baselines``; the
    composed standard clone only for ``sampling = 1``, where its generic profile applies)."""
    Ts = tuple(int(t) for t in rounds)
    res = epsilon_sweep(mechanism, n, delta, Ts, sampling=sampling)
    per = clone = None
    if baselines:
        per = tuple(per_round_composed_epsilon(mechanism, n, delta, T, sampling=sampling)
                    for T in Ts)
        if sampling == 1.0:
            clone = tuple(clone_composed_epsilon(mechanism, n, delta, Ts))
    q = f", q = {sampling:g}" if sampling < 1 else ""
    return RoundsCurves(Ts, tuple(r.upper for r in res), tuple(r.lower for r in res), per,
                        clone, f"{mechanism.describe()}, n = {n}{q}", sampling)


def plot_rounds(curves: Sequence[RoundsCurves], *, delta: float, ax=None):
    """eps after ``T`` rounds against ``T`` (log-log): amp's certified band and upper end, and
    the baselines dashed/dotted, one colour per :class:`RoundsCurves`."""
    ax = new_axes(ax, figsize=(6.4, 4.2))
    plt = pyplot()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(curves):
        col = colours[i % len(colours)]
        T = np.array(c.rounds, dtype=float)
        ax.fill_between(T, c.lower, c.upper, color=col, alpha=0.25, lw=0)
        ax.plot(T, c.upper, "-o", color=col, ms=3, label=f"amp (Theorem 4, §5.1, composed): {c.label}")
        if c.per_round is not None:
            ax.plot(T, c.per_round, "--", color=col, lw=1,
                    label="per-round eps + optimal composition")
        if c.clone is not None:
            ax.plot(T, c.clone, ":", color=col, lw=1.5, label="standard clone profile composed")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rounds T")
    ax.set_ylabel(f"central ε after T rounds (δ = {delta:g})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    return ax


def rounds_widget(mechanism: str = "k-RR", eps0: float = 2.0, log10_n: float = 4.0,
                  sampling: float = 1.0, delta_exponent: int = -6):
    """Interactive eps after ``T`` rounds (``T = 1 .. 10^4``) for a mechanism, ``eps0``, ``n``
    and sampling rate ``q`` (needs a kernel; each redraw takes a few seconds)."""
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    def draw(mechanism, eps0, log10_n, sampling, delta_exponent):
        mech = make_mechanism(mechanism, eps0)
        n, delta = int(round(10 ** log10_n)), 10.0 ** delta_exponent
        c = rounds_curves(mech, n, delta, (1, 10, 100, 1000, 10_000), sampling=sampling,
                          baselines=False)
        show(plot_rounds([c], delta=delta))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.5, max=6.0, step=0.25,
                                 continuous_update=False, description="ε₀"),
        log10_n=widgets.FloatSlider(value=log10_n, min=3.0, max=7.0, step=0.5,
                                    continuous_update=False, description="log₁₀ n"),
        sampling=widgets.FloatSlider(value=sampling, min=0.05, max=1.0, step=0.05,
                                     continuous_update=False, description="q"),
        delta_exponent=widgets.IntSlider(value=delta_exponent, min=-10, max=-4,
                                         continuous_update=False, description="log₁₀ δ"),
    )
