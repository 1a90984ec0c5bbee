"""The live app's build step (``scripts/live/prepare.py``, ``make live``): pure file
transformation, no Voila needed. The slow tests at the end execute the app notebooks and drive
a running Voila server (skipped when Voila is not installed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "live"))

import myst  # noqa: E402
import prepare  # noqa: E402

RAW_MYST = re.compile(r"```\{|:::\{|\{(dropdown|toggle|admonition|note|warning|eq|numref|cite|"
                      r"cite:t|doc|ref|math|term|exercise|solution|rubric|prf:[a-z]+)\}|"
                      r"^\([\w.:-]+\)=\s*$|^:(class|label|nonumber):|\$\$\s*\([\w.:-]+\)", re.M)


def _src(cell: dict) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("live")
    prepare.build(ROOT / "book", out)
    return out / "app"


def _notebooks(app: Path) -> dict:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(app.glob("*.ipynb"))}


def _book_interactive() -> list[str]:
    """The chapters of _toc.yml with a widget cell (a notebook not yet in the toc is not in
    the app)."""
    out = []
    for stem, _number in prepare.chapters(ROOT / "book"):
        p = ROOT / "book" / f"{stem}.ipynb"
        if not p.exists():
            continue
        nb = json.loads(p.read_text(encoding="utf-8"))
        if any(prepare.is_widget_cell(c) and "static-only" not in c["metadata"].get("tags", [])
               for c in nb["cells"]):
            out.append(p.stem)
    return out


# ------------------------------------------------------------------------------ real book
def test_every_interactive_chapter_is_built_and_linked_from_the_landing_page(app):
    chapters = _book_interactive()
    assert {"07_experiments", "10_calculator"} <= set(chapters)
    nbs = _notebooks(app)
    assert set(nbs) == set(chapters) | {"index"}
    index = _src(nbs["index"]["cells"][0])
    for stem in chapters:
        title = prepare.book_context(ROOT / "book").docs[stem]
        line = next(ln for ln in index.split("\n") if f"]({stem}.ipynb)" in ln)
        assert title in line and len(line) < 400          # one line each, with its title
    assert not RAW_MYST.search(index)


def test_no_visible_code_and_no_raw_myst(app):
    for stem, nb in _notebooks(app).items():
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["metadata"]["jupyter"]["source_hidden"] is True
                assert cell["outputs"] == [] and cell["execution_count"] is None
            else:
                text = _src(cell)
                m = RAW_MYST.search(text)
                assert m is None, (stem, m.group(0), text[max(0, m.start() - 80):m.end() + 80])
            assert cell["id"].startswith("amp-live-")
        if stem != "index":
            assert 'href="index.ipynb"' in _src(nb["cells"][0])    # back to the landing page


def test_widget_cells_kept_checks_removed(app):
    nbs = _notebooks(app)
    for stem in _book_interactive():
        book = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        cells = nbs[stem]["cells"]
        widgets = [c for c in cells if "widget" in c["metadata"].get("tags", [])]
        assert widgets and all(not _src(c).startswith("%%capture") for c in widgets)
        app_sources = "\n".join(_src(c) for c in cells)
        for c in book["cells"]:
            tags = set(c["metadata"].get("tags", []))
            if "static-only" in tags:
                assert _src(c).strip() not in app_sources      # static-only cells are gone
            if c["cell_type"] == "markdown" and "remove-cell" in tags:
                assert _src(c).strip() not in app_sources
            if c["cell_type"] == "code" and "remove-cell" in tags \
                    and not prepare.is_widget_cell(c) and _src(c).strip() in app_sources:
                # a removed cell that still runs does so silently
                hit = next(x for x in cells if _src(x).endswith(_src(c).rstrip()))
                assert _src(hit).startswith("%%capture\n")


def test_exercise_solutions_are_collapsed(app):
    nbs = _notebooks(app)
    for stem in _book_interactive():
        book = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        # the live app drops remove-cell and static-only cells (scripts/live/prepare.py)
        md = "\n".join(_src(c) for c in book["cells"] if c["cell_type"] == "markdown"
                       and not {"remove-cell", "static-only"}
                       & set(c["metadata"].get("tags", [])))
        dropdowns = len(re.findall(r"^:class:.*\bdropdown\b", md, re.M))
        text = "\n".join(_src(c) for c in nbs[stem]["cells"])
        assert len(re.findall(r'<details class="amp-dropdown"( data-amp-fold-next)?>', text)) \
            == dropdowns
        assert text.count("</details>") == dropdowns


def test_fold_titles_are_html_not_markdown(app):
    """A fold title sits in an HTML block (<summary>), where Markdown is not rendered: the
    converter writes it as HTML, so no backtick, ``**`` or MyST role shows raw (issue #24:
    chapter 5's fold title showed its backticks)."""
    summaries = [m.group(1) for nb in _notebooks(app).values() for c in nb["cells"]
                 if c["cell_type"] == "markdown"
                 for m in re.finditer(r"<summary>(.*?)</summary>", _src(c), re.S)]
    assert summaries
    for text in summaries:
        assert not re.search(r"`|\*\*|\{[\w:]+\}", text), text
    ctx = myst.Context()
    out = myst.convert("```{admonition} Under the hood: `amp.epsilon` and **$n < 10$**\n"
                       ":class: dropdown\nBody with `code`.\n```", ctx)
    assert ("<summary><b>Under the hood: <code>amp.epsilon</code> and "
            "<b>$n &lt; 10$</b></b></summary>") in out
    assert "Body with `code`." in out                 # the body is Markdown: untouched
    out = myst.convert("```{dropdown} A `x` fold\nB\n```", ctx)
    assert "<summary><b>A <code>x</code> fold</b></summary>" in out


def test_a_fold_and_its_output_are_one_fold(app):
    """A solution (or dropdown) followed by its computation (a code cell tagged solution or
    hide-output): one fold (the cell is marked to be moved inside it by the template's
    script), never a second "Show output" toggle after the first."""
    marked = 0
    for stem, nb in _notebooks(app).items():
        srcs = [_src(c) for c in nb["cells"]]
        for k, src in enumerate(srcs):
            if prepare.FOLD_NEXT in src:
                marked += 1
                assert src.rstrip().endswith("</details>")
                nxt = nb["cells"][k + 1]
                assert nxt["cell_type"] == "code" and not srcs[k + 1].startswith("%%capture")
            if "_amp_fold_output(" in src:                   # a fold of its own ...
                assert not srcs[k - 2].rstrip().endswith("</details>"), stem  # ... not after one
    book = json.loads((ROOT / "book" / "12_accuracy.ipynb").read_text(encoding="utf-8"))
    pairs = sum(1 for a, b in zip(book["cells"], book["cells"][1:])
                if a["cell_type"] == "markdown" and ":class: dropdown" in _src(a)
                and "solution" in b["metadata"].get("tags", []))
    assert pairs >= 1 and marked >= pairs
    template = (ROOT / "scripts" / "live" / "template" / prepare.TEMPLATE_NAME /
                "index.html.j2").read_text(encoding="utf-8")
    assert f"details[{prepare.FOLD_NEXT}]" in template and "appendChild(next)" in template


def test_tab_titles_are_chapter_titles(app):
    """The browser tab (nbconvert's <title>, from the notebook's metadata) names the chapter,
    not the file ("10_calculator")."""
    ctx = prepare.book_context(ROOT / "book")
    numbers = dict(prepare.chapters(ROOT / "book"))
    for stem, nb in _notebooks(app).items():
        title = nb["metadata"].get("title", "")
        assert title and stem not in title and not re.search(r"`|\$|\*\*", title), stem
        if stem != "index":
            assert title == (f"{numbers[stem]}. {prepare.plain_title(ctx.docs[stem])} · "
                             f"{prepare.APP_NAME}")


def test_live_css_for_phones():
    """The template's styles for a 390 px screen (checked in a browser by
    scripts/live/check.py --widths 390): widget rows wrap, buttons keep their label, slider
    readouts and long checkbox labels stay visible."""
    css = (ROOT / "scripts" / "live" / "template" / prepare.TEMPLATE_NAME /
           "index.html.j2").read_text(encoding="utf-8")
    phone = css[css.index("@media (max-width: 700px)"):]
    for rule in (".widget-hbox, .widget-interact { flex-wrap: wrap;", "min-width: max-content",
                 ".widget-readout { flex: 0 0 auto;", ".widget-checkbox"):
        assert rule in phone, rule


def test_numbers_follow_the_book():
    ctx = prepare.book_context(ROOT / "book")
    chap = dict(prepare.chapters(ROOT / "book"))
    assert chap["01_introduction"] == "1" and chap["10_calculator"] == "10"
    assert ctx.equations["intro-protocol"] == "1.1"
    assert all(re.fullmatch(r"\d+(\.\d+)?", v) for v in ctx.equations.values())
    assert ctx.docs["api/index"] != ctx.docs.get("index")      # nested documents keep their path
    assert ctx.figures["fig-exp-figure2"] == "7.1" and ctx.figures["fig-exp-figure3"] == "7.2"
    assert ctx.citations["balle2019privacy"] == "Balle et al., 2019"
    assert ctx.citations["su2025decomposition"] == "Su et al., 2025"
    feldman = {ctx.citations["feldman2023stronger"], ctx.citations["feldman2023strongercorrected"]}
    assert feldman == {"Feldman et al., 2023a", "Feldman et al., 2023b"}


def _kept_markdown(stem: str) -> list[str]:
    """The Markdown the site renders for one page (remove-cell / static-only cells left out)."""
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return [_src(c) for c in nb["cells"] if c["cell_type"] == "markdown"
            and not {"remove-cell", "static-only"} & set(c["metadata"].get("tags", []))]


def test_exercise_and_theorem_numbers_follow_the_site():
    """The site numbers exercises and each sphinx-proof kind per chapter, in order; a section
    page (3.3) continues its chapter's count. Labels follow ex-<chapter>-<k> (brief), so the
    number is <chapter>.<k>."""
    ctx = prepare.book_context(ROOT / "book")
    chap = dict(prepare.chapters(ROOT / "book"))
    assert chap.get("03b_stronger_clone") == chap["03_existing_techniques"] == "3"
    assert ctx.exercises, "no {exercise} in the book"
    for label, (doc, num, title) in ctx.exercises.items():
        assert re.match(r"★{1,3} ", title), (label, title)       # difficulty mark first
        if chap.get(doc) is None:                                # preface: no chapter number
            continue
        assert re.fullmatch(r"\d+\.\d+", num), (label, num)
        assert num.split(".")[0] == chap[doc], (label, doc)
        m = re.fullmatch(r"ex-(\d+)-(\d+)", label)
        if m and chap[doc] == m.group(1):
            assert num == f"{m.group(1)}.{m.group(2)}", (label, num)
    in_ch3 = sum(1 for doc, _, _ in ctx.exercises.values() if doc == "03_existing_techniques")
    for label, (doc, num, _) in ctx.exercises.items():
        m = re.fullmatch(r"ex-3b-(\d+)", label)
        if m:
            assert num == f"3.{in_ch3 + int(m.group(1))}", (label, num)
    assert ctx.exercises["ex-5-2"][:2] == ("05_new_algorithm", "5.2")
    # the paper's objects are unnumbered by the book (named "Theorem 4 (§5.1)"); the definitions
    # the paper leaves unnumbered keep the book's numbers
    for label, kind, num in [("thm-4-s5-1", "theorem", ""), ("thm-5-s5-3", "theorem", ""),
                             ("def-parv", "definition", "5.1"), ("def-gparv", "definition", "5.2"),
                             ("lem-2-s5-1", "lemma", ""), ("alg-4", "algorithm", "")]:
        assert ctx.proofs[label][1:3] == (kind, num), label
    for label, (doc, kind, num, _title) in ctx.proofs.items():
        assert kind in myst.PROOF_KINDS
        assert num == "" or chap.get(doc) is None or num.split(".")[0] == chap[doc], label
    assert not (set(ctx.proofs) | set(ctx.exercises)) & set(ctx.equations)


def test_equation_numbers_count_only_labelled_equations():
    """Theorem and exercise labels never shift equation numbers: (n.k) is the k-th labelled
    equation ($$ ... $$ (label) or {math} with :label:) of chapter n, section pages included."""
    ctx = prepare.book_context(ROOT / "book")
    eq = re.compile(r"\$\$[ \t]*\(([\w:.-]+)\)[ \t]*$|^[ \t]*(?:`{3,}|:{3,})\{math\}.*\n"
                    r"(?:[ \t]*:[\w-]+:.*\n)*?[ \t]*:label:[ \t]*([\w:.-]+)", re.M)
    count: dict = {}
    checked = 0
    for stem, number in prepare.chapters(ROOT / "book"):
        if number is None or not (ROOT / "book" / f"{stem}.ipynb").exists():
            continue
        for text in _kept_markdown(stem):
            for m in eq.finditer(text):
                count[number] = count.get(number, 0) + 1
                assert ctx.equations[m.group(1) or m.group(2)] == f"{number}.{count[number]}"
                checked += 1
    assert checked >= 10 and ctx.equations["intro-protocol"] == "1.1"


def test_course_objects_rendered_as_the_site(app):
    """In every app chapter: each exercise a framed block "Exercise n.k (★ title)" with its
    label as id, each solution folded under "Solution to Exercise n.k (...)", each theorem-like
    environment "Theorem n.k (title)", proofs marked, same-page links resolvable, no verdict
    of a checked answer shown and coursekit importable next to the notebooks."""
    ctx = prepare.book_context(ROOT / "book")
    nbs = _notebooks(app)
    assert (app / "coursekit" / "__init__.py").exists()
    assert (app / "data").is_dir() and (app / "_static").is_dir()
    for module in (ROOT / "book").glob("*.py"):
        assert (app / module.name).exists()
    for stem in _book_interactive():
        cells = nbs[stem]["cells"]
        text = "\n".join(_src(c) for c in cells if c["cell_type"] == "markdown")
        book_md = "\n".join(_kept_markdown(stem))
        for label, (doc, num, title) in ctx.exercises.items():
            if doc == stem:
                assert f'<div class="amp-admonition amp-exercise" id="{label}">' in text
                assert f"**Exercise {num} (★" in text, (stem, label)
        solutions = len(re.findall(r"^[ \t]*(?:`{3,}|:{3,})\{solution\}", book_md, re.M))
        assert text.count("<b>Solution to Exercise ") + text.count(
            "**Solution to Exercise ") == solutions
        for label, (doc, kind, num, _title) in ctx.proofs.items():
            if doc == stem:
                assert f'id="{label}"' in text and f"**{kind.title()} {num}" in text, label
        proofs = len(re.findall(r"^[ \t]*(?:`{3,}|:{3,})\{prf:proof\}", book_md, re.M))
        assert text.count('<div class="amp-admonition amp-proof">') == proofs
        ids = set(re.findall(r'id="([^"]+)"', text))
        heads = {re.sub(r"\s+", "-", h.strip()) for h in re.findall(r"^#+\s+(.+)$", text, re.M)}
        for target in re.findall(r"\]\(#([^)]+)\)", text):
            assert target in ids | heads, (stem, target)      # same-page links land
        for c in cells:
            if c["cell_type"] == "code":
                src = _src(c)
                assert not re.search(r"^check\(", src, re.M), (stem, src[:200])
                assert "# solution" not in src or src.startswith("%%capture\n"), src[:200]


def test_template_requests_nothing_remote():
    tdir = ROOT / "scripts" / "live" / "template" / prepare.TEMPLATE_NAME
    files = list(tdir.rglob("*"))
    assert {f.name for f in files} >= {"conf.json", "index.html.j2", "tree-lab.html", "tree.html"}
    for f in files:
        if f.is_file():
            assert not re.search(r"(?:https?:)?//[\w.-]+\.\w+/", f.read_text(encoding="utf-8")), f
    # the lab template's CDN stylesheets live in the one block we replace without super()
    index = (tdir / "index.html.j2").read_text(encoding="utf-8")
    assert "{%- block notebook_css -%}" in index and "super.super()" in index


def test_makefile_serves_the_app_with_code_hidden():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text[text.index("\nlive:"):]
    recipe = recipe[:recipe.index("\n\n")]
    assert "scripts/live/prepare.py" in recipe and "--strip_sources=True" in recipe
    assert "--template=amp" in recipe and "127.0.0.1" in recipe
    assert "--Voila.mathjax_url=null" in recipe          # bundled MathJax 3, not cdnjs
    assert "show_tracebacks=True" not in recipe
    assert "cull_idle_timeout" in recipe              # pages left open do not pile up kernels


# -------------------------------------------------------------------- a synthetic chapter
SYNTH_TOC = """format: jb-book
root: book/intro
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: book/01_one
      - file: book/02_two
"""
SYNTH_BIB = """@article{doe2020x, author = {Doe, Jane}, title = {X}, year = {2020}}
@article{roe2021y, author = {Roe, A. and Poe, B. and Moe, C.}, title = {Y}, year = {2021}}
"""


def _nb(cells):
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
            "nbformat_minor": 5}


