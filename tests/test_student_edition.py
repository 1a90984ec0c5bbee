"""The student edition (``make student``, scripts/student_edition.py): nothing of the solutions
leaks, every exercise keeps its text, the zip is written, and a student notebook runs.

Three parts:

* each rule on a small synthetic notebook (fast, no kernel);
* the real ``book/`` written into a temporary folder and searched for leaks (a few seconds);
* one synthetic student notebook executed top to bottom in a kernel without ``AMP_CHECK_STRICT``:
  its check cell with a ``None`` answer prints "no answer yet" and raises nothing (a few
  seconds; the whole book is not executed here: too slow).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import student_edition as se  # noqa: E402
import record_answers as ra  # noqa: E402  (puts book/ on sys.path: coursekit)
import coursekit  # noqa: E402

SOLUTION_DIRECTIVE = re.compile(r"\{solution(-start|-end)?\}")
LEGACY_SOLUTION = re.compile(r"^[ \t]*(`{3,}|:{3,})\{admonition\}\s*solution", re.I | re.M)
DIRECTIVE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}(?P<arg>.*)$")


# ----------------------------------------------------------------------------- helpers
def md(text: str, **meta) -> dict:
    return {"cell_type": "markdown", "id": f"m{abs(hash(text)) % 10**8}", "metadata": meta,
            "source": text.splitlines(keepends=True)}


def code(text: str, tags: tuple[str, ...] = (), outputs: list | None = None) -> dict:
    return {"cell_type": "code", "id": f"c{abs(hash(text)) % 10**8}",
            "metadata": {"tags": list(tags)} if tags else {},
            "execution_count": 7 if outputs else None, "outputs": outputs or [],
            "source": text.splitlines(keepends=True)}


def notebook(cells: list[dict]) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}}}


def src(cell: dict) -> str:
    return "".join(cell["source"])


def blocks(text: str, name: str) -> dict[str, str]:
    """``{name}`` directive blocks of MyST text: label (or title) -> body."""
    out, lines, i = {}, text.split("\n"), 0
    while i < len(lines):
        m = DIRECTIVE_OPEN.match(lines[i])
        if m and m.group("name") == name:
            end = se._block_end(lines, i, m.group("fence"))
            body = "\n".join(lines[i + 1:end])
            label = re.search(r"^:label:\s*(\S+)", body, re.M)
            out[label.group(1) if label else m.group("arg").strip()] = body
            i = end + 1
        else:
            i += 1
    return out


def notebook_text(nb: dict, kind: str) -> str:
    return "\n".join(src(c) for c in nb["cells"] if c["cell_type"] == kind)


# ----------------------------------------------------------------------------- synthetic rules
SYNTH = notebook([
    code("import math\nfrom coursekit import check", tags=("remove-cell",)),
    md("# Chapter 5\n\nSome text."),
    md("```{exercise} ★★ A computation\n:label: ex-5-2\n\nCompute the thing.\n```"),
    code("answer_5_2 = math.sqrt(2.0)  # solution", tags=("answer",)),
    code('check("5.2", answer_5_2, expected=math.sqrt(2.0), hint="a square root")',
         outputs=[{"output_type": "stream", "name": "stdout", "text": "right"}]),
    md("```{solution} ex-5-2\n:class: dropdown\n\nIt is SECRET_SOLUTION_TEXT.\n```"),
    code("x_only_for_the_solution = 42", tags=("solution",)),
    code("hidden = 3\nassert hidden == 3", tags=("remove-cell",)),
    code("up = {1: 2.0}\nassert up[1] > 1\nfor k in up:\n    assert k > 0",
         tags=("remove-cell",)),
    code("print(up[1])"),
    md("```{exercise} ★ Two answers\n:label: ex-5-3\n\nGive a and b.\n```\n\n"
       "````{solution} ex-5-3\n:class: dropdown\n\n```python\nprint('SECRET_CODE')\n```\n````"),
    code("a, b = (1,\n        2)  # solution\nanswer_c: float = 3.0  # solution\n"
         "total = 0\ntotal += 1  # solution", tags=("answer",)),
    md("```{admonition} Solution\n:class: dropdown\nSECRET_LEGACY\n```"),
    md("```{solution-start} ex-5-3\n```\nSECRET_GATED_1"),
    code("print('SECRET_GATED_CODE')"),
    md("SECRET_GATED_2\n```{solution-end}\n```\n\nText after the gated solution."),
])


def test_rules_on_a_synthetic_notebook() -> None:
    before = json.dumps(SYNTH)
    out, stats = se.student_notebook(SYNTH, "synthetic")
    assert json.dumps(SYNTH) == before, "the instructor notebook must not change"
    text = json.dumps(out)
    for secret in ("SECRET_SOLUTION_TEXT", "SECRET_CODE", "SECRET_LEGACY", "SECRET_GATED",
                   "x_only_for_the_solution", "hidden == 3", "math.sqrt(2.0)  # solution"):
        assert secret not in text, secret
    assert not SOLUTION_DIRECTIVE.search(text) and not LEGACY_SOLUTION.search(text)
    cells = out["cells"]
    srcs = [src(c) for c in cells]
    # exercise texts kept (also the one that shared its cell with a solution)
    assert any("Compute the thing." in s and ":label: ex-5-2" in s for s in srcs)
    assert any("Give a and b." in s and ":label: ex-5-3" in s for s in srcs)
    assert any(s.strip() == "Text after the gated solution." for s in srcs)
    # the hidden import cell (no assert) stays; the plain hidden check goes; the one whose name
    # a later cell uses stays without its asserts
    assert srcs[0] == "import math\nfrom coursekit import check"
    assert not any("hidden = 3" in s for s in srcs)
    kept = [s for s in srcs if s.startswith("up = ")]
    assert len(kept) == 1 and "assert" not in kept[0]
    assert stats.hidden_asserts == 1 and stats.hidden_asserts_kept_stripped == 1
    # answer lines
    assert "answer_5_2 = None  # your answer here" in srcs
    multi = next(s for s in srcs if s.startswith("a, b"))
    assert multi.split("\n") == ["a, b = None, None  # your answer here",
                                 "answer_c = None  # your answer here", "total = 0",
                                 "total = None  # your answer here"]
    assert stats.answer_lines == 4 and stats.solution_cells >= 2
    # outputs stripped
    for c in cells:
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None
            ast.parse(src(c))


def test_markdown_page_and_nested_fences() -> None:
    page = ("# Page\n\n::::{solution} ex-1-1\n```python\nx = 1\n```\nSECRET\n::::\n\nKept.\n"
            "```{exercise} ★ E\n:label: ex-1-2\nText.\n```\n")
    text, n, still_open = se.strip_solutions(page)
    assert n == 1 and not still_open and "SECRET" not in text and "x = 1" not in text
    assert "Kept." in text and ":label: ex-1-2" in text


def test_answer_rewrite_fallback_without_parsing() -> None:
    new, n = se.rewrite_answers("%time\nanswer_1 = f(3)  # solution\nprint(1)  # solution")
    assert n == 2
    assert new.split("\n")[1:] == ["answer_1 = None  # your answer here",
                                   "pass  # your answer here"]


# ----------------------------------------------------------------------------- the real book
@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    root, stats = se.build(REPO / "book", out)
    return out, root, stats


def _instructor_notebooks() -> list[Path]:
    return sorted(p for p in (REPO / "book").rglob("*.ipynb")
                  if not set(p.relative_to(REPO / "book").parts) & se.SKIP_DIRS)


def test_zip_is_written(edition) -> None:
    out, root, _ = edition
    archive = out / f"{se.NAME}.zip"
    assert archive.is_file() and archive.stat().st_size > 0, "the zip is missing"
    names = set(zipfile.ZipFile(archive).namelist())
    for nb in _instructor_notebooks():
        rel = f"{se.NAME}/book/{nb.relative_to(REPO / 'book').as_posix()}"
        assert rel in names, f"{rel} missing from the zip"
    for needed in ("book/coursekit/__init__.py", "README.md", "pyproject.toml",
                   "amp/__init__.py"):
        assert f"{se.NAME}/{needed}" in names, needed
    if (REPO / "book" / "data").is_dir():
        assert any(n.startswith(f"{se.NAME}/book/data/") for n in names)
    # the helper module chapter 12 imports is shipped; the static site's is not
    assert f"{se.NAME}/book/accuracy_figs.py" in names
    assert f"{se.NAME}/book/static_figs.py" not in names


def test_no_solution_leaks_from_the_book(edition) -> None:
    _, root, _ = edition
    problems = []
    secrets = []                              # the instructor edition's solution texts
    for path in _instructor_notebooks():
        rel = path.relative_to(REPO / "book")
        teacher = json.loads(path.read_text(encoding="utf-8"))
        student = json.loads((root / "book" / rel).read_text(encoding="utf-8"))
        for body in (blocks(notebook_text(teacher, "markdown"), "solution")
                     | {k: v for k, v in blocks(notebook_text(teacher, "markdown"),
                                                "admonition").items()
                        if k.lower().startswith("solution")}).values():
            body = "\n".join(line for line in body.split("\n") if not line.startswith(":"))
            if len(body.strip()) >= 40:
                secrets.append((rel, body.strip()))
        secrets += [(rel, src(c).strip()) for c in teacher["cells"]
                    if "solution" in c.get("metadata", {}).get("tags", [])
                    and len(src(c).strip()) >= 20]
        all_text = json.dumps(student, ensure_ascii=False)
        md_text = notebook_text(student, "markdown")
        if SOLUTION_DIRECTIVE.search(md_text) or LEGACY_SOLUTION.search(md_text):
            problems.append(f"{rel}: a solution directive")
        for c in student["cells"]:
            tags = c.get("metadata", {}).get("tags", [])
            if c["cell_type"] != "code":
                continue
            s = src(c)
            if "solution" in tags:
                problems.append(f"{rel}: a cell tagged solution")
            if "remove-cell" in tags and re.search(r"\bassert", s):
                problems.append(f"{rel}: a hidden assert: {s[:60]!r}")
            for line in s.split("\n"):
                if se.SOLUTION_MARK.search(line):
                    problems.append(f"{rel}: a '# solution' line: {line!r}")
            if c.get("outputs") or c.get("execution_count") is not None:
                problems.append(f"{rel}: outputs not stripped")
        for r2, secret in secrets:
            if r2 == rel and json.dumps(secret, ensure_ascii=False)[1:-1] in all_text:
                problems.append(f"{rel}: solution text leaks: {secret[:60]!r}")
    for page in sorted((root / "book").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        if SOLUTION_DIRECTIVE.search(text) or LEGACY_SOLUTION.search(text):
            problems.append(f"{page.name}: a solution directive")
    assert not problems, "\n".join(problems)


def test_every_exercise_keeps_its_text(edition) -> None:
    _, root, _ = edition
    lost = []
    for path in _instructor_notebooks():
        rel = path.relative_to(REPO / "book")
        teacher = json.loads(path.read_text(encoding="utf-8"))
        student = json.loads((root / "book" / rel).read_text(encoding="utf-8"))
        t_md, s_md = notebook_text(teacher, "markdown"), notebook_text(student, "markdown")
        for name in ("exercise", "exercise-start"):
            want, got = blocks(t_md, name), blocks(s_md, name)
            lost += [f"{rel}: {label}" for label, body in want.items() if got.get(label) != body]
        want = [k for k in blocks(t_md, "admonition") if k.lower().startswith("exercise")]
        got = blocks(s_md, "admonition")
        lost += [f"{rel}: {k}" for k in want if k not in got]
        # every answer cell is still there, with its assignments blanked
        t_answers = [c for c in teacher["cells"] if "answer" in c.get("metadata", {}).get("tags", [])]
        s_answers = [c for c in student["cells"] if "answer" in c.get("metadata", {}).get("tags", [])]
        if len(t_answers) != len(s_answers):
            lost.append(f"{rel}: {len(t_answers)} answer cells -> {len(s_answers)}")
        for c in s_answers:
            assert "# your answer here" in src(c), (rel, src(c))
    assert not lost, "exercises changed or lost in the student edition:\n" + "\n".join(lost)


def test_student_code_cells_parse(edition) -> None:
    _, root, _ = edition
    for path in sorted((root / "book").rglob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for c in nb["cells"]:
            s = src(c)
            if c["cell_type"] == "code" and not s.lstrip().startswith(("%", "!")):
                ast.parse(s, filename=f"{path.name}")


# ----------------------------------------------------------------------------- it runs
def _run(path: Path) -> str:
    """Execute a notebook (its folder as working directory, as nbval); its text outputs."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    texts = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            texts.append(o.get("text", "") + json.dumps(o.get("data", {})))
    return "\n".join(texts)


