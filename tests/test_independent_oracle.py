"""k-RR brackets against the independent oracle of ``bench/oracle_sweep.py`` (no amp code:
the laws written from the mechanism's definition, multinomial counts enumerated with
``gammaln`` log-pmfs, the last atom type summed with Cephes' ``bdtr``), on a few seeded random
inputs. The bench script runs the same checks on many more."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import amp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from oracle_sweep import krr_lower, krr_upper, oracle, oracle_delta

CASES = [(2, 0.7, 57), (3, 3.1, 240), (10, 1.3, 400), (100, 6.0, 150), (5, 0.1, 300)]


def test_oracle_matches_amp_exact_enumeration():
    law = amp.KRR(2.0, k=4).gparv()
    from amp.backends.exact import delta_enumerate
    E = math.exp(2.0)
    for eps in (0.0, 0.3, 1.0):
        assert oracle_delta(krr_upper(4, E)[0], 30, eps) == pytest.approx(
            delta_enumerate(law, 30, eps), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("k,eps0,n", CASES)
def test_krr_brackets_contain_the_independent_oracle(k, eps0, n):
    rng = np.random.default_rng(k * 1000 + n)
    E = math.exp(eps0)
    m = amp.KRR(eps0, k=k)
    for bound, laws in (("upper", krr_upper(k, E)), ("lower", krr_lower(k, E))):
        for eps in rng.uniform(0, eps0, size=2):
            exact = oracle(laws, n, float(eps))
            b = amp.delta(m, n, float(eps), bound=bound)
            assert b.lower <= exact * (1 + 1e-9) + 1e-15
            assert b.upper >= exact * (1 - 1e-9) - 1e-15


def test_rappor_lower_near_eps0_against_the_independent_oracle():
    """RAPPOR at eps0 = 8, n = 100: Theorem 5's eps(1e-6) lies a hair below eps0, where the
    FFT cannot certify the seven-atom law (it used to refuse); amp drops the atoms of which
    one user makes the sum negative, exactly. Its lower end must not exceed the oracle's."""
    from oracle_sweep import bit_lower
    E = math.exp(8.0)
    b = amp.epsilon(amp.RAPPOR(8.0), 100, 1e-6, bound="lower")
    laws = bit_lower("rappor", E)
    assert oracle(laws, 100, b.lower) > 1e-6 * (1 - 1e-9)       # the true eps is above
    assert oracle(laws, 100, b.upper) <= 1e-6 * (1 + 1e-9)      # ... and not above this
    assert b.upper - b.lower <= 1e-4 * b.upper
