"""Precompute what the live app's pages would otherwise compute at every opening.

Usage (from the repository root)::

    python scripts/live/precompute.py [--out book/data/live] [--check]

writes ``book/data/live/ch11_rounds.json``: the curves of Chapter 11's figure "sampled
rounds" (``fig-rounds-sampled``, also drawn by ``fig-rounds-baselines``): 10-RR, eps0 = 2,
n = 10,000, delta = 1e-6, T = 1, 10, 100, 1000, every client (with the baselines) and
sampled at q = 0.1 (without), computed by :func:`amp.viz.rounds.rounds_curves` exactly as the
chapter's cell computed them, and which setting of the chapter's widget the first curve is
(its opening figure: :func:`amp.viz.rounds.rounds_widget`'s ``precomputed``). Their inputs
never change, so the chapter loads them (:func:`amp.viz.rounds.load_stored_rounds`) instead
of spending about half a minute of its opening on them. Floats are written as Python writes
them: the file holds the very values the computation returned.

``--check`` recomputes and compares with the file instead of writing (exit 1 on any
difference); ``tests/test_live_data.py`` runs it (slow). The chapter's hidden check
recomputes one curve when nbval runs the instructor's notebook.
Provenance (command, commit, a hash of ``amp/``, versions, time) is stored in the file.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "book" / "data" / "live"

#: Chapter 11's figure (cell of ``fig-rounds-sampled``): its question.
CH11 = {"mechanism": "k-RR", "k": 10, "eps0": 2.0, "n": 10_000, "delta": 1e-6,
        "rounds": [1, 10, 100, 1000], "sampled_q": 0.1}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def provenance(argv: list[str]) -> dict:
    import numpy
    import scipy

    h = hashlib.sha256()
    for p in sorted((ROOT / "amp").rglob("*.py")):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes())
    return {"command": " ".join(["python scripts/live/precompute.py", *argv]).strip(),
            "git_commit": _git("rev-parse", "HEAD"),
            "amp_modified_since_commit": bool(_git("status", "--porcelain", "amp")),
            "amp_source_sha256": h.hexdigest(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "scipy": scipy.__version__,
            "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def ch11_rounds() -> dict:
    """Chapter 11's curves, as its cell computes them (no provenance)."""
    from amp import KRR
    from amp.viz.rounds import WIDGET_ROUNDS, curves_to_json, rounds_curves

    q = CH11
    mech, n, delta, Ts = KRR(q["eps0"], k=q["k"]), q["n"], q["delta"], tuple(q["rounds"])
    full_c = rounds_curves(mech, n, delta, Ts)
    sampled_c = rounds_curves(mech, n, delta, Ts, sampling=q["sampled_q"], baselines=False)
    # the widget's opening setting is this question (make_mechanism("k-RR", 2.0) is 10-RR,
    # n = 10^4.0, delta = 10^-6, T = WIDGET_ROUNDS): checked here, not assumed
    assert Ts == tuple(WIDGET_ROUNDS) and 10.0 ** -6 == delta and round(10 ** 4.0) == n
    return {"question": q,
            "curves": {"full": curves_to_json(full_c), "sampled": curves_to_json(sampled_c)},
            "widget": [{"setting": {"mechanism": "k-RR", "eps0": 2.0, "log10_n": 4.0,
                                    "sampling": 1.0, "delta_exponent": -6},
                        "curves": "full"}]}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true",
                    help="recompute and compare with the stored file; write nothing")
    args = ap.parse_args(argv)
    path = args.out / "ch11_rounds.json"
    data = ch11_rounds()
    if args.check:
        stored = json.loads(path.read_text(encoding="utf-8"))
        stored.pop("provenance", None)
        same = json.loads(json.dumps(data)) == stored
        print(f"{path}: {'identical to a fresh computation' if same else 'DIFFERS'}")
        return 0 if same else 1
    data = {"provenance": provenance([a for a in argv if a != "--check"]), **data}
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
