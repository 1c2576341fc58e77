"""The "Bootstrap, step by step" page (issue 24): one tab, first on the tab bar and the page of the bare URL."""

from __future__ import annotations

from explorer.views.common.layout.page import DeferredPageView, Page, PageContext, states_settings
from explorer.views.step_by_step.presets import PRESETS
from explorer.views.step_by_step.state import StepState
from explorer.views.step_by_step.tab import StepTab

__all__ = ["PAGE"]


def _build(page: Page, context: PageContext) -> DeferredPageView:
    state = StepState(**states_settings(context, "steps_", StepState))
    view = DeferredPageView(page, {"steps_": state}, lambda state: StepTab(state=state, controls_in_sidebar=True))
    view.show = "steps"  # the page a link without a tab opens (unless it sets another page's controls)
    return view


PAGE = Page("steps", tabs={"steps": "Bootstrap, step by step"}, states={"steps_": "Bootstrap, step by step"},
            build=_build, presets=PRESETS, citation="Malzahn & Opper 2005, GP bootstrap")
