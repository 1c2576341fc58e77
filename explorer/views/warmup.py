"""Warm a served app up before the class arrives: compute every page's default view and every preset once.

``explorer serve`` starts a :class:`WarmUp` in the background as soon as its Dask engine is up. It builds the
pages of one session without a browser (the registry, :data:`explorer.views.pages.PAGES`), starts each page, waits
for its jobs, then applies each "Reproduce a figure" preset to fresh states (:func:`compute_preset`) and waits for
its jobs: the results land in the caches every session shares, so the first page and every preset a class opens
show at once. A session's page says in the sidebar while the warm-up is still running (:func:`warm_up_note`).

The warm-up yields to the class: while any session is open it waits, and an item under way when one opens stops
its jobs and starts again later (a page's own jobs come first); it can be stopped (:meth:`WarmUp.stop`, when the
server stops).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

import panel as pn

from explorer.views.common import caches
from explorer.views.common.page import PageContext
from explorer.views.common.presets import Preset, PresetError, apply_preset
from explorer.views.pages import PAGES, PRESETS

__all__ = ["WarmUp", "compute_preset", "page_states", "wait_all", "warm_up_note"]

log = logging.getLogger(__name__)

#: Longest one item of the warm-up may compute (seconds) before the warm-up goes on without it.
ITEM_TIMEOUT = 600.0
#: Seconds between two looks at whether a session is open (the warm-up waits meanwhile).
IDLE_POLL = 1.0


def page_states(context: PageContext) -> tuple[list, dict]:
    """The page views of one session built with ``context`` (none of them started) and their states by prefix."""
    views = [page.view(context) for page in PAGES]
    return views, {prefix: state for view in views for prefix, state in view.states.items()}


def compute_preset(p: Preset, states: Mapping[str, object], timeout: float = ITEM_TIMEOUT,
                   busy: Callable[[], bool] = lambda: False) -> bool:
    """Apply preset ``p`` to ``states`` (prefix → state, not started), start the states it sets and wait for their
    jobs; True if they finished within ``timeout`` seconds (False as soon as ``busy()``)."""
    apply_preset(p, states)
    for prefix in p.settings:
        states[prefix].refresh()
    return wait_all([states[prefix] for prefix in p.settings], timeout, busy)


def wait_all(states, timeout: float = ITEM_TIMEOUT, busy: Callable[[], bool] = lambda: False) -> bool:
    """Wait for the jobs of ``states``; True once they have all finished, False after ``timeout`` seconds or as soon
    as ``busy()`` (checked every :data:`IDLE_POLL` seconds)."""
    deadline = time.monotonic() + timeout
    pending = list(states)
    while pending:
        if busy() or time.monotonic() > deadline:
            return False
        pending = [state for state in pending if not state.wait(timeout=IDLE_POLL)]
    return True


def _close(states: Mapping[str, object]) -> None:
    for state in states.values():
        state.close()


class WarmUp:
    """The background warm-up of a server: the default views, then each preset (:func:`compute_preset`).

    ``busy()`` says whether a session is open (the warm-up waits then); ``context`` builds the pages as a session
    would (engine, data folder); ``presets`` and ``default_views`` say what it computes. Read ``done``, ``total``, ``current`` and ``finished`` from any thread.
    """

    def __init__(self, context: PageContext, busy: Callable[[], bool] = lambda: False,
                 presets: tuple[Preset, ...] = PRESETS, default_views: bool = True):
        self.context, self.busy, self.presets, self.default_views = context, busy, presets, default_views
        self.total = int(default_views) + len(presets)
        self.done = 0
        self.current = ""
        self.finished = False
        self.seconds: dict[str, float] = {}  # what each item took (its jobs, caches cold)
        self._stop = threading.Event()

    def start(self) -> threading.Thread:
        """Run the warm-up on a daemon thread of its own."""
        thread = threading.Thread(target=self.run, name="explorer-warm-up", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stop after the item under way (its jobs are cancelled)."""
        self._stop.set()

    def run(self) -> None:
        """The default views of every page, then every preset; an item interrupted by a session starts again once
        no session is open; a failing item is logged and skipped."""
        items = [("the default views", self._defaults)] if self.default_views else []
        items += [(p.name, lambda views, states, p=p: compute_preset(p, states, busy=self.busy)) for p in self.presets]
        started = time.monotonic()
        try:
            while items and not self._stop.is_set():
                while self.busy() and not self._stop.is_set():
                    self._stop.wait(IDLE_POLL)
                if self._stop.is_set() or not self._item(*items[0]):
                    continue
                items.pop(0)
                self.done += 1
        finally:
            self.current, self.finished = "", True
            log.info("warm-up: %s, %d of %d items in %.0f s", "stopped" if items else "finished", self.done,
                     self.total, time.monotonic() - started)

    def _item(self, name: str, compute: Callable[[list, dict], bool]) -> bool:
        """Compute one item on fresh states; False if a session opened meanwhile (its jobs stopped: again later)."""
        self.current = name
        started = time.monotonic()
        views, states = page_states(self.context)
        try:
            if not compute(views, states):
                if self.busy() or self._stop.is_set():
                    return False
                log.warning("warm-up: %s did not finish within %.0f s", name, ITEM_TIMEOUT)
        except PresetError as err:  # e.g. the Santa Fe presets on a server without the file: a session says the same
            log.info("warm-up: skipped %s: %s", name, err)
        except Exception:  # noqa: BLE001 - the warm-up must not stop the server: log, go on
            log.exception("warm-up: %s failed", name)
        finally:
            _close(states)
        caches.registry.keep_all()  # what the warm-up computed stays when the server is idle
        self.seconds[name] = time.monotonic() - started
        return True

    def _defaults(self, views: list, states: dict) -> bool:
        for view in views:
            view.ensure_started()
        return wait_all(states.values(), busy=self.busy)

    def text(self) -> str:
        """What the sidebar says while the warm-up runs (empty once it has finished)."""
        if self.finished:
            return ""
        doing = f": {self.current}" if self.current else ""
        return (f"⏳ The server is still warming up ({self.done} of {self.total} views ready{doing}). Until it has "
                "finished, a view it has not computed yet takes its usual time.")


def warm_up_note(warm_up: WarmUp | None, period_ms: int = 2000) -> pn.pane.Markdown:
    """The sidebar's note on the warm-up (hidden when there is none or it has finished), updated every
    ``period_ms`` in a served session until the warm-up finishes."""
    note = pn.pane.Markdown("", css_classes=["explorer-warm-up"], sizing_mode="stretch_width", visible=False)
    if warm_up is None:
        return note

    def update() -> None:
        note.object = warm_up.text()
        note.visible = bool(note.object)
        if warm_up.finished and callback is not None:
            callback.stop()

    callback = None
    update()
    if not warm_up.finished and pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        callback = pn.state.add_periodic_callback(update, period=period_ms)
    return note
