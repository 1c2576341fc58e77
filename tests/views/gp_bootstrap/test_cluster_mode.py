"""The GP page's large-data mode on a Dask cluster (issue 49, point 5): without a scheduler address the mode keeps
today's limit and message; with one (``explorer serve --scheduler ADDRESS``: here an engine connected by address to a
local cluster of two workers) the page takes more rows, its problem's rows go in chunks to the cluster and the theory
and the Monte-Carlo run there — off the session's thread — with the numbers of the in-memory low-rank model on the same
landmarks (an independent computation on the whole Φ)."""
import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.bootstrap import replica  # noqa: E402
from explorer.distributed import ChunkedFeatureKernel  # noqa: E402
from explorer.gp_bootstrap import experiments, linear_response  # noqa: E402
from explorer.lowrank import nystrom_features  # noqa: E402
from explorer.operators.features import FeatureKernel  # noqa: E402
from explorer.runtime import engine as dask_engine  # noqa: E402
from explorer.views.gp_bootstrap import cluster  # noqa: E402
from explorer.views.gp_bootstrap.state import LOW_RANK_GRID, LOW_RANK_ROWS, SUBSAMPLE_SEED, GPBootstrapState  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

TIMEOUT = 300
ROWS = LOW_RANK_ROWS + 2_000                  # above today's limit
MID = experiments.MAP_ALL_ROWS + 1_000        # large data (the low-rank mode) whose L1 map covers a sample of rows
MODEL = {"kernel": "se", "lengthscale": 1.5, "signal_var": 1.0, "noise_var": 0.05, "rank": 32, "auto_mc": False}


@pytest.fixture(scope="module")
def engines():
    """A local cluster the test starts (as ``explorer serve`` without --scheduler), and an engine connected to it by
    its address (as ``explorer serve --scheduler ADDRESS``)."""
    local = dask_engine.connect(workers=2, memory_limit="1GB", dashboard=False)
    by_address = dask_engine.connect(local.client.scheduler.address, dashboard=False)
    yield local, by_address
    by_address.close()
    local.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    for name, n in (("big.csv", ROWS), ("mid.csv", MID)):
        rng = np.random.default_rng(3)
        X = rng.normal(size=(n, 3))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n)
        np.savetxt(folder / name, np.c_[X, y], delimiter=",", header="a,b,c,y", comments="", fmt="%.6f")
    return folder


def state(folder, client, name="big.csv", **params) -> GPBootstrapState:
    s = GPBootstrapState(data_dir=str(folder), dataset=f"file: {name}", client=client, **{**MODEL, **params})
    s.refresh()
    assert s.wait(TIMEOUT), "background jobs did not finish in time"
    return s


def test_without_a_scheduler_address_the_limit_and_message_are_today_s(folder, engines, monkeypatch):
    monkeypatch.delenv(dask_engine.SCHEDULER_ENV, raising=False)
    local, _ = engines
    assert not cluster.scheduler_given(local) and not cluster.scheduler_given(None)
    s = state(folder, local)
    assert s.problem is None and s.error.startswith(   # the data folder's reader refuses it, as today
        f"big.csv has {ROWS:,} data rows; the app reads at most {LOW_RANK_ROWS:,}.")
    monkeypatch.setenv(dask_engine.SCHEDULER_ENV, "tcp://127.0.0.1:8786")
    assert cluster.scheduler_given(None) and cluster.large_data_rows(None) == cluster.CLUSTER_ROWS


@pytest.mark.slow
def test_with_a_scheduler_address_the_limit_rises(folder, engines):
    _, by_address = engines
    s = state(folder, by_address)
    assert s.error == "", s.error
    p = s.problem
    assert isinstance(p.operator, ChunkedFeatureKernel) and p.n == ROWS > LOW_RANK_ROWS
    assert f"a random subsample of {cluster.CLUSTER_EVIDENCE_ROWS:,} of the {ROWS:,} rows" in s.notice
    assert p.operator.rows.sizes == (cluster.CLUSTER_CHUNK_ROWS, ROWS - cluster.CLUSTER_CHUNK_ROWS)
    in_memory = FeatureKernel(nystrom_features(p.kernel, p.X, 32, rng=SUBSAMPLE_SEED).phi)
    expected = replica.solve_replica(in_memory, p.y, p.noise_var, s.s_over_n * p.n)
    assert s.current_theory_error == pytest.approx(replica.bootstrap_test_error(expected), rel=1e-5)


