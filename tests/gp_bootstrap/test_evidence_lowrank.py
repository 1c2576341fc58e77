"""The evidence of the low-rank GP in O(N m²) (explorer.gp_bootstrap.evidence): the Woodbury value against a
dense log density, the analytic gradient against finite differences and against the dense gradient (R&W eq. 5.9) at
m = N, and the maximum-evidence fit against perturbations, the dense fit and its own definition."""

import numpy as np
import pytest
from scipy import linalg
from scipy.stats import multivariate_normal

from explorer import regression
from explorer.gp_bootstrap.evidence import (
    LowRankEvidenceFit,
    lowrank_log_evidence,
    maximum_evidence,
    maximum_evidence_lowrank,
    nystrom_log_evidence,
)
from explorer.kernels import Matern32, SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.progress import Cancelled, Hooks

NOISE_VAR = 0.05


@pytest.fixture
def data(rng):
    """500 rows of a smooth function of 3 inputs (the third irrelevant), noise sd 0.1."""
    X = rng.standard_normal((500, 3))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(500)
    return X, y


def dense_log_evidence(phi, y, noise_var):
    """log N(y | 0, ΦΦᵀ + σ²I) by a Cholesky factor of the N×N matrix (the brute force)."""
    L = linalg.cholesky(phi @ phi.T + noise_var * np.eye(len(y)), lower=True)
    z = linalg.solve_triangular(L, y, lower=True)
    return -0.5 * z @ z - np.log(np.diag(L)).sum() - 0.5 * len(y) * np.log(2 * np.pi)


def exact_features(K):
    """Φ with ΦΦᵀ = K (to round-off) for a positive semi-definite K: eigenvectors scaled by √λ, λ clipped at 0."""
    lam, V = np.linalg.eigh(K)
    return V * np.sqrt(np.clip(lam, 0.0, None))


# ----------------------------------------------------------------------------- the value


@pytest.mark.parametrize("m", [1, 40, 499, 650])
def test_the_woodbury_evidence_is_the_dense_log_density(data, m, rng):
    """Random Φ of every shape (m = 1, m ≪ N, m ≈ N, m > N): the determinant lemma and Woodbury are exact, so the
    value agrees with scipy's multivariate_normal and a Cholesky of the N×N matrix up to the round-off of an N×N
    factorisation, ≈ N ε cond ≈ 500 · 2e-16 · (‖Φ‖² / σ²) ≲ 1e-9 relative for these entries of size 0.1."""
    _, y = data
    phi = 0.1 * rng.standard_normal((500, m))
    value = lowrank_log_evidence(phi, y, NOISE_VAR)
    assert value == pytest.approx(dense_log_evidence(phi, y, NOISE_VAR), rel=1e-9)
    cov = phi @ phi.T + NOISE_VAR * np.eye(500)
    assert value == pytest.approx(multivariate_normal(mean=np.zeros(500), cov=cov).logpdf(y), rel=1e-9)


def test_nystrom_features_give_the_dense_evidence_of_their_matrix(data):
    X, y = data
    features = nystrom_features(SquaredExponential(1.3, 0.8), X, 60, rng=0)
    value = lowrank_log_evidence(features.phi, y, NOISE_VAR)
    assert value == pytest.approx(dense_log_evidence(features.phi, y, NOISE_VAR), rel=1e-9)
    # nystrom_log_evidence builds the same Φ (same landmarks, same jitter) itself: the same number
    assert nystrom_log_evidence(features.kernel, X, y, NOISE_VAR, features.landmarks) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("kernel", [SquaredExponential(1.3, 0.8), Matern32(0.7, 2.0)], ids=["se", "matern32"])
def test_exact_features_at_m_equal_n_give_the_dense_gp_evidence(data, kernel):
    """Φ with ΦΦᵀ = K (m = N): the evidence of :mod:`explorer.regression` (R&W eq. 2.30) with the same k and σ².
    ‖ΦΦᵀ − K‖ ≈ N ε ‖K‖ from the eigendecomposition moves log p by ≲ N² ε ‖K‖ / σ² ≈ 1e-7 absolute on |log p| ≈ 300:
    1e-9 relative."""
    X, y = data
    phi = exact_features(kernel(X))
    assert lowrank_log_evidence(phi, y, NOISE_VAR) == pytest.approx(
        regression.log_evidence(kernel, X, y, NOISE_VAR), rel=1e-9)


# ----------------------------------------------------------------------------- the gradient


