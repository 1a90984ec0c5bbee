"""Chapters teach; build logs live in the engine room (issue 36).

A chapter (``book/NN_*.ipynb``) names no test file, no benchmark script, no ``make`` target, no
checksum and no source file of ``amp``: how the book is built and tested, where a data set was
fetched from and which script stored a result belong to ``book/engine/`` (its index collects
them). Checked on everything a reader of a chapter sees: its markdown, and the code of cells
that are not removed from the page. Hidden cells (tag ``remove-cell``) may name what they check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("[0-9][0-9]*_*.ipynb"))
#: what a chapter must not show: a test or benchmark path, a make target (in code style or at the
#: start of a line of a code block), a checksum, a path to a module of amp
FORBIDDEN = re.compile(r"\btests/|\bbench/|`make [a-z]|^\s*make [a-z]|SHA-?256|\bamp/[\w/]*\.py\b",
                       re.M | re.I)


def _visible(cell: dict) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return "remove-cell" not in tags and not (cell["cell_type"] == "code"
                                              and "remove-input" in tags)


def _hits(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for cell in cells:
        if not _visible(cell):
            continue
        text = "".join(cell["source"])
        for m in FORBIDDEN.finditer(text):
            out.append(f"{cell.get('id')}: ...{text[max(0, m.start() - 60):m.end() + 40]!r}")
    return out


def test_there_are_chapters():
    assert len(CHAPTERS) >= 15


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_build_log_in_a_chapter(path):
    hits = _hits(path)
    assert not hits, "move to book/engine/ (see its index):\n" + "\n".join(hits)


def test_the_engine_room_index_collects_them():
    index = (BOOK / "engine" / "index.md").read_text(encoding="utf-8")
    assert "**Who this part is for.**" in index and "## What each page answers" in index
    for page in sorted((BOOK / "engine").glob("*")):
        if page.suffix in (".md", ".ipynb") and page.stem != "index":
            assert f"{{doc}}`{page.stem}`" in index, f"the index does not list {page.stem}"
    for moved in ("npm pack vega-datasets@3.2.1", "bench/bench_accuracy.py",
                  "tests/test_calculator_table.py", "amp/backends/fft.py",
                  "tests/test_population.py", "make test"):
        assert moved in index, moved


def test_the_preface_keeps_only_the_reader_s_command():
    preface = (BOOK / "intro.md").read_text(encoding="utf-8")
    assert "make live" in preface                      # how to get the live version
    assert "make test" not in preface and "make book" not in preface
    assert "(running-the-book)=" in preface


@pytest.mark.parametrize("text, n_hits", [
    ("see `tests/test_x.py`", 1), ("run `make live`", 1), ("```bash\nmake book\n```", 1),
    ("printed by bench/x.py", 1), ("its SHA-256 is", 1), ("in `amp/backends/fft.py`", 1),
    ("we make two distributions", 0), ("for name, make in FAMILIES.items()", 0),
    ("the reports of `make(eps0)` are", 0),
])
def test_the_pattern(text, n_hits):
    assert len(FORBIDDEN.findall(text)) == n_hits
