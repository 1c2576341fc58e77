r"""Monte-Carlo bootstrap of GP regression with a low-rank kernel K = ΦΦᵀ: O(N m²) time and O(N m) memory a sample.

The model is the GP whose prior covariance is ΦΦᵀ (:mod:`explorer.lowrank`): f(x) = φ(x)ᵀw, w ~ N(0, I_m). A
bootstrap sample with occupation numbers s (eqs. 10-11 of seed 000) holds s_i copies of point i; with the square
loss of eq. (50) (noise σ²) its posterior is Gaussian in the weights, and with w_i = s_i/σ²

    A_s = I_m + Φᵀ diag(w) Φ,      μ_s = A_s⁻¹ Φᵀ (w ∘ y),      f(x; s) = φ(x)ᵀ μ_s.

By the push-through identity Φ A_s⁻¹ Φᵀ W = ΦΦ_aᵀ (Φ_aΦ_aᵀ + σ² diag(1/s_a))⁻¹ restricted to the active rows
a = {i : s_i > 0}, f(s) is exactly the predictor of :mod:`explorer.gp_bootstrap.montecarlo` on K = ΦΦᵀ (the GP mean
on the duplicated points, sec. 5), computed from an m×m system instead of an #a × #a one (#a the size of a): O(#a m²) time. Only the
active rows enter A_s; they are gathered in blocks of 2 MB, so a sample holds O(N + m²) numbers beyond Φ, and
A_s ⪰ I_m needs no jitter (the empty sample gives μ = 0, the prior mean).

Occupation numbers are drawn as in the dense Monte-Carlo (:func:`explorer.resampling.sample_occupations`, sample b of
S/N from ``chunks.item_generator(root, chunks.s_over_n_group(S/N), b)``), so sample b of seed r has the same occupations here and there.

* :func:`bootstrap_predictions_lowrank` — the predictors on ``n_samples`` samples, shape (n_samples, N) at the
  training inputs (the one output that is O(N n_samples) by nature);
* :func:`resample_predictions_lowrank` — the same for given occupation numbers;
* :func:`bootstrap_learning_curve_lowrank` — Efron's estimate ε(S), eq. (17), streamed: a chunk returns the sums of
  the left-out losses, shape (N,), and one number per sample, never its predictions (see that function).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg
from scipy.linalg.blas import dsyrk

from explorer.bootstrap.estimates import BootstrapError, BootstrapPredictions, LearningCurve, monte_carlo_curve
from explorer.chunks import DEFAULT_CHUNK_SIZE, Chunk, Executor, SeedLike, plan_chunks, root_seed, run_chunks, run_items
from explorer.losses import Loss, get_loss
from explorer.progress import NO_HOOKS, Hooks
from explorer.resampling import check_occupations, occupation_args, sample_occupations
from explorer.validation import as_float, finite, positive_int, sample_sizes, show

__all__ = ["SAMPLE_SECONDS_PER_NM2", "check_features", "posterior_weights", "bootstrap_predictions_lowrank",
           "resample_predictions_lowrank", "bootstrap_learning_curve_lowrank"]

#: Seconds of one Monte-Carlo sample per N·m² (a weighted m×m solve after forming ΦᵀWΦ; measured 0.09 s at N = 53,940
#: and m = 256 on two cores): the estimate by which the command line refuses a run of over an hour and the app states
#: the time of a run before it starts.
SAMPLE_SECONDS_PER_NM2 = 2.5e-11

#: Entries of Φ gathered at once for A_s: 2^18 float64 = 2 MB, a block that stays in cache (1,024 rows at m = 256;
#: measured on one core at N = 53,940: 1,024 rows beat 512 and 4,096).
_BLOCK_ENTRIES = 2**18

#: Share of a learning curve's progress bar given to counting the left-out inputs (draws only, no fit).
_COUNT_SHARE = 0.05


# ----------------------------------------------------------------------------- predictors

def bootstrap_predictions_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S: float, n_samples: int, *,
                                  phi_test: ArrayLike | None = None, rows: ArrayLike | None = None,
                                  scheme: str = "poisson", rng: SeedLike = None,
                                  chunk_size: int = DEFAULT_CHUNK_SIZE, executor: Executor | None = None,
                                  hooks: Hooks | None = None) -> BootstrapPredictions:
    """Posterior means of the GP with covariance ΦΦᵀ retrained on ``n_samples`` bootstrap samples (sec. 5 of seed 000).

    Each sample solves the m×m system A_s μ = Φᵀ(w ∘ y), w = s/σ² (module docstring); equal to
    ``montecarlo.bootstrap_predictions`` on K = ΦΦᵀ, K_test = phi_test Φᵀ with the same ``rng``.

    Parameters
    ----------
    phi : ndarray of shape (N, m)
        Features Φ of the training inputs (:class:`explorer.lowrank.LowRankFeatures` ``.phi``).
    y : ndarray of shape (N,)
        Training targets.
    noise_var : float
        Noise variance σ² > 0 of the GP, eq. (50).
    S : float
        Mean sample size (Poisson, eq. 11) or fixed size (multinomial).
    n_samples : int
        Number of bootstrap samples.
    phi_test : ndarray of shape (M, m), optional
        Features of test inputs (``LowRankFeatures.transform``); if given, predictions there are returned too.
    rows : array_like of int, shape (R,), optional
        Keep the predictions and occupation numbers of these training inputs only (every sample is still fitted on
        all N): (B, R) arrays instead of (B, N), for a distribution map of a large N.
    scheme : {"poisson", "multinomial"}
        See :func:`explorer.resampling.occupation_numbers`.
    rng : int, SeedSequence, Generator or None
        Root seed of the job; sample b draws as in the dense path (``resampling.sample_occupations``).
    chunk_size : int
        Samples per chunk (it changes no number).
    executor : Executor, optional
        In this process (default) or on Dask workers (``explorer.serving.engine``); (Φ, y, σ², phi_test) are sent once.
    hooks : Hooks, optional
        Progress after every chunk and cancellation, as in ``montecarlo.bootstrap_predictions``.

    Returns
    -------
    BootstrapPredictions
        ``occupations`` (n_samples, N), ``train`` of shape (n_samples, N) and ``test`` of shape (n_samples, M) or
        None; with ``rows``, ``occupations`` and ``train`` of shape (n_samples, R).

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.random.default_rng(0).normal(size=(50, 5))
    >>> pred = bootstrap_predictions_lowrank(phi, phi[:, 0], 0.1, 50, 4, rng=1)
    >>> pred.train.shape
    (4, 50)
    """
    phi, y, noise_var, phi_test = check_features(phi, y, noise_var, phi_test)
    _, S, n_samples, _ = occupation_args(y.size, S, n_samples, scheme)
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    rows = _rows_iv(rows, y.size)
    occupations, train, test = run_items(_prediction_chunk, (phi, y, noise_var, phi_test, rows), n_samples, rng,
                                         ((S,), scheme), chunk_size=chunk_size, executor=executor, hooks=hooks)
    return BootstrapPredictions(occupations, train, test, S, scheme)


def resample_predictions_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, occupations: ArrayLike, *,
                                 phi_test: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Posterior means of the GP with covariance ΦΦᵀ retrained on given bootstrap samples, as the Monte-Carlo does.

    Parameters
    ----------
    phi, y, noise_var, phi_test
        As in :func:`bootstrap_predictions_lowrank`.
    occupations : ndarray of int, shape (N,) or (n_samples, N)
        Occupation numbers s of each sample.

    Returns
    -------
    train : ndarray of shape (n_samples, N)
        f(x_i; s) at the training inputs.
    test : ndarray of shape (n_samples, M) or None
        At the test inputs (None without ``phi_test``).
    """
    phi, y, noise_var, phi_test = check_features(phi, y, noise_var, phi_test)
    return _predict(phi, y, noise_var, np.atleast_2d(check_occupations(occupations, y.size, "phi")), phi_test)


