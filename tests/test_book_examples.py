"""Book material kept out of the wheel: Example 6.0 (book/coursekit/examples.py) against the
explicit product matrix of amp.JointMechanism, and the library reads no file of the source
tree (the book passes its data/figures.json to ampbook.stored.load_figures)."""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path

import pytest

from amp import JointMechanism, KRR, ParameterError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))       # as the notebooks, whose folder is book/

from coursekit.examples import example_6_0  # noqa: E402


@pytest.mark.parametrize("k,eps0", [(2, 1.0), (3, 0.5), (5, 2.0), (10, 4.0)])
def test_example_6_0(k, eps0):
    ex = example_6_0(k, eps0)
    h = math.exp(eps0 / 2)
    assert ex.p == pytest.approx(1 / (h + k - 1), rel=1e-15)
    assert ex.q == pytest.approx((k - 2) / (h + k - 1), rel=1e-15, abs=0)
    assert ex.matrix_error < 1e-15
    assert ex.blanket_error < 1e-15
    J = JointMechanism([KRR(eps0 / 2, k=k)] * 2)
    assert ex.gamma == pytest.approx(J.gamma, rel=1e-14)
    assert ex.gamma == pytest.approx((k * ex.p) ** 2, rel=1e-14)
    assert ex.component_blanket.sum() == pytest.approx(2 * ex.p + ex.q, rel=1e-14)


def test_example_6_0_bad_input():
    with pytest.raises(ParameterError):
        example_6_0(1, 1.0)
    with pytest.raises(ParameterError):
        example_6_0(3, 0.0)


def test_example_6_0_is_not_in_the_library():
    import amp.mechanisms.joint as J
    assert not hasattr(J, "example_6_0") and not hasattr(J, "Example60")


def _source_tree_paths(source: str) -> list[str]:
    """Paths into the repository's book folder in a module's code (docstrings left out): string
    constants naming ``book/...`` or ``figures.json``, and ``... / "book"`` path joins."""
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)}
    found = [n.value for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
             and (n.value.startswith(("book/", "../book")) or "figures.json" in n.value)]
    found += ["/ " + repr(side.value) for n in ast.walk(tree)
              if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
              for side in (n.left, n.right)
              if isinstance(side, ast.Constant) and side.value in ("book", "data")]
    return found


def test_no_library_module_reaches_into_the_source_tree():
    """No module of amp/ names the book's folder or its data in code (docstrings may): an
    installed wheel has neither. The checker sees such a path in a probe source."""
    bad = [f"{f.relative_to(ROOT)}: {x}" for f in sorted((ROOT / "amp").rglob("*.py"))
           for x in _source_tree_paths(f.read_text())]
    assert not bad, bad
    probe = '"""Doc: book/data."""\nP = Path(__file__).parents[2] / "book" / "data"\n'
    assert sorted(_source_tree_paths(probe)) == ["/ 'book'", "/ 'data'"]
    assert _source_tree_paths('"""book/data/figures.json"""\nextras = ["book"]\n') == []


def test_load_figures_needs_the_path_from_the_book(tmp_path):
    from ampbook import stored
    with pytest.raises(TypeError):
        stored.load_figures()                              # no default into the source tree
    with pytest.raises(ParameterError, match="not found"):
        stored.load_figures(tmp_path / "figures.json")
