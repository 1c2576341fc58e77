"""Comparison measures between Monte-Carlo bootstrap histograms and the theory ([MO03], Fig. 5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.replica import ReplicaSolution, bin_probabilities, mixture_components

__all__ = ["L1Summary", "PAPER_BIN_WIDTH", "BOSTON_TARGET_SD", "scaled_bin_width", "histogram_edges", "l1_distance", "l1_all_inputs", "sample_mixture", "l1_noise_floor"]

#: Histogram bin width of [MO03], Fig. 5 (Δh = 0.2 in the units of boston's target, medv in $1000).
PAPER_BIN_WIDTH = 0.2
#: Sample standard deviation (divisor n − 1) of boston's target medv over its 506 rows: the scale on which the
#: paper chose Δh = 0.2 (tests/gp_bootstrap/test_l1_bins.py checks it against the shipped table).
BOSTON_TARGET_SD = 9.197104087379818


def scaled_bin_width(y) -> float:
    """The paper's bin width on the scale of the targets ``y``: Δh = 0.2 · sd(y) / sd(boston's medv).

    Boston's own target gives 0.2 exactly (Fig. 5); a target c times boston's gets bins c times as wide, so the
    histogram, the eq. (60) mass per bin and every L1 distance are the same as for boston (the bootstrap
    predictor is linear in y). A constant target (sd 0) keeps 0.2.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Training targets, n >= 2.

    Returns
    -------
    float
        Δh > 0.

    Examples
    --------
    >>> scaled_bin_width(np.array([0.0, 1.0, 2.0])) == 0.2 / BOSTON_TARGET_SD
    True
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size < 2 or not np.all(np.isfinite(y)):
        raise ValueError(f"`y` must be a finite 1-D array of at least 2 targets, got shape {y.shape}. "
                         "It sets the scale of the histogram bins.")
    sd = float(np.std(y, ddof=1))
    return PAPER_BIN_WIDTH * sd / BOSTON_TARGET_SD if sd > 0 else PAPER_BIN_WIDTH


@dataclass(frozen=True)
class L1Summary:
    """Bounded L1 distances ½ Σ_h | ρ₀(h) − ρ(h) | Δh ∈ [0, 1], one per training input, and a summary.

    ``frac_le_0_1`` and ``frac_ge_0_2`` are the fractions of inputs with L1 ≤ 0.1 and L1 ≥ 0.2
    (the paper reports 86.2% and 2% for boston at S = N, maximum 0.3109).
    """

    l1: np.ndarray
    bin_width: float
    n_samples: int

    @property
    def frac_le_0_1(self) -> float:
        return float(np.mean(self.l1 <= 0.1))

    @property
    def frac_ge_0_2(self) -> float:
        return float(np.mean(self.l1 >= 0.2))

    @property
    def max(self) -> float:
        return float(np.max(self.l1))

    def worst(self, k: int = 10) -> np.ndarray:
        """Indices of the k inputs with the largest L1, worst first.

        Parameters
        ----------
        k : int
            How many inputs to return (fewer if there are fewer inputs).

        Returns
        -------
        ndarray of int, shape (min(k, N),)
            Training-input indices, largest L1 first.
        """
        return np.argsort(self.l1)[::-1][:k]

    def as_dict(self) -> dict:
        """The summary for JSON (the per-input distances left out).

        Returns
        -------
        dict
            ``frac_le_0_1``, ``frac_ge_0_2``, ``max``, ``bin_width`` and ``n_samples``.
        """
        return {"frac_le_0_1": self.frac_le_0_1, "frac_ge_0_2": self.frac_ge_0_2, "max": self.max,
                "bin_width": self.bin_width, "n_samples": self.n_samples}


def histogram_edges(samples: np.ndarray, sol: ReplicaSolution, i: int, bin_width: float) -> np.ndarray:
    """Bin edges on the grid bin_width·(ℤ + ½) covering the samples and the theory mass at input i.

    Bins are centred on multiples of the width, so the prior mean 0 (the prediction of an empty
    sample) sits in the middle of a bin, never on an edge.

    Parameters
    ----------
    samples : ndarray of shape (B,)
        Monte-Carlo bootstrap samples of the predictor f_i at training input i.
    sol : ReplicaSolution
        The replica solution whose eq. (60) mixture at input i the bins must also cover (±8 sd of every
        component with mass above 1e-9).
    i : int
        Training-input index.
    bin_width : float
        Δh, the width of the bins.

    Returns
    -------
    ndarray of shape (n_bins + 1,)
        Increasing bin edges, bin_width·(j + ½) for consecutive integers j.
    """
    mix = mixture_components(sol, i, tail_mass=1e-9)
    mu, sd = mix.means, mix.sds
    lo = min(float(np.min(samples)), float(np.min(mu - 8 * sd)))
    hi = max(float(np.max(samples)), float(np.max(mu + 8 * sd)))
    first, last = np.floor(lo / bin_width - 0.5), np.ceil(hi / bin_width + 0.5)
    return bin_width * (np.arange(first, last + 1) + 0.5)


