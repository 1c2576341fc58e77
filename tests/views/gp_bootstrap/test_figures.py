"""Readable comparisons in the GP and SVM figures: theory − Monte-Carlo gaps beyond 3 standard errors are
flagged (figure and status), the distribution shows Monte-Carlo as an outline over the theory and names the
Poisson components in its legend. Monte-Carlo points are set by hand at known offsets from the theory."""

import holoviews as hv
import numpy as np
import pytest

from explorer.svm_bootstrap.stages import TheoryPoint
from explorer.views import svm_bootstrap as svm
from explorer.views.common.layout.presentation import presented
from explorer.views.gp_bootstrap import figures as plots
from explorer.views.gp_bootstrap.state import CurveMC, CurvePoint, GPBootstrapState
from explorer.views.gp_bootstrap.tab import LearningCurveTab

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")


@pytest.fixture
def toy_state():
    state = GPBootstrapState(dataset="toy", auto_mc=False, show_components=True)
    state.refresh()
    assert state.wait(timeout=120) and state.theory_curve is not None
    yield state
    state.close()


def _legend(figure) -> list[str]:
    return [item.label.value for item in hv.render(figure).legend[0].items]


def test_learning_curve_flags_gaps_beyond_three_standard_errors(toy_state):
    theory = toy_state.theory_curve
    j, k = 3, 7  # two S/N of the theory grid: MC 1 s.e. below the theory (fine) and 5 s.e. above (flagged)
    se = 0.01
    points = (CurvePoint(float(theory.s_over_n[j]), float(theory.theory[j]) - se, se, 100, 10),
              CurvePoint(float(theory.s_over_n[k]), float(theory.theory[k]) + 5 * se, se, 100, 10))
    toy_state.curve_mc = CurveMC(points, tuple(p.s_over_n for p in points))
    flagged = plots.large_gaps(toy_state)
    assert flagged["s_over_n"].tolist() == [points[1].s_over_n]
    assert flagged["gap_se_theory"].iloc[0] == pytest.approx(-5.0, abs=1e-9)
    sentence = plots.gap_sentence(toy_state)
    assert f"S/N = {points[1].s_over_n:g} (-5.0 s.e.)" in sentence and "more than 3 standard errors" in sentence
    figure = plots.learning_curve_plot(toy_state)
    (circle,) = [e for e in figure if e.label.startswith("ADATAP − MC >")]
    assert circle.data["s_over_n"].tolist() == [points[1].s_over_n]
    tab = LearningCurveTab(state=toy_state)
    tab.draw()  # the warning goes under the figure, not into the status line above it
    assert tab.warning.object == sentence and sentence not in tab.describe()
    column = tab.content()
    (frame,) = [i for i, item in enumerate(column.objects) if tab.plot in getattr(item, "objects", [item])]
    assert column.objects.index(tab.warning) > frame  # the figure (with the messages over it) comes first
    options = figure.opts.get().kwargs
    assert options["legend_position"] == "right" and "lower ε(S) is better" in options["title"]


def test_distribution_draws_monte_carlo_as_an_outline_and_names_the_components(toy_state):
    figure = plots.distribution_plot(toy_state)
    labels = _legend(figure)
    assert "Poisson components w_k N(μ_k, s_k²)" in labels and "Monte-Carlo histogram (outline)" in labels
    assert labels.index("Monte-Carlo histogram (outline)") > labels.index("theory, mass per bin")  # drawn on top
    (outline,) = [e for e in figure if e.label == "Monte-Carlo histogram (outline)"]
    assert isinstance(outline, hv.Curve) and outline.opts.get().kwargs["interpolation"] == "steps-post"
    (names,) = [e for e in figure if isinstance(e, hv.Labels)]
    from explorer.bootstrap import replica
    weights = replica.mixture_components(toy_state.solution, toy_state.index).weights
    assert names.data["k"].tolist() == [f"k = {k}" for k in np.flatnonzero(weights > 1e-3)]


