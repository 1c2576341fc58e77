"""The minimal page, declared once (what the registry lists)."""
from __future__ import annotations

from explorer.views.common.layout.page import DeferredPageView, Page, PageContext, states_settings
from tests.views.minimal_page.glossary import GLOSSARY
from tests.views.minimal_page.presets import PRESETS
from tests.views.minimal_page.state import MinimalState
from tests.views.minimal_page.tab import MinimalTab

__all__ = ["PAGE"]


def _build(page: Page, context: PageContext) -> DeferredPageView:
    state = MinimalState(client=context.engine, **states_settings(context, "min_", MinimalState))
    return DeferredPageView(page, {"min_": state}, lambda state: MinimalTab(state=state, controls_in_sidebar=True))


PAGE = Page("minimal", tabs={"minimal": "Minimal page"}, states={"min_": "Minimal page"}, build=_build,
            presets=PRESETS, glossary=GLOSSARY, citation="The test folder, a minimal page")
