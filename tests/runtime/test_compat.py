"""The workarounds of :mod:`explorer.runtime.compat`: per workaround, the upstream behaviour it works around (a test that fails
when upstream changes: the workaround is then deleted), and what the workaround does instead; the tested versions
agree with ``pyproject.toml``'s bounds and a version outside them gets no workaround."""
from __future__ import annotations

import gc
import inspect
import logging
import re
import sys
import threading
import weakref
from pathlib import Path
from types import SimpleNamespace

import pytest

pn = pytest.importorskip("panel")

import panel.io.notebook as panel_notebook  # noqa: E402
from bokeh.document import Document  # noqa: E402
from bokeh.models import Div, ImportedStyleSheet  # noqa: E402
from panel.io.resources import CDN_DIST  # noqa: E402
from panel.io.state import set_curdoc  # noqa: E402
from panel.links import Callback  # noqa: E402
from panel.viewable import MimeRenderMixin  # noqa: E402

from explorer.runtime import compat  # noqa: E402
from explorer.runtime.sessions import NOTEBOOK_LOCK, release_session_links  # noqa: E402
from explorer.views.notebook import extension  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------- tested versions


def _upper_bounds() -> dict[str, tuple[int, ...]]:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    bounds = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        if match := re.fullmatch(r"([a-z]+)>=([\d.]+),<([\d.]+)", requirement):
            name, low, high = match.groups()
            bounds[name] = (tuple(map(int, low.split("."))), tuple(map(int, high.split("."))))
    return bounds


def test_the_tested_ranges_are_pyprojects_bounds_and_hold_the_installed_versions():
    bounds = _upper_bounds()
    for package, (low, high) in compat.TESTED.items():
        assert bounds[package] == (low, high), package
        assert compat.tested(package), package


def test_every_dependency_of_the_ui_and_the_engine_has_an_upper_bound():
    assert {"bokeh", "panel", "holoviews", "param", "dask", "distributed", "tornado"} <= set(_upper_bounds())


def test_a_version_outside_the_tested_range_gets_no_workaround(monkeypatch, caplog):
    upstream = inspect.unwrap(panel_notebook.diff)
    monkeypatch.setattr(panel_notebook, "diff", upstream)  # as before any workaround (restored after the test)
    monkeypatch.setitem(compat.TESTED, "bokeh", ((0,), (1,)))
    with caplog.at_level(logging.WARNING, logger="explorer.runtime.compat"):
        compat.inline_notebook_stylesheets()
    assert panel_notebook.diff is upstream
    assert "outside the range" in caplog.text and "tests/runtime/test_compat.py" in caplog.text


@pytest.mark.parametrize(("text", "numbers"), [("3.9.2", (3, 9, 2)), ("1.10.0rc1", (1, 10, 0)),
                                               ("2026.8.0", (2026, 8, 0))])
def test_versions_are_read_as_numbers(text, numbers):
    assert compat._numbers(text) == numbers


# ------------------------------------------------------------------------------------------- Panel: widget links


def _registered_slider():
    slider = pn.widgets.EditableFloatSlider(start=0, end=1, value=0.5)
    return slider, weakref.ref(slider)


def test_panels_link_registry_still_keeps_a_widget_alive():
    """Upstream: an ``EditableFloatSlider``'s entry in Panel's registry (weakly keyed by the widget) refers back to
    its key, so the widget never dies. When this fails, delete ``release_links_by_session``."""
    before = set(map(id, Callback.registry))
    slider, ref = _registered_slider()
    new = [key for key in Callback.registry if id(key) not in before]  # its text box, linked to its slider
    assert len(new) == 1
    del slider
    gc.collect()
    assert ref() is not None  # kept by the registry's own entry
    Callback.registry.pop(new.pop())
    gc.collect()
    assert ref() is None  # nothing else held it


def test_a_sessions_links_go_with_the_session():
    assert isinstance(Callback.registry, compat.SessionLinks)  # installed by the views (session.py)
    compat.release_links_by_session()  # again: nothing changes
    registry = Callback.registry
    compat.release_links_by_session()
    assert Callback.registry is registry
    doc = Document()
    with set_curdoc(doc):
        slider, ref = _registered_slider()
    other, other_ref = _registered_slider()  # made by no session: kept
    del slider
    assert release_session_links(doc) == 1 and release_session_links(doc) == 0
    gc.collect()
    assert ref() is None and other_ref() is other


