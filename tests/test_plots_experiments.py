"""Figure module of Chapters 3 and 6-9 (:mod:`amp.viz.experiments`), with the Agg backend."""

from __future__ import annotations

import json
import math
import time
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import labelled  # noqa: E402

from amp import api as bounds  # noqa: E402
from amp.viz import experiments as px  # noqa: E402
from amp.oracles.appendix_a import appendix_a_report  # noqa: E402
from amp.baselines import (bennett_delta, bennett_epsilon, clone_delta,  # noqa: E402
                           clone_epsilon, hoeffding_epsilon)
from amp.baselines.stronger_clone import (StrongerCloneWarning,  # noqa: E402
                                          stronger_clone_claimed_delta)
from amp.oracles.conjecture import search  # noqa: E402
from amp.delta.dispatch import delta_bracket  # noqa: E402
from amp.core.errors import ParameterError  # noqa: E402
from amp.oracles.ground_truth import shuffled_divergence  # noqa: E402
from amp.mechanisms.joint import JointMechanism  # noqa: E402
from amp.mechanisms import KRR, RAPPOR, matrix_eps0  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def fake_figures() -> dict:
    """A small figures.json-like structure: the four mechanisms at two eps0, three n."""
    ns = [1000, 10000, 100000]
    panels = []
    for name in px.EXPERIMENT_MECHANISMS:
        for e0, base in ((0.1, 1e-3), (2.0, 1e-1)):
            curves = {}
            for i, key in enumerate(px.CURVE_STYLES):
                v = [base * (1 + 0.1 * i) / math.sqrt(n / 1000) for n in ns]
                curves[key] = {"n": ns, "value": v, "lower": v, "upper": v,
                               "seconds": [0.5, 1.0, 2.0], "method": ["structured"] * 3}
            panels.append({"mechanism": name, "eps0": e0, "curves": curves})
    rows = [{"eps0": e0, "d": d, "gamma": 0.4, "n": ns,
             "value": [base * (1 - f) / math.sqrt(n / 1000) for n in ns]}
            for e0, base in ((0.1, 1e-3), (2.0, 1e-1))
            for d, f in ((3, 1e-3), (10, 1e-6), (None, 0.0))]
    return {"inputs": {"n": ns, "delta": 1e-6}, "panels": panels,
            "finite_domain": {"mechanism": "RAPPOR", "n": ns, "delta": 1e-6,
                              "rel_tol": 1e-5, "rows": rows}}


# ----------------------------------------------------------------------------- computations
def test_certified_epsilon_matches_bounds_epsilon():
    mech = KRR(2.0, k=10)
    ours = px.certified_epsilon(mech, 1000, 1e-6)
    ref = bounds.epsilon(mech, 1000, 1e-6)
    assert ours.value == ref.value and ours.lower == ref.lower and ours.fallback == 0
    low = px.certified_epsilon(mech, 1000, 1e-6, bound="lower")
    assert low.value == bounds.epsilon(mech, 1000, 1e-6, bound="lower").value
    assert low.value <= ours.value


def test_bisection_fallback_is_certified():
    """The fallback bracket is certified on both sides for a law where the saddle-point
    starting guess fails (joint composition at small eps0)."""
    mech = px.experiment_mechanism("10-RR", 0.1, 4)
    law = px.experiment_laws(mech, "upper")[0]
    lo, hi = px._bisect_epsilon(law, 1000, 1e-6, 1e-3)
    assert 0 < lo < hi and hi - lo <= 1e-3 * hi
    assert delta_bracket(law, 1000, hi).upper <= 1e-6
    assert delta_bracket(law, 1000, lo, rel_tol=1e-4).lower > 1e-6
    # and it agrees with the regular search on a law where that works
    law1 = KRR(2.0, k=10).gparv()
    lo1, hi1 = px._bisect_epsilon(law1, 1000, 1e-6, 1e-3)
    ref = bounds.epsilon(KRR(2.0, k=10), 1000, 1e-6)
    assert lo1 <= ref.upper and ref.lower <= hi1


