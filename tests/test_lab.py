"""The chapters in JupyterLab, as students run them (``make lab``; issue 33).

A real browser (Debian's Chromium driven by Playwright, as in ``tests/browser_check.py``) opens
JupyterLab 4 with ``jupyterlab-myst`` from the interactive venv (``.venv-live``, installed by
``make lab-venv``), served on a free port of 127.0.0.1 from a temporary copy of the notebooks
(running cells never writes into ``book/``). For chapter 1 of the book and the student edition
of one chapter it runs every cell and checks:

* no cell ends in an error (read from JupyterLab's own notebook model);
* an exercise directive is rendered by jupyterlab-myst, not shown as a code fence;
* (chapter 1) moving one slider of the live widget changes its figure;
* no request leaves 127.0.0.1 (any other is aborted and reported).

Screenshots go to ``$AMP_SCREENSHOT_DIR`` (default ``artifacts/screenshots``): ``lab-ch01.png``
(the rendered exercise), ``lab-widget-before.png`` / ``lab-widget-after.png`` and
``lab-student.png``. Every wait is bounded; the server is stopped in all cases. Without the
interactive venv or the browser the tests are skipped, unless ``AMP_REQUIRE_LAB=1`` (set by
``make test``), which turns that into a failure.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
LAB_PYTHON = Path(os.environ.get("AMP_LAB_PYTHON", REPO / ".venv-live" / "bin" / "python"))
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(os.environ.get("AMP_SCREENSHOT_DIR", REPO / "artifacts" / "screenshots"))
REQUIRED = os.environ.get("AMP_REQUIRE_LAB", "") not in ("", "0")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
START_TIMEOUT = 90          # s for the server to answer
RUN_TIMEOUT = 300           # s for "run all cells" of one notebook
STUDENT_CHAPTER = "05_new_algorithm.ipynb"


def _missing() -> str | None:
    if not LAB_PYTHON.exists():
        return f"no interactive venv at {LAB_PYTHON} (run `make lab-venv`)"
    probe = subprocess.run([str(LAB_PYTHON), "-c", "import jupyterlab, jupyterlab_myst, amp"],
                           capture_output=True, text=True)
    if probe.returncode:
        return f"{LAB_PYTHON} lacks jupyterlab, jupyterlab-myst or amp: {probe.stderr.strip()}"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python package playwright is not installed"
    return None


MISSING = _missing()
if MISSING and not REQUIRED:
    pytest.skip(MISSING, allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(root: Path) -> Path:
    """User settings: no autosave, no news or update checks (nothing fetched from outside)."""
    settings = root / "_lab" / "settings"
    for plugin, values in {
        "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
        # every cell in the page (not only those in view), so that all of them can be checked
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                        "checkForUpdates": False},
    }.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return settings


def lab_command(python: Path, root: Path, port: int, settings: Path | None = None,
                test: bool = False) -> list[str]:
    """The JupyterLab command line (``make lab`` uses the same flags, with a token)."""
    cmd = [str(python), "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:     # CI runs as root
        cmd.append("--allow-root")
    if settings is not None:
        cmd.append(f"--LabApp.user_settings_dir={settings}")
        cmd.append(f"--LabApp.workspaces_dir={settings.parent / 'workspaces'}")
    if test:
        cmd += ["--IdentityProvider.token=", "--ServerApp.password=",
                "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True"]
    return cmd


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free local port over a copy of book/ and of the student edition."""
    assert MISSING is None, MISSING
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(REPO / "book", root / "book",
                    ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__"))
    student = root / "student"
    subprocess.run([sys.executable, str(REPO / "scripts" / "student_edition.py"), "--out",
                    str(student), "--name", "edition"], check=True, cwd=REPO, capture_output=True)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "MPLBACKEND"))}
    env.update(JUPYTER_CONFIG_DIR=str(root / "_lab" / "config"),
               JUPYTER_RUNTIME_DIR=str(root / "_lab" / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(root / "_lab" / "workspaces"))
    log = (root / "_lab" / "server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(lab_command(LAB_PYTHON, root, port, _settings(root), test=True),
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"JupyterLab did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield {"url": url, "root": root, "student": student, "log": log}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Page:
    """One JupyterLab tab with its outside requests recorded (and aborted)."""

    def __init__(self, browser, url: str):
        self.outside: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})

        def route(r) -> None:
            host = urlsplit(r.request.url).hostname
            if r.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()
        self.page.route("**/*", route)
        self.page.set_default_timeout(60_000)
        self.url = url

    # the notebook panel of self.path among JupyterLab's main-area widgets (not "the current
    # widget", which a restored workspace or a launcher can be)
    PANEL = """(path) => { const app = window.jupyterapp; if (!app) return null;
        for (const w of app.shell.widgets('main'))
            if (w.context && w.context.path === path && w.content && w.content.model) return w;
        return null; }"""

    def _js(self, body: str) -> str:
        return f"(path) => {{ const panel = ({self.PANEL})(path); {body} }}"

    def open(self, path: str) -> None:
        self.path = path
        self.page.goto(f"{self.url}/lab/tree/{path}?reset")     # ?reset: no restored workspace
        self.page.wait_for_function(self._js(
            "return !!(panel && panel.sessionContext.session?.kernel?.status === 'idle');"),
            arg=path, timeout=START_TIMEOUT * 1000, polling=500)

    def run_all(self) -> dict:
        """Run every cell; wait until the kernel is idle and every code cell has run."""
        self.page.evaluate(self._js(
            "window.jupyterapp.shell.activateById(panel.id);"
            " return window.jupyterapp.commands.execute('notebook:run-all-cells');"), self.path)
        self.page.wait_for_function(self._js("""
            if (!panel) return false;
            const cells = panel.content.model.cells;
            for (let i = 0; i < cells.length; i++) {
              const c = cells.get(i);
              if (c.type === 'code' && c.sharedModel.getSource().trim()
                  && !c.executionCount) return false;
            }
            return panel.sessionContext.session?.kernel?.status === 'idle';"""),
            arg=self.path, timeout=RUN_TIMEOUT * 1000, polling=1000)
        return self.page.evaluate(self._js("""
            const cells = panel.content.model.cells;
            const out = {code: 0, errors: []};
            for (let i = 0; i < cells.length; i++) {
              const c = cells.get(i);
              if (c.type !== 'code') continue;
              out.code += 1;
              for (const o of c.outputs.toJSON())
                if (o.output_type === 'error')
                  out.errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
            }
            return out;"""), self.path)

    def exercise_rendering(self) -> dict:
        """Rendered exercises (jupyterlab-myst) and raw directive fences left as text."""
        return self.page.evaluate("""() => {
            const md = [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown,'
                                                     + ' .jp-MarkdownCell .myst')];
            const text = md.map(e => e.innerText).join('\\n');
            const raw = (text.match(/```\\{(exercise|solution)\\}|:::\\{(exercise|solution)\\}/g)
                         || []).length;
            const rendered = [...document.querySelectorAll('.jp-MarkdownCell .myst-exercise-title')]
                .filter(e => /^Exercise\\s+\\d/.test(e.innerText || '')).length;
            return {raw, rendered, cells: md.length};
        }""")

    def shot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / name
        self.page.screenshot(path=str(path))
        return path


