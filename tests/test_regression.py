"""GP regression: gradients vs finite differences, LOO vs literal refits, scikit-learn agreement."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from explorer import regression as gpr
from explorer.kernels import Exponential, Matern52, Periodic, RationalQuadratic, SquaredExponential

NOISE_VAR = 0.05

KERNELS = [
    SquaredExponential(0.9, 1.3),
    SquaredExponential([0.7, 1.6], 0.8),                             # ARD
    RationalQuadratic(1.1, 0.7, 1.2),
    Matern52([1.2, 0.6], 0.9, fixed="signal_var"),
    SquaredExponential(1.4, 0.7) + Periodic(0.8, 2.5, 0.3),          # sum
    Exponential(1.0, 1.1) * RationalQuadratic([1.5, 0.8], 2.0, fixed="signal_var"),
    SquaredExponential(0.9, 1.3, fixed=("lengthscale", "signal_var")),  # only the noise is free
]
IDS = [repr(k) for k in KERNELS]

CRITERIA = [gpr.log_evidence, gpr.loo_squared_error, gpr.loo_neg_log_predictive]


@pytest.fixture
def data(rng):
    X = rng.uniform(-2.0, 2.0, size=(20, 2))
    y = np.sin(1.5 * X[:, 0]) * np.cos(X[:, 1]) + np.sqrt(NOISE_VAR) * rng.normal(size=20)
    return X, y


def _at(criterion, kernel, X, y, log_params):
    """The criterion as a function of np.append(kernel.theta, log noise_var)."""
    return criterion(kernel.with_theta(log_params[:-1]), X, y, np.exp(log_params[-1]))


@pytest.mark.parametrize("criterion", CRITERIA, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_gradient_matches_central_differences(criterion, kernel, data):
    # h = 1e-5 in log space: truncation O(h^2) ~ 1e-10 relative, round-off ~ eps |f| / h ~ 1e-10;
    # rtol 1e-6 with atol 1e-8 (for near-zero components) leaves a wide margin.
    X, y = data
    value, grad = criterion(kernel, X, y, NOISE_VAR, eval_gradient=True)
    assert value == pytest.approx(criterion(kernel, X, y, NOISE_VAR), rel=1e-13)
    base, h = np.append(kernel.theta, np.log(NOISE_VAR)), 1e-5
    fd = [(_at(criterion, kernel, X, y, base + h * e) - _at(criterion, kernel, X, y, base - h * e))
          / (2 * h) for e in np.eye(base.size)]
    assert grad.shape == base.shape
    assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kernel", KERNELS[:3], ids=IDS[:3])
def test_loo_matches_literal_refits(kernel, data):
    # Eq. (5.12) is exact algebra (block inversion), so only round-off separates it from refitting
    # on n-1 points: condition numbers here are < 1e4, hence rtol 1e-9.
    X, y = data
    loo = gpr.loo_predictions(kernel, X, y, NOISE_VAR)
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = gpr.fit(kernel, X[keep], y[keep], NOISE_VAR)
        mean, var = refit.predict(X[i:i + 1], return_var=True)
        assert loo.mean[i] == pytest.approx(mean[0], rel=1e-9, abs=1e-12)
        assert loo.var[i] == pytest.approx(var[0] + NOISE_VAR, rel=1e-9)


def test_loo_criteria_are_means_over_points(data):
    X, y = data
    kernel = KERNELS[1]
    loo = gpr.loo_predictions(kernel, X, y, NOISE_VAR)
    sq = np.mean((y - loo.mean) ** 2)
    nlp = np.mean(0.5 * np.log(2 * np.pi * loo.var) + (y - loo.mean) ** 2 / (2 * loo.var))
    assert gpr.loo_squared_error(kernel, X, y, NOISE_VAR) == pytest.approx(sq, rel=1e-12)
    assert gpr.loo_neg_log_predictive(kernel, X, y, NOISE_VAR) == pytest.approx(nlp, rel=1e-12)


def test_predict_at_training_inputs(data):
    # Posterior mean K A^-1 y and variance diag(K - K A^-1 K), written with a dense solve.
    X, y = data
    kernel = KERNELS[1]
    post = gpr.fit(kernel, X, y, NOISE_VAR)
    K = kernel(X)
    A = K + NOISE_VAR * np.eye(len(y))
    mean, var = post.predict(X, return_var=True)
    assert_allclose(mean, K @ np.linalg.solve(A, y), rtol=1e-10)
    assert_allclose(var, np.diag(K - K @ np.linalg.solve(A, K)), rtol=1e-8, atol=1e-12)
    assert_allclose(post.predict(X), mean, rtol=0)
    assert post.jitter == 0.0


def test_log_evidence_matches_dense_formula(data):
    X, y = data
    kernel = KERNELS[4]
    A = kernel(X) + NOISE_VAR * np.eye(len(y))
    expected = (-0.5 * y @ np.linalg.solve(A, y) - 0.5 * np.linalg.slogdet(A)[1]
                - 0.5 * len(y) * np.log(2 * np.pi))
    assert gpr.log_evidence(kernel, X, y, NOISE_VAR) == pytest.approx(expected, rel=1e-12)
    assert gpr.fit(kernel, X, y, NOISE_VAR).log_evidence == pytest.approx(expected, rel=1e-12)


# --- scikit-learn ---------------------------------------------------------------------------

def _sklearn_cases():
    sk = pytest.importorskip("sklearn.gaussian_process.kernels")
    return [
        (SquaredExponential(0.9, 1.3), sk.ConstantKernel(1.3) * sk.RBF(0.9), [1, 0]),
        (SquaredExponential([0.7, 1.6], 0.8),
         sk.ConstantKernel(0.8) * sk.RBF([0.7, 1.6]), [2, 0, 1]),
        (RationalQuadratic(1.1, 0.7, 1.2),
         sk.ConstantKernel(1.2) * sk.RationalQuadratic(1.1, 0.7), [2, 1, 0]),
    ]


@pytest.mark.parametrize("index", range(3))
def test_equals_sklearn_gaussian_process_regressor(index, data, rng):
    # Same algebra (Cholesky of K + alpha I) in both; rtol 1e-10 allows for summation order.
    # `order` maps our theta (lengthscale, ..., signal_var) to scikit-learn's (constant, ...).
    from sklearn.gaussian_process import GaussianProcessRegressor
    ours, theirs, order = _sklearn_cases()[index]
    X, y = data
    sk_gp = GaussianProcessRegressor(theirs, alpha=NOISE_VAR, optimizer=None).fit(X, y)
    Xs = rng.uniform(-2.5, 2.5, size=(7, 2))
    mean, var = gpr.fit(ours, X, y, NOISE_VAR).predict(Xs, return_var=True)
    sk_mean, sk_std = sk_gp.predict(Xs, return_std=True)
    assert_allclose(mean, sk_mean, rtol=1e-10, atol=1e-12)
    assert_allclose(np.sqrt(var), sk_std, rtol=1e-8, atol=1e-10)
    value, grad = gpr.log_evidence(ours, X, y, NOISE_VAR, eval_gradient=True)
    sk_value, sk_grad = sk_gp.log_marginal_likelihood(sk_gp.kernel_.theta, eval_gradient=True)
    assert value == pytest.approx(sk_gp.log_marginal_likelihood_value_, rel=1e-10)
    assert value == pytest.approx(sk_value, rel=1e-10)
    assert_allclose(grad[:-1][order], sk_grad, rtol=1e-9, atol=1e-12)


# --- jitter ---------------------------------------------------------------------------------

def test_jitter_rescues_duplicated_inputs_without_noise(data):
    X, y = data
    X2, y2 = np.vstack([X, X[:3]]), np.append(y, y[:3])   # duplicated inputs, identical targets
    kernel = SquaredExponential(0.9, 1.3)
    post = gpr.fit(kernel, X2, y2, 0.0)
    mean_scale = np.mean(kernel.diag(X2))
    assert post.jitter in [rel * mean_scale for rel in gpr.JITTER_LADDER]
    mean, var = post.predict(X, return_var=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(var))
    # interpolates the training targets up to the jitter
    assert_allclose(mean, y, atol=1e-3)
    assert np.isfinite(gpr.log_evidence(kernel, X2, y2, 0.0))
    assert np.all(np.isfinite(gpr.loo_predictions(kernel, X2, y2, 0.0).var))


class _NegatedSE(SquaredExponential):
    """Not positive semi-definite: -k. Only to drive the failure path."""

    def _eval(self, X, Y, eval_gradient):
        return -super()._eval(X, Y, eval_gradient)


def test_raises_when_jitter_ladder_fails(data):
    X, y = data
    with pytest.raises(gpr.CholeskyError, match="not positive definite even with a jitter of"):
        gpr.fit(_NegatedSE(), X, y, 0.0)
    assert issubclass(gpr.CholeskyError, np.linalg.LinAlgError)


# --- validation: one test per message ---------------------------------------------------------

def test_rejects_non_kernel(data):
    with pytest.raises(TypeError, match="`kernel` must be an explorer.kernels.Kernel, got str"):
        gpr.fit("rbf", *data, NOISE_VAR)


def test_rejects_x_not_2d(data):
    with pytest.raises(ValueError, match=r"`X` must be a 2-D array"):
        gpr.fit(SquaredExponential(), data[0][:, 0], data[1], NOISE_VAR)


def test_rejects_y_of_wrong_shape(data):
    X, y = data
    with pytest.raises(ValueError, match=r"`y` must be 1-D .* shape \(20,\), got shape \(20, 1\)"):
        gpr.log_evidence(SquaredExponential(), X, y[:, None], NOISE_VAR)


def test_rejects_non_finite_y(data):
    X, y = data
    with pytest.raises(ValueError, match="`y` contains NaN or inf"):
        gpr.fit(SquaredExponential(), X, np.where(np.arange(20) == 3, np.nan, y), NOISE_VAR)


def test_rejects_negative_noise_var(data):
    with pytest.raises(ValueError, match="`noise_var` must be a finite number >= 0, got -0.1"):
        gpr.loo_predictions(SquaredExponential(), *data, -0.1)


def test_rejects_gradient_at_zero_noise(data):
    with pytest.raises(ValueError, match=r"eval_gradient=True differentiates .* log\(noise_var\)"):
        gpr.loo_squared_error(SquaredExponential(), *data, 0.0, eval_gradient=True)


def test_rejects_loo_with_one_point():
    with pytest.raises(ValueError, match="leave-one-out needs at least 2 data points, got 1"):
        gpr.loo_neg_log_predictive(SquaredExponential(), np.zeros((1, 1)), [0.0], NOISE_VAR)


def test_rejects_prediction_inputs_with_wrong_columns(data):
    post = gpr.fit(SquaredExponential(), *data, NOISE_VAR)
    with pytest.raises(ValueError, match="`Xs` must have 2 columns like the training inputs"):
        post.predict(np.zeros((4, 3)))


def test_rejects_non_finite_kernel_matrix(data):
    class _NaNKernel(SquaredExponential):
        def _eval(self, X, Y, eval_gradient):
            return np.full((len(X), len(X)), np.nan)

    with pytest.raises(FloatingPointError, match="kernel matrix contains NaN or inf"):
        gpr.fit(_NaNKernel(), *data, NOISE_VAR)
