"""The step-by-step tab as a page shows it: a draw is patched into the drawn figures (no figure is built again),
background draws asked for meanwhile are drawn together, and a reset drops a draw under way."""
import time

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402

from explorer.views.step_by_step import figures  # noqa: E402
from explorer.views.step_by_step import tab as tab_module  # noqa: E402
from explorer.views.step_by_step.state import StepState  # noqa: E402
from explorer.views.step_by_step.tab import StepTab  # noqa: E402


@pytest.fixture
def drawn_tab(monkeypatch):
    """A tab whose figures are drawn into a Bokeh document (as in a browser), counting the figures built."""
    built = {what: 0 for what in tab_module._PLOTS}

    def counting(what, make):
        def plot(state):
            built[what] += 1
            return make(state)
        return plot

    monkeypatch.setattr(tab_module, "_PLOTS", {w: counting(w, f) for w, f in tab_module._PLOTS.items()})
    view = StepTab(state=StepState(seed=3))
    view.state.refresh()
    pn.panel(view).get_root(Document())
    yield view, built
    view.state.close()


def _columns(view, what: str) -> list[dict]:
    (plot,) = [plot for plot, _ in view.plots[what]._plots.values()]
    return [dict(sub.handles["source"].data) for sub in plot.subplots.values()]


def test_a_draw_is_patched_into_the_drawn_figures_without_building_them_again(drawn_tab):
    view, built = drawn_tab
    before = dict(built)
    for n in (1, 10, 100):
        view.draws[[1, 10, 100, 1000].index(n)].clicks += 1
        assert view.state.wait(60)
    assert view.state.n_drawn == 111
    assert built == before  # patched, not built again
    # what the page shows is what the figure functions describe for the state now
    for what, layers in (("data", figures.data_layers), ("histogram", figures.histogram_layers),
                         ("running", figures.running_layers)):
        for shown, layer in zip(_columns(view, what), layers(view.state).layers):
            assert set(shown) == set(layer.source_columns)
            for name, values in layer.source_columns.items():
                np.testing.assert_array_equal(np.asarray(shown[name], dtype=float), values.astype(float))
    running = {k: v for k, v in zip(("upper", "lower", "value"), _columns(view, "running"))}
    assert len(running["value"]["B"]) == len(view.state.running.counts)  # one point per checkpoint so far
    view.state.input_index = 4  # a new point i: the data and its histogram patched, nothing built
    assert built == before and view.plots["histogram"]._plots
    view.presentation = True  # a new style: drawn again through HoloViews
    assert all(built[w] > before[w] for w in built)


def test_draws_asked_for_meanwhile_are_drawn_together_and_a_reset_drops_a_draw_under_way():
    state = StepState(seed=5)
    state.refresh()
    try:
        for _ in range(5):  # five clicks while the first draw runs
            state.request_draws(1)
        assert state.wait(60) and state.n_drawn == 5
        reference = StepState(seed=5)
        reference.refresh()
        reference.draw(5)
        np.testing.assert_array_equal(state.occupations, reference.occupations)  # resamples 0..4, in order
        reference.close()
        state.request_draws(1000)
        state.reset()  # before the draw's result is shown: it is dropped
        assert state.wait(60) and state.n_drawn == 0 and state.occupations.shape == (0, 30)
        state.request_draws(2)
        assert state.wait(60) and state.n_drawn == 2
    finally:
        state.close()


def test_play_keeps_its_pace_when_the_server_runs_its_ticks_late(monkeypatch):
    view = StepTab(state=StepState(seed=2))
    view.state.refresh()
    clock = [100.0]
    monkeypatch.setattr(tab_module.time, "monotonic", lambda: clock[0])
    try:
        view.state.playing, view._played = True, (clock[0], 0)
        period = tab_module.PLAY_PERIOD_MS / 1000
        for t in (1, 2, 4, 5):  # ticks 1 and 2 on time, then tick 3 skipped by a busy server
            clock[0] = 100.0 + t * period
            view._tick()
            assert view.state.wait(60)
        assert view.state.n_drawn == 5  # the late tick drew the one it missed: 5 in 5 periods
        clock[0] += 60.0  # a long stall: at most PLAY_CATCH_UP at once, then the pace starts again
        view._tick()
        assert view.state.wait(60) and view.state.n_drawn == 5 + tab_module.PLAY_CATCH_UP
        view.state.playing = False
        view._tick()
        assert view.state.wait(60) and view.state.n_drawn == 5 + tab_module.PLAY_CATCH_UP
    finally:
        view.state.close()


def test_a_click_that_comes_as_a_draw_is_shown_but_before_its_thread_has_ended_is_drawn():
    """(The race a notebook showed: the click was queued behind a draw that had already been shown, and nothing
    drew it until the next click.)"""
    state = StepState(seed=6)
    state.refresh()
    dispatch, clicked, started = state.dispatch, [], []

    def show_then_click(callback):
        if clicked:  # (the second draw's result, possibly on its own thread before the first returns here)
            return dispatch(callback)
        clicked.append(True)
        callback()                      # the session shows the first draw at once ...
        state.request_draws(1)          # ... and the student clicks before the draw's thread has ended
        started.append(state.drawing)   # the click started a draw of its own

    state.dispatch = show_then_click
    state.dispatch.flush = dispatch.flush
    try:
        state.request_draws(1)
        while not started:
            time.sleep(0.01)
        assert started == [1]
        assert state.wait(60) and state.n_drawn == 2
    finally:
        state.close()


def _y_label(view, what: str) -> str:
    (plot,) = [plot for plot, _ in view.plots[what]._plots.values()]
    return plot.handles["yaxis"].axis_label


def test_the_drawn_histogram_relabels_its_axis_and_an_s_over_n_change_and_back_shows_the_resamples_again(drawn_tab):
    view, built = drawn_tab
    assert _y_label(view, "histogram") == "probability per bin (theory)"  # the theory alone, before any draw
    before = dict(built)
    view.draws[1].clicks += 1
    assert view.state.wait(60) and view.state.n_drawn == 10
    assert built == before and _y_label(view, "histogram") == "resamples per bin"  # patched and relabelled
    shown = {what: _columns(view, what) for what in ("histogram", "running")}
    view.state.s_over_n = 2.0  # a new problem: drawn anew, empty
    assert view.state.n_drawn == 0 and _y_label(view, "histogram") == "probability per bin (theory)"
    assert "The resamples drawn before are kept (10 resamples at S/N = 1.00)" in view.sentence.object
    view.state.s_over_n = 1.0  # back: the same resamples, figures and sentence
    assert view.state.n_drawn == 10 and _y_label(view, "histogram") == "resamples per bin"
    for what, columns in shown.items():
        for old, new in zip(columns, _columns(view, what)):
            assert set(old) == set(new)
            for name in old:
                np.testing.assert_array_equal(np.asarray(new[name], dtype=float), np.asarray(old[name], dtype=float))
    assert "10 resamples;" in view.sentence.object
    view.reset.clicks += 1  # patched back to the theory alone
    assert _y_label(view, "histogram") == "probability per bin (theory)"


def test_kernel_fields_show_only_for_the_kernel_that_uses_them():
    """α (rq) and the period show only while their kernel is chosen (issue 36: they showed beside se)."""
    tab = StepTab(state=StepState(n_points=20))
    shown = {}
    for kernel in ("se", "rq", "periodic", "matern32"):
        tab.state.kernel = kernel
        shown[kernel] = (tab.widgets["alpha"].visible, tab.widgets["period"].visible)
    assert shown == {"se": (False, False), "rq": (True, False), "periodic": (False, True), "matern32": (False, False)}
