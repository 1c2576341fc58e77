"""Low-rank feature maps K ≈ ΦΦᵀ (explorer.lowrank): Nyström is exact at m = N up to its jitter, φ extends Φ to
new inputs, landmarks are a seeded sorted subset, random Fourier features are unbiased, bad input is refused."""
import numpy as np
import pytest

from explorer.kernels import Exponential, Matern32, Matern52, Periodic, RationalQuadratic, SquaredExponential
from explorer.lowrank import (
    MAX_RANK,
    given_features,
    low_rank_features,
    nystrom_features,
    random_fourier_features,
)

STATIONARY = [SquaredExponential(0.8, 1.7), Exponential(1.2, 0.6), Matern32(0.9, 1.3),
              Matern52(np.array([0.7, 1.4]), 2.0), RationalQuadratic(1.1, 0.8, 1.5)]


def inputs(rng, n=20, d=2):
    return rng.normal(size=(n, d))


# ------------------------------------------------------------------ Nyström


@pytest.mark.parametrize("kernel", STATIONARY, ids=lambda k: type(k).__name__)
def test_nystrom_with_every_row_a_landmark_reproduces_K_up_to_the_jitter(rng, kernel):
    """With L = all rows, K − ΦΦᵀ = K − K(K + jI)⁻¹K = jK(K + jI)⁻¹: eigenvalues ω j/(ω + j) in [0, j).

    So the deviation is positive semi-definite and no entry exceeds j (|A_ij| ≤ ‖A‖₂). Round-off: Φ = K C⁻ᵀ
    with κ(C)² = κ(K + jI) ≤ (N·max k + j)/j; at the relative jitter 1e-4 used here that is ≤ 1e6, so ΦΦᵀ carries
    errors ≲ 1e6·ε·‖K‖ ≈ 1e-9 (measured: ~1e-12), far below j = 1e-4·s.
    """
    X = inputs(rng)
    K = kernel(X)
    f = nystrom_features(kernel, X, X.shape[0], jitter=1e-4)
    j = f.jitter
    assert j == pytest.approx(1e-4 * np.mean(np.diag(K)), rel=1e-12)
    deviation = K - f.phi @ f.phi.T
    assert np.max(np.abs(deviation)) <= j * (1 + 1e-6)
    eigenvalues = np.linalg.eigvalsh(deviation)
    assert eigenvalues.min() > -1e-9 and eigenvalues.max() < j
    # the exact formula, an independent reference
    expected = j * K @ np.linalg.inv(K + j * np.eye(len(K)))
    np.testing.assert_allclose(deviation, expected, atol=1e-9 * j)


def test_nystrom_default_jitter_reproduces_K_at_full_rank(rng):
    """At the default relative jitter 1e-8 no entry of K − ΦΦᵀ exceeds j = 1e-8·s, plus round-off.

    Here κ(K + jI) ≈ 1e9 bounds the round-off of ΦΦᵀ by ~1e9·ε ≈ 1e-7 in theory; measured it is 2e-17, so twice j
    is a bound with room that still fails if the jitter were, say, ten times larger than reported.
    """
    kernel = SquaredExponential(0.5)
    X = inputs(rng, n=30)
    f = nystrom_features(kernel, X, 30)
    assert f.jitter == pytest.approx(1e-8)
    np.testing.assert_allclose(f.phi @ f.phi.T, kernel(X), rtol=0, atol=2 * f.jitter)


@pytest.mark.parametrize("kernel", STATIONARY[:3], ids=lambda k: type(k).__name__)
def test_nystrom_transform_of_training_rows_reproduces_phi(rng, kernel):
    X = inputs(rng, n=40)
    f = nystrom_features(kernel, X, 12, rng=3)
    np.testing.assert_allclose(f.transform(X), f.phi, rtol=1e-12, atol=1e-14)
    # and of new rows it gives the Nyström cross-kernel K_xL K_LL⁻¹ K_Ln (independent: a dense solve)
    X_new = inputs(rng, n=5)
    K_LL = kernel(X[f.landmarks]) + f.jitter * np.eye(12)
    cross = kernel(X_new, X[f.landmarks]) @ np.linalg.solve(K_LL, kernel(X[f.landmarks], X))
    np.testing.assert_allclose(f.transform(X_new) @ f.phi.T, cross, rtol=1e-8, atol=1e-10)


