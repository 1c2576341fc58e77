"""The class room's figures, drawn once with Bokeh and then updated by new columns of their data sources (a page
polls its room and writes only what changed): the pooled histogram of f_i with the eq. (60) mixture over it
(:func:`class_figure`, :func:`histogram_columns`), the class's answers as a dot plot (:func:`answers_figure`,
:func:`answers_columns`) and a student's own last resample (:func:`resample_figure`, :func:`resample_columns`).

The column functions are plain functions of a room's rounds and questions (no widget): they bin nothing but what
the room pooled.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, Range1d, SaveTool, Span
from bokeh.plotting import figure

from explorer.gp_bootstrap import class_draws
from explorer.runtime.rooms import Question, Round

__all__ = ["class_figure", "show_legends", "show_histogram", "histogram_columns", "answers_figure", "answers_columns", "resample_figure",
           "resample_columns", "CLASS_COLOR", "THEORY_COLOR", "PREVIOUS_COLOR", "MINE_COLOR"]

CLASS_COLOR, THEORY_COLOR, PREVIOUS_COLOR, MINE_COLOR = "#1f77b4", "#111111", "#999999", "#d62728"
_FONT = "14px"
#: Points on which the theory's curve is drawn.
_CURVE_POINTS = 200


def _base(title: str, height: int, x_label: str, y_label: str, tools: str = "") -> figure:
    fig = figure(title=title, height=height, sizing_mode="stretch_width", tools=tools, toolbar_location=None
                 if not tools else "right", x_axis_label=x_label, y_axis_label=y_label)
    fig.title.text_font_size = "16px"
    for axis in (fig.xaxis, fig.yaxis):
        axis.axis_label_text_font_size = _FONT
        axis.major_label_text_font_size = _FONT
    fig.toolbar.logo = None
    for tool in fig.select(type=SaveTool):
        tool.filename = "class-room-figure"  # a PNG of that name, without asking for one
    return fig


def class_figure(height: int = 420, tools: str = "save", mine: bool = False) -> tuple[figure,
                                                                                    dict[str, ColumnDataSource]]:
    """The class's pooled histogram of f_i (bars), the theory's curve over it, the previous round (grey outline,
    in the legend while shown: :func:`show_legends`) and, with ``mine``, a student's last value (a red line): the
    figure and its data sources."""
    sources = {name: ColumnDataSource(data) for name, data in histogram_columns(None, None).items()}
    fig = _base("The class's resamples", height, "prediction at point i (f_i)", "share of the draws per bin", tools)
    fig.quad(left="left", right="right", bottom=0, top="top", source=sources["bars"], color=CLASS_COLOR,
             alpha=0.75, line_color="white", legend_label="the class's draws")
    fig.line("x", "y", source=sources["previous"], color=PREVIOUS_COLOR, line_width=3, line_dash="dashed",
             legend_label="previous round")
    fig.line("x", "y", source=sources["theory"], color=THEORY_COLOR, line_width=3,
             legend_label="theory, eq. (60)")
    if mine:
        fig.line("x", "y", source=sources["mine"], color=MINE_COLOR, line_width=3, legend_label="your last draw")
    fig.legend.location = "top_left"
    fig.legend.label_text_font_size = "13px"
    fig.legend.background_fill_alpha = 0.6
    fig.x_range, fig.y_range = Range1d(0, 1), Range1d(0, 1)
    return fig, sources


def show_legends(fig: figure) -> None:
    """Show in ``fig``'s legend only the lines that hold data (the previous round while compared, a student's
    last draw once drawn)."""
    for item in fig.legend[0].items:
        item.visible = any(len(next(iter(r.data_source.data.values()), ())) for r in item.renderers)


def histogram_columns(current: Round | None, previous: Round | None, mine: float | None = None) -> dict[str, dict]:
    """The columns of :func:`class_figure`'s sources for round ``current``, as shares of the draws per bin (so
    that the theory's curve stays put while the class draws: only the bars' heights change): bars of the pooled
    counts over n, the eq. (60) density as the probability of a bin, ``previous`` (None: hidden) on this round's
    bin width, ``mine`` (a value of f_i; None: hidden), and the axis ranges."""
    none = {"x": np.zeros(0), "y": np.zeros(0)}
    if current is None:
        return {"bars": {"left": np.zeros(0), "right": np.zeros(0), "top": np.zeros(0)}, "theory": none,
                "previous": dict(none), "mine": dict(none), "ranges": {"x": (0.0, 1.0), "y": (0.0, 1.0)}}
    pooled, p = current.pooled, current.problem
    edges, width = pooled.edges, float(np.diff(pooled.edges).mean())
    x = np.linspace(edges[0], edges[-1], _CURVE_POINTS)
    theory = class_draws.mixture_density(p.solution, p.index, x) * width
    prev = dict(none)
    lo, hi = float(edges[0]), float(edges[-1])
    if previous is not None and previous.pooled.n:
        e, c = previous.pooled.edges, previous.pooled.counts
        density = c / (previous.pooled.n * np.diff(e))
        prev = {"x": np.repeat(e, 2), "y": np.concatenate([[0.0], np.repeat(density * width, 2), [0.0]])}
        lo, hi = min(lo, float(e[0])), max(hi, float(e[-1]))
    share = pooled.counts / max(pooled.n, 1)
    top = max(float(share.max(initial=0)), float(theory.max(initial=0)), float(prev["y"].max(initial=0)), 1e-12)
    line = dict(none)
    if mine is not None and np.isfinite(mine):
        line = {"x": np.array([mine, mine]), "y": np.array([0.0, 1.05 * top])}
    bars = {"left": edges[:-1], "right": edges[1:], "top": share}
    return {"bars": bars, "theory": {"x": x, "y": theory}, "previous": prev, "mine": line,
            "ranges": {"x": (lo, hi), "y": (0.0, 1.1 * top)}}


def show_histogram(fig: figure, sources: dict[str, ColumnDataSource], columns: dict, whole: bool) -> None:
    """Write ``columns`` (:func:`histogram_columns`) into the drawn ``fig``: every source when ``whole`` (a new
    round, or the previous round shown or hidden), else only the bars' heights and the student's line (what the
    class's draws change: a few hundred bytes to each page)."""
    if whole:
        for name in ("bars", "theory", "previous", "mine"):
            sources[name].data = columns[name]
        fig.x_range.update(start=columns["ranges"]["x"][0], end=columns["ranges"]["x"][1])
        show_legends(fig)
    else:
        sources["bars"].data["top"] = columns["bars"]["top"]
        if len(sources["mine"].data["x"]) or len(columns["mine"]["x"]):
            sources["mine"].data = columns["mine"]
            show_legends(fig)
    if fig.y_range.end != columns["ranges"]["y"][1]:
        fig.y_range.update(start=0.0, end=columns["ranges"]["y"][1])


def answers_figure(height: int = 260) -> tuple[figure, dict[str, ColumnDataSource], dict[str, Span]]:
    """The class's answers to the question as a dot plot, with the theory's and the pooled draws' values as
    vertical lines once revealed: the figure, its source and its two lines."""
    source = ColumnDataSource({"x": np.zeros(0), "y": np.zeros(0)})
    fig = _base("Answers", height, "answer", "students")
    fig.scatter("x", "y", source=source, size=14, color="#ff7f0e", line_color="white")
    lines = {"theory": Span(location=0, dimension="height", line_color=THEORY_COLOR, line_width=3, visible=False),
             "pooled": Span(location=0, dimension="height", line_color=CLASS_COLOR, line_width=3,
                            line_dash="dashed", visible=False)}
    for line in lines.values():
        fig.add_layout(line)
    fig.yaxis.visible = False
    fig.x_range, fig.y_range = Range1d(0, 1), Range1d(0, 2)
    return fig, {"dots": source}, lines


def answers_columns(q: Question | None) -> dict:
    """The dot plot of ``q``'s answers: numbers stacked in 30 bins of their range (choices: one stack per choice,
    at 0, 1, …), the x range, the tick labels of a choice question and the revealed values."""
    if q is None or not q.answers:
        return {"x": np.zeros(0), "y": np.zeros(0), "range": (0.0, 1.0), "labels": {}, "top": 2}
    if q.kind == "choice":
        x = np.array([q.choices.index(v) for v in q.answers.values()], dtype=float)
        bins, lo, hi = x.astype(int), -0.5, len(q.choices) - 0.5
    else:
        x = np.array(list(q.answers.values()), dtype=float)
        shown = np.r_[x, [v for v in (q.theory, q.pooled) if np.isfinite(v)]]
        lo, hi = float(shown.min()), float(shown.max())
        pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.5
        lo, hi = lo - pad, hi + pad
        bins = np.clip(((x - lo) / (hi - lo) * 30).astype(int), 0, 29)
    order = np.argsort(bins, kind="stable")
    y = np.empty(x.size)
    y[order] = _stack_heights(bins[order])
    labels = {i: c for i, c in enumerate(q.choices)} if q.kind == "choice" else {}
    return {"x": x, "y": y, "range": (lo, hi), "labels": labels, "top": int(y.max()) + 2}


def _stack_heights(sorted_bins: np.ndarray) -> np.ndarray:
    """1, 2, 3, … within each run of equal bins (the dots of a stack)."""
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_bins)) + 1]
    heights = np.arange(sorted_bins.size) - np.repeat(starts, np.diff(np.r_[starts, sorted_bins.size]))
    return heights + 1.0