def test_certified_epsilon_joint_uses_every_pair_type():
    mech = px.experiment_mechanism("10-RR", 2.0, 2)
    assert isinstance(mech, JointMechanism) and math.isclose(mech.eps0, 2.0)
    laws = px.experiment_laws(mech, "upper")
    assert len(laws) == 2
    up = px.certified_epsilon(mech, 1000, 1e-6, laws=laws, rel_tol=1e-2)
    each = [px.certified_epsilon(mech, 1000, 1e-6, laws=[law], rel_tol=1e-2).value
            for law in laws]
    assert up.value == pytest.approx(max(each), rel=1e-12)
    low = px.certified_epsilon(mech, 1000, 1e-6, bound="lower",
                               laws=px.experiment_laws(mech, "lower"), rel_tol=1e-2)
    assert low.value <= up.value


@pytest.mark.parametrize("name", list(px.EXPERIMENT_MECHANISMS))
def test_experiment_mechanism(name):
    single = px.experiment_mechanism(name, 2.0)
    assert single.eps0 == 2.0 and not isinstance(single, JointMechanism)
    joint = px.experiment_mechanism(name, 2.0, 4)
    assert joint.m == 4 and math.isclose(joint.components[0].eps0, 0.5)


def test_experiment_mechanism_bad_input():
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        px.experiment_mechanism("RR", 1.0)
    with pytest.raises(ParameterError, match="bound must be"):
        px.certified_epsilon(KRR(1.0, k=3), 10, 1e-3, bound="middle")


@pytest.mark.parametrize("key", ["upper", "lower", "joint2_upper", "joint2_lower"])
def test_experiment_point_ours_matches_certified_epsilon(key):
    p = px.experiment_point("OUE", 2.0, key, 1000, 1e-6, rel_tol=1e-2)
    m = 2 if key.startswith("joint") else 1
    mech = px.experiment_mechanism("OUE", 2.0, m)
    bound = key.split("_")[-1]
    ref = px.certified_epsilon(mech, 1000, 1e-6, bound=bound,
                               laws=px.experiment_laws(mech, bound), rel_tol=1e-2)
    assert (p.value, p.lower, p.upper) == (ref.value, ref.lower, ref.upper)
    assert p.lower <= p.value <= p.upper and p.method


@pytest.mark.parametrize("key,fn", [("clone", lambda: clone_epsilon(2.0, 1000, 1e-6)),
                                    ("hoeffding", lambda: hoeffding_epsilon(KRR(2.0, k=10), 1000,
                                                                            1e-6)),
                                    ("bennett", lambda: bennett_epsilon(KRR(2.0, k=10), 1000,
                                                                        1e-6))],
                         ids=["clone", "hoeffding", "bennett"])
def test_experiment_point_baselines(key, fn):
    p = px.experiment_point("10-RR", 2.0, key, 1000, 1e-6)
    ref = fn()
    assert p.value == ref.value and p.lower == ref.lower and p.upper == ref.upper
    assert p.bound == key and p.seconds >= 0


def test_experiment_point_bennett_at_rounding_end_point():
    """RAPPOR at eps0 = 2: the largest ratio is one ulp above e^eps0 (rounding residue in the
    largest G at eps = eps0); the Bennett search still succeeds and is certified."""
    p = px.experiment_point("RAPPOR", 2.0, "bennett", 1000, 1e-6)
    assert 0 < p.value < 2.0
    assert bennett_delta(RAPPOR(2.0), 1000, p.value).value <= 1e-6
    assert bennett_delta(RAPPOR(2.0), 1000, p.value * (1 - 1e-6)).value > 1e-6


def test_experiment_point_bad_key():
    with pytest.raises(ParameterError, match="key must be one of"):
        px.experiment_point("10-RR", 2.0, "joint_upper", 1000, 1e-6)
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        px.experiment_point("RR", 2.0, "clone", 1000, 1e-6)


def test_joint_estimates_certified_and_pair_types():
    ks = [1, 2, 3]
    est = px.joint_estimates("10-RR", 2.0, 2000, 1e-6, ks)
    cert = px.joint_certified("10-RR", 2.0, 2000, 1e-6, ks, rel_tol=1e-2)
    assert est.shape == (3,) and np.all(np.diff(est) < 0)
    assert all(b.upper < a.lower for a, b in zip(cert, cert[1:]))    # certified decrease
    for e, c in zip(est, cert):                                      # estimate is close
        assert 0.95 * c.value <= e <= 1.08 * c.value
    types = px.joint_pair_types("10-RR", 2.0, 3, 2000, 1e-6)
    assert [s for s, _ in types] == [3, 2, 1]
    assert max(p.value for _, p in types) == pytest.approx(cert[2].value, rel=1e-12)
    low = px.joint_certified("10-RR", 2.0, 2000, 1e-6, [2], bound="lower", rel_tol=1e-2)[0]
    assert low.value <= cert[1].value


