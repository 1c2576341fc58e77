"""Model selection ([Fis16]): gradients vs finite differences, ASC vs direct integration, K-fold vs LOO and
literal refits, evidence vs scikit-learn, the .632 bootstrap criterion, optimisation, curves, rankings."""
import json
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from explorer import regression
from explorer.bootstrap import replica
from explorer.chunks import item_generator, root_seed
from explorer.kernels import Matern52, Periodic, RationalQuadratic, SquaredExponential
from explorer.model_selection import asc, criterion, held_out, selection
from explorer.model_selection.bootstrap_632 import bootstrap_632
from explorer.model_selection.criterion import make_criterion, safe_value
from explorer.model_selection.cross_validation import draw_folds, kfold_cv, loo_cv
from explorer.model_selection.curves import criterion_curve
from explorer.model_selection.evidence import negative_log_evidence
from explorer.model_selection.optimisation import hyperparameter_dict, initial_hyperparameters, optimize_hyperparameters
from explorer.model_selection.selection import _ranks, rank_functional_forms, select_hyperparameters
from explorer.progress import Cancelled, Hooks

NOISE_VAR = 0.05

KERNELS = [
    SquaredExponential(0.8, 1.2),
    RationalQuadratic(0.9, 0.7, 1.1),
    Periodic(1.1, 2.5, 0.9),
    Matern52([1.2, 0.6], 0.9),                                         # ARD, two inputs
]
IDS = ["se", "rq", "periodic", "matern52-ard"]


@pytest.fixture
def data(rng):
    X = rng.normal(size=(24, 2))
    y = np.sin(1.5 * X[:, 0]) * np.cos(X[:, 1]) + np.sqrt(NOISE_VAR) * rng.normal(size=24)
    return X, y


def _inputs(kernel, X):
    """One input column for the 1-D kernels, both for the ARD one."""
    return X if np.ndim(kernel.params.get("lengthscale")) else X[:, :1]


def _fd_gradient(criterion, kernel, X, y, noise_var, h=1e-5):
    """Central differences of the criterion value in phi = (theta, log noise_var)."""
    base = np.append(kernel.theta, np.log(noise_var))

    def at(phi):
        return criterion(kernel.with_theta(phi[:-1]), X, y, float(np.exp(phi[-1]))).value

    return np.array([(at(base + h * e) - at(base - h * e)) / (2 * h) for e in np.eye(base.size)])


CRITERION_NAMES = ["evidence", "loo", "kfold", "asc-boltzmann", "asc-beta-noise", "asc-bayes", "bootstrap632"]


