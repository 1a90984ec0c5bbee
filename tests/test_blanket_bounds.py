"""Privacy blanket bounds with Hoeffding and Bennett (Balle, Bell, Gascon, Nissim 2019)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.baselines import BOUNDS
from amp.baselines.blanket_bounds import (bennett_delta, bennett_epsilon, hoeffding_delta,
                                          hoeffding_epsilon, parv_summary)
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, MatrixMechanism
from amp.oracles.ground_truth import Packing, histogram_dp, hockey_stick

MECHANISMS = {
    "10-RR": KRR(1.0, k=10),
    "3-RR": KRR(1.0, k=3),
    "RAPPOR": RAPPOR(1.0),
    "OUE": OUE(1.0),
    "BLH": BLH(1.0),
    "HR": HadamardResponse(1.0),
    "RAPPOR-d4": RAPPOR(1.0, d=4),
    "OUE-d3": OUE(1.0, d=3),
    "BLH-d3": BLH(1.0, d=3),
    "HR-d5": HadamardResponse(1.0, d=5),
    "matrix": MatrixMechanism([[0.5, 0.3, 0.2], [0.25, 0.45, 0.3], [0.3, 0.3, 0.4]]),
}


def blanket_pair_divergence(law, n: int, eps) -> np.ndarray:
    """Oracle for ``E[(G_1 + ... + G_n)_+] / n``: the exact hockey-stick divergence of the
    explicit reduction pair of the law (Theorem 4 / Section 4.1), by histogram enumeration.

    Outputs are the law's atoms plus one off-blanket symbol. The first user outputs atom ``j``
    w.p. ``p_j a_j`` (``p_j b_j`` in the neighbouring dataset), never the off symbol; the other
    ``n - 1`` users output atom ``j`` w.p. ``p_j`` and the off symbol w.p. ``1 - gamma``. Then
    ``P0(h) - e^eps P1(h) = Mult_n(h) (1/n) sum_i G_i``, so the divergence is the blanket value.
    The histogram laws come from :mod:`amp.oracles.ground_truth` (a convolution over users),
    an algorithm independent of :func:`amp.backends.exact.delta_enumerate` (stars and bars).
    """
    p = law.p
    off = max(0.0, 1.0 - float(p.sum()))
    rows = np.vstack([np.append(p * law.a, 0.0), np.append(p * law.b, 0.0), np.append(p, off)])
    pack = Packing.for_(n, rows.shape[1])
    _, probs = histogram_dp(rows, [2] * (n - 1), pack, last_rows=(0, 1))
    return np.atleast_1d(hockey_stick(probs[0], probs[1], eps))


def exact_blanket(mech, n: int, eps) -> np.ndarray:
    """Exact blanket value of a mechanism (max over its laws) at each ``eps``."""
    return np.max([blanket_pair_divergence(law, n, eps) for law in mech.gparv_laws()], axis=0)


def test_oracle_matches_delta_enumerate() -> None:
    """The oracle agrees with the stars-and-bars enumeration (two independent algorithms)."""
    for law in (RAPPOR(1.0).gparv(), KRR(2.0, k=5).gparv(),
                MECHANISMS["matrix"].gparv_laws()[1]):
        got = blanket_pair_divergence(law, 12, [0.0, 0.3])
        for g, e in zip(got, (0.0, 0.3)):
            assert g == pytest.approx(delta_enumerate(law, 12, e), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("name", list(MECHANISMS))
@pytest.mark.parametrize("n", [30, 50])
def test_bounds_dominate_exact_blanket(name: str, n: int) -> None:
    mech = MECHANISMS[name]
    eps = [0.1, 0.3, 0.6, 0.9]
    for e, exact in zip(eps, exact_blanket(mech, n, eps)):
        for mode in ("exact", "remark1", "published"):
            assert hoeffding_delta(mech, n, e, range_mode=mode).value >= exact
            assert bennett_delta(mech, n, e, range_mode=mode).value >= exact
        for mode in ("published", "remark1"):
            assert hoeffding_delta(mech.eps0, n, e, range_mode=mode).value >= exact
            assert bennett_delta(mech.eps0, n, e, range_mode=mode).value >= exact


def test_bounds_are_informative_somewhere() -> None:
    """Guard against a trivially valid test: the bounds are < 1 on these instances."""
    for m in MECHANISMS.values():
        assert hoeffding_delta(m, 35, 0.6).value < 0.05
        assert bennett_delta(m, 35, 0.6).value < 0.01
    assert bennett_delta(KRR(2.0, k=10), 2000, 0.5).value < 1e-3


def test_balle_code_bennett_is_not_a_bound() -> None:
    """The expression of the authors' BennettExact falls below the exact blanket value."""
    m = KRR(2.0, k=10)
    exact = float(exact_blanket(m, 60, 0.5)[0])             # 0.005809...
    assert exact == pytest.approx(0.005809, rel=1e-3)
    code = bennett_delta(m, 60, 0.5, variant="balle-code")
    assert not code.certified and "NOT a valid" in code.details["note"]
    assert code.value < exact * 0.8
    assert bennett_delta(m, 60, 0.5).value >= exact         # corrected variant


