"""Mean-field replica approximation (docs/derivations/vg_mf.md §2): the literal equations with explicit K⁻¹, uniqueness, limits."""
import numpy as np
import pytest
from scipy import stats

from explorer.bootstrap import replica as R
from explorer.gp_bootstrap import mean_field as MF

from .exact_bootstrap import correlated_problem, exact_bootstrap

NOISE = 0.01


def literal_coefficients(J, v, s2):
    """a_i = Σ_k p_k/(J_ii + k/σ²), b_i = y-free part Σ_k p_k (k/σ²)/(J_ii + k/σ²), with 200 terms of the series."""
    k = np.arange(200)
    p = stats.poisson.pmf(k, v)
    A = np.diag(J)[:, None] + k / s2
    return (p / A).sum(axis=1), (p * k / s2 / A).sum(axis=1)


@pytest.mark.parametrize("s_over_n", [0.25, 1.0, 4.0])
def test_solution_solves_the_literal_system(rng, s_over_n):
    """(I + diag(a)(J − D_J)) m = b and θ = −(J − D_J) m, with J = K⁻¹ formed densely (independent of the code)."""
    K, y = correlated_problem(rng, 30, 1.0)
    K += 1e-3 * np.eye(30)  # keeps the dense inverse accurate (condition number ~1e4)
    sol = MF.solve_mean_field(K, y, NOISE, s_over_n * 30)
    J = np.linalg.inv(K)
    a, c = literal_coefficients(J, s_over_n, NOISE)
    b = y * c
    off = J - np.diag(np.diag(J))
    np.testing.assert_allclose(sol.J_diag, np.diag(J), rtol=1e-10)
    np.testing.assert_allclose(sol.a, a, rtol=1e-12)
    np.testing.assert_allclose(sol.b, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sol.m + a * (off @ sol.m), b, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(sol.theta, -off @ sol.m, rtol=1e-7, atol=1e-7 * np.abs(sol.theta).max())
    # the mixture's mean: m_i = Σ_k p_k μ_ik, μ_ik = (θ_i + k y_i/σ²)/(J_ii + k/σ²)
    k = np.arange(200)
    mu = (sol.theta[:, None] + k * y[:, None] / NOISE) / (np.diag(J)[:, None] + k / NOISE)
    np.testing.assert_allclose(mu @ stats.poisson.pmf(k, s_over_n), sol.m, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("s_over_n", [0.05, 1.0, 10.0])
def test_system_matrix_is_nonsingular_and_free_energy_convex(rng, s_over_n):
    """diag(1/a)(I + diag(a)(J − D_J)) = J + diag(1/a − J_ii) is positive definite (1/a_i > J_ii), and it is
    the Hessian of F₁(m) = ½ mᵀ(J − D_J)m + Σ (m_i − b_i)²/(2a_i), which is stationary at MF's m."""
    K, y = correlated_problem(rng, 12, 4.0)
    K += 1e-4 * np.eye(12)
    sol = MF.solve_mean_field(K, y, NOISE, s_over_n * 12)
    J = np.linalg.inv(K)
    off = J - np.diag(np.diag(J))
    A = np.eye(12) + sol.a[:, None] * off
    assert np.all(1 / sol.a > np.diag(J))
    sym = A / sol.a[:, None]
    np.testing.assert_allclose(sym, sym.T, rtol=1e-12, atol=1e-12 * np.abs(sym).max())
    assert np.linalg.eigvalsh((sym + sym.T) / 2).min() > 0
    eig = np.linalg.eigvals(A)
    assert np.all(eig.real > 0) and np.max(np.abs(eig.imag)) < 1e-8 * np.abs(eig).max()

    def F1(m):
        return 0.5 * m @ off @ m + np.sum((m - sol.b) ** 2 / (2 * sol.a))

    eps = 1e-6 * np.abs(sol.m).max()
    for direction in rng.normal(size=(10, 12)):
        at = (F1(sol.m + eps * direction) - F1(sol.m - eps * direction)) / (2 * eps)
        curvature = (F1(sol.m + eps * direction) - 2 * F1(sol.m) + F1(sol.m - eps * direction)) / eps**2
        assert abs(at) < 1e-6 * max(1.0, abs(direction @ sym @ direction))
        assert curvature == pytest.approx(direction @ sym @ direction, rel=1e-3)


def test_error_is_prior_conditional_mean(rng):
    """ε_i = (E[f_i | f_j = m_j, j ≠ i] − y_i)² with the conditional mean by Gaussian conditioning on K."""
    K, y = correlated_problem(rng, 15, 1.0)
    K += 1e-3 * np.eye(15)
    sol = MF.solve_mean_field(K, y, NOISE, 15.0)
    cond = np.empty(15)
    for i in range(15):
        rest = np.delete(np.arange(15), i)
        cond[i] = K[i, rest] @ np.linalg.solve(K[np.ix_(rest, rest)], sol.m[rest])
    np.testing.assert_allclose(sol.cavity_mean, cond, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(MF.mf_per_input_error(sol), (cond - y) ** 2, rtol=1e-6, atol=1e-12)
    assert R.bootstrap_test_error(sol) == pytest.approx(MF.mf_test_error(sol), rel=1e-14)  # eq. (45), λ_c = 0


@pytest.mark.parametrize("s_over_n", [0.3, 1.0, 2.5])
def test_kernel_multiple_of_identity_is_exact(rng, s_over_n):
    """K = cI: MF's m, second moment and ε equal the exact bootstrap averages (exact enumeration, N = 3)."""
    c = 1.3
    K, y = c * np.eye(3), rng.normal(size=3)
    exact = exact_bootstrap(K, y, NOISE, s_over_n, tail=1e-12)
    sol = MF.solve_mean_field(K, y, NOISE, 3 * s_over_n)
    np.testing.assert_allclose(sol.m, exact.mean, rtol=1e-9)
    np.testing.assert_allclose(sol.second_moment(), exact.second_moment, rtol=1e-9)
    assert MF.mf_test_error(sol) == pytest.approx(exact.error, rel=1e-10)


def test_underestimates_on_correlated_inputs(rng):
    """No Onsager term and no variance term: ε_MF is below the exact ε (docs/derivations/vg_mf.md §2), by a lot here."""
    K, y = correlated_problem(rng, 5, 1.0)
    for v in (0.5, 1.0):
        assert MF.mf_test_error(MF.solve_mean_field(K, y, NOISE, 5 * v)) < 0.9 * exact_bootstrap(K, y, NOISE, v).error


def test_learning_curve_equals_single_solves(rng):
    K, y = correlated_problem(rng, 20, 1.0)
    S_values = [40.0, 5.0, 20.0]
    curve = MF.mf_learning_curve(K, y, NOISE, S_values)
    assert [s.S for s in curve] == S_values
    for S, sol in zip(S_values, curve):
        np.testing.assert_array_equal(sol.m, MF.solve_mean_field(K, y, NOISE, S).m)


def test_jitter_for_a_singular_kernel(rng):
    """A rank-deficient K (duplicated input) is factorised with the smallest jitter of the ladder, reported."""
    K, y = correlated_problem(rng, 6, 1.0)
    K = np.block([[K, K[:, :1]], [K[:1, :], K[:1, :1]]])  # input 0 twice
    sol = MF.solve_mean_field(K, np.append(y, y[0]), NOISE, 7.0)
    assert sol.jitter > 0 and np.all(np.isfinite(sol.m)) and np.all(sol.J_diag > 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"S": 0.0}, "`S` must be positive, got 0.0"),
        ({"noise_var": -1.0}, "`noise_var` must be a positive finite number, got -1.0"),
        ({"y": np.zeros(4)}, r"`y` must have shape \(10,\)"),
        ({"K": np.ones((3, 4))}, "`K` must be a square kernel matrix"),
        ({"K": np.full((10, 10), np.inf)}, "must be finite"),
    ],
)
def test_validation_messages(solver_args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MF.solve_mean_field(**(solver_args | kwargs))


def test_validation_of_grid_and_indefinite_kernel(rng):
    K, y = correlated_problem(rng, 10, 1.0)
    with pytest.raises(ValueError, match="`S_values` must be a non-empty 1-D sequence"):
        MF.mf_learning_curve(K, y, NOISE, [])
    with pytest.raises(ValueError, match="`S` must be positive, got -2.0"):
        MF.mf_learning_curve(K, y, NOISE, [10.0, -2.0])
    with pytest.raises(R.IndefiniteKernelError, match="not positive definite, even with a jitter"):
        MF.solve_mean_field(K - 2 * np.eye(10), y, NOISE, 10.0)