@pytest.mark.parametrize("name", CRITERION_NAMES)
@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_gradient_matches_central_differences(name, kernel, data):
    # h = 1e-5 in log space: truncation O(h²) ~ 1e-10 relative and round-off ~ eps·|f|/h ~ 1e-11 for
    # the closed forms. bootstrap632 is solved to tol = 1e-12, so its value is smooth to ~1e-12 and the
    # difference quotient to ~1e-7. ASC partitions that are excluded at one point but not at another would
    # make a jump; at these well-conditioned hyperparameters none is excluded (asserted). rtol 1e-5 leaves
    # a margin of 10-100 over these errors; atol covers components that are zero (the ridge of bootstrap632).
    X, y = data
    X = _inputs(kernel, X)
    crit = make_criterion(name, y.size, rng=3, n_folds=5, n_partitions=4, n_objects=3, tol=1e-12)
    cv = crit(kernel, X, y, NOISE_VAR, eval_gradient=True)
    assert cv.n_excluded == 0
    assert cv.value == pytest.approx(crit(kernel, X, y, NOISE_VAR).value, rel=1e-9)
    assert_allclose(cv.gradient, _fd_gradient(crit, kernel, X, y, NOISE_VAR), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("variant", asc.VARIANTS)
def test_asc_prior_entropy_gradient(variant, data):
    # h(τ) of eq. (4.2) adds ½ tr(K̃⁻¹ ∂K̃) to the gradient; same tolerances as above.
    X, y = data
    kernel = KERNELS[0]
    crit = make_criterion("asc-" + variant, y.size, rng=5, n_partitions=3, n_objects=3, entropy="prior")
    cv = crit(kernel, X[:, :1], y, NOISE_VAR, eval_gradient=True)
    assert_allclose(cv.gradient, _fd_gradient(crit, kernel, X[:, :1], y, NOISE_VAR), rtol=1e-5, atol=1e-7)


def test_prior_entropy_is_eq_4_2(data):
    X, y = data
    kernel, parts = KERNELS[0], asc.draw_partitions(y.size, 3, 2, 3, rng=1)
    zero = asc.mutual_information(kernel, X[:, :1], y, NOISE_VAR, parts, "bayes", "zero").per_partition
    prior = asc.mutual_information(kernel, X[:, :1], y, NOISE_VAR, parts, "bayes", "prior").per_partition
    for j, o in enumerate(parts.objects):
        Kt = kernel(X[o, :1])
        h = 0.5 * (np.linalg.slogdet(Kt)[1] + o.size * np.log(2 * np.pi * np.e))
        assert prior[j] - zero[j] == pytest.approx(h, rel=1e-10)


# --------------------------------------------------------------------------- ASC vs direct integration


def _literal_log_eta(kernel, X, y, noise_var, subsets, objects, variant, beta, grid):
    """log η = log ∫ Π_l p(f̃ | D_l) N(f̃ | 0, K̃) df̃ (eq. 3.2) on a grid of f̃, every density normalised
    numerically. The likelihood p(y_l | f̃) is the Gaussian conditional of the joint of (y_l, f̃), built with
    dense solves — independent of Props. 10-12 and of eqs. (4.3)-(4.4)."""
    o = objects
    Kt = kernel(X[o])
    prior = stats.multivariate_normal(np.zeros(o.size), Kt).pdf(grid.points)
    product = prior.copy()
    for I in subsets:
        C = kernel(X[I], X[o])
        cov = kernel(X[I]) + noise_var * np.eye(I.size) - C @ np.linalg.solve(Kt, C.T)
        means = grid.points @ np.linalg.solve(Kt, C.T)                 # E[y_l | f̃] for every grid point
        loglik = stats.multivariate_normal(np.zeros(I.size), cov).logpdf(y[I] - means)
        logw = loglik + np.log(prior) if variant == "bayes" else beta * loglik
        w = np.exp(logw - logw.max())
        product *= w / (w.sum() * grid.cell)
    return np.log(product.sum() * grid.cell)


class _Grid:
    def __init__(self, m, half_width, n):
        axes = [np.linspace(-half_width, half_width, n)] * m
        self.points = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, m)
        self.cell = (axes[0][1] - axes[0][0]) ** m


@pytest.mark.parametrize("m, n_grid", [(1, 4001), (2, 501)])
@pytest.mark.parametrize("variant, beta", [("boltzmann", 0.6), ("boltzmann", 2.5), ("beta-noise", None),
                                           ("bayes", None)])
def test_posterior_agreement_matches_direct_integration(m, n_grid, variant, beta, rng):
    # Tiny problem: N = 8, L = 2, M = 1 or 2, prior sd 1, noise sd 0.5. The integrand is smooth and
    # decays like a Gaussian of width > 0.1 inside ±6, so the grid sums (spacing 0.003 and 0.024) are
    # accurate to far better than the 1e-4 relative tolerance on η asserted here.
    X = rng.normal(size=(8, 1))
    y = np.sin(2 * X[:, 0]) + 0.5 * rng.normal(size=8)
    kernel, noise_var = SquaredExponential(0.9, 1.0), 0.25
    parts = asc.draw_partitions(8, 2, 2, m, rng=7)
    res = asc.mutual_information(kernel, X, y, noise_var, parts, variant, beta=beta)
    grid = _Grid(m, 6.0, n_grid)
    for j in range(2):
        subsets = [S[j] for S in parts.subsets]
        lit = _literal_log_eta(kernel, X, y, noise_var, subsets, parts.objects[j], variant, beta or 1.0, grid)
        assert res.per_partition[j] == pytest.approx(lit, abs=1e-4)


def test_boltzmann_beta_star_maximises_the_beta_curve(data):
    X, y = data
    kernel, parts = KERNELS[0], asc.draw_partitions(y.size, 4, 2, 3, rng=2)
    res = asc.mutual_information(kernel, X[:, :1], y, NOISE_VAR, parts, "boltzmann")
    betas = np.logspace(-3, 3, 601)
    curve = asc.mutual_information_vs_beta(kernel, X[:, :1], y, NOISE_VAR, parts, betas)
    assert np.all(res.per_partition[:, None] >= curve.per_partition - 1e-12)
    assert_allclose(res.per_partition, curve.per_partition.max(axis=1), atol=1e-4)   # grid step 1 %
    assert_allclose(curve.beta_star, res.betas, rtol=1e-8)
    at_one = asc.mutual_information(kernel, X[:, :1], y, NOISE_VAR, parts, "beta-noise").per_partition
    assert_allclose(curve.per_partition[:, 300], at_one, rtol=1e-10)   # β = 1 is β-noise ASC


