"""Code lines of the book's notebooks are at most 88 characters (house style).

Students read and copy the book's code, often on a phone, where a longer line scrolls sideways.
Every line of every code cell of ``book/**/*.ipynb`` is checked (markdown cells are not); a
failure names the notebook, the cell's index in the notebook (0-based, as in its ``cells`` list)
and the line within the cell (1-based), with the line itself.
"""

from __future__ import annotations

import json
from pathlib import Path

BOOK = Path(__file__).resolve().parents[1] / "book"
MAX_LINE = 88
SKIP_DIRS = {"_build", ".ipynb_checkpoints"}


def notebooks(root: Path) -> list[Path]:
    """Every notebook under ``root`` (build output and checkpoints left out)."""
    return sorted(p for p in root.rglob("*.ipynb")
                  if not SKIP_DIRS.intersection(p.relative_to(root).parts))


def long_code_lines(root: Path, limit: int = MAX_LINE) -> list[str]:
    """One message per code-cell line of a notebook under ``root`` longer than ``limit``."""
    found = []
    for path in notebooks(root):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            for k, line in enumerate(source.split("\n"), start=1):
                if len(line) > limit:
                    found.append(f"{path.relative_to(root).as_posix()} cell {i} line {k} "
                                 f"({len(line)} chars): {line.strip()}")
    return found


def test_code_lines_fit_in_88_characters():
    assert notebooks(BOOK), "no notebooks found under book/"
    long_lines = long_code_lines(BOOK)
    assert not long_lines, (f"{len(long_lines)} code line(s) longer than {MAX_LINE} "
                            "characters (paths under book/):\n" + "\n".join(long_lines))


def test_the_check_finds_a_long_line(tmp_path):
    """The scan itself, on a small notebook written to a temporary folder: only the code line
    over the limit is reported (at its cell and line), not a long markdown line."""
    long_code = "x = " + "1 + " * 30 + "1"
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["word " * 30]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["a = 1\n", long_code + "\n", "b = 2"]},
    ]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.ipynb").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert len(long_code) > MAX_LINE
    assert long_code_lines(tmp_path) == [f"sub/page.ipynb cell 1 line 2 ({len(long_code)} "
                                         f"chars): {long_code}"]
    assert long_code_lines(tmp_path, limit=len(long_code)) == []
