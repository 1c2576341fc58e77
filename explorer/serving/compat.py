"""Workarounds of upstream problems: the one module of ``explorer`` that replaces a third party's attribute at run time.

Everything else uses Panel, Bokeh, Tornado and Dask through their public API and settings (the server's keep-alive
pings, for instance, are Tornado's ``websocket_ping_interval`` instead of Bokeh's job; a write to a page that closed
is quieted by the event loop's exception handler; Dask's records of a finished job are forgotten only once every
worker has sent its metrics, :func:`explorer.serving.engine.forget_finished_spans`). What is left here has no public setting
yet:

=====================================  ===========================================  ==============================
workaround (function)                  upstream problem                             tested with (:data:`TESTED`)
=====================================  ===========================================  ==============================
:func:`release_links_by_session`       Panel's ``Callback.registry`` keeps every    panel 1.9
                                       widget with a JavaScript link for good
:func:`serialize_notebook_comms`       JupyterLab ≥ 4.4 sends comm messages to a    panel 1.9, ipykernel 7.4
                                       kernel subshell (jupyterlab#17363); Panel's
                                       comm handler is not thread-safe
:func:`inline_notebook_stylesheets`    Panel inlines the stylesheets of a notebook  panel 1.9
                                       output when first shown, but not those of
                                       every model built for a later update
:func:`load_only_bundles`              Bokeh's server has no setting for the        bokeh 3.9
                                       BokehJS bundles of a page (panel#2796,
                                       bokeh#13101)
=====================================  ===========================================  ==============================

Each function installs its workaround once (calling it again changes nothing) and only where the installed version
lies in the tested range (:data:`TESTED`, the upper bounds of ``pyproject.toml``); elsewhere it installs nothing and
logs a warning, so that a new release is tested before a workaround is applied to it. ``tests/serving/test_compat.py`` has,
per workaround, a test of the upstream behaviour it works around that fails when upstream changes: then the
workaround is deleted.

The third-party libraries are imported inside the functions: importing this module loads none of them (it is no part
of the compute core, but the layer test imports every top-level module alone).
"""

from __future__ import annotations

import base64
import logging
import re
import weakref
from functools import cache, wraps
from importlib import metadata

__all__ = ["TESTED", "tested", "SessionLinks", "release_links_by_session", "serialize_notebook_comms",
           "inline_notebook_stylesheets", "load_only_bundles"]

log = logging.getLogger(__name__)

#: The versions each workaround was tested with: at least the first, below the second (the lower and upper bounds of
#: ``pyproject.toml``).
TESTED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "panel": ((1, 5), (1, 10)),
    "bokeh": ((3, 4), (3, 10)),
}


def _version(package: str) -> tuple[int, ...]:
    """The installed version of ``package`` as numbers (:func:`_numbers`); ``()`` if it is not installed."""
    try:
        return _numbers(metadata.version(package))
    except metadata.PackageNotFoundError:
        return ()


def _numbers(version: str) -> tuple[int, ...]:
    """The first three parts of ``version`` as numbers: ``"1.10.0rc1"`` → ``(1, 10, 0)``."""
    return tuple(int(match.group()) for part in version.split(".")[:3] if (match := re.match(r"\d+", part)))


def tested(package: str) -> bool:
    """Whether the installed ``package`` lies in its tested range (:data:`TESTED`); logs a warning when not."""
    low, high = TESTED[package]
    version = _version(package)
    if low <= version < high:
        return True
    log.warning("%s %s is outside the range the explorer's workaround of it was tested with (>= %s, < %s): the "
                "workaround is not installed. Install a tested version, or test this one (tests/serving/test_compat.py).",
                package, ".".join(map(str, version)) or "(not found)", ".".join(map(str, low)),
                ".".join(map(str, high)))
    return False


# ----------------------------------------------------------------------------------------- Panel: widget links


class SessionLinks(weakref.WeakKeyDictionary):
    """Panel's registry of the JavaScript links and callbacks of widgets (``panel.links.Callback.registry``) that also
    remembers the served document for which each widget registered one, so that
    :func:`explorer.serving.sessions.release_session_links` can drop a session's entries when it ends.

    Panel keys that registry weakly by the widget, but an entry's value holds the widget's other parts: an
    ``EditableFloatSlider`` registers its text box with ``args={'slider': its slider}``, the slider's watcher holds
    the ``EditableFloatSlider``, which holds the text box. The key never dies, and through the widgets' watchers the
    session's states, views and figures stayed in the server for good (about 5 MB per page closed in the soak).
    """

    def __init__(self, entries=()):
        self.documents: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # widget → weakref to its document
        super().__init__(entries)

    def __setitem__(self, source, links) -> None:
        import panel as pn

        doc = pn.state.curdoc
        if doc is not None:  # a served session's, or one the server draws without a browser (the warm-up's)
            self.documents[source] = weakref.ref(doc)
        super().__setitem__(source, links)

    def release(self, doc) -> int:
        """Drop the entries registered for ``doc``; return how many."""
        sources = [source for source, owner in list(self.documents.items()) if owner() in (doc, None)]
        for source in sources:
            self.pop(source, None)
            self.documents.pop(source, None)
        return len(sources)


