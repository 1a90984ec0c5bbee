"""HTML tables of the book: Table 1 (the law of ``G_eps`` per mechanism) and a generic table.

Presentation only: :func:`table1_rows` sorts the GPARV laws of :mod:`amp.mechanisms` into the
five columns of Table 1 (Section 5.2); :func:`table1_html` and :func:`html_table` render rows as
HTML for ``IPython.display.HTML``.
"""

from __future__ import annotations

import html
import math
from typing import Mapping, Sequence

import numpy as np

from amp.core.errors import ParameterError
from amp.mechanisms.base import Mechanism

__all__ = ["TABLE1_COLUMNS", "table1_rows", "table1_html", "html_table"]

#: Column headers of Table 1 (values of ``G_eps``), from the blanket atoms with likelihood ratios
#: ``(a, b) = (1, E), (E, E), (1, 1)``, the off-blanket atom, and ``(E, 1)``, ``E = e^eps0``.
TABLE1_COLUMNS = ("1 − e^(ε+ε₀)", "e^ε₀ − e^(ε+ε₀)", "1 − e^ε", "0", "e^ε₀ − e^ε")
_COL_OF_AB = {(0, 1): 0, (1, 1): 1, (0, 0): 2, (1, 0): 4}   # (a is E, b is E) -> column


def table1_rows(mechanisms: Sequence[Mechanism]) -> list[tuple[str, np.ndarray, float]]:
    """``(description, probabilities of the five Table 1 columns, gamma)`` per mechanism.

    Table 1 (Section 5.2) lists the law of ``G_eps`` on the five values ``1 - e^(eps+eps0)``,
    ``e^eps0 - e^(eps+eps0)``, ``1 - e^eps``, ``0``, ``e^eps0 - e^eps``; they come from blanket
    atoms with likelihood ratios ``(a, b)`` equal to ``(1, E)``, ``(E, E)``, ``(1, 1)``, the
    off-blanket atom, and ``(E, 1)`` (``E = e^eps0``). The probabilities do not depend on
    ``eps``. Raises :class:`ParameterError` if a law has an atom outside these columns or more
    than one pair law.
    """
    rows = []
    for mech in mechanisms:
        laws = mech.gparv_laws()
        if len(laws) != 1:
            raise ParameterError(f"{mech.describe()} has {len(laws)} pair laws; Table 1 needs one")
        law = laws[0]
        E = math.exp(mech.eps0)
        probs = np.zeros(5)
        for a, b, p in zip(law.a, law.b, law.p):
            key = []
            for r in (a, b):
                if math.isclose(r, 1.0, rel_tol=1e-9):
                    key.append(0)
                elif math.isclose(r, E, rel_tol=1e-9):
                    key.append(1)
                else:
                    raise ParameterError(f"{mech.describe()}: ratio {r} is neither 1 nor e^eps0")
            probs[_COL_OF_AB[tuple(key)]] += p
        probs[3] += law.off_mass
        rows.append((mech.describe(), probs, law.gamma))
    return rows


def table1_html(rows: Sequence[tuple[str, np.ndarray, float]], eps0: float, eps: float,
                digits: int = 4) -> str:
    """HTML table of :func:`table1_rows` with the numeric values of the columns at ``eps``."""
    E, e = math.exp(eps0), math.exp(eps)
    values = (1 - e * E, E - e * E, 1 - e, 0.0, E - e)
    head = "".join(f"<th>{html.escape(name)}<br><small>= {v:.4g}</small></th>"
                   for name, v in zip(TABLE1_COLUMNS, values))
    body = []
    for desc, probs, gamma in rows:
        cells = "".join(f"<td>{p:.{digits}f}</td>" for p in probs)
        body.append(f"<tr><td>{html.escape(desc)}</td>{cells}<td>{gamma:.{digits}f}</td></tr>")
    caption = (f"Law of G<sub>ε</sub> (Table 1) at ε₀ = {eps0:g}, ε = {eps:g}: probability of "
               "each value; γ is the blanket mass")
    return ("<table class='table'>"
            f"<caption>{caption}</caption>"
            f"<thead><tr><th>mechanism</th>{head}<th>γ</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def html_table(header: Sequence[str], rows: Sequence[Sequence[object]], *,
               fmt: Mapping[int, str] | None = None, caption: str = "") -> str:
    """A small HTML table; ``fmt`` maps a column index to a format spec (e.g. ``".3f"``)."""
    fmt = fmt or {}

    def cell(i: int, v: object) -> str:
        if isinstance(v, float) and i in fmt:
            return format(v, fmt[i])
        return str(v)

    out = ['<table class="table">']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) +
               "</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(cell(i, v))}</td>"
                                    for i, v in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)
