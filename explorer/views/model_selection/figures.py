"""Figures, tables and exports of the model-selection view ([Fis16]): they only arrange the results of a
:class:`~explorer.views.model_selection.state.SelectionState`.

:func:`criteria_plot` (every criterion along the swept hyperparameter, Fig. 5.3-5.5) and :func:`prediction_plot`
(the predictive mean ± 2σ of each selected model), each with its legend beside the data (click an entry to hide
its line) and the direction that is better in its title or axis; the tables shown, :func:`optima_frame` and
:func:`ranking_frame` (hyperparameters as ``ℓ = 0.85, σ_f = 1.2, σ_n = 0.1``; a criterion value that is NaN or
infinite is shown as such and not ranked); the exports: plain CSV (:func:`csv_text`, one header line) with the
settings in a JSON sidecar (:func:`settings_text`), figures as HTML pages that open offline (:func:`html_text`);
the status line :func:`summary`.
"""

from __future__ import annotations

import html
import json

import holoviews as hv
import numpy as np
import pandas as pd

from explorer import regression
from explorer.model_selection.criterion import CRITERIA
from explorer.model_selection.optimisation import SelectionResult
from explorer.model_selection.problem import SelectionProblem
from explorer.views.common.files.exports import csv_table, data_name, download_name, html_page, settings_json
from explorer.views.common.files.uploads import UPLOAD, file_settings
from explorer.views.common.state.declarations import invalidating, settings_of
from explorer.views.model_selection.state import SelectionState

__all__ = [
    "EXPORT_COLUMNS", "CRITERION_COLORS", "NORM_DIM", "FIGURE_SIZE", "EMPTY", "normalise", "param_label",
    "criteria_plot", "prediction_plot", "curve_frame", "optima_frame", "ranking_frame", "settings", "settings_line",
    "settings_text", "csv_text", "html_text", "summary", "hyperparameter_text", "unranked", "FIGURES", "LEGEND",
    "EXPORT_NAMES", "export_filename", "NOT_RANKED",
    "KERNEL_COLUMN", "SELECT_BY_COLUMN", "PARAMETER_COLUMN",
]

#: The columns of the tables and CSV exports (also the experiments') that hold a row's covariance function, the
#: criterion that selected its hyperparameters and the hyperparameter swept.
KERNEL_COLUMN = "kernel"
SELECT_BY_COLUMN = "select_by"
PARAMETER_COLUMN = "parameter"
#: Columns of the CSV exports (all in long format, one row per criterion and point / kernel).
EXPORT_COLUMNS = {
    "curves": ["criterion", PARAMETER_COLUMN, "parameter_value", "criterion_value", "normalised", "is_minimum"],
    "optima": ["criterion", "value", "hyperparameters", "converged", "n_restarts", "n_failed", "n_iter",
               "n_evaluations", "n_excluded", "test_smse", "test_msll"],
    "ranking": [KERNEL_COLUMN, SELECT_BY_COLUMN, "hyperparameters", "criterion", "value", "rank"],
}

NORM_DIM = hv.Dimension("normalised", label="criterion, normalised to [0, 1] (lower is better)", range=(-0.05, 1.05))
Y_DIM = hv.Dimension("y", label="target y")
#: Size of every figure of the tab (the width follows the page).
FIGURE_SIZE = dict(responsive=True, height=430)
#: Legends beside the data, not over it; clicking an entry hides its line.
LEGEND = {"legend_position": "right", "legend_opts": {"click_policy": "hide"}}
#: The cell of a criterion value that is NaN or infinite (it is never ranked).
NOT_RANKED = "not finite: not ranked"
#: What the figures call each hyperparameter (the symbols of [Fis16]).
SYMBOLS = {"lengthscale": "ℓ", "signal_std": "σ_f", "noise_std": "σ_n", "alpha": "α", "period": "T"}
#: No points (the empty layers of a figure before its results exist).
EMPTY = np.array([])
#: One colour per criterion, the same in every figure.
CRITERION_COLORS = dict(zip(CRITERIA, ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                        "#e377c2")))


