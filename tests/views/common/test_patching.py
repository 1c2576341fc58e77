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

from explorer.views.common.patching import forget_frames, patch_overlay  # noqa: E402
from explorer.views.common.widgets import Revision, live  # noqa: E402
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
    assert mc["s_over_n"].size == len(with_mc.curve_mc.points) > 0 == before_mc["s_over_n"].size


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
    assert all(a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a) for a, b in zip(after, before))


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