def _prediction_chunk(shared, chunk: Chunk, root, S_values, scheme):
    """One chunk of samples of group ``chunk.group``: (occupations, train, test) rows."""
    phi, y, noise_var, phi_test, rows = shared
    occ = sample_occupations(y.size, S_values[chunk.group], scheme, root, chunk.group, chunk.start, chunk.stop)
    train, test = _predict(phi, y, noise_var, occ, phi_test, rows)
    return (occ if rows is None else occ[:, rows], train, test)


def _rows_iv(rows, n: int) -> np.ndarray | None:
    if rows is None:
        return None
    rows = np.asarray(rows)
    if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"`rows` must be a non-empty 1-D array of training-input indices in 0..{n - 1}.")
    return rows


def _predict(phi, y, noise_var, occ, phi_test, rows=None) -> tuple[np.ndarray, np.ndarray | None]:
    """f = Φ μ_s (and phi_test μ_s) sample by sample: a matrix-vector product each, so that no row depends on the
    number of samples computed with it (a matrix product may sum differently for another number of rows); with
    ``rows``, f at those training inputs only."""
    kept = phi if rows is None else phi[rows]
    train = np.empty((occ.shape[0], kept.shape[0]))
    test = None if phi_test is None else np.empty((occ.shape[0], phi_test.shape[0]))
    for r, s in enumerate(occ):
        mu = posterior_weights(phi, y, noise_var, s)
        train[r] = kept @ mu
        if test is not None:
            test[r] = phi_test @ mu
    return train, test


