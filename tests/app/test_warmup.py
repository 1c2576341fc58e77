"""The server's warm-up: it computes what it is given into the caches the sessions share (a session then shows it
from the cache at once), waits while a session is open, and says so in the sidebar."""
import asyncio
import gc
import threading
import time
import weakref

import pytest

pn = pytest.importorskip("panel")

from explorer.app.warmup import WarmUp, draw_every_tab, on_loop, page_states, warm_up_note  # noqa: E402
from explorer.runtime.caches import clear_caches, registry  # noqa: E402
from explorer.views.common.layout.page import PageContext  # noqa: E402
from explorer.views.common.state.presets import apply_preset  # noqa: E402
from explorer.views.pages import preset  # noqa: E402


def test_a_preset_the_warm_up_computed_shows_from_the_cache_at_once(dask_engine):
    clear_caches()
    p = preset("001-exp10")
    warm = WarmUp(PageContext(engine=dask_engine), presets=(p,), default_views=False)
    assert warm.total == 1 and "0 of 1 views ready" in warm.text()
    warm.run()
    assert warm.finished and warm.done == 1 and warm.text() == "" and warm.seconds[p.name] > 0
    held = registry.nbytes
    assert held > 0 and registry.drop_unkept() == 0 and registry.nbytes == held  # kept when the server is idle
    _, states = page_states(PageContext(engine=dask_engine))  # a session opening the preset afterwards
    try:
        apply_preset(p, states)
        for prefix in p.settings:
            states[prefix].refresh()
        experiment = states["selx_"].jobs["experiment"]
        assert experiment.message == "done (cached)" and not experiment.running  # no job: the warm-up's result
    finally:
        for state in states.values():
            state.close()
        clear_caches()


def test_the_warm_up_waits_while_a_session_is_open_and_stops_when_asked(dask_engine):
    warm = WarmUp(PageContext(engine=dask_engine), busy=lambda: True, presets=(preset("001-exp10"),),
                  default_views=False)
    thread = threading.Thread(target=warm.run)
    thread.start()
    time.sleep(0.5)
    assert warm.done == 0 and warm.current == "" and not warm.finished  # a class is on: nothing computed
    note = warm_up_note(warm)
    assert note.visible and "still warming up (0 of 1 views ready)" in note.object
    # no emoji or pictograph (a browser without an emoji font draws a missing-glyph box): Latin text and punctuation
    assert all(ord(char) < 0x2100 for char in note.object), note.object
    warm.stop()
    thread.join(timeout=30)
    assert warm.finished and warm.done == 0
    assert not warm_up_note(None).visible


def test_a_preset_this_server_cannot_open_is_skipped_without_a_traceback(dask_engine, caplog):
    # the Santa Fe presets need a file of the server's --data-dir: without one a session is told so, and the
    # warm-up goes on (the soak counts tracebacks in the server's log)
    warm = WarmUp(PageContext(engine=dask_engine), presets=(preset("002-t2-lssvm"),), default_views=False)
    with caplog.at_level("INFO", logger="explorer.app.warmup"):
        warm.run()
    assert warm.finished and warm.done == 1
    assert [r.levelname for r in caplog.records] == ["INFO", "INFO"] and "skipped" in caplog.records[0].getMessage()
    assert caplog.records[1].getMessage().startswith("warm-up: finished, 1 of 1 items in ")  # bench_soak waits for it


def test_the_pages_a_warm_up_item_built_are_let_go_with_it(dask_engine, monkeypatch):
    # an editable slider made outside any document registers its text box's JavaScript link in Panel's registry,
    # which then held the item's whole page for good (19 pages in a server after its warm-up)
    from explorer.app import warmup

    built = []

    def recorded(context):
        views, states = page_states(context)
        built.extend(weakref.ref(view) for view in views)
        return views, states

    monkeypatch.setattr(warmup, "page_states", recorded)
    warm = WarmUp(PageContext(engine=dask_engine), presets=(preset("000-fig2"),), default_views=False)
    warm.run()
    assert warm.finished and warm.done == 1 and built
    gp = next(ref() for ref in built if ref() is not None and ref().page.key == "gp")
    assert isinstance(gp.view.controls.widgets["s_over_n"], pn.widgets.EditableFloatSlider)  # the widget at issue
    del gp
    gc.collect()
    assert [ref() for ref in built] == [None] * len(built)
    clear_caches()


def _drawn_page(dask_engine, pages: list):
    """create_app for draw_every_tab, remembering the page it made (weakly: the draw must let it go)."""
    from explorer.app import create_app

    def make():
        page = create_app(engine=dask_engine)
        pages.append(weakref.ref(page))
        return page
    return make


def _wait_for_jobs(page) -> None:
    if page is not None:
        assert all(state.wait(60) for view in page.pages.values() for state in view.states.values())


def test_the_warm_up_draws_every_tab_once_and_lets_the_page_go(dask_engine):
    from panel.links import Callback

    pages, filled, links_before = [], [], len(Callback.registry)

    def run(step):  # as on the event loop, one step at a time; after each, which tabs hold their content
        out = step()
        if pages and pages[0]() is not None:
            filled.append([len(tab) > 0 for tab in pages[0]().tabs.objects])
        return out

    assert draw_every_tab(_drawn_page(dask_engine, pages), run, timeout=0.2)
    n = len(filled[0])
    assert n == 8 and filled[-1] == [True] * n  # every tab was built (LazyTabs builds one when first opened)
    assert all(filled[i + 1][i] for i in range(n))  # tab i holds its content once opened
    _wait_for_jobs(pages[0]())  # cancelled when the page ended: once they have stopped, nothing else may hold it
    gc.collect()
    assert pages[0]() is None  # nothing holds the page: no session's worth of memory stays behind
    assert len(Callback.registry) <= links_before  # the widgets' JavaScript links went with it


def test_a_session_opening_stops_the_drawing_between_two_tabs(dask_engine):
    pages, steps = [], []

    def run(step):
        steps.append(getattr(step, "__name__", "open_tab"))  # (the step itself would hold the page)
        return step()

    assert not draw_every_tab(_drawn_page(dask_engine, pages), run, busy=lambda: len(steps) >= 2, timeout=0.2)
    assert steps == ["make", "open_tab", "end"]  # stopped after one tab: the warm-up draws again once no session is open
    _wait_for_jobs(pages[0]())  # its jobs were cancelled: once they have stopped, nothing holds it
    gc.collect()
    assert pages[0]() is None


def test_on_loop_runs_on_the_loop_and_returns_or_raises_there():
    from tornado.ioloop import IOLoop

    ready, loops = threading.Event(), []

    def serve_loop():
        asyncio.set_event_loop(asyncio.new_event_loop())
        loops.append(IOLoop.current())
        ready.set()
        loops[0].start()

    thread = threading.Thread(target=serve_loop, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        assert on_loop(loops[0], threading.get_ident) == thread.ident
        with pytest.raises(ZeroDivisionError):
            on_loop(loops[0], lambda: 1 / 0)
        with pytest.raises(TimeoutError):
            on_loop(loops[0], lambda: time.sleep(1.0), timeout=0.1)
    finally:
        loops[0].add_callback(loops[0].stop)
        thread.join(10)
