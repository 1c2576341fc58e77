"""The served Resampling Explorer: one Panel page (FastListTemplate) per browser session.

``explorer serve`` calls :func:`serve`; ``panel serve explorer/app.py`` runs this file, which then marks
the page servable (give it ``--keep-alive 0`` for the keep-alive :func:`serve` sets,
:data:`~explorer.views.common.session.KEEP_ALIVE`). Either way :func:`create_app` builds the page of one session, so that every session
has its own state, widgets and background jobs. The page holds every page of the registry
(:data:`explorer.views.pages.PAGES`) in tab-bar order; this module names none of them.

The Monte-Carlo of every session runs on one Dask engine (:mod:`explorer.engine`): :func:`serve` opens it
with the server (a local cluster of worker processes, or ``scheduler``) and closes it when the server stops;
under ``panel serve`` the sessions share the process's engine (:func:`explorer.engine.shared_engine`).
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

from explorer import engine as dask_engine
from explorer.views.common import caches
from explorer.views.common.engine_status import engine_status
from explorer.views.common.glossary import Glossary
from explorer.views.common.links import link_page
from explorer.views.common.page import PageContext
from explorer.views.common.presentation import PRESENTATION_CSS, TAB_BAR_CSS, presentation_switch
from explorer.views.common.presets import PresetMenu
from explorer.views.common.session import KEEP_ALIVE, bind_to_session
from explorer.views.common.widgets import LazyTabs
from explorer.views.compat import load_only_bundles
from explorer.views.pages import MENU_NAMES, PAGES, PRESETS, STATE_LABELS
from explorer.views.warmup import WarmUp, draw_every_tab, on_loop, warm_up_note

__all__ = ["DATA_DIR_ENV", "IDLE_RELEASE_AFTER", "LOG_LEVEL_ENV", "SERVED_BOKEH_BUNDLES", "TITLE", "create_app",
           "pages_open", "release_when_idle", "serve"]

DATA_DIR_ENV = "EXPLORER_DATA_DIR"
TITLE = "Resampling Explorer"
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

log = logging.getLogger(__name__)

#: The BokehJS bundles a page of :func:`serve` loads. Bokeh's server sends all five; not these two:
#: ``bokeh-gl`` (no figure draws with WebGL) and ``bokeh-mathjax`` (1.8 MB; Panel asks for it as soon as a page has a
#: Markdown pane, but no text of ours is TeX). That is 2 MB of the page's 6.3 MB of JavaScript and CSS that no
#: browser (a student's laptop, a lecturer's projector machine) has to fetch and parse.
SERVED_BOKEH_BUNDLES = ("bokeh", "bokeh-widgets", "bokeh-tables")

pn.extension("tabulator")


class Fast(pn.theme.Fast):
    """Panel's Fast design without its web font from fonts.googleapis.com (text falls back to a local
    Open Sans or sans-serif): every resource of the page then comes from the explorer's own server, so the
    page works offline and the browser console shows no failed request. (The class keeps the name ``Fast``:
    Panel finds a design's bundled files under the lower-cased class name.)"""

    _resources = {**pn.theme.Fast._resources, "font": {}}


def create_app(data_dir: str | os.PathLike | None = None, *, engine: dask_engine.Engine | None = None,
               tab: str | None = None, warm_up: WarmUp | None = None,
               on_session_end: Callable[[], None] | None = None, **settings) -> pn.template.FastListTemplate:
    """The page of one session: a sidebar of controls and the tabs of every page of :data:`~explorer.views.pages.PAGES`;
    the URL carries the controls' state.

    ``data_dir`` (default: the ``EXPLORER_DATA_DIR`` environment variable) is a folder whose CSV files
    are offered as datasets next to the shipped ones. ``engine`` runs the Monte-Carlo of every tab (default:
    the process's shared engine); the sidebar says where. ``tab`` is the URL name of the tab that opens first
    (default: the first page's; in a served session the link's ``?tab=`` decides). ``warm_up`` is the server's
    warm-up (:class:`~explorer.views.warmup.WarmUp`): the sidebar says while it runs. ``on_session_end`` is called
    when a served session ends (on the server's event loop; :func:`serve` frees the sessions' results once none is
    left). ``settings`` are initial
    values by their URL name (e.g. ``dataset="teacher"`` for the Gaussian-process state, ``svm_dataset="pima"`` for the SVM's); parameters
    in the page URL override them. The session's page views are ``template.pages`` (key → page view), the tab bar
    ``template.tabs`` (its i-th tab named ``template.tab_names[i]`` in the URL).

    In a served session the background jobs of the open page start with the page, before the browser shows it
    (another page's when one of its tabs is first opened, so that the open page has the workers first): their
    Monte-Carlo runs in Dask workers at a lower priority than the server, so it does not hold the page back, and
    under a
    class's load a page takes 5-14 s to reach its browser (``benchmarks/bench_served_load.py``), time in which
    the curve computes. A page that is fetched but never shown computes until Bokeh discards its session. The
    synchronous work is the ADATAP solve at the current S/N (~0.1 s). A tab's widgets and figures are made when
    it is first opened.

    Raises
    ------
    ValueError
        If a name of ``settings`` is a parameter of no page's state.
    """
    data_dir = data_dir if data_dir is not None else os.environ.get(DATA_DIR_ENV) or None
    context = PageContext(engine=engine, data_dir=None if data_dir is None else str(data_dir), settings=settings)
    pages = {page.key: page.view(context) for page in PAGES}
    _check_settings(settings, pages)
    for view in pages.values():
        for state in view.states.values():
            bind_to_session(state)  # job updates on the session's event loop, in order; closed with the session
    owners = [(name, view) for view in pages.values() for name in view.page.tabs]
    names = [name for name, _ in owners]
    tabs = LazyTabs(*[item for view in pages.values() for item in view.tab_items()],
                    css_classes=["explorer-tabs"], stylesheets=[TAB_BAR_CSS], sizing_mode="stretch_width")
    _follow_requests(pages.values(), tabs, names)
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        write_url = link_page(list(pages.values()), tabs, names)  # the URL carries the open tab and every setting
        pn.state.on_session_destroyed(partial(_session_ended, on_session_end))
        pn.state.onload(partial(_on_load, list(pages.values()), write_url))
    elif tab is not None:
        if tab not in names:
            raise ValueError(f"create_app() got tab={tab!r}; the tabs are {', '.join(names)}.")
        _open_tab(tabs, names, tab)
    else:
        _open_asked(pages.values(), tabs, names)
    owners[tabs.active][1].ensure_started()  # the open page computes now, the others when first opened
    sidebar, tab_controls = _sidebar(tabs, owners)
    states = {prefix: state for view in pages.values() for prefix, state in view.states.items()}
    presets = PresetMenu(PRESETS, states, partial(_open_tab, tabs, names), STATE_LABELS, MENU_NAMES)
    messages = [view.messages for view in pages.values() if view.messages is not None]
    # figure first: the pages' messages and the preset's panel (citation, settings, the paper's numbers beside ours)
    # under the tabs, never above them (appearing, they would move the figure)
    main = pn.Column(tabs, *messages, presets.panel, sizing_mode="stretch_width")
    glossary = Glossary()  # the header's "Glossary": the words of every page, in the template's modal
    template = pn.template.FastListTemplate(
        # one card in main: no empty one above
        title=TITLE, sidebar=[sidebar, warm_up_note(warm_up), engine_status(engine)], main=[main],
        header=[presets.menu, glossary.button, _presentation_switch(pages.values())], modal=[glossary],
        sidebar_width=330, accent="#1f77b4", header_background="#1f4e79", design=Fast,
    )
    template.config.raw_css.append(PRESENTATION_CSS)
    glossary.attach(template)
    template.pages = pages  # handles for tests and notebooks
    template.tabs, template.tab_names = tabs, names
    template.presets = presets
    template.tab_controls = tab_controls  # the sidebar column shown for each tab, in the order of the tabs
    return template


def _check_settings(settings: dict, pages: dict) -> None:
    """Raise ValueError naming the ``settings`` that no state of the page views ``pages`` takes."""
    known = {prefix + name for view in pages.values() for prefix, state in view.states.items() for name in state.param}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"create_app() got setting(s) no page takes: {', '.join(unknown)}.")


