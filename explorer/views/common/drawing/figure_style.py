"""The text sizes and legend layout of every figure of the app, in normal and presentation mode, set explicitly on
every Bokeh model on every render.

Why explicitly, and in points. The page's design (Panel's Fast) gives the document a Bokeh theme whose text sizes are
in ``em`` (axis labels 1.25em, ticks and legend labels 1.025em, titles 1.15em): an em is the font size of the CSS
around the figure, 12 px on one page, 14 px on another and 19-20 px in presentation mode (the page's larger text), so
a figure that kept them changed with the page around it. And Bokeh stores a property only when the value set differs
from the one it has: a hook that set Bokeh's own defaults ("13px", "11px") on a plot made outside the document
stored nothing, and the theme's em sizes took over when the plot joined the themed document, while the same hook on
a redraw (a click, a slider, a preset) in the document stored its px sizes. So fonts changed between renders: a
learning curve's axis labels at 17.5 px on a first drawing, the step-by-step figures' at 13 px after a click, the
SVM view at 11 or 16 px depending on the path that drew it. Sizes in points equal neither Bokeh's px defaults nor
the theme's em sizes, so every value set is stored and shown whatever the order; :func:`text_hook` sets them again on
every drawing and redraw, and :func:`~explorer.views.common.layout.presentation.presented` gives HoloViews the same values
for the plots it makes.

Legends: the same size ratio as the axes between the modes; ``spacing`` between entries (with none, a glyph sat
against the previous entry's label: "k = 0 ▮ k = 2" read as k = 0 in the next glyph's colour, and a long label ran
under the next column's glyph).
"""

from __future__ import annotations

from collections.abc import Callable

from bokeh.models import Axis, ColorBar, CustomJS, Legend

__all__ = ["SIZES", "LEGEND_LAYOUT", "NO_FOCUS_OUTLINE", "font_sizes", "legend_options", "text_hook", "fit_legend_columns"]

#: Text sizes in points by HoloViews ``fontsize`` key, normal mode (``False``) and presentation mode (``True``):
#: about 13 px axis labels and 11-12 px ticks and legend labels on a screen (Bokeh's own px sizes), ×1.5-1.65 on a
#: projector (the legend a little less, so that a legend beside the data leaves the plot its width).
SIZES: dict[bool, dict[str, float]] = {
    False: {"title": 10.5, "labels": 10.0, "ticks": 8.5, "legend": 8.5},
    True: {"title": 17.0, "labels": 16.0, "ticks": 14.0, "legend": 13.0},
}
#: Legend layout in px by mode: ``spacing`` between entries (rows and columns), ``label_standoff`` between a glyph
#: and its label, ``glyph_width``; scaled with the text. None equals Bokeh's default (3, 5, 20), which would not be
#: stored (see above) and leave the theme's value.
LEGEND_LAYOUT: dict[bool, dict[str, int]] = {
    False: {"spacing": 6, "label_standoff": 6, "glyph_width": 16},
    True: {"spacing": 10, "label_standoff": 8, "glyph_width": 24},
}


#: The figure's stylesheet (Bokeh ``Plot.stylesheets``, in the figure's shadow root) against the focus outline of its
#: canvas: BokehJS makes the canvas's event layer focusable and outlines it on ``:focus`` with
#: ``var(--outline-style)`` (dotted), so a click on a point drew a dotted border round the whole figure. A rule on the
#: canvas's host element wins over the ``:host`` rule inside the canvas that sets the variable.
NO_FOCUS_OUTLINE = ".bk-Canvas { --outline-style: none; }"


def font_sizes(presentation: bool) -> dict[str, str]:
    """The text sizes of ``presentation`` mode as Bokeh font sizes ("8.5pt"), by HoloViews ``fontsize`` key."""
    return {key: f"{size:g}pt" for key, size in SIZES[presentation].items()}


def legend_options(presentation: bool) -> dict:
    """The Bokeh ``Legend`` properties of ``presentation`` mode: its label size and :data:`LEGEND_LAYOUT` (HoloViews
    ``legend_opts``)."""
    return {"label_text_font_size": font_sizes(presentation)["legend"], **LEGEND_LAYOUT[presentation]}


