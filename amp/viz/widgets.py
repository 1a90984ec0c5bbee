"""Interactive figures of the book (need a kernel; ipywidgets is imported when one is built).

Each widget redraws a static figure of :mod:`amp.viz.plots`, :mod:`amp.viz.experiments` or
:mod:`amp.viz.joint`; the book shows that static figure first, at the widget's default values.
The calculator of Chapter 10 answers with the front door (:func:`amp.epsilon`,
:func:`amp.calibrate_eps0`) and prints the equivalent command line (:func:`cli_line`).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from amp.api import calibrate_eps0, epsilon
from amp.core.errors import AmpError, ParameterError
from amp.core.extras import require
from amp.mechanisms import registry
from amp.mechanisms.base import Mechanism
from amp.viz.experiments import (EXPERIMENT_MECHANISMS, eps_estimate_versus_n,
                                 plot_experiment_panel)
from amp.viz.joint import plot_joint_choice
from amp.viz.plots import plot_eps_vs_n, plot_gparv_atoms
from amp.viz.stored import panel
from amp.viz.style import show

__all__ = ["MECHANISMS", "make_mechanism", "cli_line",
           "eps_vs_n_widget", "gparv_widget", "calculator_widget", "experiments_widget",
           "joint_widget"]

#: Mechanisms offered by the widgets: display name -> registry name
#: (:mod:`amp.mechanisms.registry`, the one registry of mechanism names; also the CLI's).
MECHANISMS: dict[str, str] = {
    "k-RR": "krr", "RAPPOR": "rappor", "OUE": "oue", "BLH": "blh", "Hadamard response": "hadamard",
}


def make_mechanism(name: str, eps0: float, size: int | None = None) -> Mechanism:
    """Mechanism of :data:`MECHANISMS` by name; ``size`` is ``k`` for k-RR (default 10) and the
    domain size ``d`` otherwise (``None``: the Table 1 row)."""
    if name not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {name!r}")
    key = MECHANISMS[name]
    if key == "krr":
        return registry.make(key, eps0, k=10 if size is None else size)
    return registry.make(key, eps0, d=size)


def cli_line(command: str, name: str, size: int | None = None, **values: float) -> str:
    """The ``python -m amp`` command line answering the same question as the API call.

    ``command`` is ``delta``, ``epsilon`` or ``eps0``; ``values`` holds ``n``, ``eps0``, ``eps``,
    ``delta`` (those given are passed, in that order).
    """
    if command not in ("delta", "epsilon", "eps0"):
        raise ParameterError(f"command must be delta, epsilon or eps0, got {command!r}")
    cli = MECHANISMS.get(name, name)
    parts = ["python -m amp", command, "--mechanism", cli]
    if size is not None:
        parts += ["--k" if cli == "krr" else "--d", str(int(size))]
    for key in ("eps0", "n", "eps", "delta"):
        if key in values and values[key] is not None:
            v = values[key]
            text = f"{float(v):g}".replace("e-0", "e-").replace("e+0", "e+")
            parts += [f"--{key}", str(int(v)) if key == "n" else text]
    return " ".join(parts)


# ============================================================================ Chapters 1, 5
def eps_vs_n_widget(mechanism: str = "k-RR", eps0: float = 4.0, log10_n: tuple[int, int] = (2, 6),
                    delta_exponent: int = -6):
    """Interactive central ``eps`` against ``n`` (Chapter 1; needs a kernel).

    The dashed estimate (:func:`amp.viz.experiments.eps_estimate_versus_n`) is fast (about 0.1 s
    per redraw); ticking *certified points* adds certified upper bounds (:func:`amp.epsilon`)
    at three values of ``n`` (a few seconds).
    """
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    def draw(mechanism, eps0, log10_n, delta_exponent, certified):
        mech = make_mechanism(mechanism, eps0)
        delta = 10.0 ** delta_exponent
        lo, hi = log10_n
        grid = np.unique(np.logspace(lo, hi, 25).astype(int))
        est = eps_estimate_versus_n(mech, grid, delta)
        ns, up = None, None
        if certified:
            ns = np.unique(np.logspace(lo, hi, 3).astype(int))
            try:
                up = [epsilon(mech, int(n), delta, rel_tol=3e-2).value for n in ns]
            except AmpError as exc:
                print(f"certified points unavailable: {exc}")
                ns = None
        show(plot_eps_vs_n(ns, up, estimate=(grid, est), eps0=eps0, delta=delta,
                           title=mech.describe()))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.5, max=8.0, step=0.25,
                                 continuous_update=False, description="ε₀"),
        log10_n=widgets.IntRangeSlider(value=log10_n, min=1, max=7, continuous_update=False,
                                       description="log₁₀ n"),
        delta_exponent=widgets.IntSlider(value=delta_exponent, min=-12, max=-3,
                                         continuous_update=False, description="log₁₀ δ"),
        certified=widgets.Checkbox(value=False, description="certified points (slower)"),
    )


def gparv_widget(mechanism: str = "k-RR", eps0: float = 2.0, eps: float = 0.5):
    """Interactive atoms of the GPARV ``G_eps`` of a Table 1 mechanism (Chapter 5)."""
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    def draw(mechanism, eps0, eps):
        law = make_mechanism(mechanism, eps0).gparv()
        show(plot_gparv_atoms(law, eps))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.25, max=6.0, step=0.25, description="ε₀"),
        eps=widgets.FloatSlider(value=eps, min=0.0, max=3.0, step=0.05, description="ε"),
    )


# ============================================================================ Chapters 6, 7
def experiments_widget(data: Mapping, mechanism: str = "10-RR", regime: str = "large"):
    """One panel of Figures 2/3 from the stored curves, with a choice of mechanism, regime and
    curve groups (Chapter 7; needs a kernel; each redraw only re-plots stored data)."""
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    eps0s = sorted({p["eps0"] for p in data["panels"]})
    names = sorted({p["mechanism"] for p in data["panels"]},
                   key=lambda s: list(EXPERIMENT_MECHANISMS).index(s))

    def draw(mechanism, regime, ours, baselines, joint):
        keys = (["upper", "lower"] if ours else []) + \
               (["clone", "hoeffding", "bennett"] if baselines else []) + \
               (["joint2_upper", "joint2_lower", "joint4_upper", "joint4_lower"] if joint else [])
        e0 = eps0s[0] if regime == "low" else eps0s[-1]
        show(plot_experiment_panel(panel(data, mechanism, e0), keys=keys))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=names, value=mechanism, description="mechanism"),
        regime=widgets.ToggleButtons(options=[(f"low ε₀ = {eps0s[0]:g}", "low"),
                                              (f"large ε₀ = {eps0s[-1]:g}", "large")],
                                     value=regime, description="ε₀"),
        ours=widgets.Checkbox(value=True, description="ours (upper, lower)"),
        baselines=widgets.Checkbox(value=True, description="baselines"),
        joint=widgets.Checkbox(value=True, description="2-, 4-joint"),
    )


def joint_widget(data: Mapping | None = None, mechanism: str = "10-RR", eps0: float = 2.0,
                 n: int = 10_000, k_max: int = 8, delta: float = 1e-6):
    """Central eps of ``k``-joint versions at a chosen total ``eps0`` (Chapter 6; needs a kernel).

    Each redraw calls :func:`amp.viz.joint.plot_joint_choice` (saddle-point estimates and the
    certified clone, well under a second); the dots are the certified values stored in ``data``
    when the choice is a stored point (``eps0`` of a stored panel, ``n`` on the stored grid).
    """
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    ns = sorted(int(x) for x in data["inputs"]["n"]) if data is not None else \
        [1_000, 3_162, 10_000, 31_623, 100_000]
    if n not in ns:
        n = min(ns, key=lambda x: abs(math.log(x / n)))

    def draw(mechanism, eps0, n, k_max):
        show(plot_joint_choice(mechanism, round(eps0, 6), n, delta=delta, k_max=k_max,
                               data=data))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=list(EXPERIMENT_MECHANISMS), value=mechanism,
                                   description="mechanism"),
        eps0=widgets.FloatSlider(value=eps0, min=0.1, max=4.0, step=0.1,
                                 continuous_update=False, description="total ε₀"),
        n=widgets.SelectionSlider(options=[(f"{x:,}", x) for x in ns], value=n,
                                  continuous_update=False, description="n"),
        k_max=widgets.IntSlider(value=k_max, min=2, max=8, continuous_update=False,
                                description="largest k"),
    )


# ============================================================================ Chapter 10
def calculator_widget():
    """The practitioner's calculator of Chapter 10 (needs a kernel; one click per question).

    Certified ``eps`` for ``(mechanism, n, delta, eps0)`` with Theorem 5's lower bound
    (:func:`amp.epsilon`), or the largest ``eps0`` meeting a target ``(eps, delta)``
    (:func:`amp.calibrate_eps0`), with the equivalent CLI line.
    """
    widgets = require("ipywidgets", "plot", purpose="amp.viz widgets")

    mech = widgets.Dropdown(options=list(MECHANISMS), value="k-RR", description="mechanism")
    size = widgets.IntText(value=10, description="k or d",
                           tooltip="k for k-RR; domain size d for the others (0: Table 1 row)")
    n = widgets.IntText(value=10_000, description="n")
    delta_exp = widgets.FloatSlider(value=-6, min=-12, max=-2, step=0.5, description="log₁₀ δ")
    eps0 = widgets.FloatText(value=4.0, description="ε₀")
    target = widgets.FloatText(value=1.0, description="target ε")
    go_eps = widgets.Button(description="certified ε for ε₀")
    go_eps0 = widgets.Button(description="largest ε₀ for target ε")
    out = widgets.Output()

    def params():
        s = size.value if size.value > 0 else None
        if mech.value == "k-RR" and s is None:
            s = 10
        return mech.value, s, int(n.value), 10.0 ** delta_exp.value

    def on_eps(_):
        out.clear_output()
        with out:
            name, s, nn, delta = params()
            try:
                m = make_mechanism(name, eps0.value, s)
                up = epsilon(m, nn, delta)
                lo = epsilon(m, nn, delta, bound="lower")
            except AmpError as exc:
                print(f"error: {exc}")
                return
            print(f"{m.describe()}, n = {nn}, delta = {delta:.3g}")
            print(f"certified eps <= {up.value:.6g}   (blanket upper bound, Theorem 4)")
            print(f"true eps      >= {lo.value:.6g}   (Theorem 5 lower bound)")
            print(cli_line("epsilon", name, s, eps0=eps0.value, n=nn, delta=delta))

    def on_eps0(_):
        out.clear_output()
        with out:
            name, s, nn, delta = params()
            try:
                r = calibrate_eps0(lambda e: make_mechanism(name, e, s), nn, target.value, delta,
                                   rel_tol=1e-2)
            except AmpError as exc:
                print(f"error: {exc}")
                return
            print(f"{name}, n = {nn}, target (eps, delta) = ({target.value:g}, {delta:.3g})")
            print(f"largest certified eps0 = {r.value:.4g}   (bracket [{r.lower:.4g}, {r.upper:.4g}])")
            print(cli_line("eps0", name, s, n=nn, eps=target.value, delta=delta))

    go_eps.on_click(on_eps)
    go_eps0.on_click(on_eps0)
    return widgets.VBox([widgets.HBox([mech, size]), widgets.HBox([n, delta_exp]),
                         widgets.HBox([eps0, go_eps]), widgets.HBox([target, go_eps0]), out])
