"""Figure module of the book (:mod:`amp.viz.plots`): fast checks with the Agg backend."""

from __future__ import annotations

import math
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import labelled  # noqa: E402

from amp.viz import plots  # noqa: E402
from amp.baselines.general_clone import merged_krr_decomposition  # noqa: E402
from amp.core.errors import ParameterError  # noqa: E402
from amp.delta.exact import delta_enumerate  # noqa: E402
from amp.oracles.ground_truth import ShuffledPair  # noqa: E402
from amp.mechanisms import KRR, OUE, RAPPOR, BLH, HadamardResponse, MatrixMechanism  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- imports
def test_core_and_plots_import_without_matplotlib():
    code = ("import sys, amp.api, amp.delta.dispatch, amp.mechanisms, amp.viz.plots, "
            "amp.viz.experiments; "
            "bad = [m for m in ('matplotlib', 'ipywidgets') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------- helpers
def test_make_mechanism_and_bad_name():
    assert plots.make_mechanism("k-RR", 2.0, 5).k == 5
    assert plots.make_mechanism("RAPPOR", 2.0).d is None
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        plots.make_mechanism("nope", 1.0)


@pytest.mark.parametrize("command, name, size, values, expected", [
    ("epsilon", "k-RR", 10, dict(eps0=4, n=10_000, delta=1e-6),
     "python -m amp epsilon --mechanism krr --k 10 --eps0 4 --n 10000 --delta 1e-6"),
    ("eps0", "RAPPOR", 5, dict(n=1000, eps=0.5, delta=1e-8),
     "python -m amp eps0 --mechanism rappor --d 5 --n 1000 --eps 0.5 --delta 1e-8"),
    ("delta", "BLH", None, dict(eps0=1.5, n=200, eps=0.25),
     "python -m amp delta --mechanism blh --eps0 1.5 --n 200 --eps 0.25"),
], ids=["epsilon-krr", "eps0-rappor", "delta-blh"])
def test_cli_line(command, name, size, values, expected):
    assert plots.cli_line(command, name, size, **values) == expected


def test_cli_line_bad_command():
    with pytest.raises(ParameterError, match="command"):
        plots.cli_line("sigma", "k-RR", 3, n=10)


def test_table1_rows_match_closed_forms():
    eps0 = 1.5
    E, h = math.exp(eps0), math.exp(eps0 / 2)
    rows = plots.table1_rows([KRR(eps0, k=4), RAPPOR(eps0), OUE(eps0), BLH(eps0),
                              HadamardResponse(eps0)])
    expected = [
        [1 / (E + 3), 0, 2 / (E + 3), (E - 1) / (E + 3), 1 / (E + 3)],
        [1 / (h + 1) ** 2, 1 / (h * (h + 1) ** 2), h / (h + 1) ** 2, 1 - 1 / h, 1 / (h + 1) ** 2],
        [1 / (2 * (E + 1)), 1 / (2 * E * (E + 1)), E / (2 * (E + 1)), (1 - 1 / E) / 2,
         1 / (2 * (E + 1))],
        [1 / (2 * (E + 1))] * 3 + [(E - 1) / (E + 1), 1 / (2 * (E + 1))],
        [1 / (2 * (E + 1))] * 3 + [(E - 1) / (E + 1), 1 / (2 * (E + 1))],
    ]
    for (desc, probs, gamma), want in zip(rows, expected):
        np.testing.assert_allclose(probs, want, rtol=1e-12, atol=1e-15, err_msg=desc)
        assert math.isclose(gamma, 1 - probs[3], rel_tol=1e-12)
    html = plots.table1_html(rows, eps0, 0.5)
    assert html.count("<tr>") == 1 + len(rows) and "$" not in html


def test_table1_rows_rejects_non_table_law(rng):
    M = rng.dirichlet(np.ones(4), size=3)
    with pytest.raises(ParameterError):
        plots.table1_rows([MatrixMechanism(M)])


@pytest.mark.parametrize("rounding", ["up", "mean"])
@pytest.mark.parametrize("step", [0.5, 0.1, 0.02])
def test_algorithm4_is_an_upper_bound(rounding, step):
    law = KRR(1.5, k=5).gparv()
    n, eps = 12, 0.4
    exact = delta_enumerate(law, n, eps)
    value = plots.algorithm4_delta(law, n, eps, step, rounding)
    assert value >= exact * (1 - 1e-9)
    assert value - exact <= step + 1e-12          # Section 5.2: error <= l after dividing by n


def test_algorithm4_mean_rule_beats_round_up_and_bad_input():
    law = KRR(2.0, k=10).gparv()
    exact = delta_enumerate(law, 20, 0.5)
    up = plots.algorithm4_delta(law, 20, 0.5, 0.01, "up")
    mean = plots.algorithm4_delta(law, 20, 0.5, 0.01, "mean")
    assert exact <= mean < up
    with pytest.raises(ParameterError, match="rounding"):
        plots.algorithm4_delta(law, 20, 0.5, 0.01, "down")
    with pytest.raises(ParameterError, match="grid_step"):
        plots.algorithm4_delta(law, 20, 0.5, 0.0)


def test_simulate_shuffle_is_seeded_and_consistent():
    R = KRR(1.0, k=3).matrix()
    data = [0, 2, 2, 1, 2]
    a = plots.simulate_shuffle(R, data, 20_000, seed=7)
    b = plots.simulate_shuffle(R, data, 20_000, seed=7)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (20_000, 3) and np.all(a.sum(axis=1) == len(data))
    expected = R[data].sum(axis=0)
    np.testing.assert_allclose(a.mean(axis=0), expected, atol=0.05)


def test_empirical_divergence_tracks_exact_divergence():
    R = KRR(2.0, k=3).matrix()
    X0, X1 = [0, 2, 2, 2], [1, 2, 2, 2]
    c0 = plots.simulate_shuffle(R, X0, 100_000, seed=1)
    c1 = plots.simulate_shuffle(R, X1, 100_000, seed=2)
    eps = np.array([0.0, 0.5, 1.0])
    est = plots.empirical_divergence(c0, c1, eps)
    exact = ShuffledPair.from_inputs(R, 0, 1, X0[1:]).divergence(eps)
    assert est.shape == (3,)
    np.testing.assert_allclose(est, exact, atol=0.01)
    assert plots.empirical_divergence(c0, c0, 0.0)[0] == 0.0


def test_eps_estimate_and_certified_values():
    mech = KRR(4.0, k=10)
    est = plots.eps_estimate_versus_n(mech, [1_000, 10_000, 100_000], 1e-6)
    assert np.all(np.diff(est) < 0) and np.all(est > 0)
    small = KRR(1.0, k=3)
    (res,) = plots.eps_versus_n(small, [30], 1e-2, rel_tol=5e-2)
    assert res.lower <= res.value and res.value < 1.0


# ----------------------------------------------------------------------------- figures
def test_plot_blanket_mass():
    grid = np.linspace(0.1, 4, 10)
    ax = plots.plot_blanket_mass(grid, {"a": grid / 4, "b": grid / 8}, mark=(1.0, 0.25))
    assert labelled(ax) and len(ax.get_lines()) == 3


def test_plot_eps_vs_n_all_parts():
    ns = [100, 1_000, 10_000]
    ax = plots.plot_eps_vs_n(ns, [2.0, 1.0, 0.3], lower=[1.9, 0.9, 0.29],
                             estimate=(np.logspace(2, 4, 9), np.linspace(2, 0.3, 9)),
                             eps0=4.0, delta=1e-6, title="t")
    assert labelled(ax) and len(ax.get_lines()) == 4
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "10^{-6}" in ax.get_ylabel()
    assert len(ax.get_legend().get_texts()) == 4


def test_plot_eps_vs_n_estimate_only():
    ax = plots.plot_eps_vs_n(estimate=([10, 100], [1.0, 0.5]), delta=0.003)
    assert labelled(ax) and len(ax.get_lines()) == 1


def test_plot_hockey_stick():
    R = KRR(2.0, k=3).matrix()
    ax = plots.plot_hockey_stick(R[0], R[1], 0.5, outputs=["a", "b", "c"])
    assert labelled(ax) and len(ax.containers) == 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_plot_delta_curves_with_zeros():
    eps = np.linspace(0, 1, 5)
    ax = plots.plot_delta_curves(eps, {"x": [1e-1, 1e-2, 1e-3, 1e-4, 0.0],
                                       "y": [2e-1, 2e-2, 2e-3, 2e-4, 0.0]})
    assert labelled(ax) and len(ax.get_lines()) == 2 and ax.get_yscale() == "log"
    ax2 = plots.plot_delta_curves(eps, {"x": eps}, logy=False, title="lin")
    assert ax2.get_yscale() == "linear" and ax2.get_title() == "lin"


def test_plot_decomposition():
    dec = merged_krr_decomposition(5, 2.0)
    ax = plots.plot_decomposition(dec, ["x0", "x1", "U"])
    assert ax.get_xlabel() and len(ax.patches) == 3 * 4
    with pytest.raises(ParameterError, match="labels"):
        plots.plot_decomposition(dec, ["x0"])


def test_plot_gparv_atoms():
    law = KRR(2.0, k=10).gparv()
    ax = plots.plot_gparv_atoms(law, 0.5)
    assert labelled(ax) and len(ax.get_lines()) == 2     # atoms + mean line
    assert ax.get_title()


def test_plot_discretisation_error():
    steps = np.logspace(0, -2, 5)
    ax = plots.plot_discretisation_error(steps, {"up": steps, "mean": steps ** 2}, mark_step=0.1)
    assert labelled(ax) and len(ax.get_lines()) == 3


# ----------------------------------------------------------------------------- widgets
def test_widgets_build_and_draw():
    pytest.importorskip("ipywidgets")
    w = plots.eps_vs_n_widget(log10_n=(2, 3))
    assert len(w.children) >= 5
    g = plots.gparv_widget()
    g.children[0].value = "RAPPOR"        # redraw through the callback
    c = plots.calculator_widget()
    assert len(c.children) == 5