def release_links_by_session() -> None:
    """Make Panel's registry of widget links a :class:`SessionLinks` (once per process, before any session starts;
    the links registered before, by no served session, are kept as they were).

    Upstream: Panel 1.5-1.9 (``panel/links.py``, ``Callback.registry``); no upstream issue names this cycle yet (the
    memory of ended sessions is holoviz/panel#8189). ``tests/serving/test_compat.py`` checks that an entry of Panel's own
    registry still keeps its widget alive.
    """
    from panel.links import Callback

    if isinstance(Callback.registry, SessionLinks) or not tested("panel"):
        return
    Callback.registry = SessionLinks(Callback.registry)


# ----------------------------------------------------------------------------------------- Panel in a notebook


def serialize_notebook_comms(lock) -> None:
    """Run Panel's comm handler (``MimeRenderMixin._on_msg``) and its notebook ``send`` holding ``lock``.

    JupyterLab 4.4 with ipykernel 7 hands comm messages (a widget the student moved) to a kernel *subshell*, a thread
    of its own (jupyterlab/jupyterlab#17363), while job updates apply on the kernel's main thread: without the lock
    Panel changed one document from two threads and the parts of two messages interleaved on the comm ("s is not
    iterable" in the browser's ``_apply_json_patch``, updates lost). Panel 1.5-1.9; ``tests/serving/test_compat.py`` checks
    that Panel's handler still takes no lock of its own.
    """
    import panel.io.notebook as panel_notebook
    from panel.viewable import MimeRenderMixin

    if getattr(panel_notebook.send, "serialized", False) or not tested("panel"):
        return
    MimeRenderMixin._on_msg = _holding(lock, MimeRenderMixin._on_msg)
    panel_notebook.send = _holding(lock, panel_notebook.send)


def _holding(lock, function):
    """``function`` run holding ``lock`` (one thread at a time)."""

    @wraps(function)
    def serialized(*args, **kwargs):
        with lock:
            return function(*args, **kwargs)

    serialized.serialized = True
    return serialized


def inline_notebook_stylesheets() -> None:
    """Before Panel's notebook ``diff(doc, ...)`` makes the message of an update, turn the CDN addresses of the
    stylesheets the browser does not know yet into ``data:`` URLs of Panel's own files (:func:`_data_url`).

    Panel inlines the stylesheets of a notebook output when it is first shown (``patch_inline_stylesheets``; in an
    update only those of a Panel layout's changed children), not those of every model built for a later update (a
    tab opened for the first time, a new dataset: ``tests/browser/test_notebooks.py`` saw their CDN addresses): without
    internet those parts were unstyled. No upstream issue found. Panel 1.5-1.9; ``tests/serving/test_compat.py`` checks that
    Panel's ``diff`` still sends a new model's CDN address as it is.
    """
    import panel.io.notebook as panel_notebook

    if getattr(panel_notebook.diff, "inlines_stylesheets", False) or not tested("panel"):
        return
    panel_notebook.diff = _inlining(panel_notebook.diff)


def _inlining(diff):
    from bokeh.models import ImportedStyleSheet
    from panel.io.resources import CDN_DIST

    @wraps(diff)
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
    from bokeh.core.has_props import HasProps

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
    from panel.io.resources import CDN_DIST, DIST_DIR

    path = DIST_DIR / url[len(CDN_DIST):].split("?")[0]
    if not path.is_file():
        return url
    return "data:text/css;base64," + base64.b64encode(path.read_bytes()).decode()


# ----------------------------------------------------------------------------------------- Bokeh: page bundles


def load_only_bundles(server, bundles) -> None:
    """Pages of the Panel/Bokeh ``server`` load the BokehJS bundles named in ``bundles`` only.

    Bokeh's server application (``server._tornado``, a ``BokehTornado``) makes the resources of every page with all
    five bundles, and has no setting to choose them (bokeh/bokeh#13101; Panel drops MathJax only from a page without
    a Markdown pane, holoviz/panel#2796). Bokeh 3.4-3.9; ``tests/serving/test_compat.py`` checks that Bokeh's server still
    sends all five.
    """
    application = server._tornado
    if getattr(application.resources, "bundles", None) is not None or not tested("bokeh"):
        return
    resources = application.resources

    def needed_bundles(absolute_url=None):
        every = resources(absolute_url)
        return every.clone(components=[c for c in every.components if c in bundles])

    needed_bundles.bundles = tuple(bundles)
    application.resources = needed_bundles
