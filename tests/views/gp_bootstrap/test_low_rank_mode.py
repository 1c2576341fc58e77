"""The low-rank mode of the Gaussian-process pages (issue 35, item 6): data of more than MAX_ROWS rows from the server
(diamonds, a CSV of the data folder) run on K ≈ ΦΦᵀ of rank ``rank``; uploads keep their limits.

The numbers are checked against independent computations: the dense path on the N × N matrix ΦΦᵀ of the page's own
features, and the command line on the same CSV (which builds its problem and fits its model without the app). That the
theory runs off the event loop is checked without timing: with the jobs held back, a refresh computes no theory on the
session's thread for a low-rank problem (it does for a dense one).
"""
import json

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer import cli  # noqa: E402
from explorer.bootstrap import replica  # noqa: E402
from explorer.gp_bootstrap import experiments, stages  # noqa: E402
from explorer.views.gp_bootstrap import figures  # noqa: E402
from explorer.views.gp_bootstrap.state import (  # noqa: E402
    LOW_RANK_GRID,
    LOW_RANK_ROWS,
    MAX_ROWS,
    RANK_BOUNDS,
    GPBootstrapState,
)
from explorer.views.gp_bootstrap.tab import GPControls  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

TIMEOUT = 300


def _write_csv(folder, name: str, n: int, seed: int = 3) -> str:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    path = folder / name
    np.savetxt(path, np.c_[X, y], delimiter=",", header="a,b,c,y", comments="")
    return str(path)


def _state(folder, name: str, **params) -> GPBootstrapState:
    params = {"auto_mc": False, "curve_mc_samples": 20, "mc_samples": 500, "rank": 32, **params}
    s = GPBootstrapState(data_dir=str(folder), dataset=f"file: {name}", **params)
    s.refresh()
    assert s.wait(TIMEOUT), "background jobs did not finish in time"
    assert s.error == "", s.error
    return s


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    _write_csv(folder, "large.csv", 1_500)
    _write_csv(folder, "small.csv", 400)
    return folder


def test_a_data_folder_csv_of_more_rows_than_the_dense_pages_take_runs_the_low_rank_path(folder):
    s = _state(folder, "large.csv")
    assert s.low_rank and s.problem.low_rank
    assert s.problem.n == 1_500 > MAX_ROWS and s.problem.features.rank == 32
    assert s.hyperparameter_source == "evidence" and "rank m = 32" in s.notice
    assert tuple(s.theory_curve.s_over_n) == LOW_RANK_GRID and s.theory_curve.theory_vg is None
    assert s.linear_response.ij is None and np.all(np.isfinite(s.linear_response.loo_limit))
    assert "low-rank kernel m = 32" in figures.problem_label(s)
    small = _state(folder, "small.csv")
    assert not small.low_rank and not small.problem.low_rank


def test_the_page_s_theory_equals_the_dense_path_on_its_own_phi_phi_t(folder):
    """ADATAP at S/N = 1 on the page's Φ equals the dense solver on the 1,500 × 1,500 matrix ΦΦᵀ solved to 1e-8: the
    page's tolerance (the paper's 1e-3) gives ε(S) to 1e-5 and each bootstrap mean to 5e-5 · sd(y)."""
    s = _state(folder, "large.csv")
    p = s.problem
    dense = replica.solve_replica(p.phi @ p.phi.T, p.y, p.noise_var, p.n, tol=1e-8)
    assert s.current_theory_error == pytest.approx(replica.bootstrap_test_error(dense), rel=1e-5)
    assert s.solution.m == pytest.approx(dense.m, rel=0, abs=5e-5 * p.y.std())


def test_the_page_and_the_command_line_give_the_same_numbers_on_the_same_csv(folder, capsys):
    """`explorer learning-curve --csv F --rank 32 --seed 0` fits the rank-32 evidence and draws the landmarks as the
    page does: the same model (the page's controls keep 6 significant digits) and landmarks; given the page's values,
    the same theory curve."""
    s = _state(folder, "large.csv")
    grid = ",".join(f"{v:g}" for v in LOW_RANK_GRID)
    common = ["learning-curve", "--csv", str(folder / "large.csv"), "--target", "y", "--rank", "32", "--seed", "0",
              "--s-over-n", grid, "--methods", "adatap,approx,loo", "--json"]
    assert cli.main(common) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["low_rank"]["landmarks"] == s.problem.features.landmarks.tolist()
    assert fitted["model"]["noise_var"] == pytest.approx(s.noise_var, rel=1e-5)
    for name in ("lengthscale", "signal_var"):
        assert fitted["model"]["hyperparameters"][name] == pytest.approx(getattr(s, name), rel=1e-5)
    assert cli.main([*common, "--kernel", "se", "--lengthscale", repr(s.lengthscale), "--signal-var",
                     repr(s.signal_var), "--noise-var", repr(s.noise_var)]) == 0
    given = json.loads(capsys.readouterr().out)
    for j, row in enumerate(given["rows"]):
        assert row["theory"] == pytest.approx(s.theory_curve.theory[j], rel=1e-9)
        assert row["theory_approx"] == pytest.approx(s.theory_curve.theory_approx[j], rel=1e-9)
        assert row["loo_limit"] == pytest.approx(s.linear_response.loo_limit[j], rel=1e-9)
    settings = figures.settings(s)
    assert settings["rank"] == 32 and settings["low_rank"]["landmarks"] == fitted["low_rank"]["landmarks"]


