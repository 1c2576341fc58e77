"""Linear response and closed-form leave-one-out of the low-rank GP K = ΦΦᵀ (linear_response on features).

References: ``linear_response`` on the N×N matrix K = ΦΦᵀ (and K_test = phi_test Φᵀ), the same for Φ = the Cholesky
factor of a kernel matrix (m = N), and, independent of both, literal leave-one-out refits in feature space (ridge
regression without row i at noise τ = σ²/ν, by ``np.linalg.solve``).

Tolerances: both paths are backward-stable solves of K + τI, whose condition number is at most
1 + λ_max(ΦᵀΦ)/τ ≤ 1 + N/τ ≈ 4e6 at N = 1000, τ = σ²/ν = 2.5e-3; with a few matrix products on top the results agree
to ≲ N ε cond ≈ 1e-6 in the worst case, measured 1e-14 to 6e-12. Tests assert 1e-8 relative to the largest entry.
"""
import numpy as np
import pytest
from scipy import linalg

from explorer.gp_bootstrap import linear_response as dense
from explorer.gp_bootstrap import linear_response as lowrank
from explorer.kernels import SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.operators import responses
from tests.conftest import rbf

NOISE = 0.01
RTOL = 1e-8


def assert_close(actual, desired, rtol=RTOL):
    np.testing.assert_allclose(actual, desired, rtol=0, atol=rtol * np.abs(desired).max())


@pytest.fixture(scope="module", params=[(300, 30), (1000, 100)], ids=["N300-m30", "N1000-m100"])
def problem(request):
    """Nyström features of a squared-exponential kernel on 3-D inputs, 5 test inputs, and K = ΦΦᵀ, K_test."""
    n, m = request.param
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n + 5, 3))
    y = np.sin(X[:n, 0]) + 0.3 * X[:n, 1] + 0.1 * rng.normal(size=n)
    features = nystrom_features(SquaredExponential(1.5), X[:n], m, rng=1)
    phi, phi_test = features.phi, features.transform(X[n:])
    K = phi @ phi.T
    return phi, phi_test, y, 0.5 * (K + K.T), phi_test @ phi.T


