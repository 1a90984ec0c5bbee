"""The README's code runs and says what ``amp`` returns (issue 34).

Every ```python block of README.md runs, in order, in one namespace (a later block builds on
an earlier one's ``import amp``). A number quoted at the start of a statement's comment
(``expr    # 5.854: what it is``) is the statement's value as the README rounds it (as many
decimals as quoted) and is checked against the value computed. Every ```pycon block is run as
a doctest in that same namespace. No block is marked as not runnable: the README has none.

Time: about 15 s on one core (the DP-SGD example exports one round, about 5 s, and composes it
with 1000 Gaussian steps); the ``python -m amp`` lines are run by ``tests/test_cli.py``.
"""

from __future__ import annotations

import ast
import doctest
import io
import re
import time
import tokenize
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
#: a fenced block: its language tag and its text
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
#: a number quoted at the start of a comment: ``# 5.854: ...`` or ``# 0.3805``
QUOTED = re.compile(r"#\s*(-?\d+\.(\d+))(?=[\s:;,)]|$)")


def _blocks(lang: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` of every block tagged ``lang``, in the README's order."""
    text = README.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1) == lang]


def _quotes(src: str) -> dict[int, tuple[float, int]]:
    """Line (1-based, in ``src``) -> (quoted number, decimals) of the comments that quote one."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            m = QUOTED.match(tok.string)
            if m:
                out[tok.start[0]] = (float(m.group(1)), len(m.group(2)))
    return out


def _run(src: str, first_line: int, ns: dict) -> list[tuple[str, float, float]]:
    """Run ``src`` statement by statement in ``ns``; return ``(statement, quoted, computed)``
    for every statement whose comment quotes a number (the computed value rounded as quoted)."""
    tree = ast.parse(src, filename="README.md")
    quotes = _quotes(src)
    checked = []
    for stmt in tree.body:
        lines = range(stmt.lineno, stmt.end_lineno + 1)
        quoted = [quotes[i] for i in lines if i in quotes]
        where = f"README.md line {first_line + stmt.lineno - 1}"
        if quoted:
            assert isinstance(stmt, ast.Expr), f"{where}: a quoted number needs an expression"
            value = eval(compile(ast.Expression(stmt.value), where, "eval"), ns)  # noqa: S307
            number, decimals = quoted[0]
            checked.append((ast.unparse(stmt), number, round(float(value), decimals)))
        else:
            exec(compile(ast.Module([stmt], []), where, "exec"), ns)         # noqa: S102
    return checked


@pytest.fixture(scope="module")
def readme_run() -> tuple[dict, list[tuple[str, float, float]], float]:
    """Every python block run once, in order, in one namespace (as a reader would)."""
    blocks = _blocks("python")
    if any("dp_accounting" in src for _, src in blocks):
        pytest.importorskip("dp_accounting")
    ns: dict = {"__name__": "readme"}
    checked = []
    t0 = time.perf_counter()
    for first_line, src in blocks:
        checked += _run(src, first_line, ns)
    return ns, checked, time.perf_counter() - t0


def test_the_readme_has_python_blocks():
    langs = [m.group(1) for m in FENCE.finditer(README.read_text())]
    assert langs.count("python") >= 2 and "pycon" in langs
    # an untagged block is plain text (a file listing), never code that would go unchecked
    for m in FENCE.finditer(README.read_text()):
        if m.group(1) == "":
            assert not re.search(r"^\s*(>>>|import |from \w+ import|amp\.)", m.group(2), re.M)


def test_every_python_block_runs_and_quotes_what_amp_returns(readme_run):
    _, checked, seconds = readme_run
    assert any("get_epsilon_for_delta" in stmt for stmt, _, _ in checked), \
        "the DP-SGD example quotes its eps"
    wrong = [f"{stmt}: README says {q}, amp returns {v}" for stmt, q, v in checked if q != v]
    assert not wrong, "\n".join(wrong)
    assert seconds < 60, f"the README's blocks took {seconds:.0f} s"


def test_the_quote_checker_catches_a_wrong_number():
    ns: dict = {}
    [(stmt, q, v)] = _run("1.0 + 4.8545    # 5.86: the old README number\n", 1, ns)
    assert q == 5.86 and v == 5.85 and q != v
    [(_, q, v)] = _run("x = 2\nx * 1.23456  # 2.469\n", 1, ns)
    assert q == v == 2.469


def test_pycon_blocks_are_doctests(readme_run):
    ns = dict(readme_run[0])
    for first_line, src in _blocks("pycon"):
        test = doctest.DocTestParser().get_doctest(src, ns, "README.md", str(README),
                                                   first_line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        out = io.StringIO()
        runner.run(test, out=out.write)
        assert runner.failures == 0, out.getvalue()
