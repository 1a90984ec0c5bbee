"""Chapter 14's widgets: certified central eps of a numeric randomizer against n, and what
shuffling buys for a mean (book material).

:func:`numeric_curves` computes, for one randomizer and ``eps0``, the certified bracket of the
shuffled ``eps`` at ``delta`` for a few ``n``: the upper bound of Theorem 4 (§5.1, ``amp.epsilon``)
and the lower bound of Theorem 5 (§5.3, ``bound="lower"``: the exact ``eps`` of one pair of
datasets, so no analysis can certify less), and the variation-ratio number of Wang et al.
(:mod:`coursekit.variation_ratio`, uncertified) for the randomizers it has parameters for.
:func:`numeric_widget` redraws it (needs a kernel); ``scripts/build_static_figures.py`` (``ch14``)
stores the same curves at a grid of its settings for the static site. :func:`mean_errors` and
:func:`mean_widget` (``ch14mean``) do the same for the error of the estimated mean.

Only the randomizers ``amp`` answers in about a second per point are offered (the Laplace
mechanism, a continuous law bracketed by refinement, takes several seconds per point: it is in
the chapter's tables, not in the widget).
"""

from __future__ import annotations

import html
import math

import amp
from amp.core.errors import AmpError

from coursekit.variation_ratio import published_parameters, vr_epsilon

__all__ = ["RANDOMIZERS", "WIDGET_NS", "WIDGET_EPS0S", "numeric_curves", "plot_numeric",
           "numeric_widget", "MEAN_RANDOMIZERS", "MEAN_EPSS", "worst_variance", "mean_errors",
           "mean_widget"]

#: display name -> (constructor, name of its variation-ratio parameters or None)
RANDOMIZERS = {"Duchi et al.": (amp.Duchi, "duchi"),
               "piecewise mechanism": (amp.PiecewiseMechanism, "piecewise"),
               "square wave": (amp.SquareWave, None)}
WIDGET_NS = (1_000, 10_000, 100_000, 1_000_000)
WIDGET_EPS0S = (0.5, 1.0, 2.0, 3.0, 4.0)
#: relative widths asked of amp: the upper end (Theorem 4), the lower bound (Theorem 5), and the
#: search tolerance of the variation-ratio number (uncertified): each redraw stays near a second
#: or two (12 certified points)
REL_TOL = {"upper": 1e-3, "lower": 5e-3}
VR_XTOL = 1e-5


def numeric_curves(name: str, eps0: float, ns=WIDGET_NS, delta: float = 1e-6) -> dict:
    """``{"n", "upper", "lower", "vr"}``: per ``n``, the certified upper end (Theorem 4, §5.1),
    the certified lower bound (Theorem 5, §5.3) and the variation-ratio number (uncertified;
    ``None`` when the randomizer has no published parameters). A point ``amp`` cannot certify
    is ``None``, never a guess."""
    if name not in RANDOMIZERS:
        raise amp.ParameterError(f"randomizer must be one of {list(RANDOMIZERS)}, got {name!r}")
    make, vr_name = RANDOMIZERS[name]
    mech = make(float(eps0))
    out = {"n": list(ns), "upper": [], "lower": [], "vr": []}
    for n in ns:
        for key, bound in (("upper", "upper"), ("lower", "lower")):
            try:
                out[key].append(amp.epsilon(mech, int(n), delta, bound=bound,
                                            rel_tol=REL_TOL[key]).value)
            except AmpError:
                out[key].append(None)
        out["vr"].append(vr_epsilon(*published_parameters(vr_name, float(eps0)), int(n),
                                    delta, xtol=VR_XTOL).value if vr_name else None)
    return out


