"""Static figures of the book that draw given numbers (Chapters 1-5, 8 and 9).

Presentation only: the numbers come from :mod:`amp` (``amp.epsilon``, ``amp.delta``, the
oracles and baselines) or from :mod:`ampbook.illustrations`; matplotlib is imported when a
figure is drawn (:mod:`ampbook.style`). Each ``plot_*`` function draws on a given Axes (or a new
figure) and returns the Axes; the notebooks end the cell with ``plt.show()``. The figures of
stored experiments and of joint composition live in :mod:`ampbook.experiments` and
:mod:`ampbook.joint`.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV
from ampbook.illustrations import clone_pair_table
from ampbook.style import PANEL_FIGSIZE, delta_label, finish_delta_axes, new_axes

__all__ = [
    "plot_blanket_mass", "plot_eps_vs_n", "plot_hockey_stick", "plot_delta_curves",
    "plot_decomposition", "plot_gparv_atoms", "plot_discretisation_error",
    "plot_clone_pair", "plot_delta_comparison",
    "plot_conjecture_curves", "plot_conjecture_ratios", "plot_count_laws", "plot_proof_identity",
]


# ============================================================================ Chapters 1-2
def plot_blanket_mass(eps0_grid: np.ndarray, gammas: Mapping[str, Sequence[float]], *,
                      mark: tuple[float, float] | None = None, ax=None):
    """Blanket mass ``gamma`` against ``eps0``, one line per entry of ``gammas`` (Chapter 1)."""
    ax = new_axes(ax)
    for label, values in gammas.items():
        ax.plot(eps0_grid, values, label=label)
    if mark is not None:
        ax.plot([mark[0]], [mark[1]], "o", color="black", label="selected")
    ax.set(xlabel=r"local privacy $\varepsilon_0$", ylabel=r"blanket mass $\gamma$",
           ylim=(0, 1.02))
    ax.legend()
    return ax


def plot_eps_vs_n(ns: Sequence[int] | None = None, upper: Sequence[float] | None = None, *,
                  lower: Sequence[float] | None = None,
                  estimate: tuple[Sequence[int], Sequence[float]] | None = None,
                  eps0: float | None = None, delta: float | None = None, title: str = "",
                  ax=None):
    """Central ``eps`` against the number of users ``n`` (log-log).

    ``upper``/``lower``: certified values at ``ns`` (markers); ``estimate``: ``(n_grid, eps)``
    of an uncertified estimate (dashed); ``eps0``: the level without shuffling (dotted).
    """
    ax = new_axes(ax)
    if estimate is not None:
        ax.plot(estimate[0], estimate[1], "--", color="C0", alpha=0.7,
                label="estimate (saddle point, uncertified)")
    if upper is not None:
        ax.plot(ns, upper, "o-", color="C0", label="certified upper bound (blanket, Theorem 4, §5.1)")
    if lower is not None:
        ax.plot(ns, lower, "s:", color="C3", label="certified lower bound (Theorem 5, §5.3)")
    if eps0 is not None:
        ax.axhline(eps0, color="grey", ls=":", label=r"no shuffling: $\varepsilon = \varepsilon_0$")
    ylabel = r"central $\varepsilon$"
    if delta is not None:
        ylabel += rf" at $\delta = {delta_label(delta)}$"
    ax.set(xscale="log", yscale="log", xlabel=r"number of users $n$", ylabel=ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_hockey_stick(p: Sequence[float], q: Sequence[float], eps: float, *,
                      outputs: Sequence[str] | None = None, ax=None):
    """Bars of ``P(y)`` and ``e^eps Q(y)``; the hatched excess sums to ``D_{e^eps}(P || Q)``."""
    ax = new_axes(ax)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    y = np.arange(p.size)
    eq = math.exp(eps) * q
    ax.bar(y - 0.2, p, width=0.4, label=r"$P(y)$", color="C0")
    ax.bar(y + 0.2, eq, width=0.4, label=rf"$e^{{\varepsilon}} Q(y)$, $\varepsilon = {eps:g}$",
           color="C1")
    excess = np.maximum(p - eq, 0.0)
    ax.bar(y - 0.2, excess, bottom=p - excess, width=0.4, fill=False, hatch="///",
           edgecolor="black", label=r"$(P(y) - e^{\varepsilon} Q(y))_+$")
    ax.set_xticks(y, outputs if outputs is not None else [str(v) for v in y])
    ax.set(xlabel=r"output $y$", ylabel="probability")
    ax.legend(fontsize="small")
    return ax


def plot_delta_curves(eps: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                      logy: bool = True, title: str = "", ax=None):
    """``delta(eps)`` curves, one line per entry of ``curves`` (label -> values at ``eps``)."""
    ax = new_axes(ax)
    styles = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1))]
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        if logy:
            v = np.where(v > 0, v, np.nan)
        ax.plot(eps, v, ls=styles[i % len(styles)], label=label)
    return finish_delta_axes(ax, logy, title)


# ============================================================================ Chapters 3-5
def plot_clone_pair(n: int, eps0: float, *, ax=None):
    """Laws of the first coordinate ``u`` under the standard clone pair (Theorem 3)."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    keys, p0, p1 = clone_pair_table(n, eps0)
    u = np.array([k[0] for k in keys])
    m0 = np.bincount(u, weights=p0)
    m1 = np.bincount(u, weights=p1)
    x = np.arange(m0.size)
    ax.bar(x - 0.2, m0, width=0.4, color="C0", label=r"$P_0^C$: first coordinate")
    ax.bar(x + 0.2, m1, width=0.4, color="C1", label=r"$P_1^C$: first coordinate")
    ax.set(xlabel=r"number of outputs attributed to $x_1^0$ (clones included)",
           ylabel="probability")
    ax.set_title(rf"standard clone pair, $n = {n}$, $\varepsilon_0 = {eps0:g}$")
    ax.legend(fontsize="small")
    return ax


