"""Sphinx extension for ``make pdf`` only (scripts/build_pdf.py adds it to a copy of the config).

Sphinx looks up a node's visitor under the builder's name ("singlehtml") and falls back to its
format ("html") only when no extension registered any handler under that name. Once one does
(sphinx-exercise and sphinx-proof do), nodes registered for "html" alone, such as myst-nb's
``HideCodeCellNode``, have no visitor in the single-page build, which then stops with
"unknown node type". This copies every "html" handler that "singlehtml" lacks.
"""

from __future__ import annotations


def _copy_html_handlers(app) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, pair in handlers.get("html", {}).items():
        single.setdefault(node, pair)


def setup(app):
    app.connect("builder-inited", _copy_html_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