def normalise(values: np.ndarray) -> np.ndarray:
    """Map the finite values linearly onto [0, 1] (min → 0, max → 1); NaN stays NaN, a flat curve is 0."""
    values = np.asarray(values, dtype=float)
    ok = np.isfinite(values)
    if not ok.any():
        return np.full(values.shape, np.nan)
    lo, hi = values[ok].min(), values[ok].max()
    return np.where(ok, (values - lo) / (hi - lo) if hi > lo else 0.0, np.nan)


def param_label(parameter: str) -> str:
    """How the figures name a hyperparameter a curve sweeps ("lengthscale ℓ")."""
    return {"signal_std": "signal sd σ_f", "noise_std": "noise sd σ_n", "lengthscale": "lengthscale ℓ",
            "alpha": "shape α", "period": "period T"}.get(parameter, parameter)


def _number(value) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_number(v) for v in value) + "]"
    return f"{value:.3g}" if isinstance(value, (float, np.floating)) else str(value)


def hyperparameter_text(hyper: dict) -> str:
    """Hyperparameters as a reader writes them: ``"ℓ = 0.85, σ_f = 1.2, σ_n = 0.1"`` (3 significant digits;
    a sum or product keeps its ``k1.``/``k2.`` prefixes)."""
    def name(key: str) -> str:
        prefix, _, base = key.rpartition(".")
        return (prefix + "." if prefix else "") + SYMBOLS.get(base, base)
    return ", ".join(f"{name(k)} = {_number(v)}" for k, v in hyper.items())


def criteria_plot(state: SelectionState) -> hv.Overlay:
    """Every chosen criterion vs the swept hyperparameter (log axis), each normalised to [0, 1] so they share
    one axis (Fig. 5.3-5.5), with a marker at each curve's minimum (same legend entry: one click hides both);
    the fixed value as a dotted line. Lower is better (title and y-axis say so)."""
    curves = state.curves
    parameter = curves.parameter if curves is not None else state.parameter
    fixed = "teacher values" if state.problem is not None and state.problem.teacher else "data-scaled start"
    x_dim = hv.Dimension("parameter_value", label=f"{param_label(parameter)} (others fixed: {fixed})")
    layers = []
    for c in (curves.curves if curves is not None else ()):
        color = CRITERION_COLORS[c.criterion]
        norm = normalise(c.values)
        layers.append(hv.Curve((c.grid, norm), x_dim, NORM_DIM, label=c.criterion).opts(
            color=color, line_width=2, framewise=True, logx=True))
        if np.isfinite(c.best):
            i = int(np.flatnonzero(c.grid == c.best)[0])
            layers.append(hv.Scatter(([c.best], [norm[i]]), x_dim, NORM_DIM, label=c.criterion).opts(
                color=color, size=11, marker="circle", line_color="black", framewise=True, logx=True))
    if not layers:
        layers.append(hv.Curve((EMPTY, EMPTY), x_dim, NORM_DIM).opts(framewise=True, logx=True))
    overlay = hv.Overlay(layers)
    if curves is not None:
        overlay = overlay * hv.VLine(float(curves.reference[parameter])).opts(color="gray", line_dash="dotted")
    title = f"Criteria vs {param_label(parameter)}: lower is better, ● = minimum"
    return overlay.opts(logx=True, title=title, show_grid=True, **LEGEND, **FIGURE_SIZE)


def _predictions(result: SelectionResult, problem: SelectionProblem, Xs: np.ndarray):
    post = regression.fit(result.kernel, problem.X, problem.y, result.noise_var)
    mean, var = post.predict(Xs, return_var=True)
    return mean, 2.0 * np.sqrt(np.maximum(var, 0.0))


