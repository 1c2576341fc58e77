"""GP model-selection view state ([Fis16]) without a server: parameters, jobs, cancel, cache, errors."""

import numpy as np
import pytest

from explorer import datasets
from explorer.chunks import IN_PROCESS
from explorer.model_selection.criterion import CRITERIA
from explorer.model_selection.optimisation import initial_hyperparameters
from explorer.model_selection.selection import rank_functional_forms, select_hyperparameters
from explorer.views import model_selection as V
from explorer.views.common.state.jobs import call_now
from tests.conftest import assert_documented_controls
from tests.views.model_selection.settings import small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

def test_every_control_has_label_doc_and_bounds():
    assert_documented_controls(V.SelectionState)
    assert V.SelectionState.param.criteria.objects == list(CRITERIA)
    assert "bootstrap632" in V.SelectionState.param.criteria.objects
    with pytest.raises(ValueError, match=r"SelectionState\.n_points' must be at least 8, not 2"):
        V.SelectionState(n_points=2)
    with pytest.raises(ValueError, match=r"SelectionState\.criteria' does not accept 'aic'"):
        V.SelectionState(criteria=["aic"])


def test_nothing_is_computed_before_refresh():
    state = V.SelectionState()
    state.kernel = "rq"
    assert not state.started and state.problem is None and not any(j.running for j in state.jobs.values())


def test_curve_optimisation_and_ranking_jobs_complete_on_teacher_data():
    state = small_state(seed=1)
    state.refresh()
    assert state.error == ""
    assert state.wait(timeout=60)
    assert {k: j.message for k, j in state.jobs.items()} == {k: "done" for k in V.JOB_KINDS}
    p = state.problem
    assert p.teacher and p.n == 32 and p.y_test.size == 32
    curves = state.curves
    assert curves.complete and [c.criterion for c in curves.curves] == ["evidence", "loo"]
    assert curves.reference["lengthscale"] == 1.0 and curves.reference["noise_std"] == pytest.approx(0.1)
    for c in curves.curves:  # the grid spans one decade each side of the teacher's ℓ = 1
        assert c.grid[0] == pytest.approx(0.1) and c.grid[-1] == pytest.approx(10.0) and np.isfinite(c.best)
    # the optimisation equals the core's select_hyperparameters for the same seed and start
    start = initial_hyperparameters("se", p.X, p.y)
    ref = select_hyperparameters(p.X, p.y, start.kernel, ("evidence", "loo"), noise_var=start.noise_var,
                                           rng=1,
                                           n_restarts=1, max_iter=8, n_folds=5, n_partitions=4, n_objects=4)
    assert [r.value for r in state.optima.results] == pytest.approx([r.value for r in ref], rel=1e-12)
    assert all(r.test is not None and 0 < r.test.smse < 1 for r in state.optima.results)
    # the ranking equals rank_functional_forms for the same seed
    rows = rank_functional_forms(p.X, p.y, ("se", "exponential"), select_by="loo",
                                           rank_by=("evidence", "loo"), rng=1, n_restarts=1, max_iter=8,
                                           X_test=p.X_test, y_test=p.y_test, n_folds=5, n_partitions=4, n_objects=4)
    assert [r.ranks for r in state.ranking.rows] == [r.ranks for r in rows]
    assert [r.values["evidence"] for r in state.ranking.rows] == pytest.approx([r.values["evidence"] for r in rows])
    # the figures build with results; every curve is normalised to [0, 1] with its minimum at 0
    V.criteria_plot(state)
    V.prediction_plot(state)
    frame = V.curve_frame(state)
    assert frame.groupby("criterion")["normalised"].min().tolist() == [0.0, 0.0]
    assert (frame[frame.is_minimum]["normalised"] == 0.0).all()
    table = V.ranking_frame(state)
    assert set(table["kernel"]) == {"se", "exponential"}
    assert {"evidence: rank (value)", "loo: rank (value)", "smse: rank (value)"} <= set(table)


