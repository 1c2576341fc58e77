"""Replica/ADATAP theory ([MO03]): faithfulness to the paper's equations and to brute force."""
import numpy as np
import pytest
from scipy import stats

from explorer.bootstrap import replica as R

NOISE = 0.01


def rbf_problem(rng, n=60, d=3, l2=4.0):
    X = rng.normal(size=(n, d))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / l2)
    y = np.sin(X @ np.array([1.0, -0.5, 0.3])[:d]) + 0.1 * rng.normal(size=n)
    return X, K, y


@pytest.mark.parametrize("s_over_n", [0.25, 1.0, 3.0])
def test_converged_solution_satisfies_paper_equations(rng, s_over_n):
    """Eqs. (30)-(35) and (51)-(53) hold together to 1e-10 at a tight tolerance."""
    _, K, y = rbf_problem(rng)
    sol = R.solve_replica(K, y, NOISE, s_over_n * len(y), tol=1e-13, precision="double")
    assert sol.converged and sol.residual < 1e-13
    residuals = R.self_consistency_residuals(sol, K)
    assert set(residuals) == {"(30)-(33)", "(30)-(51)", "(31)-(34)", "(31)-(52)", "(32)-(35)", "(32)-(53)"}
    assert max(residuals.values()) < 1e-10, residuals


def test_unconverged_iterate_violates_equations(rng):
    """The residual check can fail: an early iterate (approximate ADATAP) is visibly inconsistent."""
    _, K, y = rbf_problem(rng)
    approx = R.approximate_replica(K, y, NOISE, len(y))
    assert max(R.self_consistency_residuals(approx, K).values()) > 1e-4


def _diagonal_problem(rng, n=8, c=1.3):
    return c * np.eye(n), rng.normal(size=n), c


