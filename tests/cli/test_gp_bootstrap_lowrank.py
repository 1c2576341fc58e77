"""``--rank`` on learning-curve, distribution and holdout (issue 35, item 4): the low-rank path from the command line.

The JSON's ``low_rank`` record rebuilds ΦΦᵀ; the numbers are checked against the dense path run on that rebuilt
matrix (an independent computation), and bad input is one line on stderr with exit code 2.
"""
import json

import numpy as np
import pytest

from explorer import cli, datasets, kernels, lowrank
from explorer.bootstrap import replica
from explorer.cli import common, gp_bootstrap

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _json(capsys, argv: list[str]) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _refused(capsys, argv: list[str]) -> str:
    try:
        code = cli.main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_the_json_rebuilds_phi_phi_t_and_the_theory_equals_the_dense_path_on_it(capsys):
    out = _json(capsys, ["learning-curve", "--dataset", "boston", "--standardize", "--holdout", "6", "--rank", "40",
                         "--kernel", "se", "--lengthscale", "3", "--signal-var", "2", "--noise-var", "0.1",
                         "--s-over-n", "0.5,2", "--mc-samples", "4", "--seed", "3", "--tol", "1e-9"])
    record = out["low_rank"]
    assert record["method"] == "nystrom" and record["rank"] == 40 and len(record["landmarks"]) == 40
    data = datasets.load("boston").standardized(targets=True)
    X, y = data.inputs[6:], data.targets[6:]  # landmarks index the training rows: the CSV's rows after the held-out 6
    assert all(0 <= i < X.shape[0] for i in record["landmarks"])
    kernel = kernels.SquaredExponential(3.0, 2.0)
    K_LL = kernel(X[record["landmarks"]]) + record["jitter"] * np.eye(40)
    phi = np.linalg.solve(np.linalg.cholesky(K_LL), kernel(X[record["landmarks"]], X)).T  # K_nL C⁻ᵀ, rebuilt
    assert record["jitter"] == pytest.approx(lowrank.NYSTROM_JITTER * 2.0)
    for row in out["rows"]:
        dense = replica.solve_replica(phi @ phi.T, y, 0.1, row["S"], tol=1e-9, precision="double", init_subset=None)
        assert row["theory"] == pytest.approx(replica.bootstrap_test_error(dense), rel=1e-6)
        assert row["theory_vg"] is None and row["theory_mf"] is None and row["ij"] is not None
    assert out["model"]["fitted"] is None and out["model"]["noise_var"] == 0.1


def test_without_a_kernel_the_low_rank_model_is_fitted_by_maximum_evidence_and_the_output_says_so(capsys):
    argv = ["holdout", "--dataset", "toy", "--holdout", "20", "--rank", "30", "--mc-samples", "3"]
    out = _json(capsys, argv)
    assert "largest evidence of the rank-30 Nyström GP" in out["model"]["fitted"]
    assert out["model"]["kernel"] == "se" and out["model"]["repr"].startswith("SquaredExponential(")
    assert out["model"]["noise_var"] > 0 and out["model"]["source"] == "maximum evidence"
    assert len(out["theory_mean"]) == 20
    assert cli.main(argv) == 0
    assert "largest evidence" in capsys.readouterr().out


def test_distribution_takes_the_rank_and_random_fourier_features(capsys):
    out = _json(capsys, ["distribution", "--dataset", "toy", "--rank", "20", "--features", "rff", "--kernel", "se",
                         "--noise-var", "0.1", "--mc-samples", "200"])
    assert out["low_rank"] == {"method": "rff", "rank": 20, "landmarks": None, "jitter": 0.0}
    assert len(out["l1"]) == datasets.load("toy", rng=datasets.GENERATED_DATA_SEED).n


def test_more_rows_than_the_dense_path_takes_asks_for_the_rank(capsys, tmp_path):
    path = tmp_path / "tall.csv"
    path.write_text("x,y\n" + "".join(f"{i / 100},{i % 3}\n" for i in range(common.MAX_DENSE_ROWS + 1)))
    err = _refused(capsys, ["learning-curve", "--csv", str(path), "--target", "y"])
    assert "5,001 rows" in err and "Add --rank M" in err


@pytest.mark.parametrize("argv, message", [
    (["--rank", "0"], "expected the rank m of the low-rank kernel, a whole number from 1 to 4,096"),
    (["--rank", "5000"], "expected the rank m of the low-rank kernel"),
    (["--rank", "300"], "--rank 300 is above the 200 training rows"),
    (["--rank", "20", "--features", "rff", "--kernel", "periodic"], "Random Fourier features need a stationary"),
    (["--rank", "21", "--features", "rff", "--kernel", "se"], "--rank must be even"),
    (["--features", "rff"], "--features chooses the feature map of --rank"),
])
def test_bad_low_rank_options_are_one_line(capsys, argv, message):
    err = _refused(capsys, ["learning-curve", "--dataset", "toy", "--mc-samples", "2", *argv])
    assert message in err


def test_the_row_and_entry_bounds_are_checked_before_any_kernel_value(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(gp_bootstrap, "MAX_LOW_RANK_ENTRIES", 1000)
    monkeypatch.setattr(kernels.SquaredExponential, "_eval", lambda *a: pytest.fail("a kernel value was computed"))
    err = _refused(capsys, ["learning-curve", "--dataset", "toy", "--rank", "10", "--kernel", "se"])
    assert "N·M = 200·10 is above 1,000" in err and "--rank 5 or less" in err


@pytest.mark.parametrize("command", [["learning-curve"], ["fast-bootstrap", "--model", "ls-svm"], ["select"]])
def test_diamonds_on_a_dense_path_is_one_line_before_any_matrix(capsys, command):
    err = _refused(capsys, [*command, "--dataset", "diamonds"])
    assert "diamonds has 53,940 rows" in err and "at most 5,000" in err
    assert ("Add --rank M" in err) == (command == ["learning-curve"])
