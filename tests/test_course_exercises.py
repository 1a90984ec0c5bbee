"""The course conventions for exercises (wave 3 brief), on every chapter that has converted them.

A chapter with ``{exercise}`` directives must: label them ``ex-<chapter>-1 .. ex-<chapter>-k``
with no gaps; start each title with a difficulty mark (★, ★★ or ★★★); have at least three; give
each exercise a ``{solution}`` in its own markdown cell after it, before the next exercise; keep no
old admonition-style exercises; and name each ``check("<chapter>.<k>", ...)`` after an exercise
of the chapter. The lab (``13_lab``) also keeps its solution code within about fifty lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"

_EXERCISE = re.compile(r"^```\{exercise\}\s*(?P<title>.*)\n:label:\s*(?P<label>\S+)", re.M)
_SOLUTION = re.compile(r"^```\{solution\}\s*(?P<label>\S+)", re.M)
_CHECK = re.compile(r"""\bcheck\(\s*["'](?P<name>[^"']+)["']""")
_OLD = re.compile(r"^```\{admonition\}\s*(Exercise|Solution)\b", re.M)


def _chapter(path: Path) -> str:
    """'01_introduction' -> '1', '03b_stronger_clone' -> '3b', '13_lab' -> '13'."""
    return re.match(r"0*(\d+b?)_", path.name).group(1)


def _printed(chapter: str, k: int) -> str:
    """The number the book prints for exercise ``k`` of ``chapter``: sphinx-exercise numbers
    per top-level chapter, so Chapter 3.3's follow Chapter 3's."""
    if chapter.endswith("b"):
        main = next(BOOK.glob(f"{int(chapter[:-1]):02d}_*.ipynb"))
        before = sum(len(_EXERCISE.findall(_src(c))) for c in _cells(main)
                     if c["cell_type"] == "markdown")
        return f"{chapter[:-1]}.{before + k}"
    return f"{chapter}.{k}"


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    return "".join(cell["source"])


NOTEBOOKS = [p for p in sorted(BOOK.glob("[0-9]*.ipynb"))
             if any(_EXERCISE.search(_src(c)) for c in _cells(p) if c["cell_type"] == "markdown")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_exercises_follow_the_convention(path):
    chapter = _chapter(path)
    cells = _cells(path)
    events = []                      # ("exercise" | "solution", label, cell index, title)
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = _src(cell)
        assert not _OLD.search(text), f"{path.name}: an admonition-style exercise is left"
        for m in _EXERCISE.finditer(text):
            events.append(("exercise", m["label"], i, m["title"].strip()))
        sols = _SOLUTION.findall(text)
        if sols:
            assert len(sols) == 1 and not _EXERCISE.search(text), \
                f"{path.name}: a solution must have its own markdown cell"
            assert text.strip().startswith("```{solution}"), f"{path.name}: text before {sols[0]}"
            events.append(("solution", sols[0], i, ""))
    labels = [e[1] for e in events if e[0] == "exercise"]
    assert labels == [f"ex-{chapter}-{k}" for k in range(1, len(labels) + 1)], labels
    assert len(labels) >= 3, f"{path.name}: {len(labels)} exercises, want >= 3"
    for kind, label, _, title in events:
        if kind == "exercise":
            assert re.match(r"★{1,3}(\s|$)", title), f"{label}: title {title!r} has no difficulty mark"
    # each exercise is followed by its own solution before the next exercise
    open_label = None
    for kind, label, _, _ in events:
        if kind == "exercise":
            assert open_label is None, f"{open_label} has no solution before {label}"
            open_label = label
        else:
            assert label == open_label, f"solution {label} does not follow its exercise"
            open_label = None
    assert open_label is None, f"{open_label} has no solution"
    # checked answers are named after the chapter's exercises, as the book prints them:
    # Chapter 3.3's (labels ex-3b-k) continue Chapter 3's numbering (3.5, 3.6, ...)
    numbers = {_printed(chapter, int(label.rsplit('-', 1)[1])) for label in labels}
    for cell in cells:
        if cell["cell_type"] == "code":
            for name in _CHECK.findall(_src(cell)):
                assert name in numbers, f"{path.name}: check({name!r}) names no exercise"


def test_lab_solution_code_is_short():
    cells = _cells(BOOK / "13_lab.ipynb")
    solution = [c for c in cells if c["cell_type"] == "code"
                and "solution" in c["metadata"].get("tags", [])]
    lines = [ln for c in solution for ln in _src(c).splitlines() if ln.strip()]
    assert solution and len(lines) <= 50, f"{len(lines)} lines of solution code"


def test_lab_stubs_come_before_their_solutions():
    """The student edition drops ``solution`` cells: each defined function needs a stub first."""
    cells = [c for c in _cells(BOOK / "13_lab.ipynb") if c["cell_type"] == "code"]
    defined: set[str] = set()
    for cell in cells:
        names = re.findall(r"^def (\w+)", _src(cell), re.M)
        if "solution" in cell["metadata"].get("tags", []):
            needed = {n for n in names} - {"split_atoms"}    # a solution-only helper
            assert needed <= defined, f"no stub for {needed - defined}"
        else:
            defined.update(names)