def plot_delta_comparison(eps: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                          invalid: Iterable[str] = (), truth: Iterable[str] = (),
                          title: str = "", logy: bool = True, floor: float | None = None,
                          ax=None):
    """``delta(eps)`` curves; labels in ``invalid`` are drawn grey-dashed and marked
    "NOT a valid bound", labels in ``truth`` as black markers (exact divergences).

    ``floor``: a level below which a certified curve is not resolved (the caller cuts such
    points, passing NaN); drawn as a dotted grey line so the cut is visible."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    invalid, truth = set(invalid), set(truth)
    k = 0
    for label, values in curves.items():
        v = np.asarray(values, dtype=float)
        if logy:
            v = np.where(v > 0, v, np.nan)
        if label in invalid:
            ax.plot(eps, v, color="0.45", ls=(0, (4, 2)), lw=2,
                    label=f"{label} (NOT a valid bound)")
        elif label in truth:
            ax.plot(eps, v, "o", color="black", ms=4, label=label)
        else:
            ax.plot(eps, v, color=f"C{k}", lw=1.8, label=label)
            k += 1
    if floor is not None:
        ax.axhline(floor, color="0.5", ls=":", lw=1.2,
                   label="floating-point floor (upper bound cut below it)")
    return finish_delta_axes(ax, logy, title)


def plot_decomposition(decomposition, component_labels: Sequence[str], *, ax=None):
    """Stacked weights of a general clone decomposition (Section 4.1, equation (2)).

    One bar per row: ``R(x0)`` (weights ``a_j``), ``R(x1)`` (``b_j``) and ``R(x_i)``
    (``c_j`` and the leftover weight ``beta``), each segment labelled by its component.
    """
    ax = new_axes(ax, figsize=(6.4, 2.6))
    a, b, c, beta = decomposition.a, decomposition.b, decomposition.c, decomposition.beta
    if len(component_labels) != a.size:
        raise ParameterError(f"need {a.size} component labels, got {len(component_labels)}")
    rows = [r"$\mathcal{R}(x_1^0)$", r"$\mathcal{R}(x_1^1)$", r"$\mathcal{R}(x_i),\ i \geq 2$"]
    weights = np.vstack([np.append(a, 0.0), np.append(b, 0.0), np.append(c, beta)])
    labels = list(component_labels) + [r"leftover $Q_i$ ($\beta$)"]
    left = np.zeros(3)
    for j, lab in enumerate(labels):
        ax.barh(rows, weights[:, j], left=left, label=lab, color=f"C{j}")
        left += weights[:, j]
    ax.invert_yaxis()
    ax.set(xlabel="weight in the mixture", xlim=(0, 1))
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax


def plot_gparv_atoms(law: GPARV, eps: float, *, ax=None):
    """Stem plot of the atoms of ``G_eps`` with Property 2's support and mean (Section 5.1)."""
    ax = new_axes(ax)
    g, p = law.atoms(eps)
    ax.vlines(g, 0, p, color="C0")
    ax.plot(g, p, "o", color="C0", label=r"atoms of $G_\varepsilon$")
    e, E = math.exp(eps), math.exp(law.eps0)
    ax.axvspan(1 - e * E, E - e, color="C2", alpha=0.12,
               label=r"Property 2: $[1 - e^{\varepsilon+\varepsilon_0},\ e^{\varepsilon_0} - e^{\varepsilon}]$")
    ax.axvline(law.mean(eps), color="C3", ls="--",
               label=rf"mean $1 - e^{{\varepsilon}} = {1 - e:.3g}$")
    ax.set(xlabel=r"value of $G_\varepsilon$", ylabel="probability", ylim=(0, None),
           title=law.label + rf", $\varepsilon = {eps:g}$")
    ax.legend(fontsize="small")
    return ax