def test_singular_partitions_are_excluded_and_counted(rng):
    # Duplicated inputs make K̃ exactly singular whenever two objects coincide (§4.4.2).
    x = np.repeat(rng.normal(size=6), 4)[:, None]
    y = np.sin(x[:, 0]) + 0.1 * rng.normal(size=24)
    parts = asc.draw_partitions(24, 40, 2, 3, rng=0)
    res = asc.mutual_information(SquaredExponential(), x, y, 0.01, parts, "bayes")
    expected = sum(len(np.unique(x[o, 0])) < 3 for o in parts.objects)
    assert 0 < expected < 40
    assert res.n_excluded == expected
    assert np.isnan(res.per_partition).sum() == expected
    assert res.mutual_information == pytest.approx(np.nanmean(res.per_partition))


def test_all_partitions_singular_raises():
    x = np.zeros((10, 1))
    parts = asc.draw_partitions(10, 3, 2, 2, rng=0)
    with pytest.raises(asc.SingularPartitionsError, match="all J = 3 partitions"):
        asc.mutual_information(SquaredExponential(), x, np.arange(10.0), 0.1, parts)


def test_beta_curve_with_all_partitions_singular_raises():
    parts = asc.draw_partitions(10, 2, 2, 2, rng=0)
    with pytest.raises(asc.SingularPartitionsError, match="all J = 2 partitions had a numerically singular"):
        asc.mutual_information_vs_beta(SquaredExponential(), np.zeros((10, 1)), np.arange(10.0), 0.1, parts, [1.0])


def test_partitions_are_seeded_and_valid():
    a, b = asc.draw_partitions(21, 5, 3, 4, rng=9), asc.draw_partitions(21, 5, 3, 4, rng=9)
    assert all(np.array_equal(s, t) for s, t in zip(a.subsets, b.subsets))
    assert [s.shape for s in a.subsets] == [(5, 7)] * 3
    for j in range(5):
        assert np.array_equal(np.sort(np.concatenate([s[j] for s in a.subsets])), np.arange(21))
        assert np.unique(a.objects[j]).size == 4


# --------------------------------------------------------------------------- K-fold, LOO, evidence


def test_kfold_with_k_equal_n_is_closed_form_loo(data):
    X, y = data
    kernel = KERNELS[1]
    kfold = kfold_cv(kernel, X[:, :1], y, NOISE_VAR, draw_folds(y.size, y.size, rng=1), True)
    loo = loo_cv(kernel, X[:, :1], y, NOISE_VAR, True)
    assert kfold.value == pytest.approx(loo.value, rel=1e-12)
    assert_allclose(kfold.gradient, loo.gradient, rtol=1e-10)


def test_kfold_matches_literal_refits(data):
    # Eq. (2.12) by refitting on the other folds and evaluating the joint predictive density of each fold.
    # The block formula is exact algebra; only round-off (condition numbers < 1e4) separates the two.
    X, y = data
    kernel, folds = KERNELS[0], draw_folds(y.size, 4, rng=2)
    total = 0.0
    for I in folds:
        rest = np.setdiff1d(np.arange(y.size), I)
        post = regression.fit(kernel, X[rest, :1], y[rest], NOISE_VAR)
        mean = post.predict(X[I, :1])
        Ks = kernel(X[rest, :1], X[I, :1])
        cov = kernel(X[I, :1]) + NOISE_VAR * np.eye(I.size) - Ks.T @ np.linalg.solve(
            kernel(X[rest, :1]) + NOISE_VAR * np.eye(rest.size), Ks)
        total += stats.multivariate_normal(mean, cov).logpdf(y[I])
    assert kfold_cv(kernel, X[:, :1], y, NOISE_VAR, folds).value == pytest.approx(-total / 4, rel=1e-9)


def test_evidence_matches_scikit_learn(data):
    gp = pytest.importorskip("sklearn.gaussian_process")
    kernels = pytest.importorskip("sklearn.gaussian_process.kernels")
    X, y = data
    ours = negative_log_evidence(SquaredExponential(0.7, 1.3), X, y, NOISE_VAR, eval_gradient=True)
    sk_kernel = kernels.ConstantKernel(1.3) * kernels.RBF(0.7) + kernels.WhiteKernel(NOISE_VAR)
    model = gp.GaussianProcessRegressor(sk_kernel, optimizer=None, alpha=0.0).fit(X, y)
    value, grad = model.log_marginal_likelihood(model.kernel_.theta, eval_gradient=True)
    assert ours.value == pytest.approx(-value, rel=1e-10)
    assert_allclose(ours.gradient, -grad[[1, 0, 2]], rtol=1e-8)        # sklearn: (log c, log ℓ, log σ²)