@pytest.mark.parametrize("kernel", [
    SquaredExponential(1.3, 0.8),
    SquaredExponential([0.8, 1.5, 4.0], 0.8),
    SquaredExponential(1.3, 0.8, fixed="signal_var"),
], ids=["isotropic", "ard", "fixed-signal"])
def test_the_analytic_gradient_is_the_finite_difference_gradient(data, kernel):
    """Central differences with step h = 1e-5 in each log hyperparameter: truncation h² f''' ≈ 1e-10 · 300 and
    round-off ε |f| / h ≈ 1e-8 absolute, against derivatives of size 1-100: rtol 1e-6, atol 1e-6."""
    X, y = data
    landmarks = nystrom_features(kernel, X, 40, rng=1).landmarks
    theta = np.append(kernel.theta, np.log(NOISE_VAR))
    _, grad = nystrom_log_evidence(kernel, X, y, NOISE_VAR, landmarks, eval_gradient=True)

    def f(t):
        return nystrom_log_evidence(kernel.with_theta(t[:-1]), X, y, np.exp(t[-1]), landmarks)

    steps = 1e-5 * np.eye(theta.size)
    numeric = np.array([(f(theta + e) - f(theta - e)) / 2e-5 for e in steps])
    assert grad.shape == theta.shape
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("lengthscale", [1.3, [0.8, 1.5, 4.0]], ids=["isotropic", "ard"])
def test_at_m_equal_n_the_nystrom_evidence_and_gradient_are_the_dense_ones(data, lengthscale):
    """Every row a landmark: K̃ = K (K + εI)⁻¹ K = K − ε K (K + εI)⁻¹ with ε = 1e-8 σ_f², within ε of K in norm, so
    value and gradient are those of R&W eqs. (2.30) and (5.9) (:func:`explorer.regression.log_evidence`) to
    ≈ N ε / σ² = 500 · 8e-9 / 0.05 ≈ 1e-4 absolute (1e-6 relative on |log p| ≈ 300)."""
    X, y = data[0][:300], data[1][:300]
    kernel = SquaredExponential(lengthscale, 0.8)
    value, grad = nystrom_log_evidence(kernel, X, y, NOISE_VAR, np.arange(300), eval_gradient=True)
    dense_value, dense_grad = regression.log_evidence(kernel, X, y, NOISE_VAR, eval_gradient=True)
    assert value == pytest.approx(dense_value, abs=1e-4)
    np.testing.assert_allclose(grad, dense_grad, rtol=0, atol=1e-4)


# ----------------------------------------------------------------------------- the maximum


@pytest.fixture
def fit(data):
    X, y = data
    return maximum_evidence_lowrank(X, y, rank=40, rng=0)


def test_the_fit_is_a_frozen_result_whose_value_is_the_evidence_at_its_point(data, fit):
    X, y = data
    assert isinstance(fit, LowRankEvidenceFit) and fit.converged and not fit.at_noise_floor
    assert (fit.rank, fit.n, fit.n_fit) == (40, 500, 500) and fit.n_evaluations >= fit.n_iter > 0
    with pytest.raises(AttributeError):
        fit.noise_var = 1.0
    # the landmarks are those nystrom_features draws from the same seed, and fit.features rebuilds its Φ
    np.testing.assert_array_equal(fit.landmarks, nystrom_features(fit.kernel, X, 40, rng=0).landmarks)
    assert fit.log_evidence == pytest.approx(lowrank_log_evidence(fit.features(X).phi, y, fit.noise_var), rel=1e-12)
    assert fit.note == ("ℓ, σ_f², σ² of largest evidence of the rank-40 Nyström GP on 500 rows (squared exponential, "
                        "fixed landmarks, L-BFGS-B with the analytic O(N m²) gradient)")


def test_the_fit_is_a_local_maximum(data, fit):
    """The gradient there is ~0 (≈ 2e-3 here; ~100 at the start; L-BFGS-B stops on a relative change of f of
    ≈ 2e-9), and moving any log hyperparameter by ±0.05 lowers the evidence (by 0.02 to 3 here, ≈ ½ f'' 0.05²)."""
    X, y = data
    theta = np.log([fit.lengthscale, fit.signal_var, fit.noise_var])

    def f(t, eval_gradient=False):
        return nystrom_log_evidence(SquaredExponential(*np.exp(t[:2])), X, y, np.exp(t[2]), fit.landmarks,
                                    eval_gradient)

    assert np.abs(f(theta, True)[1]).max() < 5e-2
    for step in np.vstack([0.05 * np.eye(3), -0.05 * np.eye(3)]):
        assert f(theta + step) < fit.log_evidence


def test_at_m_equal_n_the_fit_is_the_dense_maximum_evidence(data):
    """Every row a landmark: the low-rank fit is the dense fit of :func:`maximum_evidence` (same start, same box),
    up to the jitter ε = 1e-8 σ_f² and both optimisers' tolerances (a relative change of f of ≈ 2e-9 per step):
    log p to 1e-5 (6e-9 here), hyperparameters to 1e-3 (1e-6 here; the optimum is flat along σ_f²)."""
    X, y = data[0][:80], data[1][:80]
    low, dense = maximum_evidence_lowrank(X, y, rank=80), maximum_evidence(X, y)
    assert low.log_evidence == pytest.approx(dense.log_evidence, abs=1e-5)
    assert (low.lengthscale, low.signal_var, low.noise_var) == pytest.approx(
        (dense.lengthscale, dense.signal_var, dense.noise_var), rel=1e-3)


