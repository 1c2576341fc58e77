"""Monte-Carlo bootstrap of the hard-margin SVM ([MO03b]).

Duplicated points do not change a hard-margin solution (a constraint counted twice is the same
constraint), so a bootstrap sample is just its set of distinct points, and identical inputs with the
same label can be merged into one *site* (:func:`merge_identical`). Identical inputs with different
labels cannot be separated: :class:`NotSeparableError`.

The Monte-Carlo bootstrap draws occupation numbers s_i of the N data rows (eq. 7: Poisson with mean S/N,
or multinomial with fixed size S), retrains the SVM on the sites that hold at least one drawn row and
records the field at every row and at test inputs. It returns a ``BootstrapPredictions`` (:mod:`explorer.bootstrap.estimates`) so
that Efron's estimator, eq. (6), and its standard error are the ones of the GP-regression bootstrap.

The samples run in seeded chunks (:mod:`explorer.chunks`): sample b at one S/N (on a learning curve or
alone) draws its occupations from its own generator (``resampling.sample_occupations``), and every fit is
warm-started from one solution fixed before the job (the SVM on all sites), never from a neighbouring sample,
so the chunk size and the executor (this process or Dask workers) change no number.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from explorer.bootstrap.estimates import (
    BootstrapError,
    BootstrapPredictions,
    LearningCurve,
    bootstrap_test_error,
    monte_carlo_curve,
)
from explorer.chunks import DEFAULT_CHUNK_SIZE, Chunk, Executor, SeedLike, run_items
from explorer.progress import Cancelled, Hooks
from explorer.resampling import occupation_args, sample_occupations
from explorer.svm_bootstrap.classifier import NotSeparableError, SVMSolution, check_kernel_labels, fit_hard_margin
from explorer.validation import positive_int, sample_sizes

__all__ = ["NotSeparableError", "SVMSolution", "Sites", "LeaveOneOut", "FieldProbability",
           "Cancelled", "fit_hard_margin", "merge_identical", "zero_one_loss", "bootstrap_fields",
           "bootstrap_classification_error", "bootstrap_learning_curve", "probability_negative", "left_out_fields",
           "leave_one_out", "loo_error", "check_counts"]

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

    Parameters
    ----------
    X : ndarray of shape (N, d)
        Inputs of the N data rows.
    y : ndarray of shape (N,)
        Labels -1 / +1 of the rows.

    Returns
    -------
    Sites
        First row ``index`` and label ``y`` of every site, ndarrays of shape (n_sites,), the site of every
        row ``row_site``, ndarray of shape (N,), and the rows per site ``counts`` (k).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or ``y`` does not have one label per row.
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
    """Classification loss g = Θ(-y f) of [MO03b] (Θ(0) = 0: a zero field is not counted as an error).

    Parameters
    ----------
    f : ndarray
        Fields (any shape broadcasting with ``y``).
    y : ndarray
        Labels -1 / +1.

    Returns
    -------
    ndarray of the broadcast shape
        1.0 where y f < 0, else 0.0.
    """
    return (np.multiply(f, y) < 0).astype(float)


def bootstrap_fields(K: ArrayLike, y: ArrayLike, S: float, n_samples: int, *, row_site: ArrayLike | None = None,
                     K_test: ArrayLike | None = None, scheme: str = "poisson", rng: SeedLike = None,
                     chunk_size: int = DEFAULT_CHUNK_SIZE, tol: float = 1e-9, init: SVMSolution | None = None,
                     executor: Executor | None = None, hooks: Hooks | None = None) -> BootstrapPredictions:
    """Internal fields of SVMs retrained on ``n_samples`` bootstrap samples ([MO03b], eqs. 1, 7).

    Occupation numbers are drawn for the N data rows; a site enters the sample when at least one of
    its rows is drawn, and the hard-margin SVM is trained on those sites (duplicates do not matter).
    Sample b draws its occupations from its own generator, keyed by the seed, S/N and b
    (``resampling.sample_occupations``), and every fit starts from the same ``init``, so neither
    ``chunk_size`` nor ``executor`` changes a number.

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the sites (distinct inputs; see ``merge_identical``).
    y : ndarray of shape (n_sites,)
        Labels of the sites.
    S : float
        Mean (Poisson, eq. 7) or fixed (multinomial) number of rows drawn.
    n_samples : int
        Number of bootstrap samples.
    row_site : ndarray of int, shape (N,), optional
        Site of every data row (``Sites.row_site``); default one row per site.
    K_test : ndarray of shape (M, n_sites), optional
        K(X_test, X_sites); the fields at the test inputs are returned too.
    scheme : {"poisson", "multinomial"}
        Resampling model of the rows (``resampling.occupation_numbers``).
    rng : int, SeedSequence, Generator or None
        Root seed of the job (``chunks.root_seed``).
    chunk_size : int
        Samples per chunk, the unit of work of an executor (and of progress and cancellation).
    tol : float
        Margin tolerance of every SVM fit.
    init : SVMSolution, optional
        Warm start of every fit (default: the SVM on all sites, computed here); results do not depend on it.
    executor, hooks
        As in :func:`explorer.gp_bootstrap.montecarlo.bootstrap_predictions` (progress counted in samples).

    Returns
    -------
    BootstrapPredictions
        ``occupations`` (n_samples, N) of the rows, ``train`` (n_samples, N) the field at every row,
        ``test`` (n_samples, M) or None.

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.svm_bootstrap.montecarlo import bootstrap_fields, bootstrap_classification_error
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> K = np.exp(-(X - X.T) ** 2 / 2)
    >>> fields = bootstrap_fields(K, y, 4.0, 100, rng=0)
    >>> fields.train.shape
    (100, 4)
    """
    K, y, row_site, K_test = _fields_iv(K, y, row_site, K_test)
    _, S, n_samples, scheme = occupation_args(row_site.size, S, n_samples, scheme)
    chunk_size = _chunk_size_iv(chunk_size)
    init = fit_hard_margin(K, y, tol=tol) if init is None else init
    rows = run_items(_fields_chunk, (K, y, row_site, K_test, init), n_samples, rng, ((S,), scheme, tol),
                     chunk_size=chunk_size, executor=executor, hooks=hooks)
    return _predictions(rows, row_site, S, scheme)


def _fields_chunk(shared, chunk: Chunk, root, S_values, scheme, tol):
    """One chunk of samples of group ``chunk.group``: (occupations, fields at the sites, test fields) rows."""
    K, y, row_site, K_test, init = shared
    occ = sample_occupations(row_site.size, S_values[chunk.group], scheme, root, chunk.group, chunk.start, chunk.stop)
    site_fields = np.empty((chunk.size, y.size))
    test = None if K_test is None else np.empty((chunk.size, K_test.shape[0]))
    for r, s in enumerate(occ):
        present = np.bincount(row_site, weights=s, minlength=y.size) > 0  # sites with a drawn row
        sol = fit_hard_margin(K, y, mask=present, tol=tol, init=init)
        site_fields[r] = sol.field
        if test is not None:
            test[r] = K_test @ (y * sol.alpha)
    return occ, site_fields, test


def _predictions(rows, row_site, S, scheme) -> BootstrapPredictions:
    """A group's stacked rows as predictions at the data rows (site fields copied to every row of a site)."""
    occupations, site_fields, test = rows
    return BootstrapPredictions(occupations, site_fields[:, row_site], test, S, scheme)