# --------------------------------------------------------------------------- the .632 bootstrap criterion


def test_bootstrap632_is_efrons_combination(data):
    X, y = data
    kernel = KERNELS[0]
    sol = replica.solve_replica(kernel(X[:, :1]), y, NOISE_VAR, y.size, tol=1e-12, precision="double")
    post = regression.fit(kernel, X[:, :1], y, NOISE_VAR)
    train = np.mean((y - post.predict(X[:, :1])) ** 2)
    expected = np.exp(-1) * train + (1 - np.exp(-1)) * replica.bootstrap_test_error(sol)
    assert bootstrap_632(kernel, X[:, :1], y, NOISE_VAR, tol=1e-12).value == pytest.approx(expected, rel=1e-9)


def test_bootstrap632_is_constant_along_the_scale_ray(data):
    # The posterior mean is unchanged by (K, σ²) → c (K, σ²); so are ε_train and ε(N).
    X, y = data
    k = SquaredExponential(0.8, 1.2)
    a = bootstrap_632(k, X[:, :1], y, NOISE_VAR, True, tol=1e-12)
    b = bootstrap_632(SquaredExponential(0.8, 1.2 * 7), X[:, :1], y, NOISE_VAR * 7, tol=1e-12)
    assert a.value == pytest.approx(b.value, rel=1e-8)
    assert a.gradient[1] + a.gradient[2] == pytest.approx(0.0, abs=1e-9 * np.abs(a.gradient).max())


def test_bootstrap632_breakdown_is_a_floating_point_error(data):
    # Signal variance 1e-5 against noise 7e4: the replica equations produce NaN; the optimiser must see a
    # numerical failure (FloatingPointError), not a validation error.
    X, y = data
    with pytest.raises(FloatingPointError, match="the replica equations broke down"), np.errstate(all="ignore"):
        bootstrap_632(SquaredExponential(0.0674, 1e-5), X[:, :1], y, 6.97e4, True)


def test_optimised_bootstrap632_sits_at_the_evidence_scale(data):
    X, y = data
    crit = make_criterion("bootstrap632", y.size)
    res = optimize_hyperparameters(crit, SquaredExponential(), X[:, :1], y, 0.1, n_restarts=2, rng=0)
    post = regression.fit(res.kernel, X[:, :1], y, res.noise_var)
    assert y @ post.alpha / y.size == pytest.approx(1.0, rel=1e-8)    # c* = yᵀK_y⁻¹y/N = 1 at the optimum
    assert res.value == pytest.approx(crit(res.kernel, X[:, :1], y, res.noise_var).value, rel=1e-6)


# --------------------------------------------------------------------------- optimisation


@pytest.fixture
def teacher():
    from explorer import datasets
    ds = datasets.load("teacher", n=64 + 500, rng=11)
    return ds.inputs[:64], ds.targets[:64], ds.inputs[64:], ds.targets[64:]


def test_evidence_optimum_recovers_the_teacher(teacher):
    # Teacher ℓ = 1, σ_f = 1, σ_n = 0.1 (§5.1); with N = 64 the evidence optimum is within a factor ~1.5.
    X, y, _, _ = teacher
    crit = make_criterion("evidence", 64)
    res = optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, rng=0)
    h = res.hyperparameters
    assert set(h) == {"lengthscale", "signal_std", "noise_std"}
    assert 0.6 < h["lengthscale"] < 1.6 and 0.5 < h["signal_std"] < 2 and 0.06 < h["noise_std"] < 0.15
    assert res.converged and res.n_restarts == 16 and res.n_failed == 0
    value, grad = regression.log_evidence(res.kernel, X, y, res.noise_var, eval_gradient=True)
    assert res.value == pytest.approx(-value, rel=1e-12)
    assert np.abs(grad).max() < 1e-3                                   # a stationary point


def test_optimisation_is_seeded_and_takes_the_best_restart(teacher):
    X, y, _, _ = teacher
    crit = make_criterion("loo", 64)
    a = optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, n_restarts=4, max_iter=5, rng=1)
    b = optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, n_restarts=4, max_iter=5, rng=1)
    one = optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, n_restarts=1, max_iter=5, rng=1)
    assert_allclose(a.theta, b.theta)
    assert a.value <= one.value and a.n_evaluations > one.n_evaluations


