r"""Least-squares support vector machine (LS-SVM) regression and kernel ridge, [LSWV05] eqs. (15)-(18).

The LS-SVM minimises ½ωᵀω + γ ½ Σ_i e_i² subject to y_i = ωᵀφ(x_i) + b + e_i (eqs. 16-17). Its dual
solution h(x) = Σ_i α_i k(x, x_i) + b (eq. 18) solves

    [ 0   1ᵀ         ] [b]   [0]
    [ 1   K + I / γ  ] [α] = [y].

Without the bias b (``bias=False``) this is kernel ridge regression, i.e. the posterior mean of a GP with
covariance k and noise variance σ² = 1/γ — the predictor of [MO03], whose bootstrap the replica theory
describes. A point present c_i times in a bootstrap sample contributes γ c_i e_i²/2, so duplicates are
handled as weights: the diagonal term becomes 1/(γ c_i) on the distinct points.

For a whole grid of γ one eigendecomposition suffices: with C = diag(c) and C^½ K C^½ = U Λ Uᵀ,
(K + (γC)⁻¹)⁻¹ = C^½ U (Λ + I/γ)⁻¹ Uᵀ C^½, so each further γ costs O(N·M) instead of O(N³). The same
eigendecomposition gives the exact leave-one-out residuals of every γ (:func:`lssvm_loo`, Cawley & Talbot 2004;
derivation in ``docs/linear_response.md``, eqs. 16-19).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from explorer.kernels import Kernel

__all__ = ["LSSVM", "lssvm_path", "LSSVMLeaveOneOut", "lssvm_loo"]


def lssvm_path(K: ArrayLike, y: ArrayLike, gammas: ArrayLike, K_eval: ArrayLike, *,
               weights: ArrayLike | None = None, bias: bool = True) -> np.ndarray:
    """Predictions of the LS-SVM (eq. 18) trained with every γ in ``gammas``, at the evaluation inputs.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the (distinct) training inputs.
    y : ndarray of shape (n,)
        Targets.
    gammas : ndarray of shape (G,)
        Positive regularisation parameters γ of eq. (16).
    K_eval : ndarray of shape (m, n)
        k(x, x_i) for the m evaluation inputs.
    weights : ndarray of shape (n,), optional
        Positive multiplicities c_i of the training points (default all one).
    bias : bool
        Include the bias b (LS-SVM); False gives kernel ridge regression (the GP mean, σ² = 1/γ).

    Returns
    -------
    ndarray of shape (G, m)
        h(x) of eq. (18) for every γ and evaluation input.

    Raises
    ------
    ValueError
        If the shapes disagree, a γ is not positive and finite or a weight is not positive.
    """
    K, y, gammas, K_eval, c = _path_iv(K, y, gammas, K_eval, weights)
    r = np.sqrt(c)
    lam, U = np.linalg.eigh(r[:, None] * K * r[None, :])
    lam = np.maximum(lam, 0.0)  # round-off; K is positive semi-definite
    inv = 1.0 / (lam[None, :] + 1.0 / gammas[:, None])  # (G, n): (Λ + I/γ)⁻¹
    E = (K_eval * r[None, :]) @ U  # k(x)ᵀ C^½ U, (m, n)

    def solve(v: np.ndarray) -> np.ndarray:  # Uᵀ C^½ (K + (γC)⁻¹)⁻¹ v for every γ: (G, n)
        return inv * (U.T @ (r * v))[None, :]

    nu = solve(y)
    if not bias:
        return nu @ E.T
    eta = solve(np.ones_like(y))
    ones = U.T @ r  # Uᵀ C^½ 1
    b = (nu @ ones) / (eta @ ones)  # b = 1ᵀν / 1ᵀη with ν = H⁻¹y, η = H⁻¹1
    return (nu - b[:, None] * eta) @ E.T + b[:, None]


@dataclass(frozen=True)
class LSSVMLeaveOneOut:
    """Exact leave-one-out of the LS-SVM over a grid of γ without refits, eqs. (16)-(19) of docs/linear_response.md.

    Attributes
    ----------
    grid : ndarray of shape (G,)
        The values of γ.
    residuals : ndarray of shape (G, N)
        r_i(γ) = y_i − h^{(−i)}(x_i), the residual of the model trained without point i, eq. (16).
    generalization_error : ndarray of shape (G,)
        (1/N) Σ_i r_i(γ)², the leave-one-out estimate of the generalization error (square loss), eq. (19).
    """

    grid: np.ndarray
    residuals: np.ndarray
    generalization_error: np.ndarray

    @property
    def selected(self) -> float:
        """The γ of the grid with the smallest leave-one-out error."""
        return float(self.grid[np.argmin(self.generalization_error)])


def lssvm_loo(K: ArrayLike, y: ArrayLike, gammas: ArrayLike, *, bias: bool = True) -> LSSVMLeaveOneOut:
    """Exact leave-one-out residuals of the LS-SVM (eq. 18 of [LSWV05]) for every γ, zero refits.

    With H = [[0, 1ᵀ], [1, K + I/γ]] and [b; α] = H⁻¹[0; y], the residual of the model trained without point i is
    r_i = α_i / [H⁻¹]_αα,ii (Cawley & Talbot 2004; Lemma 1 and eq. 16 of docs/linear_response.md). With M = K + I/γ
    and η = M⁻¹1, [H⁻¹]_αα = M⁻¹ − ηηᵀ/(1ᵀη) (eq. 17); with K = UΛUᵀ, diag(M⁻¹) = (U∘U)(Λ + I/γ)⁻¹ (eq. 18).
    One eigendecomposition for the whole grid, then O(N²) per γ. Without the bias (``bias=False``) this is the GP
    leave-one-out of R&W eq. (5.12) at noise σ² = 1/γ: r_i = α_i/[M⁻¹]_ii.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the training inputs, n >= 2.
    y : ndarray of shape (n,)
        Targets.
    gammas : ndarray of shape (G,)
        Positive regularisation parameters γ of eq. (16) of [LSWV05].
    bias : bool
        Include the bias b (LS-SVM); False gives kernel ridge regression.

    Returns
    -------
    LSSVMLeaveOneOut
        The residuals (G, n) and the generalization error (G,) along the grid, and the selected γ.

    Raises
    ------
    ValueError
        If the shapes disagree, n < 2 or a γ is not positive and finite.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 30)
    >>> K = np.exp(-(x[:, None] - x[None, :]) ** 2 / 0.02)
    >>> loo = lssvm_loo(K, np.sinc(4 * x - 2), [1.0, 10.0, 100.0])
    >>> loo.generalization_error.shape
    (3,)
    """
    K, y, gammas, _, _ = _path_iv(K, y, gammas, K, None)
    if y.size < 2:
        raise ValueError(f"leave-one-out needs at least 2 training points, got {y.size}.")
    lam, U = np.linalg.eigh(K)
    inv = 1.0 / (np.maximum(lam, 0.0)[None, :] + 1.0 / gammas[:, None])  # (G, n): (Λ + I/γ)⁻¹
    diag = inv @ (U**2).T                                            # eq. (18): diag(M⁻¹), (G, n)
    alpha = (inv * (U.T @ y)[None, :]) @ U.T                         # M⁻¹y, (G, n)
    if bias:
        eta = (inv * (U.T @ np.ones_like(y))[None, :]) @ U.T         # η = M⁻¹1
        total = eta.sum(axis=1, keepdims=True)                       # 1ᵀη
        alpha = alpha - (alpha.sum(axis=1, keepdims=True) / total) * eta  # α = M⁻¹(y − b1), b = 1ᵀM⁻¹y / 1ᵀη
        diag = diag - eta**2 / total                                 # eq. (17)
    residuals = alpha / diag                                         # eq. (16)
    return LSSVMLeaveOneOut(gammas, residuals, np.mean(residuals**2, axis=1))


@dataclass(frozen=True)
class LSSVM:
    """LS-SVM regression ([LSWV05] eqs. 15-18) as a model family (:class:`~explorer.fast_bootstrap.family.ModelFamily`)
    indexed by γ, for the bootstrap of §3.

    ``kernel`` is any :mod:`explorer.kernels` kernel (the paper's Gaussian kernel: ``SquaredExponential``
    with one lengthscale and unit variance); ``bias=False`` gives kernel ridge regression (GP mean).
    """

    kernel: Kernel
    bias: bool = True

    name = "ls-svm"
    complexity = "regularization parameter γ"
    integer = False

    def predict_path(self, X: np.ndarray, y: np.ndarray, grid: np.ndarray, X_eval: np.ndarray,
                     weights: np.ndarray | None = None, rng=None) -> np.ndarray:
        """Predictions of the models trained on (X, y) with each γ in ``grid`` (:func:`lssvm_path`).

        Parameters and result as in :meth:`explorer.fast_bootstrap.family.ModelFamily.predict_path`, with q = γ;
        ``rng`` is unused (the LS-SVM is deterministic).
        """

        del rng  # deterministic
        return lssvm_path(self.kernel(X), y, grid, self.kernel(X_eval, X), weights=weights, bias=self.bias)

    def leave_one_out(self, X: np.ndarray, y: np.ndarray, grid: np.ndarray) -> LSSVMLeaveOneOut:
        """Exact leave-one-out of the models trained on (X, y) with each γ in ``grid`` (:func:`lssvm_loo`).

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Training inputs.
        y : ndarray of shape (n,)
            Targets.
        grid : ndarray of shape (G,)
            Values of γ.

        Returns
        -------
        LSSVMLeaveOneOut
        """
        return lssvm_loo(self.kernel(X), y, grid, bias=self.bias)


def _path_iv(K, y, gammas, K_eval, weights):
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    gammas = np.atleast_1d(np.asarray(gammas, dtype=float))
    K_eval = np.atleast_2d(np.asarray(K_eval, dtype=float))
    if K.ndim != 2 or K.shape != (y.size, y.size) or y.ndim != 1:
        raise ValueError(f"`K` must have shape (n, n) with n = len(y) = {y.size}, got {K.shape}.")
    if K_eval.shape[1] != y.size:
        raise ValueError(f"`K_eval` must have {y.size} columns (one per training point), got {K_eval.shape}.")
    if not (np.all(np.isfinite(gammas)) and np.all(gammas > 0)):
        raise ValueError(f"every γ must be positive and finite, got {gammas}. γ weighs the squared errors, "
                         "eq. (16) of [LSWV05].")
    c = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float)
    if c.shape != y.shape or not np.all(c > 0):
        raise ValueError(f"`weights` must be {y.size} positive multiplicities, got shape {c.shape}. "
                         "Drop the points that are absent from a bootstrap sample instead of weighting them 0.")
    return K, y, gammas, K_eval, c
