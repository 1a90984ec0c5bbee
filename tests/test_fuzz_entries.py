"""Odd values at every public entry: only amp's own errors may escape (issue 37).

Each test feeds one or two arguments of a front-door function (``amp.delta``, ``amp.epsilon``,
``amp.profile``, ``amp.epsilon_for``, ``amp.sweep``, ``amp.calibrate_eps0``, ``amp.compose``,
``amp.population_delta``, the mechanism constructors, the CLI's ``main``) an odd value --
``Decimal``, ``Fraction``, numpy scalars and arrays, nan, inf, negative, huge, bools, strings,
``None``, lists, mappings, arbitrary objects -- the other arguments being a tiny valid question
(``n = 20``: nothing heavy runs). The call may succeed; if it fails, the exception must be an
:class:`amp.AmpError` (``ParameterError`` naming the argument, ``NumericalError``), or the
documented :class:`~amp.core.extras.MissingExtraError` of an optional dependency: never a raw
``TypeError``, ``OverflowError``, numpy's ``ValueError``... For the CLI: exit code 0, 2 or 3
(never 1, "internal error") and no exception. Examples are derandomized (the same every run).
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amp
from amp.core.extras import MissingExtraError

ALLOWED = (amp.AmpError, MissingExtraError)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


class _Odd:
    """An object that is nothing amp knows (no number, no sequence)."""

    def __repr__(self) -> str:
        return "<odd object>"


ODD = [None, True, False, 0, -1, 1.5, 2**64, 10**400, -10**400, math.nan, math.inf, -math.inf,
       1e308, 1e-320, Decimal("0.5"), Decimal("NaN"), Fraction(1, 3), Fraction(10**400, 3),
       np.float32(0.5), np.float64(np.nan), np.int64(7), np.bool_(True), np.array(0.5),
       np.array([0.1, 0.2]), np.array([[0.1]]), np.array([]), complex(1, 1), "0.5", "", "upper",
       b"x", [], [0.1, 0.2], [[0.1]], (0.1,), {}, {"a": 1}, {0.1}, _Odd(), len, range(3),
       iter([0.1])]
odd = st.sampled_from(ODD)


def _mech():
    return amp.KRR(1.0, k=3)


def _call(fn, **kw):
    """``fn(**kw)``; the call may succeed or raise one of amp's errors, nothing else."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(**kw)
        except ALLOWED as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message"
            return None
    return out


def _changes(names):
    """One or two arguments replaced by odd values."""
    return st.dictionaries(st.sampled_from(names), odd, min_size=1, max_size=2)


DELTA = dict(mechanism=_mech(), n=20, eps=0.5, bound="upper", rel_tol=None, method="auto",
             rounds=1, sampling=1.0, executor=None, progress=None)


@SETTINGS
@given(_changes(list(DELTA)))
def test_delta(change):
    _call(amp.delta, **{**DELTA, **change})


EPSILON = dict(mechanism=_mech(), n=20, delta=1e-3, bound="upper", rel_tol=None, method="auto",
               progress=None, rounds=1, sampling=1.0, executor=None, strict=False)


@SETTINGS
@given(_changes(list(EPSILON)))
def test_epsilon(change):
    _call(amp.epsilon, **{**EPSILON, **change})


PROFILE = dict(mechanism=_mech(), n=20, bound="upper", method="auto", executor=None,
               rel_tol=None, progress=None)


@SETTINGS
@given(_changes(list(PROFILE)), odd, odd)
def test_profile_and_its_questions(change, eps, delta):
    prof = _call(amp.profile, **{**PROFILE, **change})
    if prof is not None:
        _call(prof.delta, eps=eps)
        _call(amp.epsilon_for, prof=prof, delta=delta)
    _call(amp.epsilon_for, prof=change.get("mechanism", _mech()), delta=1e-3)


SWEEP = dict(mechanism="krr", n=[20, 30], eps0=[1.0], delta=1e-3, bound="upper", rounds=1,
             sampling=1.0, rel_tol=None, method="auto", executor=None, workers=None,
             progress=None, reuse=True, k=3)


@SETTINGS
@given(_changes(list(SWEEP) + ["eps"]))
def test_sweep(change):
    kw = {**SWEEP, **change}
    if "eps" in change:
        kw.pop("delta")
    _call(amp.sweep, **kw)


CALIBRATE = dict(make=lambda e: amp.KRR(e, k=3), n=20, eps=0.5, delta=1e-3, rel_tol=1e-2,
                 eps0_max=8.0, progress=None, method="auto", executor=None, strict=False)


