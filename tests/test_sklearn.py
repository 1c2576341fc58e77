"""explorer.sklearn: the scikit-learn front door to the replica bootstrap of GP regression (issue 37, item 1).

The independent checks are literal refits: ``GaussianProcessRegressor``s with the fitted kernel, retrained on bootstrap
samples of duplicated rows (``test_predict_matches_literal_refits``, ``test_distribution_covers_literal_refits``).
The tolerances there are k·SE (Monte-Carlo noise) plus the ADATAP approximation error on this problem, measured once
against 200,000 core Monte-Carlo samples (``explorer.gp_bootstrap.montecarlo.bootstrap_predictions``): bootstrap mean
at the test inputs within 0.018 bootstrap sd, bootstrap sd within 2.2 % (relative), pooled coverage of the eq. (60)
quantiles within 0.004, ε(S) within 0.9 % at S/N = 0.5, 1, 2.
"""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import explorer.sklearn as adapter  # noqa: E402
from explorer.bootstrap import replica  # noqa: E402
from explorer.bootstrap import replica as lowrank  # noqa: E402
from explorer.gp_bootstrap import stages  # noqa: E402
from explorer.lowrank import nystrom_features  # noqa: E402
from explorer.sklearn import (  # noqa: E402
    EXPECTED_FAILED_CHECKS,
    BootstrapDistribution,
    ReplicaBootstrapRegressor,
    split_noise,
)

N = 40
#: Literal refits of the Monte-Carlo checks (about 2 ms each).
REFITS = 2_000


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 1))
    return X, np.sin(X[:, 0]) + 0.3 * rng.standard_normal(n)


X_TEST = np.linspace(-3.5, 3.5, 8)[:, None]


