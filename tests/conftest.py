"""pytest fixtures shared by the test modules (helpers live in ``tests/helpers.py``)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: every random test is reproducible."""
    return np.random.default_rng(20261129)
