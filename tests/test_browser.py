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
from browser_check import (CHROMIUM, DEFAULT_SCREENSHOTS, SiteChecker,  # noqa: E402
                           html_pages, static_url_problems)

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


@pytest.mark.parametrize("path", PAGES or ["<no site>"])
def test_page_renders_offline(checker: SiteChecker, path: str) -> None:
    report = checker.check(path, screenshot=path in DEFAULT_SCREENSHOTS)
    assert report.ok, f"{path}:\n  " + "\n  ".join(report.problems)
    if path in DEFAULT_SCREENSHOTS:
        assert report.screenshot and Path(report.screenshot).stat().st_size > 0
