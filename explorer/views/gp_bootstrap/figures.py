"""HoloViews figures and tables of the explorer, built from the results an :class:`GPBootstrapState` holds.

Each figure mirrors one of seed 000: the learning curve (Fig. 1), the bootstrap mean and variance at
held-out inputs (Fig. 2), the bootstrap distribution of the predictor at one input (Fig. 3-4) and the
L1 distances at all inputs (Fig. 5). The numbers come from the compute core; these functions only
arrange them. ``figure``/``frame`` pick the figure/table of a tab, ``csv_text``/``html_text`` export them
(``csv_text`` a plain table: the settings behind it are in the JSON sidecar ``settings_text``).
"""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
from scipy import stats

from explorer.gp_bootstrap.l1 import histogram_edges
from explorer.views.common.drawing.patching import Layer, overlay
from explorer.views.common.files.exports import csv_table, download_name, html_page, settings_json
from explorer.views.common.state.declarations import invalidating, settings_of
from explorer.views.gp_bootstrap.mixture import distribution_at
from explorer.views.gp_bootstrap.settings import COMPUTED_STAGES, HOLDOUT_TAB
from explorer.views.gp_bootstrap.state import (
    APPROXIMATIONS,
    CSV_PREFIX,
    IJ_LOSSES,
    MAX_ROWS,
    METHODS,
    SUBSAMPLE_SEED,
    UPLOAD,
    GPBootstrapState,
)

__all__ = [
    "learning_curve_plot", "learning_curve_layers", "CURVE_PADDING", "CURVE_METHODS", "curve_values", "gap_frame", "gap_table", "large_gaps", "gap_sentence", "GAP_THRESHOLD", "vg_mf_note", "distribution_plot", "inputs_points",
    "selected_input", "inputs_plot", "l1_plot",
    "holdout_overlay", "holdout_plot", "problem_label", "l1_summary",
    "curve_frame", "distribution_frame", "l1_frame", "worst_inputs_frame", "holdout_frame",
    "figure", "frame", "csv_text", "csv_filename", "html_filename", "settings_filename", "TAB_NAMES", "html_text", "settings", "settings_text", "settings_line",
    "EXPORT_COLUMNS", "GAP_COLUMNS", "L1_REFERENCES",
]

#: Columns of the tables and exports named like controls (what they hold is not the control): S/N of a row, the
#: Monte-Carlo samples behind it, the target y of an input.
S_COLUMN = "s_over_n"
MC_SAMPLES_COLUMN = "mc_samples"
TARGET_COLUMN = "target"
S_DIM = hv.Dimension(S_COLUMN, label="S/N")
ERR_DIM = hv.Dimension("error", label="bootstrap test error ε(S)")
TEST_DIM = hv.Dimension("test_points", label="expected test points N·e^(−S/N)")
H_DIM = hv.Dimension("h", label="predictor f_i(D)")
DENSITY_DIM = hv.Dimension("density", label="density")
L1_DIM = hv.Dimension("l1", label="L1 distance")
COUNT_DIM = hv.Dimension("count", label="number of inputs")

THEORY_COLOR, APPROX_COLOR, MC_COLOR, TEST_COLOR = "#1f77b4", "#2ca02c", "#d62728", "#7f7f7f"
VG_COLOR, MF_COLOR = "#9467bd", "#8c564b"
IJ_COLOR, LOO_COLOR = "#e377c2", "#17becf"
COMPONENT_COLOR, FLAG_COLOR = "#ff7f0e", "#000000"
_SIZE = dict(responsive=True, height=430)
#: Legends beside the data (outside the plot area); a click on an entry hides its layer.
_LEGEND = dict(legend_position="right", legend_opts={"click_policy": "hide"})
#: | theory − Monte-Carlo | beyond this many Monte-Carlo standard errors is flagged in the learning curves.
GAP_THRESHOLD = 3.0

#: Every curve of the learning-curve figure but Monte-Carlo, by name, with its short label: the theories
#: (``METHODS``) and the no-refit approximations beside them (``APPROXIMATIONS``: IJ, the LOO limit).
CURVE_METHODS = {**METHODS, **APPROXIMATIONS}
#: Columns of :func:`gap_frame`: per curve (``CURVE_METHODS``) the relative gap (method − MC)/MC in % and the
#: gap in Monte-Carlo standard errors (method − MC)/se.
GAP_COLUMNS = [f"gap_{unit}_{method}" for method in CURVE_METHODS for unit in ("pct", "se")]
#: Columns of the CSV export of each tab.
EXPORT_COLUMNS = {
    "curve": [S_COLUMN, *CURVE_METHODS, "expected_test_points", "mc_mean", "mc_se", MC_SAMPLES_COLUMN, *GAP_COLUMNS],
    "distribution": ["input", "h_left", "h_right", "theory_probability", "mc_probability", MC_SAMPLES_COLUMN],
    "l1": ["input", TARGET_COLUMN, "theory_mean", "mc_mean", "l1", "l1_noise_floor"],
    HOLDOUT_TAB: ["test_input", TARGET_COLUMN, "theory_mean", "ij_mean", "mc_mean", "mc_mean_se", "theory_var", "ij_var",
                "mc_var", "mc_var_se"],
}


