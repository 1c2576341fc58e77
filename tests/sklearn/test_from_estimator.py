"""ReplicaBootstrapRegressor.from_estimator: each supported scikit-learn regressor is the Gaussian process the
theory runs on (checked against scikit-learn's own fit: the GP posterior mean on the model the adapter built, with every
occupation 1, is the estimator's prediction), the intercept's prior is flat to 1e-6, and bad input gets scikit-learn's
errors and wordings."""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel  # noqa: E402
from sklearn.kernel_approximation import Nystroem, RBFSampler  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression, Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import PolynomialFeatures, StandardScaler  # noqa: E402

from explorer.operators.dense import DenseKernel  # noqa: E402
from explorer.operators.features import FeatureKernel  # noqa: E402
from explorer.sklearn import ReplicaBootstrapRegressor, estimators, problems  # noqa: E402

N = 60


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.5] + [0.0, 10.0, -2.0]
    y = X @ [1.0, -0.4, 2.0] + np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(n) + 7.0
    return X, y


X, Y = _data()
X_TEST = _data(9, seed=1)[0]


def _estimators():
    return {
        "ridge": Ridge(alpha=2.0),
        "ridge-no-intercept": Ridge(alpha=2.0, fit_intercept=False),
        "ridge-wide": make_pipeline(PolynomialFeatures(4), Ridge(alpha=5.0)),
        "kernel-ridge-linear": KernelRidge(alpha=1.0, kernel="linear"),
        "kernel-ridge-rbf": KernelRidge(alpha=0.1, kernel="rbf", gamma=0.2),
        "kernel-ridge-laplacian": KernelRidge(alpha=0.1, kernel="laplacian", gamma=0.3),
        "kernel-ridge-poly": KernelRidge(alpha=1.0, kernel="polynomial", degree=2, gamma=0.1, coef0=1.0),
        "kernel-ridge-sigmoid": KernelRidge(alpha=1e-4, kernel="sigmoid", gamma=1e-6, coef0=0.0),
        "kernel-ridge-object": KernelRidge(alpha=0.1, kernel=ConstantKernel(2.0) * RBF(3.0)),
        "kernel-ridge-callable": KernelRidge(alpha=0.1, kernel=lambda a, b: np.exp(-0.1 * np.sum((a - b) ** 2))),
        "pipeline-nystroem": make_pipeline(StandardScaler(), Nystroem(gamma=0.3, n_components=40, random_state=0),
                                           Ridge(alpha=0.2)),
        "pipeline-rbf-sampler": make_pipeline(StandardScaler(), RBFSampler(gamma=0.3, n_components=50,
                                                                          random_state=0), Ridge(alpha=0.2)),
        "gpr-normalised": GaussianProcessRegressor(RBF(3.0) + WhiteKernel(0.1), normalize_y=True, random_state=0),
    }


