"""Claims of chapter 5 (book/05_new_algorithm.ipynb) held by tests (issue #23, errors 2 and 6).

* The paper's error analysis of Algorithm 4 (Section 5.2) states "by Hoeffding's inequality,
  Pr[S > -nl] <= exp(-(2a^2/b^2 - l) n)". Hoeffding's inequality for n independent variables with
  range b and mean -a gives exp(-2n(a - l)^2/b^2); the paper's exponent is larger exactly when
  4a - 2l > b^2, and for 2-RR with eps0 = 0.2, eps = 0.1, l = 0.05 the exact probability (by
  enumeration of the multinomial counts) lies above the paper's bound and below the corrected one.
* Exercise 5.3 compares OUE on d = 4 values with Table 1's OUE row at parameters where both
  certified brackets are narrow and disjoint (the old parameters gave [0, ~9e-15] for both).
* The chapter's structure: the theorem environments and labels of the brief, numbered exercises
  with difficulty marks and a checked answer, the equation and figure labels other pages may use,
  one pointer to the engine room, and at most about 3,000 words of prose.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import amp
from amp import KRR, OUE
from amp.backends.exact import compositions, delta_enumerate
from ampbook.illustrations import algorithm4_delta

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "05_new_algorithm.ipynb"
ENGINE = ROOT / "book" / "engine" / "ch05_algorithm.ipynb"


# ------------------------------------------------------------------ Hoeffding (issue #23, item 6)
def a_b(eps0: float, eps: float) -> tuple[float, float]:
    """a = -E[G] = e^eps - 1 and b = (e^eps0 - 1)(e^eps + 1), the length of G's range."""
    return math.exp(eps) - 1, (math.exp(eps0) - 1) * (math.exp(eps) + 1)


def exact_tail(law, n: int, eps: float, l: float) -> float:
    """Pr[G_1 + ... + G_n > -n l], summed exactly over the multinomial counts of the atoms."""
    values, probs = law.atoms(eps)
    counts = compositions(n, len(values))
    pmf = stats.multinomial.pmf(counts, n, probs)
    return float(pmf[counts @ values > -n * l].sum())


def paper_bound(eps0: float, eps: float, l: float, n: int) -> float:
    a, b = a_b(eps0, eps)
    return math.exp(-(2 * a**2 / b**2 - l) * n)


def hoeffding_bound(eps0: float, eps: float, l: float, n: int) -> float:
    a, b = a_b(eps0, eps)
    assert l < a
    return math.exp(-2 * n * (a - l) ** 2 / b**2)


@pytest.mark.parametrize("eps0, eps, l", [(0.2, 0.1, 0.05), (0.2, 0.1, 0.01), (2.0, 0.5, 0.0053),
                                          (1.0, 0.5, 0.1), (4.0, 1.0, 0.5)],
                         ids=["2rr-counterexample", "small-l", "paper-step", "mid", "large-eps0"])
def test_exponent_difference_identity(eps0, eps, l):
    """(2a^2/b^2 - l) - 2(a - l)^2/b^2 = l(4a - 2l - b^2)/b^2: the paper's is larger iff 4a-2l > b^2."""
    a, b = a_b(eps0, eps)
    paper, correct = 2 * a**2 / b**2 - l, 2 * (a - l) ** 2 / b**2
    assert math.isclose(paper - correct, l * (4 * a - 2 * l - b**2) / b**2, rel_tol=1e-9,
                        abs_tol=1e-15)
    assert (paper > correct) == (4 * a - 2 * l > b**2)


@pytest.mark.parametrize("n", [100, 200, 400])
def test_paper_hoeffding_step_fails_for_2rr(n):
    """2-RR, eps0 = 0.2, eps = 0.1, l = 0.05: exact tail above the paper's bound, below Hoeffding's."""
    eps0, eps, l = 0.2, 0.1, 0.05
    a, b = a_b(eps0, eps)
    assert l <= 2 * a**2 / b**2 and 4 * a - 2 * l > b**2   # the paper's own condition holds
    truth = exact_tail(KRR(eps0, k=2).gparv(), n, eps, l)
    assert truth > paper_bound(eps0, eps, l, n)
    assert truth <= hoeffding_bound(eps0, eps, l, n)


@pytest.mark.parametrize("mech, n, eps, l", [
    (KRR(0.2, k=2), 300, 0.1, 0.02),
    (KRR(1.0, k=4), 60, 0.3, 0.05),
    (KRR(2.0, k=10), 50, 0.5, (math.exp(2.0) - 1) / 1200),
], ids=["2rr", "4rr", "10rr-paper-step"])
def test_corrected_hoeffding_bound_holds(mech, n, eps, l):
    assert exact_tail(mech.gparv(), n, eps, l) <= hoeffding_bound(mech.eps0, eps, l, n)


