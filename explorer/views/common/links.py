"""Every view is a link: the page URL carries the open tab, its sub-panel and the settings of every tab.

One query string holds them all, each state's parameters under its own prefix so that no two tabs collide:
the Gaussian-process tabs without a prefix (``dataset=boston&s_over_n=0.5``, the links of earlier versions
stay valid), the SVM tab ``svm_``, Model selection ``sel_`` (its Experiments sub-panel ``selx_``), Fast
bootstrap ``fb_``; ``tab`` names the open tab (:data:`PAGE_TABS`). Values are those of the states, which round
real numbers (:mod:`explorer.views.common.values`), so the URL shows ``0.45``, never ``0.45000000000000007``.

:func:`link_page` is the one call the app makes: it applies the link the page was opened with, keeps the URL
in step with every control from then on (``pn.state.location.sync``) and returns the function that writes the
whole URL once the page has loaded. :func:`query_of` and :func:`apply_query` are the round trip without a
server (tests, notebooks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import panel as pn
import param

from explorer.views.gp_bootstrap.state import GP_TABS, URL_PARAMETERS

__all__ = ["PAGE_TABS", "PAGE_TITLES", "LEADING", "Linked", "PageLink", "link_parameters", "query_of",
           "apply_query", "link_page"]

#: The open tab as the URL names it, and the title of its tab in the page.
PAGE_TITLES = {"curve": "Learning curve", "distribution": "Predictive distribution", "l1": "L1 map",
               "holdout": "Test inputs", "svm": "SVM bootstrap", "selection": "Model selection",
               "fastboot": "Fast bootstrap"}
PAGE_TABS = tuple(PAGE_TITLES)
#: Parameters a link sets first, one at a time: the choices that others depend on (a CSV's target column, the
#: paper grids of a model, the start of a kernel) must not undo the link's own values.
LEADING = ("dataset", "target", "model", "kernel", "data", "experiment")


class PageLink(param.Parameterized):
    """What the URL says about the page itself: the open tab."""

    tab = param.Selector(default="curve", objects=list(PAGE_TABS), label="Open tab",
                         doc="The tab shown: the four Gaussian-process tabs, svm, selection or fastboot.")


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
    """The controls of ``state`` a link carries: every parameter shown to the user (precedence not negative),
    but no action button; the Gaussian-process state's :data:`~explorer.views.gp_bootstrap.state.URL_PARAMETERS`
    without ``tab`` (the page's tab says it)."""
    if set(URL_PARAMETERS) <= set(state.param):
        return tuple(name for name in URL_PARAMETERS if name != "tab")
    return tuple(name for name, p in state.param.objects("existing").items()
                 if name != "name" and (p.precedence is None or p.precedence >= 0)
                 and not isinstance(p, param.Action))


def _serialize(state: param.Parameterized, name: str):
    value = state.param[name].serialize(getattr(state, name))
    return value if isinstance(value, str) else json.dumps(value)


def query_of(linked: Linked) -> dict[str, str]:
    """The query parameters of ``linked`` (values as the URL holds them; None is left out)."""
    return {query: _serialize(linked.state, name) for name, query in linked.mapping.items()
            if getattr(linked.state, name) is not None}


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


def _bind_tabs(page: PageLink, tabs: pn.Tabs) -> None:
    """Keep ``page.tab`` and the open tab of ``tabs`` (found by title) in step."""
    titles = [getattr(tabs, "_names", [None] * len(tabs))[i] for i in range(len(tabs))]
    index = {name: titles.index(title) for name, title in PAGE_TITLES.items() if title in titles}
    names = {i: name for name, i in index.items()}
    if page.tab in index:
        tabs.active = index[page.tab]
    page.tab = names.get(tabs.active, page.tab)
    tabs.param.watch(lambda e: setattr(page, "tab", names[e.new]) if e.new in names else None, "active")
    page.param.watch(lambda e: setattr(tabs, "active", index[e.new]) if e.new in index else None, "tab")


def _states(view, others: Mapping[str, object]) -> list[Linked]:
    """The linked states of the page: the GP view's, then each other tab's ``state`` (and ``experiments``)."""
    prefixes = {"SVM bootstrap": "svm_", "Model selection": "sel_", "Fast bootstrap": "fb_"}
    found = [Linked(view.state, "", link_parameters(view.state))]
    for title, tab in others.items():
        prefix = prefixes.get(title, title.lower().replace(" ", "") + "_")
        found.append(Linked(tab.state, prefix, link_parameters(tab.state)))
        experiments = getattr(tab, "experiments", None)
        if experiments is not None:
            found.append(Linked(experiments, prefix.rstrip("_") + "x_", link_parameters(experiments)))
    return found


def link_page(view, others: Mapping[str, object]) -> Callable[[], None]:
    """Make the page a link: apply the URL it was opened with, then keep the URL in step with every control.

    ``view`` is the :class:`~explorer.views.gp_bootstrap.tab.GPBootstrapView` (its ``tabs`` hold every
    tab), ``others`` the other tabs by title. Returns the function to call once the browser shows the page:
    it writes every linked value into the URL, so that a bookmark taken at once is complete. Without a served
    session (a notebook, a test) nothing is synced and the function does nothing.
    """
    location = pn.state.location
    if location is None:
        return lambda: None
    linked, page = _states(view, others), PageLink()
    query = location.query_params
    for item in linked:
        apply_query(item, query)
        location.sync(item.state, item.mapping, on_error=lambda values, item=item: apply_query(
            item, {item.prefix + k: v for k, v in values.items()}))
    if query.get("tab") in PAGE_TABS:
        page.tab = query["tab"]
    elif view.state.tab in GP_TABS:
        page.tab = view.state.tab
    _bind_tabs(page, view.tabs)
    location.sync(page, {"tab": "tab"})

    def write_url() -> None:
        values = {"tab": page.tab}
        for item in linked:
            values.update(query_of(item))
        location.update_query(**values)

    return write_url
