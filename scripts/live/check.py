"""Check a running live app (``make live``) in Chromium: offline, code hidden, MyST rendered.

Usage (the server must be running, e.g. ``make live LIVE_PORT=8871``)::

    python scripts/live/check.py http://127.0.0.1:8871 [--shots artifacts/screenshots]
                                 [--pages index.ipynb 07_experiments.ipynb ...] [--calculator]
                                 [--widths 1280 390]

Not part of the default test run (it needs the live app's own venv and a running server).

For every page it records each request that does not go to the server (and aborts it), console
errors, page errors and failed requests; it checks that no code input is visible, that no raw
MyST marker (```{, {dropdown}, {eq}`, ...) is left in the text and that MathJax typeset the
math. With ``--calculator`` it also asks chapter 10's calculator one question at n = 10^7,
with a screenshot while it is busy (buttons disabled, "computing...") and one when done.
Every page is opened at each width of ``--widths`` (default 1280 and 390 px, a phone) and
also checked for: a browser tab titled by the chapter (not the file name ``10_calculator``),
fold titles without raw Markdown (backticks), a fold's computation inside its fold (one fold,
not a second "Show output"), each widget cell rendered as a widget (not an error or a text
repr), no horizontal scrolling of the page or inside a widget row, slider readouts not cut
off, and the calculator's main button wide enough for its label. Exit code 0 when every page
is clean. Chromium is Debian's (``/usr/bin/chromium``, as in
``tests/browser_check.py``); Playwright never downloads a browser here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
RAW_MYST = re.compile(r"```\{|:::\{|\{(dropdown|toggle|admonition|note|eq|numref|cite|doc|ref|"
                      r"math|term|exercise|solution|rubric|prf:[a-z]+)\}|^\([\w-]+\)=$", re.M)
RENDER_TIMEOUT_MS = 240_000


LAYOUT_JS = """() => {
  const W = window.innerWidth, out = {};
  out.page_overflow = document.documentElement.scrollWidth - W;
  const vis = e => e.offsetParent !== null;
  const right = e => e.getBoundingClientRect().right;
  out.widgets = [...document.querySelectorAll('.jupyter-widgets')].filter(vis).length;
  out.widget_errors = [...document.querySelectorAll('.jupyter-widgets')]
    .filter(e => /Error displaying widget|model not found/i.test(e.innerText)).length;
  out.text_reprs = [...document.querySelectorAll('.jp-OutputArea-output pre')]
    .filter(e => /^(interactive|VBox|HBox|Accordion)\\(/.test(e.innerText)).length;
  // a widget row wider than the page, or scrolling inside itself
  out.rows_overflowing = [...document.querySelectorAll('.widget-hbox, .widget-vbox, .widget-interact')]
    .filter(vis).filter(e => right(e) > W + 1 || e.scrollWidth > e.clientWidth + 1)
    .map(e => e.className.split(' ').slice(-1)[0] + ':' + Math.round(e.scrollWidth) + '>' +
         Math.round(e.clientWidth)).slice(0, 5);
  // cut: wider than its text, or past the right edge of its cell's output (clipped there)
  const edge = e => Math.min(W, (e.closest('.jp-OutputArea-output') || document.body)
                                  .getBoundingClientRect().right);
  out.readouts_cut = [...document.querySelectorAll('.widget-readout')].filter(vis)
    .filter(e => e.scrollWidth > e.clientWidth + 1 || right(e) > edge(e) + 1)
    .map(e => e.innerText).slice(0, 5);
  out.buttons_cut = [...document.querySelectorAll('.jupyter-widgets button, button.jupyter-button')]
    .filter(vis).filter(e => e.scrollWidth > e.clientWidth + 1 || e.clientWidth < 60 ||
                              right(e) > edge(e) + 1)
    .map(e => e.innerText + ':' + e.clientWidth + 'px').slice(0, 5);
  out.labels_cut = [...document.querySelectorAll('.jupyter-widgets .widget-label, ' +
                                                 '.jupyter-widgets .widget-label-basic span')]
    .filter(vis).filter(e => e.scrollWidth > e.clientWidth + 1 || right(e) > edge(e) + 1 ||
                             e.scrollHeight > e.clientHeight + 2)
    .map(e => e.innerText.slice(0, 40)).slice(0, 5);
  out.summaries_raw = [...document.querySelectorAll('summary, .widget-accordion .lm-AccordionPanel-title, .p-Collapse-header')]
    .map(e => e.innerText).filter(t => /`|\\*\\*|\\{[a-z:]+\\}/.test(t)).slice(0, 5);
  out.folds_marked = document.querySelectorAll('details[data-amp-fold-next]').length;
  out.folds_merged = [...document.querySelectorAll('details[data-amp-fold-next]')]
    .filter(d => d.querySelector('.jp-OutputArea')).length;
  out.show_output_folds = [...document.querySelectorAll('.widget-accordion, .jupyter-widget-Accordion')]
    .filter(e => /Show output|output of the solution/.test(e.innerText)).length;
  return out;
}"""


def check_page(browser, base: str, path: str, shots: Path | None, name: str | None = None,
               calculator: bool = False, width: int = 1280, widgets: int = 0) -> dict:
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
    rep = {"page": path, "width": width, "external": [], "console_errors": [],
           "page_errors": [], "failed": [], "requests": 0, "problems": [], "screenshots": []}
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844},
                              service_workers="block")
    page = ctx.new_page()

    def route(r):
        url = r.request.url
        if url.startswith((origin + "/", "data:", "blob:", "about:", "ws://127.0.0.1")):
            r.continue_()
        else:
            rep["external"].append(url)
            r.abort()

    page.route("**/*", route)
    host = urlsplit(base).netloc                  # websockets are not routed: logged here
    page.on("websocket", lambda ws: urlsplit(ws.url).netloc != host
            and rep["external"].append(ws.url))
    page.on("request", lambda req: rep.__setitem__("requests", rep["requests"] + 1))
    page.on("console", lambda m: m.type == "error" and rep["console_errors"].append(m.text))
    page.on("pageerror", lambda e: rep["page_errors"].append(str(e)))
    page.on("requestfailed", lambda req: req.url not in rep["external"]
            and rep["failed"].append(f"{req.failure} {req.url}"))
    page.on("response", lambda r: r.status >= 400 and rep["failed"].append(
        f"HTTP {r.status} {r.url}"))
    t0 = time.perf_counter()
    url = f"{base}/voila/render/{path}" if path else f"{base}/"
    page.goto(url, wait_until="domcontentloaded", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector("#rendered_cells", state="visible", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_load_state("networkidle", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_timeout(1500)                  # MathJax and widget views settle
    rep["seconds"] = round(time.perf_counter() - t0, 1)
    text = page.inner_text("#rendered_cells")
    visible_inputs = page.eval_on_selector_all(
        ".jp-CodeCell .jp-InputArea, .jp-CodeCell .jp-Editor, pre.cm-content, .highlight-ipynb",
        "els => els.filter(e => e.offsetParent !== null).length")
    if visible_inputs:
        rep["problems"].append(f"{visible_inputs} code inputs visible")
    for m in RAW_MYST.finditer(text):
        rep["problems"].append(f"raw MyST marker {m.group(0)!r}")
    if "$" in text and re.search(r"\$[^$\n]{1,80}[\\^_][^$\n]{0,80}\$", text):
        rep["problems"].append("math left untypeset ($...$ in the text)")
    rep["math_elements"] = page.locator("mjx-container, .MathJax").count()
    rep["error_outputs"] = page.locator(
        ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'], "
        ".jp-OutputArea-output .jp-RenderedText pre:has-text('Traceback')").count()
    for bad in ("Traceback", "Error executing cell", "There was an error when executing"):
        if bad in text:
            rep["problems"].append(f"page shows {bad!r}")
    rep["title"] = page.title()
    if re.fullmatch(r"\d+\w*_\w+|index", rep["title"]):
        rep["problems"].append(f"tab title is the file name {rep['title']!r}")
    lay = page.evaluate(LAYOUT_JS)
    rep["layout"] = lay
    if lay["page_overflow"] > 1:
        rep["problems"].append(f"the page scrolls sideways by {lay['page_overflow']} px")
    if widgets and lay["widgets"] == 0:
        rep["problems"].append(f"{widgets} widget cell(s) but no widget rendered")
    for key, what in (("widget_errors", "widget errors"), ("text_reprs", "widgets shown as "
                      "text"), ("rows_overflowing", "widget rows wider than their box"),
                      ("readouts_cut", "slider readouts cut off"),
                      ("buttons_cut", "buttons squashed or cut"),
                      ("labels_cut", "control labels cut off"),
                      ("summaries_raw", "raw Markdown in fold titles"),
                      ("show_output_folds", "separate 'Show output' folds")):
        if lay[key]:
            rep["problems"].append(f"{what}: {lay[key]}")
    if lay["folds_marked"] != lay["folds_merged"]:
        rep["problems"].append(f"{lay['folds_marked'] - lay['folds_merged']} fold(s) whose "
                               "computation stayed outside the fold")
    suffix = "" if width == 1280 else f"_{width}"
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        f = shots / f"live_{name or Path(path or 'root').stem}{suffix}.png"
        page.screenshot(path=str(f), full_page=False)
        rep["screenshots"].append(str(f))
        widget = page.locator(".jupyter-widgets.widget-interact, .jupyter-widgets.widget-vbox")
        if widget.count():
            widget.first.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            f = shots / f"live_{name or Path(path or 'root').stem}_widget{suffix}.png"
            page.screenshot(path=str(f), full_page=False)
            rep["screenshots"].append(str(f))
    if shots is not None and lay["folds_marked"]:          # one fold, opened: text + output
        fold = page.locator("details[data-amp-fold-next]").last
        fold.evaluate("d => { d.open = true; }")
        fold.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        f = shots / f"live_{name or Path(path or 'root').stem}_fold{suffix}.png"
        page.screenshot(path=str(f), full_page=False)
        rep["screenshots"].append(str(f))
    if calculator:
        calc = ask_calculator(page, shots, suffix)
        rep.update(calc)
    ctx.close()
    for key in ("external", "console_errors", "page_errors", "failed"):
        if rep[key]:
            rep["problems"].append(f"{key}: {rep[key][:5]}")
    return rep


def ask_calculator(page, shots: Path | None, suffix: str = "") -> dict:
    """Type n = 1e7 into the calculator, click, screenshot busy and done."""
    out = {"calculator": {}}
    field = page.locator(".widget-text:has(label:text-is('n')) input")
    field.fill("1e7")
    field.press("Enter")
    button = page.locator("button:has-text('certified ε for ε₀')")
    page.locator(".jupyter-widgets.widget-vbox").first.scroll_into_view_if_needed()
    button.click()
    page.wait_for_selector("text=computing", timeout=30_000)
    busy_disabled = button.is_disabled()
    if shots is not None:
        f = shots / f"live_calculator_busy{suffix}.png"
        page.screenshot(path=str(f))
        out["screenshots_busy"] = str(f)
    page.wait_for_selector("text=done in", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_timeout(500)
    result = page.locator(".widget-html-content:has-text('certified upper bound')").inner_text()
    out["calculator"] = {"busy_button_disabled": busy_disabled,
                         "enabled_after": button.is_enabled(), "result": result}
    if shots is not None:
        f = shots / f"live_calculator_done{suffix}.png"
        page.screenshot(path=str(f))
        out["screenshots_done"] = str(f)
    return out


def _widget_cells(notebook: Path) -> int:
    """How many widget cells (tag ``widget``, scripts/live/prepare.py) an app notebook has."""
    if not notebook.is_file():
        return 0
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return sum("widget" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base", help="server root, e.g. http://127.0.0.1:8866")
    ap.add_argument("--shots", type=Path, default=None)
    ap.add_argument("--pages", nargs="*", default=None,
                    help="notebooks to open (default: the root, index.ipynb and every chapter)")
    ap.add_argument("--app", type=Path, default=Path("_build/live/app"))
    ap.add_argument("--calculator", action="store_true")
    ap.add_argument("--widths", nargs="*", type=int, default=[1280, 390])
    args = ap.parse_args(argv)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    pages = args.pages if args.pages is not None else \
        [""] + ["index.ipynb"] + sorted(p.name for p in args.app.glob("[0-9]*.ipynb"))
    reports = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for path, width in [(p, w) for p in pages for w in args.widths]:
            calc = args.calculator and path.startswith("10_")
            rep, first = None, None
            for attempt in (1, 2):
                try:
                    rep = check_page(browser, args.base.rstrip("/"), path, args.shots,
                                     name="root" if path == "" else None, calculator=calc,
                                     width=width, widgets=_widget_cells(args.app / path))
                except PlaywrightTimeout as exc:
                    # A page that never rendered within RENDER_TIMEOUT_MS (a kernel that did
                    # not start, on a loaded machine): tried once more, and said so. A page
                    # that times out twice fails; any other exception fails at once.
                    rep = {"page": path, "width": width,
                           "problems": [f"TimeoutError (attempt {attempt}): {exc}"]}
                    for ctx in browser.contexts:    # the timed-out page's context
                        ctx.close()
                    if attempt == 1:
                        first = str(exc).splitlines()[0]
                        print(f"RETRY {path or 'root'} at {width} px after a timeout: {first}",
                              flush=True)
                        continue
                except Exception as exc:  # noqa: BLE001 - reported, the other pages still run
                    rep = {"page": path, "width": width,
                           "problems": [f"{type(exc).__name__}: {exc}"]}
                break
            if first is not None:
                rep["retried_after"] = first
            reports.append(rep)
            print(json.dumps(rep, ensure_ascii=False), flush=True)
        browser.close()
    bad = [r for r in reports if r["problems"]]
    for width in args.widths:
        at = [r for r in reports if r.get("width") == width]
        print(f"{width} px: {len(at)} pages, {sum(1 for r in at if r['problems'])} with "
              "problems")
    retried = [f"{r['page'] or 'root'} at {r['width']} px" for r in reports
               if "retried_after" in r]
    print(f"{len(reports)} page views, {len(bad)} with problems; external requests: "
          f"{sum(len(r.get('external', [])) for r in reports)}; retried after a timeout: "
          f"{', '.join(retried) or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