@pytest.mark.parametrize("s_over_n", [0.3, 1.0, 2.5])
def test_exact_when_kernel_is_multiple_of_identity(rng, s_over_n):
    """With K = cI the sites decouple; the predictor at i is c s_i y_i/(σ² + c s_i) exactly."""
    K, y, c = _diagonal_problem(rng)
    n = len(y)
    sol = R.solve_replica(K, y, NOISE, s_over_n * n, tol=1e-12, precision="double")
    k = np.arange(80)
    p = stats.poisson.pmf(k, s_over_n)
    f = c * k[:, None] * y[None, :] / (NOISE + c * k[:, None])  # (k, i): predictor with k copies of i
    # Efron's error: a left-out point is predicted by the prior mean 0
    assert R.bootstrap_test_error(sol) == pytest.approx(np.mean(y**2), rel=1e-10)
    # bootstrap mean and variance at training inputs, eq. (48)
    moments = R.bootstrap_moments(sol, K, K)
    mean, var = moments.mean, moments.var
    np.testing.assert_allclose(mean, p @ f, rtol=1e-10)
    np.testing.assert_allclose(var, p @ f**2 - (p @ f) ** 2, rtol=1e-8, atol=1e-12)
    # eq. (60): point masses at the exact predictor values, with Poisson weights
    for i in range(n):
        mix = R.mixture_components(sol, i, tail_mass=1e-12)
        w, mu, sd = mix.weights, mix.means, mix.sds
        np.testing.assert_allclose(mu, f[: mu.size, i], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(w, p[: w.size] / p[: w.size].sum(), rtol=1e-12)
        assert np.all(sd < 1e-6 * (1 + np.abs(mu)))


def test_square_loss_eq45_equals_eq46_quadrature(rng):
    _, K, y = rbf_problem(rng)
    sol = R.solve_replica(K, y, NOISE, len(y))
    eps45 = R.bootstrap_test_error(sol)
    eps46 = R.bootstrap_loss_error(sol, lambda f, t: (f - t) ** 2)
    assert eps46 == pytest.approx(eps45, rel=1e-12)


def test_default_tolerance_buys_1e4_relative_accuracy_in_epsilon(rng):
    """The default tol (1e-3 relative in Δλ, the paper's) gives ε(S) to better than 1e-4 relative."""
    _, K, y = rbf_problem(rng, n=120)
    for s_over_n in (0.5, 1.0, 2.0):
        loose = R.bootstrap_test_error(R.solve_replica(K, y, NOISE, s_over_n * len(y)))
        tight = R.bootstrap_test_error(R.solve_replica(K, y, NOISE, s_over_n * len(y), tol=1e-12,
                                                       precision="double"))
        assert loose == pytest.approx(tight, rel=1e-4)


def test_mixed_precision_matches_double(rng):
    _, K, y = rbf_problem(rng)
    a = R.solve_replica(K, y, NOISE, len(y), tol=1e-9, precision="mixed")
    b = R.solve_replica(K, y, NOISE, len(y), tol=1e-9, precision="double")
    np.testing.assert_allclose(a.dl, b.dl, rtol=1e-7)
    assert R.bootstrap_test_error(a) == pytest.approx(R.bootstrap_test_error(b), rel=1e-8)


def test_moments_eq48_at_training_inputs_match_eqs_34_35(rng):
    """Eq. (48) at x = x_i reproduces m = Gγ (34) and Q_ii − m_i² = −(G diag(λ) G)_ii (35)."""
    _, K, y = rbf_problem(rng)
    sol = R.solve_replica(K, y, NOISE, len(y), tol=1e-10)
    moments = R.bootstrap_moments(sol, K, K)
    mean, var = moments.mean, moments.var
    G = np.linalg.inv(np.linalg.inv(K + 1e-12 * np.eye(len(y))) + np.diag(sol.dl))
    np.testing.assert_allclose(mean, sol.m, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(var, -np.einsum("ij,j,ij->i", G, sol.lam, G), rtol=1e-5, atol=1e-9)


def test_warm_start_reaches_same_solution_in_fewer_iterations(rng):
    _, K, y = rbf_problem(rng, n=100)
    n = len(y)
    cold = R.solve_replica(K, y, NOISE, 1.2 * n, tol=1e-8)
    warm = R.solve_replica(K, y, NOISE, 1.2 * n, tol=1e-8, init=R.solve_replica(K, y, NOISE, n, tol=1e-8))
    np.testing.assert_allclose(warm.dl, cold.dl, rtol=1e-6)
    assert warm.n_iter < cold.n_iter
    curve = R.replica_learning_curve(K, y, NOISE, [2 * n, 0.5 * n, n], tol=1e-8)
    assert [s.S for s in curve] == [2 * n, 0.5 * n, n]
    at_n = R.solve_replica(K, y, NOISE, n, tol=1e-8)
    assert R.bootstrap_test_error(curve[2]) == pytest.approx(R.bootstrap_test_error(at_n), rel=1e-6)


def test_approximate_adatap_improves_with_S(rng):
    """§5: the approximate solution (no iteration) gets closer to the full one as S grows."""
    _, K, y = rbf_problem(rng, n=100)
    gaps = []
    for s_over_n in (0.5, 4.0):
        full = R.bootstrap_test_error(R.solve_replica(K, y, NOISE, s_over_n * 100))
        approx = R.approximate_replica(K, y, NOISE, s_over_n * 100)
        assert approx.n_iter == 0 and approx.method == "approximate"
        gaps.append(abs(R.bootstrap_test_error(approx) / full - 1))
    assert gaps[1] < gaps[0]


def test_initial_value_from_subset_spectrum_is_close(rng):
    _, K, y = rbf_problem(rng, n=200)
    full = R.initial_delta_lambda(K, NOISE, 200.0)
    sub = R.initial_delta_lambda(K, NOISE, 200.0, subset=50)
    assert sub == pytest.approx(full, rel=0.5)


def test_non_convergence_raises_with_last_iterate(rng):
    _, K, y = rbf_problem(rng)
    with pytest.raises(R.ConvergenceError, match="did not converge") as info:
        R.solve_replica(K, y, NOISE, len(y), tol=1e-12, max_iter=2, precision="double")
    last = info.value.last
    assert isinstance(last, R.ReplicaSolution) and not last.converged and last.n_iter == 2
    assert np.all(np.isfinite(last.dl))


def test_mixture_is_a_density_and_bins_integrate_it(rng):
    _, K, y = rbf_problem(rng)
    sol = R.solve_replica(K, y, NOISE, len(y))
    i = 5
    mix = R.mixture_components(sol, i, tail_mass=1e-9)
    w, mu, sd = mix.weights, mix.means, mix.sds
    assert 1 - 1e-9 <= w.sum() <= 1 + 1e-12
    lo, hi = mu.min() - 10 * sd.max(), mu.max() + 10 * sd.max()
    h = np.linspace(lo, hi, 200001)
    dens = R.predictive_density(sol, i, h)
    assert np.trapezoid(dens, h) == pytest.approx(1.0, abs=1e-6)
    edges = np.linspace(lo, hi, 41)
    probs = R.bin_probabilities(sol, i, edges)
    assert probs.sum() == pytest.approx(1.0, abs=1e-6)
    mid = (edges[:-1] + edges[1:]) / 2
    inside = (h >= edges[10]) & (h <= edges[11])
    assert probs[10] == pytest.approx(np.trapezoid(dens[inside], h[inside]), abs=1e-4)
    assert mid.size == probs.size


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"S": -3.0}, "`S` must be positive, got -3"),
        ({"noise_var": 0.0}, "`noise_var` must be a positive finite number"),
        ({"y": np.zeros(3)}, "`y` must have shape"),
        ({"K": np.ones((3, 4))}, "`K` must be a square kernel matrix"),
        ({"K": np.array([[1.0, np.nan], [np.nan, 1.0]]), "y": np.zeros(2)}, "must be finite"),
        ({"K": np.array([[1.0, 0.5], [0.1, 1.0]]), "y": np.zeros(2)}, "must be symmetric"),
        ({"tol": 2.0}, "`tol` must be in"),
        ({"precision": "half"}, "`precision` must be"),
        ({"max_iter": 0}, "`max_iter` must be a positive integer, got 0"),
        ({"init": np.ones(4)}, r"`init` must be a positive array of shape \(10,\)"),
        ({"init": -np.ones(10)}, r"`init` must be a positive array"),
    ],
)
def test_validation_messages(rng, kwargs, match):
    _, K, y = rbf_problem(rng, n=10)
    args = {"K": K, "y": y, "noise_var": NOISE, "S": 10.0} | kwargs
    with pytest.raises(ValueError, match=match):
        R.solve_replica(**args)


