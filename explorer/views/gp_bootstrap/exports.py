"""The downloads of the Gaussian-process tabs ([MO03]), declared once: per tab the data as a plain CSV, the figure
as a standalone HTML page and the settings behind them as JSON (:class:`~explorer.views.common.files.exports.Export`)."""

from __future__ import annotations

from explorer.views.common.files.exports import Export, export
from explorer.views.gp_bootstrap import figures
from explorer.views.gp_bootstrap.state import GP_TABS

__all__ = ["EXPORTS"]


def _tab_exports(tab: str) -> tuple[Export, ...]:
    return (export("csv", "Download data (CSV)", "csv", lambda s: figures.csv_filename(s, tab),
                   lambda s: figures.csv_text(s, tab)),
            export("html", "Download plot (HTML)", "html", lambda s: figures.html_filename(s, tab),
                   lambda s: figures.html_text(s, tab)),
            export("json", "Settings (JSON)", "json", lambda s: figures.settings_filename(s, tab),
                   lambda s: figures.settings_text(s, tab)))


#: The downloads of each tab (CSS classes ``explorer-csv-<tab>``, ``explorer-html-<tab>``, ``explorer-json-<tab>``).
EXPORTS: dict[str, tuple[Export, ...]] = {tab: _tab_exports(tab) for tab in GP_TABS}
