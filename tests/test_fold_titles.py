"""Fold and page titles of the static book (issue #24).

* A directive opened with a backtick fence cannot have a backtick in its title (CommonMark: the
  fence's info string ends at a backtick), so "```{exercise} ★ About `amp.epsilon`" is not a
  directive at all and its raw text shows on the site: titles with code use a colon fence.
  Checked over every page of the book, and no cell metadata sets a fold prompt with raw
  Markdown.
* A folded solution followed by its computation (a code cell tagged ``solution``) is one fold
  (``book/_ext/amp_folds.py``): checked on a small Sphinx project built with the book's
  extensions (myst-nb, sphinx-exercise) and over the book's own chapters.
* Every page's ``<title>`` is its title: each page of ``_toc.yml`` starts with a level-1
  heading (what Sphinx puts in ``<title>``); over a built site (``_build/html`` or
  ``$AMP_SITE_DIR``), when there is one, every chapter's ``<title>`` starts with its heading and
  no page is titled by its file name.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
BACKTICK_DIRECTIVE = re.compile(r"^[ \t]*(`{3,})\{(?P<name>[\w:-]+)\}(?P<arg>[^\n]*)$", re.M)


def _pages() -> list[tuple[str, Path]]:
    """(stem, path) of every page of _toc.yml (the root included)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections"))
    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    out = []
    for f in files:
        for suffix in (".ipynb", ".md"):
            p = ROOT / f"{f}{suffix}"
            if p.exists():
                out.append((str(Path(f).relative_to("book")), p))
    return out


def _markdown(path: Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def _all_sources() -> list[Path]:
    return sorted(p for p in list(BOOK.rglob("*.md")) + list(BOOK.rglob("*.ipynb"))
                  if not any(part.startswith(("_", ".")) for part in p.relative_to(BOOK).parts))


def test_pages_found():
    pages = _pages()
    assert len(pages) > 20 and any(s == "05_new_algorithm" for s, _ in pages)


def test_no_backticks_in_a_backtick_fenced_title():
    bad = []
    for path in _all_sources():
        for text in _markdown(path):
            for m in BACKTICK_DIRECTIVE.finditer(text):
                if "`" in m.group("arg"):
                    bad.append(f"{path.relative_to(ROOT)}: {m.group(0).strip()}")
    assert not bad, "use a colon fence (:::{name} title) for a title with code: " + \
        "; ".join(bad)
    # the rule itself: the pattern sees such a title
    sample = "```{exercise} ★ About `amp.epsilon`\n:label: x\n```"
    assert "`" in BACKTICK_DIRECTIVE.search(sample).group("arg")


def test_fold_prompts_in_cell_metadata_are_plain():
    """myst-nb takes a fold's prompt from the cell's metadata (``code_prompt_show``,
    ``code_prompt_hide``): plain text there (it is not rendered as Markdown)."""
    prompts = []
    for path in _all_sources():
        if path.suffix != ".ipynb":
            continue
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = c.get("metadata", {}).get("mystnb", {})
            prompts += [(path.name, meta[k]) for k in ("code_prompt_show", "code_prompt_hide")
                        if k in meta]
    assert all(not re.search(r"`|\*\*|\$|\{[\w:]+\}", p) for _, p in prompts), prompts


def test_every_page_starts_with_its_title():
    """Sphinx puts a page's first heading in its <title>: every page has one, first."""
    bad = []
    for stem, path in _pages():
        texts = _markdown(path)
        first = next((m for t in texts for m in [re.search(r"^(#+)\s+(.+)$", t, re.M)] if m),
                     None)
        title = first.group(2).strip() if first else ""
        if first is None or first.group(1) != "#" or title in (stem, Path(stem).name) \
                or re.fullmatch(r"\d+[a-z]?_\w+", title):
            bad.append(stem)
    assert not bad, f"pages without a level-1 title first: {bad}"


# --------------------------------------------------------------- solution + computation
NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# Chapter title\n"},
        {"cell_type": "markdown", "id": "b", "metadata": {},
         "source": ":::{exercise} ★ With `code` and $x^2$\n:label: ex-1\n\nDo it.\n:::"},
        {"cell_type": "markdown", "id": "c", "metadata": {},
         "source": "```{solution} ex-1\n:class: dropdown\n\nThe cell below.\n```"},
        {"cell_type": "code", "id": "d", "metadata": {"tags": ["solution"]},
         "source": "print(42)", "execution_count": 1,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "FORTY-TWO\n"}]},
        {"cell_type": "code", "id": "e", "metadata": {}, "source": "print(1)",
         "execution_count": 2,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "PLAIN-ONE\n"}]},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}
