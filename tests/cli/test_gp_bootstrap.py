"""The seed-000 commands (learning-curve, distribution, holdout): JSON fields, user CSVs, error messages."""
import json

import pytest

from explorer import cli, datasets

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_cli_learning_curve_json(capsys):
    code = cli.main(["learning-curve", "--dataset", "toy", "--s-over-n", "0.5,1", "--mc-samples", "50",
                     "--seed", "0", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["s_over_n"] for r in out["rows"]] == [0.5, 1.0]
    for row in out["rows"]:
        assert {"s_over_n", "theory", "theory_approx", "mc_mean", "mc_se"} <= set(row)
    assert {"theory_s", "mc_sample_s"} <= set(out["timing"])


def test_cli_distribution_json(capsys):
    code = cli.main(["distribution", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "300", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["l1"]) == 200
    assert {"frac_le_0_1", "frac_ge_0_2", "max"} <= set(out["summary"])


def test_cli_explicit_kernel_and_user_csv(tmp_path, capsys):
    data = datasets.load("toy", n=40, rng=1)
    path = tmp_path / "mine.csv"
    path.write_text("x,y\n" + "\n".join(f"{a},{b}" for a, b in zip(data.inputs[:, 0], data.targets)))
    code = cli.main(["learning-curve", "--csv", str(path), "--target", "y", "--kernel", "matern52",
                     "--lengthscale", "0.1", "--noise-var", "0.05", "--s-over-n", "1", "--mc-samples", "30",
                     "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["n"] == 40


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["learning-curve", "--csv", "nofile.csv"], "--csv needs --target"),
        (["learning-curve", "--csv", "/nonexistent/x.csv", "--target", "y"], "error"),
        (["learning-curve", "--dataset", "crabs"], "classification task"),
        (["learning-curve", "--dataset", "toy", "--s-over-n", "-1"], "must be positive"),
        (["learning-curve", "--dataset", "toy", "--mc-samples", "0"], "--mc-samples must be at least 1"),
        (["distribution", "--dataset", "toy", "--s-over-n", "1,2"], "takes one --s-over-n value"),
        (["learning-curve", "--dataset", "toy", "--kernel", "se", "--lengthscale", "-1"], "error"),
    ],
)
def test_cli_errors_are_messages_not_tracebacks(capsys, argv, message):
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
