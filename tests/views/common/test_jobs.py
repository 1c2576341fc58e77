"""The job machinery of the session states: partial results are coalesced, progress is throttled, sessions
asking for the same result share one computation."""
import re
import time

import param

from explorer.progress import Cancelled
from explorer.views.common.caches import LRU
from explorer.views.common.jobs import REPORT_INTERVAL, BackgroundJobs, Job, JobStatus, RedrawGate


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
    job.result_posted = True  # BackgroundJobs._execute posts the final result
    queued.pop()()
    assert shown == []


# --------------------------------------------------------------- sessions asking for the same result share it

class _Sum(BackgroundJobs):
    """A state with one job kind whose work the test controls (its result is shared through ``cache``)."""

    _job_kinds = ("sum",)
    _outputs = ("total",)
    total = param.Parameter(default=None, doc="Output: the job's result.")

    def __init__(self, cache: LRU, work, **params):
        super().__init__(**params)
        self._cache, self._work = cache, work
        self._init_jobs()

    def _refresh_outputs(self) -> None:
        self._request("sum", ("same settings",), "total", self._cache, self._work, optional=False)


def _counting_work(steps: int = 40, pause: float = 0.02):
    """A computation that counts its runs, reports each step and stops when asked."""
    calls = []

    def work(run):
        calls.append(run)
        for k in range(steps):
            if run.should_stop():
                raise Cancelled(k, steps, "steps")
            run.report(k / steps, f"{k}/{steps} steps")
            run.partial(k)
            time.sleep(pause)
        return steps

    return work, calls


def test_sessions_asking_for_the_same_result_share_one_computation():
    cache, (work, calls) = LRU(4), _counting_work()
    first, second = _Sum(cache, work), _Sum(cache, work)
    first.refresh()
    time.sleep(0.1)
    second.refresh()  # the same settings while the first computes
    assert second.jobs["sum"].running
    assert first.wait(30) and second.wait(30)
    assert len(calls) == 1
    for state in (first, second):
        assert state.total == 40 and state.jobs["sum"].message == "done" and not state.jobs["sum"].running
    third = _Sum(cache, work)
    third.refresh()  # afterwards: from the cache
    assert third.total == 40 and third.jobs["sum"].message == "done (cached)" and len(calls) == 1


def test_a_session_that_cancels_leaves_the_others_their_computation():
    cache, (work, calls) = LRU(4), _counting_work()
    first, second = _Sum(cache, work), _Sum(cache, work)
    first.refresh()
    second.refresh()
    time.sleep(0.1)
    first.cancel()
    assert first.wait(5) and first.jobs["sum"].message.startswith("cancelled")
    assert first.total is not None and first.total < 39  # its partial result stays
    assert second.jobs["sum"].running
    assert second.wait(30) and second.total == 40 and second.jobs["sum"].message == "done"
    assert len(calls) == 1


def test_the_computation_stops_when_every_session_has_cancelled():
    cache, (work, calls) = LRU(4), _counting_work(steps=400)
    first, second = _Sum(cache, work), _Sum(cache, work)
    first.refresh()
    second.refresh()
    time.sleep(0.1)
    second.close()  # a session ends
    first.cancel()
    assert first.wait(5) and second.wait(5)
    assert re.fullmatch(r"cancelled after \d+ of 400", first.jobs["sum"].message), first.jobs["sum"].message
    assert cache.get(("same settings",)) is None and not cache.runs  # nothing cached, nothing left running
    assert len(calls) == 1


def test_a_failed_shared_computation_is_reported_to_every_session():
    def fail(run):
        time.sleep(0.2)
        raise ValueError("bad settings")

    cache = LRU(4)
    first, second = _Sum(cache, fail), _Sum(cache, fail)
    first.refresh()
    second.refresh()
    assert first.wait(5) and second.wait(5)
    for state in (first, second):
        assert state.jobs["sum"].message == "failed" and state.jobs["sum"].error == "bad settings"
