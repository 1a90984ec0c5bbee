"""One git helper shared by the build scripts (``build_static_figures.py``,
``build_calculator_table.py``, ``live/precompute.py``): the provenance they write names the
commit they ran at."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_output(repo: Path, *args: str) -> str:
    """``git <args>`` run in ``repo``, its stripped output; ``"unknown"`` when git is missing
    or fails (a tarball without ``.git``)."""
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
