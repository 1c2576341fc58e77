"""The server of the explorer: :func:`serve` (``explorer serve``) serves the page of :func:`explorer.app.create_app`
to every browser session, with the Dask engine it opens and closes, the keep-alive of the sessions
(:data:`~explorer.runtime.sessions.KEEP_ALIVE`), the warm-up (:mod:`explorer.app.warmup`), the release of memory
once no page is open (:func:`release_when_idle`), the log level and the signals that stop it. (The BokehJS bundles
a page loads are the page template's: :class:`explorer.app.Page`.)
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from functools import partial

import panel as pn
from tornado.ioloop import IOLoop

from explorer.app import TITLE, Page, create_app, create_lecturer_page, create_student_page
from explorer.app.warmup import WarmUp, draw_every_tab, on_loop
from explorer.runtime import caches, rooms
from explorer.runtime import engine as dask_engine
from explorer.runtime.sessions import KEEP_ALIVE
from explorer.views.classroom.entry import LECTURER_PATH, STUDENT_PATH
from explorer.views.common.layout.page import PageContext

__all__ = ["DEFAULT_PORT", "DEFAULT_ADDRESS", "LOG_LEVEL_ENV", "LOG_LEVELS", "IDLE_RELEASE_AFTER",
           "pages_open", "release_when_idle", "serve"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 5006


DEFAULT_ADDRESS = "127.0.0.1"


#: Environment variable: the level of the explorer's own log lines on the server's stderr, ``debug``, ``info``,
#: ``warning`` (default) or ``error``. ``info`` also says when a warm-up item is skipped and, at each session's end,
#: what the result caches hold (``EXPLORER_LOG_LEVEL=info explorer serve``).
LOG_LEVEL_ENV = "EXPLORER_LOG_LEVEL"


LOG_LEVELS = ("debug", "info", "warning", "error")


#: Seconds after a session ends before a server with no session left drops its sessions' results (Bokeh ends a
#: closed page's session 15-30 s after the page closed).
IDLE_RELEASE_AFTER = 30.0


def pages_open(server) -> int:
    """The sessions of the Bokeh ``server`` with a page connected: not a bare HTTP request (a link preview, a probe
    whether the server answers: its session lives on unconnected for ~30 s), nor a page already closed."""
    return sum(1 for session in server.get_sessions() if session.connection_count)



def release_when_idle(sessions: Callable[[], int], warm_up: WarmUp | None = None,
                      engine: dask_engine.Engine | None = None) -> int:
    """If no session is open (``sessions()`` is 0) and the warm-up, if any, has finished, drop the results the
    sessions added to the shared caches (the warm-up's stay:
    :meth:`~explorer.runtime.caches.CacheRegistry.drop_unkept`) and give their memory back to the system, this process's and, on a thread of its own, the
    ``engine``'s workers' (:meth:`~explorer.runtime.engine.Engine.return_workers_memory`), after its local scheduler let go
    of the finished jobs (:meth:`~explorer.runtime.engine.Engine.forget_finished_jobs`); return the bytes dropped
    (0 when not idle).

    A server after a class then comes back to its warm level instead of keeping up to the caches' budget of the
    students' own results, which no page needs any more; the defaults and presets the warm-up computed stay warm.
    """
    if sessions() or (warm_up is not None and not warm_up.finished):
        return 0
    dropped = caches.registry.drop_unkept()
    dask_engine.return_freed_memory()
    log.info("no page open: dropped %.1f MB of the sessions' results; %s", dropped / 1e6, caches.registry.describe())
    if engine is not None:  # Client.run waits for every worker: not on the server's event loop
        threading.Thread(target=_return_workers_memory, args=(engine,), name="explorer-return-memory",
                         daemon=True).start()
    return dropped



def _return_workers_memory(engine: dask_engine.Engine) -> None:
    try:
        if engine.forget_finished_jobs():  # the local scheduler's records of the class's jobs (in this process)
            dask_engine.return_freed_memory()
        log.info("no page open: %d workers gave their freed memory back", engine.return_workers_memory())
    except Exception as err:  # noqa: BLE001 - a worker gone or busy restarting: the next idle release tries again
        log.warning("no page open: the workers' memory was not given back: %s", err)



def _configure_log() -> None:
    """Send the explorer's log lines at ``$EXPLORER_LOG_LEVEL`` and above to stderr (once per process), and only
    there: not on to the root logger as well. Bokeh logs a dropped patch with ``logging.debug`` on the root logger,
    and Python then gives the root logger a handler of its own (``logging.basicConfig``): from the first page that
    closed, every line of the explorer's came out twice."""
    logger = logging.getLogger("explorer")
    if getattr(logger, "_explorer_handler", None) is not None:
        return
    text = os.environ.get(LOG_LEVEL_ENV, "").strip().lower() or "warning"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    logger._explorer_handler = handler
    logger.setLevel(text.upper() if text in LOG_LEVELS else logging.WARNING)
    if text not in LOG_LEVELS:
        logger.warning("$%s=%r is not one of %s: logging warnings and errors", LOG_LEVEL_ENV, text,
                       ", ".join(LOG_LEVELS))



