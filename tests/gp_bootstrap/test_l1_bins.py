"""The histogram bins follow the target's scale (issue 21): Δh = 0.2 · sd(y)/sd(boston's target).

The bootstrap predictor is linear in the targets, and so are the means and standard deviations of the eq. (60)
mixture: a target c times boston's gives samples and theory c times boston's. With bins c times as wide the
histograms, the mass per bin, every L1 distance and the noise floor (drawn with the same seed) are the same; only
the floating-point rounding of c · (values) near a bin edge can differ, so the summary must agree to 1e-9.
"""

from dataclasses import replace

import numpy as np
import pytest

from explorer import datasets
from explorer.gp_bootstrap import experiments
from explorer.gp_bootstrap.l1 import BOSTON_TARGET_SD, PAPER_BIN_WIDTH, scaled_bin_width

MC_SAMPLES = 1000


def test_the_boston_scale_is_the_sample_sd_of_the_shipped_target():
    y = datasets.load("boston").targets
    by_hand = (sum((v - sum(y) / len(y)) ** 2 for v in y) / (len(y) - 1)) ** 0.5
    assert BOSTON_TARGET_SD == pytest.approx(by_hand, rel=1e-12)
    assert scaled_bin_width(y) == PAPER_BIN_WIDTH == 0.2  # boston keeps the paper's width exactly


@pytest.mark.parametrize("c", [0.01, 100.0, 3.7])
def test_the_width_scales_with_the_target(c):
    y = datasets.load("boston").targets
    assert scaled_bin_width(c * y) == pytest.approx(0.2 * c, rel=1e-12)


def test_a_constant_target_keeps_the_paper_width_and_bad_input_says_what_is_needed():
    assert scaled_bin_width(np.full(5, 3.0)) == 0.2
    with pytest.raises(ValueError, match="`y` must be a finite 1-D array of at least 2 targets"):
        scaled_bin_width(np.array([1.0]))


@pytest.fixture(scope="module")
def boston_summaries():
    """L1 summary and noise floor of boston at S = N with the default bins, for the target scaled by c."""
    boston = datasets.load("boston")
    out = {}
    for c in (1.0, 0.01, 100.0):
        problem = experiments.regression_problem(replace(boston, targets=boston.targets * c))
        result = experiments.distribution_comparison(problem, 1.0, MC_SAMPLES, rng=7)
        out[c] = result
    return out


@pytest.mark.parametrize("c", [0.01, 100.0])
def test_the_l1_summary_does_not_change_when_the_target_is_rescaled(boston_summaries, c):
    base, scaled = boston_summaries[1.0], boston_summaries[c]
    assert base.l1.bin_width == 0.2 and scaled.l1.bin_width == pytest.approx(0.2 * c, rel=1e-12)
    assert scaled.noise_floor.bin_width == scaled.l1.bin_width  # the noise floor on the same bins
    for got, want in ((scaled.l1, base.l1), (scaled.noise_floor, base.noise_floor)):
        assert got.frac_le_0_1 == want.frac_le_0_1 and got.frac_ge_0_2 == want.frac_ge_0_2
        assert got.max == pytest.approx(want.max, rel=1e-9)
        np.testing.assert_allclose(got.l1, want.l1, rtol=1e-9, atol=1e-12)


def test_fixed_bins_would_not_be_invariant(boston_summaries):
    """The issue's symptom, kept as a check that the test above can fail: boston/100 on boston's 0.2 bins puts
    nearly every input's distribution in one or two bins and reports a far better L1."""
    boston = datasets.load("boston")
    problem = experiments.regression_problem(replace(boston, targets=boston.targets / 100))
    fixed = experiments.distribution_comparison(problem, 1.0, MC_SAMPLES, bin_width=0.2, rng=7)
    assert fixed.l1.frac_le_0_1 > boston_summaries[1.0].l1.frac_le_0_1 + 0.1