def _md(text, tags=()):
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": text}


def _code(text, tags=(), **meta):
    return {"cell_type": "code", "metadata": {"tags": list(tags), **meta}, "source": text,
            "outputs": [], "execution_count": None}


@pytest.fixture
def synthetic(tmp_path) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    (tmp_path / "_toc.yml").write_text(SYNTH_TOC)
    (book / "references.bib").write_text(SYNTH_BIB)
    (book / "intro.md").write_text("# Preface\n")
    one = _nb([
        _md("# Chapter one\n\n- how to test a live app;\n- more\n\n"
            "$$\nx = 1\n$$ (one-eq)\n\nSee {eq}`one-eq`, {numref}`fig-one`, "
            "{cite}`doe2020x,roe2021y`, {cite:t}`doe2020x`, {doc}`02_two` and "
            "[the other chapter](02_two.ipynb#top) and [a file](../README.md); "
            "code `{eq}` stays."),
        _code("import math\nvalue = 3", ["remove-cell"]),
        _code("assert value == 3\nchecked = True", ["remove-cell"]),
        _code("import random\nrandom.seed(1)", ["remove-cell"]),
        _code("import sys\nsys.path.insert(0, '..')\nassert sys.path", ["remove-cell"]),
        _code("print(value)", ["hide-output"]),
        _code("value", ["remove-output"]),
        _code("plot(value)", mystnb={"figure": {"caption": "A figure, {eq}`one-eq`.",
                                                "name": "fig-one"}}),
        _md("```{note}\nRun `make live` to get the widget below.\n```", []),
        _md("Hidden prose.", ["remove-cell"]),
        _md("Static only.", ["static-only"]),
        _code("static_calculator()", ["static-only"]),
        _code("widgets.eps_vs_n_widget(value)", ["remove-cell", "nbval-ignore-output"]),
        _md("(sec-ex)=\n## Exercises\n\n```{admonition} Exercise 1.1\nWhy $x$?\n```\n\n"
            "````{admonition} Solution\n:class: dropdown\nBecause\n\n```{math}\n:label: one-m\n"
            "y = 2\n```\n\nand {eq}`one-m`, see {ref}`sec-ex`.\n````\n\n"
            ":::{warning}\nCareful.\n:::"),
    ])
    two = _nb([_md("# Chapter two\n\nNo widget here.")])
    (book / "01_one.ipynb").write_text(json.dumps(one))
    (book / "02_two.ipynb").write_text(json.dumps(two))
    return book


