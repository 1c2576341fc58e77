"""Comparison measures between Monte-Carlo bootstrap histograms and the theory (seed 000, Fig. 5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.gp_bootstrap.replica import ReplicaSolution, bin_probabilities, mixture_components

__all__ = ["L1Summary", "histogram_edges", "l1_distance", "l1_all_inputs", "sample_mixture", "l1_noise_floor"]

#: Histogram bin width of seed 000, Fig. 5 (Δh = 0.2 in the units of the targets).
PAPER_BIN_WIDTH = 0.2


@dataclass(frozen=True)
class L1Summary:
    """Bounded L1 distances ½ Σ_h |ρ₀(h) − ρ(h)| Δh ∈ [0, 1], one per training input, and a summary.

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
        """Indices of the k inputs with the largest L1, worst first."""
        return np.argsort(self.l1)[::-1][:k]

    def as_dict(self) -> dict:
        return {"frac_le_0_1": self.frac_le_0_1, "frac_ge_0_2": self.frac_ge_0_2, "max": self.max,
                "bin_width": self.bin_width, "n_samples": self.n_samples}


def histogram_edges(samples: np.ndarray, sol: ReplicaSolution, i: int, bin_width: float) -> np.ndarray:
    """Bin edges on the grid bin_width·(ℤ + ½) covering the samples and the theory mass at input i.

    Bins are centred on multiples of the width, so the prior mean 0 (the prediction of an empty
    sample) sits in the middle of a bin, never on an edge.
    """
    mix = mixture_components(sol, i, tail_mass=1e-9)
    mu, sd = mix.means, mix.sds
    lo = min(float(np.min(samples)), float(np.min(mu - 8 * sd)))
    hi = max(float(np.max(samples)), float(np.max(mu + 8 * sd)))
    first, last = np.floor(lo / bin_width - 0.5), np.ceil(hi / bin_width + 0.5)
    return bin_width * (np.arange(first, last + 1) + 0.5)


def l1_distance(samples: np.ndarray, sol: ReplicaSolution, i: int, bin_width: float = PAPER_BIN_WIDTH) -> float:
    """L1 between the histogram of bootstrap samples of f_i and the eq. (60) density integrated over the
    same bins (Fig. 5 caption: L1 ≈ (Δh/2) Σ_h |ρ₀(h) − ρ(h)|)."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 1 or samples.size == 0 or not np.all(np.isfinite(samples)):
        raise ValueError(f"`samples` must be a non-empty finite 1-D array, got shape {samples.shape}.")
    if not bin_width > 0:
        raise ValueError(f"`bin_width` must be positive, got {bin_width}.")
    edges = histogram_edges(samples, sol, i, bin_width)
    counts, _ = np.histogram(samples, bins=edges)
    return float(0.5 * np.abs(counts / samples.size - bin_probabilities(sol, i, edges)).sum())


def l1_all_inputs(train_samples: np.ndarray, sol: ReplicaSolution, bin_width: float = PAPER_BIN_WIDTH) -> L1Summary:
    """L1 at every training input; train_samples has shape (B, N) (MC predictor at each input)."""
    train_samples = np.asarray(train_samples, dtype=float)
    if train_samples.ndim != 2 or train_samples.shape[1] != sol.n:
        raise ValueError(f"`train_samples` must have shape (B, {sol.n}), got {train_samples.shape}.")
    l1 = np.array([l1_distance(train_samples[:, i], sol, i, bin_width) for i in range(sol.n)])
    return L1Summary(l1=l1, bin_width=bin_width, n_samples=train_samples.shape[0])


def sample_mixture(sol: ReplicaSolution, n_samples: int, rng=None) -> np.ndarray:
    """Draws from the eq. (60) mixture at every input: k ~ Poisson(S/N), then the k-th Gaussian.

    Returns ndarray of shape (n_samples, N).
    """
    rng = np.random.default_rng(rng)
    k = rng.poisson(sol.S / sol.n, size=(n_samples, sol.n))
    prec = sol.dl_c + k / sol.noise_var
    mean = (sol.gam_c + sol.y * k / sol.noise_var) / prec
    return mean + np.sqrt(np.maximum(-sol.lam_c, 0.0)) / prec * rng.standard_normal((n_samples, sol.n))


def l1_noise_floor(sol: ReplicaSolution, n_samples: int, bin_width: float = PAPER_BIN_WIDTH, rng=None) -> L1Summary:
    """L1 of histograms drawn from the theory itself with the same sample count: the part of the
    MC-vs-theory L1 that is pure sampling noise."""
    return l1_all_inputs(sample_mixture(sol, n_samples, rng), sol, bin_width)