def test_a_warm_start_from_a_solution_on_other_data_is_refused(rng):
    """A solution for N = 8 rows cannot start the iteration on 10 (its Δλ would be broadcast or fail deep inside)."""
    _, K8, y8 = rbf_problem(rng, n=8)
    _, K, y = rbf_problem(rng, n=10)
    with pytest.raises(ValueError, match="`init` is a solution for N = 8 inputs, but the data have 10 rows"):
        R.solve_replica(K, y, NOISE, 10.0, init=R.solve_replica(K8, y8, NOISE, 8.0))


def test_bad_moment_inputs_and_index(rng):
    _, K, y = rbf_problem(rng, n=10)
    sol = R.solve_replica(K, y, NOISE, 10.0)
    with pytest.raises(ValueError, match="must have 10 columns"):
        R.bootstrap_moments(sol, K, np.ones((2, 3)))
    with pytest.raises(IndexError, match="Input index must be in 0..9"):
        R.mixture_components(sol, 10)


def _with_smallest_eigenvalue(K, value):
    w, V = np.linalg.eigh(K)
    w[0] = value
    K_new = (V * w) @ V.T
    return (K_new + K_new.T) / 2


def test_round_off_indefiniteness_is_harmless(rng):
    """Only B = I + D^½ K D^½ is factorised, never K: a round-off negative eigenvalue changes nothing."""
    _, K, y = rbf_problem(rng, n=40)
    clipped = R.solve_replica(_with_smallest_eigenvalue(K, 0.0), y, NOISE, 400.0)
    negative = R.solve_replica(_with_smallest_eigenvalue(K, -1e-9 * np.trace(K)), y, NOISE, 400.0)
    assert negative.jitter == 0.0
    assert R.bootstrap_test_error(negative) == pytest.approx(R.bootstrap_test_error(clipped), rel=1e-6)


def test_jitter_ladder_is_used_and_reported_when_needed(rng):
    """With σ² = 1e-6 the site precisions reach ~1e6 and a −5e-7 eigenvalue breaks B: jitter steps in."""
    _, K, y = rbf_problem(rng, n=40)
    K_bad = _with_smallest_eigenvalue(K, -5e-7)
    sol = R.solve_replica(K_bad, y, 1e-6, 200.0)
    assert sol.converged and sol.jitter > 0
    assert sol.jitter == pytest.approx(R.JITTER_LADDER[-1] * np.mean(np.diag(K_bad)), rel=1e-12)
    assert all(np.all(np.isfinite(getattr(sol, f))) for f in ("dl", "dl_c", "lam", "lam_c", "gam_c"))


def test_clearly_indefinite_matrix_is_rejected(rng):
    _, K, y = rbf_problem(rng, n=20)
    w, V = np.linalg.eigh(K)
    w[0] = -1.0
    with pytest.raises(R.IndefiniteKernelError, match="not positive semi-definite"):
        R.solve_replica((V * w) @ V.T, y, NOISE, 20.0)


def test_warm_started_solves_in_ascending_order_from_the_previous_solution():
    calls = []

    def solve(S, init):
        calls.append((S, init))
        return f"solution at {S:g}"

    assert R.warm_started(solve, [4.0, 1.0, 2.0]) == ["solution at 4", "solution at 1", "solution at 2"]
    assert calls == [(1.0, None), (2.0, "solution at 1"), (4.0, "solution at 2")]