def test_synthetic_chapter(synthetic, tmp_path):
    info = prepare.build(synthetic, tmp_path / "out", template=False)
    assert info["chapters"] == ["01_one"]                    # 02_two has no widget
    nb = json.loads((tmp_path / "out" / "app" / "01_one.ipynb").read_text())
    cells = nb["cells"]
    srcs = [_src(c) for c in cells]
    text = "\n".join(srcs)
    assert 'href="index.ipynb"' in srcs[0]
    first = srcs[1]
    assert "\\tag{1.1}\n$$" in first and "(one-eq)" not in first
    assert "See (1.1), Fig. 1.1, [Doe, 2020; Roe et al., 2021], Doe (2020), Chapter two" in first
    assert "the other chapter and a file;" in first           # not in the app: plain text
    assert "code `{eq}` stays" in first                       # code spans untouched
    assert "%%capture\nimport math\nvalue = 3" in srcs       # needed later: runs silently
    assert "checked" not in text                              # pure check cell: left out
    assert "%%capture\nimport random\nrandom.seed(1)" in srcs  # side effect: kept
    assert "sys.path.insert" not in text          # hidden check (assert): left out, as a whole
    assert "%%capture _amp_folded_1\nprint(value)" in srcs
    assert "_amp_fold_output(_amp_folded_1)" in srcs[srcs.index(
        "%%capture _amp_folded_1\nprint(value)") + 1]
    assert "%%capture\nvalue" in srcs
    cap = srcs[srcs.index("plot(value)") + 1]
    assert cap.startswith('<div class="amp-caption">') and "**Fig. 1.1.** A figure, (1.1)." in cap
    assert "make live" not in text and "Hidden prose" not in text
    assert "Static only" not in text and "static_calculator" not in text
    widget = [c for c in cells if "widget" in c["metadata"].get("tags", [])]
    assert [_src(c) for c in widget] == ["widgets.eps_vs_n_widget(value)"]
    last = srcs[-1]
    assert '<details class="amp-dropdown">\n<summary><b>Solution</b></summary>' in last
    assert "$$\ny = 2 \\tag{1.2}\n$$" in last
    assert "and (1.2), see [Exercises](#Exercises)." in last      # same page: no reload
    assert "**Exercise 1.1**" in last and "(sec-ex)=" not in last
    assert '<div class="amp-admonition amp-warning">' in last and "Careful." in last
    assert not any(RAW_MYST.search(s.replace("`{eq}`", "")) for s in srcs
                   if not s.startswith("%%"))
    index = _src(json.loads((tmp_path / "out" / "app" / "index.ipynb").read_text())["cells"][0])
    assert "| [1. Chapter one](01_one.ipynb) | the central ε against the number of users n" in index


