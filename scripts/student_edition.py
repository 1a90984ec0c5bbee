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
* removes the ``expected=`` argument of every ``check(...)`` call (it is the solution; the
  student edition's ``coursekit.check`` reads the sealed value from
  ``book/coursekit/answers.json``, recorded by ``make answers``), keeping the rest of the
  call's text; then drops the statements of that cell (assignments, ``def``, imports) whose
  names nothing else in the student notebook uses any more (the helpers of ``expected=``),
  with a note for each;
* strips outputs and execution counts.

The book's own helper modules (``book/<name>.py``) that a student notebook imports are copied
too (``accuracy_figs.py``; not ``static_figs.py``, which only the static site's cells use).

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
COPY_DIRS = ("coursekit", "data", "ampbook")
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
    expected_args: int = 0
    dead_statements: int = 0
    outputs_kept: int = 0             # site mode only (``keep_outputs``): code cells with their
    outputs_dropped: int = 0          # instructor outputs kept / dropped as unsafe
    notes: list[str] = field(default_factory=list)

    def add(self, other: "Stats") -> None:
        for k in ("solution_blocks", "solution_cells", "hidden_asserts",
                  "hidden_asserts_kept_stripped", "answer_lines", "expected_args",
                  "dead_statements", "outputs_kept", "outputs_dropped"):
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


# ----------------------------------------------------------------------------- check cells
def _is_check(node: ast.AST) -> bool:
    """A call of ``check(...)`` or ``coursekit.check(...)``."""
    f = node.func if isinstance(node, ast.Call) else None
    return (isinstance(f, ast.Name) and f.id == "check") or (
        isinstance(f, ast.Attribute) and f.attr == "check")


def _expected_keywords(tree: ast.AST) -> list[tuple[ast.Call, ast.keyword]]:
    return [(n, kw) for n in ast.walk(tree) if _is_check(n)
            for kw in n.keywords if kw.arg == "expected"]


def _char_offsets(src: str):
    """A function (lineno, utf-8 col_offset) -> offset in ``src`` (ast columns are bytes)."""
    lines = src.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def at(lineno: int, col: int) -> int:
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))
    return at


def _without_expected(tree: ast.AST) -> str:
    tree = copy.deepcopy(tree)
    for call, kw in _expected_keywords(tree):
        call.keywords.remove(kw)
    return ast.dump(tree)


def _wrap_call(text: str, indent: str, width: int = 88) -> str:
    """``f(a, b, k=v)`` (one line from ``ast.unparse``) wrapped at top-level commas."""
    depth, quote, parts, cur = 0, "", [], ""
    for ch in text:
        cur += ch
        if quote:
            if ch == quote and not cur.endswith("\\" + ch):
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 1:
            parts.append(cur)
            cur = ""
    parts.append(cur)
    cont = indent + " " * (text.index("(") + 1)
    lines, line = [], indent
    for part in parts:
        if line.strip() and len(line) + len(part.rstrip()) > width:
            lines.append(line.rstrip())
            line = cont + part.lstrip()
        else:
            line += part
    lines.append(line.rstrip())
    return "\n".join(lines)


