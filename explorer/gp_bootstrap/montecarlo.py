r"""Monte-Carlo bootstrap of GP regression: the simulations [MO03] compares its theory with, on any kernel operator.

A bootstrap sample D ~ D_0 is a vector of occupation numbers s = (s_1, ..., s_N), s_i copies of the training example
z_i ([MO03] eq. (10)), drawn from the factorising Poisson weight W(s) of eq. (11) (or from the multinomial with fixed
size S, sec. 3). The predictor retrained on D is the GP posterior mean of sec. 5 on the S duplicated points. Because
s copies of a point with noise variance σ² are exactly one point with noise variance σ²/s (the product of s equal
Gaussian likelihoods exp(−s h), eqs. (10), (50)), it is a weighted GP on the active set a = {i : s_i > 0}:

    f(s) = K[:, a] (K[a, a] + σ² diag(1/s_a))⁻¹ y_a,

and the all-zero sample gives the prior mean 0. How that weighted solve is done belongs to the kernel operator
(:mod:`explorer.operators.refits`): a Cholesky factor of #a ≈ N (1 − e^{−S/N}) points for a dense K
(:class:`~explorer.operators.dense.DenseKernel`), an m×m system A_s = I_m + Φᵀ diag(s/σ²) Φ for features
(:class:`~explorer.operators.features.FeatureKernel`, O(N m²) time and O(N m) memory a sample). Everything else is
written once here: the validation, the seeded chunks (sample b of the S at position k draws from
``chunks.item_generator(root, k, b)`` — see :func:`_draw`), and Efron's estimator ε(S) of eq. (17).

Functions take a kernel operator, an N×N array K = k(X, X) or ``LowRankFeatures``, and test inputs in the
operator's terms (``K_test`` = k(X_test, X) for a matrix, φ(X_test) for features):

* :func:`bootstrap_predictions` — the predictors on ``n_samples`` samples, shape (n_samples, N);
* :func:`resample_predictions` — the same for given occupation numbers;
* :func:`bootstrap_learning_curve` — Efron's estimate ε(S) at every S;
* :func:`refit_on_duplicates` — the literal refit on duplicated points (dense K; for tests and benchmarks).

The ``*_lowrank`` functions are the same on features Φ.

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from explorer.bootstrap.checks import check_targets
from explorer.bootstrap.estimates import (
    BootstrapError,
    BootstrapPredictions,
    LearningCurve,
    efron_error,
    monte_carlo_curve,
)
from explorer.chunks import DEFAULT_CHUNK_SIZE, Chunk, Executor, SeedLike, plan_chunks, root_seed, run_chunks, run_items
from explorer.losses import Loss, get_loss
from explorer.operators import KernelOperator, as_operator, require
from explorer.operators.features import FeatureKernel, check_feature_matrix
from explorer.progress import NO_HOOKS, Cancelled, Hooks
from explorer.resampling import check_occupations, occupation_args, occupation_numbers, sample_occupations
from explorer.validation import noise_variance, positive_int, sample_sizes

__all__ = ["SAMPLE_SECONDS_PER_NM2", "Cancelled", "occupation_numbers", "bootstrap_predictions",
           "resample_predictions", "refit_on_duplicates", "bootstrap_learning_curve", "check_features",
           "posterior_weights", "bootstrap_predictions_lowrank", "resample_predictions_lowrank",
           "bootstrap_learning_curve_lowrank"]

#: Seconds of one Monte-Carlo sample on features per N·m² (a weighted m×m solve after forming ΦᵀWΦ; measured 0.09 s
#: at N = 53,940 and m = 256 on two cores): the estimate by which the command line refuses a run of over an hour and
#: the app states the time of a run before it starts.
SAMPLE_SECONDS_PER_NM2 = 2.5e-11

#: Share of a streamed learning curve's progress bar given to counting the left-out inputs (draws only, no fit).
_COUNT_SHARE = 0.05


# ----------------------------------------------------------------------------- seeding

def _draw(n_inputs: int, S_values, position: int, scheme: str, root, start: int, stop: int) -> np.ndarray:
    """Occupation numbers of samples ``start`` .. ``stop - 1`` at the S of ``position`` in ``S_values``.

    Every draw of the Monte-Carlo goes through here: sample b at S draws from
    ``chunks.item_generator(root, chunks.s_over_n_group(S/N), b)`` (``resampling.sample_occupations``), a function of
    the seed, S/N and b alone, whatever else ``S_values`` holds or its order.
    """
    return sample_occupations(n_inputs, S_values[position], scheme, root, position, start, stop)


# ----------------------------------------------------------------------------- predictors

def bootstrap_predictions(K, y: ArrayLike, noise_var: float, S: float, n_samples: int,
                          *, K_test: ArrayLike | None = None, rows: ArrayLike | None = None, scheme: str = "poisson",
                          rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                          executor: Executor | None = None, hooks: Hooks | None = None) -> BootstrapPredictions:
    """GP posterior means retrained on ``n_samples`` bootstrap samples ([MO03] sec. 5).

    Each sample is the weighted GP on its active set (module docstring), exactly equal to the literal refit on
    duplicated points (``refit_on_duplicates``); the operator solves it.

    Parameters
    ----------
    K : KernelOperator, ndarray of shape (N, N) or LowRankFeatures
        The prior covariance of the training inputs: an operator, the kernel matrix (symmetric positive
        semi-definite) or features Φ.
    y : ndarray of shape (N,)
        Training targets.
    noise_var : float
        Noise variance σ² > 0 of the GP, eq. (50).
    S : float
        Mean sample size (Poisson, eq. 11) or fixed size (multinomial).
    n_samples : int
        Number of bootstrap samples.
    K_test : ndarray, optional
        The test inputs in the operator's terms: k(X_test, X) of shape (M, N) for a matrix, φ(X_test) of shape
        (M, m) for features; if given, predictions at the test inputs are returned too.
    rows : array_like of int, shape (R,), optional
        Keep the predictions and occupation numbers of these training inputs only (every sample is still fitted on
        all N): (B, R) arrays instead of (B, N), for a distribution map of a large N.
    scheme : {"poisson", "multinomial"}
        See ``occupation_numbers``.
    rng : int, SeedSequence, Generator or None
        Root seed of the job (``chunks.root_seed``); sample b draws its occupation numbers from its own
        child generator (``chunks.item_generator(root, 0, b)``), so neither ``chunk_size`` nor ``executor`` changes a
        number, and a matrix and features with the same ``rng`` draw the same samples.
    chunk_size : int
        Samples per chunk, the unit of work of an executor (and of progress and cancellation).
    executor : Executor, optional
        Where the chunks run: in this process (default) or on Dask workers (``explorer.runtime.engine``); the
        operator, y, σ² and the test inputs are sent once.
    hooks : Hooks, optional
        ``report`` after every chunk ("done/total samples"); ``should_stop`` cancels the queued chunks
        (``Cancelled`` counts samples).

    Returns
    -------
    BootstrapPredictions
        ``occupations`` (n_samples, N), the predictors ``train`` at the training inputs, ndarray of shape
        (n_samples, N), and ``test`` at the test inputs, ndarray of shape (n_samples, M) (None without
        ``K_test``); with ``rows``, ``occupations`` and ``train`` of shape (n_samples, R).
    """
    op, y, noise_var, K_test = _gp_iv(K, y, noise_var, K_test)
    _, S, n_samples, _ = occupation_args(op.n, S, n_samples, scheme)
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    rows = _rows_iv(rows, op.n)
    occupations, train, test = run_items(_prediction_chunk, (op, y, noise_var, K_test, rows), n_samples, rng,
                                         ((S,), scheme), chunk_size=chunk_size, executor=executor, hooks=hooks)
    return BootstrapPredictions(occupations, train, test, S, scheme)


def resample_predictions(K, y: ArrayLike, noise_var: float, occupations: ArrayLike, *,
                         K_test: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """GP posterior means retrained on given bootstrap samples, as the Monte-Carlo computes them ([MO03] sec. 5).

    The weighted GP of the module docstring (a point left out has weight 0); each sample's predictor is computed
    by the path the Monte-Carlo takes for it, whatever the other samples, so the predictions of the samples that
    ``bootstrap_predictions`` draws equal its own, number for number.

    Parameters
    ----------
    K, y, noise_var, K_test
        As in ``bootstrap_predictions``.
    occupations : ndarray of int, shape (N,) or (n_samples, N)
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
    op, y, noise_var, K_test = _gp_iv(K, y, noise_var, K_test)
    occ = np.atleast_2d(check_occupations(occupations, op.n, op.refit_name))
    return op.refit_predictions(y, noise_var, occ, K_test)


