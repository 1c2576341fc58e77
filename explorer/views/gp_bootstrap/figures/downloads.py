"""The downloads of the Gaussian-process page's tabs: each tab's CSV table, its figure as an HTML page, the JSON
sidecar of the settings behind them and their file names (the settings in the CSV's sidecar, never in the table)."""

from __future__ import annotations

import numpy as np

from explorer.views.common.files.exports import csv_table, download_name, html_page, settings_json
from explorer.views.common.state.declarations import invalidating, settings_of
from explorer.views.gp_bootstrap.figures.learning_curve import gap_element
from explorer.views.gp_bootstrap.figures.per_tab import figure, frame
from explorer.views.gp_bootstrap.settings import COMPUTED_STAGES, HOLDOUT_TAB
from explorer.views.gp_bootstrap.state import CSV_PREFIX, MAX_ROWS, SUBSAMPLE_SEED, UPLOAD, GPBootstrapState

__all__ = ["TAB_NAMES", "csv_text", "csv_filename", "html_filename", "settings_filename", "settings",
           "settings_text", "html_text", "settings_line"]

#: What each tab's downloads hold, the first part of their file names (:func:`csv_filename`).
TAB_NAMES = {"curve": "learning curve", "distribution": "predictive distribution", "l1": "L1 map",
             HOLDOUT_TAB: "test inputs"}


def csv_text(state: GPBootstrapState, tab: str) -> str:
    """CSV of :func:`frame`: one header line (``EXPORT_COLUMNS[tab]``), then the rows; the settings are in the
    sidecar :func:`settings_text`."""
    return csv_table(frame(state, tab))


def _what(state: GPBootstrapState, tab: str) -> tuple[str, ...]:
    """What picks out ``tab``'s downloads besides the tab: the data and, for the distribution, the input."""
    return (state.data_label(), f"input {state.index}") if tab == "distribution" else (state.data_label(),)


def csv_filename(state: GPBootstrapState, tab: str) -> str:
    """The file name of ``tab``'s CSV download, e.g. ``learning-curve_boston.csv`` (its settings sidecar names it)."""
    return download_name(TAB_NAMES[tab], *_what(state, tab), ext="csv")


def html_filename(state: GPBootstrapState, tab: str) -> str:
    """The file name of ``tab``'s figure as an HTML page, e.g. ``predictive-distribution_boston_input-17.html``."""
    return download_name(TAB_NAMES[tab], *_what(state, tab), ext="html")


def settings_filename(state: GPBootstrapState, tab: str) -> str:
    """The file name of ``tab``'s settings sidecar, e.g. ``settings_learning-curve_boston.json``."""
    return download_name("settings", TAB_NAMES[tab], *_what(state, tab), ext="json")


def settings(state: GPBootstrapState) -> dict:
    """The controls behind the figures and tables, for the JSON sidecar of the CSV exports: every control declared
    to make the problem, the theory or the Monte-Carlo stale that applies now (``declarations.settings_of``: the
    data, the kernel and its values, the noise, S/N, the test loss, the Monte-Carlo sizes and the seed), the input
    shown, the data (a CSV's file name and the SHA-256 of its text, the random subsample if one is used), the
    per-input lengthscales (ARD) and where the values come from, the histograms' bin width."""
    chosen = settings_of(state, invalidating(state, *COMPUTED_STAGES))
    out = {name: value for name, value in chosen.items() if value is not None}  # a CSV's target once known
    out["input_index"] = int(state.index)  # the input shown, within the rows of the problem
    ells = state.ard_lengthscales  # ARD: one ℓ per input column, the kernel's (``lengthscale`` their geometric mean)
    if ells is not None:
        out["ard_lengthscales"] = [float(v) for v in ells]
    return {**out, **_data_settings(state), **_model_settings(state)}


def _data_settings(state: GPBootstrapState) -> dict:
    """The CSV file (name, SHA-256 of its text) and the random subsample, if any."""
    try:
        file = state.data_file()
    except (OSError, ValueError):  # the file went away: the settings say so instead of failing the download
        file = {"file": state.dataset, "sha256": None}
    if file is None:
        return {}
    subsample = {"rows": MAX_ROWS, "seed": SUBSAMPLE_SEED} if state.subsample else None
    return {"file": file["file"], "sha256": file["sha256"], "subsample": subsample}


def _model_settings(state: GPBootstrapState) -> dict:
    """Where the hyperparameters come from, the kernel's values as the problem uses them, the bin width."""
    out: dict = {"hyperparameters": state.hyperparameter_source}
    if state.hyperparameter_source == "evidence" and state.evidence is not None:
        fit = state.evidence
        values = {name: np.asarray(v).tolist() for name, v in state.hyper.fitted(fit).items()}  # ARD: ℓ per input
        out["evidence"] = {"log_evidence": fit.log_evidence, "rows": fit.n, **values,
                           "ard": bool(np.ndim(fit.lengthscale) > 0)}
    if state.problem is not None:
        out["kernel_parameters"] = {name: np.asarray(v).tolist() for name, v in state.problem.kernel.params.items()}
        out["rows"] = int(state.problem.n)
        out["bin_width"] = float(state.bin_width)
        # what rebuilds ΦΦᵀ on the low-rank path (method, rank, landmarks, jitter), as the command line's JSON has it
        out["low_rank"] = state.problem.features_record()
    return out


def settings_text(state: GPBootstrapState, tab: str) -> str:
    """The JSON sidecar of ``tab``'s CSV: ``{"export", "files", "settings"}`` (:func:`settings`)."""
    return settings_json(f"GP bootstrap ([MO03]): {tab}", settings(state), [csv_filename(state, tab)])


def html_text(state: GPBootstrapState, tab: str) -> str:
    """The figure of ``tab`` as a standalone HTML page (Bokeh, resources inlined: works offline); the learning
    curve's page adds the theory − Monte-Carlo table (:func:`gap_frame`)."""
    shown = figure(state, tab)
    if tab == "curve":
        shown = (shown + gap_element(state)).cols(1)
    return html_page(shown, f"Resampling Explorer: {tab} — {settings_line(state)}")


def settings_line(state: GPBootstrapState) -> str:
    """The controls behind a figure, in one line (the title of its HTML page)."""
    kernel = {"paper": f"paper l2={state.l2:g}", "rq": f"rq alpha={state.alpha:g}",
              "periodic": f"periodic period={state.period:g}"}.get(state.kernel, state.kernel)
    if state.kernel != "paper":
        kernel += f" lengthscale={state.lengthscale:g} signal_var={state.signal_var:g}"
    loss = state.loss if state.loss == "square" else f"{state.loss} eps={state.eps:g} beta={state.beta:g}"
    target = f" target={state.target}" if state.target else ""
    data = state.dataset
    if state.dataset == UPLOAD or state.dataset.startswith(CSV_PREFIX):  # the file's name, and the subsample
        data = f"{_data_settings(state)['file']}" + (f" subsample={MAX_ROWS}" if state.subsample else "")
    return (f"dataset={data}{target} kernel={kernel} noise_var={state.noise_var:g} "
            f"S/N={state.s_over_n:g} loss={loss} seed={state.seed}")
