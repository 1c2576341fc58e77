"""Fig. 5 of [MO03]: the L1 distances between the Monte-Carlo histograms and the theory at every input, with the
noise floor; the table of the worst inputs, the summary and the CSV table."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from explorer.views.gp_bootstrap.figures.style import (
    COUNT_DIM,
    L1_DIM,
    LEGEND,
    SIZE,
    TARGET_COLUMN,
    TEST_COLOR,
    THEORY_COLOR,
    framewise,
)
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["L1_COLUMNS", "L1_REFERENCES", "l1_plot", "l1_frame", "worst_inputs_frame", "l1_summary"]

#: Columns of the L1 map's CSV export.
L1_COLUMNS = ["input", TARGET_COLUMN, "theory_mean", "mc_mean", "l1", "l1_noise_floor"]


#: The reference L1 values of the L1 map (the summary counts the inputs with L1 ≤ 0.1 and ≥ 0.2), with their dash.
L1_REFERENCES = {0.1: "dashed", 0.2: "dotted"}


def l1_plot(state: GPBootstrapState) -> hv.Overlay:
    """Histogram of L1(MC histogram, theory) over all inputs, with the MC noise floor, [MO03] Fig. 5.

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
    layers = framewise(
        hv.Histogram((bins, measured), kdims=L1_DIM, vdims=COUNT_DIM, label="MC histogram vs theory").opts(
            fill_color=THEORY_COLOR, fill_alpha=0.6),
        hv.Histogram((bins, floor), kdims=L1_DIM, vdims=COUNT_DIM,
                     label="noise floor (theory vs its own samples)").opts(fill_color=TEST_COLOR, fill_alpha=0.35),
        *references,
    )
    where = "every input" if dist is None or dist.inputs.size == dist.n else \
        f"{dist.inputs.size:,} inputs drawn at random"
    return hv.Overlay(layers).opts(title=f"L1(MC histogram, theory) at {where}: smaller is better,\n"
                                         "the noise floor is as good as it gets", show_grid=True, **LEGEND, **SIZE)


def l1_frame(state: GPBootstrapState) -> pd.DataFrame:
    """L1 and noise-floor L1 at every training input the distribution covers (all, or a random sample on large
    data), with target, theory and MC mean."""
    dist, problem = state.distribution, state.problem
    if dist is None or problem is None or problem.n != dist.n:
        return pd.DataFrame(columns=L1_COLUMNS)
    return pd.DataFrame({"input": dist.inputs, TARGET_COLUMN: problem.y[dist.inputs], "theory_mean": dist.solution.m,
                         "mc_mean": dist.samples.mean(axis=0), "l1": dist.l1.l1,
                         "l1_noise_floor": dist.noise_floor.l1}, columns=L1_COLUMNS)


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
