"""amp/rounds/adapter.py: the only module reading dp-accounting's private PLD attributes.

Run against the pinned dp-accounting; a release that renames an attribute fails here, by name.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

pytest.importorskip("dp_accounting")

import amp
from amp.rounds import adapter as A

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\._(probs|infinity_mass|lower_loss|discretization|pessimistic_estimate"
                     r"|pmf_remove|pmf_add|symmetric)\b")


def test_internals_of_the_installed_dp_accounting():
    A.check_internals()          # RuntimeError naming the renamed attribute otherwise


def test_a_renamed_attribute_is_named(monkeypatch):
    monkeypatch.setattr(A, "_DENSE_ATTRS", A._DENSE_ATTRS + ("_probabilities",))
    with pytest.raises(RuntimeError, match="DensePLDPmf has no attribute '_probabilities'"):
        A.check_internals()


def test_pinned_version_is_the_installed_one():
    from importlib.metadata import version
    assert version("dp-accounting") == A.PINNED_VERSION


def test_accessors_read_a_dense_pmf():
    pmf = A.dense_pmf(0.25, -2, np.array([0.1, 0.2, 0.6]), 0.1, True)
    assert A.step(pmf) == 0.25 and A.lower_index(pmf) == -2 and A.infinity_mass(pmf) == 0.1
    assert A.is_pessimistic(pmf) is True
    np.testing.assert_array_equal(A.probs(pmf), [0.1, 0.2, 0.6])
    pld = A.wrap(pmf)
    assert A.pmf_of(pld) is pmf
    # the accessors mean what the module docstring says: delta(eps) from them by hand
    losses = (A.lower_index(pmf) + np.arange(3)) * A.step(pmf)
    eps = -0.1
    by_hand = A.infinity_mass(pmf) + np.sum(A.probs(pmf) * np.maximum(0, -np.expm1(eps - losses)))
    assert pld.get_delta_for_epsilon(eps) == pytest.approx(by_hand, rel=1e-14)


def test_asymmetric_pld_refused():
    pmf = A.dense_pmf(0.25, 0, np.array([1.0]), 0.0, True)
    pld = A.pld_module().PrivacyLossDistribution(pmf, pmf)
    with pytest.raises(ValueError, match="symmetric"):
        A.pmf_of(pld)


def test_no_other_module_reads_private_attributes():
    adapter = ROOT / "amp" / "rounds" / "adapter.py"
    assert PRIVATE.search(adapter.read_text())          # the scan sees what it looks for
    bad = [str(p.relative_to(ROOT)) for p in (ROOT / "amp").rglob("*.py")
           if p != adapter and PRIVATE.search(p.read_text())]
    assert bad == []


# amp.epsilon(..., rounds=T) before the adapter (commit 4e16e9c), bit for bit
BEFORE = [(4.0, 1000, 10, 1.0, 4.760563672072517, 4.765820493722259),
          (2.0, 1000, 20, 0.5, 0.9367666065831718, 0.9379505021264922),
          (1.0, 10000, 5, 1.0, 0.055341395471160924, 0.05540305988229016)]


@pytest.mark.parametrize("eps0,n,T,q,lo,up", BEFORE, ids=[f"e{b[0]}-n{b[1]}-T{b[2]}-q{b[3]}"
                                                         for b in BEFORE])
def test_rounds_numbers_unchanged(eps0, n, T, q, lo, up):
    """Same or tighter: since session 12 the self-composition pad (amp.rounds.self_compose_pad)
    is smaller, which moves both ends inwards by about 1e-6 relative, never outwards; since
    session 13 the upper end certifies points chosen for the question (amp.rounds.points),
    which lowers it by about 1e-4 to 4e-4 relative here."""
    r = amp.epsilon(amp.KRR(eps0, k=10), n, 1e-6, rounds=T, sampling=q)
    assert lo <= r.lower <= lo * (1 + 1e-5) and up * (1 - 1e-3) <= r.upper <= up


def test_the_old_module_names_are_deprecated_aliases():
    """amp.pld_adapter and amp.pld_export moved into the rounds package (issue 34); for one
    release the old names are the same module objects, with a DeprecationWarning naming the new
    import."""
    import importlib
    import sys
    for old, new in (("amp.pld_adapter", "amp.rounds.adapter"),
                     ("amp.pld_export", "amp.rounds.export")):
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=rf"^{old} moved to {new}: use"):
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
