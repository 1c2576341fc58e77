"""The downloads of the model-selection tab ([Fis16]), declared once: its figures and tables as plain CSV and
standalone HTML pages with the settings as JSON, and the experiment panel's table and result
(:class:`~explorer.views.common.files.exports.Export`)."""

from __future__ import annotations

from explorer.views.common.files.exports import Export, download_name, export
from explorer.views.model_selection.experiments_state import experiment_csv, experiment_json
from explorer.views.model_selection.figures import csv_text, export_filename, html_text, settings_text

__all__ = ["EXPORTS", "EXPERIMENT_EXPORTS"]

#: The name of each figure or table on its buttons.
_NAMES = {"curves": "Criteria curves", "predictions": "Predictions", "optima": "Optima", "ranking": "Ranking"}


def _figure_export(ext: str, what: str) -> Export:
    make = (lambda s: csv_text(s, what)) if ext == "csv" else (lambda s: html_text(s, what))
    return export(f"{ext}-{what}", f"{_NAMES[what]} ({ext.upper()})", ext, lambda s: export_filename(s, what, ext),
                  make)


#: The tab's downloads, in the order of their buttons (CSS classes ``explorer-selection-<name>``).
EXPORTS: tuple[Export, ...] = (
    *(_figure_export(ext, what) for ext, what in (("csv", "curves"), ("html", "curves"), ("html", "predictions"),
                                                  ("csv", "optima"), ("csv", "ranking"), ("html", "ranking"))),
    export("json-settings", "Settings (JSON)", "json", lambda s: export_filename(s, "settings", "json"), settings_text),
)


def _experiment_name(ext: str):  # e.g. model-selection-experiment_hyperparameters_teacher.csv
    return lambda s: download_name("model selection experiment", s.experiment, s.data, ext=ext)


#: The experiment panel's downloads (CSS classes ``<its prefix>-csv``, ``-json``).
EXPERIMENT_EXPORTS: tuple[Export, ...] = (
    export("csv", "Experiment table (CSV)", "csv", _experiment_name("csv"), experiment_csv),
    export("json", "Experiment result and settings (JSON)", "json", _experiment_name("json"), experiment_json),
)
