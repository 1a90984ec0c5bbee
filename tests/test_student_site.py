"""The student site (``make student-site``, scripts/student_site.py): the student edition as a
static site, with nothing of the solutions, hidden checks or sealed answers on any page.

Three parts:

* the rule that decides which instructor outputs the site may show
  (``student_edition.safe_outputs``), on a small synthetic notebook (fast, no site);
* a small site built here (``test_small_site_*``, about 20-40 s): a synthetic chapter and page
  in the book's own configuration (its extensions, offline assets and ``-W``), with an executed
  copy whose outputs carry markers, go through ``write_source`` and ``jupyter-book build``; the
  exercises, the kept outputs and a figure are on the pages, the solutions, hidden checks,
  answer lines, ``expected=`` arguments, verdicts, ``coursekit`` and its sealed answers are not,
  and no page loads anything from the network;
* the built site of the whole book (``test_built_site_*``; ``$AMP_STUDENT_SITE_DIR``, default
  ``_build/student-site/html``): every page of ``_toc.yml`` exists, the preface says it is the
  student edition, no page loads anything from the network, and no HTML/JS/JSON/text file of it
  holds a distinctive piece of a solution (phrases of ``{solution}`` blocks, lines of solution
  cells, answer lines, ``expected=`` expressions), a hidden check's ``assert``, a check's
  verdict, ``answers.json`` or any of its base64 strings or decoded values. ``make
  student-site`` runs these right after building the site, with ``AMP_REQUIRE_STUDENT_SITE=1``
  (a missing site fails); elsewhere they are skipped without a built site (``make book`` does
  not build it).

A candidate is "distinctive" only if the student edition itself (the student notebooks and
pages, whose text the site may show) does not contain it; the test asserts that there are
enough candidates of each kind, so that it cannot pass by finding nothing to look for.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import student_edition as se  # noqa: E402
import student_site as ss  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_check import static_url_problems  # noqa: E402

BOOK = REPO / "book"
SITE = Path(os.environ.get("AMP_STUDENT_SITE_DIR",
                           REPO / "_build" / "student-site" / "html")).resolve()
REQUIRED = os.environ.get("AMP_REQUIRE_STUDENT_SITE", "") not in ("", "0")
TEXT_SUFFIXES = {".html", ".js", ".json", ".txt", ".ipynb", ".md", ".css", ".svg", ".py",
                 ".inv", ".xml"}
WORD_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ,;:.]*")


# ----------------------------------------------------------------------------- rules, synthetic
def code(text: str, tags: tuple[str, ...] = (), out: str | None = None) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)} if tags else {},
            "execution_count": 1 if out else None, "source": text.splitlines(keepends=True),
            "outputs": [{"output_type": "stream", "name": "stdout", "text": out}] if out else []}


def md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text.splitlines(keepends=True)}


def test_site_mode_keeps_only_safe_outputs() -> None:
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        code("import numpy as np\nfrom coursekit import check", ("remove-cell",)),
        code("x = np.arange(3)\nprint(x)", out="PLAIN_OUTPUT"),
        md("```{exercise} E\n:label: ex-1-1\nDo it.\n```"),
        code("answer_1 = 0.123456789  # solution", ("answer",), out="ANSWER_OUTPUT"),
        code('check("1.1", answer_1, expected=0.123456789)', out="Exercise 1.1: right."),
        md("```{solution} ex-1-1\n:class: dropdown\nSECRET\n```"),
        code("secret = 2 * x\nx.sort()", ("solution",), out="SOLUTION_OUTPUT"),
        code("print(secret)", out="SECRET_ECHO"),
        code("y = x + 1\nprint(y)", out="AFTER_MUTATION"),       # x may have changed: unsafe
        code("x = np.arange(4)\nprint(x)", out="REBOUND"),        # x bound afresh: safe again
        code("print(x.sum())", out="CLEAN_AGAIN"),
        code("static_figs.show('ch01')", ("remove-input", "static-only"), out="STATIC_FIG"),
        code("h = 3\nassert h == 3", ("remove-cell",), out="HIDDEN"),
        code("%time z = x", out="MAGIC_OK"),
    ]}
    student, stats = se.student_notebook(nb, "synthetic", keep_outputs=True)
    text = json.dumps(student)
    for gone in ("ANSWER_OUTPUT", "right.", "SOLUTION_OUTPUT", "SECRET", "AFTER_MUTATION",
                 "HIDDEN", "0.123456789"):
        assert gone not in text, gone
    for kept in ("PLAIN_OUTPUT", "REBOUND", "CLEAN_AGAIN", "STATIC_FIG", "MAGIC_OK"):
        assert kept in text, kept
    assert stats.outputs_kept == 5 and stats.outputs_dropped == 4
    # the downloadable edition (make student) is unchanged: no outputs, no static-only cell
    plain, _ = se.student_notebook(nb, "synthetic")
    assert "static_figs" not in json.dumps(plain)
    assert all(c.get("outputs") == [] for c in plain["cells"] if c["cell_type"] == "code")


# ----------------------------------------------------------------------------- a small site
PNG_1PX = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6"
           "kgAAAABJRU5ErkJggg==")
SEALED_B64 = "U0VBTEVEX0FOU1dFUl9NQVJLRVI="          # base64 of SEALED_ANSWER_MARKER
SMALL_TOC = """format: jb-book
root: book/intro
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: book/ch_small
      - file: book/notes
