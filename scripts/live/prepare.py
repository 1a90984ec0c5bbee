"""Build the live app of the book (``make live``): app notebooks, landing page, Voila template.

Usage::

    python scripts/live/prepare.py [--book book] [--out _build/live]

writes

* ``OUT/app/NN_name.ipynb``: every interactive chapter (one with a widget cell), rewritten for
  Voila: MyST converted (:mod:`myst`), cells tagged ``static-only`` or ``remove-cell`` removed
  (a removed code cell that defines something later cells use still runs, silently; a hidden
  check, a removed cell with an ``assert``, is left out unless later cells read its names),
  ``remove-output`` cells run silently, ``hide-output`` / ``hide-cell`` outputs folded behind a
  "Show output" toggle, figure captions and numbers of the book under their figures, outputs
  cleared. Voila hides every code input (``--strip_sources=True``, the default). Course cells
  (``book/coursekit``): answer cells (tag ``answer``) and the ``check(...)`` statements of check
  cells are for a notebook the reader edits, so the app shows no verdict (what later cells
  need still runs, silently); a code cell tagged ``solution`` has its output folded behind a
  toggle, like the solution text above it. A ``solution`` / ``hide-output`` cell right after a
  fold (a solution or dropdown) has no toggle of its own: its output goes inside that fold
  (one fold; :func:`mark_fold_next` and the template's script). Exercises, solutions,
  theorems and their references are numbered as the site numbers them (:func:`book_context`,
  :mod:`myst`). The page's title (the browser tab) is the chapter's number and title.
* ``OUT/app/index.ipynb``: the landing page, one line per interactive chapter.
* beside them, links to what the chapters import or read: ``data``, ``_static``,
  ``coursekit`` (``from coursekit import check``), the book's modules (``book/*.py``), and
  ``OUT/scripts`` (read as ``../scripts``).
* ``OUT/share/voila/templates/amp/``: the Voila template (``scripts/live/template``): Voila's
  "lab" template without its CDN stylesheets, and a server root that opens the landing page.
  (MathJax: ``make live`` passes ``--Voila.mathjax_url=null --Voila.mathjax_config=null``,
  which makes Voila's frontend use the MathJax 3 bundled in its own JavaScript instead of
  loading MathJax 2 from cdnjs.)

A *widget cell* is a code cell whose last statement calls a function named ``*_widget`` (or a
cell tagged ``live-only``): the book removes it (``remove-cell``: no kernel on the static site);
the app keeps its output. This script needs only the standard library, PyYAML and pybtex (it
runs in the test environment, without Voila).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from myst import PROOF_KINDS, Context, MystError, convert, scan  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = Path(__file__).resolve().parent / "template"
TEMPLATE_NAME = "amp"

REMOVE_CELL, REMOVE_INPUT, REMOVE_OUTPUT = "remove-cell", "remove-input", "remove-output"
HIDE_OUTPUT = ("hide-output", "hide-cell")
STATIC_ONLY, LIVE_ONLY = "static-only", "live-only"
ANSWER, SOLUTION = "answer", "solution"          # course cells (book/coursekit, make student)
SOLUTION_TOGGLE = "Show the output of the solution's computation"
#: What the chapters import or read next to them (book/...): linked into the app directory.
BESIDE = ("data", "_static", "coursekit")
#: Repository folders the chapters read as ``../NAME`` (hidden checks): linked beside the app.
UPWARD = ("scripts",)
#: What each widget of ampbook lets the reader do (the landing page's second column); a chapter
#: whose widget is not listed gets its first learning goal instead.
WIDGET_LINES = {
    "eps_vs_n_widget": "the central ε against the number of users n: choose the mechanism, ε₀, "
                       "the range of n and δ; add certified points",
    "gparv_widget": "the atoms of the GPARV of a Table 1 mechanism: move ε₀ and ε",
    "joint_widget": "k-joint versions at a chosen total ε₀ and n: which k is best",
    "experiments_widget": "one panel of Figures 2 and 3: choose the mechanism, the regime and "
                          "the groups of curves",
    "calculator_widget": "the calculator: certified ε for your mechanism, n, δ and ε₀, or the "
                         "largest ε₀ for a target (ε, δ), with the equivalent command line",
    "rounds_widget": "many rounds and sampled clients: amp's certified band for another "
                     "mechanism, ε₀, n and sampling rate",
}

__all__ = ["book_context", "is_widget_cell", "prepare_notebook", "landing_page", "build", "main"]


# ------------------------------------------------------------------------------- the book
def _tags(cell: dict) -> set:
    return set(cell.get("metadata", {}).get("tags", []))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def chapters(book: Path) -> list[tuple[str, str | None]]:
    """``(stem, chapter number or None)`` in the order of ``_toc.yml`` (numbered parts count).
    A section of a numbered chapter (``03b_stronger_clone`` under chapter 3) has its chapter's
    number: the site numbers its equations, figures, exercises and theorems on from the
    chapter's (Exercise 3.5 after Exercises 3.1-3.4; Sphinx's numfig_secnum_depth = 1)."""
    import yaml

    toc = yaml.safe_load((book.parent / "_toc.yml").read_text(encoding="utf-8"))
    out: list[tuple[str, str | None]] = []
    number = 0

    def walk(entries, numbered, parent=None):
        nonlocal number
        for e in entries or []:
            chapter = parent
            if "file" in e:       # the path below book/: "01_introduction", "api/index"
                stem = str(Path(e["file"]).relative_to(book.name))
                if numbered and parent is None:
                    number += 1
                    chapter = str(number)
                out.append((stem, chapter))
            walk(e.get("sections"), numbered, chapter if numbered else None)
    out.append((str(Path(toc["root"]).relative_to(book.name)), None))
    for part in toc.get("parts", []):
        walk(part.get("chapters"), bool(part.get("numbered")))
    return out


def citation_labels(bib: Path) -> dict:
    """bibtex key -> "Balle et al., 2019" (as the book's ``amp_authoryear`` style labels)."""
    from collections import Counter

    from pybtex.database import parse_file
    from pybtex.richtext import Text

    def plain(latex: str) -> str:
        return Text.from_latex(latex).render_as("text")

    entries = parse_file(str(bib)).entries
    base = {}
    for key, e in entries.items():
        persons = e.persons.get("author") or e.persons.get("editor") or []
        names = [plain(" ".join(p.prelast_names + p.last_names)) for p in persons]
        year = e.fields.get("year", "n.d.")
        who = (key if not names else names[0] if len(names) == 1 else
               f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} et al.")
        base[key] = (f"{who}, {year}", plain(e.fields.get("title", "")))
    counts = Counter(label for label, _ in base.values())
    labels, seen = {}, Counter()
    for key, (label, _title) in sorted(base.items(), key=lambda kv: kv[1]):
        if counts[label] > 1:
            seen[label] += 1
            labels[key] = label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
        else:
            labels[key] = label
    return labels


def _load(book: Path, stem: str) -> tuple[str, dict | str] | None:
    nb, md = book / f"{stem}.ipynb", book / f"{stem}.md"
    if nb.exists():
        return "ipynb", json.loads(nb.read_text(encoding="utf-8"))
    if md.exists():
        return "md", md.read_text(encoding="utf-8")
    return None


def _kept(cell: dict) -> bool:
    """Rendered by the static book (its numbers count)."""
    return not (_tags(cell) & {REMOVE_CELL, STATIC_ONLY})


def _title_of(texts: list[str], stem: str) -> str:
    return next((m.group(1).strip() for t in texts
                 for m in [re.search(r"^#\s+(.+)$", t, re.M)] if m), stem)


def _texts(kind: str, content) -> tuple[list[str], list[dict]]:
    """The rendered Markdown texts and the figure metadata of a page, in order."""
    if kind == "md":
        return [content], []
    cells = [c for c in content["cells"] if _kept(c)]
    texts = [_source(c) for c in cells if c["cell_type"] == "markdown"]
    figs = [c["metadata"]["mystnb"]["figure"] for c in cells
            if c["cell_type"] == "code" and "figure" in c.get("metadata", {}).get("mystnb", {})]
    return texts, figs


def _proof_counters(book: Path) -> dict:
    """sphinx-proof's ``prf_realtyp_to_countertyp`` from ``_config.yml`` (kinds that share a
    counter, e.g. ``{"lemma": "theorem"}``); empty by default: one counter per kind."""
    import yaml

    config = book.parent / "_config.yml"
    if not config.exists():
        return {}
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    mapping = ((data.get("sphinx") or {}).get("config") or {}).get("prf_realtyp_to_countertyp")
    return dict(mapping) if isinstance(mapping, dict) else {}


def book_context(book: Path) -> Context:
    """Labels, numbers, titles and citations of the whole book (cross-references work across
    chapters). The app set is filled by :func:`build`.

    Numbering follows the site (Sphinx numfig, ``numfig_secnum_depth`` 1): per chapter, one
    counter per kind of object, over the chapter's pages in ``_toc.yml`` order (a section page
    such as 3.3 continues its chapter): labelled equations (``$$ ... $$ (label)`` and
    ``{math}`` with ``:label:``; nothing else shifts them), figures, exercises, and each
    sphinx-proof kind (Theorem 5.1, Lemma 5.1, Definition 5.1 ... count separately, unless
    ``prf_realtyp_to_countertyp`` in ``_config.yml`` makes kinds share a counter;
    ``{prf:proof}`` and ``:nonumber:`` objects are not numbered). Pages outside numbered parts
    share one counter without a prefix, as in Sphinx."""
    from collections import Counter

    ctx = Context()
    counters: dict = {}
    shared = _proof_counters(book)
    for stem, number in chapters(book):
        loaded = _load(book, stem)
        if loaded is None:
            continue
        kind, content = loaded
        texts, figs = _texts(kind, content)
        ctx.docs[stem] = _title_of(texts, stem)
        prefix = f"{number}." if number else ""
        count = counters.setdefault(number, Counter())

        def next_number(what: str) -> str:
            count[what] += 1
            return f"{prefix}{count[what]}"

        for t in texts:
            for name, arg, options in scan(t):
                base = name.split(":")[-1]
                label = options.get("label", "").strip()
                if name == "equation" or (base == "math" and label):
                    ctx.equations[label or arg] = next_number("equation")
                elif base == "exercise" or (name.startswith("prf:") and base in PROOF_KINDS):
                    counter = base if base == "exercise" else shared.get(base, base)
                    num = "" if "nonumber" in options else next_number(counter)
                    if base == "exercise":
                        entry = (stem, num, arg)
                        table = ctx.exercises
                    else:
                        entry = (stem, base, num, arg)
                        table = ctx.proofs
                    if label:
                        table[label] = entry
                    else:
                        ctx.unlabelled.setdefault((stem, base, arg), num)
            for m in re.finditer(r"^\(([\w:.-]+)\)=[ \t]*\n+#+\s+(.+)$", t, re.M):
                ctx.sections[m.group(1)] = (stem, m.group(2).strip())
        for fig in figs:
            num = next_number("figure")
            if fig.get("name"):
                ctx.figures[fig["name"]] = num
    # pages not (yet) in _toc.yml: known by title, so that {doc} to them reads as text
    for path in sorted(list(book.rglob("*.md")) + list(book.rglob("*.ipynb"))):
        rel = path.relative_to(book)
        if any(part.startswith(("_", ".")) for part in rel.parts):
            continue
        stem = str(rel.with_suffix(""))
        if stem not in ctx.docs:
            loaded = _load(book, stem)
            if loaded is not None:
                ctx.docs[stem] = _title_of(_texts(*loaded)[0], stem)
    ctx.citations = citation_labels(book / "references.bib")
    return ctx


# ---------------------------------------------------------------------------- code cells
def _python(source: str) -> ast.Module | None:
    """The cell's Python (IPython magics and shell lines blanked), or None if unparsable."""
    text = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                     for ln in source.split("\n"))
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _widget_name(cell: dict) -> str:
    tree = _python(_source(cell))
    last = tree.body[-1] if tree is not None and tree.body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        return ""
    f = last.value.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def is_widget_cell(cell: dict) -> bool:
    """A code cell whose last statement calls ``*_widget(...)``, or tagged ``live-only``."""
    if cell["cell_type"] != "code":
        return False
    if LIVE_ONLY in _tags(cell):
        return True
    return _widget_name(cell).endswith("_widget")


