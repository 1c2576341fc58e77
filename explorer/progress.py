"""Progress, stopping and partial results of long computations (shared by every paper's Monte-Carlo).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["Cancelled", "Progress"]

#: ``progress(done, total)``: called after every batch of bootstrap samples.
Progress = Callable[[int, int], None]


class Cancelled(Exception):
    """Raised when ``should_stop()`` returns True between two batches of bootstrap samples."""

    def __init__(self, done: int, total: int):
        super().__init__(f"Bootstrap cancelled after {done} of {total} samples.")
        self.done, self.total = done, total
