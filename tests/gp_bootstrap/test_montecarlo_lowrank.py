"""Monte-Carlo bootstrap of the low-rank GP K = ΦΦᵀ (explorer.gp_bootstrap.montecarlo on features).

References: the dense Monte-Carlo of ``montecarlo`` on the N×N matrix K = ΦΦᵀ (same seed, so the same occupation
numbers), the dense GP itself for Φ = the Cholesky factor of a kernel matrix, and, independent of both, a ridge
regression in feature space on the explicitly duplicated rows (normal equations by ``np.linalg.solve``; scikit-learn's
``Ridge`` when installed).

Tolerances: every path is a backward-stable solve of a system whose condition number is at most
1 + s_max λ_max(ΦᵀΦ)/σ² ≲ 1e7 here (s ≤ 10, λ_max ≲ N k(x, x) = 1000, σ² = 0.01), so the predictors agree to
≲ 1e7 · 1e-16 = 1e-9 relative to their largest value; measured 1e-13 to 1e-12. Tests assert 1e-8 (the brief asks for
1e-6 or better). Across chunk sizes and executors the predictions are computed by the same per-sample code and are
compared bit for bit; the streamed learning curve adds its per-chunk sums in chunk order, bit for bit across
executors at one chunk size and to ~B·ε (asserted 1e-13) across chunk sizes.
"""
import tracemalloc

import numpy as np
import pytest
from scipy import linalg

from explorer.bootstrap.estimates import bootstrap_test_error
from explorer.gp_bootstrap import montecarlo
from explorer.gp_bootstrap.montecarlo import (
    bootstrap_learning_curve_lowrank,
    bootstrap_predictions_lowrank,
    resample_predictions_lowrank,
)
from explorer.kernels import SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.progress import Cancelled, Hooks
from explorer.resampling import occupation_numbers
from tests.conftest import rbf

NOISE = 0.01
RTOL = 1e-8


def nystrom_problem(n: int, m: int, seed: int = 0, n_test: int = 5):
    """Φ (n, m) of a squared-exponential kernel on 3-D inputs, test features (n_test, m) and targets (n,)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + n_test, 3))
    y = np.sin(X[:n, 0]) + 0.3 * X[:n, 1] + 0.1 * rng.normal(size=n)
    features = nystrom_features(SquaredExponential(1.5), X[:n], m, rng=seed)
    return features.phi, features.transform(X[n:]), y


def dense(phi, phi_test):
    """K = ΦΦᵀ (symmetrised: the product is symmetric only to rounding) and K_test = phi_test Φᵀ."""
    K = phi @ phi.T
    return 0.5 * (K + K.T), phi_test @ phi.T


def assert_close(actual, desired, rtol=RTOL):
    """Agreement relative to the largest |desired| (individual predictors can be near 0)."""
    np.testing.assert_allclose(actual, desired, rtol=0, atol=rtol * np.abs(desired).max())


# ----------------------------------------------------------------------------- against the dense path

@pytest.mark.parametrize("n, m, S, n_samples", [(300, 30, 60, 20), (300, 30, 900, 20), (1000, 100, 1000, 6)])
def test_predictions_equal_the_dense_monte_carlo_sample_by_sample(n, m, S, n_samples):
    """Same seed → same occupations → the same predictors as the dense active-set Monte-Carlo on K = ΦΦᵀ."""
    phi, phi_test, y = nystrom_problem(n, m)
    K, K_test = dense(phi, phi_test)
    low = bootstrap_predictions_lowrank(phi, y, NOISE, S, n_samples, phi_test=phi_test, rng=5)
    ref = montecarlo.bootstrap_predictions(K, y, NOISE, S, n_samples, K_test=K_test, rng=5)
    np.testing.assert_array_equal(low.occupations, ref.occupations)
    assert_close(low.train, ref.train)
    assert_close(low.test, ref.test)
    assert (low.S, low.scheme) == (ref.S, ref.scheme)


def test_rows_keep_the_dense_predictions_and_occupations_of_those_inputs_only():
    """A distribution map of a large N keeps B × R numbers: the same predictors as the dense path at those rows."""
    phi, _, y = nystrom_problem(300, 30)
    rows = np.array([3, 150, 299, 7])
    low = bootstrap_predictions_lowrank(phi, y, NOISE, 300, 12, rows=rows, rng=2)
    ref = montecarlo.bootstrap_predictions(dense(phi, phi[:1])[0], y, NOISE, 300, 12, rng=2)
    assert low.train.shape == low.occupations.shape == (12, 4)
    np.testing.assert_array_equal(low.occupations, ref.occupations[:, rows])
    assert_close(low.train, ref.train[:, rows])
    with pytest.raises(ValueError, match="training-input indices in 0..299"):
        bootstrap_predictions_lowrank(phi, y, NOISE, 300, 2, rows=[300])


@pytest.mark.parametrize("loss, scheme", [("square", "poisson"), ("eps-insensitive", "poisson"),
                                          ("square", "multinomial")])
def test_learning_curve_equals_the_dense_learning_curve(loss, scheme):
    """Efron's estimate, its delta-method SE, the per-input ratios and test counts of every S."""
    phi, _, y = nystrom_problem(300, 30, seed=1)
    K, _ = dense(phi, phi[:1])
    S_values = [60, 300, 900]
    low = bootstrap_learning_curve_lowrank(phi, y, NOISE, S_values, 40, loss=loss, scheme=scheme, rng=3,
                                           chunk_size=7)
    ref = montecarlo.bootstrap_learning_curve(K, y, NOISE, S_values, 40, loss=loss, scheme=scheme, rng=3)
    np.testing.assert_array_equal(low.s_values, ref.s_values)
    assert_close(low.value, ref.value)
    assert_close(low.se, ref.se)
    for a, b in zip(low.errors, ref.errors):
        np.testing.assert_array_equal(a.n_test, b.n_test)
        used = b.n_test > 0
        assert_close(a.per_input[used], b.per_input[used])
        assert np.all(np.isnan(a.per_input[~used])) and a.n_samples == b.n_samples == 40


