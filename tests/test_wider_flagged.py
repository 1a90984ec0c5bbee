"""A rel_tol that cannot be met (issue 27): ``calibrate_eps0`` and the matrix-pair search return
the certified bracket they hold, flagged, as ``amp.epsilon`` does; ``strict=True`` refuses.

Oracle: the exact Theorem 4 ``delta(eps)`` of k-RR's blanket law at 50 digits
(:func:`test_tiny_delta.krr_exact_delta`, an mpmath sum over the counts), independent of every
engine in ``amp``.  ``rel_tol = 1e-13`` is below what the floating-point floor of the atoms
allows at these sizes, so the bracket cannot be brought to it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import amp
from test_tiny_delta import krr_exact_delta

N, DELTA, K = 120, 1e-10, 10


def _krr_matrix(eps0: float, k: int) -> np.ndarray:
    e = np.exp(eps0)
    P = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(P, e / (e + k - 1))
    return P


def test_calibrate_eps0_flags_a_wider_bracket():
    """The flagged bracket's lower end is safe (exact delta <= target) and its upper end is
    not (exact delta > target): the threshold lies inside, as for a full answer."""
    family = lambda e0: amp.KRR(e0, k=K)          # noqa: E731
    eps = 0.9
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        r = amp.calibrate_eps0(family, N, eps, DELTA, rel_tol=1e-13)
    assert r.wider_than_asked and r.achieved_rel_tol > 1e-13
    assert r.details["achieved_rel_tol"] == r.achieved_rel_tol
    assert r.as_dict()["wider_than_asked"] is True
    assert r.value == r.lower and r.rel_width < 1e-3          # wider than asked, still narrow
    assert krr_exact_delta(K, r.lower, N, eps) <= DELTA < krr_exact_delta(K, r.upper, N, eps)
    with pytest.raises(amp.NumericalError, match="eps0 calibration.*rel_tol"):
        amp.calibrate_eps0(family, N, eps, DELTA, rel_tol=1e-13, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", amp.AccuracyWarning)    # an answer as asked: no flag
        ok = amp.calibrate_eps0(family, N, eps, DELTA)
    assert not ok.wider_than_asked and "wider_than_asked" not in ok.as_dict()
    assert ok.lower <= r.upper and r.lower <= ok.upper          # both contain the threshold


def test_matrix_pair_search_flags_a_wider_bracket():
    """A matrix mechanism (the pair search, :func:`amp.pairsearch.epsilon_max`) gives the same
    flagged bracket as the k-RR row it equals, and it encloses the exact threshold."""
    M = amp.MatrixMechanism(_krr_matrix(1.0, K))
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        r = amp.epsilon(M, N, DELTA, rel_tol=1e-13)
    assert r.wider_than_asked and r.achieved_rel_tol > 1e-13
    assert r.as_dict()["wider_than_asked"] is True
    assert any(p.wider_than_asked for p in r.parts)
    assert krr_exact_delta(K, 1.0, N, r.upper) <= DELTA < krr_exact_delta(K, 1.0, N, r.lower)
    with pytest.raises(amp.NumericalError, match="rel_tol"):
        amp.epsilon(M, N, DELTA, rel_tol=1e-13, strict=True)
    ok = amp.epsilon(M, N, DELTA)
    assert not ok.wider_than_asked and ok.rel_width <= 1e-4


def test_pairsearch_strict_default_raises():
    """Called directly, :func:`amp.pairsearch.epsilon_max` keeps refusing by default."""
    from amp.pairs import PairSet
    from amp.pairsearch import epsilon_max
    ps = PairSet(_krr_matrix(1.0, 4), 1.0)
    with pytest.raises(amp.NumericalError):
        epsilon_max(ps, N, DELTA, rel_tol=1e-13)
    r = epsilon_max(ps, N, DELTA, rel_tol=1e-13, strict=False)
    assert all(p.upper >= p.lower for p in r.parts) and r.lower <= r.upper
    assert any(p.wider_than_asked for p in r.parts)


def test_cli_eps0_notes_a_wider_bracket(capsys):
    from amp.cli import main
    rc = main(["eps0", "-m", "krr", "--k", "10", "--n", "120", "--eps", "0.9",
               "--delta", "1e-10", "--rel-tol", "1e-13", "--json", "--quiet"])
    out = capsys.readouterr()
    assert rc == 0
    assert '"wider_than_asked": true' in out.out
    assert out.err.count("\n") == 1 and "wider than asked" in out.err


# ------------------------------------------------------------------ delta (issue 34, seam 1)
def test_delta_flags_a_wider_bracket():
    """``amp.delta`` honours ``rel_tol`` as ``amp.epsilon`` does: at ``rel_tol=1e-13`` (below
    the atoms' floating-point floor) the certified bracket comes back flagged, with the
    warning; it still encloses the exact Theorem 4 delta; ``strict=True`` refuses."""
    m, eps = amp.KRR(1.0, k=K), 0.3
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        r = amp.delta(m, N, eps, rel_tol=1e-13)
    assert r.wider_than_asked and r.achieved_rel_tol > 1e-13
    assert r.details["achieved_rel_tol"] == r.achieved_rel_tol == r.rel_width
    assert r.as_dict()["wider_than_asked"] is True
    assert r.lower <= krr_exact_delta(K, 1.0, N, eps) <= r.upper
    with pytest.raises(amp.NumericalError, match="delta at eps=0.3: rel_tol=1e-13"):
        amp.delta(m, N, eps, rel_tol=1e-13, strict=True)
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):    # the profile's own
        assert amp.profile(m, N).delta(eps, rel_tol=1e-13).wider_than_asked
    with warnings.catch_warnings():
        warnings.simplefilter("error", amp.AccuracyWarning)    # an answer as asked: no flag
        ok = amp.delta(m, N, eps, strict=True)
    assert not ok.wider_than_asked and "wider_than_asked" not in ok.as_dict()
    assert ok.rel_width <= 2e-3 and ok.lower <= r.upper and r.lower <= ok.upper


def test_delta_issue_34_case():
    """The issue's call: a 1e-8-wide bracket asked at 1e-13 is no longer silent."""
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        r = amp.delta(amp.KRR(4, k=10), 10_000, 0.4, rel_tol=1e-13)
    assert r.wider_than_asked and r.achieved_rel_tol == r.rel_width > 1e-13
    with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
        vec = amp.delta(amp.KRR(4, k=10), 10_000, [0.4, 0.5], rel_tol=1e-13, strict=False)
    assert all(b.wider_than_asked for b in vec)


def test_delta_far_below_any_target_is_not_flagged():
    """A bracket narrower than 1e-16 in absolute terms (``[0, 8e-24]``: a Chernoff bound) is
    an answer as documented (the whole bracket below 1e-16), not a flagged one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", amp.AccuracyWarning)
        r = amp.delta(amp.KRR(4, k=10), 10_000, 1.0, strict=True)
    assert r.lower == 0 and 0 < r.upper <= 1e-16 and not r.wider_than_asked


def test_cli_delta_notes_a_wider_bracket(capsys):
    from amp.cli import main
    rc = main(["delta", "-m", "krr", "--k", "10", "--eps0", "1", "--n", "120",
               "--eps", "0.3", "--rel-tol", "1e-13", "--json", "--quiet"])
    out = capsys.readouterr()
    assert rc == 0
    assert '"wider_than_asked": true' in out.out
    assert out.err.count("\n") == 1 and "wider than asked" in out.err


def test_population_delta_flags_a_wider_bracket():
    """The same rule on a population's paths (the common-blanket baseline and the
    Poisson-binomial bound): flagged, or refused with ``strict=True``."""
    pop = amp.Population([(90, amp.KRR(1.0, k=10)), (10, amp.KRR(4.0, k=10))])
    for method in ("auto", "poisson-binomial"):
        with pytest.warns(amp.AccuracyWarning, match="wider than asked"):
            r = amp.delta(pop, pop.n, 0.5, method=method, rel_tol=1e-13)
        assert r.wider_than_asked and r.achieved_rel_tol > 1e-13
        with pytest.raises(amp.NumericalError, match="rel_tol=1e-13"):
            amp.delta(pop, pop.n, 0.5, method=method, rel_tol=1e-13, strict=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", amp.AccuracyWarning)
            ok = amp.delta(pop, pop.n, 0.5, method=method, strict=True)
        assert not ok.wider_than_asked and ok.lower <= r.upper and r.lower <= ok.upper