def test_presentation_scales_fonts_and_lines(toy_state):
    figure = presented(plots.learning_curve_plot(toy_state), True)
    assert figure.opts.get("plot").kwargs["fontscale"] > 1
    widths = [hv.Store.lookup_options("bokeh", e, "style").kwargs.get("line_width") for e in figure
              if isinstance(e, hv.Curve)]
    assert widths and all(w >= 4 for w in widths)  # every theory curve is drawn at 2 px normally


def test_svm_learning_curve_flags_gaps_beyond_three_standard_errors():
    state = svm.SVMState()  # never refreshed: the results are set by hand
    grid = (0.5, 1.0, 2.0)
    theory = [TheoryPoint(v, v * 200, 0.10, True, 5, 1e-9) for v in grid[:2]]
    theory.append(TheoryPoint(2.0, 400, None, False, 100, 1e-2))  # unconverged: never compared
    state.theory_curve = svm.SVMTheoryCurve(tuple(theory), grid, 200)
    mc = (svm.SVMCurvePoint(0.5, 0.12, 0.01, 50),   # theory − MC = −2 s.e.
          svm.SVMCurvePoint(1.0, 0.14, 0.01, 50),   # −4 s.e.: flagged
          svm.SVMCurvePoint(2.0, 0.50, 0.01, 50))
    state.curve_mc = svm.SVMCurveMC(mc, grid)
    (gap,) = svm.large_gaps(state)
    assert gap.s_over_n == 1.0 and gap.gap_se == pytest.approx(-4.0)
    assert "differ by more than 3 standard errors at S/N = 1 (-4.0 s.e.)" in svm.curve_summary(state)
    figure = svm.learning_curve_plot(state)
    (circle,) = [e for e in figure if e.label.startswith("theory − MC >")]
    assert circle.data["s_over_n"].tolist() == [1.0]
    options = figure.opts.get().kwargs
    assert options["legend_opts"] == {"click_policy": "hide"} and "lower error is better" in options["title"]
    state.close()


def test_l1_map_names_its_reference_lines_in_the_legend():
    from tests.views.common.figures import right_legend
    state = GPBootstrapState(dataset="teacher", auto_mc=False)  # before any result: the lines are there already
    legend = right_legend(plots.l1_plot(state))
    labels = [item.label.value for item in legend.items]
    assert labels[-2:] == ["L1 = 0.1", "L1 = 0.2"] and legend.click_policy == "hide"
    lines = {e.label: e for e in plots.l1_plot(state) if e.label.startswith("L1 =")}
    for x, dash in plots.L1_REFERENCES.items():  # vertical, at the reference value, dashed as the legend shows
        assert lines[f"L1 = {x:g}"].dimension_values(0).tolist() == [x, x]
        assert lines[f"L1 = {x:g}"].opts.get().kwargs["line_dash"] == dash
    state.close()


def test_l1_reference_lines_reach_the_highest_bar(toy_state):
    toy_state.param.update(tab="distribution", mc_samples=200)
    toy_state.run_mc()
    assert toy_state.wait(timeout=120) and toy_state.distribution is not None
    figure = plots.l1_plot(toy_state)
    top = max(h.dimension_values(1).max() for h in figure if isinstance(h, hv.Histogram))
    for line in (e for e in figure if e.label.startswith("L1 =")):
        assert line.dimension_values(1).tolist() == [0.0, top]


