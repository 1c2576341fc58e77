"""The no-refit approximations beside the replica theory (issue 25) in the GP tabs: the linear response (IJ) and the
leave-one-out limit of the learning curve, the IJ mean and variance at the test inputs. Their values are the core's
(``linear_response``) called directly on the state's problem; the legends name them, the gap table has their
columns in Monte-Carlo standard errors, the CSV exports carry them; IJ is left out, with a note, for the
ε-insensitive loss.

Uses the generated ``teacher`` set (N = 64) and 20 Monte-Carlo samples per S, so the file runs in seconds.
"""

import io

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("panel")

import holoviews as hv  # noqa: E402

from explorer.gp_bootstrap import linear_response  # noqa: E402
from explorer.losses import get_loss  # noqa: E402
from explorer.views.gp_bootstrap import figures as plots  # noqa: E402
from explorer.views.gp_bootstrap.state import MC_GRID, THEORY_GRID, GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import HoldoutTab, LearningCurveTab  # noqa: E402
from tests.views.gp_bootstrap.conftest import computed_state  # noqa: E402

IJ_LABEL, LOO_LABEL = "linear response (IJ)", "leave-one-out at σ²N/S"

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def legend_labels(figure) -> list[str]:
    return [item.label.value for item in hv.render(figure, backend="bokeh").legend[0].items]


def test_ij_and_loo_limit_equal_the_core_called_directly(square):
    p = square.problem
    errors = [linear_response.linear_response_error(p.K, p.y, p.noise_var, v * p.n) for v in THEORY_GRID]
    lr = square.linear_response
    np.testing.assert_array_equal(lr.s_over_n, THEORY_GRID)
    np.testing.assert_allclose(lr.ij, [e.value for e in errors], rtol=1e-12)
    np.testing.assert_allclose(lr.loo_limit, [e.loo_limit for e in errors], rtol=1e-12)
    loo = [linear_response.loo_limit(p.K, p.y, p.noise_var, v * p.n).value for v in THEORY_GRID]
    np.testing.assert_allclose(lr.loo_limit, loo, rtol=1e-12)


def test_legend_and_gap_table_name_ij_and_the_loo_limit(square):
    labels = legend_labels(plots.learning_curve_plot(square))
    assert labels[:6] == ["ADATAP theory", "approximate ADATAP", "variational Gaussian (VG)", "mean field (MF)",
                          IJ_LABEL, LOO_LABEL]
    gaps, points = plots.gap_frame(square), square.curve_mc.points
    for row, p in zip(gaps.itertuples(), points):
        j = THEORY_GRID.index(p.s_over_n)
        for method in ("ij", "loo_limit"):
            value = getattr(square.linear_response, method)[j]
            assert getattr(row, f"gap_se_{method}") == pytest.approx((value - p.mc_mean) / p.mc_se, rel=1e-12)
            assert getattr(row, f"gap_pct_{method}") == pytest.approx(100 * (value - p.mc_mean) / p.mc_mean, rel=1e-12)
    text = plots.gap_table(square)
    assert "| S/N | ADATAP | approx. ADATAP | VG | MF | IJ | LOO limit |" in text and "standard errors" in text
    last = gaps.iloc[-1]
    assert f"{last['gap_pct_ij']:+.1f} % ({last['gap_se_ij']:+.1f} s.e.) | " \
           f"{last['gap_pct_loo_limit']:+.1f} % ({last['gap_se_loo_limit']:+.1f} s.e.) |" in text
    assert len([line for line in text.splitlines() if line.startswith("| ") and "S/N" not in line]) == len(MC_GRID)


def test_csv_carries_ij_the_loo_limit_and_their_gaps(square):
    table = pd.read_csv(io.StringIO(plots.csv_text(square, "curve")))
    assert list(table.columns) == plots.EXPORT_COLUMNS["curve"]
    assert {"ij", "loo_limit", "gap_se_ij", "gap_pct_loo_limit"} <= set(table.columns)
    on_grid = table[table["s_over_n"].isin(THEORY_GRID)]
    np.testing.assert_allclose(on_grid["ij"], square.linear_response.ij, rtol=1e-12)
    np.testing.assert_allclose(on_grid["loo_limit"], square.linear_response.loo_limit, rtol=1e-12)
    mc_rows = table[table["mc_mean"].notna()].reset_index(drop=True)
    np.testing.assert_allclose(mc_rows["gap_se_ij"], plots.gap_frame(square)["gap_se_ij"], rtol=1e-12)


def test_eps_insensitive_loss_keeps_the_loo_limit_and_says_ij_is_square_loss_only(eps):
    p = eps.problem
    g = get_loss("eps-insensitive", **eps.loss_params)
    loo = [linear_response.loo_limit(p.K, p.y, p.noise_var, v * p.n, loss=g).value for v in THEORY_GRID]
    assert eps.linear_response.ij is None
    np.testing.assert_allclose(eps.linear_response.loo_limit, loo, rtol=1e-12)
    labels = legend_labels(plots.learning_curve_plot(eps))
    assert IJ_LABEL not in labels and LOO_LABEL in labels
    note = plots.vg_mf_note(eps)
    assert "linear response (IJ)" in note and "square loss only" in note
    assert LearningCurveTab(state=eps).note.object == note
    assert plots.gap_frame(eps)["gap_se_ij"].isna().all() and plots.gap_frame(eps)["gap_se_loo_limit"].notna().all()
    assert "| IJ |" not in plots.gap_table(eps) and "LOO limit" in plots.gap_table(eps)


def test_status_says_while_ij_is_computing(square):
    partial = GPBootstrapState(dataset="teacher", tab="curve", auto_mc=False)
    partial.param.update(theory_curve=square.theory_curve, linear_response=None)
    assert "IJ and leave-one-out limit: computing…" in LearningCurveTab(state=partial).describe()


def test_test_inputs_show_the_ij_mean_and_variance_of_the_core():
    s = computed_state(tab="holdout", holdout=10, s_over_n=1.5, mc_samples=50)
    p = s.problems.get(10)[1]
    core = linear_response.linear_response_moments(p.K, p.y, p.noise_var, 1.5 * p.n, p.cross(p.X_test))
    np.testing.assert_allclose(s.holdout_ij.mean, core.mean, rtol=1e-12)
    np.testing.assert_allclose(s.holdout_ij.var, core.var, rtol=1e-12)
    for what in ("mean", "var"):
        assert legend_labels(plots.holdout_overlay(s, what)) == ["theory, eq. (48)", "IJ", "Monte-Carlo (± 1 s.e.)"]
    assert "IJ: the first-order linear response" in HoldoutTab(state=s).describe()
    table = pd.read_csv(io.StringIO(plots.csv_text(s, "holdout")))
    assert list(table.columns) == plots.EXPORT_COLUMNS["holdout"]
    np.testing.assert_allclose(table["ij_mean"], core.mean, rtol=1e-12)
    np.testing.assert_allclose(table["ij_var"], core.var, rtol=1e-12)
