"""The served Resampling Explorer: one Panel page (FastListTemplate) per browser session.

``explorer serve`` calls :func:`serve`; ``panel serve explorer/app.py`` runs this file, which then marks
the page servable. Either way :func:`create_app` builds the page of one session, so that every session
has its own state, widgets and background jobs.

The Monte-Carlo of every session runs on one Dask engine (:mod:`explorer.engine`): :func:`serve` opens it
with the server (a local cluster of worker processes, or ``scheduler``) and closes it when the server stops;
under ``panel serve`` the sessions share the process's engine (:func:`explorer.engine.shared_engine`).
"""

from __future__ import annotations

import atexit
import os
import signal
from functools import partial

import panel as pn

from explorer import engine as dask_engine
from explorer.views import GPBootstrapState, GPBootstrapView
from explorer.views.common.engine_status import engine_status
from explorer.views.common.links import link_page
from explorer.views.common.presentation import PRESENTATION_CSS, presentation_switch
from explorer.views.common.presets import PresetMenu, page_states, page_tab_opener
from explorer.views.common.session import bind_to_session
from explorer.views.common.tab import DeferredTab
from explorer.views.fast_bootstrap import FastBootstrapState, FastBootstrapTab
from explorer.views.model_selection import SelectionExperimentState, SelectionState, SelectionTab
from explorer.views.svm_bootstrap.tab import SVMState, SVMTab

__all__ = ["DATA_DIR_ENV", "SERVED_BOKEH_BUNDLES", "TITLE", "create_app", "serve"]

DATA_DIR_ENV = "EXPLORER_DATA_DIR"
TITLE = "Resampling Explorer"
DEFAULT_PORT = 5006
DEFAULT_ADDRESS = "127.0.0.1"

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
               **settings) -> pn.template.FastListTemplate:
    """The page of one session: sidebar of controls, four tabs; the URL carries the controls' state.

    ``data_dir`` (default: the ``EXPLORER_DATA_DIR`` environment variable) is a folder whose CSV files
    are offered as datasets next to the shipped ones. ``engine`` runs the Monte-Carlo of every tab (default:
    the process's shared engine); the sidebar says where. ``settings`` are initial values of
    :class:`~explorer.views.GPBootstrapState` parameters (e.g. ``dataset="teacher"``); parameters in the
    page URL override them. The view is reachable as ``template.explorer`` (a ``GPBootstrapView``).

    In a served session the background jobs start with the page, before the browser shows it: their Monte-Carlo
    runs in Dask workers at a lower priority than the server, so it does not hold the page back, and under a
    class's load a page takes 5-14 s to reach its browser (``benchmarks/bench_served_load.py``), time in which
    the curve computes. A page that is fetched but never shown computes until Bokeh discards its session. The
    synchronous work is the ADATAP solve at the current S/N (~0.1 s).
    """
    data_dir = data_dir if data_dir is not None else os.environ.get(DATA_DIR_ENV) or None
    state = GPBootstrapState(data_dir=None if data_dir is None else str(data_dir), client=engine, **settings)
    bind_to_session(state)  # job updates on the session's event loop, in order; closed with the session
    view = GPBootstrapView(state=state)
    # seed 004, seed 001 and seed 002 tabs: their own state, their view made when first opened; their jobs
    # start now (results are cached across sessions), so that a tab opened later shows finished figures
    others = _other_tabs(engine, state.data_dir)
    for tab in others.values():
        bind_to_session(tab.state)
        for extra in tab.extra_states.values():
            bind_to_session(extra)
        tab.start()
    view.tabs.extend(list(others.items()))
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        write_url = link_page(view, others)  # the URL carries the open tab and every tab's settings
        pn.state.onload(partial(_on_load, state, write_url))
    state.refresh()
    sidebar, tab_controls = _sidebar(view, others)
    presets = PresetMenu(page_states(view, others), page_tab_opener(view.tabs))  # "Reproduce a figure"
    template = pn.template.FastListTemplate(
        title=TITLE, sidebar=[sidebar, engine_status(engine)], main=[pn.Column(presets.panel, view.main, sizing_mode="stretch_width")],  # one card: no empty one above
        header=[presets.menu, _presentation_switch(view, others)],
        sidebar_width=330, accent="#1f77b4", header_background="#1f4e79", design=Fast,
    )
    template.config.raw_css.append(PRESENTATION_CSS)
    template.explorer = view  # handles for tests and notebooks
    template.other_tabs = others
    template.presets = presets
    template.tab_controls = tab_controls  # the sidebar column shown for each tab, in the order of the tabs
    return template


def _other_tabs(engine: dask_engine.Engine | None, data_dir: str | None = None) -> dict[str, DeferredTab]:
    """The SVM, Model selection and Fast bootstrap tabs by title: states now, views when first opened; the files of
    ``data_dir`` are offered as the temperature series and the time series."""
    return {
        "SVM bootstrap": DeferredTab(lambda state: SVMTab(state=state, controls_in_sidebar=True),
                                     SVMState(client=engine)),
        "Model selection": DeferredTab(
            lambda state, experiments: SelectionTab(state=state, experiments=experiments, controls_in_sidebar=True),
            SelectionState(client=engine),
            experiments=SelectionExperimentState(client=engine, data_dir=data_dir)),
        "Fast bootstrap": DeferredTab(lambda state: FastBootstrapTab(state=state, controls_in_sidebar=True),
                                      FastBootstrapState(client=engine, data_dir=data_dir)),
    }


