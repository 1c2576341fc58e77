"""Low-rank ADATAP ([MO03] for K = ΦΦᵀ, explorer.operators.features through explorer.bootstrap.replica): equal to the dense path on ΦΦᵀ, no N×N matrix.

The reference is the dense implementation, :func:`explorer.bootstrap.replica.solve_replica` on ``phi @ phi.T``: other
algebra (Cholesky of I + D^½KD^½ of order N, G formed, eq. 57 with the explicit N×N matrix), same equations. Both
are solved to a relative change of Δλ below 1e-10 in double precision, and the dense start value uses all N
eigenvalues (``init_subset=None``), so both stop near the same fixed point.

Tolerance: REL = 1e-6, relative to the largest magnitude of each quantity (m − y, γ_c and λ cross or approach zero,
so an entrywise ratio would be ill-posed). The fixed points agree to ~1e-13 (round-off in G, κ(B)·ε), λ to
~CG tolerance × cond(eq. 57) ≈ 1e-10 × 40, λ_c after the cancellation in eq. (59) to ~1e-9 (the low-rank closing
takes H − G_ii² in its fixed-point form, which differs from the dense path's subtraction by tol·κ ≈ 1e-10 × 60):
measured ≤ 1.3e-9 on every case below. A wrong formula (a factor, a transpose, a missing term) moves them by 1e-3
or more.
"""
import functools
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from explorer import datasets
from explorer.bootstrap import replica as LR
from explorer.bootstrap import replica as R
from explorer.kernels import Exponential, SquaredExponential, paper_rbf
from explorer.losses import get_loss
from explorer.lowrank import given_features, nystrom_features
from explorer.operators import features as feature_kernel
from explorer.progress import Cancelled, Hooks

REL = 1e-6
TIGHT = {"tol": 1e-10, "precision": "double"}
FIELDS = ("dl", "dl_c", "gam", "gam_c", "lam", "lam_c", "m", "G_diag")


def assert_rel(actual, desired, rel=REL, what=""):
    """max |actual − desired| ≤ rel · max |desired|."""
    actual, desired = np.asarray(actual, dtype=float), np.asarray(desired, dtype=float)
    error = np.max(np.abs(actual - desired)) / np.max(np.abs(desired))
    assert error <= rel, f"{what}: relative difference {error:.1e} > {rel:.0e}"


def random_problem(n, m, seed=0, d=5):
    """A standardised random regression problem and its Nyström features (SE kernel, lengthscale 2)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 40, d))
    y = np.sin(X @ rng.normal(size=d)) + 0.1 * rng.normal(size=n + 40)
    y = (y - y[:n].mean()) / y[:n].std()
    features = nystrom_features(SquaredExponential(2.0), X[:n], m, rng=seed + 1)
    return features, y[:n], 0.05, features.transform(X[n:])


def boston_problem(m):
    """[MO03]'s boston set-up: the first 50 rows held out, N = 456, paper RBF (l² = 73.54), σ² = 0.01."""
    data = datasets.load("boston")
    X, y = data.inputs, (data.targets - data.targets.mean()) / data.targets.std()
    features = nystrom_features(paper_rbf(X[50:]), X[50:], m, rng=0)
    return features, y[50:], 0.01, features.transform(X[:50])


PROBLEMS = {"random300": lambda: random_problem(300, 60), "random1200": lambda: random_problem(1200, 150, seed=1),
            "boston300": lambda: boston_problem(300), "boston100": lambda: boston_problem(100)}
CASES = [("random300", 0.5), ("random300", 1.0), ("random300", 2.0), ("random1200", 1.0),
         ("boston300", 0.5), ("boston300", 1.0), ("boston300", 2.0)]


@functools.cache
def problem(name):
    features, y, noise_var, phi_test = PROBLEMS[name]()
    return SimpleNamespace(features=features, phi=features.phi, y=y, noise_var=noise_var, phi_test=phi_test,
                           K=features.phi @ features.phi.T)