def test_parameter_follows_the_kernel():
    state = small_state(kernel="periodic", parameter="period", rank_kernels=["se"], auto_run=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.curves.parameter == "period" and state.curves.reference["period"] == 2.0
    state.kernel = "se"  # se has no period: the curve falls back to the lengthscale
    assert state.parameter == "lengthscale"
    assert state.wait(timeout=60)
    assert state.curves.parameter == "lengthscale"


def test_cancel_stops_between_criteria(monkeypatch):
    state = small_state(criteria=["evidence", "loo", "kfold", "asc-beta-noise"], rank_kernels=["se", "rq", "exponential"])
    # in this process: on a worker the whole small job ends before the cancel, relayed every 0.2 s, reaches it
    # (tests/runtime/test_engine.py stops a call on a worker)
    monkeypatch.setattr(type(state), "executor", property(lambda self: IN_PROCESS))

    cancelled = set()

    def dispatch(callback):  # cancel (once) as soon as the first criterion (or kernel) has been published
        callback()
        for kind, result in (("optima", state.optima), ("ranking", state.ranking)):
            if kind not in cancelled and result is not None and not result.complete:
                cancelled.add(kind)
                state.cancel(kind)

    state.dispatch = dispatch
    state.refresh()
    assert state.wait(timeout=60)
    for kind in ("optima", "ranking"):
        assert state.jobs[kind].message.startswith("cancelled after "), state.jobs[kind].message
        assert state.jobs[kind].error == "" and not state.jobs[kind].running
    # the partial result stays (cancelled after 1 criterion, or 2 when the first was published during refresh)
    assert 1 <= len(state.optima.results) < 4 and not state.optima.complete
    assert 1 <= len(state.ranking.rows) < 3 and not state.ranking.complete
    # Run starts them again
    state.dispatch = call_now
    state.run()
    assert state.wait(timeout=60)
    assert state.optima.complete and state.ranking.complete


def test_auto_run_off_waits_for_run():
    state = small_state(auto_run=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.optima is None and "press 'Run'" in state.jobs["optima"].message
    assert state.curves.complete  # the curves do not wait for the button
    state.run()
    assert state.wait(timeout=60)
    assert state.optima.complete and state.ranking.complete


def test_cache_hit_is_instant():
    first = small_state()
    first.refresh()
    assert first.wait(timeout=60)
    second = small_state()
    second.refresh()
    assert {k: j.message for k, j in second.jobs.items()} == {k: "done (cached)" for k in V.JOB_KINDS}
    assert second.curves is first.curves and second.optima is first.optima and second.ranking is first.ranking


def test_errors_become_readable_messages():
    state = small_state()
    state.upload_csv("x.csv", b"\xff\xfe\x00garbage")
    assert "UTF-8" in state.error
    state = small_state(criteria=["asc-beta-noise"], n_points=16, n_objects=20)
    state.refresh()  # no exception
    assert "ASC needs 2 subsets of M = 20" in state.error and "lower 'ASC: objects M'" in state.error
    assert state.problem is None and state.curves is None
    text = "a,y\n" + "\n".join(f"{i},{i % 2}" for i in range(5))
    state = small_state()
    state.upload_csv("tiny.csv", text)
    state.refresh()
    assert state.error.startswith("The data cannot be used:") and "5 data rows" in state.error
    assert "Traceback" not in state.error
    assert V.describe_error(np.linalg.LinAlgError("not positive definite")).startswith(
        "The covariance matrix could not be factorised")
    assert isinstance(datasets.DatasetError("x"), ValueError)


GOOD_CSV = "a,y\n" + "\n".join(f"{i / 10},{(i % 7) / 3}" for i in range(40))


@pytest.mark.parametrize("started", [False, True])
def test_a_stale_upload_error_clears_when_its_cause_goes_away(started):
    state = small_state(n_points=16, n_test=8, criteria=["evidence"], rank_kernels=["se"], auto_run=False)
    if started:
        state.refresh()
    state.upload_csv("bad.csv", b"\xff\xfegarbage")
    assert state.error.startswith("bad.csv is not UTF-8 text")
    state.dataset = "toy"  # switching the dataset clears it
    assert state.error == ""
    state.upload_csv("bad.csv", b"\xff\xfegarbage")
    state.upload_csv("empty.csv", b"")  # an empty file next: its own message, not the old one
    assert state.error.startswith("empty.csv is empty")
    state.upload_csv("good.csv", GOOD_CSV)  # a good file clears it
    assert state.wait(timeout=60) and state.error == "" and state.dataset == V.UPLOAD
    if started:  # a file that cannot be used, then an empty one, then a good one
        state.upload_csv("text.csv", "a,y\nx,z\n")
        assert state.error.startswith("The data cannot be used:")
        state.upload_csv("empty.csv", b"")
        assert state.error.startswith("empty.csv is empty")
        state.upload_csv("good.csv", GOOD_CSV)
        assert state.wait(timeout=60) and state.error == "" and state.problem.n == 16
    state.close()
