"""Check a running live app (``make live``) in Chromium: offline, code hidden, MyST rendered.

Usage (the server must be running, e.g. ``make live LIVE_PORT=8871``)::

    python scripts/live/check.py http://127.0.0.1:8871 [--shots artifacts/screenshots]
                                 [--pages index.ipynb 07_experiments.ipynb ...] [--calculator]

For every page it records each request that does not go to the server (and aborts it), console
errors, page errors and failed requests; it checks that no code input is visible, that no raw
MyST marker (```{, {dropdown}, {eq}`, ...) is left in the text and that MathJax typeset the
math. With ``--calculator`` it also asks chapter 10's calculator one question at n = 10^7,
with a screenshot while it is busy (buttons disabled, "computing...") and one when done.
Exit code 0 when every page is clean. Chromium is Debian's (``/usr/bin/chromium``, as in
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


def check_page(browser, base: str, path: str, shots: Path | None, name: str | None = None,
               calculator: bool = False) -> dict:
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
    rep = {"page": path, "external": [], "console_errors": [], "page_errors": [],
           "failed": [], "requests": 0, "problems": [], "screenshots": []}
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
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
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        f = shots / f"live_{name or Path(path or 'root').stem}.png"
        page.screenshot(path=str(f), full_page=False)
        rep["screenshots"].append(str(f))
        widget = page.locator(".jupyter-widgets.widget-interact, .jupyter-widgets.widget-vbox")
        if widget.count():
            widget.first.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            f = shots / f"live_{name or Path(path or 'root').stem}_widget.png"
            page.screenshot(path=str(f), full_page=False)
            rep["screenshots"].append(str(f))
    if calculator:
        calc = ask_calculator(page, shots)
        rep.update(calc)
    ctx.close()
    for key in ("external", "console_errors", "page_errors", "failed"):
        if rep[key]:
            rep["problems"].append(f"{key}: {rep[key][:5]}")
    return rep


def ask_calculator(page, shots: Path | None) -> dict:
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
        f = shots / "live_calculator_busy.png"
        page.screenshot(path=str(f))
        out["screenshots_busy"] = str(f)
    page.wait_for_selector("text=done in", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_timeout(500)
    result = page.locator(".widget-html-content:has-text('certified upper bound')").inner_text()
    out["calculator"] = {"busy_button_disabled": busy_disabled,
                         "enabled_after": button.is_enabled(), "result": result}
    if shots is not None:
        f = shots / "live_calculator_done.png"
        page.screenshot(path=str(f))
        out["screenshots_done"] = str(f)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base", help="server root, e.g. http://127.0.0.1:8866")
    ap.add_argument("--shots", type=Path, default=None)
    ap.add_argument("--pages", nargs="*", default=None,
                    help="notebooks to open (default: the root, index.ipynb and every chapter)")
    ap.add_argument("--app", type=Path, default=Path("_build/live/app"))
    ap.add_argument("--calculator", action="store_true")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    pages = args.pages if args.pages is not None else \
        [""] + ["index.ipynb"] + sorted(p.name for p in args.app.glob("[0-9]*.ipynb"))
    reports = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for path in pages:
            calc = args.calculator and path.startswith("10_")
            try:
                rep = check_page(browser, args.base.rstrip("/"), path, args.shots,
                                 name="root" if path == "" else None, calculator=calc)
            except Exception as exc:  # noqa: BLE001 - reported, the other pages still run
                rep = {"page": path, "problems": [f"{type(exc).__name__}: {exc}"]}
            reports.append(rep)
            print(json.dumps(rep, ensure_ascii=False), flush=True)
        browser.close()
    bad = [r for r in reports if r["problems"]]
    print(f"{len(reports)} pages, {len(bad)} with problems; external requests: "
          f"{sum(len(r.get('external', [])) for r in reports)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
