"""Monte-Carlo bootstrap of GP regression ([MO03]): exactness, reproducibility, estimators.

Tolerances: the sigma^2/s identity is exact algebra, so active-set and literal refits agree to
1e-9 (both are backward-stable Cholesky solves of matrices with condition number < 1e6). Monte-Carlo
averages are compared with exact enumerations within 4 of their own standard errors (a two-sided
4-sigma band: a false alarm has probability ~6e-5 per comparison, and the seeds are fixed).
"""
import itertools
import runpy
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from explorer.bootstrap.estimates import BootstrapPredictions, LearningCurve, bootstrap_test_error, predictive_moments
from explorer.gp_bootstrap.montecarlo import bootstrap_learning_curve, bootstrap_predictions, refit_on_duplicates
from explorer.losses import eps_insensitive_loss, get_loss
from explorer.progress import Cancelled, Hooks
from explorer.resampling import occupation_numbers, sample_occupations
from tests.conftest import rbf


def gp_problem(rng, n, m=0, d=2):
    X = rng.normal(size=(n + m, d))
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=n + m)
    K = rbf(X, X)
    return K[:n, :n], y[:n], K[n:, :n], K


# ----------------------------------------------------------------------------- exactness

@pytest.mark.parametrize("n, S", [(3, 1.5), (12, 12), (30, 30), (30, 90), (60, 20)])
def test_active_set_equals_literal_refit_on_duplicates(rng, n, S):
    """sigma^2/s identity: s copies with noise sigma^2 == one point with noise sigma^2/s (sec. 5).

    The cases cover empty samples (n=3, S=1.5), the stacked small-system path (|a| <= 20) and the
    per-sample Cholesky path, with occupations up to ~10 at S = 3N.
    """
    K, y, K_test, K_all = gp_problem(rng, n, m=4)
    pred = bootstrap_predictions(K, y, 0.05, S, 40, K_test=K_test, rng=rng)
    np.testing.assert_allclose(pred.train, refit_on_duplicates(K, y, 0.05, pred.occupations),
                               rtol=0, atol=1e-9)
    # Test inputs are training inputs that are never drawn (s = 0) of the joint kernel matrix.
    padded = np.hstack([pred.occupations, np.zeros((40, 4), dtype=int)])
    joint = refit_on_duplicates(K_all, np.concatenate([y, np.zeros(4)]), 0.05, padded)
    np.testing.assert_allclose(pred.test, joint[:, n:], rtol=0, atol=1e-9)


def test_empty_sample_predicts_prior_mean_zero(rng):
    K, y, K_test, _ = gp_problem(rng, 4, m=2)
    pred = bootstrap_predictions(K, y, 0.1, 0.5, 200, K_test=K_test, rng=rng)
    empty = pred.occupations.sum(axis=1) == 0
    assert empty.any() and (~empty).any()
    assert np.all(pred.train[empty] == 0) and np.all(pred.test[empty] == 0)
    np.testing.assert_array_equal(refit_on_duplicates(K, y, 0.1, np.zeros(4, dtype=int)), 0.0)


def test_matches_scikit_learn_gp_with_per_point_noise(rng):
    """One sample == scikit-learn's GP on the distinct points with alpha_i = sigma^2 / s_i."""
    gpr = pytest.importorskip("sklearn.gaussian_process")
    X = rng.normal(size=(25, 2))
    X_test = rng.normal(size=(5, 2))
    y = np.cos(X[:, 1]) + 0.1 * rng.normal(size=25)
    pred = bootstrap_predictions(rbf(X, X), y, 0.02, 25, 3, K_test=rbf(X_test, X), rng=rng)
    for s, f, f_test in zip(pred.occupations, pred.train, pred.test):
        a = s > 0
        model = gpr.GaussianProcessRegressor(gpr.kernels.RBF(1.0), alpha=0.02 / s[a],
                                             optimizer=None).fit(X[a], y[a])
        np.testing.assert_allclose(f, model.predict(X), atol=1e-9)
        np.testing.assert_allclose(f_test, model.predict(X_test), atol=1e-9)


# ----------------------------------------------------------------------------- sampling

def test_chunk_size_never_changes_the_result(rng):
    K, y, K_test, _ = gp_problem(rng, 30, m=3)  # |a| straddles the stacked/per-sample threshold
    runs = [bootstrap_predictions(K, y, 0.05, 30, 50, K_test=K_test, rng=7, chunk_size=b)
            for b in (1, 7, 1000)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.occupations, runs[0].occupations)
        np.testing.assert_array_equal(other.train, runs[0].train)
        np.testing.assert_array_equal(other.test, runs[0].test)


