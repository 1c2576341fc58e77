"""What a replica solution of [MO03] gives: Efron's bootstrap test error ε(S) (eqs. 45-46), the optimism of
[LSWV05] eqs. (3)-(6), the bootstrap moments at new inputs (eq. 48), the Poisson mixture of eq. (60) at a training
input and the check of eqs. (30)-(35), (51)-(53).

Each takes a :class:`~explorer.bootstrap.replica.ReplicaSolution`, whatever kernel operator it was solved on; eq. (48)
asks the operator for its cross terms. Core module: numpy and scipy only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from explorer.bootstrap.occupations import SERIES_TAIL, poisson_weights, row_blocks
from explorer.operators import as_operator
from explorer.operators.features import FeatureKernel

if TYPE_CHECKING:  # replica re-exports this module's names, so it is imported for annotations only
    from explorer.bootstrap.replica import ReplicaSolution

__all__ = ["bootstrap_test_error", "cavity_test_errors", "bootstrap_loss_error", "OptimismErrors",
           "bootstrap_optimism", "BootstrapMoments", "bootstrap_moments", "bootstrap_moments_lowrank",
           "MixtureComponents", "mixture_components",
           "self_consistency_residuals"]




def bootstrap_test_error(sol: ReplicaSolution) -> float:
    """Efron's bootstrap square-loss test error ε(S), eq. (45) of [MO03].

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.

    Returns
    -------
    float
        (1/N) Σ_i ((γ_c(i) − y_i Δλ_c(i))² − λ_c(i)) / Δλ_c(i)².
    """
    return float(np.mean(cavity_test_errors(sol)))


def cavity_test_errors(sol) -> np.ndarray:
    """ε_i of eq. (45) of [MO03]: the expected square error at each training input over the samples without it,
    ((γ_c(i) − y_i Δλ_c(i))² − λ_c(i)) / Δλ_c(i)², from the cavity of any solution that has one.

    Parameters
    ----------
    sol : ReplicaSolution or a solution with the same cavity fields
        ``y``, ``dl_c`` = Δλ_c, ``gam_c`` = γ_c and ``lam_c`` = λ_c, each of shape (N,): ADATAP's, VG's
        (``gp_bootstrap.variational``) or MF's (``gp_bootstrap.mean_field``, λ_c = 0).

    Returns
    -------
    ndarray of shape (N,)
        ε_i for every training input.
    """
    errors = sol.y * sol.dl_c  # in place from here: one N-vector (where N is large they are the memory)
    np.subtract(sol.gam_c, errors, out=errors)
    errors *= errors
    errors -= sol.lam_c
    for rows in row_blocks(errors.size):
        errors[rows] /= sol.dl_c[rows] ** 2
    return errors


def bootstrap_loss_error(sol: ReplicaSolution, loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
                         n_nodes: int = 40) -> float:
    """Efron's bootstrap test error for any loss g(f, y), eq. (46), by Gauss-Hermite quadrature in u.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.
    loss : callable
        g(f, y) on broadcast arrays f of shape (N, n_nodes) and y of shape (N, 1).
    n_nodes : int
        Number of Gauss-Hermite nodes.

    Returns
    -------
    float
        The error averaged over the N training inputs.
    """
    u, w = special.roots_hermitenorm(n_nodes)
    w = w / np.sqrt(2 * np.pi)
    f = (sol.gam_c[:, None] + u[None, :] * np.sqrt(np.maximum(-sol.lam_c, 0.0))[:, None]) / sol.dl_c[:, None]
    values = np.asarray(loss(f, sol.y[:, None]), dtype=float)  # eq. (46)
    return float(np.mean(values @ w))


@dataclass(frozen=True)
class OptimismErrors:
    """The two bootstrap-averaged errors whose difference is Efron's optimism ([LSWV05] eqs. 3-6).

    Attributes
    ----------
    validation : float
        E^{A,I}, the error of the retrained predictor on the original set (eq. 4).
    training : float
        E^{A,A}, the error on the bootstrap sample itself (eq. 3).
    """

    validation: float
    training: float

    @property
    def optimism(self) -> float:
        """E^{A,I} − E^{A,A}, the optimism of eqs. (5)-(6)."""
        return self.validation - self.training


def bootstrap_optimism(sol: ReplicaSolution, tail_mass: float = SERIES_TAIL) -> OptimismErrors:
    """Bootstrap averages of the two errors whose difference is Efron's optimism ([LSWV05] eqs. 3-5).

    With the eq. (60) mixture of [MO03] — given k copies of point i in the sample, the retrained
    predictor at x_i is Gaussian with mean μ_ik = (γ_c + y_i k/σ²)/(Δλ_c + k/σ²) and variance
    −λ_c/(Δλ_c + k/σ²)², so E[(h − y_i)² | k] = (μ_ik − y_i)² + var_ik — averaging over k ~ Poisson(S/N):

        E^{A,I} = (1/N) Σ_i Σ_k p_k E[(h − y_i)² | k]     (validation error on the original set, eq. 4)
        E^{A,A} = (1/N) Σ_i Σ_k k p_k E[(h − y_i)² | k]   (training error on the sample, eq. 3; S = N)

    No refits.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S = N.
    tail_mass : float
        Poisson tail mass dropped from the series over k.

    Returns
    -------
    OptimismErrors
        E^{A,I} (``validation``) and E^{A,A} (``training``); ``optimism`` is their difference (eqs. 5-6).
    """
    p = poisson_weights(sol.S / sol.n, tail=tail_mass)
    k = np.arange(p.size)
    prec = sol.dl_c[:, None] + k / sol.noise_var
    mean_gap = (sol.gam_c[:, None] - sol.y[:, None] * sol.dl_c[:, None]) / prec  # μ_ik − y_i
    sq = mean_gap**2 + np.maximum(-sol.lam_c, 0.0)[:, None] / prec**2
    validation = float(np.mean(sq @ p))
    training = float(np.sum(sq @ (k * p)) / sol.S)
    return OptimismErrors(validation=validation, training=training)


@dataclass(frozen=True)
class BootstrapMoments:
    """Bootstrap mean and variance of the predictor at M inputs, eq. (48) of [MO03].

    Attributes
    ----------
    mean : ndarray of shape (M,)
        E_D[f(x)] = k(x)ᵀ T γ.
    var : ndarray of shape (M,)
        Var_D[f(x)] = −k(x)ᵀ T diag(λ) Tᵀ k(x), with T = (I + diag(Δλ) K)⁻¹.
    """

    mean: np.ndarray
    var: np.ndarray


@dataclass(frozen=True)
class MixtureComponents:
    """The Poisson mixture of Gaussians of eq. (60) at one training input; arrays of shape (k_max + 1,).

    Attributes
    ----------
    weights : ndarray
        p_k, the Poisson probability of k copies of the input in a sample.
    means : ndarray
        (γ_c + y k/σ²)/(Δλ_c + k/σ²), the mean of component k.
    sds : ndarray
        √(−λ_c)/(Δλ_c + k/σ²), the standard deviation of component k.
    """

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray


def bootstrap_moments(sol: ReplicaSolution, K, K_cross) -> BootstrapMoments:
    """Bootstrap mean and variance of the predictor at arbitrary inputs, [MO03] eq. (48).

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution on the training inputs.
    K : KernelOperator, LowRankFeatures or ndarray of shape (N, N)
        The kernel the solution was computed with (without its jitter).
    K_cross : ndarray of shape (M, N), or (M, m) for features
        k(x, x_i) for M inputs x; for features Φ, the features φ(x) of the M inputs (``features.transform(X)``),
        so that k(x, x_i) = φ(x)ᵀφ_i and no N×M matrix is formed.

    Returns
    -------
    BootstrapMoments
        ``mean`` and ``var``, each of shape (M,).

    Raises
    ------
    ValueError
        If ``K_cross`` does not have one column per training input (per feature).
    """
    op = as_operator(K)
    if op.n != sol.n:
        raise ValueError(f"The kernel (`K` or `phi`) must have one row per training input of the solution, "
                         f"{sol.n}, got {op.n}. Pass the kernel or the features the solution was computed with.")
    mean, var = op.with_jitter(sol.jitter).test_moments(sol.dl, sol.gam, sol.lam, K_cross)
    return BootstrapMoments(mean=mean, var=var)


def bootstrap_moments_lowrank(sol: ReplicaSolution, phi, phi_test) -> BootstrapMoments:
    """:func:`bootstrap_moments` on the features Φ of K = ΦΦᵀ (array or ``LowRankFeatures``) and φ(x) of the inputs."""
    return bootstrap_moments(sol, FeatureKernel.of(phi), phi_test)


def mixture_components(sol: ReplicaSolution, i: int, tail_mass: float = 1e-6) -> MixtureComponents:
    """Poisson mixture of Gaussians for the bootstrap density of the predictor at input i, eq. (60).

    Component k (k copies of point i): weight p_k, mean (γ_c + y k/σ²)/(Δλ_c + k/σ²),
    sd √(−λ_c)/(Δλ_c + k/σ²). Truncated where the dropped Poisson tail mass is below ``tail_mass``.

    Parameters
    ----------
    sol : ReplicaSolution
    i : int
        Index of the training input.
    tail_mass : float
        Largest Poisson tail mass left out.

    Returns
    -------
    MixtureComponents
        ``weights``, ``means`` and ``sds``, each of shape (k_max + 1,).

    Raises
    ------
    IndexError
        If ``i`` is not in 0..N − 1.
    """
    if not 0 <= i < sol.n:
        raise IndexError(f"Input index must be in 0..{sol.n - 1}, got {i}.")
    p = poisson_weights(sol.S / sol.n, tail=tail_mass)
    prec = sol.dl_c[i] + np.arange(p.size) / sol.noise_var
    means = (sol.gam_c[i] + sol.y[i] * np.arange(p.size) / sol.noise_var) / prec
    sds = np.sqrt(max(-sol.lam_c[i], 0.0)) / prec
    return MixtureComponents(weights=p, means=means, sds=sds)


def self_consistency_residuals(sol: ReplicaSolution, K: np.ndarray) -> dict[str, float]:
    """Largest relative violation of eqs. (30)-(35) and (51)-(53) by a solution.

    Each moment — M − Q, m, Q − m² — is computed three ways: from the tilted-likelihood side (30)-(32),
    the Gaussian side (33)-(35) with G = (K⁻¹ + diag Δλ)⁻¹ formed independently by a dense solve, and the
    exact local average over occupation numbers (51)-(53); the residuals compare them pairwise.

    Parameters
    ----------
    sol : ReplicaSolution
        The solution to check.
    K : ndarray of shape (N, N)
        The kernel matrix it was computed with.

    Returns
    -------
    dict of str to float
        The largest relative residual of each pairwise comparison, keyed by the equations compared,
        e.g. ``"(30)-(33)"``; each is scaled by the largest magnitude of the first moment of its pair.
    """
    K = np.asarray(K, dtype=float)
    G = np.linalg.solve(np.eye(sol.n) + K * sol.dl[None, :], K)  # (I + K D)⁻¹ K = (K⁻¹ + D)⁻¹
    p = poisson_weights(sol.S / sol.n)
    prec = sol.dl_c[:, None] + np.arange(p.size) / sol.noise_var
    s = sol.dl + sol.dl_c
    mq = {"30": 1 / s, "33": np.diag(G), "51": (p / prec).sum(axis=1)}
    m = {"31": (sol.gam + sol.gam_c) / s, "34": G @ sol.gam,
         "52": (sol.gam_c - sol.y * sol.dl_c) * mq["51"] + sol.y}
    H = (p / prec**2).sum(axis=1)
    qm = {"32": -(sol.lam + sol.lam_c) / s**2, "35": -np.einsum("ij,j,ij->i", G, sol.lam, G),
          "53": ((m["52"] - sol.y) ** 2 / mq["51"] ** 2 - sol.lam_c) * H - (m["52"] - sol.y) ** 2}
    out = {}
    for group in (mq, m, qm):
        keys = list(group)
        scale = max(np.max(np.abs(group[keys[0]])), 1e-300)
        for a, b in ((keys[0], keys[1]), (keys[0], keys[2])):
            out[f"({a})-({b})"] = float(np.max(np.abs(group[a] - group[b])) / scale)
    return out
