"""Browser test of the built book: every page opens offline, cleanly, with math and images.

The site is ``$AMP_SITE_DIR`` (default ``_build/html``). Without a built site (or without
Chromium/Playwright) these tests are skipped, so a plain ``pytest tests`` works before
``make book``; ``make test`` builds the site first and sets ``AMP_REQUIRE_SITE=1``, which turns a
missing site or browser into a failure. See ``tests/browser_check.py`` for what is checked.
Screenshots go to ``$AMP_SCREENSHOT_DIR`` (default ``artifacts/screenshots``, gitignored).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_check import (CHROMIUM, DEFAULT_SCREENSHOTS, PHONE_SCREENSHOTS,  # noqa: E402
                           STATIC_FIGURE_PAGES, WIDE, WIDTHS, SiteChecker, html_pages,
                           static_calculator_answers, static_figure_moves,
                           static_url_problems)

REPO = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("AMP_SITE_DIR", REPO / "_build" / "html")).resolve()
SCREENSHOTS = Path(os.environ.get("AMP_SCREENSHOT_DIR", REPO / "artifacts" / "screenshots"))
REQUIRED = os.environ.get("AMP_REQUIRE_SITE", "") not in ("", "0")


def _missing() -> str | None:
    if not (SITE / "index.html").is_file():
        return f"no built site at {SITE} (run `make book`)"
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return f"{CHROMIUM} not found (apt-get update && apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python package playwright is not installed (pip install -r requirements.txt)"
    return None


MISSING = _missing()
if MISSING and not REQUIRED:
    pytest.skip(MISSING, allow_module_level=True)

PAGES = html_pages(SITE) if not MISSING else []


def test_site_is_there() -> None:
    assert MISSING is None, MISSING
    assert PAGES, f"no HTML pages under {SITE}"


def test_every_toc_file_has_a_page() -> None:
    yaml = pytest.importorskip("yaml")
    assert MISSING is None, MISSING
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries: list) -> None:
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections", []))
            walk(entry.get("chapters", []))

    walk(toc.get("chapters", []))
    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    missing = [f for f in files if not (SITE / f"{f}.html").is_file()]
    assert not missing, f"toc entries without a built page: {missing}"


def test_no_remote_resources_in_html() -> None:
    assert MISSING is None, MISSING
    problems, anchors = static_url_problems(SITE)
    SCREENSHOTS.parent.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS.parent / "external-anchors.txt").write_text("\n".join(anchors) + "\n")
    assert not problems, "remote resources in the HTML:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def checker():
    assert MISSING is None, MISSING
    with SiteChecker(SITE, SCREENSHOTS) as c:
        yield c


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
@pytest.mark.parametrize("path", PAGES or ["<no site>"])
def test_page_renders_offline(checker: SiteChecker, path: str, width: int) -> None:
    """Every page at a laptop's and a phone's width: offline, math typeset, images loaded, no
    sideways page, no clipped display math, one search box (tests/browser_check.py)."""
    shots = DEFAULT_SCREENSHOTS if width == WIDE else PHONE_SCREENSHOTS
    report = checker.check(path, screenshot=path in shots, width=width)
    assert report.ok, f"{path} at {width} px:\n  " + "\n  ".join(report.problems)
    if path in shots:
        assert report.screenshot and Path(report.screenshot).stat().st_size > 0


# ----------------------------------------------------------------------------- static calculator
#: (name, mechanism id, eps0, n typed, delta typed): inputs off the n grid and arbitrary deltas
#: (the page does not round delta), one near eps = 0, one above the table, three in the steep
#: windows (B.STEEP_WINDOWS), then refusals.
CALC_CASES = [
    ("krr10-on-grid-n", "krr10", 4.0, "10000", "1e-6"),
    ("krr10-off-grid", "krr10", 4.0, "11000", "8e-7"),
    ("rappor-off-grid", "rappor", 2.0, "270000", "4e-9"),
    ("krr3-off-grid", "krr3", 8.0, "4200", "2.5e-5"),
    ("hr-off-grid", "hr", 1.0, "52000", "1.5e-10"),
    ("oue-off-grid", "oue", 4.0, "850", "4e-6"),
    ("krr10-5e6", "krr10", 4.0, "5e6", "3e-8"),
    ("krr100-2e8", "krr100", 2.0, "200000000", "1e-9"),
    ("krr100-near-zero-3e7", "krr100", 1.0, "3e7", "5e-5"),
    ("blh-above-table", "blh", 8.0, "3e9", "1e-10"),
    # inside the steep windows (delta nearly flat in eps; rows at whole n there)
    ("krr3-steep-eps0-8", "krr3", 8.0, "27410", "1e-4"),
    ("blh-steep-eps0-8", "blh", 8.0, "32567", "9e-6"),
    ("blh-steep-eps0-4", "blh", 4.0, "700", "2e-8"),
]
CALC_REFUSED = [
    ("refused-n-not-a-number", "krr10", 4.0, "ten thousand", "1e-6"),
    ("refused-n-below-range", "krr10", 4.0, "50", "1e-6"),
    ("refused-n-not-integer", "krr10", 4.0, "1234.5", "1e-6"),
    ("refused-delta-below-range", "krr10", 4.0, "10000", "1e-13"),
    ("refused-delta-above-range", "krr10", 4.0, "10000", "0.01"),
]
CLI_FLAGS = {"krr3": ["--mechanism", "krr", "--k", "3"], "krr10": ["--mechanism", "krr", "--k", "10"],
             "krr100": ["--mechanism", "krr", "--k", "100"], "rappor": ["--mechanism", "rappor"],
             "oue": ["--mechanism", "oue"], "blh": ["--mechanism", "blh"],
             "hr": ["--mechanism", "hadamard"]}
#: The page's promise (chapter 10): up to n = 1e9 within 10% of the CLI, or within NEAR_ZERO in
#: absolute terms where eps is near 0 (there a grid row's eps > 0 = the exact eps at a larger n:
#: no relative bound exists); and within the rounding cost it states, where it states one.
TARGET, NEAR_ZERO, DENSE_MAX_N = 0.10, 2e-3, 10**9


def _cli_eps(mech: str, eps0: float, n_text: str, delta_text: str) -> float:
    import json
    import subprocess
    cmd = [sys.executable, "-m", "amp", "epsilon", *CLI_FLAGS[mech], "--eps0", f"{eps0:g}",
           "--n", n_text, "--delta", delta_text, "--json", "--quiet"]
    run = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO)
    return float(json.loads(run.stdout)["value"])


def test_static_calculator_matches_cli(checker: SiteChecker) -> None:
    """The static page's answer is never below the CLI at the exact inputs, and close to it.

    Up to n = 1e9: within 10% of the CLI, or within 2e-3 absolute near eps = 0, and within the
    rounding cost the page states (against a lower estimate from the next grid row) where it
    states a finite one; above the table's last n no cost is stated (valid, not tight). The
    answer names its grid n and the certified pair (eps_i, delta_i) with delta_i <= the typed
    delta. The ratios are printed and saved with the screenshots.
    """
    answers, problems = static_calculator_answers(checker, CALC_CASES + CALC_REFUSED,
                                                  SCREENSHOTS)
    assert not problems, problems
    for a in answers:
        assert not a["boxOverflow"] and not a["pageOverflow"], f"{a['name']} scrolls sideways"
        assert Path(a["screenshot"]).stat().st_size > 0
    by_name = {a["name"]: a for a in answers}
    report = []
    for name, mech, eps0, n_text, delta_text in CALC_CASES:
        a = by_name[name]
        assert a["status"] == "ok", (name, a["text"])
        page_eps = float(a["eps"])
        n, delta = float(n_text), float(delta_text)
        cli = _cli_eps(mech, eps0, n_text, delta_text) if n <= 10**9 else None
        report.append(f"{name}: n={n_text} delta={delta_text} page={page_eps} cli={cli} "
                      + (f"ratio={page_eps / cli:.4f} " if cli else "")
                      + f"grid n={a['gridN']} pair=({a['pairEps']}, {a['pairDelta']}) "
                      f"stated cost={a['cost']}")
        assert int(a["gridN"]) <= n and a["gridN"] in a["text"]
        assert float(a["pairDelta"]) <= delta or page_eps in (0.0, eps0)
        assert page_eps <= eps0
        if cli is None:                      # above the table: the last row, no cost stated
            assert "above the table's largest n" in a["text"] and a["cost"] is None
            continue
        assert page_eps >= cli, f"{name}: page {page_eps} below the CLI's {cli}"
        if page_eps - cli <= NEAR_ZERO:
            continue
        assert n <= DENSE_MAX_N and page_eps <= (1 + TARGET) * cli, (
            f"{name}: page {page_eps} vs CLI {cli}")
        assert a["cost"] is not None, f"{name}: no rounding cost stated"
        if float(a["cost"]) != float("inf"):
            # the stated cost is against a lower estimate of the bound at the next grid n
            assert page_eps <= cli * (1 + float(a["cost"])) * 1.001, (
                f"{name}: page {page_eps} is more than the stated {a['cost']} above {cli}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "static-calculator-vs-cli.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    for name, *_ in CALC_REFUSED:
        a = by_name[name]
        assert a["status"] == "refused" and a["text"].startswith("Refused"), (name, a["text"])
        assert a["eps"] is None


def test_static_calculator_narrow_screen(checker: SiteChecker) -> None:
    """At a phone's width the form wraps: neither the calculator nor the page scrolls sideways."""
    answers, problems = static_calculator_answers(checker, CALC_CASES[:1], None,
                                                  viewport_width=380)
    assert not problems, problems
    assert answers[0]["status"] == "ok"
    assert not answers[0]["boxOverflow"] and not answers[0]["pageOverflow"]