def test_the_gap_warning_at_small_s_over_n_says_what_the_paper_shows(monkeypatch):
    import pandas as pd

    from explorer.views.gp_bootstrap.figures import learning_curve as gp_figures

    small = pd.DataFrame({"s_over_n": [0.25, 0.5], "gap_se_theory": [-5.4, -4.4]})
    monkeypatch.setattr(gp_figures, "large_gaps", lambda state, threshold: small)
    text = gp_figures.gap_sentence(None)
    assert text.startswith("⚠ ADATAP theory and Monte-Carlo differ by more than 3 standard errors at S/N = 0.25 "
                           "(-5.4 s.e.), 0.5 (-4.4 s.e.)") and "few distinct points" in text and "Fig. 1" in text
    large = pd.DataFrame({"s_over_n": [2.0], "gap_se_theory": [3.5]})
    monkeypatch.setattr(gp_figures, "large_gaps", lambda state, threshold: large)
    assert "few distinct points" not in gp_figures.gap_sentence(None)


@pytest.mark.parametrize("on", [False, True], ids=["normal", "presentation"])
def test_the_axis_text_hook_sizes_a_colour_bar_as_well_as_the_axes(on, caplog):
    """The L1 map has a colour bar beside its axes: the hook sets its ticks and title with the axes' sizes, and
    HoloViews logs no "hook could not be applied" (it did, once per redraw, in the soak's server log)."""
    import logging

    from bokeh.models import Axis, ColorBar

    from explorer.views.common.layout.presentation import axis_text

    points = hv.Points(([0.0, 1.0], [0.0, 1.0], [0.1, 0.2]), vdims="l1").opts(color="l1", colorbar=True,
                                                                             hooks=[axis_text(on)])
    with caplog.at_level(logging.WARNING):
        plot = hv.render(points)
    assert "could not be applied" not in caplog.text
    axes = [a for a in (*plot.left, *plot.below) if isinstance(a, Axis)]
    (bar,) = [c for c in plot.right if isinstance(c, ColorBar)]
    assert axes and bar.major_label_text_font_size == axes[0].major_label_text_font_size
    assert bar.title_text_font_size == axes[0].axis_label_text_font_size


def test_the_distribution_page_draws_the_core_s_eq_60_distribution(toy_state):
    """The density, the mass per bin and the components drawn are those of the core's BootstrapDistribution of every
    training input (``bootstrap_distribution``), at the input shown; the page asks it of that input alone."""
    from explorer.bootstrap.distribution import bootstrap_distribution
    from explorer.gp_bootstrap.l1 import histogram_edges

    toy_state.input_index = 5
    whole = bootstrap_distribution(toy_state.solution)
    i = toy_state.index
    figure = plots.distribution_plot(toy_state)
    (density,) = [e for e in figure if e.label == "theory density, eq. (60)"]
    h = density.dimension_values(0)
    at_i = np.broadcast_to(h[:, None], (h.size, whole.n))  # every input at the values h: column i is input i's
    np.testing.assert_allclose(density.dimension_values(1), whole.pdf(at_i)[:, i], rtol=1e-12, atol=0)
    (bars,) = [e for e in figure if e.label == "theory, mass per bin"]
    edges = histogram_edges(whole.means[i, :1], toy_state.solution, i, toy_state.bin_width)
    cdf = whole.cdf(np.broadcast_to(edges[:, None], (edges.size, whole.n)))[:, i]
    mass = dict(zip(np.round(edges[:-1], 9), np.diff(cdf) / toy_state.bin_width))
    assert bars.edges.size > 3  # the bins holding theory mass
    np.testing.assert_allclose(bars.dimension_values(1), [mass[round(x, 9)] for x in bars.edges[:-1]], rtol=1e-12, atol=1e-300)
    (components,) = [e for e in figure if e.label == "Poisson components w_k N(μ_k, s_k²)"]
    # each component w_k N(μ_k, s_k²) is drawn on μ_k ± 5 s_k through its peak w_k / (√(2π) s_k)
    ks = np.flatnonzero(whole.weights > 1e-3)
    peaks = whole.weights[ks] / (np.sqrt(2 * np.pi) * whole.sds[i, ks])
    drawn = np.nan_to_num(components.dimension_values(1))
    assert max(drawn) == pytest.approx(max(peaks), rel=1e-9)
