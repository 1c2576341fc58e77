"""The LS-SVM's exact leave-one-out in the fast-bootstrap view (issue 25): the curve and the selected γ it shows
equal ``lssvm_loo`` called directly on the same data and grid; the figure's legend, the summary table, the
curves CSV and the JSON export carry it; the other model families have none."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from explorer import datasets
from explorer.fast_bootstrap.lssvm import lssvm_loo
from explorer.fast_bootstrap.problem import make_model, prepare_data
from explorer.views import fast_bootstrap as V
from explorer.views.fast_bootstrap.tables import LOO_METHOD
from tests.views.common.figures import right_legend
from tests.views.fast_bootstrap.settings import SMALL_SETTING, small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")


@pytest.fixture(scope="module")
def computed():
    state = small_state(with_full=False, with_replica=False)
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    yield state
    state.close()


def direct_loo():
    """``lssvm_loo`` on the view's data (toy, n = 60, seed 3), its kernel and the full grid."""
    data = datasets.toy_function(n=60, rng=3)
    model, prepared = make_model("ls-svm", data, lengthscale=None), prepare_data(data)
    return lssvm_loo(model.kernel(prepared.X), prepared.y, SMALL_SETTING.grids().full, bias=model.bias)


def test_leave_one_out_equals_the_core_called_directly(computed):
    ref, got = direct_loo(), computed.comparison.loo
    np.testing.assert_array_equal(got.grid, ref.grid)
    np.testing.assert_allclose(got.generalization_error, ref.generalization_error, rtol=1e-12)
    table = V.summary_frame(computed).set_index("method")
    assert table.loc[LOO_METHOD, "selected"] == ref.selected
    assert table.loc[LOO_METHOD, ["models_trained", "grid_points"]].tolist() == [0, ref.grid.size]
    assert f"leave-one-out selects **{ref.selected:.4g}**" in V.summary(computed)
    exported = json.loads(V.json_text(computed))["loo"]  # the JSON export: as `explorer fast-bootstrap --json`
    assert exported["selected"] == ref.selected and exported["grid"] == ref.grid.tolist()
    np.testing.assert_allclose(exported["generalization_error"], ref.generalization_error, rtol=1e-12)


def test_legend_names_the_leave_one_out_and_its_selection(computed):
    labels = [item.label.value for item in right_legend(V.generalization_plot(computed)).items]
    assert f"leave-one-out (no refits): selects {direct_loo().selected:.4g}" in labels


def test_curves_csv_carries_the_leave_one_out(computed):
    table = pd.read_csv(io.StringIO(V.csv_text(computed)))
    assert list(table.columns) == V.CURVE_COLUMNS and "loo_generalization_error" in table.columns
    rows = table.dropna(subset=["loo_generalization_error"])
    np.testing.assert_allclose(rows["complexity"], direct_loo().grid, rtol=1e-12)
    np.testing.assert_allclose(rows["loo_generalization_error"], direct_loo().generalization_error, rtol=1e-12)


def test_other_models_have_no_leave_one_out():
    state = small_state(model="rbfn", with_full=False, full_start=1.0, full_stop=10.0, full_step=1.0,
                        fast_start=1.0, fast_stop=10.0, fast_step=2.0, log_complexity=False)
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    assert state.comparison.loo is None and LOO_METHOD not in V.summary_frame(state)["method"].tolist()
    assert V.curve_frame(state)["loo_generalization_error"].isna().all()
    state.close()
