"""The one set of hooks of long computations (explorer.progress.Hooks) and their use by every paper's core."""
import numpy as np
import pytest

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.problem import TABLE_1, Setting, make_model, prepare_data
from explorer.fast_bootstrap.stages import CALIBRATION, estimated_seconds, replica_grid, replica_optimism
from explorer.gp_bootstrap import experiments as gx
from explorer.gp_bootstrap import montecarlo
from explorer.kernels import make_kernel
from explorer.model_selection import experiments as sx
from explorer.model_selection.criterion import make_criterion
from explorer.model_selection.optimisation import optimize_hyperparameters
from explorer.model_selection.selection import rank_functional_forms, select_hyperparameters
from explorer.progress import NO_HOOKS, Cancelled, Hooks, Progress


def test_empty_hooks_do_nothing():
    NO_HOOKS.report(0.5, "half")
    NO_HOOKS.check(1, 2)
    NO_HOOKS.publish(object())
    sub = NO_HOOKS.sub(0.2, 0.5, "inner")
    sub.report(1.0, "x")
    sub.check(3, 4)


def test_report_clips_to_the_unit_interval():
    seen = []
    hooks = Hooks(progress=lambda f, m: seen.append((f, str(m))))
    for fraction in (-0.5, 0.25, 1.5):
        hooks.report(fraction, "m")
    assert seen == [(0.0, "m"), (0.25, "m"), (1.0, "m")]


def test_check_raises_cancelled_with_the_count():
    hooks = Hooks(should_stop=iter([False, True]).__next__)
    hooks.check(0, 5, "criteria")
    with pytest.raises(Cancelled, match="cancelled after 1 of 5 criteria") as info:
        hooks.check(1, 5, "criteria")
    assert (info.value.done, info.value.total, info.value.unit) == (1, 5, "criteria")


def test_sub_maps_fractions_prefixes_messages_and_keeps_the_outer_count():
    seen, published = [], []
    outer = Hooks(progress=lambda f, m: seen.append((f, str(m))), should_stop=lambda: True, partial=published.append)
    inner = outer.sub(0.5, 0.25, "stage", count=(2, 4, "data sets"))
    inner.report(0.0, "start")
    inner.report(1.0, "")
    inner.sub(0.5, 0.5, "deeper").report(0.5, "x")   # 0.5 + 0.25 * (0.5 + 0.5 * 0.5)
    assert seen == [(0.5, "stage: start"), (0.75, "stage"), (0.6875, "stage: deeper: x")]
    inner.publish("not the outer result")               # nested partial results go nowhere by default
    assert published == []
    with pytest.raises(Cancelled, match="after 2 of 4 data sets"):
        inner.sub(0.0, 1.0, count=(7, 9, "restarts")).check(3, 16, "restarts")   # the outermost count wins


def test_publishing_converts_partial_results_and_keeps_the_rest():
    published, reports = [], []
    hooks = Hooks(lambda f, m: reports.append(f), lambda: False, published.append, (1, 4, "sizes"))
    nested = hooks.publishing(lambda value: value * 10)
    nested.publish(2)
    nested.report(0.5)
    assert published == [20] and reports == [0.5]
    assert (nested.should_stop, nested.count) == (hooks.should_stop, hooks.count)
    NO_HOOKS.publishing(lambda value: value).publish(1)  # no receiver: nothing happens


def test_hooks_do_not_change_monte_carlo_numbers(rng):
    X = rng.normal(size=(12, 1))
    K, y = make_kernel("se", 1)(X), np.sin(3 * X[:, 0])
    seen = []
    with_hooks = montecarlo.bootstrap_learning_curve(K, y, 0.1, [6, 12], 20, rng=3, chunk_size=7,
                                                     hooks=Hooks(progress=lambda f, m: seen.append(f),
                                                                 should_stop=lambda: False))
    plain = montecarlo.bootstrap_learning_curve(K, y, 0.1, [6, 12], 20, rng=3, chunk_size=7)
    np.testing.assert_array_equal(with_hooks.value, plain.value)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 6   # 3 batches per S, 2 values of S


def test_learning_curve_cancellation_counts_samples_over_the_curve(rng):
    X = rng.normal(size=(8, 1))
    K, y = make_kernel("se", 1)(X), np.sin(3 * X[:, 0])
    checks = iter([False, False, True])
    with pytest.raises(Cancelled, match="after 20 of 40 samples"):
        montecarlo.bootstrap_learning_curve(K, y, 0.1, [4, 8], 20, rng=0, chunk_size=10,
                                            hooks=Hooks(should_stop=lambda: next(checks)))


