"""Mechanism layer: local randomizers and their GPARV laws (Table 1, finite forms, matrices,
joint compositions)."""
from amp.mechanisms.gparv import GPARV  # noqa: F401
from amp.mechanisms.table1 import *  # noqa: F401,F403
from amp.mechanisms.table1 import (BLH, KRR, OLH, OUE, RAPPOR, Blanket, HadamardResponse,  # noqa: F401
                                   MatrixMechanism, Mechanism, blanket_of_matrix,
                                   lower_law_from_matrix, matrix_eps0, pair_law_from_matrix,
                                   validate_matrix)
