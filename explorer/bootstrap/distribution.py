"""The bootstrap distribution of the GP predictor at the training inputs, [MO03] eq. (60), as one object.

:func:`bootstrap_distribution` turns a replica solution into a :class:`BootstrapDistribution` (``pdf``, ``cdf``,
``ppf``, ``interval``, ``mean``, ``std`` at all N inputs at once); the scikit-learn estimator, the app and the command
line use it. Core module: numpy and scipy only.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from explorer.bootstrap.averages import mixture_components

if TYPE_CHECKING:  # replica re-exports this module's names, so it is imported for annotations only
    from explorer.bootstrap.replica import ReplicaSolution

__all__ = ["BootstrapDistribution", "bootstrap_distribution", "predictive_density", "bin_probabilities"]

#: Bisection steps of :meth:`BootstrapDistribution.ppf`: each halves the bracket, 80 take any double-precision
#: bracket down to its last bit.
_PPF_STEPS = 80


@dataclass(frozen=True)
class BootstrapDistribution:
    """Bootstrap distribution of the GP predictor at the N training inputs, [MO03] eq. (60).

    At training input i the predictor retrained on a bootstrap sample holding k copies of point i is Gaussian with
    mean (γ_c(i) + y_i k/σ²)/(Δλ_c(i) + k/σ²) and standard deviation √(−λ_c(i))/(Δλ_c(i) + k/σ²); k ~ Poisson(S/N)
    (:func:`explorer.bootstrap.replica.mixture_components`). Every method works on all N inputs at once.

    Attributes
    ----------
    weights : ndarray of shape (k_max + 1,)
        p_k, the Poisson probabilities of k = 0..k_max copies (the dropped tail renormalised away).
    means : ndarray of shape (N, k_max + 1)
        Mean of component k at input i.
    sds : ndarray of shape (N, k_max + 1)
        Standard deviation of component k at input i (0: a point mass, which has no density).
    s_over_n : float
        S/N, the bootstrap size per training input.
    """

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray
    s_over_n: float

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.means.shape[0]

    def pdf(self, f: ArrayLike) -> np.ndarray:
        """Density ρ_i(f) of the bootstrapped predictor at every training input i, eq. (60).

        Parameters
        ----------
        f : array_like broadcastable to shape (..., N)
            Predictor values; the last axis runs over the training inputs (a scalar is used at every input).

        Returns
        -------
        ndarray of shape broadcast(f, (N,))
            ρ_i(f_i).
        """
        z, sds = self._standardised(f)
        density = np.divide(np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi), sds, out=np.zeros_like(z), where=sds > 0)
        return density @ self.weights

    def cdf(self, f: ArrayLike) -> np.ndarray:
        """P(f_i ≤ f) over bootstrap samples at every training input i (eq. 60 integrated).

        Parameters
        ----------
        f : array_like broadcastable to shape (..., N)
            As in :meth:`pdf`.

        Returns
        -------
        ndarray of shape broadcast(f, (N,))
        """
        z, _ = self._standardised(f)
        return special.ndtr(z) @ self.weights

    def ppf(self, q: ArrayLike) -> np.ndarray:
        """The q-quantile of the bootstrapped predictor at every training input (the inverse of :meth:`cdf`).

        The mixture's quantile lies between the smallest and the largest quantile of its components; bisection
        on that bracket, all inputs at once, to the last bit.

        Parameters
        ----------
        q : array_like broadcastable to shape (N,)
            Probabilities in [0, 1].

        Returns
        -------
        ndarray of shape broadcast(q, (N,))
            The quantiles (−inf at q = 0, +inf at q = 1).

        Raises
        ------
        ValueError
            If a probability is outside [0, 1] or NaN.
        """
        q = np.asarray(q, dtype=float)
        if not np.all((q >= 0) & (q <= 1)):
            raise ValueError(f"`q` must be probabilities in [0, 1], got {q.tolist()}.")
        q = np.broadcast_to(q, np.broadcast_shapes(q.shape, (self.n,)))
        inner = np.clip(q, np.finfo(float).tiny, 1 - np.finfo(float).epsneg)[..., None]
        quantiles = self.means + self.sds * special.ndtri(inner)
        lo, hi = quantiles.min(axis=-1), quantiles.max(axis=-1)
        for _ in range(_PPF_STEPS):
            mid = 0.5 * (lo + hi)
            below = self.cdf(mid) < q
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
            if np.all(hi - lo <= 2 * np.spacing(np.maximum(np.abs(lo), np.abs(hi)))):
                break  # every bracket is down to its last bits
        return np.where(q == 0, -np.inf, np.where(q == 1, np.inf, 0.5 * (lo + hi)))

    def interval(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """The bootstrap percentile interval of the predictor at every training input.

        Parameters
        ----------
        confidence : float
            The probability mass inside, in (0, 1).

        Returns
        -------
        low, high : ndarray of shape (N,)
            ``ppf((1 − confidence)/2)`` and ``ppf((1 + confidence)/2)``.

        Raises
        ------
        ValueError
            If ``confidence`` is not in (0, 1).
        """
        if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
            raise ValueError(f"`confidence` must be a number in (0, 1), got {confidence!r}. It is the mass "
                             "inside the interval, e.g. 0.9.")
        return self.ppf((1 - confidence) / 2), self.ppf((1 + confidence) / 2)

    def mean(self) -> np.ndarray:
        """The mixture mean Σ_k p_k μ_ik at every training input, ndarray of shape (N,)."""
        return self.means @ self.weights

    def std(self) -> np.ndarray:
        """The mixture standard deviation at every training input, ndarray of shape (N,)."""
        second = (self.sds**2 + self.means**2) @ self.weights
        return np.sqrt(np.maximum(second - self.mean() ** 2, 0.0))

    def _standardised(self, f) -> tuple[np.ndarray, np.ndarray]:
        """(f − μ_ik)/σ_ik of shape (..., N, k_max + 1) and σ_ik; a point mass (σ_ik = 0) gives +inf at and above
        its mean (its cdf is 1 there) and −inf below."""
        gap = np.asarray(f, dtype=float)[..., None] - self.means
        sds = np.broadcast_to(self.sds, gap.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sds > 0, gap / sds, np.where(gap >= 0, np.inf, -np.inf)), sds


def bootstrap_distribution(sol: ReplicaSolution, tail_mass: float = 1e-6, rows: ArrayLike | None = None
                           ) -> BootstrapDistribution:
    """The eq. (60) mixture of every training input of ``sol`` as one :class:`BootstrapDistribution`.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S (any kernel operator).
    tail_mass : float
        Largest Poisson tail mass P(k > k_max) left out of the mixture (the rest is renormalised).
    rows : array_like of int, optional
        The training inputs to keep (default all N), in this order.

    Returns
    -------
    BootstrapDistribution
        One row per training input kept, in the order of ``rows`` (of the training rows by default).
    """
    parts = [mixture_components(sol, int(i), tail_mass) for i in (range(sol.n) if rows is None else rows)]  # eq. (60)
    return BootstrapDistribution(parts[0].weights, np.stack([p.means for p in parts]),
                                 np.stack([np.broadcast_to(p.sds, p.means.shape) for p in parts]), sol.s_over_n)


def predictive_density(sol: ReplicaSolution, i: int, h: ArrayLike, tail_mass: float = 1e-6) -> np.ndarray:
    """Theory density ρ_i(h) of the bootstrapped predictor at training input i, eq. (60): the
    :meth:`BootstrapDistribution.pdf` of input i alone.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.
    i : int
        The index of the training input.
    h : array_like of any shape
        Predictor values at which to evaluate the density.
    tail_mass : float
        The Poisson tail mass dropped from the mixture.

    Returns
    -------
    ndarray of the shape of ``h``
        ρ_i(h).
    """
    h = np.asarray(h, dtype=float)
    return bootstrap_distribution(sol, tail_mass, rows=[i]).pdf(h[..., None])[..., 0]


def bin_probabilities(sol: ReplicaSolution, i: int, edges: ArrayLike, tail_mass: float = 1e-6) -> np.ndarray:
    """Mass of the eq. (60) mixture in each histogram bin: differences of the :meth:`BootstrapDistribution.cdf` of
    input i at the edges.

    Parameters
    ----------
    sol, i, tail_mass
        As in :func:`predictive_density`.
    edges : array_like of shape (n_bins + 1,)
        Increasing bin edges.

    Returns
    -------
    ndarray of shape (n_bins,)
        The probability of each bin.
    """
    edges = np.asarray(edges, dtype=float)
    return np.diff(bootstrap_distribution(sol, tail_mass, rows=[i]).cdf(edges[:, None])[:, 0])
