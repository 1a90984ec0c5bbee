"""Precompute what the live app's pages would otherwise compute at every opening.

Usage (from the repository root)::

    python scripts/live/precompute.py [--out book/data/live] [--check] [--only NAME ...]

writes ``book/data/live/ch12_calibrations.json``: every certified calibration of ``eps0``
that Chapter 12 and its widget ask for (:func:`ch12_calibrations`; ``book/accuracy_figs.py``
reads an oracle's ``eps0`` there instead of calibrating again, about a second each: the
widget's slowest settings become instant), and ``book/data/live/ch11_rounds.json``: the curves of Chapter 11's figure "sampled
rounds" (``fig-rounds-sampled``, also drawn by ``fig-rounds-baselines``): 10-RR, eps0 = 2,
n = 10,000, delta = 1e-6, T = 1, 10, 100, 1000, every client (with the baselines) and
sampled at q = 0.1 (without), computed by :func:`ampbook.rounds.rounds_curves` exactly as the
chapter's cell computed them, and which setting of the chapter's widget the first curve is
(its opening figure: :func:`ampbook.rounds.rounds_widget`'s ``precomputed``). Their inputs
never change, so the chapter loads them (:func:`ampbook.rounds.load_stored_rounds`) instead
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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "book" / "data" / "live"

#: Chapter 11's figure (cell of ``fig-rounds-sampled``): its question.
CH11 = {"mechanism": "k-RR", "k": 10, "eps0": 2.0, "n": 10_000, "delta": 1e-6,
        "rounds": [1, 10, 100, 1000], "sampled_q": 0.1}


sys.path.insert(0, str(ROOT / "scripts"))
from repo_git import git_output  # noqa: E402  (the build scripts' one git helper)


def _modified() -> bool | None:
    """Whether ``amp/`` differs from the commit (None when git cannot say)."""
    status = git_output(ROOT, "status", "--porcelain", "amp")
    return None if status == "unknown" else bool(status)


def provenance(argv: list[str]) -> dict:
    import numpy
    import scipy

    h = hashlib.sha256()
    for p in sorted((ROOT / "amp").rglob("*.py")):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes())
    return {"command": " ".join(["python scripts/live/precompute.py", *argv]).strip(),
            "git_commit": git_output(ROOT, "rev-parse", "HEAD"),
            "amp_modified_since_commit": _modified(),
            "amp_source_sha256": h.hexdigest(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "scipy": scipy.__version__,
            "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def ch11_rounds() -> dict:
    """Chapter 11's curves, as its cell computes them (no provenance)."""
    from amp import KRR
    from ampbook.rounds import WIDGET_ROUNDS, curves_to_json, rounds_curves

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


def ch12_calibrations() -> dict:
    """Every calibration Chapter 12 and its widget ask for (no provenance): the certified
    ``eps0`` of :func:`ampbook.accuracy.calibrated_oracle` (Theorem 4) for each oracle, each
    ``n`` and central ``eps`` of the widget (``book/accuracy_figs.py``: ``WIDGET_NS``, the
    dataset's 42,049 users, eps = 0.25, 0.5, ..., 3 at delta = 1e-6, k = 59 states), and the
    Zipf population's ``k = 100`` at the chapter's ``n`` and eps = 1."""
    import numpy as np

    from ampbook import accuracy as A

    sys.path.insert(0, str(ROOT / "book"))
    import accuracy_figs as F

    k_states, n_states, delta = 59, 42_049, 1e-6
    ns = sorted({n_states, *(n for n in F.WIDGET_NS.values() if n)})
    eps_grid = [float(e) for e in np.arange(1, 13) * 0.25]       # the widget's slider
    questions = [(name, k_states, n, e) for name in A.ORACLES for n in ns for e in eps_grid]
    questions += [(name, 100, n, 1.0) for name in A.ORACLES for n in
                  (10**3, 10**4, 10**5, 10**6, 10**7)]
    rows = [{"name": name, "k": k, "n": n, "eps": e, "delta": delta,
             "eps0": A.calibrated_oracle(name, k, n, e, delta).eps0}
            for name, k, n, e in questions]
    return {"question": {"rel_tol": 1e-4, "function": "ampbook.accuracy.calibrated_oracle"},
            "calibrations": rows}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true",
                    help="recompute and compare with the stored file; write nothing")
    ap.add_argument("--only", nargs="*", default=None, help="only these files (names)")
    args = ap.parse_args(argv)
    bad = 0
    for name, make in FILES.items():
        if args.only and name not in args.only:
            continue
        path = args.out / name
        data = make()
        if args.check:
            stored = json.loads(path.read_text(encoding="utf-8"))
            stored.pop("provenance", None)
            same = json.loads(json.dumps(data)) == stored
            bad += not same
            print(f"{path}: {'identical to a fresh computation' if same else 'DIFFERS'}")
            continue
        data = {"provenance": provenance([a for a in argv if a != "--check"]), **data}
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 1 if bad else 0


#: The files written, by name, and the function computing each.
FILES = {"ch11_rounds.json": ch11_rounds, "ch12_calibrations.json": ch12_calibrations}


if __name__ == "__main__":
    sys.exit(main())
