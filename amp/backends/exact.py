"""Exact oracle for small instances (no discretisation, no FFT, no recursion).

:func:`delta_enumerate` evaluates ``E[(G_1 + ... + G_n)_+] / n`` of Theorem 4 (or Theorem 5) by
enumerating the multinomial counts of the law's atoms. It is the independent reference the
certified backends are tested against; the cost grows like ``C(n + K - 1, K - 1)`` for ``K``
atoms, and :func:`compositions` builds the count vectors bottom-up (no recursion, so any ``n``
within :data:`MAX_COMPOSITIONS` works).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from amp.core.lazy import lazy
from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV

# scipy is imported on first use (amp.core.lazy): import amp stays fast
gammaln = lazy("scipy.special", "gammaln")

__all__ = ["MAX_COMPOSITIONS", "compositions", "n_compositions", "delta_enumerate"]

#: Largest number of count vectors :func:`delta_enumerate` accepts.
MAX_COMPOSITIONS = 5_000_000


def n_compositions(n: int, k: int) -> int:
    """Number of count vectors of ``k`` non-negative integers summing to ``n``."""
    return math.comb(n + k - 1, k - 1)


def compositions(n: int, k: int) -> np.ndarray:
    """All vectors of ``k >= 1`` non-negative integers summing to ``n >= 0``, one per row
    (a fresh array: callers may modify it)."""
    if k < 1 or n < 0:
        raise ParameterError(f"compositions need k >= 1 and n >= 0, got n={n}, k={k}")
    if n_compositions(n, k) > MAX_COMPOSITIONS:
        raise ParameterError(f"n={n} with {k} parts gives {n_compositions(n, k)} count vectors "
                             f"(max {MAX_COMPOSITIONS})")
    return _compositions_cached(n, k).copy()


@lru_cache(maxsize=64)
def _compositions_cached(n: int, k: int) -> np.ndarray:
    # choose the parts one at a time: each row with remaining r branches into r + 1 rows
    # (part 0 .. r); vectorised with a ragged arange, no recursion, work O(output)
    rows = np.zeros((1, 0), dtype=np.int64)
    rem = np.array([n], dtype=np.int64)
    for _ in range(k - 1):
        counts = rem + 1
        starts = np.cumsum(counts) - counts
        part = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        rows = np.column_stack([np.repeat(rows, counts, axis=0), part])
        rem = np.repeat(rem, counts) - part
    out = np.column_stack([rows, rem])
    out.setflags(write=False)
    return out


def delta_enumerate(law: GPARV, n: int, eps: float) -> float:
    """Exact ``E[(sum_{i<=n} G_i)_+] / n`` for the law at ``eps`` by multinomial enumeration.

    Floating-point only (log-multinomial weights, ``fsum``); relative error ~1e-13 for the
    float atoms (callers widen for the atoms' own rounding, :func:`amp.core.floats.widen`).
    Raises :class:`ParameterError` when the enumeration would exceed :data:`MAX_COMPOSITIONS`.
    """
    g, p = law.atoms(eps)
    keep = p > 0
    g, p = g[keep], p[keep]
    k = g.size
    if n_compositions(n, k) > MAX_COMPOSITIONS:
        raise ParameterError(f"exact enumeration too large: n={n} with {k} atoms gives "
                             f"{n_compositions(n, k)} count vectors (max {MAX_COMPOSITIONS})")
    C = _compositions_cached(n, k)
    s = C @ g
    pos = s > 0
    if not np.any(pos):
        return 0.0
    C = C[pos]
    logw = gammaln(n + 1) - gammaln(C + 1).sum(axis=1) + (C * np.log(p)).sum(axis=1)
    return math.fsum(np.exp(logw) * s[pos]) / n