"""
#: on the small site's pages: the exercises, a kept output, the check cell without expected=
SMALL_PRESENT = ("EXERCISEMARKERONE", "EXERCISEMARKERTWO", "KEPTOUTPUTMARKER", "HINTMARKER",
                 "answer_s_1 = None", "This is the student edition")
#: nowhere on the small site: solutions (prose, cells, their outputs, an output that reads
#: what a solution cell changed), hidden checks, the answer line, expected=, a verdict,
#: coursekit (its decode and its sealed answers), book/data
SMALL_ABSENT = ("SOLUTIONPROSEMARKER", "PAGESOLUTIONMARKER", "solve_secretly",
                "SOLUTIONOUTPUTMARKER", "TAINTEDOUTPUTMARKER", "HIDDENASSERTMARKER",
                "ANSWEROUTPUTMARKER", "expected=", "Exercise S.1: right", "DECODEMARKER",
                SEALED_B64, "SEALED_ANSWER_MARKER", "DATAMARKER")


def _small_book(root: Path) -> None:
    """A book in the repository's layout (``_config.yml``, ``_toc.yml``, ``book/``) with the
    book's own configuration, extensions, offline assets and bibliography, a preface, one
    chapter notebook (an exercise with answer and check cells, a solution block and cell,
    hidden checks, a plain output, a figure) and one page with an exercise and a solution."""
    book = root / "book"
    book.mkdir(parents=True)
    shutil.copy2(REPO / "_config.yml", root / "_config.yml")
    (root / "_toc.yml").write_text(SMALL_TOC, encoding="utf-8")
    for d in ("_ext", "_static"):
        shutil.copytree(BOOK / d, book / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(BOOK / "references.bib", book / "references.bib")
    (book / "intro.md").write_text("# A small book\n\nThe preface, with math $x^2$.\n",
                                   encoding="utf-8")
    (book / "notes.md").write_text(
        "# Notes\n\n```{exercise} A page's exercise\n:label: ex-notes-1\n\nEXERCISEMARKERTWO: "
        "show that $1 + 1 = 2$.\n```\n\n```{solution} ex-notes-1\n:class: dropdown\n\n"
        "PAGESOLUTIONMARKER: count.\n```\n", encoding="utf-8")
    (book / "coursekit").mkdir()
    (book / "coursekit" / "__init__.py").write_text(
        "def decode(text):  # DECODEMARKER\n    return text\n", encoding="utf-8")
    (book / "coursekit" / "answers.json").write_text(
        json.dumps({"answers": {"S.1": SEALED_B64}}), encoding="utf-8")
    (book / "data").mkdir()
    (book / "data" / "table.md").write_text("# DATAMARKER\n", encoding="utf-8")
    cells = [
        code("from coursekit import check", ("remove-cell",)),
        md("# A small chapter\n\nSome prose and $\\varepsilon_0$."),
        code("x = 3\nprint(x * 2)", out="KEPTOUTPUTMARKER"),
        code("x", ("hide-input",)),
        code("assert x == 3, 'HIDDENASSERTMARKER'", ("remove-cell",)),
        md("```{exercise} Twice x\n:label: ex-small-1\n\nEXERCISEMARKERONE: compute $2x$.\n```"),
        code("answer_s_1 = solve_secretly(x)  # solution", ("answer",),
             out="ANSWEROUTPUTMARKER"),
        code('check("S.1", answer_s_1, expected=solve_secretly(x), hint="HINTMARKER")',
             out="Exercise S.1: right."),
        md("```{solution} ex-small-1\n:class: dropdown\n\nSOLUTIONPROSEMARKER: it is 6.\n```"),
        code("secret = solve_secretly(x)\nprint(secret)", ("solution",),
             out="SOLUTIONOUTPUTMARKER"),
        code("print(secret + 1)", out="TAINTEDOUTPUTMARKER"),
        code("assert secret == 6, 'HIDDENASSERTMARKER'", ("remove-cell",)),
    ]
    cells[3]["outputs"] = [{"output_type": "display_data", "metadata": {},
                            "data": {"image/png": PNG_1PX, "text/plain": "<Figure>"}}]
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    nb = {"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    executed = root / "executed" / "book"
    executed.mkdir(parents=True)
    (executed / "ch_small.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    for cell in cells:                      # the instructor notebook: no outputs stored
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    (book / "ch_small.ipynb").write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.is_file():
        pytest.skip(f"no jupyter-book next to {sys.executable} (make venv)")
    if not (BOOK / "_static" / "widgets" / "embed.js").is_file():
        pytest.skip("no ipywidgets loader in book/_static/widgets (make assets)")
    root = tmp_path_factory.mktemp("small-book")
    _small_book(root)
    out = root / "student-site"
    stats = ss.write_source(root / "book", root / "executed", out / "src")
    assert stats.solution_blocks == 2 and stats.solution_cells == 1
    assert stats.hidden_asserts == 2 and stats.expected_args == 1
    return ss.build(out / "src", out, jb)


def _site_text(site: Path) -> dict[str, str]:
    return {f.relative_to(site).as_posix(): f.read_text(encoding="utf-8", errors="replace")
            for f in sorted(site.rglob("*")) if f.is_file() and f.suffix in TEXT_SUFFIXES}


def test_small_site_has_the_exercises_and_no_solutions(small_site: Path) -> None:
    pages = {p: (small_site / p).read_text(encoding="utf-8")
             for p in ("book/intro.html", "book/ch_small.html", "book/notes.html")}
    text = norm(visible("\n".join(pages.values())))
    missing = [m for m in SMALL_PRESENT if m not in text]
    assert not missing, f"missing from the small student site: {missing}"
    assert "<img" in pages["book/ch_small.html"], "the kept figure is not on the page"
    # every file but the theme's and MathJax's (_static: copied assets, no page text)
    leaks = [(m, where) for where, raw in _site_text(small_site).items() for m in SMALL_ABSENT
             if not where.startswith("_static/") and (m in raw or m in visible(raw))]
    assert not leaks, f"leaks on the small student site: {leaks}"
    files = [f.relative_to(small_site).as_posix() for f in small_site.rglob("*")]
    assert not [f for f in files if "coursekit" in f or "answers.json" in f
                or "table.md" in f or "table.html" in f]


def test_small_site_loads_nothing_remote(small_site: Path) -> None:
    problems, _ = static_url_problems(small_site)
    assert not problems, "remote resources on the small student site:\n" + "\n".join(problems)
    head = (small_site / "book" / "ch_small.html").read_text(encoding="utf-8")
    assert "_static/mathjax" in head, "MathJax is not the offline copy"


# ----------------------------------------------------------------------------- candidates
def _src(cell: dict) -> str:
    return se._source(cell)


def norm(text: str) -> str:
    """Whitespace collapsed, typographic quotes and dashes made plain (Sphinx smartquotes)."""
    text = (text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
            .replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-")
            .replace("\u00a0", " ").replace("\u2026", "..."))
    return re.sub(r"\s+", " ", text).strip()


def _solution_bodies(text: str) -> list[str]:
    """The bodies of the ``{solution}`` (and gated, and legacy) blocks of MyST text: what
    ``strip_solutions`` removes, as the lines it drops."""
    kept = set(se.strip_solutions(text)[0].split("\n"))
    return [line for line in text.split("\n") if line not in kept]


def _phrases(lines: list[str], words: int = 7) -> set[str]:
    """Runs of at least ``words`` plain words (no markup, math, quotes or code) of prose."""
    joined = " ".join(line.strip() for line in lines if not line.lstrip().startswith(
        (":", "```", "~~~", "(", "$$", "|", "#")))
    out = set()
    for run in WORD_RUN.findall(joined):
        run = norm(run).strip(" ,;:.")
        if len(run.split()) >= words:
            out.add(run)
    return out


def _code_lines(src: str, min_chars: int = 24) -> set[str]:
    return {norm(line) for line in src.split("\n")
            if len(line.strip()) >= min_chars and not line.strip().startswith("#")}


def collect_candidates() -> dict[str, set[str]]:
    """What must not appear on the student site, by kind (before the distinctiveness filter)."""
    found: dict[str, set[str]] = {"solution prose": set(), "solution code": set(),
                                  "hidden assert": set(), "answer line": set(),
                                  "expected= value": set()}
    for path in sorted(BOOK.rglob("*")):
        rel = path.relative_to(BOOK)
        if set(rel.parts) & {"_build", ".ipynb_checkpoints"}:
            continue
        if path.suffix == ".md":
            found["solution prose"] |= _phrases(_solution_bodies(path.read_text("utf-8")))
        if path.suffix != ".ipynb":
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        gated = False
        for cell in nb["cells"]:
            src, tags = _src(cell), cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] == "markdown":
                body = _solution_bodies(src) if not gated else src.split("\n")
                gated = se.strip_solutions(src, gated)[2]
                found["solution prose"] |= _phrases(body)
                continue
            if cell["cell_type"] != "code":
                continue
            if "solution" in tags or gated:
                found["solution code"] |= _code_lines(src)
            if "remove-cell" in tags and "assert" in src:
                found["hidden assert"] |= {norm(line) for line in src.split("\n")
                                           if line.strip().startswith("assert")
                                           and len(line.strip()) >= 16}
            for line in src.split("\n"):
                if se.SOLUTION_MARK.search(line) and "=" in line:
                    rhs = norm(se.SOLUTION_MARK.sub("", line.split("=", 1)[1]))
                    if len(rhs) >= 12:
                        found["answer line"].add(rhs)
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            for _, kw in se._expected_keywords(tree):
                value = norm(ast.get_source_segment(src, kw.value) or "")
                # a bare literal ([True, True], 0.2454) is no distinctive text: the sealed
                # answers' test looks for the values themselves
                if len(value) >= 12 and not isinstance(kw.value, (ast.Constant, ast.List,
                                                                  ast.Tuple)):
                    found["expected= value"].add(value)
    return found


def student_text() -> str:
    """Everything the student edition itself shows (its notebooks and pages), normalised."""
    parts = []
    for path in sorted(BOOK.rglob("*")):
        if "_build" in path.parts:
            continue
        if path.suffix == ".ipynb":
            nb, _ = se.student_notebook(json.loads(path.read_text(encoding="utf-8")))
            parts += [_src(c) for c in nb["cells"]]
        elif path.suffix == ".md":
            parts.append(se.strip_solutions(path.read_text(encoding="utf-8"))[0])
    return norm("\n".join(parts))


def sealed_answers() -> tuple[set[str], set[str]]:
    """(base64 strings, decoded values as text) of book/coursekit/answers.json."""
    sys.path.insert(0, str(BOOK))
    import coursekit

    raw = json.loads((BOOK / "coursekit" / "answers.json").read_text(encoding="utf-8"))
    b64 = set(raw["answers"].values())
    decoded: set[str] = set()

    def values(v):
        if isinstance(v, list):
            for x in v:
                yield from values(x)
        else:
            yield v
    for text in b64:
        value = coursekit.decode(text)
        decoded.add(json.dumps(value))
        decoded |= {repr(x) for x in values(value) if isinstance(x, float)}
    # short numbers (3.0, 0.5) are everywhere on any page: only full-precision ones count
    return b64, {d for d in decoded if len(d) >= 8}


# ----------------------------------------------------------------------------- the built site
@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        if REQUIRED:
            pytest.fail(f"AMP_REQUIRE_STUDENT_SITE is set and {SITE} has no student site "
                        "(make student-site)")
        pytest.skip(f"no student site in {SITE} (make student-site)")
    return SITE


def visible(raw: str) -> str:
    """The text of an HTML file (tags dropped, entities decoded), scripts' contents included."""
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


