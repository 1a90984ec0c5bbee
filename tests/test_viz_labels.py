"""Figure legends and widget labels name the section with a theorem's number (issue #23, error 8).

The paper reuses theorem numbers (two Theorem 3s, 4s and 5s, two Lemma 2s), so a label that says
"Thm 4" or "Theorem 4" alone is ambiguous. Every string literal of ``amp/viz`` that is not a
docstring is checked: no "Thm", and every "Theorem 3/4/5" or "Lemma 2" is followed by its section.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

VIZ = pathlib.Path(__file__).resolve().parent.parent / "amp" / "viz"
AMBIGUOUS = re.compile(r"\b(Theorem [345]|Lemma 2)\b(?!, §\d\.\d)")


def _label_strings(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value for v in node.values if isinstance(v, ast.Constant)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            out.append(node.value)
    return out


@pytest.mark.parametrize("path", sorted(VIZ.glob("*.py")), ids=lambda p: p.name)
def test_labels_name_the_section(path):
    for text in _label_strings(path):
        assert not re.search(r"\bThms?\b", text), (path.name, text)
        assert not AMBIGUOUS.search(text), (path.name, text)


def test_the_checker_catches_an_ambiguous_label():
    assert AMBIGUOUS.search("upper bound (Theorem 4)")
    assert not AMBIGUOUS.search("upper bound (Theorem 4, §5.1)")
