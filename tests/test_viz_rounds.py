"""Figure data of chapter 11 (ampbook.rounds) and the many-round baselines
(amp.baselines.composition): amp's composed profile is never above either baseline, and the
baselines agree with dp-accounting-free references where one exists."""

from __future__ import annotations

import math
import time

import pytest

import amp
from amp.baselines.composition import clone_composed_epsilon, per_round_composed_epsilon
from amp.rounds import optimal_homogeneous_epsilon
from ampbook.rounds import rounds_curves


def test_baselines_are_above_amp_and_ordered_in_T():
    mech, n, d = amp.KRR(2.0, k=10), 10_000, 1e-6
    c = rounds_curves(mech, n, d, (1, 10, 100))
    assert all(lo <= up for lo, up in zip(c.lower, c.upper))
    assert all(u < cl for u, cl in zip(c.upper, c.clone))
    assert all(u < b for u, b in zip(c.upper[1:], c.per_round[1:]))
    assert list(c.clone) == sorted(c.clone) and list(c.per_round) == sorted(c.per_round)


def test_per_round_baseline_is_the_optimal_composition_of_a_certified_eps():
    mech, n, d = amp.KRR(2.0, k=10), 10_000, 1e-6
    T = 10
    ref = min(optimal_homogeneous_epsilon(amp.epsilon(mech, n, f * d / T).upper, f * d / T,
                                          T, d) for f in (0.02, 0.1, 0.3, 0.6))
    # the same certified per-round eps up to the search accuracy (1e-4), composed the same way
    assert per_round_composed_epsilon(mech, n, d, T) == pytest.approx(ref, rel=2e-4)


def test_composed_clone_one_round_is_above_the_clone_eps():
    """One round of the composed clone profile: a certified eps at least the clone's own."""
    e1 = clone_composed_epsilon(amp.KRR(2.0, k=10), 10_000, 1e-6, [1])[0]
    direct = __import__("amp.baselines", fromlist=["clone_epsilon"]).clone_epsilon(
        2.0, 10_000, 1e-6)
    assert direct.lower <= e1 * (1 + 1e-9) and math.isfinite(e1)
    assert e1 <= direct.upper * 1.02          # the PLD grid costs at most a little


def test_sampled_curves_have_no_clone_baseline():
    c = rounds_curves(amp.KRR(2.0, k=10), 10_000, 1e-6, (1, 10), sampling=0.1, baselines=False)
    assert c.per_round is None and c.clone is None and c.sampling == 0.1


# ------------------------------------------------------------------ chapter 11's figures, widget
import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from amp.core.errors import NumericalError, ParameterError  # noqa: E402
from ampbook import rounds as vr  # noqa: E402


def _fake_curves(sampling: float = 1.0) -> vr.RoundsCurves:
    return vr.RoundsCurves((1, 10, 100, 1000), (0.08, 0.27, 0.94, 3.3), (0.079, 0.27, 0.93, 3.28),
                           (0.1, 0.9, 5.2, 20.0), (0.2, 0.6, 1.8, 6.0), "10-RR, n = 10,000",
                           sampling)


@pytest.fixture()
def _close():
    yield
    plt.close("all")


def test_plot_rounds_has_numbered_axes_and_section_names(_close):
    ax = vr.plot_rounds([_fake_curves()], delta=1e-6)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("Theorem 4, §5.1" in s and "Theorem 5, §5.3" in s for s in labels)
    assert not any("Thm" in s for s in labels)
    assert len(labels) == 3                        # amp, per-round, clone
    ax.figure.canvas.draw()
    xt = [t.get_text() for t in ax.get_xticklabels()]
    yt = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert xt == ["1", "10", "100", "1,000"]
    assert len(yt) >= 4 and all(any(ch.isdigit() for ch in s) for s in yt)
    assert "rounds T" in ax.get_xlabel() and "δ = 1e-06" in ax.get_ylabel()


def test_plot_rounds_without_baselines(_close):
    ax = vr.plot_rounds([_fake_curves(), _fake_curves(0.1)], delta=1e-6, baselines=False)
    assert len(ax.get_legend().get_texts()) == 2