def prediction_plot(state: SelectionState, points: int = 300) -> hv.Overlay:
    """The predictive mean ± 2σ (σ of the latent f) of the model each criterion selected, over the data.

    1-D inputs: the training data (black) and test data (grey) with one mean and band per criterion.
    More inputs: predicted mean (± 2σ) against the target on the test rows (training rows if none), with
    the diagonal of perfect prediction.
    """
    problem, fits = state.problem, state.optima
    results = fits.results if fits is not None else ()
    if problem is None:
        return hv.Overlay([hv.Curve((EMPTY, EMPTY), "x", Y_DIM)]).opts(title="No data", **FIGURE_SIZE)
    if problem.d == 1:
        x_dim = hv.Dimension("x", label=problem.feature_names[0] if problem.feature_names else "x")
        xs = np.concatenate([problem.X[:, 0]] + ([problem.X_test[:, 0]] if problem.X_test is not None else []))
        pad = 0.05 * (np.ptp(xs) or 1.0)
        grid = np.linspace(xs.min() - pad, xs.max() + pad, points)
        layers = []
        if problem.X_test is not None:
            layers.append(hv.Scatter((problem.X_test[:, 0], problem.y_test), x_dim, Y_DIM, label="test data").opts(
                color="#bbbbbb", size=3))
        layers.append(hv.Scatter((problem.X[:, 0], problem.y), x_dim, Y_DIM, label="training data").opts(
            color="black", size=5))
        for res in results:
            mean, band = _predictions(res, problem, grid[:, None])
            color = CRITERION_COLORS[res.criterion]
            layers.append(hv.Area((grid, mean - band, mean + band), x_dim, [Y_DIM, "y2"],
                                  label=res.criterion).opts(color=color, alpha=0.15, line_alpha=0))
            layers.append(hv.Curve((grid, mean), x_dim, Y_DIM, label=res.criterion).opts(color=color, line_width=2))
        title = f"Predictive mean ± 2σ of each selected model, {problem.name} (N = {problem.n})"
        return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
            title=title, show_grid=True, **LEGEND, **FIGURE_SIZE)
    X, y, which = ((problem.X_test, problem.y_test, "test") if problem.X_test is not None
                   else (problem.X, problem.y, "training"))
    t_dim, p_dim = hv.Dimension("target", label=f"target ({which} rows)"), hv.Dimension("predicted",
                                                                                          label="predicted mean")
    lo, hi = float(np.min(y)), float(np.max(y))
    layers = [hv.Curve(([lo, hi], [lo, hi]), t_dim, p_dim, label="perfect prediction").opts(
        color="gray", line_dash="dashed")]
    for res in results:
        mean, band = _predictions(res, problem, X)
        color = CRITERION_COLORS[res.criterion]
        layers.append(hv.ErrorBars((y, mean, band), t_dim, [p_dim, "band"], label=res.criterion).opts(
            color=color, alpha=0.4))
        layers.append(hv.Scatter((y, mean), t_dim, p_dim, label=res.criterion).opts(color=color, size=5))
    title = f"Predicted vs target ± 2σ, {problem.name} ({problem.d} inputs): closer to the diagonal is better"
    return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
        title=title, show_grid=True, **LEGEND, **FIGURE_SIZE)


# ------------------------------------------------------------------------------------ tables and exports


def _hyper_json(hyper: dict) -> str:
    """Hyperparameters as a JSON object (6 significant decimals), the cell of a CSV export."""
    return json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in hyper.items()})


def _value_text(value: float) -> str:
    return f"{value:.4g}" if np.isfinite(value) else NOT_RANKED


def curve_frame(state: SelectionState) -> pd.DataFrame:
    """Every curve point: criterion, swept value, criterion value, normalised value, minimum flag."""
    rows = []
    for c in (state.curves.curves if state.curves is not None else ()):
        for x, v, nv in zip(c.grid, c.values, normalise(c.values)):
            rows.append({"criterion": c.criterion, PARAMETER_COLUMN: c.parameter, "parameter_value": x,
                         "criterion_value": v, "normalised": nv, "is_minimum": bool(x == c.best)})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["curves"])


def _optima_export(state: SelectionState) -> pd.DataFrame:
    """The optima with every optimiser diagnostic, hyperparameters as JSON (the CSV export)."""
    rows = []
    for r in (state.optima.results if state.optima is not None else ()):
        rows.append({"criterion": r.criterion, "value": r.value, "hyperparameters": _hyper_json(r.hyperparameters),
                     "converged": r.converged, "n_restarts": r.n_restarts, "n_failed": r.n_failed,
                     "n_iter": r.n_iter, "n_evaluations": r.n_evaluations, "n_excluded": r.n_excluded,
                     "test_smse": r.test.smse if r.test else np.nan, "test_msll": r.test.msll if r.test else np.nan})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["optima"])