def plot_discretisation_error(steps: Sequence[float], errors: Mapping[str, Sequence[float]], *,
                              mark_step: float | None = None, ax=None):
    """Relative error of lattice values against the grid step ``l`` (log-log)."""
    ax = new_axes(ax)
    for (label, values), style in zip(errors.items(), ("o-", "s-", "^-", "d-")):
        ax.plot(steps, values, style, label=label)
    if mark_step is not None:
        ax.axvline(mark_step, color="grey", ls=":",
                   label=r"paper's $l = (e^{\varepsilon_0} - 1)/1200$")
    ax.set(xscale="log", yscale="log", xlabel=r"grid step $l$",
           ylabel="relative error (lattice / exact − 1)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


# ============================================================================ Chapters 8-9
def plot_conjecture_curves(eps: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                           upper: Sequence[float] | None = None, title: str = "", ax=None):
    """Exact ``delta(eps)`` of several neighbouring pairs, with the certified upper bound."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        ax.plot(eps, np.where(v > 0, v, np.nan), lw=1.8, color=f"C{i}", label=label)
    if upper is not None:
        u = np.asarray(upper, dtype=float)
        ax.plot(eps, np.where(u > 0, u, np.nan), color="black", ls="--", lw=1.2,
                label="certified upper bound (Theorem 4, §5.1)")
    ax.set(yscale="log", xlabel=r"central $\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_conjecture_ratios(reports: Sequence, *, ax=None):
    """Ratio of the largest divergence over all pairs to the conjectured pair's, against
    ``eps / eps0``, one line per :class:`amp.oracles.conjecture.ConjectureReport`."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    for i, rep in enumerate(reports):
        x = np.array([f.eps for f in rep.findings]) / rep.eps0
        y = np.array([f.ratio for f in rep.findings])
        ax.plot(x, y, marker="o", ms=4, color=f"C{i % 10}", label=f"{rep.label}, n = {rep.n}")
    ax.axhline(1.0, color="black", lw=1)
    ax.set(yscale="log", xlabel=r"$\varepsilon / \varepsilon_0$",
           ylabel="max over all pairs / conjectured pair")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")
    return ax


def plot_count_laws(report, *, ax=None):
    """Total variation of each statement of the Appendix A law from the seeded simulation
    (:class:`amp.oracles.appendix_a.AppendixAReport`)."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    names = list(report.tv)
    vals = [report.tv[k] for k in names]
    ax.barh(range(len(names)), vals, color=["C0", "C1", "C3"][: len(names)])
    ax.axvline(report.tv_noise, color="black", ls="--", lw=1,
               label="Monte Carlo noise level")
    ax.set_yticks(range(len(names)), names)
    ax.set(xscale="log", xlabel=r"total variation from the simulation of $(N_0, N_1)$")
    ax.set_title(rf"$k = {report.k}$, $\varepsilon_0 = {report.eps0:g}$, $n = {report.n}$, "
                 f"{report.n_samples:,} samples (seed {report.seed})", fontsize="medium")
    ax.legend(fontsize="small")
    return ax


def plot_proof_identity(direct: Sequence[float], factored: Sequence[float], *, title: str = "",
                        ax=None):
    """Scatter of the two sides of the key identity in Appendix B, one point per histogram."""
    ax = new_axes(ax, figsize=(4.8, 4.2))
    d, f = np.asarray(direct, dtype=float), np.asarray(factored, dtype=float)
    ax.loglog(f, d, "o", ms=3, color="C0", label="one output histogram $Y$")
    lim = [min(d.min(), f.min()) / 2, max(d.max(), f.max()) * 2]
    ax.plot(lim, lim, color="black", lw=1, label="equality")
    ax.set(xlabel=r"$\mathbb{P}[\mathbf{W}_n = Y] \cdot \frac{1}{n}\sum_i "
                  r"\mathcal{R}(x_1^0)(y_i)/\mathcal{R}(x_2)(y_i)$",
           ylabel=r"$\mathbb{P}[\{Y_1^0\} \cup \mathbf{W}_{n-1} = Y]$")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    return ax
