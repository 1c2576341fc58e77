"""Set up a Jupyter notebook for the explorer's views: offline and live.

``pn.extension()`` in a notebook loads Bokeh's and Panel's JavaScript from public CDNs, and figures shown by
HoloViews' own display hook reference Panel's stylesheets there too: without internet every output is
blank. :func:`extension` loads everything inline (the kernel sends it; an exported HTML file carries it) and
shows HoloViews figures through Panel, whose notebook output inlines its stylesheets. Models that Panel builds
for a later update (a tab opened for the first time, a new dataset) name Panel's stylesheets on its CDN; every
update the kernel sends to the notebook turns those addresses into ``data:`` URLs of Panel's own files first.

A number typed into an embedded input is applied when Enter is pressed, as in the served app (Chromium does
not commit a text input in a Bokeh widget's shadow root inside a JupyterLab cell on Enter, only on blur).

Job updates of the views' states reach the notebook on the kernel's event loop
(:func:`explorer.views.common.session.default_dispatcher`); JupyterLab hands widget messages to a kernel
subshell (another thread), so Panel's comm handler and its ``send`` run holding the same lock as those updates
(:data:`~explorer.views.common.session.NOTEBOOK_LOCK`).
"""

from __future__ import annotations

import base64
from functools import cache

import holoviews as hv
import panel as pn
import panel.io.notebook as panel_notebook
from bokeh.core.has_props import HasProps
from bokeh.models import ImportedStyleSheet
from panel.io.resources import CDN_DIST, DIST_DIR
from panel.viewable import MimeRenderMixin

from explorer.views.common.session import NOTEBOOK_LOCK

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
    if not getattr(panel_notebook.diff, "inlines_stylesheets", False):
        panel_notebook.diff = _inlining(panel_notebook.diff)
    if not getattr(MimeRenderMixin._on_msg, "serialized", False):   # comm messages: see NOTEBOOK_LOCK
        MimeRenderMixin._on_msg = _serialized(MimeRenderMixin._on_msg)
    if not getattr(panel_notebook.send, "serialized", False):
        panel_notebook.send = _serialized(panel_notebook.send)
    shell = _shell()
    if shell is not None:
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


def _serialized(function):
    """``function`` run holding :data:`~explorer.views.common.session.NOTEBOOK_LOCK` (one thread at a time)."""

    def serialized(*args, **kwargs):
        with NOTEBOOK_LOCK:
            return function(*args, **kwargs)

    serialized.serialized = True
    return serialized


def _inlining(diff):
    """Panel's notebook ``diff(doc, ...)`` (the message of an update) after turning the CDN addresses of the
    stylesheets the browser does not know yet into ``data:`` URLs of Panel's files (:func:`_data_url`)."""

    def inlined_diff(doc, *args, **kwargs):
        synced = doc.models.synced_references
        for sheet in _new_models(doc.callbacks._held_events, synced):
            if isinstance(sheet, ImportedStyleSheet) and sheet.url.startswith(CDN_DIST):
                # set without a change event: the browser gets the new model whole, an event about a model
                # it does not know yet breaks the patch ("s is not iterable" in _apply_json_patch)
                sheet._property_values["url"] = _data_url(sheet.url)
        return diff(doc, *args, **kwargs)

    inlined_diff.inlines_stylesheets = True
    return inlined_diff


def _new_models(events, synced) -> set:
    """The Bokeh models the ``events`` refer to (new values and the models they reference) that are not in
    ``synced`` (those the browser has)."""
    found: set = set()
    for event in events:
        for value in (getattr(event, "new", None), getattr(event, "model", None)):
            for model in _models_in(value):
                if model not in synced:
                    found.update(m for m in model.references() if m not in synced)
    return found


def _models_in(value) -> list:
    if isinstance(value, HasProps):
        return [value]
    if isinstance(value, (list, tuple)):
        return [m for item in value for m in _models_in(item)]
    if isinstance(value, dict):
        return [m for item in value.values() for m in _models_in(item)]
    return []


@cache
def _data_url(url: str) -> str:
    """``url`` (a file under Panel's CDN address) as a ``data:`` URL of the same file shipped with Panel; ``url``
    itself when Panel has no such file."""
    path = DIST_DIR / url[len(CDN_DIST):].split("?")[0]
    if not path.is_file():
        return url
    return "data:text/css;base64," + base64.b64encode(path.read_bytes()).decode()


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - a notebook always has IPython
        return None
    return get_ipython()
