"""Figures, tables and widgets of the book (the only module that touches matplotlib/ipywidgets).

Everything here is presentation: the numbers come from the core modules (:mod:`amp.api`,
:mod:`amp.delta.dispatch`, :mod:`amp.delta.exact`, :mod:`amp.oracles.ground_truth`, ...). matplotlib and ipywidgets are
imported inside the functions that need them, so ``import amp.viz.plots`` (and the core) works
without them. Each ``plot_*`` function draws on a given Axes (or a new figure) and returns the
Axes; the notebooks end the cell with ``plt.show()``.

Three small computational helpers live here because they exist only to be drawn:

* :func:`algorithm4_delta`: the paper's Algorithm 4 as published (round every atom up to the
  grid, FFT, integrate) and the same lattice computation with ``amp``'s mean-preserving
  rounding, *uncertified*, for the discretisation-error figure of Chapter 5. Use
  :func:`amp.delta.dispatch.delta_bracket` for numbers that matter;
* :func:`simulate_shuffle` and :func:`empirical_divergence`: a seeded Monte Carlo run of a
  shuffled protocol and the plug-in estimate of its hockey-stick divergence (Chapter 2). The
  estimate is an illustration, never a bound;
* :func:`table1_rows`: the GPARV laws of Table 1 sorted into the table's five columns.
"""

from __future__ import annotations

import html
import math
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy import fft as sfft

from amp.api import BoundResult, calibrate_eps0, epsilon
from amp.core.errors import AmpError, ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.table1 import KRR, OUE, RAPPOR, BLH, HadamardResponse, Mechanism
from amp.epsilon import approx_epsilon

__all__ = [
    "MECHANISMS", "make_mechanism", "cli_line",
    "eps_versus_n", "eps_estimate_versus_n", "table1_rows", "table1_html", "TABLE1_COLUMNS",
    "algorithm4_delta", "simulate_shuffle", "empirical_divergence",
    "plot_blanket_mass", "plot_eps_vs_n", "plot_hockey_stick", "plot_delta_curves",
    "plot_decomposition", "plot_gparv_atoms", "plot_discretisation_error",
    "eps_vs_n_widget", "gparv_widget", "calculator_widget",
]

FIGSIZE = (6.4, 3.6)

#: Mechanisms offered by the widgets: name -> (CLI mechanism name, constructor(eps0, k_or_d)).
#: The second argument is ``k`` for k-RR and the domain size ``d`` (``None``: Table 1 row) else.
MECHANISMS: dict[str, tuple[str, Callable[[float, int | None], Mechanism]]] = {
    "k-RR": ("krr", lambda e, k: KRR(e, k=10 if k is None else k)),
    "RAPPOR": ("rappor", lambda e, d: RAPPOR(e, d=d)),
    "OUE": ("oue", lambda e, d: OUE(e, d=d)),
    "BLH": ("blh", lambda e, d: BLH(e, d=d)),
    "Hadamard response": ("hadamard", lambda e, d: HadamardResponse(e, d=d)),
}


def _plt():
    import matplotlib.pyplot as plt  # lazy: the core never imports matplotlib
    return plt


def _axes(ax, figsize=FIGSIZE):
    if ax is not None:
        return ax
    _, ax = _plt().subplots(figsize=figsize, layout="constrained")
    return ax


def make_mechanism(name: str, eps0: float, size: int | None = None) -> Mechanism:
    """Mechanism of :data:`MECHANISMS` by name; ``size`` is ``k`` (k-RR) or ``d`` (others)."""
    if name not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {name!r}")
    return MECHANISMS[name][1](eps0, size)


def cli_line(command: str, name: str, size: int | None = None, **values: float) -> str:
    """The ``python -m amp`` command line answering the same question as the API call.

    ``command`` is ``delta``, ``epsilon`` or ``eps0``; ``values`` holds ``n``, ``eps0``, ``eps``,
    ``delta`` (those given are passed, in that order).
    """
    if command not in ("delta", "epsilon", "eps0"):
        raise ParameterError(f"command must be delta, epsilon or eps0, got {command!r}")
    cli = MECHANISMS[name][0] if name in MECHANISMS else name
    parts = ["python -m amp", command, "--mechanism", cli]
    if size is not None:
        parts += ["--k" if cli == "krr" else "--d", str(int(size))]
    for key in ("eps0", "n", "eps", "delta"):
        if key in values and values[key] is not None:
            v = values[key]
            text = f"{float(v):g}".replace("e-0", "e-").replace("e+0", "e+")
            parts += [f"--{key}", str(int(v)) if key == "n" else text]
    return " ".join(parts)