def optima_frame(state: SelectionState) -> pd.DataFrame:
    """The table shown: the hyperparameters each criterion selected (``ℓ = …, σ_f = …``), its value there
    (lower is better), whether L-BFGS-B converged, and the test errors when test rows exist. The CSV export
    adds the optimiser's counts."""
    frame = _optima_export(state)
    shown = pd.DataFrame({"criterion": frame["criterion"], "value (lower is better)": frame["value"].map(_value_text),
                          "hyperparameters": [hyperparameter_text(r.hyperparameters) for r in (
                              state.optima.results if state.optima is not None else ())],
                          "converged": frame["converged"].map({True: "yes", False: "no"})})
    if frame["test_smse"].notna().any():
        shown["test SMSE"] = frame["test_smse"].map(lambda v: f"{v:.3g}")
        shown["test MSLL"] = frame["test_msll"].map(lambda v: f"{v:.3g}")
    return shown


def _rank_keys(ranking) -> list[str]:
    return list(ranking.rank_by) + (["smse"] if any(r.test is not None for r in ranking.rows) else [])


def _rank_cell(row, key: str) -> str:
    value, rank = row.values.get(key, np.nan), row.ranks.get(key)
    if not np.isfinite(value):
        return NOT_RANKED
    return f"{rank} ({value:.4g})" if rank is not None else f"({value:.4g})"


def ranking_frame(state: SelectionState) -> pd.DataFrame:
    """The ranking table: one row per functional form, sorted by the rank under 'select by'. Under each
    criterion (and test SMSE when test rows exist) one cell "rank (value)" (rank 1 = lowest value = best;
    no rank until every form is done); a value that is NaN or infinite reads ``NOT_RANKED`` and is never
    ranked. The last column: the hyperparameters chosen by 'select by', as ``ℓ = …, σ_f = …``."""
    ranking = state.ranking
    select_by = ranking.select_by if ranking is not None else state.select_by
    hyper = f"hyperparameters (selected by {select_by})"
    if ranking is None:
        return pd.DataFrame(columns=[KERNEL_COLUMN, hyper])
    keys = _rank_keys(ranking)
    order = sorted(ranking.rows, key=lambda r: (r.ranks.get(ranking.select_by) is None,
                                                r.ranks.get(ranking.select_by) or 0))
    rows = [{KERNEL_COLUMN: r.kernel_name, **{f"{c}: rank (value)": _rank_cell(r, c) for c in keys},
             hyper: hyperparameter_text(r.selection.hyperparameters)} for r in order]
    return pd.DataFrame(rows, columns=[KERNEL_COLUMN, *[f"{c}: rank (value)" for c in keys], hyper])


def unranked(state: SelectionState) -> list[tuple[str, str]]:
    """(kernel, criterion) of every ranking value that is NaN or infinite: shown as a message, never ranked."""
    ranking = state.ranking
    if ranking is None:
        return []
    return [(r.kernel_name, c) for r in ranking.rows for c in _rank_keys(ranking)
            if not np.isfinite(r.values.get(c, np.nan))]


def _ranking_long(state: SelectionState) -> pd.DataFrame:
    ranking = state.ranking
    rows = []
    for r in (ranking.rows if ranking is not None else ()):
        for c, v in r.values.items():
            rank = r.ranks.get(c)
            rows.append({KERNEL_COLUMN: r.kernel_name, SELECT_BY_COLUMN: ranking.select_by,
                         "hyperparameters": _hyper_json(r.selection.hyperparameters), "criterion": c, "value": v,
                         "rank": np.nan if rank is None else rank})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["ranking"])


#: The figures of the tab, by name (also the names of their HTML exports).
FIGURES = {"curves": criteria_plot, "predictions": prediction_plot}
_FRAMES = {"curves": curve_frame, "optima": _optima_export, "ranking": _ranking_long}
#: What each download holds, the first part of its file name (:func:`export_filename`).
EXPORT_NAMES = {"curves": "criteria curves", "predictions": "predictions", "optima": "optima", "ranking": "ranking",
                "settings": "settings"}


