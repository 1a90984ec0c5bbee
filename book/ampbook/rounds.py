"""Figures and a widget for many shuffled rounds (book chapter 11; :mod:`amp.rounds`).

:func:`rounds_curves` computes, for ``T`` rounds: amp's certified upper and lower eps (Theorem 4
of Section 5.1's profile composed for the upper end, Theorem 5 of Section 5.3's explicit pair
for the lower end; :func:`amp.rounds.epsilon_sweep`), and the two baselines of
:mod:`amp.baselines.composition` (per-round eps with optimal composition; the standard clone's
profile composed). :func:`plot_rounds` draws them. :func:`plot_delta_curves` and
:func:`plot_connect_the_dots` draw the chapter's teaching figures (privacy curves of a small
example; chords through certified points of a convex curve). :func:`rounds_widget` redraws the
band for a chosen mechanism, ``eps0``, ``n`` and sampling rate ``q``, limited to the settings
in :data:`WIDGET_LOG10_N` (needs a kernel; the static book shows the default figure).
"""

from __future__ import annotations

import html
import json
import math
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from amp.baselines.composition import clone_composed_epsilon, per_round_composed_epsilon
from amp.core.errors import AmpError, ParameterError
from amp.core.extras import require
from amp.mechanisms.base import Mechanism
from amp.rounds import epsilon_sweep
from ampbook.style import new_axes, pyplot
from ampbook.limits import WIDGET_MEMORY, WIDGET_TIMEOUT, WidgetLimitError, run_limited
from ampbook.widgets import MECHANISMS, make_mechanism

__all__ = ["RoundsCurves", "rounds_curves", "curves_match", "plot_rounds", "plot_delta_curves",
           "plot_connect_the_dots", "WIDGET_LOG10_N", "WIDGET_ROUNDS", "WIDGET_TIMEOUT",
           "WIDGET_MEMORY", "WidgetLimitError", "check_widget_inputs", "run_limited",
           "widget_key", "curves_to_json", "curves_from_json", "load_stored_rounds",
           "rounds_widget"]

#: Values of log10 n the widget offers: for k-RR a redraw (T up to :data:`WIDGET_ROUNDS`)
#: answers within about 20 s and well under 2 GB on the project's 2-core machine; n = 10^5
#: took 31 s and n = 10^6 four minutes and 5.8 GB (``book/engine/ch11_rounds.md``). Slower
#: settings (RAPPOR, BLH, Hadamard response at small eps0) are stopped by :func:`run_limited`.
WIDGET_LOG10_N: tuple[float, ...] = (3.0, 3.5, 4.0, 4.5)
#: Numbers of rounds the widget draws.
WIDGET_ROUNDS: tuple[int, ...] = (1, 10, 100, 1000)
_RED = "#b00020"


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
                        clone, f"{mechanism.describe()}, n = {n:,}{q}", sampling)


def curves_match(a: RoundsCurves, b: RoundsCurves, rel_tol: float = 1e-6) -> bool:
    """``a`` and ``b`` have the same rounds, label and sampling, and every number agrees to
    ``rel_tol``: the check that stored curves are what the computation gives. Not bit for bit:
    the composed curves differ between processors (numpy's vector code paths) by about 1e-9
    relative, and the composed clone baseline, a search with its own tolerance, by 3e-8
    (chapter 11's curves, AMD EPYC against the machine that stored them)."""
    def close(x, y):
        if x is None or y is None:
            return x is None and y is None
        return len(x) == len(y) and all(math.isclose(u, v, rel_tol=rel_tol) for u, v in zip(x, y))
    return (a.rounds == b.rounds and a.label == b.label and a.sampling == b.sampling
            and all(close(getattr(a, f), getattr(b, f))
                    for f in ("upper", "lower", "per_round", "clone")))


