"""Where the computations run: one BLAS thread per process, and Dask workers for the Monte-Carlo.

**BLAS policy.** A Monte-Carlo bootstrap sample is a chain of small Cholesky factorisations; with a multi-threaded
BLAS the threads only contend for the cores (measured: the [MO03] notebook ran 4-5x slower on two busy cores),
and they sum in another order than a single thread, so results would differ in the last bits between this process
and a Dask worker. Parallelism comes from worker processes instead. The limit is process-wide and must be set once,
before worker threads start (:func:`use_single_threaded_blas`): changing OpenBLAS's thread count while another
thread is inside a BLAS call can deadlock it.

**Dask.**
The core's long functions take an ``executor`` (:mod:`explorer.chunks`); :class:`DaskExecutor` runs their seeded
chunks on a ``distributed.Client``: the shared inputs (K, X, y) are scattered once per job, the chunks are
submitted with a priority that runs the jobs one after another (:func:`job_order`: the soonest finished first) and
each job's chunks in order, collected with ``distributed.as_completed`` (progress and partial results as they come),
and a stop request cancels the queued chunks (a running chunk finishes: at most one chunk of extra work per
worker). The numbers equal those of the in-process loop bit for bit, whatever the number of workers.

:class:`Engine` owns a client and, for a local cluster, the cluster: ``explorer serve`` and the CLI open one with
:func:`connect` and close it when they end; notebooks share :func:`shared_engine`, opened at first use.

``distributed`` is imported only when an engine is made: importing this module loads no UI stack and no Dask
(the compute core sees only the executor protocol of :mod:`explorer.chunks`).
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import gc
import math
import os
import threading
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from threadpoolctl import threadpool_limits

from explorer.progress import Cancelled, Hooks, Progress

__all__ = ["EngineError", "Engine", "DaskExecutor", "connect", "local_workers", "shared_engine", "SCHEDULER_ENV",
           "use_single_threaded_blas", "job_order", "return_freed_memory", "forget_finished_spans",
           "SPANS_SETTLE_SECONDS", "forget_finished_computations", "job_id", "task_key"]

SCHEDULER_ENV = "EXPLORER_SCHEDULER"
"""Environment variable with the address of an existing Dask scheduler (``tcp://host:8786``)."""

_POLL_SECONDS = 0.05


def use_single_threaded_blas() -> None:
    """Limit every BLAS library of this process to one thread (call once, at start-up).

    threadpoolctl limits only the libraries already loaded, so numpy's and scipy's (scipy may bring its own
    OpenBLAS) are loaded first.
    """
    import numpy.linalg  # noqa: F401
    import scipy.linalg  # noqa: F401

    threadpool_limits(limits=1, user_api="blas")


class EngineError(RuntimeError):
    """The Dask engine cannot run the job (scheduler unreachable, workers lost); the message says what to do."""


def local_workers() -> int:
    """One worker per core this process may use (at least 1)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not Linux
        return max(os.cpu_count() or 1, 1)


#: Seconds a chunk is assumed to take when jobs are ordered (:func:`job_order`): about a chunk of the default
#: size on one worker (a GP sample on boston costs ~2 ms, 32 a chunk).
CHUNK_SECONDS = 0.05


def job_order(started: float, n_chunks: int) -> int:
    """When a job should be finished if it ran alone: its start plus its chunks' time, in milliseconds.

    The workers take the chunks of the job with the earliest such time first (the Dask priority is minus it), a
    job's chunks in index order. Jobs of the same size therefore run
    one after another in the order they were started (five students who start the same curve together finish
    after 1, 2, ..., 5 job times instead of all after 5, as when every job gets an equal share), and a short job
    started after a long one need not wait for all of it: it goes first when the long job's extra chunks would take
    longer (at :data:`CHUNK_SECONDS` each) than the time between their starts. A running chunk is never stopped.
    """
    return int(1e3 * (started + n_chunks * CHUNK_SECONDS))


def job_id() -> str:
    """A new job's id: 12 random decimal digits (never a word of letters, see :func:`task_key`)."""
    return f"{uuid.uuid4().int % 10**12:012d}"


def task_key(name: str, job: str, index: int = 0) -> tuple[str, int]:
    """The Dask key of task ``index`` of ``job``: ``("name-job", index)``, Dask's own form. Its *group* (the
    tuple's first item) is the job's own, which the scheduler's queue needs (:meth:`DaskExecutor.map_chunks`); its
    *prefix* is ``name`` alone (Dask drops a word that is not letters), so the scheduler keeps one prefix and one
    set of metrics per task function. With the job's id inside the name (``name_job-index``), every job made a new
    prefix and metrics that the scheduler (in the server, for a local cluster) keeps for good: two prefixes and six
    metrics a job, tens of small objects that a class of 15 minutes scattered through the server's memory.
    """
    return f"{name}-{job}", index


class DaskExecutor:
    """Runs chunk tasks on a ``distributed.Client`` (the :class:`explorer.chunks.Executor` protocol)."""

    def __init__(self, client, description: str):
        self.client = client
        self.description = description

    def map_chunks(self, task, shared, chunks, root, args, should_stop):
        from concurrent.futures import CancelledError

        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        client, job = self.client, job_id()
        # Dask holds a large "task group" with few inputs in its scheduler queue, in priority order; other tasks go
        # to the workers at once, ahead of that queue. So the chunks are one batch (client.map, which keeps them in
        # index order), and the job's id is part of the group's name and of its input's: submitted one by one, a
        # job's first chunks formed a small group, and jobs whose inputs shared one group ("ndarray-…") had too
        # many inputs; both jumped the queue. The keys are Dask's (name-token, index) tuples (:func:`task_key`).
        shared_key = task_key("shared", job)
        data = client.scatter({shared_key: shared}, hash=False)[shared_key]  # once per job, not per chunk
        n = len(chunks)
        futures = client.map(task, [data] * n, list(chunks), [root] * n, *([arg] * n for arg in args),
                             key=[task_key(task.__name__, job, chunk.index) for chunk in chunks],
                             priority=-job_order(time.time(), n), pure=False)
        by_key = {f.key: chunk for f, chunk in zip(futures, chunks)}
        pending = as_completed(futures, loop=client.loop)
        try:
            while not pending.is_empty():
                if should_stop():
                    return
                if not pending.has_ready():
                    time.sleep(_POLL_SECONDS)
                    continue
                for future in pending.next_batch(block=False):
                    try:
                        rows = future.result()
                    except KilledWorker as exc:
                        raise EngineError("A Dask worker died while computing this job (out of memory, or "
                                          "stopped); the job was given up after Dask's retries. "
                                          "Run it again, or with fewer samples.") from exc
                    except CancelledError as exc:       # the engine closed (server or kernel stopping)
                        if should_stop():
                            return
                        raise EngineError("The Dask engine dropped this job (it was closed or restarted). "
                                          "Run it again.") from exc
                    yield by_key[future.key], rows
        finally:
            try:
                client.cancel(futures + [data])
            except Exception:  # noqa: BLE001 - a closed client has nothing left to cancel
                pass

    def call(self, function, args, kwargs, hooks):
        """``function(*args, hooks=..., **kwargs)`` as one task on a worker, its hooks relayed to ``hooks`` here.

        The worker's hooks put progress and partial results on a Dask ``Queue`` that this thread drains (progress
        at most every :data:`_REMOTE_REPORT_SECONDS`), and read a Dask ``Event`` that this thread sets when
        ``hooks.should_stop()``: the function stops at its next check, as it would in this process, and its
        :class:`~explorer.progress.Cancelled` comes back here. The numbers are those of the same call in this
        process (the same code and seed; one BLAS thread in both).
        """
        from concurrent.futures import CancelledError

        from distributed import Event, Queue
        from distributed.scheduler import KilledWorker

        client, job = self.client, job_id()
        stop, queue = Event(f"explorer-stop-{job}", client=client), Queue(f"explorer-hooks-{job}", client=client)
        future = client.submit(_call_with_relayed_hooks, function, args, kwargs, stop.name, queue.name, hooks.count,
                               key=task_key(function.__name__, job), priority=-job_order(time.time(), 1), pure=False)

        def relay() -> None:
            for kind, value in queue.get(batch=True):
                if kind == "progress":
                    hooks.report(*value)
                else:
                    hooks.publish(value)
        try:
            stopping = False
            while not future.done():
                if not stopping and hooks.should_stop is not None and hooks.should_stop():
                    stop.set()
                    stopping = True
                relay()
                time.sleep(_POLL_SECONDS)
            relay()  # the worker put everything before its function returned
            try:
                result = future.result()
            except KilledWorker as exc:
                raise EngineError("A Dask worker died while computing this job (out of memory, or stopped); "
                                  "the job was given up after Dask's retries. Run it again.") from exc
            except CancelledError as exc:  # the engine closed (server or kernel stopping)
                raise EngineError("The Dask engine dropped this job (it was closed or restarted). "
                                  "Run it again.") from exc
            if isinstance(result, _Stopped):
                raise Cancelled(result.done, result.total, result.unit)
            return result
        finally:
            for release in (lambda: client.cancel([future]), queue.close, stop.clear):
                try:
                    release()
                except Exception:  # noqa: BLE001 - a closed client has nothing left to release
                    pass

    def __repr__(self) -> str:
        return f"DaskExecutor({self.description!r})"


#: How often a task run by :meth:`DaskExecutor.call` sends its progress and asks whether to stop (each is a
#: message to the scheduler).
_REMOTE_REPORT_SECONDS = 0.2


def _call_with_relayed_hooks(function, args, kwargs, stop_name: str, queue_name: str, count):
    """On a worker: ``function`` with hooks that talk to :meth:`DaskExecutor.call` through the scheduler (and
    ``count``, the caller's count for a :class:`~explorer.progress.Cancelled`)."""
    from distributed import Event, Queue

    stop, queue = Event(stop_name), Queue(queue_name)
    last = {"progress": 0.0, "stop": 0.0, "stopped": False}

    def progress(fraction: float, message: Progress) -> None:
        now = time.monotonic()
        if now - last["progress"] >= _REMOTE_REPORT_SECONDS or fraction >= 1.0:
            last["progress"] = now
            queue.put(("progress", (fraction, message)))

    def should_stop() -> bool:
        now = time.monotonic()
        if not last["stopped"] and now - last["stop"] >= _REMOTE_REPORT_SECONDS:
            last["stop"], last["stopped"] = now, stop.is_set()
        return last["stopped"]

    hooks = Hooks(progress=progress, should_stop=should_stop, partial=lambda value: queue.put(("partial", value)),
                  count=count)
    try:
        return function(*args, hooks=hooks, **kwargs)
    except Cancelled as stopped:  # returned, not raised: a worker logs every failed task as an ERROR with its traceback
        return _Stopped(stopped.done, stopped.total, stopped.unit)
    finally:
        # This handle counts as a user of the queue in the scheduler, as the caller's does: unreleased, the
        # scheduler kept every job's queue for good (one per call, ~60 per 3 minutes of a served class).
        with suppress(Exception):  # a worker whose client closed has nothing left to release
            queue.close()


@dataclass(frozen=True)
class _Stopped:
    """What a task stopped by its hooks returns to :meth:`DaskExecutor.call`, which raises its ``Cancelled``."""

    done: int
    total: int
    unit: str


@dataclass
class Engine:
    """A Dask client (and the local cluster it owns, if any) and its executor.

    Attributes
    ----------
    client : distributed.Client
    cluster : distributed.LocalCluster or None
        The cluster this engine started (None when connected to a scheduler address).
    description : str
        Where jobs run, for people: "local Dask cluster, 2 worker processes" or "Dask scheduler tcp://…".
    """

    client: Any
    cluster: Any = None
    description: str = ""
    _closed: bool = field(default=False, repr=False)

    @property
    def executor(self) -> DaskExecutor:
        return DaskExecutor(self.client, self.description)

    @property
    def dashboard_link(self) -> str | None:
        """The Dask dashboard URL, or None if the scheduler serves none."""
        try:
            return self.client.dashboard_link or None
        except Exception:  # noqa: BLE001 - no dashboard (bokeh missing on the scheduler, or disabled)
            return None

    @property
    def n_workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def return_workers_memory(self) -> int:
        """Run :func:`return_freed_memory` in every worker process (Dask's ``Client.run``): what the jobs of a class
        freed goes back to the system instead of staying in the workers' heaps. Returns how many workers ran it."""
        return len(self.client.run(return_freed_memory))

    def forget_finished_jobs(self, settle: float | None = None) -> int:
        """In the scheduler of a local cluster (in this process), let go of what it still records of finished jobs:
        their spans (:func:`forget_finished_spans`, ``settle`` its seconds, default :data:`SPANS_SETTLE_SECONDS`) and
        their task groups in its history of computations (:func:`forget_finished_computations`); return how many
        records went. A shared scheduler's are left alone (0): its dashboard shows other people's jobs too."""
        if self.cluster is None:
            return 0
        settle = SPANS_SETTLE_SECONDS if settle is None else settle
        return self.client.run_on_scheduler(_forget_finished_jobs, settle=settle)  # one round trip to its loop

    def close(self) -> None:
        """Close the client and the local cluster (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def return_freed_memory() -> None:
    """Collect cycles, then ask the C library to give freed heap memory back to the system (glibc's ``malloc_trim``;
    elsewhere only the collection).

    A served page's figures, documents and messages, and a job's arrays, are many allocations; freed, glibc keeps
    them in its heap, and a server (or worker) whose pages all closed kept the resident memory of the busiest moment.
    """
    gc.collect()
    if _LIBC is not None and hasattr(_LIBC, "malloc_trim"):
        _LIBC.malloc_trim(0)


#: Seconds after a job's last task ended, and before every worker has reported to the scheduler since, that its spans
#: are kept. A worker sends the metrics of a finished task with its next heartbeat (about every second); metrics of a
#: span the scheduler no longer records fail the heartbeat (``KeyError`` in Dask's ``SpansSchedulerExtension``), and
#: the worker then closes itself ("Unexpected exception during heartbeat"), cancelling the next job's tasks.
SPANS_SETTLE_SECONDS = 10.0


def forget_finished_spans(dask_scheduler, settle: float = SPANS_SETTLE_SECONDS) -> int:
    """Remove from Dask's span records (``distributed.spans``: what the dashboard's "spans" show) every tree of spans
    all of whose task groups the scheduler has forgotten and whose metrics every worker has sent (each reported more
    than ``settle`` seconds after the tree's last task ended, :data:`SPANS_SETTLE_SECONDS`); return how many spans
    went. Run on the scheduler (``Client.run_on_scheduler``).

    Each job outside a running one opens a span of its own, which keeps its task groups (a few dicts and sets each)
    for as long as the scheduler lives (Dask has no setting to forget finished spans): about 30 small objects a job,
    scattered through the memory of the process that holds the scheduler, the server for a local cluster. A span
    none of whose groups the scheduler still knows can no longer get a task (a new task of a group makes that group
    anew), and one whose metrics have all arrived gets none either: removing it changes no computation. A tree that
    has not settled yet goes at a later call.
    """
    spans = dask_scheduler.extensions.get("spans")
    if spans is None:
        return 0
    known = dask_scheduler.task_groups
    reported = min((worker.last_seen for worker in dask_scheduler.workers.values()), default=math.inf)
    finished = [root for root in spans.root_spans
                if all(known.get(group.name) is not group for group in root.traverse_groups())
                and root.stop + settle < reported]
    gone = {id(span) for root in finished for span in root.traverse_spans()}
    if not gone:
        return 0
    spans.root_spans[:] = [root for root in spans.root_spans if id(root) not in gone]
    for span_id in [span_id for span_id, span in spans.spans.items() if id(span) in gone]:
        del spans.spans[span_id]
    for index in (spans.spans_search_by_name, spans.spans_search_by_tag):
        for key in list(index):
            index[key] = [span for span in index[key] if id(span) not in gone]
            if not index[key]:
                del index[key]
    return len(gone)


def _forget_finished_jobs(dask_scheduler, settle: float) -> int:
    return forget_finished_spans(dask_scheduler, settle) + forget_finished_computations(dask_scheduler)


def forget_finished_computations(dask_scheduler) -> int:
    """Remove from the scheduler's history of computations (``Scheduler.computations``, the last
    ``distributed.diagnostics.computations.max-history``) every task group the scheduler has forgotten, and the
    computations left with none; return how many groups went. Run on the scheduler (``Client.run_on_scheduler``).

    A computation collects the task groups of every graph submitted until the cluster is next idle: under a class's
    load that is every job of the class (745 groups after a 15-minute soak, with what they depend on), a few dicts
    and sets each, scattered through the memory of the process that holds the scheduler, the server for a local
    cluster. A group the scheduler has forgotten can no longer get a task (a new task makes its group anew):
    removing it changes no computation.
    """
    known = dask_scheduler.task_groups
    computations = dask_scheduler.computations
    dropped = 0
    for computation in computations:
        gone = {group for group in computation.groups if known.get(group.name) is not group}
        computation.groups -= gone
        dropped += len(gone)
    kept = [computation for computation in computations if computation.groups]
    computations.clear()
    computations.extend(kept)
    return dropped


def _c_library():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


_LIBC = _c_library()


#: How much of its own history Dask keeps in memory, in the scheduler, the workers and the client (entries; Dask's
#: defaults 10,000 log records and 1,000 of everything else). The scheduler and the client live in the server
#: process: there the last 1,000 message batches of each connection (graphs, task specs with their arguments),
#: 10,000 "Scheduler cancels key" records, the events and transition logs held ~35 MB of a served class's
#: activity after every page had closed, and a worker kept 1,000 seconds of profiles and task stories. They serve
#: debugging only (the dashboard's recent events and profiles, ``Client.story``, ``get_logs``).
#: The scheduler's record of its last computations (Dask's default 100; each keeps its jobs' task groups) is kept to
#: 10 for the same reason.
DASK_LOG_LENGTHS = {"distributed.admin.log-length": 1000, "distributed.admin.low-level-log-length": 50,
                    "distributed.diagnostics.computations.max-history": 10}


def connect(scheduler: str | None = None, *, workers: int | None = None, memory_limit: str = "auto",
            timeout: float = 10.0, dashboard: bool = True) -> Engine:
    """An :class:`Engine` on the scheduler at ``scheduler`` (or ``$EXPLORER_SCHEDULER``), else a new local cluster.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``). Default: the environment variable
        ``EXPLORER_SCHEDULER``; if neither is set (or ``workers`` is given) a ``LocalCluster`` is started.
    workers : int, optional
        Worker processes of the local cluster (one thread each); default one per core. Giving it asks for a
        local cluster (``EXPLORER_SCHEDULER`` is then ignored).
    memory_limit : str
        Memory limit per local worker (Dask's syntax; "auto" splits the machine's memory).
    timeout : float
        Seconds to wait for the scheduler.
    dashboard : bool
        Serve the Dask dashboard of a local cluster on a free port.

    Returns
    -------
    Engine

    Raises
    ------
    EngineError
        If the scheduler cannot be reached, or ``workers`` < 1.
    """
    from distributed import Client, LocalCluster

    if scheduler and workers is not None:
        raise EngineError("Give either a scheduler address or a number of local workers, not both.")
    address = scheduler or (os.environ.get(SCHEDULER_ENV) if workers is None else None) or None
    import dask

    if address:
        try:
            with dask.config.set(DASK_LOG_LENGTHS):
                client = Client(address, timeout=f"{timeout}s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise EngineError(f"Cannot reach the Dask scheduler at {address} ({type(exc).__name__}). Start one "
                              f"with `dask scheduler` and workers with `dask worker {address}`, or leave out "
                              f"--scheduler / {SCHEDULER_ENV} to use a local cluster.") from None
        return Engine(client, None, f"Dask scheduler {address}")
    n = local_workers() if workers is None else workers
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise EngineError(f"--workers must be a whole number >= 1, got {workers!r}.")
    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, which fixes glibc's mmap threshold at
    # 128 KiB: every Cholesky workspace is then mapped and unmapped afresh, and the Monte-Carlo ran 2.8x slower
    # on a worker than in-process (benchmarks/bench_engine.py). Our workers keep glibc's adaptive default.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None, **DASK_LOG_LENGTHS}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                               dashboard_address=":0", scheduler_kwargs={"dashboard": dashboard},
                               host="127.0.0.1", preload=[__name__])   # dask_setup below, in every worker
        client = Client(cluster, set_as_default=False)
    return Engine(client, cluster, f"local Dask cluster, {n} worker process{'es' if n > 1 else ''}")


#: How much lower than the server's the CPU priority of local workers is (``nice``): on the machine that serves
#: the app, a theory update or a page render comes before Monte-Carlo chunks, which take the idle cycles.
LOCAL_WORKER_NICENESS = 10


def dask_setup(worker) -> None:
    """Dask's preload hook: a worker of a local cluster (:func:`connect` preloads this module) starts below
    the server's CPU priority, so that on the machine that serves the app a theory update or a page render
    comes before Monte-Carlo chunks, which take the idle cycles. Dask restarts a worker with it too."""
    lower_priority(LOCAL_WORKER_NICENESS)


def lower_priority(niceness: int) -> None:
    """Raise the ``nice`` value of every thread of this process to at least ``niceness`` (never lowers it).

    Linux keeps a nice value per thread (threads started later inherit their creator's), so each thread of
    ``/proc/self/task`` is set; elsewhere the process as a whole.
    """
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
        except OSError:                  # a thread that ended meanwhile
            pass


_SHARED: dict[str, Engine] = {}
_SHARED_LOCK = threading.Lock()


def shared_engine() -> Engine:
    """The engine this process shares between notebook states (opened at first use, closed at exit).

    It connects to ``$EXPLORER_SCHEDULER`` if set, else starts a local cluster (one worker per core).
    """
    with _SHARED_LOCK:
        engine = _SHARED.get("engine")
        if engine is None or engine._closed:
            engine = _SHARED["engine"] = connect()
            atexit.register(engine.close)
        return engine