def _set_answer(path: Path, index: int, text: str) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if "answer" in c.get("metadata", {}).get("tags", [])]
    cells[index]["source"] = text
    path.write_text(json.dumps(nb), encoding="utf-8")


def test_a_student_notebook_runs_top_to_bottom(tmp_path, monkeypatch) -> None:
    """Record -> seal -> student edition, on a synthetic chapter: the instructor edition run
    strictly with AMP_RECORD_ANSWERS records 5.2's expected value; sealed into the copied
    coursekit/answers.json, the student edition (no expected=) says "no answer yet" for None
    (not strict), "right" for the solution (strict) and "not yet" for a wrong value."""
    pytest.importorskip("nbclient")
    book = tmp_path / "book"
    (book).mkdir()
    chapter = notebook([
        code("import amp\nfrom coursekit import check", tags=("remove-cell",)),
        md("```{exercise} ★★ delta of 10-RR\n:label: ex-5-2\n\nCompute it.\n```"),
        code("answer_5_2 = amp.delta(amp.KRR(2.0, k=10), 200, 0.5).value  # solution",
             tags=("answer",)),
        code('check("5.2", answer_5_2, expected=amp.delta(amp.KRR(2.0, k=10), 200, 0.5).value,\n'
             '      rel_tol=1e-3, hint="Theorem 4, Section 5.1")'),
        md("```{solution} ex-5-2\n:class: dropdown\n\nUse amp.delta.\n```"),
        code("assert answer_5_2 > 0", tags=("remove-cell",)),
        code("print('after the exercise')"),
    ])
    for cell in chapter["cells"]:
        cell["id"] = f"cell{chapter['cells'].index(cell)}"
    (book / "ch.ipynb").write_text(json.dumps(chapter))
    import shutil
    shutil.copytree(REPO / "book" / "coursekit", book / "coursekit",
                    ignore=shutil.ignore_patterns("__pycache__", "answers.json"))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    record = tmp_path / "record.json"
    monkeypatch.setenv("AMP_CHECK_STRICT", "1")
    monkeypatch.setenv("AMP_RECORD_ANSWERS", str(record))
    assert "Exercise 5.2: right." in _run(book / "ch.ipynb")
    recorded = json.loads(record.read_text())
    assert set(recorded) == {"5.2"} and 0 < recorded["5.2"] < 1
    ra.write(recorded, book / "coursekit" / "answers.json")
    monkeypatch.delenv("AMP_RECORD_ANSWERS")
    monkeypatch.delenv("AMP_CHECK_STRICT")
    root, _ = se.build(book, tmp_path / "out", with_package=False, zip_it=False)
    student = root / "book" / "ch.ipynb"
    assert "expected" not in student.read_text()
    out = _run(student)
    assert "no answer yet" in out and "after the exercise" in out
    _set_answer(student, 0, "answer_5_2 = amp.delta(amp.KRR(2.0, k=10), 200, 0.5).value")
    monkeypatch.setenv("AMP_CHECK_STRICT", "1")
    assert "Exercise 5.2: right." in _run(student)
    monkeypatch.delenv("AMP_CHECK_STRICT")
    _set_answer(student, 0, f"answer_5_2 = {recorded['5.2'] * 1.01!r}")
    assert "Exercise 5.2: not yet" in _run(student)


