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


# --- resamples kept per S/N (issue 36)

def test_the_resamples_of_an_s_over_n_are_kept_and_shown_again_when_it_comes_back(state):
    state.draw(30)
    shown = (state.occupations, state.train, state.curves, state.running)
    state.s_over_n = 2.0
    assert state.n_drawn == 0 and state.occupations.shape == (0, 30)
    assert "No resample drawn yet" in state.sentence()
    assert "The resamples drawn before are kept (30 resamples at S/N = 1.00)" in state.sentence()
    state.draw(5)
    state.s_over_n = 1.0
    assert state.n_drawn == 30 and (state.occupations, state.train, state.curves, state.running) == shown
    assert "(5 resamples at S/N = 2.00)" not in state.sentence()  # only said while nothing is drawn
    state.draw(5)  # going on from resample 30: as if S/N had never changed
    reference = StepState(seed=4)
    reference.refresh()
    reference.draw(35)
    np.testing.assert_array_equal(state.occupations, reference.occupations)
    np.testing.assert_array_equal(state.running.value, reference.running.value)
    reference.close()
    state.s_over_n = 2.0
    assert state.n_drawn == 5
    state.reset()  # forgets the current S/N's resamples only
    state.s_over_n = 1.0
    assert state.n_drawn == 35


def test_other_settings_keep_their_resamples_too_and_say_so(state):
    state.draw(3)
    state.noise_var = 0.2
    assert state.n_drawn == 0 and state.kept_s_over_n() == {}
    assert "The resamples drawn at earlier settings are kept" in state.sentence()
    state.noise_var = 0.1
    assert state.n_drawn == 3


def test_the_kept_resamples_are_bounded(state, monkeypatch):
    from explorer.views.step_by_step import state as state_module

    values = [round(0.5 + 0.25 * j, 2) for j in range(state_module.KEEP_SETTINGS + 2)]
    for v in values:
        state.s_over_n = v
        state.draw(1)
    state.s_over_n = 4.0
    kept = state.kept_s_over_n()
    assert len(kept) == state_module.KEEP_SETTINGS and list(kept) == values[-state_module.KEEP_SETTINGS:]
    state.s_over_n = values[0]  # the oldest were dropped: it starts empty
    assert state.n_drawn == 0
    monkeypatch.setattr(state_module, "KEEP_RESAMPLES", 25)
    state.s_over_n = 4.25
    state.draw(20)
    state.s_over_n = 4.5
    state.draw(20)
    state.s_over_n = 4.75  # 40 new ones kept > 25: the older S/N goes, the one just left stays
    assert state.kept_s_over_n() == {4.5: 20}


# --- words (issue 36)

def test_the_words_count_one_resample_as_one(state):
    state.draw(1)
    assert "1 resample;" in state.sentence() and "1 resamples" not in state.sentence()
    assert figures.running_layers(state).title == "After 1 resample"
    state.draw(1)
    assert "2 resamples;" in state.sentence()
    assert figures.running_layers(state).title == "After 2 resamples"


def test_the_histogram_axis_says_probability_before_any_draw_and_resamples_after(state):
    """The label matches what is plotted: before a draw the theory's outline is a probability per bin (it adds up
    to 1 over the bins), after B draws the bars count resamples (they add up to B) and the theory is scaled to B."""
    before = figures.histogram_layers(state)
    assert before.ylabel == "probability per bin (theory)"
    outline = next(layer for layer in before.layers if layer.label == "theory")
    heights = outline.data[1][1:-1:2]  # the stacked outline's top: one height per bin
    assert 0.99 < heights.sum() <= 1.0 + 1e-9
    state.draw(40)
    after = figures.histogram_layers(state)
    assert after.ylabel == "resamples per bin"
    bars = [layer for layer in after.layers if layer.kind is figures.hv.Rectangles]
    assert sum(float(np.sum(layer.data[3] - layer.data[1])) for layer in bars) == 40
    outline = next(layer for layer in after.layers if layer.label == "theory")
    assert 0.99 * 40 < outline.data[1][1:-1:2].sum() <= 40 + 1e-6
    # the axis HoloViews draws carries the same label
    import holoviews as hv

    plot = hv.renderer("bokeh").get_plot(figures.histogram_plot(state))
    assert plot.state.yaxis[0].axis_label == "resamples per bin"


