"""Set up a Jupyter notebook for the explorer's views: offline and live.

``pn.extension()`` in a notebook loads Bokeh's and Panel's JavaScript from public CDNs, and figures shown by
HoloViews' own display hook reference Panel's stylesheets there too: without internet every output is
blank. :func:`extension` loads everything inline (the kernel sends it; an exported HTML file carries it) and
shows HoloViews figures through Panel, whose notebook output inlines its stylesheets. Models that Panel builds
for a later update (a tab opened for the first time, a new dataset) name Panel's stylesheets on its CDN; every
update the kernel sends to the notebook turns those addresses into ``data:`` URLs of Panel's own files first
(:func:`explorer.runtime.compat.inline_notebook_stylesheets`).

A number typed into an embedded input is applied when Enter is pressed, as in the served app (Chromium does
not commit a text input in a Bokeh widget's shadow root inside a JupyterLab cell on Enter, only on blur).

Job updates of the views' states reach the notebook on the kernel's event loop
(:func:`explorer.runtime.sessions.default_dispatcher`); JupyterLab hands widget messages to a kernel
subshell (another thread), so Panel's comm handler and every cell run holding the same lock as those updates
(:data:`~explorer.runtime.sessions.NOTEBOOK_LOCK`, :func:`explorer.runtime.compat.serialize_notebook_comms`,
:func:`explorer.runtime.sessions.hold_while_cells_run`).
"""

from __future__ import annotations

import holoviews as hv
import panel as pn

from explorer.runtime.compat import inline_notebook_stylesheets, serialize_notebook_comms
from explorer.runtime.sessions import NOTEBOOK_LOCK, hold_while_cells_run

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
    inline_notebook_stylesheets()
    serialize_notebook_comms(NOTEBOOK_LOCK)  # comm messages: see NOTEBOOK_LOCK
    shell = _shell()
    if shell is not None:
        hold_while_cells_run(shell, NOTEBOOK_LOCK)
        formatter = shell.display_formatter.mimebundle_formatter
        for kind in _FIGURES:
            formatter.for_type(kind, _figure_bundle)
        from IPython.display import display

        display({"application/javascript": ENTER_COMMITS}, raw=True)


#: JavaScript run once per page: Enter in a text input of a Bokeh widget (in a shadow root) commits it with a
#: ``change`` event, which Bokeh's inputs listen to. Where the browser already sent one, Bokeh sees the same
#: value again and sends nothing.
ENTER_COMMITS = """
if (!window.explorerEnterCommits) {
  window.explorerEnterCommits = true;
  document.addEventListener("keydown", (event) => {
    const input = event.composedPath()[0];
    if (event.key === "Enter" && input instanceof HTMLInputElement && input.getRootNode() !== document) {
      setTimeout(() => input.dispatchEvent(new Event("change")), 0);
    }
  }, true);
}
"""


def _figure_bundle(obj, include=None, exclude=None):
    """The notebook output of a HoloViews figure, rendered by Panel (inline stylesheets, as ``pn.panel``)."""
    return pn.pane.HoloViews(obj)._repr_mimebundle_(include, exclude)


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - a notebook always has IPython
        return None
    return get_ipython()
