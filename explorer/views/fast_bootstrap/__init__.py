"""View of [LSWV05] (fast bootstrap): the session state (:mod:`~explorer.views.fast_bootstrap.state`), its figures (:mod:`~explorer.views.fast_bootstrap.figures`), tables
(:mod:`~explorer.views.fast_bootstrap.tables`) and exports (:mod:`~explorer.views.fast_bootstrap.exports`), and the tab (:mod:`~explorer.views.fast_bootstrap.tab`)."""

from explorer.fast_bootstrap.stages import CALIBRATION, estimated_seconds, replica_grid
from explorer.views.fast_bootstrap.exports import csv_text, json_text, settings
from explorer.views.fast_bootstrap.figures import generalization_plot, optimism_plot
from explorer.views.fast_bootstrap.state import (
                                                 AUTO_SECONDS,
                                                 FASTBOOT_DATASETS,
                                                 JOB_KINDS,
                                                 MAX_GRID_POINTS,
                                                 MAX_POINTS,
                                                 SERIES,
                                                 FastBootstrapState,
                                                 ReplicaRun,
)
from explorer.views.fast_bootstrap.tab import FastBootstrapTab
from explorer.views.fast_bootstrap.tables import CURVE_COLUMNS, SUMMARY_COLUMNS, curve_frame, summary, summary_frame

__all__ = [
    "FastBootstrapState", "FastBootstrapTab", "ReplicaRun", "FASTBOOT_DATASETS", "SERIES", "JOB_KINDS",
    "AUTO_SECONDS", "CALIBRATION", "MAX_GRID_POINTS", "MAX_POINTS", "SUMMARY_COLUMNS",
    "CURVE_COLUMNS", "estimated_seconds", "replica_grid", "optimism_plot",
    "generalization_plot", "summary_frame", "curve_frame", "summary", "settings", "csv_text", "json_text",
]
