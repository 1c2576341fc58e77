"""The fast-bootstrap view's numbers ([LSWV05]): the state's results, its summary table and its JSON export
equal ``compare_bootstraps`` called directly; NaN is exported as null."""
import json

import numpy as np
import pytest

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.views import fast_bootstrap as V
from tests.views.fast_bootstrap.settings import SMALL_SETTING, small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

def test_shown_numbers_equal_compare_bootstraps_called_directly():
    state = small_state()
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert {k: j.message for k, j in state.jobs.items()} == {"fast": "Fast bootstrap done.", "full": "Full bootstrap done.",
                                                             "replica": "Replica theory done."}
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



def test_json_writes_null_for_nan():
    state = small_state(full_replications=1, fast_replications=1, with_replica=False)
    state.refresh()
    assert state.wait(timeout=60) and state.error == ""
    payload = json.loads(V.json_text(state))  # J = 1: the standard errors are NaN
    assert payload["full"]["optimism_se"][0] is None


