"""Sphinx extension: keep every page of the amp book self-contained (no CDN, no console errors).

Loaded from ``_config.yml`` (``sphinx.local_extensions: {amp_offline: book/_ext}``). On each HTML
page (``html-page-context``, run last) it

1. drops sphinx-thebe's scripts. Jupyter Book 1.x always loads sphinx-thebe; it inlines
   ``const THEBE_JS_URL = "https://unpkg.com/..."`` (twice per page: a console ``SyntaxError``) and
   ``sphinx-thebe.js``, which would fetch thebe from unpkg when clicked. The book has no thebe
   button (``launch_buttons.thebe: false``), so nothing is lost;
2. adds ``amp-mathjax2-shim.js`` to pages that load both MathJax and the ipywidgets loader
   (``widgets/embed.js``), which calls MathJax 2's ``Hub.Queue`` (see that file);
3. audits what remains: a script or stylesheet whose source is not a local path (``http://``,
   ``https://`` or ``//``) is reported as a Sphinx warning, which fails ``make book`` (``-W``).

It also checks at ``builder-inited`` that the ipywidgets loader was fetched (``make assets``),
so that a missing asset fails the build instead of producing pages with a dead script tag, and
registers the pybtex style ``amp_authoryear`` (``bibtex_default_style``): entries sorted by author
and year and labelled "Balle et al., 2019", with "a"/"b" suffixes when two labels coincide (the
SODA paper and its corrected arXiv version are both "Feldman et al., 2023"). With
``bibtex_reference_style: label`` the same label appears in the text and in the bibliography.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

SHIM = "amp-mathjax2-shim.js"
#: Priority just after Sphinx's MathJax configuration/script (500) and before html_js_files (800).
SHIM_PRIORITY = 501


def _filename(asset: Any) -> str:
    return str(getattr(asset, "filename", asset) or "")


def _attributes(asset: Any) -> dict:
    return dict(getattr(asset, "attributes", {}) or {})


def _is_thebe(asset: Any) -> bool:
    name = _filename(asset)
    body = str(_attributes(asset).get("body", ""))
    return name.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body or "thebe@" in name


def _is_remote(url: str) -> bool:
    url = url.strip().lower()
    return url.startswith(("http://", "https://", "//"))


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict,
                  doctree: Any) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = [s for s in scripts if not _is_thebe(s)]
        names = [_filename(s) for s in scripts]
        has_mathjax = any("mathjax" in n.lower() and n.endswith(".js") and n != SHIM
                          for n in names)
        has_widgets = any(n.endswith("widgets/embed.js") for n in names)
        if has_mathjax and has_widgets and SHIM not in names:
            # The builder re-sorts script_files by priority after this event.
            app.add_js_file(SHIM, priority=SHIM_PRIORITY)
        for s in context.get("script_files", []):
            if _is_remote(_filename(s)):
                logger.warning("[amp_offline] page %r loads a remote script %r; the book must "
                               "be served without a CDN", pagename, _filename(s),
                               type="amp_offline", subtype="remote")
    for css in context.get("css_files", []) or []:
        if _is_remote(_filename(css)):
            logger.warning("[amp_offline] page %r loads a remote stylesheet %r", pagename,
                           _filename(css), type="amp_offline", subtype="remote")


def _check_assets(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    loaders = app.config["nb_ipywidgets_js"] if "nb_ipywidgets_js" in app.config else {}
    for path in loaders or {}:
        if _is_remote(path):
            logger.warning("[amp_offline] nb_ipywidgets_js entry %r is remote", path,
                           type="amp_offline", subtype="remote")
            continue
        found = any((Path(app.confdir) / static / path).is_file()
                    for static in app.config.html_static_path)
        if not found:
            logger.warning("[amp_offline] ipywidgets loader %r not found in html_static_path "
                           "%r; run `make assets` (scripts/fetch_widgets.sh)", path,
                           app.config.html_static_path, type="amp_offline", subtype="assets")


def _register_bibtex_style() -> None:
    from collections import Counter

    from pybtex.plugin import register_plugin
    from pybtex.richtext import Text
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle

    def plain(latex: str) -> str:
        return Text.from_latex(latex).render_as("text")

    def base_label(entry: Any) -> str:
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [plain(" ".join(p.prelast_names + p.last_names)) for p in persons]
        year = entry.fields.get("year", "n.d.")
        if not names:
            who = plain(entry.fields.get("key", entry.key))
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who}, {year}"

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            entries = list(sorted_entries)
            labels = [base_label(e) for e in entries]
            counts = Counter(labels)
            seen: Counter = Counter()
            for label in labels:
                if counts[label] > 1:
                    seen[label] += 1
                    yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
                else:
                    yield label

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = "amp_authoryear"
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.labels", "amp_authoryear", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "amp_authoryear", AuthorYearStyle)


def setup(app: Sphinx) -> dict:
    _register_bibtex_style()
    app.connect("builder-inited", _check_assets)
    app.connect("html-page-context", _page_context, priority=999)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
