"""Figures, tables and widgets of Chapters 3 and 6-9 (existing techniques, joint composition,
experiments, beyond the general clone, appendices).

Presentation only, like :mod:`amp.viz.plots`: the numbers come from the core modules
(:mod:`amp.api`, :mod:`amp.baselines`, :mod:`amp.mechanisms.joint`, :mod:`amp.oracles.conjecture`,
:mod:`amp.oracles.appendix_a`, :mod:`amp.oracles.ground_truth`). matplotlib and ipywidgets are imported inside
the functions that draw, so ``import amp.viz.experiments`` works without them.

A few small computational helpers live here because they exist to be drawn or tabulated:

* :func:`certified_epsilon`: :func:`amp.api.epsilon` for a list of laws, with a plain
  certified bisection as a fallback when the search of :func:`amp.epsilon.epsilon_bracket` raises
  a ``ValueError``; both routes return a certified bracket of the exact value of the selected
  bound;
* :func:`experiment_mechanism`, :func:`experiment_laws`, :func:`experiment_point`: the
  mechanisms of Figures 2 and 3 (Section 7), their ``k``-joint versions (Section 6), and one
  point of any curve of those figures (the single code path of ``bench/reproduce_figures.py``
  and of the live re-checks in Chapter 7);
* :func:`joint_estimates`, :func:`joint_certified`, :func:`joint_pair_types`: the central eps of
  ``k``-joint compositions at a fixed total ``eps0`` (Section 6): a fast *uncertified*
  saddle-point estimate for the widget, certified values for the text;
* :func:`clone_pair_table`: the standard clone reduction pair of Theorem 3 by enumeration;
* :func:`stronger_clone_counterexample`: an ``eps0``-LDP randomizer with the decomposition of
  Theorem 6 whose true shuffled divergence exceeds the stronger clone's claimed bound (the
  construction of ``tests/test_stronger_clone.py``);
* :func:`load_figures`, :func:`tightness_rows`, :func:`timing_rows`, :func:`joint_rows`,
  :func:`html_table`: the stored curves of ``book/data/figures.json`` (written by
  ``bench/reproduce_figures.py``).
"""

from __future__ import annotations

import html
import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from amp.api import laws_for
from amp.delta.dispatch import delta_bracket
from amp.core.errors import NumericalError, ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.joint import JointMechanism, joint_copies
from amp.mechanisms.table1 import BLH, KRR, OUE, RAPPOR, Mechanism
from amp.viz.plots import _axes as _plots_axes, _finish_delta_axes, _plt
from amp.baselines.stronger_clone import stronger_clone_counterexample  # noqa: F401 (re-export)
from amp.epsilon import approx_epsilon, epsilon_bracket

__all__ = [
    "EXPERIMENT_MECHANISMS", "CURVE_STYLES", "JOINT_KEYS", "TIMING_KEYS", "EpsPoint",
    "certified_epsilon",
    "experiment_mechanism", "experiment_laws", "experiment_point",
    "joint_estimates", "joint_certified", "joint_pair_types", "ratio_spread",
    "clone_pair_table", "stronger_clone_counterexample",
    "figures_path", "load_figures", "panel", "curve", "stored_point", "stored_joint_points",
    "tightness_rows", "timing_rows", "joint_rows", "spread_rows", "finite_domain_rows",
    "html_table",
    "plot_clone_pair", "plot_delta_comparison", "plot_experiment_panel",
    "plot_experiment_figure", "plot_joint_curves", "plot_joint_vs_k", "plot_joint_choice",
    "plot_joint_blanket", "plot_joint_figure", "plot_finite_domain", "plot_finite_domain_figure",
    "plot_conjecture_curves", "plot_conjecture_ratios", "plot_count_laws",
    "plot_proof_identity", "experiments_widget", "joint_widget",
]

FIGSIZE = (6.4, 3.8)

