"""Fixtures shared by the GP-bootstrap tests."""
import pytest

from .exact_bootstrap import correlated_problem


@pytest.fixture
def solver_args(rng) -> dict:
    """Valid arguments ``K, y, noise_var, S`` of a replica-type solver (VG, MF) on a correlated 10-point problem,
    σ² = 0.01, S = N: a validation test replaces one of them."""
    K, y = correlated_problem(rng, 10, 1.0)
    return {"K": K, "y": y, "noise_var": 0.01, "S": 10.0}
