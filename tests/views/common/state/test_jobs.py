"""The job machinery of the session states: partial results are coalesced, progress is throttled, and a state's
declared jobs (JobSpec) start, wait for Run, switch off, cancel and come from the cache as declared."""
import threading
import time

import param
import pytest

from explorer.progress import Cancelled
from explorer.runtime.caches import LRU
from explorer.views.common.state import jobs
from explorer.views.common.state.jobs import (
    REPORT_INTERVAL,
    HasJobs,
    Job,
    JobHooks,
    JobRunner,
    JobSpec,
    JobStatus,
    RedrawGate,
)


def _job(gate=None):
    queued, shown = [], []
    job = Job("curve", "key", "curve", status=JobStatus(), post=lambda job, callback: queued.append(callback),
              publish=lambda job, value: shown.append(value), gate=gate or RedrawGate(0.0))
    return job, queued, shown


def test_partial_results_queued_while_the_session_is_busy_are_drawn_once_the_newest():
    job, queued, shown = _job()
    for k in range(5):
        job.partial(k)
    assert len(queued) == 1 and shown == []
    queued.pop()()
    assert shown == [4]
    job.partial(5)  # after the update ran, the next partial result queues a new one
    assert len(queued) == 1
    queued.pop()()
    assert shown == [4, 5]


def test_progress_is_reported_at_most_every_interval_but_always_at_the_end():
    job, queued, _ = _job()
    job.report(0.1, "a")
    job.report(0.2, "b")  # within the interval: dropped
    job.report(1.0, "done")  # the end always shows
    assert len(queued) == 2 and REPORT_INTERVAL > 0
    for callback in queued:
        callback()
    assert job.status.progress == 1.0 and job.status.message == "done"


def test_partial_redraws_of_all_jobs_are_spaced_by_the_gate_and_the_newest_value_is_drawn():
    gate = RedrawGate(0.3)
    first, first_queue, first_shown = _job(gate)
    second, second_queue, second_shown = _job(gate)
    first.partial("a")
    assert len(first_queue) == 1  # the gate was open: at once
    started = time.monotonic()
    second.partial("b")
    second.partial("c")  # waits with "b": only the newest is drawn
    assert second_queue == []
    while not second_queue and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert time.monotonic() - started >= 0.25 and len(second_queue) == 1
    first_queue.pop()()
    second_queue.pop()()
    assert first_shown == ["a"] and second_shown == ["c"]


def test_a_partial_result_still_waiting_when_the_final_one_is_posted_is_dropped():
    job, queued, shown = _job(RedrawGate(0.0))
    job.partial("partial")
    job.result_posted = True  # JobRunner._execute posts the final result
    queued.pop()()
    assert shown == []


def test_a_job_past_its_time_limit_stops_and_says_why(monkeypatch):
    """A served app is shared: a job that would hold the workers for hours stops at the app's limit, with a message
    that says so (a cancel by the user has none)."""
    from explorer.views.common.state import jobs
    from explorer.views.svm_bootstrap import SVMState

    job, _, _ = _job()
    assert not job.should_stop() and not job.timed_out
    job.deadline = time.monotonic() - 1.0
    assert job.should_stop() and job.timed_out
    monkeypatch.setattr(jobs, "MAX_JOB_SECONDS", 0.0)  # every job is past its limit at its first check
    state = SVMState(dataset="crabs", curve_grid=[1.0], curve_mc_samples=100, mc_samples=50, holdout=5)
    state.refresh()
    assert state.wait(120)
    status = state.jobs["curve"]
    assert status.message.startswith("cancelled after 0 of 100")
    assert status.error.startswith("Stopped after 0 of 100: a job of the app computes for at most 0 minutes")
    state.close()


# --------------------------------------------------------------------------- jobs declared by a state (JobSpec)


class _Gate(RedrawGate):
    """A gate that counts the partial redraws it spaced."""

    def __init__(self):
        super().__init__(0.0)
        self.calls = 0

    def delay(self) -> float:
        self.calls += 1
        return super().delay()


def _square(state, x: int, job) -> int:
    """Counted in `state.computed`; waits on `state.hold` between steps, cancellable there (3 steps)."""
    state.computed.append(("square", x))
    for step in range(3):
        if not state.hold.wait(10) or job.should_stop():
            raise Cancelled(step, 3, "steps")
    return x * x


def _cube(state, x: int, job) -> int:
    state.computed.append(("cube", x))
    job.partial(-1)  # a partial result first, as a Monte-Carlo job publishes
    return x ** 3


