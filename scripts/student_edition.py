#!/usr/bin/env python3
"""Write the student edition of the book (``make student``): no solutions, no hidden checks.

The repository's notebooks are the instructor edition. This script copies the book's notebooks
and pages (plus ``book/coursekit``, ``book/data``, ``book/references.bib`` and the ``amp``
package with ``pyproject.toml``, so that the edition runs after ``pip install .``) into
``<out>/<name>/`` and zips that folder into ``<out>/<name>.zip``. In every notebook it

* drops a markdown cell holding a ``{solution}`` directive (only the directive's block when the
  cell holds something else too; a gated ``{solution-start}`` ... ``{solution-end}`` pair with
  the cells between them; an old-style ``{admonition} Solution`` block likewise);
* drops a code cell tagged ``solution``;
* drops a code cell tagged ``remove-cell`` that contains an ``assert`` (a hidden check of the
  book); if a later cell uses a name that only such a cell defines, the cell is kept with its
  ``assert`` statements removed (so that the notebook still runs) and a note is printed;
* rewrites each line of a code cell that ends in ``# solution``: an assignment
  ``name = <expr>  # solution`` (also on several lines) becomes ``name = None  # your answer
  here``; any other such line becomes ``pass  # your answer here``. This is the rule for cells
  tagged ``answer``; a ``# solution`` line in an untagged cell is rewritten too, with a note;
* strips outputs and execution counts.

Markdown pages (``.md``) lose their ``{solution}`` blocks likewise. Standard library only::

    python3 scripts/student_edition.py                      # -> _build/student/
    python3 scripts/student_edition.py --book book --out /tmp/s --name my-course
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = "amp-course-student"
#: Folders of book/ that are not course material (build extensions, theme assets, autodoc pages).
SKIP_DIRS = {"_ext", "_static", "api", "__pycache__", ".ipynb_checkpoints", "_build"}
#: Copied whole (the notebooks import coursekit and read data/).
COPY_DIRS = ("coursekit", "data")
SOLUTION_MARK = re.compile(r"#\s*solution\s*$")
ANSWER_LINE = "None  # your answer here"
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\s*\{(?P<name>[\w:-]+)\}")
_HAS_ASSERT = re.compile(r"\bassert")


@dataclass
class Stats:
    """What was removed or rewritten (summed over files)."""

    solution_blocks: int = 0
    solution_cells: int = 0
    hidden_asserts: int = 0
    hidden_asserts_kept_stripped: int = 0
    answer_lines: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: "Stats") -> None:
        for k in ("solution_blocks", "solution_cells", "hidden_asserts",
                  "hidden_asserts_kept_stripped", "answer_lines"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.notes += other.notes


# ----------------------------------------------------------------------------- markdown
def _block_end(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the fenced block opened at ``start`` (len(lines) if none)."""
    char, width = fence[0], len(fence)
    closing = re.compile(rf"^[ \t]*{re.escape(char)}{{{width},}}[ \t]*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    return len(lines)


def strip_solutions(text: str, gated: bool = False) -> tuple[str, int, bool]:
    """Remove ``{solution}`` blocks (and ``{solution-start}`` ... ``{solution-end}``) from MyST.

    ``gated``: the text starts inside a gated solution (opened in an earlier cell). Returns
    ``(text, blocks removed, open)``: ``open`` is true when a ``{solution-start}`` was not closed
    in this text (a gated solution that continues in the next cells).
    """
    lines = text.split("\n")
    out: list[str] = []
    removed, i = 0, 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        name = m.group("name") if m else None
        if gated:
            if name == "solution-end":
                gated = False
                i = _block_end(lines, i, m.group("fence")) + 1
            else:
                i += 1
            continue
        legacy = (name == "admonition"
                  and lines[i][m.end():].strip().lower().startswith("solution"))
        if name in ("solution", "solution-start") or legacy:
            removed += 1
            end = _block_end(lines, i, m.group("fence"))
            if name == "solution-start":
                gated = True
            i = end + 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), removed, gated


