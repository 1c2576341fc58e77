"""Warm a served app up before the class arrives: compute every page's default view and every preset once.

``explorer serve`` starts a :class:`WarmUp` in the background as soon as its Dask engine is up. It builds the
pages of one session without a browser (the registry, :data:`explorer.views.pages.PAGES`), starts each page, waits
for its jobs, then applies each "Reproduce a figure" preset to fresh states (:func:`compute_preset`) and waits for
its jobs: the results land in the caches every session shares, so the first page and every preset a class opens
show at once. Served, it also draws every tab of one page once on the server's event loop and lets that page go
as a closed session's goes (:func:`draw_every_tab`): what a server keeps for good once it has drawn each kind of
figure is then part of its warm level. A session's page says in the sidebar while the warm-up is still running
(:func:`warm_up_note`).

The warm-up yields to the class: while any session is open it waits, and an item under way when one opens stops
its jobs and starts again later (a page's own jobs come first); it can be stopped (:meth:`WarmUp.stop`, when the
server stops).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial

import panel as pn
from bokeh.document import Document
from bokeh.server.contexts import BokehSessionContext
from bokeh.util.token import generate_session_id
from panel.io.state import set_curdoc

from explorer.runtime import caches
from explorer.runtime.sessions import refresh_in_background, release_session_links
from explorer.views.common.layout.page import PageContext
from explorer.views.common.state.presets import Preset, PresetError, apply_preset
from explorer.views.pages import PAGES, PRESETS

__all__ = ["WarmUp", "compute_preset", "draw_every_tab", "end_document", "on_loop", "page_states", "wait_all",
           "warm_up_note"]

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


def draw_every_tab(make_page: Callable[[], pn.template.BaseTemplate],
                   run: Callable[[Callable[[], object]], object] = lambda step: step(),
                   busy: Callable[[], bool] = lambda: False, timeout: float = 30.0) -> bool:
    """Draw one page made by ``make_page`` (``explorer.app.create_app``) into a document of its own without a
    browser: open each of its tabs in turn (its widgets and figures become Bokeh models, with the results the
    warm-up computed), then end the page as a closed session ends (:func:`end_document`). True if every tab was
    drawn; False if ``busy()`` (a session opened) stopped it between two tabs.

    Served, ``run`` calls each step on the server's event loop (:func:`on_loop`): making the page, each tab, ending
    it, so a page that opens meanwhile waits for one step at the most (a tab: 0.2-3 s). The first session to draw a
    kind of figure makes what the server then keeps for good (HoloViews' plot classes, Bokeh's models: ~36 MB for
    every tab of the app), so the server's warm level includes it. ``timeout`` bounds the wait for a page's jobs
    (their results are in the caches by then: milliseconds)."""
    doc = Document()

    def make() -> pn.template.BaseTemplate:
        with set_curdoc(doc):
            made = make_page()
            made.server_doc(doc)
            return made

    def open_tab(i: int) -> None:
        with set_curdoc(doc):
            page.tabs.active = i  # the tab is built now (LazyTabs) and its page started
            wait_all([state for view in page.pages.values() if view.started for state in view.states.values()],
                     timeout)  # its results (from the caches) reach its figures

    def end() -> None:
        with set_curdoc(doc):
            for view in page.pages.values():
                _close(view.states)
            end_document(doc)

    page = run(make)
    try:
        for i in range(len(page.tabs)):
            if busy():
                return False
            run(partial(open_tab, i))
    finally:
        run(end)
    return True


def end_document(doc: Document) -> None:
    """End ``doc`` as the server ends a closed session's document: its session-destroyed callbacks run (Panel
    drops its views), the links Panel keeps for its widgets are dropped (:func:`release_session_links`), then its
    roots are removed."""
    context = BokehSessionContext(generate_session_id(), None, doc)
    for callback in list(doc.session_destroyed_callbacks):
        try:
            callback(context)
        except Exception:  # noqa: BLE001 - as the server does (Panel's ``_on_session_destroyed``): the others still run
            log.debug("warm-up: a session-destroyed callback failed", exc_info=True)
    release_session_links(doc)
    doc.clear()  # its roots go; nothing holds the document then (Panel keeps sessions' documents weakly)


def on_loop(loop, function: Callable[[], object], timeout: float = ITEM_TIMEOUT) -> object:
    """Call ``function`` on the event loop ``loop`` (a tornado ``IOLoop``) from another thread and return what it
    returns (or raise what it raises).

    Raises
    ------
    TimeoutError
        If it has not returned within ``timeout`` seconds.
    """
    done, outcome = threading.Event(), {}

    def call() -> None:
        try:
            outcome["value"] = function()
        except BaseException as err:  # noqa: BLE001 - raised again on the calling thread
            outcome["error"] = err
        finally:
            done.set()

    loop.add_callback(call)
    if not done.wait(timeout):
        raise TimeoutError(f"the server's event loop did not run the warm-up's drawing within {timeout:.0f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _close(states: Mapping[str, object]) -> None:
    for state in states.values():
        state.close()


class WarmUp:
    """The background warm-up of a server: the default views, then each preset (:func:`compute_preset`).

    ``busy()`` says whether a session is open (the warm-up waits then); ``context`` builds the pages as a session
    would (engine, data folder); ``presets`` and ``default_views`` say what it computes; ``draw`` (served: every tab
    drawn once on the event loop, :func:`draw_every_tab`; True once done) runs after the default views. Read
    ``done``, ``total``, ``current`` and ``finished`` from any thread.
    """

    def __init__(self, context: PageContext, busy: Callable[[], bool] = lambda: False,
                 presets: tuple[Preset, ...] = PRESETS, default_views: bool = True,
                 draw: Callable[[], object] | None = None):
        self.context, self.busy, self.presets, self.default_views = context, busy, presets, default_views
        self.draw = draw
        self.total = int(default_views) + int(draw is not None) + len(presets)
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
        items += [("every tab drawn once", self._draw)] if self.draw is not None else []
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
        """Compute one item on fresh states; False if a session opened meanwhile (its jobs stopped: again later).

        The item's pages are built in a document of their own, whose links are dropped with its states
        (:func:`~explorer.runtime.sessions.release_session_links`): a widget made outside any document keeps
        its JavaScript link in Panel's registry for good, and that link holds the whole page (an editable
        slider's text box → its slider → the state → the page's figures: 19 pages a server kept for ever)."""
        self.current = name
        started = time.monotonic()
        doc = Document()
        with set_curdoc(doc):
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
            release_session_links(doc)
        caches.registry.keep_all()  # what the warm-up computed stays when the server is idle
        self.seconds[name] = time.monotonic() - started
        return True

    def _defaults(self, views: list, states: dict) -> bool:
        for view in views:
            view.ensure_started()
        return wait_all(states.values(), busy=self.busy)

    def _draw(self, views: list, states: dict) -> bool:
        return bool(self.draw())  # (run() waited until no session was open)

    def text(self) -> str:
        """What the sidebar says while the warm-up runs (empty once it has finished)."""
        if self.finished:
            return ""
        doing = f": {self.current}" if self.current else ""
        # plain text, no emoji: a projector's or a server's browser without an emoji font shows a missing-glyph box
        return (f"**Warming up:** the server is still warming up ({self.done} of {self.total} views ready{doing}). "
                "Until it has finished, a view it has not computed yet takes its usual time.")


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
    if not warm_up.finished:
        callback = refresh_in_background(update, period_ms)
    return note