def test_failed_runs_are_counted_and_all_failed_raises(teacher, monkeypatch):
    X, y, _, _ = teacher
    crit = make_criterion("evidence", 64)

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("singular")

    monkeypatch.setattr(criterion, "negative_log_evidence", broken)
    with pytest.raises(np.linalg.LinAlgError, match="could not be evaluated at any point of 3"):
        optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, n_restarts=3, rng=0)


def test_select_hyperparameters_with_test_errors(teacher):
    X, y, Xt, yt = teacher
    results = select_hyperparameters(X, y, SquaredExponential(), ["evidence", "asc-beta-noise"], rng=0,
                                         n_restarts=3, n_partitions=8, n_objects=4, X_test=Xt, y_test=yt)
    assert [r.criterion for r in results] == ["evidence", "asc-beta-noise"]
    evidence, asc_result = results
    assert 0 < evidence.test.smse < 0.1 and evidence.test.msll < -1.5    # teacher noise 1 % of the variance
    assert 0 < asc_result.test.smse < 1 and asc_result.test.msll < 0      # better than the trivial predictor


def test_test_error_formulas(teacher):
    X, y, Xt, yt = teacher
    kernel, s2 = SquaredExponential(0.9, 1.1), 0.02
    mean, var = regression.fit(kernel, X, y, s2).predict(Xt, return_var=True)
    err = held_out.test_error(kernel, s2, X, y, Xt, yt)
    assert err.smse == pytest.approx(np.sum((yt - mean) ** 2) / (yt.size * np.var(yt)), rel=1e-12)
    trivial = stats.norm(y.mean(), y.std()).logpdf(yt)
    model = stats.norm(mean, np.sqrt(var + s2)).logpdf(yt)
    assert err.msll == pytest.approx(np.mean(trivial - model), rel=1e-12)


# --------------------------------------------------------------------------- curves and rankings


def test_criterion_curve_minimum_is_the_optimum(teacher):
    X, y, _, _ = teacher
    crit = make_criterion("evidence", 64)
    res = optimize_hyperparameters(crit, SquaredExponential(), X, y, 0.1, n_restarts=4, rng=0)
    ls = res.hyperparameters["lengthscale"]
    grid = ls * np.logspace(-0.3, 0.3, 61)
    curve = criterion_curve(crit, res.kernel, X, y, res.noise_var, "lengthscale", grid)
    assert curve.best == pytest.approx(ls, rel=0.012)                  # grid step 2.3 %
    assert np.nanmin(curve.values) >= res.value - 1e-8
    noise = criterion_curve(crit, res.kernel, X, y, res.noise_var, "noise_std",
                                res.hyperparameters["noise_std"] * np.array([0.5, 1.0, 2.0]))
    assert np.argmin(noise.values) == 1


def test_criterion_curve_marks_failures_as_nan(rng):
    # At ℓ = 1e9 every K̃ is the all-ones matrix to working precision: no partition can be evaluated.
    x = rng.normal(size=(20, 1))
    y = rng.normal(size=20)
    crit = make_criterion("asc-bayes", 20, n_partitions=2, n_objects=2, rng=1)
    curve = criterion_curve(crit, SquaredExponential(), x, y, 1e-3, "lengthscale", [1e-2, 1.0, 1e9])
    assert np.isnan(curve.values[-1]) and np.isfinite(curve.values[0])


def test_rank_functional_forms(rng):
    X = rng.normal(size=(40, 1))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=40)
    rows = rank_functional_forms(X[:30], y[:30], ("se", "exponential", "periodic"), select_by="evidence",
                                     rank_by=("evidence", "loo"), rng=0, n_restarts=2, max_iter=8,
                                     X_test=X[30:], y_test=y[30:])
    assert [r.kernel_name for r in rows] == ["se", "exponential", "periodic"]
    for key in ("evidence", "loo", "smse"):
        assert sorted(r.ranks[key] for r in rows) == [1, 2, 3]
    best = min(rows, key=lambda r: r.values["evidence"])
    assert best.ranks["evidence"] == 1 and best.values["evidence"] == pytest.approx(best.selection.value)


