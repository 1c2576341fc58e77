"""What a Monte-Carlo bootstrap yields, whatever model was refitted on the samples ([MO03], §3).

The predictions on the B bootstrap samples (:class:`BootstrapPredictions`), Efron's estimate of the test error,
eq. (17) of [MO03] (eq. 46 for any loss), with its delta-method standard error, the learning curve ε(S)
that collects it over S, and the bootstrap mean and variance of the predictor, eqs. (16), (47)-(48). The GP
regression (:mod:`explorer.gp_bootstrap.montecarlo`) and the SVM (:mod:`explorer.svm_bootstrap.montecarlo`)
Monte-Carlo fill these.

Core module: numpy only.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from explorer.chunks import DEFAULT_CHUNK_SIZE, ChunkTask, Executor, SeedLike, plan_chunks, root_seed, run_groups
from explorer.losses import Loss, get_loss
from explorer.progress import NO_HOOKS, Hooks
from explorer.validation import finite as _finite

__all__ = ["BootstrapPredictions", "BootstrapError", "LearningCurve", "PredictiveMoments", "bootstrap_test_error",
           "efron_error", "learning_curve", "monte_carlo_curve", "predictive_moments"]


@dataclass(frozen=True)
class BootstrapPredictions:
    """GP predictors retrained on bootstrap samples.

    Attributes
    ----------
    occupations : ndarray of int, shape (n_samples, N)
        Occupation numbers s of every sample, eq. (10).
    train : ndarray of shape (n_samples, N)
        Predictor f_i(D) at every training input.
    test : ndarray of shape (n_samples, M) or None
        Predictor at the test inputs, if ``K_test`` was given.
    S : float
        Mean (Poisson) or fixed (multinomial) sample size.
    scheme : str
        ``"poisson"`` (eq. 11) or ``"multinomial"``.
    """

    occupations: np.ndarray
    train: np.ndarray
    test: np.ndarray | None
    S: float
    scheme: str

    @property
    def n_samples(self) -> int:
        return self.train.shape[0]


@dataclass(frozen=True)
class BootstrapError:
    """Efron's bootstrap test error, eq. (17) (any loss: eq. 46), with its Monte-Carlo error.

    Attributes
    ----------
    value : float
        (1/N') sum_i E[delta_{s_i,0} g(f_i - y_i)] / E[delta_{s_i,0}] over the N' inputs left out
        of at least one sample (NaN if there is none).
    se : float
        Delta-method standard error of ``value`` (see ``bootstrap_test_error``).
    n_samples : int
        Number of bootstrap samples.
    per_input : ndarray of shape (N,)
        Mean loss at input i over the samples with s_i = 0; NaN where there is no such sample.
    n_test : ndarray of int, shape (N,)
        Number of samples with s_i = 0, i.e. in which input i is a test point.
    """

    value: float
    se: float
    n_samples: int
    per_input: np.ndarray
    n_test: np.ndarray

    @property
    def n_inputs_used(self) -> int:
        """N', the number of inputs entering the average (left out at least once)."""
        return int(np.count_nonzero(self.n_test))


@dataclass(frozen=True)
class LearningCurve:
    """Bootstrap learning curve epsilon(S), eq. (17), as in Fig. 1 of [MO03].

    ``value[k]`` and ``se[k]`` belong to ``s_values[k]``; ``errors[k]`` holds the full
    ``BootstrapError`` (per-input losses and test counts).
    """

    s_values: np.ndarray
    value: np.ndarray
    se: np.ndarray
    n_samples: int
    errors: tuple[BootstrapError, ...]


@dataclass(frozen=True)
class PredictiveMoments:
    """Bootstrap mean E[f_x(D)] and variance Var[f_x(D)] of the predictor, eqs. (16), (47)-(48).

    All arrays have shape (M,) (``where="test"``) or (N,) (``where="train"``). Unpacks as
    ``mean, var, mean_se, var_se = predictive_moments(predictions)``.
    """

    mean: np.ndarray
    var: np.ndarray
    mean_se: np.ndarray
    var_se: np.ndarray
    n_samples: int
    where: str

    def __iter__(self):
        return iter((self.mean, self.var, self.mean_se, self.var_se))


def bootstrap_test_error(predictions: BootstrapPredictions, y: ArrayLike,
                         loss: str | Loss = "square") -> BootstrapError:
    """Efron's bootstrap test error, eq. (17) of [MO03] (general loss g: eq. 46).

        epsilon = (1/N') sum_i E[delta_{s_i,0} g(f_i(D), y_i)] / E[delta_{s_i,0}]

    with both expectations replaced by averages over the bootstrap samples. Inputs that are never
    left out (no sample with s_i = 0) have no test error; they are excluded, so N' <= N (they show
    up as NaN in ``per_input`` and 0 in ``n_test``).

    Standard error: delta method for the ratio estimators. The estimate is a smooth function of
    per-sample means, so epsilon_hat - epsilon ~ (1/B) sum_b psi_b with the per-sample influence

        psi_b = (1/N') sum_i delta_{s_i^b,0} (g_i^b - R_i) / p_i,   p_i = n_test_i / B,

    (R_i the per-input ratio) and se = sqrt(sum_b psi_b^2 / (B (B - 1))). It is reliable when
    every used input is left out of many samples (n_test_i >> 1); NaN for B = 1.

    Parameters
    ----------
    predictions : BootstrapPredictions
    y : ndarray of shape (N,)
        Training targets.
    loss : str or callable
        ``"square"``, ``"eps-insensitive"`` (eps = beta = 0.1 as in Fig. 1) or a vectorised
        ``g(f, y)``; use ``losses.get_loss("eps-insensitive", eps=..., beta=...)`` for other
        parameters.

    Returns
    -------
    BootstrapError
        ``value`` = epsilon and its standard error ``se``, the per-input ratios ``per_input`` and the
        number of samples ``n_test`` that leave each input out, ndarrays of shape (N,).
    """
    y, g = _test_error_iv(predictions, y, loss)
    return efron_error(predictions.occupations, predictions.train, y, g)


def efron_error(occupations: np.ndarray, train: np.ndarray, y: np.ndarray, g: Loss) -> BootstrapError:
    """Efron's test error, eq. (17) of [MO03], of predictions ``train`` (shape (B, N)) on samples with
    ``occupations`` (shape (B, N)), targets ``y`` and loss ``g``, without validation (the Monte-Carlo reducers
    call it per group of samples; :func:`bootstrap_test_error` is the checked entry point)."""
    n_samples = train.shape[0]
    out = occupations == 0                           # delta_{s_i,0}
    n_test = out.sum(axis=0)
    used = n_test > 0
    losses = np.where(out, g(train, y[None, :]), 0.0)
    per_input = np.full(y.shape, np.nan)
    per_input[used] = losses[:, used].sum(axis=0) / n_test[used]   # eq. (17), ratio per input
    if not used.any():
        return BootstrapError(np.nan, np.nan, n_samples, per_input, n_test)
    value = float(per_input[used].mean())
    # Delta method: per-sample influence psi_b of the ratio estimators (docstring).
    resid = np.where(out[:, used], losses[:, used] - per_input[used], 0.0)
    psi = (resid * (n_samples / n_test[used])).sum(axis=1) / used.sum()
    se = float(np.sqrt(psi @ psi / (n_samples * (n_samples - 1)))) if n_samples > 1 else np.nan
    return BootstrapError(value, se, n_samples, per_input, n_test)


def learning_curve(S_values: np.ndarray, n_samples: int, errors: dict[int, BootstrapError]) -> LearningCurve:
    """The learning curve ε(S) of the S values with an error in ``errors`` (by index into ``S_values``), in grid
    order: the reducer of every Monte-Carlo learning curve (partial results for free)."""
    done = sorted(errors)
    return LearningCurve(S_values[done], np.array([errors[k].value for k in done]),
                         np.array([errors[k].se for k in done]), n_samples, tuple(errors[k] for k in done))


def monte_carlo_curve(task: ChunkTask, shared, S_values: np.ndarray, n_samples: int, args: tuple,
                      error: Callable[[int, Any], BootstrapError], *, rng: SeedLike = None,
                      chunk_size: int = DEFAULT_CHUNK_SIZE, executor: Executor | None = None,
                      hooks: Hooks | None = None) -> LearningCurve:
    """The Monte-Carlo learning curve ε(S): ``n_samples`` samples per S in seeded chunks, each S reduced as soon as
    its samples are in and the curve so far published (``hooks.publish``).

    Parameters
    ----------
    task, shared, args, executor
        As in :func:`explorer.chunks.run_chunks`; group k of the chunks is the k-th S.
    S_values : ndarray of shape (n_S,)
        The validated sample sizes S.
    n_samples : int
        Bootstrap samples per S.
    error : callable(k, rows) -> BootstrapError
        The error of the k-th S from its rows (:func:`explorer.chunks.stack_rows`), e.g. eq. (17).
    rng : int, SeedSequence, Generator or None
        Root seed of the job: the task draws each S's samples (e.g. ``resampling.sample_occupations``).
    chunk_size : int
        Samples per chunk (it changes no number).
    hooks : Hooks, optional
        Progress, cancellation and the partial curves.

    Returns
    -------
    LearningCurve
        ε(S) with standard errors at every S, in grid order.

    Raises
    ------
    Cancelled
        If ``hooks.should_stop()`` became True before all samples finished.
    """
    hooks = hooks or NO_HOOKS
    errors: dict[int, BootstrapError] = {}

    def complete(group: int, rows) -> None:
        errors[group] = error(group, rows)
        hooks.publish(learning_curve(S_values, n_samples, errors))

    chunks = plan_chunks([n_samples] * len(S_values), chunk_size)
    run_groups(task, shared, chunks, root_seed(rng), args, on_group=complete, executor=executor, hooks=hooks)
    return learning_curve(S_values, n_samples, errors)


def predictive_moments(predictions: BootstrapPredictions, *,
                       where: str = "test") -> PredictiveMoments:
    """Bootstrap mean and variance of the predictor with standard errors, eqs. (16), (47)-(48).

    mean = (1/B) sum_b f_x(D_b) with se sqrt(var / B); var is the unbiased sample variance
    (ddof = 1) with the large-B delta-method se sqrt((m4 - var^2) / B), m4 the fourth central
    sample moment.

    Parameters
    ----------
    predictions : BootstrapPredictions
        At least two samples.
    where : {"test", "train"}
        Moments at the test inputs (needs ``K_test`` in ``bootstrap_predictions``) or at the
        training inputs.

    Returns
    -------
    PredictiveMoments
        ``mean``, ``var``, ``mean_se`` and ``var_se``, ndarrays of shape (M,) (test) or (N,) (train).
    """

    f = _moments_iv(predictions, where)
    n = f.shape[0]
    mean = f.mean(axis=0)
    dev = f - mean
    var = (dev**2).sum(axis=0) / (n - 1)
    m4 = (dev**4).mean(axis=0)
    var_se = np.sqrt(np.maximum(m4 - var**2, 0.0) / n)
    return PredictiveMoments(mean, var, np.sqrt(var / n), var_se, n, where)


def _test_error_iv(predictions, y, loss) -> tuple[np.ndarray, Loss]:
    if not isinstance(predictions, BootstrapPredictions):
        raise TypeError("`predictions` must be a BootstrapPredictions (from "
                        f"bootstrap_predictions), got {type(predictions).__name__}.")
    n = predictions.train.shape[1]
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"`y` must have shape ({n},), one target per training input of "
                         f"`predictions`, got shape {y.shape}.")
    _finite(y, "y", "Remove or impute missing targets.")
    g = get_loss(loss)
    probe = np.asarray(g(predictions.train[:1], y[None, :]))
    if probe.shape != (1, n):
        raise ValueError(f"`loss` must return an array of the broadcast shape of (f, y), got "
                         f"shape {probe.shape} for inputs of shape (1, {n}). Vectorise g(f, y).")
    return y, g


def _moments_iv(predictions, where) -> np.ndarray:
    if not isinstance(predictions, BootstrapPredictions):
        raise TypeError("`predictions` must be a BootstrapPredictions (from "
                        f"bootstrap_predictions), got {type(predictions).__name__}.")
    if where not in ("test", "train"):
        raise ValueError(f"`where` must be 'test' or 'train', got {where!r}.")
    if where == "test" and predictions.test is None:
        raise ValueError("`predictions` has no test predictions (where='test'). Pass `K_test` to "
                         "bootstrap_predictions, or use where='train'.")
    if predictions.n_samples < 2:
        raise ValueError(f"Bootstrap moments need at least 2 samples, got {predictions.n_samples}. "
                         "Increase `n_samples`.")
    return predictions.test if where == "test" else predictions.train
