"""Joint composition figures and numbers (:mod:`ampbook.joint`), with the Agg backend."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import labelled  # noqa: E402
from test_viz_stored import fake_figures  # noqa: E402

import amp  # noqa: E402
from amp import KRR  # noqa: E402
from ampbook import joint as vj  # noqa: E402
from ampbook.experiments import experiment_mechanism  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- computations
def test_joint_estimates_certified_and_pair_types():
    ks = [1, 2, 3]
    est = vj.joint_estimates("10-RR", 2.0, 2000, 1e-6, ks)
    cert = vj.joint_certified("10-RR", 2.0, 2000, 1e-6, ks, rel_tol=1e-2)
    assert est.shape == (3,) and np.all(np.diff(est) < 0)
    assert all(isinstance(c, amp.Bound) for c in cert)
    assert all(b.upper < a.lower for a, b in zip(cert, cert[1:]))    # certified decrease
    for e, c in zip(est, cert):                                      # estimate is close
        assert 0.95 * c.value <= e <= 1.08 * c.value
    assert cert[1] == amp.epsilon(experiment_mechanism("10-RR", 2.0, 2), 2000, 1e-6,
                                  rel_tol=1e-2)
    types = vj.joint_pair_types("10-RR", 2.0, 3, 2000, 1e-6)
    assert [s for s, _ in types] == [3, 2, 1]
    assert max(p.value for _, p in types) == pytest.approx(cert[2].value, rel=1e-12)
    low = vj.joint_certified("10-RR", 2.0, 2000, 1e-6, [2], bound="lower", rel_tol=1e-2)[0]
    assert low.value <= cert[1].value and low.value == low.lower


def test_ratio_spread_closed_form():
    """k-RR: (E, 1) and (1, E) atoms of mass 1/(E + k - 1) each, so
    sigma^2 = 2 (E - 1)^2 / (E + k - 1); a product of independent components multiplies
    E[a^2], E[b^2], E[ab]."""
    E = math.exp(2.0)
    assert vj.ratio_spread([KRR(2.0, k=10).gparv()]) == pytest.approx(
        math.sqrt(2 * (E - 1) ** 2 / (E + 9)), rel=1e-12)
    law = KRR(1.0, k=10).gparv()
    Ea2, Eb2, Eab = (float(np.sum(law.p * x)) for x in (law.a ** 2, law.b ** 2, law.a * law.b))
    # sums over blanket atoms (off the blanket G = 0); E[(a1 a2 - b1 b2)^2] factorises
    want = Ea2 ** 2 + Eb2 ** 2 - 2 * Eab ** 2
    joint = experiment_mechanism("10-RR", 2.0, 2).pair_law()
    assert vj.ratio_spread([joint]) == pytest.approx(math.sqrt(want), rel=1e-12)


# ----------------------------------------------------------------------------- stored tables
def test_stored_joint_points_and_tables():
    data = fake_figures()
    pts = vj.stored_joint_points(data, "OUE", 0.1, 1000)
    assert sorted(pts) == [1, 2, 4] and pts[1] == pytest.approx(1e-3)
    assert vj.stored_joint_points(data, "OUE", 0.3, 1000) == {}
    assert vj.stored_joint_points(data, "OUE", 0.1, 1234) == {}
    assert vj.stored_joint_points(data, "OUE", 0.1, 1000, delta=1e-5) == {}
    assert vj.stored_joint_points(None, "OUE", 0.1, 1000) == {}
    rows = vj.joint_rows(data)
    assert len(rows) == 16 and rows[0][:3] == ["10-RR", 0.1, 10000]
    assert rows[0][7] == pytest.approx(rows[0][6] / rows[0][5])
    spread = vj.spread_rows(data, n=10000)
    assert len(spread) == 8 and all(0 < r[4] < r[2] < 1 for r in spread)


# ----------------------------------------------------------------------------- figures
def test_plot_joint_curves():
    ax = vj.plot_joint_curves([1e3, 1e4], {"k = 1": [0.3, 0.1], "k = 2": [0.2, 0.07]},
                              clone=[0.5, 0.2], title="x")
    assert labelled(ax) and len(ax.get_lines()) == 3


def test_plot_joint_vs_k_choice_blanket_figure():
    ax = vj.plot_joint_vs_k([1, 2, 3], [0.3, 0.2, 0.15], certified={1: 0.29, 3: 0.14},
                            clone=0.5, title="t")
    assert labelled(ax) and len(ax.get_lines()) == 3
    ax = vj.plot_joint_choice("RAPPOR", 1.0, 5000, k_max=4, certified={2: 0.05})
    assert labelled(ax) and "RAPPOR" in ax.get_title() and "10^{-6}" in ax.get_title()
    ax = vj.plot_joint_blanket([1, 2], {"a": [0.5, 0.6]}, clone_mass=0.1)
    assert labelled(ax) and len(ax.get_lines()) == 2
    fig = vj.plot_joint_figure(fake_figures(), 2.0)
    assert sum(a.get_visible() for a in fig.axes) == 4
    assert all(labelled(a) for a in fig.axes if a.get_visible())


def test_plot_joint_choice_needs_no_certified_engine(monkeypatch):
    """The Chapter 6 widget redraws from estimates, the clone's closed form and stored dots
    only: no certified delta engine runs (what keeps it interactive; its speed is a bench
    matter, not a timed test on a shared machine)."""
    from amp.backends import dispatch

    def refuse(*args, **kwargs):
        raise AssertionError("the widget's redraw ran a certified delta engine")
    monkeypatch.setattr(dispatch.LawDelta, "delta", refuse)
    monkeypatch.setattr(dispatch.LawDelta, "delta_for_search", refuse)
    for args in [("10-RR", 4.0, 100_000), ("OUE", 0.1, 100_000), ("BLH", 2.0, 1000)]:
        ax = vj.plot_joint_choice(*args, k_max=8, data=fake_figures())
        ax.figure.canvas.draw()
        assert ax.lines, args
        plt.close("all")
