"""The static site's precomputed interactive figures (book/data/static_figs/*.json).

Written by scripts/build_static_figures.py; drawn by book/_static/amp-figures.js
(book/engine/static_figures.md). Checks: every file covers its whole grid with well-formed
series and complete provenance; the cheap figures (chapters 5 and 7) rebuild to exactly the
committed frames; a sample of the certified upper values of chapters 1, 6 and 11 is still a
valid bound by a different computation than the one that stored it (amp.delta at the stored
eps is at most delta; the standard clone recomputed is not above the stored value); the page
fragment holds the data inline and says how many grid points there are.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "book" / "data" / "static_figs"
NAMES = ("ch01", "ch05", "ch06", "ch07", "ch11", "ch12", "ch14", "ch14mean")
KINDS = {"line", "linepoints", "points", "stem", "hline", "vline", "vspan", "band", "bar"}


def _script():
    spec = importlib.util.spec_from_file_location("build_static_figures",
                                                  REPO / "scripts" / "build_static_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def _series(fig: dict, key: str) -> list[dict]:
    """The frame's series with their shared look merged in (as amp-figures.js expand does)."""
    return [{**fig["styles"][s["s"]], **{k: v for k, v in s.items() if k != "s"}}
            for s in fig["frames"][key]["series"]]


@pytest.mark.parametrize("name", NAMES)
def test_file_covers_its_grid(name: str) -> None:
    fig = _load(name)
    prov = fig["provenance"]
    for key in ("command", "git_commit", "amp_source_sha256", "python", "numpy", "scipy"):
        assert prov.get(key), (name, key)
    assert len(prov["git_commit"]) == 40 and len(prov["amp_source_sha256"]) == 64
    grid = [c for c in fig["controls"] if c["kind"] in ("select", "range")]
    assert grid and all(len(c["values"]) == len(c["labels"]) >= 2 for c in fig["controls"])
    keys = {"|".join(map(str, t))
            for t in itertools.product(*(range(len(c["values"])) for c in grid))}
    assert set(fig["frames"]) == keys and fig["grid_points"] == len(keys)
    groups = {v for c in fig["controls"] if c["kind"] == "checks" for v in c["values"]}
    for key in fig["frames"]:
        series = _series(fig, key)
        assert series and fig["frames"][key]["title"]
        for s in series:
            assert s["kind"] in KINDS and s["label"] and s["color"].startswith("#")
            assert s.get("group") is None or s["group"] in groups
            if isinstance(s.get("y"), list):
                assert "x" not in s or len(s["x"]) == len(s["y"])
                finite = [v for v in s["y"] if v is not None]
                assert finite and all(math.isfinite(v) for v in finite), (name, key, s["label"])
    # every control changes something: a grid control by construction; tick boxes name groups
    # that some frame's series carry; the largest-k slider cuts a frame's x values
    for c in fig["controls"]:
        if c["kind"] == "checks":
            used = {s.get("group") for k in fig["frames"] for s in _series(fig, k)}
            assert set(c["values"]) <= used
        if c["kind"] == "xmax":
            xs = {x for k in fig["frames"] for s in _series(fig, k)
                  if isinstance(s.get("x"), list) for x in s["x"]}
            assert min(c["values"]) < max(xs)


