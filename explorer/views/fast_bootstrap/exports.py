"""Exports of the fast-bootstrap view (seed 002): the result as JSON (the shape of ``explorer fast-bootstrap
--json``) with the settings behind it, and the curves as a plain CSV (one header line): the JSON is its
settings sidecar."""

from __future__ import annotations

from explorer.views.common import exports as common
from explorer.views.common.exports import Export, download_name, export
from explorer.views.common.uploads import file_settings
from explorer.views.fast_bootstrap.state import SERIES, FastBootstrapState
from explorer.views.fast_bootstrap.tables import curve_frame

__all__ = ["csv_text", "json_text", "settings", "EXPORTS"]


def settings(state: FastBootstrapState) -> dict:
    """The controls behind the result, for the exports."""
    out = {"dataset": state.dataset, "model": state.model, **state.model_options(), "seed": int(state.seed),
           "full_grid": [state.full_start, state.full_stop, state.full_step],
           "full_replications": int(state.full_replications),
           "fast_grid": [state.fast_start, state.fast_stop, state.fast_step],
           "fast_replications": int(state.fast_replications), "log_complexity": bool(state.log_complexity),
           "kappa0": int(state.kappa0), "kappa1": int(state.kappa1)}
    if state.dataset in ("toy", "teacher"):
        out["n_points"] = int(state.n_points)
    if state.dataset == SERIES:
        out.update(series_csv=state.series_csv, **file_settings(state.series_file), series_column=state.series_column,
                   lags=int(state.lags))
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