def bootstrap_classification_error(fields: BootstrapPredictions, y_rows: ArrayLike) -> BootstrapError:
    """Efron's bootstrap classification error, eq. (6) of [MO03b], with its delta-method standard error.

    (1/N) sum_i E[δ_{s_i,0} Θ(-y_i f_i(D))] / E[δ_{s_i,0}] over the rows left out of at least one sample.

    Parameters
    ----------
    fields : BootstrapPredictions
        The fields of :func:`bootstrap_fields` (``train`` at every row).
    y_rows : ndarray of shape (N,)
        The label of every row (``y_sites[row_site]``).

    Returns
    -------
    BootstrapError
        ε(S) with its standard error, and per row the left-out ratio and the number of samples leaving it out.
    """
    return bootstrap_test_error(fields, y_rows, loss=zero_one_loss)


def bootstrap_learning_curve(K: ArrayLike, y: ArrayLike, S_values: ArrayLike, n_samples: int, *,
                             row_site: ArrayLike | None = None, scheme: str = "poisson", rng: SeedLike = None,
                             chunk_size: int = DEFAULT_CHUNK_SIZE, init: SVMSolution | None = None,
                             executor: Executor | None = None, hooks: Hooks | None = None) -> LearningCurve:
    """Monte-Carlo learning curve ε(S), eq. (6), at every S (the symbols of [MO03b]'s Fig. 1, left).

    The samples of the k-th S are group k of the job (sample b draws as ``resampling.sample_occupations`` at that S);
    all chunks of all S are submitted at once, so an executor with several workers works on several S together.
    Every fit is warm-started from ``init`` (tolerance 1e-9); ``hooks`` count samples over the whole curve,
    total = len(S_values) * n_samples.

    Parameters
    ----------
    K, y, row_site
        As in :func:`bootstrap_fields`.
    S_values : ndarray of shape (n_S,)
        Mean (Poisson) or fixed (multinomial) numbers of rows drawn, non-empty and 1-D.
    n_samples : int
        Bootstrap samples per S.
    scheme, rng, chunk_size, executor
        As in :func:`bootstrap_fields`.
    init : SVMSolution, optional
        Warm start of every fit (default: the SVM on all sites, computed here); results do not depend on it.
    hooks : Hooks, optional
        Progress and cancellation as in :func:`bootstrap_fields`; ``publish`` gets the :class:`LearningCurve`
        of the S values finished so far (in the order of ``S_values``) whenever one more S is complete.

    Returns
    -------
    LearningCurve
        As from :func:`explorer.gp_bootstrap.montecarlo.bootstrap_learning_curve`, with the
        zero-one loss as the error of every S.

    Raises
    ------
    ValueError
        If ``S_values`` is empty or not 1-D, or K, y, ``row_site``, an S, ``n_samples``, ``scheme`` or
        ``chunk_size`` is invalid.
    """
    K, y, row_site, _ = _fields_iv(K, y, row_site, None)
    S_arr = sample_sizes(S_values)
    S_arr = np.array([occupation_args(row_site.size, S, n_samples, scheme)[1] for S in S_arr])
    n_samples = positive_int(n_samples, "n_samples", "It is the number of bootstrap samples.")
    chunk_size = _chunk_size_iv(chunk_size)
    init = fit_hard_margin(K, y) if init is None else init

    def error(group: int, rows) -> BootstrapError:
        fields = _predictions(rows, row_site, S_arr[group], scheme)   # eq. (6) on this S's samples, in sample order
        return bootstrap_classification_error(fields, y[row_site])

    return monte_carlo_curve(_fields_chunk, (K, y, row_site, None, init), S_arr, n_samples,
                             (tuple(S_arr), scheme, 1e-9), error, rng=rng, chunk_size=chunk_size, executor=executor,
                             hooks=hooks)