def posterior_weights(phi: np.ndarray, y: np.ndarray, noise_var: float, s: np.ndarray) -> np.ndarray:
    """μ_s = A_s⁻¹ Φᵀ(w ∘ y), A_s = I_m + Φ_aᵀ diag(w_a) Φ_a, w = s/σ²: the posterior mean weights of one sample.

    The active rows a = {s_i > 0} are gathered in blocks; A_s accumulates Φ_bᵀ W_b Φ_b by ``dsyrk`` (its lower
    triangle, which the Cholesky factor reads). A_s ⪰ I_m, so the factorisation needs no jitter. Arguments are not
    checked (see :func:`check_features`).

    Parameters
    ----------
    phi : ndarray of shape (N, m)
    y : ndarray of shape (N,)
    noise_var : float
    s : ndarray of int, shape (N,)
        Occupation numbers of the sample.

    Returns
    -------
    ndarray of shape (m,)
        μ_s; the predictor is f(x; s) = φ(x)ᵀ μ_s (0 for the empty sample).
    """
    a = np.flatnonzero(s)
    w = s[a] / noise_var                                        # s copies at σ² = one point at σ²/s (sec. 5)
    A = np.eye(phi.shape[1], order="F")
    rhs = np.zeros(phi.shape[1])
    rows = _block_rows(phi.shape[1])
    for start in range(0, a.size, rows):
        block, w_b = a[start:start + rows], w[start:start + rows]
        P = phi[block]                                          # Φ_b, (b, m)
        rhs += P.T @ (w_b * y[block])                           # Φ_bᵀ (w_b ∘ y_b)
        P *= np.sqrt(w_b)[:, None]
        A = dsyrk(1.0, P.T, beta=1.0, c=A, trans=0, lower=1, overwrite_c=1)  # A_s += Φ_bᵀ W_b Φ_b
    factor = linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    return linalg.cho_solve(factor, rhs, check_finite=False)