def remove_expected(src: str) -> tuple[str, int]:
    """The cell without the ``expected=`` keyword of its ``check(...)`` calls (it is the
    solution; the student edition's check reads the sealed answer instead). The text around
    it is kept (a keyword alone on its lines goes with them); if that does not give the same
    code, the statement is written back with ``ast.unparse`` and wrapped at 88 characters."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        if re.search(r"\bcheck\(", src) and re.search(r"\bexpected\s*=", src):
            raise ValueError("a check cell that does not parse (a magic?) still has its "
                             "expected=; the student edition would show the solution:\n"
                             + src) from None
        return src, 0
    found = _expected_keywords(tree)
    if not found:
        return src, 0
    at = _char_offsets(src)
    spans = []
    for call, kw in found:
        items = sorted(call.args + call.keywords, key=lambda n: (n.lineno, n.col_offset))
        k = items.index(kw)
        start, end = at(kw.lineno, kw.col_offset), at(kw.end_lineno, kw.end_col_offset)
        if k + 1 < len(items):
            nxt = at(items[k + 1].lineno, items[k + 1].col_offset)
            between = src[end:nxt]
            if "\n" in between:
                line_start = src.rfind("\n", 0, start) + 1
                pre = src[line_start:start]
                if not pre.strip():                  # alone on its line(s): drop them
                    spans.append((line_start, end + between.rindex("\n") + 1))
                else:                                # "a, expected=x,\n  b": keep "a,"
                    spans.append((start - (len(pre) - len(pre.rstrip())),
                                  end + between.index("\n")))
            else:
                spans.append((start, nxt))
        else:
            prev = items[k - 1]
            spans.append((at(prev.end_lineno, prev.end_col_offset), end))
    new = src
    for a, b in sorted(spans, reverse=True):
        new = new[:a] + new[b:]
    want = _without_expected(tree)
    try:
        same = ast.dump(ast.parse(new)) == want
    except SyntaxError:
        same = False
    if not same:                                     # write the statements back
        lines = src.split("\n")
        stmts = [s for s in tree.body if _expected_keywords(s)]
        for stmt in sorted(stmts, key=lambda s: s.lineno, reverse=True):
            clean = ast.parse(ast.unparse(stmt))
            for call, kw in _expected_keywords(clean):
                call.keywords.remove(kw)
            ind = _indent(lines[stmt.lineno - 1])
            text = ast.unparse(clean)
            if "\n" not in text and "(" in text and len(ind + text) > 88:
                text = _wrap_call(text, ind)
            else:
                text = ind + text
            lines[stmt.lineno - 1:stmt.end_lineno] = text.split("\n")
        new = "\n".join(lines)
        assert ast.dump(ast.parse(new)) == want, "could not remove expected= from:\n" + src
    return new, len(found)


#: Statements that only bind names: dropped from a check cell when nothing uses the names.
_BINDING = (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
            ast.Import, ast.ImportFrom)


def _bound(stmt: ast.stmt) -> set[str] | None:
    """Names a binding statement binds (None: it also does something else, e.g. ``a[i] =``)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names: set[str] = set()
    for t in targets:
        elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        if not all(isinstance(e, ast.Name) for e in elts):
            return None
        names |= {e.id for e in elts}
    return names


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _stored_in(nodes: list[ast.AST]) -> set[str]:
    """Names bound in a function body (not in nested scopes), less ``global``/``nonlocal``."""
    stored, declared, todo = set(), set(), list(nodes)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            declared |= set(n.names)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in n.names}
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(n.name)
            continue                                 # its body is another scope
        if isinstance(n, _SCOPES):
            continue
        todo += list(ast.iter_child_nodes(n))
    return stored - declared


def _loads(node: ast.AST) -> set[str]:
    """Free names a statement reads: a function's parameters and locals, a comprehension's
    targets are not uses of the module-level names."""
    if isinstance(node, ast.Name):
        return set() if isinstance(node.ctx, ast.Store) else {node.id}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        outer = a.defaults + [d for d in a.kw_defaults if d is not None]
        outer += getattr(node, "decorator_list", [])
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
        inner = set().union(*[_loads(b) for b in body]) if body else set()
        free = set().union(set(), *[_loads(o) for o in outer])
        return free | (inner - params - _stored_in(body))
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        targets = {n.id for g in node.generators for n in ast.walk(g.target)
                   if isinstance(n, ast.Name)}
        inner = set().union(*[_loads(c) for c in ast.iter_child_nodes(node)])
        first_iter = _loads(node.generators[0].iter)   # evaluated in the enclosing scope
        return first_iter | (inner - targets)
    return set().union(set(), *[_loads(c) for c in ast.iter_child_nodes(node)])


_WORD = re.compile(r"[A-Za-z_]\w*")


def drop_dead_statements(sources: list[str], candidates: set[int]
                         ) -> tuple[list[str], list[tuple[int, str]]]:
    """Drop top-level statements of the cells ``candidates`` (indices into ``sources``, the
    notebook's code cells) that only bind names no other statement of the notebook uses.

    Repeated until nothing changes (``law = ...; ratios = f(law)``: ``ratios`` first, then
    ``law``). Returns the new sources and ``(cell, first line)`` of each dropped statement.
    Comment lines right above a dropped statement go with it.
    """
    sources = list(sources)
    dropped: list[tuple[int, str]] = []
    while True:
        trees: dict[int, ast.Module | None] = {}
        for i, s in enumerate(sources):
            try:
                trees[i] = ast.parse(s)
            except SyntaxError:
                trees[i] = None                      # magics: count every word as used
        uses = []                                    # (cell, statement or None, names)
        for i, tree in trees.items():
            if tree is None:
                uses.append((i, None, set(_WORD.findall(sources[i]))))
            else:
                uses += [(i, st, _loads(st)) for st in tree.body]
        victim = None
        for i in sorted(candidates):
            tree = trees.get(i)
            for st in tree.body if tree is not None else []:
                names = _bound(st) if isinstance(st, _BINDING) else None
                if not names:
                    continue
                used = set().union(*[n for j, other, n in uses if other is not st])
                shares_line = any(o is not st and o.lineno <= st.end_lineno
                                  and o.end_lineno >= st.lineno for o in tree.body)
                if not names & used and not shares_line:
                    victim = (i, st)
                    break
            if victim:
                break
        if victim is None:
            return sources, dropped
        i, st = victim
        lines = sources[i].split("\n")
        first, last = st.lineno - 1, st.end_lineno - 1
        dropped.append((i, lines[first].strip()))
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        del lines[first:last + 1]
        if 0 < first < len(lines) and not lines[first].strip() and not lines[first - 1].strip():
            del lines[first]
        while lines and not lines[0].strip():
            del lines[0]
        while lines and not lines[-1].strip():
            del lines[-1]
        sources[i] = "\n".join(lines)


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)


