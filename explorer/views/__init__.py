"""Views of the Resampling Explorer: session state (param), figures (HoloViews) and panels (Panel).

``state`` holds the controls and the core results and starts the background jobs (``jobs``: threads,
progress, cancellation, the shared result caches); ``plots`` turns the results into seed 000's figures
and tables; ``panels`` lays them out as Panel viewers. The served page is assembled in
:func:`explorer.app.create_app`.
"""

from explorer.views.gp_bootstrap.panels import (
    CSS,
    TAB_TITLES,
    Controls,
    DistributionTab,
    ExplorerView,
    HoldoutTab,
    L1Tab,
    LearningCurveTab,
    session_dispatcher,
)
from explorer.views.gp_bootstrap.state import TABS, URL_PARAMETERS, ExplorerState, JobStatus, clear_caches

__all__ = [
    "ExplorerState", "JobStatus", "ExplorerView", "Controls", "LearningCurveTab", "DistributionTab", "L1Tab",
    "HoldoutTab", "session_dispatcher", "clear_caches", "TABS", "TAB_TITLES", "URL_PARAMETERS", "CSS",
]