def text_hook(presentation: bool) -> Callable:
    """A HoloViews hook that sets the text of the drawn Bokeh plot to the sizes of ``presentation`` mode: title, axis
    labels and tick labels (a colour bar's title and ticks as the axes'), and each legend's labels and layout
    (:func:`legend_options`).

    HoloViews sets an axis's fonts when it makes the plot, not when a DynamicMap's new frame updates it (a figure drawn
    in normal mode kept its small tick labels after the switch); a hook runs on both."""
    sizes, legend = font_sizes(presentation), legend_options(presentation)

    def hook(plot, element) -> None:
        state = plot.state
        title = getattr(state, "title", None)
        if title is not None and hasattr(title, "text_font_size"):
            title.text_font_size = sizes["title"]
        stacked = (*state.below, *state.above)
        for item in (*state.left, *state.right, *stacked, *state.center):
            if isinstance(item, Axis):
                item.major_label_text_font_size, item.axis_label_text_font_size = sizes["ticks"], sizes["labels"]
            elif isinstance(item, ColorBar):  # a colour scale (the L1 map): its ticks and its title
                item.major_label_text_font_size, item.title_text_font_size = sizes["ticks"], sizes["labels"]
            elif isinstance(item, Legend):
                # above or below the frame no margin: Bokeh leaves it out of the height it gives the panel, and the
                # legend ran 10 px past the canvas's edge (the test inputs' legends, under their figures)
                item.update(**legend, **({"margin": 0} if any(item is other for other in stacked) else {}))
        if NO_FOCUS_OUTLINE not in state.stylesheets:
            state.stylesheets = [*state.stylesheets, NO_FOCUS_OUTLINE]
        fit_legend_columns(state)

    return hook


#: The browser's side of :func:`fit_legend_columns`: for each legend above or below the plot frame, the most columns
#: up to the figure's own (``cols``) whose entries fit the frame's width, measured with the legend's font on a canvas
#: (entries fill the columns top to bottom, as Bokeh lays them out).
_FIT_COLUMNS_JS = """
const ctx = document.createElement('canvas').getContext('2d');
const room = plot.inner_width;
if (!(room > 0)) { return; }
legends.forEach((legend, n) => {
  const labels = legend.items.filter((item) => item.visible !== false)
    .map((item) => String(item.label == null ? '' : (item.label.value ?? item.label.field ?? item.label)));
  if (!labels.length) { return; }
  ctx.font = `${legend.label_text_font_style} ${legend.label_text_font_size} ${legend.label_text_font}`;
  const entry = labels.map((text) => legend.glyph_width + legend.label_standoff
                                     + Math.max(legend.label_width, ctx.measureText(text).width));
  let fit = 1;
  for (let c = Math.min(cols[n], labels.length); c > 1; c--) {
    const rows = Math.ceil(labels.length / c), widths = [];
    entry.forEach((w, i) => { const col = Math.floor(i / rows); widths[col] = Math.max(widths[col] || 0, w); });
    const total = widths.reduce((a, b) => a + b, 0) + legend.spacing * (widths.length - 1) + 2 * legend.padding;
    if (total <= room) { fit = c; break; }
  }
  if (legend.ncols !== fit) { legend.ncols = fit; }
});
"""


def fit_legend_columns(plot) -> None:
    """Keep each legend above or below the frame of the Bokeh figure ``plot`` within the frame's width: in the
    browser, it shows as many columns as fit, up to the number the figure asks for (its ``ncols`` when first drawn),
    each time the frame's width, the legend's entries, its font or its column count change (a redraw sets the
    figure's count again). Bokeh does not wrap a legend: one wider than its figure was cut at the canvas's edge (the
    step-by-step figures, 270 px wide beside the sidebar, 400 px in presentation mode). Attached once per figure."""
    legends = [item for item in (*plot.above, *plot.below) if isinstance(item, Legend) and item.ncols != "auto"]
    attached = [cb for cbs in plot.js_property_callbacks.values() for cb in cbs if "explorer-legend-columns" in cb.tags]
    if not legends or attached:
        return
    callback = CustomJS(args={"plot": plot, "legends": legends, "cols": [int(legend.ncols) for legend in legends]},
                        code=_FIT_COLUMNS_JS, tags=["explorer-legend-columns"])
    plot.js_on_change("inner_width", callback)
    for legend in legends:
        for name in ("ncols", "items", "label_text_font_size"):
            legend.js_on_change(name, callback)
