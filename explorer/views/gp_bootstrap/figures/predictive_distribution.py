"""Figs. 3-4 of [MO03]: the bootstrap distribution of the prediction f_i(D) at one training input, the Monte-Carlo
histogram against the eq. (60) mixture (:mod:`explorer.views.gp_bootstrap.mixture`: the core's
``BootstrapDistribution`` at that input), with its Poisson components on demand; and its CSV table."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
from scipy import stats

from explorer.gp_bootstrap.l1 import histogram_edges
from explorer.views.gp_bootstrap.figures.style import (
    COMPONENT_COLOR,
    DENSITY_DIM,
    EMPTY,
    H_DIM,
    LEGEND,
    MC_COLOR,
    MC_SAMPLES_COLUMN,
    SIZE,
    THEORY_COLOR,
    framewise,
)
from explorer.views.gp_bootstrap.mixture import distribution_at
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["DISTRIBUTION_COLUMNS", "mapped_position", "distribution_plot", "distribution_frame"]

#: Columns of the predictive distribution's CSV export.
DISTRIBUTION_COLUMNS = ["input", "h_left", "h_right", "theory_probability", "mc_probability", MC_SAMPLES_COLUMN]


def mapped_position(state: GPBootstrapState, i: int) -> int | None:
    """Where training input ``i`` is among the inputs the distribution covers (its column of the Monte-Carlo samples,
    its entry of the L1 values): ``i`` when it covers every input, None when ``i`` is not among those drawn."""
    dist = state.distribution
    if dist is None or dist.inputs.size == dist.n:
        return i
    pos = int(np.searchsorted(dist.inputs, i))
    return pos if pos < dist.inputs.size and dist.inputs[pos] == i else None


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
    components (k copies of input i in the sample), [MO03] Fig. 3-4. Bin width ``state.bin_width``: 0.2 for
    boston, 0.2 · sd(y)/sd(boston's target) for other targets."""
    sol, i, samples = _distribution_data(state)
    width = state.bin_width
    edges = h = density = EMPTY
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
    mc_step = np.append(np.nan_to_num(mc), np.nan_to_num(mc[-1:])) / width if edges.size else EMPTY
    layers = framewise(
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
                                         "the outline should follow the bars", show_grid=True, **LEGEND, **SIZE)


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
        return pd.DataFrame(columns=DISTRIBUTION_COLUMNS)
    edges, theory, mc = _bins(sol, i, samples, state.bin_width)
    return pd.DataFrame({"input": i, "h_left": edges[:-1], "h_right": edges[1:], "theory_probability": theory,
                         "mc_probability": mc, MC_SAMPLES_COLUMN: samples.size if samples is not None else 0},
                        columns=DISTRIBUTION_COLUMNS)
