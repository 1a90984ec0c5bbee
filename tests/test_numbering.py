"""One numbering of theorems (issue 36): the paper's own number with its section.

The rule, stated in ``book/00_how_to_read.md``: an object the paper numbers (Theorem, Lemma,
Property, Algorithm, Remark, Example) is named everywhere by the paper's number and section,
"Theorem 3 (§4.2)" (the paper reuses numbers: Theorem 3 is the standard clone reduction in §3.1
and the general clone bound in §4.2, so the section is part of the name). Its box is unnumbered
by the book and headed the same way. Within one paragraph, once named in full, "Theorem 3"
alone may repeat it (a page title need not carry the section). The book's own results and the definitions the paper leaves unnumbered
carry the book's running number ("Proposition 14.1", "Definition 2.1"), and a box of those
ends its title with the section of the paper it restates, "(Hockey-stick divergence; §2)".

Checked here: every proof box's heading, and the prose (markdown) of every chapter, front and
back matter page, engine-room page and graded problem set.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PAPER_KINDS = ("theorem", "lemma", "property", "algorithm", "remark", "example")
OBJ = r"(?:Theorem|Lemma|Property|Algorithm|Remark|Example)"
#: a mention of one of the paper's numbered objects: "Theorem 4", "Example 6.0" (not another
#: work's "Lemma 12 of Balle et al.", nor "Theorem 4.1")
MENTION = re.compile(r"\b(Theorem|Lemma|Property|Algorithm|Remark|Example) "
                     r"((?<=Theorem )[13456]|(?<=Lemma )[27]|(?<=Property )[12]|"
                     r"(?<=Algorithm )[1-4]|(?<=Remark )1|(?<=Example )[46]\.0)"
                     r"(?![\d.]*\d)(?! (?:of|in) (?:\(|[A-Z]))")
FULL = r"\b{kind} {num} \(§\d"
FORBIDDEN = [
    (re.compile(OBJ + r"\s+\d+(?:\.0)?\s+of\s+(?:the\s+paper|Section|§)"),
     "'of the paper' / 'of Section'"),
    (re.compile(OBJ + r"\s+\d+(?:\.0)?(?:'s)?\s+\(Section"), "'(Section x.y)' instead of '(§x.y)'"),
    (re.compile(r"\b(?:Theorem|Lemma|Property|Remark|Algorithm) \d+\.\d+\b"
                r"(?! (?:of|in) [A-Z])"),
     "a book-numbered theorem (Theorem 4.1) in prose: name the paper's object"),
]


#: a book-style number next to one of these is another work's ("Lemma 5.3 of Balle et al.")
OTHER_WORK = re.compile(r"et al|Feldman|Balle|Kairouz|Koskela|FOCS")


def _sources() -> list[Path]:
    files = sorted(BOOK.glob("*.ipynb")) + sorted(BOOK.glob("*.md"))
    files += sorted((BOOK / "engine").glob("*.ipynb")) + sorted((BOOK / "engine").glob("*.md"))
    files += sorted((ROOT / "assignments" / "source").rglob("*.ipynb"))
    return [p for p in files if ".ipynb_checkpoints" not in p.parts]


def _markdown(path: Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _prose(text: str) -> str:
    """The text without code spans, fenced code, link targets and role targets."""
    text = re.sub(r"```(?:python|bash|text|console|)\n.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*<[^`\n]*>`", lambda m: m.group(0).split("<")[0], text)  # role text
    return re.sub(r"(?<![}\w])`[^`\n]+`", " ", text)


def _paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def _boxes(text: str):
    for m in re.finditer(r"^(`{3,}|:{3,})\{prf:(\w+)\}[ \t]*(.*)\n((?::\w+:.*\n)*)", text, re.M):
        yield m.group(2), m.group(3).strip(), m.group(4)


def _violations(text: str) -> list[str]:
    bad = []
    for kind, title, options in _boxes(text):
        if kind in ("proof",):
            continue
        paper = re.match(r"\d+(?:\.0)? \(§\d+(?:\.\d+)?\)(?:: .+)?$", title)
        if kind in PAPER_KINDS and re.match(r"\d", title):
            if not paper:
                bad.append(f"box '{kind} {title}': write '<number> (§x.y): name'")
            elif ":nonumber:" not in options:
                bad.append(f"box '{kind} {title}': a box from the paper has :nonumber:")
        elif title and not (title.startswith("(") and title.endswith(")")):
            bad.append(f"box '{kind} {title}': a numbered box's title is in parentheses")
        if re.search(r"of the paper|Section \d", title):
            bad.append(f"box '{kind} {title}': write '§x.y'")
    prose = _prose(re.sub(r"^(`{3,}|:{3,})\{prf:\w+\}.*$", " ", text, flags=re.M))
    for rx, why in FORBIDDEN:
        for m in rx.finditer(prose):
            window = prose[max(0, m.start() - 120):m.end() + 40]
            if rx is FORBIDDEN[-1][0] and OTHER_WORK.search(window):
                continue                  # another work's numbering: "Feldman et al.'s Theorem 3.1"
            bad.append(f"{why}: ...{prose[max(0, m.start() - 30):m.end() + 20]!r}")
    prose = re.sub(r"^# .*$", " ", prose, flags=re.M)      # a page title names no section
    for para in _paragraphs(prose):
        for kind, num in sorted(set(MENTION.findall(para))):
            if not re.search(FULL.format(kind=kind, num=re.escape(num)), para):
                flat = re.sub(r"\s+", " ", para)[:160]
                bad.append(f"'{kind} {num}' without its section in the paragraph: {flat!r}")
    return bad


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_one_numbering_of_theorems(path):
    bad = [v for text in _markdown(path) for v in _violations(text)]
    assert not bad, "\n".join(bad)


def test_the_rule_is_stated_once_in_how_to_read():
    text = (BOOK / "00_how_to_read.md").read_text(encoding="utf-8")
    assert "## Numbering of theorems" in text
    assert "Theorem 3 (§4.2)" in text and "Theorem 3 (§3.1)" in text


@pytest.mark.parametrize("text, n_bad", [
    ("By Theorem 4 of Section 5.1, ...", 1),            # "of Section"
    ("By Theorem 4 (Section 5.1), ...", 2),
    ("By Theorem 4.1, the bound ...", 1),
    ("the pair of Theorem 5\n(Section 5.3) is", 2),
    ("By Theorem 4 (§5.1), the bound. Theorem 4 again.", 0),
    ("Theorem 4 (§5.1).\n\nTheorem 4 in a new paragraph.", 1),
    ("Lemma 5.3 of Balle et al. and Lemma 2 (§5.1).", 0),
    ("Feldman, McMillan and Talwar's Theorem 3.1 is a closed form.", 0),
    ("# Lab: build Algorithm 4 yourself\n\nAlgorithm 4 (§5.2) is ...", 0),
    ("```{prf:theorem} 3 (§4.2): name\n:label: t\n:nonumber:\n\nX.\n```", 0),
    ("```{prf:theorem} 3 (§4.2): name\n:label: t\n\nX.\n```", 1),
    ("```{prf:theorem} Theorem 3 of the paper (Section 4.2)\n:label: t\n\nX.\n```", 2),
    ("```{prf:definition} (Hockey-stick divergence; §2)\n:label: d\n\nX.\n```", 0),
    ("```{prf:definition} Hockey-stick divergence\n:label: d\n\nX.\n```", 1),
])
def test_the_checker_itself(text, n_bad):
    assert len(_violations(text)) == n_bad, _violations(text)