def plot_numeric(name: str, eps0: float, curves: dict, delta: float = 1e-6):
    """The figure of :func:`numeric_curves` (matplotlib); returns the axes."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ns = curves["n"]
    pts = [(n, lo, up) for n, lo, up in zip(ns, curves["lower"], curves["upper"])
           if lo is not None and up is not None]
    if pts:
        ax.fill_between([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts],
                        color="C0", alpha=0.25,
                        label="certified: Theorem 5, §5.3 to Theorem 4, §5.1")
    ax.loglog(ns, [v if v is not None else math.nan for v in curves["upper"]], "o-",
              color="C0", label="amp: upper bound (Theorem 4, §5.1)")
    if any(v is not None for v in curves["vr"]):
        ax.loglog(ns, [v if v is not None else math.nan for v in curves["vr"]], "--",
                  color="C3", label="variation-ratio number (uncertified)")
    ax.axhline(eps0, color="grey", ls=":", label="no shuffling: ε = ε₀")
    ax.set_xlabel("number of users $n$")
    ax.set_ylabel(f"central ε at δ = {delta:g}")
    ax.set_title(f"{name}, ε₀ = {eps0:g}")
    ax.legend(fontsize=8)
    return ax


def _summary(curves: dict, at: int = 10_000) -> str:
    """One sentence: the certified bracket at ``n = at`` (rounded outwards) and the VR number."""
    i = curves["n"].index(at)
    lo, up, vr = curves["lower"][i], curves["upper"][i], curves["vr"][i]
    if lo is None or up is None:
        return f"At n = {at:,}: amp cannot certify this point."
    text = (f"At n = {at:,}: the true ε lies in [{math.floor(lo * 1e4) / 1e4:.4f}, "
            f"{math.ceil(up * 1e4) / 1e4:.4f}] (certified).")
    if vr is not None:
        text += f" Variation-ratio number: {vr:.4f} (uncertified)."
    return text


def _status_box(pick, slider, out, draw, busy: str):
    """The two widgets' shell: ``draw()`` draws into ``out`` and returns the status text.
    While it runs the controls are disabled and the status says "computing…" (``busy``); a
    refusal of ``amp`` is said in red. ``box.redraw`` redraws (tests, scripted use)."""
    import ipywidgets as widgets

    status = widgets.HTML("")

    def redraw(*_):
        pick.disabled = slider.disabled = True
        status.value = f"<b>computing…</b> ({busy})"
        try:
            status.value = html.escape(draw())
        except AmpError as exc:
            status.value = ("<span style='color:#b00020'><b>cannot compute:</b> "
                            f"{html.escape(str(exc))}</span>")
        finally:
            pick.disabled = slider.disabled = False

    pick.observe(redraw, names="value")
    slider.observe(redraw, names="value")
    box = widgets.VBox([widgets.HBox([pick, slider]), status, out])
    box.redraw = redraw
    redraw()
    return box


def numeric_widget(name: str = "piecewise mechanism", eps0: float = 2.0,
                   delta: float = 1e-6):
    """Interactive figure of Chapter 14 (needs a kernel): choose the randomizer and ``eps0``;
    each redraw computes 12 certified points (about a second or two). While it runs the
    controls are disabled and the status says so; a failure is shown as a message."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    pick = widgets.Dropdown(options=list(RANDOMIZERS), value=name, description="randomizer")
    slider = widgets.SelectionSlider(options=list(WIDGET_EPS0S), value=eps0, description="ε₀",
                                     continuous_update=False)
    out = widgets.Output()

    def draw() -> str:
        curves = numeric_curves(pick.value, slider.value, delta=delta)
        with out:
            out.clear_output(wait=True)
            plot_numeric(pick.value, slider.value, curves, delta)
            plt.show()
        return _summary(curves)

    return _status_box(pick, slider, out, draw, "12 certified points")


# ----------------------------------------------------------------------------- the mean
#: the unbiased mean estimators (square wave's reports are not unbiased)
MEAN_RANDOMIZERS = {"Duchi et al.": amp.Duchi, "piecewise mechanism": amp.PiecewiseMechanism}
MEAN_EPSS = (0.5, 1.0, 2.0)
SETTINGS = ("local", "shuffled", "central")


