"""The guided eps search of precise curves (:meth:`amp.inversion._Search.guided`): fewer
certified evaluations than the plain search, brackets checked against exact enumeration, and an
estimate that is wrong (by a factor 1e3 in delta, either way) costing speed, never validity."""

from __future__ import annotations

import math

import pytest

from amp.backends.dispatch import LawDelta
from amp.backends.exact import delta_enumerate
from amp.inversion import epsilon_of_curve, estimate_epsilon
from amp.mechanisms import KRR, OUE, RAPPOR


class Counting:
    """A :class:`LawDelta` seen through a wrapper that counts its certified evaluations and
    can switch the guided search off (``precise``) or bias the estimate of ``log delta``."""

    def __init__(self, ld: LawDelta, precise: bool = True, log_bias: float = 0.0):
        self.ld, self.precise_brackets, self.log_bias = ld, precise, log_bias
        self.max_eps = ld.max_eps
        self.calls: list[float] = []

    def delta_for_search(self, x, tol, abs_tol):
        self.calls.append(x)
        return self.ld.delta_for_search(x, tol, abs_tol)

    def search_tol(self, rel_tol):
        return self.ld.search_tol(rel_tol)

    def estimate_log_delta(self, x):
        return self.ld.estimate_log_delta(x) + self.log_bias


def _check_oracle(law, n, delta, r):
    """The eps bracket against exact enumeration: ``delta(upper) <= delta`` and ``lower`` 0 or
    ``delta(lower) > delta`` (enumeration is ~1e-13 relative; the margins are far smaller than
    the brackets' distance to the threshold, ~1e-7 in delta)."""
    assert 0.0 <= r.lower <= r.upper
    assert delta_enumerate(law, n, r.upper) <= delta * (1 + 1e-10)
    assert r.lower == 0.0 or delta_enumerate(law, n, r.lower) > delta * (1 - 1e-10)
    assert r.upper - r.lower <= 1e-4 * r.upper


CASES = [(KRR(1.0, k=10), 60, 1e-3), (RAPPOR(1.0), 40, 1e-4), (OUE(2.0), 60, 1e-2)]


@pytest.mark.parametrize("mech,n,delta", CASES, ids=lambda c: getattr(c, "describe",
                                                                         lambda: str(c))())
def test_guided_search_fewer_evaluations_and_exact(mech, n, delta):
    law = mech.gparv()
    ld = LawDelta(law, n)
    assert ld.precise_brackets
    guided, plain = Counting(ld), Counting(ld, precise=False)
    rg = epsilon_of_curve(guided, delta, ld.max_eps)
    rp = epsilon_of_curve(plain, delta, ld.max_eps)
    _check_oracle(law, n, delta, rg)
    _check_oracle(law, n, delta, rp)
    # the guided search is at least as tight at the answer end, with about half the work
    assert rg.upper <= rp.upper * (1 + 1e-9)
    assert len(guided.calls) <= 7 < len(plain.calls)
    # the plain search is unchanged: after the ends, its first point is the estimate's root
    assert plain.calls[1] == 0.0
    est = estimate_epsilon(ld, delta, ld.max_eps)
    assert abs(plain.calls[2] - est) <= 1e-5 * est


@pytest.mark.parametrize("bias", [math.log(1e3), -math.log(1e3)])
def test_wrong_estimate_still_certified(bias):
    mech, n, delta = RAPPOR(1.0), 40, 1e-4
    law = mech.gparv()
    ld = LawDelta(law, n)
    c = Counting(ld, log_bias=bias)
    r = epsilon_of_curve(c, delta, ld.max_eps)
    _check_oracle(law, n, delta, r)
    assert len(c.calls) < 25


def test_threshold_at_zero_found_though_the_estimate_says_otherwise():
    """The estimate (biased up 1e3) says delta(0) is far above the target, so the bad end is
    not checked first; the certified evaluations then show no bad point and the check is made:
    eps = 0 exactly."""
    mech, n = KRR(1.0, k=10), 60
    law = mech.gparv()
    ld = LawDelta(law, n)
    d0 = delta_enumerate(law, n, 0.0)
    c = Counting(ld, log_bias=math.log(1e3))
    r = epsilon_of_curve(c, 1.5 * d0, ld.max_eps)
    assert r.lower == r.upper == 0.0
    assert 0.0 in c.calls and len(c.calls) < 25


def test_large_n_guided_matches_plain():
    """At n = 1e8 (the structured lattice plan, brackets ~1e-8 wide) both searches bracket the
    same threshold (their brackets overlap, both certified) and the guided one needs fewer
    evaluations."""
    ld = LawDelta(RAPPOR(1.0).gparv(), 10**8)
    guided, plain = Counting(ld), Counting(ld, precise=False)
    rg = epsilon_of_curve(guided, 1e-6, ld.max_eps)
    rp = epsilon_of_curve(plain, 1e-6, ld.max_eps)
    assert max(rg.lower, rp.lower) <= min(rg.upper, rp.upper)
    assert rg.upper <= rp.upper * (1 + 1e-9)
    assert len(guided.calls) < len(plain.calls)
