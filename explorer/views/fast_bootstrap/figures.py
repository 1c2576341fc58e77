"""Figures of the fast-bootstrap view ([LSWV05]): optimism and generalization error against complexity, as in
Figs. 2-7 of the paper. They only arrange what :class:`~explorer.views.fast_bootstrap.state.FastBootstrapState`
holds; each call makes a new figure (the tab replaces its pane's object: the x-axis turns log or linear
with the model). Legends sit beside the data and hide a method's lines when clicked (a band or error bars share
their curve's entry); the generalization error's title says that lower is better. The y-axis labels are short
(the titles carry equation numbers and definitions) so that they fit the plots' height, also in presentation
mode."""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # registers the Bokeh options used below
import numpy as np

from explorer.views.fast_bootstrap.state import COMPLEXITY, FastBootstrapState

__all__ = ["FAST_COLOR", "FULL_COLOR", "GEN_DIM", "LEGEND", "LOO_COLOR", "OPT_DIM", "OPT_TITLE", "REPLICA_COLOR",
           "generalization_plot", "optimism_plot"]

#: Short y-axis labels: a vertical label longer than the plot's height is cut at both ends; the titles carry the
#: equation numbers, the definition of the optimism and the better direction.
OPT_DIM = hv.Dimension("optimism", label="optimism")
GEN_DIM = hv.Dimension("generalization_error", label="generalization error")
OPT_TITLE = "Optimism = generalization − apparent error, eq. (6)"
#: Legends beside the data, not over it; clicking an entry hides its lines.
LEGEND = {"legend_position": "right", "legend_opts": {"click_policy": "hide"}}
FULL_COLOR, FAST_COLOR, REPLICA_COLOR, LOO_COLOR = "#1f77b4", "#d62728", "#2ca02c", "#17becf"
_SIZE = {"responsive": True, "height": 360}
_EMPTY = np.array([])


def _x_dim(state: FastBootstrapState) -> hv.Dimension:
    return hv.Dimension("complexity", label=COMPLEXITY[state.model])


def _finish(layers: list, state: FastBootstrapState, title: str) -> hv.Overlay:
    logx = bool(state.comparison.setting.log_complexity) if state.comparison is not None else state.log_complexity
    return hv.Overlay([e.opts(framewise=True, logx=logx) for e in layers]).opts(
        logx=logx, title=title, show_grid=True, **LEGEND, **_SIZE)


def optimism_plot(state: FastBootstrapState) -> hv.Overlay:
    """Optimism vs complexity: the full bootstrap ± one standard error, the fast bootstrap's measurements on
    the reduced grid (± SE) and its fitted polynomial on the full grid, the LS-SVM's replica optimism."""
    res, x = state.comparison, _x_dim(state)
    if res is None:
        return _finish([hv.Curve((_EMPTY, _EMPTY), x, OPT_DIM)], state, "Optimism = generalization − apparent error: no result yet")
    layers, fast = [], res.fast
    if res.full is not None:
        full = res.full
        label = f"full bootstrap (J = {full.replications}) ± SE"
        layers.append(hv.Spread((full.grid, full.optimism, full.optimism_se), x, [OPT_DIM, "se"], label=label).opts(
            color=FULL_COLOR, alpha=0.2, line_alpha=0))
        layers.append(hv.Curve((full.grid, full.optimism), x, OPT_DIM, label=label).opts(color=FULL_COLOR,
                                                                                          line_width=2))
    log, f = "log " if fast.log_complexity else "", fast.f_test
    label = f"degree-{fast.degree} fit in {log}q (F test p = {f.p_value:.2g})"  # no wider than the other entries
    layers.append(hv.Curve((fast.grid, fast.optimism), x, OPT_DIM, label=label).opts(
        color=FAST_COLOR, line_width=2, line_dash="dashed"))
    label = f"fast bootstrap, reduced grid (J = {fast.replications}) ± SE"
    layers.append(hv.ErrorBars((fast.sample_grid, fast.sample_optimism, fast.sample_se), x, [OPT_DIM, "se"],
                               label=label).opts(color=FAST_COLOR))
    layers.append(hv.Scatter((fast.sample_grid, fast.sample_optimism), x, OPT_DIM, label=label).opts(
        color=FAST_COLOR, size=8))
    if res.replica is not None:
        layers.append(hv.Curve((res.replica.grid, res.replica.optimism), x, OPT_DIM,
                               label="replica theory (no refits)").opts(color=REPLICA_COLOR, line_width=2,
                                                                         line_dash="dotted"))
    # the F test behind the degree: its p in the legend, F and df in the summary table (the title stays short)
    return _finish(layers, state, OPT_TITLE)


def generalization_plot(state: FastBootstrapState) -> hv.Overlay:
    """Generalization error of eq. (8) vs complexity, full and fast bootstrap, and for the LS-SVM the exact
    leave-one-out error over the full grid (no refits, docs/linear_response.md eq. 19), a marker at each
    selection."""
    res, x = state.comparison, _x_dim(state)
    if res is None:
        return _finish([hv.Curve((_EMPTY, _EMPTY), x, GEN_DIM)], state, "Generalization error: no result yet")
    layers = []
    for name, curve, color, dash in (("full bootstrap", res.full, FULL_COLOR, "solid"),
                                     ("fast bootstrap", res.fast, FAST_COLOR, "solid"),
                                     ("leave-one-out (no refits)", res.loo, LOO_COLOR, "dashed")):
        if curve is None:
            continue
        gen = curve.generalization_error
        i = int(np.argmin(gen))
        name = f"{name}: selects {curve.grid[i]:.4g}"
        layers.append(hv.Curve((curve.grid, gen), x, GEN_DIM, label=name).opts(color=color, line_width=2,
                                                                                line_dash=dash))
        layers.append(hv.Scatter(([curve.grid[i]], [gen[i]]), x, GEN_DIM, label=name).opts(
            color=color, size=12, marker="diamond", line_color="black"))
    return _finish(layers, state, "Generalization error, eq. (8): lower is better; ◆ = selected")

