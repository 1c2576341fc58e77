"""The stages of [MO03]'s experiments (explorer.gp_bootstrap.stages) against the core functions they join:
ADATAP solved cold at each S, the Monte-Carlo learning curve, the held-out moments of the comparison."""

import numpy as np
import pytest

from explorer import datasets
from explorer.bootstrap import replica
from explorer.gp_bootstrap import experiments, montecarlo, stages
from explorer.losses import get_loss
from explorer.progress import Hooks


@pytest.fixture(scope="module")
def problem():
    return experiments.regression_problem(datasets.load("toy", n=40, rng=3), holdout=8)


def test_theory_curve_is_the_theory_at_each_size(problem):
    """Warm-started ADATAP along the grid against cold solves at tolerance 1e-8. The stage stops at the paper's
    tolerance 1e-3 on Δλ, which on this 32-row toy problem leaves ε within 2e-4 relative of the tight solve
    (on boston about 1e-6), so rel 1e-3; eq. (46) for the ε-insensitive loss, no VG/MF."""
    grid = [2.0, 0.5, 1.0]
    solutions = stages.replica_curve(problem, grid)
    params = {"eps": 0.1, "beta": 0.1}
    curve = stages.theory_curve(problem, solutions, loss="eps-insensitive", loss_params=params,
                                vg_mf=stages.vg_mf_curve(problem, grid))
    g = get_loss("eps-insensitive", **params)
    for v, value, approx in zip(grid, curve.theory, curve.theory_approx):
        cold = replica.solve_replica(problem.K, problem.y, problem.noise_var, v * problem.n, tol=1e-8)
        assert value == pytest.approx(replica.bootstrap_loss_error(cold, g), rel=1e-3)
        assert approx == replica.bootstrap_loss_error(
            replica.approximate_replica(problem.K, problem.y, problem.noise_var, v * problem.n), g)
    assert curve.theory_vg is None and curve.theory_mf is None and list(curve.method_values()) == [
        "theory", "theory_approx"]
    np.testing.assert_allclose(curve.expected_test_points, problem.n * np.exp(-np.array(grid)), rtol=1e-15)


def test_mc_curve_is_the_monte_carlo_learning_curve_and_publishes_its_points(problem):
    published = []
    curve = stages.mc_curve(problem, [0.5, 2.0], 30, rng=5, hooks=Hooks(partial=published.append))
    plain = montecarlo.bootstrap_learning_curve(problem.K, problem.y, problem.noise_var,
                                                np.array([0.5, 2.0]) * problem.n, 30, rng=5)
    assert [p.mc_mean for p in curve.points] == plain.value.tolist()
    assert [p.mc_se for p in curve.points] == plain.se.tolist()
    assert [p.s_over_n for p in curve.points] == [0.5, 2.0] and curve.complete
    assert [len(c.points) for c in published] == [1, 2] and published[-1] is curve
    with pytest.raises(ValueError, match="`mc_samples` must be at least 1, got 0"):
        stages.mc_curve(problem, [1.0], 0)


def test_holdout_theory_equals_the_comparison_theory(problem):
    theory = stages.holdout_theory(problem, 1.0)
    comparison = experiments.holdout_comparison(problem, 1.0, 5, rng=0)
    np.testing.assert_array_equal(theory.mean, comparison.theory_mean)
    np.testing.assert_array_equal(theory.var, comparison.theory_var)
    np.testing.assert_array_equal(theory.y_test, problem.y_test)
    no_holdout = experiments.regression_problem(datasets.load("toy", n=40, rng=3))
    with pytest.raises(ValueError, match="no held-out rows"):
        stages.holdout_theory(no_holdout, 1.0)


def test_curve_methods_default_to_all_up_to_the_row_bound_and_check_names():
    assert stages.curve_methods(None, stages.ALL_METHODS_ROWS) == stages.CURVE_METHODS
    assert stages.curve_methods(None, stages.ALL_METHODS_ROWS + 1) == stages.FAST_METHODS
    assert stages.curve_methods(["mc", "adatap"], 10) == ("adatap", "mc")  # CURVE_METHODS' order
    for bad in (["adatap", "vgg"], []):
        with pytest.raises(ValueError, match="`methods` must name one or more of adatap, approx, vg, mf, ij, loo, mc"):
            stages.curve_methods(bad, 10)


def test_a_comparison_of_some_methods_has_the_full_runs_values_for_them_and_none_for_the_others(problem):
    """The chosen methods give the numbers of a run of every method (same grid, same seed; the LOO limit from its
    own factorisation, so to rounding); the others are None,
    their timings too; the stages skip them (VG, MF and IJ not solved: no VG/MF curve, no IJ)."""
    grid = [0.5, 1.5]
    full = experiments.learning_curve_comparison(problem, grid, 10, rng=2)
    some = experiments.learning_curve_comparison(problem, grid, 10, rng=2, methods=["mf", "loo", "mc"])
    assert full.methods == stages.CURVE_METHODS and some.methods == ("mf", "loo", "mc")
    for a, b in zip(full.rows, some.rows):
        assert (b.theory_mf, b.mc_mean, b.mc_se) == (a.theory_mf, a.mc_mean, a.mc_se)
        assert b.loo_limit == pytest.approx(a.loo_limit, rel=1e-12)  # its own factorisation without IJ
        assert (b.theory, b.theory_approx, b.theory_vg, b.ij, b.n_iter, b.converged) == (None,) * 6
    assert (some.theory_s, some.vg_s, some.ij_s) == (None, None, None) and some.mf_s > 0 and some.mc_sample_s > 0
    assert some.as_dict()["timing"]["theory_in_mc_samples"] is None and some.as_dict()["methods"] == list(some.methods)
    solutions = stages.replica_curve(problem, grid, methods=("approx",))
    assert solutions.exact is None and len(solutions.approx) == 2
    assert stages.vg_mf_curve(problem, grid, methods=("mf",)).vg is None