@pytest.fixture(scope="module")
def cholesky_problem():
    """m = N = 150: Φ = chol(K) with K an RBF matrix plus white noise 1e-3 (well conditioned), so ΦΦᵀ = K."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(154, 2))
    K = rbf(X[:150], X[:150]) + 1e-3 * np.eye(150)
    K_test = rbf(X[150:], X[:150])
    phi = linalg.cholesky(K, lower=True)
    return phi, linalg.solve_triangular(phi, K_test.T, lower=True).T, np.cos(2 * X[:150, 0]), K, K_test


@pytest.mark.parametrize("s_over_n", [0.25, 1.0, 4.0])
def test_every_quantity_equals_the_dense_path_on_phi_phi_t(problem, s_over_n):
    phi, phi_test, y, K, K_test = problem
    S = s_over_n * y.size
    compare(phi, phi_test, y, K, K_test, S)


def test_cholesky_factor_features_give_the_dense_gp(cholesky_problem):
    phi, phi_test, y, K, K_test = cholesky_problem
    for S in (75.0, 600.0):
        compare(phi, phi_test, y, K, K_test, S)


def compare(phi, phi_test, y, K, K_test, S):
    """LOO (eqs. 8-9), IJ moments (eqs. 3-7) and the IJ learning curve (eqs. 10-15): low-rank against dense."""
    low, ref = lowrank.loo_limit_lowrank(phi, y, NOISE, S), dense.loo_limit(K, y, NOISE, S)
    assert_close(low.residuals, ref.residuals)
    assert_close(low.var, ref.var)
    assert low.value == pytest.approx(ref.value, rel=RTOL) and low.s_over_n == ref.s_over_n
    eps = lowrank.loo_limit_lowrank(phi, y, NOISE, S, loss="eps-insensitive")
    assert eps.value == pytest.approx(dense.loo_limit(K, y, NOISE, S, loss="eps-insensitive").value, rel=RTOL)

    low, ref = (lowrank.linear_response_moments_lowrank(phi, y, NOISE, S, phi_test),
                dense.linear_response_moments(K, y, NOISE, S, K_test))
    for field in ("mean", "var", "mean_second_order", "derivatives"):
        assert_close(getattr(low, field), getattr(ref, field))

    low, ref = lowrank.linear_response_error_lowrank(phi, y, NOISE, S), dense.linear_response_error(K, y, NOISE, S)
    for field in ("residuals", "variance", "bias"):
        assert_close(getattr(low, field), getattr(ref, field))
    for field in ("value", "value_second_order", "loo_limit", "s_over_n"):
        assert getattr(low, field) == pytest.approx(getattr(ref, field), rel=RTOL)


def test_loo_residuals_equal_literal_refits_without_each_point(problem):
    """r_i = y_i − φ_iᵀ w^(−i), w^(−i) = (Φ_{−i}ᵀΦ_{−i} + τI)⁻¹Φ_{−i}ᵀy_{−i}: the ridge regression on the other N − 1
    points at noise τ = σ²/ν (the GP with covariance ΦΦᵀ without point i), refitted for 12 inputs."""
    phi, _, y, _, _ = problem
    S = 2.0 * y.size
    tau = NOISE / 2.0
    out = lowrank.loo_limit_lowrank(phi, y, NOISE, S)
    for i in np.linspace(0, y.size - 1, 12).astype(int):
        keep = np.arange(y.size) != i
        w = np.linalg.solve(phi[keep].T @ phi[keep] + tau * np.eye(phi.shape[1]), phi[keep].T @ y[keep])
        assert out.residuals[i] == pytest.approx(y[i] - phi[i] @ w, rel=1e-9, abs=1e-12)
        # the leave-one-out predictive variance of that GP, noise τ included: τ + φ_iᵀ(I + Φ_{−i}ᵀΦ_{−i}/τ)⁻¹φ_i
        var = tau + phi[i] @ np.linalg.solve(np.eye(phi.shape[1]) + phi[keep].T @ phi[keep] / tau, phi[i])
        assert out.var[i] == pytest.approx(var, rel=1e-9)


def test_ij_error_does_not_depend_on_the_column_blocks(problem, monkeypatch):
    """Blocks of 7 columns (a ragged last block) give what one block gives, to the rounding of the products."""
    phi, _, y, _, _ = problem
    whole = lowrank.linear_response_error_lowrank(phi, y, NOISE, float(y.size))
    monkeypatch.setattr(responses, "_COLUMN_BLOCK_ENTRIES", 7 * y.size)
    monkeypatch.setattr(responses, "_MIN_COLUMNS", 1)
    blocked = lowrank.linear_response_error_lowrank(phi, y, NOISE, float(y.size))
    assert_close(blocked.variance, whole.variance, rtol=1e-12)
    assert_close(blocked.bias, whole.bias, rtol=1e-12)


def test_validation_messages():
    phi, y = np.ones((5, 2)), np.zeros(5)
    with pytest.raises(ValueError, match="`S` must be positive and finite, got -3.0"):
        lowrank.loo_limit_lowrank(phi, y, 0.1, -3.0)
    with pytest.raises(ValueError, match="`noise_var` must be a positive finite number, got 0.0"):
        lowrank.linear_response_error_lowrank(phi, y, 0.0, 5.0)
    with pytest.raises(ValueError, match="Need at least 2 training points, got 1"):
        lowrank.loo_limit_lowrank(phi[:1], y[:1], 0.1, 5.0)
    with pytest.raises(ValueError, match=r"`phi_test` must have shape \(M, 2\)"):
        lowrank.linear_response_moments_lowrank(phi, y, 0.1, 5.0, np.ones((3, 4)))
    with pytest.raises(ValueError, match="`phi_test` must be finite"):
        lowrank.linear_response_moments_lowrank(phi, y, 0.1, 5.0, np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match=r"`y` must have shape \(5,\) to match `phi`"):
        lowrank.linear_response_error_lowrank(phi, y[:4], 0.1, 5.0)
    with pytest.raises(ValueError, match="τI \\+ ΦᵀΦ failed"):
        lowrank.loo_limit_lowrank(np.full((5, 2), 1e200), y, 0.1, 5.0)


def test_ij_error_on_a_random_subset_of_inputs_estimates_the_exact_average(problem):
    phi, _, y = problem[:3]
    noise_var = 0.1
    S = y.size * 0.5
    exact = lowrank.linear_response_error_lowrank(phi, y, noise_var, S)
    part = lowrank.linear_response_error_lowrank(phi, y, noise_var, S, inputs=y.size // 4, rng=5)
    drawn = np.flatnonzero(~np.isnan(part.variance))
    assert drawn.size == y.size // 4 and np.isnan(part.bias).sum() == y.size - drawn.size
    assert_close(part.variance[drawn], exact.variance[drawn])  # the same per-input terms where drawn
    assert part.loo_limit == exact.loo_limit
    # an unbiased mean of n_I of the N per-input terms: within 4 standard errors (finite-population correction)
    for value, exact_value, terms in ((part.value, exact.value, exact.variance),
                                      (part.value_second_order, exact.value_second_order,
                                       exact.bias**2 - 2 * exact.residuals * exact.bias + exact.variance)):
        se = terms.std() / np.sqrt(drawn.size) * np.sqrt(1 - drawn.size / y.size)
        assert abs(value - exact_value) < 4 * se and value != exact_value
    whole = lowrank.linear_response_error_lowrank(phi, y, noise_var, S, inputs=y.size)
    assert whole.value == pytest.approx(exact.value, rel=1e-12)
    with pytest.raises(ValueError, match="positive number of inputs"):
        lowrank.linear_response_error_lowrank(phi, y, noise_var, S, inputs=0)
