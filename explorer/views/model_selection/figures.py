"""Figures, tables and exports of the model-selection view (seed 001): they only arrange the results of a
:class:`~explorer.views.model_selection.state.SelectionState`.

:func:`criteria_plot` (every criterion along the swept hyperparameter, Fig. 5.3-5.5) and :func:`prediction_plot`
(the predictive mean ± 2σ of each selected model); the tables :func:`curve_frame`, :func:`optima_frame` and
:func:`ranking_frame`; the exports :func:`csv_text` and :func:`html_text`; the status line :func:`summary`.
"""

from __future__ import annotations

import json

import holoviews as hv
import numpy as np
import pandas as pd

from explorer import regression
from explorer.model_selection.criteria import (
    CRITERIA,
    CRITERION_LABELS,
    SelectionResult,
)
from explorer.model_selection.problem import SelectionProblem
from explorer.views.common.exports import html_page
from explorer.views.common.uploads import UPLOAD
from explorer.views.model_selection.state import SelectionState

__all__ = [
    "EXPORT_COLUMNS", "CRITERION_COLORS", "NORM_DIM", "FIGURE_SIZE", "EMPTY", "normalise", "param_label",
    "criteria_plot", "prediction_plot", "curve_frame", "optima_frame", "ranking_frame", "settings_line", "csv_text",
    "html_text", "summary", "FIGURES",
]

#: Columns of the CSV exports (all in long format, one row per criterion and point / kernel).
EXPORT_COLUMNS = {
    "curves": ["criterion", "parameter", "parameter_value", "criterion_value", "normalised", "is_minimum"],
    "optima": ["criterion", "value", "hyperparameters", "converged", "n_restarts", "n_failed", "n_iter",
               "n_evaluations", "n_excluded", "test_smse", "test_msll"],
    "ranking": ["kernel", "select_by", "hyperparameters", "criterion", "value", "rank"],
}

NORM_DIM = hv.Dimension("normalised", label="criterion, normalised to [0, 1] (lower is better)", range=(-0.05, 1.05))
Y_DIM = hv.Dimension("y", label="target y")
#: Size of every figure of the tab (the width follows the page).
FIGURE_SIZE = dict(responsive=True, height=430)
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


def criteria_plot(state: SelectionState) -> hv.Overlay:
    """Every chosen criterion vs the swept hyperparameter (log axis), each normalised to [0, 1] so they share
    one axis (Fig. 5.3-5.5), with a marker at each curve's minimum; the fixed value as a dotted line."""
    curves = state.curves
    parameter = curves.parameter if curves is not None else state.parameter
    x_dim = hv.Dimension("parameter_value", label=param_label(parameter))
    layers = []
    for c in (curves.curves if curves is not None else ()):
        color = CRITERION_COLORS[c.criterion]
        norm = normalise(c.values)
        layers.append(hv.Curve((c.grid, norm), x_dim, NORM_DIM, label=CRITERION_LABELS[c.criterion]).opts(
            color=color, line_width=2, framewise=True, logx=True))
        if np.isfinite(c.best):
            i = int(np.flatnonzero(c.grid == c.best)[0])
            layers.append(hv.Scatter(([c.best], [norm[i]]), x_dim, NORM_DIM).opts(
                color=color, size=11, marker="circle", line_color="black", framewise=True, logx=True))
    if not layers:
        layers.append(hv.Curve((EMPTY, EMPTY), x_dim, NORM_DIM).opts(framewise=True, logx=True))
    overlay = hv.Overlay(layers)
    if curves is not None:
        overlay = overlay * hv.VLine(float(curves.reference[parameter])).opts(color="gray", line_dash="dotted")
    fixed = "teacher values" if state.problem is not None and state.problem.teacher else "data-scaled start"
    title = f"Criteria vs {param_label(parameter)}, others fixed ({fixed}); ● = minimum"
    return overlay.opts(
        logx=True, legend_position="top_left", title=title, show_grid=True, **FIGURE_SIZE)


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
            layers.append(hv.Area((grid, mean - band, mean + band), x_dim, [Y_DIM, "y2"]).opts(
                color=color, alpha=0.15, line_alpha=0))
            layers.append(hv.Curve((grid, mean), x_dim, Y_DIM, label=f"{res.criterion}: mean ± 2σ").opts(
                color=color, line_width=2))
        title = f"Predictive mean ± 2σ of each selected model, {problem.name} (N = {problem.n})"
        return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
            legend_position="top_left", title=title, show_grid=True, **FIGURE_SIZE)
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
        layers.append(hv.ErrorBars((y, mean, band), t_dim, [p_dim, "band"]).opts(color=color, alpha=0.4))
        layers.append(hv.Scatter((y, mean), t_dim, p_dim, label=f"{res.criterion}: mean ± 2σ").opts(
            color=color, size=5))
    title = f"Predicted vs target of each selected model, {problem.name} ({problem.d} inputs)"
    return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
        legend_position="top_left", title=title, show_grid=True, **FIGURE_SIZE)


