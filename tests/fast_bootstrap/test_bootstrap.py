"""Fast bootstrap of [LSWV05]: models, bootstrap eqs. (3)-(8), F test eq. (11), replica optimism, Tables 1-2."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from explorer import datasets
from explorer.bootstrap import replica
from explorer.chunks import item_generator, root_seed
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.lssvm import LSSVM, lssvm_path
from explorer.fast_bootstrap.networks import MLP, RBFN, kmeans
from explorer.fast_bootstrap.problem import TABLE_1, TABLE_2, Setting, make_model, prepare_data
from explorer.fast_bootstrap.stages import replica_optimism
from explorer.kernels import SquaredExponential
from explorer.progress import Cancelled, Hooks

LASER = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "santafe_laser_A.csv"


@pytest.fixture
def toy():
    d = datasets.toy_function(n=60, rng=3)
    return d.inputs, d.targets


def _dual_solve(K, y, gamma, c, bias):
    """LS-SVM by the (n+1)-dimensional linear system of eqs. (16)-(18) written out with duplicated rows."""
    idx = np.repeat(np.arange(y.size), c)
    Kd, yd, n = K[np.ix_(idx, idx)], y[idx], idx.size
    if not bias:
        return K[:, idx] @ np.linalg.solve(Kd + np.eye(n) / gamma, yd)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = A[1:, 0] = 1
    A[1:, 1:] = Kd + np.eye(n) / gamma
    sol = np.linalg.solve(A, np.r_[0.0, yd])
    return K[:, idx] @ sol[1:] + sol[0]


# ----------------------------------------------------------------------------- LS-SVM


@pytest.mark.parametrize("bias", [True, False])
def test_lssvm_path_equals_the_dual_system_on_duplicated_rows(toy, rng, bias):
    X, y = toy
    K = SquaredExponential(0.1)(X)
    c = rng.integers(1, 4, size=y.size)
    got = lssvm_path(K, y, [0.5, 5.0, 80.0], K, weights=c, bias=bias)
    for g, row in zip([0.5, 5.0, 80.0], got):
        np.testing.assert_allclose(row, _dual_solve(K, y, g, c, bias), rtol=0, atol=1e-9)


def test_kernel_ridge_matches_scikit_learn(toy):
    kr = pytest.importorskip("sklearn.kernel_ridge")
    X, y = toy
    ell, gamma = 0.1, 7.0
    ref = kr.KernelRidge(alpha=1 / gamma, kernel="rbf", gamma=1 / (2 * ell**2)).fit(X, y).predict(X)
    got = LSSVM(SquaredExponential(ell), bias=False).predict_path(X, y, np.array([gamma]), X)[0]
    np.testing.assert_allclose(got, ref, atol=1e-9)


def test_lssvm_rejects_bad_input(toy):
    X, y = toy
    K = SquaredExponential(0.1)(X)
    with pytest.raises(ValueError, match="every γ must be positive"):
        lssvm_path(K, y, [0.0], K)
    with pytest.raises(ValueError, match="positive multiplicities"):
        lssvm_path(K, y, [1.0], K, weights=np.zeros(y.size))
    wrong_columns = rf"`K_eval` must have {y.size} columns \(one per training point\), got \({y.size}, 3\)"
    with pytest.raises(ValueError, match=wrong_columns):
        lssvm_path(K, y, [1.0], K[:, :3])


# ----------------------------------------------------------------------------- RBFN and MLP


def test_weighted_kmeans_equals_kmeans_on_duplicated_points(rng):
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    X = np.repeat(centres, 5, axis=0) + rng.normal(0, 0.1, size=(15, 2))
    c = rng.integers(1, 4, size=15)
    got = kmeans(X, 3, weights=c, rng=0, n_init=3).centres
    ref = kmeans(np.repeat(X, c, axis=0), 3, rng=1, n_init=3).centres
    order = lambda a: a[np.lexsort(a.T)]  # noqa: E731
    np.testing.assert_allclose(order(got), order(ref), atol=1e-12)
    np.testing.assert_allclose(got[np.argmin(np.linalg.norm(got, axis=1))], np.average(X[:5], axis=0, weights=c[:5]), atol=1e-12)


def test_rbfn_design_is_eq_14_and_weights_equal_duplicated_rows(rng):
    X = np.repeat(np.array([[0.0], [1.0], [2.0]]), 4, axis=0) + rng.normal(0, 0.05, size=(12, 1))
    y = np.sin(X[:, 0]) + rng.normal(0, 0.1, 12)
    net = RBFN(wsf=2.0, n_init=2)
    centres, sigma = np.array([[0.0], [2.0]]), np.array([0.3, 0.5])
    phi = net.design(X, centres, sigma)
    np.testing.assert_allclose(phi[:, 1], np.exp(-(X[:, 0] - 2.0) ** 2 / (2 * 2.0 * 0.25)))
    c = rng.integers(1, 4, size=12)
    got = net.predict_path(X, y, [3], X, weights=c, rng=0)
    ref = net.predict_path(np.repeat(X, c, axis=0), np.repeat(y, c), [3], X, rng=0)
    np.testing.assert_allclose(got, ref, atol=1e-9)


def test_mlp_jacobian_matches_finite_differences(rng):
    X, P = rng.normal(size=(20, 3)), 4
    mlp = MLP()
    theta = rng.normal(size=P * (3 + 2) + 1)
    eps = 1e-6
    fd = np.stack([(mlp.forward(theta + eps * e, X, P) - mlp.forward(theta - eps * e, X, P)) / (2 * eps)
                   for e in np.eye(theta.size)], axis=1)
    np.testing.assert_allclose(mlp.jacobian(theta, X, P), fd, atol=1e-7)


def test_mlp_fit_with_weights_equals_fit_on_duplicated_rows(rng):
    X = rng.uniform(size=(25, 1))
    y = np.sin(6 * X[:, 0]) + rng.normal(0, 0.1, 25)
    c = rng.integers(1, 4, size=25)
    mlp = MLP(max_epochs=2000, n_init=2)  # to convergence: the two runs differ by round-off only
    got = mlp.fit(X, y, 3, weights=c, rng=5)
    ref = mlp.fit(np.repeat(X, c, axis=0), np.repeat(y, c), 3, rng=5)
    np.testing.assert_allclose(mlp.forward(got, X, 3), mlp.forward(ref, X, 3), atol=1e-5)


def test_mlp_learns_the_toy_function():
    d = datasets.toy_function(rng=0)
    x = np.linspace(0, 1, 300)[:, None]
    truth = np.sin(5 * x[:, 0]) + np.sin(15 * x[:, 0]) + np.sin(25 * x[:, 0])
    pred = MLP(max_epochs=200, n_init=3).predict_path(d.inputs, d.targets, [8], x, rng=0)[0]
    assert np.mean((pred - truth) ** 2) < 0.1 * np.var(truth)


@pytest.mark.parametrize("bad, message", [(0, "whole number between 1"), (2.5, "whole number between 1")])
def test_networks_reject_bad_unit_counts(toy, bad, message):
    X, y = toy
    with pytest.raises(ValueError, match=message):
        RBFN().predict_path(X, y, [bad], X)
    with pytest.raises(ValueError, match="`wsf` must be positive"):
        RBFN(wsf=0.0)


# ----------------------------------------------------------------------------- bootstrap, eqs. (3)-(8)


def test_bootstrap_optimism_equals_literal_refits_with_scikit_learn(toy):
    kr = pytest.importorskip("sklearn.kernel_ridge")
    X, y = toy
    ell, grid = 0.1, np.array([2.0, 20.0])
    got = fastboot.bootstrap_optimism(LSSVM(SquaredExponential(ell), bias=False), X, y, grid, 3, rng=11)
    # A_j of the same root seed, drawn as the docstring says: the first draw of replication j's own generator
    counts = [item_generator(root_seed(11), 0, j).multinomial(y.size, np.full(y.size, 1.0 / y.size)) for j in range(3)]
    for j, c in enumerate(counts):
        idx = np.repeat(np.arange(y.size), c)  # the resample A_j, duplicated points and all
        for q, gamma in enumerate(grid):
            model = kr.KernelRidge(alpha=1 / gamma, kernel="rbf", gamma=1 / (2 * ell**2)).fit(X[idx], y[idx])
            e_ai = np.mean((model.predict(X) - y) ** 2)  # eq. (4)
            e_aa = np.mean((model.predict(X[idx]) - y[idx]) ** 2)  # eq. (3)
            assert got[j, q] == pytest.approx(e_ai - e_aa, abs=1e-9)  # eq. (5)


def test_apparent_error_and_generalization_estimate(toy):
    X, y = toy
    model, grid = LSSVM(SquaredExponential(0.1)), np.array([1.0, 10.0])
    curve = fastboot.full_bootstrap(model, X, y, grid, 4, rng=0)
    K = model.kernel(X)
    ref = [np.mean((_dual_solve(K, y, g, np.ones(y.size, int), True) - y) ** 2) for g in grid]  # eq. (7)
    np.testing.assert_allclose(curve.apparent_error, ref, atol=1e-10)
    np.testing.assert_allclose(curve.generalization_error, curve.optimism + curve.apparent_error)  # eq. (8)
    assert curve.selected == grid[np.argmin(curve.generalization_error)]
    assert (curve.bootstrap_models, curve.models_trained) == (8, 10)


def test_progress_and_cancel(toy):
    X, y = toy
    seen = []
    fastboot.bootstrap_optimism(RBFN(), X, y, [3, 4], 4, rng=0, chunk_size=1,
                                hooks=Hooks(progress=lambda f, msg: seen.append((f, str(msg)))))
    assert seen == [(k / 4, f"{k}/4 replications") for k in (1, 2, 3, 4)]
    seen.clear()
    fastboot.bootstrap_optimism(RBFN(), X, y, [3, 4], 4, rng=0, chunk_size=3,
                                hooks=Hooks(progress=lambda f, msg: seen.append((f, str(msg)))))
    assert seen == [(3 / 4, "3/4 replications"), (1.0, "4/4 replications")]  # one report per chunk
    calls = iter([False, False, True])
    with pytest.raises(Cancelled, match="after 2 of 5"):
        fastboot.bootstrap_optimism(RBFN(), X, y, [3], 5, rng=0, chunk_size=1,
                                    hooks=Hooks(should_stop=lambda: next(calls)))


def _executors(dask_engine):
    return [(1, None), (3, None), (1000, None), (3, dask_engine.executor)]


@pytest.mark.parametrize("model", [LSSVM(SquaredExponential(0.1)), RBFN(n_init=2), MLP(max_epochs=15, n_init=2)],
                         ids=["ls-svm", "rbfn", "mlp"])
def test_bootstrap_optimism_is_the_same_for_any_chunk_size_and_executor(toy, model, dask_engine):
    X, y = toy
    grid = [0.5, 5.0, 50.0] if isinstance(model, LSSVM) else [2, 4]
    ref = fastboot.bootstrap_optimism(model, X, y, grid, 7, rng=21)  # default chunks, in this process
    for chunk_size, executor in _executors(dask_engine):
        got = fastboot.bootstrap_optimism(model, X, y, grid, 7, rng=21, chunk_size=chunk_size, executor=executor)
        if isinstance(model, MLP):
            # Same resamples and initial weights; scipy's MINPACK (least_squares "lm") rounds differently with
            # the memory layout of its work arrays (seen in one process: the same call after other allocations
            # differs by ~1e-14), so the MLP is reproducible to round-off, not bit for bit.
            np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
        else:
            np.testing.assert_array_equal(got, ref)


def test_replication_trains_with_its_own_generator_after_the_resample(toy):
    """Replication j of an MLP bootstrap, written out: A_j from item j's generator, then the random initial
    weights of every fit from the same generator (nothing from a stream shared between replications)."""
    X, y = toy
    mlp, grid, root = MLP(max_epochs=15, n_init=2), np.array([2, 3]), np.random.SeedSequence(8)
    got = fastboot.bootstrap_optimism(mlp, X, y, grid, 3, rng=root, chunk_size=2)
    for j in range(3):
        gen = item_generator(root, 0, j)
        c = gen.multinomial(y.size, np.full(y.size, 1 / y.size))
        a = c > 0
        idx = np.repeat(np.arange(y.size), c)  # A_j with its duplicated points
        h = np.stack([mlp.forward(mlp.fit(X[a], y[a], P, c[a], gen), X, P) for P in grid])
        e_ai = np.mean((h - y) ** 2, axis=1)  # eq. (4)
        e_aa = np.mean((h[:, idx] - y[idx]) ** 2, axis=1)  # eq. (3) on the duplicated points
        np.testing.assert_allclose(got[j], e_ai - e_aa, rtol=1e-9, atol=1e-12)  # eq. (5); MINPACK round-off


def test_full_and_fast_bootstrap_and_the_comparison_do_not_depend_on_the_executor(dask_engine):
    d = datasets.toy_function(n=60, rng=4)
    setting = Setting((10, 14, 1), 9, (10, 14, 1), 5)
    ref = fe.compare_bootstraps(d, "rbfn", setting, rng=3, with_replica=False)
    for chunk_size, executor in _executors(dask_engine):
        got = fe.compare_bootstraps(d, "rbfn", setting, rng=3, with_replica=False, chunk_size=chunk_size,
                                    executor=executor)
        for a, b in ((got.full, ref.full), (got.fast, ref.fast)):
            np.testing.assert_array_equal(a.apparent_error, b.apparent_error)
            np.testing.assert_array_equal(a.optimism, b.optimism)
        np.testing.assert_array_equal(got.full.optimism_se, ref.full.optimism_se)
        np.testing.assert_array_equal(got.fast.sample_optimism, ref.fast.sample_optimism)


@pytest.mark.parametrize("kwargs, message", [
    ({"grid": [3, 2]}, "strictly increasing"),
    ({"n_replications": 0}, "whole number ≥ 1"),
])
def test_bootstrap_rejects_bad_input(toy, kwargs, message):
    X, y = toy
    args = {"grid": [2, 3], "n_replications": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        fastboot.bootstrap_optimism(RBFN(), X, y, args["grid"], args["n_replications"])


def test_complexity_grid_matches_the_tables():
    assert fastboot.complexity_grid(1, 13, 3).tolist() == [1, 4, 7, 10, 13]
    assert fastboot.complexity_grid(10, 19, 3).tolist() == [10, 13, 16, 19]
    assert fastboot.complexity_grid(5, 50, 0.1).size == 451
    with pytest.raises(ValueError, match="step > 0"):
        fastboot.complexity_grid(1, 2, 0)


# ----------------------------------------------------------------------------- F test, eq. (11)


def test_f_statistic_is_the_squared_t_statistic_of_the_quadratic_term(rng):
    u = np.linspace(1, 13, 7)
    v = 0.3 + 0.02 * u + 0.004 * u**2 + rng.normal(0, 0.01, u.size)
    test = fastboot.polynomial_f_test(u, v, 1, 2).test
    A = np.vander(u, 3, increasing=True)  # OLS of order 2 written out
    coef, res, *_ = np.linalg.lstsq(A, v, rcond=None)
    s2 = res[0] / (u.size - 3)
    t = coef[2] / np.sqrt(s2 * np.linalg.inv(A.T @ A)[2, 2])
    assert test.F == pytest.approx(t**2, rel=1e-8)
    assert (test.df_num, test.df_den) == (1, 4)
    assert test.p_value == pytest.approx(2 * stats.t.sf(abs(t), 4), rel=1e-8)


def test_f_test_has_its_nominal_level_under_h0(rng):
    u = np.linspace(0, 1, 6)
    rejected = np.mean([not fastboot.polynomial_f_test(u, 1 + 2 * u + rng.normal(0, 1, 6)).test.accepted
                        for _ in range(2000)])
    assert 0.035 < rejected < 0.065  # 5% ± 3 binomial standard deviations (0.49%)


def test_f_test_decision_and_degree(rng):
    u = np.linspace(1, 10, 8)
    linear = fastboot.polynomial_f_test(u, 2 * u + rng.normal(0, 0.01, 8)).test
    curved_fit = fastboot.polynomial_f_test(u, u**2 + rng.normal(0, 0.01, 8))
    curved, quad = curved_fit.test, curved_fit.high
    assert curved_fit.chosen is quad
    assert linear.accepted and linear.degree == 1
    assert not curved.accepted and curved.degree == 2 and quad.degree() == 2


@pytest.mark.parametrize("u, kappa, message", [
    (np.arange(3.0), (1, 2), "needs K ≥ κ1 \\+ 2"),
    (np.arange(6.0), (2, 1), "0 ≤ κ0 < κ1"),
])
def test_f_test_rejects_bad_input(u, kappa, message):
    with pytest.raises(ValueError, match=message):
        fastboot.polynomial_f_test(u, u, *kappa)


def test_fast_bootstrap_uses_the_polynomial_on_the_full_grid(toy):
    X, y = toy
    model, grid = LSSVM(SquaredExponential(0.1)), fastboot.complexity_grid(5, 50, 1)
    fast = fastboot.fast_bootstrap(model, X, y, grid, fastboot.complexity_grid(5, 50, 5), 3,
                                   log_complexity=True, rng=0)
    np.testing.assert_allclose(fast.optimism, fast.polynomial(np.log(grid)))
    np.testing.assert_allclose(fast.generalization_error, fast.optimism + fast.apparent_error)
    assert fast.polynomial.degree() == fast.degree
    assert (fast.bootstrap_models, fast.models_trained) == (30, 30 + grid.size)
    with pytest.raises(ValueError, match="needs positive complexities"):
        fastboot.fast_bootstrap(model, X, y, [0.0, 1.0], [0.0, 1, 2, 3], 2, log_complexity=True)


# ----------------------------------------------------------------------------- Tables 1-2


@pytest.mark.parametrize("model, experiments, gain, df", [
    ("mlp", (1300, 50), 0.962, 2), ("rbfn", (1000, 40), 0.96, 1), ("ls-svm", (45100, 100), 0.998, 7)])
def test_table_1_counts_gains_and_degrees_of_freedom(model, experiments, gain, df):
    s = TABLE_1[model]
    grids = s.grids()
    grid, sample = grids.full, grids.fast
    assert (s.full_replications * grid.size, s.fast_replications * sample.size) == experiments
    assert 1 - experiments[1] / experiments[0] == pytest.approx(gain, abs=5e-4)
    assert sample.size - 2 - 1 == df  # F_{1, K-3} with κ0 = 1, κ1 = 2


@pytest.mark.parametrize("model, experiments, df", [("mlp", 60, 3), ("rbfn", 100, 2), ("ls-svm", 190, 16)])
def test_table_2_counts_and_degrees_of_freedom(model, experiments, df):
    s = TABLE_2[model]
    sample = s.grids().fast
    assert s.fast_replications * sample.size == experiments
    assert sample.size - 3 == df


# ----------------------------------------------------------------------------- replica optimism


def test_replica_optimism_is_exact_for_a_diagonal_kernel(rng):
    n, a, noise = 40, 1.7, 0.3
    y = rng.normal(size=n)
    sol = replica.solve_replica(a * np.eye(n), y, noise, float(n), tol=1e-12, precision="double")
    got = replica.bootstrap_optimism(sol)
    got_v, got_t = got.validation, got.training
    k = np.arange(60)
    p = stats.poisson.pmf(k, 1.0)
    h = (a * k / noise)[None, :] * y[:, None] / (1 + a * k / noise)[None, :]  # retrained mean with k copies
    sq = (h - y[:, None]) ** 2
    assert got_v == pytest.approx(np.mean(sq @ p), rel=1e-10)  # eq. (4) averaged
    assert got_t == pytest.approx(np.sum(sq @ (k * p)) / n, rel=1e-10)  # eq. (3) averaged


@pytest.mark.parametrize("bias", [False, True])
def test_replica_optimism_matches_monte_carlo_refits(bias, one_blas_thread):
    d = datasets.toy_function(n=200, rng=0)
    prepared = prepare_data(d)
    X, y = prepared.X, prepared.y
    model = dataclasses.replace(make_model("ls-svm", d), bias=bias)
    grid = np.array([5.0, 50.0])
    theory = replica_optimism(model, X, y, grid).optimism
    gen, J = np.random.default_rng(1), 2000
    mc = np.empty((J, grid.size))
    for j, c in enumerate(gen.poisson(1.0, size=(J, y.size))):  # Poisson occupations, S = N (theory's W(s))
        a = c > 0
        sq = (model.predict_path(X[a], y[a], grid, X, c[a]) - y) ** 2
        mc[j] = sq.mean(axis=1) - sq @ c / y.size
    se = mc.std(axis=0) / np.sqrt(J)
    # [MO03]'s approximation is accurate to ~1% at N = 200 here; 4 MC standard errors (~7%) bound it
    assert np.all(np.abs(theory - mc.mean(axis=0)) < 4 * se)


# ----------------------------------------------------------------------------- experiments and data


def test_compare_bootstraps_on_the_toy_data():
    d = datasets.toy_function(rng=0)
    setting = Setting((5, 50, 1), 8, (5, 50, 5), 4, log_complexity=True)
    res = fe.compare_bootstraps(d, "ls-svm", setting, rng=0, replica_points=5)
    out = res.as_dict()
    assert set(out["fast"]) >= {"grid", "optimism", "generalization_error", "selected", "models_trained", "F",
                                "p_value", "degree"}
    assert set(out["full"]) >= {"grid", "optimism", "generalization_error", "selected", "models_trained"}
    assert out["full"]["models_trained"] == 8 * 46 + 46 and out["fast"]["models_trained"] == 4 * 10 + 46
    assert res.gain == pytest.approx(1 - 86 / 414)
    alone = fe.compare_bootstraps(d, "ls-svm", setting, rng=0, with_full=False, with_replica=False)
    np.testing.assert_array_equal(alone.fast.optimism, res.fast.optimism)
    assert alone.full is None and alone.gain is None


def test_compare_bootstraps_rejects_classification_and_unknown_models():
    with pytest.raises(ValueError, match="for regression"):
        prepare_data(datasets.load("crabs"))
    with pytest.raises(ValueError, match="unknown model"):
        make_model("svm", datasets.toy_function(rng=0))


def test_nar_embedding_predicts_the_next_value():
    d = datasets.nar_embedding(np.arange(20.0), lags=6)
    assert d.inputs.shape == (14, 6) and d.feature_names[:2] == ("x(t)", "x(t-1)")
    np.testing.assert_array_equal(d.inputs[0], [5, 4, 3, 2, 1, 0])
    assert d.targets[0] == 6
    with pytest.raises(datasets.DatasetError, match="at least 10"):
        datasets.nar_embedding(np.arange(12.0), lags=6)


@pytest.mark.skipif(not LASER.exists(), reason="Santa Fe laser data not found beside the checkout")
def test_santa_fe_laser_embedding_and_fast_bootstrap():
    d = datasets.load_series_csv(LASER, "value", lags=6)
    assert d.inputs.shape == (994, 6) and d.targets[:3].tolist() == [32, 72, 138]
    setting = dataclasses.replace(TABLE_2["mlp"], fast_replications=2)
    res = fe.compare_bootstraps(d, "mlp", setting, rng=0, with_full=False,
                                model_options={"max_epochs": 30, "n_init": 1})
    assert res.fast.f_test.df_num == 1 and res.fast.f_test.df_den == 3
    assert 4 <= res.fast.selected <= 9


# ----------------------------------------------------------------------------- Table 1 (slow)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["ls-svm", "rbfn"])
def test_fast_bootstrap_choice_is_as_good_as_the_full_one_on_the_toy_data(model, one_blas_thread):
    """Table 1 settings, 5 seeds: the fast bootstrap's complexity is within 2 standard errors of the full
    bootstrap's optimum on the full bootstrap's own curve, with ≥ 90% fewer models trained."""
    for seed in range(5):
        res = fe.compare_bootstraps(datasets.toy_function(rng=seed), model, rng=seed, with_replica=False)
        full, fast = res.full, res.fast
        i_fast = int(np.argmin(fast.generalization_error))
        cost = full.generalization_error[i_fast] - full.generalization_error.min()
        assert cost <= 2 * np.median(full.optimism_se), (seed, full.selected, fast.selected)
        assert res.gain >= 0.9