def _same(a, b, path="") -> list[str]:
    """Where ``a`` and ``b`` differ beyond floating-point noise (rel 1e-9, abs 1e-12): a value
    that is 0 in exact arithmetic comes out as 0.0 on one processor and 2e-18 on another."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in _same(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _same(x, y, f"{path}/{i}")]
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return [] if ok else [f"{path}: {a!r} != {b!r}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


@pytest.mark.parametrize("name", ["ch05", "ch07"])
def test_cheap_figures_rebuild_exactly(name: str) -> None:
    mod = _script()
    fresh = mod.compact(mod.FIGURES[name]())
    stored = _load(name)
    assert fresh["controls"] == stored["controls"] and fresh["axes"] == stored["axes"]
    assert fresh["styles"] == stored["styles"]
    diffs = _same(fresh["frames"], stored["frames"])
    assert not diffs, diffs[:10]


def test_same_sees_real_differences_only() -> None:
    assert not _same({"x": [0.0, 1.0]}, {"x": [2.5e-18, 1.0 + 1e-13]})
    assert _same({"x": [0.0, 1.0]}, {"x": [1e-6, 1.0]})
    assert _same({"x": [1.0]}, {"x": [1.0, 2.0]}) and _same({"x": "a"}, {"x": "b"})
    assert _same({"x": 1.0}, {"y": 1.0})


def test_rounding_is_outward() -> None:
    mod = _script()
    for x in (0.38049412, 1.2345678e-7, 3.0, 7.02301, 123456.7):
        assert mod.down(x) <= x <= mod.up(x)
        assert mod.up(x) / x - 1 < 1e-3 and 1 - mod.down(x) / x < 1e-3
    assert mod.up(0.12340000001) == 0.1235 and mod.down(0.12349999) == 0.1234
    assert mod.expm1_up(0.1) >= math.expm1(0.1) and mod.expm1_down(0.1) <= math.expm1(0.1)
    assert mod.up(float("nan")) is None and mod.up(0.0) == 0.0


def _labelled(fig: dict, key: str, text: str) -> dict:
    return next(s for s in _series(fig, key) if text in s["label"])


def test_ch01_certified_points_are_upper_bounds() -> None:
    """amp.delta at the stored (rounded-up) eps is at most delta: the stored eps is at least
    the certified eps(delta) (delta(eps) does not increase with eps)."""
    import amp
    from ampbook.widgets import make_mechanism
    fig = _load("ch01")
    mechs, eps0s, dexps = (c["values"] for c in fig["controls"])
    for key in ("0|2|1", "1|1|0", "2|3|2"):                  # k-RR 4 1e-6, RAPPOR 2 1e-4, ...
        i, j, k = map(int, key.split("|"))
        mech, delta = make_mechanism(mechs[i], eps0s[j]), 10.0 ** dexps[k]
        s = _labelled(fig, key, "certified upper bound")
        for n, eps in list(zip(s["x"], s["y"]))[1:4]:         # n = 1e3, 1e4, 1e5
            assert eps is not None
            if eps >= eps0s[j]:
                continue                                        # no shuffling: eps0 itself
            got = amp.delta(mech, n, eps, rel_tol=1e-2)
            assert got.upper <= delta * (1 + 1e-12), (key, n, eps, got)


def test_ch06_clone_is_an_upper_bound() -> None:
    from amp.baselines import clone_epsilon
    fig = _load("ch06")
    mechs, eps0s, ns = (c["values"] for c in fig["controls"][:3])
    for key in ("0|3|2", "2|0|4", "3|4|0"):
        _, j, k = map(int, key.split("|"))
        clone = clone_epsilon(eps0s[j], ns[k], 1e-6, xtol=1e-3).value
        stored = _labelled(fig, key, "standard clone")["y"]
        assert stored >= math.expm1(clone)
        assert stored <= math.expm1(clone) * 1.01


def test_ch11_band_brackets_amp_rounds() -> None:
    """The stored many-round band at one small grid point: its upper end gives delta <= 1e-6
    by amp.delta(..., rounds=T) (a different call from the eps sweep that stored it)."""
    import amp
    from ampbook.widgets import make_mechanism
    fig = _load("ch11")
    mechs, eps0s, log10ns, qs = (c["values"] for c in fig["controls"])
    key = "0|0|0|1"                                            # k-RR, eps0 = 1, n = 1000, q = 1
    up = _labelled(fig, key, "upper end")
    band = _labelled(fig, key, "certified band")
    assert all(lo <= hi for lo, hi in zip(band["y"], band["y2"]))
    mech = make_mechanism(mechs[0], eps0s[0])
    T, eps = up["x"][1], up["y"][1]                            # T = 10
    got = amp.delta(mech, int(round(10 ** log10ns[0])), eps, rounds=T)
    assert got.upper <= 1e-6 * (1 + 1e-12), (T, eps, got)


def test_page_fragment_holds_the_grid() -> None:
    sys.path.insert(0, str(REPO / "book"))
    try:
        import static_figs
    finally:
        sys.path.remove(str(REPO / "book"))
    for name in NAMES:
        html = static_figs.figure_html(name)
        fig = _load(name)
        assert html.startswith('<figure class="amp-jsfig"') and "</script" not in \
            html.split('class="amp-jsfig-data">', 1)[1].split("</script>", 1)[0]
        assert f"Precomputed at {fig['grid_points']} grid points" in html
        assert ("rounded in the safe direction" in html) == bool(fig["certified"])
        assert "http://" not in html and "https://" not in html
