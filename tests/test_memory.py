"""Plans that need more memory than available are refused before they allocate (issue 27),
with the estimated bytes and the available memory in one line. The limit is set artificially
small (AMP_MEMORY_LIMIT), so no test here allocates more than a few MB."""

from __future__ import annotations

import resource

import numpy as np
import pytest

import amp
from amp.core import memory


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_one_round_at_huge_n_is_refused_at_once(monkeypatch):
    """amp.epsilon at n = 10^15 (which grew to 24 GB) refuses with the figure, allocating
    nothing large."""
    monkeypatch.setenv(memory.ENV, "1e9")
    before = _peak_mb()
    with pytest.raises(amp.NumericalError,
                       match=r"needs about [\d.]+ GB of memory, more than the 1 GB available"):
        amp.epsilon(amp.KRR(2.0, k=10), 10**15, 1e-6)
    assert _peak_mb() - before < 200


def test_the_fft_path_is_refused_before_it_allocates(monkeypatch):
    from amp.backends.dispatch import LawDelta
    monkeypatch.setenv(memory.ENV, "1e5")
    curve = LawDelta(amp.KRR(1.0, k=5).gparv(), 10**6, method="fft")
    with pytest.raises(amp.NumericalError, match=r"lattice FFT of [\d,]+ points .* needs about"):
        curve.delta(0.01)


def test_rounds_are_refused_before_composing(monkeypatch):
    monkeypatch.setenv(memory.ENV, "1e5")
    with pytest.raises(amp.NumericalError, match=r"composing 50 rounds over [\d,]+ loss grid "
                                                 r"points needs about .* more than the 100 kB"):
        amp.epsilon(amp.KRR(1.0, k=3), 50, 1e-6, rounds=50)


def test_lower_pair_fft_is_checked(monkeypatch):
    from amp import rounds as R
    monkeypatch.setenv(memory.ENV, "1e4")
    with pytest.raises(amp.NumericalError, match="lower pair's FFT"):
        R.difference_pmf(10**6, 0.06, 0.06, 0, 3000)


def test_a_plan_within_the_limit_runs(monkeypatch):
    monkeypatch.setenv(memory.ENV, "5e8")
    r = amp.epsilon(amp.KRR(1.0, k=3), 50, 1e-6, rounds=5)
    assert 0 < r.lower <= r.upper


def test_available_bytes_reads_the_environment(monkeypatch):
    monkeypatch.setenv(memory.ENV, "123456")
    assert memory.available_bytes() == 123456.0
    monkeypatch.setenv(memory.ENV, "lots")
    with pytest.raises(amp.NumericalError, match="AMP_MEMORY_LIMIT must be a number"):
        memory.check(1.0, "x")
    monkeypatch.delenv(memory.ENV)
    got = memory.available_bytes()
    assert got is None or got > 0
    assert np.isclose(float(memory.show_bytes(2.5e9).split()[0]), 2.5)


def test_the_lower_pair_of_many_rounds_is_refused_before_it_allocates(monkeypatch):
    """Issue 37: amp.epsilon(..., bound="lower", rounds=5, sampling=0.5) built the windows of
    the lower pair's counts (np.arange of 24 standard deviations) before any check: numpy's
    MemoryError at n = 2**64 (132 GiB), 1 GB allocated at n = 10^15 before the refusal.
    The windows are now sized by arithmetic and the enumeration is checked like the FFT."""
    monkeypatch.setenv(memory.ENV, "1e9")
    before = _peak_mb()
    with pytest.raises(amp.NumericalError, match=r"lower pair's FFT of [\d,]+ points .* needs "
                                                 r"about [\d.]+ GB of memory, more than the "
                                                 r"1 GB available"):
        amp.epsilon(amp.KRR(2.0, k=10), 10**15, 1e-6, bound="lower", rounds=5, sampling=0.5)
    assert _peak_mb() - before < 200
    # the enumeration of a smaller pair (below the reduction to D = h1 - h2) is checked too
    monkeypatch.setenv(memory.ENV, "1e7")
    with pytest.raises(amp.NumericalError, match=r"lower pair's enumeration over [\d,]+ counts "
                                                 r"\(n = 30000\) needs about [\d.]+ MB"):
        amp.epsilon(amp.KRR(2.0, k=10), 30_000, 1e-6, bound="lower", rounds=5, sampling=0.5)
    # beyond int64 counts n itself is refused, naming it (the call of the issue)
    with pytest.raises(amp.ParameterError,
                       match=r"^n must be <= 1e\+18, got 18446744073709551616$"):
        amp.epsilon(amp.KRR(2.0, k=10), 2**64, 1e-6, bound="lower", rounds=5, sampling=0.5)
