"""The characteristic-function inversion backend (``amp.backends.cfinv``, method ``"cf"``)
against oracles that share none of its code:

* the independent enumeration of ``bench/oracle_sweep.py`` (laws written from the mechanisms'
  definitions) and amp's exact enumeration, at small ``n``;
* the structured path's exact count sums (Table 1 laws and the Theorem 5 backgrounds), at
  ``n`` up to ``10^8``;
* the certified lattice FFT, for Theorem 5's seven-type law of the bit mechanisms.

A bracket passes when it contains the oracle's value (or overlaps the oracle's bracket).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import amp
from amp.backends import dispatch
from amp.backends.cfinv import cf_delta
from amp.backends.dispatch import CF_MIN_N, LawDelta
from amp.backends.exact import delta_enumerate
from amp.core.errors import NumericalError
from amp.mechanisms.gparv import GPARV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from oracle_sweep import bit_lower, oracle_delta, merged  # noqa: E402

BIT = {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH, "hr": amp.HadamardResponse}


def _cf(law, n, eps, rel_tol=1e-3):
    return LawDelta(law, n, "cf").delta(eps, rel_tol=rel_tol)


def _contains(b, lo, up):
    return b.lower <= up and lo <= b.upper


@pytest.mark.parametrize("name", sorted(BIT))
@pytest.mark.parametrize("eps0,n,eps", [(1.0, 12, 0.4), (4.0, 20, 1.5), (0.3, 16, 0.05)])
def test_seven_type_law_contains_the_independent_oracle(name, eps0, n, eps):
    """Theorem 5's paper pair of the bit mechanisms: the law amp builds (table1) and the
    oracle's law written from the definitions, enumerated exactly."""
    law = BIT[name](eps0).lower_laws()[0]
    assert "background" not in law.label
    exact = oracle_delta(merged(bit_lower(name, math.exp(eps0))[0]), n, eps)
    b = _cf(law, n, eps, rel_tol=1e-4)
    assert b.method == "cf"
    assert b.lower <= exact * (1 + 1e-9) <= b.upper * (1 + 2e-9)
    assert b.upper - b.lower <= 1e-4 * b.upper


@pytest.mark.parametrize("seed", range(6))
def test_random_laws_contain_exact_enumeration(seed):
    """Random finite laws (ratios in [1, E], as for any eps0-LDP pair) at small n."""
    rng = np.random.default_rng(seed)
    eps0 = float(rng.uniform(0.3, 5))
    k = int(rng.integers(3, 7))
    a = np.exp(rng.uniform(0, eps0, k))
    b = np.exp(rng.uniform(0, eps0, k))
    p = rng.dirichlet(np.ones(k))
    law = GPARV(a, b, p, eps0, "random")
    n = int(rng.integers(4, 15))
    checked = 0
    for eps in (0.0, *rng.uniform(0, 0.8 * eps0, 2)):
        v = delta_enumerate(law, n, float(eps))
        if v < 1e-13:
            continue
        r = _cf(law, n, float(eps), rel_tol=1e-3)
        assert r.lower <= v * (1 + 1e-9) and v * (1 - 1e-9) <= r.upper
        checked += 1
    assert checked                       # eps = 0 always has a delta well above 1e-13


CASES_LARGE = [  # (mechanism, which law, n, target delta) with the structured exact oracle
    (amp.KRR(4.0, k=10), "upper", 10**6, 1e-6),
    (amp.KRR(1.0, k=3), "upper", 10**8, 1e-8),
    (amp.RAPPOR(4.0), "upper", 10**6, 1e-10),
    (amp.OUE(2.0), "upper", 3 * 10**7, 1e-6),
    (amp.BLH(8.0), "upper", 10**6, 1e-6),
    (amp.RAPPOR(4.0), "x2 = x0", 10**6, 1e-6),
    (amp.OUE(1.0), "x2 = x1", 10**7, 1e-12),
    (amp.KRR(4.0, k=10), "lower", 10**6, 1e-6),
]


@pytest.mark.parametrize("mech,which,n,target", CASES_LARGE)
@pytest.mark.parametrize("rel_tol", [1e-2, 1e-4])
def test_large_n_brackets_contain_the_structured_value(mech, which, n, target, rel_tol):
    """At rel_tol 1e-2 the smoothing bias is most of the width (a lower end that forgot it
    would sit above the exact value and fail here); at 1e-4 the brackets are narrow."""
    if which == "upper":
        law = mech.gparv_laws()[0]
    elif which == "lower":
        law = mech.lower_laws()[0]
    else:
        law = next(L for L in mech.lower_laws() if which in L.label)
    ref_ev = LawDelta(law, n)
    assert ref_ev.structured
    eps = _eps_for(ref_ev, target)
    ref = ref_ev.delta(eps, rel_tol=1e-4)
    b = _cf(law, n, eps, rel_tol=rel_tol)
    assert _contains(b, ref.lower, ref.upper), (b, ref)
    assert b.upper - b.lower <= rel_tol * b.upper + b.details["floor"]


