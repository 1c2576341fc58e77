"""The SVM tab's results are the core's stages (explorer.svm_bootstrap.stages: theory_curve, mc_curve;
experiments: svm_field_comparison) called with the state's problems, grid and seed, as `explorer svm-curve` calls them."""

import numpy as np
import pytest

from explorer.svm_bootstrap import experiments as svm_experiments
from explorer.svm_bootstrap.stages import mc_curve, theory_curve
from explorer.views import svm_bootstrap as V

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def test_the_svm_tab_shows_the_core_stages():
    state = V.SVMState(dataset="crabs", curve_grid=[0.5, 2.0], curve_mc_samples=20, mc_samples=30, holdout=5, seed=2)
    state.refresh()
    assert state.wait(timeout=180) and state.error == "", state.error
    grid = (0.5, 2.0)
    assert state.theory_curve == theory_curve(state.problem, grid)
    assert state.curve_mc == mc_curve(state.problem, grid, 20, rng=2)
    field = svm_experiments.svm_field_comparison(state.test_problem, state.s_over_n, 30, rng=2)
    for name in ("theory_mean", "theory_var", "theory_p_negative", "mc_fields", "mc_p_negative"):
        np.testing.assert_array_equal(getattr(state.field, name), getattr(field, name), err_msg=name)
    # the CLI's rows are the same stages: its JSON numbers equal the tab's
    res = svm_experiments.svm_learning_curve(state.problem, grid, 20, rng=2)
    assert [r.theory for r in res.rows] == [p.theory for p in state.theory_curve.points]
    assert [r.mc_mean for r in res.rows] == [p.mc_mean for p in state.curve_mc.points]
    assert (res.loo_approximate, res.loo_exact) == (state.theory_curve.loo_approximate, state.theory_curve.loo_exact)