def _sidebar(view: GPBootstrapView, others: dict) -> tuple[pn.Column, list[pn.Column]]:
    """One sidebar column whose content follows the open tab: the Gaussian-process controls on the four GP
    tabs, each other tab's own controls on that tab (put in its column when the tab is first opened). Returns
    the sidebar and the column shown per tab."""
    gp = pn.Column(view.controls, sizing_mode="stretch_width")
    own = {title: pn.Column(sizing_mode="stretch_width", visible=False) for title in others}
    per_tab = [gp] * (len(view.tabs) - len(others)) + list(own.values())
    columns = list({id(column): column for column in per_tab}.values())
    tabs = list(others.values())

    def follow(*events) -> None:
        index = view.tabs.active - (len(view.tabs) - len(others))
        if index >= 0 and not per_tab[view.tabs.active].objects:
            per_tab[view.tabs.active].objects = [tabs[index].view.controls]
        for column in columns:
            column.visible = column is per_tab[view.tabs.active]

    view.tabs.param.watch(follow, "active")
    follow()
    return pn.Column(*columns, sizing_mode="stretch_width", css_classes=["explorer-sidebar"]), per_tab


def _presentation_switch(view: GPBootstrapView, others: dict) -> pn.widgets.Toggle:
    """The header's "Presentation" switch: larger text in the page (CSS, in the browser) and larger fonts and
    thicker lines in every tab's figures."""
    switch = presentation_switch()
    tabs = [*view.tab_views.values(), *others.values()]
    switch.param.watch(lambda event: [tab.param.update(presentation=event.new) for tab in tabs], "value")
    return switch


def _on_load(state: GPBootstrapState, write_url) -> None:
    """The browser shows the page: complete the URL, show what is ready (also a result whose update was lost)."""
    write_url()
    state.start_jobs()


def serve(port: int = DEFAULT_PORT, address: str = DEFAULT_ADDRESS, *,
          allow_websocket_origin: list[str] | None = None, data_dir: str | os.PathLike | None = None,
          show: bool = False, scheduler: str | None = None, workers: int | None = None, **kwargs) -> None:
    """Serve the explorer on ``address:port`` (default 127.0.0.1:5006) until interrupted (Ctrl-C or SIGTERM).

    The Monte-Carlo runs on a Dask engine opened here and closed when the server stops: the scheduler at
    ``scheduler`` (default ``$EXPLORER_SCHEDULER``), else a local cluster of ``workers`` processes (default one
    per core, one thread each). ``allow_websocket_origin`` lists extra ``host[:port]`` origins allowed to open
    the websocket (needed when the page is reached through another host name, e.g. a proxy). Further keyword
    arguments go to ``pn.serve``.

    Raises
    ------
    explorer.engine.EngineError
        If the scheduler cannot be reached (nothing is served then).
    OSError
        If the server cannot listen on ``address:port`` (in use, not an address of this machine, a privileged
        port): tried before the engine starts, so nothing is left running.
    """
    _check_address(address, port)
    origins = [f"{host}:{port}" for host in dict.fromkeys(("localhost", "127.0.0.1", address))]
    origins += list(allow_websocket_origin or [])
    engine = dask_engine.connect(scheduler, workers=workers)
    atexit.register(engine.close)  # also if the loop below ends by an exception nobody catches

    def app() -> pn.template.FastListTemplate:  # a plain function: pn.serve calls it once per session
        return create_app(data_dir, engine=engine)

    try:
        server = pn.serve(app, port=port, address=address, websocket_origin=origins, show=show, title=TITLE,
                          start=False, **kwargs)
        _load_only_needed_bundles(server)
        _stop_on_signals(server)
        server.start()
        server.io_loop.start()
    finally:
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


def _load_only_needed_bundles(server) -> None:
    """Pages of ``server`` load the BokehJS bundles of :data:`SERVED_BOKEH_BUNDLES` only.

    Bokeh's server application (``server._tornado``, a ``BokehTornado``) makes the resources of every page; Panel
    then drops MathJax only from a page without text. The wrapper replaces its ``resources`` on this one server.
    """
    application = server._tornado
    resources = application.resources

    def needed_bundles(absolute_url=None):
        every = resources(absolute_url)
        return every.clone(components=[c for c in every.components if c in SERVED_BOKEH_BUNDLES])

    application.resources = needed_bundles


def _stop_on_signals(server) -> None:
    """Ctrl-C (SIGINT) and SIGTERM stop the server's event loop, so that :func:`serve` closes the engine."""
    def stop(*_) -> None:
        server.io_loop.asyncio_loop.call_soon_threadsafe(server.io_loop.stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)


if pn.state.served:
    create_app().servable(title=TITLE)