@SETTINGS
@given(_changes(list(CALIBRATE)))
def test_calibrate_eps0(change):
    _call(amp.calibrate_eps0, **{**CALIBRATE, **change})


COMPOSE = dict(rounds=[(_mech(), 20)], delta=1e-3, eps=None, bound="upper", rel_tol=None,
               progress=None, executor=None)


@SETTINGS
@given(_changes(list(COMPOSE)), odd)
def test_compose(change, element):
    pytest.importorskip("dp_accounting")
    _call(amp.compose, **{**COMPOSE, **change})
    # odd round tuples: (mechanism, n[, sampling[, times]]) with one odd entry
    for i in range(4):
        r = [_mech(), 20, 1.0, 1]
        r[i] = element
        _call(amp.compose, rounds=[tuple(r)], delta=1e-3)


@SETTINGS
@given(odd, odd)
def test_population_delta(eps, rel_tol):
    pop = amp.Population([(10, amp.KRR(1.0, k=3)), (10, amp.KRR(2.0, k=3))])
    _call(amp.population_delta, pop=pop, eps=eps)
    _call(amp.population_delta, pop=pop, eps=0.5, rel_tol=rel_tol)
    _call(amp.Population, groups=[(eps, amp.KRR(1.0, k=3))])


CONSTRUCTORS = [(amp.KRR, dict(eps0=1.0, k=3)), (amp.RAPPOR, dict(eps0=1.0)),
                (amp.OUE, dict(eps0=1.0)), (amp.OLH, dict(eps0=1.0)), (amp.BLH, dict(eps0=1.0)),
                (amp.HadamardResponse, dict(eps0=1.0)), (amp.RAPPOR, dict(eps0=1.0, d=4)),
                (amp.OLH, dict(eps0=1.0, g=3)), (amp.Laplace, dict(eps0=1.0)),
                (amp.SquareWave, dict(eps0=1.0)), (amp.Duchi, dict(eps0=1.0)),
                (amp.PiecewiseMechanism, dict(eps0=1.0)), (amp.MatrixMechanism,
                                                           dict(P=[[0.6, 0.4], [0.4, 0.6]]))]


@SETTINGS
@given(st.sampled_from(range(len(CONSTRUCTORS))), odd)
def test_mechanism_constructors(which, value):
    cls, kw = CONSTRUCTORS[which]
    for name in kw:
        m = _call(cls, **{**kw, name: value})
        if m is not None:       # an accepted value still gives a mechanism amp can use
            _call(amp.delta, mechanism=m, n=20, eps=0.5)


# ----------------------------------------------------------------------------- the CLI
ODD_TEXT = ["nan", "inf", "-inf", "-1", "0", "1e400", "1e-400", "1e308", "0x10", "abc", "",
            " 1", "1_000", "True", "None", "[1]", "1/3", "99999999999999999999999999",
            "18446744073709551616", "2.5", "1e-320", "upper", "lower", "-", "--", "é"]
CLI_BASE = {"delta": ["delta", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "20",
                      "--eps", "0.5"],
            "epsilon": ["epsilon", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "20",
                        "--delta", "1e-3"],
            "eps0": ["eps0", "-m", "krr", "--k", "3", "--n", "20", "--eps", "0.5",
                     "--delta", "1e-3", "--rel-tol", "1e-2"],
            "sweep": ["sweep", "-m", "krr", "--k", "3", "--n", "20", "30", "--eps0", "1",
                      "--delta", "1e-3"]}
FLAGS = ["--k", "--eps0", "--n", "--eps", "--delta", "--rel-tol", "--rounds", "--sampling",
         "--bound", "--method", "--workers", "--joint", "--d", "--g", "--b", "-m"]


@SETTINGS
@given(st.sampled_from(sorted(CLI_BASE)), st.lists(st.tuples(st.sampled_from(FLAGS),
                                                             st.sampled_from(ODD_TEXT)),
                                                   min_size=1, max_size=2))
def test_cli_main(command, changes):
    from amp.cli import main
    argv = list(CLI_BASE[command])
    for flag, text in changes:
        if flag in argv:
            argv[argv.index(flag) + 1] = text
        else:
            argv += [flag, text]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            code = main(argv)
        except SystemExit as exc:          # argparse's own exit (e.g. --help): not expected
            code = exc.code
    assert code in (0, 2, 3), f"{argv}: exit {code}: {err.getvalue()[-300:]}"
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
