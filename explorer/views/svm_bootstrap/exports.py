"""The downloads of the SVM bootstrap tab ([MO03b]), declared once: the learning curve and the field as plain CSV and
as standalone HTML pages, and the settings behind them as JSON (:class:`~explorer.views.common.files.exports.Export`)."""

from __future__ import annotations

from explorer.views.common.files.exports import Export, export
from explorer.views.svm_bootstrap.figures import EXPORT_NAMES, csv_text, export_filename, html_text, settings_text

__all__ = ["EXPORTS"]


def _figure_export(what: str, ext: str) -> Export:
    make = (lambda s: csv_text(s, what)) if ext == "csv" else (lambda s: html_text(s, what))
    return export(f"{ext}-{what}", f"{EXPORT_NAMES[what]} ({ext.upper()})", ext,
                  lambda s: export_filename(s, what, ext), make)


#: The tab's downloads, in the order of their buttons (CSS classes ``explorer-svm-<name>``).
EXPORTS: tuple[Export, ...] = (
    *(_figure_export(what, ext) for what in ("curve", "field") for ext in ("csv", "html")),
    export("json-settings", "Settings (JSON)", "json", lambda s: export_filename(s, "settings", "json"), settings_text),
)
