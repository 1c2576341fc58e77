"""Fast-bootstrap view state (seed 002) without a server: paper defaults, jobs against ``compare_bootstraps``
called directly, the buttons of the expensive jobs, cancel, cache, bad-input messages, exports and the tab."""
import io
import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import assert_documented_controls

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.views.fast_bootstrap import tab as V

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

LASER = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "santafe_laser_A.csv"

#: Ten values of γ, six on the reduced grid (K − κ1 − 1 = 3), a few replications: well under a second.
SMALL = dict(n_points=60, full_start=5.0, full_stop=50.0, full_step=5.0, full_replications=4, fast_start=5.0,
             fast_stop=50.0, fast_step=9.0, fast_replications=3, replica_points=4, seed=3)
SMALL_SETTING = fe.Setting((5.0, 50.0, 5.0), 4, (5.0, 50.0, 9.0), 3, log_complexity=True)
#: An MLP whose full bootstrap is estimated above AUTO_SECONDS (so it waits for its button) and would take
#: many seconds if it were not cancelled.
SLOW_MLP = dict(model="mlp", n_points=40, full_start=1.0, full_stop=4.0, full_step=1.0, full_replications=2000,
                fast_start=1.0, fast_stop=4.0, fast_step=1.0, fast_replications=2, max_epochs=200, n_init=3,
                log_complexity=False, seed=0)


def small_state(**settings) -> V.FastBootstrapState:
    return V.FastBootstrapState(**{**SMALL, **settings})


def test_every_control_has_label_doc_and_bounds():
    assert_documented_controls(V.FastBootstrapState)
    assert V.FastBootstrapState.param.model.objects == list(fe.MODELS)
    with pytest.raises(ValueError, match=r"FastBootstrapState\.full_replications' must be at least 1, not 0"):
        V.FastBootstrapState(full_replications=0)
    with pytest.raises(ValueError, match=r"FastBootstrapState\.model' does not accept 'svm'"):
        V.FastBootstrapState(model="svm")


def _grids(state) -> tuple:
    return ((state.full_start, state.full_stop, state.full_step), state.full_replications,
            (state.fast_start, state.fast_stop, state.fast_step), state.fast_replications, state.log_complexity)


def _table(setting: fe.Setting) -> tuple:
    return (setting.full_grid, setting.full_replications, setting.fast_grid, setting.fast_replications,
            setting.log_complexity)


def test_grids_default_to_the_paper_and_follow_the_model():
    state = V.FastBootstrapState()
    assert _grids(state) == _table(fe.TABLE_1["ls-svm"])
    state.model = "mlp"
    assert _grids(state) == _table(fe.TABLE_1["mlp"]) and not state.started
    state.param.update(full_stop=7.0, kappa0=0)
    state.reset_to_paper()
    assert _grids(state) == _table(fe.TABLE_1["mlp"]) and (state.kappa0, state.kappa1) == (1, 2)
    state.dataset = V.SERIES  # a time series: Table 2 (the file is not given yet: chosen by the kind of data)
    assert _grids(state) == _table(fe.TABLE_2["mlp"])
    assert _grids(V.FastBootstrapState(model="rbfn")) == _table(fe.TABLE_1["rbfn"])
    assert V.FastBootstrapState(model="rbfn", full_stop=15.0).full_stop == 15.0  # given values stay


def test_nothing_is_computed_before_refresh():
    state = small_state()
    state.seed = 4
    assert not state.started and state.fast is None and not any(j.running for j in state.jobs.values())


def test_shown_numbers_equal_compare_bootstraps_called_directly():
    state = small_state()
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert {k: j.message for k, j in state.jobs.items()} == {"fast": "done", "full": "done", "replica": "done"}
    ref = fe.compare_bootstraps(datasets.toy_function(n=60, rng=3), "ls-svm", SMALL_SETTING, rng=3,
                                replica_points=4, model_options={"lengthscale": None})
    got = state.comparison
    for a, b in ((got.fast, ref.fast), (got.full, ref.full)):
        for name in ("grid", "apparent_error", "optimism", "generalization_error"):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, atol=0)
        assert a.selected == b.selected and a.models_trained == b.models_trained
    np.testing.assert_allclose(got.full.optimism_se, ref.full.optimism_se, rtol=1e-12)
    np.testing.assert_allclose(got.fast.sample_optimism, ref.fast.sample_optimism, rtol=1e-12)
    np.testing.assert_allclose(got.replica.optimism, ref.replica.optimism, rtol=1e-10)
    np.testing.assert_array_equal(got.replica.grid, ref.replica.grid)
    # the summary table shows those numbers
    table = V.summary_frame(state).set_index("method")
    f = ref.fast.f_test
    assert table.loc["fast bootstrap", ["selected", "F", "p_value", "degree"]].tolist() == pytest.approx(
        [ref.fast.selected, f.F, f.p_value, ref.fast.degree], rel=1e-12)
    assert table.loc["fast bootstrap", "df"] == f"{f.df_num}, {f.df_den}" == "1, 3"
    assert table.loc["fast bootstrap", "gain"] == pytest.approx(ref.gain, rel=1e-12)
    assert table.loc["full bootstrap", ["selected", "models_trained"]].tolist() == [ref.full.selected, 4 * 10 + 10]
    # and so does the JSON export (as_dict), timings aside
    exported, expected = json.loads(V.json_text(state)), json.loads(json.dumps(ref.as_dict()))
    for key in ("fast", "full", "replica", "gain", "paper_gain", "model", "complexity"):
        assert _close(exported[key], expected[key]), key
    assert exported["settings"]["seed"] == 3 and set(exported["seconds"]) >= {"apparent", "fast", "full", "replica"}


