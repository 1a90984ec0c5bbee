"""Chapter 14's book material (book/coursekit, not amp): the variation-ratio numbers of Wang et
al. against an independent oracle, and the widget's stored static figure against amp.

Oracle for the variation-ratio pair: the joint law of the two counts built by explicit
convolution of the victim's and the other users' three-way choices (full probability tables at
small n, written out here), and ``sum (P0 - e^eps P1)_+`` over every outcome.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import amp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))       # as the notebooks, whose folder is book/

from coursekit.variation_ratio import (published_parameters, vr_delta,  # noqa: E402
                                       vr_epsilon, vr_pair)


def _pair_tables(p: float, beta: float, q: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """P0, P1 over (first count, second count) by convolving n three-way choices."""
    alpha = beta / (p - 1)
    r = alpha * p / q
    others = np.zeros((n + 1, n + 1))
    others[0, 0] = 1.0
    for _ in range(n - 1):                       # add one other user at a time
        nxt = (1 - 2 * r) * others
        nxt[1:, :] += r * others[:-1, :]
        nxt[:, 1:] += r * others[:, :-1]
        others = nxt
    rest = 1 - alpha - p * alpha
    tables = []
    for first, second in ((p * alpha, alpha), (alpha, p * alpha)):
        t = rest * others
        t[1:, :] += first * others[:-1, :]
        t[:, 1:] += second * others[:, :-1]
        tables.append(t)
    return tables[0], tables[1]


@pytest.mark.parametrize("name", ["piecewise", "duchi"])
@pytest.mark.parametrize("eps0", [0.5, 2.0, 4.0])
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_vr_delta_matches_explicit_tables(name, eps0, n):
    p, beta, q = published_parameters(name, eps0)
    P0, P1 = _pair_tables(p, beta, q, n)
    assert math.isclose(P0.sum(), 1.0, rel_tol=1e-12) and math.isclose(P1.sum(), 1, rel_tol=1e-12)
    for eps in (0.0, 0.1 * eps0, 0.5 * eps0, 0.9 * eps0):
        exact = max(np.maximum(P0 - math.exp(eps) * P1, 0).sum(),
                    np.maximum(P1 - math.exp(eps) * P0, 0).sum())
        lo, up = vr_delta(p, beta, q, n, eps)
        assert lo * (1 - 1e-9) - 1e-15 <= exact <= up * (1 + 1e-9) + 1e-15, (eps, lo, exact, up)


def test_published_beta_is_the_worst_pair_total_variation():
    """Piecewise: the windows of the ends are disjoint, so TV = (high - low density) x window
    length, from the mechanism's formulas (not from amp)."""
    for eps0 in (0.5, 1.0, 2.0, 4.0):
        E, h = math.exp(eps0), math.exp(eps0 / 2)
        high = (E - h) / (2 * h + 2)
        C = (h + 1) / (h - 1)
        tv = (high - high / E) * (C - 1)
        assert math.isclose(tv, published_parameters("piecewise", eps0)[1], rel_tol=1e-12)
        # and the victim has a left-over at every eps0 (outside the proven case)
        assert math.isclose(vr_pair(*published_parameters("piecewise", eps0))[3],
                            (h - 1) / (h * (h + 1)), rel_tol=1e-12)
        assert vr_pair(*published_parameters("duchi", eps0))[3] < 1e-12


def test_vr_number_is_uncertified_and_below_a_certified_lower_bound():
    """Piecewise, eps0 = 4, n = 1000: at the VR number, Theorem 5's exact delta of a pair of
    datasets (certified from below) exceeds the target, so the number is not an upper bound.
    Duchi (no left-over): the VR number is amp's certified number."""
    vr = vr_epsilon(*published_parameters("piecewise", 4.0), 1_000, 1e-6)
    assert vr.certified is False and vr.leftover
    below = amp.delta(amp.PiecewiseMechanism(4.0), 1_000, vr.value, bound="lower")
    assert below.lower > 1e-6 * 1.02
    d = vr_epsilon(*published_parameters("duchi", 2.0), 1_000, 1e-6)
    ref = amp.epsilon(amp.Duchi(2.0), 1_000, 1e-6, rel_tol=1e-6)
    assert not d.leftover and abs(d.value / ref.value - 1) < 2e-6


def test_vr_refuses_what_is_not_a_distribution():
    with pytest.raises(amp.ParameterError):
        vr_pair(math.exp(1.0), 0.99, math.exp(1.0))      # alpha (p + 1) > 1
    with pytest.raises(amp.ParameterError):
        published_parameters("square wave", 1.0)


