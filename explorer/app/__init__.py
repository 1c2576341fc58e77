"""The served Resampling Explorer: one Panel page (FastListTemplate) per browser session.

``explorer serve`` calls :func:`explorer.serving.server.serve`, which serves :func:`create_app`; ``panel serve
explorer/app/__init__.py`` runs this file, which then marks the page servable (give it ``--keep-alive 0`` for the keep-alive
:func:`~explorer.serving.server.serve` sets,
:data:`~explorer.runtime.sessions.KEEP_ALIVE`). Either way :func:`create_app` builds the page of one session, so that every session
has its own state, widgets and background jobs. The page holds every page of the registry
(:data:`explorer.views.pages.PAGES`) in tab-bar order; this module names none of them.

The Monte-Carlo of every session runs on one Dask engine (:mod:`explorer.runtime.engine`): :func:`~explorer.serving.server.serve` opens it
with the server (a local cluster of worker processes, or ``scheduler``) and closes it when the server stops;
under ``panel serve`` the sessions share the process's engine (:func:`explorer.runtime.engine.shared_engine`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

import panel as pn
from bokeh.resources import Resources

from explorer.app.warmup import WarmUp, warm_up_note
from explorer.runtime import caches
from explorer.runtime import engine as dask_engine
from explorer.runtime.sessions import bind_to_session
from explorer.views.classroom.entry import lecturer_content, student_content
from explorer.views.common.layout.engine_status import engine_status
from explorer.views.common.layout.glossary import Glossary
from explorer.views.common.layout.page import PageContext
from explorer.views.common.layout.presentation import PRESENTATION_CSS, TAB_BAR_CSS, presentation_switch
from explorer.views.common.layout.widgets import LazyTabs
from explorer.views.common.state.links import link_page
from explorer.views.common.state.presets import PresetMenu
from explorer.views.pages import GLOSSARY, MENU_NAMES, PAGES, PRESETS, STATE_LABELS

__all__ = ["DATA_DIR_ENV", "TITLE", "SERVED_BOKEH_BUNDLES", "Page", "create_app", "create_lecturer_page",
           "create_student_page"]

DATA_DIR_ENV = "EXPLORER_DATA_DIR"
TITLE = "Resampling Explorer"
log = logging.getLogger(__name__)

pn.extension("tabulator")


#: The BokehJS bundles a page loads. Bokeh's server names all five; not these two: ``bokeh-gl`` (no figure draws
#: with WebGL) and ``bokeh-mathjax`` (1.8 MB; Panel asks for it as soon as a page has a Markdown pane, but no text of
#: ours is TeX). That is 2 MB of the page's 6.3 MB of JavaScript and CSS that no browser (a student's laptop, a
#: lecturer's projector machine) has to fetch and parse.
SERVED_BOKEH_BUNDLES = ("bokeh", "bokeh-widgets", "bokeh-tables")


class Page(pn.template.FastListTemplate):
    """Panel's FastListTemplate, whose page loads nothing from another site and only the BokehJS bundles of
    :data:`SERVED_BOKEH_BUNDLES`.

    Bokeh's server gives every page all five bundles and has no setting to choose them (bokeh/bokeh#13101; Panel
    drops MathJax only from a page without a Markdown pane, holoviz/panel#2796), and Panel's Fast design links its
    web font from fonts.googleapis.com. A Panel template is a Jinja template: ``page.html`` extends the
    FastListTemplate's and overrides the blocks that write the bundles' script tags (``js_resources``, as Panel's
    guide *Build a Custom Template* does) and the stylesheets (``css_resources``, ``postamble``), leaving out the lines of
    the unused bundles and of another site's stylesheets. ``tests/test_app.py`` checks that Bokeh still names all
    five bundles and Panel's design the font, and that a page of ours loads three bundles and no font.
    """

    #: The Jinja file of the page (a template subclass names its file in ``_template``, as Panel's own do).
    _template = Path(__file__).with_name("page.html")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        unused = [name for name in Resources(mode="server").components if name not in SERVED_BOKEH_BUNDLES]
        # a script's address ends ".../static/js/<bundle>.min.js?v=…" (".js" in Bokeh's dev mode); a variable of
        # every rendering of the Jinja template (Panel parses the file once, for every page)
        self.template.globals["unused_bundle_files"] = [f"/{name}." for name in unused]


def create_app(data_dir: str | os.PathLike | None = None, *, engine: dask_engine.Engine | None = None,
               tab: str | None = None, warm_up: WarmUp | None = None,
               on_session_end: Callable[[], None] | None = None, **settings) -> Page:
    """The page of one session: a sidebar of controls and the tabs of every page of :data:`~explorer.views.pages.PAGES`;
    the URL carries the controls' state.

    ``data_dir`` (default: the ``EXPLORER_DATA_DIR`` environment variable) is a folder whose CSV files
    are offered as datasets next to the shipped ones. ``engine`` runs the Monte-Carlo of every tab (default:
    the process's shared engine); the sidebar says where. ``tab`` is the URL name of the tab that opens first
    (default: the first page's; in a served session the link's ``?tab=`` decides). ``warm_up`` is the server's
    warm-up (:class:`~explorer.app.warmup.WarmUp`): the sidebar says while it runs. ``on_session_end`` is called
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
    glossary = Glossary(GLOSSARY)  # the header's "Glossary": the words of every page, in the template's modal
    template = Page(
        # one card in main: no empty one above
        title=TITLE, sidebar=[sidebar, warm_up_note(warm_up), engine_status(engine)], main=[main],
        header=[presets.menu, glossary.button, _presentation_switch(pages.values())], modal=[glossary],
        sidebar_width=330, accent="#1f77b4", header_background="#1f4e79", design=pn.theme.Fast,
    )
    template.config.raw_css.append(PRESENTATION_CSS)
    glossary.attach(template)
    template.pages = pages  # handles for tests and notebooks
    template.tabs, template.tab_names = tabs, names
    template.presets = presets
    template.tab_controls = tab_controls  # the sidebar column shown for each tab, in the order of the tabs
    return template


#: The class room's pages are laid out at the phone's own width (without it a phone lays a page out 980 px wide).
PHONE_VIEWPORT = "width=device-width, initial-scale=1"

#: The class room's pages have no busy indicator. Panel's is one for the whole server (``pn.state.busy``): every
#: event of any session (a student's click) sets it on and off, and each time the indicator of every open page with
#: one, a message to each: 60 phones drawing a resample every 2 s each would have the server send thousands of
#: messages a second and fall minutes behind. The pages say what they are doing themselves (the counts, the figure).
CLASS_ROOM_PAGE = {"busy_indicator": None, "accent": "#1f77b4", "header_background": "#1f4e79",
                   "design": pn.theme.Fast, "meta_viewport": PHONE_VIEWPORT}


def create_lecturer_page() -> Page:
    """The projector view of a class room (``/lecture?room=…&key=…``, the link "Start a class room" gives on the
    step-by-step page): :func:`explorer.views.classroom.entry.lecturer_content` in the app's template."""
    main, sidebar = lecturer_content()
    return Page(title=f"{TITLE}: class room", main=main, sidebar=sidebar, sidebar_width=330, **CLASS_ROOM_PAGE)


def create_student_page() -> Page:
    """A student's phone page in a class room (``/class?room=…``, the join link and QR code of the projector view):
    :func:`explorer.views.classroom.entry.student_content` in the app's template, without a sidebar."""
    return Page(title="Class room", main=student_content(), collapsed_sidebar=True, **CLASS_ROOM_PAGE)


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


if pn.state.served:
    create_app().servable(title=TITLE)
