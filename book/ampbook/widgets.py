"""Interactive figures of the book (need a kernel; ipywidgets is imported when one is built).

Each widget redraws a static figure of :mod:`ampbook.plots`, :mod:`ampbook.experiments` or
:mod:`ampbook.joint`; the book shows that static figure first, at the widget's default values.
The calculator of Chapter 10 answers with the front door (:func:`amp.epsilon`,
:func:`amp.calibrate_eps0`) and prints the equivalent command line (:func:`cli_line`).
"""

from __future__ import annotations

import decimal
import functools
import html
import math
import re
import time
from typing import Mapping

import numpy as np

from amp.api import calibrate_eps0, epsilon
from amp.core.errors import AmpError, NumericalError, ParameterError
from amp.core import validate as V
from amp.core.extras import require
from amp.core.floats import round_outward
from amp.core.result import Bound
from amp.mechanisms import registry
from amp.mechanisms.base import Mechanism
from ampbook.experiments import (EXPERIMENT_MECHANISMS, eps_estimate_versus_n,
                                 plot_experiment_panel)
from ampbook.joint import plot_joint_choice
from ampbook.plots import plot_eps_vs_n, plot_gparv_atoms
from ampbook.stored import panel
from ampbook.style import show

__all__ = ["MECHANISMS", "make_mechanism", "cli_line", "parse_count", "parse_real",
           "parse_size", "calculator_inputs", "calculator_answer", "round_out", "fold_output",
           "interactive_with_status", "EPS_VS_N_MIN_DELTA_EXPONENT", "eps_vs_n_widget",
           "gparv_widget", "calculator_widget", "experiments_widget", "joint_widget"]

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


def _cli_number(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (``4``, ``0.25``, ``1e-6``,
    ``3.1622776601683794e-7``): the CLI then parses the very float the widget used."""
    v = float(value)
    if not math.isfinite(v):
        raise ParameterError(f"cannot write {value!r} on a command line")
    if v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    text = repr(v).replace("e-0", "e-").replace("e+0", "e+")
    if float(text) != v:       # pragma: no cover - repr round-trips every finite float
        raise NumericalError(f"{v!r} does not round-trip through {text!r}")
    return text


def cli_line(command: str, name: str, size: int | None = None, *, bound: str | None = None,
             rel_tol: float | None = None, **values: float) -> str:
    """The ``python -m amp`` command line answering the same question as the API call.

    ``command`` is ``delta``, ``epsilon`` or ``eps0``; ``values`` holds ``n``, ``eps0``, ``eps``,
    ``delta`` (those given are passed, in that order). Every number is written so that the CLI
    parses exactly the float given here; ``bound`` and ``rel_tol`` are added when given.

    Examples
    --------
    >>> cli_line("epsilon", "k-RR", 10, eps0=4, n=10_000, delta=1e-6)
    'python -m amp epsilon --mechanism krr --k 10 --eps0 4 --n 10000 --delta 1e-6'
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
            parts += [f"--{key}", str(int(v)) if key == "n" else _cli_number(v)]
    if bound is not None:
        parts += ["--bound", bound]
    if rel_tol is not None:
        parts += ["--rel-tol", _cli_number(rel_tol)]
    return " ".join(parts)


def fold_output(captured, title: str = "Show output"):
    """The outputs of an IPython ``%%capture`` behind a collapsed toggle (the live app's
    rendering of the book's ``hide-output`` / ``hide-cell`` cells, ``scripts/live``)."""
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")
    out = widgets.Output()
    with out:
        captured.show()
    box = widgets.Accordion(children=[out])
    box.set_title(0, title)
    box.selected_index = None
    return box


_RED = "#b00020"


def interactive_with_status(draw, busy: str = "", **controls):
    """``ipywidgets.interactive(draw, **controls)`` with a status line above its output.

    While ``draw`` runs the controls are locked and the status says "computing…" (and
    ``busy``, e.g. how long it may take); afterwards it says how long the redraw took. A
    setting refused (:class:`~amp.core.errors.ParameterError`) or a computation that fails
    (any other exception, a stopped child of :func:`ampbook.limits.run_limited` included) is
    said in red there and in the output area, which then holds no figure: an old figure is
    never left under new settings. ``box.status`` is the status line (tests, scripted use).
    """
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")
    status = widgets.HTML(value="")
    locked: list = []

    @functools.wraps(draw)            # interactive reads draw's parameters
    def guarded(**kwargs):
        for c in locked:
            c.disabled = True
        status.value = "<b>computing…</b>" + (f" ({html.escape(busy)})" if busy else "")
        t0 = time.perf_counter()
        try:
            draw(**kwargs)
            status.value = f"drawn in {time.perf_counter() - t0:.1f} s"
        except Exception as exc:  # noqa: BLE001 - a widget must say so, never stay silent
            what = ("setting refused" if isinstance(exc, ParameterError) else
                    "computation failed")
            text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, AmpError) else str(exc)
            status.value = (f"<span style='color:{_RED}'><b>{what}:</b> "
                            f"{html.escape(text)}</span>")
            print(f"{what}: {text}")
            pyplot().close("all")
        finally:
            for c in locked:
                c.disabled = False

    box = widgets.interactive(guarded, **controls)
    locked.extend(box.kwargs_widgets)
    box.children = (*box.children[:-1], status, box.children[-1])
    box.status = status
    return box


