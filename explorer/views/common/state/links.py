"""Every view is a link: the page URL carries the open tab, its sub-panel and the settings of every tab.

One query string holds them all, each state's parameters under the prefix its page declares
(:class:`~explorer.views.common.layout.page.Page` ``states``) so that no two tabs collide: the Gaussian-process tabs
without a prefix (``dataset=boston&s_over_n=0.5``, the links of earlier versions stay valid), the SVM tab
``svm_``, Model selection ``sel_`` (its Experiments sub-panel ``selx_``), Fast bootstrap ``fb_``; ``tab`` names
the open tab (a URL tab name of a page). Values are those of the states, which round
real numbers (:mod:`explorer.views.common.state.values`), so the URL shows ``0.45``, never ``0.45000000000000007``.

:func:`link_page` is the one call the app makes: it applies the link the page was opened with and keeps the URL
in step with every control from then on, as a short link (:func:`short_search`: only what differs from the
defaults; the default page is the bare URL). :func:`query_of` and :func:`apply_query` are the round trip without a
server (tests, notebooks).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import panel as pn
import param

from explorer.views.common.state import declarations

__all__ = ["LEADING", "Linked", "PageLink", "link_parameters", "linked_states", "query_of", "short_search",
           "apply_query", "link_page"]

#: Parameters a link sets first, one at a time: the choices that others depend on (a CSV's target column, the
#: paper grids of a model, the start of a kernel) must not undo the link's own values.
LEADING = ("dataset", "target", "model", "kernel", "data", "experiment")


class PageLink(param.Parameterized):
    """What the URL says about the page itself: the open tab (``names``: the pages' URL tab names, in order)."""

    tab = param.Selector(default=None, objects=[], label="Open tab",
                         doc="The tab shown, by the name its page gives it in the URL (e.g. curve, svm, fastboot).")

    def __init__(self, names: Sequence[str], **params):
        super().__init__(**params)
        self.param.tab.objects = list(names)
        self.tab = names[0]


@dataclass(frozen=True)
class Linked:
    """A state whose ``names`` the URL carries as ``prefix + name``."""

    state: param.Parameterized
    prefix: str
    names: tuple[str, ...]

    @property
    def mapping(self) -> dict[str, str]:
        """Parameter name → query name."""
        return {name: self.prefix + name for name in self.names}


def link_parameters(state: param.Parameterized) -> tuple[str, ...]:
    """The controls of ``state`` a link carries: those its declarations say (``link``,
    :func:`explorer.views.common.state.declarations.link_names`) if it declares its controls (every page's state does), else
    every parameter shown to the user (precedence not negative) but no action button (the page's own ``PageLink``)."""
    if declarations.declarations(state):
        return declarations.link_names(state)
    return tuple(name for name, p in state.param.objects("existing").items()
                 if name != "name" and (p.precedence is None or p.precedence >= 0)
                 and not isinstance(p, param.Action))


def _serialize(state: param.Parameterized, name: str):
    value = state.param[name].serialize(getattr(state, name))
    return value if isinstance(value, str) else json.dumps(value)


def query_of(linked: Linked, *, changed_only: bool = False) -> dict[str, str]:
    """The query parameters of ``linked`` (values as the URL holds them; None is left out); with ``changed_only``
    only those whose value differs from the parameter's default (what a short link carries)."""
    return {query: _serialize(linked.state, name) for name, query in linked.mapping.items()
            if getattr(linked.state, name) is not None
            and not (changed_only and _is_default(linked.state.param[name], getattr(linked.state, name)))}


def _is_default(parameter: param.Parameter, value) -> bool:
    default = parameter.default
    if isinstance(value, float) and isinstance(default, (int, float)) and not isinstance(default, bool):
        return math.isclose(value, default, rel_tol=1e-5, abs_tol=1e-12)  # the states round real numbers
    if isinstance(parameter, param.ListSelector) and default is not None:
        return sorted(map(str, value)) == sorted(map(str, default))
    return value == default


def short_search(linked: Sequence[Linked], page: PageLink) -> str:
    """The page's URL query (``?…``) as a short link holds it: the open tab unless it is the first, and every
    linked value that differs from its default; "" for the default page (the bare URL)."""
    values = {} if page.tab == page.param.tab.objects[0] else {"tab": page.tab}
    for item in linked:
        values.update(query_of(item, changed_only=True))
    return "?" + urlencode(values) if values else ""


def _deserialize(state: param.Parameterized, name: str, value):
    """A query value as the parameter holds it: JSON read as Panel's ``parse_query`` does ("true", "0.45",
    "[0.5, 1]"), a plain word (a dataset name) as itself, and text parameters as text."""
    if isinstance(state.param[name], param.String):
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def apply_query(linked: Linked, query: Mapping[str, object]) -> list[str]:
    """Set the values ``query`` holds for ``linked``: the :data:`LEADING` ones first, each on its own; a value
    that does not fit is skipped and named in the state's notice ("link"). Returns the skipped ``name=value``."""
    values = {name: _deserialize(linked.state, name, query[q]) for name, q in linked.mapping.items() if q in query}
    order = sorted(values, key=lambda name: LEADING.index(name) if name in LEADING else len(LEADING))
    state, bad = linked.state, []
    state._linking = True  # a kernel chosen by a link keeps the link's hyperparameters
    try:
        for name in order:
            try:
                if values[name] != getattr(state, name):
                    setattr(state, name, values[name])
            except Exception:  # noqa: BLE001 - any invalid link value is reported, never raised
                bad.append(f"{linked.prefix}{name}={query[linked.prefix + name]!r}")
    finally:
        state._linking = False
    if hasattr(state, "linked"):
        state.linked(set(values))  # e.g. a link's hyperparameters stay, even where they equal the current ones
    if hasattr(state, "tell"):
        state.tell("link", f"Ignored link parameter(s) that do not fit this app: {', '.join(bad)}." if bad else "")
    return bad


def _bind_tabs(page: PageLink, tabs: pn.Tabs, names: Sequence[str]) -> None:
    """Keep ``page.tab`` and the open tab of ``tabs`` (whose i-th tab is named ``names[i]``) in step."""
    index = {name: i for i, name in enumerate(names)}
    if page.tab in index:
        tabs.active = index[page.tab]
    page.tab = names[tabs.active] if tabs.active < len(names) else page.tab
    tabs.param.watch(lambda e: setattr(page, "tab", names[e.new]) if e.new < len(names) else None, "active")
    page.param.watch(lambda e: setattr(tabs, "active", index[e.new]) if e.new in index else None, "tab")


def linked_states(pages: Sequence[object]) -> list[Linked]:
    """The linked states of the page views ``pages`` (each a :class:`~explorer.views.common.layout.page.PageView`), in
    order: each state under the prefix its page declares."""
    return [Linked(state, prefix, link_parameters(state)) for view in pages for prefix, state in view.states.items()]


def _sets_controls(query: Mapping[str, object], view) -> bool:
    """Whether ``query`` sets a control of a state of the page view ``view``."""
    return any(q in query for item in linked_states([view]) for q in item.mapping.values())


def link_page(pages: Sequence[object], tabs: pn.Tabs, names: Sequence[str]) -> Callable[[], None]:
    """Make the page a link: apply the URL it was opened with, then keep the URL in step with every control.

    ``pages`` are the session's page views (:class:`~explorer.views.common.layout.page.PageView`), ``tabs`` the page's tab
    bar and ``names`` the URL name of each of its tabs. Without a ``tab`` in the URL the tab a page asks to show
    (its ``show``) is opened. The URL is a short link (:func:`short_search`): only what differs from the defaults,
    so that it can be read out, typed or put in a QR code; a long link of an earlier version opens the same view.
    Returns the function to call once the browser shows the page: it writes the URL of the page as opened. Without
    a served session (a notebook, a test) nothing is synced and the function does nothing.
    """
    location = pn.state.location
    if location is None:
        return lambda: None
    linked, page = linked_states(pages), PageLink(names)
    query = location.query_params
    for item in linked:
        apply_query(item, query)
    asked = [view.show for view in pages if view.show in names]
    # a link without a tab opens the page whose controls it sets (a short link of its first tab, written when it
    # was the first of the app), else the tab the first page asks for (the bare URL: the first page)
    setting = [view.show for view in pages if view.show in names and _sets_controls(query, view)]
    if query.get("tab") in names:
        page.tab = query["tab"]
    elif setting or asked:
        page.tab = (setting or asked)[0]
    _bind_tabs(page, tabs, names)

    def write_url(*events) -> None:
        search = short_search(linked, page)
        if location.search != search:
            location.search = search

    for item in linked:
        item.state.param.watch(write_url, list(item.names))
    page.param.watch(write_url, "tab")
    return write_url