@pytest.fixture(scope="module")
def corpus(site: Path) -> dict[str, str]:
    """Every text file of the site: its raw text and its visible text, normalised."""
    out = {}
    for f in sorted(site.rglob("*")):
        if f.is_file() and f.suffix in TEXT_SUFFIXES:
            raw = f.read_text(encoding="utf-8", errors="replace")
            rel = f.relative_to(site).as_posix()
            out[rel] = norm(raw) + "\n" + (norm(visible(raw)) if f.suffix == ".html" else "")
    return out


def _toc_files(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["file"]] if "file" in node else []) + [
            f for v in node.values() if isinstance(v, (list, dict)) for f in _toc_files(v)]
    if isinstance(node, list):
        return [f for v in node for f in _toc_files(v)]
    return []


def test_built_site_has_every_page_of_the_toc(site: Path) -> None:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]] + _toc_files(toc["parts"])
    assert len(pages) > 30
    missing = [p for p in pages if not (site / f"{p}.html").is_file()]
    assert not missing, f"pages missing from the student site: {missing}"
    index = (site / "index.html").read_text(encoding="utf-8")
    preface = (site / f"{toc['root']}.html").read_text(encoding="utf-8")
    assert "student edition" in norm(visible(index + preface)).lower()
    assert "(student edition)" in re.search(r"<title>(.*?)</title>", preface, re.S).group(1)