def _prediction_chunk(shared, chunk: Chunk, root, S_values, scheme):
    """One chunk of samples of group ``chunk.group`` (S = ``S_values[group]``): (occupations, train, test) rows."""
    op, y, noise_var, K_test, rows = shared
    occ = _draw(op.n, S_values, chunk.group, scheme, root, chunk.start, chunk.stop)
    train, test = op.refit_predictions(y, noise_var, occ, K_test, rows)
    return (occ if rows is None else occ[:, rows], train, test)


def refit_on_duplicates(K, y: ArrayLike, noise_var: float, occupations: ArrayLike) -> np.ndarray:
    """Literal GP refit on the duplicated data set, [MO03] sec. 5 (for tests and benchmarks; dense K only).

    For each occupation vector s the data set D holds s_i copies of point i (duplicated rows and
    columns of K); α' = (K' + σ² I)⁻¹ y' by Cholesky and f = K[:, D] α' at all N
    training inputs. Slow: it factorises a matrix of size Σ_i s_i instead of the active set.

    Parameters
    ----------
    occupations : ndarray of int, shape (N,) or (n_samples, N)

    Returns
    -------
    ndarray of shape (N,) or (n_samples, N), like ``occupations``.

    Raises
    ------
    UnsupportedOperation
        If ``K`` is an operator without the dense matrix.
    """
    op, y, noise_var, _ = _gp_iv(K, y, noise_var, None)
    occ = check_occupations(occupations, op.n, op.refit_name)
    return require(op, "duplicated_refits", "the literal refit on duplicated points")(y, noise_var, occ)


