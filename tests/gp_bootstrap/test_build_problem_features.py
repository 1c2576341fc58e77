"""build_problem with given features Φ: the problem runs on K = ΦΦᵀ as given (no kernel, no landmarks), and its
solution is the feature solver's on the same Φ; the dense path on the kernel matrix ΦΦᵀ is the independent check."""
import numpy as np
import pytest

from explorer.bootstrap import replica
from explorer.gp_bootstrap.problem import build_problem
from explorer.lowrank import given_features
from explorer.operators.features import FeatureKernel


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    phi = np.hstack([X, np.sin(X), np.ones((80, 1))])
    return X, X[:, 0] + np.sin(X[:, 1]) + 0.2 * rng.standard_normal(80), phi


def test_given_features_are_the_problems_kernel():
    X, y, phi = _data()
    problem = build_problem("given", X, y, None, 0.1, features=given_features(phi))
    assert isinstance(problem.operator, FeatureKernel) and problem.features.method == "given"
    np.testing.assert_array_equal(problem.operator.phi, phi)
    on_features = replica.solve_replica(problem.operator, y, 0.1, 80.0, tol=1e-10)
    dense = replica.solve_replica(phi @ phi.T + 1e-12 * np.eye(80), y, 0.1, 80.0, tol=1e-10)
    np.testing.assert_allclose(on_features.m, dense.m, rtol=1e-6, atol=1e-8)
    assert replica.bootstrap_test_error(on_features) == pytest.approx(replica.bootstrap_test_error(dense), rel=1e-6)


def test_no_kernel_and_no_features_is_refused():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="needs a kernel, or the features"):
        build_problem("nothing", X, y, None, 0.1)
