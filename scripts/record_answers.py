#!/usr/bin/env python3
"""Record the sealed answers ``book/coursekit/answers.json`` (``make answers``).

The student edition's check cells have no ``expected=`` (it is the solution); there
``coursekit.check`` reads the expected value from ``book/coursekit/answers.json``. This script
executes every instructor notebook of ``book/`` that calls ``check(`` (nbclient, the
notebook's folder as working directory, as nbval runs it) with ``AMP_CHECK_STRICT=1`` (the
solutions must be right) and ``AMP_RECORD_ANSWERS=<temporary file>``: each check merges
``{name: expected}`` into that file. Then it writes ``answers.json``: a header and each value
as base64 of its JSON (so that opening the file shows no answer at a glance; not security).

Re-record after a change of the engine or of a chapter that moves an answer: a strict run of
the instructor edition (nbval in ``make test``) fails naming this command until then::

    python scripts/record_answers.py                          # all notebooks calling check
    python scripts/record_answers.py book/05_new_algorithm.ipynb   # only these (merged)

Without arguments the file is written anew: ids that no notebook uses are dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "book"
sys.path.insert(0, str(BOOK))
import coursekit  # noqa: E402

#: A check call and its id, in a code cell: check("5.2", ...
CHECK_ID = re.compile(r"""\bcheck\(\s*["']([^"']+)["']""")
SKIP_DIRS = {"_ext", "_static", "api", "__pycache__", ".ipynb_checkpoints", "_build"}
HEADER = ("Sealed expected answers of the book's checked exercises (book/coursekit), used "
          "by the student edition, whose check cells have no expected=. Each value is "
          "base64 of its JSON so that opening this file shows no answer at a glance: this "
          "is NOT security (coursekit.decode reads them). Written by "
          "scripts/record_answers.py (make answers) from the instructor notebooks; do not "
          "edit by hand.")


def check_ids(path: Path) -> list[str]:
    """The check ids called in the code cells of one notebook, in order."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    ids: list[str] = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            ids += CHECK_ID.findall("".join(src) if isinstance(src, list) else src)
    return ids


def notebooks_with_checks(book: Path = BOOK) -> list[Path]:
    return sorted(p for p in book.rglob("*.ipynb")
                  if not set(p.relative_to(book).parts) & SKIP_DIRS and check_ids(p))


def execute(path: Path, timeout: int) -> None:
    import nbclient
    import nbformat
    sys.path.insert(0, str(BOOK / "_ext"))
    import amp_kernel_guard     # a lost kernel_info reply: re-asked, one-line failure after 60 s
    amp_kernel_guard.install(lambda: str(path))
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()


def write(answers: dict, path: Path) -> None:
    data = {"about": HEADER,
            "answers": {k: coursekit.encode(answers[k]) for k in sorted(answers, key=_order)}}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _order(name: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.]", name))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="only these notebooks (merged into the existing file)")
    ap.add_argument("--out", type=Path, default=coursekit.ANSWERS)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = ap.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or notebooks_with_checks()
    answers = coursekit.sealed_answers(args.out) if args.notebooks else {}
    os.environ["AMP_CHECK_STRICT"] = "1"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    # the kernel imports this repository's amp (not another checkout's editable install)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "record.json"
        os.environ[coursekit.RECORD_ENV] = str(record)
        for path in paths:
            want = check_ids(path)
            record.unlink(missing_ok=True)
            t0 = time.time()
            execute(path, args.timeout)
            got = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
            missing = [i for i in want if i not in got]
            if missing:
                raise SystemExit(f"{path.name}: no value recorded for {', '.join(missing)}")
            answers.update(got)
            print(f"{path.relative_to(REPO)}: {', '.join(sorted(got, key=_order))} "
                  f"({time.time() - t0:.0f} s)", flush=True)
    write(answers, args.out)
    print(f"wrote {args.out} ({len(answers)} answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