def _tiny_state_class():
    """A state that declares two jobs: ``square`` (starts by itself, cancellable, drawn at once) and ``cube``
    (optional: waits for Run unless ``auto`` is on; gated; not stopped by Cancel without a kind; switched off
    for x = 0). Each class has caches of its own."""

    class Tiny(HasJobs):
        x = param.Integer(default=2, bounds=(None, None), doc="The input; negative values are refused.")
        auto = param.Boolean(default=False, doc="Start the optional job by itself.")
        square = param.Parameter(default=None, precedence=-1, doc="Output of the square job.")
        cube = param.Parameter(default=None, precedence=-1, doc="Output of the cube job.")

        job_specs = (
            JobSpec("square", "square", LRU(8), key=lambda x: ("square", x), compute=_square),
            JobSpec("cube", "cube", LRU(8), key=lambda x: ("cube", x), compute=_cube, optional=True, gated=True,
                    cancellable=False, off=lambda x: "cube: switched off for x = 0" if x == 0 else None,
                    not_run=lambda x: f"cube of {x} not run yet: press 'Run cube'."),
        )
        outputs = ("square", "cube")
        auto_run_parameter = "auto"

        def __init__(self, **params):
            super().__init__(**params)
            self.job_runner = JobRunner(self)
            self.computed, self.hold = [], threading.Event()
            self.hold.set()
            self.param.watch(self._on_change, ["x", "auto"])

        def _prepare_jobs(self) -> int:
            if self.x < 0:
                raise ValueError(f"`x` must be ≥ 0, got {self.x}.")
            return int(self.x)

    return Tiny


@pytest.fixture
def tiny():
    states = []

    def make(cls=None, **params):
        state = (cls or _tiny_state_class())(**params)
        states.append(state)
        return state
    yield make
    for state in states:
        state.close()


def test_a_declared_job_starts_by_itself_and_an_optional_one_waits_for_run(tiny):
    state = tiny(x=3)
    state.refresh()
    assert state.wait(10)
    assert state.square == 9 and state.jobs["square"].message == "done"
    assert state.cube is None and state.jobs["cube"].message == "cube of 3 not run yet: press 'Run cube'."
    state.run("cube")
    assert state.wait(10)
    assert state.cube == 27 and state.jobs["cube"].message == "done"
    assert state.computed == [("square", 3), ("cube", 3)]


def test_the_auto_run_parameter_starts_the_optional_job_and_the_cache_serves_another_state(tiny):
    first = tiny(x=4, auto=True)
    first.refresh()
    assert first.wait(10) and (first.square, first.cube) == (16, 64)
    second = tiny(type(first), x=4, auto=True)
    second.refresh()  # same settings, same caches: nothing computes
    assert second.wait(10) and (second.square, second.cube) == (16, 64)
    assert second.computed == [] and second.jobs["cube"].message == "done (cached)"


def test_a_job_switched_off_by_the_settings_says_why_and_shows_nothing(tiny):
    state = tiny(x=2, auto=True)
    state.refresh()
    assert state.wait(10) and state.cube == 8
    state.x = 0
    assert state.wait(10)
    assert state.cube is None and state.square == 0
    assert state.jobs["cube"].message == "cube: switched off for x = 0"


def test_refused_settings_start_no_job_and_clear_every_output(tiny):
    state = tiny(x=2)
    state.refresh()
    assert state.wait(10) and state.square == 4
    state.x = -1
    assert state.wait(10)
    assert state.error == "`x` must be ≥ 0, got -1." and state.square is None
    assert state.computed == [("square", 2)]


def test_cancel_stops_the_cancellable_jobs_and_run_starts_them_again(tiny):
    state = tiny(x=5, auto=True)
    state.hold.clear()  # the square job waits at its first step
    state.refresh()
    state.cancel()  # every cancellable kind: the square job, not the cube job
    state.hold.set()
    assert state.wait(10)
    assert state.square is None and state.jobs["square"].message == "cancelled after 0 of 3"
    assert state.cube == 125 and state.jobs["cube"].message == "done"
    state.refresh()  # the same settings: a cancelled job stays cancelled ...
    assert state.wait(10) and state.square is None
    state.run("square")  # ... until Run
    assert state.wait(10) and state.square == 25 and state.jobs["square"].message == "done"