def test_ard_finds_the_irrelevant_input(data):
    """y does not depend on the third input: its lengthscale runs far above the other two."""
    X, y = data
    fit = maximum_evidence_lowrank(X, y, rank=40, ard=True)
    assert fit.lengthscale.shape == (3,) and fit.converged
    assert fit.lengthscale[2] > 10 * max(fit.lengthscale[:2])
    assert fit.note.startswith("ℓ_1..ℓ_d (ARD), σ_f², σ² of largest evidence of the rank-40")


def test_a_subset_of_rows_is_optimised_and_the_evidence_is_of_all_rows(data):
    X, y = data
    fit = maximum_evidence_lowrank(X, y, rank=40, max_rows=200)
    assert (fit.n, fit.n_fit) == (500, 200) and "optimised on a random 200 of the rows, evidence of all" in fit.note
    assert fit.log_evidence == pytest.approx(lowrank_log_evidence(fit.features(X).phi, y, fit.noise_var), rel=1e-12)


def test_progress_reaches_one_and_a_stop_request_cancels(data):
    X, y = data
    seen = []
    maximum_evidence_lowrank(X[:100], y[:100], rank=10, hooks=Hooks(progress=lambda f, p: seen.append((f, p))))
    assert seen[-1][0] == 1.0 and seen[-1][1].unit == "iterations" and seen[-1][1].stage == "maximum evidence"
    with pytest.raises(Cancelled, match="after 0 of 100 iterations"):
        maximum_evidence_lowrank(X, y, rank=10, hooks=Hooks(should_stop=lambda: True))


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize("args, message", [
    ((np.zeros(5), np.zeros(5), 0.1), r"`phi` must be a finite \(N, m\) feature matrix with m >= 1, got shape \(5,\)"),
    ((np.full((5, 2), np.nan), np.zeros(5), 0.1), r"`phi` must be a finite \(N, m\) feature matrix"),
    ((np.zeros((5, 2)), np.zeros(4), 0.1), r"`y` must hold N = 5 finite targets, one per row of `phi`, got shape \(4,\)"),
    ((np.zeros((5, 2)), np.zeros(5), 0.0), r"`noise_var` must be a positive finite number, got 0.0"),
])
def test_lowrank_log_evidence_errors(args, message):
    with pytest.raises(ValueError, match=message):
        lowrank_log_evidence(*args)


@pytest.mark.parametrize("call, message", [
    (lambda X, y: maximum_evidence_lowrank(X[:2], y[:2], rank=1), "must describe the same n >= 3 finite cases"),
    (lambda X, y: maximum_evidence_lowrank(X, y[:-1], rank=10), "must describe the same n >= 3 finite cases"),
    (lambda X, y: maximum_evidence_lowrank(X, y, rank=10, kernel="matern32"), r"`kernel` must be one of \('se',\)"),
    (lambda X, y: maximum_evidence_lowrank(X, y, rank=0), "The rank m must be a positive integer, got 0"),
    (lambda X, y: maximum_evidence_lowrank(X, y, rank=501), "above the number of training rows N = 500"),
    (lambda X, y: maximum_evidence_lowrank(X, y, rank=10, max_iter=0), "`max_iter` must be a positive integer"),
    (lambda X, y: maximum_evidence_lowrank(X, y, rank=10, max_rows=5), "`max_rows` must be None or an integer >= "
                                                                       "the rank m = 10, got 5"),
    (lambda X, y: nystrom_log_evidence(Matern32(), X, y, 0.1, [0, 1]), "`kernel` must be a SquaredExponential"),
    (lambda X, y: nystrom_log_evidence(SquaredExponential(), X, y, 0.1, [0, 0]), "`landmarks` must be distinct row"),
    (lambda X, y: nystrom_log_evidence(SquaredExponential(), X, y, 0.1, [0, 500]), "indices in 0..499"),
    (lambda X, y: nystrom_log_evidence(SquaredExponential(), X, y[:5], 0.1, [0]), "one finite target per row of X"),
    (lambda X, y: nystrom_log_evidence(SquaredExponential(), X, y, -1.0, [0]), "`noise_var` must be a positive finite number"),
    (lambda X, y: nystrom_log_evidence(SquaredExponential([1.0, 2.0]), X, y, 0.1, [0]), "`lengthscale` has 2 entries"),
])
def test_bad_input_says_what_is_expected(data, call, message):
    with pytest.raises(ValueError, match=message):
        call(*data)
