"""Points and panels of Figures 2 and 3 (:mod:`ampbook.experiments`) with the Agg backend.

Every certified point must be the front door's answer (:func:`amp.epsilon`) or the baseline's,
unchanged; the search itself is certified against :func:`amp.backends.dispatch.delta_bracket`."""

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
from amp import KRR, RAPPOR, JointMechanism  # noqa: E402
from amp.baselines import (bennett_delta, bennett_epsilon, clone_epsilon,  # noqa: E402
                           hoeffding_epsilon)
from amp.core.errors import ParameterError  # noqa: E402
from amp.backends.dispatch import delta_bracket  # noqa: E402
from amp.privacy_profile import laws_for  # noqa: E402
from ampbook import experiments as ex  # noqa: E402
from ampbook import stored  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- mechanisms
@pytest.mark.parametrize("name", list(ex.EXPERIMENT_MECHANISMS))
def test_experiment_mechanism(name):
    single = ex.experiment_mechanism(name, 2.0)
    assert single.eps0 == 2.0 and not isinstance(single, JointMechanism)
    joint = ex.experiment_mechanism(name, 2.0, 4)
    assert joint.m == 4 and math.isclose(joint.components[0].eps0, 0.5)


def test_experiment_mechanism_bad_input():
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        ex.experiment_mechanism("RR", 1.0)


# ----------------------------------------------------------------------------- points
def test_experiment_point_is_the_front_doors_answer():
    mech = KRR(2.0, k=10)
    up = ex.experiment_point("10-RR", 2.0, "upper", 1000, 1e-6)
    ref = amp.epsilon(mech, 1000, 1e-6)
    assert isinstance(up, amp.Bound) and up == ref and up.value == ref.upper
    assert up.rel_width <= amp.api.DEFAULT_EPS_REL_TOL and up.details["seconds"] > 0
    low = ex.experiment_point("10-RR", 2.0, "lower", 1000, 1e-6)
    assert low.value == amp.epsilon(mech, 1000, 1e-6, bound="lower").value == low.lower
    assert low.value <= up.value


@pytest.mark.parametrize("key", ["upper", "lower", "joint2_upper", "joint2_lower"])
def test_experiment_point_ours_matches_amp_epsilon(key):
    p = ex.experiment_point("OUE", 2.0, key, 1000, 1e-6, rel_tol=1e-2)
    m = 2 if key.startswith("joint") else 1
    mech = ex.experiment_mechanism("OUE", 2.0, m)
    bound = key.split("_")[-1]
    ref = amp.epsilon(mech, 1000, 1e-6, bound=bound, rel_tol=1e-2)
    assert (p.value, p.lower, p.upper) == (ref.value, ref.lower, ref.upper)
    assert p.lower <= p.value <= p.upper and p.method and p.bound == bound


def test_search_is_certified_on_a_joint_law_at_small_eps0():
    """The law where a saddle-point starting guess once failed (4-joint 10-RR at total eps0 =
    0.1): the one search of amp.inversion brackets the threshold, certified on both sides."""
    mech = ex.experiment_mechanism("10-RR", 0.1, 4)
    law = laws_for(mech, "upper")[0]
    r = amp.epsilon_for(amp.PrivacyProfile(mech, 1000, laws=[law]), 1e-6, rel_tol=1e-3)
    lo, hi = r.bracket
    assert 0 < lo < hi and hi - lo <= 1e-3 * hi
    # at hi the law's delta is below the target (a narrow bracket shows it: at the default
    # width the bracket can straddle 1e-6, its upper end above the value the search certified)
    assert delta_bracket(law, 1000, hi, rel_tol=1e-5).upper <= 1e-6
    assert delta_bracket(law, 1000, lo, rel_tol=1e-4).lower > 1e-6
    # and the per-law answer of a Table 1 law is the mechanism's answer
    law1 = KRR(2.0, k=10).gparv()
    one = amp.epsilon_for(amp.PrivacyProfile(KRR(2.0, k=10), 1000, laws=[law1]), 1e-6)
    assert one.bracket == amp.epsilon(KRR(2.0, k=10), 1000, 1e-6).bracket


def test_joint_point_is_the_max_over_every_pair_type():
    mech = ex.experiment_mechanism("10-RR", 2.0, 2)
    assert isinstance(mech, JointMechanism) and math.isclose(mech.eps0, 2.0)
    laws = laws_for(mech, "upper")
    assert len(laws) == 2
    up = ex.experiment_point("10-RR", 2.0, "joint2_upper", 1000, 1e-6, rel_tol=1e-2)
    each = [amp.epsilon_for(amp.PrivacyProfile(mech, 1000, laws=[law]), 1e-6, rel_tol=1e-2)
            for law in laws]
    assert up.value == pytest.approx(max(b.value for b in each), rel=1e-12)
    low = ex.experiment_point("10-RR", 2.0, "joint2_lower", 1000, 1e-6, rel_tol=1e-2)
    assert low.value <= up.value


