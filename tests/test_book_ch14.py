"""Chapter 14 (numeric data and mixed populations): the notebook's shape, and its two worst-pair
propositions against an independent oracle.

The oracle rebuilds each pair's GPARV law from the randomizers' definitions (interval lengths
times density levels, written out here, not taken from ``amp``) and computes Theorem 4's bound
``E[(G_1 + ... + G_n)_+] / n`` (Section 5.1) by exact convolution at small ``n``.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import pytest

import amp

BOOK = Path(__file__).resolve().parent.parent / "book"
NB = BOOK / "14_numeric_populations.ipynb"
FORBIDDEN = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d cores?\b|shared machine|this machine|"
                       r"peak memory|wall time")


def _cells() -> list[dict]:
    return json.loads(NB.read_text(encoding="utf-8"))["cells"]


def _markdown() -> str:
    return "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


# ------------------------------------------------------------------------------ notebook shape
def test_committed_without_outputs():
    for c in _cells():
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None, c["id"]


def test_opens_with_what_you_learn_and_closes_with_a_summary():
    cells = _cells()
    first = "".join(cells[0]["source"])
    assert first.startswith("# Numeric data and mixed populations")
    assert "**In this chapter you will learn**" in first
    assert "".join(cells[-1]["source"]).startswith("## Summary")
    assert "remove-cell" in cells[1]["metadata"].get("tags", [])
    assert "from coursekit import check" in "".join(cells[1]["source"])


def test_propositions_with_proofs():
    md = _markdown()
    for label in ("prop-14-duchi", "prop-14-window"):
        m = re.search(r"```\{prf:proposition\}[^\n]*\n:label: " + label + r"\n(.*?)```\s*"
                      r"```\{prf:proof\}", md, re.S)
        assert m, f"{label}: a prf:proposition followed by its prf:proof"
        assert f"{{prf:ref}}`{label}`" in md
    assert "{prf:ref}`Theorem 4 of Section 5.1 <thm-4-s5-1>`" in md


def test_figures_are_captioned_and_referenced():
    md = _markdown()
    names = []
    for c in _cells():
        fig = c["metadata"].get("mystnb", {}).get("figure")
        if fig:
            assert len(fig["caption"]) > 80
            names.append(fig["name"])
    assert names == ["fig-14-mean", "fig-14-populations"]
    for name in names:
        assert f"{{numref}}`{name}`" in md


def test_no_machine_talk_and_laplace_section():
    md = _markdown()
    assert not FORBIDDEN.search(md)
    assert "not implemented" not in md
    assert ":label: prop-14-laplace" in md and "{prf:ref}`prop-14-laplace`" in md


def test_hidden_asserts_and_checked_answer():
    cells = _cells()
    hidden = [c for c in cells if "remove-cell" in c["metadata"].get("tags", [])]
    assert sum("assert" in "".join(c["source"]) for c in hidden) >= 9
    answers = [c for c in cells if "answer" in c["metadata"].get("tags", [])]
    assert len(answers) == 4
    for cell, k in zip(answers, (2, 5, 6, 7)):
        assert re.search(rf"^answer_14_{k} = .*  # solution$", "".join(cell["source"]), re.M)


# ------------------------------------------------------------------------------ the oracle
def _theorem4(atoms: list[tuple[float, float, float]], n: int, eps: float) -> float:
    """``E[(G_1 + ... + G_n)_+] / n`` for the GPARV with atoms ``(a, b, mass)`` (the rest at 0),
    by exact convolution of the discrete law (values rounded to 1e-12 to merge)."""
    law: dict[float, float] = {}
    rest = 1.0 - sum(p for _, _, p in atoms)
    for a, b, p in atoms:
        g = round(a - math.exp(eps) * b, 12)
        law[g] = law.get(g, 0.0) + p
    law[0.0] = law.get(0.0, 0.0) + rest
    total = {0.0: 1.0}
    for _ in range(n):
        nxt: dict[float, float] = {}
        for (s, ps), (g, pg) in itertools.product(total.items(), law.items()):
            k = round(s + g, 12)
            nxt[k] = nxt.get(k, 0.0) + ps * pg
        total = nxt
    return sum(max(s, 0.0) * p for s, p in total.items()) / n


def _duchi_atoms(eps0: float, x0: float, x1: float):
    E = math.exp(eps0)
    c = 1 / (E + 1)                                              # blanket of each output

    def prob(x, y):
        return 0.5 + y * x * (E - 1) / (2 * (E + 1))
    return [(prob(x0, y) / c, prob(x1, y) / c, c) for y in (+1, -1)]


def _window_atoms(eps0: float, lo: float, hi: float, q: float, windows):
    """Atoms of a two-level density on [lo, hi] (levels q and e^eps0 q, no common region):
    cut at the window ends, ratio 1 or E on each piece, mass = length * q."""
    E = math.exp(eps0)
    cuts = sorted({lo, hi} | {min(max(t, lo), hi) for w in windows for t in w})
    out = []
    for s, t in zip(cuts[:-1], cuts[1:]):
        if t > s:
            mid = (s + t) / 2
            a, b = (E if w[0] <= mid <= w[1] else 1.0 for w in windows)
            out.append((a, b, q * (t - s)))
    return out


def _square_wave_atoms(eps0: float, v0: float, v1: float):
    m = amp.SquareWave(eps0)
    b = (eps0 * math.exp(eps0) - math.exp(eps0) + 1) / (2 * math.exp(eps0)
                                                        * (math.exp(eps0) - 1 - eps0))
    assert math.isclose(m.b, b, rel_tol=1e-12) and b < 0.5      # Li et al.'s b, no common region
    q = 1 / (2 * b * math.exp(eps0) + 1)
    return _window_atoms(eps0, -b, 1 + b, q, [(v0 - b, v0 + b), (v1 - b, v1 + b)])


def _piecewise_atoms(eps0: float, t0: float, t1: float):
    h = math.exp(eps0 / 2)
    C = (h + 1) / (h - 1)
    p = (math.exp(eps0) - h) / (2 * h + 2)

    def window(t):
        left = (C + 1) / 2 * t - (C - 1) / 2
        return left, left + C - 1
    return _window_atoms(eps0, -C, C, p / math.exp(eps0), [window(t0), window(t1)])


FAMILIES = {
    "duchi": (amp.Duchi, _duchi_atoms, (-1.0, 1.0)),
    "square_wave": (amp.SquareWave, _square_wave_atoms, (0.0, 1.0)),
    "piecewise": (amp.PiecewiseMechanism, _piecewise_atoms, (-1.0, 1.0)),
}


@pytest.mark.parametrize("eps0", [1.0, 3.0])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_worst_pair_against_the_oracle(name, eps0):
    """prop-14-duchi and prop-14-window: on a grid of pairs the oracle's Theorem 4 bound is at
    most the pair of ends', and amp's worst law is the oracle's law of the ends."""
    cls, atoms, (lo, hi) = FAMILIES[name]
    worst_atoms = atoms(eps0, lo, hi)
    grid = [lo + (hi - lo) * k / 6 for k in range(7)]
    law = cls(eps0).gparv()
    mine = sorted((round(a, 9), round(b, 9)) for a, b, p in worst_atoms if p > 0)
    assert sorted((round(a, 9), round(b, 9)) for a, b in zip(law.a, law.b)) == \
        sorted(set(mine))
    for n, eps in ((3, 0.2), (6, 0.5)):
        worst = _theorem4(worst_atoms, n, eps)
        assert worst > 0
        assert math.isclose(worst, amp.delta(cls(eps0), n, eps, method="exact").value,
                            rel_tol=1e-6)
        for x0, x1 in itertools.product(grid, grid):
            assert _theorem4(atoms(eps0, x0, x1), n, eps) <= worst * (1 + 1e-9), (x0, x1)


def test_less_overlap_is_larger():
    """prop-14-window, Step 2: along a sequence of square wave pairs with shrinking overlap the
    oracle's bound never decreases."""
    eps0, n, eps = 2.0, 5, 0.3
    values = [_theorem4(_square_wave_atoms(eps0, 0.5, 0.5 + d), n, eps)
              for d in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5)]
    assert all(u <= v * (1 + 1e-12) for u, v in zip(values, values[1:]))
    assert values[0] == 0.0 and values[-1] > values[1]


def test_duchi_mean_estimator_is_unbiased():
    """(ch14-duchi-mse) rests on E[C y] = x, from the two output probabilities."""
    for eps0 in (0.5, 2.0, 5.0):
        m = amp.Duchi(eps0)
        C = (math.exp(eps0) + 1) / math.expm1(eps0)
        for x in (-1.0, -0.4, 0.0, 0.7, 1.0):
            p = m.prob_plus(x)
            assert math.isclose(C * (2 * p - 1), x, abs_tol=1e-12)
