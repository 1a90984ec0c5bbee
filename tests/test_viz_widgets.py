"""Widgets and the calculator's helpers (:mod:`amp.viz.widgets`), with the Agg backend."""

from __future__ import annotations

import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from test_viz_stored import fake_figures  # noqa: E402

from amp.core.errors import ParameterError  # noqa: E402
from amp.viz import widgets  # noqa: E402


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
    assert len(c.children) == 5


def test_stored_data_widgets_build():
    pytest.importorskip("ipywidgets")
    w = widgets.experiments_widget(fake_figures())
    assert len(w.children) >= 5
    data = fake_figures()
    j = widgets.joint_widget(data, n=12_000)
    controls = {c.description: c for c in j.children if hasattr(c, "description")}
    assert {"mechanism", "total ε₀", "n", "largest k"} <= set(controls)
    assert controls["n"].value == 10_000                 # snapped to the stored grid
    assert not any(d.startswith("compute") for d in controls)     # no button: live redraw
    t0 = time.perf_counter()
    controls["mechanism"].value = "OUE"                  # triggers a redraw
    assert time.perf_counter() - t0 < 1.5