def test_a_non_finite_criterion_value_is_not_ranked(rng, monkeypatch):
    # the finite values are ranked among themselves (ties share the lower rank); NaN and inf get no rank
    assert _ranks({"se": 2.0, "periodic": np.nan, "rq": 1.0, "exponential": np.inf, "matern32": 2.0}) == {
        "se": 2, "periodic": None, "rq": 1, "exponential": None, "matern32": 2}
    assert _ranks({"se": np.nan, "periodic": -np.inf}) == {"se": None, "periodic": None}
    # through rank_functional_forms: a criterion that cannot be evaluated on the periodic form (as asc-beta-noise
    # can be NaN there) leaves it unranked, and the other forms keep ranks 1 and 2
    real = safe_value
    monkeypatch.setattr(selection, "safe_value", lambda crit, kernel, *args: (
        np.nan if isinstance(kernel, Periodic) and crit.name == "loo" else real(crit, kernel, *args)))
    X = rng.normal(size=(30, 1))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=30)
    rows = rank_functional_forms(X, y, ("se", "exponential", "periodic"), select_by="evidence",
                                     rank_by=("evidence", "loo"), rng=0, n_restarts=1, max_iter=4)
    by = {r.kernel_name: r for r in rows}
    assert np.isnan(by["periodic"].values["loo"]) and by["periodic"].ranks["loo"] is None
    assert sorted(by[k].ranks["loo"] for k in ("se", "exponential")) == [1, 2]
    assert sorted(r.ranks["evidence"] for r in rows) == [1, 2, 3]


def test_hyperparameter_names():
    d = hyperparameter_dict(RationalQuadratic(2.0, 0.5, 4.0), 0.09)
    assert d == {"lengthscale": 2.0, "alpha": 0.5, "signal_std": 2.0, "noise_std": 0.3}
    assert hyperparameter_dict(SquaredExponential([1.0, 2.0]), 1.0)["lengthscale"] == [1.0, 2.0]


def test_core_does_not_import_the_ui_stack():
    code = ("import sys, explorer.model_selection.selection, explorer.model_selection.asc, explorer.model_selection.experiments\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'panel','holoviews','bokeh','param'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- validation messages


def _parts(n=10):
    return asc.draw_partitions(n, 2, 2, 2, rng=0)


X10, Y10 = np.linspace(0, 1, 10)[:, None], np.sin(np.arange(10.0))
SE = SquaredExponential()

VALIDATION = [
    (lambda: asc.draw_partitions(1), "`n` must be an integer >= 2"),
    (lambda: asc.draw_partitions(10, 0), "`n_partitions` must be an integer >= 1"),
    (lambda: asc.draw_partitions(10, 2, 2, 6), "must not exceed the smallest subset size"),
    (lambda: asc.mutual_information(SE, X10, Y10, 0.0, _parts()), "`noise_var` must be a positive finite number"),
    (lambda: asc.mutual_information(SE, X10, Y10, 0.1, _parts(12)), "were drawn for N = 12"),
    (lambda: asc.mutual_information(SE, X10, Y10, 0.1, _parts(), "gibbs"), "`variant` must be one of"),
    (lambda: asc.mutual_information(SE, X10, Y10, 0.1, _parts(), entropy="max"), "`entropy` must be one of"),
    (lambda: asc.mutual_information(SE, X10, Y10, 0.1, _parts(), "bayes", beta=2.0), "`beta` may only be"),
    (lambda: asc.mutual_information_vs_beta(SE, X10, Y10, 0.1, _parts(), [0.0, 1.0]), "`betas` must be"),
    (lambda: draw_folds(10, 11), "`n_folds` must be an integer between 2 and N = 10"),
    (lambda: kfold_cv(SE, X10, Y10, 0.1, [np.arange(5)]), "`folds` must partition range"),
    (lambda: bootstrap_632(SE, X10, Y10, 0.0), "needs `noise_var` > 0"),
    (lambda: make_criterion("aic", 10), "unknown criterion 'aic'"),
    (lambda: make_criterion("loo", 2), "`n` must be an integer >= 3"),
    (lambda: make_criterion("asc-bayes", 10, entropy="h"), "`entropy` must be one of"),
    (lambda: make_criterion("bootstrap632", 10, tol=0.5), "`tol` must be in"),
    (lambda: make_criterion("loo", 11)(SE, X10, Y10, 0.1), "was made for N = 11"),
    (lambda: optimize_hyperparameters(make_criterion("loo", 10), SE, X10, Y10, n_restarts=0),
     "`n_restarts` must be an integer >= 1"),
    (lambda: optimize_hyperparameters(make_criterion("loo", 10), SE, X10, Y10, noise_bounds=(1, 0.1)),
     "`noise_bounds` must be"),
    (lambda: held_out.test_error(SE, 0.1, X10, Y10, X10, Y10[:3]), "`y_test` must be 1-D"),
    (lambda: select_hyperparameters(X10, Y10, SE, ["bic"]), "unknown criteria"),
    (lambda: select_hyperparameters(X10, Y10, SE, ["loo"], X_test=X10), "give both `X_test`"),
    (lambda: criterion_curve(make_criterion("loo", 10), SE, X10, Y10, 0.1, "period", [1.0]),
     "`parameter` must be one of"),
    (lambda: criterion_curve(make_criterion("loo", 10), SE, X10, Y10, 0.1, "lengthscale", [-1.0]),
     "`grid` must be a non-empty"),
    (lambda: initial_hyperparameters("se", X10, Y10[:4]), "must describe the same n >= 2 cases"),
]


@pytest.mark.parametrize("call, message", VALIDATION, ids=[m for _, m in VALIDATION])
def test_validation_messages(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("`", "`")):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: asc.mutual_information(SE, X10, Y10, 0.1, "parts"), "`partitions` must be an AscPartitions"),
    (lambda: optimize_hyperparameters("loo", SE, X10, Y10), "`criterion` must be a Criterion"),
])
def test_type_errors(call, message):
    with pytest.raises(TypeError, match=message):
        call()


