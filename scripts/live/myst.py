"""MyST Markdown of the book -> plain Markdown/HTML that Jupyter (nbconvert, Voila) renders.

Used by ``scripts/live/prepare.py`` (``make live``). The static book is built by Jupyter Book,
which understands MyST; the live app is served by Voila, which renders cells with nbconvert
and does not. Everything MyST-specific is rewritten here:

* directives (backtick or colon fences, nested ones included): ``{admonition}`` / ``{note}`` /
  ``{warning}`` ... become a framed ``<div>`` with a bold title; ``:class: dropdown``,
  ``{dropdown}`` and ``{toggle}`` become a collapsed ``<details>`` (exercise solutions);
  ``{math}`` becomes ``$$ ... $$``; ``{code-block}`` / ``{code}`` a fenced code block; any other
  directive a framed ``<div>`` titled by its name. A note that points readers to ``make live``
  (the static site's pointer to this app) is dropped.
* labelled equations ``$$ ... $$ (label)`` get the book's number as ``\\tag{5.2}``;
* roles: ``{eq}`` -> ``(5.2)``, ``{numref}`` -> ``Fig. 7.1``, ``{cite}`` -> ``[Balle et al.,
  2019]``, ``{doc}`` / ``{ref}`` -> a link to the app notebook (or plain text when the target is
  not in the app), ``{math}`` -> ``$...$``, any other role -> its text;
* ``(label)=`` targets are removed; links to chapters that are not in the app become text.

Unknown labels raise :class:`MystError` (a broken cross-reference must not reach the app
silently).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

__all__ = ["MystError", "Context", "convert", "ADMONITIONS"]


class MystError(ValueError):
    """A MyST construct the converter cannot translate faithfully (e.g. an unknown label)."""


#: Directive names rendered as a framed box titled by the capitalised name.
ADMONITIONS = ("note", "tip", "hint", "important", "warning", "caution", "attention", "danger",
               "error", "seealso")

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
    """

    equations: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    docs: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)
    citations: dict = field(default_factory=dict)
    app: set = field(default_factory=set)
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
    if stem in ctx.app:
        return f"[{text}]({stem}.ipynb{anchor})"
    return text


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
        raise MystError(f"unknown reference label {label!r}")
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
    if ctx.drop_live_pointers and "make live" in body and base in ADMONITIONS:
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
    inner = convert(body, ctx).strip("\n")
    if base in ("dropdown", "toggle") or "dropdown" in classes or "toggle" in classes:
        title = _inline(_title(base, arg) if base != "toggle" else (arg or "Show"), ctx)
        if base == "dropdown" and not arg:
            title = "Show"
        out = (f'<details class="amp-dropdown">\n<summary><b>{title}</b></summary>\n\n'
               f"{inner}\n\n</details>")
        return _indent(out, indent)
    kind = base if base in ADMONITIONS else "admonition"
    names = ["amp-admonition"] + ([f"amp-{kind}"] if kind != "admonition" else [])
    names += [c for c in classes if re.fullmatch(r"[\w-]+", c)]
    title = _inline(_title(base, arg), ctx)
    out = (f'<div class="{" ".join(names)}">\n\n'
           f"**{title}**\n\n{inner}\n\n</div>")
    return _indent(out, indent)


def _closing(line: str, char: str, length: int) -> bool:
    s = line.strip()
    return len(s) >= length and set(s) == {char}


def convert(text: str, ctx: Context) -> str:
    """Convert one Markdown cell (or a directive body) from MyST to Jupyter Markdown.

    Examples
    --------
    >>> ctx = Context(equations={"e": "2.1"}, citations={"k": "Doe, 2020"})
    >>> convert("See {eq}`e` and {cite}`k`.", ctx)
    'See (2.1) and [Doe, 2020].'
    """
    lines = text.split("\n")
    out: list[str] = []
    chunk: list[str] = []           # plain Markdown waiting for inline conversion

    def flush() -> None:
        if chunk:
            out.append(_inline("\n".join(chunk), ctx))
            chunk.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        d = FENCE_OPEN.match(line)
        c = None if d else CODE_OPEN.match(line)
        if d:
            flush()
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
            rendered = _render_directive(d.group("name"), d.group("arg"), options, body,
                                         indent, ctx)
            if rendered:
                out.append(rendered)
            i = j + 1
            continue
        if c:                                   # ordinary code block: copied verbatim
            flush()
            char, length = c.group("fence")[0], len(c.group("fence"))
            j = i + 1
            while j < len(lines) and not _closing(lines[j], char, length):
                j += 1
            out.append("\n".join(lines[i:j + 1]))
            i = j + 1
            continue
        if TARGET.match(line):                  # (label)= : the target itself is invisible
            i += 1
            continue
        e = EQ_LABEL.search(line)
        if e:
            label = e.group("label")
            if label not in ctx.equations:
                raise MystError(f"unknown equation label {label!r}")
            line = line[:e.start()] + f"\\tag{{{ctx.equations[label]}}}\n$$"
        chunk.append(line)
        i += 1
    flush()
    result = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", result)