# ============================================================================ Chapters 1, 5
#: Smallest log10 delta of Chapter 1's widget.
EPS_VS_N_MIN_DELTA_EXPONENT = -12
#: Certified points of Chapter 1's widget are computed in a child process stopped after this
#: many seconds (:func:`ampbook.limits.run_limited`; a safety net: with the characteristic-
#: function backend every point of the widget's range took under a second) ...
EPS_VS_N_TIMEOUT = 30.0
#: ... or at this many bytes of address space beyond the kernel's.
EPS_VS_N_MEMORY = 2 * 1024 ** 3


def _certified_point(mech: Mechanism, n: int, delta: float) -> float:
    """Certified upper eps at ``n`` (Theorem 4), relative width 3%: the characteristic-function
    backend (:mod:`amp.backends.cfinv`, certified, well under a second at any ``n`` and
    ``delta`` of the widget; the automatic choice took up to two minutes and 1.6 GB at
    delta = 1e-12, n = 10^4), or, where it cannot reach the width (a few users at large
    eps0), the automatic choice (fast there)."""
    try:
        return epsilon(mech, int(n), delta, rel_tol=3e-2, method="cf").value
    except AmpError:
        return epsilon(mech, int(n), delta, rel_tol=3e-2).value


def _certified_points(mech: Mechanism, ns, delta: float) -> list[float]:
    return [_certified_point(mech, n, delta) for n in ns]


def eps_vs_n_widget(mechanism: str = "k-RR", eps0: float = 4.0, log10_n: tuple[int, int] = (2, 6),
                    delta_exponent: int = -6):
    """Interactive central ``eps`` against ``n`` (Chapter 1; needs a kernel).

    The dashed estimate (:func:`ampbook.experiments.eps_estimate_versus_n`) is fast (about 0.1 s
    per redraw); ticking *certified points* adds certified upper bounds (:func:`amp.epsilon`)
    at three values of ``n`` (a few seconds), computed in a child process limited to
    :data:`EPS_VS_N_TIMEOUT` seconds and :data:`EPS_VS_N_MEMORY` bytes (a point not answered
    in time is said so, the estimate is still drawn; :func:`_certified_point`). Status line
    and locked controls while drawing: :func:`interactive_with_status`.
    """
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")
    from ampbook.limits import WidgetLimitError, run_limited

    def draw(mechanism, eps0, log10_n, delta_exponent, certified):
        if not EPS_VS_N_MIN_DELTA_EXPONENT <= delta_exponent <= -3:
            raise ParameterError(f"log10 delta must be in [{EPS_VS_N_MIN_DELTA_EXPONENT}, -3] "
                                 f"in this widget, got {delta_exponent}")
        mech = make_mechanism(mechanism, eps0)
        delta = 10.0 ** delta_exponent
        lo, hi = log10_n
        grid = np.unique(np.logspace(lo, hi, 25).astype(int))
        est = eps_estimate_versus_n(mech, grid, delta)
        ns, up = None, None
        if certified:
            ns = np.unique(np.logspace(lo, hi, 3).astype(int))
            try:
                up = run_limited(_certified_points, mech, ns, delta,
                                 timeout=EPS_VS_N_TIMEOUT, memory=EPS_VS_N_MEMORY)
            except (AmpError, MemoryError, WidgetLimitError) as exc:
                print(f"certified points unavailable: {type(exc).__name__}: {exc}")
                ns = None
        show(plot_eps_vs_n(ns, up, estimate=(grid, est), eps0=eps0, delta=delta,
                           title=mech.describe()))

    return interactive_with_status(
        draw, busy="certified points take a few seconds",
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.5, max=8.0, step=0.25,
                                 continuous_update=False, description="ε₀"),
        log10_n=widgets.IntRangeSlider(value=log10_n, min=1, max=7, continuous_update=False,
                                       description="log₁₀ n"),
        delta_exponent=widgets.IntSlider(value=delta_exponent,
                                         min=EPS_VS_N_MIN_DELTA_EXPONENT, max=-3,
                                         continuous_update=False, description="log₁₀ δ"),
        certified=widgets.Checkbox(value=False, description="certified points (slower)"),
    )


