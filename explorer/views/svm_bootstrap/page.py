"""The SVM bootstrap page ([MO03b]): one tab, its view made when first opened."""

from __future__ import annotations

from explorer.views.common.layout.page import DeferredPageView, Page, PageContext, states_settings
from explorer.views.svm_bootstrap.glossary import GLOSSARY
from explorer.views.svm_bootstrap.presets import PRESETS
from explorer.views.svm_bootstrap.state import SVMState
from explorer.views.svm_bootstrap.tab import SVMTab

__all__ = ["PAGE"]


def _build(page: Page, context: PageContext) -> DeferredPageView:
    state = SVMState(client=context.engine, **states_settings(context, "svm_", SVMState))
    return DeferredPageView(page, {"svm_": state}, lambda state: SVMTab(state=state, controls_in_sidebar=True))


PAGE = Page("svm", tabs={"svm": "SVM bootstrap"}, states={"svm_": "SVM bootstrap"}, build=_build, presets=PRESETS, glossary=GLOSSARY, citation="Malzahn & Opper 2003, SVM bootstrap")