def test_only_the_gated_job_spaces_its_partial_redraws(tiny, monkeypatch):
    gate = _Gate()
    monkeypatch.setattr(jobs, "PARTIAL_GATE", gate)
    state = tiny(x=6, auto=True)
    state.refresh()
    assert state.wait(10) and state.cube == 216
    assert gate.calls == 1  # the cube job's partial result; the square job publishes none through it

    def square_with_partial(state, x, job):  # an ungated job that publishes a partial result
        job.partial(0)
        return x * x
    class Partial(HasJobs):
        square = param.Parameter(default=None)
        job_specs = (JobSpec("square", "square", LRU(8), key=lambda x: x, compute=square_with_partial),)
        outputs = ("square",)

        def __init__(self, **params):
            super().__init__(**params)
            self.job_runner = JobRunner(self)

        def _prepare_jobs(self) -> int:
            return 7

    other = tiny(Partial)
    other.refresh()
    assert other.wait(10) and other.square == 49
    assert gate.calls == 1  # drawn at once, not through the gate


def test_a_state_that_declares_a_job_kind_twice_is_refused():
    spec = JobSpec("a", "out", LRU(1), key=lambda i: i, compute=lambda state, i, job: i)
    with pytest.raises(TypeError, match="declares a job kind twice"):
        type("Twice", (HasJobs,), {"job_specs": (spec, spec)})


# --------------------------------------------------------------------------- the runner's protocol (JobHooks)


class _Bare(JobHooks, param.Parameterized):
    """A state that holds a JobRunner without the HasJobs mixin: only the JobHooks protocol, its outputs and
    ``error``."""

    total = param.Integer(default=3, doc="The input.")
    double = param.Parameter(default=None, doc="Output: twice the total, from the job.")
    half = param.Parameter(default=None, doc="Output: half the total, set with no job.")
    error = param.String(default="", doc="Why the settings cannot be computed.")

    job_specs = (JobSpec("double", "double", LRU(4), key=lambda t: ("double", t), compute=lambda s, t, job: 2 * t),)
    outputs = ("double", "half")
    expected_errors = (KeyError,)
    error_wordings = ()

    def __init__(self, **params):
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self.updates = []
        self.param.watch(lambda *events: self.updates.append(sorted(e.name for e in events)),
                         ["double", "half", "error"])

    def _prepare_jobs(self) -> int:
        if self.total < 0:
            raise KeyError("total")
        if self.total > 100:
            raise ValueError("too large")  # not one of this state's expected errors
        self.job_runner.assign("half", self.total / 2)
        return int(self.total)


def test_a_runner_needs_only_the_hooks_and_sets_the_outputs_and_error_together():
    state = _Bare(total=5)
    runner = state.job_runner
    runner.refresh()  # a script's dispatcher: the job's updates are applied by ``wait``
    assert state.updates == [["half"]] and state.double is None
    assert runner.wait(10) and runner.started
    assert (state.double, state.half, state.error) == (10, 2.5, "")
    assert runner.statuses["double"].message == "done" and state.updates == [["half"], ["double"]]
    state.updates.clear()
    state.total = -1
    runner.refresh()  # an expected error of _prepare_jobs: every output cleared, error set, in one update
    assert (state.double, state.half) == (None, None) and state.error == "KeyError: 'total'"
    assert state.updates == [["double", "error", "half"]]
    state.total = 101
    with pytest.raises(ValueError, match="too large"):  # the state's expected_errors, not the default ones
        runner.refresh()
    runner.close()
    runner.refresh()
    assert runner.closed and state.error == JobRunner.closed_message


def test_the_state_forwards_to_its_runner_and_a_session_may_assign_its_dispatch(tiny):
    state = tiny(x=3)
    assert state.jobs is state.job_runner.statuses and not state.started
    seen = []

    def dispatch(callback):
        seen.append(callback)
        callback()
    state.dispatch = dispatch  # what a session does (session_dispatcher(doc))
    assert state.job_runner.dispatch is dispatch
    state.refresh()
    assert state.started and state.wait(10) and state.square == 9 and seen
    state.x = 4  # started: a change refreshes by itself
    assert state.wait(10) and state.square == 16
    state.close()
    assert state.job_runner.closed
    state.x = 5
    assert state.square == 16 and state.error == JobRunner.closed_message


def test_a_state_marked_started_refreshes_on_a_change_without_a_first_refresh(tiny):
    state = tiny(x=3)
    state.x = 4  # not started: nothing computes
    assert state.square is None and state.jobs["square"].message == ""
    state._started = True
    assert state.started and state.job_runner.started
    state.x = 5
    assert state.wait(10) and state.square == 25
