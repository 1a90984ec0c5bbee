"""The paper's Algorithm 4 *as published*: the baseline of ``bench/bench_scale.py``.

Algorithm 4 (Section 5.2) discretises the GPARV ``G`` on a grid of step ``l`` (rounding each atom
*up* to a multiple of ``l``, which makes the result an upper bound up to floating point),
convolves the whole support ``n`` times with one FFT of length the next power of two above
``n (N - 1)`` (``N`` grid points of ``G``), clips negative values, renormalises and integrates
the positive part. The published experiments use ``l = (e^eps0 - 1) / 1200``.

This is a plain numpy re-implementation written from the paper's pseudo-code and the step size
its experiments state, used only as the speed/accuracy baseline; it is *not* part of ``amp`` and
carries no certificate (floating-point noise of the full-length FFT, clipping and
renormalisation are not accounted for).

``memory_bytes(law, n, eps, eps0)`` predicts the working memory (three complex arrays of the
FFT length) so the bench can skip cells that would not fit.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft

from amp.mechanisms.gparv import GPARV

STEPS_PER_UNIT = 1200       # l = (e^eps0 - 1) / 1200 in the published experiments


def grid_step(eps0: float) -> float:
    return math.expm1(eps0) / STEPS_PER_UNIT


def _discretise(law: GPARV, eps: float, step: float) -> tuple[np.ndarray, int]:
    g, p = law.atoms(eps)
    keep = p > 0
    k = np.ceil(g[keep] / step).astype(np.int64)        # round every atom up to the grid
    start = int(k.min())
    vec = np.zeros(int(k.max()) - start + 1)
    np.add.at(vec, k - start, p[keep])
    return vec / vec.sum(), start


def fft_length(law: GPARV, n: int, eps: float, eps0: float) -> int:
    vec, _ = _discretise(law, eps, grid_step(eps0))
    return 1 << int(n * (len(vec) - 1)).bit_length()


def memory_bytes(law: GPARV, n: int, eps: float, eps0: float) -> int:
    """Working memory of one evaluation: about three complex128 arrays of the FFT length."""
    return 3 * 16 * fft_length(law, n, eps, eps0)


def delta_published(law: GPARV, n: int, eps: float, eps0: float) -> float:
    """One evaluation of ``delta(eps)`` by the published Algorithm 4 (no certificate)."""
    step = grid_step(eps0)
    vec, start = _discretise(law, eps, step)
    N = len(vec)
    L = 1 << int(n * (N - 1)).bit_length()
    spec = sfft.fft(vec, n=L)
    conv = sfft.ifft(spec ** n).real
    del spec
    np.maximum(conv, 0.0, out=conv)
    conv /= conv.sum()
    # index j of the n-fold sum is the grid value (j + n * start) * step
    j0 = max(0, -n * start)
    vals = (np.arange(j0, n * (N - 1) + 1) + n * start) * step
    return float(np.dot(vals, conv[j0:n * (N - 1) + 1])) / n
