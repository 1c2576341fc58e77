"""The fast-bootstrap tab ([LSWV05]) without a server: bad-input message, results, controls per model, the
Run and Cancel buttons and the downloads."""
import json

import pytest

from explorer.views import fast_bootstrap as V
from tests.views.common.offline import read_plain_csv
from tests.views.fast_bootstrap.settings import SMALL, small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")


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
    assert table.columns.tolist() == ["fast bootstrap", "full bootstrap", "leave-one-out"]  # LS-SVM: its exact LOO
    assert table.loc["selected"].tolist() == [f"{v:.4g}" for v in V.summary_frame(state)["selected"]]
    assert table.loc["F", "full bootstrap"] == ""  # no F test for the full bootstrap
    assert "fast bootstrap selects" in tab.status.object and "replica theory at 4 values" in tab.status.object
    assert tab.indicators.message["full"].object.endswith("Full bootstrap done.") and tab.cancel.disabled
    for what in ("optimism", "generalization"):
        assert f"explorer-fastboot-plot-{what}" in tab.plots[what].css_classes
    assert tab.plots["optimism"].object.opts.get().kwargs["logx"]
    # model-specific controls
    assert tab.widgets["lengthscale"].visible and not tab.widgets["wsf"].visible
    state.model = "rbfn"
    assert tab.widgets["wsf"].visible and not tab.widgets["lengthscale"].visible
    assert not tab.widgets["series_csv"].visible and not tab.runs["run-replica"].visible
    state.model = "ls-svm"
    state.param.update(**{k: v for k, v in SMALL.items() if k not in ("n_points", "replica_points", "seed")})
    assert state.wait(timeout=60)
    # exports, through the download buttons: the curves on the union of the grids, the result as JSON
    downloads = {d.filename: d for d in tab.downloads}
    what = f"{state.dataset}_{state.model}"  # the data and the model, e.g. toy_ls-svm
    assert sorted(downloads) == [f"fast-bootstrap-curves_{what}.csv", f"fast-bootstrap-result_{what}.json"]
    assert [d.css_classes for d in tab.downloads] == [["explorer-fastboot-json"], ["explorer-fastboot-csv"]]
    text = downloads[f"fast-bootstrap-curves_{what}.csv"].callback().getvalue()
    frame = read_plain_csv(text, V.CURVE_COLUMNS)  # a plain table: the settings are in the JSON
    assert frame["complexity"].is_monotonic_increasing
    assert frame["full_optimism"].notna().sum() == 10 and frame["fast_sample_optimism"].notna().sum() == 6
    payload = json.loads(downloads[f"fast-bootstrap-result_{what}.json"].callback().getvalue())
    assert payload["fast"]["df"] == [1, 3] and payload["settings"]["model"] == "ls-svm"
    assert payload["settings"] == json.loads(json.dumps(V.settings(state)))
    assert payload["settings"]["dataset"] == "toy" and payload["settings"]["seed"] == 3
    # legends beside the data with click-to-hide; the generalization error says lower is better
    for what in ("optimism", "generalization"):
        kwargs = tab.plots[what].object.opts.get().kwargs
        assert kwargs["legend_position"] == "right" and kwargs["legend_opts"]["click_policy"] == "hide"
    assert "lower is better" in tab.plots["generalization"].object.opts.get().kwargs["title"]




def test_run_buttons_tick_their_switch_and_start_their_job_and_cancel_stops_every_job():
    state = small_state(with_full=False, with_replica=False)
    tab = V.FastBootstrapTab(state=state)
    tab.__panel__()
    assert state.wait(timeout=60) and state.full is None and state.replica is None
    assert [b.css_classes for b in tab.runs.values()] == [["explorer-fastboot-run-fast"],
                                                          ["explorer-fastboot-run-full"],
                                                          ["explorer-fastboot-run-replica"]]
    assert [b.name for b in tab.runs.values()] == ["Run fast bootstrap", "Run full bootstrap", "Run replica theory"]
    tab.runs["run-full"].clicks += 1
    assert state.with_full and not state.with_replica and state.wait(timeout=60)
    assert state.full is not None and state.jobs["full"].message.startswith("Full bootstrap done")
    assert state.replica is None
    tab.runs["run-replica"].clicks += 1
    assert state.with_replica and state.wait(timeout=60) and state.replica is not None
    assert tab.indicators.message["replica"].object.endswith("Replica theory done.")
    # Cancel acts on every job: the fast one of new settings stops too
    state.param.update(fast_replications=2000, full_replications=2000)
    assert state.jobs["fast"].running and not tab.cancel.disabled
    tab.cancel.clicks += 1
    assert state.wait(timeout=60)
    assert all(not j.running for j in state.jobs.values()) and state.jobs["fast"].message.startswith(
        "Fast bootstrap cancelled")
