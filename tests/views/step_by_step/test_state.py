"""The step-by-step state without a server: its resamples are the learning curve's Monte-Carlo samples, the
histogram's stacking counts their multiplicities, and a change of a setting starts again."""
import time

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.gp_bootstrap import stages, steps  # noqa: E402
from explorer.views.step_by_step import figures  # noqa: E402
from explorer.views.step_by_step.state import KEEP_CURVES, StepState  # noqa: E402
from explorer.views.step_by_step.tab import StepTab  # noqa: E402


@pytest.fixture
def state():
    s = StepState(seed=4)
    s.refresh()
    yield s
    s.close()


def test_draw_1_10_100_1000_is_the_learning_curve_at_1111_samples(state):
    for n in (1, 10, 100, 1000):
        state.draw(n)
    assert state.n_drawn == 1111 and state.occupations.shape == (1111, 30) and len(state.curves) == KEEP_CURVES
    (point,) = stages.mc_curve(state.problem, [1.0], 1111, rng=4).points
    assert state.running.counts[-1] == 1111
    assert (state.running.value[-1], state.running.se[-1]) == (point.mc_mean, point.mc_se)


def test_stacking_counts_are_the_multiplicities_of_the_resamples(state):
    state.draw(300)
    state.input_index = 7
    s = state.occupations[:, 7]
    edges = steps.histogram_edges(state.solution, 7, state.train[:, 7])
    counts = steps.multiplicity_histogram(state.train[:, 7], s, edges, figures.K_MAX)
    expected = [np.sum(s == k) for k in range(figures.K_MAX)] + [np.sum(s >= figures.K_MAX)]
    np.testing.assert_array_equal(counts.sum(axis=1), expected)


def test_the_sentence_counts_the_resamples_and_the_left_out_points(state):
    assert "≈ 11.0 points are left out" in state.sentence() and "No resample" in state.sentence()
    state.draw(100)
    out = int(np.sum(state.occupations[-1] == 0))
    assert f"100 resamples; the last left out {out} points (N·e^(−S/N) ≈ 11)" in state.sentence()


def test_a_change_of_setting_or_reset_starts_again(state):
    state.draw(10)
    state.s_over_n = 2.0
    assert state.n_drawn == 0 and state.occupations.shape == (0, 30) and state.running.counts.size == 0
    state.draw(3)
    state.reset()
    assert state.n_drawn == 0
    state.n_points = 100
    state.dataset = "teacher"
    assert state.problem.n == 64 and "64 rows" in state.notice and state.input_index <= 63


def test_the_theory_lines_are_adatap_and_its_approximation(state):
    assert set(state.theory) == {"ADATAP", "approx. ADATAP"}
    assert all(0 < v < 1 for v in state.theory.values())


def test_the_tab_draws_plays_and_picks_a_point(state):
    import holoviews as hv

    tab = StepTab(state=state)
    tab.draws[1].clicks += 1  # "10": drawn in the background
    assert state.wait(30) and state.n_drawn == 10
    for what in ("data", "histogram", "running"):
        hv.renderer("bokeh").get_plot(tab.plots[what].object)  # the figures render
    x, y = state.problem.X[5, 0], state.problem.y[5]
    tab._on_tap(x=x, y=y)
    assert state.input_index == 5
    tab._tick()
    assert state.n_drawn == 10  # not playing
    state.playing = True
    tab._played = (time.monotonic(), 0)  # Play pressed just now (as the Play button does)
    tab._tick()
    assert state.wait(30) and state.n_drawn == 11
    tab.reset.clicks += 1
    assert state.n_drawn == 0 and "No resample" in tab.sentence.object
