"""Set up a Jupyter notebook for the explorer's views: offline and live.

``pn.extension()`` in a notebook loads Bokeh's and Panel's JavaScript from public CDNs, and figures shown by
HoloViews' own display hook reference Panel's stylesheets there too: without internet every output is
blank. :func:`extension` loads everything inline (the kernel sends it; an exported HTML file carries it) and
shows HoloViews figures through Panel, whose notebook output inlines its stylesheets.

Job updates of the views' states reach the notebook on the kernel's event loop
(:func:`explorer.views.common.session.default_dispatcher`); nothing here needs to be called for that.
"""

from __future__ import annotations

import holoviews as hv
import panel as pn

__all__ = ["extension"]

#: HoloViews objects that display as a figure.
_FIGURES = (hv.core.dimension.ViewableElement, hv.core.ViewableTree, hv.HoloMap)


def extension(*extensions: str) -> None:
    """Load HoloViews (Bokeh backend) and Panel with ``extensions`` (e.g. ``"tabulator"``) for this notebook,
    with all JavaScript and CSS inline: no request leaves the machine, and a notebook exported to HTML
    shows its figures offline.

    Examples
    --------
    In the first code cell of a notebook::

        from explorer.views.notebook import extension
        extension()
    """
    hv.extension("bokeh", inline=True)
    pn.extension(*extensions, inline=True)
    shell = _shell()
    if shell is not None:
        formatter = shell.display_formatter.mimebundle_formatter
        for kind in _FIGURES:
            formatter.for_type(kind, _figure_bundle)


def _figure_bundle(obj, include=None, exclude=None):
    """The notebook output of a HoloViews figure, rendered by Panel (inline stylesheets, as ``pn.panel``)."""
    return pn.pane.HoloViews(obj)._repr_mimebundle_(include, exclude)


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - a notebook always has IPython
        return None
    return get_ipython()