def test_connect_the_dots_figure_chords_above_a_convex_curve(_close):
    t = np.linspace(1, 3, 101)
    curve = (3 - t) ** 2 / 4                      # convex, decreasing
    tp = np.array([1.0, 2.0, 3.0])
    ax = vr.plot_connect_the_dots(t, curve, tp, (3 - tp) ** 2 / 4)
    chords = ax.lines[1].get_ydata()
    assert np.all(np.interp(t, tp, chords) >= curve - 1e-15)
    assert ax.get_xlabel() == "t = e^ε" and ax.get_legend() is not None


def test_delta_curves_figure(_close):
    e = np.linspace(0, 1, 11)
    ax = vr.plot_delta_curves({"a": (e, 1 - e)}, points={"b": (e[::5], 1 - e[::5])})
    assert len(ax.lines) == 2 and ax.get_xlabel() == "ε"


@pytest.mark.parametrize("log10_n", [5.0, 6.0, 7.0, 2.0], ids=["5", "6", "7", "2"])
def test_widget_refuses_settings_the_engine_cannot_answer(log10_n):
    with pytest.raises(ParameterError, match="log10 n must be one of"):
        vr.check_widget_inputs("k-RR", 2.0, log10_n, 1.0, -6)


def test_widget_inputs_accepted_and_other_ranges():
    mech, n, d = vr.check_widget_inputs("k-RR", 2.0, 4.5, 0.5, -6)
    assert n == 31_623 and d == 1e-6 and mech.eps0 == 2.0
    assert max(vr.WIDGET_LOG10_N) <= 4.5 and max(vr.WIDGET_ROUNDS) <= 1000
    with pytest.raises(ParameterError, match="eps0"):
        vr.check_widget_inputs("k-RR", 8.0, 4.0, 1.0, -6)
    with pytest.raises(ParameterError, match="q must be"):
        vr.check_widget_inputs("k-RR", 2.0, 4.0, 0.01, -6)
    # delta = 1e-10 was never answered within the widget's limit (issue 24): not offered
    assert vr.check_widget_inputs("k-RR", 2.0, 4.0, 1.0, -8)[2] == 1e-8
    with pytest.raises(ParameterError, match="log10 delta must be in"):
        vr.check_widget_inputs("k-RR", 2.0, 4.0, 1.0, -10)


def _in_process(monkeypatch):
    """Run the widget's computation in-process (so that monkeypatched fakes are seen)."""
    monkeypatch.setattr(vr, "run_limited", lambda f, *a, timeout=None, memory=None, **k:
                        f(*a, **k))


def test_run_limited_returns_reraises_and_stops():
    assert vr.run_limited(sum, [1, 2, 3]) == 6
    with pytest.raises(ParameterError, match="got -1"):
        vr.run_limited(vr.check_widget_inputs, "k-RR", -1.0, 4.0, 1.0, -6)
    # a child that sleeps 30 s is stopped (had the timeout not worked, sleep would return
    # None after 30 s and no error would be raised)
    with pytest.raises(vr.WidgetLimitError, match="stopped after 0.5 s"):
        vr.run_limited(time.sleep, 30, timeout=0.5)


