"""Packaging: the library needs numpy and scipy only, optional parts fail with a one-line
message naming their extra, ``amp --version``, and every public name documents itself with a
runnable example (the doctests of the API reference; run by ``make doctest``)."""

from __future__ import annotations

import doctest
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import amp
from amp.core import extras
from amp.core.extras import MissingExtraError, install_hint, require

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


# ----------------------------------------------------------------------------- extras helper
def test_require_returns_the_module():
    assert require("math", "plot").sqrt(9.0) == 3.0


@pytest.mark.parametrize("extra", sorted(extras.EXTRAS))
def test_require_missing_module_is_one_line_naming_the_extra(extra):
    with pytest.raises(ImportError) as info:
        require("amp_no_such_module", extra, purpose="amp.test")
    msg = str(info.value)
    assert isinstance(info.value, MissingExtraError)
    assert "\n" not in msg
    assert msg.startswith("amp.test needs amp_no_such_module")
    assert msg.endswith(f"pip install 'amp-shuffle[{extra}]'")
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_install_hint_rejects_an_unknown_extra():
    with pytest.raises(ValueError, match="extra must be one of .* got 'plots'"):
        install_hint("plots")


def test_extras_helper_matches_pyproject():
    assert set(extras.EXTRAS) <= set(PROJECT["optional-dependencies"])
    assert extras.DISTRIBUTION == PROJECT["name"]


def _block(monkeypatch, *names):
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, mod)
        monkeypatch.setitem(sys.modules, name, None)     # import raises ImportError


def test_figures_without_matplotlib_name_the_plot_extra(monkeypatch):
    from ampbook import style
    _block(monkeypatch, "matplotlib")
    with pytest.raises(ImportError, match=r"^ampbook figures needs matplotlib.*"
                                          r"pip install 'amp-shuffle\[plot\]'$"):
        style.pyplot()


def test_widgets_without_ipywidgets_name_the_plot_extra(monkeypatch):
    from ampbook import widgets
    _block(monkeypatch, "ipywidgets")
    with pytest.raises(ImportError, match=r"amp-shuffle\[plot\]"):
        widgets.gparv_widget()


def test_import_amp_needs_numpy_and_scipy_only():
    code = ("import sys, amp, amp.cli, amp.baselines, amp.oracles.ground_truth\n"
            "bad = sorted({m.split('.')[0] for m in sys.modules} & "
            "{'matplotlib', 'ipywidgets', 'dp_accounting', 'distributed', 'dask', 'pandas'})\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"


# ----------------------------------------------------------------------------- metadata
def test_library_dependencies_are_numpy_and_scipy_ranges():
    deps = PROJECT["dependencies"]
    names = sorted(re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() for d in deps)
    assert names == ["numpy", "scipy"]
    for spec in deps + [d for ds in PROJECT["optional-dependencies"].values() for d in ds]:
        assert "==" not in spec, f"exact pins belong in requirements.txt only: {spec}"


@pytest.mark.parametrize("extra, package", [("plot", "matplotlib"), ("rounds", "dp-accounting"),
                                            ("dask", "distributed"), ("book", "jupyter-book")])
def test_extras_install_their_packages(extra, package):
    specs = PROJECT["optional-dependencies"][extra]
    assert any(s.lower().startswith(package) for s in specs), specs


def test_requirements_txt_pins_exactly():
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    for ln in filter(None, lines):
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", ln), ln


def test_console_script_and_version():
    assert PROJECT["scripts"]["amp"] == "amp.cli:main"
    # one source for the version: pyproject reads it from amp/core/version.py
    assert "version" not in PROJECT and "version" in PROJECT["dynamic"]
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["dynamic"]["version"] == {"attr": "amp.core.version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", amp.__version__)
    assert "py.typed" in tool["package-data"]["amp"] and (ROOT / "amp" / "py.typed").is_file()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {amp.__version__}" in changelog
    out = subprocess.run([sys.executable, "-m", "amp", "--version"], capture_output=True,
                         text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == f"amp {amp.__version__}"


def test_cli_main_version(capsys):
    from amp.cli import main
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"amp {amp.__version__}"


# ----------------------------------------------------------------------------- docstrings
PUBLIC = [n for n in amp.__all__ if n not in ("__version__", "NEIGHBOURING")]
PAPER = re.compile(r"Theorems? \d|Table 1|Algorithm \d|Section \d|Definition \d|Lemma \d|"
                   r"Appendix [A-Z]|Corollary \d|Figure \d")


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_is_documented_with_an_example(name):
    obj = getattr(amp, name)
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>>" in doc, f"amp.{name}: no Examples section"
    assert PAPER.search(doc), f"amp.{name}: the paper object it implements is not named"
    if inspect.isfunction(obj):
        assert "Parameters\n----------" in doc and "Returns\n-------" in doc, name


@pytest.mark.parametrize("name", PUBLIC)
def test_public_examples_run(name):
    obj = getattr(amp, name)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, f"amp.{name}", globs={"amp": amp}) if t.examples]
    assert tests, f"amp.{name}: no doctest"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


