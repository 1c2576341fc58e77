"""Patching a drawn learning curve in place gives the figure HoloViews draws, and falls back to HoloViews otherwise.

The reference is HoloViews' own pipeline: the patched data sources and axis ranges are compared with a fresh
Bokeh rendering of the same state. Uses the generated ``teacher`` set (N = 64) and 20 Monte-Carlo samples per S.
"""

import pytest

pytest.importorskip("panel")

import holoviews as hv  # noqa: E402
import numpy as np  # noqa: E402
import panel as pn  # noqa: E402
from bokeh.document import Document  # noqa: E402

from explorer.views.common.drawing.patching import forget_frames, patch_overlay  # noqa: E402
from explorer.views.common.layout.widgets import Revision, live  # noqa: E402
from explorer.views.gp_bootstrap import figures as plots  # noqa: E402
from explorer.views.gp_bootstrap.state import GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import LearningCurveTab  # noqa: E402

TIMEOUT = 180

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def finished(**params) -> GPBootstrapState:
    s = GPBootstrapState(**{"dataset": "teacher", "tab": "curve", "curve_mc_samples": 20, **params})
    s.refresh()
    assert s.wait(TIMEOUT), "background jobs did not finish in time"
    assert s.theory_curve is not None, s.error
    return s


@pytest.fixture(scope="module")
def theory_only():
    s = finished(auto_mc=False)
    assert s.curve_mc is None
    yield s
    s.close()


@pytest.fixture(scope="module")
def with_mc():
    s = finished(auto_mc=True, s_over_n=2.5)
    assert s.curve_mc is not None and s.curve_mc.complete
    yield s
    s.close()


@pytest.fixture(scope="module")
def eps_loss():
    s = finished(auto_mc=False, loss="eps-insensitive")
    yield s
    s.close()


class Shown:
    """A pane showing the learning curve of ``state`` (changeable) through a DynamicMap, drawn in a document."""

    def __init__(self, state: GPBootstrapState):
        self.state, self.stream = state, Revision()
        self.pane = pn.pane.HoloViews(live(lambda: plots.learning_curve_plot(self.state), self.stream))
        self.root = self.pane.get_root(Document())

    def plot(self, root=None):
        return self.pane._plots[(root or self.root).ref["id"]][0]


def ranges(plot) -> dict[str, tuple[float, float]]:
    h = plot.handles
    return {"x": (h["x_range"].start, h["x_range"].end), "error": (h["y_range"].start, h["y_range"].end),
            **{name: (r.start, r.end) for name, r in h["extra_y_ranges"].items()}}


def sources(plot) -> list[dict[str, np.ndarray]]:
    return [{k: np.asarray(v) for k, v in sp.handles["source"].data.items()} for sp in plot.subplots.values()]


def assert_same_figure(plot, state: GPBootstrapState) -> None:
    """``plot`` shows what HoloViews draws for ``state`` from scratch: the same columns and axis ranges."""
    reference = hv.renderer("bokeh").get_plot(plots.learning_curve_plot(state))
    got, want = sources(plot), sources(reference)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for name in w:
            np.testing.assert_allclose(g[name].astype(float), w[name].astype(float), rtol=0, atol=0)
    assert ranges(plot).keys() == ranges(reference).keys() == {"x", "error", "test_points"}
    for axis, (start, end) in ranges(reference).items():
        np.testing.assert_allclose(ranges(plot)[axis], (start, end), rtol=1e-12, err_msg=axis)


def mc_points(state: GPBootstrapState) -> int:
    """The index of the Monte-Carlo points' layer (the last of the two that share its label, after the error bars)."""
    labels = [layer.label for layer in plots.learning_curve_layers(state)]
    return len(labels) - 1 - labels[::-1].index("Monte-Carlo (± 1 s.e.)")


def test_patched_figure_is_the_figure_holoviews_draws(theory_only, with_mc):
    shown = Shown(theory_only)
    before_mc = sources(shown.plot())[mc_points(theory_only)]  # the Monte-Carlo points
    shown.state = with_mc  # Monte-Carlo points, error bars, flags and the diamond at S/N = 2.5 arrive
    assert patch_overlay(shown.pane, plots.learning_curve_layers(with_mc), plots.CURVE_PADDING)
    assert_same_figure(shown.plot(), with_mc)
    mc = sources(shown.plot())[mc_points(with_mc)]
    assert mc["s_over_n"].size == len(with_mc.curve_mc.points) > 0
    # before Monte-Carlo its layer holds one row of NaN: no point drawn, its legend entry keeps its glyph
    assert before_mc["s_over_n"].size == 1 and np.isnan(before_mc["s_over_n"]).all()