@functools.cache
def case(name, s_over_n):
    """Both paths at S = (S/N)·N, solved tightly."""
    p = problem(name)
    S = s_over_n * p.y.size
    low = LR.solve_replica_lowrank(p.features, p.y, p.noise_var, S, **TIGHT)
    dense = R.solve_replica(p.K, p.y, p.noise_var, S, init_subset=None, **TIGHT)
    return p, low, dense


def case_id(c):
    return f"{c[0]}-S/N={c[1]:g}"


# ------------------------------------------------------------------ equal to the dense path on ΦΦᵀ


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_site_parameters_equal_the_dense_path(c):
    _, low, dense = case(*c)
    assert low.converged and low.jitter == 0.0 and dense.jitter == 0.0
    for name in FIELDS:
        assert_rel(getattr(low, name), getattr(dense, name), what=name)
    # the positive ones entry by entry too
    for name in ("dl", "dl_c", "G_diag"):
        np.testing.assert_allclose(getattr(low, name), getattr(dense, name), rtol=REL, err_msg=name)


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_bootstrap_errors_equal_the_dense_path(c):
    """ε(S) for square loss (eq. 45), for the ε-insensitive loss of Fig. 1 (eq. 46), and the optimism errors."""
    _, low, dense = case(*c)
    assert R.bootstrap_test_error(low) == pytest.approx(R.bootstrap_test_error(dense), rel=REL)
    loss = get_loss("eps-insensitive", eps=0.1, beta=0.1)
    assert R.bootstrap_loss_error(low, loss) == pytest.approx(R.bootstrap_loss_error(dense, loss), rel=REL)
    a, b = R.bootstrap_optimism(low), R.bootstrap_optimism(dense)
    assert (a.validation, a.training) == pytest.approx((b.validation, b.training), rel=REL)


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_predictive_mixture_equals_the_dense_path(c):
    """The eq. (60) mixture (weights, means, sds) and its bin masses at a few training inputs."""
    p, low, dense = case(*c)
    edges = np.linspace(-3, 3, 31)
    for i in (0, p.y.size // 2, p.y.size - 1):
        a, b = R.mixture_components(low, i), R.mixture_components(dense, i)
        np.testing.assert_array_equal(a.weights, b.weights)
        assert_rel(a.means, b.means, what=f"means at {i}")
        assert_rel(a.sds, b.sds, what=f"sds at {i}")
        assert_rel(R.bin_probabilities(low, i, edges), R.bin_probabilities(dense, i, edges), what=f"bins at {i}")


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_bootstrap_moments_at_test_inputs_equal_the_dense_path(c):
    """Eq. (48) at held-out inputs: k(x, x_i) = φ(x)ᵀφ_i, so the dense path gets K_cross = Φ_test Φᵀ."""
    p, low, dense = case(*c)
    a = LR.bootstrap_moments_lowrank(low, p.features, p.phi_test)
    b = R.bootstrap_moments(dense, p.K, p.phi_test @ p.phi.T)
    assert a.mean.shape == a.var.shape == (p.phi_test.shape[0],)
    assert_rel(a.mean, b.mean, what="mean")
    assert_rel(a.var, b.var, what="var")
    assert np.all(a.var > 0)


@pytest.mark.parametrize("name, s_over_n", [("random300", 1.0), ("boston300", 0.5), ("boston300", 2.0)])
def test_approximate_adatap_equals_the_dense_path(name, s_over_n):
    p = problem(name)
    S = s_over_n * p.y.size
    low, dense = LR.approximate_replica_lowrank(p.phi, p.y, p.noise_var, S), R.approximate_replica(p.K, p.y,
                                                                                                   p.noise_var, S)
    assert (low.method, low.n_iter, dense.method) == ("approximate", 0, "approximate")
    np.testing.assert_array_equal(low.dl, np.full(p.y.size, low.dl[0]))  # one scalar Δλ, no iteration
    for name in FIELDS:
        assert_rel(getattr(low, name), getattr(dense, name), what=name)
    assert R.bootstrap_test_error(low) == pytest.approx(R.bootstrap_test_error(dense), rel=REL)


@pytest.mark.parametrize("s_over_n", [0.5, 1.0, 2.0])
def test_start_value_uses_the_exact_spectrum(s_over_n):
    """Eqs. (61)-(62) with the m eigenvalues of ΦᵀΦ equal those with all N eigenvalues of ΦΦᵀ (N − m are zero;
    the dense eigensolver returns them as ±1e-13, which shift the root by less than 1e-9)."""
    p = problem("random300")
    S = s_over_n * p.y.size
    assert LR.initial_delta_lambda_lowrank(p.phi, p.noise_var, S) == pytest.approx(
        R.initial_delta_lambda(p.K, p.noise_var, S, subset=None), rel=1e-9)


@pytest.mark.parametrize("s_over_n", [0.5, 2.0])
def test_cholesky_factor_as_features_gives_the_dense_theory_on_K(rng, s_over_n):
    """m = N and Φ = the lower Cholesky factor of K (a well-conditioned exponential kernel): ΦΦᵀ = K, so the low-rank
    path is the dense theory on K itself."""
    X = rng.normal(size=(200, 3))
    K = Exponential(1.5)(X)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    features = given_features(np.linalg.cholesky(K))
    low = LR.solve_replica_lowrank(features, y, 0.01, s_over_n * 200, **TIGHT)
    dense = R.solve_replica(K, y, 0.01, s_over_n * 200, init_subset=None, **TIGHT)
    for name in FIELDS:
        assert_rel(getattr(low, name), getattr(dense, name), what=name)
    X_test = rng.normal(size=(7, 3))
    K_cross = Exponential(1.5)(X_test, X)
    phi_test = np.linalg.solve(features.phi, K_cross.T).T  # φ(x) = L⁻¹k(x): φ(x)ᵀφ_i = k(x, x_i)
    a, b = LR.bootstrap_moments_lowrank(low, features.phi, phi_test), R.bootstrap_moments(dense, K, K_cross)
    assert_rel(a.mean, b.mean, what="mean")
    assert_rel(a.var, b.var, what="var")


def test_sites_few_features_reach_keep_their_decoupled_limit():
    """Boston with only m = 100 Nyström features: a few inputs lie where hardly any feature reaches (‖φ_i‖² ~ 1e-7
    against k(x_i, x_i) = 1), so G_ii ≈ 1e-9 and Δλ_c(i) ~ 1e9. There the amplification κ_i = G_ii²/(H(i) − G_ii²)
    of a relative change of G_ii reaches 1e14: λ(i) and λ_c(i) are not determined by the literal difference
    H(i) − G_ii² (two numbers ~1e-19 whose difference is ~1e-33), which the dense path forms. The low-rank path
    evaluates it as a variance without cancellation, so there λ(i) takes its decoupled limit: row i of eq. (57) is
    −(g²/(H − g)) λ_i = (m_i − y_i)² with H − g → (S/N)/(σ⁴Δλ_c⁴), i.e. λ_i → −(m_i − y_i)² (S/N)/σ⁴. Every
    quantity the theory predicts — cavity moments, ε(S), eq. (48) — agrees with the dense path everywhere, and λ
    wherever κ_i is moderate."""
    p = problem("boston100")
    S = p.y.size
    low = LR.solve_replica_lowrank(p.features, p.y, p.noise_var, S, **TIGHT)
    dense = R.solve_replica(p.K, p.y, p.noise_var, S, init_subset=None, **TIGHT)
    weights = R.poisson_weights(1.0)
    H = (weights / (low.dl_c[:, None] + np.arange(weights.size) / p.noise_var) ** 2).sum(axis=1)
    kappa = low.G_diag**2 / np.abs(H - low.G_diag**2)
    moderate, extreme = kappa < 1e4, kappa > 1e10
    assert moderate.mean() > 0.95 and extreme.any()  # the case does have such sites
    for name in FIELDS:
        assert_rel(getattr(low, name)[moderate], getattr(dense, name)[moderate], what=name)
    # corrections to the limit are O(G_ii Δλ(i)) = 1.1e-6 here (t = G_ii Δλ_c = 1 − G_ii Δλ in g²/(H − g), and the
    # coupling Σ_j G_ij² λ_j ≤ G_ii Σ_j G_jj |λ_j|): measured 1.3e-6; the dense path's subtraction misses by 5e-5
    limit = -((low.m - p.y) ** 2)[extreme] * 1.0 / p.noise_var**2
    np.testing.assert_allclose(low.lam[extreme], limit, rtol=10 * np.max((low.G_diag * low.dl)[extreme]))
    assert_rel(low.cavity_mean, dense.cavity_mean, what="cavity mean")
    assert_rel(low.cavity_var, dense.cavity_var, what="cavity variance")
    assert R.bootstrap_test_error(low) == pytest.approx(R.bootstrap_test_error(dense), rel=REL)
    a = LR.bootstrap_moments_lowrank(low, p.phi, p.phi_test)
    b = R.bootstrap_moments(dense, p.K, p.phi_test @ p.phi.T)
    assert_rel(a.mean, b.mean, what="mean")
    assert_rel(a.var, b.var, what="var")


@pytest.mark.parametrize("scale", [0.0, 1e-30])
def test_inputs_no_feature_reaches_decouple_exactly(scale):
    """Rows of Φ set to 0 (G_ii = 0, Δλ_c = ∞ by eq. 54; an outlier beyond every landmark) or to 1e-30 of their
    value: their rows and columns of ΦΦᵀ vanish, so every other site is that of the problem without them (at the same
    S/N), and they take the limit Δλ_c → ∞: Δλ = (S/N)/σ² (eq. 55), cavity mean and variance 0, λ = −y_i²(S/N)/σ⁴
    (eq. 57), a contribution y_i² to ε(S) (eq. 45). Finite throughout, in mixed and double precision (the default
    tolerance 1e-3 gives the live sites to 1e-3)."""
    p = problem("random300")
    dead = np.array([5, 77, 150, 299])
    live = np.setdiff1d(np.arange(300), dead)
    phi = p.phi.copy()
    phi[dead] *= scale
    reduced = LR.solve_replica_lowrank(phi[live], p.y[live], p.noise_var, live.size, **TIGHT)
    for options in (TIGHT, {}):
        full = LR.solve_replica_lowrank(phi, p.y, p.noise_var, 300.0, **options)
        assert full.converged
        for name in FIELDS:
            assert_rel(getattr(full, name)[live], getattr(reduced, name), rel=REL if options else 1e-3, what=name)
    np.testing.assert_allclose(full.dl[dead], 1.0 / p.noise_var, rtol=1e-9)
    np.testing.assert_allclose(full.lam[dead], -p.y[dead] ** 2 / p.noise_var**2, rtol=1e-6)
    # 0 up to the accuracy of λ (CG: ~1e-10 relative), which eq. (59) multiplies by c ~ Δλ_c² and divides by Δλ_c²
    assert np.all(np.abs(full.cavity_mean[dead]) < 1e-12)
    assert np.all(full.cavity_var[dead] < 1e-8 * np.median(reduced.cavity_var))
    full = LR.solve_replica_lowrank(phi, p.y, p.noise_var, 300.0, **TIGHT)
    expected = (live.size * R.bootstrap_test_error(reduced) + np.sum(p.y[dead] ** 2)) / 300
    assert R.bootstrap_test_error(full) == pytest.approx(expected, rel=REL)
    a = LR.bootstrap_moments_lowrank(full, phi, p.phi_test)
    b = LR.bootstrap_moments_lowrank(reduced, phi[live], p.phi_test)
    assert_rel(a.mean, b.mean, what="mean")
    assert_rel(a.var, b.var, what="var")


def test_default_tolerance_and_mixed_precision_buy_1e4_relative_accuracy_in_epsilon():
    """As for the dense path: tol = 1e-3 (the paper's) with a single-precision start gives ε(S) to 1e-4."""
    p = problem("random300")
    for s_over_n in (0.5, 1.0, 2.0):
        loose = LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, s_over_n * 300)
        tight = case("random300", s_over_n)[1]
        assert R.bootstrap_test_error(loose) == pytest.approx(R.bootstrap_test_error(tight), rel=1e-4)


