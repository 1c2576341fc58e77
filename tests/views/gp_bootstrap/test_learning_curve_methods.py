"""VG and MF next to ADATAP in the learning-curve tab: state values, theory − Monte-Carlo gaps, exports, legend.

Uses the generated ``teacher`` set (N = 64) and 20 Monte-Carlo samples per S, so the file runs in seconds.
"""

import io

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("panel")

import holoviews as hv  # noqa: E402

from explorer.gp_bootstrap import mean_field, variational  # noqa: E402
from explorer.views.common.layout.widgets import Revision, live  # noqa: E402
from explorer.views.common.state.jobs import call_now  # noqa: E402
from explorer.views.gp_bootstrap import figures as plots  # noqa: E402
from explorer.views.gp_bootstrap.state import MC_GRID, METHODS, THEORY_GRID, GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import LearningCurveTab  # noqa: E402
from tests.views.gp_bootstrap.conftest import TIMEOUT  # noqa: E402

VG_LABEL, MF_LABEL = "variational Gaussian (VG)", "mean field (MF)"

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def legend_labels(state: GPBootstrapState) -> list[str]:
    fig = hv.render(plots.figure(state, "curve"), backend="bokeh")
    return [item.label.value for item in fig.legend[0].items]


def test_vg_and_mf_theory_equal_the_core_curves(square):
    p, grid = square.problem, np.asarray(THEORY_GRID)
    vg = variational.vg_learning_curve(p.K, p.y, p.noise_var, grid * p.n)
    mf = mean_field.mf_learning_curve(p.K, p.y, p.noise_var, grid * p.n)
    np.testing.assert_allclose(square.theory_curve.theory_vg, [variational.vg_test_error(s) for s in vg], rtol=1e-12)
    np.testing.assert_allclose(square.theory_curve.theory_mf, [mean_field.mf_test_error(s) for s in mf], rtol=1e-12)
    # the warm start along the grid lands where a cold solve does, within the solver's tolerance (1e-3 on Δλ)
    j = THEORY_GRID.index(1.0)
    cold = variational.solve_variational(p.K, p.y, p.noise_var, float(p.n), tol=1e-6)
    assert square.theory_curve.theory_vg[j] == pytest.approx(variational.vg_test_error(cold), rel=1e-2)


def test_monte_carlo_grid_lies_on_the_theory_grid():
    assert set(MC_GRID) <= set(THEORY_GRID)  # the gaps compare theory and MC at the same S, no interpolation


def test_gap_table_is_theory_minus_monte_carlo(square):
    gaps = plots.gap_frame(square)
    points = square.curve_mc.points
    assert gaps["s_over_n"].tolist() == [p.s_over_n for p in points]
    values = {"theory": square.theory_curve.theory, "theory_approx": square.theory_curve.theory_approx,
              "theory_vg": square.theory_curve.theory_vg, "theory_mf": square.theory_curve.theory_mf}
    assert list(values) == list(METHODS)
    for row, p in zip(gaps.itertuples(), points):
        for method, theory in values.items():
            t = theory[THEORY_GRID.index(p.s_over_n)]
            assert getattr(row, f"gap_pct_{method}") == pytest.approx(100 * (t - p.mc_mean) / p.mc_mean, rel=1e-12)
            assert getattr(row, f"gap_se_{method}") == pytest.approx((t - p.mc_mean) / p.mc_se, rel=1e-12)
    text = plots.gap_table(square)
    assert "| S/N | ADATAP | approx. ADATAP | VG | MF |" in text
    first = gaps.iloc[0]
    assert f"| {first['s_over_n']:g} | {first['gap_pct_theory']:+.1f} % ({first['gap_se_theory']:+.1f} s.e.) |" in text
    assert len([line for line in text.splitlines() if line.startswith("| ") and "S/N" not in line]) == len(MC_GRID)


def test_gap_table_waits_for_monte_carlo():
    s = GPBootstrapState(dataset="teacher", tab="curve", auto_mc=False)
    s.refresh()
    assert s.wait(TIMEOUT)
    assert s.curve_mc is None and plots.gap_frame(s).empty and "waiting" in plots.gap_table(s)


