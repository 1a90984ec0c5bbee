"""The Table 1 shape (amp.backends.structured.shape): which laws the structured path serves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.backends.structured.shape import (StructuredShape, atom_noise, floor_width,
                                        structured_shape, supports)
from amp.mechanisms import (BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse, pair_law_from_matrix)
from amp.mechanisms.gparv import GPARV

from helpers import random_ldp_matrix

TABLE1 = [KRR(4.0, k=10), KRR(0.5, k=3), KRR(1.0, k=2), RAPPOR(4.0), OUE(1.0), BLH(2.0),
          HadamardResponse(0.7), OLH(1.5, g=3)]
FINITE = [RAPPOR(0.5, d=4), RAPPOR(2.0, d=3), OUE(3.0, d=3), BLH(1.0, d=3), BLH(4.0, d=4)]


@pytest.mark.parametrize("mech", TABLE1 + FINITE, ids=lambda m: m.describe())
def test_supports_table1_and_finite_forms(mech):
    law = mech.gparv()
    assert supports(law)
    sh = structured_shape(law)
    assert isinstance(sh, StructuredShape)
    assert sh.dev_a == 0 and sh.dev_b == 0
    assert math.isclose(sh.E, math.exp(mech.eps0), rel_tol=1e-12)
    total = sh.pO + sh.pX + sh.pY + sh.pZ + sh.pF
    assert math.isclose(total, 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("mech", [RAPPOR(1.0, d=4), OUE(2.0, d=3), BLH(1.0, d=3), RAPPOR(2.0),
                                  BLH(3.0), HadamardResponse(1.0)], ids=lambda m: m.describe())
def test_theorem5_laws_of_bit_mechanisms(mech):
    """The paper's pair of a bit mechanism has seven atom types (three nuisance levels 1/E, 1,
    E): not the structured shape; its backgrounds x2 = x0, x2 = x1 (three types) are."""
    main, bg0, bg1 = mech.lower_laws()
    assert not supports(main)
    for law, lx, ly in ((bg0, 1 / math.exp(mech.eps0), 1.0), (bg1, 1.0, 1 / math.exp(mech.eps0))):
        sh = structured_shape(law)
        assert sh is not None and sh.sv == 1.0 and sh.pZ == 0.0
        assert math.isclose(sh.lx, lx, rel_tol=1e-12) and math.isclose(sh.ly, ly, rel_tol=1e-12)


def test_theorem5_law_of_krr_has_the_shape_with_levels():
    """k-RR's Theorem 5 law: atoms (1/E, 1/E) (output x2), (E, 1), (1, E), (1, 1): the shape
    with nuisance levels sv = 1/E and sv E = 1; masses E p, p, p, (k - 3) p."""
    m = KRR(4.0, k=10)
    E, p = math.exp(4.0), m.p
    sh = structured_shape(m.lower_laws()[0])
    assert sh is not None and math.isclose(sh.sv, 1 / E, rel_tol=1e-12)
    assert (sh.lx, sh.ly) == (1.0, 1.0) and math.isclose(sh.E, E, rel_tol=1e-12)
    for got, want in ((sh.pO, E * p), (sh.pX, p), (sh.pY, p), (sh.pZ, 7 * p)):
        assert math.isclose(got, want, rel_tol=1e-12)
    assert sh.dev_a == sh.dev_b == 0.0
    # the blanket law keeps every level at 1
    b = structured_shape(m.gparv())
    assert (b.lx, b.ly, b.sv) == (1.0, 1.0, 1.0)


def test_supports_false_on_random_matrices(rng):
    for _ in range(20):
        M = random_ldp_matrix(rng, 3, 4, 1.5)
        assert not supports(pair_law_from_matrix(M, 0, 1))
    # two different ratios, or a ratio below 1
    assert not supports(GPARV([2.0, 1.0, 3.0], [1.0, 2.0, 1.0], [0.2, 0.2, 0.1], 1.1))
    assert not supports(GPARV([2.0, 0.0], [1.0, 1.0], [0.3, 0.3], 1.0))
    # active atoms with two levels each, or three nuisance levels
    assert not supports(GPARV([2.0, 1.0, 1.0], [1.0, 0.5, 2.0], [0.2, 0.2, 0.2], 1.0))
    assert not supports(GPARV([2.0, 0.5, 1.0, 2.0], [1.0, 0.5, 1.0, 2.0], [.2] * 4, 1.0))
    # levels other than 1 are fine: (1/2, 1) and (1, 1/2) is the shape with lx = ly = 1/2
    sh = structured_shape(GPARV([0.5, 1.0], [1.0, 0.5], [0.3, 0.3], 1.0))
    assert sh is not None and sh.E == 2.0 and sh.lx == sh.ly == 0.5


def test_supports_explicit_off_atom_and_tolerance():
    E = math.exp(1.3)
    law = GPARV([E, 1.0, 0.0, 1.0], [1.0, E * (1 + 1e-13), 0.0, 1.0], [0.2, 0.2, 0.3, 0.3], 1.3)
    sh = structured_shape(law)
    assert sh is not None and sh.pF == pytest.approx(0.3) and sh.dev_a + sh.dev_b > 0
    assert not supports(GPARV([E, 1.0], [1.0, E * (1 + 1e-9)], [0.2, 0.2], 1.3))


def test_shape_masses_by_atom_type():
    """Each atom type's mass lands in its own field (and the off mass is the rest)."""
    E = math.exp(2.0)
    law = GPARV([1.0, E, 1.0, E], [1.0, 1.0, E, E], [0.1, 0.2, 0.3, 0.15], 2.0)
    sh = structured_shape(law)
    assert (sh.pO, sh.pX, sh.pY, sh.pZ) == pytest.approx((0.1, 0.2, 0.3, 0.15), rel=1e-15)
    assert sh.pF == pytest.approx(0.25, rel=1e-12)
    assert sh.E == pytest.approx(E, rel=1e-15)


def test_atom_noise_and_floor_width():
    """The float atoms ``g = a - e^eps b`` of the four types, their noise ``16 u (a + w b)``,
    and a floor width that grows with the bracket's upper end."""
    sh = structured_shape(RAPPOR(2.0).gparv())
    eps = 0.7
    g, noise = atom_noise(sh, eps)
    w = math.exp(eps)
    np.testing.assert_allclose(g, [1 - w, sh.E - w, 1 - w * sh.E, sh.E - w * sh.E], rtol=1e-15)
    u = np.finfo(float).eps / 2
    np.testing.assert_allclose(noise, 16 * u * np.array([1 + w, sh.E + w, 1 + w * sh.E,
                                                         sh.E + w * sh.E]), rtol=1e-15)
    f0, f1 = floor_width(sh, eps, 0.0), floor_width(sh, eps, 1e-3)
    assert 0 < f0 < f1 < 1e-12