def test_the_low_rank_theory_is_computed_off_the_session_s_thread(folder):
    """With the jobs held back, a refresh of a low-rank page leaves the problem's features and the theory to the jobs
    (nothing of them on the event loop); a dense page solves its ~0.1 s theory in the refresh itself."""
    large = _state(folder, "large.csv")
    small = _state(folder, "small.csv")
    for s in (large, small):
        s.defer_jobs()
        s.param.update(s_over_n=2.0, noise_var=0.02)  # a new problem (σ²) and a new S/N
    assert large.problem is None and large.solution is None and large.jobs["problem"].message != "done"
    assert small.problem is not None and small.solution is not None
    large.start_jobs()
    assert large.wait(TIMEOUT) and large.error == ""
    assert large.solution is not None and large.solution.s_over_n == pytest.approx(2.0)
    assert large.problem.noise_var == 0.02


def test_monte_carlo_of_large_data_waits_for_its_button_and_says_how_long(folder, dask_engine):
    s = _state(folder, "large.csv", auto_mc=True)
    assert s.curve_mc is None
    message = s.jobs["curve"].message
    assert "Waits for 'Run Monte-Carlo'" in message and f"{20 * len(LOW_RANK_GRID):,} refits" in message
    s.run_mc()
    assert s.wait(TIMEOUT) and s.curve_mc.complete and s.curve_mc.grid == LOW_RANK_GRID
    # the page's Monte-Carlo on the Dask workers is the core's, run in this process with the same seed
    here = stages.mc_curve(s.problem, LOW_RANK_GRID, 20, rng=s.seed)
    for page, core in zip(s.curve_mc.points, here.points):
        assert page.mc_mean == pytest.approx(core.mc_mean, rel=1e-12) and page.mc_se == pytest.approx(core.mc_se)


def test_the_distribution_pages_cover_a_random_sample_of_the_inputs_of_a_large_problem(tmp_path, dask_engine):
    """Above experiments.MAP_ALL_ROWS rows the Monte-Carlo keeps MAP_INPUTS inputs (drawn from the seed): the
    scatter shows them, a tap selects the right row, the L1 table lists them, and an input not among them shows the
    theory alone."""
    _write_csv(tmp_path, "wide.csv", experiments.MAP_ALL_ROWS + 500)
    s = _state(tmp_path, "wide.csv", rank=16, tab="distribution", seed=5)
    rows = s.mapped_inputs
    assert rows.size == experiments.MAP_INPUTS and np.all(np.diff(rows) > 0)
    s.run_mc()
    assert s.wait(TIMEOUT) and s.error == ""
    dist = s.distribution
    np.testing.assert_array_equal(dist.inputs, rows)
    table = figures.l1_frame(s)
    np.testing.assert_array_equal(table["input"], rows)
    np.testing.assert_allclose(table["target"], s.problem.y[rows])
    points = figures.inputs_points(s).data
    assert len(points) == rows.size and figures.tapped_input(s, 7) == rows[7]
    s.input_index = int(rows[7])
    frame = figures.distribution_frame(s)
    assert frame["mc_samples"].iloc[0] == 500
    np.testing.assert_allclose(frame["mc_probability"].sum(), 1.0)
    outside = int(np.setdiff1d(np.arange(s.problem.n), rows)[0])
    s.input_index = outside
    assert figures.mapped_position(s, outside) is None
    frame = figures.distribution_frame(s)
    assert frame["mc_samples"].iloc[0] == 0 and np.isnan(frame["mc_probability"]).all()
    assert frame["theory_probability"].sum() > 0.99


def test_an_upload_keeps_the_dense_pages_row_limit(folder):
    s = GPBootstrapState(auto_mc=False)
    s.refresh()
    s.upload_csv("large.csv", (folder / "large.csv").read_bytes())
    assert f"at most {MAX_ROWS:,}" in s.error and s.problem is None and not s.low_rank


def test_a_data_folder_file_over_the_low_rank_bound_is_refused_in_one_sentence(tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("a,y\n" + "0.5,1.0\n" * (LOW_RANK_ROWS + 1))
    s = GPBootstrapState(data_dir=str(tmp_path), dataset="file: huge.csv", auto_mc=False)
    s.refresh()
    assert f"{LOW_RANK_ROWS:,}" in s.error and "Traceback" not in s.error and s.problem is None


def test_the_rank_control_shows_only_for_large_data_and_keeps_its_bounds(folder):
    large = _state(folder, "large.csv")
    assert GPControls(state=large).widgets["rank"].visible
    small = _state(folder, "small.csv")
    assert not GPControls(state=small).widgets["rank"].visible
    with pytest.raises(ValueError):
        large.rank = RANK_BOUNDS[0] - 1
    with pytest.raises(ValueError):
        large.rank = RANK_BOUNDS[1] + 1


def test_a_rank_above_the_training_rows_is_one_sentence_over_the_figure(folder):
    s = GPBootstrapState(data_dir=str(folder), dataset="file: large.csv", auto_mc=False, tab="holdout", holdout=1000,
                         rank=512, kernel="se", lengthscale=1.0, noise_var=0.1)
    s.refresh()
    assert s.wait(TIMEOUT)
    assert "Rank m = 512 is above the 500 training rows" in s.error and s.holdout_theory is None
    s.holdout = 50  # 1,450 training rows: computed
    assert s.wait(TIMEOUT) and s.error == "" and s.holdout_theory is not None


def test_a_low_rank_theory_that_does_not_converge_says_so_over_the_figure(folder, monkeypatch):
    """The theory of large data runs in a job: its failure (here ADATAP not converging) shows over the figure, as a
    failure on the session's thread does, not only in a job status that no tab shows."""
    s = _state(folder, "large.csv", tab="distribution")

    def diverges(K, y, noise_var, S, **options):
        raise replica.ConvergenceError("ADATAP did not converge in 200 iterations (largest change 3.1).", None)

    monkeypatch.setattr(replica, "solve_replica", diverges)
    s.s_over_n = 1.7
    assert s.wait(TIMEOUT)
    assert "did not converge" in s.error and s.solution is None
