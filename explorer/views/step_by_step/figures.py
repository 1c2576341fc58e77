"""Figures of "Bootstrap, step by step" (HoloViews, built from a :class:`~.state.StepState`; no computation here
beyond binning what the core returned).

- :func:`data_plot`: the N points sized and coloured by their multiplicity s_i in the last resample (left-out
  points as crosses), the GP mean of the last resample and the ~20 before it, faint.
- :func:`histogram_plot`: f_i of the chosen point over the resamples so far, stacked by its multiplicity k, beside
  the eq. (60) mixture's components binned the same way, in the same colours (stacked outlines).
- :func:`running_plot`: Efron's estimate (eq. 17) ± 1 SE against the number of resamples, with ADATAP and the
  approximate ADATAP as horizontal lines.

Each figure is described once as :class:`~explorer.views.common.drawing.patching.Layer` values with its axis ranges
(``*_layers``): the page draws them once through HoloViews and then, resample after resample, only writes the
new columns into the drawn figure (:func:`~explorer.views.common.drawing.patching.patch_layers`). The layers are the same
whatever has been drawn (empty ones stay in place), so every step is such a patch. Only the histogram's y axis
changes its words: "probability per bin (theory)" before any resample (the theory alone), "resamples per bin" after
(:attr:`Figure.ylabel`, which the page writes into the patched figure).
"""

from __future__ import annotations

from typing import NamedTuple

import holoviews as hv
import numpy as np

from explorer.gp_bootstrap import steps
from explorer.views.common.drawing.patching import Layer, overlay
from explorer.views.step_by_step.state import StepState

__all__ = ["K_COLORS", "K_MAX", "Figure", "data_layers", "histogram_layers", "running_layers", "data_plot",
           "histogram_plot", "running_plot"]

#: Multiplicities shown apart: k = 0, 1, 2, 3 and "4+" together.
K_MAX = 4
#: One colour per multiplicity k (k = 0 first: left out), the same in every figure.
K_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b")
#: Marker size of a point drawn k times (k = 1 .. K_MAX): the more copies, the larger.
K_SIZES = (0, 8, 12, 15, 18)
CURVE_COLOR = "#1f77b4"
N_BINS = 40
_SIZE = {"responsive": True, "min_height": 300, "height": 380}
X, Y = hv.Dimension("x", label="input x"), hv.Dimension("y", label="target y, GP prediction f(x)")
H, COUNT = hv.Dimension("h", label="prediction at point i (f_i)"), hv.Dimension("count", label="resamples per bin")
#: The histogram's y axis before any resample: the theory alone, as the probability of each bin.
PROBABILITY = hv.Dimension("count", label="probability per bin (theory)")
B = hv.Dimension("B", label="resamples drawn (B)")
EPS = hv.Dimension("eps", label="test error (Efron, eq. 17)")
#: The words of a multiplicity k (or s_i: how often a resample drew the point) in the legends: k = 0, 1, 2, 3 and
#: "4+" together (short: a legend's columns are as wide as its longest label).
K_WORDS = ("left out", "once", "twice", "3 times", f"≥ {K_MAX} times")
_NONE = np.zeros(0)


class Figure(NamedTuple):
    """A figure as the page draws and patches it: its layers, its axis ranges and its title."""

    layers: list[Layer]
    ranges: dict[str, tuple[float, float]]
    title: str
    ylabel: str = ""  # the y axis's label where it changes with the state (the page relabels a patched figure)


def _k_label(k: int) -> str:
    return K_WORDS[k]