def l1_distance(samples: np.ndarray, sol: ReplicaSolution, i: int, bin_width: float = PAPER_BIN_WIDTH) -> float:
    """L1 between the histogram of bootstrap samples of f_i and the eq. (60) density integrated over the
    same bins (Fig. 5 caption: L1 ≈ (Δh/2) Σ_h abs(ρ₀(h) − ρ(h))).

    Parameters
    ----------
    samples : ndarray of shape (B,)
        Monte-Carlo bootstrap samples of the predictor f_i at training input i.
    sol : ReplicaSolution
        The replica solution at the same S.
    i : int
        Training-input index.
    bin_width : float
        Δh; default 0.2 (``PAPER_BIN_WIDTH``, Fig. 5).

    Returns
    -------
    float
        ½ Σ_bins abs(histogram fraction − theory bin probability), in [0, 1].

    Raises
    ------
    ValueError
        If ``samples`` is not a non-empty finite 1-D array or ``bin_width`` is not positive.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 1 or samples.size == 0 or not np.all(np.isfinite(samples)):
        raise ValueError(f"`samples` must be a non-empty finite 1-D array, got shape {samples.shape}.")
    if not bin_width > 0:
        raise ValueError(f"`bin_width` must be positive, got {bin_width}.")
    edges = histogram_edges(samples, sol, i, bin_width)
    counts, _ = np.histogram(samples, bins=edges)
    return float(0.5 * np.abs(counts / samples.size - bin_probabilities(sol, i, edges)).sum())


def l1_all_inputs(train_samples: np.ndarray, sol: ReplicaSolution, bin_width: float = PAPER_BIN_WIDTH) -> L1Summary:
    """L1 (:func:`l1_distance`) at every training input.

    Parameters
    ----------
    train_samples : ndarray of shape (B, N)
        Monte-Carlo bootstrap samples of the predictor at each of the N training inputs.
    sol : ReplicaSolution
        The replica solution at the same S.
    bin_width : float
        Δh; default 0.2 (``PAPER_BIN_WIDTH``, Fig. 5).

    Returns
    -------
    L1Summary
        The N distances, the bin width and B.

    Raises
    ------
    ValueError
        If ``train_samples`` does not have shape (B, N), or as :func:`l1_distance`.
    """
    train_samples = np.asarray(train_samples, dtype=float)
    if train_samples.ndim != 2 or train_samples.shape[1] != sol.n:
        raise ValueError(f"`train_samples` must have shape (B, {sol.n}), got {train_samples.shape}.")
    l1 = np.array([l1_distance(train_samples[:, i], sol, i, bin_width) for i in range(sol.n)])
    return L1Summary(l1=l1, bin_width=bin_width, n_samples=train_samples.shape[0])


def sample_mixture(sol: ReplicaSolution, n_samples: int, rng=None) -> np.ndarray:
    """Draws from the eq. (60) mixture at every input: k ~ Poisson(S/N), then the k-th Gaussian.

    The k-th component has precision Δλ_c + k/σ², mean (γ_c + y k/σ²)/(Δλ_c + k/σ²) and standard deviation
    √(−λ_c)/(Δλ_c + k/σ²); inputs are drawn independently.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.
    n_samples : int
        Number of draws per input.
    rng : Generator, int or None
        Random source (``np.random.default_rng(rng)``).

    Returns
    -------
    ndarray of shape (n_samples, N)
        Draws of the predictor at each training input.
    """
    rng = np.random.default_rng(rng)
    k = rng.poisson(sol.S / sol.n, size=(n_samples, sol.n))
    prec = sol.dl_c + k / sol.noise_var
    mean = (sol.gam_c + sol.y * k / sol.noise_var) / prec
    return mean + np.sqrt(np.maximum(-sol.lam_c, 0.0)) / prec * rng.standard_normal((n_samples, sol.n))


def l1_noise_floor(sol: ReplicaSolution, n_samples: int, bin_width: float = PAPER_BIN_WIDTH, rng=None) -> L1Summary:
    """L1 of histograms drawn from the theory itself with the same sample count: the part of the
    MC-vs-theory L1 that is pure sampling noise.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.
    n_samples : int
        Draws per input (:func:`sample_mixture`), as many as the Monte-Carlo run had.
    bin_width : float
        Δh; default 0.2 (``PAPER_BIN_WIDTH``, Fig. 5).
    rng : Generator, int or None
        Random source of the draws.

    Returns
    -------
    L1Summary
        L1 of the theory's own draws against the theory at every training input.
    """

    return l1_all_inputs(sample_mixture(sol, n_samples, rng), sol, bin_width)