#: Mechanisms of Figures 2 and 3 (Section 7): name -> constructor(eps0) of the Table 1 row.
EXPERIMENT_MECHANISMS: dict[str, Callable[[float], Mechanism]] = {
    "10-RR": lambda e: KRR(e, k=10),
    "BLH": lambda e: BLH(e),
    "RAPPOR": lambda e: RAPPOR(e),
    "OUE": lambda e: OUE(e),
}

_FACTORIES: dict[str, tuple[Callable[..., Mechanism], dict]] = {
    "10-RR": (KRR, {"k": 10}),
    "BLH": (BLH, {}),
    "RAPPOR": (RAPPOR, {}),
    "OUE": (OUE, {}),
}

#: Curve keys of ``figures.json`` -> (legend label, matplotlib style).
CURVE_STYLES: dict[str, tuple[str, dict]] = {
    "upper": ("ours: upper bound (Thm 4)", dict(color="C0", ls="-", marker="o", ms=3, lw=2)),
    "lower": ("ours: lower bound (Thm 5)", dict(color="C0", ls="--", lw=1.2)),
    "clone": ("standard clone (generic)", dict(color="C1", ls="-", marker="s", ms=3)),
    "hoeffding": ("blanket + Hoeffding", dict(color="C2", ls=":", lw=1.8)),
    "bennett": ("blanket + Bennett", dict(color="C3", ls="-.", lw=1.5)),
    "joint2_upper": ("2-joint: upper", dict(color="C4", ls="-", marker="^", ms=3)),
    "joint2_lower": ("2-joint: lower", dict(color="C4", ls="--", lw=1.0)),
    "joint4_upper": ("4-joint: upper", dict(color="C5", ls="-", marker="v", ms=3)),
    "joint4_lower": ("4-joint: lower", dict(color="C5", ls="--", lw=1.0)),
}


def _axes(ax, figsize=FIGSIZE):
    """``ax``, or new axes of this module's default size (:func:`amp.viz.plots._axes`)."""
    return _plots_axes(ax, figsize)


# ============================================================================ computations
@dataclass(frozen=True)
class EpsPoint:
    """Certified ``eps(delta)`` of a bound at one ``n``.

    ``value`` is the number to use (``upper`` for an upper bound, ``lower`` for Theorem 5);
    ``[lower, upper]`` encloses the exact value of the selected bound; ``seconds`` is the wall
    time; ``fallback`` counts the laws that needed the bisection fallback; ``method`` names the
    evaluation route(s) (e.g. ``structured``, ``fft``, ``clone (exact numerical) ...``).
    """

    n: int
    delta: float
    bound: str
    value: float
    lower: float
    upper: float
    seconds: float
    fallback: int = 0
    method: str = ""


def _bisect_epsilon(law: GPARV, n: int, delta: float, rel_tol: float,
                    max_evaluations: int = 80) -> tuple[float, float]:
    """Certified bracket ``(lo, hi)`` of the smallest eps with ``delta(eps) <= delta``.

    ``delta_upper(hi) <= delta`` proves ``hi`` valid, ``delta_lower(lo) > delta`` proves the
    exact crossing is above ``lo`` (``delta(eps)`` is non-increasing). Halves from
    ``law.max_eps()`` until the target is crossed, then bisects.
    """
    hi = law.max_eps()
    if not math.isfinite(hi):
        raise ParameterError("the law has no finite eps with delta = 0; cannot search eps")
    lo = 0.0
    tol = 1e-3
    # (no evaluation at eps = 0: there E[G] = 0 and the engine's saddle point can fail)
    e = 0.5 * hi
    evals = 0
    while hi - lo > rel_tol * hi:
        evals += 1
        if evals > max_evaluations:
            raise NumericalError(f"eps bisection did not converge; bracket [{lo:.6g}, {hi:.6g}]")
        try:
            # deciding "delta(e) <= target?" needs no accuracy far below the target
            r = delta_bracket(law, n, e, rel_tol=tol, abs_tol=0.1 * tol * delta)
        except NumericalError:
            if tol >= 0.2:
                raise
            tol = min(0.2, 4 * tol)
            continue
        if r.upper <= delta:
            hi = e
            if lo == 0.0 and hi < 1e-12:     # delta(eps) <= target for every eps > 0
                return 0.0, hi
            e = 0.5 * e if lo == 0.0 else 0.5 * (lo + hi)
        elif r.lower > delta:
            lo = e
            e = 0.5 * (lo + hi)
        else:                      # the target is inside this bracket: ask for a narrower one
            if tol <= 1e-6:
                raise NumericalError(f"cannot resolve eps near {e:.6g}; bracket "
                                     f"[{lo:.6g}, {hi:.6g}]")
            tol /= 8
    return lo, hi


