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

Sealed answers
--------------
The ``expected=`` expression of a check cell *is* the solution, so the student edition
(``make student``) removes it: there the check cell reads ``check("5.2", answer_5_2,
rel_tol=0.01, hint=...)`` and :func:`check` takes the expected value of ``"5.2"`` from
``answers.json`` next to this module. That file is recorded from the instructor notebooks by
``make answers`` (``scripts/record_answers.py``: every notebook that calls :func:`check` is
executed with ``AMP_RECORD_ANSWERS=<file>`` in the environment; each check then merges
``{name: expected}`` into that file). Its values are stored as base64 of their JSON, only so
that opening the file does not show an answer at a glance: this is *not* security, anyone can
decode them. In the instructor edition (``expected=`` given) a strict run also checks that
the sealed value still passes the same comparison against the live one, so a change of the
engine or of a chapter that moves an answer beyond its tolerance fails nbval until the
answers are re-recorded.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["check", "Verdict", "sealed_answers", "encode", "decode"]

#: The sealed expected values (see "Sealed answers" above).
ANSWERS = Path(__file__).with_name("answers.json")
#: Environment variable naming the JSON file that :func:`check` records expected values into.
RECORD_ENV = "AMP_RECORD_ANSWERS"
RECORD_COMMAND = "make answers (python scripts/record_answers.py)"
_OMITTED: Any = object()


def plain(value: Any) -> Any:
    """``value`` as JSON data: numpy scalars/arrays via ``.tolist()``, tuples as lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot seal a non-finite expected value: {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    raise TypeError(f"cannot seal an expected value of type {type(value).__name__}: "
                    f"{value!r}")


def encode(value: Any) -> str:
    """The stored form of one expected value: base64 of its JSON (light, not secret)."""
    text = json.dumps(plain(value), separators=(",", ":"))
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def decode(text: str) -> Any:
    """Inverse of :func:`encode`."""
    return json.loads(base64.b64decode(text.encode("ascii")).decode("utf-8"))


def sealed_answers(path: Path | str | None = None) -> dict[str, Any]:
    """``{exercise name: expected value}`` decoded from ``answers.json`` (empty if absent)."""
    path = Path(path) if path is not None else ANSWERS
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: decode(v) for k, v in data.get("answers", {}).items()}


def _record(name: str, expected: Any, path: str) -> None:
    """Merge ``{name: expected}`` (plain JSON values) into the recording file ``path``."""
    target = Path(path)
    data = json.loads(target.read_text(encoding="utf-8")) if target.is_file() else {}
    data[name] = plain(expected)
    target.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


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
    # numpy arrays and scalars compare as the lists and numbers they hold
    answer, expected = (v.tolist() if hasattr(v, "tolist") and not isinstance(v, str) else v
                        for v in (answer, expected))
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


def check(name: str, answer: Any, expected: Any = _OMITTED, *, rel_tol: float = 1e-2,
          abs_tol: float = 0.0, hint: str = "", strict: bool | None = None) -> Verdict:
    """Compare a student's answer with the expected one and say right or wrong.

    Parameters
    ----------
    name : str
        The exercise's number as the book prints it, e.g. ``"5.2"``.
    answer : number, str, bool, sequence or None
        The student's answer; ``None`` means "not answered yet".
    expected : same kind as ``answer``, optional
        The value computed with `amp` (or a string / boolean for a conceptual question).
        Omitted in the student edition: then the sealed value of ``name`` in
        ``answers.json`` is used (``LookupError`` if there is none). Given (the instructor
        edition) in a strict run, the sealed value, if any, must pass the same comparison
        against it (``AssertionError`` naming the command that re-records it otherwise);
        with ``AMP_RECORD_ANSWERS=<file>`` set it is recorded into that file.
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
    if strict is None:
        strict = os.environ.get("AMP_CHECK_STRICT") == "1"
    recording = os.environ.get(RECORD_ENV)
    if expected is _OMITTED:
        sealed = sealed_answers()
        if name not in sealed:
            raise LookupError(f"Exercise {name}: no sealed answer in {ANSWERS} (record the "
                              f"answers with {RECORD_COMMAND} in the instructor edition)")
        expected = sealed[name]
    elif recording:
        _record(name, expected, recording)
    elif strict:
        sealed = sealed_answers()
        if name in sealed and not _close(sealed[name], expected, rel_tol, abs_tol):
            raise AssertionError(
                f"Exercise {name}: the sealed answer in {ANSWERS.name} is stale "
                f"({sealed[name]!r} is not within the check's tolerance of the value "
                f"computed now, {plain(expected)!r}); re-record it with {RECORD_COMMAND}")
    if answer is None or answer is Ellipsis:
        verdict = Verdict(name, None, f"Exercise {name}: no answer yet (replace None in the "
                                      f"answer cell, then run this cell again).")
    elif _close(answer, expected, rel_tol, abs_tol):
        verdict = Verdict(name, True, f"Exercise {name}: right.")
    else:
        tip = f" Hint: {hint}" if hint else ""
        verdict = Verdict(name, False, f"Exercise {name}: not yet ({answer!r} is not within "
                                       f"{rel_tol:.0%} of the expected value).{tip}")
    if strict and not verdict.ok:
        raise AssertionError(verdict.message)
    return verdict
