"""The evidence written once against a kernel operator (explorer.gp_bootstrap.evidence, explorer.operators.log_evidence):
the dense and the feature implementation on the same matrix K = ΦΦᵀ, the dense one against explorer.regression, and
the one landmark draw that nystrom_features and the Nyström evidence fit share."""

import numpy as np
import pytest

from explorer import lowrank, regression
from explorer.gp_bootstrap.evidence import log_evidence, lowrank_log_evidence, maximum_evidence_lowrank
from explorer.kernels import SquaredExponential
from explorer.lowrank import draw_landmarks, given_features, nystrom_features
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

NOISE_VAR = 0.05


@pytest.fixture
def data(rng):
    """200 rows of a smooth function of 2 inputs, noise sd 0.1."""
    X = rng.standard_normal((200, 2))
    return X, np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(200)


# ----------------------------------------------------------------------------- dense and features on one matrix


@pytest.mark.parametrize("m", [1, 30, 250])
def test_dense_and_features_give_the_same_evidence_of_one_matrix(data, rng, m):
    """K = ΦΦᵀ held densely (a Cholesky factor of the N×N matrix K + σ²I) and as features (determinant lemma and
    Woodbury on the m×m matrix σ²I + ΦᵀΦ): two computations of R&W eq. (2.30), equal up to the round-off of an N×N
    factorisation, ≈ N ε ‖K‖/σ² ≈ 200 · 2e-16 · 40 ≲ 1e-11 relative on |log p| ≈ 100-300."""
    _, y = data
    features = given_features(0.1 * rng.standard_normal((200, m)))
    K = features.phi @ features.phi.T
    dense, low = log_evidence(K, y, NOISE_VAR), log_evidence(features, y, NOISE_VAR)
    assert dense == pytest.approx(low, rel=1e-10)
    assert log_evidence(DenseKernel.of(K), y, NOISE_VAR) == dense
    assert log_evidence(FeatureKernel.of(features), y, NOISE_VAR) == low == lowrank_log_evidence(features.phi, y,
                                                                                                   NOISE_VAR)


@pytest.mark.parametrize("lengthscale", [1.3, [0.8, 2.0]], ids=["isotropic", "ard"])
def test_the_nystrom_gradient_is_the_dense_gradient_of_its_matrix(data, lengthscale):
    """The feature implementation's analytic gradient of the Nyström evidence (through U = K_nL and W = K_LL) against
    the dense implementation's R&W eq. (5.9) on the N×N matrix K̃(θ) = Φ(θ)Φ(θ)ᵀ, with ∂K̃/∂θ_j taken by central
    differences of that matrix, step h = 1e-5 in log space. Truncation ≈ 20 h² = 2e-9 relative (measured: 2e-5 at
    h = 1e-3); round-off ≈ ε cond(W) / h ≈ 2e-16 · 2e4 / 1e-5 ≈ 4e-7 at most, cond(W) ≈ 5e3-2e4 for these 10
    landmarks (30 landmarks have cond(W) ≈ 2e7 and need a larger step): 1e-6."""
    X, y = data
    kernel = SquaredExponential(lengthscale, 0.8)
    X_L = X[draw_landmarks(200, 10, 1)]

    def matrix(theta):
        phi = FeatureKernel.nystrom(kernel.with_theta(theta), X, X_L)[0].phi
        return phi @ phi.T

    operator, U, C = FeatureKernel.nystrom(kernel, X, X_L)
    value, grad = operator.nystrom_log_evidence(kernel, X, X_L, U, C, y, NOISE_VAR, eval_gradient=True)
    h, theta = 1e-5, kernel.theta
    dK = np.stack([(matrix(theta + h * e) - matrix(theta - h * e)) / (2 * h) for e in np.eye(theta.size)], axis=2)
    dense_value, dense_grad = DenseKernel(operator.phi @ operator.phi.T).log_evidence(y, NOISE_VAR, dK)
    assert value == pytest.approx(dense_value, rel=1e-10)
    np.testing.assert_allclose(grad, dense_grad, rtol=1e-6, atol=1e-6)


