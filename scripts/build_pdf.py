#!/usr/bin/env python3
"""The whole book as one PDF (``make pdf``): a single-page HTML build printed by Chromium.

1. ``jupyter-book build . --builder singlehtml --path-output <out>/src`` (executes every
   chapter, as ``make book`` does) -> ``<out>/src/_build/singlehtml/index.html``;
2. the page is served on 127.0.0.1 (as ``tests/browser_check.py`` serves the site) and opened
   in Debian's Chromium through Playwright (``/usr/bin/chromium``; nothing is fetched from
   outside the site); every image is loaded, every fold (solutions, "Under the hood" boxes,
   hidden code) is opened, and the script waits until MathJax has typeset everything;
3. before printing, ``scripts/pdf/amp-print.css`` is added to the page (no scroll-edge
   gradients, no blurred shadows: Chromium writes each as a shading pattern or a raster image,
   ~40 of the first PDF's 58 MB) and the DOM is checked: no raw TeX left in the visible text
   outside code, no image without pixels; then ``page.pdf()`` prints (A4, page numbers in the
   footer, tagged, an outline from the headings);
4. ``scripts/pdf/compact.py`` repacks Chromium's PDF 1.4 file with object streams (qpdf,
   through ``pikepdf``; the tagged PDF's ~70,000 structure elements, uncompressed, were half
   of what was left) into ``<out>/amp-book.pdf``, the same pages; ``<out>/amp-book.json``
   records what was printed (images, math, problems, bytes before and after, seconds), which
   ``tests/test_pdf.py`` reads.

Usage::

    .venv/bin/python scripts/build_pdf.py [--out _build/pdf] [--skip-build]

``--skip-build`` prints an existing single-page build again (CSS work). Exit status 1 when the
DOM check found a problem (the PDF is still written, for inspection).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts" / "pdf"))
from browser_check import (_IMAGES_JS, _MATHJAX_READY_JS, _RAW_DOLLAR_TEX,  # noqa: E402
                           _RAW_TEX_COMMAND, _VISIBLE_TEXT_JS, CHROMIUM, CHROMIUM_ARGS, serve)
from compact import compact  # noqa: E402

PDF_NAME = "amp-book.pdf"
#: Print-only rules added to the page before printing: no scroll-edge gradients and no blurred
#: shadows, which Chromium writes as thousands of shading patterns and rasterised images
#: (see the file's comment; about 40 of the 58 MB of a PDF printed without it).
PRINT_CSS = REPO / "scripts" / "pdf" / "amp-print.css"

# Open every fold so that nothing is lost on paper (details, sphinx-togglebutton, hidden code).
_UNFOLD_JS = """
() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(el => el.classList.remove('toggle-hidden'));
  document.querySelectorAll('button.toggle-button').forEach(b => b.classList.remove('toggle-button-hidden'));
  document.querySelectorAll('.dropdown, .toggle').forEach(el => el.classList.add('amp-print-open'));
  return document.querySelectorAll('details').length;
}
"""

# Figures of the book: <img> inside the article (logos and favicons excluded).
_FIGURES_JS = """
() => Array.from(document.querySelectorAll('article img, .bd-article img, main img'))
  .map(img => ({src: img.getAttribute('src'), width: img.naturalWidth,
                height: img.naturalHeight}))
"""

#: Raw TeX that may stand in code (a matplotlib label r"$\\varepsilon$"): counted in code blocks
#: so that tests/test_pdf.py can tell it from untypeset math in the PDF's text.
TEX_MARKERS = ("$$", "\\(", "\\)", "\\[", "\\]", "\\begin{", "\\frac", "\\varepsilon")
_CODE_TEXT_JS = """
() => Array.from(document.querySelectorAll('pre, code')).filter(el => !el.closest('pre') ||
      el.tagName === 'PRE').map(el => el.textContent).join('\\n')
