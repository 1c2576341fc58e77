"""The infinitesimal jackknife, the L1 map on a sample of rows and the bootstrap moments at held-out inputs on the
chunked operator equal the in-memory FeatureKernel (an independent computation on the whole Φ) to 1e-10 relative, at
N = 20,000 with 1 and 2 workers and an uneven last chunk (4,096 rows: the last holds 3,616).

The theory (:mod:`explorer.gp_bootstrap.linear_response`, :mod:`explorer.bootstrap.replica`) is the same code on both
operators; the Monte-Carlo on the chunks draws its occupations per sample and block of rows, so it is compared with
the in-memory refits (``montecarlo.resample_predictions``) on those same occupations.
"""
import numpy as np
import pytest

from explorer.bootstrap import estimates, replica
from explorer.chunks import item_generator, root_seed, s_over_n_group
from explorer.distributed import RowChunks, chunked_nystrom
from explorer.distributed.bootstrap_error import row_occupations
from explorer.distributed.comparisons import chunked_distribution_comparison, chunked_holdout_comparison
from explorer.distributed.predictions import chunked_bootstrap_predictions
from explorer.distributed.rows import teacher_rows
from explorer.gp_bootstrap import experiments, montecarlo
from explorer.gp_bootstrap.l1 import l1_all_inputs, l1_noise_floor, scaled_bin_width
from explorer.gp_bootstrap.linear_response import linear_response_error, linear_response_moments
from explorer.kernels import SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.operators.features import FeatureKernel

N, D, RANK, NOISE = 20_000, 3, 64, 0.01
KERNEL = SquaredExponential(lengthscale=1.5, signal_var=1.0)


def relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module")
def data():
    X, y = teacher_rows(0, N, N, D, 7, NOISE)
    features = nystrom_features(KERNEL, X, RANK, rng=1)
    X_test = np.random.default_rng(5).standard_normal((7, D))
    return X, y, features, FeatureKernel(features.phi), X_test


@pytest.fixture(scope="module")
def two_workers():
    from explorer.runtime.engine import connect

    engine = connect(workers=2, memory_limit="1GB", dashboard=False)
    yield engine.client
    engine.close()


@pytest.fixture(scope="module")
def one_worker():
    from explorer.runtime.engine import connect

    engine = connect(workers=1, memory_limit="1GB", dashboard=False)
    yield engine.client
    engine.close()


def chunked(client, chunk_rows=4096, hold=True):
    rows = RowChunks.teacher(client, N, D, chunk_rows, seed=7, noise_var=NOISE)
    return chunked_nystrom(rows, KERNEL, RANK, rng=1, hold_features=hold)


def assert_same_jackknife(a, b):
    for name in ("value", "value_second_order", "loo_limit"):
        assert relative(getattr(a, name), getattr(b, name)) < 1e-10, name
    assert relative(a.residuals, b.residuals) < 1e-10
    drawn = ~np.isnan(b.variance)
    assert np.array_equal(np.isnan(a.variance), ~drawn) and np.array_equal(np.isnan(a.bias), ~drawn)
    assert relative(a.variance[drawn], b.variance[drawn]) < 1e-10
    assert relative(a.bias[drawn], b.bias[drawn]) < 1e-10


@pytest.mark.parametrize("workers", ["one_worker", "two_workers"])
def test_infinitesimal_jackknife_equals_in_memory_features(workers, data, request):
    X, y, features, in_memory, X_test = data
    op = chunked(request.getfixturevalue(workers), 4096, workers == "two_workers")
    assert op.rows.sizes == (4096,) * 4 + (3616,)
    assert op.default_left_out_inputs == in_memory.default_left_out_inputs == 2000
    for S, inputs in ((0.5 * N, "auto"), (3.0 * N, 300)):           # eq. (13) at 2,000 or 300 rows drawn
        mine = linear_response_error(op, y, NOISE, S, inputs=inputs, rng=4)
        theirs = linear_response_error(in_memory, y, NOISE, S, inputs=inputs, rng=4)
        assert np.count_nonzero(~np.isnan(mine.variance)) == (2000 if inputs == "auto" else 300)
        assert_same_jackknife(mine, theirs)
    moments = linear_response_moments(op, y, NOISE, N, op.features_at(X_test))
    wanted = linear_response_moments(in_memory, y, NOISE, N, features.transform(X_test))
    for name in ("mean", "var", "mean_second_order", "derivatives"):
        assert relative(getattr(moments, name), getattr(wanted, name)) < 1e-10, name


def test_jackknife_at_every_input_across_chunk_boundaries(two_workers):
    """Every input drawn (eq. 13 exact), on chunks of 700 rows of N = 3,000 (R_ii = 1 set in the right chunk)."""
    n = 3000
    X, y = teacher_rows(0, n, n, D, 11, NOISE)
    op = chunked_nystrom(RowChunks.from_arrays(two_workers, X, y, 700), KERNEL, 40, rng=2, hold_features=False)
    in_memory = FeatureKernel(nystrom_features(KERNEL, X, 40, rng=2).phi)
    assert op.default_left_out_inputs is None
    for S in (0.3 * n, 2.0 * n):
        mine, theirs = (linear_response_error(k, y, NOISE, S, inputs="auto") for k in (op, in_memory))
        assert not np.any(np.isnan(mine.variance))
        assert_same_jackknife(mine, theirs)
        assert mine.value > mine.loo_limit                             # the variance term is positive