def certified_epsilon(mechanism: Mechanism, n: int, delta: float, *, bound: str = "upper",
                      laws: Sequence[GPARV] | None = None, rel_tol: float = 1e-3) -> EpsPoint:
    """Certified ``eps(delta)`` of the optimal bound (``"upper"``, Theorem 4) or of Theorem 5
    (``"lower"``), maximised over ``laws`` (default: :func:`amp.api.laws_for`).

    Same answer as :func:`amp.api.epsilon` (the maximum over the laws of each law's
    certified bracket). A law whose search raises ``ValueError`` (an engine failure, not a
    parameter error; the saddle-point failure at ``E[G] = 0`` that once caused it is fixed in
    :mod:`amp.delta.dispatch`) is handled by a plain certified bisection (:func:`_bisect_epsilon`) and
    counted in ``fallback``.
    """
    if bound not in ("upper", "lower"):
        raise ParameterError(f"bound must be 'upper' or 'lower', got {bound!r}")
    t0 = time.perf_counter()
    laws = list(laws) if laws is not None else laws_for(mechanism, bound, None, n)
    brackets, fallback, methods = [], 0, set()
    for law in laws:
        try:
            r = epsilon_bracket(law, n, delta, rel_tol=rel_tol)
            brackets.append((r.lower, r.upper))
            methods.add(r.method)
        except ValueError as exc:
            if isinstance(exc, ParameterError):
                raise
            brackets.append(_bisect_epsilon(law, n, delta, rel_tol))
            fallback += 1
            methods.add("bisection")
    lo = max(b[0] for b in brackets)
    hi = max(b[1] for b in brackets)
    return EpsPoint(int(n), float(delta), bound, hi if bound == "upper" else lo, lo, hi,
                    time.perf_counter() - t0, fallback, ",".join(sorted(methods)))


def experiment_mechanism(name: str, eps0: float, m: int = 1) -> Mechanism:
    """Mechanism ``name`` of :data:`EXPERIMENT_MECHANISMS` with total budget ``eps0``.

    ``m = 1``: the Table 1 row at ``eps0``. ``m > 1``: the ``m``-joint composition of Section 6
    with ``eps0 / m`` per component (:func:`amp.mechanisms.joint.joint_copies`), the "k-joint" curves of
    Figures 2 and 3.
    """
    if name not in _FACTORIES:
        raise ParameterError(f"mechanism must be one of {', '.join(_FACTORIES)}, got {name!r}")
    if m == 1:
        return EXPERIMENT_MECHANISMS[name](eps0)
    make, kw = _FACTORIES[name]
    return joint_copies(make, m, eps0, **kw)


def experiment_laws(mechanism: Mechanism, bound: str) -> list[GPARV]:
    """Laws whose maximum is the selected bound; for joint mechanisms the upper bound is the
    maximum over every pair type and the lower bound uses inputs distinct in every component
    (:meth:`amp.mechanisms.joint.JointMechanism.lower_laws`)."""
    if isinstance(mechanism, JointMechanism):
        return mechanism.gparv_laws() if bound == "upper" else mechanism.lower_laws()
    return laws_for(mechanism, bound)


_JOINT_KEY = re.compile(r"joint(\d+)_(upper|lower)")


