"""The thesis experiments of the model-selection Experiments sub-panel ([Fis16]) against the core functions
called directly, without a server."""
import json
from pathlib import Path

import holoviews as hv
import numpy as np
import pytest

from explorer.model_selection import experiments as sx
from explorer.views import model_selection as V
from explorer.views.common.layout.presentation import presented
from explorer.views.common.state.jobs import call_now
from tests.conftest import assert_documented_controls
from tests.views.common.figures import right_legend
from tests.views.common.offline import read_plain_csv

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

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
    # beside the data, click to hide a criterion; the title says which way is better
    assert right_legend(V.experiment_plot(state)).click_policy == "hide"
    assert "lower is better" in V.experiment_plot(state).opts.get().kwargs["title"]


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
    legend = right_legend(V.experiment_plot(state))  # beside the data curves, not over them
    assert [item.label.value for item in legend.items] == ["mean over data sets"]


@pytest.mark.parametrize("presentation", [False, True])
@pytest.mark.parametrize("experiment", list(V.EXPERIMENTS))
def test_before_a_run_the_figure_says_to_press_run_instead_of_showing_bare_axes(experiment, presentation):
    state = V.SelectionExperimentState(experiment=experiment)
    plot = hv.render(presented(V.experiment_plot(state), presentation), backend="bokeh")
    assert not any(axis.visible for axis in plot.xaxis + plot.yaxis) and not plot.legend
    (hint,) = plot.renderers
    assert hint.data_source.data["text"] == [f"Press 'Run experiment' to compute {experiment}"]
    assert plot.x_range.start < hint.data_source.data["x"][0] < plot.x_range.end  # centred, not at an edge
    assert plot.title.text == f"{experiment}: no result yet"


@pytest.mark.parametrize("experiment", ["hyperparameters", "functional-forms"])
def test_temperature_experiments_show_the_core_numbers(experiment):
    if not TEMPERATURE_CSV.is_file():
        pytest.skip(f"{TEMPERATURE_CSV} is absent (the shared datasets folder next to the repository)")
    state = run_experiment(experiment=experiment, data="temperature", data_dir=str(TEMPERATURE_CSV.parent),
                           temperature_csv=TEMPERATURE_CSV.name,
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
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("day,anomaly\n" + "\n".join(f"{i},{i / 100}" for i in range(1, 366)))
    short = tmp_path / "short.csv"
    short.write_text("day_of_year,mean_anomaly_by_file_doy\n" + "\n".join(f"{i},{i / 100}" for i in range(1, 31)))
    (tmp_path / "folder.csv").mkdir()  # not a file: not offered
    state = V.SelectionExperimentState(experiment="hyperparameters", data="temperature", data_dir=str(tmp_path))
    assert state.param.temperature_csv.objects == ["", "short.csv", "wrong.csv"]
    state.refresh()
    assert "upload the temperature CSV" in state.error
    for outside in (str(wrong), "../wrong.csv", "folder.csv", "/etc/passwd"):  # never a path
        with pytest.raises(ValueError):
            state.temperature_csv = outside
    state.temperature_csv = "wrong.csv"
    assert "target column 'mean_anomaly_by_file_doy' is not in" in state.error
    state.temperature_csv = "short.csv"
    assert "has 30 rows" in state.error and "at least 66 rows" in state.error
    assert str(tmp_path) not in state.error
    short.unlink()
    state.refresh()
    assert "there is no file 'short.csv' in the server's data folder" in state.error
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

    def dispatch(callback):  # cancel as soon as the first progress report (a finished repetition) is applied
        callback()
        if state.jobs["experiment"].message.endswith("/6 repetitions"):
            state.cancel()

    state.dispatch = dispatch
    state.refresh()
    state.run()
    assert state.wait(timeout=120)
    status = state.jobs["experiment"]
    assert status.message.startswith("cancelled after ") and status.message.endswith(" of 6"), status.message
    assert int(status.message.split()[2]) < 6 and status.error == "" and not status.running
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
    frame = read_plain_csv(text, V.EXPERIMENT_COLUMNS["beta"])  # a plain table: the settings are in the JSON
    assert len(frame) == 1
    payload = json.loads(V.experiment_json(first))  # valid JSON (NaN written as null)
    assert payload["experiment"] == "beta" and payload["settings"]["repetitions"] == 1
    assert payload["settings"] == first.settings() and payload["settings"]["data"] == "teacher"
    assert payload["mean"] == pytest.approx(first.result.mean.tolist())
    empty = V.SelectionExperimentState(experiment="curves")
    assert read_plain_csv(V.experiment_csv(empty), V.EXPERIMENT_COLUMNS["curves"]).empty
