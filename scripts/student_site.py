#!/usr/bin/env python3
"""Build the student edition as a static site (``make student-site``): the book's chapters for
students to read, without solutions, hidden checks or sealed answers.

How, and why that way. The student edition (``scripts/student_edition.py``) removes solutions,
hidden checks, answer lines and ``expected=`` arguments from the instructor notebooks. The site
reuses those rules on the notebooks as ``make book`` has just executed them
(``_build/jupyter_execute/book/``) and builds them with execution off, so that

* the figures, tables and printed numbers of the chapters are there (a site of code only would
  lose every figure, and executing the student notebooks again would cost the ~7 minutes of
  ``make book`` and run cells whose answers are ``None``);
* a cell keeps its instructor outputs only when the student edition keeps its source unchanged,
  it calls no ``check(...)`` and it reads no name a removed or rewritten cell may have changed
  (``student_edition.safe_outputs``); every other output is dropped: a solution's computation,
  a check's "right", an answer cell's value never reach a page;
* the widgets are handled as on the main site: the widget cells are tagged ``remove-cell`` and
  the cell tagged ``static-only`` right after each shows the kernel-free figure
  (``book/static_figs.py``, ``book/_static/amp-figures.js``) whose controls work without a
  kernel: no page shows a control that does nothing.

It writes ``<out>/src/`` (a Jupyter Book: ``_config.yml`` from the book's own with the title
"... (student edition)" and ``execute_notebooks: off``, the same ``_toc.yml``, and ``book/`` =
the student notebooks and pages, ``book/_static`` (the same offline assets: MathJax comes from
the pinned ``sphinx-mathjax-offline``, the widgets loader from ``make assets``), ``book/_ext``,
the API reference pages and the bibliography; never ``book/coursekit`` (its ``answers.json``
holds the sealed answers) nor ``book/data``), a preface that says it is the student edition, then
runs ``jupyter-book build`` on it (the same flags as ``make book``: warnings are errors) and puts
the site in ``<out>/html``::

    python scripts/student_site.py                     # -> _build/student-site/html
    python scripts/student_site.py --source-only       # only write _build/student-site/src

``make student-site`` runs this after ``make book``, then ``tests/test_student_site.py -k
built_site`` on the result: every file of the site is searched for the instructor notebooks'
solutions, hidden asserts, verdicts and sealed answers, every page of ``_toc.yml`` and every
exercise must be there, and no page may load anything from the network. The folder
``_build/student-site/html`` is then self-contained: copy it to any static web host.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import student_edition as se  # noqa: E402

OUT = REPO / "_build" / "student-site"
EXECUTED = REPO / "_build" / "jupyter_execute"
#: Folders of book/ copied as they are (Sphinx extensions, theme and offline assets).
COPY_AS_IS = ("_ext", "_static")
#: Folders of book/ that the site must not have (answers.json; data only feeds execution).
NEVER = {"coursekit", "data", "__pycache__", ".ipynb_checkpoints", "_build"}
TITLE_SUFFIX = " (student edition)"
JB_FLAGS = ["-W", "-n", "--keep-going", "--all"]

BANNER = """
:::{admonition} Student edition
:class: important

This is the **student edition** of the book: the same chapters, figures and exercises as the
book's site, without the exercises' solutions, without the book's hidden checks and without the
sealed answers of the check cells; the outputs of the cells that compute an answer are left out
too. To work the computational exercises, run the notebooks of the student edition (your
instructor hands out `amp-course-student.zip`, written by `make student` in the book's
repository): an answer cell and a check cell that says right or not yet, with a hint. Each page's
download button gives that page's notebook (without solutions).
:::
"""


class StaleBuild(RuntimeError):
    """The executed notebooks of ``make book`` are missing or do not match ``book/``."""


def _executed(executed: Path, rel: Path, nb: dict) -> dict:
    """The executed copy of the instructor notebook ``rel``; its code cells must match."""
    path = executed / "book" / rel
    if not path.is_file():
        raise StaleBuild(f"{path} is missing: run `make book` first (it executes the chapters)")
    run = json.loads(path.read_text(encoding="utf-8"))
    mine = [se._source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    theirs = [se._source(c) for c in run["cells"] if c["cell_type"] == "code"]
    if mine != theirs:
        raise StaleBuild(f"{path} does not match book/{rel}: run `make book` again")
    return run


def with_outputs(nb: dict, run: dict) -> dict:
    """The instructor notebook ``nb`` with the outputs of its executed copy ``run``."""
    nb = json.loads(json.dumps(nb))
    outs = iter(c for c in run["cells"] if c["cell_type"] == "code")
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = next(outs).get("outputs", [])
    if "widgets" in run.get("metadata", {}):
        nb["metadata"]["widgets"] = run["metadata"]["widgets"]
    return nb


def preface(text: str) -> str:
    """The preface with the student-edition banner after its title."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("# "))
    lines[at] = lines[at] + TITLE_SUFFIX
    return "\n".join(lines[:at + 1] + BANNER.split("\n") + lines[at + 1:])