def serve(port: int = DEFAULT_PORT, address: str = DEFAULT_ADDRESS, *, warm_up: bool = True,
          allow_websocket_origin: list[str] | None = None, data_dir: str | os.PathLike | None = None,
          show: bool = False, scheduler: str | None = None, workers: int | None = None,
          room_capacity: int = rooms.ROOM_CAPACITY, **kwargs) -> None:
    """Serve the explorer on ``address:port`` (default 127.0.0.1:5006) until interrupted (Ctrl-C or SIGTERM).

    The Monte-Carlo runs on a Dask engine opened here and closed when the server stops: the scheduler at
    ``scheduler`` (default ``$EXPLORER_SCHEDULER``), else a local cluster of ``workers`` processes (default one
    per core, one thread each). ``allow_websocket_origin`` lists extra ``host[:port]`` origins allowed to open
    the websocket (needed when the page is reached through another host name, e.g. a proxy). Further keyword
    arguments go to ``pn.serve``.

    Besides the page (``/``) it serves the class rooms' pages (:mod:`explorer.views.classroom`): the lecturer's
    projector view at ``/lecture`` and the students' phone page at ``/class``; a room takes at most
    ``room_capacity`` students. A room lives in this process (:data:`explorer.runtime.rooms.registry`): a server of
    several processes (``num_procs`` > 1, passed on to ``pn.serve``) refuses to start rooms, with a sentence that
    says why.

    With ``warm_up`` the server computes every page's default view and every preset in the background as soon as
    it listens (:class:`~explorer.app.warmup.WarmUp`: the caches the sessions share are then warm when the class
    arrives; it waits while a page is open, and the sidebar says while it runs), and draws every tab once on its
    event loop (:func:`~explorer.app.warmup.draw_every_tab`). :data:`IDLE_RELEASE_AFTER` seconds
    after a session ends, if no other is open, the results the sessions added are dropped (:func:`release_when_idle`).

    Raises
    ------
    explorer.runtime.engine.EngineError
        If the scheduler cannot be reached (nothing is served then).
    OSError
        If the server cannot listen on ``address:port`` (in use, not an address of this machine, a privileged
        port): tried before the engine starts, so nothing is left running.
    """
    _check_address(address, port)
    _configure_log()
    _configure_rooms(room_capacity, int(kwargs.get("num_procs") or 1))
    origins = [f"{host}:{port}" for host in dict.fromkeys(("localhost", "127.0.0.1", address))]
    origins += list(allow_websocket_origin or [])
    engine = dask_engine.connect(scheduler, workers=workers)
    atexit.register(engine.close)  # also if the loop below ends by an exception nobody catches

    served = []  # the server, once made: the warm-up waits while it has pages open

    def open_pages() -> int:
        return pages_open(served[0]) if served else 0

    def draw() -> bool:  # every tab drawn once, step by step on the server's event loop (the warm-up's thread waits)
        return draw_every_tab(partial(create_app, data_dir, engine=engine), partial(on_loop, served[0].io_loop),
                              busy=lambda: open_pages() > 0)

    warm = (WarmUp(PageContext(engine=engine, data_dir=None if data_dir is None else str(data_dir)),
                   busy=lambda: open_pages() > 0, draw=draw) if warm_up else None)

    release = []  # the pending release: sessions ending together (a class leaving) give one release, not one each

    def release_later() -> None:  # a session ended: once the server has no page open, free what the class computed
        loop = IOLoop.current()
        if release:
            loop.remove_timeout(release.pop())
        release.append(loop.call_later(IDLE_RELEASE_AFTER, release_when_idle, open_pages, warm, engine))

    def app() -> Page:  # a plain function: pn.serve calls it once per session
        return create_app(data_dir, engine=engine, warm_up=warm, on_session_end=release_later)

    try:
        routes = {"/": app, STUDENT_PATH: create_student_page, LECTURER_PATH: create_lecturer_page}
        server = pn.serve(routes, port=port, address=address, websocket_origin=origins, show=show, title=TITLE,
                          start=False, **{**KEEP_ALIVE, **kwargs})
        _stop_on_signals(server)
        server.start()
        served.append(server)
        if warm is not None:
            warm.start()
        server.io_loop.start()
    finally:
        if warm is not None:
            warm.stop()
        engine.close()  # the worker processes of a local cluster end with the server



def _configure_rooms(capacity: int, num_procs: int) -> None:
    """Rooms of ``capacity`` students; none on a server of several processes (a room lives in one of them, and a
    student's page may reach another)."""
    refusal = "" if num_procs == 1 else (
        f"Class rooms need a server of one process: this one runs {num_procs} (num_procs), and a room lives in "
        "one of them. Start the server with one process to teach with a class room.")
    rooms.registry.configure(capacity=capacity, refusal=refusal)



def _check_address(address: str, port: int) -> None:
    """Bind the sockets the server will bind (Tornado's ``bind_sockets``, as Bokeh's server does) and close them.

    Raises
    ------
    OSError
        With what was asked, why it failed and what to do.
    """
    from tornado.netutil import bind_sockets

    try:
        sockets = bind_sockets(port, address)
    except (OSError, ValueError, OverflowError, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or err
        raise OSError(f"cannot listen on address {address!r}, port {port}: {reason}. Give an address of this "
                      "machine (127.0.0.1, 0.0.0.0) and a free port (e.g. --port 5007).") from None
    for sock in sockets:
        sock.close()



def _stop_on_signals(server) -> None:
    """Ctrl-C (SIGINT) and SIGTERM stop the server's event loop, so that :func:`serve` closes the engine."""
    def stop(*_) -> None:
        server.io_loop.asyncio_loop.call_soon_threadsafe(server.io_loop.stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
