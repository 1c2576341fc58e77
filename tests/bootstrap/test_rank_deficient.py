"""A rank-deficient kernel matrix ([MO03] eqs. 54-59 on K = ΦΦᵀ given densely, duplicated rows, a linear kernel):
the dense solver detects that it cannot represent the cavity and solves on the features of K's non-zero eigenvalues;
ε(S) then equals the feature solver's on the Φ that made K — an independent computation (another Φ, other algebra)."""
import numpy as np
import pytest

from explorer import datasets, kernels, lowrank
from explorer.bootstrap import replica
from explorer.operators import as_operator
from explorer.operators.dense import first_jitter
from explorer.progress import NO_HOOKS


def _nystrom_problem(n: int, rank: int, far: float = 0.0):
    """The first n rows of diamonds (standardised) and Nyström features of a given rank; ``far`` > 0 moves five rows
    that far away from the landmarks (the sites few features reach, where the dense cavity cancels)."""
    d = datasets.load("diamonds")
    X, y = d.inputs[:n], d.targets[:n]
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    X[:5] += far
    landmarks = None if far == 0 else np.arange(10, 10 + rank)
    return lowrank.nystrom_features(kernels.SquaredExponential(1.0), X, rank, rng=0, landmarks=landmarks), y


def _check_same_error(n: int, rank: int, tol: float, rel: float, far: float = 0.0):
    features, y = _nystrom_problem(n, rank, far)
    K = features.phi @ features.phi.T
    with pytest.raises(replica.ConvergenceError, match="left the positive reals"):  # what the fallback repairs
        _solve_without_fallback(K, y, n, tol)
    dense = replica.solve_replica(K, y, 0.1, float(n), tol=tol)
    low = replica.solve_replica_lowrank(features, y, 0.1, float(n), tol=tol)
    assert 0 < dense.features_rank <= rank
    assert replica.bootstrap_test_error(dense) == pytest.approx(replica.bootstrap_test_error(low), rel=rel)


def _solve_without_fallback(K, y, n, tol):
    """The dense iteration alone (the operator without its rank-deficient form): it breaks down."""
    op = as_operator(K)
    return first_jitter(op, lambda op_j, jitter: replica._solve(
        op_j, y, 0.1, float(n), tol, 200, None, "mixed", "auto", jitter, NO_HOOKS))


def test_a_rank_deficient_matrix_gives_the_feature_solution():
    # tol 1e-8: both iterates within ~1e-8 of one fixed point; 1e-6 relative leaves room for another BLAS
    _check_same_error(500, 30, 1e-8, 1e-6, far=8.0)


def test_a_matrix_whose_closing_cancels_gives_the_feature_solution():
    _check_same_error(500, 30, 1e-8, 1e-6, far=5.0)  # the iteration converges; diag G of eq. (57) cancels


@pytest.mark.slow
def test_the_issues_rank_200_nystrom_matrix_of_2930_rows():
    _check_same_error(2930, 200, 1e-3, 1e-6)


@pytest.mark.parametrize("kind", ["duplicated rows", "linear kernel"])
def test_duplicated_rows_and_a_linear_kernel_agree_with_their_features(kind):
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(100, 2)), 3, axis=0)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    if kind == "linear kernel":
        K, phi = X @ X.T, X
    else:
        K = kernels.SquaredExponential(1.0)(X)
        phi = np.linalg.cholesky(kernels.SquaredExponential(1.0)(X[::3]) + 1e-12 * np.eye(100))
        phi = np.repeat(phi, 3, axis=0)
        K = phi @ phi.T
    dense = replica.solve_replica(K, y, 0.01, 300.0, tol=1e-9)
    low = replica.solve_replica_lowrank(phi, y, 0.01, 300.0, tol=1e-9)
    assert replica.bootstrap_test_error(dense) == pytest.approx(replica.bootstrap_test_error(low), rel=1e-6)
