"""HoloViews figures and tables of the explorer, built from the results an :class:`ExplorerState` holds.

Each figure mirrors one of seed 000: the learning curve (Fig. 1), the bootstrap mean and variance at
held-out inputs (Fig. 2), the bootstrap distribution of the predictor at one input (Fig. 3-4) and the
L1 distances at all inputs (Fig. 5). The numbers come from the compute core; these functions only
arrange them. ``figure``/``frame`` pick the figure/table of a tab, ``csv_text``/``html_text`` export them.
"""

from __future__ import annotations

import io

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
from bokeh.embed import file_html
from bokeh.resources import INLINE
from scipy import stats

from .. import replica
from ..compare import histogram_edges
from .state import BIN_WIDTH, ExplorerState

__all__ = [
    "learning_curve_plot", "distribution_plot", "inputs_plot", "l1_plot", "holdout_plot",
    "curve_frame", "distribution_frame", "l1_frame", "worst_inputs_frame", "holdout_frame",
    "figure", "frame", "csv_text", "html_text", "EXPORT_COLUMNS",
]

S_DIM = hv.Dimension("s_over_n", label="S/N")
ERR_DIM = hv.Dimension("error", label="bootstrap test error ε(S)")
TEST_DIM = hv.Dimension("test_points", label="expected test points N·e^(−S/N)")
H_DIM = hv.Dimension("h", label="predictor f_i(D)")
DENSITY_DIM = hv.Dimension("density", label="density")
L1_DIM = hv.Dimension("l1", label="L1 distance")
COUNT_DIM = hv.Dimension("count", label="number of inputs")

THEORY_COLOR, APPROX_COLOR, MC_COLOR, TEST_COLOR = "#1f77b4", "#2ca02c", "#d62728", "#7f7f7f"
_SIZE = dict(responsive=True, height=430)

#: Columns of the CSV export of each tab.
EXPORT_COLUMNS = {
    "curve": ["s_over_n", "theory", "theory_approx", "expected_test_points", "mc_mean", "mc_se", "mc_samples"],
    "distribution": ["input", "h_left", "h_right", "theory_probability", "mc_probability", "mc_samples"],
    "l1": ["input", "target", "theory_mean", "mc_mean", "l1", "l1_noise_floor"],
    "holdout": ["test_input", "target", "theory_mean", "mc_mean", "mc_mean_se", "theory_var", "mc_var",
                "mc_var_se"],
}


def _empty(message: str) -> hv.Text:
    return hv.Text(0.5, 0.5, message).opts(xaxis=None, yaxis=None, toolbar=None, **_SIZE)


# ---------------------------------------------------------------------------------------- Fig. 1


def learning_curve_plot(state: ExplorerState) -> hv.Overlay | hv.Text:
    """ε(S) of the theory, the approximate theory and Monte-Carlo (± 1 s.e.) vs S/N, seed 000 Fig. 1.

    The second y axis shows the expected number of test points N·e^(−S/N) (the paper's top axis).
    """
    theory, mc, sol = state.theory_curve, state.curve_mc, state.solution
    if theory is None and mc is None:
        return _empty("computing the theory learning curve…")
    layers = []
    if theory is not None:
        layers += [
            hv.Curve((theory.s_over_n, theory.theory), S_DIM, ERR_DIM, label="ADATAP theory")
            .opts(color=THEORY_COLOR, line_width=2),
            hv.Curve((theory.s_over_n, theory.theory_approx), S_DIM, ERR_DIM, label="approximate ADATAP")
            .opts(color=APPROX_COLOR, line_dash="dashdot", line_width=2),
        ]
        if sol is not None and theory.loss == state.loss:
            layers.append(hv.Scatter([(sol.s_over_n, state.current_theory_error)], S_DIM, ERR_DIM,
                                     label=f"theory at S/N = {sol.s_over_n:g}")
                          .opts(color=THEORY_COLOR, marker="diamond", size=12))
    if mc is not None and mc.points:
        s = np.array([p.s_over_n for p in mc.points])
        mean, se = np.array([p.mc_mean for p in mc.points]), np.array([p.mc_se for p in mc.points])
        layers += [
            hv.ErrorBars((s, mean, se), S_DIM, [ERR_DIM, "se"]).opts(color=MC_COLOR),
            hv.Scatter((s, mean), S_DIM, ERR_DIM, label=f"Monte-Carlo ({mc.points[0].mc_samples} samples, ± 1 s.e.)")
            .opts(color=MC_COLOR, size=8, marker="circle"),
        ]
    if theory is not None:
        layers.append(hv.Curve((theory.s_over_n, theory.expected_test_points), S_DIM, TEST_DIM,
                               label="test points N·e^(−S/N)").opts(color=TEST_COLOR, line_dash="dotted"))
    loss = "square loss" if state.loss == "square" else f"ε-insensitive loss (ε = {state.eps:g}, β = {state.beta:g})"
    title = f"Bootstrap learning curve, {problem_label(state)}, {loss}"
    return hv.Overlay(layers).opts(multi_y=True, legend_position="top_right", title=title, show_grid=True,
                                   **_SIZE)


