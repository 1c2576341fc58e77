r"""Efron's .632 bootstrap estimate of the test error as a smooth criterion, from the replica theory.

value = e⁻¹ ε_train + (1 − e⁻¹) ε(N) ([MO03] footnote 3) with ε(N) from the replica/ADATAP theory ([MO03]
eq. 45); its gradient by implicit differentiation of the fixed point, eqs. (54)-(59) of [MO03].

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from explorer import regression
from explorer.bootstrap import replica
from explorer.kernels import Kernel
from explorer.model_selection.evidence import CriterionValue

__all__ = ["EFRON_WEIGHT", "bootstrap_632", "bootstrap_632_and_solution"]


EFRON_WEIGHT = 1.0 - np.exp(-1.0)
"""Weight 1 − e⁻¹ ≈ 0.632 of ε(N) in Efron's .632 estimate ([MO03] footnote 3 rounds it to 0.632)."""


def bootstrap_632(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False, *,
                  tol: float = 1e-9, init: np.ndarray | None = None) -> CriterionValue:
    r"""Efron's .632 bootstrap estimate of the square-loss test error, as a smooth criterion.

    value = e⁻¹ ε_train + (1 − e⁻¹) ε(N) ([MO03], footnote 3), with ε_train = (1/N)‖y − K K_y⁻¹y‖² the
    training error of the posterior mean and ε(N) Efron's bootstrap error at S = N from the replica/ADATAP
    theory, eq. (45) (:func:`replica.solve_replica` with tolerance ``tol`` in double precision).

    The gradient is analytic: the ADATAP fixed point Δλ = Φ(Δλ, θ) of eqs. (54)-(55) is differentiated
    implicitly, dΔλ/dθ = (I − ∂Φ/∂Δλ)⁻¹ ∂Φ/∂θ, with ∂G_ii/∂Δλ_k = −G_ik² and ∂G/∂θ = T ∂K Tᵀ,
    T = (I + K diag Δλ)⁻¹, then pushed through eqs. (54), (56)-(59) and (45); it is exact at the fixed
    point, so its error is O(tol).

    Both terms see only the posterior mean, which is unchanged when K and σ² are scaled together: the
    criterion is constant along that ray (see :func:`~explorer.model_selection.optimisation.optimize_hyperparameters` for how the scale is set).
    ``init`` warm-starts the fixed point with a previous Δλ.

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`, with σ² > 0.
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
    return bootstrap_632_and_solution(kernel, X, y, noise_var, eval_gradient, tol, init)[0]


def bootstrap_632_and_solution(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool, tol: float,
                               init: np.ndarray | None) -> tuple[CriterionValue, replica.ReplicaSolution]:
    """:func:`bootstrap_632` and the replica solution at S = N, whose Δλ warm-starts the next evaluation.

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient, tol, init
        As in :func:`bootstrap_632`.

    Returns
    -------
    (CriterionValue, ReplicaSolution)
        The criterion and the solution of eqs. (54)-(55) of [MO03] it was computed from.
    """
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
