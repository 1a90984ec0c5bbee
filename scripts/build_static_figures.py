#!/usr/bin/env python
"""Precompute the static site's interactive figures (no kernel): one JSON file per figure.

The live book (``make live``) redraws a figure for any setting of its widget; the static site
has no kernel, so for each chapter with a widget this script computes the figure's curves at a
small grid of the widget's inputs and writes them to ``book/data/static_figs/<id>.json``.
A chapter shows the file with :func:`static_figs.show` (``book/static_figs.py``, a cell tagged
``remove-input`` and ``static-only``), and ``book/_static/amp-figures.js`` draws the chosen grid
point as an SVG line plot (sliders, dropdowns, tick boxes; the page says which grid point is
shown). ``book/engine/static_figures.md`` is the reader's account.

What is certified, and how it is rounded (every number is written as a short decimal):

* a certified upper value (``Bound.value`` of an upper bound: the upper end of amp's bracket) is
  rounded UP to 4 significant digits (:func:`up`), a certified lower value DOWN (:func:`down`);
  ``exp(eps) - 1`` of an upper eps is computed from the rounded-up eps and rounded up again;
* saddle-point estimates (dashed lines, labelled uncertified), GPARV atoms (exact laws) and the
  simulated estimates of chapter 12 (one seeded draw) are rounded to the nearest 4 significant
  digits (:func:`near`);
* a point amp cannot certify is stored as ``null`` (a gap in the curve), never guessed.

Usage (from the repository root; about 15 minutes in all on a loaded 2-core machine)::

    nice /work/main/.venv/bin/python scripts/build_static_figures.py            # every figure
    nice /work/main/.venv/bin/python scripts/build_static_figures.py ch05 ch07  # some

``tests/test_static_figures.py`` rebuilds the cheap figures (ch05, ch07) and compares them with
the committed files, and re-checks a sample of the certified points of the others.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import math
import platform
import sys
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))        # this checkout's amp, whatever the venv has installed
sys.path.insert(0, str(REPO / "scripts"))
from repo_git import git_output  # noqa: E402
OUT = REPO / "book" / "data" / "static_figs"
DIGITS = 4

#: matplotlib's default colour cycle (the book's static figures use it too)
C = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
GREY = "#7f7f7f"


# ----------------------------------------------------------------------------- rounding
def _round(x: float, mode) -> float | None:
    if x is None or not math.isfinite(float(x)):
        return None
    x = float(x)
    if x == 0:
        return 0.0
    d = Decimal(x)                                  # the float's exact value
    r = d.quantize(Decimal(1).scaleb(d.adjusted() - (DIGITS - 1)), rounding=mode)
    return float(r)   # the nearest double of a decimal >= x is >= x (x is itself a double)


def up(x):
    """Certified upper value: 4 significant digits, rounded towards +inf (``None`` if not finite)."""
    return _round(x, ROUND_CEILING)


def down(x):
    """Certified lower value: 4 significant digits, rounded towards -inf."""
    return _round(x, ROUND_FLOOR)


def near(x):
    """Uncertified value (estimate, exact atom, simulation): nearest 4 significant digits."""
    return _round(x, ROUND_HALF_EVEN)


def expm1_up(eps_up: float | None) -> float | None:
    """``e^eps - 1`` of a rounded-up eps, rounded up (math.expm1 is within 1 ulp; +2 ulp)."""
    if eps_up is None:
        return None
    v = math.expm1(eps_up)
    return up(math.nextafter(math.nextafter(v, math.inf), math.inf))


def expm1_down(eps_down: float | None) -> float | None:
    if eps_down is None:
        return None
    v = math.expm1(eps_down)
    return down(math.nextafter(math.nextafter(v, -math.inf), -math.inf))


# ----------------------------------------------------------------------------- provenance
def provenance(argv: list[str]) -> dict:
    import numpy
    import scipy
    import amp
    h = hashlib.sha256()
    for p in sorted((REPO / "amp").rglob("*.py")):
        h.update(p.relative_to(REPO).as_posix().encode() + b"\0" + p.read_bytes())
    return {
        "command": "python scripts/build_static_figures.py " + " ".join(argv),
        "git_commit": git_output(REPO, "rev-parse", "HEAD"),
        "amp_modified_since_commit": bool(git_output(REPO, "status", "--porcelain", "amp")),
        "amp_source_sha256": h.hexdigest(),
        "amp_imported_from": str(Path(amp.__file__).resolve().parent.relative_to(REPO))
        if Path(amp.__file__).resolve().is_relative_to(REPO) else amp.__file__,
        "python": platform.python_version(), "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def dtext(delta: float) -> str:
    """``1e-6`` for 10^-6 (a power of ten), else ``%g``."""
    e = round(math.log10(delta))
    return f"1e{e}" if math.isclose(delta, 10.0 ** e, rel_tol=1e-12) else f"{delta:g}"


def select(key: str, label: str, values: list, labels: list[str] | None = None,
           default=None, kind: str = "select") -> dict:
    """A control over a list of grid values (``kind``: ``select`` or ``range``, a slider)."""
    labels = labels or [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return {"key": key, "label": label, "kind": kind, "values": values, "labels": labels,
            "default": values.index(default) if default is not None else 0}


def series(kind: str, label: str, color: str, **kw) -> dict:
    out = {"kind": kind, "label": label, "color": color}
    out.update({k: v for k, v in kw.items() if v is not None})
    return out


def _grid(*axes):
    """Every combination of indices of the given value lists, first axis slowest."""
    import itertools
    return itertools.product(*(range(len(a)) for a in axes))


# ============================================================================ Chapter 1
def ch01() -> dict:
    """eps against n (the widget of Chapter 1): certified upper eps (Theorem 4) at five n, the
    saddle-point estimate on a finer grid, eps0 (no shuffling)."""
    import numpy as np
    import amp
    from amp.core.errors import AmpError
    from ampbook.experiments import eps_estimate_versus_n
    from ampbook.widgets import MECHANISMS, make_mechanism

    mechs = list(MECHANISMS)
    eps0s = [1.0, 2.0, 4.0, 8.0]
    dexps = [-4, -6, -8]
    ns_cert = [100, 1_000, 10_000, 100_000, 1_000_000]
    ns_est = [int(x) for x in np.unique(np.logspace(2, 6, 25).astype(int))]
    frames = {}
    for i, j, k in _grid(mechs, eps0s, dexps):
        mech = make_mechanism(mechs[i], eps0s[j])
        delta = 10.0 ** dexps[k]
        cert = []
        for n in ns_cert:
            try:
                cert.append(up(amp.epsilon(mech, n, delta, rel_tol=1e-2).value))
            except AmpError:
                cert.append(None)
        est = [near(v) for v in eps_estimate_versus_n(mech, ns_est, delta)]
        frames[f"{i}|{j}|{k}"] = {"title": mech.describe(), "series": [
            series("line", "estimate (saddle point, uncertified)", C[0], dash="6 4",
                   x=ns_est, y=est),
            series("linepoints", "certified upper bound (blanket, Theorem 4, §5.1)", C[0],
                   x=ns_cert, y=cert),
            series("hline", "no shuffling: ε = ε₀", GREY, dash="2 3", y=eps0s[j]),
        ]}
        print(f"ch01 {mechs[i]} eps0={eps0s[j]} delta=1e{dexps[k]}: {cert}", flush=True)
    return {
        "id": "ch01-eps-vs-n", "chapter": "01_introduction",
        "caption": "Central ε against the number of users n (Theorem 4, §5.1).",
        "controls": [select("mechanism", "mechanism", mechs, default="k-RR"),
                     select("eps0", "ε₀", eps0s, default=4.0, kind="range"),
                     select("delta", "δ", dexps, [f"1e{d}" for d in dexps], default=-6,
                            kind="range")],
        "axes": {"x": {"label": "number of users n", "log": True},
                 "y": {"label": "central ε at δ", "log": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 5
def ch05() -> dict:
    """Atoms of the GPARV G_eps (the widget of Chapter 5): exact atoms, Property 2's support,
    the mean 1 - e^eps."""
    from ampbook.widgets import MECHANISMS, make_mechanism

    mechs = list(MECHANISMS)
    eps0s = [0.5, 1.0, 2.0, 4.0, 6.0]
    epss = [0.0, 0.25, 0.5, 1.0, 2.0]
    frames = {}
    for i, j, k in _grid(mechs, eps0s, epss):
        law = make_mechanism(mechs[i], eps0s[j]).gparv()
        eps = epss[k]
        g, p = law.atoms(eps)
        keep = [t for t in range(len(g)) if p[t] > 0]
        e, E = math.exp(eps), math.exp(eps0s[j])
        frames[f"{i}|{j}|{k}"] = {"title": f"{law.label}, ε = {eps:g}: mean 1 − e^ε = {1 - e:.3g}",
                                  "series": [
            series("vspan", "Property 2: [1 − e^(ε+ε₀), e^ε₀ − e^ε]", C[2],
                   x0=near(1 - e * E), x1=near(E - e)),
            series("stem", "atoms of G_ε", C[0], x=[near(g[t]) for t in keep],
                   y=[near(p[t]) for t in keep]),
            series("vline", "mean 1 − e^ε", C[3], dash="6 4",
                   x=near(law.mean(eps))),
        ]}
    return {
        "id": "ch05-gparv-atoms", "chapter": "05_new_algorithm",
        "caption": "Atoms of the GPARV G_ε of a Table 1 mechanism (Property 2, §5.1).",
        "controls": [select("mechanism", "mechanism", mechs, default="k-RR"),
                     select("eps0", "ε₀", eps0s, default=2.0, kind="range"),
                     select("eps", "ε", epss, default=0.5, kind="range")],
        "axes": {"x": {"label": "value of G_ε", "log": False},
                 "y": {"label": "probability", "log": False, "zero": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 6
def ch06() -> dict:
    """e^eps - 1 of k-joint versions against k (the widget of Chapter 6): saddle-point
    estimates, certified dots stored in figures.json (k = 1, 2, 4; eps0 = 0.1, 2), the
    certified standard clone."""
    from amp.baselines import clone_epsilon
    from ampbook.experiments import EXPERIMENT_MECHANISMS
    from ampbook.joint import joint_estimates, stored_joint_points
    from ampbook.stored import load_figures

    data = load_figures(REPO / "book" / "data" / "figures.json")
    delta = float(data["inputs"]["delta"])
    mechs = list(EXPERIMENT_MECHANISMS)
    eps0s = [0.1, 0.5, 1.0, 2.0, 4.0]
    ns = [1_000, 3_162, 10_000, 31_623, 100_000]
    ks = list(range(1, 9))
    frames = {}
    for i, j, k in _grid(mechs, eps0s, ns):
        est = joint_estimates(mechs[i], eps0s[j], ns[k], delta, ks)
        clone = up(clone_epsilon(eps0s[j], ns[k], delta, xtol=1e-3).value)
        dots = stored_joint_points(data, mechs[i], eps0s[j], ns[k], delta)
        ser = [series("line", "k-joint, saddle-point estimate (uncertified)", C[0], dash="6 4",
                      x=ks, y=[near(math.expm1(v)) if math.isfinite(v) else None
                               for v in est])]
        if dots:
            kk = sorted(dots)
            ser.append(series("points", "k-joint, certified upper bound (Theorem 4, §5.1)",
                              C[0], x=kk, y=[expm1_up(up(dots[t])) for t in kk]))
        ser.append(series("hline", "standard clone (generic), same total ε₀", C[1],
                          y=expm1_up(clone)))
        frames[f"{i}|{j}|{k}"] = {
            "title": f"{mechs[i]}, total ε₀ = {eps0s[j]:g}, n = {ns[k]:,}, δ = {dtext(delta)}",
            "series": ser}
    return {
        "id": "ch06-joint-vs-k", "chapter": "06_joint_composition",
        "caption": "Central e^ε − 1 of k-joint versions against k, same total ε₀ (§6).",
        "controls": [select("mechanism", "mechanism", mechs, default="10-RR"),
                     select("eps0", "total ε₀", eps0s, default=2.0, kind="range"),
                     select("n", "n", ns, [f"{v:,}" for v in ns], default=10_000,
                            kind="range"),
                     {"key": "kmax", "label": "largest k", "kind": "xmax", "values": ks[1:],
                      "labels": [str(v) for v in ks[1:]], "default": len(ks) - 2}],
        "axes": {"x": {"label": "number k of composed randomizers (ε₀/k each)", "log": False,
                       "integer": True},
                 "y": {"label": "e^ε − 1", "log": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 7
#: figures.json curve -> (legend, colour, dash, markers, group, side)
CH07_CURVES = {
    "upper": ("ours: upper bound (Theorem 4, §5.1)", C[0], None, True, "ours", "up"),
    "lower": ("ours: lower bound (Theorem 5, §5.3)", C[0], "6 4", False, "ours", "down"),
    "clone": ("standard clone (Theorem 3, §3.1)", C[1], None, True, "baselines", "up"),
    "hoeffding": ("blanket + Hoeffding (Balle et al.)", C[2], "2 3", False, "baselines", "up"),
    "bennett": ("blanket + Bennett (Balle et al.)", C[3], "8 3 2 3", False, "baselines", "up"),
    "joint2_upper": ("2-joint: upper (§6)", C[4], None, True, "joint", "up"),
    "joint2_lower": ("2-joint: lower (§6)", C[4], "6 4", False, "joint", "down"),
    "joint4_upper": ("4-joint: upper (§6)", C[5], None, True, "joint", "up"),
    "joint4_lower": ("4-joint: lower (§6)", C[5], "6 4", False, "joint", "down"),
}


def ch07() -> dict:
    """One panel of Figures 2/3 (the widget of Chapter 7) from the stored certified curves of
    book/data/figures.json: e^eps - 1 against n."""
    from ampbook.experiments import EXPERIMENT_MECHANISMS
    from ampbook.stored import load_figures, panel

    data = load_figures(REPO / "book" / "data" / "figures.json")
    mechs = [m for m in EXPERIMENT_MECHANISMS
             if any(p["mechanism"] == m for p in data["panels"])]
    eps0s = sorted({p["eps0"] for p in data["panels"]})
    regimes = [f"low ε₀ = {eps0s[0]:g}", f"large ε₀ = {eps0s[-1]:g}"]
    frames = {}
    for i, j in _grid(mechs, regimes):
        e0 = eps0s[0] if j == 0 else eps0s[-1]
        pnl = panel(data, mechs[i], e0)
        ser = []
        for key, (label, col, dash, marks, group, side) in CH07_CURVES.items():
            if key not in pnl["curves"]:
                continue
            c = pnl["curves"][key]
            # the certified end of the stored bracket: upper end of an upper bound (value),
            # lower end of Theorem 5's lower bound (value)
            ys = [expm1_up(up(v)) if side == "up" else expm1_down(down(v))
                  for v in c["value"]]
            ser.append(series("linepoints" if marks else "line", label, col, dash=dash,
                              group=group, x=[int(v) for v in c["n"]], y=ys))
        frames[f"{i}|{j}"] = {"title": f"{mechs[i]}, {regimes[j]}", "series": ser}
    return {
        "id": "ch07-experiment-panel", "chapter": "07_experiments",
        "caption": "One panel of Figures 2 and 3 (§7): e^ε − 1 against n at δ = "
                   f"{dtext(float(data['inputs']['delta']))}.",
        "controls": [select("mechanism", "mechanism", mechs, default="10-RR"),
                     select("regime", "regime", list(range(len(regimes))), regimes, default=1),
                     {"key": "groups", "label": "curves", "kind": "checks",
                      "values": ["ours", "baselines", "joint"],
                      "labels": ["ours (upper, lower)", "baselines", "2-, 4-joint"],
                      "default": [True, True, True]}],
        "axes": {"x": {"label": "number of users n", "log": True},
                 "y": {"label": "e^ε − 1", "log": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 11
#: chapter 11's frames are slow (10-60 s each): each is checkpointed as one JSON line in
#: artifacts/static_figs/ch11-<part>.jsonl, so an interrupted run resumes, and ``--part i/m``
#: computes every m-th frame (several processes at once); a run without --part computes what
#: is missing and assembles all.
CHECKPOINTS = REPO / "artifacts" / "static_figs"
PART = (0, 1)


def _checkpointed(name: str) -> dict:
    out = {}
    for path in sorted(CHECKPOINTS.glob(f"{name}-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out[rec["key"]] = rec["frame"]
    return out


def ch11() -> dict:
    """eps after T rounds (the widget of Chapter 11): amp's certified band (upper end Theorem 4,
    §5.1 composed; lower end Theorem 5, §5.3) at T = 1, 10, 100, 1000."""
    from amp.core.errors import AmpError
    from ampbook.rounds import WIDGET_ROUNDS, rounds_curves
    from ampbook.widgets import make_mechanism

    mechs = ["k-RR", "OUE"]
    eps0s = [1.0, 2.0, 4.0]
    log10ns = [3.0, 4.0]
    qs = [0.2, 1.0]
    delta = 1e-6
    Ts = list(WIDGET_ROUNDS)
    done = _checkpointed("ch11")
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    part, parts = PART
    frames = {}
    for t, (i, j, k, m) in enumerate(_grid(mechs, eps0s, log10ns, qs)):
        key = f"{i}|{j}|{k}|{m}"
        if key in done:
            frames[key] = done[key]
            continue
        if t % parts != part:
            continue
        n = int(round(10 ** log10ns[k]))
        mech = make_mechanism(mechs[i], eps0s[j])
        t0 = time.perf_counter()
        try:
            c = rounds_curves(mech, n, delta, Ts, sampling=qs[m], baselines=False)
            upper, lower = [up(v) for v in c.upper], [down(v) for v in c.lower]
        except AmpError as exc:
            print(f"ch11 {mechs[i]} {eps0s[j]} {n} {qs[m]}: {exc}", flush=True)
            upper = lower = [None] * len(Ts)
        frames[key] = {
            "title": f"{mech.describe()}, n = {n:,}, q = {qs[m]:g}, δ = {dtext(delta)}",
            "series": [
                series("band", "certified band: Theorem 5, §5.3 to Theorem 4, §5.1", C[0],
                       x=Ts, y=lower, y2=upper),
                series("linepoints", "amp: Theorem 4, §5.1 composed (upper end)", C[0],
                       x=Ts, y=upper),
            ]}
        with open(CHECKPOINTS / f"ch11-{part}.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "frame": frames[key]}, ensure_ascii=False) + "\n")
        print(f"ch11 {mechs[i]} eps0={eps0s[j]} n={n} q={qs[m]}: {upper} "
              f"({time.perf_counter() - t0:.1f}s)", flush=True)
    return {
        "id": "ch11-rounds", "chapter": "11_many_rounds",
        "caption": f"Central ε after T rounds at δ = {dtext(delta)} (Theorem 4, §5.1 composed).",
        "controls": [select("mechanism", "mechanism", mechs, default="k-RR"),
                     select("eps0", "ε₀", eps0s, default=2.0, kind="range"),
                     select("n", "n", log10ns, [f"{10 ** v:,.0f}" for v in log10ns],
                            default=4.0, kind="range"),
                     select("q", "sampling q", qs, default=1.0, kind="range")],
        "axes": {"x": {"label": "number of rounds T", "log": True},
                 "y": {"label": "central ε after T rounds", "log": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 12
def _per10k(values) -> list[int]:
    """Frequencies in units of 1e-4, nearest (a simulation's values, not bounds)."""
    return [int(round(float(v) * 1e4)) for v in values]


def ch12() -> dict:
    """One estimate of the state frequencies, shuffled vs local only vs central (the widget of
    Chapter 12; a seeded simulation, not a bound; eps0 of the shuffled oracle is amp's
    certified calibration, rounded down)."""
    sys.path.insert(0, str(REPO / "book"))
    import accuracy_figs as F
    from ampbook import accuracy as A

    labels, counts = F.state_counts()
    names = list(F.NAMES)
    ns = [0, 1_000, 10_000, 100_000]
    epss = [0.5, 1.0, 2.0]
    delta, seed = 1e-6, 12
    frames = {}
    for i, j, k in _grid(names, ns, epss):
        hist = counts if ns[j] == 0 else F.population(counts / counts.sum(), ns[j], seed)
        shuffled, est = F.one_draw(hist, names[i], epss[k], delta, seed)
        truth = hist / hist.sum()
        errs = "; ".join(f"{s}: largest error {A.max_abs_error(est[s], truth):.2e}"
                         for s in A.SETTINGS)
        ser = [series("bar", "true frequency", "#d9d9d9", yscale=1e-4, y=_per10k(truth))]
        marks = {"shuffled": ("circle", C[0], "shuffled (ε₀ calibrated)"),
                 "local": ("square", C[3], "local only (ε₀ = ε)"),
                 "central": ("triangle", C[2], "central (Laplace)")}
        for s in A.SETTINGS:
            shape, col, lab = marks[s]
            ser.append(series("points", lab, col, marker=shape, yscale=1e-4,
                              y=_per10k(est[s])))
        frames[f"{i}|{j}|{k}"] = {
            "title": (f"{F.NAMES[names[i]]}, n = {int(hist.sum()):,}, ε = {epss[k]:g}, "
                      f"δ = {dtext(delta)}: shuffled ε₀ = {down(shuffled.eps0):.4g}"),
            "note": errs, "series": ser}
        print(f"ch12 {names[i]} n={ns[j]} eps={epss[k]}: eps0={shuffled.eps0:.4f}", flush=True)
    return {
        "id": "ch12-one-draw", "chapter": "12_accuracy",
        "caption": "One estimate of the state frequencies in each setting (one seeded draw).",
        "controls": [select("oracle", "oracle", names, [F.NAMES[v] for v in names],
                            default="krr"),
                     select("n", "n", ns, ["42,049 (the dataset)"] + [f"{v:,}" for v in ns[1:]],
                            default=0),
                     select("eps", "central ε", epss, default=1.0, kind="range")],
        "axes": {"x": {"label": "state (most frequent first)", "log": False,
                       "ticklabels": labels},
                 "y": {"label": "frequency", "log": False, "zero": True}},
        "frames": frames,
    }


# ============================================================================ Chapter 14
def ch14() -> dict:
    """Certified central eps against n of a numeric randomizer (the widget of Chapter 14,
    book/coursekit/numeric.py): the band from Theorem 5's lower bound (§5.3) to Theorem 4's
    upper bound (§5.1), and the variation-ratio number of Wang et al. (uncertified)."""
    sys.path.insert(0, str(REPO / "book"))
    from coursekit.numeric import RANDOMIZERS, WIDGET_EPS0S, WIDGET_NS, numeric_curves

    names = list(RANDOMIZERS)
    eps0s = list(WIDGET_EPS0S)
    delta = 1e-6
    ns = list(WIDGET_NS)
    frames = {}
    for i, j in _grid(names, eps0s):
        c = numeric_curves(names[i], eps0s[j], ns, delta)
        upper, lower = [up(v) for v in c["upper"]], [down(v) for v in c["lower"]]
        ser = [series("band", "certified: Theorem 5, §5.3 to Theorem 4, §5.1", C[0],
                      x=ns, y=lower, y2=upper),
               series("linepoints", "amp: upper bound (Theorem 4, §5.1)", C[0], x=ns, y=upper)]
        if any(v is not None for v in c["vr"]):
            ser.append(series("line", "variation-ratio number (uncertified)", C[3],
                              dash="6 4", x=ns, y=[near(v) for v in c["vr"]]))
        ser.append(series("hline", "no shuffling: ε = ε₀", GREY, dash="2 3", y=eps0s[j]))
        k = ns.index(10_000)
        note = (f"At n = 10,000 the true ε lies in [{lower[k]:#.4g}, {upper[k]:#.4g}] "
                "(certified, rounded outwards)")
        if c["vr"][k] is not None:
            note += f"; variation-ratio number {near(c['vr'][k]):#.4g} (uncertified)"
        frames[f"{i}|{j}"] = {"title": f"{names[i]}, ε₀ = {eps0s[j]:g}, δ = {dtext(delta)}",
                              "note": note + ".", "series": ser}
        print(f"ch14 {names[i]} eps0={eps0s[j]}: {upper} {lower} {c['vr']}", flush=True)
    return {
        "id": "ch14-numeric", "chapter": "14_numeric_data",
        "caption": f"Central ε against n of a numeric randomizer at δ = {dtext(delta)}: amp's "
                   "certified bracket and the variation-ratio number (uncertified).",
        "controls": [select("randomizer", "randomizer", names, default="piecewise mechanism"),
                     select("eps0", "ε₀", eps0s, default=2.0, kind="range")],
        "axes": {"x": {"label": "number of users n", "log": True},
                 "y": {"label": "central ε at δ", "log": True}},
        "frames": frames,
    }


def ch14mean() -> dict:
    """Worst-case error of the estimated mean against n (the second widget of Chapter 14,
    book/coursekit/numeric.py): local only, shuffled with eps0 calibrated by amp (certified to
    meet the central target, Theorem 4, §5.1), and the central Laplace mechanism."""
    sys.path.insert(0, str(REPO / "book"))
    from coursekit.numeric import MEAN_EPSS, MEAN_RANDOMIZERS, WIDGET_NS, mean_errors

    names = list(MEAN_RANDOMIZERS)
    epss = list(MEAN_EPSS)
    delta = 1e-6
    ns = list(WIDGET_NS)
    looks = {"local": ("local only (ε₀ = ε)", C[1], "square"),
             "shuffled": ("shuffled (ε₀ calibrated by amp, Theorem 4, §5.1)", C[0], "circle"),
             "central": ("central Laplace", C[2], "triangle")}
    frames = {}
    for i, j in _grid(names, epss):
        r = mean_errors(names[i], epss[j], ns, delta)
        ser = [series("linepoints", label, col, marker=mark, x=ns, y=[near(v) for v in r[key]])
               for key, (label, col, mark) in looks.items()]
        k = ns.index(10_000)
        e0 = r["eps0"][k]
        note = (f"At n = 10,000: shuffled ε₀ = {down(e0):#.4g} (certified, rounded down); "
                f"error {near(r['shuffled'][k]):.3g} against {near(r['local'][k]):.3g} local "
                f"only and {near(r['central'][k]):.3g} central.")
        frames[f"{i}|{j}"] = {"title": f"{names[i]}, central ε = {epss[j]:g}, δ = {dtext(delta)}",
                              "note": note, "series": ser}
        print(f"ch14mean {names[i]} eps={epss[j]}: eps0 {r['eps0']}", flush=True)
    return {
        "id": "ch14mean-error", "chapter": "14_numeric_data",
        "caption": "Worst-case root-mean-squared error of the estimated mean of n inputs in "
                   f"[−1, 1] at central (ε, δ = {dtext(delta)}): local only, shuffled, central.",
        "controls": [select("randomizer", "randomizer", names, default="Duchi et al."),
                     select("eps", "central ε", epss, default=1.0, kind="range")],
        "axes": {"x": {"label": "number of users n", "log": True},
                 "y": {"label": "worst-case RMSE of the mean", "log": True}},
        "frames": frames,
    }


#: the figures that show certified bounds (the others: exact atoms, one simulated draw)
CERTIFIED = ("ch01", "ch06", "ch07", "ch11", "ch14")
FIGURES = {"ch01": ch01, "ch05": ch05, "ch06": ch06, "ch07": ch07, "ch11": ch11, "ch12": ch12,
           "ch14": ch14, "ch14mean": ch14mean}


def build(name: str, argv: list[str]) -> dict:
    fig = FIGURES[name]()
    fig["description"] = " ".join(FIGURES[name].__doc__.split())
    fig["provenance"] = provenance(argv)
    parts = sorted(p.name for p in CHECKPOINTS.glob(f"{name}-*.jsonl"))
    if parts:
        fig["provenance"]["frames_from_checkpoints"] = [f"artifacts/static_figs/{p}"
                                                        for p in parts]
    fig["grid_points"] = len(fig["frames"])
    fig["certified"] = name in CERTIFIED
    return fig


#: what a series shares with the same series of other frames (its look), stored once
STYLE_KEYS = ("kind", "label", "color", "dash", "group", "marker")


def compact(fig: dict) -> dict:
    """The stored form: each series' look (:data:`STYLE_KEYS`) once in ``styles``, named by
    ``"s"`` in the frames (``book/_static/amp-figures.js`` ``expand`` undoes this)."""
    if "styles" in fig:
        return fig
    styles: list[dict] = []
    frames = {}
    for key, frame in fig["frames"].items():
        out = []
        for s in frame["series"]:
            look = {k: s[k] for k in STYLE_KEYS if k in s}
            if look not in styles:
                styles.append(look)
            out.append({"s": styles.index(look),
                        **{k: v for k, v in s.items() if k not in STYLE_KEYS}})
        frames[key] = {**frame, "series": out}
    return {**fig, "styles": styles, "frames": frames}


def write(fig: dict, out: Path = OUT) -> Path:
    fig = compact(fig)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{fig['id'].split('-')[0]}.json"
    head = {k: fig[k] for k in ("id", "chapter", "caption", "description", "provenance",
                                "grid_points", "certified", "controls", "axes", "styles")}
    # one line per frame: small, and a diff shows which grid points changed
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in
                     head.items()] + [' "frames": {']
    keys = list(fig["frames"])
    for t, key in enumerate(keys):
        lines.append(f"  {json.dumps(key)}: {json.dumps(fig['frames'][key], ensure_ascii=False, separators=(',', ':'))}"
                     + ("," if t < len(keys) - 1 else ""))
    lines += [" }", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rewrite(name: str, out: Path = OUT) -> Path:
    """Write a stored figure again in the current stored form (provenance kept)."""
    path = out / f"{name}.json"
    fig = json.loads(path.read_text(encoding="utf-8"))
    fig.setdefault("certified", name in CERTIFIED)
    # files computed before dtext(): "δ = 1e-06" -> "δ = 1e-6" (text only, numbers unchanged)
    fig["caption"] = fig["caption"].replace("δ = 1e-06", "δ = 1e-6")
    for frame in fig["frames"].values():
        frame["title"] = frame["title"].replace("δ = 1e-06", "δ = 1e-6")
    return write(fig, out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("figures", nargs="*", metavar="FIGURE",
                    help=f"which figures, of {', '.join(FIGURES)} (default: all)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--part", default="0/1",
                    help="i/m: compute only every m-th slow frame (chapter 11), checkpointed; "
                         "write nothing")
    ap.add_argument("--rewrite", action="store_true",
                    help="only rewrite stored files in the current stored form (no computing)")
    args = ap.parse_args(argv)
    unknown = [f for f in args.figures if f not in FIGURES]
    if unknown:
        ap.error(f"unknown figure(s) {unknown}; choose from {', '.join(FIGURES)}")
    global PART
    PART = tuple(int(v) for v in args.part.split("/"))
    if PART != (0, 1):
        for name in args.figures:
            FIGURES[name]()
        return 0
    for name in args.figures or list(FIGURES):
        t0 = time.perf_counter()
        path = rewrite(name, args.out) if args.rewrite else write(build(name, argv), args.out)
        print(f"{name}: {path.relative_to(REPO) if path.is_relative_to(REPO) else path} "
              f"({path.stat().st_size:,} bytes, {time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
