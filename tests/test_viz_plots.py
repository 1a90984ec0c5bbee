"""Static figures of the book (:mod:`ampbook.plots`, :mod:`ampbook.style`) with the Agg backend,
and the lazy-import contract of every :mod:`ampbook` module."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import labelled  # noqa: E402

from amp import KRR  # noqa: E402
from amp.baselines.general_clone import merged_krr_decomposition  # noqa: E402
from amp.core.errors import ParameterError  # noqa: E402
from amp.oracles.appendix_a import appendix_a_report  # noqa: E402
from amp.oracles.conjecture import search  # noqa: E402
from ampbook import plots, style  # noqa: E402

VIZ_MODULES = ("style", "plots", "illustrations", "tables", "experiments", "joint", "stored",
               "widgets")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- imports
def test_core_and_viz_import_without_matplotlib():
    mods = ", ".join(f"ampbook.{m}" for m in VIZ_MODULES)
    code = (f"import sys, amp, amp.api, amp.backends.dispatch, amp.mechanisms, {mods}; "
            "bad = [m for m in ('matplotlib', 'ipywidgets') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_private_name_crosses_a_viz_module():
    """Nothing in ampbook imports a private name (``_x``) from another module."""
    import ast
    import importlib

    for m in VIZ_MODULES:
        mod = importlib.import_module(f"ampbook.{m}")
        tree = ast.parse(open(mod.__file__, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (m, node.module, private)
        assert all(not name.startswith("_") for name in mod.__all__)
        assert all(hasattr(mod, name) for name in mod.__all__), m


# ----------------------------------------------------------------------------- style
def test_style_axes_and_delta_label():
    ax = style.new_axes()
    assert style.new_axes(ax) is ax
    assert tuple(ax.figure.get_size_inches()) == pytest.approx(style.FIGSIZE)
    ax.plot([0.1, 0.2], [1e-3, 1e-4], label="x")
    assert style.finish_delta_axes(ax, True, "t") is ax
    assert ax.get_yscale() == "log" and ax.get_title() == "t" and labelled(ax)
    assert style.delta_label(1e-6) == "10^{-6}"
    assert style.delta_label(0.003) == "0.003" and style.delta_label(2.5e-6, ".2g") == "2.5e-06"


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
    assert "0.003" in ax.get_ylabel()


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


def test_plot_clone_pair_and_delta_comparison():
    assert labelled(plots.plot_clone_pair(10, 1.0))
    ax = plots.plot_delta_comparison([0.1, 0.2], {"a": [1e-3, 1e-4], "claim": [1e-4, 0.0],
                                                  "truth": [1e-3, 2e-4]},
                                     invalid=["claim"], truth=["truth"], title="t")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "claim (NOT a valid bound)" in labels and labelled(ax)


def test_delta_comparison_draws_the_floor_and_cut_points():
    """Chapter 3, Figure 3.2: points below the float floor are cut (NaN), the floor is drawn."""
    ax = plots.plot_delta_comparison([0.1, 0.2, 0.3], {"upper": [1e-6, 1e-12, np.nan]},
                                     floor=1e-14)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("floating-point floor") for label in labels)
    assert any(np.allclose(line.get_ydata(), 1e-14) for line in ax.get_lines())
    assert np.isnan(ax.get_lines()[0].get_ydata()[-1])


def test_plot_conjecture_and_appendices():
    eps = np.linspace(0, 1, 5)
    ax = plots.plot_conjecture_curves(eps, {"a": np.exp(-eps), "b": np.exp(-2 * eps)},
                                      upper=np.exp(-eps) * 2)
    assert labelled(ax)
    rep = search(KRR(1.0, k=3).matrix(), 3, [0.0, 0.5, 0.9], label="3-RR")
    assert labelled(plots.plot_conjecture_ratios([rep]))
    report = appendix_a_report(4, 1.0, 10, 0.3, n_samples=2000, seed=1)
    ax = plots.plot_count_laws(report)
    assert ax.get_xlabel()
    ax = plots.plot_proof_identity([1e-3, 2e-2], [1e-3, 2e-2])
    assert labelled(ax)