def experiment_point(name: str, eps0: float, key: str, n: int, delta: float, *,
                     rel_tol: float = 1e-3) -> EpsPoint:
    """One point of a curve of Figures 2 and 3 (Section 7): the central eps at ``delta``.

    ``key`` is a curve of ``book/data/figures.json`` (see :data:`CURVE_STYLES`):

    * ``upper`` / ``lower``: the optimal decomposition bound (Theorem 4) / Theorem 5's lower
      bound of the Table 1 row, :func:`certified_epsilon` (relative bracket width ``rel_tol``);
    * ``jointK_upper`` / ``jointK_lower``: the same for the ``K``-joint composition with
      ``eps0 / K`` per component (Section 6), maximised over the laws of
      :func:`experiment_laws`;
    * ``clone``: the standard clone bound for generic ``eps0``-LDP randomizers
      (:func:`amp.baselines.clone_epsilon`, exact numerical);
    * ``hoeffding`` / ``bennett``: the privacy blanket bounds of Balle et al. (2019) for the
      specific mechanism (:func:`amp.baselines.hoeffding_epsilon`,
      :func:`amp.baselines.bennett_epsilon`).

    The bench script and the live re-checks of Chapter 7 both call this function, so a stored
    point and its re-computation take the same code path.
    """
    from amp.baselines import clone_epsilon

    t0 = time.perf_counter()
    if key in ("upper", "lower"):
        mech = experiment_mechanism(name, eps0)
        return certified_epsilon(mech, n, delta, bound=key, laws=experiment_laws(mech, key),
                                 rel_tol=rel_tol)
    m = _JOINT_KEY.fullmatch(key)
    if m:
        mech = experiment_mechanism(name, eps0, int(m.group(1)))
        bound = m.group(2)
        return certified_epsilon(mech, n, delta, bound=bound,
                                 laws=experiment_laws(mech, bound), rel_tol=rel_tol)
    if key == "clone":
        experiment_mechanism(name, eps0)          # validates the name
        r = clone_epsilon(eps0, n, delta)
    elif key in ("hoeffding", "bennett"):
        r = _blanket_baseline_epsilon(key, experiment_mechanism(name, eps0), n, delta)
    else:
        raise ParameterError(f"key must be one of {', '.join(CURVE_STYLES)} or jointK_upper/"
                             f"jointK_lower, got {key!r}")
    return EpsPoint(int(n), float(delta), key, float(r.value), float(r.lower), float(r.upper),
                    time.perf_counter() - t0, 0, r.method)


def _blanket_baseline_epsilon(kind: str, mechanism: Mechanism, n: int, delta: float):
    """:func:`amp.baselines.hoeffding_epsilon` / :func:`amp.baselines.bennett_epsilon` of the
    mechanism (privacy blanket with Hoeffding's / Bennett's inequality, Balle et al. 2019)."""
    from amp.baselines import bennett_epsilon, hoeffding_epsilon
    return {"hoeffding": hoeffding_epsilon, "bennett": bennett_epsilon}[kind](mechanism, n, delta)


def joint_estimates(name: str, eps0: float, n: int, delta: float,
                    ks: Iterable[int] = range(1, 9)) -> np.ndarray:
    """Uncertified saddle-point estimate of the central eps of ``k``-joint versions (Section 6).

    For each ``k``: the mechanism ``name`` composed ``k`` times with ``eps0 / k`` per component
    (total ``eps0``, Theorem 1), and :func:`amp.epsilon.approx_epsilon` maximised over every pair
    type of joint inputs. About 2-30 ms per ``k``: for figures and the widget only; the
    certified values come from :func:`joint_certified`. ``nan`` where the estimate fails.
    """
    out = []
    for k in ks:
        mech = experiment_mechanism(name, eps0, int(k))
        vals = []
        for law in experiment_laws(mech, "upper"):
            try:
                vals.append(approx_epsilon(law, int(n), delta))
            except (ArithmeticError, ValueError):
                vals.append(math.nan)
        out.append(max(vals) if not any(math.isnan(v) for v in vals) else math.nan)
    return np.array(out, dtype=float)


