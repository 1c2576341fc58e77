r"""Linear response (infinitesimal jackknife) and closed-form leave-one-out for the GP bootstrap of [MO03] §6.

The bootstrap draws occupation numbers s_i ~ Poisson(ν), ν = S/N ([MO03] eq. (11)), and refits the GP mean

    f(x; s) = k_xᵀ (K + σ² W⁻¹)⁻¹ y = k_xᵀ (W K + σ² I)⁻¹ W y,      W = diag(s),

(eq. 1 of ``docs/linear_response.md``; the second form removes a point with s_i = 0, as the Monte-Carlo of
:mod:`explorer.gp_bootstrap.montecarlo` does). The approximations here expand f around the mean weights W = νI
instead of refitting; each needs one factorisation of the expansion point A = K + τI, τ = σ²/ν:

* :func:`loo_limit` — the closed-form leave-one-out error at noise τ (R&W eq. 5.12), the S → ∞ limit of ε(S)
  (eqs. 8-9 of the docs);
* :func:`linear_response_moments` — the first-order infinitesimal-jackknife mean and variance of f at test
  inputs (eqs. 5-6), and separately the second-order mean correction (eq. 7);
* :func:`linear_response_error` — the infinitesimal-jackknife learning curve ε_IJ(S) of Efron's left-out
  estimator ([MO03] eq. (17)) with the square loss: the left-out point removed exactly, the other weights
  linearised (eqs. 10-15).

The formulas are written once against a kernel operator (:mod:`explorer.operators`): an N×N matrix K
(:class:`~explorer.operators.dense.DenseKernel`, A by Cholesky, O(N³)) or features Φ with K = ΦΦᵀ
(:class:`~explorer.operators.features.FeatureKernel`, A by Woodbury's identity on τI_m + ΦᵀΦ, O(N m²); eq. (13) in
blocks of columns, O(N² m), or at :data:`IJ_INPUTS` inputs drawn at random). The expansion point and its contractions
with B = A⁻¹ are the operator's (:mod:`explorer.operators.responses`). The ``*_lowrank`` functions are the same
functions on features Φ.

Symbols in code: ``tau`` = τ = σ²/ν, ``c`` = σ²/ν², ``nu`` = ν, ``alpha`` = α = A⁻¹y, ``u`` = A⁻¹k_x.
Core module: numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from explorer.losses import Loss, get_loss
from explorer.operators import as_operator
from explorer.operators.features import FeatureKernel
from explorer.operators.responses import IJ_EXACT_ROWS, IJ_INPUTS

__all__ = ["IJ_EXACT_ROWS", "IJ_INPUTS", "LeaveOneOutLimit", "loo_limit", "LinearResponseMoments",
           "linear_response_moments", "LinearResponseError", "linear_response_error", "loo_limit_lowrank",
           "linear_response_moments_lowrank", "linear_response_error_lowrank"]


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


def _weights(y: np.ndarray, noise_var: float, S: float) -> tuple[float, float, float]:
    """ν = S/N, τ = σ²/ν and c = σ²/ν² of the expansion point W = νI."""
    nu = S / y.size
    return nu, noise_var / nu, noise_var / nu**2


def loo_limit(K, y: ArrayLike, noise_var: float, S: float, *,
              loss: str | Loss = "square") -> LeaveOneOutLimit:
    """Closed-form leave-one-out error at noise σ²/ν, the S → ∞ limit of ε(S), eqs. (8)-(9) of the docs.

    For large ν every s_j/ν → 1 while Efron's estimator ([MO03] eq. (17)) conditions on s_i = 0, so the
    left-out prediction tends to the GP trained on D∖{i} with noise τ = σ²/ν. Its residual is r_i = α_i/B_ii,
    B = (K + τI)⁻¹, α = By (R&W eq. 5.12; Lemma 1 of the docs): one factorisation, no refit. With features,
    r_i = (y_i − φ_iᵀβ)/(1 − h_i), the leverage form. The left-out prediction μ_i = y_i − r_i being deterministic in
    the limit, any loss g has the limit (1/N) Σ_i g(μ_i, y_i) ([MO03] eq. (46) with a point mass).

    Parameters
    ----------
    K : ndarray of shape (N, N), LowRankFeatures or KernelOperator
        Kernel matrix of the training inputs (symmetric positive semi-definite), N >= 2, or features Φ (K = ΦΦᵀ).
    y : ndarray of shape (N,)
        Training targets.
    noise_var : float
        Noise variance σ² > 0 of the GP, [MO03] eq. (50).
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
    op = as_operator(K)
    y, noise_var, S, _ = op.check_response_inputs(y, noise_var, S)
    g = get_loss(loss)
    nu, tau, c = _weights(y, noise_var, S)
    point = op.expansion_point(y, tau, c)
    diag = point.diagonal()
    r = point.alpha / diag                                              # eq. (8): r_i = α_i / B_ii
    value = np.mean(r**2) if loss == "square" else np.mean(g(y - r, y))  # eq. (9); eq. (46) at μ_i
    return LeaveOneOutLimit(float(value), r, 1.0 / diag, nu)