# ----------------------------------------------------------------------------- code
def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def rewrite_answers(src: str) -> tuple[str, int]:
    """Rewrite every statement whose last line ends in ``# solution`` (see the module doc)."""
    lines = src.split("\n")
    if not any(SOLUTION_MARK.search(line) for line in lines):
        return src, 0
    spans: list[tuple[int, int, str]] = []        # (first, last) 0-based lines -> replacement
    try:
        tree = ast.parse(src)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.If,
                                                                 ast.For, ast.While, ast.With,
                                                                 ast.Try, ast.ClassDef,
                                                                 ast.AsyncFunctionDef)):
                continue
            first, last = node.lineno - 1, node.end_lineno - 1
            if not SOLUTION_MARK.search(lines[last]):
                continue
            ind = _indent(lines[first])
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                parts = [", ".join(ast.unparse(e) for e in t.elts)
                         if isinstance(t, (ast.Tuple, ast.List)) else ast.unparse(t)
                         for t in targets]
                first_t = targets[0]        # a, b = expr: one None per name
                value = (", ".join(["None"] * len(first_t.elts))
                         if isinstance(first_t, (ast.Tuple, ast.List)) else "None")
                repl = f"{ind}{' = '.join(parts)} = {value}  # your answer here"
            else:
                repl = f"{ind}pass  # your answer here"
            spans.append((first, last, repl))
    handled = {i for a, b, _ in spans for i in range(a, b + 1)}
    for i, line in enumerate(lines):                # not parsed (magics) or not a statement end
        if SOLUTION_MARK.search(line) and i not in handled:
            m = re.match(r"^(\s*)([A-Za-z_][\w.\[\]'\" ,]*?)\s*=(?!=)", line)
            repl = (f"{m.group(1)}{m.group(2).strip()} = {ANSWER_LINE}" if m
                    else f"{_indent(line)}pass  # your answer here")
            spans.append((i, i, repl))
    for first, last, repl in sorted(spans, reverse=True):
        lines[first:last + 1] = [repl]
    return "\n".join(lines), len(spans)


def _names(src: str) -> tuple[set[str], set[str]]:
    """(names stored, names loaded) by a code cell; empty sets when it does not parse."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set(), set()
    stored, loaded = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (stored if isinstance(n.ctx, (ast.Store, ast.Del)) else loaded).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(n.name)
        elif isinstance(n, ast.arg):
            stored.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return stored, loaded


class _DropAsserts(ast.NodeTransformer):
    """Remove ``assert`` statements (and calls of ``*.assert_*``); keep blocks valid."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for fld in ("body", "orelse", "finalbody"):
            body = getattr(node, fld, None)
            if isinstance(body, list) and fld == "body" and not body and not isinstance(
                    node, ast.Module):
                body.append(ast.Pass())
        return node

    def visit_Assert(self, node: ast.Assert) -> None:
        return None

    def _prune(self, node: ast.AST) -> ast.AST | None:
        """A loop/if/with left with nothing but ``pass`` is dropped."""
        node = self.generic_visit(node)
        only_pass = all(isinstance(s, ast.Pass) for s in node.body + getattr(node, "orelse", []))
        return None if only_pass else node

    visit_For = visit_While = visit_If = visit_With = _prune

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        f = node.value.func if isinstance(node.value, ast.Call) else None
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return None if name.startswith("assert") else node


def strip_asserts(src: str) -> str:
    """The cell without its assertions (comments and layout are lost: ``ast.unparse``)."""
    tree = _DropAsserts().visit(ast.parse(src))
    return ast.unparse(ast.fix_missing_locations(tree))


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)


def student_notebook(nb: dict, where: str = "") -> tuple[dict, Stats]:
    """The student edition of one notebook (a new dict; ``nb`` is not changed)."""
    nb = copy.deepcopy(nb)
    stats = Stats()
    cells = nb.get("cells", [])
    hidden = [c["cell_type"] == "code" and "remove-cell" in _tags(c)
              and bool(_HAS_ASSERT.search(_source(c))) for c in cells]
    # names that later kept code cells need from a hidden-assert cell
    kept_code = [(i, _names(_source(c))) for i, c in enumerate(cells)
                 if c["cell_type"] == "code" and not hidden[i] and "solution" not in _tags(c)]
    out: list[dict] = []
    gated = False
    for i, cell in enumerate(cells):
        src, tags = _source(cell), _tags(cell)
        if gated and cell["cell_type"] != "markdown":  # inside {solution-start} ... -end}
            stats.solution_cells += 1
            continue
        if cell["cell_type"] == "markdown":
            was_gated = gated
            text, n, gated = strip_solutions(src, gated)
            n += was_gated
            if n:
                stats.solution_blocks += n
                if not text.strip():
                    continue
                _set_source(cell, text)
            out.append(cell)
            continue
        if cell["cell_type"] != "code":
            out.append(cell)
            continue
        if "solution" in tags:
            stats.solution_cells += 1
            continue
        if "static-only" in tags:      # the static site's figure (book/static_figs.py): no use
            continue                   # in Jupyter, which runs the widget cell itself
        if hidden[i]:
            stored, _ = _names(src)
            later = set()
            for j, (st, ld) in kept_code:
                if j > i:
                    later |= ld - st
            needed = sorted(stored & later)
            # needed only if no earlier kept cell defines it
            earlier = set().union(*[st for j, (st, _) in kept_code if j < i]) if kept_code else set()
            needed = [x for x in needed if x not in earlier]
            if not needed:
                stats.hidden_asserts += 1
                continue
            _set_source(cell, strip_asserts(src))
            stats.hidden_asserts_kept_stripped += 1
            stats.notes.append(f"{where} cell {i}: hidden check kept without its asserts "
                               f"(later cells use {', '.join(needed)})")
        new, n = rewrite_answers(_source(cell))
        if n:
            stats.answer_lines += n
            if "answer" not in tags:
                stats.notes.append(f"{where} cell {i}: '# solution' line in a cell not tagged "
                                   "'answer' (rewritten anyway)")
            _set_source(cell, new)
        cell["outputs"] = []
        cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
        out.append(cell)
    nb["cells"] = out
    return nb, stats


