"""explorer.bootstrap.out_of_bag and the operators' cross_covariances: the out-of-bag means of the replica theory.

Independent checks: the dense and the feature implementation on the same K = ΦΦᵀ; the out-of-bag means against
literal weighted GP refits (Monte-Carlo: the mean over the samples with s_i = 0, at x_i and at test inputs); the
J+aB bounds against the order statistics written out by hand.
"""
import math

import numpy as np
import pytest

from explorer.bootstrap import replica
from explorer.bootstrap.out_of_bag import conformal_level, jackknife_plus_bounds, out_of_bag_means
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

N, NOISE = 40, 0.09


def _problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, N)
    y = np.sin(X) + 0.3 * rng.standard_normal(N)
    X_test = np.linspace(-3.5, 3.5, 6)
    return X, y, X_test


def _k(a, b):
    return np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2)


@pytest.fixture(scope="module")
def dense():
    X, y, X_test = _problem()
    K = _k(X, X) + 1e-6 * np.eye(N)  # positive definite to round-off, so that it has a Cholesky factor Φ
    sol = replica.solve_replica(DenseKernel(K), y, NOISE, float(N), tol=1e-8)
    return K, y, _k(X_test, X), sol, out_of_bag_means(sol, DenseKernel(K))


def test_dense_and_features_agree_on_K_equal_phi_phi_transposed(dense):
    """Φ = L, the Cholesky factor of K, and φ(x) = L⁻¹k(x): ΦΦᵀ = K and φ(x)ᵀφ_i = k(x, x_i)."""
    K, y, cross, sol, oob = dense
    phi = np.linalg.cholesky(K)
    phi_test = np.linalg.solve(phi, cross.T).T
    sol_f = replica.solve_replica(FeatureKernel(phi), y, NOISE, float(N), tol=1e-8)
    oob_f = out_of_bag_means(sol_f, FeatureKernel(phi))
    t_dense = DenseKernel(K).cross_covariances(sol.dl).at(cross)
    t_features = FeatureKernel(phi).cross_covariances(sol.dl).at(phi_test)  # same Δλ: the operators alone
    np.testing.assert_allclose(t_features, t_dense, rtol=1e-7, atol=1e-9 * np.abs(t_dense).max())
    np.testing.assert_allclose(oob_f.training, oob.training, rtol=1e-6)
    mean_f, at_f = oob_f.at(phi_test)
    mean, at = oob.at(cross)
    np.testing.assert_allclose(at_f, at, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(mean_f, mean, rtol=1e-6, atol=1e-8)


def test_the_mean_at_a_training_input_is_the_cavity_mean_and_at_tests_eq_48(dense):
    K, y, cross, sol, oob = dense
    mean, at = oob.at(K)  # x = x_j: μ₋ᵢ(x_i) must be the cavity mean γ_c(i)/Δλ_c(i)
    np.testing.assert_allclose(np.diag(at), sol.gam_c / sol.dl_c, rtol=1e-8)
    np.testing.assert_allclose(oob.at(cross)[0], replica.bootstrap_moments(sol, K, cross).mean, rtol=1e-10)


def test_out_of_bag_means_match_literal_refits(dense):
    """40,000 weighted GP refits (Poisson(1) occupations): the mean over samples with s_i = 0 at x_i and at 6 test
    inputs. Measured: median difference 1.3 % of the bootstrap sd at the test inputs, worst 11 %; Monte-Carlo noise
    of each conditional mean ≈ 0.8 %; the naive μ(x) in place of μ₋ᵢ(x) is off by 2.7 % at the median."""
    K, y, cross, sol, oob = dense
    rng = np.random.default_rng(5)
    occ = rng.poisson(1.0, (40_000, N))
    test, train = np.empty((occ.shape[0], cross.shape[0])), np.empty(occ.shape)
    for b, s in enumerate(occ):
        a = s > 0
        w = np.linalg.solve(K[np.ix_(a, a)] + NOISE * np.diag(1 / s[a]), y[a])
        test[b], train[b] = cross[:, a] @ w, K[:, a] @ w
    out = occ == 0
    mc_test = np.stack([test[out[:, i]].mean(axis=0) for i in range(N)], axis=1)
    mc_train = np.array([train[out[:, i], i].mean() for i in range(N)])
    sd = test.std(axis=0)
    mean, at = oob.at(cross)
    err = np.abs(at - mc_test) / sd[:, None]
    naive = np.abs(mean[:, None] - mc_test) / sd[:, None]
    assert np.median(err) < 0.025 and err.max() < 0.2
    assert np.median(err) < 0.7 * np.median(naive)  # the cavity shift is seen, not noise
    assert np.median(np.abs(oob.training - mc_train) / train.std(axis=0)) < 0.025


def test_jackknife_plus_bounds_are_the_order_statistics_written_out():
    rng = np.random.default_rng(2)
    means, residuals = rng.normal(size=(7, 50)), rng.exponential(size=50)
    low, high = jackknife_plus_bounds(means, residuals, 0.8)
    k = math.ceil(0.8 * 51)  # the k-th smallest of the N upper values, the k-th largest of the N lower ones
    np.testing.assert_array_equal(high, np.sort(means + residuals, axis=1)[:, k - 1])
    np.testing.assert_array_equal(low, -np.sort(residuals - means, axis=1)[:, k - 1])
    assert conformal_level(0.8, 50) == k / 50


def test_bad_confidence_and_too_few_rows():
    with pytest.raises(ValueError, match=r"`confidence` must be a number in \(0, 1\)"):
        conformal_level(1.0, 100)
    with pytest.raises(ValueError, match="10 training rows are too few for a J\\+aB interval at confidence 0.95"):
        conformal_level(0.95, 10)


def test_the_kernel_must_be_the_solutions(dense):
    K, y, cross, sol, oob = dense
    with pytest.raises(ValueError, match="one row per training input of the solution, 40, got 39"):
        out_of_bag_means(sol, DenseKernel(K[:39, :39]))
