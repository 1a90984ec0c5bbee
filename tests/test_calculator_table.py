"""The static calculator's table (book/_static/calculator/table.js) is valid and current.

The table stores, per (mechanism, eps0, grid n), certified pairs (eps_i, delta_i): amp's
certified upper end of Theorem 4's delta at eps_i, rounded up. The page answers (mechanism,
eps0, n, delta) with the smallest eps_i whose delta_i <= delta, from the row with the largest
grid n <= n, never above eps0. That is valid because

* delta(eps) is non-increasing in eps (Theorem 4's E[(sum a - e^eps b)_+] with b >= 0), so a
  pair (eps_i, delta_i) certifies eps_i for every delta >= delta_i;
* the bound is non-increasing in n (chapter 10's blanket argument: a larger crowd is at least
  as good a blanket).

These tests check both statements on amp's values, recompute a random sample of stored pairs
with amp now (the stored delta must dominate amp's certified upper end), check the provenance
and the grid, and run the page's JavaScript lookup (in node, when present) against the Python
mirror in scripts/build_calculator_table.py on many cases, including eps = 0, the eps0
fallback and n above the table.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import amp

REPO = Path(__file__).resolve().parents[1]
TABLE_JS = REPO / "book" / "_static" / "calculator" / "table.js"
CALC_JS = REPO / "book" / "_static" / "calculator" / "calculator.js"
sys.path.insert(0, str(REPO / "scripts"))
import build_calculator_table as B  # noqa: E402

MECHS = {"krr3": lambda e: amp.KRR(e, k=3), "krr10": lambda e: amp.KRR(e, k=10),
         "krr100": lambda e: amp.KRR(e, k=100), "rappor": amp.RAPPOR, "oue": amp.OUE,
         "blh": amp.BLH, "hr": amp.HadamardResponse}


def load_table(path: Path = TABLE_JS) -> dict:
    text = path.read_text(encoding="utf-8")
    m = re.search(r"window\.AMP_CALC_TABLE = (.*);\s*$", text, re.S)
    assert m, f"{path} does not define window.AMP_CALC_TABLE"
    return B.inflate(json.loads(m.group(1)))


@pytest.fixture(scope="module")
def table() -> dict:
    return load_table()


def _rows(table: dict):
    for src, per in table["rows"].items():
        for e0, rows in per.items():
            for i, row in enumerate(rows):
                if row is not None:
                    yield src, float(e0), table["n"][i], row


def test_provenance_and_size(table: dict) -> None:
    meta = table["meta"]
    assert meta["amp_version"] == amp.__version__, (
        "table.js was computed by another amp version: rerun scripts/build_calculator_table.py")
    assert meta["git_commits"] and all(re.fullmatch(r"[0-9a-f]{40}", c)
                                       for c in meta["git_commits"])
    assert meta["command"].startswith("python scripts/build_calculator_table.py")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["date_utc"])
    assert meta["delta_rel_tol"] == 1e-2 and meta["cpu_seconds"] > 0
    assert TABLE_JS.stat().st_size < 500_000, "the page must stay light"


def test_grid_covers_1e2_to_1e9(table: dict) -> None:
    """Every (mechanism, eps0) has a row at each half decade 1e2, 3.16e2, ..., 1e9: every n up to
    1e9 is answered by a row at most a factor 10^0.5 below it (valid at any n >= 100)."""
    ns = table["n"]
    assert ns == sorted(set(ns)) and all(isinstance(n, int) for n in ns)
    assert ns[0] == 100 and ns[-1] == 10**9
    # the 20-per-decade grid, plus the rows refine_candidates put between neighbours
    assert all(100 <= n <= 10**9 and n == B.round3(n) for n in ns)
    assert table["delta_range"] == [1e-12, 1e-4]
    ids = {m["id"] for m in table["mechanisms"]}
    assert {"krr3", "krr10", "krr100", "rappor", "oue", "blh", "hr"} <= ids
    skipped = {(r["mech"], r["eps0"], r["n"]) for r in table["meta"].get("rows_skipped", [])}
    assert all(r["reason"] for r in table["meta"].get("rows_skipped", []))
    assert len(skipped) <= 3, "more than a few rows missing: finish the build"
    for m in table["mechanisms"]:
        src = m.get("same_as", m["id"])
        per = table["rows"][src]
        assert set(per) == {f"{e:g}" for e in table["eps0"]}
        for e0, rows in per.items():
            assert len(rows) == len(ns)
            for j in range(40, 181, 10):
                assert B.n_at(j) in ns, f"no row at n = {B.n_at(j)}"
                if (src, float(e0), B.n_at(j)) in skipped:
                    continue                  # named, with its reason, in the provenance
                assert rows[ns.index(B.n_at(j))] is not None, (src, e0, B.n_at(j))


def test_lattice_and_codes(table: dict) -> None:
    lat, k0 = table["eps_lattice"], table["eps_lattice_k0"]
    vals = [float(s) for s in lat]
    assert all(b / a > 1.03 for a, b in zip(vals, vals[1:]))            # strictly geometric
    for k in (k0, k0 + len(lat) // 2, k0 + len(lat) - 1):
        assert float(lat[k - k0]) >= 10 ** (k / 67) * (1 - 1e-15)         # rounded up
    for src, e0, n, row in _rows(table):
        k, q0, qs = B.decode_row(row)
        assert k >= k0 and k + len(qs) <= k0 + len(lat)
        assert qs == sorted(qs), "codes must be non-decreasing along eps (running minimum)"
        assert 0 <= q0 <= B.Q_MAX and all(0 <= q <= B.Q_MAX for q in qs)
    # the code rounds delta UP, with a margin over the float error of 10**(-q/300)
    for u in (1e-4, 3.3e-7, 1.234567e-12, 0.5):
        assert B.q_delta(B.q_code(u)) >= u * 10 ** (1 / 300) * (1 - 1e-12)


def test_random_sample_recomputed_by_amp(table: dict) -> None:
    """~40 random stored pairs (rows with n <= 1e6, to stay fast): stored delta >= amp's
    certified upper end now (rel_tol 1e-3, tighter than the build's 1e-2), and (0, delta_0)."""
    rng = random.Random(20261201)
    rows = [r for r in _rows(table) if r[2] <= 10**6]
    picks = rng.sample(rows, 12)
    picks.append(next(r for r in _rows(table) if r[0] == "blh" and r[2] == 10_000))
    checked = 0
    lat, lk0 = table["eps_lattice"], table["eps_lattice_k0"]
    for src, e0, n, row in picks:
        k0, q0, qs = B.decode_row(row)
        prof = amp.profile(MECHS[src](e0), n)
        idxs = rng.sample(range(len(qs)), min(3, len(qs)))
        for idx in idxs:
            eps = float(lat[k0 + idx - lk0])
            try:
                b = prof.delta(eps, rel_tol=1e-3)
            except amp.NumericalError:
                b = prof.delta(eps, rel_tol=1e-2)
            assert B.q_delta(qs[idx]) >= b.upper, (src, e0, n, eps, qs[idx], b)
            checked += 1
        b0 = prof.delta(0.0, rel_tol=1e-2)
        assert B.q_delta(q0) >= b0.upper, (src, e0, n, "eps=0", b0)
    # HR's row is BLH's (Table 1): the pairs hold for HadamardResponse too
    src, e0, n, row = picks[-1]
    k0, _, qs = B.decode_row(row)
    eps = float(lat[k0 - lk0 + len(qs) // 2])
    assert B.q_delta(qs[len(qs) // 2]) >= amp.profile(amp.HadamardResponse(e0), n).delta(
        eps, rel_tol=1e-3).upper
    print(f"{checked} stored pairs re-certified by amp")


def test_delta_non_increasing_in_eps() -> None:
    """Theorem 4's delta(eps) never increases with eps (checked on amp's tight brackets)."""
    for mech, n in ((amp.KRR(4.0, k=10), 2_000), (amp.OUE(1.0), 3_000), (amp.RAPPOR(8.0), 300)):
        prof = amp.profile(mech, n)
        eps = [0.0] + [10 ** (k / 67) * 1e-2 for k in range(0, 200, 7)]
        bs = prof.delta(eps, rel_tol=1e-4)
        for a, b in zip(bs, bs[1:]):
            assert b.lower <= a.upper, (mech.describe(), n, a, b)


def test_bound_non_increasing_in_n() -> None:
    """The bound never increases with n: consecutive n, and consecutive grid rows, on amp's
    tight brackets (the blanket argument of chapter 10)."""
    for mech, eps in ((amp.KRR(4.0, k=10), 0.5), (amp.BLH(2.0), 0.3), (amp.KRR(8.0, k=3), 1.5)):
        ns = [100, 101, 102, 500, 501, 2_000, B.n_at(67), B.n_at(68), B.n_at(99), B.n_at(100)]
        ns = sorted(set(ns))
        bs = [amp.profile(mech, n).delta(eps, rel_tol=1e-5) for n in ns]
        for (n1, a), (n2, b) in zip(zip(ns, bs), zip(ns[1:], bs[1:])):
            assert b.lower <= a.upper, (mech.describe(), eps, n1, a, n2, b)
        assert bs[-1].upper < bs[0].lower          # and it does decrease (not a flat check)


def test_table_answers_monotone(table: dict) -> None:
    """The lookup's answers never increase with delta nor with n (the page takes the smallest
    answer over all rows with grid n <= n: rows differ in precision, each is valid), and each
    answer is one of the row's pairs, 0 or eps0."""
    rng = random.Random(7)
    deltas = sorted({10 ** rng.uniform(-12, -4) for _ in range(12)} | {1e-4, 1e-12})
    lat = {float(x) for x in table["eps_lattice"]}
    for m in table["mechanisms"]:
        for e0 in table["eps0"]:
            prev = None
            for n in table["n"][::3] + [table["n"][-1]]:
                ans = [B.answer(table, m["id"], e0, n, d)["eps"] for d in deltas]
                assert all(b <= a for a, b in zip(ans, ans[1:])), (m["id"], e0, n)
                assert all(a in lat or a in (0.0, e0) for a in ans)
                if prev is not None:
                    assert all(a <= p for a, p in zip(ans, prev)), (m["id"], e0, n)
                prev = ans


def _node_answers(cases: list[tuple]) -> list[dict]:
    script = (
        "global.window = {};\n"
        f"require({json.dumps(str(CALC_JS))});\n"
        "const fs = require('fs');\n"
        f"const text = fs.readFileSync({json.dumps(str(TABLE_JS))}, 'utf8');\n"
        "const T = JSON.parse(text.slice(text.indexOf('=') + 1).trim().replace(/;$/, ''));\n"
        "const cases = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
        "const out = cases.map(c => { const a = window.ampStaticCalc.answer(T, ...c);\n"
        "  return {status: a.status, eps: a.eps, gridN: a.gridN, kind: a.kind,\n"
        "          pairDelta: a.pairDelta, above: a.aboveTable, cost: a.cost,\n"
        "          message: a.message}; });\n"
        "process.stdout.write(JSON.stringify(out));\n")
    run = subprocess.run(["node", "-e", script], input=json.dumps(cases), capture_output=True,
                         text=True, check=True, timeout=60)
    return json.loads(run.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_lookup_matches_python_mirror(table: dict) -> None:
    rng = random.Random(11)
    ids = [m["id"] for m in table["mechanisms"]]
    cases = []
    for _ in range(400):
        n = int(10 ** rng.uniform(2, 9.5))
        d = 10 ** rng.uniform(-12, -4)
        cases.append((rng.choice(ids), f"{rng.choice(table['eps0']):g}", str(n), repr(d)))
    # on-grid n, the range ends, n above the table, and refusals
    cases += [("krr10", "4", "10000", "1e-6"), ("krr10", "4", "1e9", "1e-12"),
              ("krr10", "2", "5e9", "1e-4"), ("hr", "1", "100", "1e-4"),
              ("krr10", "4", "99", "1e-6"), ("krr10", "4", "1e4", "1e-13"),
              ("krr10", "4", "1e4", "2e-4"), ("krr10", "3", "1e4", "1e-6"),
              ("krr10", "4", "1234.5", "1e-6")]
    js = _node_answers(cases)
    kinds = set()
    for c, a in zip(cases, js):
        mid, e0, n_text, d_text = c
        n, d = float(n_text), float(d_text)
        ok = (e0 in {f"{e:g}" for e in table["eps0"]} and n == int(n) and n >= 100
              and 1e-12 <= d <= 1e-4)
        if not ok:
            assert a["status"] == "refused" and a["message"], (c, a)
            continue
        py = B.answer(table, mid, float(e0), int(n), d)
        assert a["status"] == "ok", (c, a)
        assert a["eps"] == py["eps"] and a["gridN"] == py["gridN"], (c, a, py)
        assert a["gridN"] <= n and a["eps"] <= float(e0)
        src = next(m.get("same_as", m["id"]) for m in table["mechanisms"] if m["id"] == mid)
        rows = table["rows"][src][e0]
        last_n = max(g for g, r in zip(table["n"], rows) if r is not None)
        assert a["above"] == (n > last_n), (c, a, last_n)
        if a["kind"] == "pair":
            assert a["pairDelta"] <= d
        kinds.add(a["kind"])
    assert {"pair", "zero"} <= kinds, kinds      # eps = 0 answers occur (large n, large delta)


def test_eps_zero_answer_is_certified(table: dict) -> None:
    """The smallest-n row whose delta(0) code is below 1e-4 answers eps = 0 at delta = 1e-4;
    amp confirms delta(0) <= 1e-4 there."""
    lat = [(src, e0, n, row) for src, e0, n, row in _rows(table)
           if B.q_delta(row[1]) <= 1e-4]
    src, e0, n, row = min(lat, key=lambda r: r[2])
    a = B.answer(table, src, e0, n, 1e-4)
    assert a["eps"] == 0.0 and a["gridN"] == n
    assert amp.profile(MECHS[src](e0), n).delta(0.0, rel_tol=1e-2).upper <= 1e-4


def test_above_table_uses_last_row(table: dict) -> None:
    a = B.answer(table, "krr10", 4.0, 5 * 10**9, 1e-8)
    b = B.answer(table, "krr10", 4.0, 10**9, 1e-8)
    assert a["gridN"] == b["gridN"] == 10**9 and a["eps"] == b["eps"]


def _cell(mid: str, n: int, k0: int, uppers: list) -> dict:
    """A checkpoint cell as compute_row writes it (made-up certified uppers)."""
    return {"mech": mid, "eps0": 8.0, "n": n, "k0": k0, "uppers": uppers,
            "tols": [1e-2] * len(uppers), "delta0": 0.5, "tol0": 1e-2, "reasons": {},
            "msg0": None, "eps_search": [0.0, 1.0], "cpu": 0.0}


def test_refine_candidates_splits_only_wide_gaps() -> None:
    """Rows whose answers are 3 lattice steps apart (1.109) get a midpoint row; 2 steps (1.071)
    do not; nor do answers near 0 (ans_b = 0, or within 2e-3 absolute)."""
    k = 0                                           # eps_at(0) = 1.0, a lattice of 1.035 steps
    drop = [1e-3, 1e-6, 1e-9, 1e-13]                # delta at k, k+1, k+2, k+3
    cells = {
        ("krr3", 8.0, 1000): _cell("krr3", 1000, k, drop),            # answers 1e-9 at k+2
        ("krr3", 8.0, 1120): _cell("krr3", 1120, k - 1, drop),        # one step lower: kept
        ("krr3", 8.0, 1260): _cell("krr3", 1260, k - 4, drop),        # three steps: split
        ("krr10", 8.0, 1000): _cell("krr10", 1000, -200, drop),       # eps ~ 1e-3: near 0
        ("krr10", 8.0, 1120): _cell("krr10", 1120, -240, drop),
    }
    table, _ = B.assemble(cells, {})
    got = B.refine_candidates(table)
    assert got == [("krr3", 8.0, B.round3((1120 * 1260) ** 0.5))], got
    mid = got[0][2]
    assert 1120 < mid < 1260
    # once the midpoint row is there (answers within two steps of both), nothing is proposed
    cells[("krr3", 8.0, mid)] = _cell("krr3", mid, k - 2, drop)
    assert B.refine_candidates(B.assemble(cells, {})[0]) == []


def test_walked_range_matches_searched_range() -> None:
    """compute_row with a guessed range (walked on the lattice) stores the same certified
    values (up to the order-dependent work of amp's cached tables: both are upper ends of
    brackets of relative width <= 1e-2 of one delta) as with searches where both computed,
    and covers the page's deltas."""
    a = B.compute_row("krr10", 4.0, 20_000)
    lo, hi = a["eps_search"]
    b = B.compute_row("krr10", 4.0, 20_000, guess=(lo * 1.3, hi * 0.8))    # a poor guess
    assert b["range_from"] == "walk" and a["range_from"] == "searches"
    ka = dict(zip(range(a["k0"], a["k0"] + len(a["uppers"])), a["uppers"]))
    kb = dict(zip(range(b["k0"], b["k0"] + len(b["uppers"])), b["uppers"]))
    common = set(ka) & set(kb)
    assert len(common) > 20
    assert all(ka[k] >= kb[k] * (1 - 1e-2) and kb[k] >= ka[k] * (1 - 1e-2) for k in common)
    assert kb[max(kb)] <= B.DELTA_RANGE[0]            # reaches delta <= 1e-12 at the top
    assert kb[min(kb)] >= B.DELTA_RANGE[1] or min(kb) <= min(ka)


def test_shipped_table_has_no_wide_gaps(table: dict) -> None:
    """The shipped table passes the builder's own refinement criterion (no two neighbouring
    rows answer more than 1.075x apart, away from eps ~ 0) up to n = 1e9, except in the named
    windows where eps falls steeply with n (B.STEEP_WINDOWS, stated in chapter 10)."""
    left = B.refine_candidates(table)
    outside = [(m, e0, n) for m, e0, n in left
               if not any(e0 == w0 and lo <= n <= hi for w0, lo, hi in B.STEEP_WINDOWS)]
    assert outside == [], outside[:10]


def test_sparse_layout_round_trip(table: dict) -> None:
    """table.js stores only computed rows (``[n, k0, q0, codes]``); inflating restores the
    dense grid exactly, and the stored file is the sparse form."""
    raw = json.loads(re.search(r"window\.AMP_CALC_TABLE = (.*);\s*$",
                               TABLE_JS.read_text(encoding="utf-8"), re.S).group(1))
    assert raw["layout"] == "sparse" and "n" not in raw
    assert all(r is not None for per in raw["rows"].values() for lst in per.values()
               for r in lst)
    again = B.inflate(B.sparse(table))
    assert again["n"] == table["n"] and again["rows"] == table["rows"]
    assert B.inflate(table) is table                     # a dense table is left as it is
