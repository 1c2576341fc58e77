"""Variational-Gaussian (VG) approximation of the replica posterior, GP regression ([MO03], Fig. 1).

[MO03] shows a "variational Gaussian" learning curve next to ADATAP but prints no formulas; this module
implements the derivation in ``docs/derivations/vg_mf.md`` §1 (checked there and in the tests). The replica
posterior, eq. (8), is approximated by a replica-symmetric Gaussian: every replica has mean m, replicas a, b
have covariance δ_ab V + W. The O(n) term of the variational free energy,

    F₁ = ½[tr J(V + W + m mᵀ) − N − log det(JV) − tr(V⁻¹W)]
         + ν Σ_i [½ log(1 + V_ii/σ²) + ((m_i − y_i)² + W_ii)/(2(σ² + V_ii))],      J = K⁻¹, ν = S/N,

is made stationary (it is linear in W, so the stationary point is a saddle, not a minimum). Its
stationarity conditions are ADATAP's Gaussian algebra (eqs. 33-36) with a different site update:

    (VG-1)  Δλ_i = ν/(σ² + G_ii),  G = (K⁻¹ + diag Δλ)⁻¹ = V     (eq. 36)
    (VG-2)  γ_i = y_i Δλ_i,  m = G γ                              (eq. 34)
    (VG-3)  λ_i = −a_i (r_i + w_i),  a_i = ν/(σ² + G_ii)²,  r_i = (m_i − y_i)²,  w = diag W,  W = −G diag(λ) G.

Only the k = 1 term of the Poisson series enters: −log L_i (eq. 13) is linear in Π_a e^(−h(f_i^a)).
The cavity of site i (marginal of the Gaussian divided by its site, as for ADATAP's eq. 54) gives ε(S) by
eq. (45). Symbols in code follow ``replica``: ``dl`` = Δλ, ``lam`` = λ, ``dl_c``, ``lam_c``, ``gam_c``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.replica import (
    BootstrapSize,
    CavityMoments,
    ConvergenceError,
    cavity_test_errors,
    check_replica_inputs,
    warm_started,
)
from explorer.operators import dense_matrix_of
from explorer.operators.dense import G_diag, G_full, positive_definite_solve, with_jitter
from explorer.validation import sample_sizes

__all__ = [
    "VGSolution",
    "solve_variational",
    "vg_learning_curve",
    "vg_per_input_error",
    "vg_test_error",
]


@dataclass(frozen=True)
class VGSolution(BootstrapSize, CavityMoments):
    """Variational-Gaussian parameters of the replica model at one bootstrap size S (``docs/derivations/vg_mf.md`` §1).

    All arrays have shape (N,). Site parameters: ``dl`` = Δλ (VG-1), ``gam`` = γ = y Δλ (VG-2),
    ``lam`` = λ (VG-3). Moments: ``m`` the bootstrap mean of the predictor at the training inputs (VG-2),
    ``G_diag`` = V_ii the mean posterior variance, ``w`` = W_ii the bootstrap variance of the predictor,
    so Q_ii = w + m² (eq. 35, 41). Cavity of each site (as ADATAP's eq. 54): ``dl_c`` = 1/G_ii − Δλ,
    ``lam_c`` = −w/G_ii² − λ, ``gam_c`` = m/G_ii − γ. ``residual`` is the largest relative change of Δλ
    in the last iteration; ``jitter`` what was added to K's diagonal (0 if nothing).
    """

    S: float
    noise_var: float
    y: np.ndarray
    dl: np.ndarray
    gam: np.ndarray
    lam: np.ndarray
    m: np.ndarray
    G_diag: np.ndarray
    w: np.ndarray
    dl_c: np.ndarray
    gam_c: np.ndarray
    lam_c: np.ndarray
    converged: bool
    n_iter: int
    residual: float
    tol: float
    jitter: float = 0.0
    method: str = "variational"


# ---------------------------------------------------------------------------------------------
# the fixed point (VG-1)
# ---------------------------------------------------------------------------------------------


def _vg_step(K: np.ndarray, v: float, noise_var: float):
    """x = log Δλ ↦ log(ν/(σ² + G_ii)), (VG-1); G_ii from a Cholesky factor of I + D^½ K D^½."""

    def step(x: np.ndarray) -> np.ndarray:
        return np.log(v / (noise_var + G_diag(K, np.exp(x))))

    return step


def _iterate(step, x: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, int, float, bool]:
    """Plain iteration x ← step(x); returns (x, n_iter, residual = max |Δx|, converged).

    The map Δλ ↦ ν/(σ² + G_ii(Δλ)) of (VG-1) is monotone (G_ii decreases as any Δλ_j grows) and bounded
    by ν/σ². From the default start Δλ⁰_i = ν/(σ² + K_ii) the first step cannot decrease Δλ (G_ii ≤ K_ii),
    so the iterates increase monotonically and converge (``docs/derivations/vg_mf.md`` §1: plain iteration converges).
    """
    residual = np.inf
    for it in range(1, max_iter + 1):
        new = step(x)
        residual = float(np.max(np.abs(new - x)))
        x = new
        if residual < tol:
            return x, it, residual, True
    return x, max_iter, residual, False


# ---------------------------------------------------------------------------------------------
# closing the equations: (VG-2), (VG-3) and the cavities
# ---------------------------------------------------------------------------------------------


def _solve_w(G: np.ndarray, a: np.ndarray, r: np.ndarray) -> np.ndarray:
    """w from (VG-3): (I − (G∘G) diag a) w = (G∘G)(a ∘ r), by a Cholesky solve of a symmetric system.

    With M = diag(√a)(G∘G)diag(√a) (positive semi-definite, Schur product theorem) and z = √a ∘ w the
    system is (I − M) z = M t, t = √a ∘ r, i.e. z = (I − M)⁻¹ t − t: one factorisation of I − M, no
    inverse of G∘G.

    I − M is positive definite when a_i = Δλ_i/(σ² + G_ii) (= ν/(σ² + G_ii)² at the fixed point (VG-1)):
    M = X∘Y with X = diag(s) G diag(s), s_i = (σ² + G_ii)^(−½), and Y = diag(√Δλ) G diag(√Δλ) = I − B⁻¹
    (B = I + D^½ K D^½). Schur's bound λ_max(X∘Y) ≤ max_i X_ii · λ_max(Y) and X_ii = G_ii/(σ² + G_ii) < 1,
    λ_max(Y) < 1 give λ_max(M) < 1. So the solution is unique and, by its Neumann series of non-negative
    terms, w ≥ 0 and −λ_c(i) = Σ_{j≠i} G_ij² a_j (r_j + w_j)/G_ii² ≥ 0: the cavity variance is never negative.
    """
    sa = np.sqrt(a)
    A = -(G * G) * sa[:, None] * sa[None, :]
    A[np.diag_indices_from(A)] += 1.0
    t = sa * r
    try:
        z = positive_definite_solve(A, t) - t
    except np.linalg.LinAlgError as err:
        raise FloatingPointError("I − diag(√a)(G∘G)diag(√a) of (VG-3) is not positive definite: "
                                 "the VG between-replica covariance W has no positive solution") from err
    return z / sa


def _close(K, y, noise_var, S, dl, **meta) -> VGSolution:
    """Given Δλ, compute G (eq. 36), m (VG-2), w and λ (VG-3) and the cavities of every site."""
    G = G_full(K, dl)
    G_diag = np.diag(G).copy()
    gam = y * dl  # (VG-2)
    m = G @ gam  # (VG-2), eq. (34)
    # (VG-3): a_i = ν/(σ² + G_ii)², written as Δλ_i/(σ² + G_ii) — equal at the fixed point (VG-1), and this
    # form keeps (VG-3) uniquely solvable at an unconverged iterate too (see _solve_w)
    a = dl / (noise_var + G_diag)
    r = (m - y) ** 2
    w = _solve_w(G, a, r)  # (VG-3)
    lam = -a * (r + w)  # (VG-3)
    dl_c = 1.0 / G_diag - dl  # cavity: marginal precision minus the site's (cf. eq. 54)
    lam_c = -w / G_diag**2 - lam
    gam_c = m / G_diag - gam
    sol = VGSolution(S=S, noise_var=noise_var, y=y, dl=dl, gam=gam, lam=lam, m=m, G_diag=G_diag, w=w,
                     dl_c=dl_c, gam_c=gam_c, lam_c=lam_c, **meta)
    for name in ("dl_c", "gam_c", "lam_c", "m", "w"):
        if not np.all(np.isfinite(getattr(sol, name))):
            raise FloatingPointError(f"The VG solution has non-finite {name}; K may be degenerate.")
    return sol


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------


def solve_variational(
    K: np.ndarray,
    y: np.ndarray,
    noise_var: float,
    S: float,
    *,
    tol: float = 1e-3,
    max_iter: int = 500,
    init: VGSolution | np.ndarray | None = None,
) -> VGSolution:
    """Solve the variational-Gaussian equations (VG-1)-(VG-3) of ``docs/derivations/vg_mf.md`` for GP regression at size S.

    Parameters
    ----------
    K, y, noise_var, S, tol
        As in :func:`explorer.bootstrap.replica.solve_replica`: kernel matrix of shape (N, N), targets of
        shape (N,), noise variance σ², mean bootstrap sample size and the relative tolerance on Δλ.
    max_iter : int
        Largest number of iterations of (VG-1).
    init : VGSolution or ndarray of shape (N,), optional
        Warm start: a solution at a nearby S (its Δλ is rescaled by the ratio of the S) or Δλ itself.
        Default Δλ_i = ν/(σ² + K_ii), the first iterate from G = K.

    Returns
    -------
    VGSolution

    Raises
    ------
    ConvergenceError
        If (VG-1) does not reach ``tol`` in ``max_iter`` steps or (VG-3) has no solution; ``.last`` is the
        last iterate (None if not even that can be formed).
    IndefiniteKernelError
        If K is not positive semi-definite even with the largest jitter of ``replica.JITTER_LADDER``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.1)
    >>> sol = solve_variational(K, np.sin(6 * X[:, 0]), 0.01, 20.0)
    >>> sol.converged, vg_test_error(sol) > 0
    (True, True)
    """
    K = dense_matrix_of(K, "the variational-Gaussian approximation")
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    if not (0 < tol < 1):
        raise ValueError(f"`tol` must be in (0, 1), got {tol}. It is the relative accuracy of Δλ.")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"`max_iter` must be a positive integer, got {max_iter}.")
    x0 = np.log(_start_dl(K, noise_var, S, init))
    return with_jitter(K, lambda K_j, jitter: _solve(K_j, y, noise_var, S, tol, int(max_iter), x0, jitter))


def _solve(K, y, noise_var, S, tol, max_iter, x0, jitter) -> VGSolution:
    """solve_variational for validated inputs and one jitter level."""
    v = S / y.shape[0]
    x, n_iter, residual, converged = _iterate(_vg_step(K, v, noise_var), x0, tol, max_iter)
    meta = {"n_iter": n_iter, "residual": residual, "tol": tol, "jitter": jitter}
    try:
        sol = _close(K, y, noise_var, S, np.exp(x), converged=converged, **meta)
    except FloatingPointError as err:
        raise ConvergenceError(f"VG broke down at S/N = {v:g}: {err}", None) from err
    if not converged:
        raise ConvergenceError(
            f"VG iteration did not converge at S/N = {v:g}: relative change {residual:.2e} > tol {tol:.1e} "
            f"after {n_iter} iterations. Raise max_iter or tol.", sol)
    return sol


def _start_dl(K: np.ndarray, noise_var: float, S: float, init) -> np.ndarray:
    """Start Δλ: ν/(σ² + K_ii), a warm start rescaled by S/S_init, or a given positive array."""
    n = K.shape[0]
    if init is None:
        return (S / n) / (noise_var + np.diag(K))
    if isinstance(init, VGSolution):
        if init.n != n:
            raise ValueError(f"`init` is a solution for N = {init.n} inputs, but K has N = {n}.")
        return init.dl * (S / init.S)  # Δλ ∝ ν at fixed G
    init = np.asarray(init, dtype=float)
    if init.shape != (n,) or not np.all(np.isfinite(init)) or np.any(init <= 0):
        raise ValueError(f"`init` must be a positive finite array of shape ({n},) or a VGSolution, "
                         f"got shape {init.shape}.")
    return init


def vg_learning_curve(K: np.ndarray, y: np.ndarray, noise_var: float, S_values: Sequence[float],
                      **options) -> list[VGSolution]:
    """VG solutions along a grid of S (solved in ascending order), each warm-started from its neighbour.

    Parameters
    ----------
    K, y, noise_var
        As in ``solve_variational``.
    S_values : sequence of float
        Bootstrap sizes; the result is in the order given.
    **options
        ``tol``, ``max_iter`` of ``solve_variational``.

    Returns
    -------
    list of VGSolution, one per entry of ``S_values``.

    Raises
    ------
    ValueError
        If ``S_values`` is empty or not 1-D, or as ``solve_variational`` for K, y, σ², S or an option.
    ConvergenceError
        If the solve at one value of S fails (as ``solve_variational``).
    """
    K = dense_matrix_of(K, "the variational-Gaussian approximation")
    S_arr = sample_sizes(S_values)
    return warm_started(lambda S, init: solve_variational(K, y, noise_var, S, init=init, **options), S_arr)


def vg_per_input_error(sol: VGSolution) -> np.ndarray:
    """ε_i of eq. (45) with VG's cavity: (γ_c − y Δλ_c)²/Δλ_c² − λ_c/Δλ_c².

    Parameters
    ----------
    sol : VGSolution
        The variational solution at S.

    Returns
    -------
    ndarray of shape (N,)
        The expected square error at every training input over samples without it.
    """
    return cavity_test_errors(sol)


def vg_test_error(sol: VGSolution) -> float:
    """Efron's bootstrap square-loss test error ε(S) under VG: the mean of eq. (45) over the inputs.

    Parameters
    ----------
    sol : VGSolution
        As in :func:`vg_per_input_error`.

    Returns
    -------
    float
        ε(S), the mean of :func:`vg_per_input_error`.
    """

    return float(np.mean(vg_per_input_error(sol)))
