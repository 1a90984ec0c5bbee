"""The front door (amp.delta / amp.epsilon / amp.profile / amp.epsilon_for / calibrate_eps0),
the one result type and the privacy profile, against exact references."""

from __future__ import annotations

import decimal
import fractions
import math
import re
from pathlib import Path

import numpy as np
import pytest

import amp
from amp.backends.exact import delta_enumerate
from amp.core.errors import ParameterError
from amp.core.result import Bound

README = Path(__file__).resolve().parents[1] / "README.md"


# ----------------------------------------------------------------------------- Bound
def test_bound_value_is_derived_and_cannot_disagree():
    up = Bound("eps", 0.1, 0.2, "upper")
    low = Bound("eps", 0.1, 0.2, "lower")
    cal = Bound("eps0", 3.0, 3.1, "upper")
    assert (up.value, low.value, cal.value) == (0.2, 0.1, 3.0)
    assert up.side == "upper" and low.side == "lower" and cal.side == "lower"
    with pytest.raises(AttributeError):
        up.value = 0.3                                        # frozen, and derived
    with pytest.raises(ValueError, match="invalid bracket"):
        Bound("delta", 0.3, 0.2)
    with pytest.raises(ValueError, match="quantity"):
        Bound("gamma", 0.1, 0.2)
    assert Bound("delta", 0.0, 0.0).rel_width == 0.0
    assert Bound("delta", 1e-200, 4e-200).estimate == pytest.approx(2e-200)   # no underflow


def test_bound_names_its_neighbouring_relation_and_inputs():
    r = amp.delta(amp.KRR(1.0, k=3), 20, 0.3)
    assert "replace-one" in r.neighbouring and r.neighbouring == amp.NEIGHBOURING
    assert r.eps == 0.3 and r.delta == r.value and r.quantity == "delta"
    e = amp.epsilon(amp.KRR(1.0, k=3), 20, 1e-2)
    assert e.delta == 1e-2 and e.eps == e.value
    d = e.as_dict()
    assert d["value"] == e.value and d["bracket"] == [e.lower, e.upper] and d["delta"] == 1e-2


# ----------------------------------------------------------------------------- delta
@pytest.mark.parametrize("mech, n, eps", [
    (amp.KRR(2.0, k=4), 12, 0.3), (amp.RAPPOR(1.0, d=3), 9, 0.2), (amp.OUE(2.0), 15, 0.5),
    (amp.BLH(1.5), 11, 0.1), (amp.OLH(2.0, g=3), 10, 0.4), (amp.HadamardResponse(1.0), 8, 0.2),
], ids=lambda v: v.describe() if hasattr(v, "describe") else str(v))
def test_delta_contains_the_exact_maximum_over_pair_laws(mech, n, eps):
    exact = max(delta_enumerate(law, n, eps) for law in mech.gparv_laws())
    r = amp.delta(mech, n, eps)
    assert r.lower <= exact <= r.upper and r.value == r.upper


def test_delta_lower_bound_is_below_the_exact_theorem5_value():
    mech = amp.KRR(2.0, k=5)
    exact = delta_enumerate(mech.lower_laws()[0], 14, 0.4)
    r = amp.delta(mech, 14, 0.4, bound="lower")
    assert r.value == r.lower <= exact <= r.upper


def test_sequences_give_lists_in_order():
    eps = [0.5, 0.1, 0.3]
    res = amp.delta(amp.KRR(2.0, k=4), 100, eps)
    assert isinstance(res, list) and [r.eps for r in res] == eps
    single = [amp.delta(amp.KRR(2.0, k=4), 100, e) for e in eps]
    assert [r.bracket for r in res] == [r.bracket for r in single]


# ----------------------------------------------------------------------------- profile
def test_profile_reuses_its_curves_and_agrees_with_the_front_door():
    mech = amp.RAPPOR(2.0)
    prof = amp.profile(mech, 5000)
    assert isinstance(prof, amp.PrivacyProfile) and len(prof.curves) == len(prof.laws) >= 1
    a = amp.epsilon_for(prof, 1e-6)
    b = amp.epsilon(mech, 5000, 1e-6)
    assert a.lower <= b.upper and b.lower <= a.upper        # both certified: they overlap
    grid = prof.delta([a.upper, a.lower])
    assert grid[0].upper <= 1e-6 < grid[1].lower             # the ends are what they claim


def test_profile_is_monotone_in_eps_and_n():
    """Certified brackets respect the exact monotonicity: delta falls in eps and in n."""
    mech = amp.KRR(3.0, k=6)
    p1, p2 = amp.profile(mech, 2000), amp.profile(mech, 4000)
    d1 = p1.delta([0.3, 0.5, 0.7])
    assert d1[0].lower >= d1[1].upper and d1[1].lower >= d1[2].upper
    assert p2.delta(0.5).upper <= p1.delta(0.5).lower


def test_profile_with_custom_laws():
    mech = amp.KRR(2.0, k=5)
    law = mech.lower_laws()[0]
    prof = amp.PrivacyProfile(mech, 10, bound="lower", laws=[law])
    assert prof.delta(0.2).lower <= delta_enumerate(law, 10, 0.2) <= prof.delta(0.2).upper
    with pytest.raises(ParameterError, match="laws"):
        amp.PrivacyProfile(mech, 10, laws=[])


