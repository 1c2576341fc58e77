"""The model of the GP commands on the user's data (issue 36, item 6): a CSV without a kernel gets the app's model
(maximum evidence, same function, rows and seed: equal values), every output names the kernel, its values, σ², the
scaling, the rows and how each was obtained; an option the model does not use is an error; ``--subsample``,
``--ard`` and ``--methods``."""
import json

import numpy as np
import pytest

from explorer import cli, datasets, kernels
from explorer.bootstrap import replica
from explorer.cli import common
from explorer.gp_bootstrap import evidence, experiments, stages

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _json(capsys, argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _refused(capsys, argv) -> str:
    try:
        code = cli.main(argv)
    except SystemExit as exit_info:  # a usage error (argparse)
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _table(path, n: int, d: int = 3, seed: int = 0):
    """A CSV of ``n`` rows: y depends on x0 (strongly) and x1 (weakly), not on the other inputs; and X, y."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 6)
    y = np.round(np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=n), 6)
    lines = [",".join([*(f"x{j}" for j in range(d)), "y"])]
    lines += [",".join(f"{v:.6f}" for v in (*row, t)) for row, t in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path, X, y


@pytest.fixture
def csv400(tmp_path):
    return _table(tmp_path / "mine.csv", 400)


# ----------------------------------------------------------------------------- the app's model, named


def test_a_csv_without_a_kernel_gets_the_apps_evidence_fit_named_in_the_json(capsys, csv400):
    """400 rows: the evidence is maximised on 300 of them drawn with seed 0 (fit_to_data), as in the app."""
    path, X, y = csv400
    out = _json(capsys, ["learning-curve", "--csv", str(path), "--target", "y", "--s-over-n", "1",
                         "--mc-samples", "2"])
    model, fit = out["model"], evidence.maximum_evidence(X[evidence.subsample_rows(400, 300)],
                                                         y[evidence.subsample_rows(400, 300)])
    assert model["kernel"] == "se" and model["source"] == "maximum evidence" and model["standardized"] is False
    assert model["hyperparameters"] == {"lengthscale": fit.lengthscale, "signal_var": fit.signal_var}
    assert model["noise_var"] == fit.noise_var and model["subsample"] is None
    assert model["obtained"]["noise_var"] == "ℓ, σ_f², σ² by maximum evidence on 300 of 400 rows drawn at random, seed 0"
    assert model["evidence"]["rows"] == 300 and model["evidence"]["of_rows"] == 400 and model["evidence"]["seed"] == 0
    assert cli.main(["learning-curve", "--csv", str(path), "--target", "y", "--s-over-n", "1",
                     "--mc-samples", "2"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"model: kernel se (ℓ = {fit.lengthscale:.4g}, σ_f² = {fit.signal_var:.4g}), σ² = "
                            f"{fit.noise_var:.4g} (ℓ, σ_f², σ² by maximum evidence on 300 of 400 rows")
    assert first.endswith("inputs and target standardised: no")


@pytest.mark.parametrize("rows, extra, app", [
    (400, [], {}),
    (1200, ["--subsample", "1000", "--standardize"], {"subsample": True, "standardize": True}),
])
def test_the_fitted_kernel_and_its_values_equal_the_apps_for_the_same_file(capsys, tmp_path, rows, extra, app):
    """The app's GP state on the uploaded file and `explorer learning-curve --csv` fit the same kernel values
    (exactly: the same function on the same rows and seed; the app's controls then keep 6 significant digits of
    them, ``clean_number``), so the same ε(S) (ADATAP tolerance 1e-3 and the rounding: rel 1e-5). With 1,200 rows
    the app's 'Use a random subsample of 1,000 rows' is --subsample 1000 at the default seed 0."""
    pytest.importorskip("panel")
    from explorer.views.common.state.values import clean_number
    from explorer.views.gp_bootstrap import state as gp_views

    path = _table(tmp_path / "mine.csv", rows)[0]
    out = _json(capsys, ["learning-curve", "--csv", str(path), "--target", "y", "--s-over-n", "1",
                         "--mc-samples", "2", *extra])
    state = gp_views.GPBootstrapState(auto_mc=False, s_over_n=1.0, **app)
    state.upload_csv("mine.csv", path.read_bytes())
    assert state.wait(180) and state.error == "" and state.hyperparameter_source == "evidence"
    model, fit = out["model"], state.evidence
    values = (model["hyperparameters"]["lengthscale"], model["hyperparameters"]["signal_var"], model["noise_var"])
    assert model["kernel"] == state.kernel == "se"
    assert values == (fit.lengthscale, fit.signal_var, fit.noise_var)
    assert tuple(map(clean_number, values)) == (state.lengthscale, state.signal_var, state.noise_var)
    assert model["evidence"]["log_evidence"] == fit.log_evidence and model["evidence"]["rows"] == fit.n == 300
    assert out["n"] == state.problem.n and out["problem"] == state.problem.name
    assert out["rows"][0]["theory"] == pytest.approx(state.current_theory_error, rel=1e-5)


def test_boston_keeps_the_paper_preset_and_names_it(capsys):
    out = _json(capsys, ["learning-curve", "--dataset", "boston", "--s-over-n", "1", "--mc-samples", "2"])
    model = out["model"]
    assert model["kernel"] == "paper" and model["noise_var"] == 0.01 and model["hyperparameters"]["l2"] == 73.54
    sd = datasets.load("boston").inputs.std(axis=0, ddof=1)
    assert model["hyperparameters"]["lengthscale"] == pytest.approx(np.sqrt(sd * 73.54 / 2), rel=1e-12)
    assert model["obtained"] == {"l2": "paper preset", "noise_var": "paper preset", "signal_var": "paper preset",
                                 "lengthscale": "ℓ_j = sqrt(v_j l² / 2), v_j the sample sd of training input j"}


def test_a_given_kernel_says_which_values_are_given_and_which_default(capsys):
    out = _json(capsys, ["learning-curve", "--dataset", "toy", "--kernel", "rq", "--lengthscale", "0.7",
                         "--s-over-n", "1", "--mc-samples", "2"])
    model = out["model"]
    assert model["kernel"] == "rq" and model["hyperparameters"] == {"lengthscale": 0.7, "alpha": 1.0,
                                                                    "signal_var": 1.0}
    assert model["obtained"] == {"lengthscale": "given", "alpha": "default", "signal_var": "default",
                                 "noise_var": "default"} and model["noise_var"] == 0.01


def test_the_lengthscale_of_a_kernel_changes_the_curve(capsys):
    """The issue's example: --lengthscale 0.1 and 5 on toy gave the same ε (the preset was used); with --kernel
    they are two models, and without it the option is refused."""
    argv = ["learning-curve", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "2", "--kernel", "se"]
    small, large = (_json(capsys, [*argv, "--lengthscale", v])["rows"][0]["theory"] for v in ("0.1", "5"))
    assert abs(small - large) > 0.01 * abs(small)


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "toy", "--lengthscale", "0.1"], "--lengthscale is not used: the model is the paper preset"),
    (["--dataset", "toy", "--preset", "paper", "--signal-var", "2", "--period", "1"],
     "--signal-var, --period are not used: the model is the paper preset"),
    (["--dataset", "toy", "--kernel", "se", "--alpha", "2"], "--alpha is not used: --kernel se has no such"),
    (["--dataset", "toy", "--kernel", "rq", "--period", "2"], "--period is not used: --kernel rq has no such"),
    (["--dataset", "toy", "--kernel", "se", "--l2", "3"], "--l2 is not used: --kernel se"),
    (["--dataset", "toy", "--ard", "--noise-var", "0.1"], "--noise-var is not used: the kernel's ℓ, σ_f² and σ² are "
                                                          "chosen by maximum evidence"),
    (["--dataset", "toy", "--evidence", "--kernel", "se"], "--evidence chooses a squared-exponential kernel"),
    (["--dataset", "toy", "--ard", "--preset", "paper"], "--ard chooses a squared-exponential kernel"),
    (["--dataset", "toy", "--methods", "adatap,foo"], "expected methods from adatap, approx"),
    (["--dataset", "toy", "--subsample", "6000"], "--subsample 6,000 is above the 5,000 rows of the dense path"),
])
def test_an_option_the_model_does_not_use_is_an_error(capsys, argv, message):
    assert message in _refused(capsys, ["learning-curve", "--mc-samples", "2", *argv])