def linear_response_moments(K, y: ArrayLike, noise_var: float, S: float,
                            K_test: ArrayLike) -> LinearResponseMoments:
    """First-order infinitesimal-jackknife bootstrap mean and variance of the GP mean at test inputs.

    Expands f(x; s) = k_xᵀ(K + σ²W⁻¹)⁻¹y around W = νI (eqs. 3-7 of docs/linear_response.md) with
    A = K + τI, τ = σ²/ν, α = A⁻¹y, u(x) = A⁻¹k_x, c = σ²/ν²:

    * d_i(x) = ∂f/∂s_i = c u_i(x) α_i (eq. 3);
    * mean = k_xᵀα (eq. 5) and var = Σ_i Var(s_i) d_i² = ν Σ_i d_i² (eq. 6; Var(s_i) = ν for the Poisson);
    * mean_second_order = mean − c Σ_i u_i α_i (1 − τ B_ii) (eq. 7), the second-order Taylor term of the mean.

    One factorisation of A (O(N m²) on features, plus O(M N m) for the M rows of ``derivatives``). The expansion needs
    small relative weight fluctuations (1/√ν); it misses that a point with s_i = 0 drops out (probability e^{−ν}),
    which is where it fails at small S/N.

    Parameters
    ----------
    K, y, noise_var, S
        As in :func:`loo_limit`: kernel matrix of shape (N, N) (or features Φ), targets of shape (N,), noise σ² > 0
        and the mean bootstrap sample size S, ν = S/N.
    K_test : ndarray of shape (M, N), or (M, m) with features
        k(x, x_i) for the M test inputs, or their features φ(x).

    Returns
    -------
    LinearResponseMoments
        ``mean``, ``var``, ``mean_second_order`` of shape (M,) and ``derivatives`` of shape (M, N).

    Raises
    ------
    ValueError
        As in :func:`loo_limit`, or if ``K_test`` has the wrong shape or is not finite.
    """
    op = as_operator(K)
    y, noise_var, S, K_test = op.check_response_inputs(y, noise_var, S, K_test)
    nu, tau, c = _weights(y, noise_var, S)
    point = op.expansion_point(y, tau, c)
    u, mean = point.test_response(K_test)                               # u(x) = A⁻¹ k_x; eq. (5)
    d = c * u * point.alpha[None, :]                                    # eq. (3)
    var = nu * np.einsum("mi,mi->m", d, d)                              # eq. (6)
    mean2 = mean - point.second_order_shift(u)                          # eq. (7)
    return LinearResponseMoments(mean, var, mean2, d, nu)