def export_filename(state: SelectionState, what: str, ext: str) -> str:
    """The name of a download: what it holds and the data, e.g. ``model-selection-criteria-curves_teacher.csv``,
    ``settings_model-selection_teacher.json`` (an upload: its file name without ``.csv``)."""
    upload = state.uploaded_file.filename if state.dataset == UPLOAD and state.uploaded_file is not None else None
    data = data_name(state.dataset, upload)
    if what == "settings":
        return download_name("settings", "model selection", data, ext=ext)
    return download_name(f"model selection {EXPORT_NAMES[what]}", data, ext=ext)


def settings(state: SelectionState) -> dict:
    """The controls behind the figures and tables, for the JSON sidecar of the CSV exports: every control that
    changes a result and applies now (:func:`~explorer.views.common.state.declarations.settings_of`; the target column
    only for an upload), then the uploaded file's name and SHA-256."""
    files = file_settings(state.uploaded_file) if state.dataset == UPLOAD else {}
    return {**settings_of(state, invalidating(state)), **files}


def settings_line(state: SelectionState) -> str:
    """The controls behind a figure or table, in one line (the title of its HTML page)."""
    target = f" target={state.target}" if state.dataset == UPLOAD else ""
    return (f"dataset={state.dataset}{target} N={state.n_points} n_test={state.n_test} "
            f"standardize={state.standardize} kernel={state.kernel} parameter={state.parameter} "
            f"criteria={','.join(state.criteria)} K={state.n_folds} J={state.n_partitions} M={state.n_objects} "
            f"entropy={state.entropy} restarts={state.n_restarts} max_iter={state.max_iter} "
            f"rank_kernels={','.join(state.rank_kernels)} select_by={state.select_by} seed={state.seed}")


def settings_text(state: SelectionState) -> str:
    """The JSON sidecar of the CSV exports: ``{"export", "files", "settings"}`` (:func:`settings`)."""
    return settings_json("GP model selection ([Fis16])", settings(state),
                         [export_filename(state, what, "csv") for what in _FRAMES])


def csv_text(state: SelectionState, what: str) -> str:
    """CSV of ``what`` ("curves", "optima" or "ranking"): one header line (``EXPORT_COLUMNS[what]``), then the
    rows; the settings are in the sidecar :func:`settings_text`."""
    return csv_table(_FRAMES[what](state))


def html_text(state: SelectionState, what: str) -> str:
    """``what`` as a standalone HTML page that opens offline: a figure ("curves", "predictions", Bokeh inlined)
    or the ranking table ("ranking")."""
    title = f"Resampling Explorer: model selection {what} — {settings_line(state)}"
    if what == "ranking":
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"
                "<h1>Ranking of functional forms</h1><p>Rank 1 = lowest value = best; a value that is NaN or "
                f"infinite is not ranked.</p><p>{html.escape(settings_line(state))}</p>"
                f"{ranking_frame(state).to_html(index=False, na_rep='')}</body></html>")
    return html_page(FIGURES[what](state), title)


def summary(state: SelectionState) -> str:
    """One line on the data, the jobs' progress and the selected values of the swept hyperparameter."""
    p = state.problem
    if p is None:
        return f"**{state.dataset}**"
    parts = [f"**{p.name}**: N = {p.n} training cases, {p.d} input(s)",
             f"{0 if p.y_test is None else p.y_test.size} test cases"]
    if state.curves is not None:
        parts.append(f"curves {len(state.curves.curves)}/{len(state.curves.criteria)}")
    if state.optima is not None:
        parts.append(f"optima {len(state.optima.results)}/{len(state.optima.criteria)}")
        sel = ", ".join(f"{r.criterion}: {r.hyperparameters.get(state.parameter, float('nan')):.3g}"
                        for r in state.optima.results if state.parameter in r.hyperparameters)
        if sel:
            parts.append(f"selected {param_label(state.parameter)} — {sel}")
    text = " · ".join(parts)
    missing = unranked(state)
    if missing:
        text += "\n\n" + " ".join(f"{c} is not finite for the {k} kernel, so {k} is not ranked by {c}."
                                    for k, c in missing)
    return text
