"""One symmetric front door (issue #26): ``prof.epsilon``, ``rel_tol`` / ``progress`` /
``executor`` everywhere, baselines through ``bound=``, and the lower side of a composed bound.

Oracles: the old free function and the one-shot front door (same numbers), the baselines'
own functions and the CLI (same numbers), and exact enumeration of a small shuffled pair
composed twice (the lower side's bracket must contain it)."""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import amp
from amp.baselines import BOUNDS, clone_epsilon
from amp.core.errors import ParameterError

K10 = amp.KRR(4.0, k=10)
P4 = np.array([[.5, .3, .2], [.2, .5, .3], [.3, .2, .5], [.4, .3, .3]])


# ------------------------------------------------------------------ 1. prof.epsilon
@pytest.mark.parametrize("mech, n, bound", [
    (amp.KRR(4.0, k=10), 10_000, "upper"),
    (amp.OUE(2.0), 1_000, "upper"),
    (amp.KRR(2.0, k=5), 1_000, "lower"),
    pytest.param(amp.MatrixMechanism(P4), 300, "upper", marks=pytest.mark.slow),
    pytest.param(amp.RAPPOR(3.0), 1_000, "lower", marks=pytest.mark.slow),
])
def test_profile_epsilon_is_epsilon_for_and_the_front_door(mech, n, bound):
    # a profile's caches narrow later brackets, so each way is asked the same sequence
    ds = [1e-5, 1e-7]
    prof = amp.profile(mech, n, bound=bound)
    many = prof.epsilon(ds)
    assert isinstance(many, list) and len(many) == 2
    other = amp.profile(mech, n, bound=bound)
    alias = [amp.epsilon_for(other, d) for d in ds]
    front = amp.epsilon(mech, n, ds, bound=bound)
    for d, r, a, f in zip(ds, many, alias, front):
        assert r.bracket == a.bracket == f.bracket
        assert r.bound == bound and r.inputs["delta"] == d
    assert many[0].value < many[1].value
    if bound == "upper":   # the inverse of prof.delta: delta at the certified eps <= target
        assert prof.delta(many[0].upper).upper <= 1e-5


def test_profile_epsilon_values_did_not_move():
    """The numbers of the docstrings before the move (``amp.epsilon_for`` in ``amp.api``)."""
    prof = amp.profile(K10, 10_000)
    r = prof.epsilon(1e-6)
    assert 0.380487 <= r.lower <= r.upper <= 0.380496 and round(r.value, 4) == 0.3805
    assert round(prof.epsilon(1e-8).value, 3) == 0.476


def test_profile_epsilon_refuses_bad_input():
    prof = amp.profile(K10, 1_000)
    with pytest.raises(ParameterError, match="delta"):
        prof.epsilon(1.5)
    with pytest.raises(ParameterError, match="rel_tol"):
        prof.epsilon(1e-6, rel_tol=0)
    with pytest.raises(ParameterError, match="executor"):
        prof.epsilon(1e-6, executor="pool")
    with pytest.raises(ParameterError, match="PrivacyProfile"):
        amp.epsilon_for(K10, 1e-6)


# ------------------------------------------------------------------ 2. rel_tol, progress, executor
def test_profile_defaults_apply_to_its_questions():
    loose = amp.profile(K10, 10_000, rel_tol=1e-2)
    assert loose.epsilon(1e-6).rel_width <= 1e-2
    assert loose.epsilon(1e-6, rel_tol=1e-5).rel_width <= 1e-5
    lines: list[str] = []
    prof = amp.profile(K10, 10_000, progress=lines.append)
    prof.delta([0.3, 0.5])
    assert len(lines) == 2 and all(ln.startswith("delta(eps=") for ln in lines)


@pytest.mark.parametrize("call", [
    lambda p: amp.delta(K10, 1_000, [0.5, 1.0], progress=p),
    lambda p: amp.epsilon(K10, 1_000, 1e-6, progress=p),
    lambda p: amp.epsilon(K10, 1_000, 1e-6, bound="clone", progress=p),
    lambda p: amp.calibrate_eps0(lambda e: amp.KRR(e, k=10), 1_000, 1.0, 1e-6, progress=p,
                                 rel_tol=1e-2),
    lambda p: amp.profile(K10, 1_000).epsilon(1e-6, progress=p),
    lambda p: amp.epsilon_for(amp.profile(K10, 1_000), 1e-6, progress=p),
])
def test_progress_is_a_callable_or_true_everywhere(call, capsys):
    lines: list[str] = []
    call(lines.append)
    assert lines and all(isinstance(ln, str) and "\n" not in ln for ln in lines)
    capsys.readouterr()
    call(True)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(lines) and all(ln.startswith("amp: ") for ln in err)
    with pytest.raises(ParameterError, match="progress"):
        call("yes")


