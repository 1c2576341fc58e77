"""Faults: a worker killed in the middle of the theory (Dask computes its chunks again: the same numbers, no chunk
counted twice), a chunk that keeps killing its workers (one clear message), and an interrupted theory (no task left
running on the cluster)."""
import itertools
import os
import signal
import time

import numpy as np
import pytest

from explorer.bootstrap import replica
from explorer.distributed import RowChunks, chunked_nystrom
from explorer.kernels import SquaredExponential
from explorer.progress import Cancelled, Hooks
from explorer.runtime.engine import EngineError, connect

N, D, RANK, NOISE = 12_000, 3, 32, 0.01
KERNEL = SquaredExponential(lengthscale=1.5, signal_var=1.0)


@pytest.fixture(scope="module")
def engine():
    engine = connect(workers=2, memory_limit="1GB", dashboard=False)
    yield engine
    engine.close()


def operator(client, hold=True):
    rows = RowChunks.teacher(client, N, D, 1500, seed=11, noise_var=NOISE)
    return chunked_nystrom(rows, KERNEL, RANK, rng=2, hold_features=hold), rows.targets()


def test_a_worker_killed_mid_theory_gives_the_same_numbers(engine):
    client = engine.client
    op, y = operator(client)
    expected = replica.solve_replica(op, y, NOISE, N, precision="double")
    victim = sorted(client.run(os.getpid).values())[0]     # a worker process, killed as the kernel would
    killed = []

    def kill_once(fraction, message):
        if not killed and message.done >= 1:              # after the first iteration of eqs. (54)-(55)
            killed.append(victim)
            os.kill(victim, signal.SIGKILL)

    sol = replica.solve_replica(op, y, NOISE, N, precision="double", hooks=Hooks(progress=kill_once))
    assert killed
    for name in ("dl", "lam", "lam_c", "m", "gam_c", "G_diag"):   # chunk order: the same bits, nothing twice
        assert np.array_equal(getattr(sol, name), getattr(expected, name)), name
    client.wait_for_workers(2, timeout=60)                # the nanny restarted it


def _always_dies(part, fmap, *args):
    os._exit(1)


@pytest.mark.slow
def test_a_chunk_that_kills_its_workers_stops_with_one_sentence():
    own = connect(workers=2, memory_limit="1GB", dashboard=False)   # its workers die for good: a cluster of its own
    try:
        op, _ = operator(own.client, hold=False)
        with pytest.raises(EngineError, match="lost its Dask worker 3 times"):
            op._run(_always_dies)
    finally:
        own.close()


def test_an_interrupted_theory_leaves_no_task_running(engine):
    client = engine.client
    op, y = operator(client, hold=False)
    polls = itertools.count()  # stop at the third time the theory asks (mid-pass, whatever the machine's speed)
    with pytest.raises(Cancelled):
        replica.solve_replica(op, y, NOISE, N, precision="double", hooks=Hooks(should_stop=lambda: next(polls) >= 2))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        processing = client.processing()
        if not any(processing.values()):
            break
        time.sleep(0.2)
    assert not any(client.processing().values())
    assert not any(client.run_on_scheduler(lambda dask_scheduler: [
        k for k, ts in dask_scheduler.tasks.items() if ts.state in ("processing", "queued", "no-worker")]))