def _open_tab(tabs: pn.Tabs, names: list[str], name: str) -> None:
    """Open the tab whose URL name is ``name`` (nothing if there is none)."""
    if name in names:
        tabs.active = names.index(name)


def _open_asked(pages, tabs: pn.Tabs, names: list[str]) -> None:
    """Without a link: open the tab the first page that asks for one asks for."""
    asked = [view.show for view in pages if view.show in names]
    if asked:
        _open_tab(tabs, names, asked[0])


def _follow_requests(pages, tabs: pn.Tabs, names: list[str]) -> None:
    """A page that asks for one of its tabs (``show``) gets it opened; the open tab is told to its page."""
    owner = {name: view for view in pages for name in view.page.tabs}
    for view in pages:
        view.param.watch(lambda event: _open_tab(tabs, names, event.new), "show")

    def opened(event) -> None:
        view = owner[names[event.new]]
        view.ensure_started()
        view.opened(names[event.new])

    tabs.param.watch(opened, "active")


def _sidebar(tabs: pn.Tabs, owners: list[tuple[str, object]]) -> tuple[pn.Column, list[pn.Column]]:
    """One sidebar column whose content follows the open tab: each page's controls (put in its column when one of
    its tabs is first opened) while one of its tabs is open. Returns the sidebar and the column shown per tab."""
    own = {id(view): pn.Column(sizing_mode="stretch_width", visible=False) for _, view in owners}
    per_tab = [own[id(view)] for _, view in owners]
    columns = list(own.values())

    def follow(*events) -> None:
        column, view = per_tab[tabs.active], owners[tabs.active][1]
        if not column.objects:
            column.objects = [view.controls()]
        for other in columns:
            other.visible = other is column

    tabs.param.watch(follow, "active")
    follow()
    return pn.Column(*columns, sizing_mode="stretch_width", css_classes=["explorer-sidebar"]), per_tab


