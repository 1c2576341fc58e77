"""Fast-bootstrap view state ([LSWV05]) without a server: paper defaults, the buttons of the expensive jobs,
cancel, cache, bad-input messages and uploaded series."""
import io
import re
import time
from pathlib import Path

import numpy as np
import pytest

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.problem import MODELS, TABLE_1, TABLE_2, Setting
from explorer.progress import Progress
from explorer.views import fast_bootstrap as V
from explorer.views.common.state.links import Linked, apply_query
from explorer.views.fast_bootstrap.state import JOB_KINDS, progress_sentence
from tests.conftest import assert_documented_controls
from tests.views.fast_bootstrap.settings import SLOW_MLP, SMALL_SETTING, small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

LASER = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "santafe_laser_A.csv"


def test_every_control_has_label_doc_and_bounds():
    assert_documented_controls(V.FastBootstrapState)
    assert V.FastBootstrapState.param.model.objects == list(MODELS)
    with pytest.raises(ValueError, match=r"FastBootstrapState\.full_replications' must be at least 1, not 0"):
        V.FastBootstrapState(full_replications=0)
    with pytest.raises(ValueError, match=r"FastBootstrapState\.model' does not accept 'svm'"):
        V.FastBootstrapState(model="svm")


def _grids(state) -> tuple:
    return ((state.full_start, state.full_stop, state.full_step), state.full_replications,
            (state.fast_start, state.fast_stop, state.fast_step), state.fast_replications, state.log_complexity)


def _table(setting: Setting) -> tuple:
    return (setting.full_grid, setting.full_replications, setting.fast_grid, setting.fast_replications,
            setting.log_complexity)


def test_grids_default_to_the_paper_and_follow_the_model():
    state = V.FastBootstrapState()
    assert _grids(state) == _table(TABLE_1["ls-svm"])
    state.model = "mlp"
    assert _grids(state) == _table(TABLE_1["mlp"]) and not state.started
    state.param.update(full_stop=7.0, kappa0=0)
    state.reset_to_paper()
    assert _grids(state) == _table(TABLE_1["mlp"]) and (state.kappa0, state.kappa1) == (1, 2)
    state.dataset = V.SERIES  # a time series: Table 2 (the file is not given yet: chosen by the kind of data)
    assert _grids(state) == _table(TABLE_2["mlp"])
    assert _grids(V.FastBootstrapState(model="rbfn")) == _table(TABLE_1["rbfn"])
    assert V.FastBootstrapState(model="rbfn", full_stop=15.0).full_stop == 15.0  # given values stay


def test_nothing_is_computed_before_refresh():
    state = small_state()
    state.seed = 4
    assert not state.started and state.fast is None and not any(j.running for j in state.jobs.values())