def test_nystrom_landmarks_are_sorted_distinct_and_seeded(rng):
    X = inputs(rng, n=200)
    kernel = SquaredExponential()
    a, b, c = (nystrom_features(kernel, X, 25, rng=seed) for seed in (7, 7, 8))
    for f in (a, c):
        assert f.landmarks.shape == (25,)
        assert np.all(np.diff(f.landmarks) > 0)  # sorted and distinct
        assert f.landmarks.min() >= 0 and f.landmarks.max() < 200
    np.testing.assert_array_equal(a.landmarks, b.landmarks)
    np.testing.assert_array_equal(a.phi, b.phi)
    assert not np.array_equal(a.landmarks, c.landmarks)
    # a Generator gives the draw of its seed
    d = nystrom_features(kernel, X, 25, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(d.landmarks, a.landmarks)
    assert a.as_dict() == {"method": "nystrom", "rank": 25, "landmarks": a.landmarks.tolist(), "jitter": a.jitter}


def test_nystrom_given_landmarks_are_used_and_sorted(rng):
    """Landmarks passed in any order give the sorted landmarks and the same ΦΦᵀ (ΦΦᵀ does not depend on their order)."""
    X = inputs(rng, n=30)
    kernel = Matern52(0.9)
    f = nystrom_features(kernel, X, 4, landmarks=[17, 3, 25, 8])
    np.testing.assert_array_equal(f.landmarks, [3, 8, 17, 25])
    g = nystrom_features(kernel, X, 4, landmarks=[3, 8, 17, 25])
    np.testing.assert_allclose(f.phi @ f.phi.T, g.phi @ g.phi.T, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ random Fourier features


@pytest.mark.parametrize("kernel", STATIONARY, ids=lambda k: type(k).__name__)
def test_random_fourier_features_are_unbiased(rng, kernel):
    """The mean of ΦΦᵀ over R seeds approaches K within its Monte-Carlo error, and the test has the power to fail.

    Entry (i, j) of one draw is (s/D) Σ_k cos(ω_kᵀδ), δ = x_i − x_j, with D = m/2 independent frequencies drawn
    from the normalised spectral density; E cos(ωᵀδ) = k̄(δ) = k(δ)/s (Bochner) and
    Var cos(ωᵀδ) = (1 + E cos(2ωᵀδ))/2 − k̄(δ)² = (1 + k̄(2δ))/2 − k̄(δ)². The mean over R seeds therefore has the
    standard deviation σ_ij = s √(((1 + k̄(2δ))/2 − k̄(δ)²)/(D R)), and z_ij = (mean − K_ij)/σ_ij is close to a
    standard normal (a mean of D R = 10·320 = 3,200 bounded terms). Over the 190 pairs, P(max |z| > 5) ≤ 190·5.7e-7 ≈ 1e-4.
    The spread of the R draws confirms σ_ij, and a 25 % error in the lengthscale moves the mean by more than 8σ, so
    the same statistic rejects it.
    """
    X = inputs(rng)
    m, R = 20, 320
    s = kernel.params["signal_var"]
    phis = [random_fourier_features(kernel, X, m, rng=seed).phi for seed in range(R)]
    mean = np.mean([phi @ phi.T for phi in phis], axis=0)
    K, K2 = kernel(X), kernel(2 * X)  # k̄(2δ) = k(2x_i, 2x_j)/s for a stationary kernel
    iu = np.triu_indices(len(X), 1)
    sd = s * np.sqrt(((1 + K2[iu] / s) / 2 - (K[iu] / s) ** 2) / (m // 2 * R))
    z = (mean[iu] - K[iu]) / sd
    assert np.max(np.abs(z)) < 5, np.max(np.abs(z))
    np.testing.assert_allclose(np.diag(mean), s, rtol=1e-12)  # cos 0 = 1: the diagonal is exact
    spread = np.std([phi @ phi.T for phi in phis], axis=0)[iu] / np.sqrt(R)  # the σ_ij formula, checked
    assert 0.9 < np.median(spread / sd) < 1.1
    wrong = type(kernel)(**{**kernel.params, "lengthscale": 1.25 * np.asarray(kernel.params["lengthscale"])})
    assert np.max(np.abs((mean[iu] - wrong(X)[iu]) / sd)) > 8


def test_random_fourier_transform_of_training_rows_reproduces_phi(rng):
    X = inputs(rng, n=30, d=3)
    f = random_fourier_features(RationalQuadratic(1.3, 2.0), X, 16, rng=4)
    assert f.phi.shape == (30, 16) and f.method == "rff"
    np.testing.assert_allclose(f.transform(X), f.phi, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(random_fourier_features(RationalQuadratic(1.3, 2.0), X, 16, rng=4).phi, f.phi)


# ------------------------------------------------------------------ given features and the dispatcher


def test_given_features_and_dispatch(rng):
    X = inputs(rng, n=10)
    K = SquaredExponential()(X) + 1e-6 * np.eye(10)
    f = given_features(np.linalg.cholesky(K))
    np.testing.assert_allclose(f.phi @ f.phi.T, K, rtol=1e-12, atol=1e-14)
    assert (f.n, f.rank, f.method) == (10, 10, "given")
    assert low_rank_features(SquaredExponential(), X, 4, method="rff", rng=1).method == "rff"
    assert low_rank_features(SquaredExponential(), X, 4, rng=1).method == "nystrom"


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("build, match", [
    (lambda X: nystrom_features(SquaredExponential(), X, 0), "positive integer"),
    (lambda X: nystrom_features(SquaredExponential(), X, 2.5), "positive integer"),
    (lambda X: nystrom_features(SquaredExponential(), X, True), "positive integer"),
    (lambda X: nystrom_features(SquaredExponential(), X, 21), r"above the number of training rows N = 20"),
    (lambda X: random_fourier_features(SquaredExponential(), X, 0), "positive integer"),
    (lambda X: random_fourier_features(SquaredExponential(), X, 21), "above the number of training rows"),
    (lambda X: random_fourier_features(SquaredExponential(), X, 7), "must be even, got 7"),
    (lambda X: random_fourier_features(Periodic(), X, 8), "stationary kernel with a known spectral density"),
    (lambda X: random_fourier_features(SquaredExponential() + Exponential(), X, 8), "known spectral density"),
    (lambda X: nystrom_features(SquaredExponential(), X, 3, landmarks=[1, 1, 2]), "distinct row indices"),
    (lambda X: nystrom_features(SquaredExponential(), X, 3, landmarks=[1, 2, 20]), "distinct row indices"),
    (lambda X: nystrom_features(SquaredExponential(), X, 3, landmarks=[0.0, 1.0]), "distinct row indices"),
    (lambda X: nystrom_features(SquaredExponential(), X, 3, jitter=-1.0), "`jitter` must be a non-negative"),
    (lambda X: nystrom_features(SquaredExponential(), X[:, 0], 3), "2-D array"),
    (lambda X: given_features(X[:, 0]), r"finite \(N, m\) matrix"),
    (lambda X: given_features(np.full((3, 2), np.nan)), r"finite \(N, m\) matrix"),
    (lambda X: given_features(X).transform(X), "given features have no map to new inputs"),
    (lambda X: low_rank_features(SquaredExponential(), X, 3, method="svd"), "Unknown feature method 'svd'"),
])
def test_bad_input_is_refused_with_a_clear_message(rng, build, match):
    with pytest.raises(ValueError, match=match):
        build(inputs(rng))


def test_rank_above_the_largest_is_refused():
    X = np.zeros((MAX_RANK + 1, 1))
    with pytest.raises(ValueError, match=f"above {MAX_RANK}"):
        nystrom_features(SquaredExponential(), X, MAX_RANK + 1)


def test_a_problem_says_what_its_features_are_and_a_dense_one_says_nothing():
    """The line above the model names Φ (method, rank, jitter) for a low-rank problem and is absent for a dense one;
    what needs the N×N matrix is asked of the operator."""
    from explorer.gp_bootstrap.problem import build_problem
    from explorer.kernels import paper_rbf

    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((60, 2)), rng.standard_normal(60)
    kernel = paper_rbf(X, l2=1.0)
    assert build_problem("toy", X, y, kernel, 0.1).kernel_note() is None
    nystrom = build_problem("toy", X, y, kernel, 0.1, rank=12, rng=0)
    assert nystrom.kernel_note("--seed") == (f"low-rank kernel K ≈ ΦΦᵀ: 12 Nyström landmarks drawn with --seed, jitter "
                                            f"{nystrom.features.jitter:.2g} on K_LL; VG and MF: dense path only")
    rff = build_problem("toy", X, y, kernel, 0.1, rank=12, method="rff", rng=0)
    assert rff.kernel_note().startswith("low-rank kernel K ≈ ΦΦᵀ: 12 random Fourier features;")
    assert nystrom.operator.refit_flops() == 60 * 12 ** 2
    assert build_problem("toy", X, y, kernel, 0.1).operator.refit_flops() == 60 ** 3 / 3