def curves_to_json(curves: RoundsCurves) -> dict:
    """``curves`` as a JSON-ready dict (floats written as Python writes them, so
    :func:`curves_from_json` gives back the very same floats)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(curves).items()}


def curves_from_json(data: Mapping) -> RoundsCurves:
    """The :class:`RoundsCurves` written by :func:`curves_to_json`."""
    def tup(v):
        return None if v is None else tuple(v)
    return RoundsCurves(tuple(int(t) for t in data["rounds"]), tup(data["upper"]),
                        tup(data["lower"]), tup(data["per_round"]), tup(data["clone"]),
                        str(data["label"]), float(data["sampling"]))


def widget_key(mechanism: str, eps0: float, log10_n: float, sampling: float,
               delta_exponent: int) -> tuple:
    """The key of one setting of :func:`rounds_widget` in its ``precomputed`` mapping."""
    return (str(mechanism), round(float(eps0), 6), round(float(log10_n), 6),
            round(float(sampling), 6), int(delta_exponent))


def load_stored_rounds(path: str | os.PathLike) -> dict:
    """Chapter 11's precomputed curves (``book/data/live/ch11_rounds.json``, written by
    ``scripts/live/precompute.py`` with :func:`rounds_curves`; its provenance inside):
    ``{"curves": {name: RoundsCurves}, "widget": {widget_key: RoundsCurves},
    "provenance": {...}}``. The ``widget`` entries are the band of :func:`rounds_widget` at
    the settings of their key (no baselines), for its ``precomputed`` argument."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    curves = {name: curves_from_json(c) for name, c in data["curves"].items()}
    widget = {widget_key(**w["setting"]): replace(curves[w["curves"]], per_round=None,
                                                  clone=None)
              for w in data.get("widget", [])}
    return {"curves": curves, "widget": widget, "provenance": data.get("provenance", {})}


def _plain_log_ticks(ax, axis: str, lo: float, hi: float) -> None:
    """Ticks 1, 2, 5 x 10^k between ``lo`` and ``hi`` written as plain numbers."""
    plt = pyplot()
    ticks = [m * 10.0 ** k for k in range(int(np.floor(np.log10(lo))) - 1,
                                          int(np.ceil(np.log10(hi))) + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if lo <= t <= hi]
    fmt = plt.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(plt.FixedLocator(ticks))
    target.set_major_formatter(fmt)
    target.set_minor_formatter(plt.NullFormatter())


def plot_rounds(curves: Sequence[RoundsCurves], *, delta: float, ax=None,
                baselines: bool = True, title: str | None = None):
    """eps after ``T`` rounds against ``T`` (log-log, plain-number ticks): amp's certified band
    (lower end from Theorem 5, Section 5.3's pair; upper end from Theorem 4, Section 5.1's
    profile composed) and, when ``baselines``, the baselines dashed/dotted; one colour per
    :class:`RoundsCurves`."""
    ax = new_axes(ax, figsize=(6.4, 4.2))
    plt = pyplot()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ys: list[float] = []
    for i, c in enumerate(curves):
        col = colours[i % len(colours)]
        T = np.array(c.rounds, dtype=float)
        ax.fill_between(T, c.lower, c.upper, color=col, alpha=0.25, lw=0)
        ax.plot(T, c.upper, "-o", color=col, ms=3,
                label=f"amp: Theorem 4, §5.1 composed; band to Theorem 5, §5.3 ({c.label})")
        ys += list(c.lower) + list(c.upper)
        if baselines and c.per_round is not None:
            ax.plot(T, c.per_round, "--", color=col, lw=1,
                    label="per-round (ε, δ) + optimal composition")
            ys += list(c.per_round)
        if baselines and c.clone is not None:
            ax.plot(T, c.clone, ":", color=col, lw=1.5, label="standard clone profile composed")
            ys += list(c.clone)
    ax.set_xscale("log")
    ax.set_yscale("log")
    Ts = sorted({t for c in curves for t in c.rounds})
    ax.set_xticks(Ts)
    ax.set_xticklabels([f"{t:,}" for t in Ts])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    fin = [y for y in ys if np.isfinite(y) and y > 0]
    if fin:
        _plain_log_ticks(ax, "y", min(fin) * 0.8, max(fin) * 1.25)
    ax.set_xlabel("number of rounds T")
    ax.set_ylabel(f"central ε after T rounds (δ = {delta:g})")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_delta_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                      points: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                      ax=None, title: str | None = None):
    """``delta(eps)`` curves (lines, one per label) and checked values (markers, one set per
    label), linear axes with numbered ticks: the chapter's privacy-curve figure."""
    ax = new_axes(ax)
    for label, (e, d) in curves.items():
        ax.plot(e, d, "-", lw=1.8, label=label)
    for (label, (e, d)), m in zip((points or {}).items(), "osD^v"):
        ax.plot(e, d, m, ms=6, mfc="none", mew=1.5, color="black" if m == "o" else "0.35",
                label=label)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_xlim(left=0)
    return _finish(ax, title)