def _family(e0: float) -> amp.MatrixMechanism:
    """A matrix randomizer whose local level grows with ``e0`` (rows P4 ** e0, normalised)."""
    M = P4 ** e0
    return amp.MatrixMechanism(M / M.sum(1)[:, None])


def test_executor_runs_sub_questions_with_identical_results():
    M = _family(1.0)
    with ThreadPoolExecutor(2) as ex:
        d_par = amp.delta(M, 300, [0.3, 0.6], executor=ex)
        p_par = amp.profile(M, 300, executor=ex).delta([0.3, 0.6])
        c_par = amp.calibrate_eps0(_family, 300, 0.5, 1e-4, rel_tol=1e-2, executor=ex)
        k_par = amp.delta(K10, 2_000, [0.3, 0.6], executor=ex)     # accepted, not needed
    serial = amp.delta(M, 300, [0.3, 0.6])
    assert [b.bracket for b in d_par] == [b.bracket for b in serial]
    assert [b.bracket for b in p_par] == [b.bracket for b in serial]
    assert [b.bracket for b in k_par] == [b.bracket for b in amp.delta(K10, 2_000, [0.3, 0.6])]
    c_ser = amp.calibrate_eps0(_family, 300, 0.5, 1e-4, rel_tol=1e-2)
    assert c_par.bracket == c_ser.bracket and c_par.value > 0.5
    for call in (lambda: amp.calibrate_eps0(_family, 500, 0.5, 1e-6, executor=3),
                 lambda: amp.delta(K10, 100, 0.5, executor=object())):
        with pytest.raises(ParameterError, match="executor"):
            call()


def test_rel_tol_with_rounds_is_checked_not_ignored():
    pytest.importorskip("dp_accounting")
    m = amp.KRR(4.0, k=10)
    r = amp.epsilon(m, 300, 1e-6, rounds=3)
    assert r.rel_width > 1e-6
    with pytest.raises(ParameterError, match=r"rel_tol=1e-06 cannot be reached with "
                                             r"rounds=3.*relative width"):
        amp.epsilon(m, 300, 1e-6, rounds=3, rel_tol=1e-6)
    # a rel_tol the composition meets is accepted and the result is the same
    assert amp.epsilon(m, 300, 1e-6, rounds=3, rel_tol=0.5).bracket == r.bracket
    with pytest.raises(ParameterError, match="rel_tol"):
        amp.delta(m, 300, 1.0, rounds=3, rel_tol=1e-9)
    with pytest.raises(ParameterError, match="rel_tol"):
        amp.compose([(m, 300, 1.0, 3)], delta=1e-6, rel_tol=1e-9)
    with pytest.raises(ParameterError, match="method"):
        amp.epsilon(m, 1_000, 1e-6, rounds=3, method="fft")


# ------------------------------------------------------------------ 3. baselines, one way in
@pytest.mark.parametrize("name", list(BOUNDS))
def test_baselines_through_the_front_door(name):
    m = amp.KRR(2.0, k=10)
    b = BOUNDS[name]
    src = m.eps0 if b.generic else m
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        front_e = amp.epsilon(m, 10_000, 1e-6, bound=name)
        front_d = amp.delta(m, 10_000, 0.5, bound=name)
        own_e = b.epsilon(src, 10_000, 1e-6)
        own_d = b.delta(src, 10_000, 0.5)
    assert bool(caught) == (not b.valid)                # the stronger clone warns
    assert front_e == own_e and front_d == own_d
    assert front_e.bound == name and front_e.certified == b.valid
    with pytest.raises(ParameterError, match="rounds"):
        amp.epsilon(m, 10_000, 1e-6, bound=name, rounds=2)
    with pytest.raises(ParameterError, match="method"):
        amp.delta(m, 10_000, 0.5, bound=name, method="fft")


@pytest.mark.parametrize("name", ["clone", "clone-closed", "hoeffding", "bennett"])
def test_baseline_front_door_matches_the_cli(name):
    """``python -m amp epsilon|delta ... --bound NAME`` (its ``run``, in process)."""
    from amp.cli import build_parser, run
    m = amp.KRR(2.0, k=10)
    base = ["-m", "krr", "--k", "10", "--eps0", "2", "--n", "10000", "--bound", name]
    e = run(build_parser().parse_args(["epsilon", *base, "--delta", "1e-6"]))
    d = run(build_parser().parse_args(["delta", *base, "--eps", "0.5"]))
    assert e["value"] == amp.epsilon(m, 10_000, 1e-6, bound=name).value
    assert d["value"] == amp.delta(m, 10_000, 0.5, bound=name).value


def test_clone_epsilon_takes_the_front_doors_argument_order():
    a = clone_epsilon(K10, 10_000, 1e-6)                 # (mechanism, n, delta)
    assert a == clone_epsilon(4.0, 10_000, 1e-6) == amp.epsilon(K10, 10_000, 1e-6,
                                                               bound="clone")
    # rel_tol is the baseline's own search tolerance, and is met
    r = amp.epsilon(K10, 10_000, 1e-6, bound="clone", rel_tol=1e-3)
    assert r.rel_width <= 1e-3 and r.upper >= a.lower