# ------------------------------------------------------------------------------------ tables and exports


def _hyper_text(hyper: dict) -> str:
    return json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in hyper.items()})


def curve_frame(state: SelectionState) -> pd.DataFrame:
    """Every curve point: criterion, swept value, criterion value, normalised value, minimum flag."""
    rows = []
    for c in (state.curves.curves if state.curves is not None else ()):
        for x, v, nv in zip(c.grid, c.values, normalise(c.values)):
            rows.append({"criterion": c.criterion, "parameter": c.parameter, "parameter_value": x,
                         "criterion_value": v, "normalised": nv, "is_minimum": bool(x == c.best)})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["curves"])


def optima_frame(state: SelectionState) -> pd.DataFrame:
    """The hyperparameters each criterion selected, its value there, optimiser diagnostics, test errors."""
    rows = []
    for r in (state.optima.results if state.optima is not None else ()):
        rows.append({"criterion": r.criterion, "value": r.value, "hyperparameters": _hyper_text(r.hyperparameters),
                     "converged": r.converged, "n_restarts": r.n_restarts, "n_failed": r.n_failed,
                     "n_iter": r.n_iter, "n_evaluations": r.n_evaluations, "n_excluded": r.n_excluded,
                     "test_smse": r.test.smse if r.test else np.nan, "test_msll": r.test.msll if r.test else np.nan})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["optima"])


def ranking_frame(state: SelectionState) -> pd.DataFrame:
    """The ranking table: one row per functional form, the value and rank (1 = best) under each criterion
    (and test SMSE when test rows exist), the hyperparameters chosen by 'select by'."""
    ranking = state.ranking
    if ranking is None:
        return pd.DataFrame(columns=["kernel", "hyperparameters"])
    keys = list(ranking.rank_by) + (["smse"] if any(r.test is not None for r in ranking.rows) else [])
    rows = []
    for r in ranking.rows:
        row = {"kernel": r.kernel_name}
        for c in keys:
            row[f"rank {c}"] = r.ranks.get(c, np.nan)
            row[c] = r.values.get(c, np.nan)
        row["hyperparameters"] = _hyper_text(r.selection.hyperparameters)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(f"rank {ranking.select_by}", kind="stable") if (
        ranking.complete and f"rank {ranking.select_by}" in frame) else frame


def _ranking_long(state: SelectionState) -> pd.DataFrame:
    ranking = state.ranking
    rows = []
    for r in (ranking.rows if ranking is not None else ()):
        for c, v in r.values.items():
            rows.append({"kernel": r.kernel_name, "select_by": ranking.select_by,
                         "hyperparameters": _hyper_text(r.selection.hyperparameters), "criterion": c, "value": v,
                         "rank": r.ranks.get(c, np.nan)})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["ranking"])


#: The figures of the tab, by name (also the names of their HTML exports).
FIGURES = {"curves": criteria_plot, "predictions": prediction_plot}
_FRAMES = {"curves": curve_frame, "optima": optima_frame, "ranking": _ranking_long}


def settings_line(state: SelectionState) -> str:
    """The controls behind a figure or table, for the header of its exports."""
    target = f" target={state.target}" if state.dataset == UPLOAD else ""
    return (f"dataset={state.dataset}{target} N={state.n_points} n_test={state.n_test} "
            f"standardize={state.standardize} kernel={state.kernel} parameter={state.parameter} "
            f"criteria={','.join(state.criteria)} K={state.n_folds} J={state.n_partitions} M={state.n_objects} "
            f"entropy={state.entropy} restarts={state.n_restarts} max_iter={state.max_iter} "
            f"rank_kernels={','.join(state.rank_kernels)} select_by={state.select_by} seed={state.seed}")


def csv_text(state: SelectionState, what: str) -> str:
    """CSV of ``what`` ("curves", "optima" or "ranking"), with a comment line naming the settings."""
    return f"# GP model selection (seed 001): {settings_line(state)}\n" + _FRAMES[what](state).to_csv(index=False)


def html_text(state: SelectionState, what: str) -> str:
    """``what`` as a standalone HTML page: a figure ("curves", "predictions", Bokeh with inlined resources)
    or the ranking table ("ranking")."""
    title = f"Resampling Explorer: model selection {what} — {settings_line(state)}"
    if what == "ranking":
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
                f"<h1>Ranking of functional forms</h1><p>{settings_line(state)}</p>"
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
    return " · ".join(parts)
