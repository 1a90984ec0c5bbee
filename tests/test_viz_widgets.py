"""Widgets and the calculator's helpers (:mod:`ampbook.widgets`), with the Agg backend."""

from __future__ import annotations

import shlex
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from test_viz_stored import fake_figures  # noqa: E402

from amp.core.errors import ParameterError  # noqa: E402
from ampbook import widgets  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_make_mechanism_and_bad_name():
    assert widgets.make_mechanism("k-RR", 2.0, 5).k == 5
    assert widgets.make_mechanism("k-RR", 2.0).k == 10
    assert widgets.make_mechanism("RAPPOR", 2.0).d is None
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        widgets.make_mechanism("nope", 1.0)


@pytest.mark.parametrize("command, name, size, values, expected", [
    ("epsilon", "k-RR", 10, dict(eps0=4, n=10_000, delta=1e-6),
     "python -m amp epsilon --mechanism krr --k 10 --eps0 4 --n 10000 --delta 1e-6"),
    ("eps0", "RAPPOR", 5, dict(n=1000, eps=0.5, delta=1e-8),
     "python -m amp eps0 --mechanism rappor --d 5 --n 1000 --eps 0.5 --delta 1e-8"),
    ("delta", "BLH", None, dict(eps0=1.5, n=200, eps=0.25),
     "python -m amp delta --mechanism blh --eps0 1.5 --n 200 --eps 0.25"),
], ids=["epsilon-krr", "eps0-rappor", "delta-blh"])
def test_cli_line(command, name, size, values, expected):
    assert widgets.cli_line(command, name, size, **values) == expected


def test_cli_line_numbers_read_back_exactly():
    """Every number of the line parses back to the very float given (delta = 10**-6.5 and
    eps0 = 0.1 + 0.2 included), and bound/rel_tol are written when given."""
    line = widgets.cli_line("epsilon", "OUE", None, eps0=0.1 + 0.2, n=12_345, delta=10 ** -6.5,
                            bound="lower", rel_tol=1e-2)
    argv = line.split()
    assert float(argv[argv.index("--eps0") + 1]) == 0.1 + 0.2
    assert float(argv[argv.index("--delta") + 1]) == 10 ** -6.5
    assert argv[-4:] == ["--bound", "lower", "--rel-tol", "0.01"]


def test_cli_line_bad_command():
    with pytest.raises(ParameterError, match="command"):
        widgets.cli_line("sigma", "k-RR", 3, n=10)


def test_chapter_widgets_build_and_draw():
    pytest.importorskip("ipywidgets")
    w = widgets.eps_vs_n_widget(log10_n=(2, 3))
    assert len(w.children) >= 5
    controls = {c.description: c for c in w.children if hasattr(c, "description")}
    controls["certified points (slower)"].value = True      # redraw with certified dots
    g = widgets.gparv_widget()
    g.children[0].value = "RAPPOR"        # redraw through the callback
    c = widgets.calculator_widget()
    assert len(c.children) == 7


def test_stored_data_widgets_build(monkeypatch):
    pytest.importorskip("ipywidgets")
    w = widgets.experiments_widget(fake_figures())
    assert len(w.children) >= 5
    data = fake_figures()
    j = widgets.joint_widget(data, n=12_000)
    controls = {c.description: c for c in j.children if hasattr(c, "description")}
    assert {"mechanism", "total ε₀", "n", "largest k"} <= set(controls)
    assert controls["n"].value == 10_000                 # snapped to the stored grid
    assert not any(d.startswith("compute") for d in controls)     # no button: live redraw
    # a change redraws at once from the stored data (its time: bench/bench_live_widgets.py)
    calls = []
    real = widgets.plot_joint_choice
    monkeypatch.setattr(widgets, "plot_joint_choice",
                        lambda *a, **k: calls.append((a, k)) or real(*a, **k))
    controls["mechanism"].value = "OUE"                  # triggers a redraw
    assert len(calls) == 1 and calls[0][0][0] == "OUE" and calls[0][1]["data"] is data