def test_generic_formulas_by_hand() -> None:
    eps0, n, eps = 2.0, 5000, 0.4
    E0, Ee = math.exp(eps0), math.exp(eps)
    g, a = math.exp(-eps0), Ee - 1
    w = (Ee + 1) * (E0 - 1 / E0)
    hoeff = (w * w / (4 * a)) * (1 - g * (1 - math.exp(-2 * a * a / w ** 2))) ** n / (g * n)
    assert hoeffding_delta(eps0, n, eps).value == pytest.approx(min(hoeff, 1.0), rel=1e-9)
    b = E0 - Ee / E0
    v = E0 * (Ee ** 2 + 1) - 2 * math.exp(eps - 3 * eps0)
    al, be = v / b ** 2, a * b / v
    h = (1 + be) * math.log1p(be) - be
    benn = (b / math.log1p(be)) * ((1 - g * (1 - math.exp(-al * h))) ** n - (1 - g) ** n) / (g * n)
    assert bennett_delta(eps0, n, eps).value == pytest.approx(min(benn, 1.0), rel=1e-9)


def test_krr_law_summary_matches_balle_rr_formulas() -> None:
    """Balle et al.'s RRMechanism: max L, width and E[L^2] of k-RR in closed form."""
    k, eps0, eps = 10, 2.0, 0.3
    law = KRR(eps0, k=k).gparv()
    s = parv_summary(law, eps)
    gam = k / (math.exp(eps0) + k - 1)
    Ee = math.exp(eps)
    assert s.gamma == pytest.approx(gam, rel=1e-12)
    assert s.a == pytest.approx(Ee - 1, rel=1e-12)
    assert s.lmax == pytest.approx(gam * (1 - Ee) + (1 - gam) * k, rel=1e-12)
    assert s.width == pytest.approx((1 - gam) * k * (Ee + 1), rel=1e-12)
    assert s.second == pytest.approx(gam * (2 - gam) * (Ee - 1) ** 2
                                     + (1 - gam) ** 2 * k * (Ee ** 2 + 1), rel=1e-12)


def test_remark1_range_is_tighter() -> None:
    for e in (0.1, 0.5, 1.0):
        assert hoeffding_delta(3.0, 10**4, e, range_mode="remark1").value <= \
            hoeffding_delta(3.0, 10**4, e).value


@pytest.mark.parametrize("fn_d,fn_e", [(hoeffding_delta, hoeffding_epsilon),
                                       (bennett_delta, bennett_epsilon)], ids=["H", "B"])
@pytest.mark.parametrize("source", [2.0, KRR(2.0, k=10)], ids=["generic", "10-RR"])
def test_epsilon_inversion_certifies(fn_d, fn_e, source) -> None:
    r = fn_e(source, 10**5, 1e-6)
    assert r.certified and r.quantity == "eps" and r.bound == fn_d.__name__.split("_")[0]
    assert r.lower <= r.value == r.upper and r.upper - r.lower <= 1e-9 * r.upper
    assert 0 < r.value < 2.0
    assert fn_d(source, 10**5, r.value).value <= 1e-6
    assert fn_d(source, 10**5, r.lower).value > 1e-6