def problem_label(state: ExplorerState) -> str:
    p = state.problem
    return f"{p.name} (N = {p.n})" if p is not None else state.dataset


def curve_frame(state: ExplorerState) -> pd.DataFrame:
    """Theory on its grid, Monte-Carlo where computed (NaN elsewhere)."""
    theory, mc = state.theory_curve, state.curve_mc
    rows: dict[float, dict] = {}
    if theory is not None:
        for v, t, a, e in zip(theory.s_over_n, theory.theory, theory.theory_approx, theory.expected_test_points):
            rows[round(float(v), 12)] = {"theory": t, "theory_approx": a, "expected_test_points": e}
    for p in (mc.points if mc is not None else ()):
        rows.setdefault(round(p.s_over_n, 12), {}).update(mc_mean=p.mc_mean, mc_se=p.mc_se, mc_samples=p.mc_samples)
    table = pd.DataFrame([{"s_over_n": v, **r} for v, r in sorted(rows.items())], columns=EXPORT_COLUMNS["curve"])
    return table


# ---------------------------------------------------------------------------------------- Fig. 3-4


def _distribution_data(state: ExplorerState):
    """(solution, i, MC samples at i or None) for the distribution views."""
    dist = state.distribution
    sol = dist.solution if dist is not None else state.solution
    if sol is None:
        return None, 0, None
    i = min(state.index, sol.n - 1)
    return sol, i, (dist.samples[:, i] if dist is not None else None)


def _edges(sol, i: int, samples) -> np.ndarray:
    w, mu, _ = replica.mixture_components(sol, i)
    return histogram_edges(samples if samples is not None else mu[:1], sol, i, BIN_WIDTH)


def _h_grid(edges: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """A fine grid over the bins, refined around each mixture component (they can be narrower than a bin)."""
    local = (mu[:, None] + sd[:, None] * np.linspace(-5, 5, 81)[None, :]).ravel()
    h = np.concatenate([np.linspace(edges[0], edges[-1], 800), local])
    return np.unique(h[(h >= edges[0]) & (h <= edges[-1])])


def distribution_plot(state: ExplorerState) -> hv.Overlay | hv.Text:
    """MC histogram (bin width 0.2) of f_i(D) vs the eq. (60) mixture: its density, its mass per bin and,
    on demand, its Poisson components (k copies of input i in the sample), seed 000 Fig. 3-4."""
    sol, i, samples = _distribution_data(state)
    if sol is None:
        return _empty("no theory for these settings")
    edges = _edges(sol, i, samples)
    theory_mass = replica.bin_probabilities(sol, i, edges)
    layers = []
    if samples is not None:
        counts, _ = np.histogram(samples, bins=edges)
        layers.append(hv.Histogram((edges, counts / (samples.size * BIN_WIDTH)), kdims=H_DIM, vdims=DENSITY_DIM,
                                   label=f"Monte-Carlo ({samples.size} samples)")
                      .opts(fill_color=MC_COLOR, fill_alpha=0.35, line_color=MC_COLOR, line_alpha=0.6))
    layers.append(hv.Histogram((edges, theory_mass / BIN_WIDTH), kdims=H_DIM, vdims=DENSITY_DIM, label="theory, per bin")
                  .opts(fill_alpha=0, line_color=THEORY_COLOR, line_width=2))
    w, mu, sd = replica.mixture_components(sol, i)
    if np.all(sd > 0):
        h = _h_grid(edges, mu, sd)
        layers.append(hv.Curve((h, replica.predictive_density(sol, i, h)), H_DIM, DENSITY_DIM,
                               label="theory density, eq. (60)").opts(color=THEORY_COLOR, line_width=1.5))
        if state.show_components:
            layers += _component_curves(h, w, mu, sd)
    y = state.problem.y[i] if state.problem is not None and i < state.problem.n else sol.y[i]
    layers.append(hv.VLine(float(y), label="target y_i").opts(color="black", line_dash="dashed", line_width=1))
    title = f"Bootstrap distribution of the prediction at input i = {i}, S/N = {sol.s_over_n:g}"
    return hv.Overlay(layers).opts(legend_position="top_right", title=title, show_grid=True, **_SIZE)


def _component_curves(h, w, mu, sd) -> list[hv.Curve]:
    """The mixture's components w_k N(h; μ_k, s_k²) as returned by ``replica.mixture_components``."""
    curves = []
    for k in np.flatnonzero(w > 1e-3):
        label = "k = 0 (i left out)" if k == 0 else f"k = {k} cop{'y' if k == 1 else 'ies'} of i"
        curves.append(hv.Curve((h, w[k] * stats.norm.pdf(h, mu[k], sd[k])), H_DIM, DENSITY_DIM, label=label)
                      .opts(line_dash="dotted", line_width=1.5))
    return curves


def distribution_frame(state: ExplorerState) -> pd.DataFrame:
    """Per bin of width 0.2: the theory's mass (eq. 60) and the MC fraction of samples at input i."""
    sol, i, samples = _distribution_data(state)
    if sol is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS["distribution"])
    edges = _edges(sol, i, samples)
    mc = np.histogram(samples, bins=edges)[0] / samples.size if samples is not None else np.full(edges.size - 1, np.nan)
    return pd.DataFrame({"input": i, "h_left": edges[:-1], "h_right": edges[1:],
                         "theory_probability": replica.bin_probabilities(sol, i, edges), "mc_probability": mc,
                         "mc_samples": samples.size if samples is not None else 0},
                        columns=EXPORT_COLUMNS["distribution"])


