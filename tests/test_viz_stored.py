"""The stored curves of Figures 2 and 3 (:mod:`ampbook.stored`): reading, tables, and the
consistency of the committed ``book/data/figures.json``.

:func:`fake_figures` (a small file of the same shape) is shared with the other viz tests."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from amp.core.errors import ParameterError
from ampbook import stored
from ampbook.experiments import CURVE_STYLES, EXPERIMENT_MECHANISMS


def fake_figures() -> dict:
    """A small figures.json-like structure: the four mechanisms at two eps0, three n."""
    ns = [1000, 10000, 100000]
    panels = []
    for name in EXPERIMENT_MECHANISMS:
        for e0, base in ((0.1, 1e-3), (2.0, 1e-1)):
            curves = {}
            for i, key in enumerate(CURVE_STYLES):
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


def test_load_figures_and_tables(tmp_path):
    data = fake_figures()
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(data))
    loaded = stored.load_figures(path)
    pnl = stored.panel(loaded, "10-RR", 2.0)
    ns, eps = stored.curve(pnl, "upper")
    assert list(ns) == [1000, 10000, 100000] and eps[0] == pytest.approx(0.1)
    assert stored.curve_value(pnl, "upper", 10000) == pytest.approx(0.1 / math.sqrt(10))
    with pytest.raises(ParameterError, match="not stored"):
        stored.curve_value(pnl, "upper", 5000)
    rows = stored.tightness_rows(loaded)
    assert len(rows) == 8 and rows[0][:2] == ["10-RR", 0.1]
    assert rows[1][2] == pytest.approx(math.expm1(0.1) / math.expm1(0.11))
    t = stored.timing_rows(loaded)
    assert len(t[0]) == 2 + len(stored.TIMING_KEYS) and t[0][2] == pytest.approx(3.5)
    with pytest.raises(ParameterError, match="no stored panel"):
        stored.panel(loaded, "OUE", 3.0)
    with pytest.raises(ParameterError, match="not found"):
        stored.load_figures(tmp_path / "missing.json")


def test_stored_point_and_finite_domain_rows():
    data = fake_figures()
    sp = stored.stored_point(data, "BLH", 2.0, "clone", 10000)
    assert sp["value"] == pytest.approx(0.1 * 1.2 / math.sqrt(10)) and sp["seconds"] == 1.0
    with pytest.raises(ParameterError, match="not stored"):
        stored.stored_point(data, "BLH", 2.0, "clone", 5000)
    fin = stored.finite_domain_rows(data, ns=(1000, 100000))
    assert len(fin) == 6 and fin[2][1] == "Table 1" and len(fin[0]) == 5


def test_stored_figures_file_is_consistent():
    """book/data/figures.json (if present): brackets ordered, our upper bound below every
    baseline, the k-joint curves decreasing in k, the finite-domain rows below the Table 1 row."""
    path = Path(__file__).resolve().parents[1] / "book" / "data" / "figures.json"
    if not path.exists():
        pytest.skip("figures.json not generated yet")
    data = stored.load_figures(path)
    assert len(data["panels"]) == 8 and set(data["inputs"]["n"]) >= {1000, 10000, 100000}
    for pnl in data["panels"]:
        c = pnl["curves"]
        assert set(c) == set(CURVE_STYLES)
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