def _eps_for(ev, target):
    """An eps where the law's delta is near ``target`` (uncertified bisection of the
    saddle-point estimate: only picks the test point)."""
    lo, hi = 0.0, min(ev.max_eps, 20.0)
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ev.estimate_log_delta(mid) > math.log(target) else (lo, mid)
    return lo


@pytest.mark.parametrize("name", ["rappor", "oue", "blh", "hr"])
def test_seven_type_law_overlaps_the_fft(name):
    law = BIT[name](4.0).lower_laws()[0]
    n = 20_000
    ev = LawDelta(law, n, "fft")
    eps = _eps_for(ev, 1e-6)
    f = ev.delta(eps, rel_tol=2e-3)
    b = _cf(law, n, eps, rel_tol=1e-4)
    assert _contains(b, f.lower, f.upper)
    assert b.upper <= f.upper * (1 + 1e-4)          # the narrower bracket, inside the FFT's


def test_auto_picks_cf_above_the_threshold_and_by_cost_below(monkeypatch):
    law = amp.RAPPOR(4.0).lower_laws()[0]
    big = LawDelta(law, CF_MIN_N).delta(0.08)
    assert big.method == "cf" and big.details["frequencies"] > 0
    small = LawDelta(law, 5_000).delta(0.5)          # cf's expected cost is the lower here
    assert small.method == "cf"
    # below CF_MIN_N the FFT runs when it is expected to be the cheaper
    monkeypatch.setattr(dispatch, "fft_cost", lambda *a: 0.0)
    assert LawDelta(law, 5_000).delta(0.5).method == "fft"


def test_auto_falls_back_to_the_fft_when_cf_refuses(monkeypatch):
    def refuse(*args, **kwargs):
        raise NumericalError("cf: refused for the test")
    monkeypatch.setattr(dispatch, "cf_delta", refuse)
    law = amp.OUE(4.0).lower_laws()[0]
    r = LawDelta(law, CF_MIN_N).delta(0.08)
    assert r.method == "fft"
    with pytest.raises(NumericalError, match="refused for the test"):
        LawDelta(law, CF_MIN_N, "cf").delta(0.08)


def test_refuses_instead_of_returning_a_wide_bracket():
    law = amp.RAPPOR(4.0).lower_laws()[0]
    g, p = law.atoms(0.03)
    with pytest.raises(NumericalError, match="frequencies"):
        cf_delta(g, p, 10**6, 0.03, 1e-4, law.label, max_terms=100)
    # the floating-point error of M(theta)^n alone exceeds the width asked for
    with pytest.raises(NumericalError, match="floating-point"):
        cf_delta(g, p, 10**9, 0.001, 1e-8, law.label)
    with pytest.raises(NumericalError, match="positive atom"):
        cf_delta(np.array([-1.0, -0.5]), np.array([0.5, 0.5]), 10**6, 0.1, 1e-3, "neg")


def test_lower_eps_of_the_bit_mechanisms_at_large_n():
    """The eps search over the profile's laws: certified brackets at 1e-4 relative, the paper's
    pair served by cf, and the lower eps below Theorem 4's upper eps."""
    for mech in (amp.RAPPOR(4.0), amp.OUE(4.0)):
        lo = amp.epsilon(mech, 10**6, 1e-6, bound="lower")
        up = amp.epsilon(mech, 10**6, 1e-6)
        assert "cf" in lo.method
        assert lo.upper - lo.lower <= 1e-4 * lo.upper
        assert lo.upper <= up.lower
    # beside the FFT's answer at n = 2e5 (the previous path): the two eps brackets overlap
    fft = amp.epsilon(amp.RAPPOR(4.0), 200_000, 1e-6, bound="lower", method="fft")
    cf = amp.epsilon(amp.RAPPOR(4.0), 200_000, 1e-6, bound="lower")
    assert "cf" in cf.method and "cf" not in fft.method
    assert cf.lower <= fft.upper and fft.lower <= cf.upper


def test_cli_method_cf(capsys):
    from amp.cli import main
    assert main(["delta", "-m", "rappor", "--eps0", "4", "--n", "200000", "--eps", "0.08",
                 "--bound", "lower", "--method", "cf", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lo, up = out["bracket"]
    assert out["method"] == "cf" and 0 < lo == out["value"] <= up
