"""Chapters 14 (numeric data) and 15 (the Laplace mechanism and mixed populations): the notebooks'
shape, and chapter 14's two worst-pair propositions against an independent oracle.

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
NB = BOOK / "14_numeric_data.ipynb"
NB15 = BOOK / "15_laplace_populations.ipynb"
FORBIDDEN = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d cores?\b|shared machine|this machine|"
                       r"peak memory|wall time")
BOTH = pytest.mark.parametrize("nb", [NB, NB15], ids=["ch14", "ch15"])


def _cells(nb: Path = NB) -> list[dict]:
    return json.loads(nb.read_text(encoding="utf-8"))["cells"]


def _markdown(nb: Path = NB) -> str:
    return "\n".join("".join(c["source"]) for c in _cells(nb) if c["cell_type"] == "markdown")


# ------------------------------------------------------------------------------ notebook shape
@BOTH
def test_committed_without_outputs(nb):
    for c in _cells(nb):
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None, c["id"]


@pytest.mark.parametrize("nb, title", [(NB, "# Numeric data\n"),
                                       (NB15, "# The Laplace mechanism and mixed populations\n")],
                         ids=["ch14", "ch15"])
def test_opens_with_what_you_learn_and_closes_with_a_summary(nb, title):
    cells = _cells(nb)
    first = "".join(cells[0]["source"])
    assert first.startswith(title)
    assert "**In this chapter you will learn**" in first
    assert "".join(cells[-1]["source"]).startswith("## Summary")
    assert "remove-cell" in cells[1]["metadata"].get("tags", [])
    assert "from coursekit import check" in "".join(cells[1]["source"])


@pytest.mark.parametrize("nb, labels", [(NB, ("prop-14-duchi", "prop-14-window")),
                                        (NB15, ("prop-15-laplace",))], ids=["ch14", "ch15"])
def test_propositions_with_proofs(nb, labels):
    md = _markdown(nb)
    for label in labels:
        m = re.search(r"```\{prf:proposition\} \([^\n]*\)\n:label: " + label + r"\n(.*?)```\s*"
                      r"```\{prf:proof\}", md, re.S)
        assert m, f"{label}: a prf:proposition followed by its prf:proof"
        assert f"{{prf:ref}}`{label}`" in md
    assert "{prf:ref}`Theorem 4 (§5.1) <thm-4-s5-1>`" in md


def test_laplace_proof_has_a_sketch_before_it():
    """The Laplace worst pair: a readable three-move sketch precedes the proof box, and the
    proof names the same three moves."""
    md = _markdown(NB15)
    sketch, box = md.split("```{prf:proposition} (The worst pair of the Laplace mechanism)", 1)
    sketch = sketch.rsplit("## The worst pair of the Laplace mechanism", 1)[1]
    for k, name in enumerate(("From the convex order to tests", "The shape of the best test",
                              "Move the test to the ends"), start=1):
        assert f"{k}. **{name}.**" in sketch
    proof = box.split("```{prf:proof}", 1)[1].split("```", 1)[0]
    assert all(f"move {k})" in proof for k in (1, 2, 3))


@pytest.mark.parametrize("nb, expected", [(NB, ["fig-14-mean"]),
                                          (NB15, ["fig-15-laplace", "fig-15-populations"])],
                         ids=["ch14", "ch15"])
def test_figures_are_captioned_and_referenced(nb, expected):
    md = _markdown(nb)
    names = []
    for c in _cells(nb):
        fig = c["metadata"].get("mystnb", {}).get("figure")
        if fig:
            assert len(fig["caption"]) > 80
            names.append(fig["name"])
    assert names == expected
    for name in names:
        assert f"{{numref}}`{name}`" in md


@BOTH
def test_no_machine_talk(nb):
    md = _markdown(nb)
    assert not FORBIDDEN.search(md)
    assert "not implemented" not in md


def test_laplace_section_is_in_chapter_15():
    assert ":label: prop-15-laplace" in _markdown(NB15)
    assert "prop-15-laplace" not in _markdown(NB) and "## The Laplace mechanism" not in _markdown(NB)


@pytest.mark.parametrize("nb, hidden_min, ks", [(NB, 9, (2, 4, 5)), (NB15, 5, (1, 3))],
                         ids=["ch14", "ch15"])
def test_hidden_asserts_and_checked_answer(nb, hidden_min, ks):
    cells = _cells(nb)
    hidden = [c for c in cells if "remove-cell" in c["metadata"].get("tags", [])]
    assert sum("assert" in "".join(c["source"]) for c in hidden) >= hidden_min
    answers = [c for c in cells if "answer" in c["metadata"].get("tags", [])]
    assert len(answers) == len(ks)
    chapter = 14 if nb == NB else 15
    for cell, k in zip(answers, ks):
        assert re.search(rf"^answer_{chapter}_{k} = .*  # solution$", "".join(cell["source"]),
                         re.M)


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
