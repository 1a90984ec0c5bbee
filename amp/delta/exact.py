"""Exact oracles for small instances (no discretisation, no FFT).

:func:`delta_enumerate` evaluates ``E[(G_1 + ... + G_n)_+] / n`` of Theorem 4 (or Theorem 5) by
enumerating the multinomial counts of the GPARV's atoms. It is the independent reference the
certified engine is tested against; cost grows like ``C(n + K - 1, K - 1)`` for ``K`` atoms.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV

#: Largest number of count vectors :func:`delta_enumerate` accepts.
MAX_COMPOSITIONS = 5_000_000


def _compositions(n: int, k: int) -> np.ndarray:
    """All vectors of ``k`` non-negative integers summing to ``n`` (rows)."""
    return _compositions_cached(n, k).copy()


@lru_cache(maxsize=256)
def _compositions_cached(n: int, k: int) -> np.ndarray:
    if k == 1:
        return np.array([[n]], dtype=np.int64)
    # rows of (n, k) = rows of (n - 1, k) with the first entry + 1, then (0, rows of (n, k-1))
    rest = _compositions_cached(n, k - 1)
    head = np.column_stack([np.zeros(rest.shape[0], dtype=np.int64), rest])
    if n == 0:
        return head
    up = _compositions_cached(n - 1, k).copy()
    up[:, 0] += 1
    return np.vstack([head, up])


def n_compositions(n: int, k: int) -> int:
    """Number of count vectors enumerated for ``n`` users and ``k`` atoms."""
    return math.comb(n + k - 1, k - 1)


def delta_enumerate(law: GPARV, n: int, eps: float) -> float:
    """Exact ``E[(sum_{i<=n} G_i)_+] / n`` for the GPARV law at ``eps`` by multinomial enumeration.

    Floating-point only (log-multinomial weights, ``fsum``); relative error ~1e-13.
    Raises :class:`ParameterError` when the enumeration would exceed :data:`MAX_COMPOSITIONS`.
    """
    g, p = law.atoms(eps)
    keep = p > 0
    g, p = g[keep], p[keep]
    k = g.size
    if n_compositions(n, k) > MAX_COMPOSITIONS:
        raise ParameterError(f"exact enumeration too large: n={n} with {k} atoms gives "
                             f"{n_compositions(n, k)} count vectors (max {MAX_COMPOSITIONS})")
    C = _compositions(n, k)
    s = C @ g
    pos = s > 0
    if not np.any(pos):
        return 0.0
    C = C[pos]
    logw = gammaln(n + 1) - gammaln(C + 1).sum(axis=1) + (C * np.log(p)).sum(axis=1)
    return math.fsum(np.exp(logw) * s[pos]) / n
