"""How a session state meets a served Panel session: job updates on the session's event loop, in order."""

from __future__ import annotations

import logging
from collections import deque
from typing import Callable

import panel as pn
from panel.io.state import set_curdoc

__all__ = ["bind_to_session", "session_dispatcher"]

log = logging.getLogger(__name__)


def bind_to_session(state) -> None:
    """In a served session, send ``state``'s job updates to the session's event loop (in order, by
    :func:`session_dispatcher`) and close the state when the session ends; elsewhere do nothing."""
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
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