def _names(tree: ast.Module) -> tuple[set, set]:
    """(names bound, names loaded) anywhere in the cell."""
    bound, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound, loaded


def _targets(node: ast.AST) -> set:
    """Names bound by an assignment target, an import, a def/class or a with/for target."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
    return names


def _free(body: list, bound: set) -> set:
    """Names a statement sequence may read before it binds them (its inputs from earlier
    cells). Conservative: a name bound only inside a branch or loop body still counts as
    unbound after it, and every name read inside a def, lambda or comprehension counts."""
    free: set = set()
    bound = set(bound)

    def loads(node: ast.AST | None) -> set:
        if node is None:
            return set()
        return {n.id for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    for st in body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in st.names}
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            free |= loads(st) - bound
            bound.add(st.name)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            free |= loads(st.value) - bound
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                free |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Load)} - bound
                bound |= _targets(t)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            free |= loads(st.iter) - bound
            free |= _free(st.body, bound | _targets(st.target))
            free |= _free(st.orelse, bound)
        elif isinstance(st, (ast.If, ast.While)):
            free |= loads(st.test) - bound
            free |= _free(st.body, bound) | _free(st.orelse, bound)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            inner = set(bound)
            for item in st.items:
                free |= loads(item.context_expr) - bound
                if item.optional_vars is not None:
                    inner |= _targets(item.optional_vars)
            free |= _free(st.body, inner)
        else:                               # AugAssign reads its target; try, assert, expr...
            free |= loads(st) - bound
            if isinstance(st, ast.AugAssign):
                free |= _targets(st.target) - bound
    return free


def _droppable(tree: ast.Module | None, needed: set) -> bool:
    """A removed cell may be left out when it binds nothing later cells read and has no side
    effect we can see (no bare call, no attribute/item assignment, no del/global)."""
    if tree is None:
        return False
    bound, _ = _names(tree)
    if bound & needed:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            return False
        if isinstance(node, (ast.Delete, ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            return False
    return True


def _hidden_check(cell: dict, tree: ast.Module | None, needed: set) -> bool:
    """A hidden check of the book (a ``remove-cell`` code cell with an ``assert``) that binds
    nothing later cells read: the app leaves it out, side effects and all, as the student
    edition does (``scripts/student_edition.py``). Nobody sees its verdict in the app, and
    such checks recompute what the page loads precomputed (the instructor's nbval run still
    runs them), so running them would only delay the page's opening."""
    if tree is None or REMOVE_CELL not in _tags(cell):
        return False
    if not any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        return False
    bound, _ = _names(tree)
    return not bound & needed