def _presentation_switch(pages) -> pn.widgets.Toggle:
    """The header's "Presentation" switch: larger text in the page (CSS, in the browser) and larger fonts and
    thicker lines in every page's figures."""
    switch = presentation_switch()
    views = list(pages)
    switch.param.watch(lambda event: [view.param.update(presentation=event.new) for view in views], "value")
    return switch


def _on_load(pages, write_url) -> None:
    """The browser shows the page: complete the URL, show what is ready (also a result whose update was lost)."""
    write_url()
    for view in pages:
        if view.started:
            view.loaded()


def _session_ended(callback: Callable[[], None] | None, context) -> None:
    """A served session ended: say what the result caches all sessions share hold (``$EXPLORER_LOG_LEVEL=info``),
    then call ``callback``."""
    log.info("a session ended; %s", caches.registry.describe())
    if callback is not None:
        callback()


def pages_open(server) -> int:
    """The sessions of the Bokeh ``server`` with a page connected: not a bare HTTP request (a link preview, a probe
    whether the server answers: its session lives on unconnected for ~30 s), nor a page already closed."""
    return sum(1 for session in server.get_sessions() if session.connection_count)


def release_when_idle(sessions: Callable[[], int], warm_up: WarmUp | None = None,
                      engine: dask_engine.Engine | None = None) -> int:
    """If no session is open (``sessions()`` is 0) and the warm-up, if any, has finished, drop the results the
    sessions added to the shared caches (the warm-up's stay:
    :meth:`~explorer.views.common.caches.CacheRegistry.drop_unkept`) and give their memory back to the system, this process's and, on a thread of its own, the
    ``engine``'s workers' (:meth:`~explorer.engine.Engine.return_workers_memory`), after its local scheduler let go
    of the finished jobs (:meth:`~explorer.engine.Engine.forget_finished_jobs`); return the bytes dropped
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
          show: bool = False, scheduler: str | None = None, workers: int | None = None, **kwargs) -> None:
    """Serve the explorer on ``address:port`` (default 127.0.0.1:5006) until interrupted (Ctrl-C or SIGTERM).

    The Monte-Carlo runs on a Dask engine opened here and closed when the server stops: the scheduler at
    ``scheduler`` (default ``$EXPLORER_SCHEDULER``), else a local cluster of ``workers`` processes (default one
    per core, one thread each). ``allow_websocket_origin`` lists extra ``host[:port]`` origins allowed to open
    the websocket (needed when the page is reached through another host name, e.g. a proxy). Further keyword
    arguments go to ``pn.serve``.

    With ``warm_up`` the server computes every page's default view and every preset in the background as soon as
    it listens (:class:`~explorer.views.warmup.WarmUp`: the caches the sessions share are then warm when the class
    arrives; it waits while a page is open, and the sidebar says while it runs), and draws every tab once on its
    event loop (:func:`~explorer.views.warmup.draw_every_tab`). :data:`IDLE_RELEASE_AFTER` seconds
    after a session ends, if no other is open, the results the sessions added are dropped (:func:`release_when_idle`).

    Raises
    ------
    explorer.engine.EngineError
        If the scheduler cannot be reached (nothing is served then).
    OSError
        If the server cannot listen on ``address:port`` (in use, not an address of this machine, a privileged
        port): tried before the engine starts, so nothing is left running.
    """
    _check_address(address, port)
    _configure_log()
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

    def app() -> pn.template.FastListTemplate:  # a plain function: pn.serve calls it once per session
        return create_app(data_dir, engine=engine, warm_up=warm, on_session_end=release_later)

    try:
        server = pn.serve(app, port=port, address=address, websocket_origin=origins, show=show, title=TITLE,
                          start=False, **{**KEEP_ALIVE, **kwargs})
        load_only_bundles(server, SERVED_BOKEH_BUNDLES)
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


if pn.state.served:
    create_app().servable(title=TITLE)