def test_the_dense_implementation_is_explorer_regression(data):
    """On the matrix K = k(X, X) with ∂K/∂θ the dense evidence and gradient are those of
    :func:`explorer.regression.log_evidence`, to the last bit (the fitted hyperparameters the CLI prints rely on it)."""
    X, y = data
    kernel = SquaredExponential([0.8, 2.0], 1.7)
    K, dK = kernel(X, eval_gradient=True)
    value, grad = DenseKernel(K).log_evidence(y, NOISE_VAR, dK)
    expected_value, expected_grad = regression.log_evidence(kernel, X, y, NOISE_VAR, eval_gradient=True)
    assert value == expected_value and np.array_equal(grad, expected_grad)
    assert DenseKernel(K).log_evidence(y, NOISE_VAR) == regression.log_evidence(kernel, X, y, NOISE_VAR)


@pytest.mark.parametrize("args, message", [
    ((np.eye(3), np.zeros(4), 0.1), r"`y` must hold N = 3 finite targets, one per training input, got shape \(4,\)"),
    ((np.eye(3), np.array([0.0, np.nan, 1.0]), 0.1), "`y` must hold N = 3 finite targets"),
    ((np.eye(3), np.zeros(3), 0.0), "`noise_var` must be a positive finite number, got 0.0"),
    ((np.ones((3, 2)), np.zeros(3), 0.1), r"`K` must be a square kernel matrix, got shape \(3, 2\)"),
])
def test_log_evidence_bad_input_says_what_is_expected(args, message):
    with pytest.raises(ValueError, match=message):
        log_evidence(*args)


# ----------------------------------------------------------------------------- one landmark draw


@pytest.mark.parametrize("n, rank, seed, max_rows", [
    (200, 10, 0, None), (200, 37, 3, None), (150, 150, 1, None), (200, 20, 5, 80), (200, 1, 11, None),
])
def test_the_evidence_fit_and_nystrom_features_draw_the_same_landmarks(data, n, rank, seed, max_rows):
    """From a seed and from a Generator of that seed (which the fit then draws its rows from): the landmarks of the
    fit are those of nystrom_features, and fit.features(X) is nystrom_features' Φ with the fitted kernel."""
    X, y = data[0][:n], data[1][:n]
    for rng, same_rng in ((seed, seed), (np.random.default_rng(seed), np.random.default_rng(seed))):
        fit = maximum_evidence_lowrank(X, y, rank=rank, rng=rng, max_iter=2, max_rows=max_rows)
        features = nystrom_features(fit.kernel, X, rank, rng=same_rng)
        np.testing.assert_array_equal(fit.landmarks, features.landmarks)
        np.testing.assert_array_equal(fit.landmarks, draw_landmarks(n, rank, seed))
        np.testing.assert_array_equal(fit.features(X).phi, features.phi)


def test_both_draw_through_draw_landmarks(data, monkeypatch):
    """Replace the one draw by a rule no random draw would give (the last m rows): nystrom_features and the evidence
    fit both follow it, so neither draws landmarks of its own."""
    X, y = data

    def last_rows(n, rank, rng=0):
        return np.arange(n - rank, n)

    monkeypatch.setattr(lowrank, "draw_landmarks", last_rows)
    np.testing.assert_array_equal(nystrom_features(SquaredExponential(), X, 12, rng=0).landmarks, np.arange(188, 200))
    fit = maximum_evidence_lowrank(X, y, rank=12, rng=0, max_iter=2)
    np.testing.assert_array_equal(fit.landmarks, np.arange(188, 200))


def test_draw_landmarks_is_sorted_distinct_and_checks_the_rank():
    idx = draw_landmarks(1000, 64, 0)
    assert idx.shape == (64,) and np.all(np.diff(idx) > 0) and idx.min() >= 0 and idx.max() < 1000
    np.testing.assert_array_equal(idx, draw_landmarks(1000, 64, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="above the number of training rows N = 10"):
        draw_landmarks(10, 11, 0)