def _scroll_to(page, selector: str) -> None:
    page.evaluate("""(sel) => { const e = document.querySelector(sel);
                               if (e) e.scrollIntoView({block: 'center'}); }""", selector)


def test_jupyterlab_myst_is_enabled_and_compatible():
    """JupyterLab disables an extension built against other shared packages (4.6 and
    jupyterlab-myst 2.7.0): its list must mark jupyterlab-myst and the widgets manager OK."""
    assert MISSING is None, MISSING
    out = subprocess.run([str(LAB_PYTHON), "-m", "jupyterlab.labextensions", "list"],
                         capture_output=True, text=True, timeout=120)
    text = out.stdout + out.stderr
    for ext in ("jupyterlab-myst", "@jupyter-widgets/jupyterlab-manager"):
        line = next((ln for ln in text.splitlines() if ext in ln), "")
        assert "enabled" in line and "OK" in line, f"{ext}: {line.strip() or 'not installed'}"
    assert "not compatible" not in text, text


def test_chapter_1_runs_in_jupyterlab_with_myst_and_a_live_widget(lab, browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab = Page(browser, lab["url"])
    try:
        tab.open("book/01_introduction.ipynb")
        result = tab.run_all()
        assert result["code"] > 10
        assert not result["errors"], result["errors"]

        ex = tab.exercise_rendering()
        assert ex["raw"] == 0, f"{ex['raw']} exercise directives shown as raw fences"
        assert ex["rendered"] > 0, f"no rendered exercise in {ex['cells']} markdown cells"
        _scroll_to(tab.page, ".jp-MarkdownCell .myst-exercise-title")
        tab.page.wait_for_timeout(500)
        assert tab.shot("lab-ch01.png").stat().st_size > 0

        # the live widget: its first slider (eps0) and the figure it redraws
        area = tab.page.locator(".jp-OutputArea", has=tab.page.locator(".widget-slider")).first
        area.wait_for(state="visible", timeout=60_000)
        slider = area.locator(".widget-slider").first
        readout = slider.locator(".widget-readout").first
        figure = area.locator("img").first
        figure.wait_for(state="visible", timeout=60_000)
        before, value_before = figure.get_attribute("src"), readout.inner_text()
        area.screenshot(path=str(SCREENSHOTS / "lab-widget-before.png"))
        handle = slider.locator(".noUi-handle, .slider-handle, [role=slider]").first
        handle.focus()
        for _ in range(4):
            handle.press("ArrowRight")
        tab.page.wait_for_function(
            "([area, old]) => { const i = [...document.querySelectorAll(area)].find("
            "  e => e.querySelector('.widget-slider'))?.querySelector('img');"
            " return i && i.getAttribute('src') && i.getAttribute('src') !== old; }",
            arg=[".jp-OutputArea", before], timeout=120_000)
        tab.page.wait_for_timeout(500)
        value_after = readout.inner_text()
        area.screenshot(path=str(SCREENSHOTS / "lab-widget-after.png"))
        assert value_after != value_before, f"the slider did not move ({value_before})"
        assert figure.get_attribute("src") != before
        assert not tab.outside, f"requests outside 127.0.0.1: {tab.outside[:5]}"
    finally:
        tab.page.close()


def test_a_student_chapter_runs_in_jupyterlab(lab, browser):
    tab = Page(browser, lab["url"])
    try:
        nb = lab["student"] / "edition" / "book" / STUDENT_CHAPTER
        assert nb.exists(), f"the student edition has no {STUDENT_CHAPTER}"
        tab.open(f"student/edition/book/{STUDENT_CHAPTER}")
        result = tab.run_all()
        assert not result["errors"], result["errors"]
        ex = tab.exercise_rendering()
        assert ex["raw"] == 0 and ex["rendered"] > 0, ex
        text = tab.page.locator(".jp-Notebook").inner_text()
        assert "{solution" not in text
        _scroll_to(tab.page, ".jp-MarkdownCell .myst-exercise-title")
        tab.page.wait_for_timeout(500)
        assert tab.shot("lab-student.png").stat().st_size > 0
        assert not tab.outside, f"requests outside 127.0.0.1: {tab.outside[:5]}"
    finally:
        tab.page.close()
