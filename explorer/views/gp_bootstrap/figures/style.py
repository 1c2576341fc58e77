"""What the Gaussian-process page's figures share: the columns of their tables named like controls, the dimensions,
colours and sizes of their axes and legends, and the label of the problem shown. No figure of its own."""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options the figures use)
import numpy as np

from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["S_COLUMN", "MC_SAMPLES_COLUMN", "TARGET_COLUMN", "S_DIM", "ERR_DIM", "TEST_DIM", "H_DIM", "DENSITY_DIM",
           "L1_DIM", "COUNT_DIM", "THEORY_COLOR", "APPROX_COLOR", "MC_COLOR", "TEST_COLOR", "VG_COLOR", "MF_COLOR",
           "IJ_COLOR", "LOO_COLOR", "COMPONENT_COLOR", "FLAG_COLOR", "SIZE", "LEGEND", "EMPTY", "framewise",
           "problem_label"]

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
SIZE = dict(responsive=True, height=430)
#: Legends beside the data (outside the plot area); a click on an entry hides its layer.
LEGEND = dict(legend_position="right", legend_opts={"click_policy": "hide"})

EMPTY = np.array([])


def framewise(*elements):
    """Axes follow each new frame when the figure is shown through a DynamicMap (needed per element)."""
    return [e.opts(framewise=True) for e in elements]


def problem_label(state: GPBootstrapState) -> str:
    """The data and N, and on the low-rank path the rank of K ≈ ΦΦᵀ."""
    p = state.problem
    if p is None:
        return state.dataset
    return f"{p.name} (N = {p.n:,}, low-rank kernel m = {p.features.rank})" if state.low_rank else f"{p.name} (N = {p.n})"
