"""Monte-Carlo reproducible by (seed, S/N, sample index): the resamples at one S/N depend on the seed, that S/N
and the sample index only — not on the other values of the list, their order, the command (CLI, library, app)
or the executor (chunks.s_over_n_group, resampling.sample_occupations)."""
import json

import numpy as np
import pytest

from explorer import chunks, cli, datasets, kernels
from explorer.gp_bootstrap import experiments, montecarlo, stages, steps
from explorer.resampling import occupation_numbers, sample_occupations

#: ``learning-curve --dataset boston --preset paper --seed 0 --mc-samples 200`` at S/N = 1 (issue 52): 16.7689 with
#: ``--s-over-n 1`` and 17.1697 with ``--s-over-n 0.5,1`` before S/N keyed the resamples; 17.0648 with every list now.
BOSTON_MC_AT_1 = 17.0648


def test_an_s_over_n_group_is_a_function_of_the_value_and_never_a_small_group():
    assert chunks.s_over_n_group(0.1) == chunks.s_over_n_group(0.1 * 506 / 506) == chunks.s_over_n_group(0.1 + 1e-17)
    assert chunks.s_over_n_group(1.0) == chunks.s_over_n_group(506.0 / 506)
    # S/N that differ in 12 significant digits are different S/N; 12 digits decide
    assert chunks.s_over_n_group(1.0) != chunks.s_over_n_group(1.0 + 1e-11)
    assert chunks.s_over_n_group(1.0) == chunks.s_over_n_group(1.0 + 1e-13)
    grid = [0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0]
    groups = [chunks.s_over_n_group(v) for v in grid]
    assert len(set(groups)) == len(grid) and min(groups) >= 2**64
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="S/N must be positive and finite"):
            chunks.s_over_n_group(bad)


def test_s_over_n_draws_differ_from_the_fixed_small_groups():
    """Groups 0, 1, 2 (the L1 noise floor, the input map, the fast bootstrap's apparent error) draw other numbers."""
    root = chunks.root_seed(0)
    drawn = chunks.item_generator(root, chunks.s_over_n_group(1.0), 0).random(8)
    for group in range(4):
        assert not np.array_equal(chunks.item_generator(root, group, 0).random(8), drawn)


def test_occupations_depend_on_seed_s_over_n_and_index_only():
    root = np.random.SeedSequence(4)
    # the same S/N as the k-th value of any list (the caller's group index does not choose the draws)
    np.testing.assert_array_equal(sample_occupations(50, 25.0, "poisson", root, 0, 0, 10),
                                  sample_occupations(50, 25.0, "poisson", root, 3, 0, 10))
    np.testing.assert_array_equal(sample_occupations(50, 25.0, "poisson", root, 0, 4, 7),
                                  occupation_numbers(50, 25.0, 10, rng=4)[4:7])
    # the same S/N on another N is the same key; another S/N or seed draws other samples
    assert not np.array_equal(occupation_numbers(50, 25.0, 10, rng=4), occupation_numbers(50, 50.0, 10, rng=4))
    assert not np.array_equal(occupation_numbers(50, 25.0, 10, rng=4), occupation_numbers(50, 25.0, 10, rng=5))


def _cli_rows(capsys, s_over_n: str, *extra: str) -> dict[float, dict]:
    assert cli.main(["learning-curve", "--dataset", "boston", "--preset", "paper", "--seed", "0",
                     "--mc-samples", "200", "--methods", "mc", "--s-over-n", s_over_n, "--json", *extra]) == 0
    return {row["s_over_n"]: row for row in json.loads(capsys.readouterr().out)["rows"]}