def test_static_figure_points_bracket_amp():
    """Stored ch14 points (rounded outwards): delta at the stored upper eps is <= 1e-6 and
    Theorem 5's delta at the stored lower eps is >= 1e-6 (other calls than the eps search)."""
    fig = json.loads((ROOT / "book" / "data" / "static_figs" / "ch14.json").read_text())
    names, eps0s = (c["values"] for c in fig["controls"])
    from coursekit.numeric import RANDOMIZERS
    for key in ("1|2", "0|4", "2|1"):
        i, j = map(int, key.split("|"))
        mech = RANDOMIZERS[names[i]][0](eps0s[j])
        series = [{**fig["styles"][s["s"]], **s} for s in fig["frames"][key]["series"]]
        band = next(s for s in series if s["kind"] == "band")
        for n, lo, hi in list(zip(band["x"], band["y"], band["y2"]))[:2]:
            assert lo <= hi
            assert amp.delta(mech, n, hi).upper <= 1e-6 * (1 + 1e-12), (key, n, hi)
            assert amp.delta(mech, n, lo, bound="lower").lower >= 1e-6, (key, n, lo)


def test_widget_busy_state_and_failure_message(monkeypatch):
    """While a redraw computes, the controls are disabled and the status says so; a refused
    computation leaves a visible message and the controls enabled again."""
    pytest.importorskip("ipywidgets")
    import matplotlib
    matplotlib.use("Agg")
    import coursekit.numeric as N
    seen = {}

    def fake_curves(name, eps0, ns=N.WIDGET_NS, delta=1e-6):
        seen["disabled"] = box.children[0].children[0].disabled
        seen["status"] = box.children[1].value
        if eps0 == 4.0:
            raise amp.ParameterError("refused for the test")
        return {"n": list(ns), "upper": [0.2] * len(ns), "lower": [0.1] * len(ns),
                "vr": [0.15] * len(ns)}

    box = None
    monkeypatch.setattr(N, "numeric_curves", fake_curves)
    monkeypatch.setattr(N, "plot_numeric", lambda *a, **k: None)
    import ipywidgets
    real_vbox = ipywidgets.VBox

    def capture(children, **kw):        # the box exists before the first redraw runs
        nonlocal box
        box = real_vbox(children, **kw)
        return box

    monkeypatch.setattr(ipywidgets, "VBox", capture)
    w = N.numeric_widget("piecewise mechanism", eps0=2.0)
    pick, slider = w.children[0].children
    status = w.children[1]
    assert seen["disabled"] and "computing" in seen["status"]
    assert not pick.disabled and "[0.1000, 0.2000]" in status.value and "0.1500" in status.value
    slider.value = 4.0
    assert "cannot compute" in status.value and "refused for the test" in status.value
    assert not pick.disabled and not slider.disabled


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_worst_variance_against_the_density(eps0):
    """The piecewise report's variance at t = 1 by numerical integration of its density (levels
    and window from the chapter's formulas), and Duchi's C^2 at x = 0 from its two outputs."""
    from coursekit.numeric import worst_variance
    E, h = math.exp(eps0), math.exp(eps0 / 2)
    C = (h + 1) / (h - 1)
    high = (E - h) / (2 * h + 2)
    y = np.linspace(-C, C, 400_001)
    f = np.where(y >= 1.0, high, high / E)                # window of t = 1 is [1, C]
    mass, mean = np.trapezoid(f, y), np.trapezoid(y * f, y)
    var = np.trapezoid(y * y * f, y) / mass - (mean / mass) ** 2
    assert math.isclose(mean / mass, 1.0, rel_tol=1e-4)
    assert math.isclose(worst_variance("piecewise mechanism", eps0), var, rel_tol=1e-4)
    c = (E + 1) / (E - 1)                                  # reports +-C, each w.p. 1/2 at x = 0
    assert math.isclose(worst_variance("Duchi et al.", eps0), c * c, rel_tol=1e-12)


def test_static_mean_figure_eps0_meets_the_target():
    """ch14mean's note gives the shuffled eps0 at n = 10,000 rounded down: amp.delta at it is
    <= 1e-6 at the central eps (a different call from the calibration that produced it)."""
    import re
    from coursekit.numeric import MEAN_RANDOMIZERS
    fig = json.loads((ROOT / "book" / "data" / "static_figs" / "ch14mean.json").read_text())
    names, epss = (c["values"] for c in fig["controls"])
    for key, frame in fig["frames"].items():
        i, j = map(int, key.split("|"))
        e0 = float(re.search(r"shuffled ε₀ = ([0-9.]+)", frame["note"]).group(1))
        got = amp.delta(MEAN_RANDOMIZERS[names[i]](e0), 10_000, epss[j])
        assert got.upper <= 1e-6, (key, e0, got)


def test_mean_widget_shows_a_refusal(monkeypatch):
    pytest.importorskip("ipywidgets")
    import matplotlib
    matplotlib.use("Agg")
    import coursekit.numeric as N
    states = []

    def fake(name, eps, ns=N.WIDGET_NS, delta=1e-6):
        states.append(N_box[0].children[0].children[1].disabled if N_box else True)
        raise amp.NumericalError("not this time")

    N_box = []
    import ipywidgets
    real_vbox = ipywidgets.VBox
    monkeypatch.setattr(ipywidgets, "VBox", lambda ch, **kw: N_box.append(real_vbox(ch, **kw))
                        or N_box[-1])
    monkeypatch.setattr(N, "mean_errors", fake)
    w = N.mean_widget()
    assert states == [True]
    assert "cannot compute" in w.children[1].value and "not this time" in w.children[1].value
    assert not w.children[0].children[1].disabled
