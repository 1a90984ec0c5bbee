"""The graded problem sets (assignments/, issue 36) through nbgrader itself, offline.

``assignments/source/<ps>/<ps>.ipynb`` are the instructor's notebooks: solutions between
nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers, autograder test cells with
points and ``### BEGIN HIDDEN TESTS`` sections, written answers with a model answer and a rubric.
nbgrader has its own venv (``.venv-grade``, ``make grade-venv``): every nbgrader command runs
there by subprocess, in a course directory built like ``make assignments`` builds one:

* ``generate_assignment`` writes the released (student) notebooks;
* ``autograde`` runs the instructor's notebooks (full marks on every autograded part) and the
  released notebooks left blank (zero);
* the released notebooks carry no solution code, no hidden test, no model answer or rubric
  (a leaked line fails the test, and a doctored notebook shows that the check catches one).

Without ``.venv-grade`` the nbgrader tests are skipped, saying why; with
``AMP_REQUIRE_GRADE=1`` they fail instead. The structural checks need no venv. Each problem
set executes in seconds (tiny ``n``); the whole module takes about a minute (two nbgrader
commands, eight notebook executions).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENTS_DIR = REPO / "assignments"
SOURCE = ASSIGNMENTS_DIR / "source"
GRADE_BIN = REPO / ".venv-grade" / "bin"
GRADE_PY = GRADE_BIN / "python"
NAMES = sorted(p.name for p in SOURCE.iterdir() if p.is_dir())
STUDENTS = {"instructor": "the instructor's notebooks", "blank": "the released notebooks, blank"}
TIMEOUT = 300                     # seconds per nbgrader command

SECRET_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                  "Model answer", "Rubric")


# ----------------------------------------------------------------------------- notebooks
def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _regions(text: str, begin: str, end: str) -> tuple[list[str], list[str]]:
    """Lines between the markers ``### begin`` / ``### end``, and the lines outside them."""
    inside, outside, on = [], [], False
    for line in text.splitlines():
        s = line.strip()
        if s == f"### {begin}":
            on = True
        elif s == f"### {end}":
            on = False
        elif s:
            (inside if on else outside).append(s)
    return inside, outside