def test_model_selection_stops_between_restarts_and_publishes_per_criterion(rng):
    X = rng.normal(size=(15, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=15)
    kernel = make_kernel("se", 1)
    published = []
    results = select_hyperparameters(X, y, kernel, ("evidence", "loo"), rng=0, n_restarts=2, max_iter=4,
                                               hooks=Hooks(partial=published.append))
    plain = select_hyperparameters(X, y, kernel, ("evidence", "loo"), rng=0, n_restarts=2, max_iter=4)
    assert [r.value for r in results] == [r.value for r in plain]
    assert [len(p) for p in published] == [1, 2] and published[-1] == results
    checks = iter([False, False, True])   # criterion 1, its restart 1, then stop before its restart 2
    with pytest.raises(Cancelled, match="after 0 of 2 criteria"):
        select_hyperparameters(X, y, kernel, ("evidence", "loo"), rng=0, n_restarts=2, max_iter=4,
                                         hooks=Hooks(should_stop=lambda: next(checks)))
    crit = make_criterion("evidence", 15)
    with pytest.raises(Cancelled, match="after 0 of 3 restarts"):
        optimize_hyperparameters(crit, kernel, X, y, n_restarts=3, hooks=Hooks(should_stop=lambda: True))


def test_ranking_publishes_rows_without_ranks(rng):
    X = rng.normal(size=(15, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=15)
    published = []
    rows = rank_functional_forms(X, y, ("se", "exponential"), rank_by=("evidence",), rng=1,
                                           n_restarts=1, max_iter=3, hooks=Hooks(partial=published.append))
    assert [[r.kernel_name for r in p] for p in published] == [["se"], ["se", "exponential"]]
    assert all(r.ranks == {} for p in published for r in p) and {r.ranks["evidence"] for r in rows} == {1, 2}


def test_experiments_report_and_stop_at_their_own_units():
    seen = []
    sx.beta_experiment(n_datasets=2, n=12, betas=[0.5, 1.0, 2.0], n_objects=3, rng=0,
                       hooks=Hooks(progress=lambda f, m: seen.append((f, str(m)))))
    assert seen[-1] == (1.0, "done") and (0.5, "1/2 data sets") in seen and (1.0, "2/2 data sets") in seen
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)
    checks = iter([False, True])
    with pytest.raises(Cancelled, match="after 1 of 2 data sets"):
        sx.beta_experiment(n_datasets=2, n=12, betas=[0.5, 1.0], n_objects=3, rng=0,
                           hooks=Hooks(should_stop=lambda: next(checks)))


def test_gp_experiment_messages_name_the_stage():
    problem = gx.regression_problem(datasets.load("toy", n=30, rng=1), holdout=5)
    seen = []
    gx.holdout_comparison(problem, 1.0, 20, rng=0, hooks=Hooks(progress=lambda f, m: seen.append((f, str(m)))))
    assert seen[0] == (0.0, "solving the replica theory") and seen[-1] == (1.0, "done")
    assert seen[1][1] == "Monte-Carlo: 20/20 samples" and seen[1][0] == pytest.approx(1.0)


def test_fast_bootstrap_progress_in_models_and_cancel_between_replications():
    data = datasets.load("toy", n=40, rng=0)
    setting = Setting((2, 8, 1), 3, (2, 8, 2), 2)
    seen = []
    fe.compare_bootstraps(data, "rbfn", setting, rng=0, with_replica=False,
                          hooks=Hooks(progress=lambda f, m: seen.append((f, m))))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and max(fractions[:-1]) <= 0.99 and seen[-1] == (1.0, Progress(stage="done"))
    assert Progress(3, 3, "replications", "full bootstrap") in [m for _, m in seen]
    assert any(str(m) == "full bootstrap: 3/3 replications" for _, m in seen)
    checks = iter([False, False, True])   # one check per chunk of one replication
    with pytest.raises(Cancelled, match="after 0 of 3 replications"):  # the 2 fast ones ran, the full one stops
        fe.compare_bootstraps(data, "rbfn", setting, rng=0, with_replica=False, chunk_size=1,
                              hooks=Hooks(should_stop=lambda: next(checks)))


def test_replica_grid_and_estimates():
    grid = np.arange(10.0)
    np.testing.assert_array_equal(replica_grid(grid, 4), [0.0, 3.0, 6.0, 9.0])
    np.testing.assert_array_equal(replica_grid(grid, 40), grid)
    assert estimated_seconds("replica", "ls-svm", 400, TABLE_1["ls-svm"], points=10) == pytest.approx(
        CALIBRATION["replica"] * 10 * 8)


def test_progress_is_data_its_short_form_the_command_line_text():
    seen = []
    outer = Hooks(progress=lambda f, m: seen.append((f, m)))
    outer.sub(0.5, 0.5, "fast bootstrap").step(3, 10, "replications")
    outer.report(0.25, "solving the replica theory")       # plain text: a stage that counts nothing
    outer.sub(0.0, 0.5, "Monte-Carlo").sub(0.0, 1.0, "S/N = 1").step(0, 0, "samples")
    assert seen == [(0.5 + 0.5 * 0.3, Progress(3, 10, "replications", "fast bootstrap")),
                    (0.25, Progress(stage="solving the replica theory")),
                    (0.5, Progress(0, 0, "samples", "Monte-Carlo: S/N = 1"))]
    assert [str(m) for _, m in seen] == ["fast bootstrap: 3/10 replications", "solving the replica theory",
                                         "Monte-Carlo: S/N = 1: 0/0 samples"]
    assert f"{Progress(1, 2, 'runs'):>12}" == "    1/2 runs" and str(Progress()) == ""


def test_replica_optimism_counts_values_of_gamma():
    data = datasets.load("toy", n=30, rng=0)
    model = make_model("ls-svm", data)
    prepared = prepare_data(data)
    seen = []
    replica_optimism(model, prepared.X, prepared.y, np.array([1.0, 10.0]),
                        hooks=Hooks(progress=lambda f, m: seen.append((f, m))))
    assert seen == [(0.5, Progress(1, 2, "values of γ", "replica theory")),
                    (1.0, Progress(2, 2, "values of γ", "replica theory"))]
