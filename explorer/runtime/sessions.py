"""How a session state meets its session: job updates on the thread that owns its objects, in order.

In a served app that is the session's event loop (:func:`session_dispatcher`); in a notebook it is the kernel's
(:func:`kernel_dispatcher`), so that updates from job threads never interleave on the notebook's comm; in a script
it is the thread that made the state, when it calls ``wait`` (:func:`script_dispatcher`).

A served session that ends (its page closed) takes its objects with it: its states are closed (their jobs stop),
the links Panel keeps for its widgets are dropped (:func:`release_session_links`, with the registry of
:func:`explorer.runtime.compat.release_links_by_session`), and a write to a page that closed logs no traceback
(:func:`quiet_closed_websockets`, on the event loop's exception handler). Bokeh's keep-alive job, which detached the
session of a closing websocket (bokeh/bokeh#13654), is off in :func:`explorer.serving.server.serve`, whose
websockets Tornado pings instead (:data:`KEEP_ALIVE`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable
from functools import partial

import panel as pn
from panel.io.state import set_curdoc
from panel.links import Callback
from tornado.ioloop import IOLoop
from tornado.websocket import WebSocketClosedError

from explorer.runtime.compat import SessionLinks, release_links_by_session
from explorer.runtime.engine import return_freed_memory

__all__ = ["refresh_in_background", "bind_to_session", "release_session_links", "SessionLinks", "KEEP_ALIVE", "quiet_closed_websockets",
           "session_dispatcher", "kernel_dispatcher", "script_dispatcher", "default_dispatcher", "NOTEBOOK_LOCK",
           "hold_while_cells_run"]

log = logging.getLogger(__name__)

#: The server settings (``pn.serve`` passes them to Bokeh's server and Tornado's application) that keep an idle
#: page's websocket open through proxies (nginx closes one after 60 s without traffic) and never detach a session
#: before its websocket's ``on_close``: Bokeh's keep-alive job off (``keep_alive_milliseconds=0``), Tornado's own ping
#: every 37 s instead (Bokeh's period), not closing a websocket whose pong is late (as Bokeh's job did not).
#:
#: Bokeh's job calls ``client_lost`` when a ping meets a closing websocket (bokeh/bokeh#13654, its fix #13655).
#: Tornado then still hands on the messages the page sent before it closed (a slider's last values) and calls
#: ``on_close``; both ask the detached connection for its session and fail (``AssertionError`` in bokeh's
#: ``connection.py``, a traceback each: 82 in a 12-minute soak). Tornado's ping stops with its websocket.
KEEP_ALIVE = {"keep_alive_milliseconds": 0, "websocket_ping_interval": 37, "websocket_ping_timeout": 0}


def refresh_in_background(callback: Callable[[], None], period_ms: int):
    """Call ``callback`` every ``period_ms`` in the current served session, without marking the server busy; None
    outside a served session (a notebook, a test).

    Panel's busy state is one for the whole server (``pn.state.busy``), and a periodic callback added by
    ``pn.state.add_periodic_callback`` sets it on and off around every call — and with it the busy indicator of
    every open page (``panel/io/state.py``: ``_update_busy``). A page per student that refreshes itself would then cost
    the server O(pages²): measured on a class of 20 phones, 62 % of the server's busy time went to those indicators.
    A "background" ``PeriodicCallback`` (the keyword Panel's own busy-counter clean-up uses) leaves them alone; it is
    stopped when the session ends.

    Returns
    -------
    panel.io.callbacks.PeriodicCallback or None
        The running callback (``.stop()`` stops it).
    """
    from panel.io.callbacks import PeriodicCallback

    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return None
    periodic = PeriodicCallback(callback=callback, period=int(period_ms), background=True, log=False)
    periodic.start()
    pn.state.on_session_destroyed(lambda context: periodic.stop())
    return periodic


def bind_to_session(state) -> None:
    """In a served session, send ``state``'s job updates to the session's event loop (in order, by
    :func:`session_dispatcher`) and, when the session ends, close the state (its jobs stop) and let go of the
    session's objects (:func:`release_session_links`); elsewhere do nothing."""
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None and getattr(state, "_session_doc", None) is not doc:
        state._session_doc = doc  # bound once (the app binds a state before a tab made later binds it again)
        state.dispatch = session_dispatcher(doc)
        quiet_closed_websockets(IOLoop.current().asyncio_loop)
        pn.state.on_session_destroyed(partial(_end_session, weakref.ref(state), weakref.ref(doc)))


def _end_session(state: weakref.ref, doc: weakref.ref, context) -> None:
    """The session ended: close its state (if it still exists) and drop the links Panel kept for its widgets; once
    its objects are freed, give their memory back to the system."""
    if (alive := state()) is not None:
        alive.close()
    if release_session_links(doc()):  # once per session (the first of its states)
        IOLoop.current().call_later(RETURN_MEMORY_AFTER, return_freed_memory)


#: Seconds after a session ends before its freed memory is given back: Panel collects a destroyed document's
#: cycles a few seconds after the session ends (``GC_DEBOUNCE``).
RETURN_MEMORY_AFTER = 10.0


def release_session_links(doc) -> int:
    """Drop the JavaScript links Panel registered for the widgets of the document ``doc`` (a session that ended, or
    the page the warm-up drew); return how many widgets had some."""
    registry = Callback.registry
    return registry.release(doc) if isinstance(registry, SessionLinks) and doc is not None else 0


def quiet_closed_websockets(loop: asyncio.AbstractEventLoop) -> None:
    """Let ``loop``'s handler of failures nobody retrieved (asyncio's "Task exception was never retrieved") take a
    ``WebSocketClosedError`` as handled; any other failure goes to the handler as before. Once per loop.

    Panel writes a document's held messages in a task nobody awaits, and cancels the writes of a session's document
    when the session ends, too late for a write that had already failed because the page closed: each logged a
    traceback (holoviz/panel#3341). The page is gone: nobody is left to tell.
    """
    previous = loop.get_exception_handler()
    if getattr(previous, "quiets_closed_websockets", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if isinstance(context.get("exception"), WebSocketClosedError):
            log.debug("a page closed while its messages were written")
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.quiets_closed_websockets = True
    loop.set_exception_handler(handler)


# Once per process, when the views are first imported, before any session starts.
release_links_by_session()


def session_dispatcher(doc) -> Callable[[Callable[[], None]], None]:
    """How worker threads hand updates to a served session: on its event loop, in the order they were sent.

    ``pn.state.execute(..., schedule=True)`` adds a next-tick callback to the session's document (Panel's
    recommended way to touch a session from another thread), but the order of those callbacks is not
    guaranteed: while the page is still being built (the Bokeh session does not exist yet) the document
    keeps them in a *set* and the session later schedules them in hash order. A fast job finishing then
    could see an old progress report applied after its result ("solving the replica theory" for ever).
    So updates go through a FIFO queue and every scheduled callback applies whatever is queued, oldest
    first. Outside a server the update runs at once.
    """
    if doc is None or doc.session_context is None:
        return lambda callback: callback()
    queue: deque[Callable[[], None]] = deque()  # append/popleft are atomic: no lock needed

    def apply_queued() -> None:  # on the session's event loop, with its document lock
        while queue:
            callback = queue.popleft()
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failed update must not hold back the later ones
                log.exception("update of a background job failed")

    def dispatch(callback: Callable[[], None]) -> None:
        if doc.session_context is None:  # the session has ended meanwhile: nobody to update
            return
        queue.append(callback)
        with set_curdoc(doc):
            pn.state.execute(apply_queued, schedule=True)

    return dispatch


#: Held while a notebook's objects change, and so while Panel sends their changes over a comm. JupyterLab 4.4 with
#: ipykernel 7 hands comm messages (a widget the student moved) to a kernel *subshell*, a thread of its own,
#: while job updates and cells run on the kernel's main thread: without this lock Panel changed one document from
#: two threads and the parts of two messages interleaved on the comm ("s is not iterable" in the browser's
#: ``_apply_json_patch``, updates lost). :func:`explorer.views.notebook.extension` takes it around Panel's comm
#: handler (:func:`explorer.runtime.compat.serialize_notebook_comms`) and around every cell
#: (:func:`hold_while_cells_run`); :class:`kernel_dispatcher` around the updates it applies.
NOTEBOOK_LOCK = threading.RLock()


def hold_while_cells_run(shell, lock=NOTEBOOK_LOCK) -> None:
    """Hold ``lock`` while a cell of the IPython ``shell`` runs (IPython's ``pre_run_cell`` and ``post_run_cell``
    events; once per shell and lock).

    A cell that changes a shown object (``view.state.n = 50``) then changes its document and sends the change while
    no widget message is being applied (:data:`NOTEBOOK_LOCK`). A widget moved while a cell runs takes effect when
    the cell has finished, as in JupyterLab before 4.4 (comm messages waited for the kernel's one thread then). The
    cell that installs this (``extension()``) holds nothing; a cell run from a cell holds the lock once more.
    """
    if any(getattr(callback, "holds", None) is lock for callback in shell.events.callbacks["pre_run_cell"]):
        return
    held = threading.local()  # how many cells this thread runs holding the lock (a cell run from a cell: 2)

    def acquire(info) -> None:
        lock.acquire()
        held.cells = getattr(held, "cells", 0) + 1

    def release(result) -> None:
        if getattr(held, "cells", 0):  # not the cell that registered these callbacks
            held.cells -= 1
            lock.release()

    acquire.holds = lock
    shell.events.register("pre_run_cell", acquire)
    shell.events.register("post_run_cell", release)


class kernel_dispatcher:  # noqa: N801 - used like a function: ``state.dispatch = kernel_dispatcher(loop)``
    """How worker threads hand updates to a notebook: on the kernel's event loop, in the order they were sent.

    Panel sends every change of a shown object over the notebook's comm as a text message followed by binary
    buffers. Sent from a job thread while the kernel's thread sends another, the parts interleave ("Expected
    binary fragment but received text fragment", "buffer for id=… not found" in the browser's console). So an
    update is queued and applied on the kernel's event loop (``loop.add_callback`` is thread-safe); each
    scheduled call applies whatever is queued, oldest first, as :func:`session_dispatcher` does for a server.

    While a cell runs the loop is busy: :meth:`flush`, called on the kernel's thread (by the state's ``wait``),
    applies the queue at once, so that ``state.wait()`` followed by a figure shows the results.
    """

    def __init__(self, loop=None) -> None:
        self._loop = loop  # None: nothing applies the queue but flush (see script_dispatcher)
        self._thread = threading.get_ident()
        self._queue: deque[Callable[[], None]] = deque()  # append/popleft are atomic: no lock needed

    def __call__(self, callback: Callable[[], None]) -> None:
        self._queue.append(callback)
        if threading.get_ident() == self._thread:
            self.flush()  # already on the kernel's thread (e.g. a cancel): apply now, in order
        elif self._loop is not None:
            self._loop.add_callback(self.flush)

    def flush(self) -> None:
        """Apply the queued updates, oldest first (on the kernel's thread only; elsewhere do nothing)."""
        if threading.get_ident() != self._thread:
            return
        with NOTEBOOK_LOCK:
            while self._queue:
                callback = self._queue.popleft()
                try:
                    callback()
                except Exception:  # noqa: BLE001 - one failed update must not hold back the later ones
                    log.exception("update of a background job failed")


def script_dispatcher() -> kernel_dispatcher:
    """How worker threads hand updates to a script (or a test): queued, and applied on the thread that made the
    dispatcher when it calls ``flush`` (the state's ``wait`` does), oldest first; an update sent from that thread
    itself (e.g. a cancel) applies at once.

    Applied on the job's thread instead, an update would change a figure while the script's thread draws it
    (``get_root``, ``save``): HoloViews then fails with "dictionary keys changed during iteration".
    """
    return kernel_dispatcher(None)


def default_dispatcher() -> Callable[[Callable[[], None]], None]:
    """Where a new state sends its job updates: the kernel's event loop when it lives in a Jupyter kernel (a
    notebook), else the thread that made it, at ``wait`` (scripts, tests; :func:`bind_to_session` rebinds a
    served one)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    loop = getattr(getattr(shell, "kernel", None), "io_loop", None)
    if loop is None or threading.current_thread() is not threading.main_thread():
        return script_dispatcher()
    return kernel_dispatcher(loop)
