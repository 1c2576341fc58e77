"""GP model-selection view state (seed 001) without a server: parameters, jobs, cancel, cache, exports, errors;
the thesis experiments of the Experiments sub-panel against the core functions called directly."""
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import assert_documented_controls

from explorer.model_selection import criteria as selection
from explorer import datasets
from explorer.model_selection import experiments as sx
from explorer.views.model_selection import tab as V
from explorer.views.common.jobs import call_now

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

SMALL = dict(n_points=32, n_test=32, criteria=["evidence", "loo"], rank_kernels=["se", "exponential"],
             curve_points=5, n_restarts=1, max_iter=8, n_partitions=4, n_objects=4)


def small_state(**settings) -> V.SelectionState:
    return V.SelectionState(**{**SMALL, **settings})


def test_every_control_has_label_doc_and_bounds():
    assert_documented_controls(V.SelectionState)
    assert V.SelectionState.param.criteria.objects == list(selection.CRITERIA)
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
    start = selection.initial_hyperparameters("se", p.X, p.y)
    ref = selection.select_hyperparameters(p.X, p.y, start.kernel, ("evidence", "loo"), noise_var=start.noise_var,
                                           rng=1,
                                           n_restarts=1, max_iter=8, n_folds=5, n_partitions=4, n_objects=4)
    assert [r.value for r in state.optima.results] == pytest.approx([r.value for r in ref], rel=1e-12)
    assert all(r.test is not None and 0 < r.test.smse < 1 for r in state.optima.results)
    # the ranking equals rank_functional_forms for the same seed
    rows = selection.rank_functional_forms(p.X, p.y, ("se", "exponential"), select_by="loo",
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
    assert set(table["kernel"]) == {"se", "exponential"} and {"rank evidence", "rank loo", "rank smse"} <= set(table)


def test_parameter_follows_the_kernel():
    state = small_state(kernel="periodic", parameter="period", rank_kernels=["se"], auto_run=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.curves.parameter == "period" and state.curves.reference["period"] == 2.0
    state.kernel = "se"  # se has no period: the curve falls back to the lengthscale
    assert state.parameter == "lengthscale"
    assert state.wait(timeout=60)
    assert state.curves.parameter == "lengthscale"


def test_cancel_stops_between_criteria():
    state = small_state(criteria=["evidence", "loo", "kfold", "asc-beta-noise"], rank_kernels=["se", "rq", "exponential"])

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


def test_tab_builds_without_a_server():
    pn = pytest.importorskip("panel")
    state = small_state()
    tab = V.SelectionTab(state=state)
    layout = pn.panel(tab)  # renders the tab: starts the jobs
    assert state.started
    assert state.wait(timeout=60)  # without a server the jobs update the panes from their thread: wait first
    assert layout.get_root() is not None
    assert "N = 32 training cases" in tab.status.object
    assert tab.cancel.disabled
    assert tab._export("csv", "curves").getvalue().splitlines()[1].startswith("criterion,")
    assert list(tab.tables["ranking"].object["kernel"]) != []


# ------------------------------------------------------------------ thesis experiments (Experiments sub-panel)

#: The real series, as the project's tests read it: ../shared/datasets/ next to the repository.
TEMPERATURE_CSV = Path(__file__).resolve().parents[3] / ".." / "shared" / "datasets" / \
    "berkeley_tavg_doy_mean_1880_2014.csv"
TINY = dict(repetitions=2, criteria=["evidence", "loo", "asc-beta-noise"], n_partitions=2, n_objects=4,
            n_restarts=1, max_iter=4)
ASC = dict(n_partitions=2, n_objects=4, entropy="zero")
FIT = dict(n_restarts=1, max_iter=4)
CRIT = ("evidence", "loo", "asc-beta-noise")


def run_experiment(**settings) -> V.SelectionExperimentState:
    state = V.SelectionExperimentState(**{**TINY, **settings})
    state.refresh()
    assert state.result is None and state.jobs["experiment"].message == "not run yet: press 'Run'."
    state.run()
    assert state.wait(timeout=120)
    assert state.error == "" and state.jobs["experiment"].error == "", state.jobs["experiment"].error
    assert state.jobs["experiment"].message == "done"
    return state


def table(state) -> list[dict]:
    return V.experiment_frame(state).to_dict("records")


def test_experiment_controls_are_documented_and_match_the_cli():
    assert_documented_controls(V.SelectionExperimentState)
    assert list(V.EXPERIMENTS) == ["curves", "hyperparameters", "functional-forms", "beta"]  # the CLI's choices
    assert V.SelectionExperimentState.param.teacher.objects == list(sx.TEACHERS)
    with pytest.raises(ValueError, match=r"SelectionExperimentState\.repetitions' must be at least 1, not 0"):
        V.SelectionExperimentState(repetitions=0)
    with pytest.raises(ValueError, match=r"SelectionExperimentState\.experiment' does not accept 'bootstrap'"):
        V.SelectionExperimentState(experiment="bootstrap")


def test_curves_experiment_shows_the_core_numbers():
    state = run_experiment(experiment="curves", parameter="noise_std", seed=3)
    ref = sx.curves_experiment("noise_std", CRIT, n_datasets=2, rng=3, **ASC).as_dict()
    rows = table(state)
    assert [r["criterion"] for r in rows] == list(CRIT)
    for r in rows:
        expected = ref["argmin_summary"][r["criterion"]]
        assert [r["argmin_q25"], r["argmin_median"], r["argmin_q75"]] == pytest.approx(
            [expected["q25"], expected["median"], expected["q75"]], rel=1e-12, nan_ok=True)
        assert r["true_value"] == 0.1
    # the figure draws the mean curves of the core, normalised (one curve per criterion)
    curves = V.experiment_plot(state).Curve.values()
    np.testing.assert_allclose(curves[1].dimension_values(1), V.normalise(ref["mean"][1]), rtol=1e-12)


def test_hyperparameter_experiment_shows_the_core_numbers():
    state = run_experiment(experiment="hyperparameters", teacher="rational_quadratic", noise_std=0.2, seed=5)
    ref = sx.hyperparameter_experiment(CRIT, teacher="rational_quadratic", sigma_n=0.2, n_datasets=2, rng=5,
                                       **FIT, **ASC).as_dict()
    rows = table(state)
    assert [r["criterion"] for r in rows] == list(CRIT)
    for r in rows:
        c = r["criterion"]
        got = [r[f"{m}_{q}"] for m in ("smse", "msll") for q in ("q25", "median", "q75")] + [r["wins_smse"]]
        want = [ref[m][c][q] for m in ("smse", "msll") for q in ("q25", "median", "q75")] + [ref["wins_smse"][c]]
        assert got == pytest.approx(want, rel=1e-12, nan_ok=True)
    assert ref["setting"] in V.experiment_summary(state)


def test_functional_form_experiment_shows_the_core_numbers():
    state = run_experiment(experiment="functional-forms", select_by="evidence", teachers=["exponential", "periodic"],
                           repetitions=1, seed=7)
    ref = sx.functional_form_experiment("evidence", CRIT, teachers=("exponential", "periodic"), n_datasets=1,
                                        rng=7, **FIT, **ASC)
    rows = table(state)
    assert [(r["setting"], r["ranked_by"]) for r in rows] == [(t, k) for t in ("exponential", "periodic")
                                                               for k in CRIT]
    for r, (s, k) in zip(rows, [(s, k) for s in range(2) for k in range(3)]):
        assert [r[f"mean_rank_{st}"] for st in ref.students] == ref.mean_rank[s, k].tolist()
        assert r["hit_rate"] == ref.hit_rate[s, k]


def test_beta_experiment_shows_the_core_numbers():
    state = run_experiment(experiment="beta", teacher="periodic", seed=11, n_partitions=5)  # beta uses J = 1
    ref = sx.beta_experiment("periodic", n_datasets=2, n_objects=4, entropy="zero", rng=11)
    (row,) = table(state)
    d = ref.as_dict()
    assert [row["beta_star_q25"], row["beta_star_median"], row["beta_star_q75"], row["n_failed"]] == pytest.approx(
        [d["beta_star"]["q25"], d["beta_star"]["median"], d["beta_star"]["q75"], d["n_failed"]], rel=1e-12)
    assert row["beta_at_max_of_mean"] == ref.betas[np.nanargmax(ref.mean)]
    mean_curve = V.experiment_plot(state).Curve.values()[-1]
    np.testing.assert_allclose(mean_curve.dimension_values(1), ref.mean, rtol=1e-12)


@pytest.mark.parametrize("experiment", ["hyperparameters", "functional-forms"])
def test_temperature_experiments_show_the_core_numbers(experiment):
    if not TEMPERATURE_CSV.is_file():
        pytest.skip(f"{TEMPERATURE_CSV} is absent (the shared datasets folder next to the repository)")
    state = run_experiment(experiment=experiment, data="temperature", temperature_csv=str(TEMPERATURE_CSV),
                           repetitions=1, criteria=["evidence", "loo"], seed=2)
    data = sx.load_temperature(TEMPERATURE_CSV)
    if experiment == "hyperparameters":  # Experiment 4: 64 training / 301 test cases
        ref = sx.hyperparameter_experiment(("evidence", "loo"), data=data, n_datasets=1, rng=2, **FIT, **ASC)
        assert [r["smse_median"] for r in table(state)] == pytest.approx(ref.smse[:, 0].tolist(), rel=1e-12)
        assert "64 training / 301 test cases" in V.experiment_summary(state)
    else:  # Experiment 8: the test SMSE is one more ranking key
        ref = sx.functional_form_experiment("loo", ("evidence", "loo"), data=data, n=64, n_datasets=1, rng=2,
                                            **FIT, **ASC)
        rows = table(state)
        assert [r["ranked_by"] for r in rows] == ["evidence", "loo", "smse"]
        assert [[r[f"mean_rank_{s}"] for s in ref.students] for r in rows] == ref.mean_rank[0].tolist()
    # an uploaded copy of the file is the same data: same cache entry
    again = V.SelectionExperimentState(**{**TINY, "experiment": experiment, "repetitions": 1,
                                          "criteria": ["evidence", "loo"], "seed": 2})
    again.upload_temperature("temperature.csv", TEMPERATURE_CSV.read_bytes())
    again.refresh()
    assert again.data == "temperature" and again.result is state.result
    assert again.jobs["experiment"].message == "done (cached)"


def test_bad_temperature_csv_gives_a_message(tmp_path):
    state = V.SelectionExperimentState(experiment="hyperparameters", data="temperature")
    state.refresh()
    assert "give the path of the temperature CSV" in state.error
    state.temperature_csv = str(tmp_path / "absent.csv")
    assert "there is no file" in state.error and "absent.csv" in state.error
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("day,anomaly\n" + "\n".join(f"{i},{i / 100}" for i in range(1, 366)))
    state.temperature_csv = str(wrong)
    assert "target column 'mean_anomaly_by_file_doy' is not in" in state.error
    short = tmp_path / "short.csv"
    short.write_text("day_of_year,mean_anomaly_by_file_doy\n" + "\n".join(f"{i},{i / 100}" for i in range(1, 31)))
    state.temperature_csv = str(short)
    assert "has 30 rows" in state.error and "at least 66 rows" in state.error
    state.temperature_csv = str(tmp_path)  # a folder
    assert "there is no file" in state.error
    state.temperature_csv = ""
    state.upload_temperature("latin1.csv", b"day_of_year,mean\xe9\n1,2\n")
    assert "not UTF-8" in state.error
    state.run()  # nothing starts with bad data
    assert state.result is None and not state.jobs["experiment"].running and "Traceback" not in state.error
    # curves and beta always use teacher draws: a missing temperature file does not matter to them
    state.experiment = "beta"
    assert state.error == "" and state.settings()["data"] == "teacher"


def test_experiment_cancel_stops_between_steps_and_run_restarts():
    state = V.SelectionExperimentState(**{**TINY, "experiment": "hyperparameters", "repetitions": 6})

    def dispatch(callback):  # cancel as soon as the first progress report has been applied
        callback()
        if state.jobs["experiment"].message.startswith("repetition"):
            state.cancel()

    state.dispatch = dispatch
    state.refresh()
    state.run()
    assert state.wait(timeout=120)
    status = state.jobs["experiment"]
    assert status.message.startswith("cancelled after ") and status.message.endswith(" of 18"), status.message
    assert int(status.message.split()[2]) < 18 and status.error == "" and not status.running
    assert state.result is None
    state.dispatch = call_now
    state.repetitions = 1
    state.run()
    assert state.wait(timeout=120)
    assert state.jobs["experiment"].message == "done" and state.result.n_repetitions == 1


def test_experiment_cache_and_exports():
    first = run_experiment(experiment="beta", repetitions=1)
    second = V.SelectionExperimentState(**{**TINY, "experiment": "beta", "repetitions": 1})
    second.refresh()  # no Run needed: the result for these settings is cached
    assert second.result is first.result and second.jobs["experiment"].message == "done (cached)"
    second.repetitions = 2  # other settings: no result until Run
    assert second.result is None and "press 'Run'" in second.jobs["experiment"].message
    text = V.experiment_csv(first)
    assert text.startswith("# GP model selection experiment (seed 001): experiment=beta data=teacher repetitions=1")
    frame = pd.read_csv(io.StringIO(text), comment="#")
    assert list(frame.columns) == V.EXPERIMENT_COLUMNS["beta"] and len(frame) == 1
    payload = json.loads(V.experiment_json(first))  # valid JSON (NaN written as null)
    assert payload["experiment"] == "beta" and payload["settings"]["repetitions"] == 1
    assert payload["mean"] == pytest.approx(first.result.mean.tolist())
    empty = V.SelectionExperimentState(experiment="curves")
    assert pd.read_csv(io.StringIO(V.experiment_csv(empty)), comment="#").columns.tolist() == \
        V.EXPERIMENT_COLUMNS["curves"]


def test_experiments_panel_builds_runs_and_hides_unused_controls():
    pn = pytest.importorskip("panel")
    tab = V.SelectionTab(state=small_state(auto_run=False, criteria=["evidence"], rank_kernels=["se"]),
                         experiments=V.SelectionExperimentState(**{**TINY, "experiment": "curves", "repetitions": 1}))
    root = pn.panel(tab).get_root()
    panel = tab.experiments_panel
    assert root is not None and tab.experiments.started and panel.cancel.disabled
    visible = {name for name, w in panel.widgets.items() if w.visible}
    assert {"parameter", "criteria", "repetitions"} <= visible and not {"teacher", "select_by", "data"} & visible
    panel.run.clicks += 1
    assert tab.experiments.wait(timeout=60) and tab.state.wait(timeout=60)
    assert panel.job_message.object == "experiment: done" and panel.progress.value == 100
    assert list(panel.table.object["criterion"]) == TINY["criteria"]
    tab.experiments.param.update(experiment="hyperparameters", data="temperature")
    assert panel.upload.visible and panel.widgets["temperature_csv"].visible and panel.error.visible
    assert panel._export("json").getvalue().startswith("{")
