"""The front door's symmetric conventions and its refusals (issues #26 and #27).

Each test states one behaviour found by trying the API as a user would: sequences accepted on
both sides (``delta`` for a list of eps, ``epsilon`` for a list of delta), a :class:`Bound`
usable as a number, and bad input refused with :class:`amp.ParameterError` naming the value
(never a raw ``ValueError``/``OverflowError``/``TypeError`` from deep inside).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import amp
from amp.core.result import Bound

K = amp.KRR(2.0, k=10)


# ------------------------------------------------------------------ sequences on both sides
def test_epsilon_accepts_a_sequence_of_delta_like_delta_accepts_eps():
    deltas = [1e-6, 1e-8]
    many = amp.epsilon(K, 1_000, deltas)
    assert isinstance(many, list) and len(many) == 2
    for d, r in zip(deltas, many):
        one = amp.epsilon(K, 1_000, d)
        assert (r.lower, r.upper) == (one.lower, one.upper)
        assert r.inputs["delta"] == d
    assert many[0].value < many[1].value          # smaller delta, larger eps
    arr = amp.epsilon(K, 1_000, np.array(deltas))
    assert [b.value for b in arr] == [b.value for b in many]


def test_delta_of_a_numpy_scalar_is_one_bound():
    r = amp.delta(K, 1_000, np.float64(0.5))
    assert isinstance(r, Bound)


# ------------------------------------------------------------------ Bound as a number
def test_bound_reads_as_its_value():
    r = amp.epsilon(K, 1_000, 1e-6)
    assert float(r) == r.value
    assert f"{r:.3f}" == f"{r.value:.3f}"
    assert (r < 1) and (r <= r.value) and (r > 0) and (r >= r.value)
    assert r < r.value + 1e-9 and not (r > 1)
    assert np.float64(1.0) > r                    # numpy scalars compare by value too


def test_bound_str_is_one_line_naming_the_theorem_and_the_side():
    up = amp.epsilon(K, 1_000, 1e-6)
    low = amp.epsilon(K, 1_000, 1e-6, bound="lower")
    s_up, s_low = str(up), str(low)
    assert "\n" not in s_up and s_up.startswith("eps <= ") and "Theorem 4 (§5.1)" in s_up
    assert s_low.startswith("eps >= ") and "Theorem 5 (§5.3)" in s_low
    assert f"{up}" == s_up                        # an empty format spec is str()
    e0 = amp.calibrate_eps0(lambda e: amp.KRR(e, k=10), 1_000, 1.0, 1e-6)
    assert str(e0).startswith("eps0 <= ") and "calibrated with Theorem 4" in str(e0)
    clone = Bound("eps", 0.1, 0.2, bound="stronger-clone", certified=False)
    assert "NOT certified" in str(clone)


def test_bound_compared_with_a_non_number_raises_type_error():
    r = Bound("eps", 0.1, 0.2)
    with pytest.raises(TypeError):
        r < "x"                                   # noqa: B015


# ------------------------------------------------------------------ refusals (issue #27 fuzz)
@pytest.mark.parametrize("call, words", [
    (lambda: amp.delta(K, 1000, [0.1, "x"]), "eps"),
    (lambda: amp.delta(K, 1000, 1e308), "eps must be <= 300"),
    (lambda: amp.delta(K, 1000, []), "non-empty"),
    (lambda: amp.delta(K, 1000, np.zeros((2, 2))), "1-D"),
    (lambda: amp.profile(K, 1000).delta(1e308), "eps must be <= 300"),
    (lambda: amp.profile(K, 1000).delta([0.1, "x"]), "eps"),
    (lambda: amp.epsilon(K, 1000, []), "delta"),
    (lambda: amp.epsilon(K, 1000, [1e-6, 2.0]), "delta must be in (0, 1)"),
    (lambda: amp.delta(K, 1000, 0.5, rounds=1.0), "rounds must be an integer"),
    (lambda: amp.delta(K, 1000, 0.5, sampling=1e-320), "sampling must be at least"),
    (lambda: amp.compose(None, delta=1e-6), "rounds must be a list"),
    (lambda: amp.compose(5, delta=1e-6), "rounds must be a list"),
    (lambda: amp.compose((K, 1000), delta=1e-6), "rounds must be a list"),
    (lambda: amp.compose([[K, 1000]], delta=1e-6), "each round must be"),
], ids=["eps-str", "eps-huge", "eps-empty", "eps-2d", "profile-huge", "profile-str",
        "delta-empty", "delta-in-list", "rounds-float", "sampling-subnormal", "compose-none",
        "compose-int", "compose-bare-round", "compose-list-round"])
def test_bad_input_is_a_parameter_error(call, words):
    with pytest.raises(amp.ParameterError) as err:
        call()
    assert words in str(err.value)


def test_eps_at_the_cap_is_answered():
    r = amp.delta(K, 1000, 300.0)
    assert r.upper == 0.0


# ------------------------------------------------------------------ the CLI
def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amp", *argv], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_cli_workers_below_one_is_a_usage_error(workers):
    p = _cli("epsilon", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "1000",
             "--delta", "1e-6", "--workers", workers)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "workers" in p.stderr


def test_cli_empty_matrix_file_is_one_line(tmp_path):
    f = tmp_path / "empty.csv"
    f.write_text("")
    p = _cli("epsilon", "-m", "matrix", "--matrix", str(f), "--n", "1000", "--delta", "1e-6")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "no data" in p.stderr


def test_cli_usage_names_the_command_it_was_called_as():
    from amp import cli
    old = sys.argv[0]
    try:
        sys.argv[0] = "/usr/local/bin/amp"
        assert cli.build_parser().prog == "amp"
        sys.argv[0] = "/x/amp/__main__.py"
        assert cli.build_parser().prog == "python -m amp"
    finally:
        sys.argv[0] = old


def test_rounds_result_reports_the_sampling_rate_it_used():
    pytest.importorskip("dp_accounting")
    from amp import rounds as R
    from amp.mechanisms.subsampled import Subsampled
    r = amp.epsilon(K, 1_000, 1e-6, rounds=2, sampling=0.1)
    assert r.details["sampling"] == 0.1
    wrapped = R.epsilon_rounds(Subsampled(K, 0.1), 1_000, 1e-6, 2)   # the previous route
    assert (r.lower, r.upper) == (wrapped.lower, wrapped.upper)
    d = amp.delta(K, 1_000, [0.5], rounds=2, sampling=0.1)[0]
    assert d.details["sampling"] == 0.1


def test_bound_str_rounds_outward():
    up = Bound("eps", 0.3804880001, 0.3804940540)
    assert str(up).startswith("eps <= 0.380495 [0.380488, 0.380495]")
    low = Bound("eps", 0.3804949999, 0.39, bound="lower")
    assert str(low).startswith("eps >= 0.380494 [0.380494, 0.390001]")   # 0.39 is above 0.39
    e0 = Bound("eps0", 5.5069999, 5.6)
    assert str(e0).startswith("eps0 <= 5.50699 ")
