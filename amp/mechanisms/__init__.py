"""Mechanism layer: local randomizers and their GPARV laws (the protocol and matrices in
:mod:`amp.mechanisms.base`, Table 1 rows and finite forms in :mod:`amp.mechanisms.table1`, joint
compositions, subsampling, the name registry)."""
from amp.mechanisms.base import (Blanket, MatrixMechanism, Mechanism,  # noqa: F401
                                 blanket_of_matrix, lower_law_from_matrix, matrix_eps0,
                                 pair_law_from_matrix, validate_matrix)
from amp.mechanisms.gparv import GPARV  # noqa: F401
from amp.mechanisms.mixture import Mixture, Population, Void  # noqa: F401
from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave  # noqa: F401
from amp.mechanisms.table1 import BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse  # noqa: F401
