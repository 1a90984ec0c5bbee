"""The result of :func:`amp.sweep`: one row per grid point, as text, CSV, JSON or a pandas
``DataFrame``."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Iterator

from amp.core.extras import MissingExtraError
from amp.core.floats import fmt_outward

__all__ = ["SweepTable", "COLUMNS"]

#: The columns of a sweep table; ``given`` is ``"delta"`` (an eps sweep) or ``"eps"`` (a delta
#: sweep) and ``quantity`` is the other one.
COLUMNS = ("mechanism", "params", "eps0", "n", "rounds", "sampling", "bound", "given",
           "quantity", "value", "lower", "upper", "method", "error")


@dataclass(frozen=True, eq=True)
class SweepTable:
    """The answers of a sweep, one row per grid point, in the grid's order.

    Attributes
    ----------
    rows : tuple of dict
        One dictionary per point with the keys of ``COLUMNS``: the inputs (``mechanism``,
        ``params`` such as ``"k=10"``, ``eps0``, ``n``, ``rounds``, ``sampling``, ``bound`` and
        the given ``delta`` or ``eps`` under its own name), ``quantity`` (``"eps"`` or ``"delta"``), ``value`` (the
        number to use: the upper end for ``bound="upper"``, the lower end for ``"lower"``),
        ``lower``, ``upper``, ``method``, and ``error`` (``None``, or the message of a point
        that could not be certified, whose numbers are then ``None``).
    given : {"delta", "eps"}
        The input that was swept: ``"delta"`` for ``eps(delta)`` questions, ``"eps"`` for
        ``delta(eps)`` questions.
    elapsed : float
        Wall-clock seconds of the sweep (not part of equality).

    Examples
    --------
    >>> import amp
    >>> t = amp.sweep("krr", n=[1000, 10_000], eps0=4, delta=1e-6, k=10,
    ...               executor=None)         # Theorem 4 eps at each n
    >>> len(t), t.given, [round(r["value"], 4) for r in t.rows]
    (2, 'delta', [1.5274, 0.3805])
    >>> t.columns[:8]
    ('mechanism', 'params', 'eps0', 'n', 'rounds', 'sampling', 'bound', 'delta')
    """

    rows: tuple
    given: str
    elapsed: float = 0.0

    def __post_init__(self) -> None:
        if self.given not in ("delta", "eps"):
            raise ValueError(f"given must be 'delta' or 'eps', got {self.given!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SweepTable):
            return NotImplemented
        return self.given == other.given and self.rows == other.rows

    def __hash__(self) -> int:  # pragma: no cover - rows hold dicts; equality is by value
        return hash((self.given, len(self.rows)))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    @property
    def columns(self) -> tuple[str, ...]:
        """Column names, with ``given`` replaced by the swept input's name."""
        return tuple(self.given if c == "given" else c for c in COLUMNS)

    @property
    def failed(self) -> list[dict]:
        """The rows of points that could not be certified."""
        return [r for r in self.rows if r["error"] is not None]

    def to_records(self) -> list[dict]:
        """The rows as a list of fresh dictionaries (JSON-ready: ``None`` for no number)."""
        return [dict(r) for r in self.rows]

    def to_json(self, **kwargs: object) -> str:
        """The rows as a JSON array of objects (keyword arguments go to ``json.dumps``)."""
        return json.dumps(self.to_records(), **kwargs)

    def to_csv(self) -> str:
        """The rows as CSV with a header line; floats in full precision (``repr``), an empty
        field for no number."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow(["" if r[c] is None else (repr(r[c]) if isinstance(r[c], float) else r[c])
                        for c in self.columns])
        return buf.getvalue()

    def to_pandas(self):
        """The rows as a :class:`pandas.DataFrame` (columns in the order of :attr:`columns`;
        ``None`` for no number becomes ``NaN`` in the numeric columns).

        Raises
        ------
        ImportError
            (:class:`amp.core.extras.MissingExtraError`) pandas is not installed; one line
            saying so (``pip install pandas``). Nothing else of :mod:`amp` needs pandas.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingExtraError("SweepTable.to_pandas needs pandas, which is not "
                                    "installed: pip install pandas") from None
        return pd.DataFrame.from_records(self.to_records(), columns=list(self.columns))

    def __str__(self) -> str:
        shown = [c for c in self.columns if c != "error"]
        cells = [[_cell(r[c], c, r) for c in shown] + ([r["error"]] if r["error"] else [])
                 for r in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(shown)]
        line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths)).rstrip()
        out = [line(shown)]
        for row in cells:
            out.append(line(row[:len(shown)]) + ("  " + row[-1] if len(row) > len(shown) else ""))
        n_bad = len(self.failed)
        out.append(f"{len(self.rows)} point(s)" + (f", {n_bad} not certified" if n_bad else ""))
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"SweepTable({len(self.rows)} rows, given={self.given!r})"


def _cell(v: object, column: str = "", row: dict | None = None) -> str:
    """One printed cell; the bracket's ends and the value round outwards (an upper end up,
    a lower end down), so no printed bound is on the unsafe side of the certified one."""
    if v is None or v == "":
        return "-"
    if isinstance(v, float):
        if column == "upper" or (column == "value" and (row or {}).get("bound") != "lower"):
            return fmt_outward(v, up=True)
        if column in ("lower", "value"):
            return fmt_outward(v, up=False)
        return f"{v:.6g}"
    return str(v)

