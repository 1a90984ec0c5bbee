"""Small computations that exist only to be drawn in the book; none of them is a bound.

* :func:`algorithm4_delta`: the paper's Algorithm 4 as published (round every atom up to the
  grid, FFT, integrate) and the same lattice computation with ``amp``'s mean-preserving
  rounding, *uncertified*, for the discretisation-error figure of Chapter 5. Use
  :func:`amp.delta` (or :func:`amp.backends.dispatch.delta_bracket` for one law) for numbers that
  matter;
* :func:`simulate_shuffle` and :func:`empirical_divergence`: a seeded Monte Carlo run of a
  shuffled protocol and the plug-in estimate of its hockey-stick divergence (Chapter 2). The
  estimate is an illustration, never a bound;
* :func:`clone_pair_table`: the standard clone reduction pair of Theorem 3 by enumeration
  (Chapter 3), small ``n`` only.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
from scipy import fft as sfft

from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV

__all__ = ["algorithm4_delta", "simulate_shuffle", "empirical_divergence", "clone_pair_table"]


def algorithm4_delta(law: GPARV, n: int, eps: float, grid_step: float,
                     rounding: str = "up") -> float:
    """Lattice value ``E[(sum of n discretised G)_+] / n`` (Algorithm 4), *uncertified*.

    ``rounding="up"``: the paper's rule, every atom ``g`` moved to ``l * ceil(g / l)``; an upper
    bound with error up to ``n * l`` (Section 5.2). ``rounding="mean"``: ``amp``'s rule, ``g``
    split between the two neighbouring grid points keeping its mean; an upper bound by Jensen's
    inequality with an error of order ``l^2``. The ``n``-fold convolution is one FFT as in
    Algorithm 4 (float64, no error control): for the discretisation-error figure only.
    """
    if rounding not in ("up", "mean"):
        raise ParameterError(f"rounding must be 'up' or 'mean', got {rounding!r}")
    if not grid_step > 0:
        raise ParameterError(f"grid_step must be > 0, got {grid_step!r}")
    g, p = law.atoms(eps)
    x = g / grid_step
    if rounding == "up":
        idx, w = np.ceil(x - 1e-9).astype(np.int64), p
    else:
        lo = np.floor(x + 1e-9)
        frac = np.clip(x - lo, 0.0, 1.0)
        idx = np.concatenate([lo, lo + 1]).astype(np.int64)
        w = np.concatenate([p * (1 - frac), p * frac])
    base = int(idx.min())
    span = int(idx.max()) - base
    pmf = np.zeros(span + 1)
    np.add.at(pmf, idx - base, w)
    size = sfft.next_fast_len(n * span + 1, real=True)
    conv = sfft.irfft(sfft.rfft(pmf, size) ** n, size)[: n * span + 1]
    k = n * base + np.arange(n * span + 1)
    pos = k > 0
    return float(np.dot(k[pos] * grid_step, np.maximum(conv[pos], 0.0))) / n


def simulate_shuffle(P: np.ndarray, dataset: Sequence[int], trials: int,
                     seed: int) -> np.ndarray:
    """Seeded Monte Carlo run of the shuffled protocol ``S(R(x_1), ..., R(x_n))``.

    Each of ``trials`` runs draws ``y_i ~ P[x_i]`` for every user and keeps only the multiset of
    reports, i.e. the histogram over the outputs (what the shuffler reveals). The reports of
    the users who share an input are drawn together as one multinomial histogram (the same
    law). Returns an integer array of shape ``(trials, number of outputs)``.
    """
    M = np.asarray(P, dtype=float)
    rng = np.random.default_rng(seed)
    xs, mult = np.unique(np.asarray(dataset, dtype=int), return_counts=True)
    counts = np.zeros((int(trials), M.shape[1]), dtype=np.int64)
    for x, c in zip(xs, mult):
        counts += rng.multinomial(int(c), M[x] / M[x].sum(), size=int(trials))
    return counts


def empirical_divergence(counts0: np.ndarray, counts1: np.ndarray,
                         eps: float | Iterable[float]) -> np.ndarray:
    """Plug-in estimate ``sum_h (f0(h) - e^eps f1(h))_+`` from two samples of histograms.

    ``f0``, ``f1`` are the empirical frequencies of each histogram (rows of the two samples).
    An *estimate* for illustration: it is biased upwards (the positive part of noisy
    differences) and certifies nothing.
    """
    both = np.vstack([counts0, counts1]).astype(np.int64)
    radix = int(both.max()) + 1
    if both.shape[1] * math.log2(radix) < 62:      # one integer key per histogram (fast)
        keys = both @ (radix ** np.arange(both.shape[1], dtype=np.int64))
        _, inv = np.unique(keys, return_inverse=True)
    else:
        _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    m = int(inv.max()) + 1
    f0 = np.bincount(inv[: len(counts0)], minlength=m) / len(counts0)
    f1 = np.bincount(inv[len(counts0):], minlength=m) / len(counts1)
    ee = np.exp(np.atleast_1d(np.asarray(eps, dtype=float)))
    return np.maximum(f0[None, :] - ee[:, None] * f1[None, :], 0.0).sum(axis=1)


def clone_pair_table(n: int, eps0: float) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Standard clone reduction pair ``(P0^C, P1^C)`` of Theorem 3 by enumeration.

    ``C ~ Bin(n-1, e^-eps0)``, ``A ~ Bin(C, 1/2)``, ``Delta ~ Bern(e^eps0/(e^eps0+1))``;
    ``P0^C = (A + Delta, C - A + 1 - Delta)``, ``P1^C = (A + 1 - Delta, C - A + Delta)``.
    Returns the outcomes ``(u, v)`` and their probabilities under both (``1 <= n <= 400``).
    """
    from scipy import stats

    if not 1 <= int(n) <= 400:
        raise ParameterError(f"n must be in [1, 400] for the enumeration, got {n}")
    E = math.exp(eps0)
    alpha = E / (E + 1)
    P0: dict[tuple[int, int], float] = {}
    P1: dict[tuple[int, int], float] = {}
    for c in range(n):
        pc = float(stats.binom.pmf(c, n - 1, 1 / E)) if n > 1 else 1.0
        pa = pc * stats.binom.pmf(np.arange(c + 1), c, 0.5)
        for a in range(c + 1):
            for d, w in ((1, alpha), (0, 1 - alpha)):
                k0 = (a + d, c - a + 1 - d)
                k1 = (a + 1 - d, c - a + d)
                P0[k0] = P0.get(k0, 0.0) + pa[a] * w
                P1[k1] = P1.get(k1, 0.0) + pa[a] * w
    keys = sorted(set(P0) | set(P1))
    return keys, np.array([P0.get(k, 0.0) for k in keys]), np.array([P1.get(k, 0.0) for k in keys])