def test_experiments_widget_no_curve_is_a_plain_message(capsys, recwarn):
    pytest.importorskip("ipywidgets")
    w = widgets.experiments_widget(fake_figures())
    controls = {c.description: c for c in w.children if hasattr(c, "description")}
    for name in ("ours (upper, lower)", "baselines", "2-, 4-joint"):
        controls[name].value = False
    capsys.readouterr()
    w.update()
    text = capsys.readouterr().out      # outside a kernel, Output widgets pass prints through
    assert "No curve selected" in text
    assert not [x for x in recwarn if "legend" in str(x.message)]
    assert ".py" not in text and "Warning" not in text


# ------------------------------------------------------------------------ calculator inputs
@pytest.mark.parametrize("text, value", [
    ("10000", 10_000), (" 10_000 ", 10_000), ("1,000,000", 10**6), ("1e6", 10**6),
    ("1E6", 10**6), ("2.5e6", 2_500_000), ("1e+3", 1000), ("10**6", 10**6), ("10^6", 10**6),
    ("1", 1), ("1e7", 10**7)])
def test_parse_count_accepts(text, value):
    assert widgets.parse_count(text) == value
    assert isinstance(widgets.parse_count(text), int)


@pytest.mark.parametrize("text, match", [
    ("1.5", "whole number"), ("1e-3", "whole number"), ("1.5e0", "whole number"),
    ("abc", "whole number"), ("", "whole number"), ("-5", "whole number"),
    ("1,5", "whole number"), ("1,0000", "whole number"), ("inf", "whole number"),
    ("nan", "whole number"), ("0", "at least 1"), ("0e3", "at least 1"),
    ("1e8", "limit"), ("1e10", "limit"), ("10**30", "limit"), ("10**400", "whole number")])
def test_parse_count_refuses(text, match):
    with pytest.raises(ParameterError, match=match):
        widgets.parse_count(text)


def test_parse_real_and_size():
    assert widgets.parse_real("1e-6", "delta") == 1e-6
    assert widgets.parse_real("10**-6", "delta") == 1e-6 == widgets.parse_real("10^(-6)", "d")
    assert widgets.parse_real(".5", "eps") == 0.5
    for bad, match in [("0", "greater than 0"), ("-1", "number"), ("nan", "number"),
                       ("inf", "number"), ("1e999", "number"), ("1", "below 1"), ("x", "number")]:
        with pytest.raises(ParameterError, match=match):
            widgets.parse_real(bad, "delta", high=1.0, high_open=True)
    assert widgets.parse_size("k-RR", "5") == 5
    for bad in ("0", "", "1", "2.5"):                         # k = 0 is refused, never replaced
        with pytest.raises(ParameterError, match="k"):
            widgets.parse_size("k-RR", bad)
    assert widgets.parse_size("RAPPOR", "") is None and widgets.parse_size("RAPPOR", "0") is None
    assert widgets.parse_size("RAPPOR", "5") == 5


def test_calculator_inputs_reports_every_bad_field():
    with pytest.raises(ParameterError) as err:
        widgets.calculator_inputs("k-RR", "0", "1e6.5", "2", eps0="x")
    lines = str(err.value).split("\n")
    assert len(lines) == 4 and lines[0].startswith("k-RR needs k")
    q = widgets.calculator_inputs("OUE", "", "1e4", "10**-6", eps="0.5")
    assert q == {"mechanism": "OUE", "size": None, "n": 10_000, "delta": 1e-6, "eps": 0.5}


def test_round_out_is_outward():
    import random
    rng = random.Random(7)
    for _ in range(2000):
        x = 10 ** rng.uniform(-12, 3)
        up, down = widgets.round_out(x, "up"), widgets.round_out(x, "down")
        assert float(down) <= x <= float(up)
        assert float(up) - float(down) <= 2e-5 * x       # 6 significant digits
    assert widgets.round_out(0.38049412, "up") == "0.380495"
    assert widgets.round_out(0.25, "up") == "0.25" == widgets.round_out(0.25, "down")


# --------------------------------------------------------- the CLI line computes the same value
def _cli_value(line: str) -> float:
    from amp import cli
    argv = shlex.split(line)
    assert argv[:3] == ["python", "-m", "amp"]
    return cli.run(cli.build_parser().parse_args(argv[3:]))["value"]