def site_config(config: dict) -> dict:
    """The book's ``_config.yml`` for the student site: its title, no execution."""
    config = json.loads(json.dumps(config))
    config["title"] = config["title"] + TITLE_SUFFIX
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    return config


def write_source(book: Path, executed: Path, src: Path) -> se.Stats:
    """Write the student site's Jupyter Book into ``src``; return what was removed."""
    if src.exists():
        shutil.rmtree(src)
    (src / "book").mkdir(parents=True)
    stats = se.Stats()
    for path in sorted(book.rglob("*")):
        rel = path.relative_to(book)
        if not path.is_file() or rel.parts[0] in COPY_AS_IS or NEVER & set(rel.parts):
            continue
        target = src / "book" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            nb = with_outputs(nb, _executed(executed, rel, nb))
            new, st = se.student_notebook(nb, where=rel.as_posix(), keep_outputs=True)
            stats.add(st)
            target.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
        elif path.suffix == ".md":
            text, n, _ = se.strip_solutions(path.read_text(encoding="utf-8"))
            stats.solution_blocks += n
            if rel == Path("intro.md"):
                text = preface(text)
            target.write_text(text, encoding="utf-8")
        elif path.suffix in (".bib", ".css", ".svg", ".png") or path.name == "matplotlibrc":
            shutil.copy2(path, target)
    for d in COPY_AS_IS:
        shutil.copytree(book / d, src / "book" / d,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    root = book.resolve().parent
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    (src / "_config.yml").write_text(
        "# The student site (scripts/student_site.py writes this from the book's _config.yml)\n"
        + yaml.safe_dump(site_config(config), sort_keys=False, allow_unicode=True),
        encoding="utf-8")
    shutil.copy2(root / "_toc.yml", src / "_toc.yml")
    return stats


def build(src: Path, out: Path, jupyter_book: Path) -> Path:
    """``jupyter-book build src`` into ``out/_build``; the site is moved to ``out/html``."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    # autodoc (the API reference) imports amp: the repository's, as for the main site
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    subprocess.run([str(jupyter_book), "build", str(src), "--path-output", str(out),
                    *JB_FLAGS], check=True, env=env)
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    os.replace(out / "_build" / "html", html)
    return html


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--book", type=Path, default=REPO / "book")
    ap.add_argument("--executed", type=Path, default=EXECUTED,
                    help="the executed notebooks of `make book` (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--source-only", action="store_true", help="write <out>/src only")
    ap.add_argument("--jupyter-book", type=Path,
                    default=Path(sys.executable).parent / "jupyter-book")
    args = ap.parse_args(argv)
    t0 = time.time()
    try:
        st = write_source(args.book, args.executed, args.out / "src")
    except StaleBuild as err:
        print(f"student site: {err}", file=sys.stderr)
        return 2
    print(f"student site: source in {args.out / 'src'}: removed {st.solution_blocks} solution "
          f"blocks, {st.solution_cells} solution cells, {st.hidden_asserts} hidden checks, "
          f"{st.expected_args} expected= arguments; outputs kept in {st.outputs_kept} cells, "
          f"dropped in {st.outputs_dropped}")
    for note in st.notes:
        if "outputs dropped" in note:
            print(f"  note: {note}")
    if not args.source_only:
        html = build(args.out / "src", args.out, args.jupyter_book)
        print(f"student site: {html / 'index.html'} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
