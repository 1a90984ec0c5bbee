"""Course structure of chapters 6, 8 and 9 and their engine-room page (static, no execution).

Each chapter opens with what the reader will learn, ends with a summary, keeps engine internals
out of its prose (one pointer to ``book/engine/ch06_09_internals``), states the paper's results
as sphinx-proof objects with the agreed labels, and has >= 3 numbered sphinx-exercise exercises
with difficulty marks, at least one with a checked answer. The notebooks run under nbval.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = {
    "6": "06_joint_composition.ipynb",
    "8": "08_beyond_general_clone.ipynb",
    "9": "09_conclusion_appendices.ipynb",
}
ENGINE = BOOK / "engine" / "ch06_09_internals.ipynb"
POINTER = "{doc}`engine/ch06_09_internals`"
HOOK = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d cores?\b|shared machine|this machine|peak memory"
                  r"|wall time")
ENGINE_NAMES = re.compile(r"amp\.(oracles|viz|backends|mechanisms)\b|Under the hood|bench/|"
                          r"figures\.json|milliseconds")


def cells(name: str) -> list[dict]:
    return json.loads((BOOK / name).read_text())["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def markdown(name: str) -> list[str]:
    return [text(c) for c in cells(name) if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("chapter", sorted(CHAPTERS), ids=lambda c: f"ch{c}")
def test_opens_with_outcomes_and_closes_with_summary(chapter: str) -> None:
    md = markdown(CHAPTERS[chapter])
    assert "In this chapter you will learn" in md[0]
    assert md[-1].lstrip().startswith("## Summary")


@pytest.mark.parametrize("chapter", sorted(CHAPTERS), ids=lambda c: f"ch{c}")
def test_engine_internals_moved_out_with_one_pointer(chapter: str) -> None:
    md = markdown(CHAPTERS[chapter])
    prose = "\n".join(md)
    assert prose.count(POINTER) == 1
    assert not HOOK.search(prose), HOOK.search(prose)
    assert not ENGINE_NAMES.search(prose), ENGINE_NAMES.search(prose)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS), ids=lambda c: f"ch{c}")
def test_committed_without_outputs(chapter: str) -> None:
    for cell in cells(CHAPTERS[chapter]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


EXERCISE = re.compile(r"```\{exercise\} (★{1,3}) .+\n:label: (ex-(\d+)-(\d+))\n")


@pytest.mark.parametrize("chapter", sorted(CHAPTERS), ids=lambda c: f"ch{c}")
def test_exercises_numbered_marked_and_solved(chapter: str) -> None:
    cs = cells(CHAPTERS[chapter])
    labels, checked = [], []
    for i, cell in enumerate(cs):
        m = EXERCISE.search(text(cell)) if cell["cell_type"] == "markdown" else None
        if not m:
            continue
        label, ch, k = m.group(2), m.group(3), m.group(4)
        assert ch == chapter
        labels.append(int(k))
        j = i + 1
        if "answer" in cs[j]["metadata"].get("tags", []):   # checked answer: answer + check
            answer = text(cs[j])
            name = f"answer_{chapter}_{k}"
            assert re.fullmatch(rf"{name} = .+  # solution", answer.strip()), answer
            assert f'check("{chapter}.{k}", {name},' in text(cs[j + 1])
            checked.append(label)
            j += 2
        solution = text(cs[j]).strip()
        assert solution.startswith(f"```{{solution}} {label}\n:class: dropdown\n")
        assert solution.endswith("```") and solution.count("```") == 2   # nothing else
    assert len(labels) >= 3 and labels == list(range(1, len(labels) + 1))
    assert checked, "at least one computational exercise with a checked answer"
    prose = "\n".join(markdown(CHAPTERS[chapter]))
    assert "{admonition} Exercise" not in prose and "{admonition} Solution" not in prose


def test_theorem_environments() -> None:
    ch6 = "\n".join(markdown(CHAPTERS["6"]))
    # a box from the paper: its name in the paper, unnumbered by the book (00_how_to_read.md)
    assert re.search(r"```\{prf:theorem\} 1 \(§6\): .*\n:label: thm-1-s6\n:nonumber:\n", ch6)
    assert re.search(r"```\{prf:example\} 6\.0 \(§6\): .*\n:label: example-6-0\n:nonumber:\n",
                     ch6)
    ch8 = "\n".join(markdown(CHAPTERS["8"]))
    assert re.search(r"```\{prf:conjecture\} \(.*; §8\)\n:label: conj-s8\n", ch8)
    ch9 = "\n".join(markdown(CHAPTERS["9"]))
    assert "```{prf:proof}" in ch9 and "<thm-5-s5-3>`" in ch9    # linked with its paper name
    assert ":label: thm-5-s5-3" not in ch9          # defined in chapter 5 only
    assert "Koskela" in ch9 or "koskela2021tight" in ch9


def test_engine_page_holds_what_moved() -> None:
    page = "\n".join(text(c) for c in json.loads(ENGINE.read_text())["cells"])
    for moved in ["merge_columns=False", "bench/conjecture_search.py", "2024",
                  "bench/reproduce_figures.py", "book/data/figures.json", "joint_estimates",
                  "JointMechanism.gparv_laws", "amp.oracles.conjecture.search",
                  "amp.oracles.appendix_a", "Bennett", "example_6_0"]:
        assert moved in page, moved
    for cell in json.loads(ENGINE.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
