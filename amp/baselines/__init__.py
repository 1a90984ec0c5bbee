"""Baseline bounds on privacy amplification by shuffling (Sections 3, 4 and 7 of the paper).

Registry
--------
:data:`BOUNDS` maps a name to a :class:`Baseline` with the uniform interface

    baseline.delta(source, n, eps)     -> Bound   (a list of Bound for an array of eps)
    baseline.epsilon(source, n, delta) -> Bound   (a list of Bound for an array of delta)

where ``source`` is ``eps0`` (a float), a :class:`~amp.mechanisms.gparv.GPARV` law or a mechanism.
Generic bounds (``clone``, ``clone-closed``, ``stronger-clone``) only use ``source.eps0``;
mechanism-specific bounds (``hoeffding``, ``bennett``) use ``mechanism.gparv_laws()`` and take
the maximum over the laws (with a float they give the generic Balle et al. bound).

===================  ==================================================================  =====
name                 bound                                                               valid
===================  ==================================================================  =====
``clone``            exact divergence of the standard clone pair (Theorem 3, FMT 2021)   yes
``clone-closed``     FMT 2021 closed form (authors' code variant; eps0 condition)        yes*
``hoeffding``        privacy blanket + Hoeffding (Balle et al. 2019)                     yes
``bennett``          privacy blanket + Bennett (Balle et al. 2019, corrected integral)   yes
``stronger-clone``   stronger clone claim (Feldman et al. 2023a) -- warns                NO
===================  ==================================================================  =====

(*) outside its validity condition the closed form certifies nothing: its ``eps(delta)``
raises :class:`~amp.core.errors.ParameterError` saying so, its ``delta(eps)`` is the trivial
``1`` with ``certified=False``.

The front door reaches every one of them: ``amp.epsilon(m, n, delta, bound="clone")`` and
``amp.delta(m, n, eps, bound="clone")`` (any name above; the CLI's ``--bound NAME``) give the
same results as the functions here.

Results are :class:`amp.core.result.Bound` objects (``bound`` = the baseline's name, ``value`` =
the upper end, the source and caveats in ``details["note"]``); see :mod:`amp.baselines._search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from amp.baselines.blanket_bounds import (bennett_delta, bennett_epsilon, hoeffding_delta,
                                          hoeffding_epsilon)
from amp.baselines.clone import clone_delta, clone_epsilon, closed_form_delta, closed_form_epsilon
from amp.baselines.general_clone import (GeneralCloneDecomposition, blanket_decomposition,
                                         general_clone_delta, merged_krr_decomposition,
                                         standard_clone_decomposition)
from amp.baselines.stronger_clone import (StrongerCloneWarning, stronger_clone_claimed_delta,
                                          stronger_clone_claimed_epsilon, stronger_clone_p)
from amp.core.result import Bound

__all__ = [
    "BOUNDS", "Baseline",
    "clone_delta", "clone_epsilon", "closed_form_delta", "closed_form_epsilon",
    "hoeffding_delta", "hoeffding_epsilon", "bennett_delta", "bennett_epsilon",
    "GeneralCloneDecomposition", "standard_clone_decomposition", "blanket_decomposition",
    "merged_krr_decomposition", "general_clone_delta",
    "StrongerCloneWarning", "stronger_clone_claimed_delta", "stronger_clone_claimed_epsilon",
    "stronger_clone_p",
]


@dataclass(frozen=True)
class Baseline:
    """A named baseline with ``delta(source, n, eps)`` and ``epsilon(source, n, delta)``.

    Attributes
    ----------
    name : str
        Registry key (also the CLI's ``--bound`` value).
    delta : callable
        ``(source, n, eps) -> Bound`` (a list of :class:`~amp.core.result.Bound` for an array).
    epsilon : callable
        ``(source, n, delta) -> Bound`` (a list for an array of ``delta``).
    generic : bool
        True when the bound depends on the randomizer only through ``eps0``.
    valid : bool
        False for claimed-but-invalid bounds (the stronger clone).
    reference : str
        Source of the bound.
    """

    name: str
    delta: Callable[..., Bound | list[Bound]]
    epsilon: Callable[..., Bound | list[Bound]]
    generic: bool
    valid: bool
    reference: str


#: The registry: baseline name (also the CLI's ``--bound`` value) -> :class:`Baseline`.
BOUNDS: dict[str, Baseline] = {
    "clone": Baseline("clone", clone_delta, clone_epsilon, True, True,
                      "Feldman, McMillan, Talwar, FOCS 2021 (Theorem 3 of the paper)"),
    "clone-closed": Baseline("clone-closed", closed_form_delta, closed_form_epsilon, True, True,
                             "Feldman, McMillan, Talwar, FOCS 2021, closed form (authors' code)"),
    "hoeffding": Baseline("hoeffding", hoeffding_delta, hoeffding_epsilon, False, True,
                          "Balle, Bell, Gascon, Nissim, CRYPTO 2019 (Hoeffding)"),
    "bennett": Baseline("bennett", bennett_delta, bennett_epsilon, False, True,
                        "Balle, Bell, Gascon, Nissim, CRYPTO 2019 (Bennett, corrected integral)"),
    "stronger-clone": Baseline("stronger-clone", stronger_clone_claimed_delta,
                               stronger_clone_claimed_epsilon, True, False,
                               "Feldman, McMillan, Talwar, SODA 2023 (claim; flawed, NOT valid)"),
}

#: Bounds whose value comes from a numerical computation with an enclosing bracket.
NUMERIC = ("clone", "stronger-clone")