def test_a_page_drawing_the_patched_figure_later_evaluates_it_again(theory_only, with_mc):
    shown = Shown(theory_only)
    shown.state = with_mc
    assert patch_overlay(shown.pane, plots.learning_curve_layers(with_mc), plots.CURVE_PADDING)
    shown.stream.update(revision=1)  # what the tab does after a patch: no event, a new key for the cache
    forget_frames(shown.pane)
    second = shown.pane.get_root(Document())  # e.g. the same view shown again in a notebook
    assert_same_figure(shown.plot(second), with_mc)


def test_other_layers_are_left_to_holoviews(theory_only, eps_loss):
    shown = Shown(theory_only)
    before = sources(shown.plot())
    layers = plots.learning_curve_layers(eps_loss)  # no VG, MF and IJ curves: three layers fewer
    assert len(layers) == len(before) - 3
    assert not patch_overlay(shown.pane, layers, plots.CURVE_PADDING)
    after = sources(shown.plot())
    assert all(a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a) for a, b in zip(after, before))


def test_an_undrawn_pane_is_left_to_holoviews(with_mc):
    pane = pn.pane.HoloViews(live(lambda: plots.learning_curve_plot(with_mc), Revision()))
    assert not patch_overlay(pane, plots.learning_curve_layers(with_mc), plots.CURVE_PADDING)


def test_learning_curve_tab_patches_data_and_redraws_styles_through_holoviews(with_mc):
    tab = LearningCurveTab(state=with_mc)
    root = tab.__panel__().get_root(Document())
    plot = tab.plot._plots[root.ref["id"]][0]
    theory = next(iter(plot.subplots.values())).handles["glyph"]
    calls = []
    tab.stream.add_subscriber(lambda **kwargs: calls.append(kwargs))
    width = theory.line_width
    tab._on_state()  # new results: the data are written in place, HoloViews is not asked
    assert calls == [] and tab.stream.revision == tab.revision
    assert_same_figure(plot, with_mc)
    tab.presentation = True  # presentation mode: thicker lines, through HoloViews
    assert len(calls) == 1 and theory.line_width > width


def test_the_s_over_n_control_is_handled_without_panels_50_ms_wait(with_mc):
    from explorer.views.gp_bootstrap.tab import GPControls

    control = GPControls(state=with_mc).widgets["s_over_n"]
    parts = [control, control._slider, control._value_edit]
    assert [part._debounce for part in parts] == [0, 0, 0]
    assert pn.widgets.FloatInput()._debounce == 50  # the other controls keep Panel's default


# ----------------------------------------------------------------------------- write_columns: what travels

def _source_in_document(data: dict):
    """A data source in a document, and the list its change events go to (what the page is sent)."""
    from bokeh.models import ColumnDataSource

    source, events = ColumnDataSource(data={k: np.asarray(v) for k, v in data.items()}), []
    doc = Document()
    doc.add_root(source)
    doc.callbacks.on_change(events.append)
    return source, events


def _assert_holds(source, columns: dict) -> None:
    assert set(source.data) == set(columns)
    for name, column in columns.items():
        np.testing.assert_array_equal(np.asarray(source.data[name]), column)


def test_unchanged_columns_send_nothing():
    from explorer.views.common.drawing.patching import write_columns

    source, events = _source_in_document({"x": [0.0, 1.0, np.nan], "y": [1.0, 2.0, np.nan]})
    write_columns(source, {"x": np.array([0.0, 1.0, np.nan]), "y": np.array([1.0, 2.0, np.nan])})
    assert events == []


def test_rows_appended_travel_alone():
    from bokeh.document.events import ColumnsStreamedEvent

    from explorer.views.common.drawing.patching import write_columns

    source, events = _source_in_document({"B": [1.0, 2.0, 3.0], "eps": [0.5, 0.4, 0.45]})
    new = {"B": np.array([1.0, 2.0, 3.0, 4.0, 5.0]), "eps": np.array([0.5, 0.4, 0.45, 0.44, 0.43])}
    write_columns(source, new)
    assert len(events) == 1 and isinstance(events[0], ColumnsStreamedEvent)
    np.testing.assert_array_equal(events[0].data["B"], [4.0, 5.0])  # only the new rows
    assert events[0].rollover is None
    _assert_holds(source, new)


