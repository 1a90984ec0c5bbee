"""Reproduce the curves of Figures 2 and 3 (Section 7) and store them for the book.

For 10-RR, BLH, RAPPOR and OUE (Table 1 rows), at a low (0.1) and a large (2.0) local eps0,
``delta = 1e-6`` and 13 log-spaced ``n`` from 10^3 to 10^5 (10^(1/6) apart, so 10^3, 10^4 and
10^5 are on the grid), this computes the central eps of

* ``upper``: the optimal decomposition bound (Theorem 4), certified from above;
* ``lower``: Theorem 5's lower bound (X_b = (x_b, x2, ..., x2)), certified from below;
* ``clone``: the standard clone bound for generic eps0-LDP randomizers (Theorem 3, exact);
* ``hoeffding``, ``bennett``: the privacy blanket bounds with Hoeffding's / Bennett's
  inequality for the specific mechanism (Balle et al. 2019; Bennett in its corrected form);
* ``joint2_*``, ``joint4_*``: upper and lower bounds of the 2- and 4-joint compositions with
  eps0/2 and eps0/4 per component (Section 6); the upper bound is the maximum over every pair
  type of joint inputs.

Every point goes through :func:`ampbook.experiments.experiment_point` (the function the book
uses to re-check stored points live) and is stored with its certified bracket, its wall time
and the evaluation route, together with the inputs, the amp version, the git commit, whether
``amp/`` had uncommitted changes, and a hash of the amp sources. It also stores the
finite-domain effect: RAPPOR over d = 3, 5, 10, 20 bits against the Table 1 row, at eps0 = 0.1,
2 and 4, with brackets of relative width 1e-5 (the effect is smaller than the 1e-3 brackets of
the figures). The book's Chapter 7 plots ``book/data/figures.json``.

Usage: ``python bench/reproduce_figures.py [--quick] [--out PATH]``. Progress (one line per
point, with elapsed time and an estimate of the time left) goes to stderr; a partial file
``figures.partial.json`` is written after every panel. Full run: 7.7 minutes on a two-core
machine (more when the cores are shared); ``--quick`` (n = 10^3, 10^4, 10^5 only): a few
minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy

import amp
from ampbook.experiments import (CURVE_STYLES, EXPERIMENT_MECHANISMS, experiment_mechanism,
                                 experiment_point)

ROOT = Path(__file__).resolve().parents[1]
DELTA = 1e-6
EPS0 = (0.1, 2.0)
REL_TOL = 1e-3
JOINT = (2, 4)
FINITE_D = (3, 5, 10, 20, None)
FINITE_EPS0 = (0.1, 2.0, 4.0)
FINITE_REL_TOL = 1e-5
FULL_NS = sorted({int(round(x)) for x in np.logspace(3, 5, 13)})
QUICK_NS = [1_000, 10_000, 100_000]
#: Rough relative cost of one point per n (measured): used only for the time-left estimate.
COST_EXPONENT = 0.25


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def provenance(argv: list[str]) -> dict:
    """amp version, git commit, whether amp/ differs from it, and a hash of the amp sources."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""
    from importlib.metadata import PackageNotFoundError, version
    try:
        amp_version = version("amp")
    except PackageNotFoundError:
        amp_version = "unknown"
    h = hashlib.sha256()
    for f in sorted((ROOT / "amp").rglob("*.py")):
        h.update(str(f.relative_to(ROOT)).encode())
        h.update(f.read_bytes())
    return {"command": " ".join(["python", "bench/reproduce_figures.py", *argv]),
            "amp_version": amp_version, "git_commit": git("rev-parse", "HEAD"),
            "git_commit_subject": git("log", "-1", "--format=%s"),
            "amp_modified_since_commit": bool(git("status", "--porcelain", "--", "amp")),
            "amp_source_sha256": h.hexdigest(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__,
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores"}


class Progress:
    """Counts done work (weighted by a rough cost per n) and prints elapsed / time left."""

    def __init__(self, total_weight: float):
        self.total = total_weight
        self.done = 0.0
        self.t0 = time.perf_counter()

    def step(self, weight: float) -> str:
        self.done += weight
        el = time.perf_counter() - self.t0
        left = max(0.0, el * (self.total - self.done) / self.done) if self.done > 0 \
            else float("nan")
        return f"elapsed {el / 60:5.1f} min, ~{left / 60:4.1f} min left"


def weight(n: int) -> float:
    return (n / 1000) ** COST_EXPONENT


def run_curve(name: str, eps0: float, key: str, ns: list[int], prog: Progress) -> dict:
    pts = []
    for n in ns:
        p = experiment_point(name, eps0, key, n, DELTA, rel_tol=REL_TOL)
        seconds = p.details["seconds"]
        pts.append({"n": n, "value": p.value, "lower": p.lower, "upper": p.upper,
                    "seconds": seconds, "method": p.method})
        log(f"    {key:<13s} n={n:>6d}: eps={p.value:.6g} [{p.lower:.6g}, {p.upper:.6g}] "
            f"{seconds:5.1f} s  ({prog.step(weight(n))})")
    return {k: [p[k] for p in pts] for k in ("n", "value", "lower", "upper", "seconds",
                                                "method")}


def finite_point(mech, n: int) -> dict:
    """Certified upper eps at FINITE_REL_TOL (looser if the engine cannot reach it)."""
    t0 = time.perf_counter()
    for tol in (FINITE_REL_TOL, 1e-4, REL_TOL):
        try:
            r = amp.epsilon(mech, n, DELTA, rel_tol=tol)
            break
        except amp.NumericalError:
            continue
    else:
        raise amp.NumericalError(f"no certified eps for {mech.describe()} at n={n}")
    return {"n": n, "value": r.value, "lower": r.lower, "upper": r.upper,
            "seconds": time.perf_counter() - t0, "rel_tol": tol}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10^3, 10^4, 10^5 only")
    ap.add_argument("--out", type=Path, default=ROOT / "book" / "data" / "figures.json")
    args = ap.parse_args(argv)
    ns = QUICK_NS if args.quick else FULL_NS
    keys = ["upper", "lower", "clone", "hoeffding", "bennett"] + \
        [f"joint{m}_{b}" for m in JOINT for b in ("upper", "lower")]
    assert set(keys) == set(CURVE_STYLES)
    data: dict = {
        "description": "Figures 2 and 3 of the paper (Section 7), reproduced by "
                       "bench/reproduce_figures.py; eps values at delta = 1e-6",
        "provenance": provenance(argv),
        "inputs": {"delta": DELTA, "eps0": list(EPS0), "n": ns, "rel_tol": REL_TOL,
                   "mechanisms": list(EXPERIMENT_MECHANISMS), "joint": list(JOINT),
                   "quick": bool(args.quick),
                   "notes": {"upper": "optimal decomposition bound (Theorem 4), certified; "
                                      "value = upper end of the bracket",
                             "lower": "Theorem 5 lower bound, certified; value = lower end",
                             "clone": "standard clone, generic eps0-LDP (Theorem 3), exact",
                             "hoeffding": "privacy blanket + Hoeffding, specific mechanism",
                             "bennett": "privacy blanket + Bennett (corrected integral), "
                                        "specific mechanism",
                             "jointK_upper": "K-joint composition, eps0/K per component; max "
                                             "over every pair type of joint inputs",
                             "jointK_lower": "K-joint, Theorem 5 with joint inputs distinct "
                                             "in every component"}},
        "paper_timings": {"fft_seconds_per_curve": 30, "clone_seconds_per_curve": 300},
        "panels": [],
    }
    fin_weight = len(FINITE_EPS0) * len(FINITE_D) * len(ns) * 0.05
    prog = Progress(len(EPS0) * len(EXPERIMENT_MECHANISMS) * len(keys) *
                    sum(weight(n) for n in ns) + fin_weight)
    tmp = args.out.with_suffix(".partial.json")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    total = len(EXPERIMENT_MECHANISMS) * len(EPS0)
    done = 0
    for eps0 in EPS0:
        for name in EXPERIMENT_MECHANISMS:
            done += 1
            t0 = time.perf_counter()
            log(f"[{done}/{total}] {name}, eps0 = {eps0:g} ({prog.step(0)})")
            curves = {key: run_curve(name, eps0, key, ns, prog) for key in keys}
            data["panels"].append({"mechanism": name, "eps0": eps0,
                                   "describe": experiment_mechanism(name, eps0).describe(),
                                   "curves": curves, "seconds": time.perf_counter() - t0})
            log(f"  panel done in {time.perf_counter() - t0:.0f} s")
            tmp.write_text(json.dumps(data, indent=1))
    # finite-domain effect: RAPPOR over d bits vs the Table 1 row (d = None)
    t0 = time.perf_counter()
    data["finite_domain"] = {"mechanism": "RAPPOR", "n": ns, "delta": DELTA,
                             "rel_tol": FINITE_REL_TOL, "rows": []}
    for eps0 in FINITE_EPS0:
        for d in FINITE_D:
            mech = amp.RAPPOR(eps0, d=d)
            pts = [finite_point(mech, n) for n in ns]
            prog.step(len(ns) * 0.05)
            row = {"eps0": eps0, "d": d, "gamma": mech.gamma, "describe": mech.describe(),
                   **{k: [p[k] for p in pts] for k in ("n", "value", "lower", "upper",
                                                       "seconds", "rel_tol")}}
            data["finite_domain"]["rows"].append(row)
            log(f"finite domain: {mech.describe():40s} eps(n=1e3)={pts[0]['value']:.9g} "
                f"({sum(p['seconds'] for p in pts):.1f} s; {prog.step(0)})")
    data["finite_domain"]["seconds"] = time.perf_counter() - t0
    data["total_seconds"] = time.perf_counter() - prog.t0
    data["created"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    if tmp.exists():
        tmp.unlink()
    log(f"wrote {args.out} in {data['total_seconds']:.0f} s "
        f"({data['total_seconds'] / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