def test_the_page_speaks_plainly():
    """Words first, the paper's symbol second; no bare "f_i" or "Efron's ε" on an axis."""
    labels = [figures.H.label, figures.COUNT.label, figures.EPS.label, figures.B.label, figures.Y.label]
    assert figures.H.label == "prediction at point i (f_i)"
    assert figures.EPS.label == "test error (Efron, eq. 17)"
    assert not any(label.startswith(("f_i", "Efron's ε")) for label in labels)


# --- why ADATAP and Efron's estimate differ (issue 36)

def _efron_by_hand(state) -> tuple[float, float]:
    """Eq. (17) from the resamples, literally: per point the mean square error over the resamples that left it
    out, averaged over the points (with the delta-method SE of the page)."""
    out = state.occupations == 0
    per_point = [np.mean((state.train[out[:, i], i] - state.problem.y[i]) ** 2) for i in range(state.problem.n)]
    return float(np.mean(per_point)), float(state.running.se[-1])


def test_the_sentence_says_why_adatap_and_efron_differ_on_30_points(state):
    state.draw(1111)
    efron, se = _efron_by_hand(state)
    adatap, approx = state.theory["ADATAP"], state.theory["approx. ADATAP"]
    assert abs(adatap - efron) > 2 * se  # the case the issue shows: ADATAP clearly off on 30 points
    text = state.sentence()
    assert f"Efron's estimate from these resamples ({efron:.3f} ± {se:.3f})" in text
    assert f"the ADATAP theory ({adatap:.3f}) differ by more than 2 standard errors" in text
    assert "gets better as N grows; with N = 30 points it is off by " + f"{adatap - efron:+.3f}".replace("-", "−") in text
    # the approximate ADATAP lands nearer by a shift from ADATAP against ADATAP's error
    assert abs(approx - efron) < abs(adatap - efron) and (approx - adatap) * (adatap - efron) < 0
    assert f"its own shift from ADATAP ({approx - adatap:+.3f})" in text


def test_no_comparison_before_enough_resamples_or_when_they_agree():
    s = StepState(seed=4)
    s.refresh()
    try:
        s.draw(50)
        assert s.comparison_sentence() == ""  # fewer than MIN_RESAMPLES_TO_COMPARE
        s.n_points, s.s_over_n = 200, 2.0  # ADATAP within 2 SE of Efron's estimate here
        s.draw(300)
        efron, se = _efron_by_hand(s)
        assert abs(s.theory["ADATAP"] - efron) <= 2 * se and s.comparison_sentence() == ""
    finally:
        s.close()


def test_adatap_gets_better_as_n_grows_and_the_approximate_one_is_not_better_in_general():
    """What the sentence says, checked against Monte-Carlo (the learning curve's Efron estimate, 1000 resamples):
    on toy at S/N = 1 ADATAP's relative error falls from 30 to 200 points; on teacher (30 points) and on toy with
    60 points the approximate ADATAP is further from Monte-Carlo than ADATAP (its nearness on toy/30 is a
    cancellation, not a better theory)."""
    def gaps(**settings):
        s = StepState(seed=1, **settings)
        s.refresh()
        (point,) = stages.mc_curve(s.problem, [1.0], 1000, rng=1).points
        theory = s.theory
        s.close()
        return {name: abs(value - point.mc_mean) / point.mc_mean for name, value in theory.items()}

    small, large = gaps(n_points=30), gaps(n_points=200)
    assert large["ADATAP"] < small["ADATAP"] / 3
    for settings in (dict(n_points=60), dict(dataset="teacher")):
        g = gaps(**settings)
        assert g["approx. ADATAP"] > g["ADATAP"]
