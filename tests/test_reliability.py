"""Reproductions of the failures found by an adversarial sweep (issue: one engine, one search):
valid input never ends in an internal error, tiny targets converge or are refused with the real
reason, and no numpy warning or numpy repr reaches the user."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import amp
from amp.core.errors import NumericalError, ParameterError
from amp.backends.exact import delta_enumerate


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amp", *args], capture_output=True, text=True,
                          timeout=600)


def test_exact_enumeration_has_no_recursion_limit(tmp_path):
    """`--method exact` at n = 1000 used to end in RecursionError (exit 1)."""
    f = tmp_path / "M.csv"
    f.write_text("0.6,0.4\n0.4,0.6\n")
    r = cli("delta", "--mechanism", "matrix", "--matrix", str(f), "--n", "1000", "--eps", "0.1",
            "--method", "exact", "--json")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr
    M = np.array([[0.6, 0.4], [0.4, 0.6]])
    law = amp.MatrixMechanism(M).gparv()
    ans = __import__("json").loads(r.stdout)
    assert ans["bracket"][0] <= delta_enumerate(law, 1000, 0.1) <= ans["bracket"][1]


def test_auto_fallback_to_enumeration_at_extreme_eps0():
    """`epsilon --k 3 --eps0 8 --n 1000 --delta 1e-3 --bound lower` used to hit the recursion
    through auto's fallback to enumeration."""
    r = amp.epsilon(amp.KRR(8.0, k=3), 1000, 1e-3, bound="lower")
    assert 0 < r.lower <= r.upper and r.rel_width <= 1e-4
    # the largest law is certified from below at the lower end (here the background x2 = x0:
    # everyone else holding x0 is far more telling near eps0 than a third value)
    laws = amp.KRR(8.0, k=3).lower_laws()
    assert max(delta_enumerate(law, 1000, r.lower) for law in laws) > 1e-3
    assert "x2 = x0" in max(r.parts, key=lambda b: b.lower).mechanism


def test_tiny_delta_is_answered_below_the_old_floor():
    """`--k 100 --eps0 1 --n 10007 --delta 1e-15` used to say 'did not converge in 60
    evaluations', then was refused at the floating-point floor (issue 27); the tilted floor
    (amp.core.floats.tilted_floor) answers it, at the asked width, in one stdout answer."""
    r = cli("epsilon", "--mechanism", "krr", "--k", "100", "--eps0", "1", "--n", "10007",
            "--delta", "1e-15", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "did not converge" not in r.stderr and "note:" not in r.stderr
    lo, hi = map(float, r.stdout.split("bracket of the exact value [")[1].split("]")[0]
                 .split(", "))
    assert 0 < lo <= hi and (hi - lo) / hi <= 1e-4
    # and it is at least the answer at a larger delta (eps(delta) is non-increasing)
    r12 = cli("epsilon", "--mechanism", "krr", "--k", "100", "--eps0", "1", "--n", "10007",
              "--delta", "1e-12", "--quiet")
    assert r12.returncode == 0
    lo12 = float(r12.stdout.split("bracket of the exact value [")[1].split(",")[0])
    assert hi >= lo12


def test_tiny_delta_lower_bound_converges():
    """`--k 10 --eps0 0.05 --n 10 --delta 1e-12 --bound lower` used to give up."""
    r = amp.epsilon(amp.KRR(0.05, k=10), 10, 1e-12, bound="lower")
    law = amp.KRR(0.05, k=10).lower_laws()[0]
    assert r.rel_width <= 1e-4 and delta_enumerate(law, 10, r.lower) > 1e-12


# (the generic FFT serves the lower bound: its slow large-n cases are left to bench/)
@pytest.mark.parametrize("k, eps0, n, delta, bound", [
    (100, 1.0, 10_007, 1e-13, "upper"), (100, 1.0, 10_007, 1e-12, "upper"),
    (100, 1.0, 10_007, 1e-13, "lower"), (3, 0.3, 50_000, 1e-14, "upper"),
    (3, 0.3, 50_000, 1e-14, "lower"), (10, 0.05, 10, 1e-12, "upper"),
    (10, 6.0, 101, 1e-10, "upper"), (50, 2.0, 999_983, 1e-14, "upper"),
    (2, 1.5, 7, 1e-9, "upper"), (10, 0.5, 10_000, 1e-15, "upper"),
    (10, 0.5, 10_000, 1e-15, "lower"),
])
def test_small_targets_converge_or_refuse_in_words(k, eps0, n, delta, bound):
    """A mini version of the sweep: either a certified bracket at the asked width, or a
    NumericalError naming the floating-point floor (never 'did not converge')."""
    try:
        r = amp.epsilon(amp.KRR(eps0, k=k), n, delta, bound=bound)
    except NumericalError as exc:
        assert "floating-point floor" in str(exc), str(exc)
        assert "ask for" in str(exc)
    else:
        assert r.rel_width <= 1e-4


def test_extreme_eps0_prints_no_numpy_warning():
    r = cli("epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "300", "--n", "1000",
            "--delta", "1e-6", "--quiet")
    assert r.returncode == 0 and r.stderr == ""
    r = cli("delta", "--mechanism", "krr", "--k", "10", "--eps0", "300", "--n", "1000",
            "--eps", "1.1", "--quiet")
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.parametrize("make, text", [
    (lambda: amp.KRR(np.float64(1.1), k=np.float64(2.5)), "k must be an integer, got 2.5"),
    (lambda: amp.epsilon(amp.KRR(1.0, k=3), np.float64(10.5), 1e-6),
     "n must be an integer, got 10.5"),
    (lambda: amp.epsilon(amp.KRR(1.0, k=3), 10, 1e-6, bound=np.str_("x")),
     "bound must be 'upper' or 'lower', got 'x' (or a baseline, the CLI's --bound: 'clone', "
     "'clone-closed', 'hoeffding', 'bennett', 'stronger-clone')"),
])
def test_messages_show_plain_numbers(make, text):
    with pytest.raises(ParameterError) as info:
        make()
    assert str(info.value) == text and "np." not in str(info.value)