# ------------------------------------------------------------------------------------------- Panel in a notebook


class _InterleavingComm:
    """A comm that records which thread sent each part; the first thread's first part waits until the second
    thread has sent (at most 2 s)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.second_sent = threading.Event()

    def send(self, data=None, buffers=None) -> None:
        name = threading.current_thread().name
        self.parts.append(name)
        if name == "second":
            self.second_sent.set()
        elif len(self.parts) == 1:
            self.second_sent.wait(2)


def _sent_parts(send) -> list[str]:
    comm = _InterleavingComm()
    message = SimpleNamespace(header_json="{}", metadata_json="{}", content_json="{}", buffers=[])
    first = threading.Thread(target=send, args=(comm, message), name="first")
    second = threading.Thread(target=send, args=(comm, message), name="second")
    first.start()
    while not comm.parts:
        threading.Event().wait(0.01)
    second.start()
    first.join(10)
    second.join(10)
    return comm.parts


def test_panels_notebook_send_still_lets_two_threads_interleave_their_messages():
    """Upstream: Panel's ``send`` writes a message as several comm messages and takes no lock, so two threads (the
    kernel's, and the subshell JupyterLab 4.4 hands comm messages to) interleave them; its comm handler takes no
    lock either. When this fails, delete ``serialize_notebook_comms`` and ``hold_while_cells_run``."""
    extension()
    assert inspect.unwrap(panel_notebook.send) is panel_notebook.send  # not replaced: who sends holds the lock
    parts = _sent_parts(panel_notebook.send)
    assert parts[:2] == ["first", "second"], parts  # the second message went between the first's parts
    handler = inspect.unwrap(MimeRenderMixin._on_msg)
    assert list(inspect.signature(handler).parameters) == ["self", "ref", "manager", "msg"]
    assert "lock" not in inspect.getsource(handler)


def test_panels_comm_handler_waits_for_the_notebook_lock():
    extension()
    extension()  # once: not wrapped twice
    handler = MimeRenderMixin._on_msg
    assert handler.serialized and inspect.unwrap(handler) is handler.__wrapped__
    handled = threading.Event()

    def message_from_the_browser() -> None:  # on a subshell's thread; an unknown output: Panel's KeyError
        with pytest.raises(KeyError):
            handler(SimpleNamespace(), "no-such-output", None, {})
        handled.set()

    with NOTEBOOK_LOCK:  # a job update, or a cell, on the kernel's thread
        subshell = threading.Thread(target=message_from_the_browser)
        subshell.start()
        assert not handled.wait(0.5)  # Panel's handler has not run
    assert handled.wait(10)  # it runs once the lock is free
    subshell.join(10)


def _update_adding_a_stylesheet():
    """A document the browser has, and a held update that adds a stylesheet under Panel's CDN address."""
    doc, div = Document(), Div(text="a")
    doc.add_root(div)
    doc.models.flush_synced()
    doc.hold()
    div.stylesheets = [ImportedStyleSheet(url=f"{CDN_DIST}css/loading.css")]
    return doc


def test_panels_notebook_updates_still_name_its_cdn():
    """Upstream: Panel's ``diff`` (the last step before the comm) sends a new model's stylesheet with its CDN address
    as it is. When this fails, check whether ``inline_notebook_stylesheets`` is still needed (the browser tests of the
    notebooks, offline)."""
    extension()
    message = inspect.unwrap(panel_notebook.diff)(_update_adding_a_stylesheet(), binary=False)
    assert CDN_DIST in message.content_json and "data:text/css" not in message.content_json


def test_notebook_updates_carry_panels_stylesheets_inline():
    extension()
    doc = _update_adding_a_stylesheet()
    message = panel_notebook.diff(doc, binary=False)
    assert f"{CDN_DIST}css/loading.css" not in message.content_json
    assert "data:text/css;base64," in message.content_json
    # the message changed, not the model: its address stays (an address Panel has no file for stays too)
    sheet = next(model for model in doc.models if isinstance(model, ImportedStyleSheet))
    assert sheet.url == f"{CDN_DIST}css/loading.css"
    content = {"events": [{"new": [{"type": "object", "name": "ImportedStyleSheet", "id": "p1",
                                    "attributes": {"url": f"{CDN_DIST}css/no-such-file.css"}}]}]}
    assert compat.inline_stylesheets(content) == 0