# ----------------------------------------------------------------------------- learning curve

def bootstrap_learning_curve(K, y: ArrayLike, noise_var: float, S_values: ArrayLike,
                             n_samples: int, *, loss: str | Loss = "square",
                             scheme: str = "poisson", rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                             executor: Executor | None = None, hooks: Hooks | None = None) -> LearningCurve:
    r"""Monte-Carlo bootstrap learning curve ε(S), [MO03] eq. (17) at every S in ``S_values``.

    The simulation side of Fig. 1 of [MO03]. Sample b at each S draws as ``resampling.sample_occupations`` at that S
    (from ``chunks.item_generator(root, chunks.s_over_n_group(S/N), b)``, :func:`_draw`); all chunks of all S are submitted at once, so an executor
    with several workers works on several S together. ``hooks`` count samples over the whole curve,
    total = len(S_values) * n_samples.

    How the samples of one S are reduced is the operator's ``refit_reduction``:

    * ``"stacked"`` (a dense K): every sample's predictions are kept and reduced by ``estimates.efron_error``;
      bit for bit the same across chunk sizes, O(N n_samples n_S) memory;
    * ``"streamed"`` (features): no sample's predictions are kept. Efron's estimate is ε = (1/N') Σ_i G_i/n_i with
      G_i = Σ_b δ_bi g_bi (δ_bi = [s_bi = 0], g_bi the loss of sample b at input i) and n_i = Σ_b δ_bi; its
      delta-method influence (``estimates.bootstrap_test_error``) is

          ψ_b = (B/N') Σ_i δ_bi (g_bi − R_i)/n_i = (B/N') (X_b − Y_b),  X_b = Σ_i δ_bi g_bi/n_i,  Y_b = Σ_i δ_bi R_i/n_i,

      with R_i = G_i/n_i. The occupations are a function of the seed, cheap to draw again, so the job has three
      steps: (1) n_i of every S from the occupations alone (draws, no fit; chunks on ``executor``, the first 5 % of
      the progress); (2) the fits: a chunk returns Σ_b δ_bi g_bi over its samples, shape (N,), and X_b of each
      sample; (3) as each S completes, G = the sum of its chunks' rows, R, and Y_b from the occupations drawn once
      more. Memory O(N (m + n_S + n_chunks)). The per-chunk sums are added in chunk order: the numbers are the same
      on every executor and for every number of workers, and agree across chunk sizes to the rounding of a sum of
      B terms (~B ε relative).

    Parameters
    ----------
    K, y, noise_var
        As in ``bootstrap_predictions``.
    S_values : ndarray of shape (n_S,)
        Mean (Poisson) or fixed (multinomial) sample sizes, non-empty and 1-D.
    n_samples : int
        Bootstrap samples per S.
    loss : str or callable
        ``"square"``, ``"eps-insensitive"`` or an element-wise ``g(f, y)`` (evaluated on the workers).
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
    op, y, noise_var, S_values, n_samples, chunk_size, g = _learning_curve_iv(
        K, y, noise_var, S_values, n_samples, scheme, chunk_size, loss)
    reduce = {"stacked": _stacked_curve, "streamed": _streamed_curve}[op.refit_reduction]
    return reduce(op, y, noise_var, S_values, n_samples, scheme, g, rng, chunk_size, executor, hooks)


def _stacked_curve(op, y, noise_var, S_values, n_samples, scheme, g, rng, chunk_size, executor, hooks):
    """Every sample's predictions kept, each S reduced by ``efron_error`` (eq. 17)."""
    def error(group: int, rows) -> BootstrapError:
        occ, train, _ = rows
        return efron_error(occ, train, y, g)     # eq. (17) on this S's samples

    return monte_carlo_curve(_prediction_chunk, (op, y, noise_var, None, None), S_values, n_samples,
                             (tuple(S_values), scheme), error, rng=rng, chunk_size=chunk_size, executor=executor,
                             hooks=hooks)


