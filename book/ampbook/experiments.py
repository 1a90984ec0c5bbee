"""Central eps against the number of users: the points and panels of Figures 2 and 3 (Section 7).

* :data:`EXPERIMENT_MECHANISMS`, :func:`experiment_mechanism`: the mechanisms of the figures and
  their ``k``-joint versions (Section 6);
* :func:`experiment_point`: one point of any curve of the figures, a certified
  :class:`amp.Bound` (the single code path of ``bench/reproduce_figures.py`` and of the live
  re-checks in Chapter 7);
* :func:`eps_estimate_versus_n`: the uncertified saddle-point estimate drawn as a smooth curve
  next to certified points (Chapter 1);
* the figures: :func:`plot_experiment_panel`, :func:`plot_experiment_figure` (from the stored
  curves of :mod:`ampbook.stored`), :func:`plot_finite_domain`,
  :func:`plot_finite_domain_figure`.

Every certified number comes from the front door (:func:`amp.epsilon`) or a baseline of
:mod:`amp.baselines`; matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from amp.api import epsilon, epsilon_estimate, epsilon_for
from amp.privacy_profile import PrivacyProfile
from amp.baselines import bennett_epsilon, clone_epsilon, hoeffding_epsilon
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.inversion import DEFAULT_EPS_REL_TOL
from amp.mechanisms.joint import joint_copies
from amp.mechanisms import registry
from amp.mechanisms.base import Mechanism
from ampbook.stored import curve, panel
from ampbook.style import PANEL_FIGSIZE, new_axes, pyplot

__all__ = [
    "EXPERIMENT_MECHANISMS", "CURVE_STYLES", "experiment_mechanism", "experiment_point",
    "eps_estimate_versus_n",
    "plot_experiment_panel", "plot_experiment_figure", "plot_finite_domain",
    "plot_finite_domain_figure",
]

#: Mechanisms of Figures 2 and 3 (Section 7): name -> constructor(eps0) of the Table 1 row.
#: The mechanisms of Figures 2 and 3: display name -> (registry name, domain keywords)
#: (:mod:`amp.mechanisms.registry`, the one registry of mechanism names).
EXPERIMENTS: dict[str, tuple[str, dict]] = {
    "10-RR": ("krr", {"k": 10}),
    "BLH": ("blh", {}),
    "RAPPOR": ("rappor", {}),
    "OUE": ("oue", {}),
}
#: display name -> ``eps0 -> mechanism`` (the Table 1 rows of the figures)
EXPERIMENT_MECHANISMS: dict[str, Callable[[float], Mechanism]] = {
    name: registry.factory(key, **kw) for name, (key, kw) in EXPERIMENTS.items()}

#: Curve keys of ``figures.json`` -> (legend label, matplotlib style).
CURVE_STYLES: dict[str, tuple[str, dict]] = {
    "upper": ("ours: upper bound (Theorem 4, §5.1)", dict(color="C0", ls="-", marker="o", ms=3, lw=2)),
    "lower": ("ours: lower bound (Theorem 5, §5.3)", dict(color="C0", ls="--", lw=1.2)),
    "clone": ("standard clone (Theorem 3, §3.1)", dict(color="C1", ls="-", marker="s", ms=3)),
    "hoeffding": ("blanket + Hoeffding (Balle et al.)", dict(color="C2", ls=":", lw=1.8)),
    "bennett": ("blanket + Bennett (Balle et al.)", dict(color="C3", ls="-.", lw=1.5)),
    "joint2_upper": ("2-joint: upper (§6)", dict(color="C4", ls="-", marker="^", ms=3)),
    "joint2_lower": ("2-joint: lower (§6)", dict(color="C4", ls="--", lw=1.0)),
    "joint4_upper": ("4-joint: upper (§6)", dict(color="C5", ls="-", marker="v", ms=3)),
    "joint4_lower": ("4-joint: lower (§6)", dict(color="C5", ls="--", lw=1.0)),
}

_JOINT_KEY = re.compile(r"joint(\d+)_(upper|lower)")


# ============================================================================ computations
def experiment_mechanism(name: str, eps0: float, m: int = 1) -> Mechanism:
    """Mechanism ``name`` of :data:`EXPERIMENT_MECHANISMS` with total budget ``eps0``.

    ``m = 1``: the Table 1 row at ``eps0``. ``m > 1``: the ``m``-joint composition of Section 6
    with ``eps0 / m`` per component (:func:`amp.mechanisms.joint.joint_copies`), the "k-joint"
    curves of Figures 2 and 3.
    """
    if name not in EXPERIMENTS:
        raise ParameterError(f"mechanism must be one of {', '.join(EXPERIMENTS)}, got {name!r}")
    if m == 1:
        return EXPERIMENT_MECHANISMS[name](eps0)
    key, kw = EXPERIMENTS[name]
    return joint_copies(registry.MECHANISMS[key].cls, m, eps0, **kw)


def experiment_point(name: str, eps0: float, key: str, n: int, delta: float, *,
                     rel_tol: float = DEFAULT_EPS_REL_TOL) -> Bound:
    """One point of a curve of Figures 2 and 3 (Section 7): the central eps at ``delta``.

    ``key`` is a curve of ``book/data/figures.json`` (see :data:`CURVE_STYLES`):

    * ``upper`` / ``lower``: the optimal decomposition bound (Theorem 4) / Theorem 5's lower
      bound of the Table 1 row for the paper's dataset pair (a third value ``x2``; without the
      backgrounds ``x2 = x0, x1`` that :func:`amp.epsilon` also takes), relative bracket
      width ``rel_tol``;
    * ``jointK_upper`` / ``jointK_lower``: the same for the ``K``-joint composition with
      ``eps0 / K`` per component (Section 6): the upper bound is the maximum over every pair
      type of joint inputs, the lower bound uses inputs distinct in every component
      (:func:`amp.privacy_profile.laws_for`);
    * ``clone``: the standard clone bound for generic ``eps0``-LDP randomizers
      (:func:`amp.baselines.clone_epsilon`, exact numerical);
    * ``hoeffding`` / ``bennett``: the privacy blanket bounds of Balle et al. (2019) for the
      specific mechanism (:func:`amp.baselines.hoeffding_epsilon`,
      :func:`amp.baselines.bennett_epsilon`).

    Returns the :class:`amp.Bound` of that computation with its wall time in
    ``details["seconds"]``. The bench script and the live re-checks of Chapter 7 both call this
    function, so a stored point and its re-computation take the same code path.
    """
    t0 = time.perf_counter()
    joint = _JOINT_KEY.fullmatch(key)
    if key == "upper":
        r = epsilon(experiment_mechanism(name, eps0), n, delta, rel_tol=rel_tol)
    elif key == "lower":
        # the paper's pair (a third value x2), as in its Figures 2-3; amp.epsilon's default
        # lower bound also takes the backgrounds x2 = x0, x1 (Chapter 5), sometimes larger
        mech = experiment_mechanism(name, eps0)
        prof = PrivacyProfile(mech, n, bound="lower", laws=mech.lower_laws(backgrounds=False))
        r = epsilon_for(prof, delta, rel_tol=rel_tol)
    elif joint:
        mech = experiment_mechanism(name, eps0, int(joint.group(1)))
        r = epsilon(mech, n, delta, bound=joint.group(2), rel_tol=rel_tol)
    elif key == "clone":
        experiment_mechanism(name, eps0)          # validates the name
        r = clone_epsilon(eps0, n, delta)
    elif key in ("hoeffding", "bennett"):
        fn = hoeffding_epsilon if key == "hoeffding" else bennett_epsilon
        r = fn(experiment_mechanism(name, eps0), n, delta)
    else:
        raise ParameterError(f"key must be one of {', '.join(CURVE_STYLES)} or jointK_upper/"
                             f"jointK_lower, got {key!r}")
    return replace(r, details={**r.details, "seconds": time.perf_counter() - t0})


def eps_estimate_versus_n(mechanism: Mechanism, ns: Iterable[int], delta: float) -> np.ndarray:
    """Uncertified saddle-point estimate of the blanket ``eps(delta)`` for each ``n``.

    :func:`amp.api.epsilon_estimate` (the maximum over the mechanism's pair laws); fast (a few
    ms per point), for smooth curves next to certified points (:func:`amp.epsilon`). NOT a
    privacy guarantee.
    """
    return np.array([epsilon_estimate(mechanism, int(n), delta) for n in ns], dtype=float)


# ============================================================================ figures
def plot_experiment_panel(pnl: Mapping, *, keys: Iterable[str] | None = None, ax=None,
                          legend: bool = True, title: str | None = None):
    """One panel of Figures 2/3: ``e^eps - 1`` against ``n`` (log-log) for the stored curves."""
    ax = new_axes(ax, PANEL_FIGSIZE)
    keys = list(keys) if keys is not None else list(CURVE_STYLES)
    for key in keys:
        if key not in pnl["curves"]:
            continue
        ns, eps = curve(pnl, key)
        label, style = CURVE_STYLES[key]
        ax.plot(ns, np.expm1(eps), label=label, **style)
    ax.set(xscale="log", yscale="log", xlabel=r"number of users $n$",
           ylabel=r"$e^{\varepsilon} - 1$")
    regime = "low" if pnl["eps0"] < 1 else "large"
    ax.set_title(title if title is not None else
                 rf"{pnl['mechanism']}, {regime} $\varepsilon_0 = {pnl['eps0']:g}$",
                 fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        ax.legend(fontsize="x-small")
    return ax


def plot_experiment_figure(data: Mapping, mechanisms: Sequence[str], *,
                           keys: Iterable[str] | None = None):
    """A Figure 2/3 grid: one row per mechanism, low and large ``eps0`` side by side."""
    plt = pyplot()
    eps0s = sorted({p["eps0"] for p in data["panels"]})
    fig, axes = plt.subplots(len(mechanisms), len(eps0s), figsize=(9.0, 3.3 * len(mechanisms)),
                             layout="constrained", squeeze=False)
    for i, name in enumerate(mechanisms):
        for j, e0 in enumerate(eps0s):
            plot_experiment_panel(panel(data, name, e0), keys=keys, ax=axes[i, j], legend=False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize="small")
    return fig


def plot_finite_domain(rows: Sequence[Mapping], *, ax=None, title: str = "",
                       resolution: float | None = None):
    """Relative reduction ``1 - eps_d / eps_Table1`` of RAPPOR's certified eps over ``d`` bits,
    against ``n`` (log-log).

    ``rows``: dicts with ``d`` (``None`` for the Table 1 row), ``n`` and ``value`` lists.
    Reductions ``<= 0`` are not drawn. ``resolution``: relative width of the stored brackets;
    reductions below twice that are shaded as not resolved.
    """
    ax = new_axes(ax, PANEL_FIGSIZE)
    ref = next(r for r in rows if r["d"] is None)
    markers = ["o", "s", "^", "v", "D"]
    for i, r in enumerate(rows):
        if r["d"] is None:
            continue
        red = 1 - np.asarray(r["value"], dtype=float) / np.asarray(ref["value"], dtype=float)
        ax.plot(r["n"], np.where(red > 0, red, np.nan), marker=markers[i % 5], ms=4,
                color=f"C{i}", label=f"d = {r['d']}")
    if resolution is not None:
        ax.axhspan(1e-12, 2 * resolution, color="0.85", zorder=0,
                   label="within the brackets' width")
    ax.set(xscale="log", yscale="log", xlabel=r"number of users $n$",
           ylabel=r"$1 - \varepsilon_d / \varepsilon_{\mathrm{Table\,1}}$")
    if resolution is not None:
        ax.set_ylim(bottom=2 * resolution / 10)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_finite_domain_figure(data: Mapping):
    """The finite-domain effect (Chapter 7): one :func:`plot_finite_domain` panel per stored
    ``eps0``, RAPPOR over ``d`` bits against the Table 1 row, with a shared legend."""
    plt = pyplot()
    fin = data["finite_domain"]
    eps0s = sorted({r["eps0"] for r in fin["rows"]})
    fig, axes = plt.subplots(1, len(eps0s), figsize=(3.1 * len(eps0s), 3.4),
                             layout="constrained", squeeze=False)
    for ax, e0 in zip(axes[0], eps0s):
        plot_finite_domain([r for r in fin["rows"] if math.isclose(r["eps0"], e0)], ax=ax,
                           title=rf"{fin['mechanism']}, $\varepsilon_0 = {e0:g}$",
                           resolution=fin.get("rel_tol"))
        ax.get_legend().remove()
        if ax is not axes[0, 0]:
            ax.set_ylabel("")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize="small")
    return fig