@pytest.fixture(scope="module")
def gpr():
    X, y = _data()
    return GaussianProcessRegressor(ConstantKernel() * RBF() + WhiteKernel(), random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def boot(gpr):
    return ReplicaBootstrapRegressor.from_gpr(gpr)


@pytest.fixture(scope="module")
def refits(boot):
    """Predictions of REFITS GaussianProcessRegressors (fitted kernel, optimizer=None) retrained on bootstrap samples:
    s_i ~ Poisson(S/N) copies of row i (eq. 11), at the training inputs and at X_TEST; an empty sample predicts the
    prior mean 0. Returns (occupations, predictions at X, predictions at X_TEST)."""
    X, y = boot.problem_.X, boot.problem_.y
    rng = np.random.default_rng(20261128)
    occ = rng.poisson(boot.s_over_n, size=(REFITS, N))
    where = np.vstack([X, X_TEST])
    out = np.zeros((REFITS, where.shape[0]))
    for b, s in enumerate(occ):
        rows = np.repeat(np.arange(N), s)
        if rows.size:
            gp = GaussianProcessRegressor(boot.kernel_, alpha=boot.alpha, optimizer=None).fit(X[rows], y[rows])
            out[b] = gp.predict(where)
    return occ, out[:, :N], out[:, N:]


def _se_of_std(samples: np.ndarray) -> np.ndarray:
    """Delta-method standard error of the sample standard deviation, per column."""
    centred = samples - samples.mean(axis=0)
    var = np.mean(centred**2, axis=0)
    se_var = np.sqrt((np.mean(centred**4, axis=0) - var**2) / samples.shape[0])
    return se_var / (2 * np.sqrt(var))


# ----------------------------------------------------------------------------- scikit-learn's conventions


@parametrize_with_checks([ReplicaBootstrapRegressor()], expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_check_estimator(estimator, check):
    check(estimator)


def test_at_most_five_expected_failures():
    assert len(EXPECTED_FAILED_CHECKS) <= 5


def test_clone_keeps_the_parameters_and_drops_the_fit(boot):
    copy = clone(boot)
    assert copy.get_params() == boot.get_params()
    with pytest.raises(NotFittedError):
        copy.predict(X_TEST)


def test_pipeline_with_a_scaler_equals_scaling_by_hand():
    X, y = _data()
    X = 10 * X + 3
    est = ReplicaBootstrapRegressor(RBF(1.0) + WhiteKernel(0.1), random_state=0)
    pipe = make_pipeline(StandardScaler(), est).fit(X, y)
    scaler = StandardScaler().fit(X)
    alone = clone(est).fit(scaler.transform(X), y)
    np.testing.assert_allclose(pipe.predict(X_TEST), alone.predict(scaler.transform(X_TEST)), rtol=1e-10, atol=1e-12)


def test_grid_search_over_the_length_scale_picks_the_one_that_generalises():
    X, y = _data()
    search = GridSearchCV(ReplicaBootstrapRegressor(RBF(1.0), alpha=0.1, optimizer=None),
                          {"kernel__length_scale": [0.01, 1.0, 100.0]}, cv=3).fit(X, y)
    assert search.best_params_ == {"kernel__length_scale": 1.0}
    assert search.best_estimator_.kernel_.length_scale == 1.0
    assert search.cv_results_["mean_test_score"][1] > 0.5


# ----------------------------------------------------------------------------- equality with the core


def test_equals_the_core_on_the_same_kernel_matrix_ard_product_and_white_noise():
    """K written out by hand for 2.0·ARD-RBF; the WhiteKernel level is noise: σ² = alpha + 0.05."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    kernel = ConstantKernel(2.0) * RBF([0.7, 2.0]) + WhiteKernel(0.05)
    est = ReplicaBootstrapRegressor(kernel, alpha=0.01, s_over_n=1.5, optimizer=None, tol=1e-8).fit(X, y)

    def k(A, B):
        d2 = (((A[:, None, :] - B[None, :, :]) / np.array([0.7, 2.0])) ** 2).sum(-1)
        return 2.0 * np.exp(-0.5 * d2)

    sol = replica.solve_replica(k(X, X), y, 0.06, 45.0, tol=1e-8)
    moments = replica.bootstrap_moments(sol, k(X, X), k(X_TEST.repeat(2, 1), X))
    assert est.noise_var_ == pytest.approx(0.06, rel=1e-15)
    mean, std = est.predict(X_TEST.repeat(2, 1), return_std=True)
    np.testing.assert_allclose(mean, moments.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(moments.var), rtol=1e-10)
    np.testing.assert_allclose(est.solution_.dl, sol.dl, rtol=1e-10)
    h = np.linspace(-2, 2, 7)
    dist = est.bootstrap_distribution()
    np.testing.assert_allclose(dist.pdf(h[:, None]).T, [replica.predictive_density(sol, i, h) for i in range(30)],
                               rtol=1e-10, atol=1e-14)
    curve = est.learning_curve([0.5, 1.5])
    expected = [replica.bootstrap_test_error(s) for s in replica.replica_learning_curve(
        k(X, X), y, 0.06, [15.0, 45.0], tol=1e-8)]
    np.testing.assert_allclose(curve.theory, expected, rtol=1e-10)


def test_split_noise_takes_white_terms_of_sums_only():
    prior, noise = split_noise((RBF(1.0) + WhiteKernel(0.1)) + (DotProduct() + WhiteKernel(0.2)))
    assert noise == pytest.approx(0.3)
    assert repr(prior) == repr(RBF(1.0) + DotProduct())
    inside = RBF(1.0) * WhiteKernel(0.5)  # a product is a covariance, not noise
    assert split_noise(inside) == (inside, 0.0)


def test_low_rank_equals_the_core_on_the_same_nystrom_features():
    X, y = _data()
    kernel = ConstantKernel(0.5) * RBF(1.5)
    est = ReplicaBootstrapRegressor(kernel, alpha=0.1, rank=12, optimizer=None, random_state=7).fit(X, y)
    features = nystrom_features(kernel, X, 12, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(est.features_.landmarks, features.landmarks)
    sol = lowrank.solve_replica_lowrank(features.phi, y, 0.1, float(N))
    moments = lowrank.bootstrap_moments_lowrank(sol, features.phi, features.transform(X_TEST))
    mean, std = est.predict(X_TEST, return_std=True)
    np.testing.assert_allclose(mean, moments.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(moments.var), rtol=1e-10)


def test_full_rank_nystrom_equals_the_dense_path():
    """m = N landmarks: ΦΦᵀ = K up to the Nyström jitter (1e-8 relative), so both paths agree to ~1e-6."""
    X, y = _data()
    params = dict(kernel=ConstantKernel(0.5) * RBF(1.5), alpha=0.1, optimizer=None, tol=1e-9, random_state=0)
    dense = ReplicaBootstrapRegressor(**params).fit(X, y)
    full = ReplicaBootstrapRegressor(rank=N, **params).fit(X, y)
    for a, b in zip(dense.predict(X_TEST, return_std=True), full.predict(X_TEST, return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_from_gpr_keeps_the_fitted_kernel_and_data(gpr, boot):
    assert repr(boot.kernel_) == repr(gpr.kernel_)
    assert boot.noise_var_ == pytest.approx(gpr.alpha + gpr.kernel_.k2.noise_level, rel=1e-14)
    same = ReplicaBootstrapRegressor(gpr.kernel_, alpha=gpr.alpha, optimizer=None).fit(gpr.X_train_, gpr.y_train_)
    np.testing.assert_array_equal(boot.predict(X_TEST), same.predict(X_TEST))
    assert boot.evidence_rows_.size == 0


def test_hyperparameters_are_those_of_gaussian_process_regressor():
    X, y = _data()
    kernel = ConstantKernel() * RBF() + WhiteKernel()
    est = ReplicaBootstrapRegressor(kernel, alpha=1e-3, random_state=0).fit(X, y)
    gpr = GaussianProcessRegressor(kernel, alpha=1e-3, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.kernel_.theta, gpr.kernel_.theta, rtol=1e-12)
    np.testing.assert_array_equal(est.evidence_rows_, np.arange(N))


def test_evidence_on_a_subsample_above_max_evidence_rows(monkeypatch):
    monkeypatch.setattr(adapter.regressor, "MAX_EVIDENCE_ROWS", 25)
    X, y = _data()
    kernel = ConstantKernel() * RBF() + WhiteKernel()
    est = ReplicaBootstrapRegressor(kernel, random_state=3).fit(X, y)
    rows = est.evidence_rows_
    assert rows.size == 25 and np.all(np.diff(rows) > 0)
    gpr = GaussianProcessRegressor(kernel, alpha=est.alpha, random_state=3).fit(X[rows], y[rows])
    np.testing.assert_allclose(est.kernel_.theta, gpr.kernel_.theta, rtol=1e-12)
    assert est.solution_.n == N  # the theory uses every row


# ----------------------------------------------------------------------------- against literal refits


def test_predict_matches_literal_refits(boot, refits):
    """Bootstrap mean and sd at test inputs (eq. 48) vs REFITS GaussianProcessRegressor refits: 4 SE plus the
    measured ADATAP error (0.018 sd for the mean, 2.2 % for the sd; see the module docstring), here 0.03 and 3 %."""
    _, _, test = refits
    mean, std = boot.predict(X_TEST, return_std=True)
    mc_mean, mc_std = test.mean(axis=0), test.std(axis=0)
    se_mean = mc_std / np.sqrt(REFITS)
    assert np.all(np.abs(mean - mc_mean) <= 4 * se_mean + 0.03 * std), (mean - mc_mean) / se_mean
    assert np.all(np.abs(std - mc_std) <= 4 * _se_of_std(test) + 0.03 * mc_std), std / mc_std - 1


def test_distribution_covers_literal_refits(boot, refits):
    """The 90 % percentile interval of eq. (60) holds 90 % of the refitted predictions at the training inputs, pooled
    over inputs: SE ≤ √(0.09/REFITS) = 0.0067 (inputs of one sample are correlated, at worst fully), 4 SE plus the
    measured 0.004 of the approximation."""
    _, train, _ = refits
    low, high = boot.bootstrap_distribution().interval(0.9)
    inside = np.mean((train >= low) & (train <= high))
    assert abs(inside - 0.9) <= 4 * np.sqrt(0.09 / REFITS) + 0.004, inside


def test_learning_curve_matches_efron_on_literal_refits(boot, refits):
    """ε(S/N = 1) of the theory (eq. 45) vs Efron's estimator (eq. 17) on the literal refits: 4 SE plus the measured
    0.3 % of the approximation at S/N = 1 (1 % stated)."""
    occ, train, _ = refits
    y = boot.problem_.y
    out = occ == 0
    per_input = np.array([np.mean((train[out[:, i], i] - y[i]) ** 2) for i in range(N)])
    efron = per_input.mean()
    per_sample = np.where(out, (train - y) ** 2 - per_input, 0.0) / out.mean(axis=0)  # delta-method terms
    se = np.std(per_sample.mean(axis=1)) / np.sqrt(REFITS)
    theory = boot.learning_curve(1.0).theory[0]
    assert abs(theory - efron) <= 4 * se + 0.01 * theory, (theory, efron, se)


def test_learning_curve_monte_carlo_is_the_cores(boot):
    curve = boot.learning_curve([0.5, 2.0], mc_samples=300, random_state=5)
    core = stages.mc_curve(boot.problem_, [0.5, 2.0], 300, rng=5)
    assert isinstance(curve.theory, np.ndarray) and curve.theory.shape == (2,)
    np.testing.assert_array_equal(curve.monte_carlo, [p.mc_mean for p in core.points])
    np.testing.assert_array_equal(curve.standard_error, [p.mc_se for p in core.points])
    assert np.all(np.abs(curve.theory - curve.monte_carlo) <= 4 * curve.standard_error + 0.01 * curve.theory)
    assert boot.learning_curve([1.0]).monte_carlo is None


# ----------------------------------------------------------------------------- the distribution object


def test_distribution_mean_and_sd_agree_with_eq_48_at_the_training_inputs(boot):
    """Eq. (60)'s mixture moments and eq. (48) at the training inputs are two sides of the same fixed point
    (eqs. 52-53 vs 34-35): equal up to the iteration's tol = 1e-3 (measured 3e-5 and 7e-4 relative)."""
    dist = boot.bootstrap_distribution()
    mean, std = boot.predict(boot.problem_.X, return_std=True)
    np.testing.assert_allclose(dist.mean(), mean, atol=1e-3 * np.max(std))
    np.testing.assert_allclose(dist.std(), std, rtol=3e-3)


def test_ppf_inverts_cdf_and_cdf_integrates_pdf(boot):
    dist = boot.bootstrap_distribution()
    q = np.linspace(0.01, 0.99, 9)[:, None]
    np.testing.assert_allclose(dist.cdf(dist.ppf(q)), np.broadcast_to(q, (9, N)), atol=1e-12)
    grid = np.linspace(dist.ppf(1e-12), dist.ppf(0.3), 20_001)  # column i: from far left to the 0.3-quantile of i
    mass = np.trapezoid(dist.pdf(grid), grid, axis=0)  # quadrature of the density, independent of ndtr
    np.testing.assert_allclose(mass, 0.3, atol=1e-4)
    low, high = dist.interval(0.8)
    np.testing.assert_allclose(low, dist.ppf(0.1), rtol=1e-14)  # (1 − 0.8)/2 is 0.1 to the last bit only
    np.testing.assert_allclose(high, dist.ppf(0.9), rtol=1e-14)
    assert np.all(dist.ppf(0.0) == -np.inf) and np.all(dist.ppf(1.0) == np.inf)


def test_point_mass_components_have_a_step_cdf():
    dist = BootstrapDistribution(np.array([0.25, 0.75]), np.array([[0.0, 1.0]]), np.zeros((1, 2)), 1.0)
    np.testing.assert_array_equal(dist.cdf([-1.0, 0.0, 0.5, 1.0]), [0.0, 0.25, 0.25, 1.0])
    assert dist.ppf(0.5)[0] == pytest.approx(1.0)
    assert dist.pdf(0.5)[0] == 0.0


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("params, match", [
    (dict(kernel="rbf"), "The 'kernel' parameter of ReplicaBootstrapRegressor must be None or an instance of"),
    (dict(alpha=-1.0), r"The 'alpha' parameter of ReplicaBootstrapRegressor must be a float in the range \[0, inf\)"),
    (dict(s_over_n=0.0), r"'s_over_n' parameter .* range \(0, inf\)"),
    (dict(rank=0), r"'rank' parameter .* None or an int"),
    (dict(tol=2.0), r"'tol' parameter .* range \(0, 1\)"),
    (dict(alpha=0.0, kernel=RBF()), "`noise_var` must be a positive finite number, got 0.0"),
    (dict(kernel=WhiteKernel()), "only WhiteKernel noise"),
    (dict(rank=100), "above the number of training rows"),
])
def test_bad_parameters_raise_at_fit(params, match):
    est = ReplicaBootstrapRegressor(**params)  # __init__ stores, fit validates
    with pytest.raises(ValueError, match=match):
        est.fit(*_data())


def test_bad_data_raise_scikit_learns_errors():
    X, y = _data()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ReplicaBootstrapRegressor().fit(X, y[:-1])
    X_nan = X.copy()
    X_nan[3, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ReplicaBootstrapRegressor().fit(X_nan, y)
    with pytest.raises(ValueError, match="a minimum of 2 is required"):
        ReplicaBootstrapRegressor().fit(X[:1], y[:1])
    with pytest.raises(NotFittedError):
        ReplicaBootstrapRegressor().predict(X)
    with pytest.raises(NotFittedError):
        ReplicaBootstrapRegressor().bootstrap_distribution()


def test_bad_distribution_arguments(boot):
    dist = boot.bootstrap_distribution()
    with pytest.raises(ValueError, match=r"`q` must be probabilities in \[0, 1\]"):
        dist.ppf(1.5)
    with pytest.raises(ValueError, match=r"`confidence` must be a number in \(0, 1\)"):
        dist.interval(90)
    with pytest.raises(ValueError, match="`s_over_n` must be positive"):
        boot.learning_curve([1.0, -1.0])


def test_from_gpr_refuses_what_the_theory_cannot_take(gpr):
    X, y = _data()
    with pytest.raises(TypeError, match="must be a fitted GaussianProcessRegressor"):
        ReplicaBootstrapRegressor.from_gpr(ReplicaBootstrapRegressor())
    with pytest.raises(NotFittedError):
        ReplicaBootstrapRegressor.from_gpr(GaussianProcessRegressor())
    with pytest.raises(TypeError, match=r"do not pass \['alpha'\]"):
        ReplicaBootstrapRegressor.from_gpr(gpr, alpha=0.1)
    with pytest.raises(ValueError, match="normalize_y=True"):
        ReplicaBootstrapRegressor.from_gpr(GaussianProcessRegressor(RBF(), normalize_y=True, optimizer=None).fit(X, y))
    per_row = GaussianProcessRegressor(RBF(), alpha=np.linspace(0.1, 0.2, N), optimizer=None).fit(X, y)
    with pytest.raises(ValueError, match="one noise level per row"):
        ReplicaBootstrapRegressor.from_gpr(per_row)


def test_convergence_failure_is_a_clear_error_with_the_last_iterate():
    """The iteration's relative change stalls at the round-off level (~1e-14), so tol = 1e-15 cannot be met."""
    with pytest.raises(replica.ConvergenceError, match="did not converge .* a looser `tol`") as info:
        ReplicaBootstrapRegressor(RBF(1.0), optimizer=None, tol=1e-15).fit(*_data())
    assert isinstance(info.value.last, replica.ReplicaSolution) and not info.value.last.converged
