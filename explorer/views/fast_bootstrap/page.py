"""The fast-bootstrap page ([LSWV05]): one tab, its view made when first opened; its time series are the server's
data folder's CSV files."""

from __future__ import annotations

from explorer.views.common.layout.page import DeferredPageView, Page, PageContext, states_settings
from explorer.views.fast_bootstrap.glossary import GLOSSARY
from explorer.views.fast_bootstrap.presets import PRESETS
from explorer.views.fast_bootstrap.state import FastBootstrapState
from explorer.views.fast_bootstrap.tab import FastBootstrapTab

__all__ = ["PAGE"]


def _build(page: Page, context: PageContext) -> DeferredPageView:
    state = FastBootstrapState(client=context.engine, data_dir=context.data_dir,
                               **states_settings(context, "fb_", FastBootstrapState))
    return DeferredPageView(page, {"fb_": state},
                            lambda state: FastBootstrapTab(state=state, controls_in_sidebar=True))


PAGE = Page("fastboot", tabs={"fastboot": "Fast bootstrap"}, states={"fb_": "Fast bootstrap"}, build=_build,
            presets=PRESETS, glossary=GLOSSARY, citation="Lendasse et al. 2005, fast bootstrap")
