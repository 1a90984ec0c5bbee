"""Standard clone bound (Section 3.1, Theorem 3; Feldman, McMillan, Talwar 2021)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from amp.baselines import BOUNDS, Baseline
from amp.baselines.clone import (clone_delta, clone_epsilon, clone_family_delta,
                                 closed_form_delta, closed_form_epsilon)
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.core.tails import binom_window_mass
from amp.mechanisms import KRR


# ----------------------------------------------------------------------------- brute force
def clone_pair(n: int, eps0: float) -> tuple[dict, dict]:
    """Probability tables of P0^C and P1^C by direct enumeration of (C, A, Delta)."""
    E = math.exp(eps0)
    alpha = E / (E + 1)
    P0: dict = {}
    P1: dict = {}
    for c in range(n):
        pc = stats.binom.pmf(c, n - 1, 1 / E) if n > 1 else 1.0
        for a in range(c + 1):
            pa = pc * math.comb(c, a) / 2.0 ** c
            for delta, pd0 in ((1, alpha), (0, 1 - alpha)):
                k0 = (a + delta, c - a + 1 - delta)
                P0[k0] = P0.get(k0, 0.0) + pa * pd0
                k1 = (a + 1 - delta, c - a + delta)
                P1[k1] = P1.get(k1, 0.0) + pa * pd0
    return P0, P1


def hockey(P: dict, Q: dict, eps: float) -> float:
    E = math.exp(eps)
    return math.fsum(max(P[k] - E * Q.get(k, 0.0), 0.0) for k in P)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 60])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_clone_matches_brute_force(n: int, eps0: float) -> None:
    P0, P1 = clone_pair(n, eps0)
    eps = np.array([0.0, 0.05, 0.3, 0.9 * eps0])
    res = clone_delta(eps0, n, eps)
    assert [r.inputs["eps"] for r in res] == list(eps)
    for e, r in zip(eps, res):
        lo, up = r.lower, r.upper
        exact = hockey(P0, P1, e)
        assert lo <= exact * (1 + 1e-12) + 1e-300
        assert up >= exact * (1 - 1e-12)
        assert up - exact <= 1e-9 * exact + 1e-55


@pytest.mark.parametrize("n,eps0", [(5, 1.0), (30, 2.0), (50, 0.7)])
def test_clone_pair_is_symmetric(n: int, eps0: float) -> None:
    P0, P1 = clone_pair(n, eps0)
    for e in (0.0, 0.2, 0.6):
        assert hockey(P0, P1, e) == pytest.approx(hockey(P1, P0, e), rel=1e-12, abs=1e-300)


def test_readme_example_numerical() -> None:
    """apple/ml-shuffling-amplification README: eps in [0.1675385583317841, 0.172790550755978]."""
    r = clone_epsilon(4.0, 10**5, 1e-6)
    assert r.certified and r.bound == "clone" and r.quantity == "eps"
    assert 0.1675385583317841 <= r.lower <= r.value <= 0.172790550755978
    assert r.value == r.upper and r.inputs == {"delta": 1e-6} and r.n == 10**5
    assert r.value - r.lower < 1e-6


def test_readme_example_closed_form() -> None:
    r = closed_form_epsilon(4.0, 10**5, 1e-6)           # authors' code variant
    assert r.certified and r.lower == r.upper == r.value
    assert r.value == pytest.approx(0.5378040242374512, abs=1e-9)
    t = closed_form_epsilon(4.0, 10**5, 1e-6, variant="theorem")
    assert t.value == pytest.approx(0.53463, abs=1e-4)   # Theorem 3.1 statement
    assert t.value <= r.value


def test_closed_form_outside_validity_is_explicit() -> None:
    # eps(delta): the formula does not apply -> a ParameterError naming the condition, not
    # eps0 dressed as an answer (issue #26)
    for args in [(4.0, 1000, 1e-6), (4.0, 10_000, 1e-6)]:
        with pytest.raises(ParameterError, match=r"does not apply.*log\(n / \(16"):
            closed_form_epsilon(*args)
    # the condition itself: log(n / (16 log(4/delta))) = 3.7163 at n = 1e4, delta = 1e-6
    assert closed_form_epsilon(3.71, 10_000, 1e-6).certified
    with pytest.raises(ParameterError, match="3.716"):
        closed_form_epsilon(3.72, 10_000, 1e-6)
    # any entry outside refuses the call (no half-answers)
    with pytest.raises(ParameterError):
        closed_form_epsilon(4.0, 10**5, [1e-6, 1e-300])
    # delta(eps): the trivial delta = 1, flagged
    d = closed_form_delta(4.0, 1000, 0.5)
    assert not d.certified and d.value == 1.0 and "no amplification certified" in d.details["note"]


def test_closed_form_delta_inverts_epsilon() -> None:
    e = closed_form_epsilon(4.0, 10**5, 1e-6).value
    d = closed_form_delta(4.0, 10**5, e)
    assert d.certified
    assert d.value == pytest.approx(1e-6, rel=1e-6)
    assert closed_form_epsilon(4.0, 10**5, d.value).value <= e * (1 + 1e-9)
    assert closed_form_delta(4.0, 10**5, 5.0).value == 0.0


def test_clone_closed_form_is_weaker_than_numerical() -> None:
    assert closed_form_epsilon(4.0, 10**5, 1e-6).value > clone_epsilon(4.0, 10**5, 1e-6).value


def test_clone_epsilon_certifies_and_brackets() -> None:
    r = clone_epsilon(3.0, 5000, 1e-5)
    assert clone_delta(3.0, 5000, r.value).upper <= 1e-5
    assert clone_delta(3.0, 5000, r.lower).lower > 1e-5
    assert r.upper - r.lower < 1e-7


@pytest.mark.parametrize("eps0,n,delta", [(0.5, 10**5, 1e-6), (1.0, 10**5, 1e-9),
                                          (2.0, 10**5, 1e-6)])
def test_clone_epsilon_wide_delta_brackets(eps0: float, n: int, delta: float) -> None:
    """Where the delta brackets are wider than the eps tolerance (relative ~1e-8), the value is
    still certified and the lower end still certified below the exact crossing."""
    r = clone_epsilon(eps0, n, delta)
    assert clone_delta(eps0, n, r.value).upper <= delta
    assert clone_delta(eps0, n, r.lower).lower > delta
    assert r.upper - r.lower <= 1e-6 * r.upper


def test_clone_zero_beyond_eps0_and_monotone() -> None:
    assert clone_delta(1.0, 50, 1.0).value == 0.0
    assert clone_delta(1.0, 50, 2.0).upper == 0.0
    eps = np.linspace(0, 1.2, 25)
    v = np.array([r.value for r in clone_delta(1.0, 200, eps)])
    assert np.all(np.diff(v) <= 1e-15)
    assert all(clone_delta(2.0, n, 0.3).value >= clone_delta(2.0, 2 * n, 0.3).value
               for n in (10, 100, 1000))


def test_vectorised_and_scalar_shapes() -> None:
    r = clone_delta(2.0, 100, 0.5)
    assert isinstance(r, Bound) and isinstance(r.value, float)
    assert r.quantity == "delta" and r.lower <= r.upper and r.value == r.upper
    a = clone_delta(2.0, 100, np.array([[0.1, 0.2], [0.3, 0.4]]))
    assert isinstance(a, list) and len(a) == 4                  # flattened input order
    assert [b.inputs["eps"] for b in a] == [0.1, 0.2, 0.3, 0.4]
    assert a[1].value == pytest.approx(clone_delta(2.0, 100, 0.2).value, rel=1e-14)
    e = clone_epsilon(2.0, 100, [1e-2, 1e-3])
    assert isinstance(e, list) and [b.inputs["delta"] for b in e] == [1e-2, 1e-3]


def test_large_n_is_tight() -> None:
    """At n = 10^6 the bracket is tight (its time: bench/bench_former_timed_tests.py)."""
    r = clone_delta(4.0, 10**6, 0.05)
    assert 0 < r.lower <= r.upper and r.upper <= r.lower * (1 + 1e-7)


@pytest.mark.parametrize("N,q", [(100, 0.3), (10**4, 0.02), (10**6, math.exp(-4))])
def test_chernoff_window_bounds_the_tail(N: int, q: float) -> None:
    lo, hi, out = binom_window_mass(N, q, 1e-12)
    true = stats.binom.cdf(lo - 1, N, q) + stats.binom.sf(hi, N, q)
    assert true <= out <= 2.1e-12


def test_family_engine_reduces_to_clone() -> None:
    E = math.exp(1.5)
    lo, up = clone_family_delta(40, 1 / E, 1 / (E + 1), 1.5, 0.0, np.array([0.2]))
    assert up[0] == pytest.approx(clone_delta(1.5, 40, 0.2).value, rel=1e-12)


def test_registry_entries() -> None:
    assert all(isinstance(b, Baseline) and b.name == k for k, b in BOUNDS.items())
    assert BOUNDS["clone"].delta(KRR(2.0, k=5), 100, 0.3).value == \
        pytest.approx(clone_delta(2.0, 100, 0.3).value)
    assert BOUNDS["clone-closed"].epsilon(4.0, 10**5, 1e-6).value == \
        pytest.approx(0.5378040242374512, abs=1e-9)


@pytest.mark.parametrize("call", [
    lambda: clone_delta(0.0, 10, 0.1),
    lambda: clone_delta(1.0, 0, 0.1),
    lambda: clone_delta(1.0, 10, -0.1),
    lambda: clone_delta(1.0, 10, float("nan")),
    lambda: clone_epsilon(1.0, 10, 1.0),
    lambda: closed_form_epsilon(1.0, 10, 1e-6, variant="paper"),
], ids=["eps0", "n", "eps", "eps-nan", "delta", "variant"])
def test_bad_input(call) -> None:
    with pytest.raises(ParameterError):
        call()
