"""amp: certified privacy amplification by shuffling.

Implements "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling"
(Su, Cheng and Wang, arXiv 2504.07414): the optimal decomposition (privacy blanket) bound of
Theorems 3-4 computed with a certified version of Algorithm 4, the lower bound of Theorem 5,
the baselines the paper compares with, joint composition (Section 6) and exact oracles.

The front door::

    import amp
    m = amp.KRR(4.0, k=10)                       # Table 1 row, eps0 = 4
    amp.epsilon(m, 10_000, 1e-6)                 # certified eps(delta): a Bound
    amp.delta(m, 10_000, 0.5)                    # certified delta(eps)
    prof = amp.profile(m, 10_000)                # build once, ask many times
    amp.epsilon_for(prof, 1e-8); prof.delta([0.2, 0.4])
    amp.calibrate_eps0(lambda e0: amp.KRR(e0, k=10), 10_000, 0.5, 1e-6)
    amp.sweep("krr", n=[1e4, 1e6], eps0=[1, 4], delta=1e-6, k=10)   # a table (workers=N)
    amp.epsilon(amp.SquareWave(2.0), 10_000, 1e-6)                    # numeric inputs
    pop = amp.Population([(9_000, amp.KRR(1.0, k=10)), (1_000, amp.KRR(4.0, k=10))])
    amp.epsilon(pop, pop.n, 1e-6)                # fixed groups (each at its own blanket)
    amp.to_pld(m, 10_000)                        # one round as a dp_accounting PLD

Each answer is a :class:`Bound`: ``value`` is the number to use, ``bracket`` encloses the exact
value of the selected bound (``bound="upper"``: Theorem 4; ``bound="lower"``: Theorem 5).
Neighbouring datasets differ in one user's input (replace-one). The core imports numpy and
scipy only. The book's figures and widgets are not part of the library: they live in
the book's own package ``ampbook`` (``book/ampbook`` in the repository).
"""

from amp.api import calibrate_eps0, compose, delta, epsilon, epsilon_for, profile
from amp.core.errors import AmpError, NumericalError, ParameterError
from amp.core.errors import AccuracyWarning
from amp.core.result import NEIGHBOURING, Bound
from amp.mechanisms import (BLH, GPARV, KRR, OLH, OUE, RAPPOR, HadamardResponse,
                            MatrixMechanism, Mechanism)
from amp.mechanisms.joint import JointMechanism
from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave
from amp.mechanisms.laplace import Laplace
from amp.mechanisms.mixture import Mixture, Population, Void
from amp.population import population_delta, population_epsilon
from amp.privacy_profile import PrivacyProfile
from amp.rounds.export import to_pld
from amp.rounds import Round
from amp.sweeps import SweepTable, sweep

import sys as _sys  # noqa: E402

# amp/profile.py and amp/sweep.py were renamed privacy_profile.py and sweeps.py (the names
# amp.profile and amp.sweep are the functions); "from amp.profile import X" keeps working
_sys.modules.setdefault("amp.profile", _sys.modules["amp.privacy_profile"])
_sys.modules.setdefault("amp.sweep", _sys.modules["amp.sweeps"])
del _sys

from amp.core.version import __version__  # noqa: E402

__all__ = [
    "delta", "epsilon", "epsilon_for", "profile", "calibrate_eps0", "compose", "sweep",
    "to_pld", "Round",
    "SweepTable",
    "Bound", "PrivacyProfile", "NEIGHBOURING",
    "AmpError", "NumericalError", "ParameterError",
    "Mechanism", "KRR", "RAPPOR", "OUE", "OLH", "BLH", "HadamardResponse", "MatrixMechanism",
    "JointMechanism", "GPARV", "Duchi", "SquareWave", "PiecewiseMechanism", "Laplace",
    "Mixture", "Population", "Void", "population_delta", "population_epsilon",
    "__version__",
    "AccuracyWarning",
]
