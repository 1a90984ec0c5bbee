"""The live app's precomputed data (``book/data/live``, ``scripts/live/precompute.py``) equals
a fresh computation with this checkout's ``amp``, to the last bit (slow: Chapter 11's curves
about 20 s, Chapter 12's 231 calibrations about 4 minutes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _precompute():
    spec = importlib.util.spec_from_file_location("live_precompute",
                                                  ROOT / "scripts" / "live" / "precompute.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stored_file_has_provenance_and_the_chapters_question():
    data = json.loads((ROOT / "book" / "data" / "live" / "ch11_rounds.json").read_text())
    prov = data["provenance"]
    assert prov["command"].startswith("python scripts/live/precompute.py")
    assert len(prov["git_commit"]) == 40 and len(prov["amp_source_sha256"]) == 64
    assert data["question"] == _precompute().CH11
    full = data["curves"]["full"]
    assert full["rounds"] == [1, 10, 100, 1000] and full["clone"] is not None
    assert all(lo <= up for lo, up in zip(full["lower"], full["upper"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ch11_rounds.json", "ch12_calibrations.json"])
def test_stored_data_equals_a_fresh_computation(name):
    stored = json.loads((ROOT / "book" / "data" / "live" / name).read_text())
    stored.pop("provenance")
    assert json.loads(json.dumps(_precompute().FILES[name]())) == stored


def test_chapter12_reads_the_stored_calibrations(monkeypatch):
    """accuracy_figs.calibrated answers a stored question without calibrating (the oracle
    built from the stored eps0) and calibrates any other question."""
    import sys
    monkeypatch.syspath_prepend(str(ROOT / "book"))
    sys.modules.pop("accuracy_figs", None)
    import accuracy_figs as F
    from ampbook import accuracy as A
    rows = json.loads(F.STORED.read_text())["calibrations"]
    assert len(rows) == 3 * 6 * 12 + 15
    r = next(r for r in rows if r["n"] == 10**7 and r["eps"] == 0.25 and r["name"] == "krr")
    calls = []
    monkeypatch.setattr(A, "calibrated_oracle", lambda *a, **k: calls.append(a) or "fresh")
    F.calibrated.cache_clear()
    o = F.calibrated("krr", 59, 10**7, 0.25, 1e-6)
    assert o == A.oracle("krr", r["eps0"], 59) and not calls
    assert F.calibrated("krr", 59, 10**7, 0.3, 1e-6) == "fresh" and len(calls) == 1
    F.calibrated.cache_clear()
