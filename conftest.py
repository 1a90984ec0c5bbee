"""Doctest namespace for the docstring examples of amp (``make doctest``): ``amp`` and ``np``
are available without an import line, as in the API reference pages."""

import numpy
import pytest

import amp

#: Deprecated alias modules (``sys.modules`` points their names at the modules that moved):
#: their doctests run where the code now lives, so ``--doctest-modules`` must not import them
#: a second time under their old file names (pytest's "import file mismatch").
collect_ignore = ["amp/accuracy.py", "amp/viz", "amp/pld_adapter.py", "amp/pld_export.py"]


@pytest.fixture(autouse=True)
def _amp_doctest_namespace(doctest_namespace):
    doctest_namespace["amp"] = amp
    doctest_namespace["np"] = numpy