# ============================================================================ data helpers
def eps_versus_n(mechanism: Mechanism, ns: Iterable[int], delta: float, *,
                 bound: str = "upper", rel_tol: float = 1e-2) -> list[BoundResult]:
    """Certified ``eps(delta)`` of the shuffled mechanism for each ``n`` (:func:`amp.api.epsilon`)."""
    return [epsilon(mechanism, int(n), delta, bound=bound, rel_tol=rel_tol) for n in ns]


def eps_estimate_versus_n(mechanism: Mechanism, ns: Iterable[int], delta: float) -> np.ndarray:
    """Uncertified saddle-point estimate of the blanket ``eps(delta)`` for each ``n``.

    :func:`amp.epsilon.approx_epsilon`, maximised over the mechanism's pair laws; fast (about
    10 ms per point), used for smooth curves next to certified points.
    """
    laws = mechanism.gparv_laws()
    return np.array([max(approx_epsilon(law, int(n), delta) for law in laws) for n in ns])


#: Column headers of Table 1 (values of ``G_eps``), from the blanket atoms with likelihood ratios
#: ``(a, b) = (1, E), (E, E), (1, 1)``, the off-blanket atom, and ``(E, 1)``, ``E = e^eps0``.
TABLE1_COLUMNS = ("1 − e^(ε+ε₀)", "e^ε₀ − e^(ε+ε₀)", "1 − e^ε", "0", "e^ε₀ − e^ε")
_COL_OF_AB = {(0, 1): 0, (1, 1): 1, (0, 0): 2, (1, 0): 4}   # (a is E, b is E) -> column


def table1_rows(mechanisms: Sequence[Mechanism]) -> list[tuple[str, np.ndarray, float]]:
    """``(description, probabilities of the five Table 1 columns, gamma)`` per mechanism.

    Table 1 (Section 5.2) lists the law of ``G_eps`` on the five values ``1 - e^(eps+eps0)``,
    ``e^eps0 - e^(eps+eps0)``, ``1 - e^eps``, ``0``, ``e^eps0 - e^eps``; they come from blanket
    atoms with likelihood ratios ``(a, b)`` equal to ``(1, E)``, ``(E, E)``, ``(1, 1)``, the
    off-blanket atom, and ``(E, 1)`` (``E = e^eps0``). The probabilities do not depend on
    ``eps``. Raises :class:`ParameterError` if a law has an atom outside these columns or more
    than one pair law.
    """
    rows = []
    for mech in mechanisms:
        laws = mech.gparv_laws()
        if len(laws) != 1:
            raise ParameterError(f"{mech.describe()} has {len(laws)} pair laws; Table 1 needs one")
        law = laws[0]
        E = math.exp(mech.eps0)
        probs = np.zeros(5)
        for a, b, p in zip(law.a, law.b, law.p):
            key = []
            for r in (a, b):
                if math.isclose(r, 1.0, rel_tol=1e-9):
                    key.append(0)
                elif math.isclose(r, E, rel_tol=1e-9):
                    key.append(1)
                else:
                    raise ParameterError(f"{mech.describe()}: ratio {r} is neither 1 nor e^eps0")
            probs[_COL_OF_AB[tuple(key)]] += p
        probs[3] += law.off_mass
        rows.append((mech.describe(), probs, law.gamma))
    return rows