"""

_COUNTS_JS = """
() => ({
  mjx: document.querySelectorAll('mjx-container').length,
  mjxDisplay: document.querySelectorAll('mjx-container[display="true"]').length,
  exercises: document.querySelectorAll('.exercise').length,
  solutions: document.querySelectorAll('.solution').length,
  proofs: document.querySelectorAll('.proof').length,
  citations: document.querySelectorAll('.bibtex, .citation, dl.citation > dt').length,
  documents: document.querySelectorAll('span[id^="document-"]').length
})
"""


def pdf_config(out: Path, cache: bool = False) -> Path:
    """A copy of ``_config.yml`` for the single-page build: the same book, plus the extension
    ``scripts/pdf/amp_singlehtml.py`` (local extension paths made absolute, since they are
    read relative to the config file). ``cache``: execute with jupyter-cache (re-runs only
    changed notebooks; ``make book`` always re-executes)."""
    import yaml

    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {})
    local = {name: str((REPO / path).resolve())
             for name, path in (sphinx.get("local_extensions") or {}).items()}
    local["amp_singlehtml"] = str(REPO / "scripts" / "pdf")
    sphinx["local_extensions"] = local
    if cache:
        config.setdefault("execute", {})["execute_notebooks"] = "cache"
    path = out / "_config_pdf.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# written by scripts/build_pdf.py from _config.yml; do not edit\n"
                    + yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def build_singlehtml(src: Path, cache: bool = False) -> float:
    """Run the single-page build into ``src``; return its seconds."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb if jb.exists() else "jupyter-book"), "build", str(REPO), "--builder",
           "singlehtml", "--keep-going", "--path-output", str(src),
           "--config", str(pdf_config(src.parent, cache))]
    print("+", " ".join(cmd), flush=True)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=REPO, env=env)
    return time.perf_counter() - start


def root_page(site: Path) -> str:
    """The page to print, relative to ``site``.

    Sphinx's single-page builder writes the book at the root document's path
    (``book/intro.html``; ``index.html`` only redirects there) but with every address relative
    to the site's root (``_static/...``, ``_images/...``). A copy at the root,
    ``amp-book.html``, resolves them.
    """
    index = (site / "index.html").read_text(encoding="utf-8", errors="replace")
    m = re.search(r'http-equiv="Refresh"\s+content="0;\s*url=([^"]+)"', index, re.I)
    if not m or "/" not in m.group(1):
        return "index.html"
    (site / "amp-book.html").write_bytes((site / m.group(1)).read_bytes())
    return "amp-book.html"