def plot_connect_the_dots(t: Sequence[float], curve: Sequence[float],
                          t_points: Sequence[float], d_points: Sequence[float], *,
                          label: str = "privacy curve", ax=None, title: str | None = None):
    """A convex curve ``delta`` against ``t = e^eps`` and the chords through certified points
    on it (connect the dots): the chords lie above the curve; the gap is shaded."""
    ax = new_axes(ax)
    t, curve = np.asarray(t, float), np.asarray(curve, float)
    tp, dp = np.asarray(t_points, float), np.asarray(d_points, float)
    chords = np.interp(t, tp, dp)
    ax.plot(t, curve, "-", lw=2, label=label)
    ax.plot(tp, dp, "-o", color="C3", lw=1.2, ms=5, label="connect-the-dots (chords)")
    ax.fill_between(t, curve, chords, where=chords >= curve, color="C3", alpha=0.15, lw=0,
                    label="what the chords add (pessimism)")
    ax.set_xlabel("t = e^ε")
    ax.set_ylabel("δ")
    return _finish(ax, title)


def _finish(ax, title: str | None):
    """The common end of the chapter's linear delta figures: delta from 0, title, grid, legend."""
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def check_widget_inputs(mechanism: str, eps0: float, log10_n: float, sampling: float,
                        delta_exponent: int) -> tuple[Mechanism, int, float]:
    """The widget's inputs as ``(mechanism, n, delta)``, or :class:`ParameterError` for a
    setting it does not answer (``log10_n`` outside :data:`WIDGET_LOG10_N`, ``eps0`` outside
    [0.5, 6], ``q`` outside [0.05, 1], ``delta`` outside [1e-8, 1e-4]: at 1e-10 the slowest
    settings did not finish within the widget's time limit or were refused)."""
    if not any(abs(float(log10_n) - v) < 1e-9 for v in WIDGET_LOG10_N):
        raise ParameterError(
            f"log10 n must be one of {', '.join(f'{v:g}' for v in WIDGET_LOG10_N)} in this "
            f"widget (larger n takes minutes and gigabytes here), got {log10_n:g}; use "
            "amp.epsilon(..., rounds=T) in a notebook for larger n")
    if not 0.5 <= float(eps0) <= 6.0:
        raise ParameterError(f"eps0 must be in [0.5, 6] in this widget, got {eps0:g}")
    if not 0.05 <= float(sampling) <= 1.0:
        raise ParameterError(f"q must be in [0.05, 1] in this widget, got {sampling:g}")
    if not -8 <= int(delta_exponent) <= -4:
        raise ParameterError(f"log10 delta must be in [-8, -4] in this widget, got "
                             f"{delta_exponent}; use amp.epsilon(..., rounds=T) in a notebook "
                             "for smaller delta")
    mech = make_mechanism(mechanism, float(eps0))
    return mech, int(round(10 ** float(log10_n))), 10.0 ** int(delta_exponent)


