"""Example 6.0 of the paper, reproduced for chapter 6 (book material, not part of ``amp``).

:func:`example_6_0` builds the optimal decomposition of two-joint k-RR and checks it against the
explicit ``k^2 x k^2`` product matrix of :class:`amp.JointMechanism`. The notebooks import it as
``from coursekit.examples import example_6_0`` (the book's folder is their working directory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from amp import KRR, JointMechanism, ParameterError
from amp.core import validate as V
from amp.mechanisms.joint import MAX_MATRIX_ENTRIES

__all__ = ["example_6_0", "Example60"]


@dataclass(frozen=True)
class Example60:
    """Example 6.0: optimal decomposition of two-joint k-RR (each component ``eps0/2``-LDP).

    Component rows ``R(a) = c + (1 - 2p - q) 1_a`` with the blanket part
    ``c = p 1_{a0} + p 1_{a1} + q U`` (``U`` uniform on the other ``k - 2`` values), and the joint
    rows are Cartesian products; the joint blanket is ``c x c`` with mass ``(2p + q)^2``.
    """

    k: int
    eps0: float
    p: float                    #: ``1/(e^(eps0/2) + k - 1)``
    q: float                    #: ``(k - 2)/(e^(eps0/2) + k - 1)``
    gamma: float                #: joint blanket mass ``(2p + q)^2``
    component_blanket: np.ndarray   #: ``c`` over ``[k]`` (``a0 = 0``, ``a1 = 1``)
    matrix_error: float         #: max |product of decompositions - product matrix|
    blanket_error: float        #: max |c x c - min over joint rows of the product matrix|


def example_6_0(k: int, eps0: float) -> Example60:
    """Reproduce Example 6.0 and check it against the explicit ``k^2 x k^2`` product matrix."""
    k = V.int_at_least("k", k, 2)
    eps0 = V.eps0_value(eps0)
    if k * k * k * k > MAX_MATRIX_ENTRIES:
        raise ParameterError(f"k = {k} too large for the explicit k^2 x k^2 check")
    h = math.exp(eps0 / 2)
    p = 1.0 / (h + k - 1)
    q = (k - 2) / (h + k - 1)
    U = np.zeros(k)
    if k > 2:
        U[2:] = 1.0 / (k - 2)
    c = np.zeros(k)
    c[0] = c[1] = p
    c = c + q * U
    rows = np.array([c + (1 - 2 * p - q) * np.eye(k)[a] for a in range(k)])
    # the paper's explicit lines for a0 and a1
    e0_row = h * p * np.eye(k)[0] + p * np.eye(k)[1] + q * U
    e1_row = p * np.eye(k)[0] + h * p * np.eye(k)[1] + q * U
    comp_err = max(np.max(np.abs(rows[0] - e0_row)), np.max(np.abs(rows[1] - e1_row)))
    decomposed = np.kron(rows, rows)
    joint = JointMechanism([KRR(eps0 / 2, k=k)] * 2)
    M = joint.matrix()
    matrix_error = float(max(comp_err, np.max(np.abs(decomposed - M))))
    blanket_error = float(np.max(np.abs(np.kron(c, c) - M.min(axis=0))))
    return Example60(k=k, eps0=eps0, p=p, q=q, gamma=(2 * p + q) ** 2, component_blanket=c,
                     matrix_error=matrix_error, blanket_error=blanket_error)
