"""The GP tabs' results are the core's stages (explorer.gp_bootstrap.stages) called with the state's problem, grids
and seed: the state caches, schedules and draws them, and computes nothing of its own."""

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.gp_bootstrap import stages  # noqa: E402
from explorer.views.gp_bootstrap.state import MC_GRID, THEORY_GRID, GPBootstrapState  # noqa: E402

TIMEOUT = 180

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def finished(**params) -> GPBootstrapState:
    state = GPBootstrapState(dataset="teacher", auto_mc=True, curve_mc_samples=20, mc_samples=50, **params)
    state.refresh()
    assert state.wait(TIMEOUT) and state.error == "", state.error
    return state


def test_the_learning_curve_is_the_core_stages():
    state = finished(tab="curve")
    p = state.problem
    theory = stages.theory_curve(p, stages.replica_curve(p, THEORY_GRID), vg_mf=stages.vg_mf_curve(p, THEORY_GRID))
    for name in ("s_over_n", "theory", "theory_approx", "theory_vg", "theory_mf", "expected_test_points"):
        np.testing.assert_array_equal(getattr(state.theory_curve, name), getattr(theory, name), err_msg=name)
    assert state.curve_mc == stages.mc_curve(p, MC_GRID, 20, rng=state.seed)


def test_the_holdout_theory_is_the_core_stage():
    state = finished(tab="holdout", holdout=10, s_over_n=1.5)
    expected = stages.holdout_theory(state.problems.get(10)[1], 1.5)
    np.testing.assert_array_equal(state.holdout_theory.mean, expected.mean)
    np.testing.assert_array_equal(state.holdout_theory.var, expected.var)
    assert state.holdout_theory.n_train == expected.n_train == 54
