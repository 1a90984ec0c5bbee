"""Mechanisms: closed forms (Table 1 and finite forms) against full probability matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms import (BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse, MatrixMechanism,
                            blanket_of_matrix, lower_law_from_matrix, matrix_eps0,
                            pair_law_from_matrix, validate_matrix)

from helpers import random_ldp_matrix

FINITE = [KRR(1.0, k=2), KRR(0.5, k=3), KRR(4.0, k=10), RAPPOR(2.0, d=2), RAPPOR(1.0, d=5),
          OUE(3.0, d=4), OLH(1.5, g=3, d=3), BLH(1.0, d=3), BLH(2.0, d=4),
          HadamardResponse(1.0, d=3), HadamardResponse(2.0, d=6)]


def _sorted_atoms(law: GPARV):
    key = np.lexsort((law.b, law.a))
    return law.a[key], law.b[key], law.p[key]


def _same(l1: GPARV, l2: GPARV, rtol=1e-10):
    a1, b1, p1 = _sorted_atoms(l1)
    a2, b2, p2 = _sorted_atoms(l2)
    return (a1.shape == a2.shape and np.allclose(a1, a2, rtol=rtol)
            and np.allclose(b1, b2, rtol=rtol) and np.allclose(p1, p2, rtol=rtol, atol=1e-15))


@pytest.mark.parametrize("mech", FINITE, ids=lambda m: m.describe())
def test_closed_form_laws_match_matrix(mech):
    M = mech.matrix()
    assert np.allclose(M.sum(axis=1), 1.0)
    assert matrix_eps0(M) == pytest.approx(mech.eps0, rel=1e-12)
    laws = mech.gparv_laws()
    d = M.shape[0]
    for i in range(d):
        for j in range(d):
            if i != j:
                from_matrix = pair_law_from_matrix(M, i, j)
                assert any(_same(from_matrix, law) for law in laws), (i, j)
    assert mech.gamma == pytest.approx(blanket_of_matrix(M).gamma, rel=1e-12)


@pytest.mark.parametrize("mech", [m for m in FINITE if m.matrix().shape[0] >= 3],
                         ids=lambda m: m.describe())
def test_theorem5_laws_match_matrix(mech):
    M = mech.matrix()
    ref = [lower_law_from_matrix(M, 0, 1, x2) for x2 in range(2, M.shape[0])]
    got = mech.lower_laws()
    for r in ref:
        assert any(_same(r, g) for g in got)


@pytest.mark.parametrize("eps0", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_table1_rows(eps0, eps):
    """The paper's Table 1, atom by atom."""
    e0, e = math.exp(eps0), math.exp(eps)
    vals = [1 - e * e0, e0 - e * e0, 1 - e, 0.0, e0 - e]
    k = 10
    rows = {
        KRR(eps0, k=k): [1 / (e0 + k - 1), 0, (k - 2) / (e0 + k - 1), (e0 - 1) / (e0 + k - 1),
                       1 / (e0 + k - 1)],
        BLH(eps0): [1 / (2 * (e0 + 1))] * 3 + [(e0 - 1) / (e0 + 1), 1 / (2 * (e0 + 1))],
        RAPPOR(eps0): [1 / (math.exp(eps0 / 2) + 1) ** 2,
                       1 / (math.exp(eps0 / 2) * (math.exp(eps0 / 2) + 1) ** 2),
                       math.exp(eps0 / 2) / (math.exp(eps0 / 2) + 1) ** 2,
                       1 - math.exp(-eps0 / 2), 1 / (math.exp(eps0 / 2) + 1) ** 2],
        OUE(eps0): [1 / (2 * (e0 + 1)), 1 / (2 * e0 * (e0 + 1)), e0 / (2 * (e0 + 1)),
                    0.5 * (1 - 1 / e0), 1 / (2 * (e0 + 1))],
        HadamardResponse(eps0): [1 / (2 * (e0 + 1))] * 3 + [(e0 - 1) / (e0 + 1),
                                                            1 / (2 * (e0 + 1))],
    }
    for mech, probs in rows.items():
        g, p = mech.gparv().atoms(eps)
        for v, pr in zip(vals, probs):
            got = float(p[np.isclose(g, v, rtol=1e-12, atol=1e-12)].sum())
            if v == 0.0 or (eps == 0.0 and v == 1 - e):
                continue  # atoms 0 and 1 - e^0 coincide at eps = 0
            assert got == pytest.approx(pr, rel=1e-12, abs=1e-15), (mech.describe(), v)
        assert float(p.sum()) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("mech", FINITE + [RAPPOR(1.0), OUE(4.0), BLH(0.5), OLH(2.0, g=4),
                                           HadamardResponse(3.0)], ids=lambda m: m.describe())
