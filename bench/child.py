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


def show(tag: str, r: dict, digits: int = 10) -> str:
    """One result line of a child run: value, bracket, time, peak memory, method (or the error)."""
    if "error" in r:
        return f"{tag:>7}  ERROR {r['error']}"
    lo, hi = r["bracket"]
    return (f"{tag:>7}  value={r['value']:.{digits}g}  bracket=[{lo:.{digits}g}, {hi:.{digits}g}]"
            f"  time={r['seconds']:8.2f} s  peak={r['peak_mb']:6.0f} MB  method={r['method']}")