def test_the_fast_result_does_not_depend_on_the_full_bootstrap():
    state = small_state(with_full=False, with_replica=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.full is None and state.replica is None and state.jobs["full"].message.startswith(
        "Full bootstrap switched off")
    fast_alone = state.fast
    state.run_full()  # ticks "Run the full bootstrap" and starts it
    # "done.", or "done (shown from the cache)." when a job of an earlier test finished into the shared cache
    assert state.with_full and state.wait(timeout=60) and state.jobs["full"].message.startswith("Full bootstrap done")
    np.testing.assert_array_equal(state.full.fast.optimism, fast_alone.fast.optimism)
    assert state.comparison.full is state.full.full and state.comparison.fast is state.full.fast


def test_expensive_full_bootstrap_waits_for_its_button_and_cancel_stops_it():
    state = V.FastBootstrapState(**SLOW_MLP)
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert state.jobs["fast"].message == "Fast bootstrap done." and state.fast is not None
    assert re.fullmatch(r"Full bootstrap not run yet: press 'Run full bootstrap' \(≈ \d+ s on one core\)\.",
                        state.jobs["full"].message)
    assert state.jobs["replica"].message == "Replica theory: for the LS-SVM only."
    state.run_full()
    assert state.jobs["full"].running
    start = time.monotonic()
    state.cancel("full")
    assert state.wait(timeout=30), "the cancelled full bootstrap did not stop"
    assert time.monotonic() - start < 30
    status = state.jobs["full"]
    assert re.fullmatch(r"Full bootstrap cancelled after \d+ of \d+ replications\. Press 'Run full bootstrap' to "
                        r"start it again\.", status.message), status.message
    assert not status.running and status.error == "" and state.full is None
    assert state.fast is not None and state.error == ""  # the fast result stays
    state.refresh()  # the same settings: stays cancelled until the button is pressed again
    assert status.message.startswith("Full bootstrap cancelled after") and not status.running


def test_expensive_replica_theory_waits_for_its_button():
    state = small_state(dataset="boston", with_full=False, full_step=1.0, replica_points=46)  # N³ × 46 γ
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert state.data.n == 506 and state.fast is not None
    assert state.jobs["replica"].message.startswith(
        "Replica theory not run yet: press 'Run replica theory'")
    assert state.replica is None and not state.jobs["replica"].running
    assert V.estimated_seconds("replica", "ls-svm", 506, SMALL_SETTING, points=46) > V.AUTO_SECONDS


def test_estimates_make_ls_svm_and_rbfn_cheap_and_the_mlp_expensive_at_table_1():
    est = {m: V.estimated_seconds("full", m, 200, TABLE_1[m]) for m in MODELS}
    assert est["ls-svm"] < est["rbfn"] <= V.AUTO_SECONDS < est["mlp"]
    assert 100 < est["mlp"] < 200  # about 2-3 minutes
    assert V.estimated_seconds("replica", "ls-svm", 200, TABLE_1["ls-svm"]) <= V.AUTO_SECONDS
    assert V.estimated_seconds("replica", "ls-svm", 994, TABLE_2["ls-svm"]) > 60  # Santa Fe laser: the button


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
    assert {k: state.jobs[k].message for k in ("fast", "full")} == {"fast": "Fast bootstrap done (shown from the cache).",
                                                                 "full": "Full bootstrap done (shown from the cache)."}
    assert not any(j.running for j in state.jobs.values())


def _write(tmp_path, text: str) -> str:
    """Write ``text`` as series.csv of the data folder ``tmp_path``; its name is what a page chooses."""
    (tmp_path / "series.csv").write_text(text)
    return "series.csv"


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
    "job-too-long": (dict(model="mlp", full_start=1.0, full_stop=13.0, full_step=1.0, fast_start=1.0, fast_stop=13.0,
                          fast_step=3.0, full_replications=10_000, max_epochs=10_000, n_init=50),
                     r"Full bootstrap: these settings would take about [\d.]+ hours on one core; the app runs jobs of "
                     r"at most 1 hour"),
    "no-csv": (dict(dataset=V.SERIES), r"upload a time series CSV .*or choose a file of the server's data folder"),
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
        settings = {**settings, "series_csv": _write(tmp_path, _CSV[settings["series_csv"]]), "data_dir": str(tmp_path)}
    state = small_state(**settings)
    state.refresh()
    assert re.search(match, state.error), state.error
    assert str(tmp_path) not in state.error  # never the server's path
    assert state.fast is None and state.full is None and not any(j.running for j in state.jobs.values())


@pytest.mark.skipif(not LASER.exists(), reason="Santa Fe laser data not found beside the checkout")
def test_santa_fe_laser_series_uses_table_2():
    state = V.FastBootstrapState(dataset=V.SERIES, data_dir=str(LASER.parent), series_csv=LASER.name, model="ls-svm")
    assert _grids(state) == _table(TABLE_2["ls-svm"])
    state.param.update(full_start=15.0, full_stop=105.0, full_step=15.0, full_replications=2, fast_start=15.0,
                       fast_stop=105.0, fast_step=15.0, fast_replications=2)
    state.refresh()
    assert state.error == "" and state.wait(timeout=120)
    assert state.data.n == 994 and state.data.d == 6 and state.fast.fast.f_test.df_den == 4
    assert state.jobs["replica"].message.startswith(
        "Replica theory not run yet: press 'Run replica theory'")


def test_errors_are_told_in_the_fast_bootstrap_vocabulary():
    from explorer.bootstrap.replica import ConvergenceError
    from explorer.views.fast_bootstrap.state import FastBootstrapState
    message = FastBootstrapState.describe_error(ConvergenceError("no fixed point.", None))
    assert message.startswith("The replica theory did not converge: no fixed point.") and ".632" not in message


def _series_csv(n: int = 80) -> str:
    x = 0.5 + 0.4 * np.sin(0.37 * np.arange(n)) * np.cos(0.05 * np.arange(n))
    return "t,value\n" + "\n".join(f"{t},{v:.6f}" for t, v in enumerate(x))


def test_uploaded_series_shows_the_numbers_of_the_core(one_blas_thread):
    text = _series_csv()
    state = V.FastBootstrapState(model="rbfn", with_full=False, auto_run=False)
    state.upload_series("my_series.csv", text.encode())
    assert state.dataset == V.SERIES and state.series_csv == ""
    state.param.update(full_start=2.0, full_stop=8.0, full_step=1.0, fast_start=2.0, fast_stop=8.0, fast_step=2.0,
                       fast_replications=3)  # after the upload: a switch to a time series resets to Table 2
    state.refresh()
    assert state.error == "" and state.wait(timeout=120)
    data = datasets.load_series_csv(io.StringIO(text), "value", 6, name="my_series")
    direct = fe.compare_bootstraps(data, "rbfn", Setting((2, 8, 1), 100, (2, 8, 2), 3), rng=0,
                                   with_full=False, with_replica=False)
    assert state.data.name == "my_series" and state.data.n == 74
    np.testing.assert_array_equal(state.fast.fast.optimism, direct.fast.optimism)
    assert state.fast.fast.f_test.F == direct.fast.f_test.F
    state.close()


def test_uploaded_series_that_is_not_utf8_gives_a_message():
    state = V.FastBootstrapState()
    state.upload_series("laser.csv", b"t,value\n1,\xff\xfe\n")
    assert state.error.startswith("laser.csv is not UTF-8 text") and state.dataset == "toy"



def test_uploaded_series_that_is_too_large_or_empty_gives_a_message():
    state = V.FastBootstrapState()
    state.upload_series("big.csv", b"t,value\n" + b"1,2\n" * 1_300_000)
    assert state.error.startswith("big.csv has 5.2 MB; the app reads files of at most 5 MB") and state.dataset == "toy"
    state.upload_series("empty.csv", b"")
    assert state.error.startswith("empty.csv is empty") and state.dataset == "toy"


def test_only_files_of_the_data_folder_are_read(tmp_path):
    """A page reads a server file only if it is a CSV of the data folder, chosen by name: a path (typed, or in a
    link) is refused, and no message quotes the folder's path or the file's content."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "series.csv").write_text(_series_csv())
    (tmp_path / "secret.csv").write_text("t,value\nroot:x:0:0,1\n")
    state = V.FastBootstrapState(data_dir=str(folder))
    assert state.param.series_csv.objects == ["", "series.csv"]
    for outside in ("../secret.csv", str(tmp_path / "secret.csv"), "/etc/passwd", "~/.ssh/id_rsa", "/proc/self/environ"):
        with pytest.raises(ValueError):
            state.series_csv = outside
    bad = apply_query(Linked(state, "fb_", ("series_csv",)), {"fb_series_csv": "/etc/shadow"})
    assert bad == ["fb_series_csv='/etc/shadow'"] and state.series_csv == ""
    state.param.update(dataset=V.SERIES, series_csv="series.csv", series_column="root:x:0:0")
    state.refresh()
    assert "column 'root:x:0:0' is not in" in state.error and str(folder) not in state.error
    (folder / "series.csv").unlink()  # the file goes away: a message without the folder's path
    state.refresh()
    assert "there is no file 'series.csv' in the server's data folder" in state.error
    assert str(folder) not in state.error
    assert V.FastBootstrapState().param.series_csv.objects == [""]  # no data folder: no server file at all
    state.close()


def test_a_cancelled_fast_bootstrap_can_always_run_again():
    """A Cancel during the MLP stops the fast bootstrap too; ``run_fast`` (and any other Run) starts it again
    without the full bootstrap, and every message is a sentence naming its job."""
    state = V.FastBootstrapState(**{**SLOW_MLP, "fast_replications": 400, "seed": 1})
    seen = []
    state.jobs["fast"].param.watch(lambda e: seen.append(e.new), "message")
    state.refresh()
    assert state.jobs["fast"].running
    state.cancel()
    assert state.wait(timeout=30) and state.fast is None
    fast = state.jobs["fast"]
    assert re.fullmatch(r"Fast bootstrap cancelled after \d+ of 400 replications\. Press 'Run fast bootstrap' to "
                        r"start it again\.", fast.message), fast.message
    state.refresh()  # the same settings: stays cancelled
    assert fast.message.startswith("Fast bootstrap cancelled") and not fast.running
    state.fast_replications = 2  # (a smaller run, to finish quickly) ...
    state.cancel()
    assert state.wait(timeout=30)
    state.run_fast()  # ... starts again by its own button, the full bootstrap still waits for its own
    assert fast.running and not state.jobs["full"].running
    assert state.wait(timeout=60) and fast.message == "Fast bootstrap done." and state.fast is not None
    assert state.full is None and state.jobs["full"].message.startswith("Full bootstrap not run yet")
    progress = [m for m in seen if "replications done" in m or "apparent error" in m]
    assert progress and all(m.startswith("Fast bootstrap: ") and m.endswith(".") for m in progress), seen
    assert not any("/" in m for m in seen), seen  # no "fast bootstrap: 3/10"


def test_any_run_button_restarts_a_cancelled_fast_bootstrap():
    state = small_state(with_full=False, with_replica=False, fast_replications=3000)
    state.refresh()
    state.cancel()
    assert state.wait(timeout=30) and state.jobs["fast"].message.startswith("Fast bootstrap cancelled")
    state.fast_replications = 3
    state.cancel()
    assert state.wait(timeout=30)
    state.run_full()  # the full bootstrap's button brings the fast one back too
    assert state.wait(timeout=60) and state.fast is not None and state.full is not None
    assert state.jobs["fast"].message.startswith("Fast bootstrap done")


def test_progress_reads_as_sentences_written_from_its_fields():
    say = progress_sentence
    assert say("full", Progress(3, 100, "replications", "full bootstrap")) == "Full bootstrap: 3 of 100 replications done."
    assert say("full", Progress(3, 10, "replications", "fast bootstrap")) == \
        "Full bootstrap: first its fast bootstrap, 3 of 10 replications done."
    assert say("fast", Progress(7, 10, "replications", "fast bootstrap")) == "Fast bootstrap: 7 of 10 replications done."
    assert say("fast", Progress(stage="apparent")) == "Fast bootstrap: apparent error of eq. (7) computed on the full grid."
    assert say("replica", Progress(3, 46, "values of γ", "replica theory")) == "Replica theory: 3 of 46 values of γ done."
    assert say("full", Progress(stage="done")) == "Full bootstrap: finishing."


def test_the_core_progress_reaches_the_status_as_sentences():
    """What compare_bootstraps and replica_optimism report is turned into sentences from the Progress fields."""
    state = small_state(with_full=True, with_replica=True, auto_run=True)
    seen = {kind: [] for kind in JOB_KINDS}
    for kind, status in state.jobs.items():
        status.param.watch(lambda event, kind=kind: seen[kind].append(event.new), "message")
    state.refresh()
    assert state.wait(timeout=120) and state.error == "", state.error
    assert "Fast bootstrap: apparent error of eq. (7) computed on the full grid." in seen["fast"], seen["fast"]
    assert any(re.fullmatch(r"Replica theory: \d+ of \d+ values of γ done\.", m) for m in seen["replica"]), seen
    assert not any(re.search(r"\d/\d", m) for m in seen["fast"] + seen["replica"])  # no short form "3/10 ..."
    state.close()


@pytest.mark.parametrize("started", [False, True])
def test_a_stale_upload_error_clears_when_its_cause_goes_away(started):
    state = small_state(with_full=False, with_replica=False)
    if started:
        state.refresh()
    state.upload_series("bad.csv", b"\xff\xfegarbage")
    assert state.error.startswith("bad.csv is not UTF-8 text")
    state.dataset = "teacher"  # switching the dataset clears it
    assert state.wait(timeout=60) and state.error == ""
    state.upload_series("bad.csv", b"\xff\xfegarbage")
    state.upload_series("empty.csv", b"")  # an empty file next: its own message, not the old one
    assert state.error.startswith("empty.csv is empty") and state.fast is None  # and no figure of other data
    state.dataset = "toy"
    assert state.wait(timeout=60) and state.error == ""
    if started:
        assert state.fast is not None
    state.close()
