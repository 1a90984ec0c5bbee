"""Exact oracles for small instances (no discretisation, no FFT).

:func:`delta_enumerate` evaluates ``E[(G_1 + ... + G_n)_+] / n`` of Theorem 4 (or Theorem 5) by
enumerating the multinomial counts of the GPARV's atoms. It is the independent reference the
certified engine is tested against; cost grows like ``C(n + K - 1, K - 1)`` for ``K`` atoms.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .errors import ParameterError
from .gparv import GPARV

#: Largest number of count vectors :func:`delta_enumerate` accepts.
MAX_COMPOSITIONS = 5_000_000


def _compositions(n: int, k: int) -> np.ndarray:
    """All vectors of ``k`` non-negative integers summing to ``n`` (rows)."""
    if k == 1:
        return np.array([[n]], dtype=np.int64)
    out = []
    for first in range(n + 1):
        rest = _compositions(n - first, k - 1)
        out.append(np.column_stack([np.full(rest.shape[0], first, dtype=np.int64), rest]))
    return np.vstack(out)


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