def test_ratio_spread_closed_form():
    """k-RR: (E, 1) and (1, E) atoms of mass 1/(E + k - 1) each, so
    sigma^2 = 2 (E - 1)^2 / (E + k - 1); a product of independent components multiplies
    E[a^2], E[b^2], E[ab]."""
    E = math.exp(2.0)
    assert px.ratio_spread([KRR(2.0, k=10).gparv()]) == pytest.approx(
        math.sqrt(2 * (E - 1) ** 2 / (E + 9)), rel=1e-12)
    law = KRR(1.0, k=10).gparv()
    Ea2, Eb2, Eab = (float(np.sum(law.p * x)) for x in (law.a ** 2, law.b ** 2, law.a * law.b))
    # sums over blanket atoms (off the blanket G = 0); E[(a1 a2 - b1 b2)^2] factorises
    want = Ea2 ** 2 + Eb2 ** 2 - 2 * Eab ** 2
    joint = px.experiment_mechanism("10-RR", 2.0, 2).pair_law()
    assert px.ratio_spread([joint]) == pytest.approx(math.sqrt(want), rel=1e-12)


@pytest.mark.parametrize("n,eps0", [(1, 1.0), (5, 0.5), (30, 2.0)])
def test_clone_pair_table_matches_clone_delta(n, eps0):
    keys, p0, p1 = px.clone_pair_table(n, eps0)
    assert p0.sum() == pytest.approx(1, abs=1e-12) and p1.sum() == pytest.approx(1, abs=1e-12)
    assert all(1 <= u + v <= n for u, v in keys)      # C + 1 outputs carry a count
    for eps in (0.0, 0.2, 0.8 * eps0):
        hs = float(np.maximum(p0 - math.exp(eps) * p1, 0).sum())
        r = clone_delta(eps0, n, eps)
        assert r.lower - 1e-12 <= hs <= r.upper + 1e-12


def test_clone_pair_table_bad_n():
    with pytest.raises(ParameterError):
        px.clone_pair_table(0, 1.0)


def test_stronger_clone_counterexample():
    M, p, parts = px.stronger_clone_counterexample(1.0)
    E = math.e
    assert np.all(M > 0) and np.allclose(M.sum(axis=1), 1, atol=1e-15)
    assert matrix_eps0(M) == pytest.approx(1.0, abs=1e-12)
    rebuilt = p * parts["Q0"] + p * parts["Q1"] + (1 - 2 * p) * parts["Q_2"]
    assert np.allclose(rebuilt, M[2]) and 0 < p <= 1 / (E + 1)
    true = shuffled_divergence(M, 0, 1, 2, 0.6, n=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StrongerCloneWarning)
        claim = stronger_clone_claimed_delta(1.0, 10, 0.6, p=p)
    assert true > 30 * claim.upper
    with pytest.raises(ParameterError, match="p must be"):
        px.stronger_clone_counterexample(1.0, 0.5)


# ----------------------------------------------------------------------------- stored data
def test_load_figures_and_tables(tmp_path):
    data = fake_figures()
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(data))
    loaded = px.load_figures(path)
    pnl = px.panel(loaded, "10-RR", 2.0)
    ns, eps = px.curve(pnl, "upper")
    assert list(ns) == [1000, 10000, 100000] and eps[0] == pytest.approx(0.1)
    rows = px.tightness_rows(loaded)
    assert len(rows) == 8 and rows[0][:2] == ["10-RR", 0.1]
    assert rows[1][2] == pytest.approx(math.expm1(0.1) / math.expm1(0.11))
    t = px.timing_rows(loaded)
    assert len(t[0]) == 2 + len(px.TIMING_KEYS) and t[0][2] == pytest.approx(3.5)
    with pytest.raises(ParameterError, match="no stored panel"):
        px.panel(loaded, "OUE", 3.0)
    with pytest.raises(ParameterError, match="not found"):
        px.load_figures(tmp_path / "missing.json")


