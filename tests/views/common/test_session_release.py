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
from explorer.views.common.session import SessionLinks, quiet_closed_dispatch, quiet_closed_writes  # noqa: E402
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


def test_a_failed_keep_alive_ping_leaves_the_connection_to_its_on_close():
    """Bokeh's keep-alive job detached the session of a closing websocket; the page's last messages and then
    ``on_close`` asked for it and failed (AssertionError in bokeh's connection.py, a traceback each)."""
    connection, lost = ClosingConnection(), []
    server = SimpleNamespace(_clients={connection}, client_lost=lost.append)
    BokehTornado._keep_alive(server)  # the job of every Bokeh server of this process
    assert lost == [] and server._clients == {connection}


def _unretrieved_failures(write) -> list[dict]:
    """What asyncio reports when a write to a page that closed fails and nobody awaits it (Panel cancels the writes of
    an ended session, too late for one that failed already)."""
    loop, reported = asyncio.new_event_loop(), []
    loop.set_exception_handler(lambda loop, context: reported.append(context))

    async def send() -> None:
        write(SimpleNamespace(is_closing=lambda: True), "message")
        await asyncio.sleep(0.01)

    try:
        loop.run_until_complete(send())
        gc.collect()
    finally:
        loop.close()
    return reported


def test_a_write_that_failed_because_the_page_closed_logs_nothing():
    def tornado_write(protocol, message, binary=False):  # as tornado's: the write's outcome is a task
        return asyncio.ensure_future(_raise_closed())

    assert _unretrieved_failures(tornado_write)  # asyncio's "Task exception was never retrieved", with a traceback
    assert _unretrieved_failures(quiet_closed_writes(tornado_write)) == []


async def _raise_closed() -> None:
    raise WebSocketClosedError()


def test_held_messages_for_a_page_that_closed_meanwhile_log_nothing():
    """Panel writes a document's held messages in a task nobody awaits; a page that closed between two writes made it
    fail with WebSocketClosedError, logged as "Task exception was never retrieved"."""
    async def dispatch_msgs(doc) -> None:
        raise WebSocketClosedError()

    def write(protocol, message, binary=False):
        return asyncio.ensure_future(dispatch_msgs(None))

    def quiet_write(protocol, message, binary=False):
        return asyncio.ensure_future(quiet_closed_dispatch(dispatch_msgs)(None))

    assert _unretrieved_failures(write)
    assert _unretrieved_failures(quiet_write) == []
