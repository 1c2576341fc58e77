"""What a tab lets the user download: data tables as plain CSV (one header line, nothing above it) with the
settings behind them in a JSON sidecar, and figures as standalone HTML pages that open offline.

Every download is named for what it holds (:func:`download_name`): the figure or table, then the data and what
else picks it out, e.g. ``learning-curve_boston.csv``, ``predictive-distribution_boston_input-17.csv`` and
``settings_learning-curve_boston.json``; a name that follows the controls is made when the button is clicked."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import pandas as pd
import panel as pn
from bokeh.embed import file_html
from bokeh.model import Model
from bokeh.resources import Resources

__all__ = ["Export", "MEDIA_TYPES", "export", "PageResources", "csv_table", "data_name", "download_button", "download_name", "html_page", "json_ready",
           "json_text", "settings_json", "NAME_PART_CHARS"]

#: Most characters of one part of a download's name (a file name the user uploaded can be long).
NAME_PART_CHARS = 40


def _slug(part: str) -> str:
    """``part`` in lower case with every run of other characters than a-z, 0-9 and '.' written '-'."""
    slug = re.sub(r"[^a-z0-9.]+", "-", str(part).lower()).strip("-.")
    return slug[:NAME_PART_CHARS].rstrip("-.")


def download_name(what: str, *about: str, ext: str) -> str:
    """The file name of a download: what it holds, then what picks it out (data, input, ...), joined by '_'.

    Each part is written in lower case with runs of other characters than letters, digits and '.' as one '-'
    (at most ``NAME_PART_CHARS`` characters); empty parts are left out.

    Parameters
    ----------
    what : str
        The figure or table, e.g. "learning curve" or "settings".
    *about : str
        What picks it out: the data set, an input, a tab, ...
    ext : str
        The extension without the dot: "csv", "html" or "json".

    Returns
    -------
    str

    Examples
    --------
    >>> download_name("Predictive distribution", "boston", "input 17", ext="csv")
    'predictive-distribution_boston_input-17.csv'
    >>> download_name("settings", "Learning curve", "My data (v2)", ext="json")
    'settings_learning-curve_my-data-v2.json'
    """
    parts = [p for p in (_slug(x) for x in (what, *about)) if p]
    return "_".join(parts or ["download"]) + f".{ext}"


def data_name(dataset: str, file_name: str | None = None) -> str:
    """The data in a download's name: the name of the CSV file a tab reads (an upload or a file of the server's
    data folder) without its extension, else the ``dataset`` value.

    >>> data_name("uploaded CSV", "houses.csv"), data_name("crabs")
    ('houses', 'crabs')
    """
    return PurePath(file_name).stem if file_name else dataset


#: The media types of the downloads, by file extension.
MEDIA_TYPES = {"csv": "text/csv", "html": "text/html", "json": "application/json"}


@dataclass(frozen=True)
class Export:
    """One download of a page, declared once in the page's ``exports`` module (``EXPORTS``); every tab makes its
    buttons from those declarations (:func:`download_button`).

    Attributes
    ----------
    name : str
        What it is, e.g. ``"csv"`` or ``"csv-curves"``: the last part of its button's CSS class (the tab's
        ``<prefix>-<name>``).
    label : str
        The button's text, e.g. "Download data (CSV)".
    media_type : str
        One of :data:`MEDIA_TYPES` (the file name ends with its extension).
    filename : callable
        ``filename(state)``: the file's name for the state's current settings (:func:`download_name`).
    text : callable
        ``text(state)``: the file's text.
    """

    name: str
    label: str
    media_type: str
    filename: Callable[[Any], str]
    text: Callable[[Any], str]

    def __post_init__(self):
        if self.media_type not in MEDIA_TYPES.values():
            raise ValueError(f"Export {self.name!r}: media type {self.media_type!r} is not one of "
                             f"{', '.join(MEDIA_TYPES.values())}.")

    @property
    def extension(self) -> str:
        """The file extension of :attr:`media_type` (``csv``, ``html`` or ``json``)."""
        return next(ext for ext, media in MEDIA_TYPES.items() if media == self.media_type)


def export(name: str, label: str, extension: str, filename: Callable[[Any], str],
           text: Callable[[Any], str]) -> Export:
    """An :class:`Export` of the media type of ``extension`` (``csv``, ``html`` or ``json``)."""
    return Export(name, label, MEDIA_TYPES[extension], filename, text)


def download_button(item: Export, state, css_class: str) -> pn.widgets.FileDownload:
    """A button (CSS class ``css_class``) that downloads ``item.text(state)`` as ``item.filename(state)``, both
    made when it is clicked."""
    button = pn.widgets.FileDownload(filename=item.filename(state), label=item.label, color="light",
                                     css_classes=[css_class])

    def make() -> io.StringIO:
        button.filename = item.filename(state)  # Panel reads the name after calling back: it follows the settings
        return io.StringIO(item.text(state))

    button.callback = make
    return button


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
