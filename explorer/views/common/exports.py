"""What a tab lets the user download: data tables as plain CSV (one header line, nothing above it) with the
settings behind them in a JSON sidecar, and figures as standalone HTML pages that open offline."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Callable

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import pandas as pd
import panel as pn
from bokeh.embed import file_html
from bokeh.model import Model
from bokeh.resources import Resources

__all__ = ["Export", "PageResources", "csv_table", "download_button", "html_page", "json_ready", "json_text",
           "settings_json"]


@dataclass(frozen=True)
class Export:
    """One download of a tab: the file's name, the button's label and CSS class, and what makes the file."""

    filename: str
    label: str
    css_class: str
    text: Callable[[], str]


def download_button(export: Export) -> pn.widgets.FileDownload:
    """A button that downloads ``export.text()`` (made when clicked) as ``export.filename``."""
    return pn.widgets.FileDownload(callback=lambda: io.StringIO(export.text()), filename=export.filename,
                                   label=export.label, color="light", css_classes=[export.css_class])


class PageResources(Resources):
    """Bokeh's inline resources for one page: the external files of only the models the page uses.

    Plain ``bokeh.resources.INLINE`` adds the ``__javascript__`` of *every* Bokeh model class defined in the
    process; once Panel is imported that includes its ESM shim (``static/extensions/panel/...``, served from
    cdn.holoviz.org in the app), so a downloaded figure asked the network for a script it never used.
    """

    def __init__(self, models: set[type[Model]], **kwargs):
        super().__init__(mode="inline", **kwargs)
        self.models = frozenset(models)

    def clone(self, *, components=None) -> PageResources:
        return PageResources(self.models, components=components if components is not None else list(self.components))

    def _collect_external_resources(self, resource_attr) -> list[str]:
        found: list[str] = []
        for cls in sorted(self.models, key=lambda c: c.__qualified_model__):
            external = getattr(cls, resource_attr, None)
            for url in [external] if isinstance(external, str) else (external or []):
                if url not in found:
                    found.append(url)
        return found


def html_page(figure, title: str) -> str:
    """A HoloViews ``figure`` as a standalone HTML page: BokehJS inlined, no external script or stylesheet
    (:class:`PageResources`), so it opens offline."""
    model = hv.render(figure, backend="bokeh")
    return file_html(model, PageResources({type(m) for m in model.references()}), title=title)


def csv_table(frame: pd.DataFrame) -> str:
    """``frame`` as a plain CSV: one header line of column names, then the rows (``pandas.read_csv`` reads it
    back as is); the settings behind it go in a sidecar (:func:`settings_json`)."""
    return frame.to_csv(index=False)


def settings_json(what: str, settings: dict, files: list[str] | None = None) -> str:
    """The JSON sidecar of a tab's CSV exports: ``{"export": what, "files": files, "settings": settings}``
    (NaN as null), so each CSV stays a plain table."""
    return json_text({"export": what, "files": list(files or []), "settings": settings})


def json_ready(value):
    """``value`` with NaN and infinities as None (JSON null) and numpy scalars and arrays as Python numbers and
    lists, recursively through dicts, lists and tuples."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value.item() if isinstance(value, np.generic) else value


def json_text(payload: dict, indent: int | None = 1) -> str:
    """``payload`` as strict JSON text (:func:`json_ready`: NaN written as null), for a download."""
    return json.dumps(json_ready(payload), indent=indent)