@pytest.mark.parametrize("fields, what", [
    (("k-RR", "10", "1e4", "1e-6", "4", None), "upper"),
    (("k-RR", "10", "10,000", "10**-6.5".replace(".5", ""), "4", None), "lower"),
    (("RAPPOR", "5", "2000", "3e-7", "1.3", None), "upper"),
    (("OUE", "", "5e3", "1e-8", "0.1", None), "upper"),
    (("BLH", "0", "12345", "1e-5", "2.75", None), "lower"),
    (("k-RR", "3", "1000", "1e-6", None, "0.9"), "eps0"),
], ids=["krr-upper", "krr-lower", "rappor-d5", "oue-table1", "blh-lower", "krr-eps0"])
def test_calculator_cli_line_is_the_same_question(fields, what):
    """Each printed CLI line, run through amp.cli, gives bit for bit the widget's value."""
    name, size, n, delta, eps0, eps = fields
    q = widgets.calculator_inputs(name, size, n, delta, eps0=eps0, eps=eps)
    res, line = widgets.calculator_answer(q, what)
    assert _cli_value(line) == res.value
    if what == "lower":
        assert "--bound lower" in line
    if what == "eps0":
        assert "--rel-tol 0.01" in line


def test_calculator_cli_line_with_unrounded_delta():
    q = {"mechanism": "k-RR", "size": 10, "n": 3000, "delta": 10 ** -6.5, "eps0": 3.3}
    res, line = widgets.calculator_answer(q, "upper")
    assert _cli_value(line) == res.value


# ------------------------------------------------------------------- the calculator's busy state
def _calculator():
    pytest.importorskip("ipywidgets")
    c = widgets.calculator_widget()
    fields = {w.description.split(" ")[0] if w.description.startswith("with") else
              w.description: w for box in c.children[:4] for w in box.children}
    return c, fields


def test_calculator_busy_state_and_upper_first(monkeypatch):
    c, f = _calculator()
    status, result = c.children[5], c.children[6]
    seen = []
    real = widgets.calculator_answer

    def spy(q, what, **kwargs):
        seen.append((what, f["certified ε for ε₀"].disabled,
                     f["largest ε₀ for target ε"].disabled, status.value, result.value))
        assert kwargs == {"timeout": widgets.CALC_TIMEOUT}       # in a limited child
        return real(q, what, **kwargs)
    monkeypatch.setattr(widgets, "calculator_answer", spy)
    f["n"].value = "1e3"
    c.run("eps")
    assert [s[0] for s in seen] == ["upper", "lower"]
    for _what, d1, d2, st, _ in seen:
        assert d1 and d2 and "computing" in st                  # busy while computing
    assert seen[0][4] == "" and seen[1][4].startswith("<b>ε ≤ ")  # upper shown before lower
    assert not f["certified ε for ε₀"].disabled and not f["largest ε₀ for target ε"].disabled
    assert status.value.startswith("done in") and not f["with"].disabled
    seen.clear()
    f["with"].value = False                                      # upper bound only
    c.run("eps")
    assert [s[0] for s in seen] == ["upper"] and "Theorem 5" not in result.value
    assert f["with"].disabled is False
    up = real(widgets.calculator_inputs("k-RR", "10", "1000", "1e-6", eps0="4"), "upper")[0]
    assert f"ε ≤ {widgets.round_out(up.value, 'up')}" in result.value
    assert "python -m amp epsilon --mechanism krr --k 10 --eps0 4 --n 1000 --delta 1e-6" \
        in result.value


def test_calculator_refuses_bad_input_visibly():
    c, f = _calculator()
    status, result = c.children[5], c.children[6]
    f["n"].value = "1e6.5"
    f["k or d"].value = "0"
    c.run("eps")
    assert "cannot compute" in status.value and "whole number" in status.value
    assert "k-RR needs k" in status.value and result.value == ""
    assert not f["certified ε for ε₀"].disabled                 # re-enabled after an error
    f["n"].value, f["k or d"].value, f["target ε"].value = "1000", "10", "-1"
    c.run("eps0")
    assert "target eps must be" in status.value


def test_fold_output():
    pytest.importorskip("ipywidgets")
    from IPython.utils.capture import CapturedIO
    box = widgets.fold_output(CapturedIO(None, None, []), "Show the check")
    assert box.get_title(0) == "Show the check" and box.selected_index is None