# ----------------------------------------------------------------------------- API reference
API_PAGES = ROOT / "book" / "api"
#: Characters of a code line that fit the book's code blocks without scrolling sideways
#: (the browser check fails on a block that scrolls; 73 fit inside a documented object).
EXAMPLE_WIDTH = 72


def test_every_public_name_is_in_the_api_reference():
    text = "\n".join(p.read_text() for p in API_PAGES.glob("*.md"))
    index = (API_PAGES / "index.md").read_text()
    for name in PUBLIC + ["NEIGHBOURING"]:
        assert re.search(rf"^   {name}$", index, re.M), f"amp.{name} not in the autosummary"
        assert re.search(rf"auto(function|class|exception|data):: (amp\.)?{name}(\(.*\))?$",
                         text, re.M), f"amp.{name} has no entry in book/api/"


def _examples(module):
    for t in doctest.DocTestFinder().find(module):
        for ex in t.examples:
            yield t.name, [">>> " + ln for ln in ex.source.splitlines()] + ex.want.splitlines()


@pytest.mark.parametrize("modname", ["amp.api", "amp.core.result", "amp.core.errors",
                                     "amp.core.extras", "amp.privacy_profile", "amp.mechanisms.table1",
                                     "amp.mechanisms.joint", "amp.mechanisms.gparv", "amp.cli"])
def test_examples_fit_the_page(modname):
    import importlib
    for name, lines in _examples(importlib.import_module(modname)):
        for ln in lines:
            assert len(ln) <= EXAMPLE_WIDTH, f"{name}: example line too wide: {ln}"


# ----------------------------------------------------------------------------- the book's code
def test_amp_viz_and_amp_accuracy_are_deprecated_aliases_of_the_books_package():
    """The book's code moved to ``ampbook`` (issue 34); the old names still work for one release,
    as the same module objects, with a DeprecationWarning naming the new import."""
    import importlib

    import ampbook.accuracy
    import ampbook.rounds
    for name in [m for m in sys.modules if m == "amp.viz" or m.startswith("amp.viz.")
                 or m == "amp.accuracy"]:
        del sys.modules[name]
    with pytest.warns(DeprecationWarning, match=r"amp\.viz moved .* 'import ampbook'"):
        viz = importlib.import_module("amp.viz")
    assert viz.rounds is ampbook.rounds
    from amp.viz.rounds import rounds_widget
    assert rounds_widget is ampbook.rounds.rounds_widget
    with pytest.warns(DeprecationWarning, match=r"from ampbook import accuracy"):
        acc = importlib.import_module("amp.accuracy")
    assert acc is ampbook.accuracy


def test_without_the_books_package_amp_viz_fails_in_one_line_naming_it():
    """Where only the library is installed (``pip install amp-shuffle``), ``import amp.viz``
    says where the book's code went (scripts/check_install.sh checks the same in a fresh venv)."""
    code = ("import sys; sys.modules['ampbook'] = None\n"
            "for name in ('amp.viz', 'amp.accuracy'):\n"
            "    try:\n"
            "        __import__(name)\n"
            "    except ImportError as exc:\n"
            "        print(exc)\n")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == 2
    assert all("the book's package ampbook" in ln and ln.endswith("pip install -e book")
               for ln in out), out


def test_the_wheel_packages_no_book_code():
    """``[tool.setuptools.packages.find]`` takes ``amp*`` only: ``ampbook`` is the book's own
    distribution (``book/pyproject.toml``), and ``amp/viz`` holds only its alias."""
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["amp*"]
    viz = sorted(p.name for p in (ROOT / "amp" / "viz").glob("*.py"))
    assert viz == ["__init__.py"]
    book = tomllib.loads((ROOT / "book" / "pyproject.toml").read_text())
    assert book["tool"]["setuptools"]["packages"] == ["ampbook"]
    assert (ROOT / "book" / "ampbook" / "widgets.py").is_file()
