"""Hard-margin support vector classifier without bias and its Monte-Carlo bootstrap (seed 004).

The SVM of seed 004, eq. (1): the internal field f = (f_1, ..., f_N) at the training inputs solves

    minimise f^T K^{-1} f   subject to   y_i f_i >= 1 for every i in the training set D,

and f(x) = sum_i y_i alpha_i K(x, x_i). Its dual is max_alpha sum_i alpha_i - 1/2 alpha^T Q alpha with
alpha >= 0 and Q = diag(y) K diag(y): a non-negative least-squares problem, min |R alpha - b|^2 with
Q = R^T R and R^T b = 1, whose normal equations only involve Q and the vector of ones. We solve it
exactly with the Lawson-Hanson active-set method on (Q, 1) ("fast NNLS", Bro & de Jong 1997), keeping a
Cholesky factor of Q on the support vectors that grows by one row per added support vector.
The Kuhn-Tucker conditions are alpha >= 0, y_i f_i >= 1 and alpha_i (y_i f_i - 1) = 0.

Duplicated points do not change a hard-margin solution (a constraint counted twice is the same
constraint), so a bootstrap sample is just its set of distinct points, and identical inputs with the
same label can be merged into one *site* (:func:`merge_identical`). Identical inputs with different
labels cannot be separated: :class:`NotSeparableError`.

The Monte-Carlo bootstrap draws occupation numbers s_i of the N data rows (eq. 7: Poisson with mean S/N,
or multinomial with fixed size S), retrains the SVM on the sites that hold at least one drawn row and
records the field at every row and at test inputs. It returns a ``montecarlo.BootstrapPredictions`` so
that Efron's estimator, eq. (6), and its standard error are the ones of the GP-regression bootstrap.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from . import montecarlo
from .montecarlo import BootstrapError, BootstrapPredictions, Cancelled, LearningCurve

__all__ = ["NotSeparableError", "SVMSolution", "Sites", "LeaveOneOut", "FieldProbability",
           "Cancelled", "fit_hard_margin", "merge_identical", "zero_one_loss", "bootstrap_fields",
           "bootstrap_classification_error", "bootstrap_learning_curve", "probability_negative", "left_out_fields",
           "leave_one_out", "loo_error"]

RngLike = np.random.Generator | int | None
Progress = Callable[[int, int], None]

#: A new support vector whose squared distance (in feature space, relative to K_jj) from the span of
#: the others is below this makes Q_PP numerically singular: the data are then not separable.
SINGULAR_RTOL = 1e-13
#: alpha above this (times max K_ii) means the margin constraints are numerically unsatisfiable.
ALPHA_MAX = 1e12


class NotSeparableError(ValueError):
    """The training data cannot be separated with margin 1 under this kernel (hard-margin SVM)."""


@dataclass(frozen=True)
class SVMSolution:
    """Hard-margin SVM without bias trained on the points with ``mask`` True (seed 004, eq. 1).

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
        """f(x) = sum_i y_i alpha_i K(x, x_i) for K_cross = K(X_new, X) of shape (M, n)."""
        K_cross = np.atleast_2d(np.asarray(K_cross, dtype=float))
        if K_cross.shape[1] != self.alpha.size:
            raise ValueError(f"`K_cross` must have {self.alpha.size} columns (one per training input), "
                             f"got shape {K_cross.shape}.")
        return K_cross @ (self.y * self.alpha)

    def kkt_violation(self) -> dict[str, float]:
        """Largest violations of the Kuhn-Tucker conditions on the training set (all 0 when exact).

        ``dual``: max(-alpha_i); ``primal``: max(1 - y_i f_i); ``complementary``: max alpha_i |y_i f_i - 1|
        relative to max alpha; ``off_training``: max alpha outside the training set.
        """
        m, a = self.margins[self.mask], self.alpha[self.mask]
        scale = max(float(a.max(initial=0.0)), 1e-300)
        return {"dual": float(max(0.0, -a.min(initial=0.0))), "primal": float(max(0.0, (1 - m).max(initial=0.0))),
                "complementary": float((a * np.abs(m - 1)).max(initial=0.0) / scale),
                "off_training": float(np.abs(self.alpha[~self.mask]).max(initial=0.0))}