def test_calculator_stopped_question_is_said(monkeypatch):
    """A question over the calculator's time limit is stopped and said in red. The question's
    computation is replaced by one that sleeps past the limit: the real one (RAPPOR at
    n = 1e7) may answer within 0.05 s on a fast, idle machine, and a test must not pass or fail
    by load."""
    c, f = _calculator()
    status, result = c.children[5], c.children[6]
    monkeypatch.setattr(widgets, "CALC_TIMEOUT", 0.05)
    monkeypatch.setattr(widgets, "epsilon", lambda *args, **kwargs: time.sleep(30))
    f["mechanism"].value, f["k or d"].value, f["n"].value = "RAPPOR", "", "1e7"
    c.run("eps")
    assert "#b00020" in status.value and "stopped after 0.05 s" in status.value
    assert result.value == "" and not f["certified ε for ε₀"].disabled
    f["n"].value = "1e8"                                        # above the stated cap
    c.run("eps")
    assert "limit 1e+07" in status.value and "command line" in c.children[4].value


def test_interactive_with_status_busy_then_done_or_failed(capsys):
    pytest.importorskip("ipywidgets")
    seen = []

    def draw(x):
        seen.append((box_ref[0].status.value if box_ref else None,
                     [c.disabled for c in box_ref[0].kwargs_widgets] if box_ref else None))
        if x > 1:
            raise ParameterError("x must be at most 1")
        if x < 0:
            raise ValueError("negative")
        plt.plot([0, 1], [0, x])
        plt.show()

    import ipywidgets
    box_ref: list = []
    box = widgets.interactive_with_status(draw, busy="a moment",
                                          x=ipywidgets.IntSlider(value=1, min=-1, max=2))
    box_ref.append(box)
    assert box.status.value.startswith("drawn in") and box.children[-2] is box.status
    box.kwargs_widgets[0].value = 0
    assert seen[-1] == ("<b>computing…</b> (a moment)", [True])   # busy and locked
    assert box.status.value.startswith("drawn in") and not box.kwargs_widgets[0].disabled
    box.kwargs_widgets[0].value = 2
    assert "setting refused" in box.status.value and "at most 1" in box.status.value
    assert "#b00020" in box.status.value and "setting refused" in capsys.readouterr().out
    box.kwargs_widgets[0].value = -1
    assert "computation failed" in box.status.value and "ValueError" in box.status.value
    assert not box.kwargs_widgets[0].disabled


def test_eps_vs_n_widget_points_and_stopped_points(monkeypatch, capsys):
    """Chapter 1's certified points: the characteristic-function backend, or the automatic
    choice where it cannot reach the width (10 users at eps0 = 8); both certified upper
    bounds, so the point is at least the automatic choice's bracket's lower end. Points over
    the time limit are said, and the estimate is still drawn."""
    pytest.importorskip("ipywidgets")
    import amp
    for mech, n in [(widgets.make_mechanism("k-RR", 1.0), 10_000),
                    (widgets.make_mechanism("k-RR", 8.0), 10)]:
        point = widgets._certified_point(mech, n, 1e-10)
        auto = amp.epsilon(mech, n, 1e-10, rel_tol=3e-2)
        assert auto.lower <= point and abs(point / auto.value - 1) < 3e-2
    w = widgets.eps_vs_n_widget(log10_n=(2, 3))
    c = {x._kwarg: x for x in w.kwargs_widgets}
    assert c["delta_exponent"].min == widgets.EPS_VS_N_MIN_DELTA_EXPONENT == -12
    monkeypatch.setattr(widgets, "EPS_VS_N_TIMEOUT", 0.05)
    # A point that takes longer than the limit, whatever this machine's speed (the real points
    # now often finish inside 0.05 s, so a timing-based test would pass or fail by load).
    monkeypatch.setattr(widgets, "_certified_points", lambda *args: time.sleep(30))
    c["mechanism"].value = "RAPPOR"
    c["certified"].value = True
    out = capsys.readouterr().out
    assert "certified points unavailable: WidgetLimitError: stopped after 0.05 s" in out
    assert w.status.value.startswith("drawn in")