# --------------------------------------------------------------------------- experiments (small counts)

from explorer.model_selection import experiments as sx  # noqa: E402

TEMPERATURE = "../shared/datasets/berkeley_tavg_doy_mean_1880_2014.csv"


def test_curves_experiment_evidence_finds_the_teacher_noise():
    grid = np.array([0.025, 0.05, 0.1, 0.2, 0.4])
    res = sx.curves_experiment("noise_std", ("evidence", "asc-beta-noise"), n_datasets=2, grid=grid,
                               n_partitions=4, rng=0)
    assert res.values.shape == (2, 2, 5) and res.mean.shape == (2, 5)
    assert np.all(res.argmin[0] == 0.1)                                # σ_n = 1/10 of the teacher
    assert res.as_dict()["parameter"] == "noise_std"


def test_hyperparameter_experiment_shapes_and_wins():
    res = sx.hyperparameter_experiment(("evidence", "asc-beta-noise"), n_datasets=2, n_test=200, n_restarts=2,
                                       n_partitions=4, rng=1)
    assert res.smse.shape == res.msll.shape == (2, 2) and np.all(np.isfinite(res.smse))
    assert sum(res.wins().values()) == pytest.approx(1.0)
    assert set(res.hyperparameters[0][0]) == {"lengthscale", "signal_std", "noise_std"}
    json.dumps(res.as_dict())


def test_functional_form_experiment_ranks_the_teacher():
    res = sx.functional_form_experiment("evidence", ("evidence", "loo"), teachers=("periodic",),
                                        students=("se", "periodic"), n_datasets=1, n=48, n_restarts=2, rng=2)
    assert res.ranks.shape == (1, 1, 2, 2)
    assert sorted(res.ranks[0, 0, 0]) == [1, 2]
    assert res.hit_rate.shape == (1, 2)
    json.dumps(res.as_dict())


def test_beta_experiment_peaks_near_one():
    # Fig. 5.15: the mean of I_β over data sets peaks close to β = 1 at the teacher's hyperparameters.
    res = sx.beta_experiment(n_datasets=8, rng=3)
    assert 0.3 < res.betas[np.nanargmax(res.mean)] < 3.0
    json.dumps(res.as_dict())


def test_temperature_experiments():
    import os
    if not os.path.exists(TEMPERATURE):
        pytest.skip("the Berkeley Earth series is not in ../shared/datasets")
    data = sx.load_temperature(TEMPERATURE)
    assert (data.n, data.d) == (365, 1)
    res = sx.hyperparameter_experiment(("evidence",), data=data, n_datasets=1, n_restarts=3, rng=0)
    assert "64 training / 301 test" in res.setting and res.smse[0, 0] < 0.5
    ranking = sx.functional_form_experiment("loo", ("evidence",), data=data, students=("se", "exponential"),
                                            n=64, n_datasets=1, n_restarts=2, rng=0)
    assert ranking.keys == ("evidence", "smse") and np.isnan(ranking.hit_rate).all()


def _same(a, b) -> None:
    """Bit-identical results, field by field (NaN equal to NaN, hyperparameter dicts equal)."""
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray) and x.dtype != object:
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


