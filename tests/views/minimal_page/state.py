"""The minimal page's session state: one control (``count``) and one output (``squares``), computed on refresh."""
from __future__ import annotations

import param

from explorer.views.common.state.declarations import control
from explorer.views.common.state.jobs import HasJobs, JobRunner
from explorer.views.common.state.values import CheckedState
from tests.views.minimal_page.errors import WORDING

__all__ = ["MinimalState"]


class MinimalState(CheckedState, HasJobs):
    """The squares 1², 2², ..., count²; a count of 7 fails (to show the page's own error wording)."""

    count = param.Integer(default=4, bounds=(1, 9), label="Count", doc="How many squares the page lists.",
                          metadata=control("Minimal", invalidates=("jobs",)))
    squares = param.Parameter(default=None, precedence=-1, label="Squares", doc="Output: the squares.")

    job_specs = ()
    outputs = ("squares",)
    expected_errors = (ZeroDivisionError, ValueError)
    error_wordings = WORDING

    def __init__(self, **params):
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self.param.watch(lambda *events: self.refresh(), ["count"])

    def _prepare_jobs(self) -> None:
        if self.count == 7:
            raise ZeroDivisionError("seven is unlucky")
        self.job_runner.assign("squares", tuple(k * k for k in range(1, self.count + 1)))
