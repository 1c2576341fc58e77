"""The Monte-Carlo bootstrap written once against a kernel operator (explorer.gp_bootstrap.montecarlo).

Independent computations of the same refits: a dense K = ΦΦᵀ (:class:`DenseKernel`: Cholesky factors of the #a × #a
active-set systems K[a, a] + σ² diag(1/s_a)) and the features Φ themselves (:class:`FeatureKernel`: the m×m systems
I_m + Φᵀ diag(s/σ²) Φ), given as ``given_features(Φ)``. They share no linear algebra, so their agreement checks
both. Tolerance: each is a backward-stable solve of a system of condition number ≲ 1 + s_max λ_max(ΦᵀΦ)/σ² ≲ 1e6
here, so predictors agree to ≲ 1e-10 relative to the largest; asserted 1e-8.
"""
import numpy as np
import pytest

from explorer.gp_bootstrap.montecarlo import (
    bootstrap_learning_curve,
    bootstrap_predictions,
    refit_on_duplicates,
    resample_predictions,
)
from explorer.lowrank import given_features
from explorer.operators import UnsupportedOperation
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

NOISE = 0.05
RTOL = 1e-8


@pytest.fixture
def model():
    """Φ (120 × 15), K = ΦΦᵀ symmetrised, test features (6 × 15) with K_test = Φ_test Φᵀ, and targets."""
    rng = np.random.default_rng(7)
    phi, phi_test = rng.normal(size=(120, 15)) / 4, rng.normal(size=(6, 15)) / 4
    K = phi @ phi.T
    y = phi @ rng.normal(size=15) + 0.2 * rng.normal(size=120)
    return phi, phi_test, 0.5 * (K + K.T), phi_test @ phi.T, y


def assert_close(actual, desired):
    np.testing.assert_allclose(actual, desired, rtol=0, atol=RTOL * np.abs(desired).max())


@pytest.mark.parametrize("S", [12.0, 120.0, 600.0])
def test_dense_and_feature_operators_give_the_same_refits(model, S):
    """Same seed → same occupations; the two operators' predictors agree at the training and the test inputs,
    whether the features come as an operator or as ``LowRankFeatures``."""
    phi, phi_test, K, K_test, y = model
    dense = bootstrap_predictions(DenseKernel.of(K), y, NOISE, S, 30, K_test=K_test, rng=4, chunk_size=8)
    for features in (FeatureKernel.of(phi), given_features(phi)):
        low = bootstrap_predictions(features, y, NOISE, S, 30, K_test=phi_test, rng=4, chunk_size=8)
        np.testing.assert_array_equal(low.occupations, dense.occupations)
        assert_close(low.train, dense.train)
        assert_close(low.test, dense.test)


def test_an_operator_gives_the_numbers_of_its_matrix(model):
    """A DenseKernel and the array it holds are the same input: bit for bit."""
    _, _, K, K_test, y = model
    occ = np.random.default_rng(1).poisson(1.0, size=(5, K.shape[0]))
    a = resample_predictions(DenseKernel.of(K), y, NOISE, occ, K_test=K_test)
    b = resample_predictions(K, y, NOISE, occ, K_test=K_test)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("loss", ["square", "eps-insensitive"])
def test_stacked_and_streamed_learning_curves_agree(model, loss):
    """The dense operator keeps every sample's predictions ("stacked"), the features stream the left-out losses
    ("streamed"): two reductions of eq. (17) on two computations of the refits give the same ε(S) and SE."""
    phi, _, K, _, y = model
    assert DenseKernel.of(K).refit_reduction == "stacked" and FeatureKernel.of(phi).refit_reduction == "streamed"
    S_values = [30, 120, 360]
    dense = bootstrap_learning_curve(K, y, NOISE, S_values, 25, loss=loss, rng=9, chunk_size=6)
    low = bootstrap_learning_curve(given_features(phi), y, NOISE, S_values, 25, loss=loss, rng=9, chunk_size=6)
    assert_close(low.value, dense.value)
    assert_close(low.se, dense.se)
    for a, b in zip(low.errors, dense.errors):
        np.testing.assert_array_equal(a.n_test, b.n_test)


def test_feature_refits_equal_the_literal_refit_on_duplicated_points(model):
    """The m-dimensional posterior weights give the GP refitted on the duplicated data set of [MO03] sec. 5."""
    phi, _, K, _, y = model
    occ = np.random.default_rng(3).poisson(1.5, size=(3, K.shape[0]))
    train, _ = resample_predictions(FeatureKernel.of(phi), y, NOISE, occ)
    assert_close(train, refit_on_duplicates(K, y, NOISE, occ))


def test_the_literal_refit_needs_the_dense_matrix(model):
    phi, _, _, _, y = model
    with pytest.raises(UnsupportedOperation, match="The literal refit on duplicated points needs duplicated_refits"):
        refit_on_duplicates(FeatureKernel.of(phi), y, NOISE, np.ones(phi.shape[0], dtype=int))


def test_test_inputs_are_checked_in_the_operators_terms(model):
    phi, phi_test, K, K_test, y = model
    with pytest.raises(ValueError, match=r"`K_test` must have shape \(M, 120\)"):
        bootstrap_predictions(DenseKernel.of(K), y, NOISE, 120, 2, K_test=phi_test)
    with pytest.raises(ValueError, match=r"`phi_test` must have shape \(M, 15\)"):
        bootstrap_predictions(FeatureKernel.of(phi), y, NOISE, 120, 2, K_test=K_test)
    with pytest.raises(ValueError, match=r"`y` must have shape \(120,\) to match `phi` of shape \(120, 15\)"):
        bootstrap_predictions(given_features(phi), y[:5], NOISE, 120, 2)