@pytest.mark.parametrize("fn_d,fn_e", [(hoeffding_delta, hoeffding_epsilon),
                                       (bennett_delta, bennett_epsilon)], ids=["H", "B"])
@pytest.mark.parametrize("mech", [KRR(0.5, k=10), RAPPOR(0.5), BLH(0.5, d=16)],
                         ids=["10-RR", "RAPPOR", "BLH"])
def test_epsilon_at_the_cliff_below_eps0(fn_d, fn_e, mech) -> None:
    """At n = 10 the bound stays near 1e-2 up to just below eps0 and then drops to the
    rounding level: the crossing is eps0 itself to 1e-9, and the search still certifies it."""
    r = fn_e(mech, 10, 1e-3)
    assert 0.5 * (1 - 1e-9) <= r.value <= 0.5
    assert fn_d(mech, 10, r.value).value <= 1e-3
    assert fn_d(mech, 10, r.lower).value > 1e-3


def test_zero_and_cap() -> None:
    assert hoeffding_delta(1.0, 100, 1.0).value == 0.0
    assert bennett_delta(KRR(1.0, k=4), 100, 1.5).value == 0.0
    assert hoeffding_delta(1.0, 100, 0.0).value == 1.0
    arr = bennett_delta(1.0, 100, np.array([0.0, 0.5]))
    assert isinstance(arr, list) and [r.inputs["eps"] for r in arr] == [0.0, 0.5]
    assert arr[0].value == 1.0 and arr[0].lower == arr[0].upper     # closed form
    assert arr[1].value == bennett_delta(1.0, 100, 0.5).value


def test_registry_max_over_laws() -> None:
    m = MECHANISMS["matrix"]
    laws = m.gparv_laws()
    assert len(laws) > 1
    v = BOUNDS["bennett"].delta(m, 200, 0.2).value
    assert v == max(bennett_delta(law, 200, 0.2).value for law in laws)


@pytest.mark.parametrize("call", [
    lambda: hoeffding_delta(2.0, 10, 0.1, range_mode="exact"),
    lambda: hoeffding_delta(KRR(1.0, k=3).gparv(), 10, 0.1, range_mode="tight"),
    lambda: bennett_delta(2.0, 10, 0.1, variant="paper"),
    lambda: bennett_delta("krr", 10, 0.1),
    lambda: hoeffding_epsilon(2.0, 10, 0.0),
], ids=["generic-exact", "mode", "variant", "source", "delta"])
def test_bad_input(call) -> None:
    with pytest.raises(ParameterError):
        call()


def test_bennett_at_eps0_rounding_and_small_beta():
    """At eps = eps0 the positive atom E - e^eps is floating-point noise around 0: the bound is
    that noise level (~1e-15), not a rounding artefact of the Bennett formula (RAPPOR once gave
    0.043 or 1.0 there), and eps(delta) is found."""
    from amp.baselines.blanket_bounds import _bennett_parts, ParvSummary
    from amp.mechanisms import RAPPOR
    mech = RAPPOR(2.0)
    assert 0.0 <= bennett_delta(mech, 1000, 2.0).value < 1e-14
    assert bennett_delta(mech, 1000, 2.5).value == 0.0
    assert bennett_delta(mech, 1000, 1.99).value < 1e-20
    r = bennett_epsilon(mech, 1000, 1e-6)
    assert 0 < r.value < 2.0
    # the series branch of h(beta) joins the closed form continuously
    for b in (1e-2 * (1 - 1e-9), 1e-2 * (1 + 1e-9)):
        s = ParvSummary(0.5, b, 1.0, 2.0, 1.0)
        _, beta, h = _bennett_parts(s)
        exact = (1 + beta) * math.log1p(beta) - beta
        assert h == pytest.approx(exact, rel=1e-9)