def inputs_plot(state: ExplorerState) -> hv.Overlay | hv.Text:
    """Every training input: target y_i vs the theory's bootstrap mean of f_i (eq. 34), coloured by L1.

    The first layer is the tappable ``hv.Points``; the second marks the selected input.
    """
    sol, problem = state.solution, state.problem
    if sol is None or problem is None or sol.n != problem.n:
        return _empty("no theory for these settings")
    dist = state.distribution
    table = {"y": problem.y, "m": sol.m, "input": np.arange(problem.n)}
    vdims = [hv.Dimension("m", label="theory bootstrap mean E[f_i]"), "input"]
    opts = dict(tools=["tap", "hover"], size=6, color=THEORY_COLOR, nonselection_alpha=0.5)
    if dist is not None and dist.l1.l1.size == problem.n:
        table["l1"] = dist.l1.l1
        vdims.append(L1_DIM)
        opts.update(color="l1", cmap="viridis", colorbar=True, clim=(0, max(0.3, float(dist.l1.max))))
    points = hv.Points(pd.DataFrame(table), [hv.Dimension("y", label="target y_i"), vdims[0]], vdims[1:])
    i = state.index
    chosen = hv.Points([(problem.y[i], sol.m[i])], ["y", "m"], label=f"input {i}").opts(
        color="red", size=14, marker="circle", fill_alpha=0, line_width=2)
    return (points.opts(**opts) * chosen).opts(title="Click an input to see its distribution", show_grid=True,
                                               responsive=True, height=430, legend_position="top_left")


# ---------------------------------------------------------------------------------------- Fig. 5


def l1_plot(state: ExplorerState) -> hv.Overlay | hv.Text:
    """Histogram of L1(MC histogram, theory) over all inputs, with the MC noise floor, seed 000 Fig. 5."""
    dist = state.distribution
    if dist is None:
        return _empty("waiting for the Monte-Carlo bootstrap…")
    top = max(dist.l1.max, dist.noise_floor.max, 0.3)
    bins = np.arange(0.0, top + 0.01, 0.01)
    measured = np.histogram(dist.l1.l1, bins=bins)[0]
    floor = np.histogram(dist.noise_floor.l1, bins=bins)[0]
    return (hv.Histogram((bins, measured), kdims=L1_DIM, vdims=COUNT_DIM, label="MC vs theory").opts(
                fill_color=THEORY_COLOR, fill_alpha=0.6)
            * hv.Histogram((bins, floor), kdims=L1_DIM, vdims=COUNT_DIM, label="noise floor (theory vs its own samples)").opts(
                fill_color=TEST_COLOR, fill_alpha=0.35)
            * hv.VLine(0.1).opts(color="black", line_dash="dashed", line_width=1)
            * hv.VLine(0.2).opts(color="black", line_dash="dotted", line_width=1)
            ).opts(title=f"L1 distances at all {dist.l1.l1.size} inputs, S/N = {dist.solution.s_over_n:g}, "
                         f"{dist.l1.n_samples} MC samples, bin width {dist.l1.bin_width:g}",
                   legend_position="top_right", show_grid=True, **_SIZE)


def l1_frame(state: ExplorerState) -> pd.DataFrame:
    """L1 and noise-floor L1 at every training input, with target, theory and MC mean."""
    dist, problem = state.distribution, state.problem
    if dist is None or problem is None or problem.n != dist.l1.l1.size:
        return pd.DataFrame(columns=EXPORT_COLUMNS["l1"])
    return pd.DataFrame({"input": np.arange(problem.n), "target": problem.y, "theory_mean": dist.solution.m,
                         "mc_mean": dist.samples.mean(axis=0), "l1": dist.l1.l1,
                         "l1_noise_floor": dist.noise_floor.l1}, columns=EXPORT_COLUMNS["l1"])


