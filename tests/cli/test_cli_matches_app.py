"""The CLI and the app give the same numbers for the same settings: both build their problem with the core
(``selection_problem`` / ``regression_problem``) and run the same computations, ``--standardize`` included.

The app's states are driven without a server (as in tests/views/**) and their background jobs awaited.
"""
import json

import pytest

pytest.importorskip("panel")

from explorer import cli  # noqa: E402
from explorer.model_selection.criterion import CRITERIA  # noqa: E402
from explorer.views.gp_bootstrap import state as gp_views  # noqa: E402
from explorer.views.model_selection import state as selection_views  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

TIMEOUT = 120


def _cli_json(capsys, *argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("standardize", [True, False])
def test_select_equals_the_model_selection_tab(capsys, standardize):
    """`explorer select --dataset teacher` and the tab on the same 64 teacher draws (n_test = 0): the same
    problem, the same optimiser and generator order, so the same optima up to rounding (rel 1e-9)."""
    criteria = [c for c in CRITERIA if c in ("evidence", "loo", "kfold", "asc-beta-noise")]  # the tab's order
    seed, restarts, max_iter, folds, partitions, objects = 3, 2, 8, 5, 4, 4
    payload = _cli_json(capsys, "select", "--dataset", "teacher", "--kernel", "se", "--criteria", ",".join(criteria),
                        "--seed", str(seed), "--restarts", str(restarts), "--max-iter", str(max_iter), "--folds",
                        str(folds), "--partitions", str(partitions), "--objects", str(objects),
                        *(["--standardize"] if standardize else []))
    state = selection_views.SelectionState(
        dataset="teacher", n_points=64, n_test=0, standardize=standardize, kernel="se", criteria=criteria,
        n_restarts=restarts, max_iter=max_iter, n_folds=folds, n_partitions=partitions, n_objects=objects,
        seed=seed, rank_kernels=["se"], curve_points=3)
    state.refresh()
    assert state.wait(timeout=TIMEOUT) and state.error == ""
    assert payload["data"]["standardized"] is standardize and payload["data"]["n"] == state.problem.n == 64
    assert [r.criterion for r in state.optima.results] == list(payload["criteria"]) == criteria
    for result in state.optima.results:
        cli_result = payload["criteria"][result.criterion]
        assert cli_result["value"] == pytest.approx(result.value, rel=1e-9)
        for name, value in result.hyperparameters.items():
            assert cli_result["hyperparameters"][name] == pytest.approx(value, rel=1e-9), (result.criterion, name)


def test_select_standardize_scales_with_the_sample_sd(capsys):
    """The standardised teacher rows have sample sd 1 in the tab as in the CLI (the tab used ddof = 0 before)."""
    state = selection_views.SelectionState(dataset="teacher", n_points=64, n_test=0, standardize=True,
                                           criteria=["evidence"], rank_kernels=["se"], curve_points=3, n_restarts=1)
    state.refresh()
    assert state.wait(timeout=TIMEOUT) and state.error == ""
    assert state.problem.y.std(ddof=1) == pytest.approx(1.0, rel=1e-12)
    assert state.problem.X.std(axis=0, ddof=1) == pytest.approx([1.0], rel=1e-12)


@pytest.mark.parametrize("kernel_args, kernel_params", [
    ([], {"kernel": "paper"}),
    (["--kernel", "se", "--lengthscale", "4", "--signal-var", "50", "--noise-var", "5"],
     {"kernel": "se", "lengthscale": 4.0, "signal_var": 50.0, "noise_var": 5.0}),
])
def test_learning_curve_theory_equals_the_explorer_state(capsys, kernel_args, kernel_params):
    """ε(S = N) of the theory on boston from `explorer learning-curve` and from the app's state. Both solve
    ADATAP with the paper's tolerance 1e-3 on the same problem (the CLI warm-starts nothing for a single S,
    the app solves cold); the help of --tol says this gives ε to about 1e-6 relative, so rel 1e-5."""
    payload = _cli_json(capsys, "learning-curve", "--dataset", "boston", "--s-over-n", "1", "--mc-samples", "2",
                        *kernel_args)
    state = gp_views.GPBootstrapState(dataset="boston", s_over_n=1.0, auto_mc=False, **kernel_params)
    state.refresh()
    assert state.wait(TIMEOUT) and state.error == ""
    assert payload["n"] == state.solution.n == 506
    assert payload["rows"][0]["theory"] == pytest.approx(state.current_theory_error, rel=1e-5)