@pytest.mark.usefixtures("one_blas_thread")
def test_the_cli_gives_one_monte_carlo_mean_at_one_s_over_n_whatever_the_list(capsys):
    lists = ["1", "1,2", "0.5,1", "0.5,1,2", "2,1,0.5"]
    rows = {s: _cli_rows(capsys, s) for s in lists}
    at_one = {s: (r[1.0]["mc_mean"], r[1.0]["mc_se"]) for s, r in rows.items()}
    assert len(set(at_one.values())) == 1, at_one           # identical, bit for bit
    assert at_one["1"][0] == pytest.approx(BOSTON_MC_AT_1, abs=5e-5)
    assert rows["0.5,1,2"][2.0]["mc_mean"] == rows["1,2"][2.0]["mc_mean"] == rows["2,1,0.5"][2.0]["mc_mean"]
    assert rows["0.5,1"][0.5]["mc_mean"] == rows["2,1,0.5"][0.5]["mc_mean"]


def test_the_library_and_the_executor_give_the_same_samples_at_one_s(rng, dask_engine):
    X = rng.normal(size=(40, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)
    K = kernels.make_kernel("se", 2, lengthscale=1.0, signal_var=1.0)(X, X)
    alone = montecarlo.bootstrap_learning_curve(K, y, 0.1, [40.0], 60, rng=9)
    for S_values, executor in (([20.0, 40.0], None), ([80.0, 40.0, 20.0], None), ([40.0, 10.0], dask_engine.executor)):
        curve = montecarlo.bootstrap_learning_curve(K, y, 0.1, S_values, 60, rng=9, chunk_size=7, executor=executor)
        k = S_values.index(40.0)
        assert curve.value[k] == alone.value[0] and curve.se[k] == alone.se[0]
    # and the predictions' Monte-Carlo at that S draws the same samples
    drawn = montecarlo.bootstrap_predictions(K, y, 0.1, 40.0, 60, rng=9)
    np.testing.assert_array_equal(drawn.occupations, sample_occupations(40, 40.0, "poisson",
                                                                        chunks.root_seed(9), 5, 0, 60))


def test_the_step_by_step_resamples_are_the_command_s_samples_in_any_list(capsys):
    """steps.py's promise: resample j of seed s is sample j of ``explorer learning-curve --seed s`` at that S/N."""
    data = datasets.load("toy", rng=datasets.GENERATED_DATA_SEED)
    kernel = kernels.make_kernel("se", 1, lengthscale=0.1, signal_var=1.0)
    problem = experiments.regression_problem(data, kernel, 0.1, holdout=data.n - 30)
    r = steps.draw_resamples(problem.K, problem.y, problem.noise_var, 1.0, 0, 300, rng=7)
    running = steps.running_efron(r.occupations, r.train, problem.y, [300])
    for grid in ("1", "0.5,1,2", "3,1"):
        assert cli.main(["learning-curve", "--dataset", "toy", "--holdout", str(data.n - 30), "--kernel", "se",
                         "--lengthscale", "0.1", "--signal-var", "1", "--noise-var", "0.1", "--s-over-n", grid,
                         "--mc-samples", "300", "--seed", "7", "--methods", "mc", "--json"]) == 0
        (row,) = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["s_over_n"] == 1.0]
        assert row["mc_mean"] == running.value[0] and row["mc_se"] == running.se[0]


@pytest.mark.usefixtures("empty_view_caches")
def test_the_app_state_gives_the_library_s_numbers_at_each_s_over_n():
    pytest.importorskip("panel")
    from explorer.views.common.state.jobs import call_now
    from explorer.views.gp_bootstrap.state import MC_GRID, GPBootstrapState

    state = GPBootstrapState(dataset="teacher", auto_mc=False, curve_mc_samples=20, mc_samples=200, seed=3,
                             tab="curve")
    state.refresh()
    state.dispatch = call_now
    state.run_mc("curve")
    assert state.wait(180), "background jobs did not finish in time"
    points = {p.s_over_n: p for p in state.curve_mc.points}
    assert sorted(points) == sorted(MC_GRID)
    for s_over_n in (1.0, 2.0):
        (alone,) = stages.mc_curve(state.problem, [s_over_n], 20, rng=3).points
        assert points[s_over_n].mc_mean == alone.mc_mean and points[s_over_n].mc_se == alone.mc_se