def test_learning_curve_is_warm_started_and_keeps_the_order_given():
    p = problem("random300")
    S_values = [600.0, 150.0, 300.0]
    curve = LR.replica_learning_curve_lowrank(p.features, p.y, p.noise_var, S_values, **TIGHT)
    assert [sol.S for sol in curve] == S_values
    for sol in curve:
        cold = case("random300", sol.S / 300)[1]
        for name in FIELDS:
            assert_rel(getattr(sol, name), getattr(cold, name), what=name)


# ------------------------------------------------------------------ failures


@pytest.mark.parametrize("precision, n_iter", [("mixed", 2), ("double", 1)])
def test_non_convergence_raises_with_the_last_iterate(precision, n_iter):
    p = problem("random300")
    with pytest.raises(R.ConvergenceError, match="did not converge at S/N = 1") as info:
        LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, max_iter=1, precision=precision, tol=1e-8)
    last = info.value.last
    assert isinstance(last, R.ReplicaSolution)
    assert not last.converged and last.n_iter == n_iter and last.residual > 1e-8
    assert np.all(np.isfinite(last.lam_c)) and last.dl.shape == (300,)


def test_failed_conjugate_gradients_fall_back_to_a_dense_solve_at_small_N(monkeypatch):
    monkeypatch.setattr(feature_kernel, "CG_MAX_ITER", 1)
    p, _, dense = case("random300", 1.0)
    low = LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, **TIGHT)
    for name in ("lam", "lam_c"):
        assert_rel(getattr(low, name), getattr(dense, name), what=name)


