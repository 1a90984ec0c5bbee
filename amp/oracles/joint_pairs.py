"""Exact blanket deltas of every candidate pair type of a joint mechanism (Section 6), by
enumeration: the oracle that shows which pair of a joint composition is the worst."""

from __future__ import annotations

from dataclasses import dataclass

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.backends.exact import delta_enumerate
from amp.mechanisms.joint import JointMechanism

__all__ = ["SubsetDelta", "subset_deltas"]


@dataclass(frozen=True)
class SubsetDelta:
    """Exact blanket delta (Theorem 4, by enumeration) of one candidate pair type."""

    differ: tuple[int, ...]
    choice: tuple[int, ...]
    delta: float
    label: str


def subset_deltas(mech: JointMechanism, n: int, eps: float,
                  lower: bool = False) -> list[SubsetDelta]:
    """Exact delta of every candidate pair type at small ``n``, largest first.

    Uses :func:`amp.backends.exact.delta_enumerate` (so only small ``n``; for large ``n`` evaluate the
    laws of :meth:`JointMechanism.pairs` with the certified engine and take the maximum).
    ``lower=True`` evaluates the Theorem 5 pairs of :meth:`JointMechanism.lower_pairs`
    (with ``subsets=True``) instead. The first entry is the worst pair type.
    """
    if not isinstance(mech, JointMechanism):
        raise ParameterError(f"mech must be a JointMechanism, got {show(mech)}")
    n = V.users(n)
    eps = V.positive_float("eps", eps, allow_zero=True)
    pairs = mech.lower_pairs(subsets=True) if lower else mech.pairs()
    out = [SubsetDelta(jp.differ, jp.choice, delta_enumerate(jp.law, n, eps), jp.law.label)
           for jp in pairs]
    out.sort(key=lambda s: -s.delta)
    return out
