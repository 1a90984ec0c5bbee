"""Rounds composed: the certified bracket of ``eps(delta)`` (or ``delta(eps)``) after them.

:func:`compose` brackets the true composed curve of the shuffled mechanism: its upper end from
the product of the rounds' dominating connect-the-dots pairs, its lower end from one Theorem 5
dataset pair run in every round (the :mod:`amp.rounds` docstring says why each is valid).
:func:`compose_lower` brackets the composed curve of that dataset pair itself
(``bound="lower"``). :func:`epsilon_rounds`, :func:`delta_rounds` and :func:`epsilon_sweep` are
the homogeneous cases.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.mechanisms.base import Mechanism
from amp.rounds import adapter as A
from amp.rounds.lower import lower_step, pair_is_reduced, pair_pmf_pessimistic
from amp.rounds.pmf import TRUNCATION, compose_all, eps_lower, eps_upper, self_compose
from amp.rounds.profile import (GRID_POINTS, UPPER_CELLS, ComposableProfile, Round, as_round,
                                check_rounds)

__all__ = ["compose", "compose_lower", "epsilon_rounds", "delta_rounds", "epsilon_sweep",
           "parse_rounds", "upper_pmf", "lower_pmfs", "describe"]


def parse_rounds(rounds: object) -> list[Round]:
    """The list of :class:`Round` that :func:`compose` and :func:`compose_lower` take: a
    non-empty iterable of rounds or tuples ``(mechanism, n[, sampling[, times]])``, else
    :class:`ParameterError`."""
    single = isinstance(rounds, Round) or (isinstance(rounds, tuple) and bool(rounds)
                                           and isinstance(rounds[0], Mechanism))
    if single or isinstance(rounds, (str, bytes)) or not hasattr(rounds, "__iter__"):
        raise ParameterError("rounds must be a list of amp.Round or of tuples "
                             f"(mechanism, n[, sampling[, times]]), got {V.show(rounds)[:60]}")
    rs = [as_round(r) for r in rounds]
    if not rs:
        raise ParameterError("rounds must not be empty")
    return rs


def upper_pmf(rounds: list[Round], points: int, *, delta: float | None = None,
               eps: float | None = None):
    """The composed pessimistic PLD and its pad; one kind of round asked at ``delta`` (or
    ``eps``) is certified at :meth:`ComposableProfile.knots`, others at the uniform grid."""
    profs = [ComposableProfile(r.mechanism, r.n, r.sampling) for r in rounds]
    step = min(p.eps_cut for p in profs) / (UPPER_CELLS * points)
    knots = [None] * len(rounds)
    if len(rounds) == 1 and (delta is not None or eps is not None):
        knots[0] = profs[0].knots(step, points, rounds[0].times, delta=delta, eps=eps)
    acc, pad = compose_all([(p.upper_pmf(step, points, knots=kn), r.times)
                             for p, r, kn in zip(profs, rounds, knots)])
    return acc, pad + TRUNCATION


def lower_pmfs(rounds: list[Round]):
    """The optimistic composed PLD of one Theorem 5 dataset pair run in every round (the first
    law of each round; the same inputs in every round) and its pad."""
    # one dataset pair for all rounds: the inputs (x0, x1, x2) must be the same in every round;
    # heterogeneous rounds with an asymmetric mechanism use the inputs (0, 1, 2) throughout
    fixed = len(rounds) > 1 and not all(r.randomizer.symmetric for r in rounds)
    profs = [ComposableProfile(r.mechanism, r.n, r.sampling, (0, 1) if fixed else None)
             for r in rounds]
    total = sum(r.times for r in rounds)
    step = lower_step(profs, total)
    per = [p.lower_pmfs(step) for p in profs]
    pmf, pad = compose_all([(pm[0], r.times) for pm, r in zip(per, rounds)])
    return pmf, pad + 2 * TRUNCATION * len(rounds)


def describe(rounds: list[Round]) -> str:
    return "; ".join(f"{r.times} x {r.randomizer.describe()} (n={r.n})" for r in rounds)


def compose(rounds: Iterable[object], *, delta: float | None = None, eps: float | None = None,
            points: int = GRID_POINTS) -> Bound:
    """Certified ``eps(delta)`` (give ``delta``) or ``delta(eps)`` (give ``eps``) after the
    given rounds, composed adaptively; heterogeneous rounds allowed.

    ``rounds``: :class:`Round` objects or tuples ``(mechanism, n[, sampling[, times]])``.
    Returns a :class:`~amp.core.result.Bound` whose bracket ``[lower, upper]`` encloses the true
    composed value of the shuffled mechanism: ``upper`` from the dominating connect-the-dots
    pairs, ``lower`` from one Theorem 5 dataset pair run in every round (module docstring;
    the same inputs in every round: for heterogeneous rounds of an asymmetric mechanism the
    inputs ``(0, 1, 2)``, so the mechanisms must index the same input domain).
    Raises :class:`~amp.core.errors.NumericalError` when the floating-point pad reaches the
    target ``delta``.
    """
    rs = parse_rounds(rounds)
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    points = V.int_at_least("points", points, 8)
    d_ask = None if delta is None else V.probability_open("delta", delta)
    e_ask = None if eps is None else V.eps_value(eps)
    up, pad_up = upper_pmf(rs, points, delta=d_ask, eps=e_ask)
    lo_pmf, pad_lo = lower_pmfs(rs)
    total = sum(r.times for r in rs)
    desc = describe(rs)
    n = rs[0].n if len({r.n for r in rs}) == 1 else None
    info = {"rounds": total, "sampling": rs[0].sampling if len({r.sampling for r in rs}) == 1
            else None, "pad_upper": pad_up, "pad_lower": pad_lo,
            "step_upper": A.step(up), "step_lower": A.step(lo_pmf)}
    if delta is not None:
        d = V.probability_open("delta", delta)
        if pad_up >= 0.5 * d:
            raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                                 f"{pad_up:.3g} of the composed PLD; ask for a larger delta")
        e_up = eps_upper(up, d - pad_up, d)
        e_lo = eps_lower(lo_pmf, d + pad_lo)
        e_lo = min(e_lo, e_up)
        return Bound("eps", e_lo, e_up, "upper", "pld:connect-dots", n, desc,
                     {"delta": d}, details=info)
    e = V.eps_value(eps)
    d_up = min(1.0, float(up.get_delta_for_epsilon(e)) * (1 + 8 * U * up.size) + pad_up)
    d_lo = max(0.0, float(lo_pmf.get_delta_for_epsilon(e)) * (1 - 8 * U * lo_pmf.size) - pad_lo)
    return Bound("delta", min(d_lo, d_up), d_up, "upper", "pld:connect-dots", n, desc,
                 {"eps": e}, details=info)


def lower_pair_pmfs(rounds: list) -> tuple[object, float, object, float]:
    """The optimistic composed pmf (:func:`lower_pmfs`, unchanged) and the
    pessimistic one of the same pair on the same grid, each with its pad."""
    low, pad_low = lower_pmfs(rounds)
    fixed = len(rounds) > 1 and not all(r.randomizer.symmetric for r in rounds)
    profs = [ComposableProfile(r.mechanism, r.n, r.sampling, (0, 1) if fixed else None)
             for r in rounds]
    step = A.step(low)
    laws = [(p.lower_laws()[0], r) for p, r in zip(profs, rounds)]
    if any(pair_is_reduced(law, r.n) for law, r in laws):
        # large n: the pair's losses are the reduced pair's, rounded down (amp.rounds.lower),
        # not a basis for a pessimistic PLD; the upper end is then Theorem 4's alone (b)
        return low, pad_low, None, math.inf
    pess = [(pair_pmf_pessimistic(law, r.n, step), r.times) for law, r in laws]
    high, pad_high = compose_all(pess)
    return low, pad_low, high, pad_high + 2 * TRUNCATION * len(rounds)


def compose_lower(rounds: Iterable[object], *, delta: float | None = None,
                  eps: float | None = None, points: int = GRID_POINTS) -> Bound:
    """Certified bracket of the composed ``eps(delta)`` (give ``delta``) or ``delta(eps)``
    (give ``eps``) of one Theorem 5 dataset pair run in every round (:mod:`amp.rounds.lower`).

    ``rounds`` as in :func:`compose`. Returns a :class:`~amp.core.result.Bound`
    with ``bound="lower"``: ``value`` (the lower end, the same number as the lower end of
    :func:`compose`'s bracket) is below the true composed value; the bracket
    encloses the pair's exact composed value.
    """
    rs = parse_rounds(rounds)
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    low, pad_low, high, pad_high = lower_pair_pmfs(rs)
    # the same upper PLD as amp.rounds.compose (points placed for the same question)
    up, pad_up = upper_pmf(
        rs, V.int_at_least("points", points, 8),
        delta=None if delta is None else V.probability_open("delta", delta),
        eps=None if eps is None else V.eps_value(eps))
    n = rs[0].n if len({r.n for r in rs}) == 1 else None
    info = {"rounds": sum(r.times for r in rs), "pad_lower": pad_low, "pad_upper": pad_high,
            "step": A.step(low), "pair": "Theorem 5 pair (lumped), run every round"}
    method = "pld:theorem5-pair"
    if delta is not None:
        d = V.probability_open("delta", delta)
        pads = [x for x in (pad_high, pad_up) if x < math.inf]
        if max(pads) >= 0.5 * d:
            raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                                 f"{max(pads):.3g} of the composed PLD; ask for a larger delta")
        e_hi = eps_upper(up, d - pad_up)
        if high is not None:
            e_hi = min(e_hi, eps_upper(high, d - pad_high))
        e_lo = min(eps_lower(low, d + pad_low), e_hi)
        return Bound("eps", e_lo, e_hi, "lower", method, n, describe(rs), {"delta": d},
                     details=info)
    e = V.eps_value(eps)
    d_hi = min(1.0, float(up.get_delta_for_epsilon(e)) * (1 + 8 * U * up.size) + pad_up)
    if high is not None:
        d_hi = min(d_hi, float(high.get_delta_for_epsilon(e)) * (1 + 8 * U * high.size)
                   + pad_high)
    d_lo = max(0.0, float(low.get_delta_for_epsilon(e)) * (1 - 8 * U * low.size) - pad_low)
    return Bound("delta", min(d_lo, d_hi), d_hi, "lower", method, n, describe(rs),
                 {"eps": e}, details=info)


def epsilon_rounds(mechanism: Mechanism, n: int, delta: float, rounds: int, *,
                   sampling: float = 1.0, points: int = GRID_POINTS) -> Bound:
    """Certified ``eps(delta)`` after ``rounds`` adaptive rounds (:func:`compose`)."""
    return compose([Round(mechanism, n, sampling, check_rounds(rounds))], delta=delta,
                   points=points)


def delta_rounds(mechanism: Mechanism, n: int, eps: float, rounds: int, *,
                 sampling: float = 1.0, points: int = GRID_POINTS) -> Bound:
    """Certified ``delta(eps)`` after ``rounds`` adaptive rounds (:func:`compose`)."""
    return compose([Round(mechanism, n, sampling, check_rounds(rounds))], eps=eps,
                   points=points)


def epsilon_sweep(mechanism: Mechanism, n: int, delta: float, rounds: Sequence[int], *,
                  sampling: float = 1.0, points: int = GRID_POINTS) -> list[Bound]:
    """:func:`epsilon_rounds` for several numbers of rounds, building the per-round PLDs once
    (the lower PLD's step is chosen for the largest ``T``); same certificates (figures)."""
    d = V.probability_open("delta", delta)
    Ts = [check_rounds(T) for T in rounds]
    if not Ts:
        return []
    prof = ComposableProfile(mechanism, n, sampling)
    step = prof.eps_cut / (UPPER_CELLS * points)
    up1 = prof.upper_pmf(step, points)
    lo1 = prof.lower_pmfs(lower_step([prof], max(Ts)))[0]
    out = []
    for T in Ts:
        up, pad_up = self_compose(up1, T)
        lo, pad_lo = self_compose(lo1, T)
        pad_up += TRUNCATION
        pad_lo += 2 * TRUNCATION
        if pad_up >= 0.5 * d:
            raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                                 f"{pad_up:.3g} of the composed PLD; ask for a larger delta")
        e_up = eps_upper(up, d - pad_up, d)
        e_lo = min(eps_lower(lo, d + pad_lo), e_up)
        out.append(Bound("eps", e_lo, e_up, "upper", "pld:connect-dots", prof.round.n,
                         describe([Round(mechanism, n, sampling, T)]), {"delta": d},
                         details={"rounds": T, "sampling": prof.round.sampling,
                                  "pad_upper": pad_up, "pad_lower": pad_lo}))
    return out