def _chunk_size_iv(chunk_size) -> int:
    return positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")


@dataclass(frozen=True)
class FieldProbability:
    """Monte-Carlo probability p(-1|x) that the bootstrapped SVM predicts -1 at each test input."""

    value: np.ndarray
    se: np.ndarray
    n_samples: int


def probability_negative(fields: BootstrapPredictions) -> FieldProbability:
    """p(-1|x) = fraction of bootstrap samples with f(x) < 0 at every test input (binomial se).

    Parameters
    ----------
    fields : BootstrapPredictions
        Fields of :func:`bootstrap_fields` computed with ``K_test``.

    Returns
    -------
    FieldProbability
        ``value`` = p(-1|x) and ``se`` = √(p(1 − p)/B), ndarrays of shape (M,).

    Raises
    ------
    ValueError
        If ``fields`` has no test fields.
    """
    if not isinstance(fields, BootstrapPredictions) or fields.test is None:
        raise ValueError("`fields` must be bootstrap fields with test inputs: pass `K_test` to bootstrap_fields.")
    p = (fields.test < 0).mean(axis=0)
    return FieldProbability(p, np.sqrt(p * (1 - p) / fields.n_samples), fields.n_samples)


def left_out_fields(fields: BootstrapPredictions, row: int) -> np.ndarray:
    """Field samples at training row ``row`` from the bootstrap samples that leave it out (s_row = 0).

    Their distribution is what eq. (18) of [MO03b] predicts.

    Parameters
    ----------
    fields : BootstrapPredictions
        Fields of :func:`bootstrap_fields`.
    row : int
        Data-row index.

    Returns
    -------
    ndarray of shape (n_left_out,)
        f_row in every sample with s_row = 0.

    Raises
    ------
    IndexError
        If ``row`` is not a row index.
    """
    if not 0 <= row < fields.train.shape[1]:
        raise IndexError(f"`row` must be in 0..{fields.train.shape[1] - 1}, got {row}.")
    return fields.train[fields.occupations[:, row] == 0, row]