def test_closed_form_outside_its_condition_refuses_through_the_front_door():
    with pytest.raises(ParameterError, match="does not apply"):
        amp.epsilon(K10, 10_000, 1e-6, bound="clone-closed")
    r = amp.epsilon(K10, 100_000, 1e-6, bound="clone-closed")
    assert r.certified and r.value == pytest.approx(0.5378040242374512, abs=1e-9)


# ------------------------------------------------------------------ 4. sides of a composition
def _composed_pair_delta(P: np.ndarray, n: int, T: int, eps: float) -> float:
    """Exact ``delta(eps)`` of the Theorem 5 pair ``(0, 2, ..., 2)`` vs ``(1, 2, ..., 2)`` of
    the matrix ``P`` run ``T`` times (histogram enumeration, product law)."""
    from amp.oracles.ground_truth import histogram_law
    h0, p0 = histogram_law(P, [0] + [2] * (n - 1))
    h1, p1 = histogram_law(P, [1] + [2] * (n - 1))
    keys = sorted({tuple(h) for h in h0} | {tuple(h) for h in h1})
    idx = {k: i for i, k in enumerate(keys)}
    a = np.zeros(len(keys))
    b = np.zeros(len(keys))
    for h, p in zip(h0, p0):
        a[idx[tuple(h)]] += p
    for h, p in zip(h1, p1):
        b[idx[tuple(h)]] += p
    A, B = a, b
    for _ in range(T - 1):
        A, B = np.outer(A, a).ravel(), np.outer(B, b).ravel()
    return float(np.maximum(A - math.exp(eps) * B, 0.0).sum())


def test_lower_side_of_a_composition_brackets_the_pair_composed():
    pytest.importorskip("dp_accounting")
    m, n, T = amp.KRR(2.0, k=3), 6, 2
    P = m.matrix()
    for eps in (0.5, 1.5):
        truth = _composed_pair_delta(P, n, T, eps)
        low = amp.delta(m, n, eps, rounds=T, bound="lower")
        up = amp.delta(m, n, eps, rounds=T)
        assert low.bound == "lower" and low.value == low.lower
        assert low.lower <= truth <= low.upper                 # encloses the pair composed
        assert up.upper >= truth and low.upper <= up.upper     # never wider than before
        assert low.lower == up.lower                           # the same lower number


def test_lower_side_eps_is_narrower_and_consistent_with_one_round():
    pytest.importorskip("dp_accounting")
    m = amp.KRR(4.0, k=10)
    up = amp.epsilon(m, 1_000, 1e-6, rounds=5)
    low = amp.epsilon(m, 1_000, 1e-6, rounds=5, bound="lower")
    assert low.value == low.lower == up.lower and low.upper <= up.upper
    assert low.bracket != up.bracket and "theorem5-pair" in low.method
    one = amp.epsilon(m, 1_000, 1e-6, bound="lower")
    assert one.value <= low.value                              # more rounds, more eps
    comp = amp.compose([(m, 1_000, 1.0, 5)], delta=1e-6, bound="lower")
    assert comp.bracket == low.bracket


def test_lower_side_at_large_n_uses_theorem4_for_its_upper_end(monkeypatch):
    """Above LOWER_POINTS the pair's losses are the reduced pair's, rounded down
    (amp.rounds.lower): no pessimistic PLD is built from them; the upper end is Theorem 4's."""
    pytest.importorskip("dp_accounting")
    from amp.rounds import composition as C
    from amp.rounds import lower as L
    m, n, T = amp.KRR(2.0, k=3), 400, 2
    law = amp.rounds.ComposableProfile(m, n, 1.0).lower_laws()[0]
    assert not L.pair_is_reduced(law, n)
    monkeypatch.setattr(L, "LOWER_POINTS", 100)
    assert L.pair_is_reduced(law, n)

    def boom(*a, **k):
        raise AssertionError("pessimistic PLD built from the reduced pair")
    monkeypatch.setattr(C, "pair_pmf_pessimistic", boom)
    low = amp.epsilon(m, n, 1e-6, rounds=T, bound="lower")
    up = amp.epsilon(m, n, 1e-6, rounds=T)
    assert low.upper == up.upper and low.lower <= up.upper


def test_eps0_result_says_its_value_is_the_lower_end():
    r = amp.calibrate_eps0(lambda e: amp.KRR(e, k=10), 1_000, 1.0, 1e-6)
    assert r.side == "lower" and r.value == r.lower
    d = r.as_dict()
    assert d["side"] == "lower" and d["value"] == d["bracket"][0]
    assert amp.epsilon(K10, 1_000, 1e-6).as_dict()["side"] == "upper"
