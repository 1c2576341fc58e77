"""The Dask engine: the same numbers as the in-process loop with one or two worker processes and any chunk
size; a stop request cancels the queued chunks; a killed worker does not lose the job; an unreachable scheduler
is one clear error."""
import gc
import os
import signal
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("distributed")

from explorer.chunks import item_generator, plan_chunks, root_seed, run_chunks, stack_rows  # noqa: E402
from explorer.gp_bootstrap import montecarlo  # noqa: E402
from explorer.progress import Cancelled, Hooks  # noqa: E402
from explorer.runtime import engine  # noqa: E402
from tests.conftest import rbf  # noqa: E402


def _slow_normals(shared, chunk, root, seconds):
    """Per-item normal draws after ``seconds`` of sleep per chunk (a stand-in for a costly chunk)."""
    time.sleep(seconds)
    return np.stack([item_generator(root, chunk.group, b).normal(size=shared) for b in range(chunk.start, chunk.stop)])


@pytest.fixture(scope="module")
def gp(rng_module=np.random.default_rng(3)):
    X = rng_module.normal(size=(40, 2))
    return rbf(X, X, 1.5), np.sin(2 * X[:, 0]), rbf(X[:5] + 0.1, X, 1.5)


def test_dask_equals_in_process_bit_for_bit_for_any_chunk_size(dask_engine, gp):
    K, y, K_test = gp
    reference = montecarlo.bootstrap_predictions(K, y, 0.1, 40, 60, K_test=K_test, rng=5)
    for chunk_size in (1, 7, 64):
        other = montecarlo.bootstrap_predictions(K, y, 0.1, 40, 60, K_test=K_test, rng=5, chunk_size=chunk_size,
                                                 executor=dask_engine.executor)
        np.testing.assert_array_equal(other.occupations, reference.occupations)
        np.testing.assert_array_equal(other.train, reference.train)
        np.testing.assert_array_equal(other.test, reference.test)


def test_one_worker_cluster_and_learning_curve_agree_with_two(dask_engine, gp):
    K, y, _ = gp
    curves = [montecarlo.bootstrap_learning_curve(K, y, 0.1, [10, 40], 50, rng=2, chunk_size=9,
                                                  executor=dask_engine.executor)]
    one = engine.connect(workers=1, dashboard=False)
    try:
        assert one.n_workers == 1 and "1 worker process" in one.description
        curves.append(montecarlo.bootstrap_learning_curve(K, y, 0.1, [10, 40], 50, rng=2, chunk_size=4,
                                                          executor=one.executor))
    finally:
        one.close()
    curves.append(montecarlo.bootstrap_learning_curve(K, y, 0.1, [10, 40], 50, rng=2))
    for curve in curves[1:]:
        np.testing.assert_array_equal(curve.value, curves[0].value)
        np.testing.assert_array_equal(curve.se, curves[0].se)


def _marked_normals(shared, chunk, root, folder):
    """As :func:`_slow_normals` (0.2 s), leaving a file per chunk that started in ``folder``."""
    (folder / f"chunk-{chunk.index}").touch()
    return _slow_normals(shared, chunk, root, 0.2)


def test_stop_cancels_queued_chunks_within_one_chunk(dask_engine, tmp_path):
    chunks = plan_chunks([40], 1)                     # 40 chunks of 0.2 s
    done = []
    stop = threading.Event()

    def on_chunk(chunk, rows):
        done.append(chunk.index)
        if len(done) == 2:
            stop.set()

    with pytest.raises(Cancelled, match="of 40 samples"):
        run_chunks(_marked_normals, 3, chunks, root_seed(1), (tmp_path,), executor=dask_engine.executor,
                   hooks=Hooks(should_stop=stop.is_set), on_chunk=on_chunk)
    deadline = time.time() + 30                        # the queued futures are released on the scheduler
    while any(dask_engine.client.processing().values()) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(dask_engine.client.processing().values())
    started = len(list(tmp_path.iterdir()))
    # besides the chunks seen when the stop came, at most the one running chunk per worker (plus one that a
    # worker may have begun between the stop and the cancel) started: nothing else of the 40 ran
    assert len(done) <= started <= len(done) + 2 * dask_engine.n_workers, started


def test_a_killed_worker_does_not_lose_the_job(dask_engine):
    chunks = plan_chunks([24], 2)
    reference = run_chunks(_slow_normals, 3, chunks, root_seed(4), (0.0,))
    pids = dask_engine.client.run(os.getpid)          # {worker address: pid}

    def kill_one():
        time.sleep(0.6)
        os.kill(next(iter(pids.values())), signal.SIGKILL)  # the nanny restarts it; Dask reschedules its chunks

    killer = threading.Thread(target=kill_one)
    killer.start()
    rows = run_chunks(_slow_normals, 3, chunks, root_seed(4), (0.25,), executor=dask_engine.executor)
    killer.join()
    np.testing.assert_array_equal(stack_rows(rows, chunks, 0), stack_rows(reference, chunks, 0))


