"""View of seed 001 (model selection): the session state (:mod:`.state`), its figures, tables and exports
(:mod:`.figures`), the thesis experiments of the "Experiments" sub-panel (:mod:`.experiments`) and the tab
(:mod:`.tab`)."""

from explorer.views.model_selection.experiments import (
    EXPERIMENT_COLUMNS,
    EXPERIMENT_DATA,
    EXPERIMENTS,
    TEMPERATURE_COLUMNS,
    TEMPERATURE_EXPERIMENTS,
    SelectionExperimentsPanel,
    SelectionExperimentState,
    experiment_csv,
    experiment_frame,
    experiment_json,
    experiment_plot,
    experiment_settings_line,
    experiment_summary,
)
from explorer.views.model_selection.figures import (
    EXPORT_COLUMNS,
    criteria_plot,
    csv_text,
    curve_frame,
    html_text,
    normalise,
    optima_frame,
    prediction_plot,
    ranking_frame,
    settings_line,
    summary,
)
from explorer.views.model_selection.state import (
    CURVE_PARAMETERS,
    JOB_KINDS,
    SELECTION_DATASETS,
    TEACHER_HYPERPARAMETERS,
    UPLOAD,
    SelectionCurves,
    SelectionFits,
    SelectionProblem,
    SelectionRanking,
    SelectionState,
    describe_error,
)
from explorer.views.model_selection.tab import SelectionTab

__all__ = [
    "SelectionState", "SelectionTab", "SelectionProblem", "SelectionCurves", "SelectionFits", "SelectionRanking",
    "SELECTION_DATASETS", "UPLOAD", "JOB_KINDS", "CURVE_PARAMETERS", "EXPORT_COLUMNS", "TEACHER_HYPERPARAMETERS",
    "describe_error", "criteria_plot", "prediction_plot", "curve_frame", "optima_frame",
    "ranking_frame", "csv_text", "html_text", "settings_line", "summary", "normalise",
    "SelectionExperimentState", "SelectionExperimentsPanel", "EXPERIMENTS", "EXPERIMENT_DATA", "EXPERIMENT_COLUMNS",
    "TEMPERATURE_EXPERIMENTS", "TEMPERATURE_COLUMNS", "experiment_frame", "experiment_plot", "experiment_csv",
    "experiment_json", "experiment_summary", "experiment_settings_line",
]
