"""The whole-book PDF (``make pdf``, scripts/build_pdf.py): plausible length, a size students
can download, every figure, math typeset, numbered exercises and the bibliography; and
scripts/pdf/compact.py, which repacks Chromium's PDF, checked on a small PDF of its own.

The book's PDF tests run when ``_build/pdf/amp-book.pdf`` exists (or ``$AMP_PDF``); skipped
otherwise, unless ``AMP_REQUIRE_PDF=1``, which turns a missing PDF into a failure. The
compaction test runs in the default unit run (it needs poppler-utils only). Reads the PDF's
text with ``pdftotext`` and its images with ``pdfimages`` (Debian's poppler-utils:
``apt-get install -y poppler-utils``), and the report ``amp-book.json`` that build_pdf.py writes
beside the PDF (what the printed page held: figures, math, exercises).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PDF = Path(os.environ.get("AMP_PDF", REPO / "_build" / "pdf" / "amp-book.pdf"))
REPORT = PDF.with_suffix(".json")
REQUIRED = os.environ.get("AMP_REQUIRE_PDF", "") not in ("", "0")

sys.path.insert(0, str(REPO / "tests"))
from browser_check import _RAW_DOLLAR_TEX, _RAW_TEX_COMMAND  # noqa: E402

#: Upper limit on the book's PDF. Printed as Chromium writes it, the book was 58.4 MB (410
#: pages): ~35 MB of scroll-edge gradients, 5 MB of rasterised shadows, 8 MB of uncompressed
#: structure tree; scripts/pdf/amp-print.css and scripts/pdf/compact.py remove those.
MAX_PDF_MB = 15.0

#: the tests that read the book's PDF (the compaction test below makes its own PDF)
needs_pdf = pytest.mark.skipif(not PDF.is_file(), reason=f"no PDF at {PDF} (run `make pdf`)")


def test_pdf_exists() -> None:
    if not PDF.is_file():
        if REQUIRED:
            pytest.fail(f"no PDF at {PDF} (run `make pdf`)")
        pytest.skip(f"no PDF at {PDF} (run `make pdf`)")
    assert PDF.stat().st_size > 100_000


def _poppler(tool: str) -> str:
    exe = shutil.which(tool)
    if exe is None:
        if REQUIRED:
            pytest.fail(f"{tool} not found (apt-get install -y poppler-utils)")
        pytest.skip(f"{tool} not found (apt-get install -y poppler-utils)")
    return exe


def _report() -> dict:
    assert REPORT.is_file(), f"{REPORT} missing: build the PDF with scripts/build_pdf.py"
    return json.loads(REPORT.read_text(encoding="utf-8"))


def _toc_files() -> list[str]:
    yaml = pytest.importorskip("yaml")
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries: list) -> None:
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections", []))
            walk(e.get("chapters", []))

    walk(toc.get("chapters", []))
    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return files


class _Images(HTMLParser):
    """``<img>`` sources inside the article of a built page (figures, not logos)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth, self.srcs = 0, []

    def handle_starttag(self, tag, attrs) -> None:
        a = dict(attrs)
        if tag == "article":
            self.depth += 1
        elif tag == "img" and self.depth and a.get("src"):
            self.srcs.append(a["src"])

    def handle_endtag(self, tag) -> None:
        if tag == "article":
            self.depth -= 1


def _figures_of(html: Path) -> list[str]:
    p = _Images()
    p.feed(html.read_text(encoding="utf-8", errors="replace"))
    return p.srcs


@pytest.fixture(scope="module")
def text() -> str:
    exe = _poppler("pdftotext")
    return subprocess.run([exe, "-layout", str(PDF), "-"], capture_output=True, text=True,
                          check=True).stdout


