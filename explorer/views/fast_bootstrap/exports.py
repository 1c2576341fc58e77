"""Exports of the fast-bootstrap view ([LSWV05]): the result as JSON (the shape of ``explorer fast-bootstrap
--json``) with the settings behind it, and the curves as a plain CSV (one header line): the JSON is its
settings sidecar."""

from __future__ import annotations

from explorer.views.common.files import exports as common
from explorer.views.common.files.exports import Export, download_name, export
from explorer.views.common.files.uploads import file_settings
from explorer.views.common.state.declarations import invalidating, settings_of
from explorer.views.fast_bootstrap.state import SERIES, FastBootstrapState
from explorer.views.fast_bootstrap.tables import curve_frame

__all__ = ["csv_text", "json_text", "settings", "EXPORTS"]

#: The controls ``<grid>_start``, ``_stop`` and ``_step`` of a grid, written as one list ``<grid>_grid``.
_GRID_PARTS = ("start", "stop", "step")


def settings(state: FastBootstrapState) -> dict:
    """The controls behind the result, for the exports: those a change of which makes the fast bootstrap stale and
    that apply (:func:`~explorer.views.common.state.declarations.settings_of`), in the order of their declarations, with
    each grid's start, stop and step as one list ``<grid>_grid`` and the model's options as the core takes them
    (:meth:`~FastBootstrapState.model_options`: an automatic kernel width is None); for a time series, also the
    file's name and SHA-256."""
    out: dict = {}
    for name, value in {**settings_of(state, invalidating(state, "fast")), **state.model_options()}.items():
        grid, _, part = name.rpartition("_")
        if part in _GRID_PARTS:
            out.setdefault(f"{grid}_grid", []).append(value)
        else:
            out[name] = value
    if state.dataset == SERIES:
        out.update(file_settings(state.series_file))
    return out


def json_text(state: FastBootstrapState) -> str:
    """The result as ``BootstrapComparison.as_dict()`` (``explorer fast-bootstrap --json``) plus ``settings``."""
    res = state.comparison
    payload = res.as_dict() if res is not None else {}
    return common.json_text({**payload, "settings": settings(state)})


def csv_text(state: FastBootstrapState) -> str:
    """The curves as a plain CSV: one header line (``CURVE_COLUMNS``), then the rows; the settings are in the
    JSON download (:func:`json_text`, key ``settings``)."""
    return common.csv_table(curve_frame(state))



def _name(what: str, ext: str):  # e.g. fast-bootstrap-curves_toy_ls-svm.csv
    return lambda state: download_name(f"fast bootstrap {what}", state.data_name(), state.model, ext=ext)


#: The tab's downloads, in the order of their buttons (CSS classes ``explorer-fastboot-json``, ``-csv``).
EXPORTS: tuple[Export, ...] = (export("json", "Result (JSON)", "json", _name("result", "json"), json_text),
                               export("csv", "Curves (CSV)", "csv", _name("curves", "csv"), csv_text))