def rounds_widget(mechanism: str = "k-RR", eps0: float = 2.0, log10_n: float = 4.0,
                  sampling: float = 1.0, delta_exponent: int = -6,
                  precomputed: Mapping[tuple, RoundsCurves] | None = None):
    """Interactive eps after ``T`` rounds (``T`` in :data:`WIDGET_ROUNDS`) for a mechanism,
    ``eps0``, ``n`` (log10 n in :data:`WIDGET_LOG10_N`) and sampling rate ``q`` (needs a kernel).

    A status line says "computing…" while a redraw runs (up to about 20 s), then how long it
    took; a refused setting or a failed computation is shown there in red and the figure is
    cleared, so an old figure is never left under new settings. Each redraw runs in a child
    process (:func:`run_limited`: at most :data:`WIDGET_TIMEOUT` seconds and
    :data:`WIDGET_MEMORY` bytes), so no setting can stall or grow the kernel. ``box.redraw()`` redraws with
    the current controls (tests, scripted use); ``box.status`` is the status line.

    ``precomputed`` maps :func:`widget_key` of a setting to its band (``rounds_curves(...,
    WIDGET_ROUNDS, baselines=False)``, e.g. :func:`load_stored_rounds`' ``widget``): such a
    setting, the opening one included, is drawn without computing. A band the widget
    computes is kept too (moving back to a setting is instant).
    """
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")
    plt = pyplot()
    lay = widgets.Layout(width="320px")
    style = {"description_width": "70px"}
    c_mech = widgets.Dropdown(options=list(MECHANISMS), value=mechanism,
                              description="mechanism", layout=lay, style=style)
    c_eps0 = widgets.FloatSlider(value=eps0, min=0.5, max=6.0, step=0.25, layout=lay,
                                 continuous_update=False, description="ε₀", style=style)
    c_n = widgets.SelectionSlider(options=[(f"{v:g}", v) for v in WIDGET_LOG10_N],
                                  value=min(WIDGET_LOG10_N, key=lambda v: abs(v - log10_n)),
                                  continuous_update=False, description="log₁₀ n", layout=lay,
                                  style=style)
    c_q = widgets.FloatSlider(value=sampling, min=0.05, max=1.0, step=0.05, layout=lay,
                              continuous_update=False, description="q", style=style)
    c_delta = widgets.IntSlider(value=delta_exponent, min=-8, max=-4, layout=lay,
                                continuous_update=False, description="log₁₀ δ", style=style)
    controls = (c_mech, c_eps0, c_n, c_q, c_delta)
    status = widgets.HTML(value="")
    out = widgets.Output()
    known: dict[tuple, RoundsCurves] = dict(precomputed or {})

    def redraw(*_):
        for c in controls:
            c.disabled = True
        out.clear_output()
        t0 = time.perf_counter()
        status.value = ("<b>computing…</b> (up to about 20 s; the controls are locked "
                        "until the figure is drawn)")
        try:
            mech, n, delta = check_widget_inputs(c_mech.value, c_eps0.value, c_n.value,
                                                 c_q.value, c_delta.value)
            key = widget_key(c_mech.value, c_eps0.value, c_n.value, c_q.value, c_delta.value)
            curves = known.get(key)
            if curves is None:
                curves = run_limited(rounds_curves, mech, n, delta, WIDGET_ROUNDS,
                                     sampling=c_q.value, baselines=False)
                known[key] = curves
            with out:
                plot_rounds([curves], delta=delta,
                            title=f"{mech.describe()}, n = {n:,}, q = {c_q.value:g}")
                plt.show()
            status.value = (f"done in {time.perf_counter() - t0:.1f} s: certified ε after "
                            f"T = {', '.join(f'{t:,}' for t in WIDGET_ROUNDS)} rounds")
        except ParameterError as exc:
            status.value = (f"<span style='color:{_RED}'><b>setting refused:</b> "
                            f"{html.escape(str(exc))}</span>")
        except (AmpError, MemoryError, WidgetLimitError) as exc:
            status.value = (f"<span style='color:{_RED}'><b>computation failed:</b> "
                            f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>")
        except Exception as exc:     # noqa: BLE001 - a widget must say so, never stay silent
            status.value = (f"<span style='color:{_RED}'><b>computation failed "
                            f"(unexpected):</b> {html.escape(type(exc).__name__)}: "
                            f"{html.escape(str(exc))}</span>")
        finally:
            for c in controls:
                c.disabled = False

    for c in controls:
        c.observe(redraw, names="value")
    box = widgets.VBox([widgets.HBox([c_mech, c_eps0]), widgets.HBox([c_n, c_q]), c_delta,
                        status, out])
    box.redraw = redraw
    box.status = status
    box.controls = dict(zip(("mechanism", "eps0", "log10_n", "sampling", "delta_exponent"),
                            controls))
    redraw()
    return box
