"""Offline browser check of the built book (``_build/html``), used by ``tests/test_browser.py``.

Serves the site on ``127.0.0.1`` (``http.server`` in a thread, free port) and opens every HTML
page in Debian's Chromium driven by Playwright (``executable_path=/usr/bin/chromium``; never
``playwright install``). A page fails on

* a console error or an uncaught page error;
* a failed request, or a response with HTTP status >= 400;
* any request to a host other than the local server (it is aborted and reported);
* unrendered math: a page whose HTML contains math must contain ``mjx-container`` elements, and no
  raw TeX delimiters (``$$``, ``\\(``, ``\\[``) may remain in visible text outside code;
* an image with ``naturalWidth == 0``; a notebook's figure (PNG output) with fewer than two
  image pixels per CSS pixel of its shown width (figures are drawn at 200 dpi);
* a code or output block that scrolls sideways (``scrollWidth > clientWidth``) at the check's
  1280-pixel viewport: code and printed lines must be short enough to fit.

Every page is opened at two widths, :data:`WIDTHS` (a laptop, 1280 px, and a phone, 390 px); at
both, a page also fails on

* a document wider than the viewport (the whole page would scroll sideways; the widest
  offending elements are named);
* clipped math: a display equation (``mjx-container[display="true"]``), or an inline one, whose
  content is wider than its box (``scrollWidth > clientWidth``) while the box does not scroll
  (``overflow-x`` not ``auto``/``scroll``) and is cut by an ancestor that hides overflow (the
  theme's ``div.math``/``span.math``) or runs past the article's right edge;
* not exactly one visible search box (search fields and search buttons of the theme, in view
  when the page opens).

At 390 px code blocks may scroll inside themselves (a line of 88 characters cannot fit a phone).

A static check (:func:`static_url_problems`) reads every HTML file: a ``src``/``href`` of a
``script``, ``link``, ``img``, ``iframe``, ``source``, ``video``, ``audio``, ``embed`` or ``object``
element must be local. Plain ``<a href>`` links to other hosts are allowed only for the hosts in
:data:`ALLOWED_ANCHOR_HOSTS` (the DOI and arXiv links of the bibliography) and are listed in the report.

Run directly for a human-readable report::

    .venv/bin/python tests/browser_check.py _build/html --screenshots artifacts/screenshots
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import re
import socketserver
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
#: Hosts that plain ``<a href>`` links (never loaded by the page) may point to.
ALLOWED_ANCHOR_HOSTS = frozenset({"doi.org", "arxiv.org"})
#: Pages screenshotted by default (relative to the site root), when they exist.
DEFAULT_SCREENSHOTS = ("book/intro.html", "book/00_how_to_read.html",
                       "book/01_introduction.html", "book/03_existing_techniques.html",
                       "book/04_general_clone.html", "book/05_new_algorithm.html",
                       "book/07_experiments.html", "book/10_calculator.html",
                       "book/references.html")
#: Viewport widths of the check: a laptop and a phone (iPhone 12-15: 390 CSS pixels).
WIDE, PHONE = 1280, 390
WIDTHS = (WIDE, PHONE)
#: Pages screenshotted at the phone's width (the chapters with the most display math, the
#: multi-panel figures of chapter 7, the API reference).
PHONE_SCREENSHOTS = ("book/intro.html", "book/04_general_clone.html",
                     "book/05_new_algorithm.html", "book/06_joint_composition.html",
                     "book/07_experiments.html", "book/api/index.html",
                     "book/api/front_door.html", "book/api/results.html")
PAGE_TIMEOUT_MS = 30_000
#: "$...$" holding a TeX command, sub/superscript or brace: math MathJax did not typeset.
_RAW_DOLLAR_TEX = re.compile(r"\$[^$\n]{0,200}?[\\^_{}][^$\n]{0,200}?\$")
#: A TeX command in visible prose: math that MathJax never saw (e.g. "$p \\ge ...$" broken by a
#: line that Markdown read as a list item), even without a closing "$" on the same line.
_RAW_TEX_COMMAND = re.compile(
    r"\\(?:math(?:rm|cal|bb|bf)|varepsilon|epsilon|delta|gamma|omega|frac|sum|int|le|ge|leq|"
    r"geq|cdot|c?dots|left|right|begin|end|infty|sqrt|binom|operatorname|mid|Vert)(?![A-Za-z])")

# Code and output blocks of the article that scroll sideways: the first characters of each.
_OVERFLOW_JS = """
() => Array.from(document.querySelectorAll('article pre'))
  .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
  .map(el => el.textContent.trim().slice(0, 60))
