"""Monte-Carlo on the chunked operator: the refits equal literal in-memory refits on the same occupation numbers
(FeatureKernel.posterior_weights on the whole Φ, Efron's estimator by estimates.efron_error) to 1e-10, and the numbers
do not depend on the chunk size (to round-off) or the workers (bit for bit)."""
import numpy as np
import pytest

from explorer.bootstrap.estimates import efron_error
from explorer.chunks import root_seed, s_over_n_group
from explorer.distributed import RowChunks, chunked_nystrom
from explorer.distributed.bootstrap_error import chunked_bootstrap_error, row_occupations
from explorer.distributed.rows import teacher_rows
from explorer.kernels import SquaredExponential
from explorer.losses import square_loss
from explorer.lowrank import nystrom_features
from explorer.operators.features import FeatureKernel

D, RANK, NOISE, B = 3, 16, 0.01, 12
KERNEL = SquaredExponential(lengthscale=1.5, signal_var=1.0)


@pytest.fixture(scope="module")
def client():
    from explorer.runtime.engine import connect

    engine = connect(workers=2, memory_limit="1GB", dashboard=False)
    yield engine.client
    engine.close()


@pytest.mark.parametrize("N, chunks, other_chunks", [
    (12_000, 5_000, 3_000),
    pytest.param(70_000, 30_000, 7_000, marks=pytest.mark.slow),   # occupations across a 65,536-row block
])
def test_chunked_refits_equal_literal_refits_on_the_same_occupations(client, N, chunks, other_chunks):
    X, y = teacher_rows(0, N, N, D, 5, NOISE)
    S = 0.8 * N
    op = chunked_nystrom(RowChunks.teacher(client, N, D, chunks, seed=5, noise_var=NOISE), KERNEL, RANK, rng=0)
    mc = chunked_bootstrap_error(op, y, NOISE, S, B, rng=9, batch=5)
    # the same occupations (they cross the 65,536-row block and the chunk boundaries), refitted in memory
    occ = row_occupations(root_seed(9), s_over_n_group(S / N), range(B), 0, N, N, S / N)
    in_memory = FeatureKernel(nystrom_features(KERNEL, X, RANK, rng=0).phi)
    train = np.array([in_memory.phi @ in_memory.posterior_weights(y, NOISE, s) for s in occ])
    expected = efron_error(occ, train, y, square_loss)
    assert np.array_equal(mc.n_test, expected.n_test)
    assert abs(mc.value - expected.value) < 1e-10 * expected.value
    assert abs(mc.se - expected.se) < 1e-8 * expected.se
    # another chunking: the same occupations, the sums over rows grouped otherwise
    other = chunked_nystrom(RowChunks.teacher(client, N, D, other_chunks, seed=5, noise_var=NOISE), KERNEL, RANK, rng=0)
    again = chunked_bootstrap_error(other, y, NOISE, S, B, rng=9, batch=B)
    assert np.array_equal(again.n_test, mc.n_test)
    assert abs(again.value - mc.value) < 1e-12 * mc.value
