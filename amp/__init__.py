"""amp: certified privacy amplification by shuffling.

Implements "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling": the
optimal decomposition (privacy blanket) bound of Theorems 3-4 computed with a certified version
of Algorithm 4, the lower bound of Theorem 5, the baselines the paper compares with, joint
composition (Section 6) and exact oracles for small instances. The core imports only numpy and
scipy; figure helpers (:mod:`amp.viz.plots`) import matplotlib lazily.
"""

from amp import api
from amp.api import BoundResult, calibrate_eps0
from amp.delta.dispatch import DeltaResult, delta_bracket
from amp.core.errors import AmpError, NumericalError, ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.table1 import (BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse, MatrixMechanism,
                         Mechanism)
from amp.epsilon import EpsilonResult, epsilon_bracket

__version__ = "0.1.0"

__all__ = [
    "bounds", "BoundResult", "calibrate_eps0", "DeltaResult", "delta_bracket", "AmpError",
    "NumericalError", "ParameterError", "GPARV", "BLH", "KRR", "OLH", "OUE", "RAPPOR",
    "HadamardResponse", "MatrixMechanism", "Mechanism", "EpsilonResult", "epsilon_bracket",
    "__version__",
]
