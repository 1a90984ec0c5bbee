"""amp/core/scipy_adapter.py: the only module calling scipy's private ufuncs.

Run against the pinned scipy; a release that renames one fails here, by name.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from scipy import stats

from amp.core import scipy_adapter as S

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_internals_of_the_installed_scipy():
    S.check_internals()


def test_a_renamed_ufunc_is_named():
    with pytest.raises(RuntimeError, match=r"has no ufunc '_binom_pmf_v2'"):
        S.check_internals(S.PRIVATE_UFUNCS + ("_binom_pmf_v2",))


def test_the_ufuncs_are_scipy_stats_values():
    k, n, p = np.array([0.0, 3.0, 17.0, 40.0]), np.array([40.0, 40.0, 40.0, 40.0]), 0.3
    assert np.array_equal(S.binom_pmf(k, n, p), stats.binom.pmf(k, n, p))
    assert np.array_equal(S.binom_sf(k, n, p), stats.binom.sf(k, n, p))


def test_no_other_module_reads_scipy_private_names():
    private = re.compile(r"_ufuncs|\b_binom_(pmf|sf)\b")
    adapter = ROOT / "amp" / "core" / "scipy_adapter.py"
    assert private.search(adapter.read_text())          # the scan sees what it looks for
    bad = [str(p.relative_to(ROOT)) for p in (ROOT / "amp").rglob("*.py")
           if p != adapter and private.search(p.read_text())]
    assert bad == []
