"""Figures, tables and exports of the GP model-selection view ([Fis16]), from states computed without a server."""
import json

import numpy as np
import pytest

from explorer.chunks import IN_PROCESS
from explorer.kernels import Exponential
from explorer.model_selection import selection
from explorer.model_selection.criterion import safe_value
from explorer.views import model_selection as V
from explorer.views.model_selection import figures as F
from tests.views.common.offline import assert_offline_page, read_plain_csv
from tests.views.model_selection.settings import small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

def test_exports_have_the_expected_columns():
    state = small_state()
    empty = V.csv_text(state, "optima")
    assert empty.splitlines() == [",".join(V.EXPORT_COLUMNS["optima"])]
    state.refresh()
    assert state.wait(timeout=60)
    for what in ("curves", "optima", "ranking"):
        text = V.csv_text(state, what)
        assert not text.startswith("#")  # a plain table: the settings are in the sidecar
        frame = read_plain_csv(text, V.EXPORT_COLUMNS[what])
        assert len(frame) > 0
    optima = read_plain_csv(V.csv_text(state, "optima"), V.EXPORT_COLUMNS["optima"])
    assert list(optima["criterion"]) == ["evidence", "loo"] and optima["test_smse"].notna().all()
    assert "lengthscale" in optima["hyperparameters"][0]
    sidecar = json.loads(F.settings_text(state))
    assert sidecar["export"] == "GP model selection ([Fis16])"
    data = state.dataset
    assert sidecar["files"] == [f"model-selection-{w}_{data}.csv" for w in ("criteria-curves", "optima", "ranking")]
    assert sidecar["settings"] == {**F.settings(state), "dataset": "teacher", "n_points": 32, "criteria": [
        "evidence", "loo"], "seed": 0}
    for what in ("curves", "predictions", "ranking"):
        html = V.html_text(state, what)
        assert "<html" in html.lower()
    assert "bokeh" in V.html_text(state, "curves").lower()
    for what in ("curves", "predictions"):
        assert_offline_page(V.html_text(state, what))


def test_tables_and_figures_read_well():
    state = small_state()
    state.refresh()
    assert state.wait(timeout=60)
    # hyperparameters as a reader writes them, not JSON
    ranking, optima = V.ranking_frame(state), V.optima_frame(state)
    assert ranking.columns.tolist() == ["kernel", "evidence: rank (value)", "loo: rank (value)",
                                        "smse: rank (value)", "hyperparameters (selected by loo)"]
    assert ranking["hyperparameters (selected by loo)"].str.match(r"ℓ = [\d.e+-]+, σ_f = [\d.e+-]+, σ_n = ").all()
    assert sorted(ranking["loo: rank (value)"].str.split(" ").str[0]) == ["1", "2"]
    assert ranking["loo: rank (value)"].iloc[0].startswith("1 (")  # sorted by the 'select by' rank
    assert optima.columns.tolist() == ["criterion", "value (lower is better)", "hyperparameters", "converged",
                                       "test SMSE", "test MSLL"]
    assert not optima["hyperparameters"].str.contains("{").any()
    assert F.hyperparameter_text({"lengthscale": 0.8512, "signal_std": 1.2, "k1.period": 2.0,
                                  "lengthscale_ard": [1.0, 2.5]}) == "ℓ = 0.851, σ_f = 1.2, k1.T = 2, lengthscale_ard = [1, 2.5]"
    # legends beside the data with click-to-hide, and the better direction stated
    for figure in (V.criteria_plot(state), V.prediction_plot(state)):
        kwargs = figure.opts.get().kwargs
        assert kwargs["legend_position"] == "right" and kwargs["legend_opts"] == {"click_policy": "hide"}
    assert "lower is better" in V.criteria_plot(state).opts.get().kwargs["title"]


def test_a_criterion_that_is_not_finite_is_shown_as_a_message_and_not_ranked(monkeypatch):
    real = safe_value
    monkeypatch.setattr(selection, "safe_value", lambda crit, kernel, *args: (
        np.nan if isinstance(kernel, Exponential) and crit.name == "evidence" else real(crit, kernel, *args)))
    state = small_state()
    # the patched core function exists in this process only: compute here, not on the Dask workers
    monkeypatch.setattr(type(state), "executor", property(lambda self: IN_PROCESS))
    state.refresh()
    assert state.wait(timeout=60) and state.ranking.complete
    rows = {r.kernel_name: r for r in state.ranking.rows}
    assert rows["exponential"].ranks["evidence"] is None and rows["se"].ranks["evidence"] == 1
    table = V.ranking_frame(state).set_index("kernel")
    assert table.loc["exponential", "evidence: rank (value)"] == F.NOT_RANKED
    assert table.loc["se", "evidence: rank (value)"].startswith("1 (")
    assert F.unranked(state) == [("exponential", "evidence")]
    assert "evidence is not finite for the exponential kernel, so exponential is not ranked by evidence." in \
        V.summary(state)
    long = read_plain_csv(V.csv_text(state, "ranking"), V.EXPORT_COLUMNS["ranking"]).set_index(["kernel", "criterion"])
    assert np.isnan(long.loc[("exponential", "evidence"), "rank"]) and long.loc[("se", "evidence"), "rank"] == 1


def test_multi_input_csv_predicted_vs_target(rng):
    X = rng.normal(size=(40, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=40)
    text = "a,b,y\n" + "\n".join(f"{a:.6f},{b:.6f},{c:.6f}" for (a, b), c in zip(X, y))
    state = small_state(n_points=30, n_test=10, standardize=True, rank_kernels=["se"])
    state.upload_csv("plane.csv", text)
    assert state.dataset == V.UPLOAD and state.target == "y"
    state.refresh()
    assert state.wait(timeout=60)
    assert state.error == "" and state.problem.d == 2 and state.problem.y_test.size == 10
    overlay = V.prediction_plot(state)
    assert "Predicted vs target" in overlay.opts.get().kwargs["title"]
