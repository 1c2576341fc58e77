"""A session that ends lets go of its states, their jobs and its widgets: a server handed to a class for hours holds
the pages that are open, not every page that was ever opened. And a page that closes logs no traceback.

The explorer's page is served in this process (``pn.serve(..., threaded=True)``, Bokeh told to discard a session
1 s after its last connection closed), so that weak references can tell whether the states of a session are gone.
"""
from __future__ import annotations

import asyncio
import gc
import threading
import time
import urllib.request
import weakref
from types import SimpleNamespace

import pytest

pn = pytest.importorskip("panel")

from bokeh.client import pull_session  # noqa: E402
from bokeh.server.tornado import BokehTornado  # noqa: E402
from panel.links import Callback  # noqa: E402
from tornado.websocket import WebSocketClosedError  # noqa: E402

from explorer.app import create_app  # noqa: E402
from explorer.runtime.sessions import KEEP_ALIVE, SessionLinks, quiet_closed_websockets  # noqa: E402
from tests.conftest import free_port  # noqa: E402

TIMEOUT = 300  # seconds for a page to be built and its jobs to stop on a busy 2-core machine


def _states(template) -> list:
    """Every state of a page: those of every page view."""
    return [state for view in template.pages.values() for state in view.states.values()]


@pytest.fixture
def served(dask_engine):
    """The explorer served in this process; yields its URL and, per session built, weak references to its states
    and its page."""
    made: list[list[weakref.ref]] = []

    def app():
        # a curve that computes for a while: its job is still running when the session ends
        template = create_app(engine=dask_engine, dataset="toy", tab="curve", curve_mc_samples=2000)
        made.append([weakref.ref(obj) for obj in (*_states(template), template)])
        return template

    port = free_port()
    server = pn.serve({"/": app}, port=port, address="127.0.0.1", websocket_origin=[f"127.0.0.1:{port}"],
                      threaded=True, show=False, unused_session_lifetime_milliseconds=1000,
                      check_unused_sessions_milliseconds=500)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_for(lambda: _answers(url), "the server to answer")
        yield url, made
    finally:
        server.stop()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT):
            return True
    except OSError:
        return False


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"waited {TIMEOUT} s for {what}"
        time.sleep(0.5)


def _all_gone(refs: list[list[weakref.ref]]) -> bool:
    gc.collect()
    return all(ref() is None for session in refs for ref in session)


# slow (run with -m slow): in one fresh-clone run of the whole suite the states were not freed within 300 s, and the
# in-process server then left a destroyed Bokeh document behind for later tests ("'Document' object has no attribute
# '_theme'" in 32 figure tests); it passed in the other full runs and alone. Until that is understood it runs apart.
@pytest.mark.slow
@pytest.mark.usefixtures("empty_view_caches")  # nothing cached: the sessions' jobs compute when they end
def test_an_ended_session_releases_its_states_jobs_and_widgets(served):
    url, made = served
    assert isinstance(Callback.registry, SessionLinks)
    # a page fetched (built in the server) but never connected (made[0]), and a page connected over a websocket
    # like a browser's, then closed (the later ones)
    assert _answers(url)
    with pull_session(url=url) as session:
        assert session.document.roots
    _wait_for(lambda: len(made) >= 2, "the sessions to be built")
    _wait_for(lambda: _all_gone(made), "the ended sessions' states and pages to be freed (see SessionLinks)")
    _wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("explorer-")],
              "the jobs' threads to end")


# ------------------------------------------------------------------ page closes log no traceback


class ClosingConnection:
    """A Bokeh server connection whose page has just closed: a ping fails, ``on_close`` has not run yet."""

    def send_ping(self) -> None:
        raise WebSocketClosedError()


def test_bokehs_keep_alive_job_still_detaches_a_closing_connection():
    """Bokeh's keep-alive job detaches the session of a closing websocket (bokeh/bokeh#13654); the page's last
    messages and then ``on_close`` asked for it and failed (AssertionError in bokeh's connection.py, a traceback
    each). So ``explorer serve`` turns that job off (:data:`KEEP_ALIVE`). When this fails, Bokeh changed its job:
    :data:`KEEP_ALIVE` may then go back to Bokeh's default."""
    connection, lost = ClosingConnection(), []
    server = SimpleNamespace(_clients={connection}, client_lost=lost.append)
    BokehTornado._keep_alive(server)
    assert lost == [connection]


def test_the_served_websockets_are_pinged_by_tornado_not_by_bokehs_job():
    """With :data:`KEEP_ALIVE`, Bokeh's server starts no keep-alive job, and Tornado pings every websocket every 37 s
    without closing one whose pong is late (as Bokeh's job did not)."""
    server = pn.serve({"/": lambda: pn.pane.Markdown("x")}, port=free_port(), address="127.0.0.1", show=False,
                      start=False, **KEEP_ALIVE)
    try:
        server.start()
        settings = server._tornado.settings
        assert server._tornado._ping_job is None
        assert settings["websocket_ping_interval"] == 37 and settings["websocket_ping_timeout"] == 0
    finally:
        server.stop()


def _unretrieved_failures(exception: BaseException, quiet: bool) -> list[dict]:
    """What asyncio reports when a write to a page fails with ``exception`` and nobody awaits it (Panel cancels the
    writes of an ended session, too late for one that failed already), with :func:`quiet_closed_websockets` on the
    loop or not."""
    loop, reported = asyncio.new_event_loop(), []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    if quiet:
        quiet_closed_websockets(loop)
        quiet_closed_websockets(loop)  # once per loop

    async def fail() -> None:
        raise exception

    async def send() -> None:
        asyncio.ensure_future(fail())  # as tornado's write_message and Panel's _dispatch_msgs: a task nobody awaits
        await asyncio.sleep(0.01)

    try:
        loop.run_until_complete(send())
        gc.collect()
    finally:
        loop.close()
    return reported


def test_a_write_that_failed_because_the_page_closed_logs_nothing():
    """Panel writes a document's held messages in a task nobody awaits; a page that closed between two writes made it
    fail with WebSocketClosedError, logged as "Task exception was never retrieved" (holoviz/panel#3341)."""
    assert _unretrieved_failures(WebSocketClosedError(), quiet=False)  # asyncio's report, with a traceback
    assert _unretrieved_failures(WebSocketClosedError(), quiet=True) == []


def test_any_other_unretrieved_failure_is_still_reported():
    reported = _unretrieved_failures(ValueError("a real bug"), quiet=True)
    assert len(reported) == 1 and isinstance(reported[0]["exception"], ValueError)
