"""A page of the app, declared once: what the app, the links, the presets and the sidebar need to know of it.

A :class:`Page` names its tabs (URL name → title, in the order of the tab bar), its states (URL prefix → what the
page calls them), its presets and how to build it for one session (``build(context)`` → a :class:`PageView`).
The registry :mod:`explorer.views.pages` lists the pages; :func:`explorer.app.create_app`, the links
(:mod:`explorer.views.common.state.links`), the presets menu and the sidebar iterate over it and know no paper. A page's
views are its own business: the Gaussian-process page has four tabs and one sidebar, the others one tab each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import param

from explorer.views.common.layout.tab import DeferredTab

__all__ = ["Page", "PageContext", "PageView", "DeferredPageView", "states_settings"]


@dataclass(frozen=True)
class PageContext:
    """What every page of one session is built with: the Dask ``engine`` (None: the process's shared one), the
    server's ``data_dir`` (CSV files offered as data; None: none) and initial ``settings`` by URL name
    (``prefix + parameter``, e.g. ``dataset`` for the Gaussian-process state, ``svm_dataset`` for the SVM's)."""

    engine: object | None = None
    data_dir: str | None = None
    settings: Mapping[str, object] = field(default_factory=dict)


def states_settings(context: PageContext, prefix: str, state_class: type[param.Parameterized]) -> dict:
    """The initial values of ``context.settings`` that a state of ``state_class`` under ``prefix`` takes."""
    found = {}
    for name, value in context.settings.items():
        own = name[len(prefix):] if name.startswith(prefix) else None
        if own and own in state_class.param and own != "name":
            found[own] = value
    return found


class PageView(param.Parameterized):
    """One page of one session: its states by URL prefix, its tabs and its sidebar controls.

    Subclasses give :meth:`tab_items` and :meth:`controls`; :meth:`opened` is called when one of the page's tabs
    is shown (by name), :meth:`start` once the page is built (compute what the page shows first).
    """

    presentation = param.Boolean(default=False, label="Presentation",
                                 doc="Draw the figures for a projector (the header's switch).")
    show = param.String(default=None, allow_None=True, label="Tab to show",
                        doc="A tab of this page (by URL name) the page asks the app to open, e.g. after a click.")

    def __init__(self, page: Page, states: Mapping[str, param.Parameterized], **params):
        super().__init__(**params)
        self.page, self.states = page, dict(states)
        self.started = False

    def ensure_started(self) -> None:
        """:meth:`start` the page, once (the app calls it when one of the page's tabs is first shown: the open
        page computes first, the others when opened)."""
        if not self.started:
            self.started = True
            self.start()

    def tab_items(self) -> list[tuple[str, object]]:
        """``(title, content)`` per tab of the page, in the order of ``page.tabs``."""
        raise NotImplementedError

    def controls(self) -> object:
        """The sidebar's content while a tab of this page is open (made on first call)."""
        raise NotImplementedError

    def opened(self, name: str) -> None:
        """The page's tab ``name`` (a key of ``page.tabs``) is now the one shown."""

    def start(self) -> None:
        """Start computing what the page shows (its jobs run in the background)."""

    def loaded(self) -> None:
        """The browser shows the page (served sessions): show what is ready."""

    @property
    def messages(self) -> object | None:
        """Messages shown above the tab bar (None: none)."""
        return None



class DeferredPageView(PageView):
    """A page of one tab whose view is made when first opened (:class:`~explorer.views.common.layout.tab.DeferredTab`);
    its states exist and compute from the start."""

    def __init__(self, page: Page, states: Mapping[str, param.Parameterized],
                 make: Callable[..., object], **params):
        super().__init__(page, states, **params)
        first, *rest = self.states.items()
        extra = {role: self.states[prefix] for role, prefix in zip(page.extra_roles, [p for p, _ in rest])}
        self.tab = DeferredTab(make, first[1], **extra)
        self.param.watch(lambda event: setattr(self.tab, "presentation", event.new), "presentation")

    def tab_items(self) -> list[tuple[str, object]]:
        (title,) = self.page.tabs.values()
        return [(title, self.tab)]

    def controls(self) -> object:
        return self.tab.view.controls

    def start(self) -> None:
        self.tab.start()


@dataclass(frozen=True)
class Page:
    """A page declared once.

    ``key`` names it; ``tabs`` maps each of its tabs' URL name (``?tab=…``) to the title on the tab bar; ``states``
    maps the URL prefix of each of its states to what the page calls it (preset messages use it), the main state
    first; ``extra_roles`` names the further states for the tab's view (e.g. ``("experiments",)``); ``build`` makes
    the :class:`PageView` of one session; ``presets`` are its "Reproduce a figure" entries; ``glossary`` its own words
    in the app's glossary (:class:`~explorer.views.common.layout.glossary.Entry`, after the words every page shares);
    ``citation`` names its paper in plain words for the menu ("Malzahn & Opper 2005").
    """

    key: str
    tabs: Mapping[str, str]
    states: Mapping[str, str]
    build: Callable[[Page, PageContext], PageView]
    presets: tuple = ()
    glossary: tuple = ()
    extra_roles: tuple[str, ...] = ()
    citation: str = ""

    def view(self, context: PageContext) -> PageView:
        """The page of one session."""
        return self.build(self, context)