def test_chunked_monte_carlo_predictions_are_the_in_memory_refits_on_the_same_occupations(two_workers, data):
    X, y, features, in_memory, X_test = data
    op = chunked(two_workers)
    rows = np.array([0, 5, 4095, 4096, 12_000, N - 1])
    S, B = 1.5 * N, 40
    preds = chunked_bootstrap_predictions(op, y, NOISE, S, B, cross=op.features_at(X_test), rows=rows, rng=9,
                                          batch=16)
    occupations = row_occupations(root_seed(9), s_over_n_group(S / N), range(B), 0, N, N, S / N)
    train, test = montecarlo.resample_predictions(in_memory, y, NOISE, occupations,
                                                  K_test=features.transform(X_test))
    assert np.array_equal(preds.occupations, occupations[:, rows])
    assert relative(preds.train, train[:, rows]) < 1e-10 and relative(preds.test, test) < 1e-10
    with pytest.raises(ValueError, match="sorted, distinct"):
        chunked_bootstrap_predictions(op, y, NOISE, S, 2, rows=np.array([3, 3]))


def test_l1_map_on_a_sample_of_rows_equals_in_memory(one_worker, data):
    X, y, features, in_memory, X_test = data
    op = chunked(one_worker, 4096, False)
    B, root = 48, root_seed(21)
    res = chunked_distribution_comparison(op, y, NOISE, 1.0, B, name="teacher", rng=21, tol=1e-6)
    inputs = experiments.map_inputs(N, item_generator(root, 2, 0))
    assert inputs.size == experiments.MAP_INPUTS and np.array_equal(res.inputs, inputs)
    sol = replica.solve_replica(in_memory, y, NOISE, N, tol=1e-6)
    mapped = experiments.at_inputs(sol, inputs)
    for name in ("dl_c", "gam_c", "lam_c", "y"):
        assert relative(getattr(res.solution, name), getattr(mapped, name)) < 1e-10, name
    occupations = row_occupations(root, s_over_n_group(1.0), range(B), 0, N, N, 1.0)
    train, _ = montecarlo.resample_predictions(in_memory, y, NOISE, occupations)
    width = scaled_bin_width(y)
    expected = l1_all_inputs(train[:, inputs], mapped, width)
    assert relative(res.samples, train[:, inputs]) < 1e-10
    # the same samples in the same bins (a sample in another bin would move L1 by 1/B ≈ 0.02); the eq. (60) mass of a
    # bin moves by its density times the solution's 1e-10 relative shift: a few 1e-10 absolute
    assert np.allclose(res.l1.l1, expected.l1, rtol=0, atol=1e-8)
    floor = l1_noise_floor(mapped, B, width, item_generator(root, 1, 0))
    assert np.allclose(res.noise_floor.l1, floor.l1, rtol=0, atol=1e-8)
    assert res.as_dict()["worst_inputs"] == inputs[expected.worst(10)].tolist()


def test_holdout_moments_and_jackknife_equal_in_memory(two_workers, data):
    X, y, features, in_memory, X_test = data
    op = chunked(two_workers)
    B, S = 32, 1.0 * N
    res = chunked_holdout_comparison(op, y, NOISE, 1.0, B, X_test, rng=5, tol=1e-6)
    sol = replica.solve_replica(in_memory, y, NOISE, S, tol=1e-6)
    theory = replica.bootstrap_moments(sol, in_memory, features.transform(X_test))
    ij = linear_response_moments(in_memory, y, NOISE, S, features.transform(X_test))
    assert relative(res.theory_mean, theory.mean) < 1e-10 and relative(res.theory_var, theory.var) < 1e-10
    assert relative(res.ij_mean, ij.mean) < 1e-10 and relative(res.ij_var, ij.var) < 1e-10
    assert relative(res.ij_mean_second_order, ij.mean_second_order) < 1e-10
    occupations = row_occupations(root_seed(5), s_over_n_group(1.0), range(B), 0, N, N, 1.0)
    _, test = montecarlo.resample_predictions(in_memory, y, NOISE, occupations, K_test=features.transform(X_test))
    mc = estimates.predictive_moments(estimates.BootstrapPredictions(occupations, test[:, :1], test, S, "poisson"))
    assert relative(res.mc_mean, mc.mean) < 1e-10 and relative(res.mc_var, mc.var) < 1e-10


def test_holding_out_the_first_rows_drops_and_cuts_chunks(two_workers):
    from explorer.distributed.held_out_rows import hold_out_first

    X, y = teacher_rows(0, 2_000, 2_000, D, 3, NOISE)
    rows = RowChunks.from_arrays(two_workers, X, y, 700)               # 700, 700, 600
    X_test, train = hold_out_first(rows, 900)                          # the first chunk dropped, the second cut
    assert np.array_equal(X_test, X[:900]) and train.sizes == (500, 600) and train.n == 1_100
    assert np.array_equal(train.targets(), y[900:]) and np.array_equal(train.rows(np.array([0, 499, 500])),
                                                                       X[[900, 1399, 1400]])
    assert hold_out_first(rows, 0)[1] is rows
    with pytest.raises(ValueError, match="leaves no training rows"):
        hold_out_first(rows, 2_000)


def test_a_cancelled_monte_carlo_stops_between_batches_and_leaves_no_task(two_workers, data):
    from explorer.progress import Cancelled, Hooks

    X, y, *_ = data
    op = chunked(two_workers)
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2                                          # after two batches

    with pytest.raises(Cancelled) as cancelled:
        chunked_bootstrap_predictions(op, y, NOISE, N, 100, rows=np.array([1, 2]), batch=10,
                                      hooks=Hooks(should_stop=stop))
    assert (cancelled.value.done, cancelled.value.total) == (20, 100)
    assert not any(two_workers.processing().values())                  # nothing left running or queued
