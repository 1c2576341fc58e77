"""Monte-Carlo bootstrap of GP regression: the simulations seed 000 compares its theory with.

A bootstrap sample D ~ D_0 is a vector of occupation numbers s = (s_1, ..., s_N), s_i copies of the
training example z_i, eq. (10), drawn from the factorising Poisson weight W(s) of eq. (11) (or from
the multinomial with fixed size S, sec. 3). The predictor retrained on D is the GP posterior mean of
sec. 5, f(D) = K' (K' + sigma^2 I)^{-1} y' on the S duplicated points. Because s copies of a point
with noise variance sigma^2 are exactly one point with noise variance sigma^2 / s (the product of s
equal Gaussian likelihoods exp(-s h), eqs. (10), (50)),

    f(s) = K[:, a] (K[a, a] + sigma^2 diag(1 / s_a))^{-1} y_a,      a = {i : s_i > 0},

which needs a Cholesky factor of #a ~ N (1 - e^{-S/N}) distinct points (#a the size of a) instead of ~ S duplicated
ones. The all-zero sample gives the prior mean 0.

All functions work on a precomputed kernel matrix K = k(X, X) (and K_test = k(X_test, X)).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from explorer.bootstrap.estimates import (
    BootstrapError,
    BootstrapPredictions,
    LearningCurve,
    efron_error,
    monte_carlo_curve,
)
from explorer.chunks import DEFAULT_CHUNK_SIZE, Chunk, Executor, SeedLike, run_items
from explorer.losses import Loss, get_loss
from explorer.progress import Cancelled, Hooks
from explorer.resampling import check_occupations, occupation_args, occupation_numbers, sample_occupations
from explorer.validation import as_float as _as_float
from explorer.validation import finite as _finite
from explorer.validation import positive_int as _positive_int
from explorer.validation import sample_sizes
from explorer.validation import show as _show

__all__ = ["Cancelled", "occupation_numbers", "bootstrap_predictions", "resample_predictions", "refit_on_duplicates",
           "bootstrap_learning_curve"]

# Samples with at most this many distinct points are solved together: one stacked Cholesky
# (np.linalg.cholesky) per active-set size, which beats a Python loop of LAPACK calls for tiny
# systems (crossover measured at ~20 points); larger ones go one by one through cho_factor.
_STACKED_MAX_ACTIVE = 20


# ----------------------------------------------------------------------------- predictors

def bootstrap_predictions(K: ArrayLike, y: ArrayLike, noise_var: float, S: float, n_samples: int,
                          *, K_test: ArrayLike | None = None, scheme: str = "poisson",
                          rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                          executor: Executor | None = None, hooks: Hooks | None = None) -> BootstrapPredictions:
    """GP posterior means retrained on ``n_samples`` bootstrap samples (sec. 5 of seed 000).

    Each sample uses the active-set form f = K[:, a] (K[a, a] + sigma^2 diag(1/s_a))^{-1} y_a
    (module docstring), exactly equal to the literal refit on duplicated points
    (``refit_on_duplicates``).

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs (symmetric positive semi-definite).
    y : ndarray of shape (N,)
        Training targets.
    noise_var : float
        Noise variance sigma^2 > 0 of the GP, eq. (50).
    S : float
        Mean sample size (Poisson, eq. 11) or fixed size (multinomial).
    n_samples : int
        Number of bootstrap samples.
    K_test : ndarray of shape (M, N), optional
        k(X_test, X); if given, predictions at the test inputs are returned too.
    scheme : {"poisson", "multinomial"}
        See ``occupation_numbers``.
    rng : int, SeedSequence, Generator or None
        Root seed of the job (``chunks.root_seed``); sample b draws its occupation numbers from its own
        child generator (``chunks.item_generator``), so neither ``chunk_size`` nor ``executor`` changes a number.
    chunk_size : int
        Samples per chunk, the unit of work of an executor (and of progress and cancellation).
    executor : Executor, optional
        Where the chunks run: in this process (default) or on Dask workers (``explorer.serving.engine``).
    hooks : Hooks, optional
        ``report`` after every chunk ("done/total samples"); ``should_stop`` cancels the queued chunks
        (``Cancelled`` counts samples).

    Returns
    -------
    BootstrapPredictions
        ``occupations`` (n_samples, N), the predictors ``train`` at the training inputs, ndarray of shape
        (n_samples, N), and ``test`` at the test inputs, ndarray of shape (n_samples, M) (None without
        ``K_test``).
    """
    K, y, noise_var, K_test, S, n_samples, chunk_size = _predictions_iv(
        K, y, noise_var, K_test, S, n_samples, scheme, chunk_size)
    occupations, train, test = run_items(_prediction_chunk, (K, y, noise_var, K_test), n_samples, rng, ((S,), scheme),
                                         chunk_size=chunk_size, executor=executor, hooks=hooks)
    return BootstrapPredictions(occupations, train, test, S, scheme)


def resample_predictions(K: ArrayLike, y: ArrayLike, noise_var: float, occupations: ArrayLike, *,
                         K_test: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """GP posterior means retrained on given bootstrap samples, as the Monte-Carlo computes them (sec. 5).

    The weighted GP of the module docstring (a point left out has weight 0); each sample's predictor is computed
    by the path the Monte-Carlo takes for it, whatever the other samples, so the predictions of the samples that
    ``bootstrap_predictions`` draws equal its own, number for number.

    Parameters
    ----------
    K, y, noise_var, K_test
        As in ``bootstrap_predictions``.
    occupations : ndarray of int, shape (n_samples, N)
        Occupation numbers s of each sample.

    Returns
    -------
    train : ndarray of shape (n_samples, N)
        f_i(s) at the training inputs.
    test : ndarray of shape (n_samples, M) or None
        At the test inputs (None without ``K_test``).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.exp(-np.subtract.outer(np.arange(3.0), np.arange(3.0)) ** 2)
    >>> train, _ = resample_predictions(K, [1.0, 0.0, -1.0], 0.1, [[1, 0, 2]])
    >>> train.shape
    (1, 3)
    """
    K, y, noise_var, K_test = _gp_iv(K, y, noise_var, K_test)
    occ = check_occupations(np.atleast_2d(occupations), K.shape[0])
    train = np.empty(occ.shape)
    test = None if K_test is None else np.empty((occ.shape[0], K_test.shape[0]))
    _predict_batch(K, y, noise_var, occ, K_test, train, test)
    return train, test


def _prediction_chunk(shared, chunk: Chunk, root, S_values, scheme):
    """One chunk of samples of group ``chunk.group`` (S = ``S_values[group]``): (occupations, train, test) rows."""
    K, y, noise_var, K_test = shared
    S = S_values[chunk.group]
    occ = sample_occupations(K.shape[0], S, scheme, root, chunk.group, chunk.start, chunk.stop)
    train = np.empty((chunk.size, K.shape[0]))
    test = None if K_test is None else np.empty((chunk.size, K_test.shape[0]))
    _predict_batch(K, y, noise_var, occ, K_test, train, test)
    return occ, train, test


def _predict_batch(K, y, noise_var, occ, K_test, train_out, test_out) -> None:
    """Fill ``train_out`` (and ``test_out``) for one batch of occupation vectors, in place.

    Every sample is computed by a path that depends on its own active-set size only, never on
    the other samples of the batch, so that results do not depend on the batch size.
    """
    n_active = np.count_nonzero(occ, axis=1)
    for n in np.unique(n_active):
        rows = np.flatnonzero(n_active == n)
        if n == 0:                                   # no data: the prior mean 0
            F, F_test = 0.0, 0.0
        elif n <= _STACKED_MAX_ACTIVE:
            F, F_test = _predict_stacked(K, y, noise_var, occ[rows], K_test)
        else:
            F, F_test = _predict_one_by_one(K, y, noise_var, occ[rows], K_test)
        train_out[rows] = F
        if test_out is not None:
            test_out[rows] = F_test


def _predict_one_by_one(K, y, noise_var, occ, K_test):
    """Predictions (g, N) and (g, M) of g samples, one Cholesky factorisation each."""
    F = np.empty((occ.shape[0], K.shape[0]))
    F_test = None if K_test is None else np.empty((occ.shape[0], K_test.shape[0]))
    for r, s in enumerate(occ):
        a = np.flatnonzero(s)
        w = np.zeros(K.shape[0])
        w[a] = _active_weights(K, y, noise_var, a, s[a])
        F[r] = K @ w                                 # K[:, a] w_a without gathering K[:, a]
        if K_test is not None:
            F_test[r] = K_test @ w
    return F, F_test


def _active_weights(K, y, noise_var, a, s_a) -> np.ndarray:
    """w = (K[a, a] + sigma^2 diag(1/s_a))^{-1} y_a by Cholesky (sigma^2/s identity, sec. 5)."""
    A = K.take(a, axis=0).take(a, axis=1)           # K[a, a]; two takes beat np.ix_ here
    A.flat[:: a.size + 1] += noise_var / s_a
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise _not_psd_error() from exc
    return scipy.linalg.cho_solve(factor, y[a], check_finite=False)


def _predict_stacked(K, y, noise_var, occ, K_test):
    """The same for g samples sharing the active-set size n, stacked as (g, n, n) systems."""
    g = occ.shape[0]
    a = np.nonzero(occ)[1].reshape(g, -1)            # active indices, row by row
    s_a = np.take_along_axis(occ, a, axis=1)
    A = K[a[:, :, None], a[:, None, :]]
    A += np.einsum("gi,ij->gij", noise_var / s_a, np.eye(a.shape[1]))
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError as exc:
        raise _not_psd_error() from exc
    w = _cholesky_solve_stacked(L, y[a])
    F_test = None if K_test is None else _accumulate_columns(K_test, a, w)
    return _accumulate_columns(K, a, w), F_test


def _cholesky_solve_stacked(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L L^T x = b for stacked lower factors L (g, n, n) and b (g, n) by substitution."""
    n = b.shape[1]
    z = np.empty_like(b)
    for i in range(n):
        z[:, i] = (b[:, i] - np.sum(L[:, i, :i] * z[:, :i], axis=1)) / L[:, i, i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[:, i] = (z[:, i] - np.sum(L[:, i + 1:, i] * x[:, i + 1:], axis=1)) / L[:, i, i]
    return x


def _accumulate_columns(K: np.ndarray, a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """F[g] = sum_j K[:, a[g, j]] w[g, j] for active sets a (g, n) and weights w (g, n).

    Accumulated column by column, so each row's summation order is fixed whatever g is.
    """
    KT = K.T
    F = KT[a[:, 0]] * w[:, :1]
    for j in range(1, a.shape[1]):
        F += KT[a[:, j]] * w[:, j:j + 1]
    return F


def refit_on_duplicates(K: ArrayLike, y: ArrayLike, noise_var: float,
                        occupations: ArrayLike) -> np.ndarray:
    """Literal GP refit on the duplicated data set, sec. 5 of seed 000 (for tests and benchmarks).

    For each occupation vector s the data set D holds s_i copies of point i (duplicated rows and
    columns of K); alpha' = (K' + sigma^2 I)^{-1} y' by Cholesky and f = K[:, D] alpha' at all N
    training inputs. Slow: it factorises a matrix of size sum_i s_i instead of the active set.

    Parameters
    ----------
    occupations : ndarray of int, shape (N,) or (n_samples, N)

    Returns
    -------
    ndarray of shape (N,) or (n_samples, N), like ``occupations``.
    """
    K, y, noise_var, _ = _gp_iv(K, y, noise_var, None)
    occ = check_occupations(occupations, K.shape[0])
    out = np.zeros(occ.shape, dtype=float)
    for s, f in zip(occ.reshape(-1, K.shape[0]), out.reshape(-1, K.shape[0])):
        d = np.repeat(np.arange(K.shape[0]), s)      # the duplicated data set D
        if d.size:
            KD = K.take(d, axis=0).take(d, axis=1)
            KD.flat[:: d.size + 1] += noise_var                          # K' + sigma^2 I
            factor = scipy.linalg.cho_factor(KD, lower=True, overwrite_a=True)
            f[:] = K.take(d, axis=0).T @ scipy.linalg.cho_solve(factor, y[d])  # K[:, D] alpha'
    return out


# ----------------------------------------------------------------------------- estimators


def bootstrap_learning_curve(K: ArrayLike, y: ArrayLike, noise_var: float, S_values: ArrayLike,
                             n_samples: int, *, loss: str | Loss = "square",
                             scheme: str = "poisson", rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                             executor: Executor | None = None, hooks: Hooks | None = None) -> LearningCurve:
    """Monte-Carlo bootstrap learning curve epsilon(S), eq. (17) at every S in ``S_values``.

    The simulation side of Fig. 1 of seed 000. The samples of the k-th S are group k of the job (sample b
    draws as ``resampling.sample_occupations`` at that S); all chunks of all S are submitted at once, so an
    executor with several workers works on several S together. ``hooks`` count samples over the whole
    curve, total = len(S_values) * n_samples.

    Parameters
    ----------
    K, y, noise_var
        As in ``bootstrap_predictions``.
    S_values : ndarray of shape (n_S,)
        Mean (Poisson) or fixed (multinomial) sample sizes, non-empty and 1-D.
    n_samples : int
        Bootstrap samples per S.
    loss : str or callable
        As in ``bootstrap_test_error``.
    scheme, rng, chunk_size, executor
        As in ``bootstrap_predictions``.
    hooks : Hooks, optional
        Progress and cancellation as in ``bootstrap_predictions``; ``publish`` gets the
        :class:`LearningCurve` of the S values finished so far (in the order of ``S_values``) whenever one
        more S is complete.

    Returns
    -------
    LearningCurve
        ``s_values``, the estimates ``value`` and standard errors ``se`` (ndarrays of shape (n_S,)) and
        the :class:`BootstrapError` of every S.

    Raises
    ------
    ValueError
        If ``S_values`` is empty or not 1-D, or K, y, σ², an S, ``n_samples``, ``scheme``,
        ``chunk_size`` or ``loss`` is invalid.
    """
    K, y, noise_var, S_values, n_samples, chunk_size, g = _learning_curve_iv(
        K, y, noise_var, S_values, n_samples, scheme, chunk_size, loss)

    def error(group: int, rows) -> BootstrapError:
        occ, train, _ = rows
        return efron_error(occ, train, y, g)     # eq. (17) on this S's samples

    return monte_carlo_curve(_prediction_chunk, (K, y, noise_var, None), S_values, n_samples,
                             (tuple(S_values), scheme), error, rng=rng, chunk_size=chunk_size, executor=executor,
                             hooks=hooks)


# ----------------------------------------------------------------------------- validation

def _predictions_iv(K, y, noise_var, K_test, S, n_samples, scheme, chunk_size):
    K, y, noise_var, K_test = _gp_iv(K, y, noise_var, K_test)
    _, S, n_samples, _ = occupation_args(K.shape[0], S, n_samples, scheme)
    chunk_size = _positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    return K, y, noise_var, K_test, S, n_samples, chunk_size


def _learning_curve_iv(K, y, noise_var, S_values, n_samples, scheme, chunk_size, loss):
    K, y, noise_var, _ = _gp_iv(K, y, noise_var, None)
    S_arr = sample_sizes(S_values)
    for S in S_arr:
        _, _, n_samples, _ = occupation_args(K.shape[0], S, n_samples, scheme)
    chunk_size = _positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    return K, y, noise_var, S_arr, n_samples, chunk_size, get_loss(loss)


def _gp_iv(K, y, noise_var, K_test):
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"`K` must be a non-empty square matrix of shape (N, N), got shape "
                         f"{K.shape}. Pass the kernel matrix k(X, X) of the training inputs.")
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"`y` must have shape ({n},) to match `K` of shape {K.shape}, got shape "
                         f"{y.shape}. Pass one target per training input.")
    _finite(K, "K", "Check the kernel hyperparameters and the inputs.")
    _finite(y, "y", "Remove or impute missing targets.")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.abs(K).max()):
        raise ValueError(f"`K` must be symmetric, got max |K - K^T| = "
                         f"{np.abs(K - K.T).max():.3g}. Pass k(X, X) for the training inputs "
                         "(k(X_test, X) goes to `K_test`).")
    if not (np.isfinite(_as_float(noise_var)) and noise_var > 0):
        raise ValueError(f"`noise_var` must be a positive finite number, got {_show(noise_var)}. "
                         "It is the GP noise variance sigma^2 of eq. (50) (seed 000 uses 0.01).")
    if K_test is not None:
        K_test = np.asarray(K_test, dtype=float)
        if K_test.ndim != 2 or K_test.shape[1] != n:
            raise ValueError(f"`K_test` must have shape (M, {n}) = k(X_test, X) with one column "
                             f"per training input, got shape {K_test.shape}.")
        _finite(K_test, "K_test", "Check the kernel hyperparameters and the test inputs.")
    return K, y, float(noise_var), K_test


def _not_psd_error() -> ValueError:
    return ValueError("Cholesky factorisation of K[a, a] + sigma^2 diag(1/s_a) failed: `K` is not "
                      "positive semi-definite. Check the kernel, or add jitter to its diagonal.")
