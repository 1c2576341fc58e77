"""The Gaussian-process bootstrap page ([MO03]): four tabs (learning curve, predictive distribution, L1 map,
test inputs) over one state, with one sidebar of controls."""

from __future__ import annotations

from explorer.views.common.layout.page import Page, PageContext, PageView, states_settings
from explorer.views.gp_bootstrap.glossary import GLOSSARY
from explorer.views.gp_bootstrap.presets import PRESETS
from explorer.views.gp_bootstrap.state import GP_TABS, GPBootstrapState
from explorer.views.gp_bootstrap.tab import GP_TAB_TITLES, GPBootstrapView

__all__ = ["PAGE", "GPPageView"]


class GPPageView(PageView):
    """The four tabs of one session's :class:`~explorer.views.gp_bootstrap.tab.GPBootstrapView` as a page; the
    state's ``tab`` follows the open tab and asks for it (a click on the L1 map opens the distribution)."""

    def __init__(self, page: Page, context: PageContext, **params):
        state = GPBootstrapState(data_dir=context.data_dir, client=context.engine,
                                 **states_settings(context, "", GPBootstrapState))
        super().__init__(page, {"": state}, **params)
        self.view = GPBootstrapView(state=state)
        self.show = state.tab
        state.param.watch(lambda event: setattr(self, "show", event.new), "tab")
        self.param.watch(lambda event: [tab.param.update(presentation=event.new)
                                        for tab in self.view.tab_views.values()], "presentation")

    def tab_items(self) -> list[tuple[str, object]]:
        return [(title, self.view.tab_views[name]) for name, title in self.page.tabs.items()]

    def controls(self) -> object:
        return self.view.controls

    def opened(self, name: str) -> None:
        self.view.state.tab = name

    def start(self) -> None:
        self.view.state.refresh()

    def loaded(self) -> None:
        self.view.state.start_jobs()  # also a result whose update was lost


PAGE = Page("gp", tabs={name: GP_TAB_TITLES[name] for name in GP_TABS}, states={"": "Gaussian process"},
            build=GPPageView, presets=PRESETS, glossary=GLOSSARY, citation="Malzahn & Opper 2005, GP bootstrap")
