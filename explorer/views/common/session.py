"""How a session state meets its session: job updates on the thread that owns its objects, in order.

In a served app that is the session's event loop (:func:`session_dispatcher`); in a notebook it is the kernel's
(:func:`kernel_dispatcher`), so that updates from job threads never interleave on the notebook's comm; in a script
it is the thread that made the state, when it calls ``wait`` (:func:`script_dispatcher`).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from typing import Callable

import panel as pn
from panel.io.state import set_curdoc

__all__ = ["bind_to_session", "session_dispatcher", "kernel_dispatcher", "script_dispatcher", "default_dispatcher",
           "NOTEBOOK_LOCK"]

log = logging.getLogger(__name__)


def bind_to_session(state) -> None:
    """In a served session, send ``state``'s job updates to the session's event loop (in order, by
    :func:`session_dispatcher`) and close the state when the session ends; elsewhere do nothing."""
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None and getattr(state, "_session_doc", None) is not doc:
        state._session_doc = doc  # bound once (the app binds a state before a tab made later binds it again)
        state.dispatch = session_dispatcher(doc)
        pn.state.on_session_destroyed(lambda context: state.close())


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


#: Held while a notebook's objects change and while Panel sends a message over a comm. JupyterLab 4.4 with
#: ipykernel 7 hands comm messages (a widget the student moved) to a kernel *subshell*, a thread of its own,
#: while job updates apply on the kernel's main thread: without this lock Panel changed one document from two
#: threads and the parts of two messages interleaved on the comm ("s is not iterable" in the browser's
#: ``_apply_json_patch``, updates lost). :func:`explorer.views.notebook.extension` takes it around Panel's comm
#: handler and its ``send``; :class:`kernel_dispatcher` around the updates it applies.
NOTEBOOK_LOCK = threading.RLock()


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
