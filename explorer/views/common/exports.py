"""What a tab lets the user download: data tables as CSV, figures as standalone HTML pages."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import panel as pn
from bokeh.embed import file_html
from bokeh.resources import INLINE

__all__ = ["Export", "download_button", "html_page", "json_ready"]


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


def html_page(figure, title: str) -> str:
    """A HoloViews ``figure`` as a standalone HTML page (Bokeh, resources inlined: opens offline)."""
    return file_html(hv.render(figure, backend="bokeh"), INLINE, title=title)


def json_ready(value):
    """``value`` for ``json.dumps``, recursively: NaN and ±inf → None (JSON null), numpy scalars and arrays →
    Python numbers and lists, tuples → lists."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value.item() if isinstance(value, np.generic) else value