def _block_rows(m: int) -> int:
    return max(1, _BLOCK_ENTRIES // m)


# ----------------------------------------------------------------------------- learning curve

def bootstrap_learning_curve_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S_values: ArrayLike,
                                     n_samples: int, *, loss: str | Loss = "square", scheme: str = "poisson",
                                     rng: SeedLike = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                                     executor: Executor | None = None, hooks: Hooks | None = None) -> LearningCurve:
    r"""Monte-Carlo bootstrap learning curve ε(S), eq. (17) of seed 000, of the GP with covariance ΦΦᵀ.

    The same estimate and standard error as ``montecarlo.bootstrap_learning_curve`` on K = ΦΦᵀ with the same
    ``rng`` (the same samples at each S), without keeping any sample's predictions. Efron's estimate is
    ε = (1/N') Σ_i G_i/n_i with G_i = Σ_b δ_bi g_bi (δ_bi = [s_bi = 0], g_bi the loss of sample b at input i) and
    n_i = Σ_b δ_bi; its delta-method influence (``estimates.bootstrap_test_error``) is

        ψ_b = (B/N') Σ_i δ_bi (g_bi − R_i)/n_i = (B/N') (X_b − Y_b),   X_b = Σ_i δ_bi g_bi/n_i,   Y_b = Σ_i δ_bi R_i/n_i,

    with R_i = G_i/n_i. The occupations are a function of the seed, cheap to draw again, so the job has three steps:

    1. n_i of every S from the occupations alone (draws, no fit; chunks on ``executor``);
    2. the fits: a chunk returns Σ_b δ_bi g_bi over its samples, shape (N,), and X_b of each sample;
    3. as each S completes, G = the sum of its chunks' rows, R, and Y_b from the occupations drawn once more.

    Memory: Φ, the counts (n_S, N), one (N,) row per chunk (the executor keeps every chunk's result until the job
    ends, as it does for any job) and O(N + block m) per sample in flight: O(N (m + n_S + n_chunks)), against
    O(N n_samples n_S) for the dense reducer, which stacks every sample's predictions. The per-chunk sums are added
    in chunk order: the numbers are the same on every executor and for every number of workers, and agree across
    chunk sizes to the rounding of a sum of B terms (~B ε relative); the dense path is bit-identical across chunk
    sizes.

    Parameters
    ----------
    phi, y, noise_var
        As in :func:`bootstrap_predictions_lowrank`.
    S_values : ndarray of shape (n_S,)
        Mean (Poisson) or fixed (multinomial) sample sizes, non-empty and 1-D.
    n_samples : int
        Bootstrap samples per S.
    loss : str or callable
        ``"square"``, ``"eps-insensitive"`` or an element-wise ``g(f, y)`` (evaluated on the workers).
    scheme, rng, chunk_size, executor
        As in :func:`bootstrap_predictions_lowrank`.
    hooks : Hooks, optional
        Progress (counting the left-out inputs takes the first 5 %), cancellation, and ``publish`` of the
        :class:`LearningCurve` of the S values finished so far.

    Returns
    -------
    LearningCurve
        ``s_values``, ``value`` and ``se`` of shape (n_S,) and the :class:`BootstrapError` of every S.

    Raises
    ------
    ValueError
        If ``S_values`` is empty or not 1-D, or Φ, y, σ², an S, ``n_samples``, ``scheme``, ``chunk_size`` or
        ``loss`` is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.random.default_rng(0).normal(size=(60, 4))
    >>> curve = bootstrap_learning_curve_lowrank(phi, phi[:, 0], 0.1, [30, 60], 20, rng=1)
    >>> curve.value.shape
    (2,)
    """
    phi, y, noise_var, S_values, n_samples, chunk_size, g = _learning_curve_iv(
        phi, y, noise_var, S_values, n_samples, scheme, chunk_size, loss)
    root, hooks = root_seed(rng), hooks or NO_HOOKS
    count = (0, n_samples * S_values.size, "samples")
    counts = _left_out_counts(y.size, S_values, n_samples, scheme, root, chunk_size, executor,
                              hooks.sub(0.0, _COUNT_SHARE, "counting left-out inputs", count=count))

    def error(group: int, rows) -> BootstrapError:
        loss_sums, x = rows
        redraw = (sample_occupations(y.size, S_values[group], scheme, root, group, b, b + 1)[0]
                  for b in range(n_samples))
        return _streamed_efron(loss_sums.sum(axis=0), counts[group], x, redraw)

    return monte_carlo_curve(_left_out_loss_chunk, (phi, y, noise_var, counts), S_values, n_samples,
                             (tuple(S_values), scheme, g), error, rng=root, chunk_size=chunk_size, executor=executor,
                             hooks=hooks.sub(_COUNT_SHARE, 1.0 - _COUNT_SHARE, partial=hooks.partial))