def student_notebook(nb: dict, where: str = "", keep_outputs: bool = False
                     ) -> tuple[dict, Stats]:
    """The student edition of one notebook (a new dict; ``nb`` is not changed).

    ``keep_outputs`` (the student *site*, ``scripts/student_site.py``, whose ``nb`` is the
    instructor notebook as ``make book`` executed it): the cells tagged ``static-only`` (the
    static site's figures) are kept, and a code cell keeps its outputs only when
    :func:`safe_outputs` finds them free of anything the student edition removes.
    """
    nb = copy.deepcopy(nb)
    stats = Stats()
    cells = nb.get("cells", [])
    hidden = [c["cell_type"] == "code" and "remove-cell" in _tags(c)
              and bool(_HAS_ASSERT.search(_source(c))) for c in cells]
    # names that later kept code cells need from a hidden-assert cell
    kept_code = [(i, _names(remove_expected(_source(c))[0])) for i, c in enumerate(cells)
                 if c["cell_type"] == "code" and not hidden[i] and "solution" not in _tags(c)]
    out: list[dict] = []
    checked: set[int] = set()          # cells of `out` whose check calls lost expected=
    origin: dict[int, int] = {}        # index in `out` -> index in the instructor notebook
    gated = False
    original = [_source(c) for c in cells]    # before any rewriting (for keep_outputs)
    saved: dict[int, list] = {}               # index in `out` -> the cell's instructor outputs
    stripped: set[int] = set()                # indices in `out`: hidden checks without asserts
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
        if "static-only" in tags and not keep_outputs:  # the static site's figure
            continue                   # (book/static_figs.py): Jupyter runs the widget itself
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
            stripped.add(len(out))
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
        new, n = remove_expected(_source(cell))
        if n:
            stats.expected_args += n
            _set_source(cell, new)
            checked.add(len(out))
        origin[len(out)] = i
        saved[len(out)] = cell.get("outputs", [])
        cell["outputs"] = []
        cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
        out.append(cell)
    # statements of a check cell that only fed its expected= (helpers, tables, imports) and
    # that nothing else in the student notebook uses
    code_at = [k for k, c in enumerate(out) if c["cell_type"] == "code"]
    srcs, dead = drop_dead_statements([_source(out[k]) for k in code_at],
                                      {code_at.index(k) for k in checked})
    for j, k in enumerate(code_at):
        if srcs[j] != _source(out[k]):
            _set_source(out[k], srcs[j])
    for j, first in dead:
        stats.dead_statements += 1
        stats.notes.append(f"{where} cell {origin[code_at[j]]}: dropped `{first[:60]}` "
                           "(used only by the check's expected=)")
    if keep_outputs:
        kept = {origin[k]: k for k in code_at}
        student = {i: _source(out[k]) for i, k in kept.items()}
        why: dict[int, str] = {}
        safe = safe_outputs(cells, original, student, {origin[k] for k in stripped},
                            {i for i, h in enumerate(hidden) if h}, why)
        for i, k in kept.items():
            if i in safe and saved[k]:
                out[k]["outputs"] = saved[k]
                stats.outputs_kept += 1
            elif saved[k]:
                stats.outputs_dropped += 1
                stats.notes.append(f"{where} cell {i}: outputs dropped ({why.get(i, '?')})")
    nb["cells"] = [c for c in out if c["cell_type"] != "code" or _source(c).strip()]
    return nb, stats


def _taint_names(src: str, modules: set[str]) -> tuple[set[str], set[str]]:
    """(names a cell may change, names it reads before binding them), for :func:`safe_outputs`.

    Changed: names bound, bases of ``x[i] = ...`` / ``x.a = ...``, receivers of a method call
    that is a statement of its own (``x.append(...)``, ``x.sort()``: called for its effect; a
    call whose value is used, ``y = x.f(...)`` or ``assert x.f(...)``, is taken as a read), less
    imported modules. A cell that does not parse (a magic): every
    word is read and changed.
    """
    try:
        tree = ast.parse(src)
    except SyntaxError:
        words = set(_WORD.findall(src))
        return words - modules, words
    stored, _ = _names(src)
    loaded: set[str] = set()               # read before the cell binds them itself
    bound: set[str] = set()
    for stmt in tree.body:
        loaded |= _loads(stmt) - bound
        bound |= _names(ast.unparse(stmt))[0]
    for n in ast.walk(tree):
        target = None
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
            target = n.value
        elif (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
              and isinstance(n.value.func, ast.Attribute)):
            target = n.value.func.value
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            stored.add(target.id)
    return stored - modules, loaded


