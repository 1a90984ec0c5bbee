"""Repack a PDF 1.4 file (as Chromium writes it) with object streams and an xref stream (PDF 1.5).

Chromium's PDF back end (Skia) writes every object as plain text with a classic cross-reference
table. A tagged PDF of the whole book holds ~70,000 small dictionaries (structure elements of
the tagged, accessible PDF that the outline is built from) and a 20-byte xref entry for each:
about half of the printed book's bytes. This moves every non-stream object of generation 0
into Flate-compressed object streams and replaces the xref table by a compressed xref stream
(ISO 32000-1, 7.5.7 and 7.5.8). Nothing is re-encoded: streams (page contents, fonts, images)
are copied byte for byte, every other object keeps its number and its text, so the pages are
the same; only the file's layout changes. The result is the same document (``pdftotext`` and
``pdftoppm`` give identical output; tests/test_pdf.py checks this on a matplotlib PDF).

Refuses (``ValueError``) what it does not understand: incremental updates, encryption, an xref
stream already, an object whose bytes do not start with its ``N G obj`` header.

Usage: ``python scripts/pdf/compact.py in.pdf out.pdf``
"""

from __future__ import annotations

import re
import sys
import zlib
from pathlib import Path

_XREF_ENTRY = re.compile(rb"(\d{10}) (\d{5}) ([nf])")
_OBJ_HEAD = re.compile(rb"\s*(\d+)\s+(\d+)\s+obj\b")


def _classic_xref(data: bytes) -> tuple[dict[int, tuple[int, int]], set[int], bytes, int]:
    """Parse the last (only) classic xref table: in-use objects {num: (offset, gen)}, the free
    object numbers, the trailer dictionary's inner text, and the table's offset."""
    m = None
    for m in re.finditer(rb"startxref\s+(\d+)\s+%%EOF", data):
        pass
    if m is None:
        raise ValueError("no startxref")
    start = int(m.group(1))
    if not data.startswith(b"xref", start):
        raise ValueError("not a classic xref table (already compacted?)")
    pos = start + 4
    used: dict[int, tuple[int, int]] = {}
    free: set[int] = set()
    section = re.compile(rb"\s*(\d+)\s+(\d+)\s*?\r?\n")
    while True:
        s = section.match(data, pos)
        if s is None:
            break
        first, count = int(s.group(1)), int(s.group(2))
        pos = s.end()
        for k in range(count):
            e = _XREF_ENTRY.match(data, pos)
            if e is None:
                raise ValueError(f"bad xref entry at byte {pos}")
            if e.group(3) == b"n":
                used[first + k] = (int(e.group(1)), int(e.group(2)))
            else:
                free.add(first + k)
            pos = e.end()
            while data[pos:pos + 1] in (b" ", b"\r", b"\n"):
                pos += 1
    t = re.compile(rb"\s*trailer\s*<<(.*)>>\s*startxref", re.S).match(data, pos)
    if t is None:
        raise ValueError("no trailer after the xref table")
    trailer = t.group(1)
    if re.search(rb"/(Prev|Encrypt|XRefStm)\b", trailer):
        raise ValueError("incremental update or encrypted PDF: not handled")
    return used, free, trailer, start


def compact(src: Path, dst: Path, per_stream: int = 400, level: int = 9) -> dict:
    """Write ``src`` to ``dst`` with object streams; return byte and object counts."""
    data = Path(src).read_bytes()
    if not data.startswith(b"%PDF-1."):
        raise ValueError(f"{src} is not a PDF")
    used, free, trailer, xref_at = _classic_xref(data)
    ends = sorted({off for off, _ in used.values()} | {xref_at})
    next_start = {a: b for a, b in zip(ends, ends[1:])}

    verbatim: list[tuple[int, bytes]] = []      # streams and objects of generation > 0
    packed: list[tuple[int, bytes]] = []        # (num, object text without obj/endobj)
    for num, (off, gen) in sorted(used.items(), key=lambda kv: kv[1][0]):
        chunk = data[off:next_start[off]]
        head = _OBJ_HEAD.match(chunk)
        if head is None or int(head.group(1)) != num or int(head.group(2)) != gen:
            raise ValueError(f"object {num}: offset {off} does not hold '{num} {gen} obj'")
        body = chunk[head.end():].rstrip()
        if not body.endswith(b"endobj"):
            raise ValueError(f"object {num} does not end with endobj")
        body = body[:-len(b"endobj")].rstrip()
        if gen != 0 or body.endswith(b"endstream"):
            verbatim.append((num, chunk[:chunk.rindex(b"endobj") + len(b"endobj")].lstrip()))
        else:
            packed.append((num, body.strip()))

    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    entries: dict[int, tuple[int, int, int]] = {0: (0, 0, 0xFFFF)}
    for num in free:
        entries.setdefault(num, (0, 0, 0))
    for num, raw in verbatim:
        entries[num] = (1, len(out), used[num][1])
        out += raw + b"\n"
    next_num = max(list(used) + list(free) + [0]) + 1
    for i in range(0, len(packed), per_stream):
        group = packed[i:i + per_stream]
        header, body = [], bytearray()
        for k, (num, text) in enumerate(group):
            header.append(b"%d %d" % (num, len(body)))
            body += text + b"\n"
            entries[num] = (2, next_num, k)
        head = b" ".join(header) + b"\n"
        stream = zlib.compress(head + bytes(body), level)
        entries[next_num] = (1, len(out), 0)
        out += (b"%d 0 obj\n<</Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d>>\n"
                b"stream\n" % (next_num, len(group), len(head), len(stream)))
        out += stream + b"\nendstream\nendobj\n"
        next_num += 1

    xref_num, size = next_num, next_num + 1
    xref_at = len(out)
    entries[xref_num] = (1, xref_at, 0)
    if xref_at >= 1 << 32:
        raise ValueError("file too large for 4-byte offsets")
    rows = bytearray()
    for num in range(size):
        kind, a, b = entries.get(num, (0, 0, 0))
        rows += bytes([kind]) + a.to_bytes(4, "big") + b.to_bytes(2, "big")
    stream = zlib.compress(bytes(rows), level)
    rest = re.sub(rb"/Size\s+\d+", b"", trailer).strip()
    out += (b"%d 0 obj\n<</Type /XRef /Size %d /W [1 4 2] /Filter /FlateDecode /Length %d\n"
            % (xref_num, size, len(stream)) + rest + b">>\nstream\n")
    out += stream + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref_at
    Path(dst).write_bytes(bytes(out))
    return {"bytes_before": len(data), "bytes_after": len(out), "objects": len(used),
            "packed": len(packed), "object_streams": -(-len(packed) // per_stream)}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("Usage: ")[1])
    info = compact(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{info['bytes_before'] / 1e6:.1f} MB -> {info['bytes_after'] / 1e6:.1f} MB "
          f"({info['packed']} of {info['objects']} objects in object streams)")
