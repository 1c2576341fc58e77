"""The shared input checks of explorer.validation and the timing helper of explorer.progress."""
import numpy as np
import pytest

from explorer import progress
from explorer.validation import (
    held_out_inputs,
    holdout_iv,
    mc_curve_grid,
    s_over_n_grid,
    s_over_n_value,
    sample_sizes,
)


def test_s_over_n_grid_accepts_positive_numbers_as_float_array():
    np.testing.assert_array_equal(s_over_n_grid([0.5, 2]), [0.5, 2.0])
    assert s_over_n_grid(1).shape == (1,)


@pytest.mark.parametrize("bad", [[], [0.5, 0.0], [-1.0], [np.nan], [np.inf]])
def test_s_over_n_grid_rejects_empty_nonpositive_or_nonfinite(bad):
    with pytest.raises(ValueError, match=r"`s_over_n` must be positive numbers \(S/N, the bootstrap size per "
                                         r"data point\), got \["):
        s_over_n_grid(bad)


def test_s_over_n_grid_message_names_what_n_counts():
    with pytest.raises(ValueError, match=r"bootstrap size per data row\), got \["):
        s_over_n_grid([0.0], per="data row")



def test_mc_curve_grid_checks_the_grid_first_then_the_sample_count():
    np.testing.assert_array_equal(mc_curve_grid([0.5, 2], 1), [0.5, 2.0])
    with pytest.raises(ValueError, match=r"`mc_samples` must be at least 1, got 0\."):
        mc_curve_grid([0.5], 0)
    with pytest.raises(ValueError, match=r"bootstrap size per data row\), got \["):
        mc_curve_grid([0.0], 0, per="data row")


def test_sample_sizes():
    np.testing.assert_array_equal(sample_sizes(3), [3.0])
    with pytest.raises(ValueError, match=r"`S_values` must be a non-empty 1-D sequence of sample sizes, got shape "
                                         r"\(0,\)"):
        sample_sizes([])
    with pytest.raises(ValueError, match=r"got shape \(2, 1\)"):
        sample_sizes([[1.0], [2.0]])


def test_held_out_inputs_default_is_returned_as_is_and_rows_are_2d():
    held_out = np.ones((3, 2))
    assert held_out_inputs(None, held_out) is held_out
    assert held_out_inputs([1.0, 2.0], held_out).shape == (1, 2)
    for X_test, default in ((None, None), (np.empty((0, 2)), held_out)):
        with pytest.raises(ValueError, match="No test inputs: build the problem with `holdout` > 0 or pass "
                                             "`X_test`."):
            held_out_inputs(X_test, default)


def test_s_over_n_value_is_one_checked_float():
    assert s_over_n_value(2) == 2.0 and type(s_over_n_value(np.float32(0.5))) is float
    with pytest.raises(ValueError, match=r"bootstrap size per data row\), got \[-1\]"):
        s_over_n_value(-1, per="data row")


def test_holdout_iv_checks_the_inputs_first_then_the_bootstrap_size():
    held_out = np.ones((3, 2))
    X_test, v = holdout_iv(None, held_out, 1)
    assert X_test is held_out and v == 1.0
    with pytest.raises(ValueError, match="No test inputs"):
        holdout_iv(None, None, -1)
    with pytest.raises(ValueError, match=r"`s_over_n` must be positive numbers"):
        holdout_iv(None, held_out, 0)


def test_best_time_calls_at_least_once_and_keeps_the_fastest(monkeypatch):
    calls = []
    assert progress.best_time(lambda: calls.append(1), 0) >= 0.0 and len(calls) == 1
    clock, durations = [0.0], iter([0.03, 0.01, 0.02])

    def work():
        clock[0] += next(durations)

    monkeypatch.setattr(progress.time, "perf_counter", lambda: clock[0])
    assert progress.best_time(work, 3) == pytest.approx(0.01)