def _code(source: str, tags: list | None = None) -> dict:
    return {"cell_type": "code", "id": "", "execution_count": None, "outputs": [],
            "source": source,
            "metadata": {"tags": tags or [], "jupyter": {"source_hidden": True}}}


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "id": "", "metadata": {}, "source": source}


def _is_check_call(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    f = node.value.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "check"


def _strip_checks(source: str) -> tuple[str, bool]:
    """A check cell without its ``check(...)`` statements (``coursekit.check``: the app has no
    answer cell a reader could edit), and whether there were any."""
    tree = _python(source)
    if tree is None:
        return source, False
    spans = [(st.lineno, st.end_lineno) for st in tree.body if _is_check_call(st)]
    if not spans:
        return source, False
    lines = source.split("\n")
    drop = {k for a, b in spans for k in range(a - 1, b)}
    return "\n".join(ln for k, ln in enumerate(lines) if k not in drop).strip("\n"), True


FOLD_NEXT = "data-amp-fold-next"
APP_NAME = "amp live book"


def mark_fold_next(text: str) -> str | None:
    r"""A Markdown cell that ends with a fold (``<details>...</details>``, a solution or a
    dropdown) with that fold marked ``data-amp-fold-next``: the template's script moves the
    next cell (the fold's computation, tagged ``solution`` / ``hide-output``) inside it, so
    the reader sees one fold and not a second "Show output" one. None if the cell does not
    end with a fold.

    Examples
    --------
    >>> mark_fold_next("Text.\n\n<details class='x'><summary>S</summary>A</details>")
    "Text.\n\n<details class='x' data-amp-fold-next><summary>S</summary>A</details>"
    >>> mark_fold_next("<details>...</details>\n\nA closing paragraph.") is None
    True
    """
    body = text.rstrip()
    if not body.endswith("</details>"):
        return None
    depth = 0
    for m in reversed(list(re.finditer(r"<details\b|</details>", body))):
        depth += 1 if m.group(0) == "</details>" else -1
        if depth == 0:
            end = body.index(">", m.end())            # the end of the opening tag
            return body[:end] + f" {FOLD_NEXT}" + body[end:]
    return None


def plain_title(title: str) -> str:
    r"""A page title as plain text (a browser tab shows no Markdown): code spans, emphasis and
    math delimiters dropped.

    Examples
    --------
    >>> plain_title(r"How `amp.rounds` composes $\varepsilon_0$ **fast**")
    'How amp.rounds composes ε₀ fast'
    """
    text = re.sub(r"`+([^`]*)`+", r"\1", title)
    text = re.sub(r"\*\*?([^*]+)\*\*?", r"\1", text)
    for tex, uni in (("\\varepsilon", "ε"), ("\\epsilon", "ε"), ("\\delta", "δ"),
                     ("\\gamma", "γ"), ("_0", "₀"), ("\\,", " ")):
        text = text.replace(tex, uni)
    return re.sub(r"\s+", " ", text.replace("$", "")).strip()


def prepare_notebook(nb: dict, ctx: Context, stem: str = "", number: str | None = None) -> dict:
    """The app version of one chapter (see the module docstring). ``stem`` names the chapter
    (references to its own labels become ``#label`` links; its title, after ``number.``,
    becomes the page's title in the browser tab)."""
    ctx.current = stem
    cells = [c for c in nb["cells"] if STATIC_ONLY not in _tags(c)]
    # 0. checked answers: answer cells (tag "answer") and the check(...) statements after them
    #    are for a notebook the reader edits; the app (code hidden) runs what later cells need,
    #    silently, and shows no verdict
    sources, silent = [], []
    for c in cells:
        src = _source(c)
        quiet = False
        if c["cell_type"] == "code" and not is_widget_cell(c):
            src, had_checks = _strip_checks(src)
            quiet = had_checks or ANSWER in _tags(c)
        sources.append(src)
        silent.append(quiet)
    # 1. which removed code cells can be left out: walk backwards, tracking the names that
    #    later kept cells read
    needed: set = set()
    unparsable = False
    keep: list[bool] = [True] * len(cells)
    for i in range(len(cells) - 1, -1, -1):
        c = cells[i]
        if c["cell_type"] != "code":
            continue
        if not sources[i].strip():
            keep[i] = False
            continue
        tree = _python(sources[i])
        removable = (REMOVE_CELL in _tags(c) or silent[i]) and not is_widget_cell(c)
        if removable and (_droppable(tree, needed) or _hidden_check(c, tree, needed)):
            keep[i] = False
            continue
        if tree is None:      # an unparsable kept cell: keep every cell before it
            unparsable = True
            continue
        needed |= _free(tree.body, set())
    if unparsable:
        keep = [True] * len(cells)

    out: list[dict] = []
    fold = 0
    fig_count = 0
    for c, kept, src, quiet in zip(cells, keep, sources, silent):
        tags = _tags(c)
        if c["cell_type"] == "markdown":
            if REMOVE_CELL in tags:
                continue
            text = convert(src, ctx).strip()
            if text:
                out.append(_markdown(text))
            continue
        if c["cell_type"] != "code" or not kept:
            continue
        src = src.rstrip()
        if is_widget_cell(c):
            out.append(_code(src, ["widget"]))
            continue
        if tags & {REMOVE_CELL, REMOVE_OUTPUT} or quiet:
            out.append(_code("%%capture\n" + src))
            continue
        if tags & ({SOLUTION} | set(HIDE_OUTPUT)) and out and out[-1]["cell_type"] == "markdown":
            merged = mark_fold_next(out[-1]["source"])
            if merged is not None:            # right after a fold (a solution, a dropdown):
                out[-1]["source"] = merged    # its output goes inside that fold (one fold;
                out.append(_code(src))        # the template's script moves it there)
                continue
        if SOLUTION in tags:                  # a solution's computation: folded, as its text
            fold += 1
            var = f"_amp_folded_{fold}"
            out.append(_code(f"%%capture {var}\n{src}"))
            out.append(_code("from ampbook.widgets import fold_output as _amp_fold_output\n"
                             f"_amp_fold_output({var}, title={SOLUTION_TOGGLE!r})"))
            continue
        if tags & set(HIDE_OUTPUT):
            fold += 1
            var = f"_amp_folded_{fold}"
            out.append(_code(f"%%capture {var}\n{src}"))
            out.append(_code("from ampbook.widgets import fold_output as _amp_fold_output\n"
                             f"_amp_fold_output({var})"))
        else:
            out.append(_code(src))
        fig = c.get("metadata", {}).get("mystnb", {}).get("figure")
        if fig and fig.get("caption"):
            fig_count += 1
            fig_number = ctx.figures.get(fig.get("name", ""), None)
            head = f"Fig. {fig_number}" if fig_number else "Figure"
            caption = convert(fig["caption"], ctx).strip()
            out.append(_markdown(f'<div class="amp-caption">\n\n**{head}.** {caption}\n\n'
                                 "</div>"))
    for k, cell in enumerate(out):
        cell["id"] = f"amp-live-{k}"
    app = {"cells": out, "metadata": copy.deepcopy(nb.get("metadata", {})),
           "nbformat": nb.get("nbformat", 4), "nbformat_minor": nb.get("nbformat_minor", 5)}
    app["metadata"]["amp_live"] = {"generated_by": "scripts/live/prepare.py"}
    # the browser tab (nbconvert's <title> and Voila's "Running ..." line): the chapter's
    # title, not the file name
    if stem:
        title = plain_title(ctx.docs.get(stem, stem))
        app["metadata"]["title"] = f"{number + '. ' if number else ''}{title} · {APP_NAME}"
    return app


# ------------------------------------------------------------------------------ landing
def _summary(nb: dict) -> str:
    """One line about a chapter: the first item of its "In this chapter you will learn" list
    (continuation lines included), or the first sentence of its first paragraph."""
    first = _source(nb["cells"][0]) if nb["cells"] else ""
    m = re.search(r"^- (.+(?:\n[ \t]+.+)*)", first, re.M)
    if m:
        line = m.group(1)
    else:
        paras = [p for p in first.split("\n\n")[1:] if p.strip() and not p.startswith("#")]
        line = paras[0].split(". ")[0] if paras else ""
    return re.sub(r"\s+", " ", line).strip().rstrip(";.")


def landing_page(entries: list[tuple[str, str | None, str, str]], ctx: Context) -> dict:
    """``index.ipynb``: one line per interactive chapter ``(stem, number, title, line)``."""
    lines = ["# Privacy amplification by shuffling: the live book", "",
             "The interactive chapters of the book, each with a live kernel: move the controls "
             "and the figures and certified bounds are recomputed on this machine. Code is "
             "hidden; everything runs locally (nothing is requested from the internet). A "
             "chapter takes a few seconds to open (chapter 11, which computes its examples, "
             "well under a minute); a widget says \"computing…\" while it works.", "",
             "| chapter | interactive part |", "| --- | --- |"]
    for stem, number, title, line in entries:
        label = f"{number}. {title}" if number else title
        lines.append(f"| [{label}]({stem}.ipynb) | {convert(line, ctx)} |")
    lines += ["", "The full static book (all chapters, exercises and proofs) is built with "
              "`make book` (`_build/html/index.html`). Stop this server with Ctrl-C in its "
              "terminal."]
    cell = _markdown("\n".join(lines))
    cell["id"] = "amp-live-index"
    return {"cells": [cell],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "title": f"Interactive chapters · {APP_NAME}",
                         "amp_live": {"generated_by": "scripts/live/prepare.py"}},
            "nbformat": 4, "nbformat_minor": 5}


