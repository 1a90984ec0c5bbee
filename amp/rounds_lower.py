"""The lower side of a composed bound: ``T`` rounds of one Theorem 5 dataset pair, bracketed.

One round, ``bound="lower"``: the bracket encloses the exact ``eps(delta)`` (or ``delta(eps)``)
of Theorem 5's explicit dataset pair ``X0 = (x0, x2, ..., x2)``, ``X1 = (x1, x2, ..., x2)``,
and ``value`` (its lower end) is certified below the true privacy curve of the shuffled
mechanism. Many rounds, the same thing composed: the pair run in every one of the ``T`` rounds
(the same inputs every round) is one instance of the ``T`` rounds, so the exact composed
``eps(delta)`` of that pair is at most the true composed ``eps(delta)``. Its histogram is
post-processed to the counts of three groups of outputs (:mod:`amp.rounds`: ``a > b``,
``a < b``, ``a = b``; exact for k-RR), which only lowers a divergence. :func:`compose_lower`
returns ``[lower, upper]`` enclosing the exact composed value of this (lumped) pair:

* ``lower``: the *optimistic* PLD of :mod:`amp.rounds` (losses rounded down to the grid, the
  mass outside the enumerated window dropped, masses scaled down), composed, inverted at
  ``delta + pad`` -- the same number as the lower end of the ``bound="upper"`` bracket;
* ``upper``: the smaller of two valid upper ends. (a) A *pessimistic* PLD of the same pair on
  the same grid (losses rounded up, masses scaled up by the floating-point error of their
  computation, the mass outside the window and every atom with ``X1 = 0`` at infinity),
  composed (dp-accounting's tail truncation of a pessimistic pmf goes to infinity), inverted
  at ``delta - pad``. (b) The upper end of ``bound="upper"`` (Theorem 4's dominating pairs
  composed, :func:`amp.rounds.compose`): the pair's exact value is below the true one, which is
  below that. (a) is the narrower for a few rounds; over many rounds the floating-point
  allowance (a) moves to infinity in every round adds up and (b) is the narrower.

``pad`` bounds the floating-point error of the FFT compositions (:func:`amp.rounds.fft_pad`) and
the truncated tails. The width is about ``T`` grid steps in ``eps`` (each loss rounded both
ways): the step is ``1e-3 / T`` (:mod:`amp.rounds`), so about ``1e-3`` in ``eps``.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from amp import pld_adapter as A
from amp import rounds as R
from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.lazy import lazy
from amp.core.result import Bound
from amp.mechanisms.base import Mechanism
from amp.mechanisms.gparv import GPARV

__all__ = ["compose_lower", "pair_pmf_pessimistic"]

gammaln = lazy("scipy.special", "gammaln")   # imported on first use

U = 2.0 ** -53


def pair_pmf_pessimistic(law: GPARV, n: int, step: float):
    """Pessimistic dense PLD of the lumped Theorem 5 pair of ``law`` (module docstring): its
    hockey-stick curve is ``>=`` the pair's exact curve at every ``eps``."""
    loss, mass, _ = R._explicit_pair_losses(law, n)
    raw = mass / (1 - 1e-9)                        # undo the optimistic scaling
    pis = np.array([g[0] for g in R._groups(law)])
    pis = pis / pis.sum()
    # |error of log mass| <= 16 u (sum of the magnitudes of its terms): gammaln(n + 1), the
    # gammaln(h + 1) (their sum <= gammaln(n + 1)), h log pi and log(x0 / n)
    mag = 2 * float(gammaln(n + 1.0)) + n * float(np.sum(np.abs(np.log(pis[pis > 0])))) \
        + math.log(n + 1.0) + 100
    r = math.expm1(16 * U * mag)
    idx = np.ceil((loss + 1e-12 * (np.abs(loss) + 1)) / step).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=raw * (1 + r))
    inside = float(np.sum(raw)) * (1 - r) * (1 - 4 * U * (raw.size + 4))
    inf = max(0.0, 1.0 - inside) + 4 * U
    return A.dense_pmf(step, lo, probs, min(inf, 1.0), True)


def _pmfs(rounds: list) -> tuple[object, float, object, float]:
    """The optimistic composed pmf (:func:`amp.rounds._lower_pmfs`, unchanged) and the
    pessimistic one of the same pair on the same grid, each with its pad."""
    low, pad_low = R._lower_pmfs(rounds)
    fixed = len(rounds) > 1 and not all(r.randomizer.symmetric for r in rounds)
    profs = [R.ComposableProfile(r.mechanism, r.n, r.sampling, (0, 1) if fixed else None)
             for r in rounds]
    step = A.step(low)
    laws = [(p.lower_laws()[0], r) for p, r in zip(profs, rounds)]
    if any(R._pair_is_reduced(law, r.n) for law, r in laws):
        # large n: the pair's losses are the reduced pair's, rounded down (amp.pld_lower),
        # not a basis for a pessimistic PLD; the upper end is then Theorem 4's alone (b)
        return low, pad_low, None, math.inf
    pess = [(pair_pmf_pessimistic(law, r.n, step), r.times) for law, r in laws]
    high, pad_high = R._compose_all(pess)
    return low, pad_low, high, pad_high + 2 * R.TRUNCATION * len(rounds)


def compose_lower(rounds: Iterable[object], *, delta: float | None = None,
                  eps: float | None = None, points: int = R.GRID_POINTS) -> Bound:
    """Certified bracket of the composed ``eps(delta)`` (give ``delta``) or ``delta(eps)``
    (give ``eps``) of one Theorem 5 dataset pair run in every round (module docstring).

    ``rounds`` as in :func:`amp.rounds.compose`. Returns a :class:`~amp.core.result.Bound`
    with ``bound="lower"``: ``value`` (the lower end, the same number as the lower end of
    :func:`amp.rounds.compose`'s bracket) is below the true composed value; the bracket
    encloses the pair's exact composed value.
    """
    single = isinstance(rounds, R.Round) or (isinstance(rounds, tuple) and bool(rounds)
                                             and isinstance(rounds[0], Mechanism))
    if single or isinstance(rounds, (str, bytes)) or not hasattr(rounds, "__iter__"):
        raise ParameterError("rounds must be a list of amp.Round or of tuples "
                             f"(mechanism, n[, sampling[, times]]), got {V.show(rounds)[:60]}")
    rs = [R._as_round(r) for r in rounds]
    if not rs:
        raise ParameterError("rounds must not be empty")
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (for eps) or eps (for delta)")
    low, pad_low, high, pad_high = _pmfs(rs)
    # the same upper PLD as amp.rounds.compose (points placed for the same question)
    up, pad_up = R._upper_pmf(
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
        e_hi = R._eps_upper(up, d - pad_up)
        if high is not None:
            e_hi = min(e_hi, R._eps_upper(high, d - pad_high))
        e_lo = min(R._eps_lower(low, d + pad_low), e_hi)
        return Bound("eps", e_lo, e_hi, "lower", method, n, R._describe(rs), {"delta": d},
                     details=info)
    e = V.eps_value(eps)
    d_hi = min(1.0, float(up.get_delta_for_epsilon(e)) * (1 + 8 * U * up.size) + pad_up)
    if high is not None:
        d_hi = min(d_hi, float(high.get_delta_for_epsilon(e)) * (1 + 8 * U * high.size)
                   + pad_high)
    d_lo = max(0.0, float(low.get_delta_for_epsilon(e)) * (1 - 8 * U * low.size) - pad_low)
    return Bound("delta", min(d_lo, d_hi), d_hi, "lower", method, n, R._describe(rs),
                 {"eps": e}, details=info)
