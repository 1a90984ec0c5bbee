"""Run one bench case in its own Python process (wall time and peak memory are its own)."""

from __future__ import annotations

import json
import subprocess
import sys


def run_child(code: str, args: list[str], timeout: float) -> dict:
    """``python -c code *args``; the JSON object on its last stdout line, or ``{"error": ...}``
    (timeout, crash: reported, not hidden)."""
    try:
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    if p.returncode != 0 or not p.stdout.strip():
        return {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:160]}
    return json.loads(p.stdout.strip().splitlines()[-1])