def _left_out_counts(n_inputs, S_values, n_samples, scheme, root, chunk_size, executor, hooks) -> np.ndarray:
    """n_i = Σ_b [s_bi = 0] of every S, shape (n_S, N) (step 1 of ``bootstrap_learning_curve_lowrank``)."""
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
        count += sample_occupations(n_inputs, S_values[chunk.group], scheme, root, chunk.group, b, b + 1)[0] == 0
    return count


def _left_out_loss_chunk(shared, chunk: Chunk, root, S_values, scheme, g) -> tuple[np.ndarray, np.ndarray]:
    """Step 2: Σ_b δ_bi g_bi over the chunk's samples, shape (1, N), and X_b = Σ_i δ_bi g_bi / n_i, shape (chunk,)."""
    phi, y, noise_var, counts = shared
    n_test = counts[chunk.group]
    sums = np.zeros(y.size)
    x = np.empty(chunk.size)
    for r, b in enumerate(range(chunk.start, chunk.stop)):
        s = sample_occupations(y.size, S_values[chunk.group], scheme, root, chunk.group, b, b + 1)[0]
        out = np.flatnonzero(s == 0)                            # δ_bi = 1: input i is a test point of sample b
        f = phi @ posterior_weights(phi, y, noise_var, s)       # the row resample_predictions_lowrank gives
        losses = g(f[out], y[out])
        sums[out] += losses
        x[r] = np.sum(losses / n_test[out])
    return sums[None, :], x


def _streamed_efron(loss_sums, n_test, x, redraw) -> BootstrapError:
    """Step 3: ``efron_error``'s estimate and delta-method SE from G (N,), n (N,), X (B,) and the occupations again.

    Eq. (17): per_input R_i = G_i/n_i, ε = mean of R over the N' inputs left out at least once; ψ_b as in
    ``bootstrap_learning_curve_lowrank``, se = sqrt(Σ ψ_b² / (B (B − 1))).
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


# ----------------------------------------------------------------------------- validation

def check_features(phi, y, noise_var, phi_test=None) -> tuple[np.ndarray, np.ndarray, float, np.ndarray | None]:
    """Validated ``(phi, y, noise_var, phi_test)`` of the low-rank GP (the Monte-Carlo and the linear response).

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
    phi = np.ascontiguousarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] == 0 or phi.shape[1] == 0:
        raise ValueError(f"`phi` must be a non-empty feature matrix of shape (N, m), got shape {phi.shape}. "
                         "Pass LowRankFeatures.phi (explorer.lowrank), one row per training input.")
    n = phi.shape[0]
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"`y` must have shape ({n},) to match `phi` of shape {phi.shape}, got shape {y.shape}. "
                         "Pass one target per training input.")
    finite(phi, "phi", "Check the kernel hyperparameters and the inputs of the feature map.")
    finite(y, "y", "Remove or impute missing targets.")
    if not (np.isfinite(as_float(noise_var)) and noise_var > 0):
        raise ValueError(f"`noise_var` must be a positive finite number, got {show(noise_var)}. "
                         "It is the GP noise variance sigma^2 of eq. (50) (seed 000 uses 0.01).")
    if phi_test is not None:
        phi_test = np.ascontiguousarray(phi_test, dtype=float)
        if phi_test.ndim != 2 or phi_test.shape[1] != phi.shape[1]:
            raise ValueError(f"`phi_test` must have shape (M, {phi.shape[1]}), one feature row per test input as "
                             f"`phi` has, got shape {phi_test.shape}. Pass LowRankFeatures.transform(X_test).")
        finite(phi_test, "phi_test", "Check the test inputs of the feature map.")
    return phi, y, float(noise_var), phi_test


def _learning_curve_iv(phi, y, noise_var, S_values, n_samples, scheme, chunk_size, loss):
    phi, y, noise_var, _ = check_features(phi, y, noise_var)
    S_arr = sample_sizes(S_values)
    for S in S_arr:
        _, _, n_samples, _ = occupation_args(y.size, S, n_samples, scheme)
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of samples per chunk.")
    return phi, y, noise_var, S_arr, n_samples, chunk_size, get_loss(loss)
