"""Fig. 2 of [MO03]: the bootstrap mean and variance of the prediction at held-out inputs, the theory (eq. 48) and
the first-order linear response (IJ) against Monte-Carlo; and its CSV table."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from explorer.views.gp_bootstrap.figures.style import EMPTY, IJ_COLOR, MC_COLOR, TARGET_COLUMN, THEORY_COLOR, framewise
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["HOLDOUT_COLUMNS", "holdout_overlay", "holdout_plot", "holdout_frame"]

#: Columns of the test inputs' CSV export.
HOLDOUT_COLUMNS = ["test_input", TARGET_COLUMN, "theory_mean", "ij_mean", "mc_mean", "mc_mean_se", "theory_var",
                   "ij_var", "mc_var", "mc_var_se"]


def holdout_overlay(state: GPBootstrapState, what: str) -> hv.Overlay:
    """Bootstrap ``what`` ("mean" or "var") of the prediction at the held-out inputs: theory (crosses,
    eq. 48), the first-order linear response (IJ, triangles; docs/linear_response.md eqs. 5-6) and Monte-Carlo
    (circles, ± 1 s.e.), one panel of [MO03] Fig. 2."""
    theory, mc, ij = state.holdout_theory, state.holdout_mc, state.holdout_ij
    label = {"mean": "bootstrap mean E[f_x]", "var": "bootstrap variance Var[f_x]"}[what]
    x, y = hv.Dimension("test_input", label="held-out input"), hv.Dimension(what, label=label)
    j = th = value = se = EMPTY
    if theory is not None:
        j, th = np.arange(theory.mean.size), getattr(theory, what)
    if theory is not None and mc is not None and mc.mc_mean.size == j.size:
        value, se = (mc.mc_mean, mc.mc_mean_se) if what == "mean" else (mc.mc_var, mc.mc_var_se)
    mj = j if value.size else EMPTY
    ij_value = getattr(ij, what) if theory is not None and ij is not None and ij.mean.size == j.size else EMPTY
    layers = framewise(
        hv.Scatter((j, th), x, y, label="theory, eq. (48)").opts(marker="x", size=10, color=THEORY_COLOR, line_width=2),
        # "IJ" alone: two legends of three entries side by side fit 1280 px; the status line spells it out
        hv.Scatter((j if ij_value.size else EMPTY, ij_value), x, y, label="IJ").opts(
            marker="triangle", size=8, color=IJ_COLOR, fill_alpha=0, line_width=1.5),
        hv.ErrorBars((mj, value, se), x, [y, "se"]).opts(color=MC_COLOR),
        hv.Scatter((mj, value), x, y, label="Monte-Carlo (± 1 s.e.)").opts(color=MC_COLOR, size=7, fill_alpha=0),
    )
    return hv.Overlay(layers).opts(title=label, legend_position="bottom", legend_opts={"click_policy": "hide"},
                                   show_grid=True, responsive=True, height=440)


def holdout_plot(state: GPBootstrapState) -> hv.Layout:
    """Bootstrap mean (left) and variance (right) at the held-out inputs, [MO03] Fig. 2."""
    return (holdout_overlay(state, "mean") + holdout_overlay(state, "var")).cols(2)


def holdout_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Theory (eq. 48), linear response (IJ, first order) and MC bootstrap mean and variance at every held-out
    input."""
    theory, mc, ij = state.holdout_theory, state.holdout_mc, state.holdout_ij
    if theory is None:
        return pd.DataFrame(columns=HOLDOUT_COLUMNS)
    nan = np.full(theory.mean.size, np.nan)
    ij_ok = ij is not None and ij.mean.size == theory.mean.size
    return pd.DataFrame({
        "test_input": np.arange(theory.mean.size), TARGET_COLUMN: theory.y_test, "theory_mean": theory.mean,
        "ij_mean": ij.mean if ij_ok else nan,
        "mc_mean": mc.mc_mean if mc is not None else nan, "mc_mean_se": mc.mc_mean_se if mc is not None else nan,
        "theory_var": theory.var, "ij_var": ij.var if ij_ok else nan,
        "mc_var": mc.mc_var if mc is not None else nan,
        "mc_var_se": mc.mc_var_se if mc is not None else nan}, columns=HOLDOUT_COLUMNS)
