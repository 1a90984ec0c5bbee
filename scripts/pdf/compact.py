"""Repack a PDF as Chromium writes it with object streams and a compressed xref (qpdf).

Chromium's PDF back end (Skia) writes every object as plain text with a classic cross-reference
table. A tagged PDF of the whole book holds ~70,000 small dictionaries (structure elements of
the tagged, accessible PDF that the outline is built from) and a 20-byte xref entry for each:
about half of the printed book's bytes. qpdf (through its Python binding ``pikepdf``, pinned in
requirements.txt) moves the non-stream objects into Flate-compressed object streams and writes
a compressed xref stream (ISO 32000-1, 7.5.7 and 7.5.8). Streams that are already compressed
(page contents, fonts, images) are neither decoded nor re-encoded, so the pages are the same;
only the file's layout changes (``pdftotext`` and ``pdftoppm`` give identical output;
tests/test_pdf.py checks this on a matplotlib PDF).

Raises ``ValueError`` on a file qpdf cannot read, or an encrypted one.

Usage: ``python scripts/pdf/compact.py in.pdf out.pdf``
"""

from __future__ import annotations

import sys
from pathlib import Path


def compact(src: Path, dst: Path) -> dict:
    """Write ``src`` to ``dst`` with object streams; return byte and object counts."""
    import pikepdf

    src, dst = Path(src), Path(dst)
    try:
        pdf = pikepdf.open(src)
    except pikepdf.PdfError as e:
        raise ValueError(f"{src}: not a PDF qpdf can read ({e})") from e
    with pdf:
        if pdf.is_encrypted:
            raise ValueError(f"{src} is encrypted: not handled")
        objects = len(pdf.objects)
        pdf.save(dst, object_stream_mode=pikepdf.ObjectStreamMode.generate,
                 compress_streams=True, recompress_flate=False,
                 stream_decode_level=pikepdf.StreamDecodeLevel.none)
    return {"bytes_before": src.stat().st_size, "bytes_after": dst.stat().st_size,
            "objects": objects}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("Usage: ")[1])
    info = compact(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{info['bytes_before'] / 1e6:.1f} MB -> {info['bytes_after'] / 1e6:.1f} MB "
          f"({info['objects']} objects)")