COURSE_TOC = """format: jb-book
root: book/intro
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: book/01_one
        sections:
          - file: book/01b_sub
      - file: book/02_two
"""


@pytest.fixture
def course(tmp_path) -> Path:
    """A two-chapter course (chapter 1 with a section page) using every construct of the
    course conventions: sphinx-exercise, sphinx-proof, {term}, {doc} to an engine page not
    in the toc, answer/check cells, a solution code cell, coursekit and a book module."""
    book = tmp_path / "book"
    (book / "engine").mkdir(parents=True)
    (book / "coursekit").mkdir()
    (book / "coursekit" / "__init__.py").write_text("def check(*a, **k):\n    return True\n")
    (book / "helper.py").write_text("X = 1\n")
    (tmp_path / "_toc.yml").write_text(COURSE_TOC)
    (book / "references.bib").write_text(SYNTH_BIB)
    (book / "intro.md").write_text("# Preface\n")
    (book / "engine" / "x.md").write_text("# Inside amp: chapter one\n")
    one = _nb([
        _md("# Chapter one\n\n$$\na\n$$ (one-a)\n\n"
            "```{prf:definition} (A term; §1)\n:label: def-a\n\nA {term}`GPARV` is "
            "{term}`a law <law>`.\n```\n\n"
            "````{prf:theorem} (A statement)\n:label: thm-a\n\nStatement\n\n"
            "$$\nb\n$$ (one-b)\n````\n\n```{prf:proof}\nEasy.\n```\n\n"
            "```{prf:lemma}\nAn unlabelled lemma.\n```\n\n"
            "```{prf:theorem} 9 (§1.1): from the paper\n:label: thm-p\n:nonumber:\n\nS.\n```\n\n"
            "See {prf:ref}`thm-a`, {prf:ref}`the definition <def-a>`, {ref}`ex-1-2`, "
            "{ref}`ex-2-1`, {ref}`ex-1b-1`, {doc}`engine/x`, {term}`hockey-stick divergence`, "
            "{eq}`one-b`, {numref}`ex-1-1`."),
        _code("import helper\nfrom coursekit import check", ["remove-cell"]),
        _code("widgets.eps_vs_n_widget(helper.X)", ["remove-cell"]),
        _md("```{exercise} ★ First\n:label: ex-1-1\n\nCompute $2$.\n```"),
        _code("answer_1_1 = 1 + 1  # solution", ["answer"]),
        _code("check(\"1.1\", answer_1_1, expected=2,\n      hint=\"add\")"),
        _md("```{solution} ex-1-1\n:class: dropdown\n\nIt is $1 + 1$.\n```"),
        _code("print('worked')", ["solution"]),
        _md(":::{exercise} ★★ Colon fenced\n:label: ex-1-2\n\nBody.\n:::\n\n"
            "```{rubric} Summary\n```"),
    ])
    sub = _nb([_md("# The section\n\n```{exercise} ★★★ In the section\n:label: ex-1b-1\n\nX.\n"
                   "```\n\n$$\nc\n$$ (sub-c)\n\n```{prf:theorem} Another\n:label: thm-b\n\nY.\n"
                   "```")])
    two = _nb([
        _md("# Chapter two\n\n```{exercise} ★ Second chapter\n:label: ex-2-1\n\nZ.\n```\n\n"
            "```{solution} ex-2-1\n\nPlain solution, back to {prf:ref}`thm-b` and "
            "{prf:ref}`thm-a`.\n```"),
        _code("widgets.gparv_widget()", ["remove-cell"]),
    ])
    for name, nb in (("01_one", one), ("01b_sub", sub), ("02_two", two)):
        (book / f"{name}.ipynb").write_text(json.dumps(nb))
    return book


