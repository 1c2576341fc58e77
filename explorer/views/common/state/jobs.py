"""Background jobs of the explorer's session states (no widgets, no plots).

A :class:`Job` runs on a daemon thread of its own, checks a stop flag between Monte-Carlo batches
(``should_stop``), reports throttled progress and partial results through callbacks, and marks itself
done; its session shows it through a :class:`JobStatus`. :class:`JobRunner` is the machinery every tab's state
holds as a component (``state.job_runner``) to run its jobs (lookup in a shared
:class:`~explorer.runtime.caches.LRU`, start, deferred start, cancel, progress, results handed to the session's
event loop in order); it reads from its state only what :class:`JobHooks` declares. :class:`HasJobs` is the small
mixin that gives a state the parameters its page shows and the public API (forwarders to the runner). A state
declares its jobs once, as :class:`JobSpec` rows of ``job_specs``; refresh, run and cancel follow the declaration.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import param

from explorer.chunks import Executor
from explorer.progress import Cancelled, Progress
from explorer.runtime import engine as dask_engine
from explorer.runtime.caches import LRU
from explorer.runtime.sessions import default_dispatcher
from explorer.views.common.state import errors

__all__ = ["Job", "JobSpec", "JobStatus", "JobHooks", "JobRunner", "HasJobs", "RedrawGate", "call_now", "output",
           "engine_of"]

log = logging.getLogger(__name__)


def output(class_: type | tuple[type, ...], label: str, doc: str) -> param.ClassSelector:
    """A state's output parameter: a core result of type ``class_`` that a job sets, None until then, no widget.

    ``doc`` says what it holds; it is shown as "Output: ``doc``".
    """
    return param.ClassSelector(class_=class_, default=None, allow_None=True, precedence=-1, label=label,
                               doc=f"Output: {doc}")


class JobStatus(param.Parameterized):
    """Status of one kind of background job of one session: feeds a progress bar and a status line."""

    running = param.Boolean(default=False, label="Running", doc="True while a job of this kind computes.")
    progress = param.Number(default=0.0, bounds=(0.0, 1.0), label="Progress",
                            doc="Fraction done of the running (or the last) job, 0 to 1.")
    message = param.String(default="", label="Status", doc="What the job is doing, or how it ended.")
    error = param.String(default="", label="Error",
                         doc="Readable message of the last job's failure; empty when it succeeded.")


#: Longest a background job may compute: past it the job stops at its next check, as if cancelled, and says why.
#: A served app is shared: a job of hours (100,000 SVM refits, 256 repetitions of an experiment) would hold the
#: workers the whole class shares. The command line has no such limit.
MAX_JOB_SECONDS = 30 * 60.0

#: Seconds between two progress updates of a job (each is a message to the browser).
REPORT_INTERVAL = 0.25
#: Seconds between two redraws of partial results, over all the jobs of this process (see :class:`RedrawGate`).
PARTIAL_GAP = 1.0


class RedrawGate:
    """Spaces the redraws of partial results of all the jobs of a process by at least ``gap`` seconds.

    A redraw through HoloViews rebuilds a figure on the server's one event loop (0.1-0.4 s under a class's load);
    five sessions whose Monte-Carlo publishes partial results queued redraws faster than the loop drew them, and
    a student's theory update waited behind them. (A figure patched in place, as the learning curve is, needs no
    gate.) Partial results are a courtesy: the final result is never
    delayed, and a partial result that has waited is drawn as the newest one by then.
    """

    def __init__(self, gap: float):
        self.gap = float(gap)
        self._lock = threading.Lock()
        self._next = 0.0

    def delay(self) -> float:
        """Seconds until the next redraw may be sent; the slot is reserved for the caller."""
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next)
            self._next = at + self.gap
            return at - now


#: The gate the jobs of this process share (the server's sessions share one event loop).
PARTIAL_GATE = RedrawGate(PARTIAL_GAP)


class Job:
    """One background computation: its settings key, a stop flag and a throttled progress report.

    ``post(job, callback)`` hands an update to the session (it drops it when the job was superseded);
    ``publish(job, value)`` shows a result; ``status`` is the session's :class:`JobStatus` of this kind.
    """

    def __init__(self, kind: str, key, attr: str | None, *, status: JobStatus,
                 post: Callable[[Job, Callable[[], None]], None], publish: Callable[[Job, object], None],
                 gate: RedrawGate | None = PARTIAL_GATE):
        self.kind, self.key, self.attr = kind, key, attr
        self.status, self._post, self._publish, self._gate = status, post, publish, gate
        self.result_posted = False     # the final result is on its way: a partial one still waiting is dropped
        self.stop = threading.Event()
        self.done = threading.Event()
        self.deadline = time.monotonic() + MAX_JOB_SECONDS
        self.timed_out = False         # stopped by MAX_JOB_SECONDS, not by the user
        self._last_report = 0.0
        self._latest = None            # the newest partial result, not yet shown
        self._partial_posted = False   # an update that shows it is queued

    def start(self, target: Callable[[], None]) -> None:
        """Run ``target`` on a thread of its own (a daemon: a server can exit while a job runs).

        numpy and LAPACK release the GIL, so jobs of different sessions run side by side.
        """
        def run():
            try:
                target()
            finally:
                self.done.set()
        threading.Thread(target=run, name=f"explorer-{self.kind}", daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self.done.is_set()

    def should_stop(self) -> bool:
        """True once the job is cancelled or superseded, or has run for :data:`MAX_JOB_SECONDS`."""
        if not self.stop.is_set() and time.monotonic() > self.deadline:
            self.timed_out = True
            self.stop.set()
        return self.stop.is_set()

    def report(self, fraction: float, message: str | Progress) -> None:
        """Show the progress (at most every :data:`REPORT_INTERVAL` seconds, and the end): ``message`` is the
        sentence to show, or the core's :class:`~explorer.progress.Progress` shown in its short form."""
        now = time.monotonic()
        if now - self._last_report < REPORT_INTERVAL and fraction < 1.0:
            return
        self._last_report = now
        self._post(self, partial(self.status.param.update, progress=min(max(float(fraction), 0.0), 1.0),
                                 message=str(message)))

    def partial(self, value) -> None:
        """Publish an intermediate result (e.g. the learning curve so far).

        Partial results that arrive while the session is still busy with an earlier one are drawn once, the
        newest: a redraw of a figure costs the session's event loop a tenth of a second or more, and under a
        class's load each queued redraw would delay every other update of the server.
        """
        self._latest = value
        if not self._partial_posted:
            self._partial_posted = True
            wait = 0.0 if self._gate is None else self._gate.delay()
            if wait <= 0:
                self._post(self, self._publish_latest)
            else:  # the newest partial result by then is drawn once the gate opens
                timer = threading.Timer(wait, self._post, (self, self._publish_latest))
                timer.daemon = True
                timer.start()

    def _publish_latest(self) -> None:
        self._partial_posted = False   # first: a partial result arriving from now on queues a new update
        value, self._latest = self._latest, None
        if value is not None and not self.result_posted:
            self._publish(self, value)


