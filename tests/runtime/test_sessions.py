"""Where job updates go: a notebook's kernel loop (in order, flushed by ``wait``), and a closed state says so."""
import subprocess
import sys
import threading
import time

import pytest

from explorer.runtime.sessions import default_dispatcher, kernel_dispatcher
from explorer.views.gp_bootstrap.state import GPBootstrapState

TIMEOUT = 300  # Dask workers on a busy machine


class FakeLoop:
    """Stands in for the kernel's tornado IOLoop: records the callbacks other threads schedule."""

    def __init__(self):
        self.scheduled = []

    def add_callback(self, callback):
        self.scheduled.append(callback)


def test_kernel_dispatcher_applies_updates_from_threads_on_its_own_thread_in_order():
    loop, applied = FakeLoop(), []
    dispatch = kernel_dispatcher(loop)
    worker = threading.Thread(target=lambda: [dispatch(lambda i=i: applied.append(i)) for i in range(5)])
    worker.start()
    worker.join()
    assert applied == [] and len(loop.scheduled) == 5  # nothing ran on the worker thread

    other = threading.Thread(target=dispatch.flush)  # a flush off the kernel's thread does nothing
    other.start()
    other.join()
    assert applied == []

    loop.scheduled[0]()  # the first scheduled call applies the whole queue, oldest first
    assert applied == [0, 1, 2, 3, 4]
    for callback in loop.scheduled[1:]:
        callback()
    assert applied == [0, 1, 2, 3, 4]


@pytest.mark.usefixtures("empty_view_caches")  # nothing cached: the job computes
def test_in_a_script_updates_from_job_threads_wait_for_the_scripts_wait():
    """Applied on a job's thread, an update could change a figure while the script's thread draws it
    ("dictionary keys changed during iteration" in HoloViews' get_root): a script's updates wait for ``wait``."""
    applied = []
    dispatch = default_dispatcher()
    dispatch(lambda: applied.append(0))  # from the script's own thread (e.g. a cancel): at once
    assert applied == [0]
    worker = threading.Thread(target=lambda: [dispatch(lambda i=i: applied.append(i)) for i in range(1, 4)])
    worker.start()
    worker.join()
    assert applied == [0]
    state = GPBootstrapState(dataset="toy", tab="curve", curve_mc_samples=10)
    state.refresh()
    assert state.curve_mc is None
    assert state.wait(TIMEOUT) and state.curve_mc is not None and state.curve_mc.complete  # shown by ``wait``
    assert state.jobs["curve"].message == "done"
    dispatch.flush()
    assert applied == [0, 1, 2, 3]


@pytest.mark.usefixtures("empty_view_caches")  # nothing cached: the job computes
def test_a_script_follows_progress_by_waiting_with_a_timeout():
    state = GPBootstrapState(dataset="toy", tab="distribution", mc_samples=80_000, auto_mc=True)  # within MAX_MC_VALUES
    state.refresh()
    seen = set()
    deadline = time.monotonic() + TIMEOUT
    while not state.wait(0.2) and time.monotonic() < deadline:
        seen.add(state.jobs["distribution"].progress)
        if len(seen - {0.0}) >= 2:
            break
    state.cancel()
    assert state.wait(TIMEOUT)
    assert len(seen - {0.0}) >= 2 and state.jobs["distribution"].message.startswith("cancelled")


def test_a_closed_state_says_so_when_asked_to_compute():
    state = GPBootstrapState(dataset="toy")
    state.close()
    state.refresh()
    assert "closed" in state.error and "new state" in state.error


def test_a_notebooks_cells_hold_the_notebook_lock_while_they_run():
    """JupyterLab hands comm messages to a kernel subshell thread: a cell that changes a shown object must not run
    while Panel applies a widget's message (Panel's handler waits for the same lock: ``tests/runtime/test_compat.py``).
    An IPython shell of its own runs the cells (in a process of its own: ``extension()`` installs for the process):
    the cell that installs holds nothing, every later cell holds the lock, a failing one and one run from a cell
    give it back, and installing twice registers once."""
    code = """
import threading
from IPython.core.interactiveshell import InteractiveShell
from explorer.runtime.sessions import NOTEBOOK_LOCK

shell = InteractiveShell.instance()

def free_elsewhere():  # whether another thread (a subshell) could take the lock now
    got = []
    def take():
        got.append(NOTEBOOK_LOCK.acquire(timeout=0.2))
        if got[-1]:
            NOTEBOOK_LOCK.release()
    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return got[0]

shell.user_ns["free_elsewhere"] = free_elsewhere
shell.run_cell("from explorer.views.notebook import extension; extension(); installing = free_elsewhere()")
shell.run_cell("running = free_elsewhere()")
shell.run_cell("extension(); get_ipython().run_cell('inner = free_elsewhere()'); outer = free_elsewhere()")
shell.run_cell("raise ValueError('a failing cell')")
ns = shell.user_ns
print(ns["installing"], ns["running"], ns["inner"], ns["outer"], free_elsewhere(),
      sum(getattr(c, "holds", None) is NOTEBOOK_LOCK for c in shell.events.callbacks["pre_run_cell"]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-6:] == ["True", "False", "False", "False", "True", "1"], out.stdout[-2000:]


def test_a_background_refresh_leaves_the_servers_busy_state_alone():
    """Why :func:`refresh_in_background` exists (Panel 1.9): a tick of a periodic callback sets the process-wide
    ``pn.state.busy`` on and off — and with it every open page's busy indicator — unless it is a background one.
    When this fails, Panel has changed how periodic callbacks mark the server busy: check whether the class room's
    pages still need their own kind of callback."""
    import asyncio

    import panel as pn
    from panel.io.callbacks import PeriodicCallback

    seen = []
    watcher = pn.state.param.watch(lambda event: seen.append(event.new), "busy")
    try:
        asyncio.run(PeriodicCallback(callback=lambda: None, period=1000, log=False)._periodic_callback())
        foreground, seen[:] = list(seen), []
        asyncio.run(PeriodicCallback(callback=lambda: None, period=1000, background=True, log=False)._periodic_callback())
    finally:
        pn.state.param.unwatch(watcher)
    assert foreground == [True, False] and seen == []


def test_a_background_refresh_runs_only_in_a_served_session():
    from explorer.runtime.sessions import refresh_in_background

    calls = []
    assert refresh_in_background(lambda: calls.append(1), 100) is None and calls == []