CONF = f"""
import sys
sys.path.insert(0, {str(BOOK / "_ext")!r})
extensions = ["myst_nb", "sphinx_exercise", "amp_folds"]
project = "Proj"
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "colon_fence"]
html_theme = "basic"
"""


def _outer_div(page: str, start: int) -> str:
    """The <div ...> element starting at ``start`` (nested divs counted)."""
    depth, pos = 0, start
    for m in re.compile(r"<div\b|</div>").finditer(page, start):
        depth += 1 if m.group(0) == "<div" else -1
        pos = m.end()
        if depth == 0:
            break
    return page[start:pos]


def test_solution_and_its_computation_are_one_fold(tmp_path):
    pytest.importorskip("myst_nb")
    pytest.importorskip("sphinx_exercise")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "index.ipynb").write_text(json.dumps(NOTEBOOK))
    run = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src),
                          str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    solution = _outer_div(page, page.index('<div class="solution dropdown'))
    assert "The cell below." in solution and "FORTY-TWO" in solution   # one fold
    assert "PLAIN-ONE" not in solution and "PLAIN-ONE" in page           # others stay out
    # the titles: code and math rendered (no raw backticks), in the exercise and the fold
    title = re.search(r'<p class="admonition-title">Solution to(.*?)</p>', solution, re.S)
    assert title and "<code" in title.group(1) and "`" not in html.unescape(
        re.sub(r"<[^>]+>", "", title.group(1)))
    assert re.search(r"<title>Chapter title\b", page)


def test_the_book_has_such_folds():
    """The case exists in the book (Exercise 12.4's solution and its computation), so the
    extension is not dead code; and it is registered in _config.yml."""
    pairs = []
    for path in _all_sources():
        if path.suffix != ".ipynb":
            continue
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for a, b in zip(cells, cells[1:]):
            if a["cell_type"] == "markdown" and re.search(
                    r"\{solution\}[^\n]*\n:class: dropdown", "".join(a["source"]).rstrip()) \
                    and "solution" in b.get("metadata", {}).get("tags", []):
                pairs.append(path.name)
    assert pairs
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"].get("amp_folds") == "book/_ext"


# ---------------------------------------------------------------------- built site, if any
SITE = Path(os.environ.get("AMP_SITE_DIR", ROOT / "_build" / "html"))


REQUIRED = os.environ.get("AMP_REQUIRE_SITE", "") not in ("", "0")
SMART_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@pytest.mark.skipif(not REQUIRED and not (SITE / "index.html").exists(),
                    reason="no built site (make book); the source test above still runs")
def test_built_pages_are_titled_by_their_titles():
    assert (SITE / "index.html").exists(), f"AMP_REQUIRE_SITE is set and {SITE} has no site"
    bad = []
    for stem, path in _pages():
        # the site mirrors the source tree: book/05_new_algorithm.ipynb -> <site>/book/05_new_algorithm.html
        page = SITE / path.relative_to(ROOT).with_suffix(".html")
        if not page.exists():
            bad.append(f"{stem}: not built")
            continue
        title = html.unescape(re.search(r"<title>(.*?)</title>", page.read_text(
            encoding="utf-8"), re.S).group(1)).strip()
        heading = next(m.group(1) for t in _markdown(path)
                       for m in [re.search(r"^#\s+(.+)$", t, re.M)] if m)
        plain = re.sub(r"`([^`]*)`", r"\1", heading).replace("$", "").strip()
        title = re.sub(r"^\d+(\.\d+)*\.\s+", "", title)     # a chapter's number: "3.3. The ..."
        title = title.translate(SMART_QUOTES)                   # Sphinx's typography: ’ “ ”
        # titled by its file name ("10_calculator — ..."), or not by its heading
        if title.startswith(Path(stem).name) or not title.startswith(plain[:20]):
            bad.append(f"{stem}: {title!r}")
    assert not bad, bad
