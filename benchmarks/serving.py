"""What the served-app benchmarks share: a free port, the load average, starting ``explorer serve`` until it
answers, and :class:`LightSession`, a student's session without a browser."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time
import urllib.request
from urllib.parse import parse_qsl

__all__ = ["free_port", "load", "launch", "LightSession"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def launch(cmd: list[str], port: int, log, env: dict | None = None, seconds: float = 300) -> subprocess.Popen:
    """Start the server command ``cmd`` (output to the file ``log``) and wait until ``http://127.0.0.1:port/``
    answers; exit with the end of its log if it does not within ``seconds``."""
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=90):
                return server
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.5)
    server.kill()
    log.seek(0)
    raise SystemExit(f"explorer serve did not start: {log.read().decode(errors='replace')[-2000:]}")


class LightSession:
    """A session of the served app opened by Bokeh's Python client instead of a browser: it receives and applies
    every message the server sends (so the server writes to it as to a page), but draws nothing.

    In a class the students' browsers draw on their own machines; on the benchmark's machine ten Chromiums would
    take the cores the server needs. The client runs on a thread of its own; :meth:`find`, :meth:`set` and
    :meth:`click` act as a student on the page (the models are found by their CSS class), from any thread.
    """

    def __init__(self, url: str, timeout: float = 300.0):
        _install_column_merge()
        self._ready, self._failed = threading.Event(), None
        self._thread = threading.Thread(target=self._run, args=(url,), name="light-session", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._failed is not None:
            raise RuntimeError(f"no session at {url}: {self._failed}")

    def _run(self, url: str) -> None:
        import panel  # noqa: F401  (the page's models, for the client's copy of the document)
        from bokeh.client import pull_session
        from bokeh.events import DocumentReady
        from tornado.ioloop import IOLoop

        asyncio.set_event_loop(asyncio.new_event_loop())
        self.loop = IOLoop.current()
        try:
            address, _, query = url.partition("?")  # the link's query goes as the request's arguments
            self.session = pull_session(url=address, io_loop=self.loop, arguments=dict(parse_qsl(query)) or None)
            self.document = self.session.document
            self.document.callbacks.send_event(DocumentReady())  # what a browser says once it has drawn the page
        except Exception as err:  # noqa: BLE001 - said by __init__
            self._failed = err
            self._ready.set()
            return
        self._ready.set()
        self._apply_until_closed()

    #: Messages applied per turn of the client's loop (see :meth:`_apply_until_closed`).
    MESSAGES_PER_TURN = 100

    def _apply_until_closed(self) -> None:
        """Apply what the server sends until the connection closes (the client has no public loop).

        Bokeh's client handles its messages by recursion (``bokeh/client/connection.py``: ``_handle_messages`` awaits
        ``_next``, which awaits the state's ``run``, which awaits ``_handle_messages``): three frames a message, never
        unwound while the connection lives, so a session that receives some 330 messages dies of a RecursionError —
        a phone in a five-minute class receives thousands. The loop is therefore stopped every
        :data:`MESSAGES_PER_TURN` turns, which unwinds the stack, and started again; the messages that arrive
        meanwhile wait in the websocket's queue, the callbacks of :meth:`set` and :meth:`click` in the loop's.
        """
        from bokeh.client.states import DISCONNECTED

        connection = self.session._connection
        turns = 0

        def turn_over() -> bool:
            nonlocal turns
            turns += 1
            return isinstance(connection._state, DISCONNECTED) or turns % self.MESSAGES_PER_TURN == 0

        while not isinstance(connection._state, DISCONNECTED):
            connection._loop_until(turn_over)

    def find(self, css_class: str):
        """The first model of the page with the CSS class ``css_class``."""
        return next(model for model in self.document.models if css_class in (getattr(model, "css_classes", ()) or ()))

    def set(self, model, attr: str, value) -> None:
        """Change a property as the page would (e.g. a Toggle's ``active``)."""
        self.loop.add_callback(lambda: setattr(model, attr, value))

    def click(self, button) -> None:
        """Click a button."""
        from bokeh.events import ButtonClick

        self.loop.add_callback(lambda: self.document.callbacks.send_event(ButtonClick(button)))

    def close(self) -> None:
        self.loop.add_callback(self.session.close)
        self._thread.join(timeout=30)


def _merge_columns(doc, event) -> None:
    """Apply a change of some columns of a data source as BokehJS does (``document.ts``: the other columns stay);
    Bokeh's Python client replaces the source's data by the changed columns alone."""
    merged = dict(event.model.data)
    merged.update(event.data)
    event.model.set_from_json(event.attr, merged, setter=event.setter)


def _install_column_merge() -> None:
    """Make this process's Bokeh client apply column changes as a browser does (:func:`_merge_columns`)."""
    from bokeh.document.events import ColumnDataChangedEvent

    ColumnDataChangedEvent._handle_event = staticmethod(_merge_columns)