"""

# Visible text outside code, scripts and rendered math (runs in the page).
_VISIBLE_TEXT_JS = """
() => {
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'PRE', 'CODE', 'TEXTAREA',
                        'MJX-CONTAINER', 'MJX-ASSISTIVE-MML', 'TEMPLATE']);
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let el = n.parentElement, hidden = false;
    while (el) {
      if (skip.has(el.tagName)) { hidden = true; break; }
      el = el.parentElement;
    }
    if (!hidden) out.push(n.textContent);
  }
  return out.join(' ');
}
"""

# Layout at the current width: page overflow (with the widest culprits), clipped display math,
# visible search boxes (runs in the page).
_LAYOUT_JS = r"""
() => {
  const doc = document.documentElement;
  const vw = doc.clientWidth;
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const inScroller = el => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (scrolls(p) || getComputedStyle(p).overflowX === 'hidden') return true;
    }
    return false;
  };
  const describe = el => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    if (typeof el.className === 'string' && el.className.trim())
      s += '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.');
    return s + ' "' + (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50) + '"';
  };
  const culprits = [];
  if (doc.scrollWidth > vw + 1) {
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > vw + 1 && !inScroller(el) &&
          getComputedStyle(el).position !== 'fixed') {
        culprits.push({right: Math.round(r.right), what: describe(el)});
      }
    }
    culprits.sort((a, b) => b.right - a.right);
  }
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const right = article ? article.getBoundingClientRect().right : vw;
  // Display math is clipped when its content runs past a box that hides overflow (or past the
  // article) without a scrolling box in between; a box of its own that scrolls is fine.
  const clipped = [];
  const mathBoxes = document.querySelectorAll('mjx-container[display="true"]');
  const TOL = 2;
  for (const el of (article || document).querySelectorAll('mjx-container')) {
    const kind = el.getAttribute('display') === 'true' ? '' : 'inline math: ';
    const math = el.querySelector('mjx-math');      // what is drawn (not the screen-reader copy)
    if (el.offsetParent === null || !math) continue;  // folded away
    const mathRight = math.getBoundingClientRect().right;
    let verdict = null;
    // the nearest box that does not let content overflow visibly decides
    for (let p = el; p && p !== document.body; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if (ox === 'visible') continue;
      if ((ox === 'hidden' || ox === 'clip') &&
          mathRight > p.getBoundingClientRect().right + TOL) {
        verdict = `drawn to ${Math.round(mathRight)} px, cut at ` +
                  `${Math.round(p.getBoundingClientRect().right)} px by ${describe(p).slice(0, 40)}`;
      }
      p = null;
      break;
    }
    if (!verdict && !inScroller(el) && mathRight > right + TOL) {
      verdict = `drawn to ${Math.round(mathRight)} px, past the article's edge at ` +
                `${Math.round(right)} px`;
    }
    if (verdict) {
      clipped.push(kind + verdict +
                   (el.closest('[id]') ? ' (#' + el.closest('[id]').id + ')' : ''));
    }
  }
  const visible = el => {
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    if (!(el.offsetParent !== null && r.width > 0 && r.height > 0 &&
          cs.visibility !== 'hidden' && r.right > 0 && r.left < vw && r.bottom > 0 &&
          r.top < window.innerHeight)) return false;
    // not hidden by a scrolling box it sits in (the sidebar scrolled to the current page)
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowY === 'visible') continue;
      const q = p.getBoundingClientRect();
      if (r.bottom <= q.top || r.top >= q.bottom) return false;
    }
    return true;
  };
  const searchSel = 'input[type="search"], input[name="q"], .search-button-field, ' +
                    'button.search-button, .search-button__button, .bd-search';
  const seen = new Set();
  const search = [];
  for (const el of document.querySelectorAll(searchSel)) {
    if (!visible(el)) continue;
    // one box may match several selectors (a form and its input): count the outermost
    let outer = el;
    for (let p = el.parentElement; p; p = p.parentElement) if (p.matches(searchSel)) outer = p;
    if (seen.has(outer) || !visible(outer)) continue;
    seen.add(outer);
    search.push(describe(outer));
  }
  return {docWidth: doc.scrollWidth, viewport: vw, culprits: culprits.slice(0, 5),
          displayMath: mathBoxes.length, clippedMath: clipped, searchBoxes: search};
}
"""

_IMAGES_JS = """
async () => {
  const imgs = Array.from(document.images);
  for (const img of imgs) {
    img.loading = 'eager';
    try { await img.decode(); } catch (e) { /* reported below */ }
  }
  return imgs.map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth,
                          shown: img.getBoundingClientRect().width,
                          output: !!img.closest('.cell_output') &&
                                  /[.]png([?]|$)/i.test(img.currentSrc || img.src)}));
}
"""

_MATHJAX_READY_JS = """
async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
  if (mj && typeof mj.typesetPromise === 'function') { await mj.typesetPromise(); }
  return document.querySelectorAll('mjx-container').length;
}
"""


# ----------------------------------------------------------------------------- result types
@dataclass
class PageReport:
    """What happened when one page was opened."""

    path: str
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    math_problems: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    low_resolution: list[str] = field(default_factory=list)
    overflowing: list[str] = field(default_factory=list)
    page_overflow: list[str] = field(default_factory=list)
    clipped_math: list[str] = field(default_factory=list)
    search_boxes: list[str] = field(default_factory=list)
    width: int = WIDE
    display_math: int = 0
    mjx_count: int = 0
    requests: int = 0
    seconds: float = 0.0
    screenshot: str | None = None

    @property
    def problems(self) -> list[str]:
        out = []
        for label, items in (("console error", self.console_errors),
                             ("page error", self.page_errors),
                             ("failed request", self.failed_requests),
                             ("non-local request", self.external_requests),
                             ("math", self.math_problems),
                             ("broken image", self.broken_images),
                             ("figure below 2x resolution", self.low_resolution),
                             ("scrolls sideways", self.overflowing),
                             ("page wider than the viewport", self.page_overflow),
                             ("math clipped", self.clipped_math)):
            out += [f"{label} (at {self.width} px): {item}" for item in items]
        if len(self.search_boxes) != 1:
            out.append(f"{len(self.search_boxes)} visible search boxes at {self.width} px "
                       "(one expected): " + "; ".join(self.search_boxes))
        return out

    @property
    def ok(self) -> bool:
        return not self.problems


# ----------------------------------------------------------------------------- static check
class _UrlCollector(HTMLParser):
    LOADED = {"script": "src", "img": "src", "iframe": "src", "source": "src", "video": "src",
              "audio": "src", "embed": "src", "track": "src", "object": "data", "link": "href"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loaded: list[tuple[str, str]] = []
        self.anchors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in self.LOADED and a.get(self.LOADED[tag]):
            self.loaded.append((tag, a[self.LOADED[tag]]))
        if tag in ("img", "source") and a.get("srcset"):
            self.loaded += [(tag, part.strip().split(" ")[0])
                            for part in a["srcset"].split(",") if part.strip()]
        if tag == "a" and a.get("href"):
            self.anchors.append(a["href"])


def _is_remote(url: str) -> bool:
    return url.strip().lower().startswith(("http://", "https://", "//"))


def static_url_problems(site: Path) -> tuple[list[str], list[str]]:
    """Scan every HTML file of ``site``.

    Returns ``(problems, external_anchors)``: ``problems`` lists loaded resources (script, link,
    img, ...) that are not local and anchors to hosts outside :data:`ALLOWED_ANCHOR_HOSTS`;
    ``external_anchors`` lists every allowed external anchor, for the report.
    """
    problems: list[str] = []
    anchors: list[str] = []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        parser = _UrlCollector()
        parser.feed(html.read_text(encoding="utf-8", errors="replace"))
        for tag, url in parser.loaded:
            if _is_remote(url):
                problems.append(f"{rel}: <{tag}> loads {url}")
        for url in parser.anchors:
            if _is_remote(url):
                host = urlsplit(url if not url.startswith("//") else "http:" + url).hostname
                if host in ALLOWED_ANCHOR_HOSTS:
                    anchors.append(f"{rel}: {url}")
                else:
                    problems.append(f"{rel}: <a href> to a non-allowed host: {url}")
    return problems, anchors


def html_pages(site: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to ``site`` (sorted)."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if "_static" not in p.relative_to(site).parts)


# ----------------------------------------------------------------------------- server
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 at a free port; yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# ----------------------------------------------------------------------------- browser
class SiteChecker:
    """Open pages of a served site in Chromium and record what goes wrong.

    Use as a context manager: ``with SiteChecker(site) as checker: checker.check("index.html")``.
    """

    def __init__(self, site: Path, screenshot_dir: Path | None = None,
                 executable: str = CHROMIUM) -> None:
        self.site = Path(site)
        self.screenshot_dir = Path(screenshot_dir) if screenshot_dir else None
        self.executable = executable
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> "SiteChecker":
        from playwright.sync_api import sync_playwright

        if not Path(self.executable).exists():
            raise FileNotFoundError(f"{self.executable} not found "
                                    "(apt-get update && apt-get install -y chromium)")
        self.base = self._stack.enter_context(serve(self.site))
        self.origin = self.base.rstrip("/")
        pw = self._stack.enter_context(sync_playwright())
        self.browser = pw.chromium.launch(executable_path=self.executable, args=CHROMIUM_ARGS,
                                          headless=True)
        self._stack.callback(self.browser.close)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def check(self, path: str, screenshot: bool = False, width: int = WIDE) -> PageReport:
        """Open ``path`` at ``width`` CSS pixels (:data:`WIDTHS`) and check it."""
        report = PageReport(path, width=width)
        start = time.perf_counter()
        context = self.browser.new_context(viewport={"width": width, "height": 900},
                                           service_workers="block",
                                           is_mobile=width < 600, has_touch=width < 600,
                                           device_scale_factor=2 if width < 600 else 1)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        local = ("data:", "blob:", "about:")

        def route(r) -> None:
            url = r.request.url
            if url.startswith(self.origin + "/") or url.startswith(local):
                r.continue_()
            else:
                report.external_requests.append(url)
                r.abort()

        def on_console(msg) -> None:
            loc = msg.location or {}
            where = f" ({loc.get('url', '')}:{loc.get('lineNumber', '')})" if loc else ""
            if msg.type == "error":
                report.console_errors.append(msg.text + where)
            elif msg.type == "warning":
                report.console_warnings.append(msg.text + where)

        def on_response(resp) -> None:
            if resp.status >= 400:
                report.failed_requests.append(f"HTTP {resp.status} {resp.url}")

        def on_failed(req) -> None:
            if req.url in report.external_requests:
                return  # aborted by us, already reported
            report.failed_requests.append(f"{req.failure} {req.url}")

        def on_request(req) -> None:
            report.requests += 1

        page.route("**/*", route)
        page.on("console", on_console)
        page.on("pageerror", lambda err: report.page_errors.append(str(err)))
        page.on("response", on_response)
        page.on("requestfailed", on_failed)
        page.on("request", on_request)
        try:
            page.goto(self.base + path, wait_until="load")
            try:
                page.wait_for_load_state("networkidle", timeout=10_000)
            except Exception:  # pragma: no cover - slow page; the checks below still run
                pass
            source = (self.site / path).read_text(encoding="utf-8", errors="replace")
            body = source.split("<body", 1)[-1]
            report.mjx_count = int(page.evaluate(_MATHJAX_READY_JS))
            if _has_math(body) and report.mjx_count == 0:
                report.math_problems.append("page has math but no mjx-container "
                                            "(MathJax did not run)")
            text = page.evaluate(_VISIBLE_TEXT_JS)
            for delim in ("$$", "\\(", "\\)", "\\[", "\\]", "\\begin{"):
                if delim in text:
                    i = text.index(delim)
                    report.math_problems.append(
                        f"raw TeX {delim!r} visible: ...{text[max(0, i - 40):i + 40]!r}...")
            m = _RAW_DOLLAR_TEX.search(text)
            if m:
                report.math_problems.append(f"raw TeX {m.group(0)!r} visible (not typeset)")
            m = _RAW_TEX_COMMAND.search(text)
            if m:
                report.math_problems.append(
                    f"raw TeX command visible: ...{text[max(0, m.start() - 60):m.end() + 40]!r}...")
            for img in page.evaluate(_IMAGES_JS):
                if not img["width"]:
                    report.broken_images.append(img["src"])
                elif img["output"] and img["width"] < 2 * img["shown"] - 1:
                    # a notebook's figure: at least two image pixels per CSS pixel (200 dpi,
                    # book/matplotlibrc; amp-phone.js shows it at most half its pixel width)
                    report.low_resolution.append(
                        f"{img['src']} ({img['width']} px shown {img['shown']:.0f} px wide)")
            if width >= WIDE:        # on a phone, code blocks scroll inside themselves
                report.overflowing = page.evaluate(_OVERFLOW_JS)
            layout = page.evaluate(_LAYOUT_JS)
            report.display_math = layout["displayMath"]
            report.clipped_math = layout["clippedMath"]
            report.search_boxes = layout["searchBoxes"]
            if layout["docWidth"] > layout["viewport"] + 1:
                report.page_overflow.append(
                    f"document {layout['docWidth']} px wide; widest: "
                    + "; ".join(f"{c['what']} (to {c['right']} px)" for c in layout["culprits"]))
            page.wait_for_timeout(300)  # late console errors (widgets render on load)
            if screenshot and self.screenshot_dir is not None:
                self.screenshot_dir.mkdir(parents=True, exist_ok=True)
                suffix = "" if width == WIDE else f"-{width}px"
                out = self.screenshot_dir / (path.replace("/", "__").removesuffix(".html")
                                             + suffix + ".png")
                page.screenshot(path=str(out), full_page=True)
                report.screenshot = str(out)
        except Exception as exc:  # navigation/evaluation failure is a page error
            report.page_errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            context.close()
        report.seconds = time.perf_counter() - start
        return report


# ----------------------------------------------------------------------------- static calculator
#: Chapter 10's page with the table calculator (book/_static/calculator/calculator.js).
STATIC_CALC_PAGE = "book/10_calculator.html"

_CALC_READ_JS = """
() => {
  const out = document.getElementById('amp-calc-out');
  const box = document.getElementById('amp-static-calc');
  return {status: out.dataset.status || null, eps: out.dataset.eps || null,
          gridN: out.dataset.gridN || null, pairEps: out.dataset.pairEps || null,
          pairDelta: out.dataset.pairDelta || null, cost: out.dataset.cost || null,
          text: out.innerText,
          boxOverflow: box.scrollWidth > box.clientWidth + 1,
          pageOverflow: document.documentElement.scrollWidth >
                        document.documentElement.clientWidth + 1};
}
"""


def static_calculator_answers(checker: "SiteChecker", cases: list[tuple],
                              screenshot_dir: Path | None = None,
                              viewport_width: int = 1280) -> tuple[list[dict], list[str]]:
    """Type each case into the static calculator of :data:`STATIC_CALC_PAGE`; read the answers.

    ``cases``: ``(name, mechanism id, eps0, n text, delta text)``. For each case the form is
    filled as a reader would (select, type, press the button) and the answer block is read: its
    ``status`` (``ok``, ``refused``), ``eps`` (the certified value shown), the grid n and the
    certified pair ``(pairEps, pairDelta)`` that answered, the stated rounding ``cost`` and the
    visible text. With ``screenshot_dir``, the calculator is
    screenshotted after each case (``static-calculator-<name>.png``). Returns ``(answers,
    problems)``; problems are console/page errors and non-local requests on the page.
    """
    problems: list[str] = []
    context = checker.browser.new_context(viewport={"width": viewport_width, "height": 900},
                                          service_workers="block")
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)

    def route(r) -> None:
        if r.request.url.startswith(checker.origin + "/") or r.request.url.startswith("data:"):
            r.continue_()
        else:
            problems.append(f"non-local request: {r.request.url}")
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    answers = []
    try:
        page.goto(checker.base + STATIC_CALC_PAGE, wait_until="load")
        page.wait_for_selector('#amp-static-calc[data-ready="1"]', timeout=15_000)
        for name, mech, eps0, n_text, delta_text in cases:
            page.select_option("#amp-calc-mech", mech)
            page.select_option("#amp-calc-eps0", f"{eps0:g}")
            page.fill("#amp-calc-n", n_text)
            page.fill("#amp-calc-delta", delta_text)
            page.click("#amp-calc-go")
            got = page.evaluate(_CALC_READ_JS)
            got.update(name=name, mech=mech, eps0=eps0, n_text=n_text, delta_text=delta_text)
            if screenshot_dir is not None:
                screenshot_dir.mkdir(parents=True, exist_ok=True)
                shot = screenshot_dir / f"static-calculator-{name}.png"
                page.locator("#amp-static-calc").screenshot(path=str(shot))
                got["screenshot"] = str(shot)
            answers.append(got)
    finally:
        context.close()
    return answers, problems


# ----------------------------------------------------------------------------- static figures
#: The pages with interactive figures that need no kernel (book/_static/amp-figures.js; the
#: data from scripts/build_static_figures.py): page -> figure ids. Every chapter whose live
#: version has a widget, except chapter 10 (its static calculator is checked above).
STATIC_FIGURE_PAGES = {
    "book/01_introduction.html": ["amp-jsfig-ch01-eps-vs-n"],
    "book/05_new_algorithm.html": ["amp-jsfig-ch05-gparv-atoms"],
    "book/06_joint_composition.html": ["amp-jsfig-ch06-joint-vs-k"],
    "book/07_experiments.html": ["amp-jsfig-ch07-experiment-panel"],
    "book/11_many_rounds.html": ["amp-jsfig-ch11-rounds"],
    "book/12_accuracy.html": ["amp-jsfig-ch12-one-draw"],
    "book/14_numeric_data.html": ["amp-jsfig-ch14-numeric", "amp-jsfig-ch14mean-error"],
}

# The state of one figure: its plot (SVG markup), the grid-point sentence, its layout.
_FIG_STATE_JS = """
(id) => {
  const fig = document.getElementById(id);
  const svg = fig.querySelector('.amp-jsfig-plot svg');
  const vw = document.documentElement.clientWidth;
  const r = fig.getBoundingClientRect();
  const ctrls = Array.from(fig.querySelectorAll('[data-control]')).map(c => {
    const b = (c.closest('label') && c.type === 'checkbox' ? c.closest('label') : c)
      .getBoundingClientRect();
    return {control: c.dataset.control, left: b.left, right: b.right, width: b.width};
  });
  return {ready: fig.dataset.ready === '1', svg: svg ? svg.outerHTML : '',
          point: (fig.querySelector('.amp-jsfig-point') || {}).textContent || '',
          key: fig.dataset.point || '', figRight: r.right, viewport: vw,
          svgScale: svg ? svg.getBoundingClientRect().width / svg.width.baseVal.value : 0,
          controls: ctrls,
          noJsText: !!fig.querySelector('.amp-jsfig-nojs'),
          pageOverflow: document.documentElement.scrollWidth > vw + 1};
}
"""

# Controls of ipywidgets left in the page (a control that would do nothing without a kernel).
_DEAD_WIDGETS_JS = """
() => Array.from(document.querySelectorAll(
    '.jupyter-widgets, .widget-interact, .widget-slider, .widget-dropdown, ' +
    'script[type="application/vnd.jupyter.widget-view+json"]'))
  .filter(el => el.tagName === 'SCRIPT' || el.offsetParent !== null).length
