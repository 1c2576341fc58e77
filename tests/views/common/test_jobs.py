"""The job machinery of the session states: partial results are coalesced, progress is throttled."""
import time

from explorer.views.common.jobs import REPORT_INTERVAL, Job, JobStatus, RedrawGate


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


def test_a_job_past_its_time_limit_stops_and_says_why(monkeypatch):
    """A served app is shared: a job that would hold the workers for hours stops at the app's limit, with a message
    that says so (a cancel by the user has none)."""
    from explorer.views.common import jobs
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
