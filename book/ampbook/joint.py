"""Joint composition (Section 6): the central eps of ``k``-joint versions at a fixed total eps0.

A ``k``-joint version of a mechanism composes ``k`` copies with ``eps0 / k`` each
(:func:`ampbook.experiments.experiment_mechanism`), so all share the same total ``eps0``
(Theorem 1). This module computes and draws them for Chapter 6:

* :func:`joint_certified`, :func:`joint_pair_types`: certified eps (:func:`amp.epsilon`,
  :func:`amp.epsilon_for` on a :class:`amp.PrivacyProfile` of one pair type);
* :func:`joint_estimates`: fast *uncertified* saddle-point estimates for the widget;
* :func:`ratio_spread`: the spread of the blanket likelihood ratios (descriptive, not a bound);
* :func:`stored_joint_points`, :func:`joint_rows`, :func:`spread_rows`: tables from the stored
  curves (:mod:`ampbook.stored`);
* the figures :func:`plot_joint_curves`, :func:`plot_joint_vs_k`, :func:`plot_joint_choice`,
  :func:`plot_joint_blanket`, :func:`plot_joint_figure`.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

from amp.api import epsilon, epsilon_estimate, epsilon_for
from amp.baselines import clone_epsilon
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism
from amp.privacy_profile import PrivacyProfile, laws_for
from ampbook.experiments import EXPERIMENT_MECHANISMS, experiment_mechanism, plot_experiment_panel
from ampbook.stored import curve, curve_value, panel
from ampbook.style import PANEL_FIGSIZE, delta_label, new_axes, pyplot

__all__ = [
    "JOINT_KEYS", "joint_estimates", "joint_certified", "joint_pair_types", "ratio_spread",
    "stored_joint_points", "joint_rows", "spread_rows",
    "plot_joint_curves", "plot_joint_vs_k", "plot_joint_choice", "plot_joint_blanket",
    "plot_joint_figure",
]

#: Curves of the Chapter 6 figure: the single randomizer, the 2- and 4-joint versions, the clone.
JOINT_KEYS = ("upper", "joint2_upper", "joint4_upper", "clone")


# ============================================================================ computations
def joint_estimates(name: str, eps0: float, n: int, delta: float,
                    ks: Iterable[int] = range(1, 9)) -> np.ndarray:
    """Uncertified saddle-point estimate of the central eps of ``k``-joint versions (Section 6).

    For each ``k``: the mechanism ``name`` composed ``k`` times with ``eps0 / k`` per component
    (total ``eps0``, Theorem 1), and :func:`amp.api.epsilon_estimate` (the maximum over every
    pair type of joint inputs). A few ms to about 30 ms per ``k``: for figures and the widget
    only; the certified values come from :func:`joint_certified`. ``nan`` where the estimate
    fails.
    """
    out = []
    for k in ks:
        mech = experiment_mechanism(name, eps0, int(k))
        try:
            out.append(epsilon_estimate(mech, int(n), delta))
        except (ArithmeticError, ValueError):
            out.append(math.nan)
    return np.array(out, dtype=float)


def joint_certified(name: str, eps0: float, n: int, delta: float,
                    ks: Iterable[int] = (1, 2, 3, 4), *, bound: str = "upper",
                    rel_tol: float = 1e-2) -> list[Bound]:
    """Certified eps (:func:`amp.epsilon`) of the ``k``-joint versions with total ``eps0``
    (Section 6), one :class:`amp.Bound` per ``k``.

    ``bound="upper"``: Theorem 4 maximised over every pair type of joint inputs;
    ``bound="lower"``: Theorem 5 with joint inputs distinct in every component.
    """
    return [epsilon(experiment_mechanism(name, eps0, int(k)), int(n), delta, bound=bound,
                    rel_tol=rel_tol) for k in ks]


def joint_pair_types(name: str, eps0: float, k: int, n: int, delta: float, *,
                     rel_tol: float = 1e-2) -> list[tuple[int, Bound]]:
    """Certified upper eps of each pair type of the ``k``-joint version, as ``(s, bound)``.

    ``s`` is the number of components in which the two joint inputs differ (``s = k``: the
    pair of the paper's experiments). Each is :func:`amp.epsilon_for` of the
    :class:`amp.PrivacyProfile` restricted to that pair type's law; the certified bound of the
    joint mechanism is the maximum over ``s``
    (:meth:`amp.mechanisms.joint.JointMechanism.gparv_laws`).
    """
    mech = experiment_mechanism(name, eps0, int(k))
    if not isinstance(mech, JointMechanism):
        mech = JointMechanism([mech])
    return [(len(jp.differ), epsilon_for(PrivacyProfile(mech, int(n), laws=[jp.law]), delta,
                                         rel_tol=rel_tol))
            for jp in mech.pairs()]


def ratio_spread(laws: Iterable[GPARV]) -> float:
    """Standard deviation of the GPARV at ``eps = 0``, ``sqrt(E[G_0^2])``, maximised over laws.

    ``G_0 = a - b`` on the blanket (0 off it) has mean 0 (Property 2), so this is the spread of
    the blanket likelihood ratios. By the central limit theorem the sum in Theorem 4 is about
    ``N(n (1 - e^eps), n sigma^2)``, so for large ``n`` the central eps scales like
    ``sigma / sqrt(n)``: a descriptive number for Chapter 6, not a bound.
    """
    return max(math.sqrt(math.fsum(law.p * (law.a - law.b) ** 2)) for law in laws)


# ============================================================================ stored tables
def stored_joint_points(data: Mapping | None, mechanism: str, eps0: float, n: int,
                        delta: float | None = None) -> dict[int, float]:
    """Certified upper eps of the ``k``-joint versions stored in ``figures.json`` (``k = 1, 2,
    4``) at ``(mechanism, eps0, n)``; empty when that point was not computed (or ``delta``
    differs from the stored one)."""
    if data is None:
        return {}
    if delta is not None and not math.isclose(delta, data["inputs"]["delta"], rel_tol=1e-9):
        return {}
    try:
        pnl = panel(data, mechanism, eps0)
    except ParameterError:
        return {}
    out = {}
    for k, key in ((1, "upper"), (2, "joint2_upper"), (4, "joint4_upper")):
        if key in pnl["curves"]:
            ns, v = curve(pnl, key)
            i = np.flatnonzero(ns == n)
            if i.size:
                out[k] = float(v[i[0]])
    return out


def joint_rows(data: Mapping, ns: Iterable[int] = (10_000, 100_000)) -> list[list[object]]:
    """Rows ``[mechanism, eps0, n, eps of k = 1, 2, 4, clone, clone / 4-joint]`` (Chapter 6).

    ``k = 1`` is the single randomizer at ``eps0``; ``k = 2, 4`` the joint compositions with
    ``eps0 / k`` per component (certified upper bounds); ``clone`` the generic standard clone at
    the same total ``eps0``; the last column is the ratio of the clone's eps to the 4-joint's.
    """
    rows = []
    for pnl in data["panels"]:
        for n in ns:
            v = [curve_value(pnl, key, n) for key in JOINT_KEYS]
            rows.append([pnl["mechanism"], pnl["eps0"], int(n), *v, v[3] / v[2]])
    return rows


def spread_rows(data: Mapping, n: int = 100_000) -> list[list[object]]:
    """Rows ``[mechanism, eps0, sigma_2/sigma_1, eps_2/eps_1, sigma_4/sigma_1, eps_4/eps_1]``.

    ``sigma_k``: :func:`ratio_spread` of the ``k``-joint version at the panel's total ``eps0``;
    ``eps_k``: its stored certified eps at ``n`` (Chapter 6: the central eps follows the spread
    of the blanket likelihood ratios, not the blanket mass).
    """
    rows = []
    for pnl in data["panels"]:
        name, e0 = pnl["mechanism"], pnl["eps0"]
        sig = {k: ratio_spread(laws_for(experiment_mechanism(name, e0, k), "upper"))
               for k in (1, 2, 4)}
        eps = {k: curve_value(pnl, key, n) for k, key in ((1, "upper"), (2, "joint2_upper"),
                                                          (4, "joint4_upper"))}
        rows.append([name, e0, sig[2] / sig[1], eps[2] / eps[1], sig[4] / sig[1],
                     eps[4] / eps[1]])
    return rows


# ============================================================================ figures
def plot_joint_curves(ns: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                      clone: Sequence[float] | None = None, title: str = "", ax=None):
    """Central ``e^eps - 1`` against ``n`` for ``k``-joint versions at the same total ``eps0``."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    markers = ["o", "^", "v", "s", "D"]
    for i, (label, values) in enumerate(curves.items()):
        ax.plot(ns, np.expm1(np.asarray(values, dtype=float)), marker=markers[i % 5], ms=4,
                color=f"C{[0, 4, 5, 2, 3][i % 5]}", label=label)
    if clone is not None:
        ax.plot(ns, np.expm1(np.asarray(clone, dtype=float)), color="C1", ls="--",
                label="standard clone (generic), same total $\\varepsilon_0$")
    ax.set(xscale="log", yscale="log", xlabel=r"number of users $n$",
           ylabel=r"$e^{\varepsilon} - 1$")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_joint_vs_k(ks: Sequence[int], estimate: Sequence[float] | None = None, *,
                    certified: Mapping[int, float] | None = None, clone: float | None = None,
                    title: str = "", ax=None):
    """Central ``e^eps - 1`` against the number ``k`` of composed randomizers (Section 6).

    Each ``k``-joint version has ``eps0 / k`` per component, so all share the same total
    ``eps0``. ``estimate``: saddle-point estimates (line, uncertified); ``certified``: ``{k:
    eps}`` certified upper bounds (dots); ``clone``: the generic standard clone bound at the
    total ``eps0`` (horizontal line).
    """
    ax = new_axes(ax, PANEL_FIGSIZE)
    ks = np.asarray(ks, dtype=int)
    if estimate is not None:
        ax.plot(ks, np.expm1(np.asarray(estimate, dtype=float)), color="C0", ls="--", lw=1.5,
                label="k-joint, saddle-point estimate (uncertified)")
    if certified:
        kk = np.array(sorted(certified))
        ax.plot(kk, np.expm1([certified[k] for k in kk]), "o", color="C0", ms=6,
                label="k-joint, certified upper bound (Theorem 4, §5.1)")
    if clone is not None:
        ax.axhline(math.expm1(clone), color="C1", lw=1.8,
                   label=r"standard clone (generic), same total $\varepsilon_0$")
    ax.set(yscale="log", xlabel=r"number $k$ of composed randomizers ($\varepsilon_0/k$ each)",
           ylabel=r"$e^{\varepsilon} - 1$")
    ax.set_xticks(ks)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_joint_choice(mechanism: str = "10-RR", eps0: float = 2.0, n: int = 10_000, *,
                      delta: float = 1e-6, k_max: int = 8, data: Mapping | None = None,
                      certified: Mapping[int, float] | None = None, ax=None):
    """The Chapter 6 figure for one choice of mechanism, total ``eps0`` and ``n`` (the widget's
    figure; about 0.1-0.5 s).

    Draws :func:`plot_joint_vs_k` with the saddle-point estimates of :func:`joint_estimates` for
    ``k = 1..k_max``, the certified standard clone (:func:`amp.baselines.clone_epsilon` with a
    relative bracket of ``1e-3``), and certified dots: ``certified`` if given, else the values
    stored in ``data`` (:func:`stored_joint_points`) when the choice is a stored point.
    """
    ks = list(range(1, int(k_max) + 1))
    est = joint_estimates(mechanism, eps0, n, delta, ks)
    clone = float(clone_epsilon(eps0, n, delta, xtol=1e-3).value)
    dots = dict(certified) if certified is not None else \
        stored_joint_points(data, mechanism, eps0, n, delta)
    dots = {k: v for k, v in dots.items() if k <= k_max}
    n_txt = f"{int(n):,}".replace(",", "{,}")
    return plot_joint_vs_k(ks, est, certified=dots, clone=clone, ax=ax,
                           title=rf"{mechanism}, total $\varepsilon_0 = {eps0:g}$, "
                                 rf"$n = {n_txt}$, $\delta = {delta_label(delta, '.2g')}$")


def plot_joint_blanket(ks: Sequence[int], gammas: Mapping[str, Sequence[float]], *,
                       clone_mass: float | None = None, title: str = "", ax=None):
    """Blanket mass ``gamma`` of ``k``-joint versions at a fixed total ``eps0`` (Section 6).

    ``gammas`` maps a mechanism to its ``gamma`` for each ``k`` (the product of the components'
    masses); ``clone_mass`` is the shared mass ``e^-eps0`` of the standard clone decomposition,
    which only sees the total ``eps0``.
    """
    ax = new_axes(ax, PANEL_FIGSIZE)
    markers = ["o", "s", "^", "v", "D"]
    for i, (label, values) in enumerate(gammas.items()):
        ax.plot(ks, values, marker=markers[i % 5], ms=4, color=f"C{i}", label=label)
    if clone_mass is not None:
        ax.axhline(clone_mass, color="black", ls="--", lw=1.2,
                   label=r"standard clone: shared mass $e^{-\varepsilon_0}$")
    ax.set(xlabel=r"number $k$ of composed randomizers ($\varepsilon_0/k$ each)",
           ylabel=r"blanket mass $\gamma$")
    ax.set_xticks(list(ks))
    ax.set_ylim(0, 1)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_joint_figure(data: Mapping, eps0: float, mechanisms: Sequence[str] | None = None, *,
                      keys: Iterable[str] = JOINT_KEYS):
    """The ``k``-joint curves of Figures 2 and 3 at one ``eps0``: a 2 x 2 grid of mechanisms,
    ``e^eps - 1`` against ``n``, from the stored curves."""
    plt = pyplot()
    names = list(mechanisms) if mechanisms is not None else list(EXPERIMENT_MECHANISMS)
    rows = (len(names) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(9.0, 3.2 * rows), layout="constrained",
                             squeeze=False, sharex=True)
    for ax, name in zip(axes.ravel(), names):
        plot_experiment_panel(panel(data, name, eps0), keys=list(keys), ax=ax, legend=False,
                              title=name)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize="small")
    return fig