def _streamed_curve(op, y, noise_var, S_values, n_samples, scheme, g, rng, chunk_size, executor, hooks):
    """The three steps of the streamed reduction (``bootstrap_learning_curve``)."""
    root, hooks = root_seed(rng), hooks or NO_HOOKS
    count = (0, n_samples * S_values.size, "samples")
    counts = _left_out_counts(y.size, S_values, n_samples, scheme, root, chunk_size, executor,
                              hooks.sub(0.0, _COUNT_SHARE, "counting left-out inputs", count=count))

    def error(group: int, rows) -> BootstrapError:
        loss_sums, x = rows
        redraw = (_draw(y.size, S_values, group, scheme, root, b, b + 1)[0] for b in range(n_samples))
        return _streamed_efron(loss_sums.sum(axis=0), counts[group], x, redraw)

    return monte_carlo_curve(_left_out_loss_chunk, (op, y, noise_var, counts), S_values, n_samples,
                             (tuple(S_values), scheme, g), error, rng=root, chunk_size=chunk_size, executor=executor,
                             hooks=hooks.sub(_COUNT_SHARE, 1.0 - _COUNT_SHARE, partial=hooks.partial))


def _left_out_counts(n_inputs, S_values, n_samples, scheme, root, chunk_size, executor, hooks) -> np.ndarray:
    """n_i = Σ_b [s_bi = 0] of every S, shape (n_S, N) (step 1 of the streamed reduction)."""
    chunks = plan_chunks([n_samples] * len(S_values), chunk_size)
    rows = run_chunks(_left_out_count_chunk, n_inputs, chunks, root, (tuple(S_values), scheme), executor=executor,
                      hooks=hooks)
    counts = np.zeros((len(S_values), n_inputs), dtype=np.int64)
    for chunk, row in zip(chunks, rows):
        counts[chunk.group] += row
    return counts


