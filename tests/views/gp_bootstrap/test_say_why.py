"""The GP state says why: standardisation as the CLI's, a data-driven start on a kernel switch, the held-out
warning, and no stale status after a broken upload (one ``match`` per new message)."""

import json

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer import cli, datasets, kernels  # noqa: E402
from explorer.views.gp_bootstrap.state import UPLOAD, GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import LearningCurveTab  # noqa: E402

pytestmark = pytest.mark.usefixtures("empty_view_caches")
TIMEOUT = 180


def _csv(rows: int) -> bytes:
    return ("a,b,y\n" + "".join(f"{i},{(i * 3) % 7},{(i * 5) % 11}.5\n" for i in range(rows))).encode()


def test_standardise_equals_the_cli_with_standardize(capsys):
    """ε(S = N) of the theory on boston, se kernel, standardised: `explorer learning-curve --standardize` and the
    state build the same problem (datasets.standardization) and solve it alike (tolerance as in
    tests/cli/test_cli_matches_app.py: rel 1e-5 from ADATAP's tol 1e-3)."""
    assert cli.main(["learning-curve", "--dataset", "boston", "--standardize", "--kernel", "se", "--lengthscale", "3",
                     "--signal-var", "1", "--noise-var", "0.1", "--s-over-n", "1", "--mc-samples", "2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    state = GPBootstrapState(dataset="boston", standardize=True, kernel="se", lengthscale=3.0, signal_var=1.0,
                             noise_var=0.1, s_over_n=1.0, auto_mc=False, tab="distribution")
    state.refresh()  # the ADATAP solution at S/N is computed in the refresh itself (no learning-curve job)
    assert state.error == "" and state.solution is not None
    expected = datasets.load("boston").standardized(targets=True)
    np.testing.assert_allclose(state.problem.y, expected.targets)
    assert payload["rows"][0]["theory"] == pytest.approx(state.current_theory_error, rel=1e-5)


def test_a_kernel_switch_starts_from_the_data_and_says_so():
    state = GPBootstrapState(dataset="boston", auto_mc=False)
    state.kernel = "se"
    data = datasets.load("boston")
    start = kernels.data_driven_hyperparameters(data.inputs, data.targets)
    assert state.lengthscale == pytest.approx(start.lengthscale, rel=1e-5)
    assert state.signal_var == pytest.approx(start.signal_var, rel=1e-5)
    assert state.notice.startswith("Kernel se: started from the data's scale, lengthscale ℓ = ")
    state.kernel = "paper"  # the cause goes away: so does the notice
    assert state.notice == ""


def test_held_out_rows_of_half_the_data_warn():
    state = GPBootstrapState(auto_mc=False, tab="holdout")
    state.upload_csv("sixty.csv", _csv(60))
    assert state.wait(60)  # the hyperparameters of largest evidence first
    assert state.dataset == UPLOAD and state.error == ""
    warning = ("Held-out rows: 50 of the 60 rows of sixty are held out, so the bootstrap trains on "
               "N = 10 only. Lower 'Held-out rows' below 30 to train on the larger part.")
    assert warning in state.notice
    state.holdout = 20
    assert warning not in state.notice and state.error == ""


def test_no_stale_status_after_a_broken_csv_and_an_empty_file_has_its_own_error():
    state = GPBootstrapState(dataset="teacher", auto_mc=False)
    tab = LearningCurveTab(state=state)
    state.refresh()
    state.upload_csv("sixty.csv", b"a,b,y\n" + b"".join(b"x,1,2\n" for _ in range(12)))
    assert "not numeric" in state.error
    assert "computing" not in tab.describe() and tab.describe().endswith("not computed: see the message over the figure")
    state.upload_csv("empty.csv", b"")
    assert state.error != "" and "not numeric" not in state.error
