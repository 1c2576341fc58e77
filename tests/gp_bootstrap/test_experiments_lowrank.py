"""The comparisons of [MO03] on a low-rank problem (issue 35): the stages run the low-rank path, and a large N maps
the distribution at a random subset of the inputs with the numbers the whole map has there."""
import numpy as np
import pytest

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import experiments, linear_response
from explorer.operators import responses


@pytest.fixture(scope="module")
def problem():
    data = datasets.load("boston").standardized(targets=True)
    return experiments.regression_problem(data, kernels.SquaredExponential(3.0, 1.0), 0.1, rank=60, rng=4, holdout=6)


def test_the_learning_curve_runs_the_low_rank_theory_and_skips_vg_and_mf(problem):
    res = experiments.learning_curve_comparison(problem, [0.5, 2.0], 30, rng=1, tol=1e-8)
    dense = replica.solve_replica(problem.phi @ problem.phi.T, problem.y, 0.1, 0.5 * problem.n, tol=1e-8,
                                  precision="double", init_subset=None)
    assert res.rows[0].theory == pytest.approx(replica.bootstrap_test_error(dense), rel=1e-6)
    assert res.vg_s is None and res.mf_s is None and all(r.theory_vg is None for r in res.rows)
    assert all(r.ij is not None and r.loo_limit is not None for r in res.rows)


def test_a_large_map_covers_random_inputs_with_the_whole_maps_numbers(problem, monkeypatch):
    whole = experiments.distribution_comparison(problem, 1.0, 300, rng=3)
    assert whole.inputs.size == problem.n and whole.as_dict()["inputs"] is None
    monkeypatch.setattr(experiments, "MAP_ALL_ROWS", 100)
    monkeypatch.setattr(experiments, "MAP_INPUTS", 40)
    part = experiments.distribution_comparison(problem, 1.0, 300, rng=3)
    rows = part.inputs
    assert rows.size == 40 and np.all(np.diff(rows) > 0) and part.samples.shape == (300, 40)
    np.testing.assert_array_equal(part.samples, whole.samples[:, rows])
    np.testing.assert_allclose(part.l1.l1, whole.l1.l1[rows], rtol=1e-12)
    assert part.solution.s_over_n == pytest.approx(1.0) and part.as_dict()["inputs"] == rows.tolist()
    assert set(part.as_dict()["worst_inputs"]) <= set(rows.tolist())


def test_the_ij_error_of_a_large_problem_is_estimated_on_a_subset(problem, monkeypatch):
    def ij_error():
        return linear_response.linear_response_error(problem.operator, problem.y, problem.noise_var,
                                                     problem.sample_size(1.0), inputs="auto")

    exact = ij_error()
    monkeypatch.setattr(responses, "IJ_EXACT_ROWS", 100)
    monkeypatch.setattr(responses, "IJ_INPUTS", 200)
    part = ij_error()
    assert np.isnan(part.variance).sum() == problem.n - 200 and part.loo_limit == exact.loo_limit
    assert part.value == pytest.approx(exact.value, rel=0.05)
