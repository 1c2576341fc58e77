r"""Cross-validation criteria in closed form, without refits ([Fis16] §2.4.2, eq. 2.12).

:func:`loo_cv` the mean negative leave-one-out log predictive probability (R&W eq. 5.10-5.12), :func:`kfold_cv`
the K-fold criterion from K_y⁻¹ with its gradient, :func:`draw_folds` the random folds.

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from scipy import linalg

from explorer import regression
from explorer.kernels import Kernel
from explorer.model_selection.evidence import CriterionValue, as_criterion_value

__all__ = ["loo_cv", "draw_folds", "kfold_cv"]

_LOG_2PI = np.log(2.0 * np.pi)


def loo_cv(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
    """Mean negative LOO log predictive probability −L_LOO/N (R&W eq. 5.10), the K = N case of eq. (2.12).

    Parameters
    ----------
    kernel, X, y, noise_var, eval_gradient
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`, with N >= 2.

    Returns
    -------
    CriterionValue
        ``criterion="loo"``, the value per case and the gradient as in :func:`~explorer.model_selection.evidence.negative_log_evidence`; the
        errors are those of :func:`explorer.regression.loo_neg_log_predictive`.
    """
    return as_criterion_value("loo", 1.0, regression.loo_neg_log_predictive(kernel, X, y, noise_var, eval_gradient))


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
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`.
    folds : sequence of array_like of int
        At least 2 index sets that partition range(N), e.g. from :func:`draw_folds`.
    eval_gradient : bool, optional
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`.

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