@needs_pdf
def test_page_count_is_plausible() -> None:
    exe = _poppler("pdfinfo")
    info = subprocess.run([exe, str(PDF)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    chapters = len(_toc_files())
    # a chapter prints to a few pages at least; the whole book to a few hundred at most
    assert 3 * chapters <= pages <= 1500, f"{pages} pages for {chapters} toc entries"
    assert _report()["pages"] == pages


@needs_pdf
def test_size_is_downloadable() -> None:
    size = PDF.stat().st_size
    report = _report()
    assert size <= MAX_PDF_MB * 1e6, (
        f"the PDF is {size / 1e6:.1f} MB ({report.get('pages')} pages; "
        f"{report.get('bytes_chromium', size) / 1e6:.1f} MB as Chromium wrote it), above the "
        f"{MAX_PDF_MB:g} MB limit. Where the bytes are: `pdfimages -list` (figures, rasterised "
        "shadows), `pdffonts`; a gradient or shadow on every formula becomes thousands of "
        "patterns (scripts/pdf/amp-print.css); an uncompacted file keeps its structure tree "
        "as plain text (scripts/pdf/compact.py)")
    assert report["bytes"] == size, "amp-book.json describes another file than amp-book.pdf"


@needs_pdf
def test_every_figure_is_printed() -> None:
    report = _report()
    site = Path(report["site"])
    root = site / report.get("page", "index.html")
    expected = _figures_of(root) if root.is_file() else None
    printed = report["figures"]
    assert not report["broken_images"], report["broken_images"]
    assert all(f["width"] > 0 for f in printed), [f for f in printed if not f["width"]]
    if expected is not None:
        assert len(printed) == len(expected), (len(printed), len(expected))
    # the multi-page site, when built, holds the same figures
    html = Path(os.environ.get("AMP_SITE_DIR", REPO / "_build" / "html"))
    if (html / "index.html").is_file():
        site_figs = sum(len(_figures_of(html / f"{f}.html")) for f in _toc_files()
                        if (html / f"{f}.html").is_file())
        assert len(printed) == site_figs, f"PDF {len(printed)} figures, site {site_figs}"
    # and the PDF embeds them (raster figures are images in the PDF; SVGs are vector paths)
    exe = _poppler("pdfimages")
    listing = subprocess.run([exe, "-list", str(PDF)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    raster = [f for f in printed if not f["src"].lower().endswith(".svg")]
    assert len(listing) >= len({f["src"] for f in raster}), (len(listing), len(raster))


@needs_pdf
def test_no_untypeset_math(text: str) -> None:
    """No raw TeX in the visible text of the printed page (outside code: the DOM check of
    build_pdf.py), and none in the PDF's text beyond what code blocks print verbatim (a
    matplotlib label such as r"$\\varepsilon_0$" is code, not untypeset math)."""
    report = _report()
    assert report["mjx"] > 100 and not report["raw_tex"], report["raw_tex"]
    in_code = report["tex_in_code"]
    for marker, allowed in in_code.items():
        pattern = {"$...$": _RAW_DOLLAR_TEX, "\\command": _RAW_TEX_COMMAND}.get(marker)
        found = len(pattern.findall(text)) if pattern else text.count(marker)
        if found > allowed:
            hits = [m.start() for m in pattern.finditer(text)] if pattern else [text.index(marker)]
            i = hits[-1] if hits else 0
            pytest.fail(f"raw TeX {marker!r} {found} times in the PDF's text, {allowed} in code: "
                        f"...{text[max(0, i - 80):i + 80]!r}...")


@needs_pdf
def test_numbered_exercises_and_bibliography(text: str) -> None:
    report = _report()
    numbers = set(re.findall(r"Exercise (\d+\.\d+|3b?\.\d+)", text))
    assert len(numbers) >= 3 * 10, sorted(numbers)
    assert report["exercises"] >= len(numbers) or report["exercises"] == 0
    assert "Balle" in text and re.search(r"Bibliography|References", text)
    assert re.search(r"\b2019\b", text)


def _compact():
    path = REPO / "scripts" / "pdf" / "compact.py"
    spec = importlib.util.spec_from_file_location("amp_pdf_compact", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compact


def test_compact_keeps_every_page(tmp_path: Path) -> None:
    """scripts/pdf/compact.py on a two-page matplotlib PDF (PDF 1.4, classic xref table, stream
    lengths as indirect objects). Oracle: poppler reading both files: the same text, the same
    pixels on every page, no syntax error; and the repacked file does use object streams and an
    xref stream; a file that is not a PDF is refused."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    src, dst = tmp_path / "in.pdf", tmp_path / "out.pdf"
    with PdfPages(src) as pages:
        for k in (1, 2):
            fig = Figure(figsize=(4, 3))
            ax = fig.add_subplot()
            ax.plot([0, 1, 2], [k, 0, k], label=f"Theorem 4, §5.1 (page {k})")
            ax.set_title(r"$\varepsilon_0$ against $\delta$")
            ax.legend()
            pages.savefig(fig)
    info = _compact()(src, dst)
    out = dst.read_bytes()
    assert out.startswith(b"%PDF-1.5") and b"/Type /ObjStm" in out and b"/Type /XRef" in out
    assert not re.search(rb"(?m)^xref\s", out) and info["objects"] > 10
    for tool, args in (("pdftotext", ["-layout"]), ("pdftoppm", ["-r", "40"])):
        exe = _poppler(tool)
        outputs = []
        for pdf in (src, dst):
            prefix = tmp_path / f"{tool}-{pdf.stem}"
            target = [str(prefix) + ".txt"] if tool == "pdftotext" else [str(prefix)]
            run = subprocess.run([exe, *args, str(pdf), *target], capture_output=True, text=True)
            assert run.returncode == 0 and not run.stderr, (tool, pdf.name, run.stderr)
            outputs.append({p.name[len(prefix.name):]: p.read_bytes()
                            for p in sorted(tmp_path.glob(f"{prefix.name}*"))})
        assert outputs[0] == outputs[1] and outputs[0], f"{tool} output differs"
    assert len(outputs[0]) == 2                  # two pages rendered
    (tmp_path / "junk.pdf").write_bytes(b"not a pdf")
    with pytest.raises(ValueError, match="not a PDF"):
        _compact()(tmp_path / "junk.pdf", tmp_path / "again.pdf")
