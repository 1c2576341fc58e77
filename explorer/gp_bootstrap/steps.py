"""The GP bootstrap one resample at a time, for the "Bootstrap, step by step" page ([MO03], §3 and §5).

A bootstrap sample of N points is N draws with replacement: point i comes s_i times, s_i ~ Poisson(S/N)
(the factorising weight of eq. 11), so about N e^(−S/N) points are left out (s_i = 0). Resample j of seed s at
S/N is the sample the Monte-Carlo of ``explorer learning-curve --seed s --s-over-n S/N`` draws as its sample j
(:func:`resample_occupations`), and its GP mean is the one that Monte-Carlo computes for it
(:func:`~explorer.gp_bootstrap.montecarlo.resample_predictions`): after B resamples, Efron's estimate
(eq. 17, left-out points only) is the command's ε at B samples, number for number.

What the page adds to a resample: Efron's estimate as the resamples accumulate (:func:`running_efron`), the
histogram of one point's predictor f_i over the resamples split by that point's multiplicity k
(:func:`multiplicity_histogram`) and the same split of the theory's Poisson mixture, eq. (60)
(:func:`theory_histogram`).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from explorer.bootstrap import replica
from explorer.bootstrap.estimates import efron_error
from explorer.chunks import SeedLike, root_seed
from explorer.gp_bootstrap.montecarlo import resample_predictions
from explorer.losses import get_loss
from explorer.resampling import occupation_args, sample_occupations
from explorer.validation import s_over_n_value

__all__ = ["Resamples", "RunningEstimate", "resample_occupations", "draw_resamples", "checkpoints",
           "running_efron", "histogram_edges", "multiplicity_histogram", "theory_histogram"]


@dataclass(frozen=True)
class Resamples:
    """Resamples ``start`` .. ``start + B − 1`` of a seed and their GP means.

    Attributes
    ----------
    start : int
        Index j of the first resample.
    occupations : ndarray of int, shape (B, N)
        s_i of each resample, eq. (10).
    train : ndarray of shape (B, N)
        The GP mean f_i of each resample at the training inputs.
    test : ndarray of shape (B, M) or None
        The same at further inputs (e.g. a grid to draw the curve on).
    """

    start: int
    occupations: np.ndarray
    train: np.ndarray
    test: np.ndarray | None = None


@dataclass(frozen=True)
class RunningEstimate:
    """Efron's estimate, eq. (17), and its standard error after the first ``counts[k]`` resamples.

    Attributes
    ----------
    counts, value, se : ndarray of shape (n,)
        Number of resamples B, ε after B resamples (NaN while no point was left out) and its delta-method
        standard error (NaN for B = 1).
    """

    counts: np.ndarray
    value: np.ndarray
    se: np.ndarray


def resample_occupations(n_inputs: int, s_over_n: float, start: int, stop: int, *, rng: SeedLike = None,
                         group: int = 0) -> np.ndarray:
    """Occupation numbers of resamples ``start`` .. ``stop − 1``: those the Monte-Carlo draws for its samples.

    ``explorer learning-curve`` draws sample j at S/N from ``chunks.item_generator(root,
    chunks.s_over_n_group(S/N), j)``, whatever the other values of its ``--s-over-n`` list.

    Parameters
    ----------
    n_inputs : int
        Number N of training points.
    s_over_n : float
        Bootstrap size S/N (positive); S = (S/N)·N as the learning curve computes it.
    start, stop : int
        The resamples' indices, 0 <= start <= stop.
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo (``--seed``).
    group : int
        Index of S/N on the command's grid; it does not change the draws (kept for callers).

    Returns
    -------
    ndarray of int of shape (stop − start, N)

    Raises
    ------
    ValueError
        If N or S/N is invalid or the range is not 0 <= start <= stop.

    Examples
    --------
    >>> resample_occupations(5, 1.0, 0, 2, rng=0).shape
    (2, 5)
    """
    S = s_over_n_value(s_over_n) * n_inputs
    occupation_args(n_inputs, S, 1, "poisson")
    if not 0 <= int(start) <= int(stop):
        raise ValueError(f"Resamples must run from `start` to `stop` with 0 <= start <= stop, got {start} and "
                         f"{stop}.")
    return sample_occupations(int(n_inputs), S, "poisson", root_seed(rng), int(group), int(start), int(stop))


def draw_resamples(K: ArrayLike, y: ArrayLike, noise_var: float, s_over_n: float, start: int, stop: int, *,
                   rng: SeedLike = None, K_test: ArrayLike | None = None, group: int = 0) -> Resamples:
    """Resamples ``start`` .. ``stop − 1`` (:func:`resample_occupations`) and the GP mean fitted to each.

    Parameters
    ----------
    K, y, noise_var, K_test
        As in :func:`~explorer.gp_bootstrap.montecarlo.bootstrap_predictions`.
    s_over_n, start, stop, rng, group
        As in :func:`resample_occupations`.

    Returns
    -------
    Resamples
    """
    occ = resample_occupations(np.shape(y)[0], s_over_n, start, stop, rng=rng, group=group)
    train, test = resample_predictions(K, y, noise_var, occ, K_test=K_test)
    return Resamples(int(start), occ, train, test)


def checkpoints(start: int, stop: int) -> np.ndarray:
    """The numbers of resamples in (start, stop] at which the page records the running estimate: every one up to
    200, every tenth up to 1000, every hundredth up to 10,000 (and so on), and ``stop``."""
    b = np.arange(int(start) + 1, int(stop) + 1)
    step = 10 ** np.maximum(np.floor(np.log10(np.maximum(b, 1))) - 1, 0).astype(np.int64)
    return b[(b <= 200) | (b % step == 0) | (b == stop)]


def running_efron(occupations: ArrayLike, train: ArrayLike, y: ArrayLike, counts: ArrayLike, *,
                  loss: str = "square") -> RunningEstimate:
    """Efron's estimate, eq. (17) (left-out points only), on the first B resamples for each B in ``counts``.

    Each value is :func:`~explorer.bootstrap.estimates.efron_error` of those B resamples: the Monte-Carlo
    learning curve's ε at B samples.

    Parameters
    ----------
    occupations, train : ndarray of shape (n_samples, N)
        Occupation numbers and GP means of the resamples, in order.
    y : ndarray of shape (N,)
        Targets.
    counts : ndarray of int of shape (n,)
        Numbers of resamples, each in 1 .. n_samples.
    loss : str
        A loss of :func:`explorer.losses.get_loss`.

    Returns
    -------
    RunningEstimate
    """
    occ, f = np.asarray(occupations), np.asarray(train, dtype=float)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if counts.size and not (counts.min() >= 1 and counts.max() <= occ.shape[0]):
        raise ValueError(f"`counts` must lie in 1..{occ.shape[0]} (the resamples given), got "
                         f"{counts.min()}..{counts.max()}.")
    g, y = get_loss(loss), np.asarray(y, dtype=float)
    errors = [efron_error(occ[:b], f[:b], y, g) for b in counts]  # eq. (17) on the first b resamples
    return RunningEstimate(counts, np.array([e.value for e in errors]), np.array([e.se for e in errors]))


def histogram_edges(sol: replica.ReplicaSolution, i: int, values: ArrayLike = (), n_bins: int = 40) -> np.ndarray:
    """Bin edges for the predictor at input i: the eq. (60) mixture's range (component means ± 4 sd) widened to
    hold ``values``; ndarray of shape (n_bins + 1,)."""
    mix = replica.mixture_components(sol, i)
    lo, hi = np.min(mix.means - 4 * mix.sds), np.max(mix.means + 4 * mix.sds)
    values = np.asarray(values, dtype=float)
    if values.size:
        lo, hi = min(lo, values.min()), max(hi, values.max())
    pad = 1e-9 * max(hi - lo, 1.0)
    return np.linspace(lo - pad, hi + pad, int(n_bins) + 1)


def multiplicity_histogram(values: ArrayLike, multiplicity: ArrayLike, edges: ArrayLike, k_max: int) -> np.ndarray:
    """Counts of ``values`` per bin, split by the multiplicity k of the point (row k; k >= ``k_max`` in the last).

    Values outside the edges count in the first or last bin, so row k sums to the number of resamples with
    s_i = k.

    Parameters
    ----------
    values : ndarray of shape (B,)
        f_i over the resamples.
    multiplicity : ndarray of int of shape (B,)
        s_i of each resample.
    edges : ndarray of shape (n_bins + 1,)
        Increasing bin edges.
    k_max : int
        Last row (k >= k_max), >= 0.

    Returns
    -------
    ndarray of int of shape (k_max + 1, n_bins)
    """
    edges = np.asarray(edges, dtype=float)
    n_bins = edges.size - 1
    bins = np.clip(np.searchsorted(edges, np.asarray(values, dtype=float), side="right") - 1, 0, n_bins - 1)
    k = np.minimum(np.asarray(multiplicity, dtype=np.int64), int(k_max))
    counts = np.zeros((int(k_max) + 1, n_bins), dtype=np.int64)
    np.add.at(counts, (k, bins), 1)
    return counts


def theory_histogram(sol: replica.ReplicaSolution, i: int, edges: ArrayLike, k_max: int,
                     n_resamples: int = 1) -> np.ndarray:
    """Expected counts per bin of each component k of the eq. (60) mixture at input i after ``n_resamples``:
    B p_k ∫_bin N(h; m_k, sd_k) dh (row k; k >= ``k_max`` summed in the last row); the same split as
    :func:`multiplicity_histogram`.

    Returns
    -------
    ndarray of shape (k_max + 1, n_bins)
    """
    mix = replica.mixture_components(sol, i)
    edges = np.asarray(edges, dtype=float)
    if mix.sds[0] > 0:
        mass = np.diff(stats.norm.cdf(edges[:, None], mix.means, mix.sds), axis=0).T  # (k, n_bins)
    else:  # K ∝ I: point masses
        mass = np.diff((edges[:, None] >= mix.means).astype(float), axis=0).T
    rows = mass * mix.weights[:, None] * n_resamples
    out = np.zeros((int(k_max) + 1, edges.size - 1))
    for k, row in enumerate(rows):
        out[min(k, int(k_max))] += row
    return out