# -------------------------------------------------------------------------------- build
def build(book: Path, out: Path, *, template: bool = True) -> dict:
    """Write the app into ``out``; return ``{"chapters": [...], "dropped": {...}}``."""
    ctx = book_context(book)
    interactive = []
    for stem, number in chapters(book):
        loaded = _load(book, stem)
        if loaded and loaded[0] == "ipynb":
            nb = loaded[1]
            if any(is_widget_cell(c) and STATIC_ONLY not in _tags(c) for c in nb["cells"]):
                interactive.append((stem, number, nb))
    ctx.app = {stem for stem, _, _ in interactive} | {"index"}
    app_dir = out / "app"
    if app_dir.exists():
        shutil.rmtree(app_dir)
    app_dir.mkdir(parents=True)
    entries = []
    for stem, number, nb in interactive:
        try:
            app_nb = prepare_notebook(nb, ctx, stem, number)
        except MystError as exc:
            raise MystError(f"{stem}: {exc}") from None
        back = _markdown('<p class="amp-live-note"><a href="index.ipynb">&larr; all interactive '
                         f"chapters</a> &middot; live version of chapter {number or ''} of the "
                         "book (code hidden)</p>")
        back["id"] = "amp-live-back"
        app_nb["cells"].insert(0, back)
        (app_dir / f"{stem}.ipynb").write_text(json.dumps(app_nb, indent=1, ensure_ascii=False)
                                               + "\n", encoding="utf-8")
        names = [_widget_name(c) for c in nb["cells"] if is_widget_cell(c)]
        line = "; ".join(WIDGET_LINES[w] for w in names if w in WIDGET_LINES) or _summary(nb)
        entries.append((stem, number, ctx.docs.get(stem, stem), line))
    (app_dir / "index.ipynb").write_text(json.dumps(landing_page(entries, ctx), indent=1,
                                                    ensure_ascii=False) + "\n", encoding="utf-8")
    # relative paths and imports of the chapters keep working: data, _static, coursekit
    # (from coursekit import check) and the book's own modules (import accuracy_figs)
    for name in BESIDE:
        if (book / name).exists():
            (app_dir / name).symlink_to((book / name).resolve(), target_is_directory=True)
    for module in sorted(book.glob("*.py")):
        (app_dir / module.name).symlink_to(module.resolve())
    for name in UPWARD:                        # "../scripts" from the app as from book/
        target, link = book.parent / name, out / name
        if target.is_dir() and not link.exists():
            link.symlink_to(target.resolve(), target_is_directory=True)
    if template:
        dest = out / "share" / "voila" / "templates" / TEMPLATE_NAME
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(TEMPLATE / TEMPLATE_NAME, dest)
    return {"chapters": [e[0] for e in entries], "out": str(app_dir)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--book", default=str(ROOT / "book"))
    p.add_argument("--out", default=str(ROOT / "_build" / "live"))
    args = p.parse_args(argv)
    info = build(Path(args.book), Path(args.out))
    print(f"live app: {len(info['chapters'])} interactive chapters "
          f"({', '.join(info['chapters'])}) + index.ipynb in {info['out']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