def table1_html(rows: Sequence[tuple[str, np.ndarray, float]], eps0: float, eps: float,
                digits: int = 4) -> str:
    """HTML table of :func:`table1_rows` with the numeric values of the columns at ``eps``."""
    E, e = math.exp(eps0), math.exp(eps)
    values = (1 - e * E, E - e * E, 1 - e, 0.0, E - e)
    head = "".join(f"<th>{html.escape(name)}<br><small>= {v:.4g}</small></th>"
                   for name, v in zip(TABLE1_COLUMNS, values))
    body = []
    for desc, probs, gamma in rows:
        cells = "".join(f"<td>{p:.{digits}f}</td>" for p in probs)
        body.append(f"<tr><td>{html.escape(desc)}</td>{cells}<td>{gamma:.{digits}f}</td></tr>")
    caption = (f"Law of G<sub>ε</sub> (Table 1) at ε₀ = {eps0:g}, ε = {eps:g}: probability of "
               "each value; γ is the blanket mass")
    return ("<table class='table'>"
            f"<caption>{caption}</caption>"
            f"<thead><tr><th>mechanism</th>{head}<th>γ</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def algorithm4_delta(law: GPARV, n: int, eps: float, grid_step: float,
                     rounding: str = "up") -> float:
    """Lattice value ``E[(sum of n discretised G)_+] / n`` (Algorithm 4), *uncertified*.

    ``rounding="up"``: the paper's rule, every atom ``g`` moved to ``l * ceil(g / l)``; an upper
    bound with error up to ``n * l`` (Section 5.2). ``rounding="mean"``: ``amp``'s rule, ``g``
    split between the two neighbouring grid points keeping its mean; an upper bound by Jensen's
    inequality with an error of order ``l^2``. The ``n``-fold convolution is one FFT as in
    Algorithm 4 (float64, no error control): for the discretisation-error figure only.
    """
    if rounding not in ("up", "mean"):
        raise ParameterError(f"rounding must be 'up' or 'mean', got {rounding!r}")
    if not grid_step > 0:
        raise ParameterError(f"grid_step must be > 0, got {grid_step!r}")
    g, p = law.atoms(eps)
    x = g / grid_step
    if rounding == "up":
        idx, w = np.ceil(x - 1e-9).astype(np.int64), p
    else:
        lo = np.floor(x + 1e-9)
        frac = np.clip(x - lo, 0.0, 1.0)
        idx = np.concatenate([lo, lo + 1]).astype(np.int64)
        w = np.concatenate([p * (1 - frac), p * frac])
    base = int(idx.min())
    span = int(idx.max()) - base
    pmf = np.zeros(span + 1)
    np.add.at(pmf, idx - base, w)
    size = sfft.next_fast_len(n * span + 1, real=True)
    conv = sfft.irfft(sfft.rfft(pmf, size) ** n, size)[: n * span + 1]
    k = n * base + np.arange(n * span + 1)
    pos = k > 0
    return float(np.dot(k[pos] * grid_step, np.maximum(conv[pos], 0.0))) / n


def simulate_shuffle(P: np.ndarray, dataset: Sequence[int], trials: int,
                     seed: int) -> np.ndarray:
    """Seeded Monte Carlo run of the shuffled protocol ``S(R(x_1), ..., R(x_n))``.

    Each of ``trials`` runs draws ``y_i ~ P[x_i]`` for every user and keeps only the multiset of
    reports, i.e. the histogram over the outputs (what the shuffler reveals). The reports of
    the users who share an input are drawn together as one multinomial histogram (the same
    law). Returns an integer array of shape ``(trials, number of outputs)``.
    """
    M = np.asarray(P, dtype=float)
    rng = np.random.default_rng(seed)
    xs, mult = np.unique(np.asarray(dataset, dtype=int), return_counts=True)
    counts = np.zeros((int(trials), M.shape[1]), dtype=np.int64)
    for x, c in zip(xs, mult):
        counts += rng.multinomial(int(c), M[x] / M[x].sum(), size=int(trials))
    return counts


def empirical_divergence(counts0: np.ndarray, counts1: np.ndarray,
                         eps: float | Iterable[float]) -> np.ndarray:
    """Plug-in estimate ``sum_h (f0(h) - e^eps f1(h))_+`` from two samples of histograms.

    ``f0``, ``f1`` are the empirical frequencies of each histogram (rows of the two samples).
    An *estimate* for illustration: it is biased upwards (the positive part of noisy
    differences) and certifies nothing.
    """
    both = np.vstack([counts0, counts1]).astype(np.int64)
    radix = int(both.max()) + 1
    if both.shape[1] * math.log2(radix) < 62:      # one integer key per histogram (fast)
        keys = both @ (radix ** np.arange(both.shape[1], dtype=np.int64))
        _, inv = np.unique(keys, return_inverse=True)
    else:
        _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    m = int(inv.max()) + 1
    f0 = np.bincount(inv[: len(counts0)], minlength=m) / len(counts0)
    f1 = np.bincount(inv[len(counts0):], minlength=m) / len(counts1)
    ee = np.exp(np.atleast_1d(np.asarray(eps, dtype=float)))
    return np.maximum(f0[None, :] - ee[:, None] * f1[None, :], 0.0).sum(axis=1)


