"""ARD in the app (issue 36, item 6): for a CSV with the se kernel, "One lengthscale per input (ARD)" chooses ℓ_j per
input column by maximum evidence; the theory's kernel uses them and the note lists them, the input that matters
first."""

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.gp_bootstrap import evidence as gp_evidence  # noqa: E402
from explorer.views.gp_bootstrap.state import GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import GPControls  # noqa: E402

TIMEOUT = 180
pytestmark = pytest.mark.usefixtures("empty_view_caches")


def _relevant_first(n: int = 60, seed: int = 0) -> tuple[str, np.ndarray, np.ndarray]:
    """CSV text of y = sin(2 x0) + noise with two inputs it does not depend on (x1, x2); and X, y as the CSV has them."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 3)), 6)
    y = np.round(np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=n), 6)
    rows = [",".join(f"{v:.6f}" for v in (*x, t)) for x, t in zip(X, y)]
    return "x0,x1,x2,y\n" + "\n".join(rows) + "\n", X, y


def test_ard_fits_one_lengthscale_per_input_and_the_theory_uses_them():
    text, X, y = _relevant_first()
    state = GPBootstrapState(auto_mc=False, tab="distribution")
    state.upload_csv("relevance.csv", text.encode())
    assert state.wait(TIMEOUT) and state.ard_lengthscales is None  # one lengthscale until ARD is ticked
    state.ard = True
    assert state.wait(TIMEOUT) and state.error == "" and state.hyperparameter_source == "evidence"
    fit = gp_evidence.maximum_evidence(X, y, ard=True)  # the core, called directly on the same 60 rows
    ells = state.ard_lengthscales
    assert ells.shape == (3,) and ells == pytest.approx(fit.lengthscale, rel=1e-6)
    assert ells[0] < ells[1] and ells[0] < ells[2]  # the target follows x0 only
    # the problem's K is the ARD kernel, built here from its formula: σ_f² exp(−½ Σ_j (x_j − x'_j)²/ℓ_j²)
    Z = X / ells
    K = state.signal_var * np.exp(-0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    assert state.problem.K == pytest.approx(K, rel=1e-5, abs=1e-9)  # σ_f² kept to 6 digits by the control
    assert "Kernel se, one ℓ_j per input (ARD), σ_f² = " in state.notice
    assert "ℓ_j per input, shortest first: x0 " in state.notice  # the input that matters first
    assert state.solution is not None and state.problem.n == 60
    state.ard = False  # back to one lengthscale: the plain evidence maximum again
    assert state.wait(TIMEOUT) and state.ard_lengthscales is None
    assert np.ndim(state.problem.kernel.params["lengthscale"]) == 0 and "ARD" not in state.notice


def test_the_ard_box_shows_for_csv_data_with_the_se_kernel_and_replaces_the_lengthscale_field():
    state = GPBootstrapState(dataset="toy", auto_mc=False)
    widgets = GPControls(state=state).widgets
    assert not widgets["ard"].visible  # toy: no CSV
    text, _, _ = _relevant_first(20)
    state.upload_csv("relevance.csv", text.encode())
    assert state.wait(TIMEOUT) and state.kernel == "se"
    assert widgets["ard"].visible and widgets["lengthscale"].visible
    state.ard = True
    assert widgets["ard"].visible and not widgets["lengthscale"].visible
    state.kernel = "rq"
    assert not widgets["ard"].visible and widgets["lengthscale"].visible and widgets["alpha"].visible