"""


def static_figure_moves(checker: "SiteChecker", path: str,
                        width: int = WIDE) -> tuple[list[dict], list[str]]:
    """Move every control of every interactive figure of ``path`` (:data:`STATIC_FIGURE_PAGES`)
    as a reader would, at ``width`` CSS pixels.

    A dropdown gets its next option (``select_option``), a slider one step (the arrow key, to
    the right unless at its end), a tick box a click. After each move the figure's SVG and its
    "Shown: grid point ..." sentence are compared with before. Returns ``(moves, problems)``:
    one dict per move (``figure``, ``control``, ``svgChanged``, ``pointChanged``, ``before``,
    ``after``: the sentences) and the problems: console/page errors, any request leaving the
    site, a figure that is missing or never drew, a control or figure past the viewport's right
    edge, an SVG scaled down (its text shrunk), a page that scrolls sideways, ipywidgets
    controls left on the page.
    """
    problems: list[str] = []
    context = checker.browser.new_context(viewport={"width": width, "height": 900},
                                          service_workers="block", is_mobile=width < 600,
                                          has_touch=width < 600,
                                          device_scale_factor=2 if width < 600 else 1)
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    local = ("data:", "blob:", "about:")

    def route(r) -> None:
        url = r.request.url
        if url.startswith(checker.origin + "/") or url.startswith(local):
            r.continue_()
        else:
            problems.append(f"non-local request: {url}")
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    moves: list[dict] = []
    try:
        page.goto(checker.base + path, wait_until="load")
        try:
            page.wait_for_load_state("networkidle", timeout=10_000)
        except Exception:  # pragma: no cover - slow page; the checks below still run
            pass
        dead = page.evaluate(_DEAD_WIDGETS_JS)
        if dead:
            problems.append(f"{dead} ipywidgets element(s) on the static page")
        for fig_id in STATIC_FIGURE_PAGES.get(path, []):
            sel = f"#{fig_id}"
            if not page.locator(sel).count():
                problems.append(f"{fig_id}: not on the page")
                continue
            try:
                page.wait_for_selector(f'{sel}[data-ready="1"]', timeout=10_000)
            except Exception:
                problems.append(f"{fig_id}: never drew (no data-ready)")
                continue
            state = page.evaluate(_FIG_STATE_JS, fig_id)
            if state["noJsText"]:
                problems.append(f"{fig_id}: the no-JavaScript sentence is still shown")
            if not state["controls"]:
                problems.append(f"{fig_id}: no control")
            for c in state["controls"]:
                if c["right"] > state["viewport"] + 1 or c["left"] < -1:
                    problems.append(f"{fig_id}: control {c['control']} outside the viewport "
                                    f"({c['left']:.0f}..{c['right']:.0f} px)")
            for c in state["controls"]:
                loc = page.locator(f'{sel} [data-control="{c["control"]}"]')
                kind = loc.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.type")
                before = page.evaluate(_FIG_STATE_JS, fig_id)
                if kind == "select":
                    n = loc.evaluate("e => e.options.length")
                    loc.select_option(index=(loc.evaluate("e => e.selectedIndex") + 1) % n)
                elif kind == "range":
                    at_end = loc.evaluate("e => +e.value >= +e.max")
                    loc.focus()
                    loc.press("ArrowLeft" if at_end else "ArrowRight")
                else:
                    (page.locator(f'{sel} label:has([data-control="{c["control"]}"])')
                     .click())
                after = page.evaluate(_FIG_STATE_JS, fig_id)
                moves.append({"figure": fig_id, "control": c["control"], "kind": kind,
                              "svgChanged": after["svg"] != before["svg"] and bool(after["svg"]),
                              "pointChanged": after["point"] != before["point"],
                              "before": before["point"], "after": after["point"]})
            final = page.evaluate(_FIG_STATE_JS, fig_id)
            if final["figRight"] > final["viewport"] + 1:
                problems.append(f"{fig_id}: figure reaches {final['figRight']:.0f} px "
                                f"(viewport {final['viewport']})")
            if final["svgScale"] < 0.99:
                problems.append(f"{fig_id}: plot drawn at {final['svgScale']:.2f} of its size")
            if final["pageOverflow"]:
                problems.append(f"{fig_id}: the page scrolls sideways after the moves")
    except Exception as exc:  # navigation/evaluation failure is a problem
        problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        context.close()
    return moves, problems


def _has_math(body: str) -> bool:
    """True when the page body holds math for MathJax (Sphinx wraps it in ``math`` classes)."""
    return bool(re.search(r'class="[^"]*\bmath\b[^"]*"', body))


# ----------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site", nargs="?", default="_build/html", type=Path)
    ap.add_argument("--screenshots", type=Path, default=Path("artifacts/screenshots"))
    ap.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS))
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"error: no built site at {args.site} (run `make book`)", file=sys.stderr)
        return 2
    problems, anchors = static_url_problems(args.site)
    bad = len(problems)
    for p in problems:
        print(f"STATIC  {p}")
    for a in anchors:
        print(f"anchor  {a}")
    counts = {w: {"pages": 0, "failed": 0, "display_math": 0, "clipped_math": 0,
                  "page_overflow": 0, "max_search_boxes": 0} for w in args.widths}
    with SiteChecker(args.site, args.screenshots) as checker:
        for path in html_pages(args.site):
            for width in args.widths:
                shots = DEFAULT_SCREENSHOTS if width == WIDE else PHONE_SCREENSHOTS
                r = checker.check(path, screenshot=path in shots, width=width)
                status = "ok  " if r.ok else "FAIL"
                print(f"{status}  {path} @{width}px  ({r.seconds:.1f}s, {r.requests} requests, "
                      f"{r.mjx_count} math, {r.display_math} display, "
                      f"{len(r.search_boxes)} search box)"
                      + (f"  -> {r.screenshot}" if r.screenshot else ""))
                for p in r.problems:
                    print(f"        {p}")
                for w in r.console_warnings:
                    print(f"        (console warning) {w}")
                bad += len(r.problems)
                c = counts[width]
                c["pages"] += 1
                c["failed"] += not r.ok
                c["display_math"] += r.display_math
                c["clipped_math"] += len(r.clipped_math)
                c["page_overflow"] += bool(r.page_overflow)
                c["max_search_boxes"] = max(c["max_search_boxes"], len(r.search_boxes))
    for width, c in counts.items():
        print(f"at {width} px: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
