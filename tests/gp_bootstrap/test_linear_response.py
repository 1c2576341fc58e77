"""Linear response (infinitesimal jackknife) and the closed-form leave-one-out limit (docs/linear_response.md):
derivatives against finite differences of the weighted GP mean, identities against literal refits, and each
estimate against brute-force Monte-Carlo over Poisson weights where it must be exact.

The brute force is written here, independently of the core: the GP mean refitted with weights s is
f(x; s) = k_xᵀ (W K + σ² I)⁻¹ W y, W = diag(s) (eq. 1 of the docs), solved for a whole batch of weight vectors with
``np.linalg.solve``; a weight 0 removes its point exactly. The regime of small relative weight fluctuations is
reached at a fixed effective noise τ = σ²/ν = 0.05 by taking σ² = τν with ν large: the fluctuations are 1/√ν and
the expansions' errors are powers of 1/ν (docs, §5).
"""
import numpy as np
import pytest

from explorer.gp_bootstrap import linear_response as lr

TAU = 0.05


def _rbf(a, b):
    return np.exp(-((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / 0.5)


@pytest.fixture
def gp(rng):
    """N = 20 training inputs on [-2, 2], 3 test inputs, targets sin(2x) + noise."""
    X = rng.uniform(-2, 2, size=(23, 1))
    y = np.sin(2 * X[:20, 0]) + 0.1 * rng.normal(size=20)
    return _rbf(X[:20], X[:20]), _rbf(X[20:], X[:20]), y


def weighted_mean(K, K_eval, y, noise_var, s):
    """f(x; s) for weight vectors s of shape (B, N): ndarray of shape (B, M)."""
    s = np.atleast_2d(s).astype(float)
    A = s[:, :, None] * K[None] + noise_var * np.eye(K.shape[0])
    w = np.linalg.solve(A, (s * y)[..., None])[..., 0]
    return w @ K_eval.T


def test_derivatives_equal_central_finite_differences(gp):
    """d_i = ∂f/∂s_i (eq. 3) against (f(ν + h e_i) − f(ν − h e_i))/2h with h = 1e-4: truncation O(h²) and
    round-off O(1e-16/h) are both below 1e-9 of max |d| here, so rtol 1e-7 of that scale is safe."""
    K, K_test, y = gp
    n, nu = y.size, 1.5
    out = lr.linear_response_moments(K, y, TAU, nu * n, K_test)
    h, s0 = 1e-4, np.full(n, nu)
    steps = h * np.eye(n)
    fd = (weighted_mean(K, K_test, y, TAU, s0 + steps) - weighted_mean(K, K_test, y, TAU, s0 - steps)) / (2 * h)
    np.testing.assert_allclose(out.derivatives, fd.T, rtol=0, atol=1e-7 * np.abs(fd).max())
    assert np.abs(fd).max() > 1e-3


def test_second_order_mean_equals_finite_second_differences(gp):
    """mean_second_order − mean = (ν/2) Σ_i ∂²f/∂s_i² (eq. 7) against second differences with h = 1e-3
    (round-off ~1e-16/h² = 1e-10 per evaluation, 1e-8 summed over the 20 inputs; truncation O(h²)): atol 1e-5 of the
    largest correction."""
    K, K_test, y = gp
    n, nu, h = y.size, 1.5, 1e-3
    out = lr.linear_response_moments(K, y, TAU * 2, nu * n, K_test)
    s0, steps = np.full(n, nu), h * np.eye(n)
    f0 = weighted_mean(K, K_test, y, TAU * 2, s0)
    second = (weighted_mean(K, K_test, y, TAU * 2, s0 + steps) - 2 * f0
              + weighted_mean(K, K_test, y, TAU * 2, s0 - steps)) / h**2
    correction = nu / 2 * second.sum(axis=0)
    np.testing.assert_allclose(out.mean_second_order - out.mean, correction, rtol=0,
                               atol=1e-5 * np.abs(correction).max())
    np.testing.assert_allclose(out.mean, f0[0], rtol=1e-12)


def test_loo_limit_equals_n_literal_refits(gp):
    """r_i = α_i/B_ii (eq. 8) is an identity: against N refits of the GP on D∖{i} at noise σ²/ν, to round-off."""
    K, _, y = gp
    n, noise_var, S = y.size, 0.3, 40.0
    out = lr.loo_limit(K, y, noise_var, S)
    tau = noise_var / (S / n)
    refit = np.empty(n)
    for i in range(n):
        keep = np.delete(np.arange(n), i)
        alpha = np.linalg.solve(K[np.ix_(keep, keep)] + tau * np.eye(n - 1), y[keep])
        refit[i] = y[i] - K[i, keep] @ alpha
    np.testing.assert_allclose(out.residuals, refit, rtol=1e-9)
    assert out.value == pytest.approx(np.mean(refit**2), rel=1e-9)
    assert lr.linear_response_error(K, y, noise_var, S).loo_limit == pytest.approx(out.value, rel=1e-12)


def test_learning_curve_terms_equal_the_moments_of_the_left_out_gp(gp):
    """The per-input variance v_i and mean shift b_i of ε_IJ (eqs. 10-13, from the block inverse of B) equal
    linear_response_moments of the GP refitted on D∖{i} (at the same ν) evaluated at x_i: an identity, rtol 1e-9."""
    K, _, y = gp
    n, nu = y.size, 0.8
    out = lr.linear_response_error(K, y, TAU * nu, nu * n)
    for i in (0, 7, 19):
        keep = np.delete(np.arange(n), i)
        sub = lr.linear_response_moments(K[np.ix_(keep, keep)], y[keep], TAU * nu, nu * (n - 1), K[i, keep][None])
        assert out.variance[i] == pytest.approx(sub.var[0], rel=1e-9)
        assert out.bias[i] == pytest.approx(sub.mean_second_order[0] - sub.mean[0], rel=1e-9)
        assert out.residuals[i] == pytest.approx(y[i] - sub.mean[0], rel=1e-9)


def test_moments_against_monte_carlo_at_small_weight_fluctuations(gp):
    """ν = 80 (relative weight fluctuations 1/√80 ≈ 0.11), B = 20,000 Poisson weight vectors.

    Tolerances, with SE the Monte-Carlo standard errors: the second-order mean is exact to O(ν⁻²), far below
    SE, so |mean2 − MC| ≤ 4 SE; the first-order mean misses the second-order term, so it gets 4 SE plus
    |mean2 − mean|; the first-order variance has a relative error O(1/ν) (measured ≈ 0.7/ν-1/ν at ν = 5-20),
    so the variance gets 4 SE (delta method) plus 2/ν of the variance."""
    K, K_test, y = gp
    n, nu, B = y.size, 80.0, 20_000
    s = np.random.default_rng(1).poisson(nu, size=(B, n))
    f = weighted_mean(K, K_test, y, TAU * nu, s)
    mean, var = f.mean(axis=0), f.var(axis=0, ddof=1)
    mean_se = np.sqrt(var / B)
    var_se = np.sqrt((((f - mean) ** 4).mean(axis=0) - var**2) / B)
    out = lr.linear_response_moments(K, y, TAU * nu, nu * n, K_test)
    assert np.all(np.abs(out.mean_second_order - mean) <= 4 * mean_se)
    assert np.all(np.abs(out.mean - mean) <= 4 * mean_se + np.abs(out.mean_second_order - out.mean))
    assert np.all(np.abs(out.var - var) <= 4 * var_se + 2 / nu * var)


def _conditional_error(K, y, noise_var, nu, B, seed):
    """Brute-force ε(S) = (1/N) Σ_i E[(f_i − y_i)² | s_i = 0]: the quantity Efron's estimator (eq. 17 of [MO03])
    estimates; under the Poisson scheme s_{−i} keeps its law given s_i = 0, so s_i is set to 0 in every sample.
    Returns the value and its standard error (the N terms share the samples: SE of the per-sample mean)."""
    n = y.size
    s = np.random.default_rng(seed).poisson(nu, size=(B, n)).astype(float)
    losses = np.empty((B, n))
    for i in range(n):
        s_i = s.copy()
        s_i[:, i] = 0.0
        losses[:, i] = (weighted_mean(K, K[i][None], y, noise_var, s_i)[:, 0] - y[i]) ** 2
    per_sample = losses.mean(axis=1)
    return per_sample.mean(), per_sample.std(ddof=1) / np.sqrt(B)


@pytest.mark.parametrize("nu", [80.0, 320.0])
def test_loo_limit_against_monte_carlo_at_large_nu(gp, nu):
    """ε(S) − ε_∞ = O(1/ν) at fixed τ (the variance and the mean shift of the left-out prediction, docs §5;
    measured 0.3/ν-0.6/ν for ν = 5-320 on this problem): the tolerance is 1/ν relative plus 4 Monte-Carlo SE
    (B = 3,000)."""
    K, _, y = gp
    mc, se = _conditional_error(K, y, TAU * nu, nu, 3000, seed=2)
    out = lr.loo_limit(K, y, TAU * nu, nu * y.size)
    assert abs(out.value - mc) <= out.value / nu + 4 * se


def test_ij_learning_curve_against_monte_carlo_at_large_nu(gp):
    """At ν = 80: ε_IJ2 (eq. 15) is exact to O(ν⁻²), so it is within 4 SE of the brute force; ε_IJ (eq. 14, the
    mean to first order only) misses the O(1/ν) cross term 2 r_i b_i and gets 4 SE plus its size; both are closer
    to Monte-Carlo than the leave-one-out limit."""
    K, _, y = gp
    nu = 80.0
    mc, se = _conditional_error(K, y, TAU * nu, nu, 3000, seed=3)
    out = lr.linear_response_error(K, y, TAU * nu, nu * y.size)
    cross = abs(np.mean(2 * out.residuals * out.bias))
    assert abs(out.value_second_order - mc) <= 4 * se
    assert abs(out.value - mc) <= 4 * se + cross
    assert abs(out.value_second_order - mc) < abs(out.loo_limit - mc)


@pytest.mark.slow
def test_loo_gap_shrinks_as_one_over_nu(gp):
    """The O(1/ν) claim itself: ν·(ε(S) − ε_∞)/ε_∞ stays within a factor 2 over ν = 20, 80, 320 (B = 20,000)."""
    K, _, y = gp
    scaled = []
    for nu in (20.0, 80.0, 320.0):
        mc, _ = _conditional_error(K, y, TAU * nu, nu, 20_000, seed=4)
        loo = lr.loo_limit(K, y, TAU * nu, nu * y.size).value
        scaled.append(nu * (mc - loo) / loo)
    assert max(scaled) / min(scaled) < 2.0 and min(scaled) > 0


def test_validation_messages(gp):
    K, K_test, y = gp
    with pytest.raises(ValueError, match="`S` must be positive"):
        lr.loo_limit(K, y, 0.1, -3.0)
    with pytest.raises(ValueError, match="`noise_var` must be a positive finite number"):
        lr.linear_response_error(K, y, 0.0, 20.0)
    with pytest.raises(ValueError, match=r"`K_test` must have shape \(M, 20\)"):
        lr.linear_response_moments(K, y, 0.1, 20.0, K_test[:, :5])
    with pytest.raises(ValueError, match="`K_test` contains NaN"):
        lr.linear_response_moments(K, y, 0.1, 20.0, np.full_like(K_test, np.nan))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        lr.loo_limit(-np.eye(20) * 10, y, 0.1, 20.0)


def test_stages_call_the_core_functions(rng):
    """linear_response_curve and holdout_linear_response (what the CLI and the views call) are the core functions
    on the problem's K, y, σ² at S = (S/N)·N; for another loss only the LOO limit is defined."""
    from explorer import datasets
    from explorer.gp_bootstrap import experiments, stages

    problem = experiments.regression_problem(datasets.load("toy", n=40, rng=1), holdout=5)
    curve = stages.linear_response_curve(problem, [0.5, 2.0])
    ref = lr.linear_response_error(problem.K, problem.y, problem.noise_var, 2.0 * problem.n)
    assert (curve.ij[1], curve.ij_second_order[1], curve.loo_limit[1]) == (
        ref.value, ref.value_second_order, ref.loo_limit)
    other = stages.linear_response_curve(problem, [0.5, 2.0], loss="eps-insensitive")
    assert other.ij is None and other.loo_limit.shape == (2,)
    moments = stages.holdout_linear_response(problem, 1.0)
    direct = lr.linear_response_moments(problem.K, problem.y, problem.noise_var, float(problem.n),
                                        problem.cross(problem.X_test))
    np.testing.assert_array_equal(moments.var, direct.var)
