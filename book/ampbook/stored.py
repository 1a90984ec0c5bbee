"""The stored curves of Figures 2 and 3 and tables read from them.

``bench/reproduce_figures.py`` computes every point with
:func:`ampbook.experiments.experiment_point` and writes the file (the book's
``book/data/figures.json``); the book reads it with :func:`load_figures`, giving its path (the
full computation takes minutes; the library itself reads no file of the source tree). A file holds ``inputs`` (``delta``, ``eps0``, ``n``, ...),
``panels`` (one per mechanism and ``eps0``, each with ``curves[key]`` lists ``n``, ``value``,
``lower``, ``upper``, ``seconds``, ``method``), the ``finite_domain`` rows and provenance.
Reading a file computes nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from amp.core.errors import ParameterError

__all__ = ["TIMING_KEYS", "load_figures", "panel", "curve", "curve_value",
           "stored_point", "tightness_rows", "timing_rows", "finite_domain_rows"]

#: Curves of the timing table (Chapter 7), in column order.
TIMING_KEYS = ("upper", "lower", "joint2_upper", "joint4_upper", "clone", "bennett")


def load_figures(path: str | Path) -> dict:
    """Load stored curves of Figures 2 and 3 from ``path`` (a file written by
    ``bench/reproduce_figures.py``; the book passes its ``data/figures.json``)."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{p} not found: bench/reproduce_figures.py of the repository "
                             "writes the stored curves")
    with open(p, encoding="utf-8") as fh:
        return json.load(fh)


def panel(data: Mapping, mechanism: str, eps0: float) -> dict:
    """The stored panel of ``mechanism`` at ``eps0``."""
    for pnl in data["panels"]:
        if pnl["mechanism"] == mechanism and math.isclose(pnl["eps0"], eps0):
            return pnl
    raise ParameterError(f"no stored panel for {mechanism!r} at eps0={eps0}")


def curve(pnl: Mapping, key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(ns, eps)`` of one stored curve of a panel."""
    c = pnl["curves"][key]
    return np.asarray(c["n"], dtype=float), np.asarray(c["value"], dtype=float)


def curve_value(pnl: Mapping, key: str, n: int) -> float:
    """The stored eps of curve ``key`` of a panel at ``n`` (ParameterError if not stored)."""
    ns, v = curve(pnl, key)
    i = np.flatnonzero(ns == n)
    if i.size == 0:
        raise ParameterError(f"n={n} not stored for curve {key!r}")
    return float(v[i[0]])


def stored_point(data: Mapping, mechanism: str, eps0: float, key: str, n: int) -> dict:
    """``{"value", "lower", "upper", "seconds"}`` of one stored point of ``figures.json``."""
    c = panel(data, mechanism, eps0)["curves"][key]
    ns = list(c["n"])
    if n not in ns:
        raise ParameterError(f"n={n} not stored for curve {key!r}")
    i = ns.index(n)
    return {k: c[k][i] for k in ("value", "lower", "upper", "seconds")}


def tightness_rows(data: Mapping, ns: Iterable[int] = (1000, 10000, 100000)
                   ) -> list[list[object]]:
    """Rows ``[mechanism, eps0, (e^eps_u - 1)/(e^eps_l - 1) at each n...]`` (upper / lower)."""
    rows = []
    for pnl in data["panels"]:
        row: list[object] = [pnl["mechanism"], pnl["eps0"]]
        for n in ns:
            up, lo = curve_value(pnl, "upper", n), curve_value(pnl, "lower", n)
            row.append(math.expm1(up) / math.expm1(lo))
        rows.append(row)
    return rows


def timing_rows(data: Mapping, keys: Sequence[str] = TIMING_KEYS) -> list[list[object]]:
    """Rows ``[mechanism, eps0, seconds per curve for each key...]`` from the stored timings.

    A curve's time is the sum over its stored ``n`` (one certified ``eps(delta)`` each).
    """
    rows = []
    for pnl in data["panels"]:
        rows.append([pnl["mechanism"], pnl["eps0"]] +
                    [float(np.sum(pnl["curves"][k]["seconds"])) for k in keys])
    return rows


def finite_domain_rows(data: Mapping, ns: Sequence[int] = (1_000, 100_000)
                       ) -> list[list[object]]:
    """Rows ``[eps0, d, gamma, eps at each n...]`` of the stored finite-domain effect
    (``d = "Table 1"`` for the large-domain row)."""
    fin = data["finite_domain"]
    rows = []
    for r in fin["rows"]:
        stored = list(r["n"])
        rows.append([r["eps0"], "Table 1" if r["d"] is None else r["d"], r["gamma"]] +
                    [r["value"][stored.index(n)] for n in ns])
    return rows
