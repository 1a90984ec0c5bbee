"""The live app's precomputed data (``book/data/live``, ``scripts/live/precompute.py``) equals
a fresh computation with this checkout's ``amp``, to the last bit (slow: about 20 s)."""

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
def test_stored_curves_equal_a_fresh_computation():
    stored = json.loads((ROOT / "book" / "data" / "live" / "ch11_rounds.json").read_text())
    stored.pop("provenance")
    assert json.loads(json.dumps(_precompute().ch11_rounds())) == stored
