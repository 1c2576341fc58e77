"""The [LSWV05] command fast-bootstrap: JSON equal to the core's result, a time-series CSV, error messages."""
import json
import re

import numpy as np
import pytest

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.lssvm import lssvm_loo
from explorer.fast_bootstrap.problem import TABLE_1, TOY_LENGTHSCALE, prepare_data, with_overrides
from explorer.kernels import SquaredExponential
from tests.conftest import run_cli

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_cli_fast_bootstrap_json(capsys):
    code, out, _ = run_cli(capsys, "fast-bootstrap", "--dataset", "toy", "--model", "ls-svm", "--seed", "0",
                           "--full-grid", "5,50,1", "--full-replications", "6", "--json")
    assert code == 0
    payload = json.loads(out)
    for key in ("grid", "optimism", "generalization_error", "selected", "models_trained"):
        assert key in payload["full"] and key in payload["fast"]
    assert {"F", "p_value", "degree"} <= set(payload["fast"])
    assert payload["fast"]["sample_grid"] == list(range(5, 51, 5))  # Table 1's reduced grid
    direct = fe.compare_bootstraps(datasets.toy_function(rng=0), "ls-svm",
                                   with_overrides(TABLE_1["ls-svm"], full_grid=(5, 50, 1), full_replications=6),
                                   rng=0)
    assert payload["fast"]["selected"] == direct.fast.selected and payload["fast"]["F"] == direct.fast.f_test.F
    assert payload["replica"]["optimism"] == pytest.approx(direct.replica.optimism.tolist())


def test_cli_fast_bootstrap_ls_svm_json_and_text_have_the_closed_form_loo(capsys):
    """`loo` is lssvm_loo over the full grid on the prepared data (no refits); the text gives the selected γ."""
    argv = ("fast-bootstrap", "--dataset", "toy", "--model", "ls-svm", "--seed", "1", "--full-grid", "5,50,5",
            "--full-replications", "2", "--fast-replications", "2", "--no-replica")
    code, out, _ = run_cli(capsys, *argv, "--json")
    assert code == 0
    loo = json.loads(out)["loo"]
    prepared = prepare_data(datasets.toy_function(rng=1))
    ref = lssvm_loo(SquaredExponential(lengthscale=TOY_LENGTHSCALE)(prepared.X), prepared.y,
                    np.arange(5.0, 51.0, 5.0))
    assert loo["grid"] == pytest.approx(ref.grid.tolist())
    assert loo["generalization_error"] == pytest.approx(ref.generalization_error.tolist(), rel=1e-12)
    assert loo["selected"] == ref.selected
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and re.search(rf"leave-one-out \(closed form\): selected {ref.selected:g};", out)


def test_cli_fast_bootstrap_other_models_have_no_loo(capsys):
    code, out, _ = run_cli(capsys, "fast-bootstrap", "--dataset", "toy", "--model", "rbfn", "--full-grid", "10,12,1",
                           "--fast-grid", "10,12,1", "--full-replications", "2", "--fast-replications", "2",
                           "--kappa0", "0", "--kappa1", "1", "--json")
    assert code == 0 and "loo" not in json.loads(out)


def test_cli_fast_bootstrap_series_csv(capsys, tmp_path):
    path = tmp_path / "series.csv"
    t = np.arange(60)
    path.write_text("t,value\n" + "\n".join(f"{i},{np.sin(0.3 * i):.6f}" for i in t))
    code, out, _ = run_cli(capsys, "fast-bootstrap", "--series-csv", str(path), "--model", "rbfn", "--no-full",
                           "--fast-grid", "2,8,2", "--fast-replications", "2", "--full-grid", "2,8,1")
    assert code == 0 and "rbfn on series" in out and "F(1,1)" in out


@pytest.mark.parametrize("argv, message", [
    (["--fast-grid", "1,3,1", "--model", "mlp"], "needs K ≥ κ1 + 2"),
    (["--full-grid", "1,3,0"], "step > 0"),
    (["--full-grid", "1,1e9,1e-9"], "1e+18 grid points; at most 1,000"),
    (["--dataset", "crabs"], "for regression"),
    (["--csv", "nowhere.csv", "--target", "y"], "nowhere.csv"),
    (["--full-replications", "0"], "the number of replications, a whole number from 1"),
    # issue 36: an option the model or the data source does not use is refused, not dropped (by the command, which
    # says "explorer: error:", not by argparse)
    (["--model", "mlp", "--lengthscale", "2"], "explorer: error: --lengthscale is not used (it is the LS-SVM's kernel "
                                               "width and the model here is mlp)"),
    (["--lags", "3"], "explorer: error: --lags is not used (it is the NAR order of --series-csv)"),
    (["--column", "x"], "explorer: error: --column is not used (it names the series column of --series-csv)"),
    (["--wsf", "4"], "explorer: error: --wsf is not used (it is the RBFN's width scaling factor and the model here "
                     "is ls-svm)"),
    (["--model", "rbfn", "--max-epochs", "5"], "explorer: error: --max-epochs is not used (it is the MLP's training "
                                               "length"),
    (["--restarts", "2"], "explorer: error: --restarts is not used (it is the MLP's number of restarts"),
])
def test_cli_fast_bootstrap_errors_exit_2_with_one_line(capsys, argv, message):
    code, _, err = run_cli(capsys, "fast-bootstrap", *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