@pytest.mark.parametrize("eps", [0.0, 0.2, 1.5])
def test_property_2(mech, eps):
    """Property 2: E[G] = 1 - e^eps and 1 - e^(eps+eps0) <= G <= e^eps0 - e^eps."""
    for law in mech.gparv_laws():
        assert law.mean(eps) == pytest.approx(1 - math.exp(eps), abs=1e-12)
        blanket_atoms = law.a - math.exp(eps) * law.b      # the atom 0 is off the blanket
        assert blanket_atoms.min() >= 1 - math.exp(eps + mech.eps0) - 1e-9
        assert blanket_atoms.max() <= math.exp(mech.eps0) - math.exp(eps) + 1e-9
        assert np.all(law.a >= 1 - 1e-12) and np.all(law.a <= math.exp(mech.eps0) * (1 + 1e-12))


def test_finite_forms_converge_to_table1():
    """math-notes: RAPPOR/OUE over d bits agree with Table 1 to 5 digits at d = 8."""
    for cls in (RAPPOR, OUE):
        big = cls(4.0, d=8).gparv()
        row = cls(4.0).gparv()
        assert big.gamma == pytest.approx(row.gamma, rel=1e-4)
        assert big.gamma > row.gamma   # the all-ones output enlarges the blanket


def test_finite_blanket_is_larger_for_hashing_and_hadamard():
    assert BLH(2.0, d=3).gamma > BLH(2.0).gamma
    assert HadamardResponse(2.0, d=7).gamma > HadamardResponse(2.0).gamma


def test_random_matrix_mechanism(rng):
    M = random_ldp_matrix(rng, 4, 6, 1.5)
    mech = MatrixMechanism(M)
    assert mech.eps0 <= 1.5 + 1e-12
    laws = mech.gparv_laws()
    assert 1 <= len(laws) <= 12
    for law in laws:
        assert law.mean(0.4) == pytest.approx(1 - math.exp(0.4), abs=1e-12)


@pytest.mark.parametrize("bad, msg", [
    ([[0.5, 0.5]], "2 rows"),
    ([[0.5, 0.6], [0.5, 0.5]], "sum to 1"),
    ([[1.0, 0.0], [0.5, 0.5]], "not eps0-LDP"),
    ([[-0.1, 1.1], [0.5, 0.5]], "negative"),
    ([[np.nan, 1.0], [0.5, 0.5]], "non-finite"),
    ("abc", "numeric"),
])
def test_matrix_validation(bad, msg):
    with pytest.raises(ParameterError, match=msg):
        validate_matrix(bad)


def test_zero_column_is_dropped():
    M = validate_matrix([[0.5, 0.0, 0.5], [0.25, 0.0, 0.75]])
    assert M.shape == (2, 2)


@pytest.mark.parametrize("factory, msg", [
    (lambda: KRR(1.0, k=1), "k must be >= 2"),
    (lambda: KRR(-1.0, k=3), "eps0 must be > 0"),
    (lambda: KRR(float("nan"), k=3), "eps0 must be finite"),
    (lambda: KRR(1e6, k=3), "eps0 must be <="),
    (lambda: KRR(1.0, k=2.5), "k must be an integer"),
    (lambda: RAPPOR(0.0), "eps0 must be > 0"),
    (lambda: OLH(1.0, g=1), "g must be >= 2"),
    (lambda: OUE(1.0, d=1), "d must be >= 2"),
    (lambda: KRR(1.0, k=4).lower_laws(pair=(1, 1)), "pair must be two distinct"),
    (lambda: RAPPOR(1.0).matrix(), "no finite matrix"),
])
def test_bad_parameters(factory, msg):
    with pytest.raises(ParameterError, match=msg):
        factory()
