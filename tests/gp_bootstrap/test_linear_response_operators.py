"""The linear response written once against a kernel operator: the dense and the feature implementations of
``explorer.operators.responses`` agree on the same matrix K = ΦΦᵀ.

Φ is ``given_features`` of a 200 × 40 Nyström-like matrix (well-conditioned K + τI), K = ΦΦᵀ formed densely. The
dense side factorises K + τI (Cholesky), the feature side τI + ΦᵀΦ (Woodbury) and never forms an N×N matrix: two
independent computations of B = (K + τI)⁻¹. Both are backward-stable solves with cond(K + τI) ≤ 1 + ‖Φ‖²/τ ≈ 1e5 here,
so they agree to ~1e-11 relative; the tests assert 1e-8 relative to the largest entry.
"""
import numpy as np
import pytest

from explorer.gp_bootstrap import linear_response as lr
from explorer.lowrank import given_features
from explorer.operators import as_operator, responses
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

NOISE = 0.05
RTOL = 1e-8


def assert_close(actual, desired, rtol=RTOL):
    np.testing.assert_allclose(actual, desired, rtol=0, atol=rtol * np.nanmax(np.abs(desired)))


@pytest.fixture(scope="module")
def pair():
    """(dense operator on ΦΦᵀ, feature operator on Φ, y, K_test, φ_test): N = 200, m = 40, M = 7."""
    rng = np.random.default_rng(11)
    phi = rng.normal(size=(207, 40)) / np.sqrt(40)
    y = phi[:200] @ rng.normal(size=40) + 0.1 * rng.normal(size=200)
    features = given_features(phi[:200])
    K = features.phi @ features.phi.T
    return (DenseKernel.of(0.5 * (K + K.T)), as_operator(features), y, phi[200:] @ features.phi.T, phi[200:])


def test_as_operator_makes_the_two_implementations(pair):
    dense, features, *_ = pair
    assert isinstance(dense, DenseKernel) and isinstance(features, FeatureKernel)


@pytest.mark.parametrize("s_over_n", [0.3, 1.0, 5.0])
def test_the_expansion_points_agree(pair, s_over_n):
    dense, features, y, K_test, phi_test = pair
    nu = s_over_n
    tau, c = NOISE / nu, NOISE / nu**2
    a, b = dense.expansion_point(y, tau, c), features.expansion_point(y, tau, c)
    assert_close(b.alpha, a.alpha)
    assert_close(b.diagonal(), a.diagonal())
    (u_a, mean_a), (u_b, mean_b) = a.test_response(K_test), b.test_response(phi_test)
    assert_close(u_b, u_a)
    assert_close(mean_b, mean_a)
    assert_close(b.second_order_shift(u_b), a.second_order_shift(u_a))
    drawn = np.array([0, 3, 50, 199])
    diag_a, sq_a, sh_a = a.left_out_sums(drawn)
    diag_b, sq_b, sh_b = b.left_out_sums(drawn)
    assert_close(diag_b, diag_a)
    assert_close(sq_b, sq_a)
    assert_close(sh_b, sh_a)


@pytest.mark.parametrize("s_over_n", [0.3, 1.0, 5.0])
def test_the_theory_agrees_on_both_operators(pair, s_over_n):
    dense, features, y, K_test, phi_test = pair
    S = s_over_n * y.size
    for a, b in ((lr.loo_limit(dense, y, NOISE, S), lr.loo_limit(features, y, NOISE, S)),
                 (lr.loo_limit(dense, y, NOISE, S, loss="eps-insensitive"),
                  lr.loo_limit(features, y, NOISE, S, loss="eps-insensitive")),
                 (lr.linear_response_moments(dense, y, NOISE, S, K_test),
                  lr.linear_response_moments(features, y, NOISE, S, phi_test)),
                 (lr.linear_response_error(dense, y, NOISE, S), lr.linear_response_error(features, y, NOISE, S)),
                 (lr.linear_response_error(dense, y, NOISE, S, inputs=60, rng=3),
                  lr.linear_response_error(features, y, NOISE, S, inputs=60, rng=3))):
        for name, value in vars(a).items():
            assert_close(getattr(b, name), value)


def test_drawn_inputs_give_the_exact_per_input_terms_on_both_operators(pair):
    """With ``inputs`` < N, v_i and b_i at the drawn inputs are those of the exact computation, NaN elsewhere."""
    dense, features, y, *_ = pair
    for op in (dense, features):
        exact = lr.linear_response_error(op, y, NOISE, 100.0)
        part = lr.linear_response_error(op, y, NOISE, 100.0, inputs=50, rng=1)
        drawn = np.flatnonzero(~np.isnan(part.variance))
        assert drawn.size == 50 and np.array_equal(drawn, np.flatnonzero(~np.isnan(part.bias)))
        assert_close(part.variance[drawn], exact.variance[drawn], rtol=1e-12)
        assert_close(part.bias[drawn], exact.bias[drawn], rtol=1e-12)
        assert part.loo_limit == pytest.approx(exact.loo_limit, rel=1e-14)


def test_auto_inputs_sample_only_large_feature_problems(pair, monkeypatch):
    """``inputs="auto"``: all inputs for a dense K, and for features up to IJ_EXACT_ROWS rows; IJ_INPUTS above."""
    dense, features, y, *_ = pair
    assert dense.default_left_out_inputs is None and features.default_left_out_inputs is None
    exact = lr.linear_response_error(features, y, NOISE, 100.0)
    assert lr.linear_response_error(features, y, NOISE, 100.0, inputs="auto").value == exact.value
    monkeypatch.setattr(responses, "IJ_EXACT_ROWS", 150)
    monkeypatch.setattr(responses, "IJ_INPUTS", 80)
    assert features.default_left_out_inputs == 80 and dense.default_left_out_inputs is None
    part = lr.linear_response_error(features, y, NOISE, 100.0, inputs="auto", rng=0)
    assert np.isnan(part.variance).sum() == y.size - 80 and part.value != exact.value
    assert not np.isnan(lr.linear_response_error(dense, y, NOISE, 100.0, inputs="auto").variance).any()
    with pytest.raises(ValueError, match="positive number of inputs"):
        lr.linear_response_error(dense, y, NOISE, 100.0, inputs="all")