def print_pdf(site: Path, pdf: Path, timeout_s: float = 600) -> dict:
    """Print ``site/index.html`` to ``pdf`` after MathJax; return the report (see module doc)."""
    from playwright.sync_api import sync_playwright

    report: dict = {"problems": [], "external_requests": []}
    start = time.perf_counter()
    with serve(site) as base, sync_playwright() as pw:
        origin = base.rstrip("/")
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 1400},
                                          service_workers="block")
            page = context.new_page()
            page.set_default_timeout(timeout_s * 1000)

            def route(r) -> None:
                if r.request.url.startswith(origin + "/") or r.request.url.startswith(
                        ("data:", "blob:", "about:")):
                    r.continue_()
                else:
                    report["external_requests"].append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.on("pageerror", lambda e: report["problems"].append(f"page error: {e}"))
            report["page"] = root_page(site)
            page.goto(base + report["page"], wait_until="load")
            try:
                page.wait_for_load_state("networkidle", timeout=30_000)
            except Exception:  # pragma: no cover - a slow widget; MathJax is awaited below
                pass
            page.add_style_tag(path=str(PRINT_CSS))
            report["details_opened"] = page.evaluate(_UNFOLD_JS)
            images = page.evaluate(_IMAGES_JS)
            page.evaluate(_MATHJAX_READY_JS)          # after unfolding: typeset everything
            page.wait_for_timeout(500)
            report.update(page.evaluate(_COUNTS_JS))
            report["figures"] = page.evaluate(_FIGURES_JS)
            code = page.evaluate(_CODE_TEXT_JS)
            report["tex_in_code"] = {m: code.count(m) for m in TEX_MARKERS}
            report["tex_in_code"]["$...$"] = len(_RAW_DOLLAR_TEX.findall(code))
            report["tex_in_code"]["\\command"] = len(_RAW_TEX_COMMAND.findall(code))
            report["broken_images"] = [i["src"] for i in images if not i["width"]]
            text = page.evaluate(_VISIBLE_TEXT_JS)
            raw = [d for d in ("$$", "\\(", "\\)", "\\[", "\\]", "\\begin{") if d in text]
            for pattern in (_RAW_DOLLAR_TEX, _RAW_TEX_COMMAND):
                m = pattern.search(text)
                if m:
                    raw.append(text[max(0, m.start() - 60):m.end() + 40])
            report["raw_tex"] = raw
            report["problems"] += [f"raw TeX visible: {r!r}" for r in raw]
            report["problems"] += [f"broken image: {s}" for s in report["broken_images"]]
            report["problems"] += [f"non-local request: {u}" for u in report["external_requests"]]
            pdf.parent.mkdir(parents=True, exist_ok=True)
            page.pdf(path=str(pdf), format="A4", print_background=True, outline=True,
                     tagged=True, display_header_footer=True,
                     header_template="<span></span>",
                     footer_template='<div style="font-size:8px;width:100%;text-align:center;'
                                     'color:#555"><span class="pageNumber"></span> / '
                                     '<span class="totalPages"></span></div>',
                     margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"})
        finally:
            browser.close()
    report["print_seconds"] = round(time.perf_counter() - start, 1)
    return report


def pdf_pages(pdf: Path) -> int | None:
    """Page count via pikepdf (pinned, the compaction's own library), else ``pdfinfo``
    (poppler-utils), else by counting page objects (which only works on Chromium's file: the
    compacted one keeps them in compressed object streams). Without the first two the
    compacted file could not be counted and was kept uncompacted (17.8 MB)."""
    try:
        import pikepdf
        with pikepdf.open(pdf) as doc:
            return len(doc.pages)
    except Exception:  # noqa: BLE001 - not installed or unreadable: the next way
        pass
    try:
        out = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True,
                             check=True).stdout
        return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))
    except (OSError, subprocess.CalledProcessError, AttributeError):
        return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes())) or None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "_build" / "pdf")
    ap.add_argument("--skip-build", action="store_true",
                    help="print the existing single-page build again")
    ap.add_argument("--cache", action="store_true",
                    help="execute through jupyter-cache (only changed notebooks re-run)")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    src = out / "src"
    site = src / "_build" / "singlehtml"
    build_seconds = None
    if not args.skip_build:
        build_seconds = round(build_singlehtml(src, args.cache), 1)
    if not (site / "index.html").is_file():
        print(f"error: no single-page build at {site}", file=sys.stderr)
        return 2
    pdf = out / PDF_NAME
    raw = out / "amp-book.chromium.pdf"
    report = print_pdf(site, raw)
    report["bytes_chromium"] = raw.stat().st_size
    pages = pdf_pages(raw)
    try:
        compact(raw, pdf)
        if pdf_pages(pdf) != pages:
            raise ValueError(f"{pdf_pages(pdf)} pages after compaction, {pages} before")
        raw.unlink()
    except ValueError as e:  # keep Chromium's file, which is the same document
        print(f"warning: PDF not compacted ({e}); keeping Chromium's file", file=sys.stderr)
        raw.replace(pdf)
    report.update(pdf=str(pdf), pages=pdf_pages(pdf), bytes=pdf.stat().st_size,
                  build_seconds=build_seconds, site=str(site))
    (out / "amp-book.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"PDF: {pdf} ({report['pages']} pages, {report['bytes'] / 1e6:.1f} MB, "
          f"{report['bytes_chromium'] / 1e6:.1f} MB as Chromium wrote it; "
          f"{len(report['figures'])} figures, {report['mjx']} math, {report['exercises']} "
          f"exercises; build {build_seconds} s, print {report['print_seconds']} s)")
    for p in report["problems"]:
        print(f"  problem: {p}")
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
