"""The figures' text sizes and legends (explorer.views.common.drawing.figure_style, presentation.presented): the same sizes
whatever the order in which a plot is drawn and joins the page's themed document, legends whose glyphs never go
missing, and the browser's column fitting attached once."""

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import Axis, Legend
from panel.theme.fast import FastDefaultTheme

from explorer.views.common.drawing.figure_style import LEGEND_LAYOUT, NO_FOCUS_OUTLINE, SIZES, text_hook
from explorer.views.common.drawing.patching import Layer, overlay
from explorer.views.common.layout.presentation import presented


def _figure(on: bool, **options) -> hv.Overlay:
    curve = hv.Curve(([0, 1, 2], [1, 0, 1]), "x", "y", label="a curve")
    points = hv.Scatter(([0, 1, 2], [0, 1, 0]), "x", "y", label="some points")
    figure = presented(hv.Overlay([curve, points]).opts(**{"title": "T", "legend_position": "right", **options}), on)
    return figure.opts(hooks=[text_hook(on)])


def _text(plot) -> dict:
    """Every text size of a Bokeh plot, by kind."""
    axes = [a for a in (*plot.left, *plot.below) if isinstance(a, Axis)]
    return {"title": plot.title.text_font_size, "labels": {a.axis_label_text_font_size for a in axes},
            "ticks": {a.major_label_text_font_size for a in axes},
            "legend": {legend.label_text_font_size for legend in plot.legend}}


def _pt(size: str) -> float:
    assert size.endswith("pt"), size
    return float(size[:-2])


@pytest.mark.parametrize("theme_first", [True, False], ids=["theme-then-plot", "plot-then-theme"])
@pytest.mark.parametrize("on", [False, True], ids=["normal", "presentation"])
def test_text_sizes_survive_the_pages_theme_in_either_order(on, theme_first):
    """A plot drawn outside the document, then added to a document with the Fast design's theme (em sizes), keeps
    its sizes: the old hook's "13px" equalled Bokeh's default, was not stored, and became the theme's 1.25em."""
    plot = hv.render(_figure(on), backend="bokeh")
    drawn = _text(plot)
    document, theme = Document(), FastDefaultTheme().bokeh_theme
    if theme_first:
        document.theme = theme
    document.add_root(plot)
    if not theme_first:
        document.theme = theme
    assert _text(plot) == drawn
    sizes = SIZES[on]
    assert _pt(drawn["title"]) == pytest.approx(sizes["title"], abs=0.01)
    for kind in ("labels", "ticks", "legend"):
        assert [_pt(size) for size in drawn[kind]] == pytest.approx([sizes[kind]], abs=0.01), kind


def test_a_redraw_in_the_themed_document_keeps_the_sizes_of_the_first_drawing():
    """The same figure drawn once outside the document and then updated in it (a click, a slider) shows the same
    sizes: the DynamicMap's new frame goes through HoloViews' update, the hook runs again."""
    revision = hv.streams.Stream.define("Revision", n=0)()
    dmap = hv.DynamicMap(lambda n: _figure(False), streams=[revision])
    renderer = hv.renderer("bokeh")
    plot = renderer.get_plot(dmap)
    first = _text(plot.state)
    document = Document()
    document.theme = FastDefaultTheme().bokeh_theme
    document.add_root(plot.state)
    revision.event(n=1)
    assert _text(plot.state) == first


def test_legends_grow_with_the_axis_labels():
    normal, large = SIZES[False], SIZES[True]
    growth = {kind: large[kind] / normal[kind] for kind in normal}
    assert min(growth.values()) >= 1.4 and growth["legend"] >= 0.9 * growth["labels"], growth


@pytest.mark.parametrize("on", [False, True], ids=["normal", "presentation"])
def test_legend_layout_has_gaps_and_is_stored(on):
    """A gap between entries, and values other than Bokeh's defaults: a default would not be stored on a plot made
    outside the document, and the theme's value would show instead."""
    default = Legend()
    layout = LEGEND_LAYOUT[on]
    assert layout["spacing"] >= 4 and layout["label_standoff"] >= 4
    assert all(value != getattr(default, name) for name, value in layout.items()), layout
    plot = hv.render(_figure(on), backend="bokeh")
    (legend,) = plot.legend
    document = Document()
    document.theme = FastDefaultTheme().bokeh_theme
    document.add_root(plot)
    assert {name: getattr(legend, name) for name in layout} == layout


def test_an_overlays_own_legend_options_are_kept():
    plot = hv.render(_figure(True, legend_opts={"click_policy": "hide", "label_text_font_size": "6pt"}),
                     backend="bokeh")
    (legend,) = plot.legend
    assert legend.click_policy == "hide" and _pt(legend.label_text_font_size) == SIZES[True]["legend"]


def test_an_empty_layer_keeps_a_glyph_in_the_legend():
    """A layer without data draws nothing but has one row (NaN): BokehJS draws an entry's glyph from a row of its
    renderer's source and none from an empty source."""
    empty, full = np.zeros(0), np.arange(3.0)
    layers = [Layer(hv.Scatter, ("x",), ("y",), (empty, empty), "none yet", {}),
              Layer(hv.Scatter, ("x",), ("y",), (full, full), "three", {})]
    assert all(np.isnan(column).all() and column.size == 1 for column in layers[0].source_columns.values())
    plot = hv.render(overlay(layers), backend="bokeh")
    (legend,) = plot.legend
    rows = {item.label.value: min(len(r.data_source.data["x"]) for r in item.renderers) for item in legend.items}
    assert rows == {"none yet": 1, "three": 3}


def test_legends_above_the_frame_get_their_columns_fitted_in_the_browser_once():
    """A legend above the frame with columns: one callback (tagged) on the plot's width and the legend's columns,
    entries and font; a second drawing does not add another. The figure has no focus outline, once."""
    figure = _figure(False, legend_position="top", legend_cols=3)
    plot = hv.render(figure, backend="bokeh")
    hook = text_hook(False)

    class Drawn:  # what HoloViews hands a hook
        state = plot

    hook(Drawn, None)

    def tagged(model, name):
        return [cb for cb in model.js_property_callbacks.get(f"change:{name}", [])
                if "explorer-legend-columns" in cb.tags]

    (legend,) = plot.legend
    assert len(tagged(plot, "inner_width")) == 1
    assert all(len(tagged(legend, name)) == 1 for name in ("ncols", "items", "label_text_font_size"))
    (callback,) = tagged(plot, "inner_width")
    assert callback.args["cols"] == [3] and callback.args["legends"] == [legend]
    assert plot.stylesheets.count(NO_FOCUS_OUTLINE) == 1


@pytest.mark.parametrize("on", [False, True], ids=["normal", "presentation"])
def test_a_labelled_curve_or_scatter_without_data_keeps_its_legend_glyph(on):
    """E.g. the SVM curve's "theory − MC > 3 s.e." while no gap is flagged: one row of NaN, no point drawn."""
    figure = hv.Overlay([hv.Curve(([0.0, 1.0], [0.0, 1.0]), label="data"), hv.Scatter(([], []), label="none yet"),
                         hv.Curve(([], []), label="no line yet")])
    plot = hv.render(presented(figure, on), backend="bokeh")
    (legend,) = plot.legend
    rows = {item.label.value: [np.asarray(r.data_source.data["x"], dtype=float) for r in item.renderers]
            for item in legend.items}
    assert [len(x) for x in rows["data"]] == [2]
    assert all(len(x) == 1 and np.isnan(x).all() for x in rows["none yet"] + rows["no line yet"])