def test_failed_conjugate_gradients_raise_above_the_dense_fallback_size(monkeypatch):
    monkeypatch.setattr(feature_kernel, "CG_MAX_ITER", 1)
    monkeypatch.setattr(feature_kernel, "DENSE_FALLBACK_MAX_N", 299)
    p = problem("random300")
    with pytest.raises(R.ConvergenceError, match=r"conjugate gradients on eq. \(57\) reached a relative residual of "
                                                 r"\S+ > 1e-10 after 1 steps") as info:
        LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0)
    assert isinstance(info.value.last, R.ReplicaSolution) and not info.value.last.converged


def _sol():
    return case("random300", 1.0)[1]


Y5, PHI5 = np.arange(5.0), np.ones((5, 2))


@pytest.mark.parametrize("call, match", [
    (lambda: LR.solve_replica_lowrank(np.ones(5), Y5, 0.1, 5.0), r"`phi` must be a feature matrix of shape \(N, m\)"),
    (lambda: LR.solve_replica_lowrank(np.ones((5, 0)), Y5, 0.1, 5.0), "`phi` must be a feature matrix"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5[:4], 0.1, 5.0), r"`y` must have shape \(5,\) to match `phi` of shape \(5, 2\), got shape \(4,\)"),
    (lambda: LR.solve_replica_lowrank(PHI5[:1], Y5[:1], 0.1, 5.0), "at least 2 training points"),
    (lambda: LR.solve_replica_lowrank(np.where(np.eye(5, 2), np.nan, 1.0), Y5, 0.1, 5.0), "must be finite"),
    (lambda: LR.solve_replica_lowrank(PHI5, np.r_[Y5[:4], np.inf], 0.1, 5.0), "must be finite"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.0, 5.0), "`noise_var` must be a positive finite number, got 0.0"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, np.nan, 5.0), "`noise_var` must be a positive finite number"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, -3.0), "`S` must be positive, got -3.0. S is the mean"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 0.0), "`S` must be positive"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, tol=0.0), r"`tol` must be in \(0, 1\)"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, precision="single"), "`precision` must be 'mixed' or"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, max_iter=0), "`max_iter` must be a positive integer"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, init=np.ones(4)), r"`init` must be a positive array"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, init=-np.ones(5)), r"`init` must be a positive array"),
    (lambda: LR.solve_replica_lowrank(PHI5, Y5, 0.1, 5.0, init=_sol()), "`init` is a solution for N = 300"),
    (lambda: LR.approximate_replica_lowrank(PHI5, Y5, 0.1, -1.0), "`S` must be positive"),
    (lambda: LR.replica_learning_curve_lowrank(PHI5, Y5, -1.0, [5.0]), "`noise_var` must be a positive finite number"),
    (lambda: LR.initial_delta_lambda_lowrank(PHI5, 0.1, -1.0), "`S` must be positive"),
    (lambda: LR.bootstrap_moments_lowrank(_sol(), PHI5, PHI5), r"one row per training input of the solution"),
    (lambda: LR.bootstrap_moments_lowrank(_sol(), problem("random300").phi, PHI5),
     r"`phi_test` must have shape \(M, 60\)"),
])
def test_bad_input_is_refused_with_a_clear_message(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ memory, hooks


def test_memory_stays_O_N_m_at_twenty_thousand_inputs():
    """N = 20,000, m = 32: one N×N float64 matrix would be 3.2 GB; Φ is 5.1 MB. The peak of what numpy allocates
    (tracemalloc) must stay within ten copies of Φ (51 MB): a handful of N×m arrays and N×k_max Poisson series."""
    rng = np.random.default_rng(5)
    n, m = 20_000, 32
    phi = rng.normal(size=(n, m)) / np.sqrt(m)
    y = np.tanh(phi @ rng.normal(size=m)) + 0.3 * rng.normal(size=n)
    y = (y - y.mean()) / y.std()
    tracemalloc.start()
    try:
        sol = LR.solve_replica_lowrank(phi, y, 0.1, float(n))
        moments = LR.bootstrap_moments_lowrank(sol, phi, phi[:1000])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sol.converged and np.all(np.isfinite(moments.var))
    assert peak < 10 * phi.nbytes, f"peak {peak / 1e6:.0f} MB"


def test_hooks_report_every_iteration_and_change_nothing():
    p = problem("random300")
    seen = []
    sol = LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, max_iter=50,
                                   hooks=Hooks(progress=lambda fraction, where: seen.append((fraction, where))))
    plain = LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, max_iter=50)
    np.testing.assert_array_equal(sol.lam_c, plain.lam_c)
    assert {(where.stage, where.unit) for _, where in seen} == {("ADATAP", "iterations")}
    assert [where.done for _, where in seen] == [*range(1, sol.n_iter + 1), sol.n_iter]
    assert [where.total for _, where in seen[:-1]] == [100] * sol.n_iter  # 2 × max_iter for mixed precision
    assert seen[-1][0] == 1.0


def _stop_at(poll):
    polls = iter(range(1, 10_000))
    return Hooks(should_stop=lambda: next(polls) >= poll)


def test_should_stop_cancels_between_iterations():
    p = problem("random300")
    with pytest.raises(Cancelled) as info:
        LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, hooks=_stop_at(3))
    assert (info.value.done, info.value.total, info.value.unit) == (2, 400, "iterations")


def test_should_stop_cancels_between_conjugate_gradient_steps():
    """Polls 1..n_iter come before the iterations; the next comes from the first CG step of eq. (57)."""
    p, low, _ = case("random300", 1.0)
    with pytest.raises(Cancelled) as info:
        LR.solve_replica_lowrank(p.phi, p.y, p.noise_var, 300.0, hooks=_stop_at(low.n_iter + 1), **TIGHT)
    assert (info.value.done, info.value.total) == (low.n_iter, low.n_iter)