def _left_out_count_chunk(n_inputs, chunk: Chunk, root, S_values, scheme) -> np.ndarray:
    """How many samples of the chunk leave each input out, shape (N,) (int32: a chunk has fewer than 2^31 samples)."""
    count = np.zeros(n_inputs, dtype=np.int32)
    for b in range(chunk.start, chunk.stop):
        count += _draw(n_inputs, S_values, chunk.group, scheme, root, b, b + 1)[0] == 0
    return count


def _left_out_loss_chunk(shared, chunk: Chunk, root, S_values, scheme, g) -> tuple[np.ndarray, np.ndarray]:
    """Step 2: Σ_b δ_bi g_bi over the chunk's samples, shape (1, N), and X_b = Σ_i δ_bi g_bi / n_i, shape (chunk,)."""
    op, y, noise_var, counts = shared
    n_test = counts[chunk.group]
    sums = np.zeros(y.size)
    x = np.empty(chunk.size)
    for r, b in enumerate(range(chunk.start, chunk.stop)):
        s = _draw(y.size, S_values, chunk.group, scheme, root, b, b + 1)[0]
        out = np.flatnonzero(s == 0)                            # δ_bi = 1: input i is a test point of sample b
        f = op.refit_predictions(y, noise_var, s[None, :], None)[0][0]  # the row resample_predictions gives
        losses = g(f[out], y[out])
        sums[out] += losses
        x[r] = np.sum(losses / n_test[out])
    return sums[None, :], x


def _streamed_efron(loss_sums, n_test, x, redraw) -> BootstrapError:
    """Step 3: ``efron_error``'s estimate and delta-method SE from G (N,), n (N,), X (B,) and the occupations again.

    Eq. (17): per_input R_i = G_i/n_i, ε = mean of R over the N' inputs left out at least once; ψ_b as in
    ``bootstrap_learning_curve``, se = sqrt(Σ ψ_b² / (B (B − 1))).
    """
    n_samples = x.size
    used = n_test > 0
    per_input = np.full(n_test.shape, np.nan)
    per_input[used] = loss_sums[used] / n_test[used]           # eq. (17), ratio per input
    if not used.any():
        return BootstrapError(np.nan, np.nan, n_samples, per_input, n_test)
    ratio = np.where(used, per_input, 0.0) / np.maximum(n_test, 1)  # R_i / n_i
    y_b = np.array([ratio[s == 0].sum() for s in redraw])       # Y_b
    psi = (x - y_b) * (n_samples / used.sum())
    se = float(np.sqrt(psi @ psi / (n_samples * (n_samples - 1)))) if n_samples > 1 else np.nan
    return BootstrapError(float(per_input[used].mean()), se, n_samples, per_input, n_test)


# ----------------------------------------------------------------------------- on features Φ

def posterior_weights(phi: np.ndarray, y: np.ndarray, noise_var: float, s: np.ndarray) -> np.ndarray:
    """The posterior mean weights μ_s of one sample on the features Φ (``FeatureKernel.posterior_weights``).

    μ_s = A_s⁻¹ Φᵀ(w ∘ y), A_s = I_m + Φ_aᵀ diag(w_a) Φ_a, w = s/σ²; the predictor is f(x; s) = φ(x)ᵀ μ_s.
    Arguments are not checked (see :func:`check_features`).
    """
    return FeatureKernel(phi).posterior_weights(y, noise_var, s)


