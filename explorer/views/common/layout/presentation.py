"""Presentation mode for a projector: larger text, ticks and thicker lines in the figures (HoloViews options),
larger text in the rest of the page and the sidebar folded away (a CSS class on the document's body and the
template's sidebar button, switched in the browser).

The header switch of the app (:func:`presentation_switch`) sets the class at once in the browser and the tabs'
``presentation`` parameter on the server; each tab then redraws its figures through :func:`presented`.

The page's CSS (:data:`PRESENTATION_CSS`) also sets the height of a tab's main figure,
``--explorer-figure-height``: the screen's height less the header, the tab bar and the one line of Run, Cancel and
progress under the figure, so that the figure fills the first screen at 1280×720 as at 1920×1080; and the size of
the tab bar's titles, ``--explorer-tab-font-size`` and ``--explorer-tab-padding-x``, that :data:`TAB_BAR_CSS` gives the
app's tabs, so that every page's title stays on one line in the first screen in both modes.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn

from explorer.views.common.drawing.figure_style import SIZES, legend_options, text_hook

__all__ = ["presented", "presentation_switch", "axis_text", "PRESENTATION_CSS", "TAB_BAR_CSS", "FONT_SCALE",
           "LINE_SCALE", "FONT_SIZES", "FIGURE_HEIGHT"]

#: Text of a figure in presentation mode that has no size of its own (e.g. ``hv.Labels``), relative to the normal size.
FONT_SCALE = 1.6
#: The text sizes (pt) of a figure in presentation mode, by HoloViews ``fontsize`` key
#: (:data:`~explorer.views.common.drawing.figure_style.SIZES`, where the normal mode's are).
FONT_SIZES = SIZES[True]
#: The height of a tab's main figure (the page's CSS sets ``--explorer-figure-height``; 460 px without it, e.g. in a
#: notebook).
FIGURE_HEIGHT = "var(--explorer-figure-height, 460px)"
#: Line widths of a figure in presentation mode, relative to the normal width.
LINE_SCALE = 2.0
#: Elements whose line width the presentation mode scales.
_LINES = (hv.Curve, hv.Path, hv.Segments, hv.ErrorBars, hv.VLine, hv.HLine, hv.Histogram, hv.Spread)

#: The page's text in presentation mode: the body class ``explorer-presentation`` enlarges the base font and
#: the FAST design's type ramp (custom properties inherit into the components' shadow roots).
#:
#: The tab bar's titles (:data:`TAB_BAR_CSS`): the eight titles take 762 px of text at the FAST design's 14 px and
#: 1034 px at presentation's 19 px, with 32 px of padding each; the bar has 871 px at 1280×720 beside the sidebar
#: and 1210 px with the sidebar folded (presentation). At 13 px with 16 px of padding they take about 836 px, at
#: 18 px with 20 px about 1140 px: each on one line, with room to spare for a wider font than Chromium's. A screen of
#: 1600 px or more keeps the design's padding and the text size of the rest of the page.
PRESENTATION_CSS = """
body {
  --explorer-figure-height: max(320px, calc(100vh - 215px));
  --explorer-tab-font-size: 13px;
  --explorer-tab-padding-x: 8px;
}
body.explorer-presentation {
  --explorer-figure-height: max(320px, calc(100vh - 235px));
  --explorer-tab-font-size: 18px;
  --explorer-tab-padding-x: 10px;
  font-size: 20px;
  --type-ramp-base-font-size: 19px;
  --type-ramp-base-line-height: 26px;
  --type-ramp-minus-1-font-size: 17px;
  --type-ramp-plus-1-font-size: 22px;
  --type-ramp-plus-2-font-size: 26px;
}
@media (min-width: 1600px) {
  body { --explorer-tab-font-size: 14px; --explorer-tab-padding-x: 1rem; }
  body.explorer-presentation { --explorer-tab-font-size: 19px; --explorer-tab-padding-x: 1rem; }
}
"""

#: The stylesheet of the app's tab bar (a ``pn.Tabs`` with the CSS class ``explorer-tabs``; Bokeh draws its titles in
#: the tabs' shadow root, which the page's CSS does not reach): the titles' size and side padding from the page's
#: custom properties (:data:`PRESENTATION_CSS`; the FAST design's 14 px and 1 rem without them).
TAB_BAR_CSS = """
:host(.explorer-tabs) .bk-header {
  --pn-tab-padding-x: var(--explorer-tab-padding-x, 1rem);
}
:host(.explorer-tabs) .bk-header .bk-tab {
  font-size: var(--explorer-tab-font-size, inherit);
}
"""


#: Elements of one row per point: one without data is given a row of NaN, drawn as nothing, so that its legend entry
#: keeps its glyph (BokehJS draws an entry's glyph from a row of its renderer's source, none from an empty one: e.g.
#: the SVM curve's "theory − MC > 3 s.e." before any gap, Monte-Carlo before a run).
_ROWS = (hv.Curve, hv.Scatter, hv.Points)


def presented(figure, on: bool):
    """``figure`` (an element, overlay or layout) with the text sizes and legend layout of presentation mode (``on``)
    or of normal mode (:mod:`~explorer.views.common.drawing.figure_style`), given explicitly in both modes so that the
    document's theme never decides them; in presentation mode also other text scaled by ``FONT_SCALE`` and the lines
    by ``LINE_SCALE``. The options are set in place (figures are built anew for every draw). An overlay's own
    ``legend_opts`` (e.g. ``click_policy``) are kept; their label size and layout give way to the mode's. A labelled
    curve or scatter without data gets one row of NaN (:data:`_ROWS`)."""
    scale = FONT_SCALE if on else 1.0
    # HoloViews multiplies the sizes given by ``fontscale``: give them divided by it
    sizes = {key: f"{size / scale:.4g}pt" for key, size in SIZES[on].items()}

    def style(element):
        if on and isinstance(element, _LINES):
            width = hv.Store.lookup_options("bokeh", element, "style").kwargs.get("line_width", 1)
            element = element.opts(line_width=LINE_SCALE * width)
        if isinstance(element, hv.Overlay):
            legend = element.opts.get("plot").kwargs.get("legend_opts") or {}
            element = element.opts(legend_opts={**legend, **legend_options(on)})
        elif isinstance(element, _ROWS) and element.label and not len(element):
            element = element.clone({d.name: np.full(1, np.nan) for d in element.dimensions()})
        return element.opts(fontscale=scale, fontsize=sizes)

    return figure.map(style, [hv.Overlay, hv.Element])


#: The switch's code in the browser: the body class, and the sidebar through the FAST templates' closeNav/openNav.
_SWITCH_JS = """
document.body.classList.toggle('explorer-presentation', cb_obj.active);
const fold = cb_obj.active ? window.closeNav : window.openNav;
if (typeof fold === 'function' && document.getElementById('sidebar')) { fold(); }
"""


def axis_text(on: bool):
    """A HoloViews hook that sets the text of the drawn plot (title, axes, colour bar, legends) to the sizes of
    presentation mode (``on``) or normal mode, on its first drawing and on every redraw
    (:func:`~explorer.views.common.drawing.figure_style.text_hook`)."""
    return text_hook(on)


def presentation_switch() -> pn.widgets.Toggle:
    """The header switch: toggles the body class ``explorer-presentation`` in the browser at once (the page's
    CSS needs :data:`PRESENTATION_CSS`) and folds the sidebar away (unfolds it when switched off) with the
    template's own sidebar button, which still opens it; watch its ``value`` to redraw the figures."""
    toggle = pn.widgets.Toggle(name="Presentation", value=False, button_type="light", width=130, align="center",
                               css_classes=["explorer-presentation-switch"])
    toggle.jscallback(value=_SWITCH_JS)
    return toggle
