"""The [MO03b] command svm-curve: JSON fields, a user CSV, error messages."""
import json

import pytest

from tests.svm_bootstrap.test_montecarlo import toy

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_cli_svm_curve_json(capsys):
    from explorer import cli
    code = cli.main(["svm-curve", "--dataset", "crabs", "--lengthscale", "3.1623", "--s-over-n", "0.5,1",
                     "--mc-samples", "30", "--seed", "0", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["s_over_n"] for row in out["rows"]] == [0.5, 1.0]
    for row in out["rows"]:
        assert {"s_over_n", "theory", "converged", "mc_mean", "mc_se", "n_iter", "residual"} <= set(row)
        assert row["converged"] and 0 <= row["theory"] < 0.05 and row["mc_samples"] == 30
    assert out["timing"]["theory_s"] > 0 and out["timing"]["svm_train_s"] > 0
    assert out["loo"]["approximate_eq20"] == 0.0 and out["n"] == 200


def test_cli_svm_curve_from_a_user_csv(tmp_path, capsys, rng):
    from explorer import cli
    X, y, _ = toy(rng, 40, 1.0)
    path = tmp_path / "rings.csv"
    path.write_text("x1,x2,ring\n" + "".join(f"{a:.6f},{b:.6f},{'out' if c > 0 else 'in'}\n" for (a, b), c in zip(X, y)))
    assert cli.main(["svm-curve", "--csv", str(path), "--target", "ring", "--lengthscale", "0.7,0.7",
                     "--s-over-n", "1", "--mc-samples", "20", "--no-exact-loo"]) == 0
    text = capsys.readouterr().out
    assert "rings: N = 40" in text and "SVM fits on D0" in text and "not computed" in text
    assert cli.main(["svm-curve", "--csv", str(path)]) == 2
    assert "--csv needs --target" in capsys.readouterr().err
    assert cli.main(["svm-curve", "--dataset", "boston", "--mc-samples", "5"]) == 2
    assert "needs two classes" in capsys.readouterr().err