def test_built_site_has_no_sealed_answers(site: Path, corpus: dict[str, str]) -> None:
    names = [f.relative_to(site).as_posix() for f in site.rglob("*")]
    assert not [n for n in names if n.endswith("answers.json") or "/coursekit/" in f"/{n}"]
    b64, decoded = sealed_answers()
    assert len(b64) >= 20 and len(decoded) >= 20
    leaks = [(what, where) for what in sorted(b64 | decoded)
             for where, text in corpus.items() if what in text]
    assert not leaks, f"sealed answers on the student site: {leaks[:10]}"


def test_built_site_has_no_check_verdict(corpus: dict[str, str]) -> None:
    verdict = re.compile(r"amp-check|Exercise \d+\.\d+: (right\.|not yet \(|no answer yet)")
    leaks = [where for where, text in corpus.items() if verdict.search(text)]
    assert not leaks, f"a check's verdict (the output of a check cell) on: {leaks}"


def test_built_site_has_no_solution_or_hidden_check(corpus: dict[str, str]) -> None:
    candidates = collect_candidates()
    allowed = student_text()
    distinctive = {kind: {c for c in found if c not in allowed}
                   for kind, found in candidates.items()}
    counts = {kind: len(v) for kind, v in distinctive.items()}
    minimum = {"solution prose": 100, "solution code": 20, "hidden assert": 100,
               "answer line": 10, "expected= value": 10}
    assert all(counts[k] >= minimum[k] for k in minimum), counts
    leaks = [(kind, c[:80], where) for kind, found in distinctive.items() for c in sorted(found)
             for where, text in corpus.items() if c in text]
    assert not leaks, f"{len(leaks)} leaks on the student site, e.g. {leaks[:8]}"


def test_built_site_loads_nothing_remote(site: Path) -> None:
    problems, _ = static_url_problems(site)
    assert not problems, "remote resources on the student site:\n" + "\n".join(problems)


#: the label of an ``{exercise}`` directive (its options come first, ``:label:`` among them)
EXERCISE_LABEL = re.compile(
    r"\{exercise\}[^\n]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?[ \t]*:label:\s*(\S+)")


def test_built_site_has_every_exercise_and_no_solution_box(site: Path) -> None:
    labels = set()
    for path in sorted(BOOK.rglob("*")):
        if "_build" in path.parts or path.suffix not in (".md", ".ipynb"):
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "\n".join(_src(c) for c in json.loads(text)["cells"]
                             if c["cell_type"] == "markdown")
        labels |= set(EXERCISE_LABEL.findall(text))
    assert len(labels) >= 50, len(labels)
    pages = "\n".join(f.read_text(encoding="utf-8") for f in site.rglob("*.html"))
    missing = sorted(x for x in labels if f'class="exercise admonition" id="{x}"' not in pages)
    assert not missing, f"exercises missing from the student site: {missing}"
    assert 'class="solution' not in pages, "a solution box on the student site"