def test_chapter_1_student_edition_runs_with_the_solutions(edition, monkeypatch) -> None:
    """The real chapter 1 in the student edition, its answer cells given the instructor's
    solutions, runs strictly: its checks (without expected=) pass on the sealed answers."""
    pytest.importorskip("nbclient")
    _, root, _ = edition
    teacher = json.loads((REPO / "book" / "01_introduction.ipynb").read_text(encoding="utf-8"))
    answers = [c for c in teacher["cells"] if "answer" in c.get("metadata", {}).get("tags", [])]
    student = root / "book" / "01_introduction.ipynb"
    assert answers and "expected=" not in student.read_text(encoding="utf-8")
    for k, cell in enumerate(answers):
        _set_answer(student, k, src(cell))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("AMP_CHECK_STRICT", "1")
    monkeypatch.delenv("AMP_RECORD_ANSWERS", raising=False)
    out = _run(student)
    assert "Exercise 1.2: right." in out and "Exercise 1.3: right." in out


def test_static_site_figure_cells_are_left_out() -> None:
    """A code cell tagged static-only (the static site's figure, book/static_figs.py, not
    shipped in the edition) is left out; the widget cell before it stays."""
    nb = notebook([code("widgets.gparv_widget()", tags=("remove-cell",)),
                   code('import static_figs\n\nstatic_figs.show("ch05")',
                        tags=("remove-input", "static-only")),
                   md("Text.")])
    out, _ = se.student_notebook(nb, "synthetic")
    srcs = [src(c) for c in out["cells"]]
    assert srcs == ["widgets.gparv_widget()", "Text."]