def test_course_notebook(course, tmp_path):
    ctx = prepare.book_context(course)
    assert ctx.exercises["ex-1-1"] == ("01_one", "1.1", "★ First")
    assert ctx.exercises["ex-1b-1"][1] == "1.3" and ctx.exercises["ex-2-1"][1] == "2.1"
    assert ctx.proofs["thm-a"] == ("01_one", "theorem", "1.1", "(A statement)")
    assert ctx.proofs["thm-p"][2] == ""                       # :nonumber: (a box from the paper)
    assert ctx.proofs["def-a"][1:3] == ("definition", "1.1")
    assert ctx.proofs["thm-b"][2] == "1.2"                   # the section continues chapter 1
    assert ctx.unlabelled[("01_one", "lemma", "")] == "1.1"
    assert ctx.equations == {"one-a": "1.1", "one-b": "1.2", "sub-c": "1.3"}
    assert ctx.docs["engine/x"] == "Inside amp: chapter one"   # not in the toc: still known

    info = prepare.build(course, tmp_path / "out", template=False)
    assert info["chapters"] == ["01_one", "02_two"]
    app = tmp_path / "out" / "app"
    assert (app / "coursekit" / "__init__.py").exists() and (app / "helper.py").exists()
    cells = json.loads((app / "01_one.ipynb").read_text())["cells"]
    srcs = [_src(c) for c in cells]
    md = "\n".join(s for c, s in zip(cells, srcs) if c["cell_type"] == "markdown")
    code = [s for c, s in zip(cells, srcs) if c["cell_type"] == "code"]
    assert "$$\na\n\\tag{1.1}\n$$" in md and "$$\nb\n\\tag{1.2}\n$$" in md
    assert ('<div class="amp-admonition amp-proof-definition" id="def-a">\n\n'
            "**Definition 1.1 (A term; §1)**\n\nA GPARV is a law.") in md
    assert ('<div class="amp-admonition amp-proof-theorem" id="thm-a">\n\n'
            "**Theorem 1.1 (A statement)**\n\nStatement") in md
    assert "**Theorem 9 (§1.1): from the paper**\n\nS." in md
    assert ('<div class="amp-admonition amp-proof">\n\n*Proof.* Easy.\n\n'
            '<p style="text-align: right">∎</p>') in md
    assert "**Lemma 1.1**\n\nAn unlabelled lemma." in md
    assert ("See [Theorem 1.1](#thm-a), [the definition](#def-a), [Exercise 1.2](#ex-1-2), "
            "[Exercise 2.1](02_two.ipynb#ex-2-1), Exercise 1.3, Inside amp: chapter one, "
            "hockey-stick divergence, (1.2), [Exercise 1.1](#ex-1-1).") in md
    assert ('<div class="amp-admonition amp-exercise" id="ex-1-1">\n\n**Exercise 1.1 (★ First)**'
            "\n\nCompute $2$.\n\n</div>") in md
    assert '<div class="amp-admonition amp-exercise" id="ex-1-2">\n\n**Exercise 1.2 (★★ ' in md
    assert "**Summary**" in md and "Rubric" not in md
    assert not any("check(" in s or "answer_1_1" in s for s in code)    # no verdict shown
    assert "%%capture\nimport helper\nfrom coursekit import check" in code
    # the solution's computation right after its folded text: inside that fold (the
    # template's script moves it), not behind a second toggle
    assert ('<details class="amp-dropdown" data-amp-fold-next>\n<summary><b>Solution to '
            "Exercise 1.1 (★ First)</b></summary>\n\nIt is $1 + 1$.\n\n</details>") in srcs
    k = srcs.index("print('worked')")
    assert srcs[k - 1].endswith("</details>") and "data-amp-fold-next" in srcs[k - 1]
    assert not any("_amp_fold_output" in s for s in code)
    assert not any(RAW_MYST.search(s) for s in srcs if not s.startswith("%%"))
    two = "\n".join(_src(c) for c in json.loads((app / "02_two.ipynb").read_text())["cells"])
    assert ('<div class="amp-admonition amp-solution">\n\n'
            "**Solution to Exercise 2.1 (★ Second chapter)**") in two      # not a dropdown
    assert "back to Theorem 1.2 and [Theorem 1.1](01_one.ipynb#thm-a)." in two