@pytest.mark.parametrize("n", [50, 100])
def test_algorithm4_error_within_corrected_bound(n):
    """The chapter's table: Algorithm 4's error (10-RR, eps0 = 2, eps = 0.5, the paper's step) is
    at most l exp(-2n(a - l)^2/b^2) and the paper's exponent there is negative (its bound > 1)."""
    law, eps, l = KRR(2.0, k=10).gparv(), 0.5, (math.exp(2.0) - 1) / 1200
    error = algorithm4_delta(law, n, eps, l, "up") - delta_enumerate(law, n, eps)
    assert -1e-12 <= error <= l * hoeffding_bound(2.0, eps, l, n)
    assert paper_bound(2.0, eps, l, n) > 1


# ------------------------------------------------------------------ Exercise 5.3 (item 2)
def test_exercise_5_3_comparison_is_observable():
    table1 = amp.delta(OUE(1.0), 100, 0.5)
    finite = amp.delta(OUE(1.0, d=4), 100, 0.5)
    assert table1.lower > 0 and finite.lower > 0
    assert table1.rel_width < 1e-4 and finite.rel_width < 1e-4           # narrow
    assert finite.upper < table1.lower and table1.lower / finite.upper > 1.05   # well apart
    assert OUE(1.0, d=4).gparv().gamma > OUE(1.0).gparv().gamma


# ------------------------------------------------------------------ the chapter's structure
def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def markdown(path: Path) -> list[str]:
    return [source(c) for c in cells(path) if c["cell_type"] == "markdown"]


def test_chapter_is_committed_without_outputs():
    for path in (CHAPTER, ENGINE):
        for c in cells(path):
            if c["cell_type"] == "code":
                assert c["outputs"] == [] and c["execution_count"] is None


@pytest.mark.parametrize("kind, label", [
    ("definition", "def-parv"), ("lemma", "lem-2-s5-1"), ("definition", "def-gparv"),
    ("theorem", "thm-4-s5-1"), ("property", "prop-2"), ("remark", "rem-1"),
    ("algorithm", "alg-4"), ("theorem", "thm-5-s5-3")])
def test_theorem_environments(kind, label):
    text = "\n".join(markdown(CHAPTER))
    found = re.findall(r"```\{prf:" + kind + r"\}[^\n]*\n:label: " + re.escape(label) + r"\n", text)
    assert len(found) == 1, (kind, label)


def test_labels_other_pages_may_use_are_kept():
    text = json.dumps(cells(CHAPTER))
    for eq in ("alg-lemma2", "alg-theorem4", "alg-hoeffding-error", "alg-theorem5"):
        assert f"$$ ({eq})" in text, eq
    for fig in ("fig-alg-atoms", "fig-alg-discretisation", "fig-alg-upper-lower"):
        assert f'"name": "{fig}"' in text, fig


def test_exercises_numbered_marked_and_checked():
    texts = markdown(CHAPTER)
    labels = [m for t in texts for m in re.findall(r"```\{exercise\} (★{1,3}) [^\n]+\n:label: (ex-5-\d+)", t)]
    assert len(labels) >= 3
    assert [lab for _, lab in labels] == [f"ex-5-{k}" for k in range(1, len(labels) + 1)]
    for _, lab in labels:      # each solution alone in its own cell
        sol = [t for t in texts if t.lstrip().startswith("```{solution} " + lab)]
        assert len(sol) == 1 and sol[0].rstrip().endswith("```")
    answers = [c for c in cells(CHAPTER) if "answer" in c["metadata"].get("tags", [])]
    assert answers and all(source(c).rstrip().endswith("# solution") for c in answers)
    checks = [source(c) for c in cells(CHAPTER) if "check(\"5." in source(c)]
    assert len(checks) >= len(answers)


def test_prose_length_and_engine_room():
    texts = markdown(CHAPTER)
    words = sum(len(re.findall(r"\S+", t)) for t in texts)
    assert words <= 3000, words
    prose = "\n".join(texts)
    assert "Under the hood" not in prose
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\b\d cores?\b|shared machine|this machine|"
                         r"peak memory|wall time", prose)
    assert prose.count("{doc}`engine/ch05_algorithm`") == 1
    assert ENGINE.exists()
    code = "\n".join(source(c) for c in cells(CHAPTER) if c["cell_type"] == "code")
    assert "perf_counter" not in code and "hide-cell" not in json.dumps(cells(CHAPTER))