# ----------------------------------------------------------------------------- sealed answers
def _check_calls() -> list[tuple[str, str, dict]]:
    """(notebook, id, literal keyword arguments) of every check call in the instructor book."""
    calls = []
    for path in ra.notebooks_with_checks(REPO / "book"):
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if c["cell_type"] != "code" or "check(" not in src(c):
                continue
            for n in ast.walk(ast.parse(src(c))):
                if se._is_check(n):
                    kws = {k.arg: ast.literal_eval(k.value) for k in n.keywords
                           if k.arg in ("rel_tol", "abs_tol")}
                    calls.append((path.name, ast.literal_eval(n.args[0]), kws))
    return calls


def test_every_check_id_is_sealed_and_nothing_else() -> None:
    calls = _check_calls()
    ids = [i for _, i, _ in calls]
    assert len(ids) >= 31 and len(set(ids)) == len(ids), "check ids must be unique"
    sealed = coursekit.sealed_answers()
    missing = sorted(set(ids) - set(sealed))
    assert not missing, f"no sealed answer for {missing}: run `make answers`"
    extra = sorted(set(sealed) - set(ids))
    assert not extra, f"answers.json has ids no notebook checks: {extra}"
    about = json.loads(coursekit.ANSWERS.read_text(encoding="utf-8"))["about"]
    assert "base64" in about and "NOT security" in about