def test_shared_proof_counters_follow_the_config(course):
    """sphinx-proof's prf_realtyp_to_countertyp (kinds sharing a counter) is honoured."""
    (course.parent / "_config.yml").write_text(
        "sphinx:\n  config:\n    prf_realtyp_to_countertyp:\n      lemma: theorem\n")
    ctx = prepare.book_context(course)
    assert ctx.proofs["thm-a"][2] == "1.1" and ctx.unlabelled[("01_one", "lemma", "")] == "1.2"
    assert ctx.proofs["thm-b"][2] == "1.3" and ctx.proofs["def-a"][2] == "1.1"


@pytest.mark.parametrize("text, match", [
    ("{eq}`nope`", "unknown equation"), ("{cite}`nope`", "unknown citation"),
    ("{numref}`nope`", "unknown figure"), ("{doc}`nope`", "unknown document"),
    ("{ref}`nope`", "unknown reference"), ("```{note}\nnever closed", "unclosed"),
    ("{prf:ref}`nope`", "unknown theorem"), ("```{solution} nope\n```", "unknown exercise"),
    ("```{exercise} ★ T\n:label: nope\n```", "unknown exercise label"),
    ("```{prf:theorem} T\n:label: nope\n```", "unknown theorem label"),
])
def test_broken_references_raise(text, match):
    with pytest.raises(myst.MystError, match=match):
        myst.convert(text, myst.Context())