def test_epsilon_for_rejects_other_objects():
    with pytest.raises(ParameterError, match="PrivacyProfile"):
        amp.epsilon_for(amp.KRR(1.0, k=3), 1e-6)


# ----------------------------------------------------------------------------- input checks
@pytest.mark.parametrize("call, msg", [
    (lambda: amp.delta("krr", 10, 0.1), "mechanism must be an amp mechanism"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 0, 0.1), "n must be >= 1"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, -0.1), "eps must be >= 0"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 0.1, rel_tol=2.0), "rel_tol must be <= 0.5"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 0.1, method="magic"), "method must be one of"),
    (lambda: amp.epsilon(amp.KRR(1.0, k=3), 10, 2.0), r"delta must be in \(0, 1\)"),
    (lambda: amp.profile(amp.KRR(1.0, k=3), 10, bound="both"), "bound must be"),
    (lambda: amp.calibrate_eps0(3, 10, 0.5, 1e-6), "make must be a callable"),
    (lambda: amp.calibrate_eps0(lambda e: amp.KRR(e, k=3), 10, 0.0, 1e-6), "eps must be > 0"),
    (lambda: amp.KRR(1.0), "k"),                       # the domain is a required keyword
    (lambda: amp.KRR(10, 4.0), "positional"),          # the old KRR(k, eps0) order fails loudly
])
def test_bad_input_names_the_parameter(call, msg):
    with pytest.raises((ParameterError, TypeError), match=msg):
        call()


@pytest.mark.parametrize("call, msg", [
    # issue 37: these raised OverflowError (exp of a huge eps) and TypeError (iterating a
    # Decimal); the checks of amp.core.validate refuse the whole class, naming the argument
    (lambda: amp.calibrate_eps0(lambda e: amp.KRR(e, k=10), 10_000, 1e308, 1e-300),
     r"^eps must be <= 300 "),
    (lambda: amp.sweep("krr", n=[1000, 3000], eps0=[1.0, 2.0], delta=1e-6, k=10,
                       bound=decimal.Decimal("0.5")), r"^bound must be 'upper' or 'lower', got "
                                                      r"Decimal\('0.5'\)"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 10**400), "^eps must be a finite real number"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, fractions.Fraction(10**400, 3)),
     "^eps must be a finite real number"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 1e308), "^eps must be <= 300"),
    (lambda: amp.compose([(amp.KRR(1.0, k=3), 10)], eps=1e308), "^eps must be <= 300"),
    (lambda: amp.sweep("krr", n=10, eps0=1.0, eps=1e308, k=3), "^eps must be <= 300"),
    (lambda: amp.epsilon(amp.KRR(1.0, k=3), 10**400, 1e-6), r"^n must be <= 1e\+18, got 1000"),
    (lambda: amp.epsilon(amp.KRR(1.0, k=3), 1e300, 1e-6), r"^n must be <= 1e\+18"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), fractions.Fraction(10**400), 0.1),
     "^n must be a finite real number"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 0.1, method=np.array([1, 2])),
     "^method must be one of"),
    (lambda: amp.delta(amp.KRR(1.0, k=3), 10, 0.1, bound=np.array([1, 2])), "^bound must be"),
    (lambda: amp.profile(amp.KRR(1.0, k=3), 10, bound=np.array([1, 2])), "^bound must be"),
    (lambda: amp.sweep("krr", n=10, eps0=1.0, delta=1e-6, k=3, bound=None), "^bound must be"),
    (lambda: amp.sweep("krr", n=10, eps0=1.0, delta=1e-6, k=3, method=["auto"]),
     "^method must be"),
])
def test_odd_values_are_parameter_errors_naming_the_argument(call, msg):
    with pytest.raises(ParameterError, match=msg) as info:
        call()
    assert "\n" not in str(info.value) and len(str(info.value)) < 250


def test_constructors_take_eps0_first_and_domain_by_keyword():
    assert amp.KRR(4.0, k=10).eps0 == 4.0 and amp.KRR(eps0=4.0, k=10).k == 10
    assert amp.RAPPOR(4.0).eps0 == amp.RAPPOR(eps0=4.0, d=5).eps0 == 4.0
    assert isinstance(amp.BLH(1.0), amp.BLH) and isinstance(amp.BLH(1.0), amp.OLH)
    assert amp.BLH(1.0, d=3).g == 2
    for cls in (amp.RAPPOR, amp.OUE, amp.BLH, amp.HadamardResponse):
        with pytest.raises(TypeError):
            cls(1.0, 3)                                 # the domain only by keyword


def test_the_old_entry_points_are_gone():
    for name in ("epsilon_bracket", "delta_bracket", "BoundResult", "DeltaResult",
                 "EpsilonResult"):
        assert not hasattr(amp, name)


def test_distribution_and_version():
    import tomllib
    import importlib.metadata
    meta = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    assert meta["name"] != "amp" and meta["dynamic"] == ["version"]
    assert importlib.metadata.version(meta["name"]) == amp.__version__


# ----------------------------------------------------------------------------- README
def test_readme_python_example_runs():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has a Python example"
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)            # noqa: S102
    r = ns["r"]
    assert isinstance(r, amp.Bound) and r.rel_width <= 1e-4 and math.isfinite(r.value)
    assert np.isclose(r.value, 0.38049, rtol=1e-4)
