"""Figures, tables and exports of the GP model-selection view (seed 001), from states computed without a server."""
import io

import numpy as np
import pandas as pd
import pytest

from explorer.views import model_selection as V

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

SMALL = dict(n_points=32, n_test=32, criteria=["evidence", "loo"], rank_kernels=["se", "exponential"],
             curve_points=5, n_restarts=1, max_iter=8, n_partitions=4, n_objects=4)


def small_state(**settings) -> V.SelectionState:
    return V.SelectionState(**{**SMALL, **settings})


def test_exports_have_the_expected_columns():
    state = small_state()
    empty = V.csv_text(state, "optima")
    assert empty.splitlines()[1].split(",") == V.EXPORT_COLUMNS["optima"]
    state.refresh()
    assert state.wait(timeout=60)
    for what in ("curves", "optima", "ranking"):
        text = V.csv_text(state, what)
        assert text.startswith("# GP model selection (seed 001): dataset=teacher N=32")
        frame = pd.read_csv(io.StringIO(text), comment="#")
        assert list(frame.columns) == V.EXPORT_COLUMNS[what]
        assert len(frame) > 0
    optima = pd.read_csv(io.StringIO(V.csv_text(state, "optima")), comment="#")
    assert list(optima["criterion"]) == ["evidence", "loo"] and optima["test_smse"].notna().all()
    assert "lengthscale" in optima["hyperparameters"][0]
    for what in ("curves", "predictions", "ranking"):
        html = V.html_text(state, what)
        assert "<html" in html.lower()
    assert "bokeh" in V.html_text(state, "curves").lower()


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
