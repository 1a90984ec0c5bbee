"""Checked answers for the book's computational exercises (course material, not part of `amp`).

A computational exercise has two cells:

1. an *answer cell* (tag ``answer``) where the student assigns a value; in the instructor edition
   (the repository's notebooks) the assignment carries the solution and ends with ``# solution``::

       answer_5_2 = amp.delta(amp.KRR(2.0, k=10), 1000, 0.5).value  # solution

   ``make student`` rewrites every such line to ``answer_5_2 = None  # your answer here``;
2. a *check cell* that calls :func:`check` with the answer and the value `amp` computes::

       check("5.2", answer_5_2, expected=amp.delta(amp.KRR(2.0, k=10), 1000, 0.5).value,
             rel_tol=0.01, hint="delta(eps) is Theorem 4's E[(G_1 + ... + G_n)_+] / n")

:func:`check` prints one line (right, not yet with the hint, or no answer yet) and returns
``True``/``False``/``None``; it never raises on a wrong answer, so a student's notebook runs on.
The instructor edition is run by nbval with ``AMP_CHECK_STRICT=1`` in the environment
(``scripts/run_tests.sh``): then a wrong or missing answer raises, so a stale solution fails
the tests. Without that variable (students, the live app) a check only prints.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["check", "Verdict"]


class Verdict:
    """The outcome of one check: ``ok`` is True (right), False (wrong) or None (no answer)."""

    def __init__(self, name: str, ok: bool | None, message: str) -> None:
        self.name, self.ok, self.message = name, ok, message

    def __bool__(self) -> bool:
        return bool(self.ok)

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        colour = {True: "#1a7f37", False: "#b35900", None: "#555"}[self.ok]
        return f'<p class="amp-check" style="color:{colour}"><b>{self.message}</b></p>'


def _close(answer: Any, expected: Any, rel_tol: float, abs_tol: float) -> bool:
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    if isinstance(expected, bool):
        return isinstance(answer, bool) and answer == expected
    if isinstance(expected, Sequence):
        if not isinstance(answer, Sequence) or isinstance(answer, str):
            return False
        return len(answer) == len(expected) and all(
            _close(a, e, rel_tol, abs_tol) for a, e in zip(answer, expected))
    try:
        a, e = float(answer), float(expected)
    except (TypeError, ValueError):
        return False
    if math.isnan(a) or math.isnan(e):
        return False
    return math.isclose(a, e, rel_tol=rel_tol, abs_tol=abs_tol)


def check(name: str, answer: Any, expected: Any, *, rel_tol: float = 1e-2,
          abs_tol: float = 0.0, hint: str = "", strict: bool | None = None) -> Verdict:
    """Compare a student's answer with the expected one and say right or wrong.

    Parameters
    ----------
    name : str
        The exercise's number as the book prints it, e.g. ``"5.2"``.
    answer : number, str, bool, sequence or None
        The student's answer; ``None`` means "not answered yet".
    expected : same kind as ``answer``
        The value computed with `amp` (or a string / boolean for a conceptual question).
    rel_tol, abs_tol : float
        Tolerances for numbers (``math.isclose``), applied element-wise to sequences.
    hint : str
        Shown after a wrong answer.
    strict : bool, optional
        Raise ``AssertionError`` on a wrong or missing answer. Default: true when the
        environment variable ``AMP_CHECK_STRICT`` is ``1`` (the test command sets it for nbval,
        so that a stale solution in the instructor edition fails).

    Returns
    -------
    Verdict
        Truthy when right; displays as one coloured line in Jupyter and the live app.
    """
    if answer is None or answer is Ellipsis:
        verdict = Verdict(name, None, f"Exercise {name}: no answer yet (replace None in the "
                                      f"answer cell, then run this cell again).")
    elif _close(answer, expected, rel_tol, abs_tol):
        verdict = Verdict(name, True, f"Exercise {name}: right.")
    else:
        tip = f" Hint: {hint}" if hint else ""
        verdict = Verdict(name, False, f"Exercise {name}: not yet ({answer!r} is not within "
                                       f"{rel_tol:.0%} of the expected value).{tip}")
    if strict is None:
        strict = os.environ.get("AMP_CHECK_STRICT") == "1"
    if strict and not verdict.ok:
        raise AssertionError(verdict.message)
    return verdict
