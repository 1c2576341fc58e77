"""The [Fis16] commands select and select-experiment: JSON fields, CSV data with test rows and --standardize,
rankings, error messages."""
import json

import numpy as np
import pytest

from explorer import regression
from explorer.kernels import SquaredExponential
from tests.conftest import run_cli

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _teacher_csvs(tmp_path, n_train, n_test, seed):
    """Training and test CSV files split from one teacher draw (columns x, an irrelevant noise_col, y)."""
    from explorer import datasets
    ds = datasets.load("teacher", n=n_train + n_test, rng=seed)
    paths = []
    for name, rows in (("train.csv", slice(0, n_train)), ("test.csv", slice(n_train, None))):
        path = tmp_path / name
        path.write_text("x,noise_col,y\n" + "".join(
            f"{x:.6f},{k % 3},{t:.6f}\n" for k, (x, t) in enumerate(zip(ds.inputs[rows, 0], ds.targets[rows]))))
        paths.append(path)
    return paths


def test_cli_select_json_fields(capsys):
    code, out, _ = run_cli(capsys, "select", "--dataset", "teacher", "--kernel", "se", "--criteria",
                           "evidence,loo,kfold,asc-boltzmann,asc-beta-noise,asc-bayes", "--seed", "0",
                           "--restarts", "2", "--partitions", "4", "--objects", "4", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["data"]["n"] == 64 and payload["kernel"] == "se" and payload["seed"] == 0
    assert list(payload["criteria"]) == ["evidence", "loo", "kfold", "asc-boltzmann", "asc-beta-noise", "asc-bayes"]
    for name, r in payload["criteria"].items():
        assert set(r["hyperparameters"]) == {"lengthscale", "signal_std", "noise_std"}
        assert np.isfinite(r["value"]) and "smse" not in r
    # evidence is reported as the negative log evidence in nats, at the reported hyperparameters
    h = payload["criteria"]["evidence"]["hyperparameters"]
    from explorer import datasets
    ds = datasets.load("teacher", rng=0)
    kernel = SquaredExponential(h["lengthscale"], h["signal_std"] ** 2)
    value = -regression.log_evidence(kernel, ds.inputs, ds.targets, h["noise_std"] ** 2)
    assert payload["criteria"]["evidence"]["value"] == pytest.approx(value, rel=1e-9)


def test_cli_select_csv_with_test_errors_and_standardize(capsys, tmp_path):
    train, test = _teacher_csvs(tmp_path, 40, 30, 1)
    code, out, _ = run_cli(capsys, "select", "--csv", str(train), "--target", "y", "--inputs", "x", "--test-csv",
                           str(test), "--criteria", "evidence,bootstrap632", "--restarts", "2", "--standardize",
                           "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["data"] == {"name": "train", "n": 40, "d": 1, "inputs": ["x"], "target": "y",
                               "standardized": True, "n_test": 30}
    for r in payload["criteria"].values():
        assert 0 < r["smse"] < 1 and r["msll"] < 0
    code, text, _ = run_cli(capsys, "select", "--csv", str(train), "--target", "y", "--criteria", "loo",
                            "--restarts", "1")
    assert code == 0 and "inputs x, noise_col -> y" in text and "\nloo " in text   # default: every other column


def test_cli_select_test_csv_needs_the_training_columns(capsys, tmp_path):
    train, _ = _teacher_csvs(tmp_path, 20, 10, 4)
    other = tmp_path / "other.csv"
    other.write_text("z,y\n" + "".join(f"{k},{k % 2}.5\n" for k in range(12)))
    code, _, err = run_cli(capsys, "select", "--csv", str(train), "--target", "y", "--inputs", "x", "--test-csv",
                           str(other), "--criteria", "evidence")
    assert code == 2 and "--test-csv lacks the input column(s) ['x']" in err


def test_cli_select_rank(capsys, tmp_path):
    train, test = _teacher_csvs(tmp_path, 40, 30, 3)
    code, out, _ = run_cli(capsys, "select", "--csv", str(train), "--target", "y", "--inputs", "x", "--test-csv",
                           str(test), "--rank", "se,exponential,matern52", "--select-by", "evidence", "--criteria",
                           "evidence,loo", "--restarts", "2", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["select_by"] == "evidence"
    assert [r["kernel"] for r in payload["ranking"]] == ["se", "exponential", "matern52"]
    for key in ("evidence", "loo", "smse"):
        assert sorted(r["ranks"][key] for r in payload["ranking"]) == [1, 2, 3]


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "teacher", "--rank", "se,gibbs"], "--rank: unknown covariance function(s) ['gibbs']"),
    (["--dataset", "teacher", "--criteria", "aic"], "--criteria: unknown 'aic'"),
    (["--csv", "datasets/boston.csv"], "--csv needs --target"),
    (["--csv", "nofile.csv"], "cannot read 'nofile.csv'"),
    (["--dataset", "crabs"], "has a classification target"),
    (["--dataset", "teacher", "--inputs", "z"], "--inputs names unknown column"),
    (["--dataset", "teacher", "--restarts", "0"], "argument --restarts: expected the number of restarts"),
    (["--dataset", "teacher", "--criteria", "asc-bayes", "--objects", "40"], "must not exceed the smallest subset"),
])
def test_cli_select_errors_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, "select", *argv)
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_cli_select_experiment_json(capsys):
    code, out, _ = run_cli(capsys, "select-experiment", "beta", "--repetitions", "2", "--json")
    assert code == 0 and json.loads(out)["experiment"] == "beta"
    code, out, _ = run_cli(capsys, "select-experiment", "hyperparameters", "--repetitions", "1", "--criteria",
                           "evidence,loo", "--restarts", "1", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["criteria"] == ["evidence", "loo"] and payload["n_repetitions"] == 1
    code, _, err = run_cli(capsys, "select-experiment", "curves", "--repetitions", "0")
    assert code == 2 and "argument --repetitions: expected the number of repetitions" in err
