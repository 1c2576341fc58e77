"""The server's warm-up: it computes what it is given into the caches the sessions share (a session then shows it
from the cache at once), waits while a session is open, and says so in the sidebar."""
import threading
import time

import pytest

pn = pytest.importorskip("panel")

from explorer.views.common.caches import clear_caches, registry  # noqa: E402
from explorer.views.common.page import PageContext  # noqa: E402
from explorer.views.common.presets import apply_preset  # noqa: E402
from explorer.views.pages import preset  # noqa: E402
from explorer.views.warmup import WarmUp, page_states, warm_up_note  # noqa: E402


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
    warm.stop()
    thread.join(timeout=30)
    assert warm.finished and warm.done == 0
    assert not warm_up_note(None).visible


def test_a_preset_this_server_cannot_open_is_skipped_without_a_traceback(dask_engine, caplog):
    # the Santa Fe presets need a file of the server's --data-dir: without one a session is told so, and the
    # warm-up goes on (the soak counts tracebacks in the server's log)
    warm = WarmUp(PageContext(engine=dask_engine), presets=(preset("002-t2-lssvm"),), default_views=False)
    with caplog.at_level("INFO", logger="explorer.views.warmup"):
        warm.run()
    assert warm.finished and warm.done == 1
    assert [r.levelname for r in caplog.records] == ["INFO", "INFO"] and "skipped" in caplog.records[0].getMessage()
    assert caplog.records[1].getMessage().startswith("warm-up: finished, 1 of 1 items in ")  # bench_soak waits for it