def worst_inputs_frame(state: ExplorerState, k: int = 20) -> pd.DataFrame:
    """The ``k`` inputs with the largest L1, worst first (the table of the L1 tab)."""
    table = l1_frame(state)
    if table.empty:
        return table
    return table.iloc[state.distribution.l1.worst(k)].reset_index(drop=True)


def l1_summary(state: ExplorerState) -> dict | None:
    """Fractions with L1 ≤ 0.1 and ≥ 0.2 and the maximum, for MC vs theory and for the noise floor."""
    dist = state.distribution
    if dist is None:
        return None
    return {"measured": dist.l1.as_dict(), "noise_floor": dist.noise_floor.as_dict()}


# ---------------------------------------------------------------------------------------- Fig. 2


def holdout_plot(state: ExplorerState) -> hv.Layout | hv.Text:
    """Bootstrap mean (left) and variance (right) of the prediction at the held-out inputs: theory
    (crosses, eq. 48) vs Monte-Carlo (circles, ± 1 s.e.), seed 000 Fig. 2."""
    theory, mc = state.holdout_theory, state.holdout_mc
    if theory is None:
        return _empty("no theory for these settings")
    j = np.arange(theory.mean.size)
    x = hv.Dimension("test_input", label="held-out input")
    panels = []
    for what, th, label in (("mean", theory.mean, "bootstrap mean E[f_x]"),
                            ("var", theory.var, "bootstrap variance Var[f_x]")):
        y = hv.Dimension(what, label=label)
        layers = [hv.Scatter((j, th), x, y, label="theory, eq. (48)").opts(marker="x", size=10, color=THEORY_COLOR,
                                                                           line_width=2)]
        if mc is not None:
            value, se = (mc.mc_mean, mc.mc_mean_se) if what == "mean" else (mc.mc_var, mc.mc_var_se)
            layers += [hv.ErrorBars((j, value, se), x, [y, "se"]).opts(color=MC_COLOR),
                       hv.Scatter((j, value), x, y, label=f"Monte-Carlo ({mc.mc_samples} samples, ± 1 s.e.)")
                       .opts(color=MC_COLOR, size=6, fill_alpha=0)]
        panels.append(hv.Overlay(layers).opts(title=f"{label}, S/N = {theory.s_over_n:g}, N = {theory.n_train}",
                                              legend_position="top_right", show_grid=True, responsive=True,
                                              height=400))
    return hv.Layout(panels).cols(2)


def holdout_frame(state: ExplorerState) -> pd.DataFrame:
    """Theory and MC bootstrap mean and variance at every held-out input."""
    theory, mc = state.holdout_theory, state.holdout_mc
    if theory is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS["holdout"])
    nan = np.full(theory.mean.size, np.nan)
    return pd.DataFrame({
        "test_input": np.arange(theory.mean.size), "target": theory.y_test, "theory_mean": theory.mean,
        "mc_mean": mc.mc_mean if mc is not None else nan, "mc_mean_se": mc.mc_mean_se if mc is not None else nan,
        "theory_var": theory.var, "mc_var": mc.mc_var if mc is not None else nan,
        "mc_var_se": mc.mc_var_se if mc is not None else nan}, columns=EXPORT_COLUMNS["holdout"])


# ---------------------------------------------------------------------------------------- export

_FIGURES = {"curve": learning_curve_plot, "distribution": distribution_plot, "l1": l1_plot,
            "holdout": holdout_plot}
_FRAMES = {"curve": curve_frame, "distribution": distribution_frame, "l1": l1_frame, "holdout": holdout_frame}


def figure(state: ExplorerState, tab: str):
    """The main HoloViews figure of ``tab`` (one of ``state.TABS``)."""
    return _FIGURES[tab](state)


def frame(state: ExplorerState, tab: str) -> pd.DataFrame:
    """The data of ``tab``'s figure as a table with the columns ``EXPORT_COLUMNS[tab]``."""
    return _FRAMES[tab](state)


def csv_text(state: ExplorerState, tab: str) -> str:
    """CSV of :func:`frame`, with a comment line naming the settings."""
    return f"# {settings_line(state)}\n" + frame(state, tab).to_csv(index=False)


def html_text(state: ExplorerState, tab: str) -> str:
    """The figure of ``tab`` as a standalone HTML page (Bokeh, resources inlined: works offline)."""
    plot = hv.render(figure(state, tab), backend="bokeh")
    return file_html(plot, INLINE, title=f"Resampling Explorer: {tab} — {settings_line(state)}")


def settings_line(state: ExplorerState) -> str:
    kernel = f"paper l²={state.l2:g}" if state.kernel == "paper" else state.kernel
    return (f"dataset={state.dataset} kernel={kernel} noise_var={state.noise_var:g} S/N={state.s_over_n:g} "
            f"loss={state.loss} seed={state.seed}")
