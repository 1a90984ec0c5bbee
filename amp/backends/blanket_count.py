"""Exact ``delta`` by conditioning on the number of blanket users (extreme ``eps0``).

When ``n * gamma`` is small the law of ``G`` is too skewed for a lattice, but few users sit on
the blanket: ``E[S_+] = sum_m P(M = m) E[(L_1 + ... + L_m)_+]`` with ``M ~ Bin(n, gamma)`` and
``L`` the blanket atoms (Lemma 2 of the paper, Balle et al.'s form), each term by exact
enumeration.
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.lazy import lazy
from amp.core.floats import TINY
from amp.core.result import Bound
from amp.core.tails import binom_chernoff_quantile, binom_log_tail_ge
from amp.backends.exact import delta_enumerate, n_compositions
from amp.backends.structured.binomial import eta
from amp.mechanisms.gparv import GPARV

# scipy is imported on first use (amp.core.lazy): import amp stays fast
stats = lazy("scipy.stats")

__all__ = ["blanket_count_delta", "MAX_COUNT_VECTORS"]

#: Largest total number of count vectors enumerated over all ``m``.
MAX_COUNT_VECTORS = 2_000_000


def blanket_count_delta(law: GPARV, n: int, eps: float) -> Bound | None:
    """Exact evaluation by conditioning on ``M ~ Bin(n, gamma)`` users on the blanket.

    The neglected ``M > m_max`` part is bounded by ``max(L_+) E[M 1{M > m_max}]`` with
    ``E[M 1{M > m}] = n gamma P(M' >= m)``, ``M' ~ Bin(n - 1, gamma)`` (Chernoff), and added to
    the upper end; the enumerated sum carries a relative ``1 +- 1e-9``. Returns ``None`` when
    the law has no off-blanket mass, ``n gamma > 40``, or the enumeration would exceed
    :data:`MAX_COUNT_VECTORS`. The result is for the float atoms (the caller widens it).
    """
    gam = law.gamma
    if law.off_mass <= 0 or n * gam > 40:
        return None
    Lv = law.a - math.exp(eps) * law.b
    pv = law.p / law.p.sum()
    k = Lv.size
    m_max = min(n, binom_chernoff_quantile(n, gam, -69.0))      # P(M >= m_max) <= e^-69
    total = sum(n_compositions(m, k) for m in range(1, m_max + 1))
    if total > MAX_COUNT_VECTORS:
        return None
    acc = []
    sub = GPARV(law.a, law.b, pv, law.eps0)
    for m in range(1, m_max + 1):
        pm = float(stats.binom.pmf(m, n, gam))
        if pm == 0.0:
            continue
        acc.append(pm * m * delta_enumerate(sub, m, eps) if m > 1
                   else pm * math.fsum(pv * np.maximum(Lv, 0.0)))
    val = math.fsum(acc) / n
    # tail: E[S_+ 1{M > m_max}] <= max(L_+) E[M 1{M > m_max}] = max(L_+) n gam P(M' >= m_max)
    tail = max(float(Lv.max()), 0.0) * gam * math.exp(binom_log_tail_ge(n - 1, gam, m_max))
    # Boost's error on the masses of M (eta grows with |m - n gam|), plus the summation's
    rel = 1e-9 + float(np.max(eta(np.arange(1, m_max + 1), n, gam)))
    upper = max(val * (1 + rel) + tail * 1.01, TINY) if Lv.max() > 0 else 0.0
    return Bound("delta", max(0.0, val * (1 - rel)), upper, "upper", "exact-blanket-count", n,
                 law.label, {"eps": eps})
