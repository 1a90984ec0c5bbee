"""Sphinx extension: a folded solution and its computation are one fold.

Loaded from ``_config.yml`` (``sphinx.local_extensions: {amp_folds: book/_ext}``). A folded
solution (sphinx-exercise ``{solution}`` with ``:class: dropdown``) or a folded admonition
(``:class: dropdown``) followed directly by a code cell tagged ``solution`` (the solution's
computation, for example Exercise 12.4's) used to show the text folded and the code and its
output open below it: the answer visible next to a closed "Solution" fold. At ``doctree-read``
each such cell is moved inside the fold, so the reader opens one fold and finds the text, the
code and its output together (the live app does the same: ``scripts/live/prepare.py``,
``mark_fold_next``).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

#: Cell tags (myst-nb writes them as ``tag_<name>`` classes of the cell container) of a
#: computation that belongs to the fold right before it.
FOLD_TAGS = ("tag_solution",)


def _is_fold(node: nodes.Node) -> bool:
    """A node that the site renders folded: a ``dropdown`` solution or admonition."""
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    if "dropdown" not in classes and "toggle" not in classes:
        return False
    try:
        from sphinx_exercise.nodes import solution_node
    except ImportError:                      # pragma: no cover - sphinx-exercise is pinned
        solution_node = ()
    return isinstance(node, (nodes.admonition, solution_node)) or "solution" in classes


def _is_fold_cell(node: nodes.Node) -> bool:
    return (isinstance(node, nodes.container) and "cell" in node.get("classes", [])
            and any(t in node["classes"] for t in FOLD_TAGS))


def merge_folds(doctree: nodes.document) -> int:
    """Move each fold cell into the fold right before it; return how many were moved."""
    moved = 0
    for fold in list(doctree.findall(_is_fold)):
        parent = fold.parent
        if parent is None:
            continue
        while True:
            index = parent.index(fold)
            if index + 1 >= len(parent.children) or not _is_fold_cell(parent[index + 1]):
                break
            cell = parent[index + 1]
            parent.remove(cell)
            fold.append(cell)
            moved += 1
    return moved


def _doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    merge_folds(doctree)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-read", _doctree_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