def call_now(callback: Callable[[], None]) -> None:
    callback()


@dataclass(frozen=True)
class JobSpec:
    """One kind of background job of a state, declared once in its ``job_specs``.

    Every refresh, the :class:`JobRunner` asks the state's ``_prepare_jobs()`` for its ``inputs`` (a snapshot of
    what the jobs read, taken on the session's thread) and, per spec, shows the result cached under
    ``key(inputs)`` or starts a :class:`Job` that runs ``compute(state, inputs, job)`` on a thread of its own
    (it reads the settings from ``inputs`` only; from ``state`` only what no control changes, its ``executor``).

    Parameters
    ----------
    kind : str
        The job's name: ``state.jobs[kind]`` reports it, ``run(kind)`` and ``cancel(kind)`` act on it.
    output : str or None
        The output parameter its (partial and final) results are shown in.
    cache : LRU
        The cache the sessions share for its results, by key.
    key : callable
        ``key(inputs)``: the hashable key of the result the current settings need, or None when they need none
        now (e.g. another tab's job): a running job and a shown result of that kind are then left as they are.
    compute : callable
        ``compute(state, inputs, job)``: the result, on the job's thread (progress, partial results and stop
        checks through ``job``).
    optional : bool or callable
        The job waits for :meth:`JobRunner.run` (a Run button) unless the state's ``auto_run_parameter`` is
        on; a callable ``optional(inputs)`` decides per settings (e.g. only a long job waits).
    gated : bool
        Its partial results are spaced by :data:`PARTIAL_GATE` (costly redraws); else drawn at once.
    cancellable : bool
        :meth:`JobRunner.cancel` without a kind stops it.
    off : callable or None
        ``off(inputs)``: why the job is switched off for these settings (its job stops, its output is cleared
        and its status says why), or None when it is not.
    not_run : callable or None
        ``not_run(inputs)``: what an optional job that waits says (default: the state's ``not_run_message``).
    rerun_with_any : bool
        A ``run`` of any kind also starts it again after a cancel or a failure (a job every other result needs).
    """

    kind: str
    output: str | None
    cache: LRU
    key: Callable[[Any], Hashable | None]
    compute: Callable[[Any, Any, Job], object]
    optional: bool | Callable[[Any], bool] = False
    gated: bool = False
    cancellable: bool = True
    off: Callable[[Any], str | None] | None = None
    not_run: Callable[[Any], str] | None = None
    rerun_with_any: bool = False