def linear_response_error(K, y: ArrayLike, noise_var: float, S: float, *,
                          inputs: int | str | None = None, rng=0) -> LinearResponseError:
    """Infinitesimal-jackknife learning curve ε_IJ(S) of Efron's estimator, square loss, eqs. (10)-(15) of the docs.

    What is averaged: Efron's estimator ([MO03] eq. (17)) estimates, as the number of Monte-Carlo samples
    grows, ε(S) = (1/N) Σ_i E[(f_i(s) − y_i)² | s_i = 0], where f_i(s) is the GP mean at x_i refitted with
    weights s; under the Poisson scheme the other weights s_{−i} keep their Poisson(ν) law. Here the left-out
    point i is removed exactly (the GP on D∖{i}) and f_i is linearised in s_{−i} around ν:

        ε_IJ(S) = (1/N) Σ_i [ r_i² + ν Σ_{j≠i} (d^{(i)}_j)² ]                       (eq. 14)

    with r_i = α_i/B_ii the leave-one-out residual at noise τ = σ²/ν and d^{(i)}_j = −c R_ji(α_j − R_ji α_i),
    R_ji = B_ji/B_ii, the derivative of the left-out prediction (eqs. 10-12, from the block inverse of B =
    (K + τI)⁻¹: one factorisation, no refit). ``value_second_order`` adds the second-order mean shift b_i of the
    left-out prediction (eq. 15), which is of the same order 1/ν as the variance term. Both tend to
    ``loo_limit`` = (1/N) Σ_i r_i² as ν → ∞.

    On features eq. (13) is a quartic form (:mod:`explorer.operators.responses`): O(N² m) time over blocks of columns
    of B, O(N (m + b)) memory (measured: 268 s and 52 MB beyond Φ at N = 53,940, m = 256, on one core of a busy
    machine). With ``inputs`` = n_I < N, v_i and b_i are computed at n_I inputs drawn at random without replacement
    (O(N n_I m) time on features): ε_IJ = mean_all(r²) + mean_I(v) and ε_IJ2 = mean_all(r²) + mean_I(b² − 2rb + v),
    unbiased estimates of the two averages over all N inputs (the leave-one-out part r is exact); ``variance`` and
    ``bias`` are NaN at the inputs not drawn.

    Only the square loss is supported: other losses ([MO03] eq. (46)) need the whole distribution of f_i, not
    its first two moments.

    Parameters
    ----------
    K, y, noise_var, S
        As in :func:`loo_limit`: kernel matrix of shape (N, N) (or features Φ), targets of shape (N,), noise σ² > 0
        and the mean bootstrap sample size S, ν = S/N.
    inputs : int, "auto" or None
        Number of inputs at which eq. (13) is evaluated: None, all N (exact); ``"auto"``, all N for a dense K and for
        features up to :data:`IJ_EXACT_ROWS` rows, else :data:`IJ_INPUTS`.
    rng : Generator, int or None
        Seed of the inputs drawn when ``inputs`` < N.

    Returns
    -------
    LinearResponseError
        ε_IJ, ε_IJ2, ε_∞ and the per-input residuals r, variances v and mean shifts b, ndarrays of shape (N,)
        (v and b NaN at the inputs not drawn).

    Raises
    ------
    ValueError
        As in :func:`loo_limit`, or if ``inputs`` is not a positive number.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 20)
    >>> K = np.exp(-(x[:, None] - x[None, :]) ** 2 / 0.1)
    >>> small, large = (linear_response_error(K, np.sin(6 * x), 0.01, S=S) for S in (20.0, 2000.0))
    >>> bool(small.value >= small.loo_limit), round(large.value / large.loo_limit, 3)  # ε_IJ → ε_∞ as ν → ∞
    (True, 1.0)
    """
    op = as_operator(K)
    y, noise_var, S, _ = op.check_response_inputs(y, noise_var, S)
    nu, tau, c = _weights(y, noise_var, S)
    point = op.expansion_point(y, tau, c)
    n = y.size
    drawn = _drawn_inputs(n, op.default_left_out_inputs if inputs == "auto" else inputs, rng)
    diag, squares, shifts = point.left_out_sums(drawn)                  # B_ii; Σ_j P_ji², Σ_j P_ji (1 − τB^{(i)}_jj)
    variance, bias = np.full(n, np.nan), np.full(n, np.nan)
    variance[drawn] = nu * c**2 * squares                               # eq. (13), v_i
    bias[drawn] = c * shifts                                            # eq. (13), b_i
    r = point.alpha / diag                                              # eq. (8)
    value, value_second_order, loo = point.error_averages(r, variance, bias, drawn)  # eqs. (14), (15), (9)
    return LinearResponseError(value=value, value_second_order=value_second_order, loo_limit=loo, residuals=r,
                               variance=variance, bias=bias, s_over_n=nu)


def _drawn_inputs(n: int, inputs, rng) -> np.ndarray:
    """All N inputs (``inputs`` None or ≥ N), or ``inputs`` of them drawn without replacement, sorted."""
    if inputs is None:
        return np.arange(n)
    if isinstance(inputs, bool) or not isinstance(inputs, (int, np.integer)) or inputs < 1:
        raise ValueError(f"`inputs` must be a positive number of inputs or \"auto\", got {inputs!r}.")
    if inputs >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(rng).choice(n, size=int(inputs), replace=False))


def loo_limit_lowrank(phi, y: ArrayLike, noise_var: float, S: float, *,
                      loss: str | Loss = "square") -> LeaveOneOutLimit:
    """:func:`loo_limit` on the features Φ."""
    return loo_limit(FeatureKernel.of(phi), y, noise_var, S, loss=loss)


def linear_response_moments_lowrank(phi, y: ArrayLike, noise_var: float, S: float,
                                    phi_test: ArrayLike) -> LinearResponseMoments:
    """:func:`linear_response_moments` on the features Φ (``phi_test`` = φ(x), shape (M, m))."""
    return linear_response_moments(FeatureKernel.of(phi), y, noise_var, S, phi_test)


def linear_response_error_lowrank(phi, y: ArrayLike, noise_var: float, S: float, *,
                                  inputs: int | str | None = None, rng=0) -> LinearResponseError:
    """:func:`linear_response_error` on the features Φ."""
    return linear_response_error(FeatureKernel.of(phi), y, noise_var, S, inputs=inputs, rng=rng)
