"""Presentation mode for a projector: larger fonts and thicker lines in the figures (HoloViews options) and
larger text in the rest of the page (a CSS class on the document's body, switched in the browser).

The header switch of the app (:func:`presentation_switch`) sets the class at once in the browser and the tabs'
``presentation`` parameter on the server; each tab then redraws its figures through :func:`presented`.
"""

from __future__ import annotations

import holoviews as hv
import panel as pn

__all__ = ["presented", "presentation_switch", "PRESENTATION_CSS", "FONT_SCALE", "LINE_SCALE"]

#: Text of a figure in presentation mode, relative to the normal size.
FONT_SCALE = 1.6
#: Line widths of a figure in presentation mode, relative to the normal width.
LINE_SCALE = 2.0
#: Elements whose line width the presentation mode scales.
_LINES = (hv.Curve, hv.Path, hv.Segments, hv.ErrorBars, hv.VLine, hv.HLine, hv.Histogram, hv.Spread)

#: The page's text in presentation mode: the body class ``explorer-presentation`` enlarges the base font and
#: the FAST design's type ramp (custom properties inherit into the components' shadow roots).
PRESENTATION_CSS = """
body.explorer-presentation {
  font-size: 20px;
  --type-ramp-base-font-size: 19px;
  --type-ramp-base-line-height: 26px;
  --type-ramp-minus-1-font-size: 17px;
  --type-ramp-plus-1-font-size: 22px;
  --type-ramp-plus-2-font-size: 26px;
}
"""


def presented(figure, on: bool):
    """``figure`` (an element, overlay or layout) with its fonts scaled by ``FONT_SCALE`` and its lines by
    ``LINE_SCALE`` when ``on``; ``figure`` itself otherwise. The options are set in place (figures are built
    anew for every draw)."""
    if not on:
        return figure

    def style(element):
        if isinstance(element, _LINES):
            width = hv.Store.lookup_options("bokeh", element, "style").kwargs.get("line_width", 1)
            element = element.opts(line_width=LINE_SCALE * width)
        return element.opts(fontscale=FONT_SCALE)

    return figure.map(style, [hv.Overlay, hv.Element])


def presentation_switch() -> pn.widgets.Toggle:
    """The header switch: toggles the body class ``explorer-presentation`` in the browser at once (the page's
    CSS needs :data:`PRESENTATION_CSS`); watch its ``value`` to redraw the figures."""
    toggle = pn.widgets.Toggle(name="Presentation", value=False, button_type="light", width=130, align="center",
                               css_classes=["explorer-presentation-switch"])
    toggle.jscallback(value="document.body.classList.toggle('explorer-presentation', cb_obj.active)")
    return toggle
