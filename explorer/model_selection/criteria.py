r"""GP model selection: criteria with gradients, their optimisation, curves and rankings (seed 001).

Criteria (lower is better), each a function of the log hyperparameters
``phi = np.append(kernel.theta, log noise_var)`` with an analytic gradient:

==================  ===========================================================================================
``evidence``        negative log evidence −log N(y | 0, K_y), eq. (2.11) of seed 001, in nats
``loo``             mean negative leave-one-out log predictive probability, closed form (R&W eq. 5.10-5.12)
``kfold``           K-fold CV negative log predictive probability, eq. (2.12), in closed form from K_y⁻¹
``asc-boltzmann``   −I, Boltzmann ASC (eq. 4.3, β maximised per partition), see :mod:`explorer.model_selection.asc`
``asc-beta-noise``  −I, β-noise ASC (β = 1)
``asc-bayes``       −I, Bayesian ASC (eq. 4.4)
``bootstrap632``    Efron's .632 estimate e⁻¹ ε_train + (1 − e⁻¹) ε(N) with ε(N) from the replica theory
                    (seed 000 eq. 45 and footnote 3), gradient by implicit differentiation of eqs. (54)-(55)
==================  ===========================================================================================

A :class:`Criterion` binds a criterion to its random parts (the K folds, the J ASC partitions), drawn once
from ``rng`` so that the function optimised is deterministic. :func:`optimize_hyperparameters` runs
L-BFGS-B in log space from Cauchy-distributed starts (§5.1.1); :func:`rank_functional_forms` ranks
covariance functions (§5.3); :func:`criterion_curve` sweeps one hyperparameter (Fig. 5.3-5.5);
:func:`test_error` gives the standardized MSE (eq. 5.1) and the mean standardized log loss.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import linalg, optimize

from explorer import regression
from explorer.bootstrap import replica
from explorer.kernels import Kernel, check_inputs, make_kernel
from explorer.model_selection import asc
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["CRITERIA", "CRITERION_LABELS", "NOISE_BOUNDS", "EFRON_WEIGHT", "CriterionValue", "Criterion",
           "SelectionResult", "StartingPoint", "TestError", "RankingRow", "CriterionCurve", "make_criterion",
           "negative_log_evidence", "loo_cv", "draw_folds", "kfold_cv", "asc_criterion", "bootstrap_632",
           "initial_hyperparameters", "optimize_hyperparameters", "select_hyperparameters", "rank_functional_forms",
           "criterion_curve", "test_error", "hyperparameter_dict"]

CRITERIA = ("evidence", "loo", "kfold", "asc-boltzmann", "asc-beta-noise", "asc-bayes", "bootstrap632")
"""Names accepted by :func:`make_criterion`."""

CRITERION_LABELS = {
    "evidence": "negative log evidence (eq. 2.11)",
    "loo": "LOO-CV neg. log predictive",
    "kfold": "K-fold CV neg. log predictive (eq. 2.12)",
    "asc-boltzmann": "−I, Boltzmann ASC (eq. 4.3)",
    "asc-beta-noise": "−I, β-noise ASC (β = 1)",
    "asc-bayes": "−I, Bayesian ASC (eq. 4.4)",
    "bootstrap632": "bootstrap .632 error (replica, seed 000 eq. 45)",
}
"""Human-readable names, for tables and plot legends."""

NOISE_BOUNDS = (1e-8, 1e5)
"""Default (lower, upper) bounds of the noise variance σ² during optimisation, natural units."""

EFRON_WEIGHT = 1.0 - np.exp(-1.0)
"""Weight 1 − e⁻¹ ≈ 0.632 of ε(N) in Efron's .632 estimate (seed 000 footnote 3 rounds it to 0.632)."""

_LOG_2PI = np.log(2.0 * np.pi)
_ASC_VARIANTS = {"asc-boltzmann": "boltzmann", "asc-beta-noise": "beta-noise", "asc-bayes": "bayes"}
_NUMERICAL_ERRORS = (np.linalg.LinAlgError, FloatingPointError, replica.ConvergenceError)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class CriterionValue:
    """One evaluation of a criterion.

    Attributes
    ----------
    criterion : str
        One of ``CRITERIA``.
    value : float
        The criterion, lower is better (nats for evidence and ASC; per case for LOO; per fold for K-fold).
    gradient : ndarray of shape (p + 1,) or None
        w.r.t. ``np.append(kernel.theta, log noise_var)``.
    n_excluded : int
        ASC partitions left out because a matrix could not be factorised (§4.4.2); 0 otherwise.
    betas : ndarray of shape (J,) or None
        β* of each ASC partition (Boltzmann), 1 (β-noise); None for the other criteria.
    """

    criterion: str
    value: float
    gradient: np.ndarray | None
    n_excluded: int = 0
    betas: np.ndarray | None = None


@dataclass(frozen=True)
class TestError:
    """Test error of a selected model (§5.1): SMSE (eq. 5.1) and mean standardized log loss (R&W §2.5)."""

    smse: float
    msll: float


@dataclass(frozen=True, eq=False)
class SelectionResult:
    """Hyperparameters selected by minimising one criterion.

    Attributes
    ----------
    criterion : str
    kernel : Kernel
        The kernel at the optimum.
    noise_var : float
    hyperparameters : dict
        Natural units: kernel hyperparameters (variances reported as standard deviations,
        ``signal_std``) and ``noise_std``; see :func:`hyperparameter_dict`.
    value : float
        The criterion at the optimum.
    theta : ndarray of shape (p + 1,)
        ``np.append(kernel.theta, log noise_var)`` at the optimum.
    n_restarts, n_failed : int
        Optimisation runs made, and runs in which no evaluation succeeded.
    converged : bool
        Whether L-BFGS-B reported convergence (within ``max_iter``) on the best run.
    n_iter, n_evaluations : int
        Iterations of the best run; criterion evaluations over all runs.
    n_excluded : int
        ASC partitions excluded at the optimum.
    test : TestError or None
        Filled in by :func:`select_hyperparameters` when test data are given.
    """

    criterion: str
    kernel: Kernel
    noise_var: float
    hyperparameters: dict
    value: float
    theta: np.ndarray
    n_restarts: int
    n_failed: int
    converged: bool
    n_iter: int
    n_evaluations: int
    n_excluded: int = 0
    test: TestError | None = None


@dataclass(frozen=True, eq=False)
class RankingRow:
    """One functional form in a ranking (§5.3, Experiments 6-8).

    ``values`` and ``ranks`` map each ranking criterion (and ``"smse"`` when test data are given) to the
    value at the selected hyperparameters and the rank among the functional forms (1 = best, by the finite
    values only; a NaN or infinite value is not ranked: its rank is None). ``selection`` holds the
    hyperparameters chosen by the ``select_by`` criterion.
    """

    kernel_name: str
    selection: SelectionResult
    values: dict
    ranks: dict
    test: TestError | None = None