# ============================================================================ figures
def plot_blanket_mass(eps0_grid: np.ndarray, gammas: Mapping[str, Sequence[float]], *,
                      mark: tuple[float, float] | None = None, ax=None):
    """Blanket mass ``gamma`` against ``eps0``, one line per entry of ``gammas`` (Chapter 1)."""
    ax = _axes(ax)
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
    ax = _axes(ax)
    if estimate is not None:
        ax.plot(estimate[0], estimate[1], "--", color="C0", alpha=0.7,
                label="estimate (saddle point, uncertified)")
    if upper is not None:
        ax.plot(ns, upper, "o-", color="C0", label="certified upper bound (blanket, Thm 4)")
    if lower is not None:
        ax.plot(ns, lower, "s:", color="C3", label="certified lower bound (Thm 5)")
    if eps0 is not None:
        ax.axhline(eps0, color="grey", ls=":", label=r"no shuffling: $\varepsilon = \varepsilon_0$")
    ylabel = r"central $\varepsilon$"
    if delta is not None:
        ylabel += rf" at $\delta = 10^{{{math.log10(delta):.0f}}}$" \
            if math.log10(delta).is_integer() else rf" at $\delta = {delta:g}$"
    ax.set(xscale="log", yscale="log", xlabel=r"number of users $n$", ylabel=ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_hockey_stick(p: Sequence[float], q: Sequence[float], eps: float, *,
                      outputs: Sequence[str] | None = None, ax=None):
    """Bars of ``P(y)`` and ``e^eps Q(y)``; the hatched excess sums to ``D_{e^eps}(P || Q)``."""
    ax = _axes(ax)
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


def _finish_delta_axes(ax, logy: bool, title: str):
    """Labels, scale, title, grid and legend of a ``delta(eps)`` plot."""
    ax.set(xlabel=r"central $\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_delta_curves(eps: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                      logy: bool = True, title: str = "", ax=None):
    """``delta(eps)`` curves, one line per entry of ``curves`` (label -> values at ``eps``)."""
    ax = _axes(ax)
    styles = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1))]
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        if logy:
            v = np.where(v > 0, v, np.nan)
        ax.plot(eps, v, ls=styles[i % len(styles)], label=label)
    return _finish_delta_axes(ax, logy, title)


def plot_decomposition(decomposition, component_labels: Sequence[str], *, ax=None):
    """Stacked weights of a general clone decomposition (Section 4.1, equation (2)).

    One bar per row: ``R(x0)`` (weights ``a_j``), ``R(x1)`` (``b_j``) and ``R(x_i)``
    (``c_j`` and the leftover weight ``beta``), each segment labelled by its component.
    """
    ax = _axes(ax, figsize=(6.4, 2.6))
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
    ax = _axes(ax)
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
    ax = _axes(ax)
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


# ============================================================================ widgets
def _show(ax) -> None:
    _plt().show()


def eps_vs_n_widget(mechanism: str = "k-RR", eps0: float = 4.0, log10_n: tuple[int, int] = (2, 6),
                    delta_exponent: int = -6):
    """Interactive central ``eps`` against ``n`` (Chapter 1; needs a kernel).

    The dashed estimate is fast (about 0.1 s per redraw); ticking *certified points* adds
    certified upper bounds at three values of ``n`` (a few seconds).
    """
    import ipywidgets as widgets

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
                up = [r.value for r in eps_versus_n(mech, ns, delta, rel_tol=3e-2)]
            except AmpError as exc:
                print(f"certified points unavailable: {exc}")
                ns = None
        ax = plot_eps_vs_n(ns, up, estimate=(grid, est), eps0=eps0, delta=delta,
                           title=mech.describe())
        _show(ax)

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
    import ipywidgets as widgets

    def draw(mechanism, eps0, eps):
        law = make_mechanism(mechanism, eps0).gparv()
        _show(plot_gparv_atoms(law, eps))

    return widgets.interactive(
        draw,
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.25, max=6.0, step=0.25, description="ε₀"),
        eps=widgets.FloatSlider(value=eps, min=0.0, max=3.0, step=0.05, description="ε"),
    )


def calculator_widget():
    """The practitioner's calculator of Chapter 10 (needs a kernel; one click per question).

    Certified ``eps`` for ``(mechanism, n, delta, eps0)`` with Theorem 5's lower bound, or the
    largest ``eps0`` meeting a target ``(eps, delta)``, with the equivalent CLI line.
    """
    import ipywidgets as widgets

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
    box = widgets.VBox([widgets.HBox([mech, size]), widgets.HBox([n, delta_exp]),
                        widgets.HBox([eps0, go_eps]), widgets.HBox([target, go_eps0]), out])
    return box
