"""Figures, tables and exports of the SVM bootstrap ([MO03b], Fig. 1 left/right) from an :class:`SVMState`.

:func:`learning_curve_plot` and :func:`field_plot` and the exports (:func:`csv_text`, a plain table with the
settings in its JSON sidecar :func:`settings_text`, and :func:`html_text`) only arrange the state's results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
import param

from explorer.views.common.files.exports import csv_table, data_name, download_name, html_page, settings_json
from explorer.views.common.files.uploads import UPLOAD, file_settings
from explorer.views.common.state.declarations import link_names, settings_of
from explorer.views.svm_bootstrap.state import EXPORT_COLUMNS, S_OVER_N_COLUMN, SAMPLES_COLUMN, SVMState

__all__ = ["learning_curve_plot", "field_plot", "large_gaps", "GAP_THRESHOLD", "SVMGap", "curve_frame", "field_frame",
           "curve_summary", "field_summary", "csv_text", "html_text", "settings", "settings_text", "settings_line",
           "export_filename", "FIGURES", "EXPORT_NAMES"]


S_DIM = hv.Dimension(S_OVER_N_COLUMN, label="S/N")
ERR_DIM = hv.Dimension("error", label="bootstrap classification error ε(S)")
H_DIM = hv.Dimension("h", label="internal field f(x) at the test input")
DENSITY_DIM = hv.Dimension("density", label="density")
THEORY_COLOR, MC_COLOR, APPROX_COLOR, EXACT_COLOR = "#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"
_SIZE = dict(responsive=True, height=430)
_EMPTY = np.array([])
#: | theory − Monte-Carlo | beyond this many Monte-Carlo standard errors is flagged in the learning curve.
GAP_THRESHOLD = 3.0


@dataclass(frozen=True)
class SVMGap:
    """Theory (eq. 17) − Monte-Carlo (eq. 6) at one S/N, in units of the Monte-Carlo standard error."""

    s_over_n: float
    mc_mean: float
    gap: float
    gap_se: float


def large_gaps(state: SVMState, threshold: float = GAP_THRESHOLD) -> tuple[SVMGap, ...]:
    """The S/N where the converged theory is more than ``threshold`` Monte-Carlo standard errors from
    Monte-Carlo, | ε_theory − ε_MC | > threshold · se_MC (a zero standard error flags any nonzero gap)."""
    theory, mc = state.theory_curve, state.curve_mc
    if theory is None or mc is None:
        return ()
    at = {round(p.s_over_n, 12): p.theory for p in theory.points if p.converged}
    gaps = []
    for p in mc.points:
        if round(p.s_over_n, 12) not in at:
            continue
        gap = at[round(p.s_over_n, 12)] - p.mc_mean
        gap_se = gap / p.mc_se if p.mc_se > 0 else (np.inf * np.sign(gap) if gap else 0.0)
        if abs(gap_se) > threshold:
            gaps.append(SVMGap(p.s_over_n, p.mc_mean, gap, float(gap_se)))
    return tuple(gaps)


def _gap_text(gap: SVMGap) -> str:
    """The gap in standard errors, or in error units where every Monte-Carlo sample gave the same error (no
    standard error to count in: never "+inf s.e.")."""
    if np.isfinite(gap.gap_se):
        return f"{gap.gap_se:+.1f} s.e."
    return f"theory {gap.gap:+.3g} from a Monte-Carlo error that is the same in every sample"


def _framewise(*elements):
    return [e.opts(framewise=True) for e in elements]


def learning_curve_plot(state: SVMState) -> hv.Overlay:
    """ε(S) of the theory (eq. 17, line) and Monte-Carlo (eq. 6, ± 1 s.e.) vs S/N, [MO03b] Fig. 1 left,
    with the S → ∞ levels: approximate leave-one-out (eq. 20, where the theory goes) and the literal
    leave-one-out error (where the bootstrap goes). Unconverged theory points are left out."""
    theory, mc = state.theory_curve, state.curve_mc
    points = [p for p in (theory.points if theory is not None else ()) if p.converged]
    ts, tv = np.array([p.s_over_n for p in points]), np.array([p.theory for p in points])
    mpts = mc.points if mc is not None else ()
    ms = np.array([p.s_over_n for p in mpts])
    mean, se = np.array([p.mc_mean for p in mpts]), np.array([p.mc_se for p in mpts])
    grid = theory.grid if theory is not None else tuple(state.curve_grid) or (1.0,)
    span = np.array([min(grid), max(grid)])

    def level(value):
        return (span, np.full(2, value)) if value is not None else (_EMPTY, _EMPTY)

    flagged = large_gaps(state)

    layers = _framewise(
        hv.Curve((ts, tv), S_DIM, ERR_DIM, label="replica theory, eq. (17)").opts(color=THEORY_COLOR, line_width=2),
        hv.Scatter((ts, tv), S_DIM, ERR_DIM).opts(color=THEORY_COLOR, size=6),
        hv.ErrorBars((ms, mean, se), S_DIM, [ERR_DIM, "se"]).opts(color=MC_COLOR),
        hv.Scatter((ms, mean), S_DIM, ERR_DIM, label="Monte-Carlo (± 1 s.e.)").opts(color=MC_COLOR, size=9,
                                                                                   marker="square"),
        hv.Curve(level(theory.loo_approximate if theory else None), S_DIM, ERR_DIM,
                 label="S → ∞: approximate LOO, eq. (20)").opts(color=APPROX_COLOR, line_dash="dashed"),
        hv.Curve(level(theory.loo_exact if theory else None), S_DIM, ERR_DIM,
                 label="S → ∞: exact leave-one-out").opts(color=EXACT_COLOR, line_dash="dotted", line_width=2),
        hv.Scatter(([g.s_over_n for g in flagged], [g.mc_mean for g in flagged]), S_DIM, ERR_DIM,
                   label=f"theory − MC > {GAP_THRESHOLD:g} s.e.").opts(
            color="black", marker="circle", size=20, fill_alpha=0, line_width=2),
    )
    title = f"Bootstrap learning curve, {_problem_label(state)}:\nlower error is better"
    # padding: the points at the first and last S/N are drawn whole, not cut by the frame
    return hv.Overlay(layers).opts(legend_position="right", legend_opts={"click_policy": "hide"}, title=title,
                                   show_grid=True, padding=0.06, **_SIZE)


def _field_data(state: SVMState):
    field = state.field
    if field is None:
        return None, 0
    return field, min(state.index, field.theory_mean.size - 1)


def field_plot(state: SVMState, bins: int = 40) -> hv.Overlay:
    """Bootstrap density of the internal field at held-out test input ``test_index``: the theory's Gaussian
    (eqs. 18-19) vs the Monte-Carlo histogram, p(−1|x) of both in the legend and title (Fig. 1 right).
    The dotted line at f = 0 is the decision boundary: p(−1|x) is the mass to its left."""
    field, j = _field_data(state)
    edges, density, h, rho = np.array([0.0, 1.0]), np.array([0.0]), _EMPTY, _EMPTY
    th_label, mc_label, title = "theory, eqs. (18)-(19)", "Monte-Carlo", "Internal field at a test input"
    if field is not None:
        samples = field.mc_fields[:, j]
        mu, sd = field.theory_mean[j], math.sqrt(max(field.theory_var[j], 0.0))
        lo = min(samples.min(), mu - 4 * sd, -0.1)
        hi = max(samples.max(), mu + 4 * sd, 0.1)
        density, edges = np.histogram(samples, bins=bins, range=(lo, hi), density=True)
        h = np.linspace(lo, hi, 400)
        rho = np.exp(-0.5 * ((h - mu) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)) if sd > 0 else np.zeros_like(h)
        pt, pm, pse = field.theory_p_negative[j], field.mc_p_negative[j], field.mc_p_negative_se[j]
        th_label = f"theory, eqs. (18)-(19): p(−1|x) = {pt:.3f}"
        mc_label = f"Monte-Carlo ({samples.size} SVMs): p(−1|x) = {pm:.3f} ± {pse:.3f}"
        label = "" if field.y_test is None else f", true label {field.y_test[j]:+g}"
        title = (f"Test input {j}{label}, S/N = {field.s_over_n:g}:\np(−1|x) theory {pt:.3f}, "
                 f"MC {pm:.3f} ± {pse:.3f}")
    layers = _framewise(
        hv.Histogram((edges, density), kdims=[H_DIM], vdims=[DENSITY_DIM], label=mc_label).opts(
            color=MC_COLOR, fill_alpha=0.35, line_color=MC_COLOR),
        hv.Curve((h, rho), H_DIM, DENSITY_DIM, label=th_label).opts(color=THEORY_COLOR, line_width=2),
    )
    return (hv.Overlay(layers) * hv.VLine(0.0).opts(color="black", line_dash="dotted")).opts(
        legend_position="right", legend_opts={"click_policy": "hide"}, title=title, show_grid=True, **_SIZE)


def _problem_label(state: SVMState) -> str:
    p = state.problem
    return f"{p.name} (N = {p.n}, L = {state.lengthscale:.4g})" if p is not None else state.dataset


def curve_summary(state: SVMState) -> str:
    """One line on the learning curve: progress of both parts, unconverged theory points, the S → ∞ levels."""
    theory, mc = state.theory_curve, state.curve_mc
    parts = [f"**{_problem_label(state)}**"]
    if state.problem is not None and state.problem.n_sites < state.problem.n:
        parts.append(f"{state.problem.n_sites} distinct inputs (identical rows merged)")
    grid = len(state.curve_grid)
    parts.append(f"theory: {len(theory.points) if theory else 0}/{grid} values of S/N")
    parts.append(f"Monte-Carlo: {len(mc.points) if mc else 0}/{grid}")
    if theory is not None and theory.loo_approximate is not None:
        exact = "…" if theory.loo_exact is None else f"{theory.loo_exact:.4g}"
        parts.append(f"S → ∞: approximate LOO {theory.loo_approximate:.4g}, exact LOO {exact}")
    text = " · ".join(parts)
    flagged = large_gaps(state)
    if flagged:
        where = ", ".join(f"{g.s_over_n:g} ({_gap_text(g)})" for g in flagged)
        text += (f"\n\n⚠ Theory and Monte-Carlo differ by more than {GAP_THRESHOLD:g} standard errors at "
                 f"S/N = {where} (circled in the figure).")
    if theory is not None and theory.unconverged:
        bad = ", ".join(f"S/N = {p.s_over_n:g} (residual {p.residual:.1e})" for p in theory.unconverged)
        text += (f"\n\n⚠ The replica theory did not converge at {bad}: those points are not drawn. Narrow "
                 "kernels and large S/N are the hard cases.")
    return text


def field_summary(state: SVMState) -> str:
    """One line on the field distribution: the test input, the bootstrap size, theory convergence."""
    field, j = _field_data(state)
    if field is None:
        return f"Held-out test inputs: the first {state.holdout} rows (not in D0)."
    tp = state.test_problem
    text = (f"Test input {j} of {field.theory_mean.size} held out; D0 has N = {tp.n if tp else '?'} rows; "
            f"S/N = {field.s_over_n:g}; theory mean {field.theory_mean[j]:.3g}, sd "
            f"{math.sqrt(field.theory_var[j]):.3g}; MC mean {field.mc_fields[:, j].mean():.3g}, sd "
            f"{field.mc_fields[:, j].std(ddof=1) if field.mc_fields.shape[0] > 1 else float('nan'):.3g}")
    if not field.converged:
        text += f" · ⚠ theory not converged (residual {field.residual:.1e})"
    return text


# ------------------------------------------------------------------------------------ tables and exports


def curve_frame(state: SVMState) -> pd.DataFrame:
    """Theory and Monte-Carlo at every S/N computed so far, with the S → ∞ levels on every row."""
    theory, mc = state.theory_curve, state.curve_mc
    rows: dict[float, dict] = {}
    for p in (theory.points if theory is not None else ()):
        rows[round(p.s_over_n, 12)] = {"S": p.S, "theory": p.theory, "converged": p.converged, "n_iter": p.n_iter,
                                       "residual": p.residual}
    for p in (mc.points if mc is not None else ()):
        rows.setdefault(round(p.s_over_n, 12), {}).update(mc_mean=p.mc_mean, mc_se=p.mc_se, mc_samples=p.mc_samples)
    levels = {"loo_approximate": theory.loo_approximate if theory else None,
              "loo_exact": theory.loo_exact if theory else None}
    return pd.DataFrame([{S_OVER_N_COLUMN: v, **r, **levels} for v, r in sorted(rows.items())],
                        columns=EXPORT_COLUMNS["curve"])


def field_frame(state: SVMState) -> pd.DataFrame:
    """Theory and Monte-Carlo field moments and p(−1|x) at every held-out test input."""
    f = state.field
    if f is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS["field"])
    m = f.theory_mean.size
    B = f.mc_fields.shape[0]
    return pd.DataFrame({
        "test_input": np.arange(m), "y_test": f.y_test if f.y_test is not None else np.full(m, np.nan),
        "theory_mean": f.theory_mean, "theory_var": f.theory_var, "theory_p_negative": f.theory_p_negative,
        "mc_mean": f.mc_fields.mean(axis=0), "mc_var": f.mc_fields.var(axis=0, ddof=1) if B > 1 else np.nan,
        "mc_p_negative": f.mc_p_negative, "mc_p_negative_se": f.mc_p_negative_se, SAMPLES_COLUMN: B,
    }, columns=EXPORT_COLUMNS["field"])


#: The figure of each export (``what``) and its name in the download buttons.
FIGURES = {"curve": learning_curve_plot, "field": field_plot}
EXPORT_NAMES = {"curve": "Learning curve", "field": "Field"}
_FRAMES = {"curve": curve_frame, "field": field_frame}


def export_filename(state: SVMState, what: str, ext: str) -> str:
    """The name of a download: what it holds, the data and, for the field, the test input
    (``svm-learning-curve_crabs.csv``, ``svm-field_crabs_test-input-3.html``, ``settings_svm_crabs.json``)."""
    upload = state.source.upload.filename if state.dataset == UPLOAD and state.source.upload is not None else None
    data = data_name(state.dataset, upload)
    if what == "settings":
        return download_name("settings", "svm", data, ext=ext)
    return download_name(f"svm {EXPORT_NAMES[what]}", data, *([f"test input {state.index}"] if what == "field"
                                                                 else []), ext=ext)


def _typed(state: SVMState, name: str, value):
    """``value`` of the control ``name`` as its parameter's type says: a whole number for an ``Integer``, a float
    for another ``Number`` (a lengthscale of 2 is written 2.0)."""
    parameter = state.param[name]
    if isinstance(parameter, param.Integer):
        return int(value)
    return float(value) if isinstance(parameter, param.Number) else value


def settings(state: SVMState) -> dict:
    """The controls behind the figures and tables, for the JSON sidecar of the CSV exports: every control the
    link carries (:func:`~explorer.views.common.state.declarations.settings_of`: the target only for an upload) but
    the state's ``auto_run_parameter`` (when the Monte-Carlo runs, not what it computes), the S/N values sorted
    and the test input shown; the data first, then the kernel K(x, x') = exp(−‖x − x'‖²/(2L²)); for an upload,
    its file name and SHA-256."""
    names = [name for name in link_names(state) if name != state.auto_run_parameter]
    values = {name: _typed(state, name, value) for name, value in settings_of(state, names).items()}
    values.update(curve_grid=sorted(float(v) for v in state.curve_grid), test_index=int(state.index))
    first, *rest = values.items()
    out = dict([first, ("kernel", "squared_exponential"), *rest])
    if state.dataset == UPLOAD:
        out.update(file_settings(state.uploaded_file))
    return out


def settings_text(state: SVMState) -> str:
    """The JSON sidecar of the CSV exports: ``{"export", "files", "settings"}`` (:func:`settings`)."""
    return settings_json("hard-margin SVM bootstrap ([MO03b])", settings(state),
                         [export_filename(state, what, "csv") for what in _FRAMES])


def settings_line(state: SVMState) -> str:
    """The controls behind a figure, in one line (the title of its HTML page)."""
    target = f" target={state.target}" if state.dataset == UPLOAD else ""
    grid = ",".join(f"{v:g}" for v in sorted(state.curve_grid))
    return (f"dataset={state.dataset}{target} lengthscale={state.lengthscale:g} S/N grid={grid} "
            f"curve_mc_samples={state.curve_mc_samples} field S/N={state.s_over_n:g} mc_samples={state.mc_samples} "
            f"holdout={state.holdout} test_index={state.index} seed={state.seed}")


def csv_text(state: SVMState, what: str) -> str:
    """CSV of the ``what`` ("curve" or "field") table: one header line (``EXPORT_COLUMNS[what]``), then the rows;
    the settings are in the sidecar :func:`settings_text`."""
    return csv_table(_FRAMES[what](state))


def html_text(state: SVMState, what: str) -> str:
    """The ``what`` ("curve" or "field") figure as a standalone HTML page (Bokeh, resources inlined)."""
    return html_page(FIGURES[what](state), f"Resampling Explorer: SVM {what} — {settings_line(state)}")