def engine_of(client) -> dask_engine.Engine:
    """The :class:`explorer.runtime.engine.Engine` of a state's ``client``: an Engine as it is, a ``distributed.Client``
    wrapped, None the process's shared engine."""
    if client is None:
        return dask_engine.shared_engine()
    if isinstance(client, dask_engine.Engine):
        return client
    return dask_engine.Engine(client, None, f"Dask scheduler {client.scheduler.address}")


class JobHooks:
    """What a :class:`JobRunner` reads from the state that holds it: the protocol, with its defaults.

    A state declares its jobs in ``job_specs`` (:class:`JobSpec`) and its ``outputs`` and implements
    :meth:`_prepare_jobs`: check the settings (an expected error there stops every job before any starts), set the
    outputs that need no job (:meth:`JobRunner.assign`, ``_assign`` of :class:`HasJobs`) and return the ``inputs``
    the specs read. It may override the other attributes and hooks below. Besides them the runner uses the state's
    parameters (the outputs and ``error``, set together in one ``param.update``) and nothing else; a
    :class:`JobSpec`'s ``compute`` gets the state itself.
    """

    #: The state's jobs, in the order of their statuses (``jobs``).
    job_specs: ClassVar[tuple[JobSpec, ...]] = ()
    #: Every output a refresh sets (the jobs' and the others): cleared together when the settings cannot be computed.
    outputs: ClassVar[tuple[str, ...]] = ()
    #: The Boolean parameter that starts the optional jobs by themselves when on (None: they wait for ``run``).
    auto_run_parameter: ClassVar[str | None] = None
    #: What an optional job that waits for its button says.
    not_run_message: ClassVar[str] = "not run yet: press 'Run'."
    #: What a job says while jobs are deferred (``defer_jobs``).
    deferred_message: ClassVar[str] = "starts once the page has loaded"
    #: Errors a user can cause with the controls: shown as :meth:`describe_error` says, never as a traceback.
    expected_errors: tuple[type[BaseException], ...] = (ValueError, OSError, FloatingPointError,
                                                         dask_engine.EngineError)
    #: The page's own wordings, before those every page shares (its folder's ``errors.WORDING``;
    #: :mod:`explorer.views.common.state.errors`).
    error_wordings: ClassVar[tuple[errors.Wording, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        kinds = [spec.kind for spec in cls.job_specs]
        if len(set(kinds)) != len(kinds):
            raise TypeError(f"{cls.__name__}.job_specs declares a job kind twice: {kinds}. Give each job a kind of "
                            "its own.")

    @classmethod
    def describe_error(cls, err: BaseException) -> str:
        """The message shown for an expected error, in the state's page's words (:mod:`~explorer.views.common.state.errors`)."""
        return errors.describe_error(err, cls.error_wordings)

    def _prepare_jobs(self) -> object:
        """Check the settings, set the outputs that need no job and return the ``inputs`` the :class:`JobSpec` rows
        read (an expected error shows instead of every result)."""
        return None

    def _cancelled_message(self, kind: str, stop: Cancelled) -> str:
        """What the status of a job of ``kind`` says once ``stop`` ended it (a state may write its own sentence from
        ``stop.done``, ``stop.total`` and ``stop.unit``)."""
        return f"cancelled after {stop.done} of {stop.total}"

    def _auto_run(self) -> bool:
        """Whether optional jobs start by themselves when the settings change (else on ``run``)."""
        return bool(self.auto_run_parameter) and bool(getattr(self, self.auto_run_parameter))


class JobRunner:
    """The background jobs of one session state: the component a state holds (``state.job_runner``).

    Each job kind shows its result from a cache shared by the sessions or computes it in a :class:`Job`
    (progress, cancel between steps); :meth:`refresh` changes the state's outputs together in one ``param.update``.
    The runner talks to its ``state`` only through :class:`JobHooks` (what the jobs are, the ``inputs`` snapshot of
    ``_prepare_jobs``, the auto-run switch, the messages, how an expected error reads) and the state's output
    parameters and ``error``.

    Worker threads never touch the session: they hand their updates to :attr:`dispatch`, which applies them in order
    where the session lives (:func:`explorer.runtime.sessions.default_dispatcher`: in a notebook on the
    kernel's event loop, in a script on the thread that made the runner when it calls :meth:`wait`; a served
    session points it at its event loop, :func:`explorer.runtime.sessions.bind_to_session`, through the state's
    ``dispatch``). Jobs run elsewhere (e.g. on Dask workers) report through the same ``Job`` methods, so their
    updates take the same way.
    """

    #: What a closed state says when it is asked to compute.
    closed_message = ("This state was closed (state.close()): it computes nothing more. Create a new state to go "
                      "on computing.")

    def __init__(self, state: JobHooks):
        self.state = state
        self.dispatch: Callable[[Callable[[], None]], None] = default_dispatcher()
        self.specs = {spec.kind: spec for spec in state.job_specs}
        self.statuses = {kind: JobStatus(name=kind) for kind in self.specs}
        self.started = self.closed = False
        self._jobs: dict[str, Job] = {}
        self._wanted: dict[str, object] = {}
        self._refreshing = self._dirty = self._forced = self._deferred = False
        self._forced_kind: str | None = None
        self._pending: dict | None = None

    def refresh(self) -> None:
        """Start (or show from the cache) everything the current settings need (a closed runner says that it is
        closed in the state's ``error``)."""
        if self.closed:
            if self.state.error != self.closed_message:
                self.state.error = self.closed_message
            return
        self.started = True
        if self._refreshing:
            self._dirty = True
            return
        self._refreshing = True
        try:
            self._dirty = True
            while self._dirty:
                self._dirty = False
                self._refresh_once()
        finally:
            self._refreshing = False

    def run(self, kind: str | None = None) -> None:
        """Start the jobs that wait for a button (the optional ones), or start again after a cancel or failure:
        those of ``kind``, or of every kind."""
        if kind is None:
            self._forced = True
        else:
            self._forced_kind = kind
        try:
            self.refresh()
        finally:
            self._forced, self._forced_kind = False, None

    def cancel(self, kind: str | None = None) -> None:
        """Stop the running job of ``kind`` (default: every cancellable kind) at its next step; partial results
        stay."""
        kinds = [kind] if kind else [spec.kind for spec in self.specs.values() if spec.cancellable]
        for k in kinds:
            job = self._jobs.get(k)
            if job is not None and job.alive:
                job.stop.set()
                self.statuses[k].message = "cancelling…"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background jobs finish; True if they did within ``timeout`` seconds. The updates
        that arrived by then are shown before it returns, also on a timeout (in a notebook they would otherwise
        wait for the end of the cell, in a script for the next ``wait``): a script follows a job's progress by
        calling ``wait`` with a short timeout until it returns True."""
        deadline = None if timeout is None else time.monotonic() + timeout
        flush = getattr(self.dispatch, "flush", None)
        while True:
            jobs = list(self._jobs.values())
            for job in jobs:
                remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                if not job.done.wait(remaining):
                    if flush is not None:
                        flush()
                    return False
            if flush is None:
                return True
            flush()  # the results may start further jobs (e.g. Monte-Carlo once the theory is known)
            if all(job in jobs or not job.alive for job in self._jobs.values()):
                return True

    def defer(self) -> None:
        """Start no background job until :meth:`start` (results already cached are still shown)."""
        self._deferred = True

    def start(self) -> None:
        """Start the jobs the current settings need and show every result that is ready by now."""
        self._deferred = False
        self.refresh()

    def close(self) -> None:
        """Cancel every job and drop their updates (the session ended)."""
        self.closed = True
        for job in self._jobs.values():
            job.stop.set()

    def assign(self, name: str, value) -> None:
        """Set an output of the state; during a refresh the outputs are set together at its end (one redraw)."""
        if self._pending is not None:
            self._pending[name] = value
        elif getattr(self.state, name) is not value:
            setattr(self.state, name, value)

    def refuse(self, message: str) -> None:
        """Show ``message`` and no result (e.g. a refused upload): nothing of the earlier data stays on screen."""
        self._clear_outputs()
        self.state.error = message

    def _refresh_once(self) -> None:
        state = self.state
        self._pending = {}
        try:
            self._refresh_jobs()
            error = ""
        except state.expected_errors as err:
            self._clear_outputs()
            error = state.describe_error(err)
        changed = {k: v for k, v in self._pending.items() if getattr(state, k) is not v}
        self._pending = None
        state.param.update(**changed, error=error)

    def _refresh_jobs(self) -> None:
        inputs = self.state._prepare_jobs()
        for spec in self.specs.values():
            reason = spec.off(inputs) if spec.off is not None else None
            if reason is not None:
                self._switch_off(spec, reason)
                continue
            key = spec.key(inputs)
            if key is not None:  # None: not needed now; its running job and its shown result stay
                self._request(spec, key, inputs)

    def _switch_off(self, spec: JobSpec, reason: str) -> None:
        """Stop the job of ``spec``, clear its output and say ``reason`` (the settings switched it off)."""
        job = self._jobs.pop(spec.kind, None)
        if job is not None:
            job.stop.set()
        self._wanted.pop(spec.kind, None)
        if spec.output is not None:
            self.assign(spec.output, None)
        self.statuses[spec.kind].param.update(running=False, progress=0.0, message=reason, error="")

    def _clear_outputs(self) -> None:
        """The settings cannot be computed: show nothing rather than results of other settings."""
        for job in self._jobs.values():
            job.stop.set()
        self._jobs.clear()
        self._wanted.clear()
        for name in self.state.outputs:
            self.assign(name, None)
        for status in self.statuses.values():
            status.param.update(running=False, progress=0.0, message="", error="")

    def _is_forced(self, spec: JobSpec) -> bool:
        return (self._forced or self._forced_kind == spec.kind
                or (spec.rerun_with_any and self._forced_kind is not None))

    def _waits(self, spec: JobSpec, inputs) -> bool:
        """Whether the job of ``spec`` waits for :meth:`run` (an optional job while nothing starts it)."""
        optional = spec.optional(inputs) if callable(spec.optional) else spec.optional
        return optional and not (self.state._auto_run() or self._is_forced(spec))

    def _request(self, spec: JobSpec, key, inputs) -> None:
        """Show the cached result for ``key``, or start (or keep) the job of ``spec`` computing it.

        A job for the same settings that is running, was cancelled or failed is left alone (its partial
        result and message stay) unless :meth:`run` forces a new start. A finished job's result is shown from
        the cache even if the job's own final update never arrived. While jobs are deferred
        (:meth:`defer`) nothing starts.
        """
        kind, attr, cache = spec.kind, spec.output, spec.cache
        self._wanted[kind] = key
        status, job = self.statuses[kind], self._jobs.get(kind)
        hit = cache.get(key)
        if hit is None and job is not None and job.key == key and (job.alive or not self._is_forced(spec)):
            return
        if job is not None:
            job.stop.set()
            del self._jobs[kind]  # superseded: its updates are dropped from now on
        if hit is not None:
            # our own job computed it (its final update may still be on its way, or have been lost): "done"
            own = job is not None and job.key == key and not job.alive
            if attr is not None:
                self.assign(attr, hit)
            status.param.update(running=False, progress=1.0, message="done" if own else "done (cached)", error="")
            return
        if attr is not None:
            self.assign(attr, None)
        if self._waits(spec, inputs):
            message = spec.not_run(inputs) if spec.not_run is not None else self.state.not_run_message
            status.param.update(running=False, progress=0.0, error="", message=message)
            return
        if self._deferred:
            status.param.update(running=False, progress=0.0, error="", message=self.state.deferred_message)
            return
        job = Job(kind, key, attr, status=status, post=self._post, publish=self._publish,
                  gate=PARTIAL_GATE if spec.gated else None)
        self._jobs[kind] = job
        status.param.update(running=True, progress=0.0, message="starting…", error="")
        job.start(partial(self._execute, job, cache, partial(spec.compute, self.state, inputs)))

    def _execute(self, job: Job, cache: LRU, work: Callable[[Job], object]) -> None:
        """Worker thread: run ``work``, cache its result and hand the outcome to the session."""
        state = self.state
        try:
            result = work(job)
        except Cancelled as stop:
            why = (f"Stopped after {stop.done} of {stop.total}: a job of the app computes for at most "
                   f"{MAX_JOB_SECONDS / 60:g} minutes, so that no one holds the workers the others share. Lower the "
                   "sample counts (or repetitions), or run it from the command line.") if job.timed_out else ""
            self._post(job, partial(self._finish, job, None, state._cancelled_message(job.kind, stop), why))
        except state.expected_errors as err:
            self._post(job, partial(self._finish, job, None, "failed", state.describe_error(err)))
        except Exception as err:  # noqa: BLE001 - a bug must not kill the session; log it, show it
            log.exception("background job %s of %s failed", job.kind, type(state).__name__)
            self._post(job, partial(self._finish, job, None, "failed",
                                    f"Unexpected error ({type(err).__name__}: {err}); see the server log."))
        else:
            cache.put(job.key, result)
            job.result_posted = True
            self._post(job, partial(self._finish, job, result, "done", ""))

    def _post(self, job: Job, callback: Callable[[], None]) -> None:
        """Run ``callback`` in the session's context, unless ``job`` has been superseded meanwhile."""
        def guarded():
            if not self.closed and self._jobs.get(job.kind) is job:
                callback()
        if not self.closed:
            self.dispatch(guarded)

    def _publish(self, job: Job, value) -> None:
        if job.attr is not None and self._wanted.get(job.kind) == job.key:
            self.assign(job.attr, value)

    def _finish(self, job: Job, result, message: str, error: str) -> None:
        if result is not None:
            self._publish(job, result)
        status = self.statuses[job.kind]
        status.param.update(running=False, progress=1.0 if result is not None else status.progress,
                            message=message, error=error)


class HasJobs(JobHooks, param.Parameterized):
    """A small mixin, not the machinery: the three parameters a page shows and the public API (forwarders) of the
    :class:`JobRunner` a state holds, ``self.job_runner = JobRunner(self)`` in its ``__init__``. A job's Monte-Carlo
    runs on Dask (:attr:`executor`): the job's thread only submits seeded chunks and waits for them."""

    client = param.Parameter(default=None, precedence=-1, label="Dask engine",
                             doc="Where the Monte-Carlo runs: an explorer.runtime.engine.Engine, a distributed.Client, "
                                 "or None for the engine this process shares (a local cluster of worker "
                                 "processes, started at first use; $EXPLORER_SCHEDULER if set).")
    error = param.String(default="", precedence=-1, label="Error",
                         doc="Output: why the current settings cannot be computed; empty when they can.")
    notice = param.String(default="", precedence=-1, label="Notice",
                          doc="Output: why a typed value was refused, a link parameter ignored, or another warning "
                              "that does not stop the computation; empty when none.")

    job_runner: JobRunner

    @property
    def jobs(self) -> dict[str, JobStatus]:
        """The status of each job kind, in the order of ``job_specs``."""
        return self.job_runner.statuses

    @property
    def dispatch(self) -> Callable[[Callable[[], None]], None]:
        """Where the jobs' updates are applied (:attr:`JobRunner.dispatch`); a session assigns its own."""
        return self.job_runner.dispatch

    @dispatch.setter
    def dispatch(self, dispatch: Callable[[Callable[[], None]], None]) -> None:
        self.job_runner.dispatch = dispatch

    @property
    def started(self) -> bool:
        """True once :meth:`refresh` has run (before that, changing a control computes nothing)."""
        return self.job_runner.started

    #: ``started``, settable (a test marks a state started without computing): the runner's flag.
    _started = started.setter(lambda self, value: setattr(self.job_runner, "started", bool(value)))

    @property
    def engine(self) -> dask_engine.Engine:
        """The :class:`explorer.runtime.engine.Engine` of ``client`` (the process's shared engine if it is None)."""
        return engine_of(self.client)

    @property
    def executor(self) -> Executor:
        """The executor the jobs hand their Monte-Carlo chunks to (Dask workers of :attr:`engine`)."""
        return self.engine.executor

    def refresh(self) -> None:
        """Start (or show from the cache) what the settings need (:meth:`JobRunner.refresh`)."""
        self.job_runner.refresh()

    def run(self, kind: str | None = None) -> None:
        """Start the jobs of ``kind`` (default: every kind) that wait for a button (:meth:`JobRunner.run`)."""
        self.job_runner.run(kind)

    def cancel(self, kind: str | None = None) -> None:
        """Stop the running job of ``kind`` (default: every cancellable kind) at its next step."""
        self.job_runner.cancel(kind)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the jobs finish; True if they did within ``timeout`` s (:meth:`JobRunner.wait`)."""
        return self.job_runner.wait(timeout)

    def defer_jobs(self) -> None:
        """Start no background job until :meth:`start_jobs` (results already cached are still shown)."""
        self.job_runner.defer()

    def start_jobs(self) -> None:
        """Start the jobs the current settings need and show every result that is ready by now."""
        self.job_runner.start()

    def close(self) -> None:
        """Cancel every job and drop their updates (the session ended)."""
        self.job_runner.close()

    def refuse(self, message: str) -> None:
        """Show ``message`` and no result (e.g. a refused upload): nothing of the earlier data stays on screen."""
        self.job_runner.refuse(message)

    def _assign(self, name: str, value) -> None:
        self.job_runner.assign(name, value)

    def _on_change(self, *events) -> None:
        if self.started:
            self.refresh()