_EMPTY = np.array([])
#: What each tab's downloads hold, the first part of their file names (:func:`csv_filename`).
TAB_NAMES = {"curve": "learning curve", "distribution": "predictive distribution", "l1": "L1 map",
             HOLDOUT_TAB: "test inputs"}


def _framewise(*elements):
    """Axes follow each new frame when the figure is shown through a DynamicMap (needed per element)."""
    return [e.opts(framewise=True) for e in elements]


# ---------------------------------------------------------------------------------------- Fig. 1
#
# Every figure function returns the same layers whatever is available (empty data for what is not yet
# computed), so that a DynamicMap can update the plot in place instead of rebuilding it.


#: Style of the theory curves (``METHODS``) in the learning-curve figure.
_CURVE_STYLE = {"theory": {"color": THEORY_COLOR}, "theory_approx": {"color": APPROX_COLOR, "line_dash": "dashdot"},
                "theory_vg": {"color": VG_COLOR, "line_dash": "dashed"},
                "theory_mf": {"color": MF_COLOR, "line_dash": "dotdash"},
                "ij": {"color": IJ_COLOR, "line_dash": "dashed"},
                "loo_limit": {"color": LOO_COLOR, "line_dash": "dotted"}}
_CURVE_LABEL = {"theory": "ADATAP theory", "theory_approx": "approximate ADATAP",
                "theory_vg": "variational Gaussian (VG)", "theory_mf": "mean field (MF)",
                "ij": "linear response (IJ)", "loo_limit": "leave-one-out at σ²N/S"}


def _methods(state: GPBootstrapState) -> tuple[str, ...]:
    """The theory curves of the current loss: all of ``METHODS`` for the square loss, no VG/MF otherwise."""
    theory = state.theory_curve
    if theory is not None:
        return tuple(theory.method_values())
    return tuple(m for m in METHODS if state.loss == "square" or m not in ("theory_vg", "theory_mf"))


def _approximations(state: GPBootstrapState) -> tuple[str, ...]:
    """The no-refit approximations of the current loss: IJ (square loss only) and the LOO limit."""
    lr = state.linear_response
    if lr is not None:
        return tuple(m for m in APPROXIMATIONS if getattr(lr, m) is not None)
    return tuple(m for m in APPROXIMATIONS if state.loss in IJ_LOSSES or m != "ij")


def _curve_names(state: GPBootstrapState) -> tuple[str, ...]:
    """Every curve of the current loss but Monte-Carlo, in the order of ``CURVE_METHODS``."""
    return (*_methods(state), *_approximations(state))


