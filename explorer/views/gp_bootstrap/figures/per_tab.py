"""Each tab's figure and table of the Gaussian-process page, by the tab's name: what the tab draws and its CSV
export hold (:func:`figure`, :func:`frame`, :data:`EXPORT_COLUMNS`)."""

from __future__ import annotations

import pandas as pd

from explorer.views.gp_bootstrap.figures.held_out_moments import HOLDOUT_COLUMNS, holdout_frame, holdout_plot
from explorer.views.gp_bootstrap.figures.l1_map import L1_COLUMNS, l1_frame, l1_plot
from explorer.views.gp_bootstrap.figures.learning_curve import CURVE_COLUMNS, curve_frame, learning_curve_plot
from explorer.views.gp_bootstrap.figures.predictive_distribution import (
    DISTRIBUTION_COLUMNS,
    distribution_frame,
    distribution_plot,
)
from explorer.views.gp_bootstrap.settings import HOLDOUT_TAB
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["EXPORT_COLUMNS", "figure", "frame"]

#: Columns of the CSV export of each tab.
EXPORT_COLUMNS = {"curve": CURVE_COLUMNS, "distribution": DISTRIBUTION_COLUMNS, "l1": L1_COLUMNS,
                  HOLDOUT_TAB: HOLDOUT_COLUMNS}

_FIGURES = {"curve": learning_curve_plot, "distribution": distribution_plot, "l1": l1_plot,
            HOLDOUT_TAB: holdout_plot}
_FRAMES = {"curve": curve_frame, "distribution": distribution_frame, "l1": l1_frame, HOLDOUT_TAB: holdout_frame}


def figure(state: GPBootstrapState, tab: str):
    """The main HoloViews figure of ``tab`` (one of ``state.GP_TABS``)."""
    return _FIGURES[tab](state)


def frame(state: GPBootstrapState, tab: str) -> pd.DataFrame:
    """The data of ``tab``'s figure as a table with the columns ``EXPORT_COLUMNS[tab]``."""
    return _FRAMES[tab](state)
