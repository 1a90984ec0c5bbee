"""The book's bibliography: at least 25 works, every one cited in the text, no citation missing.

Keys are read from ``book/references.bib``; citations from the ``{cite}``, ``{cite:p}`` and
``{cite:t}`` roles (one or several comma-separated keys) in every notebook and Markdown page
under ``book/`` (the build folder excluded).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
MIN_WORKS = 25

_ENTRY = re.compile(r"^@\w+\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)
_CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]*)`")


def bib_keys() -> list[str]:
    return _ENTRY.findall((BOOK / "references.bib").read_text(encoding="utf-8"))


def _texts():
    for path in sorted(BOOK.rglob("*")):
        if "_build" in path.parts or path.suffix not in (".ipynb", ".md"):
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) for c in cells)
        yield path, text


def cited_keys() -> dict[str, set[str]]:
    """Every cited key -> the pages (relative to book/) that cite it."""
    cited: dict[str, set[str]] = {}
    for path, text in _texts():
        for group in _CITE.findall(text):
            for key in group.split(","):
                if key.strip():
                    cited.setdefault(key.strip(), set()).add(str(path.relative_to(BOOK)))
    return cited


def test_bibliography_has_enough_works():
    keys = bib_keys()
    assert len(keys) >= MIN_WORKS, f"{len(keys)} works in references.bib, want >= {MIN_WORKS}"


def test_no_duplicate_keys():
    keys = bib_keys()
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    assert not dupes, f"duplicate keys in references.bib: {dupes}"


@pytest.mark.parametrize("key", bib_keys())
def test_every_work_is_cited(key):
    assert key in cited_keys(), f"{key} is in references.bib but no page cites it"


def test_every_citation_is_in_the_bibliography():
    missing = {k: sorted(v) for k, v in cited_keys().items() if k not in set(bib_keys())}
    assert not missing, f"cited but not in references.bib: {missing}"


def test_the_citation_pattern_reads_every_role():
    text = "{cite}`a` and {cite:p}`b, c` and {cite:t}`d`"
    keys = [k.strip() for g in _CITE.findall(text) for k in g.split(",")]
    assert keys == ["a", "b", "c", "d"]