def test_csv_export_carries_vg_mf_and_the_gaps(square):
    text = plots.csv_text(square, "curve")
    table = pd.read_csv(io.StringIO(text))  # a plain table: no comment line
    assert list(table.columns) == plots.EXPORT_COLUMNS["curve"]
    assert {"theory_vg", "theory_mf", *plots.GAP_COLUMNS} <= set(table.columns)
    theory = table[table["s_over_n"].isin(THEORY_GRID)]
    np.testing.assert_allclose(theory["theory_vg"], square.theory_curve.theory_vg, rtol=1e-12)
    np.testing.assert_allclose(theory["theory_mf"], square.theory_curve.theory_mf, rtol=1e-12)
    mc_rows = table[table["mc_mean"].notna()].reset_index(drop=True)
    gaps = plots.gap_frame(square)
    np.testing.assert_allclose(mc_rows[plots.GAP_COLUMNS], gaps[plots.GAP_COLUMNS], rtol=1e-12)
    assert table.loc[table["mc_mean"].isna(), plots.GAP_COLUMNS].isna().all().all()


def test_html_export_shows_vg_mf_and_the_gap_table(square):
    html = plots.html_text(square, "curve")
    assert VG_LABEL in html and MF_LABEL in html
    assert "gap_pct_theory_vg" in html and "gap_se_theory_mf" in html


def test_legend_toggles_every_layer_and_keeps_the_choice_on_redraw(square):
    labels = legend_labels(square)
    assert labels[:4] == ["ADATAP theory", "approximate ADATAP", VG_LABEL, MF_LABEL]
    assert "Monte-Carlo (± 1 s.e.)" in labels
    stream = Revision()
    plot = hv.renderer("bokeh").get_plot(live(lambda: plots.learning_curve_plot(square), stream))
    legend = plot.state.legend[0]
    assert legend.click_policy == "mute"
    mc = next(item for item in legend.items if item.label.value == "Monte-Carlo (± 1 s.e.)")
    assert len(mc.renderers) == 2  # the points and their error bars go together
    vg = next(item for item in legend.items if item.label.value == VG_LABEL)
    vg.renderers[0].muted = True  # what a click in the browser does
    stream.event(revision=1)
    assert vg.renderers[0].muted and vg.renderers[0].muted_glyph.line_alpha == 0
    assert VG_LABEL in [item.label.value for item in plot.state.legend[0].items]


def test_eps_insensitive_loss_has_no_vg_mf_and_says_why(eps):
    assert eps.theory_curve.theory_vg is None and eps.theory_curve.theory_mf is None
    assert list(eps.theory_curve.method_values()) == ["theory", "theory_approx"]
    labels = legend_labels(eps)
    assert VG_LABEL not in labels and MF_LABEL not in labels and "ADATAP theory" in labels
    note = plots.vg_mf_note(eps)
    assert "square loss only" in note and "eps-insensitive" in note
    gaps = plots.gap_frame(eps)
    assert gaps[["gap_pct_theory_vg", "gap_se_theory_mf"]].isna().all().all()
    assert gaps["gap_pct_theory"].notna().all()
    assert "VG" not in plots.gap_table(eps).splitlines()[2]
    table = plots.frame(eps, "curve")
    assert table[["theory_vg", "theory_mf"]].isna().all().all() and table["theory"].notna().all()
    tab = LearningCurveTab(state=eps)
    assert tab.note.visible and tab.note.object == note
    assert "square loss only" in plots.html_text(eps, "curve")


def test_square_loss_shows_no_note(square):
    assert plots.vg_mf_note(square) == ""
    tab = LearningCurveTab(state=square)
    assert not tab.note.visible and tab.gaps.object == plots.gap_table(square)


def test_adatap_is_published_before_vg_and_mf_are_solved():
    s = GPBootstrapState(dataset="teacher", tab="curve", auto_mc=False)
    s.dispatch = call_now  # every update as it comes (a script's dispatcher would apply only the last, at ``wait``)
    seen = []
    s.param.watch(lambda e: seen.append(e.new) if e.new is not None else None, "theory_curve")
    s.refresh()
    assert s.wait(TIMEOUT)
    first, last = seen[0], seen[-1]
    assert np.all(np.isnan(first.theory_vg)) and np.all(np.isnan(first.theory_mf))
    np.testing.assert_array_equal(first.theory, last.theory)  # ADATAP does not wait for VG and MF
    assert np.all(np.isfinite(last.theory_vg)) and last is s.theory_curve
    partial = GPBootstrapState(dataset="teacher", tab="curve", auto_mc=False)
    partial.param.update(theory_curve=first)  # what the tab shows meanwhile
    assert "VG and MF: computing…" in LearningCurveTab(state=partial).describe()