def test_stored_points_and_joint_tables():
    data = fake_figures()
    sp = px.stored_point(data, "BLH", 2.0, "clone", 10000)
    assert sp["value"] == pytest.approx(0.1 * 1.2 / math.sqrt(10)) and sp["seconds"] == 1.0
    with pytest.raises(ParameterError, match="not stored"):
        px.stored_point(data, "BLH", 2.0, "clone", 5000)
    pts = px.stored_joint_points(data, "OUE", 0.1, 1000)
    assert sorted(pts) == [1, 2, 4] and pts[1] == pytest.approx(1e-3)
    assert px.stored_joint_points(data, "OUE", 0.3, 1000) == {}
    assert px.stored_joint_points(data, "OUE", 0.1, 1234) == {}
    assert px.stored_joint_points(data, "OUE", 0.1, 1000, delta=1e-5) == {}
    assert px.stored_joint_points(None, "OUE", 0.1, 1000) == {}
    rows = px.joint_rows(data)
    assert len(rows) == 16 and rows[0][:3] == ["10-RR", 0.1, 10000]
    assert rows[0][7] == pytest.approx(rows[0][6] / rows[0][5])
    spread = px.spread_rows(data, n=10000)
    assert len(spread) == 8 and all(0 < r[4] < r[2] < 1 for r in spread)
    fin = px.finite_domain_rows(data, ns=(1000, 100000))
    assert len(fin) == 6 and fin[2][1] == "Table 1" and len(fin[0]) == 5


def test_html_table_escapes_and_formats():
    out = px.html_table(["a<b", "x"], [["R&R", 0.123456]], fmt={1: ".2f"}, caption="c")
    assert "a&lt;b" in out and "R&amp;R" in out and "0.12" in out and "<caption>c" in out


def test_stored_figures_file_is_consistent():
    """book/data/figures.json (if present): brackets ordered, our upper bound below every
    baseline, the k-joint curves decreasing in k, the finite-domain rows below the Table 1 row."""
    path = px.figures_path()
    if not path.exists():
        pytest.skip("figures.json not generated yet")
    data = px.load_figures(path)
    assert len(data["panels"]) == 8 and set(data["inputs"]["n"]) >= {1000, 10000, 100000}
    for pnl in data["panels"]:
        c = pnl["curves"]
        assert set(c) == set(px.CURVE_STYLES)
        for key in c:
            assert c[key]["n"] == data["inputs"]["n"]
            assert np.all(np.asarray(c[key]["lower"]) <= np.asarray(c[key]["upper"]))
        v = {key: np.asarray(c[key]["value"]) for key in c}
        assert np.all(np.asarray(c["lower"]["upper"]) <= np.asarray(c["upper"]["upper"]) * 1.001)
        for base in ("clone", "hoeffding", "bennett"):
            assert np.all(v["upper"] < v[base])
        assert np.all(v["joint4_upper"] < v["joint2_upper"])
        assert np.all(v["joint2_upper"] < v["upper"])
    fin = data["finite_domain"]
    ref = {r["eps0"]: r for r in fin["rows"] if r["d"] is None}
    for r in fin["rows"]:
        assert np.all(np.asarray(r["upper"]) <= np.asarray(ref[r["eps0"]]["upper"]) * (1 + 2e-5))


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
    monkeypatch.setattr(rf, "EXPERIMENT_MECHANISMS", {"OUE": px.EXPERIMENT_MECHANISMS["OUE"]})
    out = tmp_path / "figures.json"
    assert rf.main(["--quick", "--out", str(out)]) == 0
    data = px.load_figures(out)
    assert not (tmp_path / "figures.partial.json").exists()
    assert data["provenance"]["command"].endswith(f"--quick --out {out}")
    assert len(data["provenance"]["amp_source_sha256"]) == 64
    pnl = px.panel(data, "OUE", 2.0)
    assert set(pnl["curves"]) == set(px.CURVE_STYLES)
    live = px.experiment_point("OUE", 2.0, "upper", 1000, 1e-6)
    assert px.stored_point(data, "OUE", 2.0, "upper", 1000)["value"] == live.value
    assert [r["d"] for r in data["finite_domain"]["rows"]] == [3, None]


# ----------------------------------------------------------------------------- figures
def test_plot_clone_pair_and_delta_comparison():
    assert labelled(px.plot_clone_pair(10, 1.0))
    ax = px.plot_delta_comparison([0.1, 0.2], {"a": [1e-3, 1e-4], "claim": [1e-4, 0.0],
                                               "truth": [1e-3, 2e-4]},
                                  invalid=["claim"], truth=["truth"], title="t")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "claim (NOT a valid bound)" in labels and labelled(ax)


