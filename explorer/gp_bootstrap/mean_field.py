"""Mean-field (MF) approximation of the replica posterior, GP regression ([MO03], Fig. 1).

[MO03] shows a "mean field" learning curve next to ADATAP but prints no formulas; this module implements
``docs/derivations/vg_mf.md`` §2 (checked there and in the tests). The replica posterior, eq. (8), is
approximated by a density factorised over the data points, q = Π_i q_i(f_i^1, ..., f_i^n). The optimal
q_i is the exact local likelihood L_i (eq. 13) times a Gaussian with precision J_ii per replica and the
common linear term θ_i = −Σ_{j≠i} J_ij m_j (J = K⁻¹). As n → 0 its mixture weights over the occupation
number k of site i tend to p_k = e^(−ν) ν^k/k! (eq. 11), and with A_ik = J_ii + k/σ²

    a_i = Σ_k p_k / A_ik,   b_i = y_i Σ_k p_k (k/σ²)/A_ik,   (I + diag(a)(J − D_J)) m = b,
    θ = −(J − D_J) m,      D_J = diag(J_ii).

The cavity of site i is the prior conditional of f_i given f_j = m_j (j ≠ i): Δλ_c = J_ii, γ_c = θ_i and
no random cavity field, λ_c = 0, so eq. (45) gives ε_i = (θ_i/J_ii − y_i)².

Solving without K⁻¹
-------------------
With c_i = Σ_k p_k (k/σ²)/A_ik = 1 − J_ii a_i and d_i = c_i/a_i = 1/a_i − J_ii > 0,

    I + diag(a)(J − D_J) = diag(a) (J + diag d),      b = diag(a) (d ∘ y),

so m = (K⁻¹ + diag d)⁻¹ (d ∘ y) = K D^½ (I + D^½ K D^½)⁻¹ D^½ y (D = diag d): a GP posterior mean with
per-site noise variance 1/d_i, one Cholesky factor of a well-conditioned matrix. J m = d ∘ (y − m) then
gives θ = J_ii m − d ∘ (y − m) and ε_i = (m_i − y_i)² (1 + d_i/J_ii)². Only diag(K⁻¹) is needed, from the
inverse of K's Cholesky factor; K⁻¹ itself is never formed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.replica import (
    BootstrapSize,
    cavity_test_errors,
    check_replica_inputs,
    poisson_weights,
)
from explorer.operators import dense_matrix_of
from explorer.operators.dense import inverse_diagonal, weighted_posterior_mean
from explorer.validation import sample_sizes

__all__ = [
    "MFSolution",
    "PriorPrecisionDiagonal",
    "mf_learning_curve",
    "mf_per_input_error",
    "mf_test_error",
    "prior_precision_diagonal",
    "solve_mean_field",
]


@dataclass(frozen=True)
class MFSolution(BootstrapSize):
    """Mean-field parameters of the replica model at one bootstrap size S (``docs/derivations/vg_mf.md`` §2).

    All arrays have shape (N,). ``m`` is MF's bootstrap mean of the predictor at the training inputs,
    ``theta`` = θ the mean-field linear term, ``J_diag`` = J_ii = (K⁻¹)_ii, ``a``, ``b`` the coefficients
    of the linear system and ``d`` = 1/a − J_ii the equivalent per-site precision (module docstring).
    The cavity (``dl_c``, ``gam_c``, ``lam_c``) has the fields of ``replica.ReplicaSolution``, so eq. (45)
    can be evaluated the same way. ``jitter`` is what was added to K's diagonal to factorise it.
    """

    S: float
    noise_var: float
    y: np.ndarray
    m: np.ndarray
    theta: np.ndarray
    J_diag: np.ndarray
    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    jitter: float = 0.0
    method: str = "mean-field"

    @property
    def dl_c(self) -> np.ndarray:
        """Δλ_c(i) = J_ii: the cavity is the prior conditional of f_i."""
        return self.J_diag

    @property
    def gam_c(self) -> np.ndarray:
        """γ_c(i) = θ_i."""
        return self.theta

    @property
    def lam_c(self) -> np.ndarray:
        """λ_c(i) = 0: no random cavity field under MF."""
        return np.zeros_like(self.theta)

    @property
    def cavity_mean(self) -> np.ndarray:
        """θ_i/J_ii, the prior mean of f_i given f_j = m_j for all j ≠ i."""
        return self.theta / self.J_diag

    def second_moment(self, tail: float = 1e-16) -> np.ndarray:
        """Q_ii = Σ_k p_k μ_ik², μ_ik = (θ_i + k y_i/σ²)/A_ik: MF's bootstrap mean of the squared predictor.

        Parameters
        ----------
        tail : float
            Poisson mass left out of the sum over occupations k (``poisson_weights``).

        Returns
        -------
        ndarray of shape (N,)
            Q_ii at every training input.
        """
        p = poisson_weights(self.s_over_n, tail)
        k = np.arange(p.size) / self.noise_var
        mu = (self.theta[:, None] + k * self.y[:, None]) / (self.J_diag[:, None] + k)
        return mu**2 @ p


@dataclass(frozen=True)
class PriorPrecisionDiagonal:
    """diag J = diag K⁻¹ and the jitter it needed.

    Attributes
    ----------
    J_diag : ndarray of shape (N,)
        (K⁻¹)_ii, of K + jitter·I.
    jitter : float
        The jitter added to K's diagonal (0 when K factorises as given).
    """

    J_diag: np.ndarray
    jitter: float


def prior_precision_diagonal(K: np.ndarray) -> PriorPrecisionDiagonal:
    """diag J = diag K⁻¹ from the inverse of K's Cholesky factor (K⁻¹ itself is never formed).

    (K⁻¹)_ii = Σ_k (L⁻¹)_ki² for K = L Lᵀ. If round-off makes K numerically indefinite, the smallest jitter
    of ``JITTER_LADDER`` (times the mean diagonal of K; :func:`explorer.operators.dense.inverse_diagonal`) that factorises is added and returned.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs.

    Returns
    -------
    PriorPrecisionDiagonal
        ``J_diag`` (ndarray of shape (N,)) and the ``jitter`` used.

    Raises
    ------
    IndefiniteKernelError
        If K does not factorise even with the largest jitter of ``replica.JITTER_LADDER``.
    """
    J_diag, jitter = inverse_diagonal(np.asarray(K, dtype=float), "the mean-field approximation")
    return PriorPrecisionDiagonal(J_diag=J_diag, jitter=jitter)


def _coefficients(J_diag: np.ndarray, v: float, noise_var: float):
    """a_i = Σ p_k/A_ik, c_i = Σ p_k (k/σ²)/A_ik = 1 − J_ii a_i (no cancellation), A_ik = J_ii + k/σ²."""
    p = poisson_weights(v)
    k = np.arange(p.size) / noise_var
    A = J_diag[:, None] + k
    return (p / A).sum(axis=1), (p * k / A).sum(axis=1)


def _solve(K, y, noise_var, S, J_diag, jitter) -> MFSolution:
    """MF at one S for validated inputs, given diag K⁻¹ of the (jittered) K."""
    a, c = _coefficients(J_diag, S / y.shape[0], noise_var)
    d = c / a  # = 1/a − J_ii > 0
    m = weighted_posterior_mean(K, d, y)  # m = (K⁻¹ + diag d)⁻¹ (d ∘ y)
    theta = J_diag * m - d * (y - m)  # θ = −(J − D_J) m, since J m = d ∘ (y − m)
    return MFSolution(S=S, noise_var=noise_var, y=y, m=m, theta=theta, J_diag=J_diag, a=a, b=y * c, d=d,
                      jitter=jitter)


def solve_mean_field(K: np.ndarray, y: np.ndarray, noise_var: float, S: float) -> MFSolution:
    """Solve the mean-field equations of ``docs/derivations/vg_mf.md`` §2 for GP regression at bootstrap size S.

    The system (I + diag(a)(J − D_J)) m = b has exactly one solution: it equals diag(a)(J + diag d) with
    a_i > 0 and d_i = 1/a_i − J_ii > 0 (because a_i = Σ_k p_k/(J_ii + k/σ²) < 1/J_ii when ν > 0), so it is
    a positive diagonal matrix times the positive definite J + diag d; its eigenvalues are those of
    diag(√a)(J + diag d)diag(√a), all positive. J + diag d is also the Hessian of MF's O(n) free energy
    F₁(m) = ½ mᵀ(J − D_J)m + Σ_i (m_i − b_i)²/(2a_i), which is therefore strictly convex.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs (positive definite: MF needs J = K⁻¹).
    y : ndarray of shape (N,)
        Targets.
    noise_var : float
        Noise variance σ² of the GP (eq. 50 of [MO03]).
    S : float
        Mean bootstrap sample size (occupation numbers s_i ~ Poisson(S/N), eq. 11).

    Returns
    -------
    MFSolution

    Raises
    ------
    IndefiniteKernelError
        If K cannot be factorised even with the largest jitter of ``replica.JITTER_LADDER``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.1) + 1e-6 * np.eye(20)
    >>> sol = solve_mean_field(K, np.sin(6 * X[:, 0]), 0.01, 20.0)
    >>> bool(mf_test_error(sol) >= 0)
    True
    """
    K = dense_matrix_of(K, "the mean-field approximation")
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    prec = prior_precision_diagonal(K)
    return _solve(K + prec.jitter * np.eye(K.shape[0]), y, noise_var, S, prec.J_diag, prec.jitter)


def mf_learning_curve(K: np.ndarray, y: np.ndarray, noise_var: float,
                      S_values: Sequence[float]) -> list[MFSolution]:
    """MF solutions along a grid of S; diag K⁻¹ is computed once and shared by all S.

    Parameters
    ----------
    K, y, noise_var
        As in ``solve_mean_field``.
    S_values : sequence of float
        As in :func:`explorer.gp_bootstrap.variational.vg_learning_curve`.

    Returns
    -------
    list of MFSolution, one per entry of ``S_values``, in their order.

    Raises
    ------
    ValueError
        If ``S_values`` is empty or not 1-D, or K, y, σ² or some S is invalid (as ``solve_mean_field``).
    IndefiniteKernelError
        If K cannot be factorised even with the largest jitter (as ``solve_mean_field``).
    """
    K = dense_matrix_of(K, "the mean-field approximation")
    S_arr = sample_sizes(S_values)
    K, y, noise_var, _ = check_replica_inputs(K, y, noise_var, float(S_arr[0]))
    for S in S_arr:
        check_replica_inputs(K, y, noise_var, S)
    prec = prior_precision_diagonal(K)
    K_j = K + prec.jitter * np.eye(K.shape[0])
    return [_solve(K_j, y, noise_var, float(S), prec.J_diag, prec.jitter) for S in S_arr]


def mf_per_input_error(sol: MFSolution) -> np.ndarray:
    """ε_i of eq. (45) with MF's cavity (λ_c = 0): (θ_i/J_ii − y_i)².

    Parameters
    ----------
    sol : MFSolution
        The mean-field solution at S.

    Returns
    -------
    ndarray of shape (N,)
        The squared error of the cavity mean at every training input.
    """
    return cavity_test_errors(sol)  # λ_c = 0


def mf_test_error(sol: MFSolution) -> float:
    """Efron's bootstrap square-loss test error ε(S) under MF: the mean of eq. (45) over the inputs.

    Parameters
    ----------
    sol : MFSolution
        The mean-field solution at S, as :func:`solve_mean_field` or :func:`mf_learning_curve` returns it.

    Returns
    -------
    float
        ε(S) = (1/N) Σ_i (θ_i/J_ii − y_i)², the mean of :func:`mf_per_input_error`.
    """

    return float(np.mean(mf_per_input_error(sol)))