def test_a_rolling_window_streams_the_new_rows_with_rollover():
    """The last 3 curves of 4 points, NaN-separated (as the step-by-step page's earlier fits): one more curve."""
    from bokeh.document.events import ColumnsStreamedEvent

    from explorer.views.common.drawing.patching import write_columns

    rng = np.random.default_rng(3)
    grid = np.append(np.linspace(0, 1, 4), np.nan)
    curves = rng.normal(size=(4, 4))
    polyline = lambda rows: np.column_stack([rows, np.full(len(rows), np.nan)]).ravel()  # noqa: E731
    source, events = _source_in_document({"x": np.tile(grid, 3), "y": polyline(curves[:3])})
    new = {"x": np.tile(grid, 3), "y": polyline(curves[1:])}
    write_columns(source, new)
    assert len(events) == 1 and isinstance(events[0], ColumnsStreamedEvent)
    assert events[0].rollover == 15 and len(events[0].data["y"]) == 5  # one curve travels, the oldest drops
    np.testing.assert_array_equal(events[0].data["y"][:4], curves[3])
    _assert_holds(source, new)


def test_changed_columns_of_the_same_length_travel_without_the_others():
    from bokeh.document.events import ColumnDataChangedEvent

    from explorer.views.common.drawing.patching import write_columns

    source, events = _source_in_document({"x": [0.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0]})
    new = {"x": np.array([0.0, 1.0, 2.0]), "y": np.array([3.0, 1.0, 2.0])}  # not a roll: y[:2] != old y[1:]
    write_columns(source, new)
    assert len(events) == 1 and isinstance(events[0], ColumnDataChangedEvent)
    assert events[0].cols == ["y"]
    _assert_holds(source, new)


@pytest.mark.parametrize("new", [
    {"x": np.array([5.0]), "y": np.array([6.0])},                              # fewer rows
    {"x": np.array([9.0, 1.0, 2.0, 3.0]), "y": np.array([1.0, 2.0, 3.0, 4.0])},  # more rows, not appended
    {"h": np.array([1.0, 2.0, 3.0])},                                          # other columns
])
def test_anything_else_replaces_the_data(new):
    from explorer.views.common.drawing.patching import write_columns

    source, events = _source_in_document({"x": [0.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0]})
    write_columns(source, new)
    assert len(events) == 1 and getattr(events[0], "cols", None) is None  # every column is sent
    _assert_holds(source, new)


def test_a_step_sends_a_small_patch_to_the_page():
    """A step of "Bootstrap, step by step" after 300 resamples: what the page is sent is a fraction of its figures'
    data (the earlier fits, the running estimate: only new rows), and the page's sources hold the new figures."""
    from bokeh.document.events import ColumnsStreamedEvent
    from bokeh.protocol import Protocol

    from explorer.views.step_by_step import figures as step_figures
    from explorer.views.step_by_step.tab import StepTab

    tab = StepTab()
    doc = Document()
    doc.add_root(pn.panel(tab).get_root(doc))
    state = tab.state
    state.refresh()
    assert state.wait(TIMEOUT)
    state.draw(300)
    events: list = []
    doc.callbacks.on_change(events.append)
    state.draw(1)
    message = Protocol().create("PATCH-DOC", events)
    sent = len(message.content_json) + sum(memoryview(b.data).nbytes for b in message.buffers)
    whole = sum(np.asarray(column).nbytes for plot in tab.plots.values() for p, _ in plot._plots.values()
                for sub in p.subplots.values() for column in sub.handles["source"].data.values())
    assert sum(isinstance(e, ColumnsStreamedEvent) for e in events) >= 4  # earlier fits and the running estimate
    assert sent < whole / 3, (sent, whole)
    for what, layers in (("data", step_figures.data_layers), ("running", step_figures.running_layers)):
        for p, _ in tab.plots[what]._plots.values():
            for sub, layer in zip(p.subplots.values(), layers(state).layers):
                _assert_holds(sub.handles["source"], layer.source_columns)
    state.close()
