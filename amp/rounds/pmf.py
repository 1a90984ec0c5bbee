"""Certified arithmetic on dense privacy loss distributions: compose, pad, repair, read eps.

Every operation :mod:`amp.rounds` applies to a dp-accounting dense pmf (through
:mod:`amp.rounds.adapter`, the only place that reads dp-accounting's internals) lives here, each
with the bound on its floating-point error:

* :func:`self_compose` / :func:`compose_all`: dp-accounting's convolutions, each returning the
  bound (:func:`fft_pad`, the smaller :func:`self_compose_pad` for a self-composition) that every
  delta read off the result must be raised (upper side) or lowered (lower side) by; the tail
  truncation of dp-accounting's self-composition (:data:`TRUNCATION`) is added by the caller;
* :func:`check_compose_memory`: the transforms' memory, checked before they exist;
* :func:`convex_minorant` and :func:`repair`: steps 2-3 of the package docstring (the greatest
  convex minorant of certified points; the connect-the-dots masses made exact);
* :func:`eps_upper` / :func:`eps_lower`: a pmf's eps at a delta, rounded to the safe side and
  verified.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core import memory
from amp.core import validate as V
from amp.core.errors import NumericalError
from amp.core.floats import U
from amp.rounds import adapter as A

__all__ = ["TRUNCATION", "self_compose", "compose_all", "compose_pmf", "pmf_epsilon_upper",
           "self_compose_pad", "fft_pad", "check_compose_memory", "convex_minorant", "repair",
           "eps_upper", "eps_lower"]

#: Truncated tail mass of dp-accounting's self-composition.
TRUNCATION = 1e-15


def self_compose_pad(probs: np.ndarray, times: int, truncation: float = 1e-15) -> float:
    """Bound on the change of any delta from the floating-point error of dp-accounting's
    ``self_convolve`` of ``probs`` (``ifft(fft(p, L)^T)``, ``L`` its FFT length), sharper than
    ``amp.rounds.fft_pad`` for many rounds because it looks at the transform itself.

    Model (element-wise, the form of ``amp.rounds.fft_pad``'s for one output): each computed value of
    a length-``L`` FFT is within ``e = 10 log2(L) u |p|_1`` of the exact one (every output sums
    the inputs with unit weights through ``log2 L`` rounded butterfly levels). With
    ``m_k = |fl(FFT p)_k| + 2e`` (we recompute the transform; dp-accounting's is within ``e`` of
    the exact one, as ours is), the ``T``-th power's error is at most
    ``E_k = T e m_k^(T-1) + r_k m_k^T``, ``r_k = 4u (T (|log m_k| + pi) + 2 log2 T + 4)`` for
    the rounding of the power itself (by repeated multiplication or ``exp(T log)``). The inverse
    transform's L1 error is at most ``|E|_2`` (``|ifft v|_1 <= sqrt(L) |ifft v|_2 = |v|_2``) plus
    its own rounding, ``10 log2(L) u sum_k m_k^T``. Far from frequency 0, ``m_k^(T-1)`` is tiny,
    which is what ``amp.rounds.fft_pad``'s norm-wise model cannot see; the larger of ``m_k`` and 1 is
    never exceeded. Checked against a longdouble convolution (``tests/test_assumptions.py``)."""
    from scipy import fft as sfft
    from dp_accounting.pld import common
    p = np.asarray(probs, dtype=float)
    T = int(times)
    lo, hi = common.compute_self_convolve_bounds(p, T, truncation)
    L = sfft.next_fast_len(max(hi - lo + 1, p.size))
    lg = math.log2(max(L, 2))
    e = 10 * lg * U * float(np.sum(np.abs(p))) * 1.01
    m = np.minimum(np.abs(sfft.fft(p, L)) + 2 * e, 1.0 + 2 * e)
    with np.errstate(divide="ignore", under="ignore"):
        lm = np.log(m)
        mt1 = np.exp((T - 1) * lm)
    r = 4 * U * (T * (np.abs(lm) + math.pi) + 2 * math.log2(T) + 4)
    E = T * e * mt1 + r * mt1 * m
    return float(np.sqrt(np.sum(E * E)) + 10 * lg * U * np.sum(mt1 * m) * 1.01) * 1.01


def fft_pad(size: int, times: int, l2: float) -> float:
    """Bound on the change of any delta from the floating-point error of one dp-accounting
    self-composition (``ifft(fft(p)^T)`` of length ``size``, ``|p|_2 = l2``) or, for
    ``times = 1``, one ``fftconvolve``: ``sqrt(L) |err|_2`` with the L2 model of the FFT."""
    L = max(int(size), 2)
    lg = math.log2(L)
    err2 = U * (10 * lg * (times + 2) * l2 * 1.01 + 4 * times + 10 * lg + 2)
    return math.sqrt(L) * err2


def check_compose_memory(probs: np.ndarray, times: int, truncation: float) -> None:
    """Refuse (:func:`amp.core.memory.check`) a self-composition whose FFT would not fit: the
    complex transforms, their power, the inverse and the pad's own transform, ~100 B/point."""
    from dp_accounting.pld import common
    from scipy import fft as sfft
    lo, hi = common.compute_self_convolve_bounds(probs, times, truncation)
    L = sfft.next_fast_len(max(hi - lo + 1, len(probs)))
    memory.check(100.0 * L, f"composing {times} rounds over {L:,} loss grid points")


def convex_minorant(t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Greatest convex minorant of ``{(0, 1)} U {(t_i, u_i)}``, evaluated at ``t``."""
    xs = np.concatenate([[0.0], t])
    ys = np.concatenate([[1.0], u])
    hull: list[int] = []
    for i in range(xs.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            # drop i1 if it lies on or above the segment i0 -> i
            if (ys[i1] - ys[i0]) * (xs[i] - xs[i0]) >= (ys[i] - ys[i0]) * (xs[i1] - xs[i0]):
                hull.pop()
            else:
                break
        hull.append(i)
    out = np.interp(xs, xs[hull], ys[hull])[1:]
    return np.minimum(np.maximum(out, 0.0), u)


def repair(pmf, ks, d, step, sparse: bool = False):
    """Clip negative rounding residues, measure the shortfall of the pmf's curve below the
    points ``d`` at the grid (the curve is piecewise linear in ``e^eps`` between them, so the
    grid is where to look) and cover it: scale the finite masses by ``1 - s`` and move ``s``
    times their total to infinity, which raises the curve by ``s (total - delta_finite(eps))``.
    The margin for the rounding of the measurement is ``4 u (m + 4)``, ``m`` the number of
    summed masses: the pmf's length, or with ``sparse`` its nonzero masses (a zero adds
    nothing and no rounding to dp-accounting's running sums)."""
    probs = np.maximum(np.asarray(A.probs(pmf), dtype=float), 0.0)
    inf = float(A.infinity_mass(pmf))
    lower = int(A.lower_index(pmf))
    dense = A.dense_pmf(step, lower, probs, inf, True)
    got = np.asarray(dense.get_delta_for_epsilon(np.asarray(ks * step, dtype=float)))
    terms = int(np.count_nonzero(probs)) if sparse else probs.size
    short = max(float(np.max(d - got)), 0.0) + 4 * U * (terms + 4)
    total = float(probs.sum())
    room = total - float(np.max(got - inf))
    if room <= 100 * short:
        raise NumericalError("connect-the-dots PLD: cannot absorb the rounding shortfall")
    s = short / room * (1 + 1e-6)
    # total mass 1 (the curve at eps -> -inf): a rounding deficit goes to infinity as well
    deficit = max(0.0, 1.0 - total - inf) + 4 * U
    return A.dense_pmf(step, lower, probs * (1 - s), inf + s * total + deficit, True)


def eps_upper(pmf, target: float, asked: float | None = None) -> float:
    """Smallest eps (rounded up) with the pmf's delta ``<= target`` (verified); ``asked``: the
    delta the user asked (``target`` is it minus the error pad), quoted in the refusal."""
    e = float(pmf.get_epsilon_for_delta(target))
    if not math.isfinite(e):
        asked = target if asked is None else asked
        raise NumericalError(f"the composed bound never reaches delta = {asked:g}: its mass at "
                             f"infinity is {float(A.infinity_mass(pmf)):.3g}, plus an error "
                             f"pad of {asked - target:.3g}; use fewer rounds or a larger delta")
    e = e * (1 + 1e-9) + 1e-12
    for _ in range(60):
        if float(pmf.get_delta_for_epsilon(e)) * (1 + 8 * U * pmf.size) <= target:
            return e
        e = e * (1 + 1e-6) + 1e-9
    raise NumericalError("could not verify the composed eps")   # pragma: no cover


def eps_lower(pmf, target: float) -> float:
    """An eps below which the pmf's delta exceeds ``target`` (rounded down, verified)."""
    e = float(pmf.get_epsilon_for_delta(target))
    if not math.isfinite(e) or e <= 0:
        return 0.0
    e = e * (1 - 1e-9) - 1e-12
    for _ in range(60):
        if e <= 0:
            return 0.0
        if float(pmf.get_delta_for_epsilon(e)) * (1 - 8 * U * pmf.size) > target:
            return e
        e = e * (1 - 1e-6) - 1e-9
    return 0.0


def self_compose(pmf, times: int):
    """``pmf`` composed ``times`` times and the pad of that step (the smaller of
    :func:`self_compose_pad` and :func:`fft_pad`; both are bounds)."""
    if times == 1:
        return pmf, 0.0
    probs = A.probs(pmf)
    size = len(probs) * times
    check_compose_memory(probs, times, TRUNCATION)
    out = pmf.self_compose(times, tail_mass_truncation=TRUNCATION)
    return out, min(fft_pad(size, times, float(np.linalg.norm(probs))),
                    self_compose_pad(probs, times))


def compose_all(pmfs: list[tuple[object, int]]):
    """Compose ``[(pmf, times), ...]``; returns the pmf and the total floating-point pad."""
    acc, pad = None, 0.0
    for pmf, times in pmfs:
        p, e = self_compose(pmf, times)
        pad += e
        if acc is None:
            acc = p
        else:
            pad += fft_pad(len(A.probs(acc)) + len(A.probs(p)), 1, 1.0)
            acc = acc.compose(p)
    return acc, pad


def compose_pmf(pmf, times: int):
    """``times``-fold composition of a one-round PLD pmf (dp-accounting's convolution), with
    the bound on its floating-point and truncation error: ``(pmf, pad)``; every delta read off
    the result must be raised by ``pad`` (used by baselines composed the same way)."""
    out, pad = self_compose(pmf, times)
    return out, pad + TRUNCATION


def pmf_epsilon_upper(pmf, delta: float, pad: float) -> float:
    """Certified upper eps of a pessimistic composed pmf at ``delta`` (its error ``pad``
    accounted for; :class:`NumericalError` when ``delta`` is within it)."""
    d = V.probability_open("delta", delta)
    if pad >= 0.5 * d:
        raise NumericalError(f"delta = {d:g} is within the floating-point error bound "
                             f"{pad:.3g} of the composed PLD; ask for a larger delta")
    return eps_upper(pmf, d - pad, d)
