"""Doctest namespace for the docstring examples of amp (``make doctest``): ``amp`` and ``np``
are available without an import line, as in the API reference pages."""

import numpy
import pytest

import amp


@pytest.fixture(autouse=True)
def _amp_doctest_namespace(doctest_namespace):
    doctest_namespace["amp"] = amp
    doctest_namespace["np"] = numpy
