r"""Gaussian-process regression with zero prior mean (Rasmussen & Williams 2006, chapters 2 and 5).

Notation: K = k(X, X), A = K + σ² I (σ² = ``noise_var``), L the lower Cholesky factor of A,
α = A⁻¹ y. Gradients are taken with respect to ``np.append(kernel.theta, log(noise_var))``: the
kernel's log hyperparameters followed by the log noise variance.

Cholesky factors are used throughout. The one explicit A⁻¹ is formed (by ``cho_solve`` against the
identity) where a criterion needs its diagonal or a trace with it: the leave-one-out formulas
(R&W eq. 5.12) and the evidence gradient (eq. 5.9).

If A is numerically singular (e.g. duplicated inputs with ``noise_var=0``) a jitter ε is added to
its diagonal, trying ε = JITTER_LADDER × mean(diag A) in turn; this is the same as a tiny extra
noise variance. The jitter used is recorded in :attr:`GPPosterior.jitter`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from explorer.kernels import Kernel, check_inputs

__all__ = ["GPPosterior", "LeaveOneOut", "CholeskyError", "JITTER_LADDER", "fit", "log_evidence",
           "loo_predictions", "loo_squared_error", "loo_neg_log_predictive", "check_data", "condition",
           "covariance_inverse", "finite_result", "jittered_cholesky"]

JITTER_LADDER = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6)
"""Relative jitters tried, in order, when A is not numerically positive definite."""

_LOG_2PI = np.log(2.0 * np.pi)


class CholeskyError(np.linalg.LinAlgError):
    """A = K + σ² I stayed numerically singular after the whole jitter ladder."""


@dataclass(frozen=True, eq=False)
class GPPosterior:
    """A GP conditioned on data (R&W section 2.2).

    Attributes
    ----------
    kernel, X, y, noise_var
        As passed to :func:`fit` (X of shape (n, d), y of shape (n,) as read-only ndarrays); σ² is the
        variance of the Gaussian observation noise.
    alpha : ndarray of shape (n,)
        α = A⁻¹ y.
    jitter : float
        ε, the absolute amount added to the diagonal of A (0.0 when none was needed).
    L : ndarray of shape (n, n)
        Lower Cholesky factor of A + ε I.
    """

    kernel: Kernel
    X: np.ndarray
    y: np.ndarray
    noise_var: float
    alpha: np.ndarray
    jitter: float
    L: np.ndarray

    @property
    def log_evidence(self) -> float:
        """log p(y | X) = −½ yᵀα − Σ_i log L_ii − (n/2) log 2π, R&W eq. (2.30)."""
        n = self.y.size
        log_det_half = np.log(np.diag(self.L)).sum()                  # ½ log|A|
        return float(-0.5 * self.y @ self.alpha - log_det_half - 0.5 * n * _LOG_2PI)

    def predict(self, Xs, return_var=False):
        """Posterior mean, and optionally variance, of the latent f at ``Xs`` (R&W eqs. 2.25-2.26).

        Parameters
        ----------
        Xs : array of shape (m, d)
        return_var : bool
            Also return the latent variance k(x, x) − k_*ᵀ A⁻¹ k_* (without noise), clipped at 0
            to absorb round-off.

        Returns
        -------
        mean : ndarray of shape (m,); with ``return_var`` the tuple (mean, var).

        Raises
        ------
        ValueError
            If ``Xs`` is not a finite 2-D array or its number of columns differs from the
            training inputs'.
        FloatingPointError
            If the mean or variance comes out NaN or infinite (ill-conditioned A).
        """
        Xs = check_inputs(Xs, "Xs")
        if Xs.shape[1] != self.X.shape[1]:
            raise ValueError(f"`Xs` must have {self.X.shape[1]} columns like the training inputs, "
                             f"got {Xs.shape[1]}.")
        Ks = self.kernel(self.X, Xs)                                   # (n, m)
        mean = finite_result(Ks.T @ self.alpha, "posterior mean")            # eq. (2.25)
        if not return_var:
            return mean
        V = solve_triangular(self.L, Ks, lower=True, check_finite=False)
        var = self.kernel.diag(Xs) - np.einsum("ij,ij->j", V, V)       # eq. (2.26)
        return mean, finite_result(np.maximum(var, 0.0), "posterior variance")


@dataclass(frozen=True, eq=False)
class LeaveOneOut:
    """Predictive distribution of each y_i given the other n − 1 points (R&W eq. 5.12).

    Attributes
    ----------
    mean : ndarray of shape (n,)
        μ_i = y_i − [A⁻¹y]_i / [A⁻¹]_ii.
    var : ndarray of shape (n,)
        σ_i² = 1 / [A⁻¹]_ii, including the noise variance.
    """

    mean: np.ndarray
    var: np.ndarray


def finite_result(x, what: str):
    """``x`` unchanged if every entry is finite, else FloatingPointError naming ``what`` (ill-conditioned A).

    Parameters
    ----------
    x : float or ndarray
        A computed value, gradient or vector.
    what : str
        What ``x`` is, for the message (e.g. "log evidence").

    Returns
    -------
    float or ndarray
        ``x``.

    Raises
    ------
    FloatingPointError
        If ``x`` has a NaN or infinite entry.
    """
    if not np.all(np.isfinite(x)):
        raise FloatingPointError(f"the {what} is not finite (NaN or inf). A = K + noise_var I is "
                                 "probably too ill-conditioned; increase noise_var or check the "
                                 "kernel hyperparameters.")
    return x


def check_data(kernel: Kernel, X, y, noise_var: float,
               eval_gradient: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """Validated (X, y, noise_var), shared by every function that conditions a GP on data.

    Parameters
    ----------
    kernel, X, y, noise_var
        As in :func:`fit`; ``noise_var`` > 0 with ``eval_gradient``.
    eval_gradient : bool, optional
        Whether a gradient with respect to log σ² (the last entry) will be taken.

    Returns
    -------
    tuple
        ``(X, y, noise_var)``: ndarray of shape (n, d), ndarray of shape (n,), float.

    Raises
    ------
    TypeError
        If ``kernel`` is not a Kernel.
    ValueError
        If ``X`` or ``y`` is malformed or not finite, or ``noise_var`` is out of range.
    """
    if not isinstance(kernel, Kernel):
        raise TypeError("`kernel` must be an explorer.kernels.Kernel, got "
                        f"{type(kernel).__name__}.")
    X, y = check_inputs(X, "X"), np.asarray(y, dtype=float)
    if y.shape != (X.shape[0],):
        raise ValueError(f"`y` must be 1-D with one target per row of X, shape ({X.shape[0]},), "
                         f"got shape {y.shape}. Use y.ravel() for a column vector.")
    if not np.all(np.isfinite(y)):
        raise ValueError("`y` contains NaN or inf. Remove those rows from X and y first.")
    if not (np.ndim(noise_var) == 0 and np.isfinite(noise_var) and noise_var >= 0):
        raise ValueError(f"`noise_var` must be a finite number >= 0, got {noise_var!r}. It is the "
                         "variance σ² of the Gaussian observation noise.")
    if eval_gradient and noise_var == 0:
        raise ValueError("eval_gradient=True differentiates with respect to log(noise_var), which "
                         "needs noise_var > 0, got 0. Pass a small positive noise_var.")
    return X, y, float(noise_var)


def jittered_cholesky(A: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of A and the jitter ε added to its diagonal (0.0 if none), trying ε = JITTER_LADDER ×
    mean(diag A) in turn.

    A factor whose smallest pivot L_ii² is below n·eps·mean(diag A) counts as failed too: such a
    matrix is singular to working precision and its solves would be noise.
    """
    if not np.all(np.isfinite(A)):
        raise FloatingPointError("the kernel matrix contains NaN or inf; check the "
                                 "hyperparameters.")
    scale = np.mean(np.diag(A))
    tiny = A.shape[0] * np.finfo(float).eps * scale
    for jitter in (0.0,) + tuple(rel * scale for rel in JITTER_LADDER):
        try:
            L = cholesky(A + jitter * np.eye(A.shape[0]), lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
        if np.min(np.diag(L)) ** 2 > tiny:
            return L, jitter
    raise CholeskyError(f"K + noise_var I is not positive definite even with a jitter of "
                        f"{JITTER_LADDER[-1]:g} × mean diagonal. Increase noise_var, remove "
                        "duplicated inputs, or check that the kernel is positive semi-definite.")


def condition(kernel: Kernel, X: np.ndarray, y: np.ndarray, noise_var: float,
              eval_gradient: bool) -> tuple[GPPosterior, np.ndarray | None]:
    """GPPosterior and, with ``eval_gradient``, ∂A/∂θ as ndarray of shape (p + 1, n, n) (else None).

    ``X``, ``y`` and ``noise_var`` as returned by :func:`check_data`; θ = (kernel.theta, log σ²).
    """
    if eval_gradient:
        K, dK = kernel(X, eval_gradient=True)
        dA = np.concatenate([np.moveaxis(dK, 2, 0), noise_var * np.eye(len(y))[None]])
    else:
        K, dA = kernel(X), None
    K[np.diag_indices_from(K)] += noise_var
    L, jitter = jittered_cholesky(K)
    alpha = finite_result(cho_solve((L, True), y, check_finite=False), "vector A⁻¹y")
    X, y = X.copy(), y.copy()
    for arr in (X, y, alpha, L):
        arr.setflags(write=False)
    return GPPosterior(kernel, X, y, noise_var, alpha, jitter, L), dA


def covariance_inverse(post: GPPosterior) -> np.ndarray:
    """A⁻¹ of shape (n, n) from the Cholesky factor, for diag(A⁻¹) and tr(A⁻¹ ∂A); see the module docstring."""
    return cho_solve((post.L, True), np.eye(post.y.size), check_finite=False)


def fit(kernel, X, y, noise_var) -> GPPosterior:
    """Condition a zero-mean GP with covariance ``kernel`` on noisy observations y of f(X).

    Parameters
    ----------
    kernel : Kernel
    X : array of shape (n, d)
    y : array of shape (n,)
    noise_var : float
        σ² >= 0; with σ² = 0 a jitter may be needed (recorded in the result).

    Returns
    -------
    GPPosterior
        Holds the Cholesky factor L of A = K + σ² I (+ jitter) and α = A⁻¹ y; read-only copies
        of ``X`` and ``y``.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~explorer.kernels.Kernel`.
    ValueError
        If ``X`` is not a finite 2-D array, ``y`` is not finite of shape (n,), or ``noise_var`` is
        not a finite number >= 0.
    CholeskyError
        If A stays numerically singular after every jitter of ``JITTER_LADDER``.
    FloatingPointError
        If the kernel matrix or α is NaN or infinite.
    """
    X, y, noise_var = check_data(kernel, X, y, noise_var)
    return condition(kernel, X, y, noise_var, False)[0]


def log_evidence(kernel, X, y, noise_var, eval_gradient=False):
    r"""Log marginal likelihood log p(y | X), R&W eq. (2.30), and optionally its gradient.

    :math:`\log p = -\tfrac12 y^\top A^{-1} y - \tfrac12 \log|A| - \tfrac n2 \log 2\pi`.

    Parameters
    ----------
    kernel : Kernel
        Prior covariance k; its ``theta`` are the first p entries of the gradient.
    X : array_like of shape (n, d)
        Training inputs.
    y : array_like of shape (n,)
        Training targets.
    noise_var : float
        σ² >= 0 (> 0 with ``eval_gradient``, whose last entry is w.r.t. log σ²).
    eval_gradient : bool, optional
        Also return the gradient.

    Returns
    -------
    float, or (float, ndarray of shape (p + 1,)) with ``eval_gradient``: the gradient w.r.t.
    ``np.append(kernel.theta, log(noise_var))``,
    :math:`\tfrac12 \mathrm{tr}((\alpha\alpha^\top - A^{-1})\,\partial A/\partial\theta_j)`,
    eq. (5.9).

    Raises
    ------
    TypeError, ValueError, CholeskyError
        As :func:`fit`; ValueError also for ``eval_gradient=True`` with ``noise_var=0``.
    FloatingPointError
        If the value or gradient comes out NaN or infinite.
    """
    X, y, noise_var = check_data(kernel, X, y, noise_var, eval_gradient)
    post, dA = condition(kernel, X, y, noise_var, eval_gradient)
    value = finite_result(post.log_evidence, "log evidence")
    if not eval_gradient:
        return value
    M = np.outer(post.alpha, post.alpha) - covariance_inverse(post)
    grad = 0.5 * np.tensordot(dA, M, axes=([1, 2], [0, 1]))           # eq. (5.9)
    return value, finite_result(grad, "log-evidence gradient")


def _loo_terms(kernel, X, y, noise_var, eval_gradient):
    """α, c = diag(A⁻¹) and, with ``eval_gradient``, their derivatives of shape (n, p + 1).

    ∂α/∂θ_j = −A⁻¹ (∂A/∂θ_j) α and ∂c_i/∂θ_j = −[A⁻¹ (∂A/∂θ_j) A⁻¹]_ii (R&W section 5.4.2).
    """
    X, y, noise_var = check_data(kernel, X, y, noise_var, eval_gradient)
    if X.shape[0] < 2:
        raise ValueError(f"leave-one-out needs at least 2 data points, got {X.shape[0]}.")
    post, dA = condition(kernel, X, y, noise_var, eval_gradient)
    Ainv = covariance_inverse(post)
    a, c = post.alpha, np.diag(Ainv).copy()
    if not eval_gradient:
        return a, c, None, None
    Z = Ainv @ dA                                                      # Z_j = A⁻¹ ∂A/∂θ_j
    da = -(Z @ a).T
    dc = -np.einsum("jik,ki->ij", Z, Ainv)
    return a, c, da, dc


def loo_predictions(kernel, X, y, noise_var) -> LeaveOneOut:
    """Closed-form leave-one-out predictive means and variances, R&W eq. (5.12).

    μ_i = y_i − α_i / [A⁻¹]_ii and σ_i² = 1 / [A⁻¹]_ii, the distribution of y_i (noise included)
    under the GP conditioned on the other n − 1 points — without n refits.

    Parameters
    ----------
    kernel : Kernel
        Prior covariance k.
    X : array_like of shape (n, d)
        Training inputs, n >= 2.
    y : array_like of shape (n,)
        Training targets.
    noise_var : float
        σ² >= 0.

    Returns
    -------
    LeaveOneOut
        ``mean`` μ and ``var`` σ², each ndarray of shape (n,).

    Raises
    ------
    TypeError, ValueError, CholeskyError
        As :func:`fit`; ValueError also for n < 2.
    FloatingPointError
        If a mean or variance comes out NaN or infinite.
    """
    a, c, _, _ = _loo_terms(kernel, X, y, noise_var, False)
    y = np.asarray(y, dtype=float)
    return LeaveOneOut(mean=finite_result(y - a / c, "LOO mean"), var=finite_result(1.0 / c, "LOO variance"))


def loo_squared_error(kernel, X, y, noise_var, eval_gradient=False):
    r"""Leave-one-out mean squared error, :math:`\frac1n\sum_i (y_i - \mu_i)^2`.

    Equal to :math:`\frac1n\sum_i (\alpha_i/c_i)^2` with c = diag(A⁻¹), μ_i from eq. (5.12).
    With ``eval_gradient`` also the gradient, ndarray of shape (p + 1,), w.r.t.
    ``np.append(kernel.theta, log(noise_var))``.

    Parameters
    ----------
    kernel, X, y, noise_var
        As in :func:`loo_predictions`; σ² > 0 with ``eval_gradient``.
    eval_gradient : bool, optional
        Also return the gradient.

    Returns
    -------
    float, or (float, ndarray of shape (p + 1,)) with ``eval_gradient``.

    Raises
    ------
    TypeError, ValueError, CholeskyError
        As :func:`fit`; ValueError also for n < 2 or ``eval_gradient=True`` with ``noise_var=0``.
    FloatingPointError
        If the value or gradient comes out NaN or infinite.
    """
    a, c, da, dc = _loo_terms(kernel, X, y, noise_var, eval_gradient)
    r = a / c                                                          # residual y_i − μ_i
    value = finite_result(np.mean(r**2), "LOO squared error")
    if not eval_gradient:
        return float(value)
    dr = da / c[:, None] - (r / c)[:, None] * dc
    return float(value), finite_result(2.0 * r @ dr / r.size, "LOO squared-error gradient")


def loo_neg_log_predictive(kernel, X, y, noise_var, eval_gradient=False):
    r"""Mean negative LOO log predictive probability, −L_LOO/n of R&W eq. (5.10).

    :math:`\frac1n\sum_i [\tfrac12\log(2\pi/c_i) + \alpha_i^2/(2c_i)]`, c = diag(A⁻¹). With
    ``eval_gradient`` also the gradient (−1/n times eq. 5.13), ndarray of shape (p + 1,), w.r.t.
    ``np.append(kernel.theta, log(noise_var))``.

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient
        As in :func:`loo_squared_error` (n >= 2; σ² > 0 with ``eval_gradient``).

    Returns
    -------
    float, or (float, ndarray of shape (p + 1,)) with ``eval_gradient``.

    Raises
    ------
    TypeError, ValueError, CholeskyError, FloatingPointError
        As :func:`loo_squared_error`.
    """
    a, c, da, dc = _loo_terms(kernel, X, y, noise_var, eval_gradient)
    value = finite_result(np.mean(0.5 * (_LOG_2PI - np.log(c)) + 0.5 * a**2 / c), "LOO log predictive")
    if not eval_gradient:
        return float(value)
    # eq. (5.13): ∂/∂θ_j of each term is −½ (1 + α_i²/c_i) ∂c_i/c_i + α_i ∂α_i/c_i
    terms = -0.5 * ((1.0 + a**2 / c) / c)[:, None] * dc + (a / c)[:, None] * da
    return float(value), finite_result(terms.mean(axis=0), "LOO log predictive gradient")
