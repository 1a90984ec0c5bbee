"""The one place that touches dp-accounting's privacy loss distribution internals.

``amp.rounds`` and :func:`amp.to_pld` build, read and wrap dp-accounting's dense PLD pmfs
(``dp_accounting.pld.pld_pmf.DensePLDPmf``). dp-accounting exposes no public accessor for a
dense pmf's grid step, offset, probabilities and mass at infinity, so they are read here from
its private attributes, and nowhere else in ``amp``. The version ``amp`` is tested against is
pinned (``dp-accounting==0.6.0``, the ``rounds`` extra); :func:`check_internals` fails with a
message naming the missing attribute if a release renames one (``tests/test_pld_adapter.py``
runs it), so a new dp-accounting breaks this file only.

A dense pmf with step ``s``, offset ``k0``, probabilities ``p[0..m)`` and mass at infinity
``p_inf`` is the distribution of a privacy loss ``L`` with ``P(L = (k0 + i) s) = p[i]`` and
``P(L = inf) = p_inf``; its hockey-stick curve is ``delta(eps) = p_inf + sum_i p[i]
(1 - e^(eps - (k0 + i) s))_+``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PINNED_VERSION", "pmf_module", "pld_module", "dense_pmf", "probs", "infinity_mass",
           "lower_index", "step", "is_pessimistic", "pmf_of", "wrap", "check_internals"]

#: The dp-accounting release whose internals this module reads (the ``rounds`` extra's pin).
PINNED_VERSION = "0.6.0"

# private attributes of dp_accounting.pld.pld_pmf.DensePLDPmf read below
_DENSE_ATTRS = ("_discretization", "_infinity_mass", "_pessimistic_estimate", "_lower_loss",
                "_probs")
# private attributes of dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
_PLD_ATTRS = ("_pmf_remove", "_pmf_add", "_symmetric")


def pmf_module():
    """dp-accounting's ``pld_pmf`` module (the ``rounds`` extra; a one-line error without it)."""
    from amp.core.extras import require
    return require("dp_accounting.pld.pld_pmf", "rounds", purpose="amp.rounds (many rounds)")


def pld_module():
    """dp-accounting's ``privacy_loss_distribution`` module (the ``rounds`` extra)."""
    from amp.core.extras import require
    return require("dp_accounting.pld.privacy_loss_distribution", "rounds",
                   purpose="amp.to_pld (a dp-accounting PrivacyLossDistribution)")


def dense_pmf(step: float, lower: int, probs: np.ndarray, infinity_mass: float,
              pessimistic: bool):
    """A ``DensePLDPmf`` (public constructor): ``P(L = (lower + i) step) = probs[i]``."""
    return pmf_module().DensePLDPmf(step, lower, probs, infinity_mass, pessimistic)


def probs(pmf) -> np.ndarray:
    """The dense pmf's probabilities (its own array, not a copy)."""
    return pmf._probs


def infinity_mass(pmf) -> float:
    """The pmf's mass at ``L = +inf``."""
    return pmf._infinity_mass


def lower_index(pmf) -> int:
    """Grid index of the pmf's first probability (its loss is ``lower_index * step``)."""
    return pmf._lower_loss


def step(pmf) -> float:
    """The pmf's loss grid step (dp-accounting's ``value_discretization_interval``)."""
    return pmf._discretization


def is_pessimistic(pmf) -> bool:
    """The pmf's rounding direction (``True``: its delta curve is meant as an upper one)."""
    return pmf._pessimistic_estimate


def pmf_of(pld):
    """The dense pmf of a symmetric ``PrivacyLossDistribution`` (a ``ValueError`` for one with
    distinct add/remove pmfs, which ``amp`` never builds)."""
    if not pld._symmetric:
        raise ValueError("expected a symmetric PrivacyLossDistribution (one pmf), got one with "
                         "distinct add and remove pmfs")
    return pld._pmf_remove.to_dense_pmf()


def wrap(pmf):
    """A symmetric ``PrivacyLossDistribution`` holding ``pmf`` (public constructor)."""
    return pld_module().PrivacyLossDistribution(pmf)


def check_internals() -> None:
    """Raise ``RuntimeError`` naming what changed if the installed dp-accounting no longer has
    the private attributes this module reads (run by the tests against the pinned version)."""
    from importlib.metadata import PackageNotFoundError, version as dist_version
    pmf_mod = pmf_module()
    pmf = pmf_mod.DensePLDPmf(0.5, -1, np.array([0.25, 0.75]), 0.0, True)
    pld = wrap(pmf)
    try:
        version = dist_version("dp-accounting")
    except PackageNotFoundError:                      # pragma: no cover - vendored copy
        version = "?"
    for obj, names in ((pmf, _DENSE_ATTRS), (pld, _PLD_ATTRS)):
        for name in names:
            if not hasattr(obj, name):
                raise RuntimeError(f"dp-accounting {version}: {type(obj).__name__} has no "
                                   f"attribute {name!r} (amp/rounds/adapter.py reads it; amp is "
                                   f"tested with dp-accounting {PINNED_VERSION})")
    if not (step(pmf) == 0.5 and lower_index(pmf) == -1 and infinity_mass(pmf) == 0.0
            and is_pessimistic(pmf) is True and list(probs(pmf)) == [0.25, 0.75]
            and pmf_of(pld) is pmf):
        raise RuntimeError(f"dp-accounting {version}: DensePLDPmf's private attributes no "
                           "longer hold (step, offset, probabilities, mass at infinity) as "
                           f"amp/rounds/adapter.py expects (tested with {PINNED_VERSION})")
