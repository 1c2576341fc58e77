"""Closed-form leave-one-out of the LS-SVM over a γ grid (docs/linear_response.md, eqs. 16-19) against N literal
refits, and the bias-free case against the GP leave-one-out of R&W eq. (5.12)."""
import numpy as np
import pytest

from explorer import regression
from explorer.fast_bootstrap.lssvm import LSSVM, lssvm_loo, lssvm_path
from explorer.kernels import SquaredExponential

GAMMAS = np.array([0.3, 1.0, 5.0, 30.0, 200.0])


@pytest.fixture
def problem(rng):
    X = rng.uniform(-1, 1, size=(15, 2))
    y = np.sinc(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=15)
    kernel = SquaredExponential(lengthscale=0.7)
    return kernel, X, y


@pytest.mark.parametrize("bias", [True, False])
def test_loo_residuals_equal_n_literal_refits_over_the_grid(problem, bias):
    """Each of the N refits solves the LS-SVM system on N − 1 points (lssvm_path, an eigendecomposition of its own):
    the closed form is an exact identity, so the agreement is to round-off (rtol 1e-9; K is well conditioned
    for γ ≤ 200)."""
    kernel, X, y = problem
    K = kernel(X)
    loo = lssvm_loo(K, y, GAMMAS, bias=bias)
    refits = np.empty((GAMMAS.size, y.size))
    for i in range(y.size):
        keep = np.delete(np.arange(y.size), i)
        pred = lssvm_path(K[np.ix_(keep, keep)], y[keep], GAMMAS, K[i, keep][None], bias=bias)[:, 0]
        refits[:, i] = y[i] - pred
    np.testing.assert_allclose(loo.residuals, refits, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(loo.generalization_error, np.mean(refits**2, axis=1), rtol=1e-9)
    assert loo.selected == GAMMAS[np.argmin(np.mean(refits**2, axis=1))]


def test_without_bias_it_is_the_gp_leave_one_out_at_noise_one_over_gamma(problem):
    kernel, X, y = problem
    loo = lssvm_loo(kernel(X), y, GAMMAS, bias=False)
    for g, r in zip(GAMMAS, loo.residuals):
        gp = regression.loo_predictions(kernel, X, y, 1.0 / g)
        np.testing.assert_allclose(r, y - gp.mean, rtol=1e-9)


def test_model_method_equals_the_function(problem):
    kernel, X, y = problem
    got = LSSVM(kernel).leave_one_out(X, y, GAMMAS)
    np.testing.assert_array_equal(got.generalization_error, lssvm_loo(kernel(X), y, GAMMAS).generalization_error)


def test_validation_messages(problem):
    kernel, X, y = problem
    with pytest.raises(ValueError, match="every γ must be positive"):
        lssvm_loo(kernel(X), y, [1.0, -2.0])
    with pytest.raises(ValueError, match="`K` must have shape"):
        lssvm_loo(kernel(X), y[:-1], GAMMAS)
    with pytest.raises(ValueError, match="at least 2 training points"):
        lssvm_loo(np.ones((1, 1)), np.ones(1), GAMMAS)