def test_with_a_scheduler_address_the_theory_runs_in_chunks_on_the_cluster(folder, engines):
    _, by_address = engines
    assert cluster.scheduler_given(by_address)
    s = state(folder, by_address, "mid.csv")
    assert s.error == "", s.error
    p = s.problem
    assert isinstance(p.operator, ChunkedFeatureKernel) and cluster.is_chunked(p) and p.n == MID
    assert s.low_rank and tuple(s.theory_curve.s_over_n) == LOW_RANK_GRID
    assert "chunks on the Dask cluster" in p.kernel_note() and p.features_record()["chunks"] == list(
        p.operator.rows.sizes)
    # the in-memory low-rank model on the same landmarks: the same theory (to ADATAP's tolerance, mixed precision)
    in_memory = FeatureKernel(nystrom_features(p.kernel, p.X, 32, rng=SUBSAMPLE_SEED).phi)
    expected = replica.solve_replica(in_memory, p.y, p.noise_var, s.s_over_n * p.n)
    assert s.current_theory_error == pytest.approx(replica.bootstrap_test_error(expected), rel=1e-5)
    loo = [linear_response.loo_limit(in_memory, p.y, p.noise_var, v * p.n).value for v in LOW_RANK_GRID]
    np.testing.assert_allclose(s.linear_response.loo_limit, loo, rtol=1e-10)
    # off the session's thread: with the jobs held back a refresh computes no theory (the problem is a job's too)
    s.defer_jobs()
    s.param.update(noise_var=0.06)
    assert s.problem is None and s.solution is None
    s.start_jobs()
    assert s.wait(TIMEOUT) and s.error == "" and s.solution is not None and s.problem.noise_var == 0.06


def test_held_out_inputs_and_the_l1_map_on_the_cluster(folder, engines):
    _, by_address = engines
    s = state(folder, by_address, "mid.csv", tab="holdout", holdout=20, mc_samples=64)
    assert s.error == "", s.error
    theory, ij = s.holdout_theory, s.holdout_ij
    assert theory.mean.shape == (20,) and ij.mean.shape == (20,)
    assert np.all(np.abs(theory.mean - ij.mean) < 0.1 + 0.1 * np.abs(theory.mean))   # eq. (48) beside the IJ
    s.run_mc()
    assert s.wait(TIMEOUT) and s.error == "", s.error
    mc = s.holdout_mc
    assert mc.mc_samples == 64 and np.all(np.abs(mc.mc_mean - theory.mean) < 6 * mc.mc_mean_se + 0.05)
    s.tab = "distribution"                    # no rows held out: the training problem, built by its job
    assert s.wait(TIMEOUT) and s.error == "" and s.problem.n == MID
    s.run_mc()
    assert s.wait(TIMEOUT) and s.error == "", s.error
    dist = s.distribution
    assert dist.inputs.size == experiments.MAP_INPUTS and np.array_equal(dist.inputs, s.mapped_inputs)
    assert dist.samples.shape == (64, experiments.MAP_INPUTS) and np.all((dist.l1.l1 >= 0) & (dist.l1.l1 <= 1))


def test_the_jackknife_at_held_out_inputs_of_a_huge_problem_is_refused_in_one_sentence():
    from types import SimpleNamespace

    ok = SimpleNamespace(X_test=np.zeros((100, 3)), n=cluster.IJ_HOLDOUT_ENTRIES // 100)
    cluster.check_holdout_ij(ok)
    with pytest.raises(ValueError, match=r"lower 'Held-out rows' to 99 or fewer") as refused:
        cluster.check_holdout_ij(SimpleNamespace(X_test=np.zeros((100, 3)), n=cluster.IJ_HOLDOUT_ENTRIES // 99))
    assert "\n" not in str(refused.value)