def test_seeded_reproducibility(rng):
    K, y, _, _ = gp_problem(rng, 10)
    a = bootstrap_predictions(K, y, 0.1, 10, 20, rng=123)
    b = bootstrap_predictions(K, y, 0.1, 10, 20, rng=np.random.SeedSequence(123))
    c = bootstrap_predictions(K, y, 0.1, 10, 20, rng=124)
    d, e = (bootstrap_predictions(K, y, 0.1, 10, 20, rng=np.random.default_rng(5)) for _ in range(2))
    np.testing.assert_array_equal(a.train, b.train)
    np.testing.assert_array_equal(d.train, e.train)   # a Generator in the same state gives the same samples
    assert not np.array_equal(a.occupations, c.occupations)
    np.testing.assert_array_equal(occupation_numbers(10, 10, 20, rng=123), a.occupations)


def test_multinomial_rows_sum_to_S_exactly(rng):
    occ = occupation_numbers(17, 40, 500, scheme="multinomial", rng=rng)
    assert occ.shape == (500, 17) and np.issubdtype(occ.dtype, np.integer)
    np.testing.assert_array_equal(occ.sum(axis=1), 40)
    K, y, _, _ = gp_problem(rng, 17)
    pred = bootstrap_predictions(K, y, 0.1, 40.0, 5, scheme="multinomial", rng=rng)
    np.testing.assert_array_equal(pred.occupations.sum(axis=1), 40)
    assert pred.scheme == "multinomial" and pred.S == 40.0


def test_poisson_occupations_have_mean_and_variance_S_over_N(rng):
    """Eq. (11): s_i ~ Poisson(S/N), so mean = variance = S/N (checked within 4 s.e.)."""
    occ = occupation_numbers(50, 35, 4000, rng=rng)
    v, n = 35 / 50, occ.size
    assert abs(occ.mean() - v) < 4 * np.sqrt(v / n)
    assert abs(occ.var() - v) < 4 * np.sqrt((v + 2 * v**2) / n)  # Var of s^2 - ... for Poisson
    assert np.all(occ >= 0)


# ----------------------------------------------------------------------------- exact enumeration

def enumerate_bootstrap(K, y, noise_var, v, losses):
    """Exact averages over all occupation vectors (eq. 11), literal refit for every one.

    Each s_i is truncated at k_max with Poisson tail mass P(s_i > k_max) < 1e-12, so every
    average is exact up to ~N * 1e-12 relative.
    """
    n = K.shape[0]
    k_max = int(stats.poisson.isf(1e-12, v)) + 1
    assert stats.poisson.sf(k_max, v) < 1e-12
    grid = np.array(list(itertools.product(range(k_max + 1), repeat=n)))
    weight = stats.poisson.pmf(grid, v).prod(axis=1)
    f = refit_on_duplicates(K, y, noise_var, grid)
    mean = weight @ f
    out = grid == 0
    efron = {name: np.mean([weight[out[:, i]] @ g(f[out[:, i], i], y[i]) / weight[out[:, i]].sum()
                            for i in range(n)]) for name, g in losses.items()}
    return dict(weight=weight, grid=grid, mean=mean, var=weight @ f**2 - mean**2, efron=efron)


@pytest.mark.parametrize("n, S", [(3, 3.0), (4, 2.0)])
def test_monte_carlo_agrees_with_exact_enumeration(rng, n, S):
    K, y, _, _ = gp_problem(rng, n)
    losses = {"square": get_loss("square"), "eps-insensitive": get_loss("eps-insensitive")}
    exact = enumerate_bootstrap(K, y, 0.1, S / n, losses)
    # The enumeration itself: a normalised weight with the Poisson marginals of eq. (11).
    assert exact["weight"].sum() == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(exact["weight"] @ exact["grid"], S / n, rtol=1e-10)
    np.testing.assert_allclose(exact["weight"] @ (exact["grid"] == 0), np.exp(-S / n), rtol=1e-10)

    pred = bootstrap_predictions(K, y, 0.1, S, 20000, rng=rng)
    mom = predictive_moments(pred, where="train")
    assert np.all(np.abs(mom.mean - exact["mean"]) < 4 * mom.mean_se)
    assert np.all(np.abs(mom.var - exact["var"]) < 4 * mom.var_se)
    for name in losses:
        err = bootstrap_test_error(pred, y, loss=name)
        assert abs(err.value - exact["efron"][name]) < 4 * err.se, name


