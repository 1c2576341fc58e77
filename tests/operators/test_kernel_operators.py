"""The two kernel operators answer the questions of the replica equations alike on one matrix K = ΦΦᵀ (the dense one by
Cholesky factors of N×N matrices, the feature one by m×m factors: independent algebra), and a capability one does not
offer is a clear error, not a switch."""
import numpy as np
import pytest

from explorer.gp_bootstrap import mean_field, variational
from explorer.operators import KernelOperator, SitePosterior, UnsupportedOperation, as_operator, offers
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

RNG = np.random.default_rng(5)
PHI = RNG.normal(size=(60, 12))
K = PHI @ PHI.T + 0.5 * np.eye(60)  # full rank: the dense cavity is representable, so both are accurate
PHI_FULL = np.linalg.cholesky(K)  # K = ΦΦᵀ exactly (to round-off) with N features
DL = RNG.uniform(0.5, 2.0, size=60)


@pytest.fixture(params=["dense", "features"])
def operator(request):
    return DenseKernel.of(K) if request.param == "dense" else FeatureKernel.of(PHI_FULL)


def test_both_implementations_follow_the_protocol(operator):
    assert isinstance(operator, KernelOperator) and operator.n == 60
    assert isinstance(operator.site_posterior(DL), SitePosterior)
    assert operator.closing in ("literal", "fixed-point")


def test_diag_G_and_G_v_agree_with_the_definition(operator):
    G = np.linalg.inv(np.linalg.inv(K) + np.diag(DL))  # eq. (36) literally
    v = RNG.normal(size=60)
    # cond(K) ≈ 1.5e3: the literal double inverse is good to ~cond²·ε ≈ 5e-10, whatever the BLAS; 1e-7 leaves room
    np.testing.assert_allclose(operator.site_variances(DL), np.diag(G), rtol=1e-7)
    post = operator.site_posterior(DL)
    np.testing.assert_allclose(post.diagonal(), np.diag(G), rtol=1e-7)
    np.testing.assert_allclose(post.matvec(v), G @ v, rtol=1e-7, atol=1e-9)


def test_the_eq57_system_is_solved(operator):
    G = np.linalg.inv(np.linalg.inv(K) + np.diag(DL))
    d = np.diag(G) ** 2 + 1.0  # diag(d) − G∘G positive definite
    r = RNG.uniform(size=60)
    lam, failure = operator.site_posterior(DL).solve_hadamard(d, d - np.diag(G) ** 2, r)
    assert failure == ""
    np.testing.assert_allclose((G * G - np.diag(d)) @ lam, r, rtol=1e-7, atol=1e-8)  # CG to 1e-10 of ‖r‖


def test_single_precision_is_close_and_the_spectrum_is_that_of_K(operator):
    single = operator.in_precision(np.float32).site_variances(DL)
    np.testing.assert_allclose(single, operator.site_variances(DL), rtol=1e-4)
    omega, P = operator.spectrum(None, 0)
    assert P == 1.0
    np.testing.assert_allclose(np.sort(omega)[-12:], np.linalg.eigvalsh(K)[-12:], rtol=1e-9)


def test_a_capability_the_features_lack_is_one_clear_error():
    features = as_operator(FeatureKernel.of(PHI))
    assert offers(DenseKernel.of(K), "dense_matrix") and not offers(features, "dense_matrix")
    y = PHI[:, 0]
    with pytest.raises(UnsupportedOperation, match="variational-Gaussian approximation needs dense_matrix"):
        variational.solve_variational(features, y, 0.1, 60.0)
    with pytest.raises(UnsupportedOperation, match="mean-field approximation needs dense_matrix"):
        mean_field.mf_learning_curve(features, y, 0.1, [60.0])


def test_an_operator_on_the_dense_matrix_gives_vg_what_the_array_gives():
    y = PHI[:, 0]
    a = variational.solve_variational(K, y, 0.1, 60.0)
    b = variational.solve_variational(DenseKernel.of(K), y, 0.1, 60.0)
    np.testing.assert_array_equal(a.dl_c, b.dl_c)