def _close(a, b) -> bool:
    """Nested lists/dicts equal up to round-off in the last digits."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-15)
    return a == b


def test_the_fast_result_does_not_depend_on_the_full_bootstrap():
    state = small_state(with_full=False, with_replica=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.full is None and state.replica is None and state.jobs["full"].message.startswith("switched off")
    fast_alone = state.fast
    state.run_full()  # ticks "Run the full bootstrap" and starts it
    # "done", or "done (cached)" when a job of an earlier test finished into the shared cache after its clean-up
    assert state.with_full and state.wait(timeout=60) and state.jobs["full"].message.startswith("done")
    np.testing.assert_array_equal(state.full.fast.optimism, fast_alone.fast.optimism)
    assert state.comparison.full is state.full.full and state.comparison.fast is state.full.fast


def test_expensive_full_bootstrap_waits_for_its_button_and_cancel_stops_it():
    state = V.FastBootstrapState(**SLOW_MLP)
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert state.jobs["fast"].message == "done" and state.fast is not None
    assert re.match(r"not run yet: press 'Run full bootstrap' \(≈ \d+ s on one core\)\.", state.jobs["full"].message)
    assert state.jobs["replica"].message == "the replica theory is for the LS-SVM only."
    state.run_full()
    assert state.jobs["full"].running
    start = time.monotonic()
    state.cancel("full")
    assert state.wait(timeout=30), "the cancelled full bootstrap did not stop"
    assert time.monotonic() - start < 30
    status = state.jobs["full"]
    assert re.match(r"cancelled after \d+ of \d+", status.message), status.message
    assert not status.running and status.error == "" and state.full is None
    assert state.fast is not None and state.error == ""  # the fast result stays
    state.refresh()  # the same settings: stays cancelled until the button is pressed again
    assert status.message.startswith("cancelled after") and not status.running


def test_expensive_replica_theory_waits_for_its_button():
    state = small_state(dataset="boston", with_full=False, full_step=1.0, replica_points=46)  # N³ × 46 γ
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert state.data.n == 506 and state.fast is not None
    assert state.jobs["replica"].message.startswith("not run yet: press 'Run replica theory'")
    assert state.replica is None and not state.jobs["replica"].running
    assert V.estimated_seconds("replica", "ls-svm", 506, SMALL_SETTING, points=46) > V.AUTO_SECONDS


def test_estimates_make_ls_svm_and_rbfn_cheap_and_the_mlp_expensive_at_table_1():
    est = {m: V.estimated_seconds("full", m, 200, fe.TABLE_1[m]) for m in fe.MODELS}
    assert est["ls-svm"] < est["rbfn"] <= V.AUTO_SECONDS < est["mlp"]
    assert 100 < est["mlp"] < 200  # about 2-3 minutes
    assert V.estimated_seconds("replica", "ls-svm", 200, fe.TABLE_1["ls-svm"]) <= V.AUTO_SECONDS
    assert V.estimated_seconds("replica", "ls-svm", 994, fe.TABLE_2["ls-svm"]) > 60  # Santa Fe laser: the button


def test_cache_hit_on_returning_to_previous_settings():
    state = small_state(with_replica=False)
    state.refresh()
    assert state.wait(timeout=60)
    first_fast, first_full = state.fast, state.full
    state.seed = 4
    assert state.wait(timeout=60)
    assert state.fast is not first_fast and state.fast.fast.selected is not None
    state.seed = 3  # back: both results at once from the cache, no job started
    assert state.fast is first_fast and state.full is first_full
    assert {k: state.jobs[k].message for k in ("fast", "full")} == {"fast": "done (cached)", "full": "done (cached)"}
    assert not any(j.running for j in state.jobs.values())


def _write(tmp_path, text: str) -> str:
    path = tmp_path / "series.csv"
    path.write_text(text)
    return str(path)


BAD_INPUTS = {
    "empty-grid": (dict(full_start=50.0, full_stop=5.0), r"The full grid is empty: start 50 is above stop 5"),
    "zero-step": (dict(fast_step=0.0), r"The reduced grid \(fast bootstrap\)'s step must be positive, got 0"),
    "few-reduced-points": (dict(fast_step=20.0), r"needs at least κ1 \+ 2 = 4 points on the reduced grid .* K = 3"),
    "kappa-order": (dict(kappa0=2, kappa1=2), r"set κ0 < κ1, got κ0 = 2, κ1 = 2"),
    "huge-grid": (dict(full_step=1e-3), r"The full grid has 45001 complexities; at most 2000"),
    "gamma-not-positive": (dict(full_start=0.0), r"must be positive for γ; the grids start at 0"),
    "fractional-units": (dict(model="rbfn", full_start=2.0, full_stop=8.0, full_step=0.5, fast_start=2.0,
                              fast_stop=8.0, fast_step=2.0), r"whole numbers ≥ 1"),
    "too-many-units": (dict(model="rbfn", n_points=20, full_start=2.0, full_stop=16.0, full_step=1.0,
                            fast_start=2.0, fast_stop=16.0, fast_step=2.0), r"keep the grids ≤ N/2 = 10"),
    "classification": (dict(dataset="crabs"), r"for regression; 'crabs' is a classification data set"),
    "no-csv-path": (dict(dataset=V.SERIES), r"upload a time series CSV or give its path on the server"),
    "missing-csv": (dict(dataset=V.SERIES, series_csv="/no/such/series.csv"),
                    r"there is no file '/no/such/series.csv'"),
    "missing-column": (dict(dataset=V.SERIES, series_csv="{t,x}"), r"column 'value' is not in"),
    "non-numeric": (dict(dataset=V.SERIES, series_csv="{t,value,bad}"), r"non-numeric value 'n/a' in column 'value'"),
    "short-series": (dict(dataset=V.SERIES, series_csv="{t,value,short}"), r"leaves 6 examples; at least 10"),
}
_CSV = {"{t,x}": "t,x\n" + "".join(f"{i},{i}\n" for i in range(40)),
        "{t,value,bad}": "t,value\n" + "".join(f"{i},{'n/a' if i == 7 else i}\n" for i in range(40)),
        "{t,value,short}": "t,value\n" + "".join(f"{i},{i}\n" for i in range(12))}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_gives_a_clear_message(case, tmp_path):
    settings, match = BAD_INPUTS[case]
    if settings.get("series_csv") in _CSV:
        settings = {**settings, "series_csv": _write(tmp_path, _CSV[settings["series_csv"]])}
    state = small_state(**settings)
    state.refresh()
    assert re.search(match, state.error), state.error
    assert state.fast is None and state.full is None and not any(j.running for j in state.jobs.values())


def test_the_tab_shows_a_bad_input_message_and_recovers():
    state = small_state(with_replica=False)
    tab = V.FastBootstrapTab(state=state)
    tab.__panel__()
    state.fast_step = 0.0
    assert tab.error.visible and "step must be positive" in tab.error.object
    state.fast_step = 9.0
    assert state.wait(timeout=60) and not tab.error.visible and state.fast is not None


def test_tab_builds_shows_results_and_exports():
    state = small_state()
    tab = V.FastBootstrapTab(state=state)
    layout = tab.__panel__()
    assert "explorer-fastboot-tab" in layout.css_classes
    assert state.wait(timeout=60)
    table = tab.table.object  # one column per method
    assert table.columns.tolist() == ["fast bootstrap", "full bootstrap"]
    assert table.loc["selected"].tolist() == [f"{v:.4g}" for v in V.summary_frame(state)["selected"]]
    assert table.loc["F", "full bootstrap"] == ""  # no F test for the full bootstrap
    assert "fast bootstrap selects" in tab.status.object and "replica theory at 4 values" in tab.status.object
    assert tab.job_message["full"].object == "full: done" and tab.buttons["cancel"].disabled
    for what in ("optimism", "generalization"):
        assert f"explorer-fastboot-plot-{what}" in tab.plots[what].css_classes
    assert tab.plots["optimism"].object.opts.get().kwargs["logx"]
    # model-specific controls
    assert tab.widgets["lengthscale"].visible and not tab.widgets["wsf"].visible
    state.model = "rbfn"
    assert tab.widgets["wsf"].visible and not tab.widgets["lengthscale"].visible
    assert not tab.widgets["series_csv"].visible and not tab.buttons["run-replica"].visible
    state.model = "ls-svm"
    state.param.update(**{k: v for k, v in SMALL.items() if k not in ("n_points", "replica_points", "seed")})
    assert state.wait(timeout=60)
    # exports: the curves on the union of the grids, the result as JSON with null for NaN
    text = tab._export("csv").getvalue()
    assert text.startswith("# fast bootstrap (seed 002): dataset=toy model=ls-svm")
    frame = pd.read_csv(io.StringIO(text), comment="#")
    assert frame.columns.tolist() == V.CURVE_COLUMNS and frame["complexity"].is_monotonic_increasing
    assert frame["full_optimism"].notna().sum() == 10 and frame["fast_sample_optimism"].notna().sum() == 6
    payload = json.loads(tab._export("json").getvalue())
    assert payload["fast"]["df"] == [1, 3] and payload["settings"]["model"] == "ls-svm"


def test_json_writes_null_for_nan():
    state = small_state(full_replications=1, fast_replications=1, with_replica=False)
    state.refresh()
    assert state.wait(timeout=60) and state.error == ""
    payload = json.loads(V.json_text(state))  # J = 1: the standard errors are NaN
    assert payload["full"]["optimism_se"][0] is None


@pytest.mark.skipif(not LASER.exists(), reason="Santa Fe laser data not found beside the checkout")
def test_santa_fe_laser_series_uses_table_2():
    state = V.FastBootstrapState(dataset=V.SERIES, series_csv=str(LASER), model="ls-svm")
    assert _grids(state) == _table(fe.TABLE_2["ls-svm"])
    state.param.update(full_start=15.0, full_stop=105.0, full_step=15.0, full_replications=2, fast_start=15.0,
                       fast_stop=105.0, fast_step=15.0, fast_replications=2)
    state.refresh()
    assert state.error == "" and state.wait(timeout=120)
    assert state.data.n == 994 and state.data.d == 6 and state.fast.fast.f_test.df_den == 4
    assert state.jobs["replica"].message.startswith("not run yet: press 'Run replica theory'")


def test_errors_are_told_in_the_fast_bootstrap_vocabulary():
    from explorer.gp_bootstrap.replica import ConvergenceError
    from explorer.views.fast_bootstrap.tab import FastBootstrapState
    message = FastBootstrapState.describe_error(ConvergenceError("no fixed point.", None))
    assert message.startswith("The replica theory did not converge: no fixed point.") and ".632" not in message


def _series_csv(n: int = 80) -> str:
    x = 0.5 + 0.4 * np.sin(0.37 * np.arange(n)) * np.cos(0.05 * np.arange(n))
    return "t,value\n" + "\n".join(f"{t},{v:.6f}" for t, v in enumerate(x))


def test_uploaded_series_shows_the_numbers_of_the_core(one_blas_thread):
    import io
    text = _series_csv()
    state = V.FastBootstrapState(model="rbfn", with_full=False, auto_run=False)
    state.upload_series("my_series.csv", text.encode())
    assert state.dataset == V.SERIES and state.series_csv == ""
    state.param.update(full_start=2.0, full_stop=8.0, full_step=1.0, fast_start=2.0, fast_stop=8.0, fast_step=2.0,
                       fast_replications=3)  # after the upload: a switch to a time series resets to Table 2
    state.refresh()
    assert state.error == "" and state.wait(timeout=120)
    data = datasets.load_series_csv(io.StringIO(text), "value", 6, name="my_series")
    direct = fe.compare_bootstraps(data, "rbfn", fe.Setting((2, 8, 1), 100, (2, 8, 2), 3), rng=0,
                                   with_full=False, with_replica=False)
    assert state.data.name == "my_series" and state.data.n == 74
    np.testing.assert_array_equal(state.fast.fast.optimism, direct.fast.optimism)
    assert state.fast.fast.f_test.F == direct.fast.f_test.F
    state.close()


def test_uploaded_series_that_is_not_utf8_gives_a_message():
    state = V.FastBootstrapState()
    state.upload_series("laser.csv", b"t,value\n1,\xff\xfe\n")
    assert state.error.startswith("laser.csv is not UTF-8 text") and state.dataset == "toy"



def test_uploaded_series_that_is_too_large_gives_a_message(monkeypatch):
    monkeypatch.setattr(V, "MAX_SERIES_BYTES", 100)
    state = V.FastBootstrapState()
    state.upload_series("big.csv", _series_csv().encode())
    assert state.error.startswith("big.csv has 0 MB; upload a file of at most 0 MB") and state.dataset == "toy"