@dataclass(frozen=True, eq=False)
class CriterionCurve:
    """A criterion as a function of one hyperparameter, the others fixed (Fig. 5.3-5.5).

    ``grid`` in natural units of ``parameter``; ``values`` NaN where evaluation failed; ``best`` the grid
    value of the minimum (NaN if every evaluation failed).
    """

    criterion: str
    parameter: str
    grid: np.ndarray
    values: np.ndarray
    best: float


# --------------------------------------------------------------------------- criteria


def negative_log_evidence(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
    """R_ME = −log N(y | 0, K_y), eq. (2.11) of seed 001, via :func:`regression.log_evidence`.

    Parameters
    ----------
    kernel : Kernel
        Prior covariance k; K_y = k(X, X) + σ² I.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float
        σ² >= 0 (> 0 with ``eval_gradient``).
    eval_gradient : bool, optional
        Also compute the gradient w.r.t. ``np.append(kernel.theta, log noise_var)``.

    Returns
    -------
    CriterionValue
        ``criterion="evidence"``, the value in nats and the gradient of shape (p + 1,) (or None).

    Raises
    ------
    TypeError, ValueError, CholeskyError, FloatingPointError
        As :func:`explorer.regression.log_evidence`.
    """
    return _criterion_value("evidence", -1.0, regression.log_evidence(kernel, X, y, noise_var, eval_gradient))


def loo_cv(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
    """Mean negative LOO log predictive probability −L_LOO/N (R&W eq. 5.10), the K = N case of eq. (2.12).

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient
        As in :func:`negative_log_evidence`, with N >= 2.

    Returns
    -------
    CriterionValue
        ``criterion="loo"``, the value per case and the gradient as in :func:`negative_log_evidence`; the
        errors are those of :func:`explorer.regression.loo_neg_log_predictive`.
    """
    return _criterion_value("loo", 1.0, regression.loo_neg_log_predictive(kernel, X, y, noise_var, eval_gradient))


def _criterion_value(name: str, sign: float, out) -> CriterionValue:
    """``sign`` times a :mod:`explorer.regression` result, ``value`` or ``(value, gradient)``."""
    value, grad = out if isinstance(out, tuple) else (out, None)
    return CriterionValue(name, sign * value, None if grad is None else sign * grad)


def draw_folds(n: int, n_folds: int = 10, rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, ...]:
    """A random partition of range(n) into ``n_folds`` folds of sizes differing by at most one (§2.4.2).

    Parameters
    ----------
    n : int
        Number of cases N.
    n_folds : int, optional
        Number of folds K, 2 <= K <= N (K = N is leave-one-out).
    rng : Generator, int or None, optional
        Random generator or seed, passed to ``np.random.default_rng``.

    Returns
    -------
    tuple of ndarray
        K sorted index arrays of sizes N // K or N // K + 1.

    Raises
    ------
    ValueError
        If ``n_folds`` is not an integer in [2, N].
    """
    if not (isinstance(n_folds, (int, np.integer)) and 2 <= n_folds <= n):
        raise ValueError(f"`n_folds` must be an integer between 2 and N = {n}, got {n_folds!r}. "
                         "K = N is leave-one-out.")
    perm = np.random.default_rng(rng).permutation(n)
    return tuple(np.sort(fold) for fold in np.array_split(perm, n_folds))


def _check_folds(folds, n):
    folds = tuple(np.asarray(f, dtype=int) for f in folds)
    flat = np.sort(np.concatenate(folds)) if folds else np.empty(0, int)
    if len(folds) < 2 or not np.array_equal(flat, np.arange(n)):
        raise ValueError(f"`folds` must partition range({n}) into at least 2 non-empty index sets (every "
                         "case in exactly one fold); use draw_folds(n, n_folds).")
    return folds


def kfold_cv(kernel: Kernel, X, y, noise_var: float, folds, eval_gradient: bool = False) -> CriterionValue:
    r"""K-fold CV criterion R_CV = −(1/K) Σ_k log p(y_k | X, y_{−k}), eq. (2.12), without refits.

    With C_k = [K_y⁻¹]_{kk} (the block of fold k) and α = K_y⁻¹y, the predictive distribution of y_k has
    covariance C_k⁻¹ and residual y_k − μ_k = C_k⁻¹α_k (block form of R&W eq. 5.12), so
    log p_k = −½ α_kᵀC_k⁻¹α_k + ½ log|C_k| − (n_k/2) log 2π. The gradient is tr(∂K_y Σ_k M_k) with
    M_k = sym(α b_kᵀ) − ½ b_k b_kᵀ − ½ E_k C_k⁻¹ E_kᵀ, E_k = [K_y⁻¹]_{:,k}, b_k = E_k C_k⁻¹ α_k (Prop. 13).

    Parameters
    ----------
    kernel, X, y, noise_var
        As in :func:`negative_log_evidence`.
    folds : sequence of array_like of int
        At least 2 index sets that partition range(N), e.g. from :func:`draw_folds`.
    eval_gradient : bool, optional
        As in :func:`negative_log_evidence`.

    Returns
    -------
    CriterionValue
        ``criterion="kfold"``, R_CV (per fold) and the gradient of shape (p + 1,) (or None).

    Raises
    ------
    TypeError, ValueError, CholeskyError
        As :func:`explorer.regression.fit`; ValueError also if ``folds`` is not a partition of range(N)
        into at least 2 sets.
    FloatingPointError
        If the value or gradient is not finite.
    """
    X, y, noise_var = regression.check_data(kernel, X, y, noise_var, eval_gradient)
    folds = _check_folds(folds, y.size)
    post, dA = regression.condition(kernel, X, y, noise_var, eval_gradient)
    Ainv, a = regression.covariance_inverse(post), post.alpha
    total, Mtot = 0.0, np.zeros_like(Ainv) if eval_gradient else None
    for I in folds:
        LC = linalg.cholesky(Ainv[np.ix_(I, I)], lower=True)
        c = linalg.cho_solve((LC, True), a[I])                         # C_k⁻¹ α_k
        total += -0.5 * a[I] @ c + np.log(np.diag(LC)).sum() - 0.5 * I.size * _LOG_2PI
        if eval_gradient:
            E = Ainv[:, I]
            b = E @ c
            ab = np.outer(a, b)
            Mtot += 0.5 * (ab + ab.T) - 0.5 * np.outer(b, b) - 0.5 * E @ linalg.cho_solve((LC, True), E.T)
    value = regression.finite_result(-total / len(folds), "K-fold criterion")
    if not eval_gradient:
        return CriterionValue("kfold", float(value), None)
    grad = -np.tensordot(dA, Mtot, axes=([1, 2], [0, 1])) / len(folds)
    return CriterionValue("kfold", float(value), regression.finite_result(grad, "K-fold gradient"))


def asc_criterion(kernel: Kernel, X, y, noise_var: float, partitions: asc.AscPartitions,
                  variant: str = "beta-noise", entropy: str = "zero", eval_gradient: bool = False) -> CriterionValue:
    """−I of ASC (eq. 4.1) averaged over the partitions (Algorithm 2); see :func:`asc.mutual_information`.

    Parameters
    ----------
    kernel, X, y, noise_var
        As in :func:`negative_log_evidence`, with σ² > 0.
    partitions : AscPartitions
        From :func:`asc.draw_partitions` with the same N.
    variant : {"boltzmann", "beta-noise", "bayes"}, optional
        ASC variant (eq. 4.3 with β*, β = 1, eq. 4.4).
    entropy : {"zero", "prior"}, optional
        h(τ): 0 or the prior entropy (eq. 4.2).
    eval_gradient : bool, optional
        As in :func:`negative_log_evidence`.

    Returns
    -------
    CriterionValue
        ``criterion="asc-<variant>"``, −I in nats, its gradient of shape (p + 1,) (or None), the number of
        excluded partitions and the β of each partition.

    Raises
    ------
    TypeError, ValueError, SingularPartitionsError, FloatingPointError
        As :func:`asc.mutual_information`.
    """
    res = asc.mutual_information(kernel, X, y, noise_var, partitions, variant, entropy,
                                 eval_gradient=eval_gradient)
    name = "asc-" + variant
    grad = -res.gradient if eval_gradient else None
    return CriterionValue(name, -res.mutual_information, grad, res.n_excluded, res.betas)


# --------------------------------------------------------------------------- bootstrap .632 criterion


def bootstrap_632(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False, *,
                  tol: float = 1e-9, init: np.ndarray | None = None) -> CriterionValue:
    r"""Efron's .632 bootstrap estimate of the square-loss test error, as a smooth criterion.

    value = e⁻¹ ε_train + (1 − e⁻¹) ε(N) (seed 000, footnote 3), with ε_train = (1/N)‖y − K K_y⁻¹y‖² the
    training error of the posterior mean and ε(N) Efron's bootstrap error at S = N from the replica/ADATAP
    theory, eq. (45) (:func:`replica.solve_replica` with tolerance ``tol`` in double precision).

    The gradient is analytic: the ADATAP fixed point Δλ = Φ(Δλ, θ) of eqs. (54)-(55) is differentiated
    implicitly, dΔλ/dθ = (I − ∂Φ/∂Δλ)⁻¹ ∂Φ/∂θ, with ∂G_ii/∂Δλ_k = −G_ik² and ∂G/∂θ = T ∂K Tᵀ,
    T = (I + K diag Δλ)⁻¹, then pushed through eqs. (54), (56)-(59) and (45); it is exact at the fixed
    point, so its error is O(tol).

    Both terms see only the posterior mean, which is unchanged when K and σ² are scaled together: the
    criterion is constant along that ray (see :func:`optimize_hyperparameters` for how the scale is set).
    ``init`` warm-starts the fixed point with a previous Δλ.

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient
        As in :func:`negative_log_evidence`, with σ² > 0.
    tol : float, optional
        Tolerance of the replica fixed point.
    init : ndarray of shape (N,), optional
        Starting Δλ of the fixed-point iteration.

    Returns
    -------
    CriterionValue
        ``criterion="bootstrap632"``, the .632 estimate and its gradient of shape (p + 1,) (or None).

    Raises
    ------
    TypeError, ValueError, CholeskyError
        As :func:`explorer.regression.fit`; ValueError also for ``noise_var`` <= 0.
    FloatingPointError
        If the replica equations break down (NaN) or the value or gradient is not finite.
    ConvergenceError
        If the replica fixed point does not converge (from :func:`replica.solve_replica`).
    """
    return _bootstrap_632(kernel, X, y, noise_var, eval_gradient, tol, init)[0]


def _bootstrap_632(kernel, X, y, noise_var, eval_gradient, tol, init):
    """:func:`bootstrap_632` and the replica solution (for warm starts)."""
    X, y, noise_var = regression.check_data(kernel, X, y, noise_var, eval_gradient)
    if noise_var <= 0:
        raise ValueError(f"the bootstrap criterion needs `noise_var` > 0, got {noise_var!r}.")
    K, dK = (kernel(X, eval_gradient=True) if eval_gradient else (kernel(X), None))
    post = regression.fit(kernel, X, y, noise_var)
    try:
        sol = replica.solve_replica(K, y, noise_var, float(y.size), tol=tol, precision="double", init=init)
        eps_boot = replica.bootstrap_test_error(sol)
        grad_boot = None
        if eval_gradient:
            dK_q = np.concatenate([np.moveaxis(dK, 2, 0), np.zeros((1,) + K.shape)])
            grad_boot = _bootstrap_error_gradient(sol, K, dK_q)
    except ValueError as err:                                          # NaN met by scipy's finiteness checks
        raise FloatingPointError(f"the replica equations broke down at {kernel!r}, noise_var = {noise_var:.3g} "
                                 f"({err}); the signal-to-noise ratio is too extreme.") from None
    resid = noise_var * post.alpha                                      # y − K K_y⁻¹ y
    value = (1 - EFRON_WEIGHT) * float(np.mean(resid**2)) + EFRON_WEIGHT * eps_boot
    if not eval_gradient:
        return CriterionValue("bootstrap632", regression.finite_result(value, "bootstrap criterion"), None), sol
    grad = (1 - EFRON_WEIGHT) * _training_error_gradient(post, dK_q, resid) + EFRON_WEIGHT * grad_boot
    return CriterionValue("bootstrap632", regression.finite_result(value, "bootstrap criterion"),
                          regression.finite_result(grad, "bootstrap gradient")), sol


def _training_error_gradient(post, dK_q, resid):
    """∂ε_train/∂phi: r = σ² α, ∂α = −K_y⁻¹ ∂K_y α, ∂K_y/∂log σ² = σ² I (and ∂σ²/∂log σ² = σ²)."""
    s2, n = post.noise_var, resid.size
    dAa = dK_q @ post.alpha
    dAa[-1] += s2 * post.alpha
    dres = -s2 * linalg.cho_solve((post.L, True), dAa.T).T
    dres[-1] += resid
    return 2.0 * dres @ resid / n


def _bootstrap_error_gradient(sol: replica.ReplicaSolution, K, dK_q):
    r"""∂ε(N)/∂phi by implicit differentiation of the ADATAP fixed point (see :func:`bootstrap_632`).

    At the solution, eq. (45) simplifies to ε_i = −λ_i w_i with w_i = G_ii²/((H_i − G_ii²) Δλ_c(i)²),
    since γ_c − yΔλ_c = (m − y)/G_ii by eqs. (54), (56), (58) and λ_c is eq. (59); λ solves
    (G∘G − diag d) λ = (m − y)², d = H G_ii²/(H − G_ii²) (eq. 57).
    """
    G, T = _replica_G(sol, K)
    st = _ReplicaState.at(sol, G)
    dG_theta = T @ dK_q[:-1] @ T.T                                     # ∂G/∂θ = T ∂K Tᵀ
    xdot = _fixed_point_tangent(st, dG_theta)
    lam = linalg.solve(st.Mmat, st.r2, assume_a="sym")                 # eq. (57)
    mu = linalg.solve(st.Mmat, st.w, assume_a="sym")                   # adjoint of ε = −wᵀλ/N
    grad = np.empty(xdot.shape[0])
    for j, xd in enumerate(xdot):
        noise = j == xdot.shape[0] - 1
        dG = (0.0 if noise else dG_theta[j]) - (G * xd[None, :]) @ G   # total ∂G along direction j
        grad[j] = _error_derivative(st, lam, mu, dG, xd, noise)
    return grad


def _replica_G(sol, K):
    """G = (K⁻¹ + D)⁻¹ (eq. 36) and T = (I + K D)⁻¹ (G = T K), D = diag Δλ, via B = I + D^½ K D^½."""
    n = sol.n
    K = K + sol.jitter * np.eye(n)                                     # the K the solution was computed with
    rt = np.sqrt(sol.dl)
    U = linalg.cholesky(np.eye(n) + rt[:, None] * K * rt[None, :], lower=False)
    W = linalg.cho_solve((U, False), rt[:, None] * K)                  # B⁻¹ D^½ K
    G = K - (K * rt[None, :]) @ W
    return 0.5 * (G + G.T), np.eye(n) - W.T * rt[None, :]


@dataclass(frozen=True, eq=False)
class _ReplicaState:
    """The quantities of eqs. (54)-(59) at S = N that ε(N) and its derivative need (all shape (N,))."""

    sol: replica.ReplicaSolution
    G: np.ndarray
    Gd: np.ndarray
    dl_c: np.ndarray
    p: np.ndarray
    kc: np.ndarray
    inv: np.ndarray
    Q: np.ndarray
    H: np.ndarray
    m: np.ndarray
    Mmat: np.ndarray
    r2: np.ndarray
    w: np.ndarray

    @classmethod
    def at(cls, sol, G):
        Gd = np.diag(G).copy()
        dl_c = 1.0 / Gd - sol.dl                                       # eq. (54)
        p = replica.poisson_weights(1.0)                               # occupation numbers at S/N = 1
        kc = np.arange(p.size) / sol.noise_var
        inv = 1.0 / (dl_c[:, None] + kc)                               # 1/(Δλ_c + k/σ²), shape (N, k_max + 1)
        Q, H = inv @ p, inv**2 @ p
        a = Gd**2
        Mmat = G * G - np.diag(H * a / (H - a))                        # eq. (57)
        m = G @ (sol.y * sol.dl)                                       # eqs. (34), (56)
        return cls(sol, G, Gd, dl_c, p, kc, inv, Q, H, m, Mmat, (m - sol.y) ** 2, a / ((H - a) * dl_c**2))


def _fixed_point_tangent(st: _ReplicaState, dG_theta):
    """dΔλ/dphi, shape (q, N): solve (I − ∂Φ/∂Δλ) ẋ = ∂Φ/∂phi for the map Φ of eqs. (54)-(55).

    ∂Δλ_c/∂Δλ = diag(1/G_ii²) (G∘G) − I (from ∂G_ii/∂Δλ_k = −G_ik²); eq. (55) gives
    ∂Δλ/∂Δλ_c = H/Q² − 1 (written as a variance, without cancellation) and ∂Δλ/∂log σ² through k/σ².
    """
    n = st.Gd.size
    U1 = ((st.inv - st.Q[:, None]) ** 2 @ st.p) / st.Q**2
    U_s2 = -(st.inv**2 * st.kc) @ st.p / st.Q**2
    J = U1[:, None] * (st.G * st.G / st.Gd[:, None] ** 2 - np.eye(n))
    gd_theta = np.einsum("qii->qi", dG_theta)
    rhs = np.vstack([U1 * (-gd_theta / st.Gd**2), U_s2[None, :]])
    return np.linalg.solve(np.eye(n) - J, rhs.T).T


def _error_derivative(st: _ReplicaState, lam, mu, dG, xd, noise):
    """Derivative of ε(N) = −wᵀλ/N along one direction, given the total ∂G and ∂Δλ (= xd)."""
    sol, Gd, H = st.sol, st.Gd, st.H
    gdd = np.diag(dG)
    dl_cd = -gdd / Gd**2 - xd                                          # ∂ of eq. (54)
    kcd = -st.kc if noise else 0.0                                     # ∂(k/σ²)/∂log σ²
    Hd = -2.0 * (st.inv**3 * (dl_cd[:, None] + kcd)) @ st.p
    a = Gd**2
    ad = 2.0 * Gd * gdd
    dd = (-(a**2) * Hd + H**2 * ad) / (H - a) ** 2
    md = dG @ (sol.y * sol.dl) + st.G @ (sol.y * xd)
    wd = st.w * (ad / a - (Hd - ad) / (H - a) - 2.0 * dl_cd / st.dl_c)
    r2d = 2.0 * (st.m - sol.y) * md
    gdot_lam = 2.0 * (st.G * dG) @ lam
    return -(wd @ lam + mu @ (r2d - gdot_lam + dd * lam)) / sol.n


# --------------------------------------------------------------------------- criterion objects


@dataclass(frozen=True, eq=False)
class Criterion:
    """A criterion with its random parts fixed: call it as ``crit(kernel, X, y, noise_var, eval_gradient)``.

    Build it with :func:`make_criterion`. ``folds`` (K-fold) and ``partitions`` (ASC) are drawn once, so the
    function is deterministic during an optimisation. ``entropy`` is ASC's h(τ); ``tol`` the replica
    tolerance of ``bootstrap632`` (whose last Δλ warm-starts the next evaluation at the same N).
    """

    name: str
    n: int
    folds: tuple | None = None
    partitions: asc.AscPartitions | None = None
    entropy: str = "zero"
    tol: float = 1e-9
    _warm: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def label(self) -> str:
        """Readable name for tables and legends."""
        extra = "" if self.partitions is None else (
            f", h(τ) = {'0' if self.entropy == 'zero' else 'prior entropy'}, J = "
            f"{self.partitions.n_partitions}, L = {self.partitions.n_subsets}, M = {self.partitions.n_objects}")
        if self.folds is not None:
            extra = f", K = {len(self.folds)}"
        return CRITERION_LABELS[self.name] + extra

    def __call__(self, kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
        if np.shape(y)[0] != self.n:
            raise ValueError(f"criterion {self.name!r} was made for N = {self.n} cases, got {np.shape(y)[0]}. "
                             "Build it with make_criterion(name, n=len(y)).")
        if self.name == "evidence":
            return negative_log_evidence(kernel, X, y, noise_var, eval_gradient)
        if self.name == "loo":
            return loo_cv(kernel, X, y, noise_var, eval_gradient)
        if self.name == "kfold":
            return kfold_cv(kernel, X, y, noise_var, self.folds, eval_gradient)
        if self.name == "bootstrap632":
            return self._bootstrap(kernel, X, y, noise_var, eval_gradient)
        return asc_criterion(kernel, X, y, noise_var, self.partitions, _ASC_VARIANTS[self.name],
                             self.entropy, eval_gradient)

    def _bootstrap(self, kernel, X, y, noise_var, eval_gradient):
        try:
            out, sol = _bootstrap_632(kernel, X, y, noise_var, eval_gradient, self.tol, self._warm.get("dl"))
        except replica.ConvergenceError:                               # a poor warm start: start afresh
            out, sol = _bootstrap_632(kernel, X, y, noise_var, eval_gradient, self.tol, None)
        self._warm["dl"] = sol.dl
        return out


def make_criterion(name: str, n: int, *, rng: np.random.Generator | int | None = None, n_folds: int = 10,
                   n_partitions: int = 32, n_subsets: int = 2, n_objects: int = 8,
                   entropy: str = "zero", tol: float = 1e-9) -> Criterion:
    """The criterion ``name`` (one of ``CRITERIA``) for data with ``n`` cases.

    ``n_folds`` K of K-fold CV (capped at n); ``n_partitions`` J, ``n_subsets`` L, ``n_objects`` M and
    ``entropy`` h(τ) of ASC (Algorithm 2; the thesis uses J = 32, L = 2, M = 4 or 8); ``tol`` the replica
    tolerance of ``bootstrap632``. Random parts come from ``rng``.

    Parameters
    ----------
    name : str
        One of ``CRITERIA``.
    n : int
        Number of cases N, >= 3.
    rng : Generator, int or None, optional
        Seed of the folds (``"kfold"``) or partitions (ASC); unused by the other criteria.
    n_folds : int, optional
        K of K-fold CV, capped at N.
    n_partitions, n_subsets, n_objects : int, optional
        J, L and M of ASC (:func:`asc.draw_partitions`).
    entropy : {"zero", "prior"}, optional
        h(τ) of ASC.
    tol : float, optional
        Replica tolerance of ``"bootstrap632"``, in (0, 0.01).

    Returns
    -------
    Criterion
        Callable as ``crit(kernel, X, y, noise_var, eval_gradient)`` on data with N cases.

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``n`` is not an integer >= 3, ``entropy`` is unknown, ``tol`` is out of
        range, or :func:`draw_folds` / :func:`asc.draw_partitions` reject their counts.
    """
    if name not in CRITERIA:
        raise ValueError(f"unknown criterion {name!r}; choose one of {CRITERIA}.")
    if not (isinstance(n, (int, np.integer)) and n >= 3):
        raise ValueError(f"`n` must be an integer >= 3 (the number of cases), got {n!r}.")
    if entropy not in asc.ENTROPIES:
        raise ValueError(f"`entropy` must be one of {asc.ENTROPIES}, got {entropy!r}.")
    if not (0 < tol < 1e-2):
        raise ValueError(f"`tol` must be in (0, 0.01), got {tol!r}. It is the replica tolerance of "
                         "bootstrap632; the criterion is smooth to about this relative accuracy.")
    gen = np.random.default_rng(rng)
    folds = draw_folds(int(n), min(n_folds, int(n)), gen) if name == "kfold" else None
    parts = (asc.draw_partitions(int(n), n_partitions, n_subsets, n_objects, gen)
             if name in _ASC_VARIANTS else None)
    return Criterion(name=name, n=int(n), folds=folds, partitions=parts, entropy=entropy, tol=tol)


# --------------------------------------------------------------------------- optimisation


def hyperparameter_dict(kernel: Kernel, noise_var: float) -> dict:
    """Hyperparameters in natural units: variances as standard deviations (``signal_std``), ``noise_std``.

    Arrays (ARD lengthscales) become lists. Sums and products keep the ``k1.``/``k2.`` prefixes.

    Parameters
    ----------
    kernel : Kernel
        Its ``params`` are reported; every ``...signal_var`` becomes ``...signal_std``.
    noise_var : float
        σ², reported as ``noise_std`` = σ.

    Returns
    -------
    dict
        Name -> float, or list of float for an array hyperparameter.
    """
    out = {}
    for name, value in kernel.params.items():
        if name.endswith("signal_var"):
            name, value = name[: -len("signal_var")] + "signal_std", np.sqrt(value)
        out[name] = np.asarray(value).tolist() if np.ndim(value) else float(value)
    out["noise_std"] = float(np.sqrt(noise_var))
    return out


@dataclass(frozen=True, eq=False)
class StartingPoint:
    """Where :func:`optimize_hyperparameters` starts: a kernel and a noise variance.

    Attributes
    ----------
    kernel : Kernel
        The kernel with its starting hyperparameters.
    noise_var : float
        The starting noise variance σ².
    """

    kernel: Kernel
    noise_var: float


def initial_hyperparameters(kernel_name: str, X, y) -> StartingPoint:
    """A data-scaled start for :func:`optimize_hyperparameters`: kernel ``kernel_name`` and σ².

    Lengthscale = mean sample sd of the input columns, signal variance = var(y), σ² = var(y)/10, period
    (periodic kernel) = half the range of the first input column, α (rational quadratic) = 1. For the
    thesis' data (x ~ N(0, 1), var(y) ≈ 1) this is the unit start around which it draws Cauchy starts.

    Parameters
    ----------
    kernel_name : str
        A name of :func:`explorer.kernels.make_kernel`.
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)

    Returns
    -------
    StartingPoint
        ``kernel`` and ``noise_var``.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array, ``y`` is not of shape (n,), n < 2, or ``kernel_name`` is not
        a name of :func:`explorer.kernels.make_kernel`.
    """
    X, y = check_inputs(X, "X"), np.asarray(y, dtype=float)
    if X.shape[0] < 2 or y.shape != (X.shape[0],):
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 2 cases, got shapes {X.shape} "
                         f"and {y.shape}.")
    spread = X.std(axis=0, ddof=1)
    ls = float(np.mean(spread)) if np.all(spread > 0) else 1.0
    var = float(np.var(y)) if np.var(y) > 0 else 1.0
    extra = {"period": float(np.ptp(X[:, 0]) / 2) or 1.0} if str(kernel_name).lower() == "periodic" else {}
    return StartingPoint(make_kernel(kernel_name, X.shape[1], lengthscale=ls, signal_var=var, **extra), var / 10.0)


def _check_optimisation(criterion, kernel, X, y, noise_var, n_restarts, max_iter, noise_bounds):
    if not isinstance(criterion, Criterion):
        raise TypeError(f"`criterion` must be a Criterion from make_criterion(), got {type(criterion).__name__}.")
    X, y, noise_var = regression.check_data(kernel, X, y, noise_var, True)
    for name, value in (("n_restarts", n_restarts), ("max_iter", max_iter)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}.")
    lo, hi = noise_bounds
    if not (0 < lo < hi and np.isfinite(hi)):
        raise ValueError(f"`noise_bounds` must be 0 < lower < upper (variances), got {noise_bounds!r}.")
    return X, y, noise_var


class _Objective:
    """phi ↦ (criterion, gradient) for L-BFGS-B; failed evaluations return +inf and are counted."""

    def __init__(self, criterion, kernel, X, y):
        self.criterion, self.kernel, self.X, self.y = criterion, kernel, X, y
        self.n_eval, self.best = 0, (np.inf, None, None)

    def __call__(self, phi):
        self.n_eval += 1
        try:
            with np.errstate(all="ignore"):                            # non-finite results are checked below
                cv = self.criterion(self.kernel.with_theta(phi[:-1]), self.X, self.y, float(np.exp(phi[-1])),
                                    True)
        except _NUMERICAL_ERRORS:
            return np.inf, np.zeros_like(phi)
        if not (np.isfinite(cv.value) and np.all(np.isfinite(cv.gradient))):
            return np.inf, np.zeros_like(phi)
        if cv.value < self.best[0]:
            self.best = (cv.value, phi.copy(), cv)
        return cv.value, cv.gradient


def optimize_hyperparameters(criterion: Criterion, kernel: Kernel, X, y, noise_var: float = 0.1, *,
                             n_restarts: int = 16, max_iter: int = 16,
                             rng: np.random.Generator | int | None = None,
                             noise_bounds: tuple[float, float] = NOISE_BOUNDS,
                             hooks: Hooks | None = None) -> SelectionResult:
    """Minimise ``criterion`` over the kernel's free log hyperparameters and log σ² (§5.1.1).

    L-BFGS-B (memory m = 4, relative tolerance 1e-7) with the analytic gradient, ``n_restarts`` runs of at
    most ``max_iter`` iterations (thesis: 16 and 16). Run 1 starts at (kernel.theta, log noise_var), the
    others at that point plus standard-Cauchy draws (clipped to the bounds), as the thesis draws its starts
    from a standard Cauchy distribution. The best value over all runs wins; a run in which no evaluation
    succeeded counts as failed.

    ``bootstrap632`` is constant when the signal and noise variances are scaled together; its optimum is
    moved along that ray to the scale c = yᵀK_y⁻¹y/N that maximises the evidence (exact, one solve), when
    the kernel has a free top-level ``signal_var``. ``hooks``: ``check`` before and ``report`` after every
    restart (:class:`~explorer.progress.Cancelled` counts restarts).

    Parameters
    ----------
    criterion : Criterion
        From :func:`make_criterion`, for N = len(y) cases.
    kernel : Kernel
        Its current hyperparameters start run 1; its bounds bound the search.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float, optional
        Starting σ² > 0 (clipped to ``noise_bounds``).
    n_restarts : int, optional
        Number of L-BFGS-B runs, >= 1.
    max_iter : int, optional
        Iterations per run, >= 1.
    rng : Generator, int or None, optional
        Seed of the Cauchy starts.
    noise_bounds : (float, float), optional
        0 < lower < upper bounds of σ².
    hooks : Hooks, optional
        Progress and stop hooks.

    Returns
    -------
    SelectionResult
        The best point over all runs, without ``test``.

    Raises
    ------
    TypeError
        If ``criterion`` is not a :class:`Criterion` or ``kernel`` not a Kernel.
    ValueError
        If the data or ``noise_var`` are invalid, ``n_restarts`` or ``max_iter`` is not an integer >= 1,
        or ``noise_bounds`` is not 0 < lower < upper.
    numpy.linalg.LinAlgError
        If the criterion could not be evaluated at any point of any run.
    Cancelled
        If ``hooks`` asks to stop.
    """
    X, y, noise_var = _check_optimisation(criterion, kernel, X, y, noise_var, n_restarts, max_iter, noise_bounds)
    gen = np.random.default_rng(rng)
    bounds = np.vstack([kernel.bounds, np.log(noise_bounds)])
    start = np.clip(np.append(kernel.theta, np.log(noise_var)), bounds[:, 0], bounds[:, 1])
    best, n_failed, n_eval = None, 0, 0
    hooks = hooks or NO_HOOKS
    for k in range(n_restarts):
        hooks.check(k, n_restarts, "restarts")
        phi0 = start if k == 0 else np.clip(start + gen.standard_cauchy(start.size), bounds[:, 0], bounds[:, 1])
        objective = _Objective(criterion, kernel, X, y)
        res = optimize.minimize(objective, phi0, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": max_iter, "maxcor": 4, "ftol": 1e-7})
        n_eval += objective.n_eval
        hooks.report((k + 1) / n_restarts, f"restart {k + 1}/{n_restarts}")
        if objective.best[1] is None:
            n_failed += 1
            continue
        if best is None or objective.best[0] < best[0][0]:
            best = (objective.best, bool(res.success), int(res.nit))
    if best is None:
        raise np.linalg.LinAlgError(
            f"criterion {criterion.name!r} could not be evaluated at any point of {n_restarts} optimisation "
            "runs (numerically singular matrices). Standardize the data, narrow the bounds or use fewer "
            "ASC objects.")
    (value, phi, cv), converged, n_iter = best
    kern, s2 = kernel.with_theta(phi[:-1]), float(np.exp(phi[-1]))
    if criterion.name == "bootstrap632":
        kern, s2 = _evidence_scale(kern, X, y, s2, bounds)
    return SelectionResult(criterion=criterion.name, kernel=kern, noise_var=s2,
                           hyperparameters=hyperparameter_dict(kern, s2), value=float(value),
                           theta=np.append(kern.theta, np.log(s2)), n_restarts=n_restarts, n_failed=n_failed,
                           converged=converged, n_iter=n_iter, n_evaluations=n_eval, n_excluded=cv.n_excluded)


def _evidence_scale(kernel, X, y, noise_var, bounds):
    """Scale K and σ² by c = yᵀK_y⁻¹y/N, the evidence-maximising factor along the ray (K, σ²) → c (K, σ²)."""
    names = kernel.hyperparameter_names
    if "signal_var" not in names:
        return kernel, noise_var
    c = float(y @ regression.fit(kernel, X, y, noise_var).alpha / y.size)
    phi = np.append(kernel.theta, np.log(noise_var))
    i = names.index("signal_var")
    shift = np.log(c)
    shift = np.clip(shift, max(bounds[i, 0] - phi[i], bounds[-1, 0] - phi[-1]),
                    min(bounds[i, 1] - phi[i], bounds[-1, 1] - phi[-1]))
    phi[[i, -1]] += shift
    return kernel.with_theta(phi[:-1]), float(np.exp(phi[-1]))


def test_error(kernel: Kernel, noise_var: float, X, y, X_test, y_test) -> TestError:
    """SMSE ‖y* − f̄‖²/(N* var(y*)) (eq. 5.1, sample variance ddof=0) and MSLL (R&W eq. 2.34 and §2.5).

    MSLL is the mean over test cases of −log p(y*_i | D) + log N(y*_i | mean(y), var(y)), the predictive
    density including the noise σ², standardized by the trivial Gaussian fitted to the training targets.

    Parameters
    ----------
    kernel : Kernel
        Covariance of the selected model.
    noise_var : float
        σ² of the selected model, >= 0.
    X : array_like of shape (N, d)
        Training inputs.
    y : array_like of shape (N,)
        Training targets.
    X_test : array_like of shape (N*, d)
        Test inputs.
    y_test : array_like of shape (N*,)
        Test targets, N* >= 2.

    Returns
    -------
    TestError
        ``smse`` and ``msll``.

    Raises
    ------
    ValueError
        If the training data are invalid (as :func:`explorer.regression.fit`), ``X_test`` is not a
        finite 2-D array with d columns, or ``y_test`` is not of shape (N*,) with N* >= 2.
    """
    post = regression.fit(kernel, X, y, noise_var)
    X_test, y_test = check_inputs(X_test, "X_test"), np.asarray(y_test, dtype=float)
    if y_test.shape != (X_test.shape[0],) or y_test.size < 2:
        raise ValueError(f"`y_test` must be 1-D with one target per row of X_test (at least 2), got shape "
                         f"{y_test.shape} for X_test of shape {X_test.shape}.")
    mean, var = post.predict(X_test, return_var=True)
    var = var + noise_var
    smse = np.mean((y_test - mean) ** 2) / np.var(y_test)                # eq. (5.1)
    nlp = 0.5 * (_LOG_2PI + np.log(var)) + 0.5 * (y_test - mean) ** 2 / var
    m0, v0 = np.mean(post.y), np.var(post.y)
    nlp0 = 0.5 * (_LOG_2PI + np.log(v0)) + 0.5 * (y_test - m0) ** 2 / v0
    return TestError(smse=float(smse), msll=float(np.mean(nlp - nlp0)))


def select_hyperparameters(X, y, kernel: Kernel, criteria: Sequence[str] = ("evidence", "loo"), *,
                           noise_var: float = 0.1, rng: np.random.Generator | int | None = None,
                           n_restarts: int = 16, max_iter: int = 16, X_test=None, y_test=None,
                           hooks: Hooks | None = None,
                           **criterion_options) -> tuple[SelectionResult, ...]:
    """Optimise ``kernel`` under each of ``criteria``; with test data also their :class:`TestError`.

    ``criterion_options`` go to :func:`make_criterion` (``n_folds``, ``n_partitions``, ``n_subsets``,
    ``n_objects``, ``entropy``, ``tol``). One generator drives every random part, in the order given.
    ``hooks``: ``check`` between criteria and restarts (:class:`~explorer.progress.Cancelled` counts
    criteria); ``publish`` receives the tuple of results so far after every criterion.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training inputs.
    y : ndarray of shape (n,)
        Training targets.
    kernel : Kernel
        The covariance function whose free log hyperparameters are optimised; its current values start
        the first run.
    criteria : sequence of str
        Names from ``CRITERIA``, optimised one after the other.
    noise_var : float
        Starting noise variance σ².
    rng : Generator, int or None
        Seed of the criteria's random parts (folds, ASC partitions) and of the Cauchy restarts.
    n_restarts, max_iter : int
        L-BFGS-B runs per criterion and iterations per run (§5.1.1; the thesis uses 16 and 16).
    X_test : ndarray of shape (n_test, d), optional
        Test inputs; with ``y_test`` fills in ``SelectionResult.test``.
    y_test : ndarray of shape (n_test,), optional
        Test targets.
    hooks : Hooks, optional
        Progress, stop and partial-result hooks.
    **criterion_options
        Passed to :func:`make_criterion`.

    Returns
    -------
    tuple of SelectionResult
        One result per criterion, in the order of ``criteria``.

    Raises
    ------
    ValueError
        If a criterion is unknown or none is given, only one of ``X_test``, ``y_test`` is given, or the
        data, ``noise_var``, ``n_restarts``, ``max_iter`` or ``criterion_options`` are invalid.
    numpy.linalg.LinAlgError
        If a criterion cannot be evaluated at any point of its optimisation runs.
    Cancelled
        If ``hooks`` asks to stop.

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.kernels import make_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (30, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(30)
    >>> (res,) = select_hyperparameters(X, y, make_kernel("se", 1), ["evidence"], rng=0, n_restarts=2)
    >>> res.converged, {k: round(v, 2) for k, v in res.hyperparameters.items()}
    (True, {'lengthscale': 1.57, 'signal_std': 1.04, 'noise_std': 0.08})
    """
    y = np.asarray(y, dtype=float)
    unknown = [c for c in criteria if c not in CRITERIA]
    if unknown or not criteria:
        raise ValueError(f"unknown criteria {unknown}; choose from {CRITERIA}.")
    if (X_test is None) != (y_test is None):
        raise ValueError("give both `X_test` and `y_test`, or neither.")
    gen = np.random.default_rng(rng)
    hooks = hooks or NO_HOOKS
    out = []
    for j, name in enumerate(criteria):
        hooks.check(j, len(criteria), "criteria")
        label = f"optimising {name} ({j + 1}/{len(criteria)}, {n_restarts} restarts)"
        hooks.report(j / len(criteria), label)
        crit = make_criterion(name, y.size, rng=gen, **criterion_options)
        res = optimize_hyperparameters(crit, kernel, X, y, noise_var, n_restarts=n_restarts, max_iter=max_iter,
                                       rng=gen, hooks=hooks.sub(j / len(criteria), 1 / len(criteria), label,
                                                                count=(j, len(criteria), "criteria")))
        if X_test is not None:
            res = replace(res, test=test_error(res.kernel, res.noise_var, X, y, X_test, y_test))
        out.append(res)
        hooks.publish(tuple(out))
    return tuple(out)


# --------------------------------------------------------------------------- rankings and curves


def _ranks(values: dict) -> dict:
    """Rank 1 = lowest value among the finite values (ties share the lower rank); a NaN or infinite value is
    not ranked (None): a criterion that could not be evaluated says nothing about the model."""
    v = {k: float(x) for k, x in values.items()}
    finite = np.array([x for x in v.values() if np.isfinite(x)])
    return {k: int(np.sum(finite < x) + 1) if np.isfinite(x) else None for k, x in v.items()}


def _safe_value(criterion, kernel, X, y, noise_var) -> float:
    """The criterion's value, NaN where it cannot be evaluated (singular matrices, non-convergence)."""
    try:
        with np.errstate(all="ignore"):
            value = float(criterion(kernel, X, y, noise_var).value)
    except _NUMERICAL_ERRORS:
        return np.nan
    return value if np.isfinite(value) else np.nan


def rank_functional_forms(X, y, kernel_names: Sequence[str] = ("se", "rq", "exponential", "periodic"), *,
                          select_by: str = "loo", rank_by: Sequence[str] = ("evidence", "loo", "asc-bayes"),
                          rng: np.random.Generator | int | None = None, n_restarts: int = 16,
                          max_iter: int = 16, X_test=None, y_test=None, hooks: Hooks | None = None,
                          **criterion_options) -> tuple[RankingRow, ...]:
    """Functional-form selection (§5.3, eq. 2.10): optimise each kernel by ``select_by`` (R_2), then rank the
    selected models by each criterion of ``rank_by`` (R_3), and by test SMSE when test data are given.

    Each optimisation starts from :func:`initial_hyperparameters`. The same ranking criterion
    objects (same folds, same ASC partitions) score every functional form. ``hooks``: ``check`` between
    functional forms and restarts (:class:`~explorer.progress.Cancelled` counts functional forms);
    ``publish`` receives the rows so far, without ranks (empty ``ranks``), after every functional form.

    Parameters
    ----------
    X, y, hooks
        As in :func:`select_hyperparameters`.
    kernel_names : sequence of str, optional
        Functional forms, names of :func:`explorer.kernels.make_kernel`.
    select_by : str, optional
        Criterion (of ``CRITERIA``) that selects each form's hyperparameters.
    rank_by : sequence of str, optional
        Criteria that score the selected models; a value that cannot be evaluated is NaN and is not ranked
        (rank None; the finite values are ranked 1, 2, ... among themselves).
    rng : Generator, int or None, optional
        One generator for the criteria's random parts and the Cauchy restarts.
    n_restarts, max_iter : int, optional
        L-BFGS-B runs per form and iterations per run.
    X_test, y_test : array_like of shapes (N*, d) and (N*,), optional
        Test data; they add the ``"smse"`` ranking and ``RankingRow.test``.
    **criterion_options
        Passed to :func:`make_criterion` (for the selecting and the ranking criteria).

    Returns
    -------
    tuple of RankingRow
        One row per functional form, in the order of ``kernel_names``.

    Raises
    ------
    ValueError, TypeError, numpy.linalg.LinAlgError
        As :func:`make_criterion`, :func:`initial_hyperparameters` and :func:`optimize_hyperparameters`.
    Cancelled
        If ``hooks`` asks to stop.
    """
    X, y = check_inputs(X, "X"), np.asarray(y, dtype=float)
    gen = np.random.default_rng(rng)
    hooks = hooks or NO_HOOKS
    selector = make_criterion(select_by, y.size, rng=gen, **criterion_options)
    rankers = {name: make_criterion(name, y.size, rng=gen, **criterion_options) for name in rank_by}
    selections, values, tests = {}, {}, {}
    n = len(kernel_names)
    for j, kname in enumerate(kernel_names):
        hooks.check(j, n, "functional forms")
        label = f"{kname}: optimising {select_by} ({j + 1}/{n})"
        hooks.report(j / n, label)
        start = initial_hyperparameters(kname, X, y)
        sel = optimize_hyperparameters(selector, start.kernel, X, y, start.noise_var, n_restarts=n_restarts,
                                       max_iter=max_iter, rng=gen,
                                       hooks=hooks.sub(j / n, 1 / n, label, count=(j, n, "functional forms")))
        selections[kname] = sel
        values[kname] = {c: _safe_value(r, sel.kernel, X, y, sel.noise_var) for c, r in rankers.items()}
        if X_test is not None:
            tests[kname] = test_error(sel.kernel, sel.noise_var, X, y, X_test, y_test)
            values[kname]["smse"] = tests[kname].smse
        hooks.publish(tuple(RankingRow(k, selections[k], values[k], {}, tests.get(k)) for k in selections))
    keys = list(rank_by) + (["smse"] if X_test is not None else [])
    ranks = {c: _ranks({k: values[k][c] for k in kernel_names}) for c in keys}
    return tuple(RankingRow(k, selections[k], values[k], {c: ranks[c][k] for c in keys}, tests.get(k))
                 for k in kernel_names)


_ALIASES = {"signal_std": "signal_var", "noise_std": "noise_var"}


def criterion_curve(criterion: Criterion, kernel: Kernel, X, y, noise_var: float, parameter: str,
                    grid, *, hooks: Hooks | None = None) -> CriterionCurve:
    """``criterion`` at each ``grid`` value of one hyperparameter, the others fixed (Fig. 5.3-5.5).

    ``parameter`` is one of ``kernel.hyperparameter_names``, ``"noise_var"``, or the standard deviations
    ``"signal_std"`` / ``"noise_std"`` (then ``grid`` holds standard deviations). ``grid`` in natural units.
    ``hooks``: ``check`` before and ``report`` after every grid value.

    Parameters
    ----------
    criterion : Criterion
        From :func:`make_criterion`.
    kernel : Kernel
        Fixes every hyperparameter but ``parameter``.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float
        σ², unless ``parameter`` is the noise.
    parameter : str
        The hyperparameter swept.
    grid : array_like of shape (n_grid,)
        Positive, finite values of ``parameter``.
    hooks : Hooks, optional
        Progress and stop hooks.

    Returns
    -------
    CriterionCurve
        ``values`` of shape (n_grid,), NaN where the criterion could not be evaluated, and ``best``.

    Raises
    ------
    ValueError
        If ``parameter`` names neither a hyperparameter of ``kernel`` (``"signal_std"`` stands for
        ``signal_var``) nor the noise, or ``grid`` is not a non-empty 1-D array of positive values.
    Cancelled
        If ``hooks`` asks to stop.
    """
    grid = np.asarray(grid, dtype=float)
    names = kernel.hyperparameter_names
    target = _ALIASES.get(parameter, parameter)
    if target != "noise_var" and target not in names:
        raise ValueError(f"`parameter` must be one of {names + ('noise_var', 'signal_std', 'noise_std')}, "
                         f"got {parameter!r}.")
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError(f"`grid` must be a non-empty 1-D array of positive values, got {grid!r}.")
    natural = grid**2 if parameter in _ALIASES else grid
    values = np.empty(grid.size)
    hooks = hooks or NO_HOOKS
    for k, v in enumerate(natural):
        hooks.check(k, grid.size, "grid values")
        if target == "noise_var":
            kern, s2 = kernel, float(v)
        else:
            theta = kernel.theta.copy()
            theta[names.index(target)] = np.log(v)
            kern, s2 = kernel.with_theta(theta), noise_var
        values[k] = _safe_value(criterion, kern, X, y, s2)
        hooks.report((k + 1) / grid.size, f"{k + 1}/{grid.size} grid values")
    ok = np.isfinite(values)
    best = float(grid[np.flatnonzero(ok)[np.argmin(values[ok])]]) if ok.any() else np.nan
    return CriterionCurve(criterion=criterion.name, parameter=parameter, grid=grid, values=values, best=best)