def joint_certified(name: str, eps0: float, n: int, delta: float,
                    ks: Iterable[int] = (1, 2, 3, 4), *, bound: str = "upper",
                    rel_tol: float = 1e-2) -> list[EpsPoint]:
    """Certified eps of the ``k``-joint versions with total ``eps0`` (Section 6), one per ``k``.

    ``bound="upper"``: Theorem 4 maximised over every pair type of joint inputs;
    ``bound="lower"``: Theorem 5 with joint inputs distinct in every component.
    """
    out = []
    for k in ks:
        mech = experiment_mechanism(name, eps0, int(k))
        out.append(certified_epsilon(mech, int(n), delta, bound=bound,
                                     laws=experiment_laws(mech, bound), rel_tol=rel_tol))
    return out


def joint_pair_types(name: str, eps0: float, k: int, n: int, delta: float, *,
                     rel_tol: float = 1e-2) -> list[tuple[int, EpsPoint]]:
    """Certified eps of each pair type of the ``k``-joint version, as ``(s, point)``.

    ``s`` is the number of components in which the two joint inputs differ (``s = k``: the
    pair of the paper's experiments). The certified bound of the joint mechanism is the
    maximum over ``s`` (:meth:`amp.mechanisms.joint.JointMechanism.gparv_laws`).
    """
    mech = experiment_mechanism(name, eps0, int(k))
    if not isinstance(mech, JointMechanism):
        mech = JointMechanism([mech])
    return [(len(jp.differ), certified_epsilon(mech, int(n), delta, laws=[jp.law],
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


def clone_pair_table(n: int, eps0: float) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Standard clone reduction pair ``(P0^C, P1^C)`` of Theorem 3 by enumeration.

    ``C ~ Bin(n-1, e^-eps0)``, ``A ~ Bin(C, 1/2)``, ``Delta ~ Bern(e^eps0/(e^eps0+1))``;
    ``P0^C = (A + Delta, C - A + 1 - Delta)``, ``P1^C = (A + 1 - Delta, C - A + Delta)``.
    Returns the outcomes ``(u, v)`` and their probabilities under both (small ``n`` only).
    """
    from scipy import stats

    if not 1 <= int(n) <= 400:
        raise ParameterError(f"n must be in [1, 400] for the enumeration, got {n}")
    E = math.exp(eps0)
    alpha = E / (E + 1)
    P0: dict[tuple[int, int], float] = {}
    P1: dict[tuple[int, int], float] = {}
    for c in range(n):
        pc = float(stats.binom.pmf(c, n - 1, 1 / E)) if n > 1 else 1.0
        pa = pc * stats.binom.pmf(np.arange(c + 1), c, 0.5)
        for a in range(c + 1):
            for d, w in ((1, alpha), (0, 1 - alpha)):
                k0 = (a + d, c - a + 1 - d)
                k1 = (a + 1 - d, c - a + d)
                P0[k0] = P0.get(k0, 0.0) + pa[a] * w
                P1[k1] = P1.get(k1, 0.0) + pa[a] * w
    keys = sorted(set(P0) | set(P1))
    return keys, np.array([P0.get(k, 0.0) for k in keys]), np.array([P1.get(k, 0.0) for k in keys])


# ============================================================================ stored curves
def figures_path() -> Path:
    """``book/data/figures.json`` of the repository (written by ``bench/reproduce_figures.py``)."""
    return Path(__file__).resolve().parents[1] / "book" / "data" / "figures.json"


def load_figures(path: str | Path | None = None) -> dict:
    """Load the stored curves of Figures 2 and 3 (see ``bench/reproduce_figures.py``)."""
    p = Path(path) if path is not None else figures_path()
    if not p.exists():
        raise ParameterError(f"{p} not found: run `python bench/reproduce_figures.py`")
    with open(p, encoding="utf-8") as fh:
        return json.load(fh)


def panel(data: Mapping, mechanism: str, eps0: float) -> dict:
    """The stored panel of ``mechanism`` at ``eps0``."""
    for pnl in data["panels"]:
        if pnl["mechanism"] == mechanism and math.isclose(pnl["eps0"], eps0):
            return pnl
    raise ParameterError(f"no stored panel for {mechanism!r} at eps0={eps0}")


def curve(pnl: Mapping, key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(ns, eps)`` of one stored curve of a panel."""
    c = pnl["curves"][key]
    return np.asarray(c["n"], dtype=float), np.asarray(c["value"], dtype=float)


def _at(pnl: Mapping, key: str, n: int) -> float:
    ns, v = curve(pnl, key)
    i = np.flatnonzero(ns == n)
    if i.size == 0:
        raise ParameterError(f"n={n} not stored for curve {key!r}")
    return float(v[i[0]])


def stored_point(data: Mapping, mechanism: str, eps0: float, key: str, n: int) -> dict:
    """``{"value", "lower", "upper", "seconds"}`` of one stored point of ``figures.json``."""
    c = panel(data, mechanism, eps0)["curves"][key]
    ns = list(c["n"])
    if n not in ns:
        raise ParameterError(f"n={n} not stored for curve {key!r}")
    i = ns.index(n)
    return {k: c[k][i] for k in ("value", "lower", "upper", "seconds")}


def tightness_rows(data: Mapping, ns: Iterable[int] = (1000, 10000, 100000)
                   ) -> list[list[object]]:
    """Rows ``[mechanism, eps0, (e^eps_u - 1)/(e^eps_l - 1) at each n...]`` (upper / lower)."""
    rows = []
    for pnl in data["panels"]:
        row: list[object] = [pnl["mechanism"], pnl["eps0"]]
        for n in ns:
            up, lo = _at(pnl, "upper", n), _at(pnl, "lower", n)
            row.append(math.expm1(up) / math.expm1(lo))
        rows.append(row)
    return rows


#: Curves of the timing table (Chapter 7), in column order.
TIMING_KEYS = ("upper", "lower", "joint2_upper", "joint4_upper", "clone", "bennett")


def timing_rows(data: Mapping, keys: Sequence[str] = TIMING_KEYS) -> list[list[object]]:
    """Rows ``[mechanism, eps0, seconds per curve for each key...]`` from the stored timings.

    A curve's time is the sum over its stored ``n`` (one certified ``eps(delta)`` each).
    """
    rows = []
    for pnl in data["panels"]:
        rows.append([pnl["mechanism"], pnl["eps0"]] +
                    [float(np.sum(pnl["curves"][k]["seconds"])) for k in keys])
    return rows


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
            v = [_at(pnl, key, n) for key in ("upper", "joint2_upper", "joint4_upper", "clone")]
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
        sig = {k: ratio_spread(experiment_laws(experiment_mechanism(name, e0, k), "upper"))
               for k in (1, 2, 4)}
        eps = {k: _at(pnl, key, n) for k, key in ((1, "upper"), (2, "joint2_upper"),
                                                  (4, "joint4_upper"))}
        rows.append([name, e0, sig[2] / sig[1], eps[2] / eps[1], sig[4] / sig[1],
                     eps[4] / eps[1]])
    return rows


def finite_domain_rows(data: Mapping, ns: Sequence[int] = (1_000, 100_000)
                       ) -> list[list[object]]:
    """Rows ``[eps0, d, gamma, eps at each n...]`` of the stored finite-domain effect
    (``d = "Table 1"`` for the large-domain row)."""
    fin = data["finite_domain"]
    rows = []
    for r in fin["rows"]:
        stored = list(r["n"])
        rows.append([r["eps0"], "Table 1" if r["d"] is None else r["d"], r["gamma"]] +
                    [r["value"][stored.index(n)] for n in ns])
    return rows


def html_table(header: Sequence[str], rows: Sequence[Sequence[object]], *,
               fmt: Mapping[int, str] | None = None, caption: str = "") -> str:
    """A small HTML table; ``fmt`` maps a column index to a format spec (e.g. ``".3f"``)."""
    fmt = fmt or {}

    def cell(i: int, v: object) -> str:
        if isinstance(v, float) and i in fmt:
            return format(v, fmt[i])
        return str(v)

    out = ['<table class="table">']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) +
               "</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(cell(i, v))}</td>"
                                    for i, v in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# ============================================================================ figures
def plot_clone_pair(n: int, eps0: float, *, ax=None):
    """Laws of the first coordinate ``u`` under the standard clone pair (Theorem 3)."""
    ax = _axes(ax)
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
                          title: str = "", logy: bool = True, ax=None):
    """``delta(eps)`` curves; labels in ``invalid`` are drawn grey-dashed and marked
    "NOT a valid bound", labels in ``truth`` as black markers (exact divergences)."""
    ax = _axes(ax)
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
    return _finish_delta_axes(ax, logy, title)


def plot_experiment_panel(pnl: Mapping, *, keys: Iterable[str] | None = None, ax=None,
                          legend: bool = True, title: str | None = None):
    """One panel of Figures 2/3: ``e^eps - 1`` against ``n`` (log-log) for the stored curves."""
    ax = _axes(ax)
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
    plt = _plt()
    eps0s = sorted({p["eps0"] for p in data["panels"]})
    fig, axes = plt.subplots(len(mechanisms), len(eps0s), figsize=(9.0, 3.3 * len(mechanisms)),
                             layout="constrained", squeeze=False)
    for i, name in enumerate(mechanisms):
        for j, e0 in enumerate(eps0s):
            plot_experiment_panel(panel(data, name, e0), keys=keys, ax=axes[i, j], legend=False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize="small")
    return fig


def plot_joint_curves(ns: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                      clone: Sequence[float] | None = None, title: str = "", ax=None):
    """Central ``e^eps - 1`` against ``n`` for ``k``-joint versions at the same total ``eps0``."""
    ax = _axes(ax)
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
    ax = _axes(ax)
    ks = np.asarray(ks, dtype=int)
    if estimate is not None:
        ax.plot(ks, np.expm1(np.asarray(estimate, dtype=float)), color="C0", ls="--", lw=1.5,
                label="k-joint, saddle-point estimate (uncertified)")
    if certified:
        kk = np.array(sorted(certified))
        ax.plot(kk, np.expm1([certified[k] for k in kk]), "o", color="C0", ms=6,
                label="k-joint, certified upper bound (Thm 4)")
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
    from amp.baselines import clone_epsilon

    ks = list(range(1, int(k_max) + 1))
    est = joint_estimates(mechanism, eps0, n, delta, ks)
    clone = float(clone_epsilon(eps0, n, delta, xtol=1e-3).value)
    dots = dict(certified) if certified is not None else \
        stored_joint_points(data, mechanism, eps0, n, delta)
    dots = {k: v for k, v in dots.items() if k <= k_max}
    log_delta = math.log10(delta)
    delta_txt = f"10^{{{log_delta:.0f}}}" if log_delta.is_integer() else f"{delta:.2g}"
    n_txt = f"{int(n):,}".replace(",", "{,}")
    return plot_joint_vs_k(ks, est, certified=dots, clone=clone, ax=ax,
                           title=rf"{mechanism}, total $\varepsilon_0 = {eps0:g}$, "
                                 rf"$n = {n_txt}$, $\delta = {delta_txt}$")


def plot_joint_blanket(ks: Sequence[int], gammas: Mapping[str, Sequence[float]], *,
                       clone_mass: float | None = None, title: str = "", ax=None):
    """Blanket mass ``gamma`` of ``k``-joint versions at a fixed total ``eps0`` (Section 6).

    ``gammas`` maps a mechanism to its ``gamma`` for each ``k`` (the product of the components'
    masses); ``clone_mass`` is the shared mass ``e^-eps0`` of the standard clone decomposition,
    which only sees the total ``eps0``.
    """
    ax = _axes(ax)
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


#: Curves of the Chapter 6 figure: the single randomizer, the 2- and 4-joint versions, the clone.
JOINT_KEYS = ("upper", "joint2_upper", "joint4_upper", "clone")


def plot_joint_figure(data: Mapping, eps0: float, mechanisms: Sequence[str] | None = None, *,
                      keys: Iterable[str] = JOINT_KEYS):
    """The ``k``-joint curves of Figures 2 and 3 at one ``eps0``: a 2 x 2 grid of mechanisms,
    ``e^eps - 1`` against ``n``, from the stored curves."""
    plt = _plt()
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


def plot_finite_domain(rows: Sequence[Mapping], *, ax=None, title: str = "",
                       resolution: float | None = None):
    """Relative reduction ``1 - eps_d / eps_Table1`` of RAPPOR's certified eps over ``d`` bits,
    against ``n`` (log-log).

    ``rows``: dicts with ``d`` (``None`` for the Table 1 row), ``n`` and ``value`` lists.
    Reductions ``<= 0`` are not drawn. ``resolution``: relative width of the stored brackets;
    reductions below twice that are shaded as not resolved.
    """
    ax = _axes(ax)
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
    lo = 2 * resolution / 10 if resolution is not None else None
    if lo is not None:
        ax.set_ylim(bottom=lo)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_finite_domain_figure(data: Mapping):
    """The finite-domain effect (Chapter 7): one :func:`plot_finite_domain` panel per stored
    ``eps0``, RAPPOR over ``d`` bits against the Table 1 row, with a shared legend."""
    plt = _plt()
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


def plot_conjecture_curves(eps: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                           upper: Sequence[float] | None = None, title: str = "", ax=None):
    """Exact ``delta(eps)`` of several neighbouring pairs, with the certified upper bound."""
    ax = _axes(ax)
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        ax.plot(eps, np.where(v > 0, v, np.nan), lw=1.8, color=f"C{i}", label=label)
    if upper is not None:
        u = np.asarray(upper, dtype=float)
        ax.plot(eps, np.where(u > 0, u, np.nan), color="black", ls="--", lw=1.2,
                label="certified upper bound (Thm 4)")
    ax.set(yscale="log", xlabel=r"central $\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_conjecture_ratios(reports: Sequence, *, ax=None):
    """Ratio of the largest divergence over all pairs to the conjectured pair's, against
    ``eps / eps0``, one line per :class:`amp.oracles.conjecture.ConjectureReport`."""
    ax = _axes(ax)
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
    """Total variation of each statement of the Appendix A law from the seeded simulation."""
    ax = _axes(ax)
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
    ax = _axes(ax, figsize=(4.8, 4.2))
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


# ============================================================================ widgets
def experiments_widget(data: Mapping, mechanism: str = "10-RR", regime: str = "large"):
    """One panel of Figures 2/3 from the stored curves, with a choice of mechanism, regime and
    curve groups (Chapter 7; needs a kernel; each redraw only re-plots stored data)."""
    import ipywidgets as widgets

    eps0s = sorted({p["eps0"] for p in data["panels"]})
    names = sorted({p["mechanism"] for p in data["panels"]},
                   key=lambda s: list(EXPERIMENT_MECHANISMS).index(s))

    def draw(mechanism, regime, ours, baselines, joint):
        keys = (["upper", "lower"] if ours else []) + \
               (["clone", "hoeffding", "bennett"] if baselines else []) + \
               (["joint2_upper", "joint2_lower", "joint4_upper", "joint4_lower"] if joint else [])
        e0 = eps0s[0] if regime == "low" else eps0s[-1]
        plot_experiment_panel(panel(data, mechanism, e0), keys=keys)
        _plt().show()

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

    Each redraw calls :func:`plot_joint_choice` (saddle-point estimates and the certified
    clone, well under a second); the dots are the certified values stored in ``data`` when the
    choice is a stored point (``eps0`` of a stored panel, ``n`` on the stored grid).
    """
    import ipywidgets as widgets

    ns = sorted(int(x) for x in data["inputs"]["n"]) if data is not None else \
        [1_000, 3_162, 10_000, 31_623, 100_000]
    if n not in ns:
        n = min(ns, key=lambda x: abs(math.log(x / n)))

    def draw(mechanism, eps0, n, k_max):
        plot_joint_choice(mechanism, round(eps0, 6), n, delta=delta, k_max=k_max, data=data)
        _plt().show()

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
