"""Checks of the figures shared by the tabs' tests: a legend beside the data, an axis label and a title that
fit."""
import re

import holoviews as hv
import holoviews.plotting.bokeh  # registers the Bokeh renderer
from bokeh.models import Legend

#: Average glyph width of Bokeh's label and title fonts (Helvetica-like, italic or bold) in em, measured on
#: screenshots: 36 characters of a 13 px axis label take ≈ 240 px (0.51 em), 79 characters of a 25.6 px title
#: ≈ 905 px (0.45 em).
GLYPH_EM = 0.52
#: Part of a figure's height a vertical axis label may take: the title and the x axis take the rest.
LABEL_SHARE = 0.8


def right_legend(figure) -> Legend:
    """The one Bokeh legend of the rendered HoloViews ``figure``, checked to sit beside the data area (Bokeh's
    ``right`` panel), not inside it where it covers points."""
    plot = hv.render(figure, backend="bokeh")
    (legend,) = plot.legend
    assert legend in plot.right and legend not in plot.center, "the legend covers the data area"
    return legend


def _px(size: str) -> float:
    """A Bokeh font size ("13px", "19.2pt") in pixels."""
    value, unit = re.fullmatch(r"([0-9.]+)(px|pt)", size).groups()
    return float(value) * (4 / 3 if unit == "pt" else 1)


def title_fits(figure, width: int) -> bool:
    """Whether the rendered ``figure``'s title, at its font size, fits ``width`` pixels (Bokeh does not wrap it)."""
    title = hv.render(figure, backend="bokeh").title
    return len(title.text) * GLYPH_EM * _px(title.text_font_size) <= width


def y_label_fits(figure, height: int) -> bool:
    """Whether the rendered ``figure``'s y-axis label, drawn vertically at its font size, fits ``LABEL_SHARE``
    of the figure's ``height`` (a longer label is cut at both ends)."""
    axis = hv.render(figure, backend="bokeh").yaxis[0]
    return len(axis.axis_label) * GLYPH_EM * _px(axis.axis_label_text_font_size) <= LABEL_SHARE * height
