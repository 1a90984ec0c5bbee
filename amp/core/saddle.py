"""Saddle-point (Bahadur-Rao) estimates: uncertified numbers used only as starting points of
searches and to size windows, never as bounds."""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import NumericalError
from amp.core.roots import brent_root

__all__ = ["saddle_theta", "log_mgf", "saddle_log_delta"]


def saddle_theta(g: np.ndarray, p: np.ndarray) -> float:
    """``theta >= 0`` with ``sum p g e^(theta g) = 0`` (0 if the mean is >= 0)."""
    if float(np.dot(p, g)) >= 0:
        return 0.0
    gmax = g.max()
    lp = np.log(p)

    def f(th: float) -> float:
        return float(np.dot(np.exp(lp + th * (g - gmax)), g))

    if f(0.0) >= 0:           # mean 0 up to rounding (exp(log p) != p): no tilt needed
        return 0.0
    hi = 1.0 / max(gmax, 1e-300)
    while f(hi) < 0:
        hi *= 2
        if hi > 1e300:
            raise NumericalError("could not locate the saddle point of the GPARV law")
    return brent_root(f, 0.0, hi, xtol=1e-300, rtol=1e-13, maxiter=500)


def log_mgf(m: np.ndarray, logq: np.ndarray, lam: float) -> float:
    """``log sum_j q_j e^(lam m_j)`` (stable)."""
    z = logq + lam * m
    zmax = z.max()
    return float(zmax + math.log(np.exp(z - zmax).sum()))


def saddle_log_delta(g: np.ndarray, p: np.ndarray, n: int, rtol: float = 1e-10) -> float:
    """Uncertified Bahadur-Rao estimate of ``log(E[(G_1 + ... + G_n)_+] / n)`` for atoms ``g``
    (probabilities ``p > 0``) with ``E[G] < 0 < max g``:
    ``M(theta)^n / (theta^2 sqrt(2 pi n) sigma_theta n)`` at the saddle point ``theta``.
    Raises ``ValueError`` if the saddle point cannot be bracketed."""
    gmax = g.max()
    lp = np.log(p)

    def f(th):
        return float(np.dot(np.exp(lp + th * (g - gmax)), g))
    th_hi = 1.0 / gmax
    while f(th_hi) < 0:
        th_hi *= 2
        if th_hi > 1e300:
            raise ValueError("saddle point out of range")
    th = brent_root(f, 0.0, th_hi, rtol=rtol)
    z = lp + th * g
    zm = z.max()
    logM = zm + math.log(np.exp(z - zm).sum())
    q = np.exp(z - logM)
    gs = g / gmax                       # scaled: g * g overflows at eps0 ~ 300
    var = float(np.dot(q, gs * gs) - np.dot(q, gs) ** 2) * gmax * gmax
    if not math.isfinite(var):
        raise ValueError("saddle-point variance is not finite")
    return n * logM - math.log(th * th * math.sqrt(2 * math.pi * n * max(var, 1e-300))) \
        - math.log(n)
