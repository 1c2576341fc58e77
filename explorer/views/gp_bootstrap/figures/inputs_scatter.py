"""The scatter of the predictive-distribution tab: every training input (target y_i against the theory's bootstrap
mean, coloured by L1), tapped to choose the input whose distribution is shown, with the selected one ringed."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from explorer.views.gp_bootstrap.figures.style import EMPTY, L1_DIM
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["shown_inputs", "inputs_points", "tapped_input", "selected_input", "inputs_plot"]

def shown_inputs(state: GPBootstrapState) -> np.ndarray | None:
    """The training inputs the scatter of the distribution page shows: all (None), or the random sample the
    distribution covers on data of more than ``experiments.MAP_ALL_ROWS`` rows."""
    return state.mapped_inputs


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
    y, m = (problem.y[rows], sol.m[rows]) if ok else (EMPTY, EMPTY)
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
