"""MyST Markdown of the book -> plain Markdown/HTML that Jupyter (nbconvert, Voila) renders.

Used by ``scripts/live/prepare.py`` (``make live``). The static book is built by Jupyter Book,
which understands MyST; the live app is served by Voila, which renders cells with nbconvert
and does not. Everything MyST-specific is rewritten here:

* directives (backtick or colon fences, nested ones included): ``{admonition}`` / ``{note}`` /
  ``{warning}`` ... become a framed ``<div>`` with a bold title; ``:class: dropdown``,
  ``{dropdown}`` and ``{toggle}`` become a collapsed ``<details>``; ``{math}`` becomes
  ``$$ ... $$``; ``{code-block}`` / ``{code}`` a fenced code block; ``{rubric}`` a bold line;
  any other directive a framed ``<div>`` titled by its name. A note that points readers to
  ``make live`` or links to the preface's *Running the book* (the static site's pointers to
  this app) is dropped.
* sphinx-exercise: ``{exercise}`` becomes a framed ``<div id="ex-5-2">`` titled
  **Exercise 5.2 (★★ title)**, numbered as the site numbers it (per chapter, in order);
  ``{solution} ex-5-2`` a collapsed ``<details>`` "Solution to Exercise 5.2 (★★ title)" (a
  framed box when it has no ``dropdown`` class).
* sphinx-proof: ``{prf:theorem}``, ``{prf:lemma}``, ``{prf:definition}`` ... become a framed
  ``<div id="label">`` titled **Theorem 5.1 (title)** (one counter per kind and chapter, as
  the site); ``{prf:proof}`` a framed block titled *Proof.* ending with ∎.
* labelled equations ``$$ ... $$ (label)`` get the book's number as ``\\tag{5.2}``;
* roles: ``{eq}`` -> ``(5.2)``, ``{numref}`` -> ``Fig. 7.1``, ``{cite}`` -> ``[Balle et al.,
  2019]``, ``{doc}`` / ``{ref}`` / ``{prf:ref}`` -> a link to the app notebook (``#label`` on
  the same page; plain text when the target is not in the app) reading as the site does:
  ``Exercise 5.2``, ``Theorem 5.1``, a page or section title; ``{term}`` -> the term (the
  glossary page is not in the app); ``{math}`` -> ``$...$``; any other role -> its text;
* ``(label)=`` targets are removed; links to chapters that are not in the app become text.

Unknown labels raise :class:`MystError` (a broken cross-reference must not reach the app
silently).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

__all__ = ["MystError", "Context", "convert", "scan", "summary_html", "ADMONITIONS",
           "PROOF_KINDS"]


class MystError(ValueError):
    """A MyST construct the converter cannot translate faithfully (e.g. an unknown label)."""


#: Directive names rendered as a framed box titled by the capitalised name.
ADMONITIONS = ("note", "tip", "hint", "important", "warning", "caution", "attention", "danger",
               "error", "seealso")

#: sphinx-proof environments numbered by the site (one counter per kind); ``prf:proof`` is not.
PROOF_KINDS = ("algorithm", "assumption", "axiom", "conjecture", "corollary", "criterion",
               "definition", "example", "lemma", "observation", "property", "proposition",
               "notation", "remark", "theorem")

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}"
                        r"[ \t]*(?P<arg>.*?)[ \t]*$")
CODE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`{]*)$")
OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
EQ_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[\w:.-]+)\)[ \t]*$")
TARGET = re.compile(r"^[ \t]*\((?P<label>[\w:.-]+)\)=[ \t]*$")
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)\)")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


@dataclass
class Context:
    """What the converter needs to know about the whole book.

    Attributes
    ----------
    equations, figures : dict
        label -> number text (``"5.2"``), over every chapter (cross-chapter references work).
    docs : dict
        document stem (``"02_preliminaries"``) -> title.
    sections : dict
        ``(label)=`` target -> (document stem, heading text).
    citations : dict
        bibtex key -> in-text label (``"Balle et al., 2019"``).
    app : set
        document stems present in the live app (links to the others become text).
    exercises : dict
        exercise label -> ``(document stem, number text or "", title)``.
    proofs : dict
        sphinx-proof label -> ``(document stem, kind, number text or "", title)``; ``kind`` is
        the directive name without ``prf:`` (``"theorem"``).
    unlabelled : dict
        ``(document stem, directive name, title)`` -> number text, for numbered environments
        without a ``:label:`` (the site numbers them too).
    current : str
        the document being converted (references into it become ``#label`` links).
    """

    equations: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    docs: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)
    citations: dict = field(default_factory=dict)
    app: set = field(default_factory=set)
    exercises: dict = field(default_factory=dict)
    proofs: dict = field(default_factory=dict)
    unlabelled: dict = field(default_factory=dict)
    current: str = ""
    drop_live_pointers: bool = True


# ----------------------------------------------------------------------------------- roles
def _split_explicit(body: str) -> tuple[str | None, str]:
    m = EXPLICIT.match(body.strip())
    if m:
        return m.group("text"), m.group("target").strip()
    return None, body.strip()


def _doc_link(stem: str, text: str, ctx: Context, anchor: str = "") -> str:
    stem = stem.removeprefix("./")
    for suffix in (".ipynb", ".md"):
        stem = stem.removesuffix(suffix)
    if anchor and stem == ctx.current:
        return f"[{text}]({anchor})"              # same page: no reload (no new kernel)
    if stem in ctx.app:
        return f"[{text}]({stem}.ipynb{anchor})"
    return text


def _kind_title(kind: str) -> str:
    return kind.title()                          # as sphinx-proof: "Theorem", "Lemma", ...


def _object(label: str, ctx: Context) -> tuple[str, str, str] | None:
    """``(document, "Exercise 5.2" / "Theorem 5.1", title)`` of an exercise or sphinx-proof
    label, or None."""
    if label in ctx.exercises:
        doc, num, title = ctx.exercises[label]
        return doc, f"Exercise {num}".strip(), title
    if label in ctx.proofs:
        doc, kind, num, title = ctx.proofs[label]
        return doc, f"{_kind_title(kind)} {num}".strip(), title
    return None


def _role(m: re.Match, ctx: Context) -> str:
    role, body = m.group("role"), m.group("body")
    name = role.split(":")[-1] if role.startswith(("cite", "std:", "py:", "myst:")) else role
    if role.startswith("cite"):
        keys = [k.strip() for k in body.split(",") if k.strip()]
        missing = [k for k in keys if k not in ctx.citations]
        if missing:
            raise MystError(f"unknown citation key(s) {missing}")
        labels = [ctx.citations[k] for k in keys]
        if role in ("cite:t", "cite:ts"):        # "Balle et al. (2019)"
            return "; ".join(re.sub(r", (\d{4}\w?)$", r" (\1)", s) for s in labels)
        return "[" + "; ".join(labels) + "]"
    if role == "eq":
        label = body.strip()
        if label not in ctx.equations:
            raise MystError(f"unknown equation label {label!r}")
        return f"({ctx.equations[label]})"
    if role == "numref":
        text, label = _split_explicit(body)
        obj = _object(label, ctx)
        if obj and label not in ctx.figures:             # Exercise 5.2, Theorem 5.1
            doc, name, _title = obj
            num = name.split(" ", 1)[-1]
            shown = text.replace("%s", num).replace("{number}", num) if text else name
            return _doc_link(doc, shown, ctx, "#" + label)
        if label not in ctx.figures:
            raise MystError(f"unknown figure label {label!r}")
        num = ctx.figures[label]
        if text:
            return text.replace("%s", num).replace("{number}", num)
        return f"Fig. {num}"
    if role == "doc":
        text, target = _split_explicit(body)
        stem = target.removeprefix("./").removesuffix(".md").removesuffix(".ipynb")
        if stem not in ctx.docs:
            raise MystError(f"unknown document {target!r}")
        return _doc_link(stem, text or ctx.docs[stem], ctx)
    if role == "ref":
        text, label = _split_explicit(body)
        if label in ctx.sections:
            stem, heading = ctx.sections[label]
            anchor = "#" + re.sub(r"\s+", "-", heading.strip())
            return _doc_link(stem, text or heading, ctx, anchor)
        if label in ctx.figures:
            return text or f"Fig. {ctx.figures[label]}"
        if label in ctx.exercises:                      # the site: "Exercise 5.2"
            doc, name, _title = _object(label, ctx)
            return _doc_link(doc, text or name, ctx, "#" + label)
        raise MystError(f"unknown reference label {label!r}")
    if role == "prf:ref":
        text, label = _split_explicit(body)
        if label not in ctx.proofs:
            raise MystError(f"unknown theorem/definition label {label!r} ({{prf:ref}})")
        doc, name, _title = _object(label, ctx)        # the site: "Theorem 5.1"
        return _doc_link(doc, text or name, ctx, "#" + label)
    if role == "math":
        return f"${body}$"
    if name in ("code", "literal", "samp", "file", "command", "kbd", "envvar", "option",
                "program", "mod", "func", "class", "meth", "attr", "data", "exc", "obj"):
        text, target = _split_explicit(body)
        return f"`{text or target}`"
    if name in ("sub", "subscript"):
        return f"<sub>{html.escape(body)}</sub>"
    if name in ("sup", "superscript"):
        return f"<sup>{html.escape(body)}</sup>"
    text, target = _split_explicit(body)       # abbr, term, ...: the readable part
    return text or target


ROLE_OR_CODE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`"
                          r"|(?P<code>(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`))", re.S)


def _inline(text: str, ctx: Context) -> str:
    """Roles and links of a piece of Markdown without code fences; code spans are left alone
    (one left-to-right scan, so that a role's backticks never open a code span)."""
    out, pos = [], 0
    for m in ROLE_OR_CODE.finditer(text):
        out.append(_links(text[pos:m.start()], ctx))
        out.append(m.group("code") if m.group("code") else _role(m, ctx))
        pos = m.end()
    out.append(_links(text[pos:], ctx))
    return "".join(out)


def _links(text: str, ctx: Context) -> str:
    def link(m: re.Match) -> str:
        url = m.group("url")
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("#"):
            return m.group(0)                        # external or same-page link: unchanged
        path, _, frag = url.partition("#")
        stem = path.removeprefix("./")
        for suffix in (".ipynb", ".md"):
            if stem.endswith(suffix) and not stem.startswith("../"):
                return _doc_link(stem, m.group("text"), ctx, "#" + frag if frag else "")
        return m.group("text")                       # a repository file: not served by the app
    return LINK.sub(link, text)


INLINE_HTML = re.compile(r"(?P<math>\$[^$]+\$)|(?P<ticks>`+)(?P<code>.+?)(?P=ticks)"
                         r"|\*\*(?P<bold>.+?)\*\*|(?<![\w*])\*(?P<em>[^*\s][^*]*?)\*(?![\w*])"
                         r"|(?<!!)\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)\)", re.S)


def summary_html(markdown: str) -> str:
    """A fold title (the Markdown of a converted title: code spans, bold, emphasis, links,
    ``$math$``) as HTML, for a ``<summary>``: Markdown is not rendered inside an HTML block, so
    a code span written there would show its backticks. Math is kept for MathJax (escaped).

    Examples
    --------
    >>> summary_html("Under the hood: `amp.epsilon` at $n < 10$ & **more**")
    'Under the hood: <code>amp.epsilon</code> at $n &lt; 10$ &amp; <b>more</b>'
    """
    out, pos = [], 0
    for m in INLINE_HTML.finditer(markdown):
        out.append(html.escape(markdown[pos:m.start()], quote=False))
        if m.group("math"):
            out.append(html.escape(m.group("math"), quote=False))
        elif m.group("code") is not None:
            out.append(f"<code>{html.escape(m.group('code').strip(), quote=False)}</code>")
        elif m.group("bold") is not None:
            out.append(f"<b>{summary_html(m.group('bold'))}</b>")
        elif m.group("em") is not None:
            out.append(f"<i>{summary_html(m.group('em'))}</i>")
        else:
            out.append(f'<a href="{html.escape(m.group("url"))}">'
                       f"{summary_html(m.group('text'))}</a>")
        pos = m.end()
    out.append(html.escape(markdown[pos:], quote=False))
    return "".join(out)


# ----------------------------------------------------------------------------- directives
def _title(name: str, arg: str) -> str:
    if arg:
        return arg
    return {"seealso": "See also"}.get(name, name.capitalize())


def _indent(block: str, indent: str) -> str:
    return "\n".join(indent + line if line.strip() else line for line in block.split("\n"))


def _render_directive(name: str, arg: str, options: dict, body: str, indent: str,
                      ctx: Context) -> str:
    classes = options.get("class", "").split()
    base = name.split(":")[-1]
    if (ctx.drop_live_pointers and base in ADMONITIONS
            and ("make live" in body or "<running-the-book>" in body)):
        return ""
    if base == "math":
        inner = convert(body, ctx).strip()
        tag = ""
        if "label" in options:
            label = options["label"].strip()
            if label not in ctx.equations:
                raise MystError(f"unknown equation label {label!r}")
            tag = f" \\tag{{{ctx.equations[label]}}}"
        return _indent(f"$$\n{inner}{tag}\n$$", indent)
    if base in ("code-block", "code", "code-cell", "sourcecode"):
        lang = arg.split()[0] if arg else ""
        return _indent(f"```{lang}\n{body}\n```", indent)
    if base == "rubric":                                  # a paragraph heading
        return _indent(f"**{_inline(arg, ctx)}**", indent)
    if base == "exercise" or (name.startswith("prf:") and base in PROOF_KINDS):
        return _numbered(base, arg, options, classes, body, indent, ctx)
    if name == "solution":
        return _solution(arg, classes, body, indent, ctx)
    if name == "prf:proof":
        inner = convert(body, ctx).strip("\n")
        if inner and not re.match(r"\$\$|[<>#|`]|[-*+]\s|\d+\.\s", inner):
            inner = "*Proof.* " + inner                   # as sphinx-proof: "Proof. First..."
        else:
            inner = "*Proof.*\n\n" + inner
        out = (f'<div class="amp-admonition amp-proof">\n\n{inner}\n\n'
               '<p style="text-align: right">∎</p>\n\n</div>')
        return _indent(out, indent)
    inner = convert(body, ctx).strip("\n")
    if base in ("dropdown", "toggle") or "dropdown" in classes or "toggle" in classes:
        title = _inline(_title(base, arg) if base != "toggle" else (arg or "Show"), ctx)
        if base == "dropdown" and not arg:
            title = "Show"
        out = (f'<details class="amp-dropdown">\n<summary><b>{summary_html(title)}</b>'
               '</summary>\n\n'
               f"{inner}\n\n</details>")
        return _indent(out, indent)
    kind = base if base in ADMONITIONS else "admonition"
    names = ["amp-admonition"] + ([f"amp-{kind}"] if kind != "admonition" else [])
    names += [c for c in classes if re.fullmatch(r"[\w-]+", c)]
    title = _inline(_title(base, arg), ctx)
    out = (f'<div class="{" ".join(names)}">\n\n'
           f"**{title}**\n\n{inner}\n\n</div>")
    return _indent(out, indent)


def _box(kind: str, label: str, title: str, inner: str, classes: list, indent: str) -> str:
    """A framed, titled block with the label as its HTML id (the target of references), or a
    collapsed ``<details>`` when the directive has the ``dropdown`` class."""
    anchor = f' id="{html.escape(label)}"' if label else ""
    if "dropdown" in classes or "toggle" in classes:
        out = (f'<details class="amp-dropdown"{anchor}>\n<summary><b>{summary_html(title)}</b>'
               '</summary>\n\n'
               f"{inner}\n\n</details>")
    else:
        names = ["amp-admonition", f"amp-{kind}"]
        names += [c for c in classes if re.fullmatch(r"[\w-]+", c) and c not in names]
        out = f'<div class="{" ".join(names)}"{anchor}>\n\n**{title}**\n\n{inner}\n\n</div>'
    return _indent(out, indent)


def _numbered(base: str, arg: str, options: dict, classes: list, body: str, indent: str,
              ctx: Context) -> str:
    """``{exercise}`` and the sphinx-proof environments: "Exercise 5.2 (★★ title)",
    "Definition 2.1 (title)", "Theorem 3 (§4.2): title" (unnumbered), numbered as the site (:func:`prepare.book_context`)."""
    label = options.get("label", "").strip()
    table = ctx.exercises if base == "exercise" else ctx.proofs
    if label:
        if label not in table:
            raise MystError(f"unknown {base} label {label!r}")
        num = table[label][-2]
    else:
        num = ctx.unlabelled.get((ctx.current, base, arg), "")
    if "nonumber" in options:
        num = ""
    title = f"{_kind_title(base)} {num}".strip()
    if arg and base == "exercise":
        title += f" ({_inline(arg, ctx)})"
    elif arg:
        # the book's proof_title_format is "%t": a box from the paper is unnumbered and its
        # title carries the paper's name ("Theorem" + "3 (§4.2): ..."); a numbered box has its
        # title in parentheses already ("Definition 2.1" + "(Hockey-stick divergence; §2)")
        title += f" {_inline(arg, ctx)}"
    inner = convert(body, ctx).strip("\n")
    return _box("proof-" + base if base != "exercise" else "exercise", label, title, inner,
                classes, indent)


def _solution(arg: str, classes: list, body: str, indent: str, ctx: Context) -> str:
    """``{solution} ex-5-2``: "Solution to Exercise 5.2 (★★ title)", folded when it has the
    ``dropdown`` class (as the site)."""
    label = arg.strip()
    if label not in ctx.exercises:
        raise MystError(f"solution to an unknown exercise label {label!r}")
    _doc, num, ex_title = ctx.exercises[label]
    title = f"Solution to Exercise {num}".strip()
    if ex_title:
        title += f" ({_inline(ex_title, ctx)})"
    inner = convert(body, ctx).strip("\n")
    return _box("solution", "", title, inner, classes, indent)


def _closing(line: str, char: str, length: int) -> bool:
    s = line.strip()
    return len(s) >= length and set(s) == {char}


def _parse(text: str):
    """The blocks of a piece of MyST, in order: ``("directive", name, arg, options, body,
    indent)``, ``("code", raw)`` (an ordinary fenced code block), ``("target", label)`` (a
    ``(label)=`` line) and ``("line", line)`` (anything else)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        d = FENCE_OPEN.match(line)
        c = None if d else CODE_OPEN.match(line)
        if d:
            char, length = d.group("fence")[0], len(d.group("fence"))
            j = i + 1
            options: dict = {}
            while j < len(lines) and OPTION.match(lines[j]) and not _closing(lines[j], char,
                                                                             length):
                o = OPTION.match(lines[j])
                options[o.group("key")] = o.group("value")
                j += 1
            if j < len(lines) and lines[j].strip() == "---":        # YAML option block
                k = j + 1
                while k < len(lines) and lines[k].strip() != "---":
                    key, _, value = lines[k].partition(":")
                    options[key.strip()] = value.strip()
                    k += 1
                j = k + 1
            start = j
            while j < len(lines) and not _closing(lines[j], char, length):
                j += 1
            if j >= len(lines):
                raise MystError(f"unclosed directive {{{d.group('name')}}}")
            indent = d.group("indent")
            body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln
                             for ln in lines[start:j])
            yield "directive", d.group("name"), d.group("arg"), options, body, indent
            i = j + 1
            continue
        if c:                                   # ordinary code block: copied verbatim
            char, length = c.group("fence")[0], len(c.group("fence"))
            j = i + 1
            while j < len(lines) and not _closing(lines[j], char, length):
                j += 1
            yield "code", "\n".join(lines[i:j + 1])
            i = j + 1
            continue
        t = TARGET.match(line)
        if t:
            yield "target", t.group("label")
        else:
            yield "line", line
        i += 1


def scan(text: str) -> list[tuple[str, str, dict]]:
    r"""The numbered objects of a piece of MyST in document order (nested directives included,
    code blocks skipped): ``(name, arg, options)`` per directive and ``("equation", label,
    {})`` per labelled ``$$ ... $$ (label)`` equation. :func:`prepare.book_context` numbers
    them as the site does.

    Examples
    --------
    >>> [(n, a) for n, a, _ in scan("$$\nx\n$$ (e)\n\n```{exercise} ★ T\n:label: ex-1-1\n```")]
    [('equation', 'e'), ('exercise', '★ T')]
    """
    out: list[tuple[str, str, dict]] = []
    for block in _parse(text):
        if block[0] == "directive":
            _, name, arg, options, body, _indent = block
            out.append((name, arg, options))
            if name.split(":")[-1] not in ("math", "code-block", "code", "code-cell",
                                           "sourcecode", "raw", "eval-rst"):
                out.extend(scan(body))
        elif block[0] == "line":
            e = EQ_LABEL.search(block[1])
            if e:
                out.append(("equation", e.group("label"), {}))
    return out


def convert(text: str, ctx: Context) -> str:
    """Convert one Markdown cell (or a directive body) from MyST to Jupyter Markdown.

    Examples
    --------
    >>> ctx = Context(equations={"e": "2.1"}, citations={"k": "Doe, 2020"})
    >>> convert("See {eq}`e` and {cite}`k`.", ctx)
    'See (2.1) and [Doe, 2020].'
    """
    out: list[str] = []
    chunk: list[str] = []           # plain Markdown waiting for inline conversion

    def flush() -> None:
        if chunk:
            out.append(_inline("\n".join(chunk), ctx))
            chunk.clear()

    for block in _parse(text):
        kind = block[0]
        if kind == "directive":
            flush()
            _, name, arg, options, body, indent = block
            rendered = _render_directive(name, arg, options, body, indent, ctx)
            if rendered:
                out.append(rendered)
        elif kind == "code":
            flush()
            out.append(block[1])
        elif kind == "target":                  # (label)= : the target itself is invisible
            continue
        else:
            line = block[1]
            e = EQ_LABEL.search(line)
            if e:
                label = e.group("label")
                if label not in ctx.equations:
                    raise MystError(f"unknown equation label {label!r}")
                line = line[:e.start()] + f"\\tag{{{ctx.equations[label]}}}\n$$"
            chunk.append(line)
    flush()
    result = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", result)