def fit_hard_margin(K: ArrayLike, y: ArrayLike, *, mask: ArrayLike | None = None, tol: float = 1e-9,
                    max_iter: int | None = None, init: SVMSolution | None = None) -> SVMSolution:
    """Train the hard-margin SVM without bias of seed 004, eq. (1), exactly.

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

    Raises
    ------
    NotSeparableError
        If the margin constraints cannot be met: identical inputs with different labels, or a kernel
        so broad that a needed support vector is numerically a combination of the others.
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
        f"The hard-margin SVM did not finish within its budget of support-vector solves (the active set "
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
    K, y = _kernel_labels_iv(K, y)
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


def _kernel_labels_iv(K, y) -> tuple[np.ndarray, np.ndarray]:
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


# ----------------------------------------------------------------------------- identical inputs

@dataclass(frozen=True)
class Sites:
    """Distinct training inputs ("sites") of a data set whose identical rows are merged.

    Attributes
    ----------
    index : ndarray of int, shape (n_sites,)
        First row of every site (use ``X[index]``, ``y[index]``).
    row_site : ndarray of int, shape (N,)
        Site of every row.
    counts : ndarray of int, shape (n_sites,)
        k, the number of rows of every site.
    y : ndarray of shape (n_sites,)
        Label of every site.
    """

    index: np.ndarray
    row_site: np.ndarray
    counts: np.ndarray
    y: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.row_site.size

    @property
    def n_sites(self) -> int:
        return self.index.size


def merge_identical(X: ArrayLike, y: ArrayLike) -> Sites:
    """Merge identical input rows (same label) into sites; sites keep the order of first appearance.

    Raises
    ------
    NotSeparableError
        If identical inputs carry different labels (no classifier can separate them).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"`X` must have shape (N, d) and `y` shape (N,), got {X.shape} and {y.shape}.")
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(first)  # renumber sites by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    row_site = rank[inverse]
    index = first[order]
    conflict = np.flatnonzero(y != y[index][row_site])
    if conflict.size:
        i = int(conflict[0])
        raise NotSeparableError(
            f"Rows {int(index[row_site[i]])} and {i} have identical inputs but labels "
            f"{y[index[row_site[i]]]:+g} and {y[i]:+g} ({conflict.size} such rows): a hard-margin classifier "
            "cannot separate them. Remove or relabel the conflicting rows.")
    return Sites(index, row_site, np.bincount(row_site), y[index])


# ----------------------------------------------------------------------------- Monte-Carlo bootstrap

