import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator, so every test is reproducible."""
    return np.random.default_rng(20261121)