def bootstrap_predictions_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S: float, n_samples: int, *,
                                  phi_test: ArrayLike | None = None, rows: ArrayLike | None = None,
                                  scheme: str = "poisson", rng: SeedLike = None,
                                  chunk_size: int = DEFAULT_CHUNK_SIZE, executor: Executor | None = None,
                                  hooks: Hooks | None = None) -> BootstrapPredictions:
    """``bootstrap_predictions`` on the features Φ (test features ``phi_test``).

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.random.default_rng(0).normal(size=(50, 5))
    >>> pred = bootstrap_predictions_lowrank(phi, phi[:, 0], 0.1, 50, 4, rng=1)
    >>> pred.train.shape
    (4, 50)
    """
    return bootstrap_predictions(_features(phi), y, noise_var, S, n_samples, K_test=phi_test, rows=rows,
                                 scheme=scheme, rng=rng, chunk_size=chunk_size, executor=executor, hooks=hooks)


def resample_predictions_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, occupations: ArrayLike, *,
                                 phi_test: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``resample_predictions`` on the features Φ (test features ``phi_test``)."""
    return resample_predictions(_features(phi), y, noise_var, occupations, K_test=phi_test)


def bootstrap_learning_curve_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S_values: ArrayLike,
                                     n_samples: int, *, loss: str | Loss = "square", scheme: str = "poisson",
                                     rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                                     executor: Executor | None = None, hooks: Hooks | None = None) -> LearningCurve:
    """``bootstrap_learning_curve`` on the features Φ.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.random.default_rng(0).normal(size=(60, 4))
    >>> curve = bootstrap_learning_curve_lowrank(phi, phi[:, 0], 0.1, [30, 60], 20, rng=1)
    >>> curve.value.shape
    (2,)
    """
    return bootstrap_learning_curve(_features(phi), y, noise_var, S_values, n_samples, loss=loss, scheme=scheme,
                                    rng=rng, chunk_size=chunk_size, executor=executor, hooks=hooks)


# ----------------------------------------------------------------------------- validation

def _features(phi) -> FeatureKernel:
    """The :class:`FeatureKernel` of features Φ, checked once (``check_feature_matrix``), laid out by rows."""
    return FeatureKernel(np.ascontiguousarray(check_feature_matrix(phi)))


def _gp_iv(K, y, noise_var, K_test) -> tuple[KernelOperator, np.ndarray, float, np.ndarray | None]:
    """(operator, y, σ², test inputs) checked: the kernel and the targets once (:func:`check_targets`), σ² > 0, the
    test inputs by the operator (``check_refit_cross``)."""
    op = as_operator(K)  # checks an array or features once, for every computation
    return op, check_targets(y, op), noise_variance(noise_var), op.check_refit_cross(K_test)


def _rows_iv(rows, n: int) -> np.ndarray | None:
    if rows is None:
        return None
    rows = np.asarray(rows)
    if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"`rows` must be a non-empty 1-D array of training-input indices in 0..{n - 1}.")
    return rows


def _learning_curve_iv(K, y, noise_var, S_values, n_samples, scheme, chunk_size, loss):
    op, y, noise_var, _ = _gp_iv(K, y, noise_var, None)
    S_arr = sample_sizes(S_values)
    for S in S_arr:
        _, _, n_samples, _ = occupation_args(op.n, S, n_samples, scheme)
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    return op, y, noise_var, S_arr, n_samples, chunk_size, get_loss(loss)


def check_features(phi, y, noise_var, phi_test=None) -> tuple[np.ndarray, np.ndarray, float, np.ndarray | None]:
    """Validated ``(phi, y, noise_var, phi_test)`` of the GP on features Φ (the Monte-Carlo and the linear response).

    Parameters
    ----------
    phi : array_like of shape (N, m)
        Finite features of the training inputs, N >= 1, m >= 1.
    y : array_like of shape (N,)
        Finite targets.
    noise_var : float
        σ² > 0.
    phi_test : array_like of shape (M, m), optional
        Finite features of the test inputs.

    Returns
    -------
    tuple
        ``phi``, ``y`` and ``phi_test`` as float ndarrays (C-ordered), ``noise_var`` as float.

    Raises
    ------
    ValueError
        If a shape or a value is wrong; the message says which and what to pass.
    """
    op, y, noise_var, phi_test = _gp_iv(_features(phi), y, noise_var, phi_test)
    return op.phi, y, noise_var, phi_test
