"""The Explore sub-panel's results are the core's stages (explorer.model_selection.stages) called with the state's
problem, options and seed, as `explorer select` calls them."""

import numpy as np
import pytest

from explorer.model_selection import stages
from explorer.views import model_selection as V

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")


def test_the_explore_results_are_the_core_stages():
    criteria = ("evidence", "loo", "kfold")
    state = V.SelectionState(n_points=32, n_test=32, criteria=list(criteria), rank_kernels=["se", "exponential"],
                             curve_points=5, n_restarts=1, max_iter=8, n_partitions=4, n_objects=4, seed=5)
    state.refresh()
    assert state.wait(timeout=180) and state.error == "", state.error
    options = dict(n_folds=5, n_partitions=4, n_subsets=2, n_objects=4, entropy="zero")
    curves = stages.criterion_curves(state.problem, "se", "lengthscale", criteria, points=5, decades=1.0,
                                     options=options, rng=5)
    assert state.curves.reference == curves.reference and state.curves.criteria == criteria
    for got, want in zip(state.curves.curves, curves.curves, strict=True):
        np.testing.assert_array_equal(got.grid, want.grid)
        np.testing.assert_array_equal(got.values, want.values)
    fits = stages.selection_fits(state.problem, "se", criteria, n_restarts=1, max_iter=8, options=options, rng=5)
    assert [(r.criterion, r.value, r.hyperparameters, r.test.smse) for r in state.optima.results] == \
        [(r.criterion, r.value, r.hyperparameters, r.test.smse) for r in fits.results]
    ranking = stages.functional_form_ranking(state.problem, ("se", "exponential"), "loo", criteria, n_restarts=1,
                                             max_iter=8, options=options, rng=5)
    assert [(r.kernel_name, r.values, r.ranks) for r in state.ranking.rows] == \
        [(r.kernel_name, r.values, r.ranks) for r in ranking.rows]