@pytest.mark.parametrize("key,fn", [("clone", lambda: clone_epsilon(2.0, 1000, 1e-6)),
                                    ("hoeffding", lambda: hoeffding_epsilon(KRR(2.0, k=10), 1000,
                                                                            1e-6)),
                                    ("bennett", lambda: bennett_epsilon(KRR(2.0, k=10), 1000,
                                                                        1e-6))],
                         ids=["clone", "hoeffding", "bennett"])
def test_experiment_point_baselines(key, fn):
    p = ex.experiment_point("10-RR", 2.0, key, 1000, 1e-6)
    ref = fn()
    assert p.value == ref.value and p.lower == ref.lower and p.upper == ref.upper
    assert p.bound == key and p.details["seconds"] >= 0


def test_experiment_point_bennett_at_rounding_end_point():
    """RAPPOR at eps0 = 2: the largest ratio is one ulp above e^eps0 (rounding residue in the
    largest G at eps = eps0); the Bennett search still succeeds and is certified."""
    p = ex.experiment_point("RAPPOR", 2.0, "bennett", 1000, 1e-6)
    assert 0 < p.value < 2.0
    assert bennett_delta(RAPPOR(2.0), 1000, p.value).value <= 1e-6
    assert bennett_delta(RAPPOR(2.0), 1000, p.value * (1 - 1e-6)).value > 1e-6


def test_experiment_point_bad_key():
    with pytest.raises(ParameterError, match="key must be one of"):
        ex.experiment_point("10-RR", 2.0, "joint_upper", 1000, 1e-6)
    with pytest.raises(ParameterError, match="key must be one of"):
        ex.experiment_point("10-RR", 2.0, "middle", 1000, 1e-6)
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        ex.experiment_point("RR", 2.0, "clone", 1000, 1e-6)


def test_eps_estimate_versus_n_tracks_certified_values():
    mech = KRR(4.0, k=10)
    ns = [1_000, 10_000, 100_000]
    est = ex.eps_estimate_versus_n(mech, ns, 1e-6)
    assert est.shape == (3,) and np.all(np.diff(est) < 0) and np.all(est > 0)
    cert = [amp.epsilon(mech, n, 1e-6, rel_tol=1e-2) for n in ns]
    assert all(0.9 * c.value <= e <= 1.1 * c.value for e, c in zip(est, cert))
    small = amp.epsilon(KRR(1.0, k=3), 30, 1e-2, rel_tol=5e-2)   # the widget's certified dots
    assert small.lower <= small.value and small.value < 1.0


# ----------------------------------------------------------------------------- figures
def test_plot_experiment_panel_and_figure():
    data = fake_figures()
    ax = ex.plot_experiment_panel(stored.panel(data, "10-RR", 0.1))
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_lines()) == len(ex.CURVE_STYLES)
    ax2 = ex.plot_experiment_panel(stored.panel(data, "10-RR", 2.0), keys=["upper", "lower"])
    assert len(ax2.get_lines()) == 2
    fig = ex.plot_experiment_figure(data, ["10-RR"])
    assert len(fig.axes) == 2 and all(labelled(a) for a in fig.axes)


def test_plot_finite_domain():
    rows = [{"d": 3, "n": [1e3, 1e4], "value": [0.2, 0.05]},
            {"d": 10, "n": [1e3, 1e4], "value": [0.25, 0.06]},
            {"d": None, "n": [1e3, 1e4], "value": [0.25, 0.06]}]
    ax = ex.plot_finite_domain(rows, resolution=1e-5)
    assert labelled(ax) and ax.get_yscale() == "log"
    fig = ex.plot_finite_domain_figure(fake_figures())
    assert len(fig.axes) == 2 and fig.axes[0].get_ylabel()


# ----------------------------------------------------------------------------- bench script
def test_bench_script_smoke(tmp_path, monkeypatch):
    """bench/reproduce_figures.py end to end on a tiny configuration (one panel, one n)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "reproduce_figures.py"
    spec = importlib.util.spec_from_file_location("reproduce_figures", path)
    rf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rf)
    monkeypatch.setattr(rf, "QUICK_NS", [1000])
    monkeypatch.setattr(rf, "EPS0", (2.0,))
    monkeypatch.setattr(rf, "FINITE_EPS0", (2.0,))
    monkeypatch.setattr(rf, "FINITE_D", (3, None))
    monkeypatch.setattr(rf, "EXPERIMENT_MECHANISMS", {"OUE": ex.EXPERIMENT_MECHANISMS["OUE"]})
    out = tmp_path / "figures.json"
    assert rf.main(["--quick", "--out", str(out)]) == 0
    data = stored.load_figures(out)
    assert not (tmp_path / "figures.partial.json").exists()
    assert data["provenance"]["command"].endswith(f"--quick --out {out}")
    assert len(data["provenance"]["amp_source_sha256"]) == 64
    pnl = stored.panel(data, "OUE", 2.0)
    assert set(pnl["curves"]) == set(ex.CURVE_STYLES)
    live = ex.experiment_point("OUE", 2.0, "upper", 1000, 1e-6, rel_tol=rf.REL_TOL)
    assert stored.stored_point(data, "OUE", 2.0, "upper", 1000)["value"] == live.value
    assert [r["d"] for r in data["finite_domain"]["rows"]] == [3, None]