def _wrong(value):
    """A clearly wrong answer of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 if value else 1.0
    if isinstance(value, str):
        return value + " not"
    return [_wrong(value[0])] + list(value[1:])


def test_sealed_values_pass_their_check_and_wrong_ones_do_not(monkeypatch) -> None:
    monkeypatch.delenv("AMP_RECORD_ANSWERS", raising=False)
    monkeypatch.delenv("AMP_CHECK_STRICT", raising=False)
    sealed = coursekit.sealed_answers()
    for where, name, kws in _check_calls():
        right = coursekit.check(name, sealed[name], **kws)
        assert right.ok is True, (where, name, right.message)
        wrong = coursekit.check(name, _wrong(sealed[name]), **kws)
        assert wrong.ok is False, (where, name, wrong.message)
        assert coursekit.check(name, None, **kws).ok is None


def test_check_reads_records_and_guards_sealed_answers(tmp_path, monkeypatch) -> None:
    np = pytest.importorskip("numpy")
    monkeypatch.delenv("AMP_CHECK_STRICT", raising=False)
    monkeypatch.delenv("AMP_RECORD_ANSWERS", raising=False)
    answers = tmp_path / "answers.json"
    ra.write({"9.9": 1.0, "9.8": [True, False], "9.7": "OUE"}, answers)
    assert "1.0" not in answers.read_text() and "OUE" not in answers.read_text()
    monkeypatch.setattr(coursekit, "ANSWERS", answers)
    assert coursekit.check("9.9", 1.0005, rel_tol=1e-3).ok is True
    assert coursekit.check("9.8", [True, True]).ok is False
    assert coursekit.check("9.7", " oue").ok is True
    with pytest.raises(LookupError, match="no sealed answer"):
        coursekit.check("9.1", 1.0)
    # instructor edition: a sealed value off the live one fails only a strict run
    assert coursekit.check("9.9", 2.0, expected=2.0).ok is True
    with pytest.raises(AssertionError, match="stale.*make answers"):
        coursekit.check("9.9", 2.0, expected=2.0, strict=True)
    assert coursekit.check("9.9", 1.0, expected=1.0005, rel_tol=1e-3, strict=True).ok
    assert coursekit.check("9.6", 3.0, expected=3.0, strict=True).ok   # not sealed: no guard
    assert coursekit.check("9.8", np.array([True, False]), expected=np.array([True, False]),
                           strict=True).ok                          # arrays compare as lists
    # recording: numpy values and tuples as plain JSON, merged
    record = tmp_path / "record.json"
    monkeypatch.setenv("AMP_RECORD_ANSWERS", str(record))
    coursekit.check("9.9", 2.0, expected=np.float64(2.0), strict=True)   # no stale guard
    coursekit.check("9.5", (1, 2), expected=(np.int64(1), np.array([2])[0]))
    coursekit.check("9.4", [1.5], expected=np.array([1.5]))
    assert json.loads(record.read_text()) == {"9.9": 2.0, "9.5": [1, 2], "9.4": [1.5]}
    assert coursekit.decode(coursekit.encode((0.1, True, "a"))) == [0.1, True, "a"]


# ----------------------------------------------------------------------------- expected= removed
def test_remove_expected_keeps_the_rest_of_the_call() -> None:
    cases = {
        'check("1.2", a,\n      expected=[f(k) for k in (2, 100)],\n      rel_tol=1e-3,\n'
        '      hint="h")':
            'check("1.2", a,\n      rel_tol=1e-3,\n      hint="h")',
        'check("3.3", a, expected=g().gamma, rel_tol=1e-6,\n      hint="h")':
            'check("3.3", a, rel_tol=1e-6,\n      hint="h")',
        'check("3.4", a,\n      expected=(f(1)\n                / f(2)),\n      rel_tol=1e-2)':
            'check("3.4", a,\n      rel_tol=1e-2)',
        'check("14.7", a, expected=v(*p("pw", 2.0))[3],\n      rel_tol=1e-6, hint="ε")':
            'check("14.7", a,\n      rel_tol=1e-6, hint="ε")',
        'x = "±"; check("9", a, expected=0.5)': 'x = "±"; check("9", a)',
        'coursekit.check("9", a, rel_tol=0, expected=2)': 'coursekit.check("9", a, rel_tol=0)',
        'print(1)': 'print(1)',
    }
    for before, after in cases.items():
        new, n = se.remove_expected(before)
        assert new == after, (before, new)
        assert n == (before != after)
        compile(new, "<cell>", "exec")


def test_a_check_cell_that_does_not_parse_is_an_error() -> None:
    with pytest.raises(ValueError, match="expected="):
        se.remove_expected('%time\ncheck("1.1", a, expected=2.0)')
    assert se.remove_expected("%time\nprint(1)") == ("%time\nprint(1)", 0)


def test_wrapped_fallback_stays_under_88_characters() -> None:
    text = ('check("1.1", answer_1_1, rel_tol=0.001, abs_tol=1e-12, '
            'hint="a fairly long hint that does not fit on the line of the call at all")')
    wrapped = se._wrap_call(text, "")
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(text))
    assert all(len(line) <= 88 for line in wrapped.split("\n")) and "\n" in wrapped


def test_dead_statements_go_and_names_used_later_stay() -> None:
    nb = notebook([
        code("import amp\nfrom coursekit import check", tags=("remove-cell",)),
        code("def gaps(pnl):\n    return [p for p in pnl]"),
        code("answer_5_2 = 0.25  # solution", tags=("answer",)),
        code("# the table the check needs\nhelper = amp.f(1)\nlaw = amp.g(2)\n"
             "ratios = [x for x in law]\npnl = amp.h(3)\nused_later = amp.u(4)\n\n"
             "def only_here(n):\n    return n\n\n"
             'check("5.2", answer_5_2,\n      expected=helper + len(ratios) + only_here(pnl)'
             ' + used_later,\n      rel_tol=1e-3)'),
        code("print(used_later)"),
    ])
    out, stats = se.student_notebook(nb, "synthetic")
    cell = next(src(c) for c in out["cells"] if 'check("5.2"' in src(c))
    assert cell == 'used_later = amp.u(4)\n\ncheck("5.2", answer_5_2,\n      rel_tol=1e-3)'
    compile(cell, "<cell>", "exec")
    assert stats.expected_args == 1 and stats.dead_statements == 5
    dropped = "\n".join(stats.notes)
    for first in ("helper = ", "law = ", "ratios = ", "pnl = ", "def only_here"):
        assert f"dropped `{first}" in dropped, first
    assert src(out["cells"][1]).startswith("def gaps(pnl)"), "not a check cell: untouched"


def test_student_check_cells_have_no_expected(edition) -> None:
    _, root, _ = edition
    seen = 0
    for path in sorted((root / "book").rglob("*.ipynb")):
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            s = src(c)
            if c["cell_type"] != "code" or "check(" not in s:
                continue
            compile(s, path.name, "exec")
            for n in ast.walk(ast.parse(s)):
                if se._is_check(n):
                    seen += 1
                    assert not any(k.arg == "expected" for k in n.keywords), (path.name, s)
                    assert len(n.args) == 2, (path.name, s)
            assert all(len(line) <= 88 for line in s.split("\n")), (path.name, s)
    assert seen == len(_check_calls())