# ----------------------------------------------------------------------------- the edition
README = """# {title}: student edition

The notebooks of the book without solutions and without the book's hidden checks. Each
computational exercise has an answer cell (`answer_... = None  # your answer here`): replace
`None` with your answer and run the check cell below it; it says right, not yet (with a hint),
or no answer yet.

Install once, from this folder (Python 3.10 or later):

    python3 -m venv .venv && . .venv/bin/activate
    pip install '.[book,rounds]' jupyterlab

then open the notebooks with the kernel started in `book/`:

    cd book && jupyter lab

The exercises' solutions are in the instructor edition (the book's repository).
"""


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints",
                                                            "*.pyc"))


def build(book: Path, out: Path, name: str = NAME, with_package: bool = True,
          zip_it: bool = True) -> tuple[Path, Stats]:
    """Write ``out/name/`` (and ``out/name.zip``); return (folder, stats)."""
    book = Path(book)
    root = Path(out) / name
    if root.exists():
        shutil.rmtree(root)
    (root / "book").mkdir(parents=True)
    stats = Stats()
    for path in sorted(book.rglob("*")):
        rel = path.relative_to(book)
        if (any(part in SKIP_DIRS for part in rel.parts[:-1]) or not path.is_file()
                or rel.parts[0] in COPY_DIRS):
            continue
        target = root / "book" / rel
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            new, st = student_notebook(nb, where=rel.as_posix())
            stats.add(st)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
        elif path.suffix in (".md", ".bib"):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".md":
                text, n, _ = strip_solutions(text)
                stats.solution_blocks += n
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for d in COPY_DIRS:
        if (book / d).is_dir():
            _copy_tree(book / d, root / "book" / d)
    repo = book.resolve().parent
    if with_package and (repo / "amp").is_dir():
        _copy_tree(repo / "amp", root / "amp")
        for f in ("pyproject.toml", "requirements.txt"):
            if (repo / f).is_file():
                shutil.copy2(repo / f, root / f)
    (root / "README.md").write_text(README.format(title="Privacy amplification by shuffling"),
                                    encoding="utf-8")
    if zip_it:
        archive = Path(out) / f"{name}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    info = zipfile.ZipInfo(f.relative_to(out).as_posix(),
                                           date_time=(2025, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    z.writestr(info, f.read_bytes())
    return root, stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--book", type=Path, default=REPO / "book")
    ap.add_argument("--out", type=Path, default=REPO / "_build" / "student")
    ap.add_argument("--name", default=NAME)
    args = ap.parse_args(argv)
    root, st = build(args.book, args.out, args.name)
    archive = args.out / f"{args.name}.zip"
    nbs = len(list((root / "book").rglob("*.ipynb")))
    print(f"student edition: {root} ({nbs} notebooks)")
    print(f"  removed: {st.solution_blocks} solution blocks, {st.solution_cells} solution "
          f"cells, {st.hidden_asserts} hidden checks; rewrote {st.answer_lines} answer lines; "
          f"{st.hidden_asserts_kept_stripped} hidden checks kept without asserts")
    for note in st.notes:
        print(f"  note: {note}")
    if archive.is_file():
        print(f"  zip: {archive} ({archive.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
