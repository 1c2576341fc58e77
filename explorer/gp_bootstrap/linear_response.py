r"""Linear response (infinitesimal jackknife) and closed-form leave-one-out for the GP bootstrap (seed 000's setting).

The bootstrap draws occupation numbers s_i ~ Poisson(ν), ν = S/N (eq. 11 of seed 000), and refits the GP mean

    f(x; s) = k_xᵀ (K + σ² W⁻¹)⁻¹ y = k_xᵀ (W K + σ² I)⁻¹ W y,      W = diag(s),

(eq. 1 of ``docs/linear_response.md``; the second form removes a point with s_i = 0, as the Monte-Carlo of
:mod:`explorer.gp_bootstrap.montecarlo` does). The approximations here expand f around the mean weights W = νI
instead of refitting; each needs one Cholesky factorisation of A = K + τ I, τ = σ²/ν:

* :func:`loo_limit` — the closed-form leave-one-out error at noise τ (R&W eq. 5.12), the S → ∞ limit of ε(S)
  (eqs. 8-9 of the docs);
* :func:`linear_response_moments` — the first-order infinitesimal-jackknife mean and variance of f at test
  inputs (eqs. 5-6), and separately the second-order mean correction (eq. 7);
* :func:`linear_response_error` — the infinitesimal-jackknife learning curve ε_IJ(S) of Efron's left-out
  estimator (eq. 17 of seed 000) with the square loss: the left-out point removed exactly, the other weights
  linearised (eqs. 10-15).

Symbols in code: ``tau`` = τ = σ²/ν, ``c`` = σ²/ν², ``B`` = A⁻¹, ``alpha`` = α = A⁻¹y, ``u`` = A⁻¹k_x.
Core module: numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from explorer.bootstrap.replica import check_replica_inputs
from explorer.losses import Loss, get_loss

__all__ = ["LeaveOneOutLimit", "loo_limit", "LinearResponseMoments", "linear_response_moments",
           "LinearResponseError", "linear_response_error"]


@dataclass(frozen=True)
class LeaveOneOutLimit:
    """Closed-form leave-one-out of the GP at noise τ = σ²/ν, eqs. (8)-(9) of docs/linear_response.md.

    Attributes
    ----------
    value : float
        ε_∞(ν) = (1/N) Σ_i r_i², eq. (9), the S → ∞ limit of the bootstrap test error ε(S); for another loss g,
        (1/N) Σ_i g(μ_i, y_i) (the left-out prediction becomes deterministic, μ_i, as ν → ∞).
    residuals : ndarray of shape (N,)
        r_i = y_i − μ_i = α_i / B_ii, the leave-one-out residual, eq. (8) (R&W eq. 5.12).
    var : ndarray of shape (N,)
        1 / B_ii, the leave-one-out predictive variance (noise τ included).
    s_over_n : float
        ν = S/N.
    """

    value: float
    residuals: np.ndarray
    var: np.ndarray
    s_over_n: float


@dataclass(frozen=True)
class LinearResponseMoments:
    """Infinitesimal-jackknife bootstrap moments of the predictor at M inputs, eqs. (3)-(7) of the docs.

    Attributes
    ----------
    mean : ndarray of shape (M,)
        First-order mean f(x; ν1) = k_xᵀ α, eq. (5).
    var : ndarray of shape (M,)
        First-order variance ν Σ_i d_i(x)², eq. (6).
    mean_second_order : ndarray of shape (M,)
        The mean with the second-order correction ½ Σ_i Var(s_i) ∂²f/∂s_i², eq. (7).
    derivatives : ndarray of shape (M, N)
        d_i(x) = ∂f(x; s)/∂s_i at s = ν1, eq. (3).
    s_over_n : float
        ν = S/N.
    """

    mean: np.ndarray
    var: np.ndarray
    mean_second_order: np.ndarray
    derivatives: np.ndarray
    s_over_n: float


@dataclass(frozen=True)
class LinearResponseError:
    """The infinitesimal-jackknife learning curve at one S, square loss, eqs. (10)-(15) of the docs.

    Attributes
    ----------
    value : float
        ε_IJ(S) = (1/N) Σ_i [r_i² + v_i], eq. (14): first order in the weights of the other points.
    value_second_order : float
        ε_IJ2(S) = (1/N) Σ_i [(r_i − b_i)² + v_i], eq. (15): the mean also to second order.
    loo_limit : float
        ε_∞(ν) = (1/N) Σ_i r_i², eq. (9) (the same factorisation).
    residuals : ndarray of shape (N,)
        r_i = α_i / B_ii, the leave-one-out residual y_i − μ_i at noise τ.
    variance : ndarray of shape (N,)
        v_i = ν Σ_{j≠i} (d^{(i)}_j)², the first-order variance of the left-out prediction at x_i, eq. (13).
    bias : ndarray of shape (N,)
        b_i, the second-order shift of the mean of the left-out prediction at x_i, eq. (13).
    s_over_n : float
        ν = S/N.
    """

    value: float
    value_second_order: float
    loo_limit: float
    residuals: np.ndarray
    variance: np.ndarray
    bias: np.ndarray
    s_over_n: float


@dataclass(frozen=True)
class _ExpansionPoint:
    """The GP at the mean weights W = νI: ν, τ = σ²/ν, c = σ²/ν², the Cholesky factor of A = K + τI, α = A⁻¹y."""

    nu: float
    tau: float
    c: float
    factor: tuple[np.ndarray, bool]
    alpha: np.ndarray

    def inverse(self) -> np.ndarray:
        """B = A⁻¹ of shape (N, N) (its diagonal and columns enter eqs. 7-13)."""
        B = linalg.cho_solve(self.factor, np.eye(self.alpha.size), check_finite=False)
        return 0.5 * (B + B.T)

    def inverse_diagonal(self) -> np.ndarray:
        """diag(B) of shape (N,) = column sums of (L⁻¹)² for A = L Lᵀ."""
        L_inv = linalg.solve_triangular(self.factor[0], np.eye(self.alpha.size), lower=True, check_finite=False)
        return np.einsum("ij,ij->j", L_inv, L_inv)


def _expansion_point(K: np.ndarray, y: np.ndarray, noise_var: float, S: float) -> _ExpansionPoint:
    nu = S / y.size
    tau = noise_var / nu
    A = K + tau * np.eye(y.size)
    try:
        factor = linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise ValueError("Cholesky factorisation of K + (σ²/ν) I failed: `K` is not positive semi-definite. "
                         "Check the kernel, or add jitter to its diagonal.") from exc
    alpha = linalg.cho_solve(factor, y, check_finite=False)
    return _ExpansionPoint(nu, tau, noise_var / nu**2, factor, alpha)


def loo_limit(K: ArrayLike, y: ArrayLike, noise_var: float, S: float, *,
              loss: str | Loss = "square") -> LeaveOneOutLimit:
    """Closed-form leave-one-out error at noise σ²/ν, the S → ∞ limit of ε(S), eqs. (8)-(9) of the docs.

    For large ν every s_j/ν → 1 while Efron's estimator (eq. 17 of seed 000) conditions on s_i = 0, so the
    left-out prediction tends to the GP trained on D∖{i} with noise τ = σ²/ν. Its residual is r_i = α_i/B_ii,
    B = (K + τI)⁻¹, α = By (R&W eq. 5.12; Lemma 1 of the docs): one factorisation, no refit. The left-out
    prediction μ_i = y_i − r_i being deterministic in the limit, any loss g has the limit (1/N) Σ_i g(μ_i, y_i)
    (eq. 46 of seed 000 with a point mass).

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs (symmetric positive semi-definite), N >= 2.
    y : ndarray of shape (N,)
        Training targets.
    noise_var : float
        Noise variance σ² > 0 of the GP, eq. (50) of seed 000.
    S : float
        Mean bootstrap sample size, ν = S/N.
    loss : str or callable
        ``"square"`` (eq. 9), another name of :func:`explorer.losses.get_loss` or a vectorised ``g(f, y)``.

    Returns
    -------
    LeaveOneOutLimit
        ε_∞, the residuals and leave-one-out variances, ndarrays of shape (N,).

    Raises
    ------
    ValueError
        If a shape or value is invalid or ``K`` is not positive semi-definite.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 20)
    >>> K = np.exp(-(x[:, None] - x[None, :]) ** 2 / 0.1)
    >>> out = loo_limit(K, np.sin(6 * x), 0.01, S=40.0)
    >>> out.residuals.shape, round(out.s_over_n, 3)
    ((20,), 2.0)
    """
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    g = get_loss(loss)
    point = _expansion_point(K, y, noise_var, S)
    diag = point.inverse_diagonal()
    r = point.alpha / diag                                          # eq. (8): r_i = α_i / B_ii
    value = np.mean(r**2) if loss == "square" else np.mean(g(y - r, y))  # eq. (9); eq. (46) at μ_i
    return LeaveOneOutLimit(float(value), r, 1.0 / diag, point.nu)


def linear_response_moments(K: ArrayLike, y: ArrayLike, noise_var: float, S: float,
                            K_test: ArrayLike) -> LinearResponseMoments:
    """First-order infinitesimal-jackknife bootstrap mean and variance of the GP mean at test inputs.

    Expands f(x; s) = k_xᵀ(K + σ²W⁻¹)⁻¹y around W = νI (eqs. 3-7 of docs/linear_response.md) with
    A = K + τI, τ = σ²/ν, α = A⁻¹y, u(x) = A⁻¹k_x, c = σ²/ν²:

    * d_i(x) = ∂f/∂s_i = c u_i(x) α_i (eq. 3);
    * mean = k_xᵀα (eq. 5) and var = Σ_i Var(s_i) d_i² = ν Σ_i d_i² (eq. 6; Var(s_i) = ν for the Poisson);
    * mean_second_order = mean − c Σ_i u_i α_i (1 − τ B_ii) (eq. 7), the second-order Taylor term of the mean.

    One Cholesky factorisation of A. The expansion needs small relative weight fluctuations (1/√ν); it misses
    that a point with s_i = 0 drops out (probability e^{−ν}), which is where it fails at small S/N.

    Parameters
    ----------
    K, y, noise_var, S
        As in :func:`loo_limit`: kernel matrix of shape (N, N), targets of shape (N,), noise σ² > 0 and the mean
        bootstrap sample size S, ν = S/N.
    K_test : ndarray of shape (M, N)
        k(x, x_i) for the M test inputs.

    Returns
    -------
    LinearResponseMoments
        ``mean``, ``var``, ``mean_second_order`` of shape (M,) and ``derivatives`` of shape (M, N).

    Raises
    ------
    ValueError
        As in :func:`loo_limit`.
    """
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    K_test = _check_test(K_test, y.size)
    point = _expansion_point(K, y, noise_var, S)
    u = linalg.cho_solve(point.factor, K_test.T, check_finite=False).T     # (M, N): u(x) = A⁻¹ k_x
    d = point.c * u * point.alpha[None, :]                                  # eq. (3)
    mean = K_test @ point.alpha                                             # eq. (5)
    var = point.nu * np.einsum("mi,mi->m", d, d)                            # eq. (6)
    shrink = 1.0 - point.tau * point.inverse_diagonal()                     # 1 − τ B_ii
    mean2 = mean - point.c * (u * point.alpha[None, :]) @ shrink            # eq. (7)
    return LinearResponseMoments(mean, var, mean2, d, point.nu)


def linear_response_error(K: ArrayLike, y: ArrayLike, noise_var: float, S: float) -> LinearResponseError:
    """Infinitesimal-jackknife learning curve ε_IJ(S) of Efron's estimator, square loss, eqs. (10)-(15) of the docs.

    What is averaged: Efron's estimator (eq. 17 of seed 000) estimates, as the number of Monte-Carlo samples
    grows, ε(S) = (1/N) Σ_i E[(f_i(s) − y_i)² | s_i = 0], where f_i(s) is the GP mean at x_i refitted with
    weights s; under the Poisson scheme the other weights s_{−i} keep their Poisson(ν) law. Here the left-out
    point i is removed exactly (the GP on D∖{i}) and f_i is linearised in s_{−i} around ν:

        ε_IJ(S) = (1/N) Σ_i [ r_i² + ν Σ_{j≠i} (d^{(i)}_j)² ]                       (eq. 14)

    with r_i = α_i/B_ii the leave-one-out residual at noise τ = σ²/ν and d^{(i)}_j = −c R_ji(α_j − R_ji α_i),
    R_ji = B_ji/B_ii, the derivative of the left-out prediction (eqs. 10-12, from the block inverse of B =
    (K + τI)⁻¹: one factorisation, no refit). ``value_second_order`` adds the second-order mean shift b_i of the
    left-out prediction (eq. 15), which is of the same order 1/ν as the variance term. Both tend to
    ``loo_limit`` = (1/N) Σ_i r_i² as ν → ∞.

    Only the square loss is supported: other losses (eq. 46 of seed 000) need the whole distribution of f_i, not
    its first two moments.

    Parameters
    ----------
    K, y, noise_var, S
        As in :func:`loo_limit`: kernel matrix of shape (N, N), targets of shape (N,), noise σ² > 0 and the mean
        bootstrap sample size S, ν = S/N.

    Returns
    -------
    LinearResponseError
        ε_IJ, ε_IJ2, ε_∞ and the per-input residuals r, variances v and mean shifts b, ndarrays of shape (N,).

    Raises
    ------
    ValueError
        As in :func:`loo_limit`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 20)
    >>> K = np.exp(-(x[:, None] - x[None, :]) ** 2 / 0.1)
    >>> small, large = (linear_response_error(K, np.sin(6 * x), 0.01, S=S) for S in (20.0, 2000.0))
    >>> bool(small.value >= small.loo_limit), round(large.value / large.loo_limit, 3)  # ε_IJ → ε_∞ as ν → ∞
    (True, 1.0)
    """
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    point = _expansion_point(K, y, noise_var, S)
    B = point.inverse()
    diag = np.diag(B).copy()
    alpha = point.alpha
    r = alpha / diag                                                        # eq. (8)
    R = B / diag[None, :]                                                   # R_ji = B_ji / B_ii (column i)
    a = alpha[:, None] - R * alpha[None, :]                                 # α^{(i)}_j, eq. (11); 0 at j = i
    P = R * a                                                               # −d^{(i)}_j / c, eq. (12)
    variance = point.nu * point.c**2 * np.einsum("ji,ji->i", P, P)          # eq. (13), v_i
    shrink = 1.0 - point.tau * (diag[:, None] - B * R)                      # 1 − τ B^{(i)}_jj, eq. (10)
    bias = point.c * np.einsum("ji,ji->i", P, shrink)                       # eq. (13), b_i
    return LinearResponseError(value=float(np.mean(r**2 + variance)),      # eq. (14)
                               value_second_order=float(np.mean((r - bias) ** 2 + variance)),  # eq. (15)
                               loo_limit=float(np.mean(r**2)), residuals=r, variance=variance, bias=bias,
                               s_over_n=point.nu)


def _check_test(K_test, n: int) -> np.ndarray:
    K_test = np.atleast_2d(np.asarray(K_test, dtype=float))
    if K_test.ndim != 2 or K_test.shape[1] != n:
        raise ValueError(f"`K_test` must have shape (M, {n}) = k(X_test, X), one column per training input, "
                         f"got shape {K_test.shape}.")
    if not np.all(np.isfinite(K_test)):
        raise ValueError("`K_test` contains NaN or inf. Check the kernel hyperparameters and the test inputs.")
    return K_test