@pytest.mark.parametrize("name", list(_estimators()))
def test_the_model_is_the_estimators_own_fit(name):
    """The GP posterior mean with every row once, on the K or Φ and σ² the adapter built, is est.predict (1e-6)."""
    est = _estimators()[name].fit(X, Y)
    boot = ReplicaBootstrapRegressor.from_estimator(est, X, Y)
    problem, shift, scale = boot.problem_, boot.model_.y_shift, boot.model_.y_scale
    _, at_test = problem.operator.refit_predictions(problem.y, problem.noise_var, np.ones((1, N)),
                                                    boot._cross(X_TEST))
    expected = est.predict(X_TEST)
    np.testing.assert_allclose(at_test[0] * scale + shift, expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    assert boot.solution_.converged


def test_wide_features_take_the_feature_path_and_narrow_kernels_the_dense_one():
    wide = make_pipeline(PolynomialFeatures(4), Ridge(alpha=5.0)).fit(X, Y)  # 35 features + the constant < N
    assert isinstance(ReplicaBootstrapRegressor.from_estimator(wide, X, Y).problem_.operator, FeatureKernel)
    wider = make_pipeline(StandardScaler(), PolynomialFeatures(6), Ridge(alpha=5.0)).fit(X, Y)  # 84 features > N
    assert isinstance(ReplicaBootstrapRegressor.from_estimator(wider, X, Y).problem_.operator, FeatureKernel)
    rbf = KernelRidge(alpha=0.1, kernel="rbf").fit(X, Y)
    assert isinstance(ReplicaBootstrapRegressor.from_estimator(rbf, X, Y).problem_.operator, DenseKernel)
    low = ReplicaBootstrapRegressor.from_estimator(rbf, X, Y, rank=20, random_state=0)
    assert isinstance(low.problem_.operator, FeatureKernel) and low.features_.rank == 20


def test_the_features_and_the_dense_path_agree_on_the_same_model(monkeypatch):
    """Above MAX_RANK features the model runs on K = ΦΦᵀ; below, on Φ: same answers to 1e-6."""
    pipe = make_pipeline(StandardScaler(), PolynomialFeatures(3), Ridge(alpha=5.0, fit_intercept=False)).fit(X, Y)
    on_features = ReplicaBootstrapRegressor.from_estimator(pipe, X, Y, tol=1e-9)  # the closings differ at tol
    monkeypatch.setattr(problems, "MAX_RANK", 1)
    dense = ReplicaBootstrapRegressor.from_estimator(pipe, X, Y, tol=1e-9)
    assert isinstance(on_features.problem_.operator, FeatureKernel)
    assert isinstance(dense.problem_.operator, DenseKernel) and dense.solution_.jitter == 0
    for method in ("percentile", "jackknife+-after-bootstrap"):
        np.testing.assert_allclose(on_features.predict_interval(X_TEST, method=method),
                                   dense.predict_interval(X_TEST, method=method), rtol=1e-6)
    np.testing.assert_allclose(on_features.predict(X_TEST, return_std=True), dense.predict(X_TEST, return_std=True),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["ridge", "pipeline-nystroem"])
def test_ten_times_the_intercepts_prior_variance_changes_nothing_beyond_1e_6(name, monkeypatch):
    est = _estimators()[name].fit(X, Y)
    before = ReplicaBootstrapRegressor.from_estimator(est, X, Y)
    monkeypatch.setattr(estimators, "INTERCEPT_PRIOR", 10 * estimators.INTERCEPT_PRIOR)
    after = ReplicaBootstrapRegressor.from_estimator(est, X, Y)
    mean, std = before.predict(X_TEST, return_std=True)
    mean10, std10 = after.predict(X_TEST, return_std=True)
    scale = np.abs(mean).max()
    assert np.max(np.abs(mean10 - mean)) < 1e-6 * scale
    assert np.max(np.abs(std10 - std) / std) < 1e-6
    for a, b in zip(before.predict_interval(X_TEST, method="jackknife+-after-bootstrap"),
                    after.predict_interval(X_TEST, method="jackknife+-after-bootstrap")):
        assert np.max(np.abs(a - b)) < 1e-6 * scale


def test_gpr_normalised_maps_the_theory_back_to_the_targets_units():
    """normalize_y=True: the same theory as normalize_y=False on the standardised targets, scaled back."""
    gpr = GaussianProcessRegressor(RBF(3.0) + WhiteKernel(0.1), normalize_y=True, optimizer=None).fit(X, Y)
    boot = ReplicaBootstrapRegressor.from_estimator(gpr, X, Y)
    mu, sd = Y.mean(), Y.std()
    plain = GaussianProcessRegressor(RBF(3.0) + WhiteKernel(0.1), optimizer=None).fit(X, (Y - mu) / sd)
    ref = ReplicaBootstrapRegressor.from_gpr(plain)
    mean, std = boot.predict(X_TEST, return_std=True)
    mean0, std0 = ref.predict(X_TEST, return_std=True)
    np.testing.assert_allclose(mean, mean0 * sd + mu, rtol=1e-10)
    np.testing.assert_allclose(std, std0 * sd, rtol=1e-10)
    np.testing.assert_allclose(boot.bootstrap_distribution().interval(0.8),
                               np.array(ref.bootstrap_distribution().interval(0.8)) * sd + mu, rtol=1e-10)
    np.testing.assert_allclose(boot.learning_curve(1.0).theory, ref.learning_curve(1.0).theory * sd**2, rtol=1e-10)


def test_from_gpr_on_a_normalised_gpr_says_in_one_sentence_what_to_call_instead():
    gpr = GaussianProcessRegressor(RBF(3.0) + WhiteKernel(0.1), normalize_y=True, optimizer=None).fit(X, Y)
    with pytest.raises(ValueError) as info:
        ReplicaBootstrapRegressor.from_gpr(gpr)
    message = str(info.value)
    assert "normalize_y=True" in message and "from_estimator(gpr, X, y)" in message
    assert message.count(". ") == 0 and message.endswith(".")  # one sentence
    boot = ReplicaBootstrapRegressor.from_estimator(gpr, X, Y)  # what it names works
    np.testing.assert_allclose(boot.predict(X), gpr.predict(X), rtol=0, atol=0.5 * Y.std())


def test_an_unfitted_estimator_in_the_constructor_is_fitted_and_clone_works():
    boot = ReplicaBootstrapRegressor(estimator=Ridge(alpha=2.0)).fit(X, Y)
    assert boot.estimator_ is not boot.estimator and hasattr(boot.estimator_, "coef_")
    again = clone(boot).fit(X, Y)
    np.testing.assert_allclose(again.predict(X_TEST), boot.predict(X_TEST), rtol=1e-12)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("est", [Lasso(), LogisticRegression(), LinearRegression(),
                                 make_pipeline(StandardScaler(), Lasso())])
def test_other_kinds_get_one_type_error_naming_what_is_supported(est):
    with pytest.raises(TypeError, match="Ridge, KernelRidge, a Pipeline whose last step is Ridge .* "
                                        "GaussianProcessRegressor"):
        ReplicaBootstrapRegressor.from_estimator(est, X, Y)


@pytest.mark.parametrize("est", [Ridge(), KernelRidge(), make_pipeline(StandardScaler(), Ridge()),
                                 GaussianProcessRegressor()])
def test_unfitted_estimators_raise_not_fitted(est):
    with pytest.raises(NotFittedError):
        ReplicaBootstrapRegressor.from_estimator(est, X, Y)


def test_bad_data_and_arguments_get_scikit_learns_wordings():
    boot = ReplicaBootstrapRegressor.from_estimator(Ridge(alpha=2.0).fit(X, Y), X, Y)
    with pytest.raises(ValueError, match="X has 2 features, but ReplicaBootstrapRegressor is expecting 3 features"):
        boot.predict_interval(X_TEST[:, :2])
    bad = X_TEST.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        boot.predict_interval(bad, method="jackknife+-after-bootstrap")
    with pytest.raises(ValueError, match="X has 2 features, but Ridge is expecting 3 features"):
        ReplicaBootstrapRegressor.from_estimator(Ridge().fit(X, Y), X[:, :2], Y)
    for confidence in (0.0, 1.0, 90, -0.1, True):
        with pytest.raises(ValueError, match=r"'confidence' parameter of predict_interval must be a float in the "
                                             r"range \(0, 1\)"):
            boot.predict_interval(X_TEST, confidence=confidence)
    with pytest.raises(ValueError, match="'method' parameter of predict_interval must be a str among"):
        boot.predict_interval(X_TEST, method="jackknife")
    with pytest.raises(ValueError, match="too few for a J\\+aB interval at confidence 0.99"):
        boot.predict_interval(X_TEST, confidence=0.99, method="jackknife+-after-bootstrap")
    with pytest.raises(NotFittedError):
        ReplicaBootstrapRegressor().predict_interval(X_TEST)
    with pytest.raises(TypeError, match=r"do not pass \['alpha'\]"):
        ReplicaBootstrapRegressor.from_estimator(Ridge().fit(X, Y), X, Y, alpha=0.1)


def test_what_the_theory_cannot_take_is_a_value_error():
    with pytest.raises(ValueError, match="`noise_var` must be a positive finite number, got 0.0"):
        ReplicaBootstrapRegressor.from_estimator(Ridge(alpha=0.0).fit(X, Y), X, Y)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        centred = X - X.mean(axis=0)  # tanh(xᵀx'/3): eigenvalues from −4.5 to 38.6
        ReplicaBootstrapRegressor.from_estimator(KernelRidge(kernel="sigmoid", gamma=0.3).fit(centred, Y), centred, Y)
    with pytest.raises(ValueError, match="positive=True"):
        ReplicaBootstrapRegressor.from_estimator(Ridge(positive=True).fit(X, Y), X, Y)
    with pytest.raises(ValueError, match="several targets"):
        ReplicaBootstrapRegressor.from_estimator(Ridge().fit(X, np.c_[Y, Y]), X, Y)
    with pytest.raises(ValueError, match="precomputed"):
        K = X @ X.T
        ReplicaBootstrapRegressor.from_estimator(KernelRidge(kernel="precomputed").fit(K, Y), K, Y)


def test_kernel_ridge_on_nystroem_features_of_nearly_full_rank_gives_the_dense_intervals():
    """rank = N − 1 landmarks of a smooth kernel: ΦΦᵀ ≈ K, so the low-rank intervals are the dense ones (1e-3)."""
    krr = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.05).fit(X, Y)
    dense = ReplicaBootstrapRegressor.from_estimator(krr, X, Y)
    low_rank = ReplicaBootstrapRegressor.from_estimator(krr, X, Y, rank=N - 1, random_state=0)
    assert isinstance(low_rank.problem_.operator, FeatureKernel)
    for method in ("percentile", "jackknife+-after-bootstrap"):
        a, b = np.array(dense.predict_interval(X_TEST, method=method)), np.array(
            low_rank.predict_interval(X_TEST, method=method))
        assert np.max(np.abs(a - b)) < 1e-3 * np.max(a[1] - a[0])
