"""Exact enumeration (amp.backends.exact): the count vectors, and delta against a brute-force sum
over every sequence of atoms (an oracle that shares no code with it)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import amp
from amp.backends.exact import MAX_COMPOSITIONS, compositions, delta_enumerate, n_compositions
from amp.core.errors import ParameterError


@pytest.mark.parametrize("n, k", [(0, 1), (5, 1), (0, 4), (4, 3), (6, 4), (12, 2), (3, 6)])
def test_compositions_are_all_count_vectors_once(n, k):
    C = compositions(n, k)
    assert C.shape == (math.comb(n + k - 1, k - 1), k) == (n_compositions(n, k), k)
    assert (C >= 0).all() and (C.sum(axis=1) == n).all()
    assert len({tuple(r) for r in C}) == C.shape[0]
    C[0, 0] += 1                      # a fresh array: the cache is not modified
    assert compositions(n, k)[0, 0] == C[0, 0] - 1


def test_compositions_need_no_recursion_at_large_n():
    C = compositions(3000, 2)         # the recursive version failed beyond ~1000
    assert C.shape == (3001, 2) and C[:, 0].tolist() == list(range(3001))
    with pytest.raises(ParameterError, match="count vectors"):
        compositions(10_000, 4)
    with pytest.raises(ParameterError):
        compositions(-1, 2)


def _brute_force(law, n, eps):
    g, p = law.atoms(eps)
    total = math.fsum(np.prod([p[i] for i in seq]) * max(0.0, sum(g[i] for i in seq))
                      for seq in itertools.product(range(len(g)), repeat=n))
    return total / n


@pytest.mark.parametrize("law", [
    amp.KRR(1.0, k=3).gparv(), amp.KRR(2.0, k=5).lower_laws()[0],
    amp.RAPPOR(1.5, d=3).gparv(), amp.BLH(0.7).gparv(),
    amp.MatrixMechanism([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]]).gparv_laws()[0],
], ids=lambda law: law.label)
@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("eps", [0.0, 0.2, 0.6])
def test_enumeration_equals_brute_force(law, n, eps):
    assert delta_enumerate(law, n, eps) == pytest.approx(_brute_force(law, n, eps), rel=1e-12,
                                                         abs=1e-300)


def test_enumeration_refuses_what_it_cannot_hold():
    law = amp.KRR(1.0, k=10).gparv()
    assert n_compositions(10**6, 3) > MAX_COMPOSITIONS
    with pytest.raises(ParameterError, match="too large"):
        delta_enumerate(law, 10**6, 0.1)
