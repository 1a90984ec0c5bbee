"""``import amp`` loads no heavy scipy subpackage (issue #27: they are imported on first use
through amp.core.lazy), and a lazy stand-in gives the very objects a plain import would."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from amp.core.lazy import Lazy, lazy

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy.stats", "scipy.optimize", "scipy.fft", "scipy.special", "scipy.linalg")


def test_import_amp_loads_no_heavy_scipy_subpackage():
    code = ("import sys, amp\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"


def test_no_library_module_imports_scipy_at_the_top():
    """Module-level scipy imports (outside amp/viz, the plotting extra) go through lazy()."""
    bad = []
    for f in sorted((ROOT / "amp").rglob("*.py")):
        if "viz" in f.relative_to(ROOT).parts:
            continue
        for node in ast.parse(f.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{f.relative_to(ROOT)}:{node.lineno}" for n in names
                    if n == "scipy" or n.startswith("scipy.")]
    assert not bad, bad


def test_a_stand_in_forwards_to_the_real_objects():
    import scipy.special
    import scipy.stats

    from amp.backends.structured import binomial
    assert isinstance(binomial.stats, Lazy)
    assert binomial.stats.binom is scipy.stats.binom
    g = lazy("scipy.special", "gammaln")
    assert g(5.0) == scipy.special.gammaln(5.0) and repr(g) == "<lazy scipy.special.gammaln>"
    with pytest.raises(AttributeError):
        lazy("math").no_such_name
    with pytest.raises(ModuleNotFoundError):
        lazy("no_such_module_xyz").x
