"""Matrix mechanisms outside the one-shot questions: subsampled matrices, many rounds and the
eps0 calibration use the pruned pair maximum (amp.pairs.delta_max) instead of one evaluation
per pair law.

Oracles: exact multinomial enumeration of every subsampled pair law
(amp.backends.exact.delta_enumerate), and the unpruned maximum over every law's certified
bracket (the path these callers took before)."""

from __future__ import annotations

import pytest

import amp
import amp.api
from amp.backends.exact import delta_enumerate
from amp.mechanisms.subsampled import Subsampled
from amp.privacy_profile import PrivacyProfile, is_matrix
from amp.rounds import ComposableProfile
from test_pairs import random_matrix


@pytest.mark.parametrize("q", [0.3, 1.0])
def test_subsampled_matrix_keeps_its_pairs_as_arrays(q):
    M = amp.MatrixMechanism(random_matrix(4, seed=3))
    S = Subsampled(M, q)
    assert is_matrix(M) and is_matrix(S) and not is_matrix(amp.KRR(1.0, k=5))
    prof = PrivacyProfile(S, 25)
    assert prof.pairs is not None
    # the pairs' laws are the subsampled laws: the pruned maximum contains the exact maximum
    exact = max(delta_enumerate(law, 25, 0.2) for law in S.gparv_laws())
    d = prof.delta(0.2)
    assert d.lower <= exact * (1 + 1e-9) and d.upper >= exact * (1 - 1e-9)
    assert d.details["refined"] >= 1


def test_round_profile_upper_points_are_pruned_and_valid():
    S = Subsampled(amp.MatrixMechanism(random_matrix(6, seed=5)), 0.5)
    cp = ComposableProfile(S, 300)
    assert cp.profile.pairs is not None
    curves = PrivacyProfile(S, 300, laws=S.gparv_laws()).curves   # every law, unpruned
    for eps in (0.0, 0.05, 0.2):
        up = cp.upper(eps)   # the round's grid value
        brackets = [c.delta(eps, rel_tol=2e-3) for c in curves]
        exact_lo = max(b.lower for b in brackets)
        assert exact_lo <= up <= max(b.upper for b in brackets) * (1 + 1e-12)
    assert cp.max_eps() == pytest.approx(max(c.max_eps for c in curves), rel=1e-12)


def test_calibration_of_a_matrix_family_uses_the_pruned_maximum(monkeypatch):
    def make(e0: float) -> amp.MatrixMechanism:
        # one random shape, scaled so that the matrix's eps0 is e0 (to ~1e-12)
        return amp.MatrixMechanism(random_matrix(6, seed=2, eps0=e0))

    calls = []
    real = amp.api.delta_max

    def spy(*args, **kw):
        calls.append(kw.get("abs_tol"))
        return real(*args, **kw)

    monkeypatch.setattr(amp.api, "delta_max", spy)
    r = amp.calibrate_eps0(make, 5000, 0.3, 1e-6, rel_tol=1e-3)
    assert calls and all(a is not None and a > 0 for a in calls)
    # certified: the calibrated eps0 meets (eps, delta) with the full (pruned) profile
    assert amp.delta(make(r.value), 5000, 0.3).upper <= 1e-6
    assert r.lower <= r.upper <= r.lower * (1 + 2e-3) + 1e-12
