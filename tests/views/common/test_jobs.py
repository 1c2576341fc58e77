"""The job machinery of the session states: partial results are coalesced, progress is throttled."""
from explorer.views.common.jobs import REPORT_INTERVAL, Job, JobStatus


def _job():
    queued, shown = [], []
    job = Job("curve", "key", "curve", status=JobStatus(), post=lambda job, callback: queued.append(callback),
              publish=lambda job, value: shown.append(value))
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
