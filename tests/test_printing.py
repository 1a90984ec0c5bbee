"""Printed numbers round outwards: a printed upper bound is never below the certified value,
a printed lower bound never above (the human-readable CLI output and the sweep table)."""

from __future__ import annotations

import re
from decimal import Decimal

import numpy as np

import amp
from amp import cli
from amp.core.floats import fmt_outward


def test_fmt_outward_brackets_the_float(rng):
    xs = 10.0 ** rng.uniform(-300, 8, size=20_000) * rng.uniform(0.1, 1, size=20_000)
    for x in xs:
        for d in (3, 6, 10):
            assert Decimal(fmt_outward(x, d, up=False)) <= Decimal(x) \
                <= Decimal(fmt_outward(x, d, up=True))
    assert fmt_outward(0.3804940540318176, up=True) == "0.380495"     # '.6g' says 0.380494
    assert fmt_outward(0.3804940540318176, up=False) == "0.380494"


def _printed(capsys, *args):
    assert cli.main(list(args)) == 0
    return capsys.readouterr().out


def test_cli_text_rounds_the_value_and_bracket_outwards(capsys):
    """10-RR, n = 10^4: the certified upper eps 0.38049405... printed as 0.380495 (not the
    nearest 0.380494, which is below it); the lower bound's value rounds down."""
    for bound in ("upper", "lower"):
        out = _printed(capsys, "epsilon", "-m", "krr", "--k", "10", "--eps0", "4", "--n",
                       "10000", "--delta", "1e-6", "--bound", bound)
        r = amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6, bound=bound)
        m = re.search(r"eps = (\S+)\s+\(bracket of the exact value \[(\S+), (\S+)\]", out)
        value, lo, hi = (Decimal(v) for v in m.groups())
        assert lo <= Decimal(r.lower) and Decimal(r.upper) <= hi
        if bound == "upper":
            assert value >= Decimal(r.value)
        else:
            assert value <= Decimal(r.value)


def test_sweep_table_rounds_outwards():
    t = amp.sweep("krr", k=10, n=[10_000], eps0=[4.0], delta=[1e-6], bound=["upper", "lower"],
                  executor=None)
    text = str(t).splitlines()
    head = text[0].split()
    for row, line in zip(t.rows, text[1:]):
        cells = dict(zip(head, line.split()))
        assert Decimal(cells["upper"]) >= Decimal(row["upper"])
        assert Decimal(cells["lower"]) <= Decimal(row["lower"])
        side = 1 if row["bound"] == "upper" else -1
        assert side * (Decimal(cells["value"]) - Decimal(row["value"])) >= 0
    assert np.isfinite([r["value"] for r in t.rows]).all()


def test_a_composed_result_says_it_is_a_composition():
    """Issue 34, seam 2: ``str()`` of a ``rounds > 1`` answer names the composition, not the
    one-round label; one round keeps the Theorem's label."""
    m = amp.KRR(1.0, k=4)
    up = amp.epsilon(m, 200, 1e-6, rounds=3)
    assert "composition of 3 rounds of Theorem 4 (§5.1)" in str(up)
    low = amp.epsilon(m, 200, 1e-6, rounds=3, bound="lower")
    assert "composition of 3 rounds of Theorem 5 (§5.3)" in str(low)
    d = amp.delta(m, 200, 0.5, rounds=3)
    assert str(d).startswith("delta <= ") and "composition of 3 rounds of Theorem 4" in str(d)
    one = amp.epsilon(m, 200, 1e-6)
    assert "Theorem 4 (§5.1)" in str(one) and "composition" not in str(one)
    built = amp.Bound("eps", 0.5, 0.6, details={"rounds": 100})
    assert str(built) == "eps <= 0.6 [0.5, 0.6], composition of 100 rounds of Theorem 4 (§5.1), "
