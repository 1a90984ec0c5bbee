"""Tables of the book (:mod:`ampbook.tables`): Table 1 against its closed forms, HTML output."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp import BLH, KRR, OUE, RAPPOR, HadamardResponse, MatrixMechanism
from amp.core.errors import ParameterError
from ampbook import tables


def test_table1_rows_match_closed_forms():
    eps0 = 1.5
    E, h = math.exp(eps0), math.exp(eps0 / 2)
    rows = tables.table1_rows([KRR(eps0, k=4), RAPPOR(eps0), OUE(eps0), BLH(eps0),
                               HadamardResponse(eps0)])
    expected = [
        [1 / (E + 3), 0, 2 / (E + 3), (E - 1) / (E + 3), 1 / (E + 3)],
        [1 / (h + 1) ** 2, 1 / (h * (h + 1) ** 2), h / (h + 1) ** 2, 1 - 1 / h, 1 / (h + 1) ** 2],
        [1 / (2 * (E + 1)), 1 / (2 * E * (E + 1)), E / (2 * (E + 1)), (1 - 1 / E) / 2,
         1 / (2 * (E + 1))],
        [1 / (2 * (E + 1))] * 3 + [(E - 1) / (E + 1), 1 / (2 * (E + 1))],
        [1 / (2 * (E + 1))] * 3 + [(E - 1) / (E + 1), 1 / (2 * (E + 1))],
    ]
    for (desc, probs, gamma), want in zip(rows, expected):
        np.testing.assert_allclose(probs, want, rtol=1e-12, atol=1e-15, err_msg=desc)
        assert math.isclose(gamma, 1 - probs[3], rel_tol=1e-12)
    html = tables.table1_html(rows, eps0, 0.5)
    assert html.count("<tr>") == 1 + len(rows) and "$" not in html
    assert len(tables.TABLE1_COLUMNS) == 5 and all(c in html for c in tables.TABLE1_COLUMNS)


def test_table1_rows_rejects_non_table_law(rng):
    M = rng.dirichlet(np.ones(4), size=3)
    with pytest.raises(ParameterError):
        tables.table1_rows([MatrixMechanism(M)])


def test_html_table_escapes_and_formats():
    out = tables.html_table(["a<b", "x"], [["R&R", 0.123456]], fmt={1: ".2f"}, caption="c")
    assert "a&lt;b" in out and "R&amp;R" in out and "0.12" in out and "<caption>c" in out
    assert "0.123456" not in out
