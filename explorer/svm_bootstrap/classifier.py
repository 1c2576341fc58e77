"""Hard-margin support vector classifier without bias ([MO03b], eq. 1).

The SVM of [MO03b], eq. (1): the internal field f = (f_1, ..., f_N) at the training inputs solves

    minimise f^T K^{-1} f   subject to   y_i f_i >= 1 for every i in the training set D,

and f(x) = sum_i y_i alpha_i K(x, x_i). Its dual is max_alpha sum_i alpha_i - 1/2 alpha^T Q alpha with
alpha >= 0 and Q = diag(y) K diag(y): a non-negative least-squares problem, min ‖R alpha - b‖^2 with
Q = R^T R and R^T b = 1, whose normal equations only involve Q and the vector of ones. We solve it
exactly with the Lawson-Hanson active-set method on (Q, 1) ("fast NNLS", Bro & de Jong 1997), keeping a
Cholesky factor of Q on the support vectors that grows by one row per added support vector.
The Kuhn-Tucker conditions are alpha >= 0, y_i f_i >= 1 and alpha_i (y_i f_i - 1) = 0.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

__all__ = ["NotSeparableError", "SVMSolution", "fit_hard_margin", "check_kernel_labels"]


#: A new support vector whose squared distance (in feature space, relative to K_jj) from the span of
#: the others is below this makes Q_PP numerically singular: the data are then not separable.
SINGULAR_RTOL = 1e-13
#: alpha above this (times max K_ii) means the margin constraints are numerically unsatisfiable.
ALPHA_MAX = 1e12


class NotSeparableError(ValueError):
    """The training data cannot be separated with margin 1 under this kernel (hard-margin SVM)."""


@dataclass(frozen=True)
class SVMSolution:
    """Hard-margin SVM without bias trained on the points with ``mask`` True ([MO03b], eq. 1).

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Dual weights alpha_i >= 0 (zero off the training set and off the support vectors).
    field : ndarray of shape (n,)
        Internal field f_i = sum_j y_j alpha_j K_ij at every one of the n inputs of K.
    y : ndarray of shape (n,)
    mask : ndarray of bool, shape (n,)
        The training set D (all True when trained on every input).
    n_iter : int
        Solves of the support-vector system.
    """

    alpha: np.ndarray
    field: np.ndarray
    y: np.ndarray
    mask: np.ndarray
    n_iter: int

    @property
    def support(self) -> np.ndarray:
        """Indices of the support vectors (alpha_i > 0)."""
        return np.flatnonzero(self.alpha > 0)

    @property
    def margins(self) -> np.ndarray:
        """y_i f_i at every input; >= 1 (up to the solver tolerance) on the training set."""
        return self.y * self.field

    def decision_function(self, K_cross: ArrayLike) -> np.ndarray:
        """f(x) = sum_i y_i alpha_i K(x, x_i), eq. (1) (no bias term).

        Parameters
        ----------
        K_cross : ndarray of shape (M, n)
            K(X_new, X) between M new inputs and the n inputs of the solution.

        Returns
        -------
        ndarray of shape (M,)
            The field f(x) at the new inputs; the predicted label is its sign.

        Raises
        ------
        ValueError
            If ``K_cross`` does not have n columns.
        """
        K_cross = np.atleast_2d(np.asarray(K_cross, dtype=float))
        if K_cross.shape[1] != self.alpha.size:
            raise ValueError(f"`K_cross` must have {self.alpha.size} columns (one per training input), "
                             f"got shape {K_cross.shape}.")
        return K_cross @ (self.y * self.alpha)

    def kkt_violation(self) -> dict[str, float]:
        """Largest violations of the Kuhn-Tucker conditions on the training set (all 0 when exact).

        Returns
        -------
        dict of str to float
            ``dual``: max(-alpha_i); ``primal``: max(1 - y_i f_i); ``complementary``: max alpha_i | y_i f_i - 1 |
            relative to max alpha; ``off_training``: max | alpha | outside the training set.
        """
        m, a = self.margins[self.mask], self.alpha[self.mask]
        scale = max(float(a.max(initial=0.0)), 1e-300)
        return {"dual": float(max(0.0, -a.min(initial=0.0))), "primal": float(max(0.0, (1 - m).max(initial=0.0))),
                "complementary": float((a * np.abs(m - 1)).max(initial=0.0) / scale),
                "off_training": float(np.abs(self.alpha[~self.mask]).max(initial=0.0))}


def fit_hard_margin(K: ArrayLike, y: ArrayLike, *, mask: ArrayLike | None = None, tol: float = 1e-9,
                    max_iter: int | None = None, init: SVMSolution | None = None) -> SVMSolution:
    """Train the hard-margin SVM without bias of [MO03b], eq. (1), exactly.

    Lawson-Hanson non-negative least squares on the dual (module docstring): support vectors enter one
    at a time (the most violated margin first) and leave when their weight would turn negative.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the inputs (symmetric positive semi-definite).
    y : ndarray of shape (n,)
        Labels -1 / +1.
    mask : ndarray of bool, shape (n,), optional
        Train on these inputs only (a bootstrap sample's distinct points); the field is still
        returned at all n inputs. Default: all.
    tol : float
        Stop when every training margin satisfies y_i f_i >= 1 - tol.
    max_iter : int, optional
        Bound on the number of support-vector solves (default 10 n + 100).
    init : SVMSolution, optional
        A solution for the same K on another training set (e.g. all of D0): its weights on this
        training set are a feasible start (warm start). The result does not depend on it.

    Returns
    -------
    SVMSolution
        The weights ``alpha`` (0 outside the training set) and the field f = K (y ∘ alpha) at all n inputs,
        ndarrays of shape (n,), and the number of support-vector solves ``n_iter``.

    Raises
    ------
    NotSeparableError
        If the margin constraints cannot be met: identical inputs with different labels, or a kernel
        so broad that a needed support vector is numerically a combination of the others.
    ValueError
        If K, y, ``mask`` or ``tol`` is invalid.
    """
    K, y, mask, max_iter = _fit_iv(K, y, mask, tol, max_iter)
    train = np.flatnonzero(mask)
    alpha = np.zeros(y.size)
    n_iter = 0
    if train.size:
        Q = K[np.ix_(train, train)] * np.outer(y[train], y[train])
        start = None if init is None else init.alpha[train]
        a, n_iter = _nnls_dual(Q, tol, max_iter, start)
        alpha[train] = a
    field = K @ (y * alpha)  # f = K (y ∘ alpha), eq. (1)
    sol = SVMSolution(alpha, field, y, mask, n_iter)
    _check_solution(sol, tol)
    return sol


def _nnls_dual(Q: np.ndarray, tol: float, max_iter: int, start: np.ndarray | None = None
               ) -> tuple[np.ndarray, int]:
    """min 1/2 a^T Q a - sum(a), a >= 0 (Lawson-Hanson on the normal equations Q a = 1).

    Outer loop: add the input with the largest margin violation w_j = 1 - (Q a)_j = 1 - y_j f_j to the
    passive (support) set; inner loop (``_solve_passive``): solve Q_PP a_P = 1, stepping back while a
    weight would turn negative. A warm start (any a >= 0) begins with the inner loop on its support.
    """
    alpha = np.zeros(Q.shape[0]) if start is None else np.maximum(start, 0.0)
    passive = [int(i) for i in np.flatnonzero(alpha)]
    L = _factor(Q, passive)
    n_iter = 0
    while True:
        if n_iter or not passive:
            j = _most_violated(1.0 - Q[:, passive] @ alpha[passive], passive, tol)
            if j < 0:
                return alpha, n_iter
            L = _append_to_factor(L, Q, passive, j)
            passive.append(j)
        passive, L, n_solves = _solve_passive(Q, alpha, passive, L, max_iter - n_iter)
        n_iter += n_solves
        _check_weights(alpha, Q)


def _solve_passive(Q, alpha, passive, L, budget) -> tuple[list[int], np.ndarray, int]:
    """Inner loop: alpha_P = Q_PP^{-1} 1 if positive, else step back from the feasible alpha towards it
    until a weight hits zero, drop it and repeat. Updates alpha in place."""
    for n_solves in range(1, budget + 1):
        idx = np.array(passive, dtype=int)
        z = _solve_factor(L, Q[np.ix_(idx, idx)])
        if np.all(z > 0):
            alpha[:] = 0.0
            alpha[idx] = z
            return passive, L, n_solves
        passive = _step_back(alpha, idx, z)
        L = _factor(Q, passive)
    raise NotSeparableError(
        "The hard-margin SVM did not finish within its budget of support-vector solves (the active set "
        "cycles): the problem is numerically degenerate. Use a narrower kernel.")


def _check_weights(alpha: np.ndarray, Q: np.ndarray) -> None:
    if alpha.max(initial=0.0) * np.diag(Q).max() > ALPHA_MAX:
        raise NotSeparableError(
            f"The hard-margin SVM weights grew to alpha = {alpha.max():.3g}: the margin constraints "
            "y_i f_i >= 1 are numerically unsatisfiable under this kernel. Use a narrower kernel "
            "(smaller lengthscale) or check for near-identical inputs with different labels.")


def _step_back(alpha: np.ndarray, idx: np.ndarray, z: np.ndarray) -> list[int]:
    """Move alpha[idx] towards z until the first weight hits zero; return the indices still positive."""
    a = alpha[idx]
    neg = np.flatnonzero(z <= 0)
    ratios = a[neg] / (a[neg] - z[neg])
    k = int(np.argmin(ratios))
    a = a + ratios[k] * (z - a)
    keep = a > 1e-14 * a.max(initial=0.0)
    keep[neg[k]] = False
    alpha[idx] = np.where(keep, a, 0.0)
    return [int(i) for i in idx[keep]]


def _most_violated(w: np.ndarray, passive: list[int], tol: float) -> int:
    """Index of the largest margin violation outside the passive set, or -1 if none exceeds tol."""
    w = w.copy()
    w[passive] = -np.inf
    j = int(np.argmax(w))
    return j if w[j] > tol else -1


def _append_to_factor(L: np.ndarray, Q: np.ndarray, passive: list[int], j: int) -> np.ndarray:
    """Lower Cholesky factor of Q[P + j, P + j] from that of Q[P, P] (one new row, O(|P|^2))."""
    k, q_jj = len(passive), Q[j, j]
    l = scipy.linalg.solve_triangular(L, Q[passive, j], lower=True, check_finite=False) if k else np.zeros(0)
    d2 = q_jj - l @ l
    if not d2 > SINGULAR_RTOL * q_jj:
        raise NotSeparableError(
            f"Input {j} is (numerically) a combination of the current support vectors in feature space "
            f"(relative residual {max(d2, 0.0) / q_jj:.1e}) but its margin is violated: the data are not "
            "separable under this kernel. Identical inputs with different labels cause this; so does a "
            "very broad kernel. Remove conflicting rows or use a narrower kernel.")
    out = np.zeros((k + 1, k + 1))
    out[:k, :k] = L
    out[k, :k] = l
    out[k, k] = np.sqrt(d2)
    return out


def _factor(Q: np.ndarray, passive: list[int]) -> np.ndarray:
    if not passive:
        return np.zeros((0, 0))
    try:
        return np.linalg.cholesky(Q[np.ix_(passive, passive)])
    except np.linalg.LinAlgError as err:
        raise NotSeparableError("The support-vector kernel matrix is numerically singular: the data are "
                                "not separable under this kernel. Use a narrower kernel.") from err


def _solve_factor(L: np.ndarray, Q_pp: np.ndarray) -> np.ndarray:
    """z = Q_PP^{-1} 1 from the Cholesky factor, with one step of iterative refinement."""
    ones = np.ones(L.shape[0])
    z = scipy.linalg.cho_solve((L, True), ones, check_finite=False)
    return z + scipy.linalg.cho_solve((L, True), ones - Q_pp @ z, check_finite=False)


def _check_solution(sol: SVMSolution, tol: float) -> None:
    violation = sol.kkt_violation()
    if violation["primal"] > max(10 * tol, 1e-6):
        raise NotSeparableError(
            f"The hard-margin solution violates a margin by {violation['primal']:.2e} (min y_i f_i = "
            f"{sol.margins[sol.mask].min():.6g}): the data are numerically not separable under this "
            "kernel. Use a narrower kernel.")


def _fit_iv(K, y, mask, tol, max_iter):
    K, y = check_kernel_labels(K, y)
    n = y.size
    if mask is None:
        mask = np.ones(n, dtype=bool)
    else:
        mask = np.asarray(mask)
        if mask.shape != (n,) or mask.dtype != bool:
            raise ValueError(f"`mask` must be a boolean array of shape ({n},) selecting the training inputs, "
                             f"got dtype {mask.dtype} and shape {mask.shape}.")
    if not (np.isfinite(tol) and 0 < tol < 1):
        raise ValueError(f"`tol` must be in (0, 1), got {tol}. It is the accepted margin violation 1 - y f.")
    if max_iter is None:
        max_iter = 10 * n + 100
    return K, y, mask, int(max_iter)


def check_kernel_labels(K, y) -> tuple[np.ndarray, np.ndarray]:
    """Validated kernel matrix and labels of a classification problem (every SVM solver's first check).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric, finite kernel matrix k(X, X), n >= 1.
    y : array_like of shape (n,)
        Class labels -1 and +1.

    Returns
    -------
    tuple
        ``K`` and ``y`` as float ndarrays.

    Raises
    ------
    ValueError
        If a shape is wrong, ``K`` is not finite or not symmetric, or ``y`` holds other values than -1 and +1.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"`K` must be a non-empty square kernel matrix of shape (n, n), got shape {K.shape}.")
    y = np.asarray(y, dtype=float)
    if y.shape != (K.shape[0],):
        raise ValueError(f"`y` must have shape ({K.shape[0]},) to match `K`, got shape {y.shape}. "
                         "Pass one label per input.")
    if not np.all(np.isfinite(K)):
        raise ValueError("`K` must be finite; found NaN or inf. Check the kernel and the inputs.")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"`y` must hold class labels -1 and +1, got values {np.unique(y)[:5]}. "
                         "Map the two classes to -1 and +1.")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.abs(K).max()):
        raise ValueError("`K` must be symmetric; pass k(X, X) of the training inputs.")
    return K, y