def resample_figure(height: int = 190) -> tuple[figure, dict[str, ColumnDataSource]]:
    """A student's last resample, small: the points drawn (sized by how often), those left out (crosses), point i
    ringed and the GP mean fitted to the resample."""
    names = ("drawn", "out", "fit", "ring")
    sources = {name: ColumnDataSource({"x": np.zeros(0), "y": np.zeros(0), "size": np.zeros(0)}) for name in names}
    fig = _base("Your last resample", height, "x", "y")
    fig.line("x", "y", source=sources["fit"], color=CLASS_COLOR, line_width=2)
    fig.scatter("x", "y", source=sources["drawn"], size="size", color="#2ca02c", line_color="white")
    fig.scatter("x", "y", source=sources["out"], marker="x", size=9, color=MINE_COLOR, line_width=2)
    fig.scatter("x", "y", source=sources["ring"], size=18, fill_alpha=0, line_color="black", line_width=2)
    return fig, sources


def resample_columns(current: Round | None, student: int) -> dict[str, dict]:
    """The columns of :func:`resample_figure` for ``student``'s last draw in round ``current`` (empty before)."""
    empty = {"x": np.zeros(0), "y": np.zeros(0), "size": np.zeros(0)}
    last = current.last.get(student) if current is not None else None
    if last is None:
        return {name: dict(empty) for name in ("drawn", "out", "fit", "ring")}
    p, s = current.problem, last.last_occupations
    i = p.index
    return {"drawn": {"x": p.x[s > 0], "y": p.y[s > 0], "size": 6.0 + 3.0 * np.minimum(s[s > 0], 4)},
            "out": {"x": p.x[s == 0], "y": p.y[s == 0], "size": np.full(int(np.sum(s == 0)), 9.0)},
            "fit": {"x": p.grid, "y": last.last_curve, "size": np.zeros(p.grid.size)},
            "ring": {"x": p.x[i:i + 1], "y": p.y[i:i + 1], "size": np.array([18.0])}}