TINY_EXPERIMENTS = {
    "curves": lambda **kw: sx.curves_experiment("noise_std", ("evidence", "asc-beta-noise"), n_datasets=3,
                                                grid=[0.05, 0.1, 0.2], n_partitions=2, n_objects=4, rng=0, **kw),
    "hyperparameters": lambda **kw: sx.hyperparameter_experiment(("evidence", "loo"), n_datasets=3, n_test=50,
                                                                 n_restarts=2, max_iter=4, rng=1, **kw),
    "functional-forms": lambda **kw: sx.functional_form_experiment(
        "evidence", ("evidence", "loo"), teachers=("squared_exponential", "periodic"), students=("se", "periodic"),
        n_datasets=2, n=32, n_restarts=1, max_iter=4, rng=2, **kw),
    "beta": lambda **kw: sx.beta_experiment(n_datasets=3, n=32, betas=[0.1, 1.0, 10.0], n_objects=4, rng=3, **kw),
}


@pytest.mark.parametrize("experiment", list(TINY_EXPERIMENTS))
def test_experiments_are_the_same_for_any_chunk_size_and_executor(experiment, dask_engine):
    run = TINY_EXPERIMENTS[experiment]
    ref = run()
    for kw in ({"chunk_size": 2}, {"chunk_size": 1000}, {"chunk_size": 1, "executor": dask_engine.executor}):
        _same(run(**kw), ref)


def test_beta_experiment_data_set_d_draws_from_its_own_generator():
    """Data set d written out: the teacher draw and the partitions from item d's generator, nothing shared."""
    betas = np.array([0.1, 1.0, 10.0])
    res = sx.beta_experiment(n_datasets=3, n=32, betas=betas, n_objects=4, rng=3)
    start = sx.teacher_kernel()
    for d in range(3):
        gen = item_generator(root_seed(3), 0, d)
        data = sx.gp_teacher(32, gen, kernel="se", sigma_n=0.1, lengthscale=1.0, sigma_f=1.0,
                             alpha=0.5, period=2.0)
        parts = asc.draw_partitions(32, 1, 2, 4, gen)
        ref = asc.mutual_information_vs_beta(start.kernel, data.inputs, data.targets, start.noise_var, parts, betas,
                                             "zero")
        np.testing.assert_array_equal(res.curves[d], ref.mean)


def test_experiment_progress_counts_data_sets_and_cancel_stops_between_them():
    seen = []
    TINY_EXPERIMENTS["beta"](hooks=Hooks(progress=lambda f, m: seen.append((f, str(m)))))
    assert seen == [(1 / 3, "1/3 data sets"), (2 / 3, "2/3 data sets"), (1.0, "3/3 data sets"), (1.0, "done")]
    calls = iter([False, True])
    with pytest.raises(Cancelled, match="after 1 of 3 repetitions"):
        TINY_EXPERIMENTS["hyperparameters"](hooks=Hooks(should_stop=lambda: next(calls)))


@pytest.mark.parametrize("call, message", [
    (lambda: sx.teacher_kernel("matern"), "`teacher` must be one of"),
    (lambda: sx.curves_experiment("alpha"), "`parameter` must be one of"),
    (lambda: sx.hyperparameter_experiment(n_datasets=0), "`n_datasets` must be an integer >= 1"),
    (lambda: sx.hyperparameter_experiment(("aic",)), "unknown criteria"),
    (lambda: sx.hyperparameter_experiment(("loo",), data=sx.gp_teacher(20, 0), n=19), "`n_train` must be"),
])
def test_experiment_validation_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_load_temperature_needs_the_input_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("day,anomaly\n" + "".join(f"{i},{np.sin(i / 5):.3f}\n" for i in range(1, 21)))
    with pytest.raises(ValueError, match="the CSV has no input column 'day_of_year'"):
        sx.load_temperature(path, target="anomaly")
    assert sx.load_temperature(path, target="anomaly", inputs="day").n == 20


# --------------------------------------------------------------------------- the thesis (slow)


@pytest.mark.slow
def test_thesis_experiment_3_findings():
    # Experiment 3 with 16 teacher data sets (thesis: 256), otherwise the thesis' settings (N = 64, 2048 test
    # cases, σ_n = 0.1, J = 32, L = 2, M = 4, 16 restarts of 16 iterations), seed fixed. The thesis' findings:
    # maximum evidence has the lowest test SMSE; β-noise ASC with h(τ) = 0 competes with LOO (similar median,
    # smaller spread). About 80 s on one core.
    res = sx.hyperparameter_experiment(("evidence", "loo", "asc-beta-noise"), n_datasets=16, rng=2016)
    q25, median, q75 = np.nanquantile(res.smse, [0.25, 0.5, 0.75], axis=1)
    assert median[0] <= median[1] and median[0] <= median[2]
    assert median[2] <= 1.25 * median[1] and q75[2] <= 1.25 * q75[1]
    assert res.wins()["evidence"] >= max(res.wins()["loo"], res.wins()["asc-beta-noise"])