def curve_values(state: GPBootstrapState) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(S/N grid, ε(S)) of every curve computed so far, by name (``CURVE_METHODS``): the theories of
    ``theory_curve`` and the approximations of ``linear_response`` (IJ: square loss only), as the core returned
    them (both on THEORY_GRID)."""
    theory, lr = state.theory_curve, state.linear_response
    out = {m: (theory.s_over_n, v) for m, v in theory.method_values().items()} if theory is not None else {}
    if lr is not None:
        out.update({m: (lr.s_over_n, getattr(lr, m)) for m in APPROXIMATIONS if getattr(lr, m) is not None})
    return out


def learning_curve_layers(state: GPBootstrapState) -> list[Layer]:
    """The layers of :func:`learning_curve_plot`, in order: its data and styles (see :mod:`~explorer.views.common.drawing.patching`)."""
    theory, mc, sol = state.theory_curve, state.curve_mc, state.solution
    s, tp = (theory.s_over_n, theory.expected_test_points) if theory is not None else (_EMPTY,) * 2
    values = curve_values(state)
    points = mc.points if mc is not None else ()
    ms = np.array([p.s_over_n for p in points], dtype=float)
    mean = np.array([p.mc_mean for p in points], dtype=float)
    se = np.array([p.mc_se for p in points], dtype=float)
    here = (np.array([sol.s_over_n]), np.array([state.current_theory_error])) if sol is not None else (_EMPTY,) * 2
    flagged = large_gaps(state)
    mc_label = "Monte-Carlo (± 1 s.e.)"
    muted = dict(muted_alpha=0)
    curves = [Layer(hv.Curve, (S_DIM,), (ERR_DIM,), values.get(m, (_EMPTY, _EMPTY)), _CURVE_LABEL[m],
                    dict(line_width=2, **muted, **_CURVE_STYLE[m])) for m in _curve_names(state)]
    return [
        *curves,
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,), here, "ADATAP at the current S/N",
              dict(color=THEORY_COLOR, marker="diamond", size=12, **muted)),
        Layer(hv.Segments, (S_DIM, ERR_DIM, "s_over_n_end", "error_end"), (), (ms, mean - se, ms, mean + se),
              mc_label, dict(color=MC_COLOR, line_width=1.5, **muted)),
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,), (ms, mean), mc_label, dict(color=MC_COLOR, size=8, **muted)),
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,),
              (flagged[S_COLUMN].to_numpy(float), flagged["mc_mean"].to_numpy(float)),
              f"ADATAP − MC > {GAP_THRESHOLD:g} s.e.",
              dict(color=FLAG_COLOR, marker="circle", size=18, fill_alpha=0, line_width=2, **muted)),
        Layer(hv.Curve, (S_DIM,), (TEST_DIM,), (s, tp), "test points N·e^(−S/N)",
              dict(color=TEST_COLOR, line_dash="dotted", **muted)),
    ]


#: The ``padding`` option of the learning-curve figure (also what :func:`patch_overlay` pads its ranges by).
CURVE_PADDING = 0.04


def learning_curve_plot(state: GPBootstrapState) -> hv.Overlay:
    """ε(S) of ADATAP, approximate ADATAP, VG, MF, the linear response (IJ), the leave-one-out limit at noise
    σ²N/S and Monte-Carlo (± 1 s.e.) vs S/N, seed 000 Fig. 1 (left) with docs/linear_response.md.

    The second y axis shows the expected number of test points N·e^(−S/N) (the paper's top axis); the
    diamond marks the ADATAP theory at the current S/N. A click on a legend entry hides its layer (Bokeh
    ``click_policy="mute"`` with zero muted alpha: unlike ``"hide"``, a redraw does not show it again). VG
    and MF, and IJ, are left out for losses other than square (they define ε(S) by eq. 45 only); HoloViews then
    hides their layers and drops their legend entries. The layers are :func:`learning_curve_layers`.
    """
    return overlay(learning_curve_layers(state)).opts(
        multi_y=True, legend_position="right", legend_opts={"click_policy": "mute"}, show_grid=True,
        padding=CURVE_PADDING,
        title="Bootstrap learning curve: lower ε(S) is better;\ntheory should meet Monte-Carlo", **_SIZE)


def gap_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Method − Monte-Carlo at the S/N of the Monte-Carlo points computed so far, for every curve
    (``CURVE_METHODS``: the theories, IJ and the LOO limit).

    Columns ``s_over_n``, ``mc_mean``, ``mc_se`` and ``GAP_COLUMNS``: ``gap_pct_<method>`` =
    100 (ε_method − ε_MC)/ε_MC and ``gap_se_<method>`` = (ε_method − ε_MC)/se_MC, NaN for a method not
    defined for the loss (VG, MF, IJ off the square loss), not computed yet or an S/N off its grid.
    """
    mc, curves = state.curve_mc, curve_values(state)
    columns = [S_COLUMN, "mc_mean", "mc_se", *GAP_COLUMNS]
    points = mc.points if mc is not None else ()
    rows = []
    for p in points:
        row = {S_COLUMN: p.s_over_n, "mc_mean": p.mc_mean, "mc_se": p.mc_se}
        for method, (grid, values) in curves.items():
            j = np.flatnonzero(np.isclose(grid, p.s_over_n, rtol=0, atol=1e-9))
            if not j.size:
                continue
            gap = float(values[j[0]]) - p.mc_mean
            row[f"gap_pct_{method}"] = 100 * gap / p.mc_mean
            row[f"gap_se_{method}"] = gap / p.mc_se if p.mc_se > 0 else np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=columns, dtype=float)


def large_gaps(state: GPBootstrapState, threshold: float = GAP_THRESHOLD) -> pd.DataFrame:
    """The rows of :func:`gap_frame` where the ADATAP theory is more than ``threshold`` Monte-Carlo standard
    errors from Monte-Carlo, | ε_theory − ε_MC | > threshold · se_MC (flagged in the figure and the status)."""
    gaps = gap_frame(state)
    return gaps[np.abs(gaps["gap_se_theory"]) > threshold].reset_index(drop=True)