# ----------------------------------------------------------------------------- static figures
@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
@pytest.mark.parametrize("path", list(STATIC_FIGURE_PAGES))
def test_static_figure_moves(checker: SiteChecker, path: str, width: int) -> None:
    """Every control of the page's kernel-free figures moves the figure: its SVG and the
    sentence naming the grid point shown both change; nothing is loaded from outside the site;
    no ipywidgets control is left on the page (tests/browser_check.py, static_figure_moves)."""
    moves, problems = static_figure_moves(checker, path, width)
    assert not problems, f"{path} at {width} px: {problems}"
    figures = {m["figure"] for m in moves}
    assert figures == set(STATIC_FIGURE_PAGES[path]), figures
    dead = [m for m in moves if not (m["svgChanged"] and m["pointChanged"])]
    assert not dead, f"{path} at {width} px: controls that did not move the figure: {dead}"
    lines = [f"{width}px {m['figure']} {m['control']} ({m['kind']}): {m['after']}"
             for m in moves]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    out = SCREENSHOTS / f"static-figures-{Path(path).stem}-{width}px.txt"
    out.write_text("\n".join(lines) + "\n")
    print(f"{path} @{width}px: {len(figures)} figure(s), {len(moves)} controls moved, "
          f"{len(moves) - len(dead)} changed the figure and its grid-point label")