def test_plot_experiment_panel_and_figure():
    data = fake_figures()
    ax = px.plot_experiment_panel(px.panel(data, "10-RR", 0.1))
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_lines()) == len(px.CURVE_STYLES)
    ax2 = px.plot_experiment_panel(px.panel(data, "10-RR", 2.0), keys=["upper", "lower"])
    assert len(ax2.get_lines()) == 2
    fig = px.plot_experiment_figure(data, ["10-RR"])
    assert len(fig.axes) == 2 and all(labelled(a) for a in fig.axes)


def test_plot_joint_and_finite_domain():
    ax = px.plot_joint_curves([1e3, 1e4], {"k = 1": [0.3, 0.1], "k = 2": [0.2, 0.07]},
                              clone=[0.5, 0.2], title="x")
    assert labelled(ax) and len(ax.get_lines()) == 3
    rows = [{"d": 3, "n": [1e3, 1e4], "value": [0.2, 0.05]},
            {"d": 10, "n": [1e3, 1e4], "value": [0.25, 0.06]},
            {"d": None, "n": [1e3, 1e4], "value": [0.25, 0.06]}]
    ax = px.plot_finite_domain(rows, resolution=1e-5)
    assert labelled(ax) and ax.get_yscale() == "log"
    fig = px.plot_finite_domain_figure(fake_figures())
    assert len(fig.axes) == 2 and fig.axes[0].get_ylabel()


def test_plot_joint_vs_k_choice_blanket_figure():
    ax = px.plot_joint_vs_k([1, 2, 3], [0.3, 0.2, 0.15], certified={1: 0.29, 3: 0.14},
                            clone=0.5, title="t")
    assert labelled(ax) and len(ax.get_lines()) == 3
    ax = px.plot_joint_choice("RAPPOR", 1.0, 5000, k_max=4, certified={2: 0.05})
    assert labelled(ax) and "RAPPOR" in ax.get_title()
    ax = px.plot_joint_blanket([1, 2], {"a": [0.5, 0.6]}, clone_mass=0.1)
    assert labelled(ax) and len(ax.get_lines()) == 2
    fig = px.plot_joint_figure(fake_figures(), 2.0)
    assert sum(a.get_visible() for a in fig.axes) == 4
    assert all(labelled(a) for a in fig.axes if a.get_visible())


def test_plot_joint_choice_is_fast():
    """The Chapter 6 widget redraws in well under a second (warm, worst stored n)."""
    px.plot_joint_choice("OUE", 0.1, 100_000)
    plt.close("all")
    for args in [("10-RR", 4.0, 100_000), ("OUE", 0.1, 100_000), ("BLH", 2.0, 1000)]:
        t0 = time.perf_counter()
        ax = px.plot_joint_choice(*args, k_max=8, data=fake_figures())
        ax.figure.canvas.draw()
        assert time.perf_counter() - t0 < 1.0, args
        plt.close("all")


def test_plot_conjecture_and_appendices():
    eps = np.linspace(0, 1, 5)
    ax = px.plot_conjecture_curves(eps, {"a": np.exp(-eps), "b": np.exp(-2 * eps)},
                                   upper=np.exp(-eps) * 2)
    assert labelled(ax)
    rep = search(KRR(1.0, k=3).matrix(), 3, [0.0, 0.5, 0.9], label="3-RR")
    assert labelled(px.plot_conjecture_ratios([rep]))
    report = appendix_a_report(4, 1.0, 10, 0.3, n_samples=2000, seed=1)
    ax = px.plot_count_laws(report)
    assert ax.get_xlabel()
    ax = px.plot_proof_identity([1e-3, 2e-2], [1e-3, 2e-2])
    assert labelled(ax)


# ----------------------------------------------------------------------------- widgets
def test_widgets_build():
    pytest.importorskip("ipywidgets")
    w = px.experiments_widget(fake_figures())
    assert len(w.children) >= 5
    data = fake_figures()
    j = px.joint_widget(data, n=12_000)
    controls = {c.description: c for c in j.children if hasattr(c, "description")}
    assert {"mechanism", "total ε₀", "n", "largest k"} <= set(controls)
    assert controls["n"].value == 10_000                 # snapped to the stored grid
    assert not any(d.startswith("compute") for d in controls)     # no button: live redraw
    t0 = time.perf_counter()
    controls["mechanism"].value = "OUE"                  # triggers a redraw
    assert time.perf_counter() - t0 < 1.5
