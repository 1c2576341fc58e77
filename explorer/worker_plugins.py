"""Dask worker plugins of the explorer's local clusters (imported by :func:`explorer.engine.connect` only)."""

from __future__ import annotations

import os

from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["LowerPriority", "lower_priority"]


class LowerPriority(WorkerPlugin):
    """Lowers the CPU priority of every thread of its worker process (Linux ``nice``).

    Registered on local clusters only: their workers share the cores of the server's event loop, and a theory
    update or a page render should come before Monte-Carlo chunks, which take the idle cycles. A worker that
    Dask restarts gets the plugin again.
    """

    name = "explorer-lower-priority"
    idempotent = True

    def __init__(self, niceness: int):
        self.niceness = niceness

    def setup(self, worker) -> None:
        lower_priority(self.niceness)


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