def gap_sentence(state: GPBootstrapState, threshold: float = GAP_THRESHOLD) -> str:
    """A sentence naming the S/N where ADATAP and Monte-Carlo differ by more than ``threshold`` standard errors
    ("" when there is none)."""
    flagged = large_gaps(state, threshold)
    if flagged.empty:
        return ""
    where = ", ".join(f"{v:g} ({g:+.1f} s.e.)" for v, g in zip(flagged[S_COLUMN], flagged["gap_se_theory"]))
    text = (f"⚠ ADATAP theory and Monte-Carlo differ by more than {threshold:g} standard errors at S/N = {where} "
            "(circled in the figure).")
    if min(flagged[S_COLUMN]) < 1:
        text += (" At small S/N a bootstrap sample holds few distinct points (N(1 − e^(−S/N)) of them) and the "
                 "theory's Gaussian approximation is at its roughest; the paper's Fig. 1 shows theory and simulation "
                 "agreeing by eye over the whole curve, at a scale where a few standard errors do not show (seed 000, "
                 "§5).")
    return text


def gap_table(state: GPBootstrapState) -> str:
    """:func:`gap_frame` as a Markdown table: one row per S/N, per method "relative gap % (gap in s.e.)"."""
    table, methods = gap_frame(state), _curve_names(state)
    if table.empty:
        return "**Method − Monte-Carlo**: waiting for the Monte-Carlo points…"
    head = "| S/N | " + " | ".join(CURVE_METHODS[m] for m in methods) + " |"
    lines = ["**Method − Monte-Carlo**: relative gap (method − MC)/MC and, in brackets, the gap in MC standard "
             "errors (IJ: linear response; LOO limit: leave-one-out at noise σ²N/S, the S → ∞ limit)",
             "", head, "|---:" * (len(methods) + 1) + "|"]
    for _, row in table.iterrows():
        cells = [f"{_signed(row[f'gap_pct_{m}'])} % ({_signed(row[f'gap_se_{m}'])} s.e.)" for m in methods]
        lines.append(f"| {row['s_over_n']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _signed(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{x:+.1f}"


def vg_mf_note(state: GPBootstrapState) -> str:
    """Why VG, MF and the linear response (IJ) are missing for a loss other than square ("" for the square loss)."""
    if state.loss == "square":
        return ""
    return ("VG, MF and the linear response (IJ) are not shown: they define the bootstrap error by eq. (45), i.e. "
            f"for the square loss only (test loss here: {state.loss}). The leave-one-out limit is shown with this "
            "loss, at the deterministic left-out prediction.")


def problem_label(state: GPBootstrapState) -> str:
    """The data and N, and on the low-rank path the rank of K ≈ ΦΦᵀ."""
    p = state.problem
    if p is None:
        return state.dataset
    return f"{p.name} (N = {p.n:,}, low-rank kernel m = {p.features.rank})" if state.low_rank else f"{p.name} (N = {p.n})"


def mapped_position(state: GPBootstrapState, i: int) -> int | None:
    """Where training input ``i`` is among the inputs the distribution covers (its column of the Monte-Carlo samples,
    its entry of the L1 values): ``i`` when it covers every input, None when ``i`` is not among those drawn."""
    dist = state.distribution
    if dist is None or dist.inputs.size == dist.n:
        return i
    pos = int(np.searchsorted(dist.inputs, i))
    return pos if pos < dist.inputs.size and dist.inputs[pos] == i else None


def shown_inputs(state: GPBootstrapState) -> np.ndarray | None:
    """The training inputs the scatter of the distribution page shows: all (None), or the random sample the
    distribution covers on data of more than ``experiments.MAP_ALL_ROWS`` rows."""
    return state.mapped_inputs


def curve_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Theory curves, IJ and the LOO limit on their grid (VG, MF, IJ NaN off the square loss), Monte-Carlo and the
    gaps of :func:`gap_frame` where computed (NaN elsewhere)."""
    theory, mc = state.theory_curve, state.curve_mc
    rows: dict[float, dict] = {}
    if theory is not None:
        for j, v in enumerate(theory.s_over_n):
            rows[round(float(v), 12)] = {"expected_test_points": theory.expected_test_points[j]}
    for method, (grid, values) in curve_values(state).items():
        for v, value in zip(grid, values):
            rows.setdefault(round(float(v), 12), {})[method] = value
    for p in (mc.points if mc is not None else ()):
        rows.setdefault(round(p.s_over_n, 12), {}).update(mc_mean=p.mc_mean, mc_se=p.mc_se, mc_samples=p.mc_samples)
    for _, gap in gap_frame(state).iterrows():
        rows[round(gap[S_COLUMN], 12)].update({c: gap[c] for c in GAP_COLUMNS})
    return pd.DataFrame([{S_COLUMN: v, **r} for v, r in sorted(rows.items())], columns=EXPORT_COLUMNS["curve"])


# ---------------------------------------------------------------------------------------- Fig. 3-4

def _distribution_data(state: GPBootstrapState):
    """(solution, i, MC samples at i or None) for the distribution views; on large data the Monte-Carlo covers a
    random sample of the inputs (``mapped_position``): at another input the theory is shown alone."""
    dist = state.distribution
    every = dist is not None and dist.inputs.size == dist.n
    sol = dist.solution if every else state.solution
    if sol is None:
        return None, 0, None
    i = min(state.index, sol.n - 1)
    pos = mapped_position(state, i)
    return sol, i, (dist.samples[:, pos] if dist is not None and pos is not None else None)


def _bins(sol, i: int, samples, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bin edges of width ``width`` (``l1.histogram_edges``), theory mass (the eq. (60) distribution's cdf at the
    edges) and MC fraction per bin."""
    mixture = distribution_at(sol, i)
    edges = histogram_edges(samples if samples is not None else mixture.means[0, :1], sol, i, width)
    theory = np.diff(mixture.cdf(edges))  # one input: the edges broadcast against it
    mc = np.histogram(samples, bins=edges)[0] / samples.size if samples is not None else np.full(theory.size, np.nan)
    return edges, theory, mc


def _visible(edges, theory, mc, target: float, tail: float = 1e-5):
    """The bins from the first to the last one holding theory mass ≥ ``tail``, an MC sample or the target."""
    holds_target = (edges[:-1] <= target) & (target < edges[1:])
    keep = np.flatnonzero((theory >= tail) | (np.nan_to_num(mc) > 0) | holds_target)
    lo, hi = (keep[0], keep[-1] + 1) if keep.size else (0, theory.size)
    return edges[lo:hi + 1], theory[lo:hi], mc[lo:hi]


def _h_grid(edges: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """A fine grid over the bins, refined around each mixture component (they can be narrower than a bin)."""
    local = (mu[:, None] + sd[:, None] * np.linspace(-5, 5, 81)[None, :]).ravel()
    h = np.concatenate([np.linspace(edges[0], edges[-1], 600), local])
    return np.unique(h[(h >= edges[0]) & (h <= edges[-1])])


def distribution_plot(state: GPBootstrapState) -> hv.Overlay:
    """MC histogram of f_i(D) vs the eq. (60) mixture: its density, its mass per bin and, on demand, its Poisson
    components (k copies of input i in the sample), seed 000 Fig. 3-4. Bin width ``state.bin_width``: 0.2 for
    boston, 0.2 · sd(y)/sd(boston's target) for other targets."""
    sol, i, samples = _distribution_data(state)
    width = state.bin_width
    edges = h = density = _EMPTY
    theory = mc = np.zeros(0)
    components = (np.array([np.nan]), np.array([np.nan]))  # drawn as nothing, but keeps the legend entry
    target = np.nan
    peaks = ([], [], [])
    if sol is not None:
        target = float(sol.y[i])
        edges, theory, mc = _visible(*_bins(sol, i, samples, width), target)
        mixture = distribution_at(sol, i)
        w, mu, sd = mixture.weights, mixture.means[0], mixture.sds[0]
        if np.all(sd > 0):  # sd = 0 only for K ∝ I: point masses, shown by the binned theory alone
            h = _h_grid(edges, mu, sd)
            density = mixture.pdf(h)
            if state.show_components:
                components = _components(w, mu, sd)
                peaks = _component_labels(w, mu, sd)
    mc_step = np.append(np.nan_to_num(mc), np.nan_to_num(mc[-1:])) / width if edges.size else _EMPTY
    layers = _framewise(
        hv.Histogram((edges, theory / width), kdims=H_DIM, vdims=DENSITY_DIM, label="theory, mass per bin").opts(
            fill_color=THEORY_COLOR, fill_alpha=0.25, line_color=THEORY_COLOR, line_alpha=0.5),
        hv.Curve((h, density), H_DIM, DENSITY_DIM, label="theory density, eq. (60)").opts(color=THEORY_COLOR),
        hv.Curve(components, H_DIM, DENSITY_DIM, label="Poisson components w_k N(μ_k, s_k²)").opts(
            color=COMPONENT_COLOR, line_dash="dotted", line_width=2),
        hv.Labels(peaks, [H_DIM, DENSITY_DIM], "k").opts(text_color=COMPONENT_COLOR, text_font_size="10pt",
                                                          yoffset=0.02),
        hv.Curve((edges, mc_step), H_DIM, DENSITY_DIM, label="Monte-Carlo histogram (outline)").opts(
            color=MC_COLOR, line_width=2, interpolation="steps-post"),
        hv.VLine(target).opts(color="black", line_dash="dashed", line_width=1),
        hv.Scatter([(target, 0.0)] if np.isfinite(target) else [], H_DIM, DENSITY_DIM, label="target y_i").opts(
            color="black", marker="triangle", size=10),
    )
    return hv.Overlay(layers).opts(title="Bootstrap distribution of the prediction f_i(D):\n"
                                         "the outline should follow the bars", show_grid=True, **_LEGEND, **_SIZE)


def _component_labels(w, mu, sd) -> tuple[list, list, list]:
    """"k = …" at the peak (μ_k, w_k N(μ_k; μ_k, s_k²)) of each component that :func:`_components` draws."""
    ks = np.flatnonzero(w > 1e-3)
    return list(mu[ks]), list(w[ks] * stats.norm.pdf(0.0, 0.0, sd[ks])), [f"k = {k}" for k in ks]


def _components(w, mu, sd) -> tuple[np.ndarray, np.ndarray]:
    """The mixture's components w_k N(h; μ_k, s_k²) (k copies of input i in the sample, weight p_k) as
    the eq. (60) distribution holds them (``BootstrapDistribution``), those with weight above 1e-3, each on μ_k ± 5 s_k: one line
    (h, density) with NaN between the components (so that they share one legend entry)."""
    h, density = [], []
    for k in np.flatnonzero(w > 1e-3):
        hk = mu[k] + sd[k] * np.linspace(-5, 5, 101)
        h += [hk, [np.nan]]
        density += [w[k] * stats.norm.pdf(hk, mu[k], sd[k]), [np.nan]]
    return np.concatenate(h), np.concatenate(density)


def distribution_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Per bin of width ``state.bin_width``: the theory's mass (eq. 60) and the MC fraction of samples at input i."""
    sol, i, samples = _distribution_data(state)
    if sol is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS["distribution"])
    edges, theory, mc = _bins(sol, i, samples, state.bin_width)
    return pd.DataFrame({"input": i, "h_left": edges[:-1], "h_right": edges[1:], "theory_probability": theory,
                         "mc_probability": mc, MC_SAMPLES_COLUMN: samples.size if samples is not None else 0},
                        columns=EXPORT_COLUMNS["distribution"])


def inputs_points(state: GPBootstrapState) -> hv.Points:
    """Every training input: target y_i vs the theory's bootstrap mean of f_i (eq. 34), coloured by L1.

    Tap a point to select it (the Points are the source of a ``Selection1D`` stream; index = input).
    """
    sol, problem, dist = state.solution, state.problem, state.distribution
    ok = sol is not None and problem is not None and sol.n == problem.n
    rows = shown_inputs(state) if ok else None
    title = "Inputs: click one to see its distribution (colour: L1, lower is better)"
    if rows is None:
        rows = np.arange(problem.n if ok else 0)
    else:
        title = (f"{rows.size:,} of the {problem.n:,} inputs, drawn at random (seed {int(state.seed)}): click one to "
                 "see its distribution (colour: L1)")
    y, m = (problem.y[rows], sol.m[rows]) if ok else (_EMPTY, _EMPTY)
    l1 = np.full(y.size, np.nan)
    if ok and dist is not None and dist.inputs.size == rows.size and np.array_equal(dist.inputs, rows):
        l1 = dist.l1.l1
    table = pd.DataFrame({"y": y, "m": m, "input": rows, "l1": l1})
    points = hv.Points(table, [hv.Dimension("y", label="target y_i"),
                               hv.Dimension("m", label="theory bootstrap mean E[f_i]")], ["input", L1_DIM])
    return points.opts(tools=["tap", "hover"], size=6, color="l1", cmap="viridis", clim=(0.0, 0.3), colorbar=True,
                       nonselection_alpha=0.6, framewise=True, title=title,
                       show_grid=True, responsive=True, height=430)


def tapped_input(state: GPBootstrapState, point: int) -> int:
    """The training input of the ``point``-th point of :func:`inputs_points`."""
    rows = shown_inputs(state)
    return int(point) if rows is None else int(rows[min(int(point), rows.size - 1)])


def selected_input(state: GPBootstrapState) -> hv.Points:
    """A ring around the selected input in :func:`inputs_points`."""
    sol, problem = state.solution, state.problem
    ok = sol is not None and problem is not None and sol.n == problem.n
    xy = [(problem.y[state.index], sol.m[state.index])] if ok else []
    return hv.Points(xy, ["y", "m"], label="selected input").opts(
        color="red", size=16, fill_alpha=0, line_width=2, framewise=True)


def inputs_plot(state: GPBootstrapState) -> hv.Overlay:
    """:func:`inputs_points` with the selected input marked."""
    return inputs_points(state) * selected_input(state)


# ---------------------------------------------------------------------------------------- Fig. 5


#: The reference L1 values of the L1 map (the summary counts the inputs with L1 ≤ 0.1 and ≥ 0.2), with their dash.
L1_REFERENCES = {0.1: "dashed", 0.2: "dotted"}


def l1_plot(state: GPBootstrapState) -> hv.Overlay:
    """Histogram of L1(MC histogram, theory) over all inputs, with the MC noise floor, seed 000 Fig. 5.

    The reference values ``L1_REFERENCES`` are vertical lines from 0 to the highest bar, drawn as curves (not
    ``hv.VLine``, which Bokeh leaves out of the legend) so that the legend names them."""
    dist = state.distribution
    # before a result one bar of height 0: drawn as nothing, but the legend keeps each histogram's glyph (BokehJS
    # draws none for an empty source)
    measured = floor = np.zeros(1)
    bins = np.array([0.0, 0.01])
    if dist is not None:
        bins = np.arange(0.0, max(dist.l1.max, dist.noise_floor.max, 0.3) + 0.01, 0.01)
        measured = np.histogram(dist.l1.l1, bins=bins)[0]
        floor = np.histogram(dist.noise_floor.l1, bins=bins)[0]
    top = float(max(measured.max(initial=0), floor.max(initial=0), 1))
    references = [hv.Curve(([x, x], [0.0, top]), L1_DIM, COUNT_DIM, label=f"L1 = {x:g}").opts(
        color="black", line_dash=dash, line_width=1) for x, dash in L1_REFERENCES.items()]
    layers = _framewise(
        hv.Histogram((bins, measured), kdims=L1_DIM, vdims=COUNT_DIM, label="MC histogram vs theory").opts(
            fill_color=THEORY_COLOR, fill_alpha=0.6),
        hv.Histogram((bins, floor), kdims=L1_DIM, vdims=COUNT_DIM,
                     label="noise floor (theory vs its own samples)").opts(fill_color=TEST_COLOR, fill_alpha=0.35),
        *references,
    )
    where = "every input" if dist is None or dist.inputs.size == dist.n else \
        f"{dist.inputs.size:,} inputs drawn at random"
    return hv.Overlay(layers).opts(title=f"L1(MC histogram, theory) at {where}: smaller is better,\n"
                                         "the noise floor is as good as it gets", show_grid=True, **_LEGEND, **_SIZE)


def l1_frame(state: GPBootstrapState) -> pd.DataFrame:
    """L1 and noise-floor L1 at every training input the distribution covers (all, or a random sample on large
    data), with target, theory and MC mean."""
    dist, problem = state.distribution, state.problem
    if dist is None or problem is None or problem.n != dist.n:
        return pd.DataFrame(columns=EXPORT_COLUMNS["l1"])
    return pd.DataFrame({"input": dist.inputs, TARGET_COLUMN: problem.y[dist.inputs], "theory_mean": dist.solution.m,
                         "mc_mean": dist.samples.mean(axis=0), "l1": dist.l1.l1,
                         "l1_noise_floor": dist.noise_floor.l1}, columns=EXPORT_COLUMNS["l1"])


def worst_inputs_frame(state: GPBootstrapState, k: int = 20) -> pd.DataFrame:
    """The ``k`` inputs with the largest L1, worst first (the table of the L1 tab)."""
    table = l1_frame(state)
    if table.empty:
        return table
    return table.iloc[state.distribution.l1.worst(k)].reset_index(drop=True)


def l1_summary(state: GPBootstrapState) -> dict | None:
    """Fractions with L1 ≤ 0.1 and ≥ 0.2 and the maximum, for MC vs theory and for the noise floor."""
    dist = state.distribution
    if dist is None:
        return None
    return {"measured": dist.l1.as_dict(), "noise_floor": dist.noise_floor.as_dict()}


# ---------------------------------------------------------------------------------------- Fig. 2


def holdout_overlay(state: GPBootstrapState, what: str) -> hv.Overlay:
    """Bootstrap ``what`` ("mean" or "var") of the prediction at the held-out inputs: theory (crosses,
    eq. 48), the first-order linear response (IJ, triangles; docs/linear_response.md eqs. 5-6) and Monte-Carlo
    (circles, ± 1 s.e.), one panel of seed 000 Fig. 2."""
    theory, mc, ij = state.holdout_theory, state.holdout_mc, state.holdout_ij
    label = {"mean": "bootstrap mean E[f_x]", "var": "bootstrap variance Var[f_x]"}[what]
    x, y = hv.Dimension("test_input", label="held-out input"), hv.Dimension(what, label=label)
    j = th = value = se = _EMPTY
    if theory is not None:
        j, th = np.arange(theory.mean.size), getattr(theory, what)
    if theory is not None and mc is not None and mc.mc_mean.size == j.size:
        value, se = (mc.mc_mean, mc.mc_mean_se) if what == "mean" else (mc.mc_var, mc.mc_var_se)
    mj = j if value.size else _EMPTY
    ij_value = getattr(ij, what) if theory is not None and ij is not None and ij.mean.size == j.size else _EMPTY
    layers = _framewise(
        hv.Scatter((j, th), x, y, label="theory, eq. (48)").opts(marker="x", size=10, color=THEORY_COLOR, line_width=2),
        # "IJ" alone: two legends of three entries side by side fit 1280 px; the status line spells it out
        hv.Scatter((j if ij_value.size else _EMPTY, ij_value), x, y, label="IJ").opts(
            marker="triangle", size=8, color=IJ_COLOR, fill_alpha=0, line_width=1.5),
        hv.ErrorBars((mj, value, se), x, [y, "se"]).opts(color=MC_COLOR),
        hv.Scatter((mj, value), x, y, label="Monte-Carlo (± 1 s.e.)").opts(color=MC_COLOR, size=7, fill_alpha=0),
    )
    return hv.Overlay(layers).opts(title=label, legend_position="bottom", legend_opts={"click_policy": "hide"},
                                   show_grid=True, responsive=True, height=440)


def holdout_plot(state: GPBootstrapState) -> hv.Layout:
    """Bootstrap mean (left) and variance (right) at the held-out inputs, seed 000 Fig. 2."""
    return (holdout_overlay(state, "mean") + holdout_overlay(state, "var")).cols(2)


def holdout_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Theory (eq. 48), linear response (IJ, first order) and MC bootstrap mean and variance at every held-out
    input."""
    theory, mc, ij = state.holdout_theory, state.holdout_mc, state.holdout_ij
    if theory is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS[HOLDOUT_TAB])
    nan = np.full(theory.mean.size, np.nan)
    ij_ok = ij is not None and ij.mean.size == theory.mean.size
    return pd.DataFrame({
        "test_input": np.arange(theory.mean.size), TARGET_COLUMN: theory.y_test, "theory_mean": theory.mean,
        "ij_mean": ij.mean if ij_ok else nan,
        "mc_mean": mc.mc_mean if mc is not None else nan, "mc_mean_se": mc.mc_mean_se if mc is not None else nan,
        "theory_var": theory.var, "ij_var": ij.var if ij_ok else nan,
        "mc_var": mc.mc_var if mc is not None else nan,
        "mc_var_se": mc.mc_var_se if mc is not None else nan}, columns=EXPORT_COLUMNS[HOLDOUT_TAB])


# ---------------------------------------------------------------------------------------- export

_FIGURES = {"curve": learning_curve_plot, "distribution": distribution_plot, "l1": l1_plot,
            HOLDOUT_TAB: holdout_plot}
_FRAMES = {"curve": curve_frame, "distribution": distribution_frame, "l1": l1_frame, HOLDOUT_TAB: holdout_frame}


def figure(state: GPBootstrapState, tab: str):
    """The main HoloViews figure of ``tab`` (one of ``state.GP_TABS``)."""
    return _FIGURES[tab](state)


def frame(state: GPBootstrapState, tab: str) -> pd.DataFrame:
    """The data of ``tab``'s figure as a table with the columns ``EXPORT_COLUMNS[tab]``."""
    return _FRAMES[tab](state)


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
    return settings_json(f"GP bootstrap (seed 000): {tab}", settings(state), [csv_filename(state, tab)])


def html_text(state: GPBootstrapState, tab: str) -> str:
    """The figure of ``tab`` as a standalone HTML page (Bokeh, resources inlined: works offline); the learning
    curve's page adds the theory − Monte-Carlo table (:func:`gap_frame`)."""
    shown = figure(state, tab)
    if tab == "curve":
        shown = (shown + _gap_element(state)).cols(1)
    return html_page(shown, f"Resampling Explorer: {tab} — {settings_line(state)}")


def _gap_element(state: GPBootstrapState) -> hv.Table:
    """The theory − Monte-Carlo table for the HTML export: the gap columns of the methods of the loss."""
    gaps = gap_frame(state)
    keep = [S_COLUMN, *(f"gap_{u}_{m}" for m in _curve_names(state) for u in ("pct", "se"))]
    title = "Method − Monte-Carlo: gap_pct = 100 (method − MC)/MC, gap_se = (method − MC)/se"
    note = vg_mf_note(state)
    return hv.Table(gaps[keep].round(3), kdims=[S_COLUMN]).opts(
        title=f"{title}. {note}" if note else title, width=1000, height=260)


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