# ----------------------------------------------------------------------------- estimators

def efron_by_hand(occupations, train, y, g):
    """Eq. (17) with explicit loops: per input, the mean loss over samples that leave it out."""
    per_input = []
    for i in range(len(y)):
        left_out = [g(train[b, i], y[i]) for b in range(len(train)) if occupations[b, i] == 0]
        per_input.append(np.mean(left_out) if left_out else np.nan)
    return np.nanmean(per_input), np.array(per_input)


@pytest.mark.parametrize("loss", ["square", "eps-insensitive", lambda f, y: np.abs(f - y)])
def test_efron_estimator_equals_direct_computation(rng, loss):
    K, y, _, _ = gp_problem(rng, 8)
    pred = bootstrap_predictions(K, y, 0.1, 8, 30, rng=rng)
    err = bootstrap_test_error(pred, y, loss=loss)
    value, per_input = efron_by_hand(pred.occupations, pred.train, y, get_loss(loss))
    assert err.value == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(err.per_input, per_input, rtol=1e-12)
    np.testing.assert_array_equal(err.n_test, (pred.occupations == 0).sum(axis=0))
    assert err.n_samples == 30


def test_efron_excludes_inputs_never_left_out(rng):
    K, y, _, _ = gp_problem(rng, 10)
    pred = bootstrap_predictions(K, y, 0.1, 40, 40, rng=1)  # P(s_i = 0) = e^-4 per sample: ~half never out
    err = bootstrap_test_error(pred, y)
    never = err.n_test == 0
    assert never.any() and (~never).any()
    assert np.all(np.isnan(err.per_input[never])) and not np.isnan(err.per_input[~never]).any()
    assert err.n_inputs_used == (~never).sum()
    assert err.value == pytest.approx(err.per_input[~never].mean())


