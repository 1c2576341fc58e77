"""The [MO03] commands (learning-curve, distribution, holdout): JSON fields, user CSVs, error messages."""
import json

import numpy as np
import pytest

from explorer import cli, datasets, losses
from explorer.gp_bootstrap import experiments, linear_response, mean_field, variational

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_cli_learning_curve_json(capsys):
    code = cli.main(["learning-curve", "--dataset", "toy", "--s-over-n", "0.5,1", "--mc-samples", "50",
                     "--seed", "0", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["s_over_n"] for r in out["rows"]] == [0.5, 1.0]
    for row in out["rows"]:
        assert {"s_over_n", "theory", "theory_approx", "theory_vg", "theory_mf", "mc_mean", "mc_se"} <= set(row)
    assert {"theory_s", "mc_sample_s", "vg_s", "mf_s"} <= set(out["timing"])
    assert out["timing"]["vg_s"] > 0 and out["timing"]["mf_s"] > 0


@pytest.fixture
def toy_csv(tmp_path):
    """A fixed toy data set as a CSV (``--dataset toy`` draws a new one on every call)."""
    data = datasets.load("toy", n=60, rng=2)
    path = tmp_path / "toy.csv"
    rows = (f"{float(a)!r},{float(b)!r}" for a, b in zip(data.inputs[:, 0], data.targets))
    path.write_text("x,y\n" + "\n".join(rows))
    return path


def _curve(capsys, path, *options) -> dict:
    """The learning curve of the CSV with the paper preset (``regression_problem``'s default model; a CSV without a
    model gets maximum evidence, tests/cli/test_gp_bootstrap_model.py)."""
    assert cli.main(["learning-curve", "--csv", str(path), "--target", "y", "--s-over-n", "1,0.5",
                     "--mc-samples", "5", "--preset", "paper", "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_vg_and_mf_columns_equal_the_core_functions(capsys, toy_csv):
    """theory_vg and theory_mf are variational.vg_learning_curve / mean_field.mf_learning_curve (warm-started VG
    with the default --tol 1e-3) on the problem the command builds; JSON round-trips floats exactly."""
    out = _curve(capsys, toy_csv)
    problem = experiments.regression_problem(datasets.load_csv(toy_csv, "y"))
    S = np.array([1.0, 0.5]) * problem.n
    vg = variational.vg_learning_curve(problem.K, problem.y, problem.noise_var, S, tol=1e-3)
    mf = mean_field.mf_learning_curve(problem.K, problem.y, problem.noise_var, S)
    assert [r["theory_vg"] for r in out["rows"]] == pytest.approx([variational.vg_test_error(s) for s in vg],
                                                                  rel=1e-12)
    assert [r["theory_mf"] for r in out["rows"]] == pytest.approx([mean_field.mf_test_error(s) for s in mf],
                                                                  rel=1e-12)


def test_cli_tol_is_passed_to_vg(capsys, toy_csv):
    """--tol 0.5 stops VG early (a different ε, equal to the core's with tol 0.5); MF has no tolerance."""
    default, loose = _curve(capsys, toy_csv), _curve(capsys, toy_csv, "--tol", "0.5")
    problem = experiments.regression_problem(datasets.load_csv(toy_csv, "y"))
    vg = variational.vg_learning_curve(problem.K, problem.y, problem.noise_var, np.array([1.0, 0.5]) * problem.n,
                                       tol=0.5)
    assert [r["theory_vg"] for r in loose["rows"]] == pytest.approx([variational.vg_test_error(s) for s in vg],
                                                                    rel=1e-12)
    for a, b in zip(default["rows"], loose["rows"]):
        assert a["theory_vg"] != pytest.approx(b["theory_vg"], rel=1e-7)
        assert a["theory_mf"] == b["theory_mf"]


def test_cli_vg_and_mf_are_null_for_the_eps_insensitive_loss(capsys, toy_csv):
    out = _curve(capsys, toy_csv, "--loss", "eps-insensitive")
    assert all(r["theory_vg"] is None and r["theory_mf"] is None for r in out["rows"])
    assert out["timing"]["vg_s"] is None and out["timing"]["mf_s"] is None
    assert cli.main(["learning-curve", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "5",
                     "--loss", "eps-insensitive"]) == 0
    text = capsys.readouterr().out
    assert "n/a" in text and "square loss only" in text


def test_cli_learning_curve_text_has_vg_and_mf_columns(capsys):
    assert cli.main(["learning-curve", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "5"]) == 0
    model, _, header, row = capsys.readouterr().out.splitlines()[:4]
    assert model.startswith("model: kernel paper (l² = 73.54, ℓ = [")
    assert header.split() == ["S/N", "theory", "approx", "VG", "MF", "IJ", "LOO", "lim", "MC", "±", "se", "iter"]
    assert len(row.split()) == 10 and "n/a" not in row


def test_cli_ij_and_loo_limit_columns_equal_the_core_functions(capsys, toy_csv):
    """Each row's ij, ij_second_order and loo_limit are linear_response_error on the problem the command builds
    (eqs. 9, 14, 15 of docs/linear_response.md); the timing reports the IJ solve."""
    out = _curve(capsys, toy_csv)
    problem = experiments.regression_problem(datasets.load_csv(toy_csv, "y"))
    for row in out["rows"]:
        ref = linear_response.linear_response_error(problem.K, problem.y, problem.noise_var, row["S"])
        assert row["ij"] == pytest.approx(ref.value, rel=1e-12)
        assert row["ij_second_order"] == pytest.approx(ref.value_second_order, rel=1e-12)
        assert row["loo_limit"] == pytest.approx(ref.loo_limit, rel=1e-12)
    assert out["timing"]["ij_s"] > 0


def test_cli_ij_is_null_and_loo_limit_takes_the_loss_for_eps_insensitive(capsys, toy_csv):
    """IJ is square-loss only (null); the LOO limit is the loss at the deterministic left-out prediction."""
    out = _curve(capsys, toy_csv, "--loss", "eps-insensitive")
    problem = experiments.regression_problem(datasets.load_csv(toy_csv, "y"))
    g = losses.get_loss("eps-insensitive", eps=0.1, beta=0.1)
    for row in out["rows"]:
        assert row["ij"] is None and row["ij_second_order"] is None
        ref = linear_response.loo_limit(problem.K, problem.y, problem.noise_var, row["S"], loss=g)
        assert row["loo_limit"] == pytest.approx(ref.value, rel=1e-12)
    assert out["timing"]["ij_s"] is None


def test_cli_holdout_json_has_ij_moments_equal_to_the_core(capsys, toy_csv):
    assert cli.main(["holdout", "--csv", str(toy_csv), "--target", "y", "--holdout", "10", "--mc-samples", "20",
                     "--preset", "paper", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    problem = experiments.regression_problem(datasets.load_csv(toy_csv, "y"), holdout=10)
    ref = linear_response.linear_response_moments(problem.K, problem.y, problem.noise_var, float(problem.n),
                                                  problem.cross(problem.X_test))
    assert out["ij_mean"] == pytest.approx(ref.mean.tolist(), rel=1e-12)
    assert out["ij_var"] == pytest.approx(ref.var.tolist(), rel=1e-12)
    assert len(out["ij_mean"]) == len(out["mc_mean"]) == 10


def test_cli_holdout_text_has_ij_columns(capsys, toy_csv):
    assert cli.main(["holdout", "--csv", str(toy_csv), "--target", "y", "--holdout", "5", "--mc-samples", "5"]) == 0
    model, *lines = capsys.readouterr().out.splitlines()
    assert model.startswith("model: kernel se (ℓ = ") and "by maximum evidence on all 60 rows" in model
    assert lines[0].split() == ["x", "mean", "th", "mean", "IJ", "mean", "MC", "±", "se", "var", "th", "var", "IJ",
                                "var", "MC", "±", "se"]
    assert len(lines) == 6 and len(lines[1].split()) == 9


def test_cli_distribution_json(capsys):
    code = cli.main(["distribution", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "300", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["l1"]) == 200
    assert {"frac_le_0_1", "frac_ge_0_2", "max"} <= set(out["summary"])


def test_cli_distribution_bins_follow_the_target_scale_as_in_the_app(tmp_path, capsys):
    from explorer.gp_bootstrap.l1 import scaled_bin_width

    data = datasets.load("toy", n=40, rng=1)
    path = tmp_path / "mine.csv"
    path.write_text("x,y\n" + "\n".join(f"{float(a)!r},{float(b)!r}" for a, b in zip(data.inputs[:, 0], data.targets)))
    code = cli.main(["distribution", "--csv", str(path), "--target", "y", "--holdout", "0", "--s-over-n", "1",
                     "--mc-samples", "50", "--json"])
    assert code == 0
    width = json.loads(capsys.readouterr().out)["summary"]["bin_width"]
    assert width == pytest.approx(scaled_bin_width(data.targets), rel=1e-12) and width < 0.2  # 0.2 on boston


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
        (["learning-curve", "--csv", "datasets/boston.csv"], "--csv needs --target"),
        (["learning-curve", "--csv", "/nonexistent/x.csv", "--target", "y"], "cannot read '/nonexistent/x.csv'"),
        (["learning-curve", "--dataset", "crabs"], "classification task"),
        (["learning-curve", "--dataset", "toy", "--s-over-n", "-1"], "expected bootstrap sizes S/N from 0.001"),
        (["learning-curve", "--dataset", "toy", "--mc-samples", "0"], "argument --mc-samples: expected the number"),
        (["distribution", "--dataset", "toy", "--s-over-n", "1,2"], "takes one --s-over-n value"),
        (["learning-curve", "--dataset", "toy", "--kernel", "se", "--lengthscale", "-1"], "positive lengthscales"),
    ],
)
def test_cli_errors_are_messages_not_tracebacks(capsys, argv, message):
    try:
        code = cli.main(argv)
    except SystemExit as exit_info:  # a usage error (argparse)
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_generated_data_is_the_apps_draw_in_every_run(capsys):
    """``--dataset toy`` is the toy draw of the app (seed ``GENERATED_DATA_SEED``), the same in every run."""
    argv = ["distribution", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "20", "--json"]
    outs = []
    for _ in range(2):
        assert cli.main(argv) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1]
    from explorer.gp_bootstrap.l1 import scaled_bin_width
    app_data = datasets.load("toy", rng=datasets.GENERATED_DATA_SEED)
    assert outs[0]["summary"]["bin_width"] == pytest.approx(scaled_bin_width(app_data.targets), rel=1e-12)