def test_an_unreachable_scheduler_is_one_clear_error():
    with pytest.raises(engine.EngineError, match="Cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        engine.connect("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(engine.EngineError, match="--workers must be a whole number >= 1"):
        engine.connect(workers=0)


def _worker_environment() -> tuple[str | None, int]:
    """(MALLOC_TRIM_THRESHOLD_, the lowest nice value of any thread) of the process this runs in."""
    niceness = min(os.getpriority(os.PRIO_PROCESS, int(tid)) for tid in os.listdir("/proc/self/task"))
    return os.environ.get("MALLOC_TRIM_THRESHOLD_"), niceness


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux thread priorities")
def test_local_workers_keep_glibc_malloc_defaults_and_yield_to_the_server(dask_engine):
    """Dask's nanny default MALLOC_TRIM_THRESHOLD_=65536 made the Monte-Carlo 2.8x slower on a worker than
    in-process; local workers run below the server's priority so that the event loop comes first."""
    found = dask_engine.client.run(_worker_environment)
    assert len(found) == dask_engine.n_workers >= 1
    for trim, niceness in found.values():
        assert trim is None
        assert niceness >= engine.LOCAL_WORKER_NICENESS
    assert os.getpriority(os.PRIO_PROCESS, 0) < engine.LOCAL_WORKER_NICENESS   # the calling process is untouched


def test_a_job_whose_engine_closes_is_one_clear_error():
    """A server or kernel stopping closes the engine under running jobs: EngineError (shown as a message), not a
    traceback from inside Dask."""
    own = engine.connect(workers=1, dashboard=False)
    chunks = plan_chunks([40], 1)

    def close_soon():
        time.sleep(1.0)
        own.close()

    closer = threading.Thread(target=close_soon)
    closer.start()
    try:
        with pytest.raises(engine.EngineError, match="The Dask engine dropped this job"):
            run_chunks(_slow_normals, 3, chunks, root_seed(4), (0.25,), executor=own.executor)
    finally:
        closer.join()
        own.close()


def _timed_normals(shared, chunk, root, seconds):
    """As :func:`_slow_normals`, returning the time each chunk ended too (in its rows' last column)."""
    rows = _slow_normals(shared, chunk, root, seconds)
    return np.column_stack([rows, np.full(len(rows), time.time())])


def _finish_times(executor, n_chunks: int, seed: int, start: threading.Event, results: dict) -> None:
    start.wait()
    chunks = plan_chunks([n_chunks], 1)
    rows = run_chunks(_timed_normals, 2, chunks, root_seed(seed), (0.1,), executor=executor)
    results[seed] = np.sort(stack_rows(rows, chunks, 0)[:, -1])


def _race(dask_engine, first: int, second: int, gap: float) -> dict:
    """Start a job of ``first`` chunks, ``gap`` seconds later one of ``second`` chunks; their chunks' end times."""
    results, go = {}, [threading.Event(), threading.Event()]
    threads = [threading.Thread(target=_finish_times, args=(dask_engine.executor, n, seed, event, results))
               for n, seed, event in ((first, 1, go[0]), (second, 2, go[1]))]
    for thread in threads:
        thread.start()
    go[0].set()
    time.sleep(gap)
    go[1].set()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_jobs_of_equal_size_run_one_after_another(dask_engine):
    # processor sharing would end both after about 2 x 16 x 0.1 s / 2 workers; in order the first ends after half
    ends = _race(dask_engine, 16, 16, 0.3)
    first_done, second_done = ends[1][-1], ends[2][-1]
    assert first_done < second_done
    # only chunks that were already running when the second job came may still belong to the first
    assert np.sum(ends[2] < first_done) <= 2 * dask_engine.n_workers, (ends[1], ends[2])


def test_a_short_job_goes_before_the_rest_of_a_long_one(dask_engine):
    ends = _race(dask_engine, 60, 4, 0.5)       # 60 x 0.1 s: 3 s of work on 2 workers; 4 chunks 0.5 s later
    long_done, short_done = ends[1][-1], ends[2][-1]
    assert short_done < long_done - 1.0, (short_done, long_done)


def _process_id(*, hooks: Hooks) -> int:
    return os.getpid()


def _steps(n: int, seconds: float, *, hooks: Hooks):
    """n steps of ``seconds`` each drawing from one generator (like optimisation restarts), partial results."""
    gen, done = np.random.default_rng(11), []
    for i in range(n):
        hooks.check(i, n, "steps")
        hooks.report(i / n, f"step {i + 1}/{n}")
        time.sleep(seconds)
        done.append(gen.standard_normal())
        hooks.publish(tuple(done))
    return tuple(done)


def test_a_call_runs_on_a_worker_with_its_hooks_relayed_and_equals_the_one_here(dask_engine):
    """``DaskExecutor.call``: the model-selection optimisations (restarts from one generator) run on a worker; their
    progress and partial results reach this process and the numbers equal those of the call here."""
    from explorer.chunks import IN_PROCESS
    from explorer.kernels import make_kernel
    from explorer.model_selection.selection import select_hyperparameters

    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, (30, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(30)
    args, kwargs = (X, y, make_kernel("se", 1), ("evidence", "loo")), dict(rng=0, n_restarts=3, max_iter=8)
    seen, reports = [], []
    hooks = Hooks(progress=lambda f, m: reports.append(str(m)), partial=seen.append)
    there = dask_engine.executor.call(select_hyperparameters, args, kwargs, hooks)
    here = IN_PROCESS.call(select_hyperparameters, args, kwargs, Hooks())
    assert [r.hyperparameters for r in there] == [r.hyperparameters for r in here]
    assert [r.value for r in there] == [r.value for r in here]
    assert [len(p) for p in seen] == [1, 2] and reports and all("optimising" in m for m in reports)
    assert dask_engine.executor.call(_process_id, (), {}, Hooks()) != os.getpid()  # a worker's process did it


def test_a_call_on_a_worker_stops_at_its_next_step_when_cancelled(dask_engine):
    stop, seen = threading.Event(), []
    hooks = Hooks(should_stop=stop.is_set, partial=seen.append, count=(2, 5, "criteria"))
    threading.Timer(1.0, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(Cancelled) as info:
        dask_engine.executor.call(_steps, (100, 0.1), {}, hooks)
    assert time.monotonic() - t0 < 5.0  # 100 steps would take 10 s
    assert (info.value.done, info.value.total, info.value.unit) == (2, 5, "criteria")  # the caller's count
    assert 1 <= len(seen) < 100
    # a stop is not a failure: no worker logs "Compute Failed" with a traceback for it (a served app's log)
    logs = dask_engine.client.get_worker_logs()
    assert not [line for worker in logs.values() for _, line in worker if "Compute Failed" in line and "_steps" in line]


def test_every_worker_gives_its_freed_memory_back_on_request(dask_engine):
    """After a class the idle server asks each worker to collect and trim its heap (``Client.run``)."""
    import psutil

    workers = dask_engine.client.run(os.getpid)
    before = {pid: psutil.Process(pid).memory_info().rss for pid in workers.values()}
    dask_engine.client.run(_hold_and_free, 200_000_000)  # 200 MB touched and freed in each worker
    assert dask_engine.return_workers_memory() == len(workers) >= 1
    after = {pid: psutil.Process(pid).memory_info().rss for pid in workers.values()}
    assert all(after[pid] < before[pid] + 50e6 for pid in before), (before, after)


def _hold_and_free(nbytes: int) -> None:
    chunks = [bytearray(1_000) for _ in range(nbytes // 1_000)]  # small blocks: glibc keeps them in its heap
    del chunks


def test_a_jobs_keys_name_a_group_of_its_own_and_a_prefix_shared_by_all_jobs():
    """Dask's own key functions read the group (the job's: the scheduler's queue needs it) and the prefix (the task
    function's: the scheduler keeps one per prefix for good) from :func:`~explorer.runtime.engine.task_key`."""
    from dask.utils import key_split
    from distributed.utils import key_split_group

    jobs = {engine.job_id() for _ in range(500)}
    assert len(jobs) == 500
    for job in jobs:
        key = engine.task_key("_prediction_chunk", job, 7)
        assert key_split(key) == "prediction_chunk" and key_split_group(key) == f"_prediction_chunk-{job}"


def _task_groups_alive(names: set[str]) -> int:
    """Dask task groups named in ``names`` alive in this process, after a collection (a job's groups carry its random
    id, so no other scheduler of the process, such as the session's, has a group of those names)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "TaskGroup" and o.name in names)


def test_an_idle_local_scheduler_keeps_nothing_per_job(gp):
    """After a class's jobs, a local scheduler (in the server) holds the same task prefixes as after one job, and
    :meth:`~explorer.runtime.engine.Engine.forget_finished_jobs` removes the spans of every finished job and their task
    groups from the scheduler's history of computations (no task group object is left alive but those the
    scheduler still knows); jobs after it give the same numbers as before (and as in-process)."""
    K, y, _ = gp
    reference = montecarlo.bootstrap_predictions(K, y, 0.1, 40, 30, rng=5)
    one = engine.connect(workers=1, dashboard=False)
    try:
        scheduler = one.cluster.scheduler
        prefixes, names = [], set()
        for _ in range(4):
            result = montecarlo.bootstrap_predictions(K, y, 0.1, 40, 30, rng=5, chunk_size=8, executor=one.executor)
            np.testing.assert_array_equal(result.train, reference.train)
            prefixes.append(set(scheduler.task_prefixes))
            names |= set(scheduler.task_groups)
        assert prefixes[-1] == prefixes[0], prefixes  # was two new prefixes a job
        for _ in range(200):  # the jobs' futures are released: the scheduler forgets their tasks
            if not scheduler.tasks:
                break
            time.sleep(0.05)
        spans, workers = scheduler.extensions["spans"], set(scheduler.workers)
        recorded = len(spans.spans)
        grouped = sum(len(computation.groups) for computation in scheduler.computations)
        names |= {group.name for computation in scheduler.computations for group in computation.groups}
        assert recorded >= 1 and grouped >= 4  # a group per job at least
        # spans whose metrics a worker may still send are kept (its heartbeat would fail on them, see below)
        assert one.forget_finished_jobs(settle=3600) == grouped and len(spans.spans) == recorded
        assert not scheduler.computations
        deadline, forgotten = time.monotonic() + 60, 0
        while forgotten < recorded and time.monotonic() < deadline:  # every worker reports again within a second
            time.sleep(0.5)
            forgotten += one.forget_finished_jobs(settle=0.5)  # the jobs' spans, as each settles
        assert forgotten == recorded
        assert spans.spans == {} and spans.root_spans == [] and not spans.spans_search_by_name
        assert len(names) >= 4 and _task_groups_alive(names) == 0 and not scheduler.task_groups  # nothing held them
        result = montecarlo.bootstrap_predictions(K, y, 0.1, 40, 30, rng=5, chunk_size=8, executor=one.executor)
        np.testing.assert_array_equal(result.train, reference.train)
        assert len(spans.spans) >= 1  # the new job has its span again
        assert set(scheduler.workers) == workers  # no worker closed itself (a restarted one has a new address)
    finally:
        one.close()


def test_dasks_span_heartbeat_still_fails_on_a_span_it_no_longer_records():
    """Why :func:`~explorer.runtime.engine.forget_finished_spans` waits until every worker has reported: Dask keeps every span
    (no setting forgets finished ones), and a worker's metrics of a span the scheduler no longer records fail its
    heartbeat, after which the worker closes itself. When this fails, the wait (``settle``) can go."""
    from distributed.spans import SpansSchedulerExtension

    metrics = {("execute", "a-forgotten-span", "_prediction_chunk", "thread-cpu", "seconds"): 1.0}
    with pytest.raises(KeyError, match="a-forgotten-span"):
        SpansSchedulerExtension(SimpleNamespace()).heartbeat(None, metrics)


def test_the_features_of_a_low_rank_monte_carlo_go_to_the_workers_once_per_job(dask_engine, monkeypatch):
    """Φ (the low-rank Monte-Carlo's shared input) is scattered once for a job of many chunks, never with a chunk:
    every task names the one scattered future, and the numbers equal the in-process run."""
    rng = np.random.default_rng(4)
    phi, y = rng.normal(size=(300, 12)), rng.normal(size=300)
    client = dask_engine.client
    scattered, mapped = [], []
    real_scatter, real_map = client.scatter, client.map

    def counting_scatter(data, *args, **kwargs):
        scattered.append(data)
        return real_scatter(data, *args, **kwargs)

    def recording_map(func, *iterables, **kwargs):
        mapped.append(list(iterables[0]))  # the shared argument of each chunk
        return real_map(func, *iterables, **kwargs)

    monkeypatch.setattr(client, "scatter", counting_scatter)
    monkeypatch.setattr(client, "map", recording_map)
    on_dask = montecarlo.bootstrap_predictions_lowrank(phi, y, 0.1, 300.0, 64, rng=5, chunk_size=4,
                                                      executor=dask_engine.executor)
    here = montecarlo.bootstrap_predictions_lowrank(phi, y, 0.1, 300.0, 64, rng=5, chunk_size=4)
    assert len(scattered) == 1 and len(mapped) == 1 and len(mapped[0]) == 16
    [payload] = scattered[0].values()
    held = [getattr(x, "phi", x) for x in payload]  # Φ, in its kernel operator
    assert any(isinstance(x, np.ndarray) and x.shape == phi.shape for x in held)  # Φ is in it
    assert len({id(future) for future in mapped[0]}) == 1  # one future, the same for every chunk
    np.testing.assert_array_equal(on_dask.train, here.train)