def test_efron_delta_method_se_matches_jackknife_over_samples(rng):
    """The delta-method s.e. is the infinitesimal jackknife; the leave-one-sample-out jackknife
    must agree with it up to O(1/B) (checked at 10 %)."""
    K, y, _, _ = gp_problem(rng, 12)
    pred = bootstrap_predictions(K, y, 0.1, 12, 300, rng=rng)
    err = bootstrap_test_error(pred, y)
    B = pred.n_samples
    loo = [bootstrap_test_error(BootstrapPredictions(np.delete(pred.occupations, b, 0),
                                                     np.delete(pred.train, b, 0), None, 12,
                                                     "poisson"), y).value for b in range(B)]
    jackknife = np.sqrt((B - 1) / B * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    assert err.se == pytest.approx(jackknife, rel=0.1)


def test_standard_errors_are_calibrated_over_repeated_seeds():
    """Reported s.e. vs the spread of the estimates over 40 independent seeds (factor 1.5)."""
    K, y, _, _ = gp_problem(np.random.default_rng(5), 15)
    values, ses, means, mean_ses, vars_, var_ses = [], [], [], [], [], []
    for seed in range(40):
        pred = bootstrap_predictions(K, y, 0.1, 15, 200, rng=seed)
        err, mom = bootstrap_test_error(pred, y), predictive_moments(pred, where="train")
        values.append(err.value), ses.append(err.se)
        means.append(mom.mean), mean_ses.append(mom.mean_se)
        vars_.append(mom.var), var_ses.append(mom.var_se)
    for estimates, reported in [(values, ses), (means, mean_ses), (vars_, var_ses)]:
        ratio = np.mean(reported, axis=0) / np.std(estimates, axis=0, ddof=1)
        assert np.all((ratio > 1 / 1.5) & (ratio < 1.5)), ratio


def test_predictive_moments_at_test_and_train_inputs(rng):
    K, y, K_test, _ = gp_problem(rng, 10, m=6)
    pred = bootstrap_predictions(K, y, 0.1, 10, 50, K_test=K_test, rng=rng)
    mean, var, mean_se, var_se = predictive_moments(pred)
    np.testing.assert_allclose(mean, pred.test.mean(axis=0))
    np.testing.assert_allclose(var, pred.test.var(axis=0, ddof=1))
    np.testing.assert_allclose(mean_se, pred.test.std(axis=0, ddof=1) / np.sqrt(50))
    assert var_se.shape == (6,) and np.all(var_se > 0)
    train = predictive_moments(pred, where="train")
    assert train.mean.shape == (10,) and train.where == "train" and train.n_samples == 50


def test_learning_curve_draws_the_samples_of_each_S_and_reports_progress(rng):
    K, y, _, _ = gp_problem(rng, 10)
    calls, published = [], []
    curve = bootstrap_learning_curve(K, y, 0.1, [5, 10, 20], 30, rng=11, chunk_size=8,
                                     hooks=Hooks(progress=lambda f, msg: calls.append((f, str(msg))),
                                                 partial=published.append))
    assert isinstance(curve, LearningCurve) and curve.value.shape == curve.se.shape == (3,)
    for k, (S, value) in enumerate(zip([5, 10, 20], curve.value)):
        # brute force: the samples of this S (keyed by its S/N), refitted on duplicated points
        occ = sample_occupations(10, S, "poisson", np.random.SeedSequence(11), k, 0, 30)
        train = np.array([refit_on_duplicates(K, y, 0.1, s) for s in occ])
        assert value == pytest.approx(efron_by_hand(occ, train, y, get_loss("square"))[0], rel=1e-10)
    assert [p.s_values.tolist() for p in published] == [[5], [5, 10], [5, 10, 20]]
    assert calls[-1] == (1.0, "90/90 samples") and [f for f, _ in calls] == sorted(f for f, _ in calls)
    assert curve.value[0] > curve.value[-1]  # more data, smaller test error


def test_progress_and_cancellation(rng):
    K, y, _, _ = gp_problem(rng, 6)
    calls = []
    bootstrap_predictions(K, y, 0.1, 6, 20, rng=rng, chunk_size=7,
                          hooks=Hooks(progress=lambda f, msg: calls.append((f, str(msg)))))
    assert calls == [(7 / 20, "7/20 samples"), (14 / 20, "14/20 samples"), (1.0, "20/20 samples")]
    checks = iter([False, False, True])
    with pytest.raises(Cancelled, match="cancelled after 14 of 20 samples") as info:
        bootstrap_predictions(K, y, 0.1, 6, 20, rng=rng, chunk_size=7,
                              hooks=Hooks(should_stop=lambda: next(checks)))
    assert (info.value.done, info.value.total) == (14, 20)


# ----------------------------------------------------------------------------- validation

def _valid(rng):
    K, y, K_test, _ = gp_problem(rng, 5, m=2)
    return K, y, K_test


@pytest.mark.parametrize("kwargs, match", [
    (dict(K=np.ones((5, 4))), r"`K` must be a square kernel matrix, got shape \(5, 4\)"),
    (dict(y=np.ones(4)), r"`y` must have shape \(5,\) to match `K` of shape \(5, 5\), got shape \(4,\)"),
    (dict(noise_var=0.0), "`noise_var` must be a positive finite number, got 0.0"),
    (dict(S=-3), "`S` must be positive and finite, got -3. S is the mean bootstrap sample size"),
    (dict(n_samples=0), "`n_samples` must be a positive integer, got 0"),
    (dict(n_samples=2.5), "`n_samples` must be a positive integer, got 2.5"),
    (dict(chunk_size=0), "`chunk_size` must be a positive integer, got 0"),
    (dict(scheme="jackknife"), r"`scheme` must be one of \('poisson', 'multinomial'\), got 'jackknife'"),
    (dict(scheme="multinomial", S=2.5), "`S` is the fixed sample size and must be a whole number, got 2.5"),
    (dict(K_test=np.ones((2, 4))), r"`K_test` must have shape \(M, 5\) = k\(X_test, X\)"),
    (dict(y=np.array([0, 1, np.nan, 0, 0])), "`y` must be finite, got 1 NaN or infinite entries"),
    (dict(K=np.full((5, 5), np.inf)), "`K` must be finite, got 25 NaN or infinite entries"),
    (dict(K=np.triu(np.ones((5, 5)))), r"`K` must be symmetric, got max \|K - K\^T\| = 1"),
    (dict(K=-np.eye(5)), "`K` is not positive semi-definite"),
])
def test_bootstrap_predictions_validation(rng, kwargs, match):
    K, y, K_test = _valid(rng)
    args = dict(K=K, y=y, noise_var=0.1, S=5, n_samples=3, K_test=K_test) | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_predictions(**args)


def test_not_psd_error_on_per_sample_path(rng):
    with pytest.raises(ValueError, match="`K` is not positive semi-definite"):
        bootstrap_predictions(-np.eye(40), np.zeros(40), 0.1, 40, 2, rng=rng)


@pytest.mark.parametrize("args, match", [
    ((0, 5, 3), "`n_inputs` must be a positive integer, got 0"),
    ((5, np.nan, 3), "`S` must be positive and finite, got nan"),
    ((5, "5", 3), "`S` must be positive and finite, got '5'"),
])
def test_occupation_numbers_validation(args, match):
    with pytest.raises(ValueError, match=match):
        occupation_numbers(*args)


@pytest.mark.parametrize("occupations, match", [
    (np.array([1, -1, 0, 0, 0]), r"`occupations` must be non-negative integers .* got values in \[-1, 1\]"),
    (np.array([0.5, 1, 0, 0, 0]), "`occupations` must be non-negative integers"),
    (np.ones((2, 4), dtype=int), r"`occupations` must have shape \(5,\) or \(n_samples, 5\)"),
])
def test_refit_on_duplicates_validation(rng, occupations, match):
    K, y, _ = _valid(rng)
    with pytest.raises(ValueError, match=match):
        refit_on_duplicates(K, y, 0.1, occupations)


def test_estimator_validation(rng):
    K, y, _ = _valid(rng)
    pred = bootstrap_predictions(K, y, 0.1, 5, 1, rng=rng)
    with pytest.raises(ValueError, match=r"`y` must have shape \(5,\), one target per training input"):
        bootstrap_test_error(pred, y[:4])
    with pytest.raises(ValueError, match="Unknown loss 'hinge'"):
        bootstrap_test_error(pred, y, loss="hinge")
    with pytest.raises(ValueError, match=r"`loss` must return an array .* got shape \(\)"):
        bootstrap_test_error(pred, y, loss=lambda f, t: 0.0)
    with pytest.raises(TypeError, match="`predictions` must be a BootstrapPredictions"):
        bootstrap_test_error(pred.train, y)
    with pytest.raises(ValueError, match="has no test predictions .* Pass `K_test`"):
        predictive_moments(pred)
    with pytest.raises(ValueError, match="need at least 2 samples, got 1"):
        predictive_moments(pred, where="train")
    with pytest.raises(ValueError, match="`where` must be 'test' or 'train', got 'all'"):
        predictive_moments(pred, where="all")
    assert np.isnan(bootstrap_test_error(pred, y).se)  # one sample: no standard error
    with pytest.raises(ValueError, match="`S_values` must be a non-empty 1-D sequence"):
        bootstrap_learning_curve(K, y, 0.1, [], 3)
    with pytest.raises(ValueError, match="`S` must be positive and finite, got -1.0"):
        bootstrap_learning_curve(K, y, 0.1, [5, -1], 3)


def test_eps_insensitive_loss_by_name_uses_the_paper_parameters(rng):
    K, y, _, _ = gp_problem(rng, 6)
    pred = bootstrap_predictions(K, y, 0.1, 6, 20, rng=rng)
    by_name = bootstrap_test_error(pred, y, loss="eps-insensitive")
    direct = bootstrap_test_error(pred, y, loss=lambda f, t: eps_insensitive_loss(f, t, 0.1, 0.1))
    assert by_name.value == direct.value and by_name.se == direct.se


def test_multinomial_monte_carlo_agrees_with_exact_enumeration(rng):
    """Fixed-size scheme: enumerate all compositions of S = 4 into N = 4 counts (35 vectors)."""
    K, y, _, _ = gp_problem(rng, 4)
    grid = np.array([s for s in itertools.product(range(5), repeat=4) if sum(s) == 4])
    weight = stats.multinomial.pmf(grid, 4, np.full(4, 0.25))
    f = refit_on_duplicates(K, y, 0.1, grid)
    mean = weight @ f
    efron = np.mean([weight[grid[:, i] == 0] @ (f[grid[:, i] == 0, i] - y[i]) ** 2
                     / weight[grid[:, i] == 0].sum() for i in range(4)])
    pred = bootstrap_predictions(K, y, 0.1, 4, 20000, scheme="multinomial", rng=rng)
    mom = predictive_moments(pred, where="train")
    err = bootstrap_test_error(pred, y)
    assert weight.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.abs(mom.mean - mean) < 4 * mom.mean_se)
    assert np.all(np.abs(mom.var - (weight @ f**2 - mean**2)) < 4 * mom.var_se)
    assert abs(err.value - efron) < 4 * err.se


def test_benchmark_script_runs_and_both_methods_agree(capsys):
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_montecarlo.py"
    bench = runpy.run_path(str(script))
    bench["main"](["--sizes", "40", "--fast-samples", "4", "--naive-samples", "2", "--repeats", "1"])
    row = capsys.readouterr().out.splitlines()[-1].split()
    assert row[:2] == ["synthetic", "8-D"] and float(row[-1]) < 1e-9  # max |fast - naive|