def test_run_limited_memory_cap():
    """A child asking for 3 GB beyond the parent's address space under a 0.5 GB cap fails
    with MemoryError in the child; the parent never grows."""
    with pytest.raises((MemoryError, vr.WidgetLimitError)):
        vr.run_limited(np.ones, 3 * 1024 ** 3 // 8, memory=512 * 1024 ** 2)


def test_widget_draws_and_reports(monkeypatch, _close):
    pytest.importorskip("ipywidgets")
    _in_process(monkeypatch)
    calls = []

    def fake(mech, n, delta, rounds, sampling=1.0, baselines=True):
        calls.append((n, tuple(rounds), sampling, baselines))
        return _fake_curves(sampling)

    monkeypatch.setattr(vr, "rounds_curves", fake)
    box = vr.rounds_widget()
    assert calls == [(10_000, vr.WIDGET_ROUNDS, 1.0, False)]
    assert box.status.value.startswith("done in")
    box.controls["log10_n"].value = 4.5                     # a redraw through the callback
    assert calls[-1][0] == 31_623
    assert set(box.controls["log10_n"].options) == {(f"{v:g}", v) for v in vr.WIDGET_LOG10_N}


@pytest.mark.parametrize("exc, words", [
    (NumericalError("delta = 1e-10 is within the floating-point error bound"),
     "computation failed"),
    (MemoryError(), "computation failed"),
    (ParameterError("n must be >= 1"), "setting refused"),
    (RuntimeError("boom"), "computation failed (unexpected)"),
    (vr.WidgetLimitError("stopped after 60 s"), "computation failed"),
], ids=["numerical", "memory", "refused", "unexpected", "limit"])
def test_widget_shows_a_visible_message_on_failure(monkeypatch, exc, words, _close):
    pytest.importorskip("ipywidgets")

    def fail(*args, **kwargs):
        raise exc

    _in_process(monkeypatch)
    monkeypatch.setattr(vr, "rounds_curves", fail)
    box = vr.rounds_widget()
    assert words in box.status.value and "#b00020" in box.status.value
    assert not any(c.disabled for c in box.controls.values())   # controls unlocked again
    assert len(box.children[-1].outputs) == 0                    # no stale figure left


def test_stored_curves_round_trip_exactly(tmp_path):
    """curves_to_json / curves_from_json give back the very floats (the stored figure of
    Chapter 11 equals its computation); the widget entry is the curve without baselines."""
    import json
    c = vr.RoundsCurves((1, 10), (0.1 + 0.2, 1 / 3), (0.1, 0.3), (0.5, 2 ** 0.5), None,
                        "10-RR (eps0=2), n = 10,000", 1.0)
    back = vr.curves_from_json(json.loads(json.dumps(vr.curves_to_json(c))))
    assert back == c
    data = {"curves": {"full": vr.curves_to_json(c)},
            "widget": [{"setting": {"mechanism": "k-RR", "eps0": 2.0, "log10_n": 4.0,
                                    "sampling": 1.0, "delta_exponent": -6},
                        "curves": "full"}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    stored = vr.load_stored_rounds(path)
    w = stored["widget"][vr.widget_key("k-RR", 2, 4, 1, -6)]
    assert w.upper == c.upper and w.per_round is None and w.clone is None


def test_widget_draws_precomputed_without_computing(monkeypatch, _close):
    pytest.importorskip("ipywidgets")

    def fail(*args, **kwargs):
        raise AssertionError("computed although precomputed")

    monkeypatch.setattr(vr, "run_limited", fail)
    key = vr.widget_key("k-RR", 2.0, 4.0, 1.0, -6)
    box = vr.rounds_widget(precomputed={key: _fake_curves(1.0)})
    assert box.status.value.startswith("done in")
    box.controls["log10_n"].value = 4.5                          # not stored: computed
    assert "computed although precomputed" in box.status.value


def test_curves_match_tolerates_last_bits_only():
    from dataclasses import replace

    from ampbook.rounds import RoundsCurves, curves_match
    a = RoundsCurves((1, 10), (0.27363748415253897, 0.9392031030094209), (0.27, 0.93),
                     (1.0, 2.0), None, "10-RR", 1.0)
    last_bits = replace(a, upper=(0.27363748415318884, 0.9392031029757079))   # seen across CPUs
    assert curves_match(a, last_bits) and curves_match(a, a)
    assert not curves_match(a, replace(a, upper=(0.2737, 0.9392031030094209)))
    assert not curves_match(a, replace(a, clone=(1.0, 2.0)))        # None against numbers
    assert not curves_match(a, replace(a, rounds=(1, 100)))
    assert not curves_match(a, replace(a, sampling=0.1))
    assert not curves_match(a, replace(a, per_round=(1.0,)))        # a missing entry
