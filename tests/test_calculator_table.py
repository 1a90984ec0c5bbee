"""The static calculator's table (book/_static/calculator/table.js) is valid and current.

The page answers (mechanism, eps0, n, delta) with the entry at n rounded DOWN and delta rounded
DOWN to the table's grid. That is valid because the bound is non-increasing in n (the blanket
argument of chapter 10) and in delta; these tests check both on the table itself, check its
provenance, and recompute a random sample of its entries with amp (same version): each stored
number must be exactly ``ceil_4_digits(value * (1 + 2e-4))`` (capped at eps0) of amp's value now.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

import pytest

import amp

REPO = Path(__file__).resolve().parents[1]
TABLE_JS = REPO / "book" / "_static" / "calculator" / "table.js"
MECHS = {"krr3": lambda e: amp.KRR(e, k=3), "krr10": lambda e: amp.KRR(e, k=10),
         "krr100": lambda e: amp.KRR(e, k=100), "rappor": amp.RAPPOR, "oue": amp.OUE,
         "blh": amp.BLH, "hr": amp.HadamardResponse}


def load_table(path: Path = TABLE_JS) -> dict:
    text = path.read_text(encoding="utf-8")
    m = re.search(r"window\.AMP_CALC_TABLE = (.*);\s*$", text, re.S)
    assert m, f"{path} does not define window.AMP_CALC_TABLE"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def table() -> dict:
    return load_table()


def _values(table: dict):
    for src, per in table["tables"].items():
        for e0, rows in per.items():
            yield src, float(e0), rows


def expected_store(value: float, eps0: float) -> Decimal:
    """Independent statement of the stored number (see scripts/build_calculator_table.py)."""
    if value == 0:
        return Decimal(0)
    d = Decimal(value) * (1 + Decimal("2e-4"))
    q = Decimal(1).scaleb(d.adjusted() - 3)
    r = (d / q).to_integral_value(rounding=ROUND_CEILING) * q
    return min(r, Decimal(repr(eps0))) if value <= eps0 else r


def test_provenance(table: dict) -> None:
    meta = table["meta"]
    assert meta["amp_version"] == amp.__version__, (
        "table.js was computed by another amp version: rerun scripts/build_calculator_table.py")
    assert re.fullmatch(r"[0-9a-f]{40}", meta["git_commit"])
    assert meta["command"].startswith("python scripts/build_calculator_table.py")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["date_utc"])
    assert meta["rel_tol"] == 1e-4 and meta["cpu_seconds"] > 0
    assert "rounding_cost" in meta


def test_grid_and_shape(table: dict) -> None:
    ns, deltas = table["n"], table["delta"]
    # rows stop at 1e7 (compute budget of the session, see the generator); larger n use the
    # last row, which stays valid (non-increasing in n) but loose
    assert ns[0] == 100 and ns[-1] >= 10**7 and ns == sorted(set(ns))
    assert all(isinstance(n, int) for n in ns)
    assert deltas[0] == 1e-4 and deltas[-1] == 1e-12 and deltas == sorted(set(deltas))[::-1]
    assert table["eps0"] == sorted(table["eps0"]) and len(table["eps0"]) >= 3
    ids = {m["id"] for m in table["mechanisms"]}
    assert {"krr3", "krr10", "krr100", "rappor", "oue", "blh", "hr"} <= ids
    for m in table["mechanisms"]:
        src = m.get("same_as", m["id"])
        assert set(table["tables"][src]) == {f"{e:g}" for e in table["eps0"]}
    for _, _, rows in _values(table):
        assert len(rows) == len(ns) and all(len(r) == len(deltas) for r in rows)
    assert [deltas[k] for k in table["coarse_delta_index"]] == [10.0**-k for k in range(4, 13)]
    assert 0 < table["coarse_from"] <= len(ns)


def test_values_valid_and_nulls_explained(table: dict) -> None:
    nulls = 0
    for src, e0, rows in _values(table):
        for i, row in enumerate(rows):
            for j, v in enumerate(row):
                if v is None:
                    nulls += 1
                    key = f"{src}|{e0:g}|{i}|{j}"
                    if i >= table["coarse_from"]:
                        key = f"{src}|{e0:g}|{i}|{_source(table, j)}"
                    assert table["null_reasons"].get(key), f"null without a reason at {key}"
                else:
                    assert 0 <= v <= e0 and math.isfinite(v)
    print(f"{nulls} null entries (not covered)")


def test_monotone_in_n_and_delta(table: dict) -> None:
    """Non-increasing in n (down a column) and in delta (deltas are stored descending)."""
    bad = []
    for src, e0, rows in _values(table):
        for i, row in enumerate(rows):
            for j, v in enumerate(row):
                if v is None:
                    continue
                if i + 1 < len(rows) and rows[i + 1][j] is not None and rows[i + 1][j] > v:
                    bad.append(("n", src, e0, table["n"][i], table["delta"][j]))
                if j + 1 < len(row) and row[j + 1] is not None and row[j + 1] < v:
                    bad.append(("delta", src, e0, table["n"][i], table["delta"][j]))
    assert not bad, f"{len(bad)} non-monotone entries, e.g. {bad[:5]}"


def _source(table: dict, j: int) -> int:
    return min(k for k in table["coarse_delta_index"] if k >= j)


def test_coarse_rows_repeat_their_source(table: dict) -> None:
    for _, _, rows in _values(table):
        for i in range(table["coarse_from"], len(rows)):
            for j, v in enumerate(rows[i]):
                assert v == rows[i][_source(table, j)]


def test_random_sample_recomputed_by_amp(table: dict) -> None:
    """~10 random entries (n <= 1e7 to stay under a minute) recomputed by amp now."""
    rng = random.Random(20261201)
    ns, deltas = table["n"], table["delta"]
    cand = [(m["id"], e0, i, j) for m in table["mechanisms"] for e0 in table["eps0"]
            for i in range(len(ns)) if ns[i] <= 10**7 for j in range(len(deltas))]
    picks = rng.sample(cand, 10)
    picks.append(("hr", 4.0, ns.index(10_000), deltas.index(1e-6)))   # HR's row is BLH's
    start, exact = time.perf_counter(), 0
    for mid, e0, i, j in picks:
        src = next(m.get("same_as", m["id"]) for m in table["mechanisms"] if m["id"] == mid)
        js = _source(table, j) if i >= table["coarse_from"] else j
        stored = table["tables"][src][f"{e0:g}"][i][j]
        key = f"{src}|{e0:g}|{i}|{js}"
        prof = amp.profile(MECHS[mid](e0), ns[i])
        if stored is None:
            with pytest.raises(amp.AmpError):
                amp.epsilon_for(prof, deltas[js], rel_tol=1e-2)
            continue
        rel_tol = table["rel_tol_exceptions"].get(key, table["meta"]["rel_tol"])
        b = amp.epsilon_for(prof, deltas[js], rel_tol=rel_tol)
        where = (mid, e0, ns[i], deltas[js], stored, b.bracket)
        assert b.value == b.upper
        if Decimal(repr(stored)) == expected_store(b.value, e0):
            exact += 1                  # the same number as amp gives now
            continue
        # amp's search may have moved inside its certified bracket since the table was made
        # (same version, other commit): the stored value must still dominate amp's upper end
        # (it carries a 2e-4 margin over a 1e-4-wide bracket) and be no looser than the rounding
        if rel_tol == table["meta"]["rel_tol"] and stored < e0:
            assert stored >= b.upper, where
        else:
            assert stored >= b.lower, where
        assert stored <= b.upper * (1 + rel_tol) * (1 + 2e-4) * (1 + 1e-3) or stored == e0, where
    print(f"{exact} of {len(picks)} sampled entries are exactly amp's value now")
    assert time.perf_counter() - start < 120


def test_hr_is_blh_in_table1_form() -> None:
    for e0 in (1.0, 4.0):
        h = amp.epsilon(amp.HadamardResponse(e0), 5_000, 1e-7)
        b = amp.epsilon(amp.BLH(e0), 5_000, 1e-7)
        # the same Table 1 row: equal up to the last bits of the atoms' floating point
        assert all(math.isclose(x, y, rel_tol=1e-12) for x, y in zip(h.bracket, b.bracket))