def secret_and_public_lines(source: dict) -> tuple[set[str], set[str]]:
    """What a released notebook must not contain (solution code, hidden tests, written model
    answers and rubrics) and what it may (every other line of the source)."""
    secret: set[str] = set()
    public: set[str] = set()
    for cell in source["cells"]:
        meta, text = _nbgrader(cell), _text(cell)
        if meta.get("solution") and cell["cell_type"] == "markdown":
            secret.update(s.strip() for s in text.splitlines() if s.strip())
            continue
        if meta.get("solution"):
            inside, outside = _regions(text, "BEGIN SOLUTION", "END SOLUTION")
        elif meta.get("grade"):
            inside, outside = _regions(text, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
        else:
            inside, outside = [], [s.strip() for s in text.splitlines() if s.strip()]
        secret.update(inside)
        public.update(outside)
    # a line that also appears in a public part (a closing bracket, `print(...)`) reveals nothing
    return {s for s in secret if s not in public and len(s) >= 8}, public


def leaks(source: dict, released: dict) -> list[str]:
    """Secret lines of ``source`` and nbgrader markers found in ``released``."""
    secret, _ = secret_and_public_lines(source)
    found = []
    for i, cell in enumerate(released["cells"]):
        lines = {s.strip() for s in _text(cell).splitlines()}
        for marker in SECRET_MARKERS:
            if any(marker in s for s in lines):
                found.append(f"cell {i}: marker {marker!r}")
        found += [f"cell {i}: {s!r}" for s in sorted(lines & secret)]
        for out in cell.get("outputs", []):
            found.append(f"cell {i}: an output ({out.get('output_type')})")
    return found


# ----------------------------------------------------------------------------- structure
def test_sources_are_outside_the_book():
    """The sources live in assignments/ (not book/): neither jupyter-book's build nor the
    nbval run of book/ (scripts/run_tests.sh) sees them; _config.yml excludes them too."""
    assert NAMES, "no problem sets under assignments/source"
    assert not list((REPO / "book").rglob("assignments"))
    config = (REPO / "_config.yml").read_text(encoding="utf-8")
    assert "only_build_toc_files: true" in config
    assert "  - assignments" in config
    toc = (REPO / "_toc.yml").read_text(encoding="utf-8").splitlines()
    assert not [s for s in toc if "assignments" in s and not s.lstrip().startswith("#")]


def test_problem_sets_are_complete():
    """At least three problem sets and a lab, at least 12 graded problems; every test cell has
    points and hidden tests, every answer cell solution markers, every written answer a
    rubric; grade ids are unique."""
    assert {"ps1", "ps2", "ps3", "lab1"} <= set(NAMES)
    problems = 0
    for name in NAMES:
        nb = _load(SOURCE / name / f"{name}.ipynb")
        ids = [_nbgrader(c)["grade_id"] for c in nb["cells"] if _nbgrader(c)]
        assert len(ids) == len(set(ids)), f"{name}: duplicate grade ids"
        graded = [c for c in nb["cells"] if _nbgrader(c).get("grade")]
        assert graded, name
        for cell in graded:
            meta, text = _nbgrader(cell), _text(cell)
            assert meta.get("points", 0) > 0, f"{name} {meta['grade_id']}: no points"
            if cell["cell_type"] == "code":
                assert "### BEGIN HIDDEN TESTS" in text, f"{name} {meta['grade_id']}"
                assert meta.get("locked"), f"{name} {meta['grade_id']}: test cell not locked"
            else:
                assert meta.get("solution") and "**Rubric" in text, \
                    f"{name} {meta['grade_id']}: a written answer needs a rubric"
        for cell in nb["cells"]:
            meta = _nbgrader(cell)
            if meta.get("solution") and cell["cell_type"] == "code":
                assert "### BEGIN SOLUTION" in _text(cell), f"{name} {meta['grade_id']}"
        problems += len(graded)
    assert problems >= 12


def _shown_as_code(text: str) -> list[str]:
    """Lines of a markdown cell that Markdown would show as an indented code block: the
    cell's first line, a heading or a table row indented four spaces or more."""
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    bad = [first] if first.startswith("    ") else []
    return bad + [ln for ln in lines if ln.startswith("    ") and ln.lstrip()[:1] in ("#", "|")
                  and ln is not first]


def test_markdown_cells_render_as_markdown():
    """The first cell of every assignment (title, reading, points table) was indented four
    spaces, so JupyterLab showed it as a code block; the check sees such a cell."""
    assert _shown_as_code("    # Problem set 1\n\n    | problem | points |") != []
    for name in NAMES:
        nb = _load(SOURCE / name / f"{name}.ipynb")
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                assert not _shown_as_code(_text(cell)), f"{name} cell {i}: shown as code"


def test_leak_check_catches_a_leak():
    """The leak check itself: a released notebook with one solution line, one hidden test
    line or a marker put back is caught; the source's public lines are not flagged."""
    source = _load(SOURCE / "ps1" / "ps1.ipynb")
    secret, public = secret_and_public_lines(source)
    assert "eps0_P = math.log(3)" in secret
    assert "assert math.isclose(gamma_P, 2 / 3, rel_tol=1e-9)" in secret
    assert "import amp" in public and "import amp" not in secret
    released = {"cells": [{"cell_type": "code", "source": "import amp\nx = 1\n",
                           "outputs": []}]}
    assert leaks(source, released) == []
    for bad in ("eps0_P = math.log(3)", "assert math.isclose(gamma_P, 2 / 3, rel_tol=1e-9)",
                "### BEGIN SOLUTION", "**Rubric (2 points).** whatever"):
        doctored = {"cells": released["cells"] + [{"cell_type": "code", "source": bad,
                                                   "outputs": []}]}
        assert leaks(source, doctored), bad


# ----------------------------------------------------------------------------- nbgrader
def _require_grade_venv() -> None:
    why = None
    if not GRADE_PY.exists():
        why = f"{GRADE_PY} is missing (make grade-venv creates it)"
    else:
        r = subprocess.run([str(GRADE_PY), "-c", "import nbgrader, amp, ipykernel"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            why = f"{GRADE_PY} cannot import nbgrader, amp and ipykernel: {r.stderr[-300:]}"
    if why is None:
        return
    if os.environ.get("AMP_REQUIRE_GRADE") == "1":
        pytest.fail(f"AMP_REQUIRE_GRADE=1 but {why}")
    pytest.skip(why)


def _run(args: list[str], cwd: Path, env: dict) -> None:
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 0, f"{' '.join(args)} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"


SCORES = r"""
import json, sys
from nbgrader.api import Gradebook
out = {}
with Gradebook(sys.argv[1]) as gb:
    for a in gb.assignments:
        for s in gb.students:
            sub = gb.find_submission(a.name, s.id)
            for nb in sub.notebooks:
                out[f"{s.id}/{a.name}/{nb.name}"] = {
                    "code": nb.code_score, "max_code": nb.max_code_score,
                    "written": nb.written_score, "max_written": nb.max_written_score,
                    "cells": {g.name: [g.auto_score, g.max_score] for g in nb.grades}}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course directory as ``make assignments`` writes it, with two submissions per problem
    set (the instructor's notebooks, the released ones left blank), autograded."""
    _require_grade_venv()
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(SOURCE, root / "source")
    shutil.copy(ASSIGNMENTS_DIR / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "jupyter-config").mkdir()
    env = {**os.environ,
           "PATH": f"{GRADE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # alembic
           "PYTHONPATH": str(REPO),               # the kernel imports this checkout's amp
           "JUPYTER_CONFIG_DIR": str(root / "jupyter-config"),   # no user configuration
           "JUPYTER_PLATFORM_DIRS": "1", "MPLBACKEND": "Agg"}
    nbgrader = [str(GRADE_PY), "-m", "nbgrader"]
    # "*": every assignment of source/ in one nbgrader start (each start takes seconds)
    _run(nbgrader + ["generate_assignment", "*", "--force"], root, env)
    for student, origin in (("instructor", "source"), ("blank", "release")):
        for name in NAMES:
            dest = root / "submitted" / student / name
            dest.mkdir(parents=True)
            shutil.copy(root / origin / name / f"{name}.ipynb", dest / f"{name}.ipynb")
    _run(nbgrader + ["autograde", "*", "--force"], root, env)
    r = subprocess.run([str(GRADE_PY), "-c", SCORES, f"sqlite:///{root / 'gradebook.db'}"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr[-3000:]
    return root, json.loads(r.stdout)


@pytest.mark.parametrize("name", NAMES)
def test_instructor_gets_full_marks(course, name):
    _, scores = course
    s = scores[f"instructor/{name}/{name}"]
    failed = {k: v for k, v in s["cells"].items() if v[0] is not None and v[0] < v[1]}
    assert s["max_code"] > 0 and s["code"] == s["max_code"], f"{name}: failed {failed}"
    print(f"{name}: instructor autograded {s['code']:g}/{s['max_code']:g}")


@pytest.mark.parametrize("name", NAMES)
def test_blank_gets_zero(course, name):
    _, scores = course
    s = scores[f"blank/{name}/{name}"]
    assert s["code"] == 0 and s["max_code"] > 0, f"{name}: a blank notebook scored {s}"
    assert not s["written"], f"{name}: a blank written answer scored {s['written']}"
    print(f"{name}: blank autograded {s['code']:g}/{s['max_code']:g}")


@pytest.mark.parametrize("name", NAMES)
def test_released_notebook_leaks_nothing(course, name):
    root, _ = course
    released = _load(root / "release" / name / f"{name}.ipynb")
    found = leaks(_load(SOURCE / name / f"{name}.ipynb"), released)
    assert not found, f"release/{name}/{name}.ipynb leaks:\n" + "\n".join(found)
    stubs = sum(c["cell_type"] == "code" and "raise NotImplementedError()" in _text(c)
                for c in released["cells"])
    answers = sum(bool(_nbgrader(c).get("solution")) and c["cell_type"] == "code"
                  for c in _load(SOURCE / name / f"{name}.ipynb")["cells"])
    assert stubs == answers, f"{name}: {stubs} stubs for {answers} answer cells"
