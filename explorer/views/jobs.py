"""Background jobs and result caches of the explorer's session state (no widgets, no plots).

A :class:`Job` runs on a daemon thread of its own, checks a stop flag between Monte-Carlo batches
(``should_stop``), reports throttled progress and partial results through callbacks, and marks itself
done; its session shows it through a :class:`JobStatus`. :class:`LRU` is the result cache shared by all
sessions of a server.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from functools import partial
from typing import Callable

import numpy as np
import param

__all__ = ["LRU", "Job", "JobStatus", "call_now"]


class LRU:
    """A small thread-safe least-recently-used cache shared by all sessions.

    At most ``maxsize`` entries and, if ``weigh`` is given, at most ``max_weight`` in total (the newest
    entry is always kept).
    """

    def __init__(self, maxsize: int, weigh: Callable[[object], float] | None = None, max_weight: float = np.inf):
        self.maxsize, self.weigh, self.max_weight = maxsize, weigh, max_weight
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > 1 and (len(self._data) > self.maxsize or self._weight() > self.max_weight):
                self._data.popitem(last=False)

    def _weight(self) -> float:
        return sum(map(self.weigh, self._data.values())) if self.weigh else 0.0

    def get_or_compute(self, key, compute: Callable[[], object]):
        value = self.get(key)
        if value is None:
            value = compute()  # outside the lock: other sessions go on meanwhile
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()



class JobStatus(param.Parameterized):
    """Status of one kind of background job of one session: feeds a progress bar and a status line."""

    running = param.Boolean(default=False, label="Running", doc="True while a job of this kind computes.")
    progress = param.Number(default=0.0, bounds=(0.0, 1.0), label="Progress",
                            doc="Fraction done of the running (or the last) job, 0 to 1.")
    message = param.String(default="", label="Status", doc="What the job is doing, or how it ended.")
    error = param.String(default="", label="Error",
                         doc="Readable message of the last job's failure; empty when it succeeded.")


class Job:
    """One background computation: its settings key, a stop flag and a throttled progress report.

    ``post(job, callback)`` hands an update to the session (it drops it when the job was superseded);
    ``publish(job, value)`` shows a result; ``status`` is the session's :class:`JobStatus` of this kind.
    """

    def __init__(self, kind: str, key, attr: str | None, *, status: JobStatus,
                 post: Callable[["Job", Callable[[], None]], None], publish: Callable[["Job", object], None]):
        self.kind, self.key, self.attr = kind, key, attr
        self.status, self._post, self._publish = status, post, publish
        self.stop = threading.Event()
        self.done = threading.Event()
        self._last_report = 0.0

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
        return self.stop.is_set()

    def report(self, fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - self._last_report < 0.1 and fraction < 1.0:
            return
        self._last_report = now
        self._post(self, partial(self.status.param.update, progress=min(max(float(fraction), 0.0), 1.0),
                                 message=message))

    def partial(self, value) -> None:
        """Publish an intermediate result (e.g. the learning curve so far)."""
        self._post(self, partial(self._publish, self, value))


def call_now(callback: Callable[[], None]) -> None:
    callback()
