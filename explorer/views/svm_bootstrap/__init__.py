"""View of [MO03b] (hard-margin SVM bootstrap): the session state (:mod:`~explorer.views.svm_bootstrap.state`), its figures, tables and exports
(:mod:`~explorer.views.svm_bootstrap.figures`) and the tab (:mod:`~explorer.views.svm_bootstrap.tab`)."""

from explorer.views.svm_bootstrap.figures import (
    EXPORT_NAMES,
    FIGURES,
    GAP_THRESHOLD,
    SVMGap,
    csv_text,
    curve_frame,
    curve_summary,
    export_filename,
    field_frame,
    field_plot,
    field_summary,
    html_text,
    large_gaps,
    learning_curve_plot,
    settings,
    settings_line,
    settings_text,
)
from explorer.views.svm_bootstrap.state import (
    EXPORT_COLUMNS,
    JOB_KINDS,
    MAX_ROWS,
    SVM_DATASETS,
    SVM_GRID,
    UPLOAD,
    SVMCurveMC,
    SVMCurvePoint,
    SVMState,
    SVMTheoryCurve,
    describe_error,
)
from explorer.views.svm_bootstrap.tab import SVMTab

__all__ = [
    "SVMState", "SVMTab", "SVMTheoryCurve", "SVMCurveMC", "SVMCurvePoint", "SVM_DATASETS", "UPLOAD", "MAX_ROWS",
    "SVM_GRID", "JOB_KINDS", "EXPORT_COLUMNS", "describe_error", "learning_curve_plot", "field_plot", "large_gaps",
    "GAP_THRESHOLD", "SVMGap", "curve_frame", "field_frame", "curve_summary", "field_summary", "csv_text",
    "html_text", "settings", "settings_text", "settings_line", "export_filename", "FIGURES", "EXPORT_NAMES",
]
