"""Figures of "Bootstrap, step by step" (HoloViews, built from a :class:`~.state.StepState`; no computation here
beyond binning what the core returned).

- :func:`data_plot`: the N points sized and labelled by their multiplicity s_i in the last resample (left-out
  points as crosses), the GP mean of the last resample and the ~20 before it, faint.
- :func:`histogram_plot`: f_i of the chosen point over the resamples so far, stacked by its multiplicity k, beside
  the eq. (60) mixture's components binned the same way, in the same colours (stacked outlines).
- :func:`running_plot`: Efron's estimate (eq. 17) ± 1 SE against the number of resamples, with ADATAP and the
  approximate ADATAP as horizontal lines.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np

from explorer.gp_bootstrap import steps
from explorer.views.step_by_step.state import StepState

__all__ = ["K_COLORS", "K_MAX", "data_plot", "histogram_plot", "running_plot"]

#: Multiplicities shown apart: k = 0, 1, 2, 3 and "4+" together.
K_MAX = 4
#: One colour per multiplicity k (k = 0 first: left out), the same in every figure.
K_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b")
CURVE_COLOR = "#1f77b4"
_SIZE = {"responsive": True, "min_height": 300, "height": 320}
X, Y = hv.Dimension("x", label="input x"), hv.Dimension("y", label="target y, GP mean f(x)")
H, COUNT = hv.Dimension("h", label="prediction f_i"), hv.Dimension("count", label="resamples")
B, EPS = hv.Dimension("B", label="resamples drawn B"), hv.Dimension("eps", label="Efron's ε (eq. 17)")


def _k_label(k: int) -> str:
    return f"k ≥ {K_MAX}" if k == K_MAX else f"k = {k}"


def data_plot(state: StepState) -> hv.Overlay:
    """The data with the last resample's multiplicities and the GP means of the last ~20 resamples."""
    p = state.problem
    if p is None:
        return hv.Overlay([hv.Points([], [X, Y])]).opts(**_SIZE)
    x, y = p.X[:, 0], p.y
    s = state.occupations[-1] if state.n_drawn else np.ones(p.n, dtype=np.int64)
    k = np.minimum(s, K_MAX)
    kept = s > 0
    size = 6 + 5 * np.sqrt(s)
    colors = np.array(K_COLORS)[k]
    old = [np.column_stack([state.grid, c]) for c in state.curves[:-1]]
    i = state.index
    layers = [
        hv.Path(old, [X, Y], label="earlier resamples").opts(color="gray", alpha=0.25, line_width=1),
        hv.Curve((state.grid, state.curves[-1] if state.n_drawn else np.full(state.grid.size, np.nan)), X, Y,
                 label="GP mean of the last resample").opts(color=CURVE_COLOR, line_width=3),
        hv.Points((x[kept], y[kept], size[kept], colors[kept], s[kept]), [X, Y], ["size", "color", "s"],
                  label="in the resample (size: s_i)").opts(size="size", color="color", line_color="white",
                                                             tools=["hover", "tap"]),
        hv.Points((x[~kept], y[~kept]), [X, Y], label="left out (s_i = 0)").opts(
            marker="x", size=12, color=K_COLORS[0], line_width=2),
        hv.Labels((x[kept & (s > 1)], y[kept & (s > 1)], s[kept & (s > 1)].astype(str)), [X, Y], "s").opts(
            text_font_size="9pt", text_color="white"),
        hv.Points([(x[i], y[i])], [X, Y], label=f"point i = {i}").opts(
            marker="circle", size=22, fill_alpha=0, line_color="black", line_width=2),
    ]
    return hv.Overlay(layers).opts(title="The data and the last resample: each point drawn s_i times",
                                   legend_position="bottom_left", show_grid=True, **_SIZE)


def histogram_plot(state: StepState) -> hv.Overlay:
    """f_i over the resamples drawn, stacked by the multiplicity k of point i, and the eq. (60) components."""
    sol, i = state.solution, state.index
    if sol is None:
        return hv.Overlay([hv.Rectangles([], [H, COUNT, "x1", "y1"])]).opts(**_SIZE)
    values = state.train[:, i]
    edges = steps.histogram_edges(sol, i, values, n_bins=40)
    counts = steps.multiplicity_histogram(values, state.occupations[:, i], edges, K_MAX)
    theory = steps.theory_histogram(sol, i, edges, K_MAX, n_resamples=max(state.n_drawn, 1))
    bottom = np.vstack([np.zeros(counts.shape[1]), np.cumsum(counts, axis=0)[:-1]])
    tops = np.cumsum(theory, axis=0)
    layers = []
    for k in range(K_MAX + 1):
        bars = [(edges[j], bottom[k, j], edges[j + 1], bottom[k, j] + counts[k, j])
                for j in np.flatnonzero(counts[k])]
        layers.append(hv.Rectangles(bars, [H, COUNT, "x1", "y1"], label=_k_label(k)).opts(
            color=K_COLORS[k], line_color="white", alpha=0.8))
    for k in range(K_MAX + 1):
        step = np.append(tops[k], tops[k, -1:])
        layers.append(hv.Curve((edges, step), H, COUNT).opts(color=K_COLORS[k], line_width=2,
                                                             interpolation="steps-post"))
    layers.append(hv.VLine(float(sol.y[i])).opts(color="black", line_dash="dashed", line_width=1))
    n = state.n_drawn
    what = "no resample yet: the outlines are the theory" if n == 0 else f"{n:,} resamples"
    return hv.Overlay(layers).opts(
        title=f"f_i at point i = {i}, stacked by its multiplicity k ({what});\n"
              "lines: the theory's Poisson mixture, eq. (60), its components stacked the same way",
        legend_position="top_right", show_grid=True, **_SIZE)


def running_plot(state: StepState) -> hv.Overlay:
    """Efron's estimate ± 1 SE against the number of resamples, and the theories as horizontal lines."""
    r = state.running
    finite = np.isfinite(r.value)
    se = np.where(np.isfinite(r.se), r.se, 0.0)
    layers = [
        hv.Spread((r.counts[finite], r.value[finite], se[finite]), B, [EPS, "se"], label="± 1 SE").opts(
            color=CURVE_COLOR, alpha=0.2),
        hv.Curve((r.counts[finite], r.value[finite]), B, EPS, label="Efron's estimate so far").opts(
            color=CURVE_COLOR, line_width=2),
    ]
    styles = {"ADATAP": ("black", "solid"), "approx. ADATAP": ("#ff7f0e", "dashed")}
    for name, value in state.theory.items():
        color, dash = styles[name]
        layers.append(hv.Curve([(1, value), (max(state.n_drawn, 10), value)], B, EPS, label=name).opts(
            color=color, line_dash=dash, line_width=2))
    return hv.Overlay(layers).opts(title="Efron's estimate of the test error (left-out points only, eq. 17)",
                                   logx=True, legend_position="top_right", show_grid=True, **_SIZE)