def _span(*arrays: np.ndarray, pad: float = 0.06, default: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
    """The finite extent of ``arrays`` widened by ``pad`` of its span at both ends (``default`` if empty)."""
    values = np.concatenate([np.ravel(a) for a in arrays]) if arrays else _NONE
    values = values[np.isfinite(values)]
    if values.size == 0:
        return default
    lo, hi = float(values.min()), float(values.max())
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    return lo - pad * width, hi + pad * width


def _polyline(x: np.ndarray, curves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Several curves on the same ``x`` as one line broken by NaN (one data source for all of them)."""
    if len(curves) == 0:
        return _NONE, _NONE
    xs = np.tile(np.append(x, np.nan), len(curves))
    ys = np.column_stack([curves, np.full(len(curves), np.nan)]).ravel()
    return xs, ys


def _steps(edges: np.ndarray, heights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outline of a histogram: x doubled at each edge, y the bar heights (drawn as a plain curve)."""
    return np.repeat(edges, 2), np.concatenate([[0.0], np.repeat(heights, 2), [0.0]])


def data_layers(state: StepState) -> Figure:
    """The data with the last resample's multiplicities and the GP means of the last ~20 resamples."""
    p = state.problem
    if p is None:
        x = y = _NONE
        s = np.zeros(0, dtype=np.int64)
    else:
        x, y = p.X[:, 0], p.y
        s = state.occupations[-1] if state.n_drawn else np.ones(p.n, dtype=np.int64)
    k = np.minimum(s, K_MAX)
    drawn = state.n_drawn > 0
    last = state.curves[-1] if drawn else _NONE
    grid = state.grid if drawn else _NONE
    old = _polyline(state.grid, state.curves[:-1])
    i = state.index
    ring = ((x[i:i + 1], y[i:i + 1]) if p is not None else (_NONE, _NONE))
    layers = [Layer(hv.Curve, (X,), (Y,), old, "earlier fits", dict(color="gray", alpha=0.3, line_width=1)),
              Layer(hv.Curve, (X,), (Y,), (grid, last), "last fit", dict(color=CURVE_COLOR, line_width=3)),
              Layer(hv.Scatter, (X,), (Y,), (x[k == 0], y[k == 0]), K_WORDS[0],
                    dict(marker="x", size=12, color=K_COLORS[0], line_width=2))]
    for j in range(1, K_MAX + 1):
        layers.append(Layer(hv.Scatter, (X,), (Y,), (x[k == j], y[k == j]), K_WORDS[j],
                            dict(size=K_SIZES[j], color=K_COLORS[j], line_color="white", tools=["hover", "tap"])))
    layers.append(Layer(hv.Scatter, (X,), (Y,), ring, "point i",
                        dict(marker="circle", size=24, fill_alpha=0, line_color="black", line_width=2)))
    ranges = {"x": _span(x, pad=0.05), "y": _span(y, state.curves, pad=0.08)}
    # titles short enough for one line in presentation mode at 1280 px (about 26 characters)
    title = f"Last resample, {int(np.count_nonzero(k == 0))} left out" if drawn else f"The data, N = {len(k)}"
    return Figure(layers, ranges, title)


def histogram_layers(state: StepState) -> Figure:
    """f_i over the resamples drawn, stacked by the multiplicity k of point i, and the eq. (60) components."""
    sol, i, n = state.solution, state.index, state.n_drawn
    if sol is None:
        edges, counts, theory, target = np.linspace(0, 1, N_BINS + 1), np.zeros((K_MAX + 1, N_BINS)), None, np.nan
    else:
        values = state.train[:, i]
        edges = steps.histogram_edges(sol, i, values, n_bins=N_BINS)
        counts = steps.multiplicity_histogram(values, state.occupations[:, i], edges, K_MAX)
        theory = steps.theory_histogram(sol, i, edges, K_MAX, n_resamples=max(n, 1))
        target = float(sol.y[i])
    bottom = np.vstack([np.zeros(N_BINS), np.cumsum(counts, axis=0)[:-1]])
    count = COUNT if n else PROBABILITY  # no resample yet: the theory alone, a probability per bin
    layers = []
    for k in range(K_MAX + 1):
        j = np.flatnonzero(counts[k])
        layers.append(Layer(hv.Rectangles, (H, count, "h1", "count1"), (),
                            (edges[j], bottom[k, j], edges[j + 1], bottom[k, j] + counts[k, j]),
                            _k_label(k),
                            dict(color=K_COLORS[k], line_color="white", alpha=0.8)))
    tops = np.cumsum(theory, axis=0) if theory is not None else None
    for k in range(K_MAX + 1):
        outline = _steps(edges, tops[k]) if tops is not None else (_NONE, _NONE)
        last = k == K_MAX  # one legend entry for the outlines
        layers.append(Layer(hv.Curve, (H,), (count,), outline, "theory" if last else f"theory {k}",
                            dict(color=K_COLORS[k], line_width=2, show_legend=last)))
    top = max(float(np.sum(counts, axis=0).max(initial=0)), float(tops[-1].max()) if tops is not None else 1.0)
    layers.append(Layer(hv.Curve, (H,), (count,), (np.array([target, target]), np.array([0.0, 1.08 * top])),
                        "target y_i", dict(color="black", line_dash="dashed", line_width=1)))
    title = f"Predictions at point i = {i}"
    return Figure(layers, {"x": (float(edges[0]), float(edges[-1])), "y": (0.0, 1.08 * top)}, title, count.label)


def running_layers(state: StepState) -> Figure:
    """Efron's estimate ± 1 SE against the number of resamples, and the theories as horizontal lines."""
    r = state.running
    ok = np.isfinite(r.value)
    b, value = r.counts[ok].astype(float), r.value[ok]
    se = np.where(np.isfinite(r.se[ok]), r.se[ok], 0.0)
    right = float(max(state.n_drawn, 10))
    layers = [Layer(hv.Curve, (B,), (EPS,), (b, value + se), "± 1 SE", dict(color=CURVE_COLOR, line_width=1,
                                                                            line_dash="dotted")),
              Layer(hv.Curve, (B,), (EPS,), (b, value - se), "− 1 SE", dict(color=CURVE_COLOR, line_width=1,
                                                                            line_dash="dotted",
                                                                            show_legend=False)),
              Layer(hv.Curve, (B,), (EPS,), (b, value), "Efron so far",
                    dict(color=CURVE_COLOR, line_width=2))]
    styles = {"ADATAP": ("black", "solid"), "approx. ADATAP": ("#ff7f0e", "dashed")}
    theory = state.theory
    for name, (color, dash) in styles.items():
        line = (np.array([1.0, right]), np.full(2, theory[name])) if name in theory else (_NONE, _NONE)
        layers.append(Layer(hv.Curve, (B,), (EPS,), line, name, dict(color=color, line_dash=dash,
                                                                                 line_width=2)))
    # the band settles as B grows: its range is that of the resamples after the first few, and the theory
    settled = b >= min(10.0, b.max()) if b.size else ok[:0]
    y = _span(value[settled] + se[settled], value[settled] - se[settled], np.array(list(theory.values())),
              pad=0.1)
    return Figure(layers, {"x": (0.8, 1.25 * right), "y": y},
                  f"After {state.n_drawn:,} resample{'' if state.n_drawn == 1 else 's'}"
                  if state.n_drawn else "Test error vs resamples")


def _plot(figure: Figure, legend_cols: int, **opts) -> hv.Overlay:
    """The overlay, its legend above the plot (never over the data). The legend's margin is 0: Bokeh leaves it out of
    the space it reserves above the frame, so a margin made the legend overlap the frame's top."""
    return overlay(figure.layers).opts(title=figure.title, xlim=figure.ranges["x"], ylim=figure.ranges["y"],
                                       show_grid=True, legend_position="top", legend_cols=legend_cols,
                                       legend_opts={"padding": 2, "glyph_width": 16, "margin": 0},
                                       toolbar=None, **_SIZE, **opts)


def data_plot(state: StepState) -> hv.Overlay:
    """:func:`data_layers` as a HoloViews overlay."""
    return _plot(data_layers(state), 3)


def histogram_plot(state: StepState) -> hv.Overlay:
    """:func:`histogram_layers` as a HoloViews overlay."""
    return _plot(histogram_layers(state), 4)


def running_plot(state: StepState) -> hv.Overlay:
    """:func:`running_layers` as a HoloViews overlay (log x axis)."""
    return _plot(running_layers(state), 2, logx=True)
