"""Views of the Resampling Explorer: session state (param), figures (HoloViews) and tabs (Panel).

One folder per page, each with the same files (``state``, ``figures``, ``tab``, ``presets``, ``page``):
``step_by_step`` ("Bootstrap, step by step", [MO03]), ``gp_bootstrap`` ([MO03]), ``svm_bootstrap`` ([MO03b]),
``model_selection`` ([Fis16]), ``fast_bootstrap`` ([LSWV05]). Each ``page.PAGE`` declares its page once;
:mod:`explorer.views.pages` lists them. ``common`` holds what every page shares, in folders: ``state`` (controls
declared once, values, background jobs, data sources, links, presets, error wording), ``layout`` (the page
declaration, the base tab, widgets, Presentation mode, the glossary), ``files`` (uploads, downloads) and ``drawing``
(figure style, figures patched in place). The served page is assembled in :func:`explorer.app.create_app` from the
registry; the server, its sessions, caches and Dask engine are in :mod:`explorer.serving`.
"""

from explorer.runtime.caches import clear_caches
from explorer.views.common.state.jobs import JobStatus
from explorer.views.gp_bootstrap.state import GP_TABS, URL_PARAMETERS, GPBootstrapState
from explorer.views.gp_bootstrap.tab import (
    GP_CSS,
    GP_TAB_TITLES,
    DistributionTab,
    GPBootstrapView,
    GPControls,
    HoldoutTab,
    L1Tab,
    LearningCurveTab,
)

__all__ = [
    "GPBootstrapState", "JobStatus", "GPBootstrapView", "GPControls", "LearningCurveTab", "DistributionTab",
    "L1Tab", "HoldoutTab", "clear_caches", "GP_TABS", "GP_TAB_TITLES", "URL_PARAMETERS", "GP_CSS",
]
