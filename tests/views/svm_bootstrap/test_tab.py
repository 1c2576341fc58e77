"""SVM bootstrap view state ([MO03b]) without a server: parameters, jobs, cancel, cache, exports, errors."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from explorer.views import svm_bootstrap as V
from explorer.views.svm_bootstrap import state as svm_state
from tests.conftest import assert_documented_controls
from tests.views.common.figures import right_legend
from tests.views.common.offline import read_plain_csv

pytestmark = pytest.mark.usefixtures("empty_view_caches")


@pytest.fixture
def rng():
    return np.random.default_rng(4)


def blobs_csv(rng, n=60, labels=("A", "B")) -> str:
    """Two well-separated Gaussian blobs, text labels: separable with a moderate kernel."""
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    rows = (f"{a:.6f},{b:.6f},{labels[0] if c > 0 else labels[1]}" for (a, b), c in zip(X, y))
    return "x1,x2,label\n" + "\n".join(rows)


def small_state(rng, **settings) -> V.SVMState:
    options = dict(curve_grid=[0.5, 1.0], curve_mc_samples=20, mc_samples=40, holdout=5, lengthscale=2.0)
    options.update(settings)
    state = V.SVMState(**options)
    state.upload_csv("blobs.csv", blobs_csv(rng))
    return state


def test_every_control_has_label_doc_and_bounds():
    assert_documented_controls(V.SVMState)
    assert V.SVMState.param.dataset.objects == list(V.SVM_DATASETS)
    with pytest.raises(ValueError, match=r"SVMState\.lengthscale' must be at least 0\.001, not 0\.0"):
        V.SVMState(lengthscale=0.0)
    with pytest.raises(ValueError, match=r"SVMState\.curve_grid' does not accept 0\.33"):
        V.SVMState(curve_grid=[0.33])


def test_nothing_is_computed_before_refresh():
    state = V.SVMState()
    state.lengthscale = 2.0
    assert not state.started and state.problem is None and not any(j.running for j in state.jobs.values())


def test_curve_and_field_jobs_complete_on_crabs():
    state = V.SVMState(dataset="crabs", curve_grid=[1.0], curve_mc_samples=20, mc_samples=30, holdout=5)
    state.refresh()
    assert state.error == ""
    assert state.wait(timeout=120)
    assert {k: j.message for k, j in state.jobs.items()} == {k: "done" for k in V.JOB_KINDS}
    assert state.problem.n == 200 and state.test_problem.n == 195
    theory, mc = state.theory_curve, state.curve_mc
    assert theory.complete and mc.complete
    assert theory.points[0].converged and 0.0 <= theory.points[0].theory < 0.05  # crabs, broad kernel: tiny error
    assert 0.0 <= mc.points[0].mc_mean < 0.05 and mc.points[0].mc_samples == 20
    assert 0.0 <= theory.loo_approximate <= 1.0 and 0.0 <= theory.loo_exact <= 1.0
    field = state.field
    assert field.mc_fields.shape == (30, 5) and field.theory_p_negative.shape == (5,)
    assert np.all((field.mc_p_negative >= 0) & (field.mc_p_negative <= 1))
    # both figures build with results, and name p(−1|x) of theory and MC in the title
    V.learning_curve_plot(state)
    overlay = V.field_plot(state)
    assert "p(−1|x) theory" in overlay.opts.get().kwargs["title"]


def test_curve_mc_equals_the_cli_numbers_for_the_same_seed(rng):
    from explorer.svm_bootstrap import experiments as svm_experiments
    state = small_state(rng, seed=3)
    state.refresh()
    assert state.wait(timeout=60)
    res = svm_experiments.svm_learning_curve(state.problem, [0.5, 1.0], 20, rng=3, exact_loo=True)
    assert [p.mc_mean for p in state.curve_mc.points] == pytest.approx([r.mc_mean for r in res.rows], abs=1e-15)
    assert [p.theory for p in state.theory_curve.points] == pytest.approx([r.theory for r in res.rows], rel=1e-6)
    assert state.theory_curve.loo_approximate == res.loo_approximate
    assert state.theory_curve.loo_exact == res.loo_exact


def test_cache_hit_is_instant(rng):
    text = blobs_csv(rng)
    first = V.SVMState(curve_grid=[1.0], curve_mc_samples=20, mc_samples=20, holdout=3, lengthscale=2.0)
    first.upload_csv("blobs.csv", text)
    first.refresh()
    assert first.wait(timeout=60)
    second = V.SVMState(curve_grid=[1.0], curve_mc_samples=20, mc_samples=20, holdout=3, lengthscale=2.0)
    second.upload_csv("blobs.csv", text)
    second.refresh()
    assert {k: j.message for k, j in second.jobs.items()} == {k: "done (cached)" for k in V.JOB_KINDS}
    assert second.curve_mc is first.curve_mc and second.field is first.field
    assert second.theory_curve is first.theory_curve


def test_cancel_stops_the_monte_carlo(rng):
    state = small_state(rng, curve_grid=[1.0], curve_mc_samples=100_000, mc_samples=100_000)
    state.refresh()
    state.cancel()
    assert state.wait(timeout=60)
    for kind in ("curve", "field"):
        assert state.jobs[kind].message.startswith("cancelled"), state.jobs[kind].message
        assert state.jobs[kind].error == "" and not state.jobs[kind].running
    assert state.curve_mc is None and state.field is None
    # Run starts them again (here with a feasible count)
    state.param.update(curve_mc_samples=10, mc_samples=10)
    assert state.wait(timeout=60)
    assert state.curve_mc.complete and state.field is not None


def test_auto_mc_off_waits_for_run(rng):
    state = small_state(rng, auto_mc=False)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.curve_mc is None and "Run Monte-Carlo" in state.jobs["curve"].message
    assert state.theory_curve is not None  # the theory does not wait for the button
    state.run_mc()
    assert state.wait(timeout=60)
    assert state.curve_mc.complete and state.field is not None


def test_exports_have_the_expected_columns(rng):
    state = small_state(rng)
    empty = V.csv_text(state, "curve")
    assert empty.splitlines() == [",".join(V.EXPORT_COLUMNS["curve"])]
    state.refresh()
    assert state.wait(timeout=60)
    for what in ("curve", "field"):
        read_plain_csv(V.csv_text(state, what), V.EXPORT_COLUMNS[what])  # header first: no comment line
    sidecar = json.loads(V.settings_text(state))
    assert sidecar["export"] == "hard-margin SVM bootstrap ([MO03b])"
    assert sidecar["files"] == ["svm-learning-curve_blobs.csv", f"svm-field_blobs_test-input-{state.index}.csv"]
    assert sidecar["settings"]["dataset"] == "uploaded CSV" and sidecar["settings"]["target"] == "label"
    assert sidecar["settings"]["file"] == "blobs.csv" and sidecar["settings"]["sha256"] == state.uploaded_file.sha256
    curve = pd.read_csv(io.StringIO(V.csv_text(state, "curve")))
    assert list(curve["s_over_n"]) == [0.5, 1.0] and curve["mc_se"].notna().all()
    field = pd.read_csv(io.StringIO(V.csv_text(state, "field")))
    assert len(field) == 5 and set(field["y_test"]) <= {-1.0, 1.0}
    html = V.html_text(state, "field")
    assert "<html" in html.lower() and "bokeh" in html.lower()


def test_test_index_follows_the_holdout(rng):
    state = small_state(rng, test_index=4)
    state.refresh()
    state.holdout = 2
    assert state.param.test_index.bounds == (0, 1) and state.test_index == 1
    assert state.wait(timeout=60)
    assert state.field.theory_mean.size == 2


def test_conflicting_rows_become_a_message(rng):
    text = blobs_csv(rng) + "\n0.5,0.5,A\n0.5,0.5,B"
    state = V.SVMState(curve_grid=[1.0], curve_mc_samples=10, mc_samples=10, holdout=2)
    state.upload_csv("conflict.csv", text)
    state.refresh()  # no exception
    assert "identical inputs" in state.error and "cannot separate" in state.error
    assert state.problem is None and state.curve_mc is None


def test_non_separable_kernel_fails_readably_in_the_jobs(rng):
    X, y = rng.normal(size=(40, 2)), np.where(rng.random(40) < 0.5, 1, -1)  # random labels
    text = "x1,x2,label\n" + "\n".join(f"{a:.6f},{b:.6f},{c}" for (a, b), c in zip(X, y))
    state = V.SVMState(curve_grid=[1.0], curve_mc_samples=10, mc_samples=10, holdout=2, lengthscale=1e4)
    state.upload_csv("random.csv", text)
    state.refresh()
    assert state.wait(timeout=60)
    assert state.error == ""
    assert state.jobs["curve"].message == "failed"
    assert "cannot be separated" in state.jobs["curve"].error and "narrower kernel" in state.jobs["curve"].error
    assert "Traceback" not in "".join(j.error for j in state.jobs.values())
    assert "did not converge" in V.curve_summary(state) or state.jobs["theory"].error


def test_bad_csv_and_target_become_messages(rng):
    state = V.SVMState()
    state.upload_csv("x.csv", b"\xff\xfe\x00garbage")
    assert "UTF-8" in state.error
    text = "a,b,c\n" + "\n".join(f"{i},{i * i},{i % 3}" for i in range(20))  # three classes
    state.upload_csv("three.csv", text)
    state.refresh()
    assert "exactly two distinct values" in state.error


def test_an_upload_over_the_row_limit_is_refused_before_any_kernel_matrix(rng, monkeypatch):
    built = []
    monkeypatch.setattr(svm_state, "svm_problem", lambda *a, **k: built.append(a))
    state = V.SVMState()
    state.upload_csv("many.csv", blobs_csv(rng, n=V.MAX_ROWS + 2))
    state.refresh()
    assert state.error == (f"The data cannot be used: many.csv has {V.MAX_ROWS + 2} rows; the SVM bootstrap here "
                           f"takes at most {V.MAX_ROWS} (its replica theory solves N × N systems on the server). "
                           f"Upload a random sample of at most {V.MAX_ROWS} rows.")
    assert built == [] and state.theory_curve is None
    state.close()


def test_tab_builds_without_a_server(rng):
    pn = pytest.importorskip("panel")
    state = small_state(rng)  # job updates wait for this thread's ``wait``: none changes a figure during get_root
    tab = V.SVMTab(state=state)
    root = pn.panel(tab).get_root()
    assert state.started and root is not None
    assert state.wait(timeout=60)
    assert "S → ∞" in tab.status["curve"].object
    assert tab.cancel.disabled
    downloads = {d.filename: d for d in tab.downloads}
    data, field = "blobs", f"svm-field_blobs_test-input-{state.index}"  # the uploaded blobs.csv
    names = {"curve": f"svm-learning-curve_{data}", "field": field}
    assert sorted(downloads) == sorted([f"{names[w]}.{fmt}" for w in names for fmt in ("csv", "html")]
                                       + [f"settings_svm_{data}.json"])
    assert downloads[f"settings_svm_{data}.json"].css_classes == ["explorer-svm-json-settings"]
    for what in ("curve", "field"):
        text = downloads[f"{names[what]}.csv"].callback().getvalue()
        frame = pd.read_csv(io.StringIO(text))  # plain read_csv: the first line is the header
        assert frame.columns.tolist() == V.EXPORT_COLUMNS[what] and len(frame) > 0
    sidecar = json.loads(downloads[f"settings_svm_{data}.json"].callback().getvalue())
    got = sidecar["settings"]
    assert got["dataset"] == state.dataset and got["seed"] == state.seed
    assert got["kernel"] == "squared_exponential" and got["lengthscale"] == pytest.approx(2.0)
    assert got["curve_grid"] == [0.5, 1.0] and got["mc_samples"] == 40 and got["holdout"] == 5


def test_figures_keep_their_legends_beside_the_data_with_click_to_hide(rng):
    state = small_state(rng)
    state.refresh()
    assert state.wait(timeout=60) and state.field is not None
    curve = right_legend(V.learning_curve_plot(state))
    assert curve.click_policy == "hide"
    assert {"replica theory, eq. (17)", "Monte-Carlo (± 1 s.e.)"} <= {i.label.value for i in curve.items}
    field = right_legend(V.field_plot(state))
    assert field.click_policy == "hide" and any("p(−1|x)" in i.label.value for i in field.items)
    # the learning curve says which way is better; the field plot what p(−1|x) is compared with
    assert "lower error is better" in V.learning_curve_plot(state).opts.get().kwargs["title"]
    assert "p(−1|x) theory" in V.field_plot(state).opts.get().kwargs["title"]
    state.close()


def test_a_gap_against_a_monte_carlo_without_spread_is_not_said_in_infinite_standard_errors():
    from explorer.views.svm_bootstrap.figures import SVMGap, _gap_text

    assert _gap_text(SVMGap(1.0, 0.1, 0.02, 4.2)) == "+4.2 s.e."
    text = _gap_text(SVMGap(2.0, 0.0, 0.015, float("inf")))
    assert "inf" not in text and text == "theory +0.015 from a Monte-Carlo error that is the same in every sample"
