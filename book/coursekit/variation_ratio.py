"""The variation-ratio numbers of Wang et al. (book material, NOT part of ``amp``: uncertified).

Wang, Peng, Li, Wen, Li, Yu, Wang and Yang, "Privacy Amplification via Shuffling: Unified,
Simplified, and Tightened" (PVLDB 17(8), 2024; arXiv:2304.05007) summarise a randomizer by three
numbers ``(p, beta, q)``: ``p`` bounds the ratio of the densities of two inputs
(``p = e^eps0``), ``beta`` bounds their total variation distance, and ``q`` bounds the ratio of
the density of an input of the pair to that of any other input. From these they build a pair
of distributions on two counts and report ``D_{e^eps}(P0 || P1)`` as the shuffled ``delta``:

* ``alpha = beta / (p - 1)``, ``r = alpha p / q``;
* the first user (the victim) adds one to the first count w.p. ``p alpha``, to the second
  w.p. ``alpha``, and to neither w.p. ``w0 = 1 - alpha - p alpha`` (its *left-over*) under
  ``P0``; ``P1`` swaps the first two;
* each of the other ``n - 1`` users adds one to the first count w.p. ``r``, to the second
  w.p. ``r``, to neither w.p. ``1 - 2r``.

This is the pair of the "stronger clone" of Feldman, McMillan and Talwar (SODA 2023) with clone
probability ``2r`` (:mod:`amp.baselines.stronger_clone`). Its divergence is computed here with
``amp``'s exact clone engine (:func:`amp.baselines.clone.clone_family_delta`: binomial survival
functions, tails bounded), so the *number* is the pair's divergence to the stated tolerance.
Whether that number bounds the shuffled mechanism is another matter:

Conditions of validity
----------------------
1. ``(p, beta, q)`` must hold for the randomizer: every pair's density ratio at most ``p``,
   every pair's total variation at most ``beta``, and ``q`` as above.
2. The reduction to the pair must be valid. Su, Cheng and Wang (the paper this book follows,
   Section 3.3) show that the post-processing step of the stronger clone, on which the
   variation-ratio reduction rests, fails when the victim has a left-over (``w0 > 0``): the
   left-over is mixed with the other users' left-overs. Without a left-over (``w0 = 0``, i.e.
   ``beta = (p - 1)/(p + 1)``) the pair is a standard clone pair and the clone argument applies
   when every other user's distribution contains ``r`` times each clone component.

:func:`has_leftover` tells which case a parameter triple is in. Every function here returns
``certified=False``; the book prints these numbers beside ``amp``'s certified ones, never as
bounds.
"""

from __future__ import annotations

import math

import numpy as np

from amp.baselines._search import invert_delta
from amp.baselines.clone import DEFAULT_TAIL_MASS, clone_family_delta
from amp.core.errors import ParameterError

__all__ = ["published_parameters", "vr_pair", "has_leftover", "vr_delta", "vr_epsilon",
           "VRNumber"]


def published_parameters(randomizer: str, eps0: float) -> tuple[float, float, float]:
    """``(p, beta, q)`` as published by Wang et al. for ``randomizer`` at ``eps0``.

    ``"piecewise"`` (and ``"laplace"``): ``beta = 1 - e^(-eps0/2)``; ``"duchi"`` and
    ``"general"`` (any eps0-LDP randomizer): ``beta = (e^eps0 - 1)/(e^eps0 + 1)``; always
    ``p = q = e^eps0``.
    """
    if not (isinstance(eps0, (int, float)) and 0 < eps0 < 50):
        raise ParameterError(f"eps0 must be in (0, 50), got {eps0!r}")
    E = math.exp(eps0)
    betas = {"piecewise": -math.expm1(-eps0 / 2), "laplace": -math.expm1(-eps0 / 2),
             "duchi": math.expm1(eps0) / (E + 1), "general": math.expm1(eps0) / (E + 1)}
    if randomizer not in betas:
        raise ParameterError(f"randomizer must be one of {sorted(betas)}, got {randomizer!r}")
    return E, betas[randomizer], E


def vr_pair(p: float, beta: float, q: float) -> tuple[float, float, float, float]:
    """``(clone_prob, w1, w2, w0)`` of the pair: the other users' probability ``2r`` of adding to
    a count, the victim's ``p alpha``, ``alpha`` and left-over ``1 - alpha - p alpha``."""
    if not (p > 1 and 0 < beta <= 1 and q >= 1):
        raise ParameterError(f"need p > 1, 0 < beta <= 1, q >= 1; got {(p, beta, q)}")
    alpha = beta / (p - 1)
    w0 = 1 - alpha - p * alpha
    r = alpha * p / q
    if w0 < -1e-12 or 2 * r > 1 + 1e-12:
        raise ParameterError(f"(p, beta, q) = {(p, beta, q)} gives no distribution "
                             f"(left-over {w0:.3g}, 2r = {2 * r:.3g})")
    return min(2 * r, 1.0), p * alpha, alpha, max(w0, 0.0)


def has_leftover(p: float, beta: float, q: float, tol: float = 1e-12) -> bool:
    """True when the victim has a left-over (``w0 > 0``): outside the proven case."""
    return vr_pair(p, beta, q)[3] > tol


def vr_delta(p: float, beta: float, q: float, n: int, eps: float) -> tuple[float, float]:
    """Bracket ``(lower, upper)`` of ``D_{e^eps}(P0 || P1)`` of the pair (the VR "delta")."""
    clone_prob, w1, w2, w0 = vr_pair(p, beta, q)
    if eps >= math.log(p):
        return 0.0, 0.0
    lo, up = clone_family_delta(int(n), clone_prob, w2, math.log(p), w0,
                                np.array([float(eps)]), DEFAULT_TAIL_MASS)
    return float(lo[0]), float(up[0])


class VRNumber:
    """The VR ``eps`` at ``delta``: ``lower <= eps_pair <= upper`` for the pair's exact crossing;
    ``value`` is ``upper``. ``certified`` is always False (see the module docstring)."""

    certified = False

    def __init__(self, lower: float, upper: float, leftover: bool) -> None:
        self.lower, self.upper, self.value, self.leftover = lower, upper, upper, leftover

    def __repr__(self) -> str:
        case = "victim has a left-over: unproven" if self.leftover else "no left-over"
        return f"VRNumber(eps in [{self.lower:.6g}, {self.upper:.6g}], uncertified, {case})"


def vr_epsilon(p: float, beta: float, q: float, n: int, delta: float,
               xtol: float = 1e-8) -> VRNumber:
    """The smallest ``eps`` at which the pair's divergence is ``<= delta`` (to ``xtol``).

    Examples
    --------
    >>> v = vr_epsilon(*published_parameters("duchi", 2.0), 10_000, 1e-6)
    >>> v.certified, v.leftover
    (False, False)
    """
    if not 0 < delta < 1:
        raise ParameterError(f"delta must be in (0, 1), got {delta!r}")
    lo, hi, _ = invert_delta(lambda e: vr_delta(p, beta, q, n, e), float(delta), math.log(p),
                             rel_tol=xtol, method="variation-ratio pair (uncertified)")
    return VRNumber(lo, hi, has_leftover(p, beta, q))