def test_learning_curve_is_efron_on_the_low_rank_predictions():
    """The streamed estimate equals ``bootstrap_test_error`` on ``bootstrap_predictions_lowrank``'s rows."""
    phi, _, y = nystrom_problem(200, 20, seed=2)
    curve = bootstrap_learning_curve_lowrank(phi, y, NOISE, [100.0], 50, rng=8, chunk_size=9)
    whole = bootstrap_test_error(bootstrap_predictions_lowrank(phi, y, NOISE, 100.0, 50, rng=8), y)
    # sample b of S number 0 is group 0, item b in both jobs; only the summation order differs
    np.testing.assert_allclose([curve.value[0], curve.se[0]], [whole.value, whole.se], rtol=1e-13)


def test_cholesky_factor_features_give_the_dense_gp():
    """m = N and Φ = chol(K): ΦΦᵀ = K, and the low-rank Monte-Carlo is the dense one on K itself."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(125, 2))
    K = rbf(X[:120], X[:120]) + 1e-3 * np.eye(120)  # a white-noise term keeps chol(K) well conditioned
    K_test = rbf(X[120:], X[:120])
    phi = linalg.cholesky(K, lower=True)
    phi_test = linalg.solve_triangular(phi, K_test.T, lower=True).T   # phi_test Φᵀ = K_test
    y = np.cos(X[:120, 0])
    low = bootstrap_predictions_lowrank(phi, y, NOISE, 120, 10, phi_test=phi_test, rng=2)
    ref = montecarlo.bootstrap_predictions(K, y, NOISE, 120, 10, K_test=K_test, rng=2)
    assert_close(low.train, ref.train)
    assert_close(low.test, ref.test)


# ----------------------------------------------------------------------------- against a literal refit

def duplicated_ridge(phi, y, noise_var, s, phi_test):
    """Ridge regression on the data set with s_i copies of row i: w = (Φ_DᵀΦ_D + σ²I)⁻¹Φ_Dᵀy_D, the posterior mean
    of f = φᵀw, w ~ N(0, I), noise σ² on each copy."""
    d = np.repeat(np.arange(y.size), s)
    phi_d = phi[d]
    w = np.linalg.solve(phi_d.T @ phi_d + noise_var * np.eye(phi.shape[1]), phi_d.T @ y[d])
    return phi @ w, phi_test @ w


@pytest.mark.parametrize("S", [2.0, 60.0, 400.0])
def test_one_sample_equals_ridge_regression_on_the_duplicated_rows(S):
    """The weighted m×m solve equals the refit on S duplicated points (s up to ~8 at S = 400, N = 80); at S = 2 some
    samples are empty and predict the prior mean 0."""
    phi, phi_test, y = nystrom_problem(80, 12, seed=3)
    pred = bootstrap_predictions_lowrank(phi, y, NOISE, S, 12, phi_test=phi_test, rng=6)
    for s, f, f_test in zip(pred.occupations, pred.train, pred.test):
        ref, ref_test = duplicated_ridge(phi, y, NOISE, s, phi_test)
        np.testing.assert_allclose(f, ref, rtol=0, atol=1e-9 * max(np.abs(ref).max(), 1.0))
        np.testing.assert_allclose(f_test, ref_test, rtol=0, atol=1e-9 * max(np.abs(ref_test).max(), 1.0))
    if S == 2.0:
        empty = pred.occupations.sum(axis=1) == 0
        assert empty.any() and np.all(pred.train[empty] == 0) and np.all(pred.test[empty] == 0)


def test_one_sample_equals_scikit_learn_ridge_on_the_duplicated_rows():
    linear_model = pytest.importorskip("sklearn.linear_model")
    phi, phi_test, y = nystrom_problem(60, 10, seed=5)
    s = occupation_numbers(60, 120, 1, rng=9)
    train, test = resample_predictions_lowrank(phi, y, NOISE, s, phi_test=phi_test)
    d = np.repeat(np.arange(60), s[0])
    model = linear_model.Ridge(alpha=NOISE, fit_intercept=False).fit(phi[d], y[d])
    assert_close(train[0], model.predict(phi), rtol=1e-9)
    assert_close(test[0], model.predict(phi_test), rtol=1e-9)


def test_resample_predictions_are_the_monte_carlo_rows():
    phi, phi_test, y = nystrom_problem(100, 10, seed=6)
    pred = bootstrap_predictions_lowrank(phi, y, NOISE, 100, 9, phi_test=phi_test, rng=1, chunk_size=4)
    train, test = resample_predictions_lowrank(phi, y, NOISE, pred.occupations, phi_test=phi_test)
    np.testing.assert_array_equal(train, pred.train)
    np.testing.assert_array_equal(test, pred.test)
    one, none = resample_predictions_lowrank(phi, y, NOISE, pred.occupations[3])
    np.testing.assert_array_equal(one, pred.train[3:4])
    assert none is None


# ----------------------------------------------------------------------------- executors and chunk sizes

def test_chunk_size_and_executor_never_change_the_numbers(dask_engine):
    """In this process, another chunk size, and on 1 and 2 Dask workers of the session's one local cluster (a job is
    kept on one worker by ``dask.annotate(workers=...)``; the task stream shows where the chunks ran)."""
    dask = pytest.importorskip("dask")
    from distributed import get_task_stream

    workers = sorted(dask_engine.client.scheduler_info(n_workers=-1)["workers"])
    if len(workers) < 2:
        pytest.skip("the session's Dask cluster has one worker (one core)")
    phi, phi_test, y = nystrom_problem(150, 15, seed=7)
    predict = dict(phi_test=phi_test, rng=4)
    curve = dict(rng=4)
    ref = bootstrap_predictions_lowrank(phi, y, NOISE, 150, 24, **predict)
    ref_curve = bootstrap_learning_curve_lowrank(phi, y, NOISE, [75, 300], 24, chunk_size=5, **curve)
    runs, curves = [bootstrap_predictions_lowrank(phi, y, NOISE, 150, 24, chunk_size=5, **predict)], []
    for on in (workers, workers[:1]):
        with get_task_stream(dask_engine.client) as stream, dask.annotate(workers=on, allow_other_workers=False):
            runs.append(bootstrap_predictions_lowrank(phi, y, NOISE, 150, 24, chunk_size=5,
                                                      executor=dask_engine.executor, **predict))
            curves.append(bootstrap_learning_curve_lowrank(phi, y, NOISE, [75, 300], 24, chunk_size=5,
                                                           executor=dask_engine.executor, **curve))
        assert {task["worker"] for task in stream.data} <= set(on)
    for run in runs:
        for field in ("occupations", "train", "test"):
            np.testing.assert_array_equal(getattr(run, field), getattr(ref, field))
    for other in curves:
        np.testing.assert_array_equal(other.value, ref_curve.value)
        np.testing.assert_array_equal(other.se, ref_curve.se)
    resized = bootstrap_learning_curve_lowrank(phi, y, NOISE, [75, 300], 24, chunk_size=11, **curve)
    np.testing.assert_allclose(resized.value, ref_curve.value, rtol=1e-13)
    np.testing.assert_allclose(resized.se, ref_curve.se, rtol=1e-13)


def test_learning_curve_progress_partial_curves_and_cancellation():
    phi, _, y = nystrom_problem(40, 5, seed=8)
    calls, published = [], []
    curve = bootstrap_learning_curve_lowrank(phi, y, NOISE, [20, 40, 80], 10, rng=1, chunk_size=4,
                                             hooks=Hooks(progress=lambda f, p: calls.append((f, p)),
                                                         partial=published.append))
    assert [p.s_values.tolist() for p in published] == [[20], [20, 40], [20, 40, 80]]
    assert np.array_equal(published[-1].value, curve.value)
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert str(calls[-1][1]) == "30/30 samples" and str(calls[0][1]).startswith("counting left-out inputs: ")
    checks = iter([False] * 12 + [True] * 100)
    with pytest.raises(Cancelled, match="of 30 samples"):
        bootstrap_learning_curve_lowrank(phi, y, NOISE, [20, 40, 80], 10, rng=1, chunk_size=4,
                                         hooks=Hooks(should_stop=lambda: next(checks)))


# ----------------------------------------------------------------------------- memory

def test_memory_stays_a_few_vectors_of_length_n():
    """N = 100,000, m = 32: an N×N matrix would be 80 GB, one chunk of 8 gathered Φ copies 205 MB. The learning curve
    holds Φ, the counts, one (N,) row per chunk and a sample's f, s, left-out set and losses: about a dozen vectors of
    length N (measured 11); keeping the 8 samples' predictions and occupations, as the dense reducer does, would
    alone be 16. ``bootstrap_predictions_lowrank`` returns (8, N) occupations and predictions (16 vectors, stacked
    once more by the chunk runner: measured 32)."""
    n, m = 100_000, 32
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(n, m)) / np.sqrt(m)
    y = phi[:, 0] + 0.1 * rng.normal(size=n)
    vector = 8 * n
    for run, limit in ((lambda: bootstrap_learning_curve_lowrank(phi, y, NOISE, [n], 8, rng=1, chunk_size=8), 16),
                       (lambda: bootstrap_predictions_lowrank(phi, y, NOISE, n, 8, rng=1, chunk_size=8), 40)):
        tracemalloc.start()
        try:
            run()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < min(limit * vector, 200e6), peak / vector


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs, match", [
    (dict(phi=np.ones(5)), r"`phi` must be a feature matrix of shape \(N, m\), m >= 1, got shape \(5,\)"),
    (dict(phi=np.ones((5, 0))), r"`phi` must be a feature matrix of shape \(N, m\), m >= 1, got shape \(5, 0\)"),
    (dict(y=np.ones(4)), r"`y` must have shape \(5,\) to match `phi` of shape \(5, 2\), got shape \(4,\)"),
    (dict(phi=np.full((5, 2), np.nan)), "`phi` must be finite, got 10 NaN or infinite entries"),
    (dict(y=np.array([0, 1, np.inf, 0, 0])), "`y` must be finite, got 1 NaN or infinite entries"),
    (dict(noise_var=-1.0), "`noise_var` must be a positive finite number, got -1.0"),
    (dict(phi_test=np.ones((3, 4))), r"`phi_test` must have shape \(M, 2\), one feature row per test input"),
    (dict(phi_test=np.full((3, 2), np.inf)), "`phi_test` must be finite, got 6 NaN or infinite entries"),
    (dict(S=0), "`S` must be positive and finite, got 0"),
    (dict(n_samples=0), "`n_samples` must be a positive integer, got 0"),
    (dict(chunk_size=0), "`chunk_size` must be a positive integer, got 0"),
    (dict(scheme="jackknife"), r"`scheme` must be one of \('poisson', 'multinomial'\), got 'jackknife'"),
])
def test_bootstrap_predictions_validation(kwargs, match):
    args = dict(phi=np.ones((5, 2)), y=np.zeros(5), noise_var=0.1, S=5, n_samples=3, phi_test=None) | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_predictions_lowrank(**args)


@pytest.mark.parametrize("occupations, match", [
    (np.ones((2, 4), dtype=int), r"`occupations` must have shape \(5,\) or \(n_samples, 5\) to match `phi`"),
    (np.array([1, 0, -1, 2, 0]), "`occupations` must be non-negative integers"),
    (np.array([1, 0, 0.5, 2, 0]), "`occupations` must be non-negative integers"),
])
def test_resample_predictions_validation(occupations, match):
    with pytest.raises(ValueError, match=match):
        resample_predictions_lowrank(np.ones((5, 2)), np.zeros(5), 0.1, occupations)


@pytest.mark.parametrize("kwargs, match", [
    (dict(S_values=[]), "`S_values` must be a non-empty 1-D sequence of sample sizes"),
    (dict(S_values=[5, -1]), "`S` must be positive and finite, got -1.0"),
    (dict(loss="hinge"), "Unknown loss 'hinge'"),
])
def test_learning_curve_validation(kwargs, match):
    args = dict(phi=np.ones((5, 2)), y=np.zeros(5), noise_var=0.1, S_values=[5], n_samples=3) | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_learning_curve_lowrank(**args)
