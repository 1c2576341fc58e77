"""The chunked operator equals the in-memory FeatureKernel (an independent computation on the whole Φ) to 1e-10
relative for every quantity of the theory: ADATAP iterated and approximate, ε(S) for the square and the absolute
loss (eqs. 45-46), eq. (48) at test inputs; with 1 and 2 workers of a local cluster, chunks of 1,000 / 4,096 /
20,000 rows (4,096 leaves an uneven last chunk of 3,616) and Φ held on the workers or computed again each pass.

The comparison runs the theory in double precision: "mixed" starts in single precision, where a sum over rows in
another order differs at 1e-7, and the double-precision iteration that follows stops at ``tol`` from wherever it
started (test_mixed_precision_agrees_to_single_precision shows the size of that).
"""
import numpy as np
import pytest

from explorer.bootstrap import replica
from explorer.distributed import RowChunks, chunked_nystrom
from explorer.distributed.rows import teacher_rows
from explorer.kernels import SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.operators import offers
from explorer.operators.features import FeatureKernel

N, D, RANK, NOISE = 20_000, 3, 64, 0.01
KERNEL = SquaredExponential(lengthscale=1.5, signal_var=1.0)
QUANTITIES = ("dl", "dl_c", "gam", "gam_c", "lam", "lam_c", "m", "G_diag")


def relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module")
def data():
    X, y = teacher_rows(0, N, N, D, 7, NOISE)
    features = nystrom_features(KERNEL, X, RANK, rng=1)
    in_memory = FeatureKernel(features.phi)
    X_test = np.random.default_rng(5).standard_normal((9, D))
    reference = {S: replica.solve_replica(in_memory, y, NOISE, S, precision="double") for S in (0.5 * N, 2.0 * N)}
    approximate = replica.approximate_replica(in_memory, y, NOISE, N)
    return X, y, features, in_memory, X_test, reference, approximate


@pytest.fixture(scope="module")
def two_workers():
    from explorer.runtime.engine import connect

    engine = connect(workers=2, memory_limit="1GB", dashboard=False)
    yield engine.client
    engine.close()


def compare_everything(client, chunk_rows, hold, data):
    X, y, features, in_memory, X_test, reference, approximate = data
    rows = RowChunks.teacher(client, N, D, chunk_rows, seed=7, noise_var=NOISE)
    assert np.array_equal(rows.targets(), y)                     # the data made on the workers are the same rows
    op = chunked_nystrom(rows, KERNEL, RANK, rng=1, hold_features=hold)
    assert op.held is hold
    for S, expected in reference.items():
        sol = replica.solve_replica(op, y, NOISE, S, precision="double")
        assert (sol.n_iter, sol.converged) == (expected.n_iter, True)
        for name in QUANTITIES:
            assert relative(getattr(sol, name), getattr(expected, name)) < 1e-10, (S, name)
        assert relative(replica.bootstrap_test_error(sol), replica.bootstrap_test_error(expected)) < 1e-10
        absolute = lambda f, t: np.abs(f - t)  # noqa: E731
        assert relative(replica.bootstrap_loss_error(sol, absolute),
                        replica.bootstrap_loss_error(expected, absolute)) < 1e-10
        moments = replica.bootstrap_moments(sol, op, op.features_at(X_test))
        wanted = replica.bootstrap_moments(expected, in_memory, features.transform(X_test))
        assert relative(moments.mean, wanted.mean) < 1e-10 and relative(moments.var, wanted.var) < 1e-10
    approx = replica.approximate_replica(op, y, NOISE, N)
    for name in QUANTITIES:
        assert relative(getattr(approx, name), getattr(approximate, name)) < 1e-10, name
    assert relative(replica.bootstrap_test_error(approx), replica.bootstrap_test_error(approximate)) < 1e-10
    return op


def test_chunked_theory_equals_in_memory_features_two_workers_uneven_chunks(two_workers, data):
    op = compare_everything(two_workers, 4096, True, data)
    assert op.rows.sizes == (4096,) * 4 + (3616,)
    assert op.closing == FeatureKernel(data[2].phi).closing == "fixed-point"
    assert not offers(op, "dense_matrix")          # VG and MF need the dense matrix: a method it does not have


@pytest.mark.slow
@pytest.mark.parametrize("chunk_rows, hold", [(1000, False), (4096, False), (20_000, True), (20_000, False),
                                              (1000, True)])
def test_chunked_theory_equals_in_memory_features_chunk_sizes(two_workers, data, chunk_rows, hold):
    compare_everything(two_workers, chunk_rows, hold, data)


@pytest.mark.slow
def test_one_worker_gives_the_bits_of_two(two_workers, data):
    from explorer.runtime.engine import connect

    y = data[1]
    two = chunked_nystrom(RowChunks.teacher(two_workers, N, D, 1000, seed=7, noise_var=NOISE), KERNEL, RANK, rng=1)
    engine = connect(workers=1, memory_limit="1GB", dashboard=False)
    try:
        compare_everything(engine.client, 4096, False, data)
        one = chunked_nystrom(RowChunks.teacher(engine.client, N, D, 1000, seed=7, noise_var=NOISE), KERNEL, RANK,
                              rng=1)
        a = replica.solve_replica(one, y, NOISE, N, precision="double")
        b = replica.solve_replica(two, y, NOISE, N, precision="double")
        for name in QUANTITIES:                        # chunk order, not completion order: the same bits
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
    finally:
        engine.close()


def test_mixed_precision_agrees_to_single_precision(two_workers, data):
    X, y, features, in_memory, *_ = data
    op = chunked_nystrom(RowChunks.teacher(two_workers, N, D, 4096, seed=7, noise_var=NOISE), KERNEL, RANK, rng=1)
    sol = replica.solve_replica(op, y, NOISE, N, precision="mixed")
    expected = replica.solve_replica(in_memory, y, NOISE, N, precision="mixed")
    assert sol.converged and expected.converged
    assert 0 < relative(sol.dl, expected.dl) < 1e-5
    assert relative(replica.bootstrap_test_error(sol), replica.bootstrap_test_error(expected)) < 1e-7


def test_loo_limit_and_eq_60_at_chosen_rows_equal_in_memory(two_workers, data):
    from explorer.gp_bootstrap.linear_response import loo_limit

    X, y, features, in_memory, X_test, reference, approximate = data
    op = chunked_nystrom(RowChunks.teacher(two_workers, N, D, 4096, seed=7, noise_var=NOISE), KERNEL, RANK, rng=1)
    for S in (0.5 * N, 4.0 * N):
        for loss in ("square", "eps-insensitive"):
            a, b = loo_limit(op, y, NOISE, S, loss=loss), loo_limit(in_memory, y, NOISE, S, loss=loss)
            assert relative(a.value, b.value) < 1e-10 and relative(a.residuals, b.residuals) < 1e-10
    sol = replica.solve_replica(op, y, NOISE, 2.0 * N, precision="double")
    expected = reference[2.0 * N]
    for i in (0, 4095, 4096, N - 1):                  # eq. (60) at rows on both sides of a chunk boundary
        mine, theirs = replica.mixture_components(sol, i), replica.mixture_components(expected, i)
        assert np.array_equal(mine.weights, theirs.weights)
        assert relative(mine.means, theirs.means) < 1e-10 and relative(mine.sds, theirs.sds) < 1e-10
