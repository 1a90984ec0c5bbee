"""The package's shape: imports (function-level ones included) form no cycle and go only down the
layers of ../shared/notes/architecture.md; no module imports or reads another module's private
names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "amp"
# No line cap: a module is one concept and its size follows the concept (the 600-line cap shaped
# the splits more than the concepts did; withdrawn in the wave-4 architecture note, issue 34).

#: Layer rank of each top-level part of the package: a module may import modules of a lower
#: rank, and modules of its own part (acyclically). Baselines and oracles sit beside the front
#: door (rank 5) and use the layers below it.
RANKS = {"core": 0, "mechanisms": 1, "backends": 2, "privacy_profile": 3, "inversion": 4,
         "rounds": 4.5, "api": 5, "sweeps": 5.5,
         "baselines": 5, "oracles": 5, "cli": 6, "viz": 6, "__init__": 7, "__main__": 8}
RANKS.update({"pairs": 2.5, "pairsearch": 4.2})   # a matrix's pair laws; their eps search
RANKS.update({"accuracy": 5.5})   # deprecated aliases of the book's package (ampbook), as "viz"
# the inversion and a matrix's eps search sit below the profile (PrivacyProfile.epsilon calls
# them); the baselines below the front door (amp.epsilon(..., bound="clone") calls them)
RANKS.update({"inversion": 2.6, "pairsearch": 2.8, "baselines": 4.8, "frontdoor": 4.9})
# a fixed population's sharpest bound, delta and its eps search over its victims' profiles
# (amp.rounds composes its rounds from the same curves, and the front door asks it)
RANKS.update({"population": 3.5})
RANKS.update({"cli_baseline": 5.9})   # the CLI's JSON answer of a baseline (amp.cli uses it)
# deprecated aliases of amp.rounds.adapter / amp.rounds.export (one release), as "viz"
RANKS.update({"pld_adapter": 6, "pld_export": 6})
RANKS.update({"inversion_guided": 2.55, "inversion_chord": 2.55})   # the inversion's steps (speed)


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The amp module an imported dotted name refers to (its longest known prefix)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(mod: str, path: Path) -> set[str]:
    """Every amp module that ``mod`` imports, at any depth of the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")
                up = up[:len(up) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            # "from amp.x import y": y may be a submodule
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                     for a in node.names]
        else:
            continue
        for n in names:
            if n == "amp" or n.startswith("amp."):
                r = _resolve(n)
                if r is not None and r != mod:
                    found.add(r)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _part(mod: str) -> str:
    parts = mod.split(".")
    if ".".join(parts[1:3]) in RANKS:     # a module ranked on its own (below)
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_rank():
    assert {_part(m) for m in MODULES} <= set(RANKS)


def test_no_import_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH[m]):
            if state.get(d) == 1:
                cyc = stack[stack.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cyc))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_imports_go_down_the_layers():
    bad = []
    for m, deps in GRAPH.items():
        for d in deps:
            pm, pd = _part(m), _part(d)
            if pm != pd and RANKS[pd] >= RANKS[pm]:
                bad.append(f"{m} -> {d}")
    assert not bad, "upward or sideways imports: " + ", ".join(sorted(bad))


def test_no_private_name_crosses_a_module_boundary():
    bad = []
    for m, p in MODULES.items():
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("amp"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(f"{m}: from {node.module} import {a.name}")
    assert not bad, "; ".join(bad)


def test_the_checker_sees_function_level_imports(tmp_path):
    """The cycle test is not vacuous: a function-level import is found, absolute or relative.
    The probe module lives in ``tmp_path`` (never in the source tree): ``_imports`` reads the
    file it is given and resolves names against the package's module list."""
    src = ("def f():\n    from amp.api import epsilon\n"
           "def g():\n    from ..rounds import compose\n")
    p = tmp_path / "_probe_tmp.py"
    p.write_text(src)
    found = _imports("amp.core._probe_tmp", p)
    assert {"amp.api", "amp.rounds"} <= found
    assert "amp.core._probe_tmp" not in MODULES


def _private_reads(path: Path) -> list[str]:
    """``alias._name`` (or ``alias.sub._name``) reads where ``alias`` was imported from amp:
    another module's private name used across the boundary, which ``from x import _y`` alone
    would not show."""
    tree = ast.parse(path.read_text(), filename=str(path))
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name.split(".")[0] for a in node.names
                        if a.name == "amp" or a.name.startswith("amp.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("amp"):
            aliases |= {a.asname or a.name for a in node.names}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_module_reads_another_modules_private_names():
    bad = [r for p in MODULES.values() for r in _private_reads(p)]
    assert not bad, "private names read across modules: " + "; ".join(bad)


def test_the_private_read_check_sees_reads_through_imported_names(tmp_path):
    """Not vacuous: reads through an imported module are found; an argument's own are not."""
    p = tmp_path / "_probe_private.py"
    p.write_text("import amp.rounds as R\nfrom amp.rounds import lower\n"
                 "def f(x):\n    return R._grid(x) + lower._window + x._own\n")
    assert sorted(r.split(" ", 1)[1] for r in _private_reads(p)) == ["R._grid", "lower._window"]