def test_a_csv_with_kernel_options_but_no_kernel_is_refused_before_any_fit(capsys, csv400, monkeypatch):
    monkeypatch.setattr(evidence, "maximum_evidence", lambda *a, **k: pytest.fail("the evidence was maximised"))
    err = _refused(capsys, ["learning-curve", "--csv", str(csv400[0]), "--target", "y", "--lengthscale", "2"])
    assert "--lengthscale is not used: the kernel's ℓ, σ_f² and σ² are chosen by maximum evidence" in err


# ----------------------------------------------------------------------------- --ard, --subsample


def test_ard_fits_one_lengthscale_per_input_and_names_them(capsys, csv400):
    """--ard is fit_to_data(ard=True): three lengthscales, the irrelevant input x2 with the longest."""
    path, X, y = csv400
    out = _json(capsys, ["holdout", "--csv", str(path), "--target", "y", "--holdout", "10", "--ard",
                         "--mc-samples", "2"])
    fit = evidence.fit_to_data(X, y, ard=True)
    ell = out["model"]["hyperparameters"]["lengthscale"]
    assert ell == fit.lengthscale.tolist() and out["model"]["evidence"]["ard"] is True
    assert ell[2] > 3 * max(ell[0], ell[1])
    assert "ℓ_1..ℓ_d (ARD)" in out["model"]["obtained"]["lengthscale"]