def _fields_iv(K, y, row_site, K_test):
    K, y = check_kernel_labels(K, y)
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

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the sites.
    y : ndarray of shape (n_sites,)
        Labels -1 / +1 of the sites.
    counts : ndarray of int, shape (n_sites,), optional
        Data rows per site; default one.
    solution : SVMSolution, optional
        The hard-margin SVM on all sites, if already fitted.

    Returns
    -------
    LeaveOneOut
        The leave-one-out margins y_i f^{\\i}(x_i) of shape (n_sites,), the error and the number of refits.
    """
    K, y = check_kernel_labels(K, y)
    counts = check_counts(counts, y.size)
    sol = fit_hard_margin(K, y) if solution is None else solution
    margins = sol.margins.copy()
    retrain = [i for i in sol.support if counts[i] == 1]
    for i in retrain:
        mask = np.ones(y.size, dtype=bool)
        mask[i] = False
        margins[i] = fit_hard_margin(K, y, mask=mask, init=sol).margins[i]
    return LeaveOneOut(margins, counts, loo_error(margins, counts), len(retrain))


def loo_error(margins: np.ndarray, counts: np.ndarray) -> float:
    """(1/N) sum over single-row sites of Θ(-margin): the leave-one-out classification error.

    Parameters
    ----------
    margins : ndarray of shape (n_sites,)
        Leave-one-out margins y_i f^{\\i}(x_i).
    counts : ndarray of int, shape (n_sites,)
        Data rows per site; N = sum(counts).

    Returns
    -------
    float
        The fraction of the N rows that are errors (rows with twins never are).
    """

    return float(np.sum((margins < 0) & (counts == 1)) / counts.sum())


def check_counts(counts, n: int) -> np.ndarray:
    """Validated row counts of the n sites (:attr:`Sites.counts`); None means one row per site.

    Parameters
    ----------
    counts : array_like of int of shape (n,), or None
        Number of data rows of every site, >= 1.
    n : int
        Number of sites.

    Returns
    -------
    ndarray of int of shape (n,)

    Raises
    ------
    ValueError
        If ``counts`` is not of shape (n,), not integer or has an entry below 1.
    """
    if counts is None:
        return np.ones(n, dtype=int)
    counts = np.asarray(counts)
    if counts.shape != (n,) or not np.issubdtype(counts.dtype, np.integer) or counts.min() < 1:
        raise ValueError(f"`counts` must be positive integers of shape ({n},), the number of data rows of "
                         f"every site (Sites.counts), got {counts!r:.80}.")
    return counts