def zero_one_loss(f: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Classification loss g = Θ(-y f) of seed 004 (Θ(0) = 0: a zero field is not counted as an error)."""
    return (np.multiply(f, y) < 0).astype(float)


def bootstrap_fields(K: ArrayLike, y: ArrayLike, S: float, n_samples: int, *, row_site: ArrayLike | None = None,
                     K_test: ArrayLike | None = None, scheme: str = "poisson", rng: RngLike = None,
                     batch_size: int = 64, tol: float = 1e-9, init: SVMSolution | None = None,
                     progress: Progress | None = None,
                     should_stop: Callable[[], bool] | None = None) -> BootstrapPredictions:
    """Internal fields of SVMs retrained on ``n_samples`` bootstrap samples (seed 004, eqs. 1, 7).

    Occupation numbers are drawn for the N data rows; a site enters the sample when at least one of
    its rows is drawn, and the hard-margin SVM is trained on those sites (duplicates do not matter).

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the sites (distinct inputs; see ``merge_identical``).
    y : ndarray of shape (n_sites,)
        Labels of the sites.
    S : float
        Mean (Poisson, eq. 7) or fixed (multinomial) number of rows drawn.
    row_site : ndarray of int, shape (N,), optional
        Site of every data row (``Sites.row_site``); default one row per site.
    K_test : ndarray of shape (M, n_sites), optional
        K(X_test, X_sites); the fields at the test inputs are returned too.
    scheme, rng, batch_size, progress, should_stop
        As in ``montecarlo.bootstrap_predictions``; all occupations are drawn up front, so
        ``batch_size`` never changes the result.
    tol : float
        Margin tolerance of every SVM fit.
    init : SVMSolution, optional
        Warm start of every fit (default: the SVM on all sites, computed here); results do not depend on it.

    Returns
    -------
    montecarlo.BootstrapPredictions
        ``occupations`` (n_samples, N) of the rows, ``train`` (n_samples, N) the field at every row,
        ``test`` (n_samples, M) or None.
    """
    K, y, row_site, K_test = _fields_iv(K, y, row_site, K_test)
    n_rows = row_site.size
    _, S, n_samples, scheme = montecarlo._occupation_iv(n_rows, S, n_samples, scheme)
    batch_size = montecarlo._positive_int(batch_size, "batch_size", "It is the number of samples per batch.")
    occupations = montecarlo._draw_occupations(n_rows, S, n_samples, scheme, np.random.default_rng(rng))
    init = fit_hard_margin(K, y, tol=tol) if init is None else init
    return _fields_of_samples(K, y, row_site, K_test, occupations, S, scheme, batch_size, tol, init, progress,
                              should_stop)


def _fields_of_samples(K, y, row_site, K_test, occupations, S, scheme, batch_size, tol, init, progress,
                       should_stop) -> BootstrapPredictions:
    n_samples, n_sites = occupations.shape[0], y.size
    site_fields = np.empty((n_samples, n_sites))
    test = None if K_test is None else np.empty((n_samples, K_test.shape[0]))
    for start in range(0, n_samples, batch_size):
        if should_stop is not None and should_stop():
            raise Cancelled(start, n_samples)
        stop = min(start + batch_size, n_samples)
        for b in range(start, stop):
            present = np.bincount(row_site, weights=occupations[b], minlength=n_sites) > 0
            sol = fit_hard_margin(K, y, mask=present, tol=tol, init=init)
            site_fields[b] = sol.field
            if test is not None:
                test[b] = K_test @ (y * sol.alpha)
        if progress is not None:
            progress(stop, n_samples)
    return BootstrapPredictions(occupations, site_fields[:, row_site], test, S, scheme)


def bootstrap_classification_error(fields: BootstrapPredictions, y_rows: ArrayLike) -> BootstrapError:
    """Efron's bootstrap classification error, eq. (6) of seed 004, with its delta-method standard error.

    (1/N) sum_i E[δ_{s_i,0} Θ(-y_i f_i(D))] / E[δ_{s_i,0}] over the rows left out of at least one sample;
    ``y_rows`` holds the label of every row (``y_sites[row_site]``).
    """
    return montecarlo.bootstrap_test_error(fields, y_rows, loss=zero_one_loss)


def bootstrap_learning_curve(K: ArrayLike, y: ArrayLike, S_values: ArrayLike, n_samples: int, *,
                             row_site: ArrayLike | None = None, scheme: str = "poisson", rng: RngLike = None,
                             batch_size: int = 64, progress: Progress | None = None,
                             should_stop: Callable[[], bool] | None = None) -> LearningCurve:
    """Monte-Carlo learning curve ε(S), eq. (6), at every S (the symbols of seed 004's Fig. 1, left).

    One generator is used for all S in turn; ``progress(done, total)`` counts samples over the curve.
    """
    K, y, row_site, _ = _fields_iv(K, y, row_site, None)
    S_arr = np.atleast_1d(np.asarray(S_values, dtype=float))
    if S_arr.ndim != 1 or S_arr.size == 0:
        raise ValueError(f"`S_values` must be a non-empty 1-D sequence of sample sizes, got shape "
                         f"{np.shape(S_values)}.")
    for S in S_arr:
        montecarlo._occupation_iv(row_site.size, S, n_samples, scheme)
    rng = np.random.default_rng(rng)
    total = S_arr.size * n_samples
    init = fit_hard_margin(K, y)
    errors = []
    for k, S in enumerate(S_arr):
        step = None if progress is None else (lambda done, _, o=k * n_samples: progress(o + done, total))
        fields = bootstrap_fields(K, y, float(S), n_samples, row_site=row_site, scheme=scheme, rng=rng,
                                  batch_size=batch_size, init=init, progress=step, should_stop=should_stop)
        errors.append(bootstrap_classification_error(fields, y[row_site]))
    return LearningCurve(S_arr, np.array([e.value for e in errors]), np.array([e.se for e in errors]),
                         n_samples, tuple(errors))


@dataclass(frozen=True)
class FieldProbability:
    """Monte-Carlo probability p(-1|x) that the bootstrapped SVM predicts -1 at each test input."""

    value: np.ndarray
    se: np.ndarray
    n_samples: int


def probability_negative(fields: BootstrapPredictions) -> FieldProbability:
    """p(-1|x) = fraction of bootstrap samples with f(x) < 0 at every test input (binomial se)."""
    if not isinstance(fields, BootstrapPredictions) or fields.test is None:
        raise ValueError("`fields` must be bootstrap fields with test inputs: pass `K_test` to bootstrap_fields.")
    p = (fields.test < 0).mean(axis=0)
    return FieldProbability(p, np.sqrt(p * (1 - p) / fields.n_samples), fields.n_samples)


def left_out_fields(fields: BootstrapPredictions, row: int) -> np.ndarray:
    """Field samples at training row ``row`` from the bootstrap samples that leave it out (s_row = 0).

    Their distribution is what eq. (18) of seed 004 predicts.
    """
    if not 0 <= row < fields.train.shape[1]:
        raise IndexError(f"`row` must be in 0..{fields.train.shape[1] - 1}, got {row}.")
    return fields.train[fields.occupations[:, row] == 0, row]


def _fields_iv(K, y, row_site, K_test):
    K, y = _kernel_labels_iv(K, y)
    n = y.size
    if row_site is None:
        row_site = np.arange(n)
    else:
        row_site = np.asarray(row_site)
        if row_site.ndim != 1 or not np.issubdtype(row_site.dtype, np.integer) or row_site.size == 0:
            raise ValueError(f"`row_site` must be a 1-D integer array (the site of every data row), got "
                             f"dtype {row_site.dtype} and shape {row_site.shape}.")
        if row_site.min() < 0 or row_site.max() >= n or np.bincount(row_site, minlength=n).min() == 0:
            raise ValueError(f"`row_site` must map rows onto all {n} sites 0..{n - 1}, each at least once; "
                             "use merge_identical(X, y).row_site.")
    if K_test is not None:
        K_test = np.atleast_2d(np.asarray(K_test, dtype=float))
        if K_test.ndim != 2 or K_test.shape[1] != n:
            raise ValueError(f"`K_test` must have shape (M, {n}) = K(X_test, X_sites), got {K_test.shape}.")
    return K, y, row_site, K_test


# ----------------------------------------------------------------------------- leave-one-out

@dataclass(frozen=True)
class LeaveOneOut:
    """Leave-one-out margins y_i f^{\\i}(x_i) of the hard-margin SVM at every site, and the LOO error.

    ``error`` = (1/N) sum over rows of Θ(-y_i f^{\\i}(x_i)); a row whose site has other copies is never an
    error (leaving it out leaves its twin in the training set).
    """

    margins: np.ndarray
    counts: np.ndarray
    error: float
    n_retrained: int


def leave_one_out(K: ArrayLike, y: ArrayLike, *, counts: ArrayLike | None = None,
                  solution: SVMSolution | None = None) -> LeaveOneOut:
    """Literal leave-one-out by retraining: one SVM per support vector of a single-row site.

    Removing a non-support vector (or one copy of a repeated input) leaves the solution unchanged.
    """
    K, y = _kernel_labels_iv(K, y)
    counts = _counts_iv(counts, y.size)
    sol = fit_hard_margin(K, y) if solution is None else solution
    margins = sol.margins.copy()
    retrain = [i for i in sol.support if counts[i] == 1]
    for i in retrain:
        mask = np.ones(y.size, dtype=bool)
        mask[i] = False
        margins[i] = fit_hard_margin(K, y, mask=mask, init=sol).margins[i]
    return LeaveOneOut(margins, counts, loo_error(margins, counts), len(retrain))


def loo_error(margins: np.ndarray, counts: np.ndarray) -> float:
    """(1/N) sum over single-row sites of Θ(-margin): the leave-one-out classification error."""
    return float(np.sum((margins < 0) & (counts == 1)) / counts.sum())


def _counts_iv(counts, n: int) -> np.ndarray:
    if counts is None:
        return np.ones(n, dtype=int)
    counts = np.asarray(counts)
    if counts.shape != (n,) or not np.issubdtype(counts.dtype, np.integer) or counts.min() < 1:
        raise ValueError(f"`counts` must be positive integers of shape ({n},), the number of data rows of "
                         f"every site (Sites.counts), got {counts!r:.80}.")
    return counts