def gparv_widget(mechanism: str = "k-RR", eps0: float = 2.0, eps: float = 0.5):
    """Interactive atoms of the GPARV ``G_eps`` of a Table 1 mechanism (Chapter 5)."""
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")

    def draw(mechanism, eps0, eps):
        law = make_mechanism(mechanism, eps0).gparv()
        show(plot_gparv_atoms(law, eps))

    return interactive_with_status(
        draw,
        mechanism=widgets.Dropdown(options=list(MECHANISMS), value=mechanism),
        eps0=widgets.FloatSlider(value=eps0, min=0.25, max=6.0, step=0.25, description="ε₀"),
        eps=widgets.FloatSlider(value=eps, min=0.0, max=3.0, step=0.05, description="ε"),
    )


# ============================================================================ Chapters 6, 7
def experiments_widget(data: Mapping, mechanism: str = "10-RR", regime: str = "large"):
    """One panel of Figures 2/3 from the stored curves, with a choice of mechanism, regime and
    curve groups (Chapter 7; needs a kernel; each redraw only re-plots stored data)."""
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")

    eps0s = sorted({p["eps0"] for p in data["panels"]})
    names = sorted({p["mechanism"] for p in data["panels"]},
                   key=lambda s: list(EXPERIMENT_MECHANISMS).index(s))

    def draw(mechanism, regime, ours, baselines, joint):
        keys = (["upper", "lower"] if ours else []) + \
               (["clone", "hoeffding", "bennett"] if baselines else []) + \
               (["joint2_upper", "joint2_lower", "joint4_upper", "joint4_lower"] if joint else [])
        if not keys:         # an empty plot would only warn about its legend
            print("No curve selected: tick ours, baselines or 2-, 4-joint above.")
            return
        e0 = eps0s[0] if regime == "low" else eps0s[-1]
        show(plot_experiment_panel(panel(data, mechanism, e0), keys=keys))

    return interactive_with_status(
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

    Each redraw calls :func:`ampbook.joint.plot_joint_choice` (saddle-point estimates and the
    certified clone, well under a second); the dots are the certified values stored in ``data``
    when the choice is a stored point (``eps0`` of a stored panel, ``n`` on the stored grid).
    """
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")

    ns = sorted(int(x) for x in data["inputs"]["n"]) if data is not None else \
        [1_000, 3_162, 10_000, 31_623, 100_000]
    if n not in ns:
        n = min(ns, key=lambda x: abs(math.log(x / n)))

    def draw(mechanism, eps0, n, k_max):
        show(plot_joint_choice(mechanism, round(eps0, 6), n, delta=delta, k_max=k_max,
                               data=data))

    return interactive_with_status(
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
#: Largest n the calculator accepts (the library and the CLI have no such limit). On the
#: project's shared 2-core machine at delta = 1e-12: n = 1e9 took 50 s and 1.2 GB (RAPPOR),
#: n = 1e8 up to 26 s and 1.1 GB (BLH at eps0 = 8), n = 1e7 a few seconds
#: (bench/bench_live_widgets.py, bench/results/bench_live_widgets.txt).
CALC_MAX_N = 10**7
#: A question of the calculator runs in a child process stopped after this many seconds ...
CALC_TIMEOUT = 60.0
#: ... or at this many bytes of address space beyond the kernel's
#: (:func:`ampbook.limits.run_limited`).
CALC_MEMORY = 3 * 1024 ** 3
#: Relative width of the calculator's eps0 calibration (passed to the CLI line as --rel-tol).
CALC_EPS0_REL_TOL = 1e-2

_INT = re.compile(r"\d+(?:_\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_SCI = re.compile(r"(?:\d+\.?\d*|\.\d+)[eE]\+?\d+")
_POWER = re.compile(r"(\d+)\s*(?:\*\*|\^)\s*(\d+)")
_REAL = re.compile(r"[+]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_REAL_POWER = re.compile(r"(\d+)\s*(?:\*\*|\^)\s*\(?\s*([+-]?\d+)\s*\)?")


def parse_count(text: str, name: str = "n", *, minimum: int = 1,
                maximum: int | None = CALC_MAX_N) -> int:
    """A whole number typed by a user: ``10000``, ``10_000``, ``10,000``, ``1e6``, ``2.5e6``,
    ``10**6`` or ``10^6``; anything else (``1.5``, ``1e-3``, ``abc``, out of range) is refused.

    Scientific notation is read exactly (``decimal``), so ``1e6`` is ``1000000`` and ``1.5e0``
    is refused (not rounded).

    Examples
    --------
    >>> parse_count("1e6"), parse_count("1,000,000"), parse_count("10**6")
    (1000000, 1000000, 1000000)
    """
    raw = str(text).strip()
    value: int | None = None
    if _INT.fullmatch(raw):
        value = int(raw.replace("_", ""))
    elif _THOUSANDS.fullmatch(raw):
        value = int(raw.replace(",", ""))
    elif _SCI.fullmatch(raw):
        d = decimal.Decimal(raw)
        if d == d.to_integral_value():
            value = int(d)
    elif _POWER.fullmatch(raw):
        base, exp = (int(g) for g in _POWER.fullmatch(raw).groups())
        if exp <= 30:
            value = base ** exp
    if value is None:
        raise ParameterError(f"{name} must be a whole number such as 10000, 1e6 or 10**6, "
                             f"got {raw!r}")
    if value < minimum:
        raise ParameterError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ParameterError(f"{name} = {value:.3g} is above this calculator's limit "
                             f"{maximum:.0e} (use amp.epsilon or the CLI for larger values)")
    return value


def parse_real(text: str, name: str, *, low: float = 0.0, high: float = math.inf,
               high_open: bool = False) -> float:
    """A positive real typed by a user (``0.5``, ``4``, ``1e-6``, ``10**-6``, ``10^-6``),
    strictly above ``low`` and at most ``high`` (below it if ``high_open``); else refused.

    Examples
    --------
    >>> parse_real("1e-6", "delta", high=1, high_open=True) == parse_real("10**-6", "delta")
    True
    """
    raw = str(text).strip()
    value: float | None = None
    if _REAL.fullmatch(raw):
        value = float(raw)
    elif _REAL_POWER.fullmatch(raw):
        base, exp = (int(g) for g in _REAL_POWER.fullmatch(raw).groups())
        if base > 0 and abs(exp) <= 300:
            value = float(decimal.Decimal(base) ** exp)
    if value is None or not math.isfinite(value):
        raise ParameterError(f"{name} must be a number such as 0.5, 4 or 1e-6, got {raw!r}")
    if not value > low:
        raise ParameterError(f"{name} must be greater than {low:g}, got {value:g}")
    if value > high or (high_open and value == high):
        op = "below" if high_open else "at most"
        raise ParameterError(f"{name} must be {op} {high:g}, got {value:g}")
    return value


def parse_size(mechanism: str, text: str) -> int | None:
    """``k`` of k-RR (required, at least 2) or the domain size ``d`` of the others (blank or 0:
    the Table 1 form, ``None``)."""
    raw = str(text).strip()
    if mechanism == "k-RR":
        if raw in ("", "0"):
            raise ParameterError("k-RR needs k, the number of input values (at least 2)")
        return parse_count(raw, "k", minimum=2, maximum=10**9)
    if raw in ("", "0"):
        return None
    return parse_count(raw, "d", minimum=1, maximum=10**6)


def calculator_inputs(mechanism: str, size: str, n: str, delta: str, eps0: str | None = None,
                      eps: str | None = None) -> dict:
    """Check the calculator's text fields; every faulty field is reported in one
    :class:`~amp.core.errors.ParameterError` (one line per field)."""
    out: dict = {"mechanism": mechanism}
    errors = []
    checks = [("size", lambda: parse_size(mechanism, size)), ("n", lambda: parse_count(n)),
              ("delta", lambda: parse_real(delta, "delta", high=1.0, high_open=True))]
    if eps0 is not None:
        checks.append(("eps0", lambda: parse_real(eps0, "eps0", high=V.MAX_EPS0)))
    if eps is not None:
        checks.append(("eps", lambda: parse_real(eps, "target eps")))
    if mechanism not in MECHANISMS:
        errors.append(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    for key, check in checks:
        try:
            out[key] = check()
        except ParameterError as exc:
            errors.append(str(exc))
    if errors:
        raise ParameterError("\n".join(errors))
    return out


def calculator_answer(question: Mapping, what: str, *,
                      timeout: float | None = None) -> tuple[Bound, str]:
    """Compute one answer of the calculator and the CLI line that gives the same value.

    ``what`` is ``"upper"`` or ``"lower"`` (certified eps of Theorem 4, Theorem 5's lower
    bound; ``question`` from :func:`calculator_inputs` with ``eps0``) or ``"eps0"`` (largest
    certified eps0 for the target ``eps``, calibrated to relative width
    :data:`CALC_EPS0_REL_TOL`). With a ``timeout`` the computation runs in a child process
    limited to that many seconds and :data:`CALC_MEMORY` bytes
    (:func:`ampbook.limits.run_limited`; over a limit it raises).
    """
    q = question
    name, size, n, delta = q["mechanism"], q["size"], q["n"], q["delta"]

    def run(func, *args, **kwargs):
        if timeout is None:
            return func(*args, **kwargs)
        from ampbook.limits import run_limited
        return run_limited(func, *args, timeout=timeout, memory=CALC_MEMORY, **kwargs)

    if what in ("upper", "lower"):
        res = run(epsilon, make_mechanism(name, q["eps0"], size), n, delta, bound=what)
        line = cli_line("epsilon", name, size, eps0=q["eps0"], n=n, delta=delta,
                        bound=None if what == "upper" else "lower")
        return res, line
    if what == "eps0":
        res = run(calibrate_eps0, lambda e: make_mechanism(name, e, size), n, q["eps"], delta,
                  rel_tol=CALC_EPS0_REL_TOL)
        return res, cli_line("eps0", name, size, n=n, eps=q["eps"], delta=delta,
                             rel_tol=CALC_EPS0_REL_TOL)
    raise ParameterError(f"what must be upper, lower or eps0, got {what!r}")


def round_out(x: float, direction: str, digits: int = 6) -> str:
    """``x`` to ``digits`` significant digits, rounded ``"up"`` or ``"down"`` (an upper bound
    shown rounded is never below the computed one, a lower bound never above it).

    Examples
    --------
    >>> round_out(0.38049412, "up"), round_out(0.38049412, "down")
    ('0.380495', '0.380494')
    """
    if float(x) == 0:
        return "0"
    r = round_outward(x, digits, up=direction == "up").normalize()
    return f"{r:f}" if abs(decimal.Decimal(float(x)).adjusted()) < 5 else f"{r:e}"


def calculator_widget():
    """The practitioner's calculator of Chapter 10 (needs a kernel; one click per question).

    Certified ``eps`` for ``(mechanism, n, delta, eps0)`` (:func:`amp.epsilon`; the upper
    bound first, then, unless unticked, Theorem 5's lower bound), or the largest ``eps0`` meeting a target
    ``(eps, delta)`` (:func:`amp.calibrate_eps0`). Inputs are text: faulty ones are refused
    with a message (:func:`calculator_inputs`); while a question runs the buttons are disabled
    and the status says so. Each answer comes with the ``python -m amp`` line that computes the
    same value (:func:`calculator_answer`).
    """
    widgets = require("ipywidgets", "plot", purpose="ampbook widgets")
    wide = widgets.Layout(width="300px")
    mech = widgets.Dropdown(options=list(MECHANISMS), value="k-RR", description="mechanism",
                            layout=wide)
    size = widgets.Text(value="10", description="k or d", layout=wide)
    n = widgets.Text(value="10000", description="n", layout=wide)
    delta = widgets.Text(value="1e-6", description="δ", layout=wide)
    eps0 = widgets.Text(value="4", description="ε₀", layout=wide)
    target = widgets.Text(value="1", description="target ε", layout=wide)
    go_eps = widgets.Button(description="certified ε for ε₀", button_style="primary",
                            layout=widgets.Layout(width="220px"))
    go_eps0 = widgets.Button(description="largest ε₀ for target ε",
                             layout=widgets.Layout(width="220px"))
    with_lower = widgets.Checkbox(value=True, indent=False, layout=widgets.Layout(width="auto"),
                                  description="with the lower bound of Theorem 5, §5.3 (after the upper; "
                                              "up to ten seconds more)")
    status = widgets.HTML(value="")
    result = widgets.HTML(value="")
    hint = widgets.HTML(
        "<small><b>k or d</b>: k for k-RR (at least 2); the domain size d for the others "
        "(blank: the Table 1 form). <b>n</b> accepts 10000, 10,000, 1e6 or 10**6, up to 1e7 "
        "here (larger n: the command line, which has no limit); <b>δ</b> "
        "accepts 1e-6 or 10**-6. Certified values are shown rounded outwards (an upper bound up, "
        "a lower bound down).</small>")
    buttons = (go_eps, go_eps0, with_lower)

    def limited(q: Mapping, what: str) -> tuple[Bound, str]:
        return calculator_answer(q, what, timeout=CALC_TIMEOUT)

    def code(line: str) -> str:
        return f"<code style='font-size:85%'>{html.escape(line)}</code>"

    def run(kind: str) -> None:
        for b in buttons:
            b.disabled = True
        result.value = ""
        t0 = time.perf_counter()
        rows: list[str] = []
        try:
            status.value = "<b>computing…</b> (a few seconds; the buttons are locked until then)"
            q = calculator_inputs(mech.value, size.value, n.value, delta.value,
                                  eps0=eps0.value if kind == "eps" else None,
                                  eps=target.value if kind == "eps0" else None)
            m = make_mechanism(q["mechanism"], q.get("eps0", 1.0), q["size"])
            head = (f"{html.escape(m.describe()) if kind == 'eps' else q['mechanism']}, "
                    f"n = {q['n']:,}, δ = {q['delta']:.3g}")
            if kind == "eps":
                up, line = limited(q, "upper")
                rows += [f"<b>ε ≤ {round_out(up.value, 'up')}</b> &nbsp; certified upper bound "
                         f"(Theorem 4, §5.1) for {head}", code(line)]
                result.value = "<br>".join(rows)
                if with_lower.value:
                    status.value = "<b>computing…</b> the lower bound of Theorem 5, §5.3"
                    lo, line = limited(q, "lower")
                    rows += [f"ε ≥ {round_out(lo.value, 'down')} &nbsp; lower bound (Theorem 5, §5.3): "
                             "no analysis can certify less", code(line)]
            else:
                r, line = limited(q, "eps0")
                rows += [f"<b>ε₀ = {round_out(r.value, 'down', 4)}</b> &nbsp; largest certified "
                         f"local ε₀ for target (ε, δ) = ({q['eps']:g}, {q['delta']:.3g}), "
                         f"{head}; the bound misses the target at ε₀ = "
                         f"{round_out(r.upper, 'up', 4)}", code(line)]
            result.value = "<br>".join(rows)
            status.value = f"done in {time.perf_counter() - t0:.1f} s"
        except ParameterError as exc:
            status.value = ("<span style='color:#b00020'><b>cannot compute:</b> "
                            + "<br>".join(html.escape(x) for x in str(exc).split("\n"))
                            + "</span>")
        except Exception as exc:  # noqa: BLE001 - AmpError, a stopped child, any failure: said
            text = str(exc) if isinstance(exc, AmpError) else f"{type(exc).__name__}: {exc}"
            status.value = ("<span style='color:#b00020'><b>error:</b> "
                            f"{html.escape(text)}</span>")
        finally:
            for b in buttons:
                b.disabled = False

    go_eps.on_click(lambda _: run("eps"))
    go_eps0.on_click(lambda _: run("eps0"))
    box = widgets.VBox([widgets.HBox([mech, size]), widgets.HBox([n, delta]),
                        widgets.HBox([eps0, go_eps, with_lower]),
                        widgets.HBox([target, go_eps0]), hint, status, result])
    box.run = run            # for tests and scripted use: box.run("eps")
    return box
