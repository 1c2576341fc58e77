"""Workarounds of upstream problems: the one module of ``explorer`` that replaces a third party's attribute at run time.

Everything else uses Panel, Bokeh, Tornado and Dask through their public API and settings (the server's keep-alive
pings, for instance, are Tornado's ``websocket_ping_interval`` instead of Bokeh's job; a write to a page that closed
is quieted by the event loop's exception handler; Dask's records of a finished job are forgotten only once every
worker has sent its metrics, :func:`explorer.runtime.engine.forget_finished_spans`; the BokehJS bundles a page loads
are chosen by the page's Jinja template, :class:`explorer.app.Page`; a notebook's cells hold the lock of its comm
messages through IPython's events, :func:`explorer.runtime.sessions.hold_while_cells_run`). What is left here has no
public setting yet:

=====================================  ===========================================  ==============================
workaround (function)                  upstream problem                             tested with (:data:`TESTED`)
=====================================  ===========================================  ==============================
:func:`release_links_by_session`       Panel's ``Callback.registry`` keeps every    panel 1.9
                                       widget with a JavaScript link for good
:func:`serialize_notebook_comms`       JupyterLab ≥ 4.4 sends comm messages to a    panel 1.9, ipykernel 7.4
                                       kernel subshell (jupyterlab#17363); Panel's
                                       comm handler is not thread-safe
:func:`inline_notebook_stylesheets`    Panel inlines the stylesheets of a notebook  panel 1.9, bokeh 3.9
                                       output when first shown, but not those of
                                       every model built for a later update
:func:`handle_changes_at_once`         Panel waits 50 ms (``Reactive._debounce``)   panel 1.9
                                       before it handles a change from the
                                       browser; no public setting
:func:`drawn_plots`                    Panel's HoloViews pane keeps the plots it    panel 1.9
                                       drew (``_plots``) with no public accessor
=====================================  ===========================================  ==============================

Each function installs its workaround once (calling it again changes nothing) and only where the installed version
lies in the tested range (:data:`TESTED`, the upper bounds of ``pyproject.toml``); elsewhere it installs nothing and
logs a warning, so that a new release is tested before a workaround is applied to it. ``tests/runtime/test_compat.py`` has,
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
           "inline_notebook_stylesheets", "inline_stylesheets", "handle_changes_at_once", "drawn_plots"]

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
                "workaround is not installed. Install a tested version, or test this one (tests/runtime/test_compat.py).",
                package, ".".join(map(str, version)) or "(not found)", ".".join(map(str, low)),
                ".".join(map(str, high)))
    return False


# ----------------------------------------------------------------------------------------- Panel: widget links


class SessionLinks(weakref.WeakKeyDictionary):
    """Panel's registry of the JavaScript links and callbacks of widgets (``panel.links.Callback.registry``) that also
    remembers the served document for which each widget registered one, so that
    :func:`explorer.runtime.sessions.release_session_links` can drop a session's entries when it ends.

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
    memory of ended sessions is holoviz/panel#8189). ``tests/runtime/test_compat.py`` checks that an entry of Panel's own
    registry still keeps its widget alive.
    """
    from panel.links import Callback

    if isinstance(Callback.registry, SessionLinks) or not tested("panel"):
        return
    Callback.registry = SessionLinks(Callback.registry)


# ----------------------------------------------------------------------------------------- Panel: widgets and panes


#: The parts of Panel's composite widgets that receive the browser's changes (an ``EditableFloatSlider``'s slider and
#: text box; Panel 1.5-1.9).
_WIDGET_PARTS = ("_slider", "_value_edit")


def handle_changes_at_once(widget):
    """``widget`` (and the parts of a composite widget), whose changes in the browser reach the server's callbacks at
    once; returns ``widget``.

    Panel waits 50 ms (the class variable ``Reactive._debounce``) before it handles a change from the browser, to
    gather the changes that follow; the properties of one message (a slider's ``value`` and ``value_throttled``) are
    gathered all the same. For a control whose update is fast (S/N: a cached theory curve and one replica solve),
    those 50 ms are a third of the server's share of the update.

    Upstream: Panel 1.5-1.9 (``panel/reactive.py``: ``_debounce: ClassVar[int] = 50``, used by
    ``doc.add_timeout_callback``); no public setting and no upstream issue asks for one yet (holoviz/panel#8077 relies
    on change events being debounced). Outside the tested range the widget keeps Panel's wait.
    ``tests/views/common/layout/test_compat_widgets.py`` checks that Panel still waits 50 ms by default.
    """
    if not tested("panel"):
        return widget
    for part in (widget, *(getattr(widget, name, None) for name in _WIDGET_PARTS)):
        if part is not None and hasattr(part, "_debounce"):
            part._debounce = 0
    return widget


def drawn_plots(pane) -> list:
    """The HoloViews plots a Panel ``HoloViews`` pane has drawn, one per page (root) showing it; ``[]`` outside the
    tested range (a caller then draws through HoloViews instead of writing into the drawn figure).

    Upstream: Panel 1.5-1.9 keeps them in the pane's ``_plots`` (a root's id → (plot, pane)) and has no public
    accessor (Panel's own linking code reads ``_plots`` too); no upstream issue asks for one yet.
    ``tests/views/common/drawing/test_patching.py`` notices a change (a patched figure would be redrawn instead).
    """
    if not tested("panel"):
        return []
    return [plot for plot, _ in getattr(pane, "_plots", {}).values()]


# ----------------------------------------------------------------------------------------- Panel in a notebook


def serialize_notebook_comms(lock) -> None:
    """Run Panel's comm handler (``MimeRenderMixin._on_msg``: a message of the browser, e.g. a widget the student
    moved) holding ``lock``.

    JupyterLab 4.4 with ipykernel 7 hands comm messages to a kernel *subshell*, a thread of its own
    (jupyterlab/jupyterlab#17363), while job updates and the cells run on the kernel's main thread: without the lock
    Panel changed one document from two threads and the parts of two messages interleaved on the comm ("s is not
    iterable" in the browser's ``_apply_json_patch``, updates lost). Job updates and cells hold the same lock by
    public means (:class:`explorer.runtime.sessions.kernel_dispatcher`,
    :func:`explorer.runtime.sessions.hold_while_cells_run`); Panel's handler is the one place where the lock must go
    round a third party's code. Panel 1.5-1.9; ``tests/runtime/test_compat.py`` checks that Panel's handler still
    takes no lock of its own and its ``send`` still lets two threads interleave a message's parts.
    """
    from panel.viewable import MimeRenderMixin

    if getattr(MimeRenderMixin._on_msg, "serialized", False) or not tested("panel"):
        return
    MimeRenderMixin._on_msg = _holding(lock, MimeRenderMixin._on_msg)


def _holding(lock, function):
    """``function`` run holding ``lock`` (one thread at a time)."""

    @wraps(function)
    def serialized(*args, **kwargs):
        with lock:
            return function(*args, **kwargs)

    serialized.serialized = True
    return serialized


def inline_notebook_stylesheets() -> None:
    """After Panel's notebook ``diff(doc, ...)`` has made the message of an update, turn the CDN addresses of the
    stylesheets it sends into ``data:`` URLs of Panel's own files (:func:`_data_url`).

    Panel inlines the stylesheets of a notebook output when it is first shown (``patch_inline_stylesheets``; in an
    update only those of a Panel layout's changed children), not those of every model built for a later update (a
    tab opened for the first time, a new dataset: ``tests/browser/test_notebooks.py`` saw their CDN addresses): without
    internet those parts were unstyled. No upstream issue found. The message's content (Bokeh's ``Message.content``,
    plain dicts and lists) is changed before it is sent; the models keep their addresses, and a model the browser
    has already got is sent by reference only, so that what the browser holds never changes behind its back.
    Panel 1.5-1.9, Bokeh 3.4-3.9; ``tests/runtime/test_compat.py`` checks that Panel's ``diff`` still sends a new
    model's CDN address as it is, and how Bokeh encodes a stylesheet in a message.
    """
    import panel.io.notebook as panel_notebook

    if getattr(panel_notebook.diff, "inlines_stylesheets", False) or not (tested("panel") and tested("bokeh")):
        return
    panel_notebook.diff = _inlining(panel_notebook.diff)


def _inlining(diff):
    @wraps(diff)
    def inlined_diff(doc, *args, **kwargs):
        message = diff(doc, *args, **kwargs)
        if message is not None:
            inline_stylesheets(message.content)
        return message

    inlined_diff.inlines_stylesheets = True
    return inlined_diff


def inline_stylesheets(content) -> int:
    """Replace, in ``content`` (a Bokeh message's content: dicts and lists), the address of every stylesheet model
    (``{"type": "object", "name": "ImportedStyleSheet", "attributes": {"url": ...}}``) under Panel's CDN address by
    a ``data:`` URL of Panel's own file (:func:`_data_url`); return how many were replaced."""
    from panel.io.resources import CDN_DIST

    replaced, stack = 0, [content]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            attributes = item.get("attributes")
            if item.get("name") == "ImportedStyleSheet" and isinstance(attributes, dict):
                url = attributes.get("url")
                if isinstance(url, str) and url.startswith(CDN_DIST) and (inline := _data_url(url)) != url:
                    attributes["url"], replaced = inline, replaced + 1
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return replaced


@cache
def _data_url(url: str) -> str:
    """``url`` (a file under Panel's CDN address) as a ``data:`` URL of the same file shipped with Panel; ``url``
    itself when Panel has no such file."""
    from panel.io.resources import CDN_DIST, DIST_DIR

    path = DIST_DIR / url[len(CDN_DIST):].split("?")[0]
    if not path.is_file():
        return url
    return "data:text/css;base64," + base64.b64encode(path.read_bytes()).decode()