def worst_variance(name: str, eps0: float) -> float:
    """Largest variance of one user's unbiased report over inputs in ``[-1, 1]``.

    Duchi: ``C^2 - x^2`` with ``C = 1/tanh(eps0/2)``, largest at ``x = 0``. Piecewise mechanism:
    ``E[y^2] - t^2`` from its density (level ``p`` on the window ``[l(t), l(t) + C - 1]``,
    ``p/E`` elsewhere on ``[-C, C]``), by the exact integrals of ``y^2``; largest at ``|t| = 1``.
    """
    if name == "Duchi et al.":
        return 1 / math.tanh(eps0 / 2) ** 2
    m = amp.PiecewiseMechanism(eps0)
    E, C, p = math.exp(eps0), m.C, m.p
    lo = (C + 1) / 2 - (C - 1) / 2                      # l(1) = 1
    hi = lo + C - 1                                      # = C
    second = p / E * (2 * C ** 3 / 3) + (p - p / E) * (hi ** 3 - lo ** 3) / 3
    return second - 1.0


def mean_errors(name: str, eps: float, ns=WIDGET_NS, delta: float = 1e-6) -> dict:
    """Worst-case root-mean-squared error of the estimated mean of ``n`` inputs in ``[-1, 1]``
    at central ``(eps, delta)``: local only (``eps0 = eps``), shuffled (``eps0`` calibrated by
    ``amp.calibrate_eps0``: certified to meet the target, Theorem 4, §5.1) and the central
    Laplace mechanism (``sqrt(8)/(n eps)``). ``eps0`` is ``None`` where amp cannot calibrate."""
    if name not in MEAN_RANDOMIZERS:
        raise amp.ParameterError(f"randomizer must be one of {list(MEAN_RANDOMIZERS)}, "
                                 f"got {name!r}")
    out = {"n": list(ns), "eps0": [], "local": [], "shuffled": [], "central": []}
    local = math.sqrt(worst_variance(name, eps))
    for n in ns:
        try:
            e0 = amp.calibrate_eps0(MEAN_RANDOMIZERS[name], int(n), eps, delta).value
        except AmpError:
            e0 = None
        out["eps0"].append(e0)
        out["local"].append(local / math.sqrt(n))
        out["shuffled"].append(math.sqrt(worst_variance(name, e0) / n) if e0 else None)
        out["central"].append(math.sqrt(8) / (n * eps))
    return out


def mean_widget(name: str = "Duchi et al.", eps: float = 1.0, delta: float = 1e-6):
    """What shuffling buys for a mean (needs a kernel): choose the randomizer and the central
    ``eps``; each redraw calibrates ``eps0`` at four ``n``. Busy state and failures as in
    :func:`numeric_widget`."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    pick = widgets.Dropdown(options=list(MEAN_RANDOMIZERS), value=name,
                            description="randomizer")
    slider = widgets.SelectionSlider(options=list(MEAN_EPSS), value=eps,
                                     description="central ε", continuous_update=False)
    out = widgets.Output()
    looks = {"local": ("local only (ε₀ = ε)", "C1", "s-"),
             "shuffled": ("shuffled (ε₀ calibrated by amp, Theorem 4, §5.1)", "C0", "o-"),
             "central": ("central Laplace", "C2", "^-")}

    def draw() -> str:
        r = mean_errors(pick.value, slider.value, delta=delta)
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(6.4, 3.8))
            for key, (label, col, fmt) in looks.items():
                ax.loglog(r["n"], [v if v is not None else math.nan for v in r[key]], fmt,
                          color=col, label=label, ms=4)
            ax.set_xlabel("number of users $n$")
            ax.set_ylabel("worst-case RMSE of the mean")
            ax.set_title(f"{pick.value}, central ε = {slider.value:g}, δ = {delta:g}")
            ax.legend(fontsize=8)
            plt.show()
        i = r["n"].index(10_000)
        e0 = r["eps0"][i]
        return (
            f"At n = 10,000: shuffled ε₀ = {math.floor(e0 * 1e3) / 1e3:.3f} (certified); "
            f"error {r['shuffled'][i]:.2e} against {r['local'][i]:.2e} local only and "
            f"{r['central'][i]:.2e} central." if e0 else
            "At n = 10,000 amp cannot calibrate ε₀.")

    return _status_box(pick, slider, out, draw, "calibrating ε₀ at four n")
