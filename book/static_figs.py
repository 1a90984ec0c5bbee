"""The static site's interactive figures (no kernel); book-only helper.

:func:`show` writes one figure precomputed by ``scripts/build_static_figures.py``
(``book/data/static_figs/<name>.json``) into the page, for ``book/_static/amp-figures.js``
to draw with its controls. Used by a cell tagged ``remove-input`` and ``static-only`` right
after a chapter's widget (the live app leaves that cell out: it has the widget itself).
How the grid is computed and certified: ``book/engine/static_figures.md``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "static_figs"
#: what the page needs of a stored figure (its provenance stays in the file)
PAGE_KEYS = ("id", "caption", "controls", "axes", "styles", "frames")
#: the caption's last words, for a figure showing certified bounds
SAFE = " Certified values are rounded in the safe direction (up for an upper bound)."


def load(name: str) -> dict:
    """The stored figure ``name`` (``ch01``, ``ch05``, ...)."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def figure_html(name: str) -> str:
    """The ``<figure>`` of ``name``: its data as inline JSON, a caption, and a sentence shown
    only when the page's script has not replaced it (no JavaScript: no control is shown)."""
    fig = load(name)
    payload = json.dumps({k: fig[k] for k in PAGE_KEYS}, ensure_ascii=False,
                         separators=(",", ":")).replace("</", "<\\/")
    points = len(fig["frames"])
    return (
        f'<figure class="amp-jsfig" id="amp-jsfig-{html.escape(fig["id"])}">'
        f'<script type="application/json" class="amp-jsfig-data">{payload}</script>'
        f'<p class="amp-jsfig-nojs">(This figure needs JavaScript on the book\'s web site.)</p>'
        f'<figcaption>{html.escape(fig["caption"])} Precomputed at {points} grid points: '
        f'choose one with the controls.{SAFE if fig.get("certified") else ""}'
        f'</figcaption></figure>')


def show(name: str) -> None:
    """Display the figure ``name`` (as HTML: the static site's script draws it)."""
    from IPython.display import HTML, display
    display(HTML(figure_html(name)))