def test_subsample_draws_the_stated_rows_with_the_seed_and_says_so(capsys, tmp_path):
    path, X, y = _table(tmp_path / "tall.csv", common.MAX_DENSE_ROWS + 1, d=2)
    argv = ["learning-curve", "--csv", str(path), "--target", "y", "--subsample", "150", "--seed", "7",
            "--kernel", "se", "--s-over-n", "1", "--mc-samples", "2"]
    out = _json(capsys, argv)
    n = common.MAX_DENSE_ROWS + 1
    assert out["model"]["subsample"] == {"rows": 150, "of": n, "seed": 7} and out["n"] == 150
    assert out["problem"] == f"tall (random 150 of {n:,} rows, seed 7)"
    rows = evidence.subsample_rows(n, 150, 7)  # the rows, rebuilt from the file's X and y
    problem = experiments.regression_problem(datasets.load_csv(path, "y").subset(rows),
                                             kernels.SquaredExponential(1.0, 1.0), 0.01)
    np.testing.assert_array_equal(problem.y, y[rows])
    assert out["model"]["hyperparameters"] == {"lengthscale": 1.0, "signal_var": 1.0}
    sol = replica.solve_replica(problem.K, problem.y, 0.01, 150.0)
    assert out["rows"][0]["theory"] == pytest.approx(stages.theory_error(sol, "square"), rel=1e-5)
    assert cli.main(argv) == 0
    assert f"rows: 150 of {n:,} drawn at random, seed 7" in capsys.readouterr().out


# ----------------------------------------------------------------------------- --methods


def test_methods_runs_only_the_chosen_methods_and_their_values_are_the_full_runs(capsys):
    argv = ["learning-curve", "--dataset", "toy", "--s-over-n", "0.5,1", "--mc-samples", "20"]
    full, some = _json(capsys, argv), _json(capsys, [*argv, "--methods", "approx,mc,loo"])
    assert some["methods"] == ["approx", "loo", "mc"] and full["methods"] == list(stages.CURVE_METHODS)
    for a, b in zip(full["rows"], some["rows"]):
        assert (b["theory"], b["theory_vg"], b["theory_mf"], b["ij"], b["n_iter"]) == (None,) * 5
        assert (b["theory_approx"], b["mc_mean"]) == (a["theory_approx"], a["mc_mean"])
        assert b["loo_limit"] == pytest.approx(a["loo_limit"], rel=1e-12)  # its own factorisation without IJ
    assert some["timing"]["theory_s"] is None and some["timing"]["vg_s"] is None and some["timing"]["ij_s"] is None
    assert cli.main([*argv, "--methods", "adatap"]) == 0
    text = capsys.readouterr().out
    assert "not run: approx, vg, mf, ij, loo, mc (--methods)" in text


def test_above_the_row_bound_the_default_leaves_vg_mf_and_ij_out_and_says_so(capsys, monkeypatch):
    monkeypatch.setattr(stages, "ALL_METHODS_ROWS", 100)  # toy has 200 rows
    argv = ["learning-curve", "--dataset", "toy", "--s-over-n", "1", "--mc-samples", "5"]
    out = _json(capsys, argv)
    assert out["methods"] == list(stages.FAST_METHODS)
    row = out["rows"][0]
    assert row["theory_vg"] is None and row["ij"] is None and row["theory"] is not None and row["mc_mean"] > 0
    assert cli.main(argv) == 0
    assert "not run: vg, mf, ij (above 100 training rows the default leaves them out; --methods all runs them)" in \
        capsys.readouterr().out
    assert _json(capsys, [*argv, "--methods", "all"])["rows"][0]["theory_vg"] is not None