def safe_outputs(cells: list[dict], original: list[str], student: dict[int, str],
                 stripped: set[int], checks: set[int] = frozenset(),
                 why: dict[int, str] | None = None) -> set[int]:
    """Indices of the instructor code cells whose outputs the student site may show.

    ``original``: every cell's instructor source; ``student``: index -> the source the student
    edition keeps (cells it drops are absent); ``stripped``: hidden checks kept without their
    asserts; ``checks``: the hidden checks (dropped or stripped). In notebook order, a name is
    *tainted* once a dropped solution (a cell tagged ``solution``, gated solution code) or a
    rewritten cell (answer lines, ``expected=`` removed) may have changed it. A dropped hidden
    check taints nothing: it asserts what the chapter shows, and the student edition drops it
    only when no later cell needs a name it binds first (its loop variables may rebind an
    earlier name, as on the main site, whose outputs these are). A cell's outputs are safe when
    the student keeps its source unchanged, it calls no ``check(...)``, and it reads no tainted
    name; its own bindings are then clean again. Anything else is unsafe and taints what it
    may change (a hidden check kept without its asserts computes the same values: its outputs
    go, its names stay clean). ``why``, if given, receives the reason of each unsafe kept cell.
    """
    modules: set[str] = set()
    for src in original:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                modules |= {(a.asname or a.name).split(".")[0] for a in n.names}
    tainted: set[str] = set()
    safe: set[int] = set()
    why = {} if why is None else why
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        changed, read = _taint_names(original[i], modules)
        if i in stripped:
            why[i] = "a hidden check kept without its asserts"
            continue
        if i in checks and i not in student:
            continue
        try:
            calls_check = any(_is_check(n) for n in ast.walk(ast.parse(original[i])))
        except SyntaxError:
            calls_check = bool(re.search(r"\bcheck\(", original[i]))
        if (i in student and student[i] == original[i] and not calls_check
                and not read & tainted):
            safe.add(i)
            tainted -= _names(original[i])[0]
            continue
        tainted |= changed
        if i in student:
            why[i] = ("changed for the student" if student[i] != original[i] else
                      "calls check()" if calls_check else
                      "reads " + ", ".join(sorted(read & tainted)[:4]) +
                      " (changed by a removed or rewritten cell)")
    return safe


# ----------------------------------------------------------------------------- the edition
README = """# {title}: student edition

The notebooks of the book without solutions and without the book's hidden checks. Each
computational exercise has an answer cell (`answer_... = None  # your answer here`): replace
`None` with your answer and run the check cell below it; it says right, not yet (with a hint),
or no answer yet.

Install once, from this folder (Python 3.10 or later):

    python3 -m venv .venv && . .venv/bin/activate
    pip install -r requirements.txt -r requirements-lab.txt && pip install -e .

(the book's pinned set: JupyterLab 4 with jupyterlab-myst, so that exercises, proofs and
figures render as on the book's site, and ipywidgets for the live figures), then open the
notebooks with the kernel started in `book/`, on this machine only:

    cd book && jupyter lab --ServerApp.ip=127.0.0.1

The exercises' solutions are in the instructor edition (the book's repository).
"""


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints",
                                                            "*.pyc"))


def _imports(nb: dict) -> set[str]:
    """Top-level module names imported by the code cells of a notebook."""
    names: set[str] = set()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                names |= {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
                names.add(n.module.split(".")[0])
    return names


def build(book: Path, out: Path, name: str = NAME, with_package: bool = True,
          zip_it: bool = True) -> tuple[Path, Stats]:
    """Write ``out/name/`` (and ``out/name.zip``); return (folder, stats)."""
    book = Path(book)
    root = Path(out) / name
    if root.exists():
        shutil.rmtree(root)
    (root / "book").mkdir(parents=True)
    stats = Stats()
    imported: set[str] = set()             # top-level modules the student notebooks import
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
            imported |= _imports(new)
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
    for mod in sorted(imported):            # the book's helper modules (accuracy_figs.py)
        if (book / f"{mod}.py").is_file():
            shutil.copy2(book / f"{mod}.py", root / "book" / f"{mod}.py")
    repo = book.resolve().parent
    if with_package and (repo / "amp").is_dir():
        _copy_tree(repo / "amp", root / "amp")
        for f in ("pyproject.toml", "requirements.txt", "requirements-lab.txt"):
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
          f"{st.hidden_asserts_kept_stripped} hidden checks kept without asserts; removed "
          f"{st.expected_args} expected= arguments of check calls (sealed in "
          f"book/coursekit/answers.json) and {st.dead_statements} statements only they used")
    for note in st.notes:
        print(f"  note: {note}")
    if archive.is_file():
        print(f"  zip: {archive} ({archive.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
