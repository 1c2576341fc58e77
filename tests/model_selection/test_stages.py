"""The stages of [Fis16]'s model selection on one data set (explorer.model_selection.stages) against the
criteria functions they join, drawn in the same generator order, and their partial results."""

import numpy as np
import pytest

from explorer import datasets
from explorer.model_selection import stages
from explorer.model_selection.criterion import make_criterion
from explorer.model_selection.curves import criterion_curve
from explorer.model_selection.optimisation import initial_hyperparameters
from explorer.model_selection.problem import selection_problem
from explorer.model_selection.selection import rank_functional_forms, select_hyperparameters
from explorer.progress import Cancelled, Hooks

OPTIONS = dict(n_folds=4, n_partitions=3, n_subsets=2, n_objects=4, entropy="zero")


@pytest.fixture(scope="module")
def problem():
    return selection_problem(datasets.load("teacher", n=40, rng=2), n_train=24, n_test=16, teacher=True)


def test_criterion_curves_are_the_criteria_along_the_teacher_grid(problem):
    published = []
    curves = stages.criterion_curves(problem, "se", "lengthscale", ("kfold", "evidence"), points=4, decades=0.5,
                                     options=OPTIONS, rng=7, hooks=Hooks(partial=published.append))
    kernel, noise_var = stages.reference_hyperparameters(problem, "se")
    assert noise_var == 0.01 and kernel.params["lengthscale"] == 1.0  # the teacher's values, §5.1
    grid = np.geomspace(10**-0.5, 10**0.5, 4)
    gen = np.random.default_rng(7)
    for curve, name in zip(curves.curves, ("kfold", "evidence"), strict=True):
        crit = make_criterion(name, problem.n, rng=gen, **OPTIONS)
        expected = criterion_curve(crit, kernel, problem.X, problem.y, noise_var, "lengthscale", grid)
        np.testing.assert_array_equal(curve.grid, grid)
        np.testing.assert_array_equal(curve.values, expected.values)
    assert [len(c.curves) for c in published] == [1, 2] and published[-1] is curves and curves.complete
    with pytest.raises(Cancelled, match="after 0 of 2 criteria"):
        stages.criterion_curves(problem, "se", "lengthscale", ("kfold", "evidence"),
                                hooks=Hooks(should_stop=lambda: True))


def test_selection_fits_and_ranking_are_the_core_optimisations(problem):
    published = []
    fits = stages.selection_fits(problem, "se", ("evidence", "loo"), n_restarts=2, max_iter=5, options=OPTIONS,
                                 rng=1, hooks=Hooks(partial=published.append))
    start = initial_hyperparameters("se", problem.X, problem.y)
    plain = select_hyperparameters(problem.X, problem.y, start.kernel, ("evidence", "loo"),
                                             noise_var=start.noise_var, rng=1, n_restarts=2, max_iter=5,
                                             X_test=problem.X_test, y_test=problem.y_test, **OPTIONS)
    assert [(r.value, r.test.smse) for r in fits.results] == [(r.value, r.test.smse) for r in plain]
    assert [len(p.results) for p in published] == [1, 2] and fits.complete
    ranking = stages.functional_form_ranking(problem, ("se", "exponential"), "loo", ("evidence",), n_restarts=1,
                                             max_iter=4, options=OPTIONS, rng=3)
    rows = rank_functional_forms(problem.X, problem.y, ("se", "exponential"), select_by="loo",
                                           rank_by=("evidence",), rng=3, n_restarts=1, max_iter=4,
                                           X_test=problem.X_test, y_test=problem.y_test, **OPTIONS)
    assert [(r.kernel_name, r.values, r.ranks) for r in ranking.rows] == \
        [(r.kernel_name, r.values, r.ranks) for r in rows]