def test_unknown_directive_and_role_become_plain():
    out = myst.convert("```{epigraph}\nQuote.\n```\n\n{abbr}`LDP (local DP)` and "
                       "{kbd}`Ctrl` and {math}`x^2`", myst.Context())
    assert '<div class="amp-admonition">' in out and "**Epigraph**" in out
    assert "LDP (local DP) and `Ctrl` and $x^2$" in out


# ------------------------------------------------------------------ slow: the app notebooks run
@pytest.mark.slow
@pytest.mark.parametrize("stem", _book_interactive())
def test_app_notebook_runs(app, stem):
    """Every app notebook runs top to bottom: the removed cells that were left out were not
    needed (nbclient, the kernel of this environment; no Voila)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(app / f"{stem}.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": str(app)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


# ---------------------------------------------------------------------------- slow: Voila
def _voila() -> Path | None:
    for cand in (ROOT / ".venv-live" / "bin" / "voila", ROOT / ".venv" / "bin" / "voila"):
        if cand.exists():
            return cand
    found = shutil.which("voila")
    return Path(found) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_live_server_offline_and_clean(tmp_path):
    """Serve the app with Voila (as ``make live``) and check it in Chromium: no request
    leaves 127.0.0.1, no code, no raw MyST, the calculator busy then done."""
    voila = _voila()
    if voila is None or not Path("/usr/bin/chromium").exists():
        missing = "voila (make lab-venv) or /usr/bin/chromium not installed"
        if os.environ.get("AMP_REQUIRE_LIVE", "") not in ("", "0"):   # make test's live step
            pytest.fail(missing)
        pytest.skip(missing)
    out = tmp_path / "live"
    prepare.build(ROOT / "book", out)
    port = _free_port()
    env = {"JUPYTER_PATH": str(out / "share"), "PATH": str(voila.parent) + ":/usr/bin:/bin",
           "HOME": str(Path.home())}
    cmd = [str(voila.parent / "python"), str(ROOT / "scripts" / "live" / "serve.py"),
           str(out / "app"), "--no-browser", f"--port={port}",
           "--Voila.ip=127.0.0.1", "--template=amp", "--strip_sources=True",
           "--show_tracebacks=False", "--theme=light", "--Voila.mathjax_url=null",
           "--Voila.mathjax_config=null",
           "--VoilaConfiguration.extension_denylist=jupyterlab-myst"]   # as make live
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(60):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        run = subprocess.run([sys.executable, str(ROOT / "scripts" / "live" / "check.py"), base,
                              "--app", str(out / "app"), "--calculator", "--pages", "",
                              "index.ipynb", "01_introduction.ipynb", "10_calculator.ipynb",
                              "--widths", "1280", "390"]
                             + (["--shots", os.environ["AMP_SCREENSHOT_DIR"]]
                                if os.environ.get("AMP_SCREENSHOT_DIR") else []),
                             capture_output=True, text=True, timeout=1200)
        report = [ln for ln in run.stdout.splitlines() if '"problems": []' not in ln]
        assert run.returncode == 0, "\n".join(report)[-4000:] + run.stderr[-2000:]
        assert "external requests: 0" in run.stdout
    finally:
        server.terminate()
        server.wait(timeout=30)


class _FakeBrowser:
    def __init__(self):
        self.contexts = []

    def close(self):
        pass


class _FakePlaywright:
    def __init__(self):
        self.chromium = self

    def launch(self, **_kw):
        return _FakeBrowser()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _check_module():
    from helpers import load_script
    return load_script(ROOT / "scripts" / "live" / "check.py", "live_check")


@pytest.mark.parametrize("timeouts, code, retried", [
    (0, 0, "none"),                              # rendered at once
    (1, 0, "slow.ipynb at 1280 px"),             # one timeout: retried, reported, passes
    (2, 1, "slow.ipynb at 1280 px"),             # two timeouts: fails
])
def test_live_check_retries_a_page_that_timed_out_once(monkeypatch, capsys, tmp_path,
                                                       timeouts, code, retried):
    """scripts/live/check.py: a page that never rendered (playwright's TimeoutError) is tried
    once more and the retry is printed; a second timeout, or any other error, fails."""
    pw = pytest.importorskip("playwright.sync_api")
    mod = _check_module()
    calls = []

    def fake_check_page(browser, base, path, shots, name=None, calculator=False, width=1280,
                        widgets=0):
        calls.append(path)
        if path == "slow.ipynb" and calls.count(path) <= timeouts:
            raise pw.TimeoutError("Timeout 240000ms exceeded.")
        if path == "broken.ipynb":
            raise RuntimeError("boom")
        return {"page": path, "width": width, "problems": [], "external": []}

    monkeypatch.setattr(mod, "check_page", fake_check_page)
    monkeypatch.setattr(pw, "sync_playwright", _FakePlaywright)
    rc = mod.main(["http://127.0.0.1:1", "--app", str(tmp_path), "--pages", "slow.ipynb",
                   "--widths", "1280"])
    out = capsys.readouterr().out
    assert rc == code, out
    assert calls == ["slow.ipynb"] * min(timeouts + 1, 2)
    assert f"retried after a timeout: {retried}" in out
    calls.clear()
    assert mod.main(["http://127.0.0.1:1", "--app", str(tmp_path), "--pages", "broken.ipynb",
                     "--widths", "1280"]) == 1
    assert calls == ["broken.ipynb"]                 # not retried
