"""The client's memory on the chunked path: the N-vectors the theory holds at once are bounded.

With the rows in chunks on a cluster, what grows with N in this process is the theory's N-vectors (8 N bytes each:
80 MB at N = 10⁷). They are formed in place and when needed (:mod:`explorer.bootstrap.replica`, ``closing``,
``fixed_point``; the conjugate gradients of eq. (57) in :mod:`explorer.operators.features`; the chunked operator
fills a map's rows as they arrive). By count, at Anderson memory 5 (the default): while eqs. (54)-(55) are iterated,
x, its start, the last residual and 2·5 − 1 differences beside the step's Δλ, diag G and Δλ_c; while eqs. (56)-(59)
are closed, the solution's eight beside d, e, (m − y)² and the four vectors of the conjugate gradients.

Measured here with ``tracemalloc`` (numpy reports its arrays to it) on a problem whose iteration fills the Anderson
history, at two N with the same chunks' count: the slope of the peak in N is the number of N-vectors alive at once;
what does not grow with N (the client's records of its messages, about 10 MB) cancels. The scheduler and the workers
run in processes of their own (``SubprocessCluster``), as on a real cluster: a ``LocalCluster``'s scheduler lives in
the client's process and keeps records of the messages it received (15 MB here) that blur the slope. Measured: 12.3
N-vectors; before this bound, 34.
"""
import tracemalloc

import numpy as np
import pytest
from scipy.sparse import linalg as sparse_linalg

from explorer.bootstrap import closing, occupations, replica
from explorer.distributed import RowChunks, chunked_nystrom
from explorer.kernels import SquaredExponential
from explorer.operators.features import conjugate_gradients, hadamard_square_product

#: The most N-vectors (8 N bytes each) the client may hold at once during ADATAP and ε(S) (see the module docstring).
MOST_N_VECTORS = 14


@pytest.fixture(scope="module")
def client():
    from distributed import Client
    from distributed.deploy.subprocess import SubprocessCluster

    cluster = SubprocessCluster(host="127.0.0.1", n_workers=2, threads_per_worker=1, dashboard_address=None,
                                worker_kwargs={"memory_limit": "1GB"})
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def client_peak(client, n: int) -> tuple[float, replica.ReplicaSolution]:
    """(bytes, solution): the peak of this process's traced memory above its start during ADATAP and ε(S) at N = n
    (four chunks, so that the messages are the same at every n)."""
    rows = RowChunks.teacher(client, n, 4, n // 4, seed=3, noise_var=0.01)
    op = chunked_nystrom(rows, SquaredExponential(lengthscale=0.3), 32, rng=0)
    y = rows.targets()
    op.spectrum()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        sol = replica.solve_replica(op, y, 1e-3, 0.3 * n, precision="double", tol=1e-8)
        assert np.isfinite(replica.bootstrap_test_error(sol))
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
        client.cancel(op.parts + rows.parts + [op.map_future])
    return peak, sol


@pytest.mark.slow
def test_the_client_holds_a_bounded_number_of_n_vectors(client, monkeypatch):
    """The peak grows with N by fewer than MOST_N_VECTORS · 8 bytes a row (the sites' series over k in blocks of 4,096
    rows: their fixed temporaries small beside an N-vector at both N)."""
    monkeypatch.setattr(occupations, "ROW_BLOCK", 4096)
    monkeypatch.setattr(closing, "ROW_BLOCK", 4096)
    small, large = 100_000, 400_000
    peaks, solutions = zip(*(client_peak(client, n) for n in (small, large)))
    assert all(sol.converged and sol.n_iter >= 7 for sol in solutions)  # steps and mixings beside a full history
    vectors = (peaks[1] - peaks[0]) / (8.0 * (large - small))
    print(f"client: {peaks[0] / 1e6:.1f} MB at N = {small:,}, {peaks[1] / 1e6:.1f} MB at N = {large:,}: "
          f"{vectors:.2f} N-vectors; iterations {[s.n_iter for s in solutions]}")
    assert 8 < vectors < MOST_N_VECTORS, vectors   # the solution itself is eight: the measurement sees the arrays


def test_in_place_conjugate_gradients_are_scipys_bit_for_bit():
    rng = np.random.default_rng(0)
    n, m = 3000, 40
    psi = rng.standard_normal((n, m)) / 7
    G = psi @ psi.T
    e = (G**2).sum(axis=1) * rng.uniform(0.2, 1.0, n)        # diag(d) − G∘G positive definite
    d = np.diag(G) ** 2 + e
    r = rng.standard_normal(n) ** 2
    steps = []
    lam, info = conjugate_gradients(lambda v: hadamard_square_product(psi, v), d, e, r, 1e-10, 1000,
                                    lambda x: steps.append(1))
    expected, expected_info = sparse_linalg.cg(
        sparse_linalg.LinearOperator((n, n), matvec=lambda v: d * v - hadamard_square_product(psi, v), dtype=float),
        -r, M=sparse_linalg.LinearOperator((n, n), matvec=lambda v: v / e, dtype=float), rtol=1e-10, atol=0.0,
        maxiter=1000)
    assert info == expected_info == 0 and len(steps) > 3
    assert np.array_equal(lam, expected)
    assert np.linalg.norm(d * lam - hadamard_square_product(psi, lam) + r) < 1e-8 * np.linalg.norm(r)
