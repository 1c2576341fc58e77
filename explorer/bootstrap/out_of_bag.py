r"""Out-of-bag bootstrap means from the replica theory, and jackknife+-after-bootstrap intervals without refits.

Jackknife+-after-bootstrap (J+aB; Kim, Xu & Barber 2020, as MAPIE computes it) needs, for every training input i,
the mean of the predictor over the bootstrap samples that leave i out ("out of bag"), at x_i and at each test
input x. The replica theory gives both from its one solve ([MO03] §4-5; derivation in
``docs/derivations/out_of_bag.md``):

* at x_i, the cavity mean μ₋ᵢ(x_i) = γ_c(i)/Δλ_c(i), the same average Efron's test error eq. (45) is made of;
* at a test input, μ₋ᵢ(x) = μ(x) + c_i t_i(x), with μ(x) = t(x)ᵀγ the bootstrap mean of eq. (48),
  t(x) = Tᵀk(x), T = (I + diag(Δλ) K)⁻¹, and c_i = (μ₋ᵢ(x_i) − m_i)/G_ii, G_ii = 1/(Δλ(i) + Δλ_c(i)) (eq. 54).

The J+aB interval at x with absolute residuals R_i = abs(y_i − μ₋ᵢ(x_i)) and confidence 1 − α is

    [ q̂⁻ of {μ₋ᵢ(x) − R_i},  q̂⁺ of {μ₋ᵢ(x) + R_i} ],

q̂⁺ the ⌈(1 − α)(N + 1)⌉/N quantile of the N values (numpy's ``method="lower"``) and q̂⁻ the same of their negatives,
negated — MAPIE's ``JackknifeAfterBootstrapRegressor`` with ``conformity_score="absolute"``, ``method="plus"``,
``aggregation_method="mean"``. After the solve, each block of M test inputs costs what t(x) costs
(:mod:`explorer.operators.cross_covariances`: O(N² M) dense, O(N m M) on features) plus O(N M) for the quantiles.

Core module: numpy and scipy only.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from explorer.operators import as_operator, require

if TYPE_CHECKING:
    from explorer.bootstrap.replica import ReplicaMeans, ReplicaSolution

__all__ = ["OutOfBagMeans", "out_of_bag_means", "conformal_level", "jackknife_plus_bounds"]


def conformal_level(confidence: float, n: int) -> float:
    """The finite-sample level ⌈confidence·(N + 1)⌉/N of the J+aB quantiles (MAPIE's correction).

    Parameters
    ----------
    confidence : float
        1 − α, in (0, 1).
    n : int
        N, the number of out-of-bag residuals.

    Returns
    -------
    float
        The level, at most 1.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1), or N is too small for it (the level would exceed 1).
    """
    if not (isinstance(confidence, numbers.Real) and not isinstance(confidence, bool) and 0 < confidence < 1):
        raise ValueError(f"`confidence` must be a number in (0, 1), got {confidence!r}. It is the mass inside the "
                         "interval, e.g. 0.9.")
    alpha = 1 - confidence
    level = math.ceil((1 - alpha) * (n + 1)) / n
    if level > 1:
        raise ValueError(f"{n} training rows are too few for a J+aB interval at confidence {confidence}: it needs "
                         f"at least {math.ceil((1 - alpha) * (n + 1))}. Lower `confidence`.")
    return level


def jackknife_plus_bounds(means: np.ndarray, residuals: np.ndarray, confidence: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """J+aB bounds from out-of-bag means at test inputs and the training inputs' out-of-bag absolute residuals.

    Parameters
    ----------
    means : ndarray of shape (M, N)
        μ₋ᵢ(x) at M test inputs (rows) for the N training inputs (columns).
    residuals : ndarray of shape (N,)
        R_i = abs(y_i − μ₋ᵢ(x_i)).
    confidence : float
        1 − α, in (0, 1).

    Returns
    -------
    low, high : ndarray of shape (M,)
        −q̂(−(μ₋ᵢ(x) − R_i)) and q̂(μ₋ᵢ(x) + R_i), q̂ numpy's "lower" quantile at :func:`conformal_level`.
    """
    level = conformal_level(confidence, residuals.size)
    k = int(np.floor((residuals.size - 1) * level))  # numpy's index of the "lower" quantile at ``level``
    values = means + residuals
    values.partition(k, axis=1)  # in place: O(N) per row, no sort and no copy (np.quantile makes both)
    high = values[:, k].copy()
    np.subtract(residuals, means, out=values)
    values.partition(k, axis=1)
    return -values[:, k], high


@dataclass(frozen=True)
class OutOfBagMeans:
    """The out-of-bag means of a replica solution, after one factorisation at its Δλ.

    Attributes
    ----------
    training : ndarray of shape (N,)
        μ₋ᵢ(x_i) = γ_c(i)/Δλ_c(i), the cavity means (the average eq. (45) is made of).
    shifts : ndarray of shape (N,)
        c_i = (μ₋ᵢ(x_i) − m_i)(Δλ(i) + Δλ_c(i)): how far leaving i out moves the mean, per unit of t_i(x).
    residuals : ndarray of shape (N,)
        R_i = abs(y_i − μ₋ᵢ(x_i)), the absolute out-of-bag residuals.
    """

    training: np.ndarray
    shifts: np.ndarray
    residuals: np.ndarray
    gam: np.ndarray = field(repr=False)
    covariances: object = field(repr=False)

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.training.size

    def at(self, cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bootstrap mean μ(x) (eq. 48) and the out-of-bag means μ₋ᵢ(x) at a block of test inputs.

        Parameters
        ----------
        cross : ndarray of shape (M, N), or (M, m) for features
            k(x, x_i), or the features φ(x), of M test inputs (as for eq. (48)).

        Returns
        -------
        mean : ndarray of shape (M,)
            μ(x) = t(x)ᵀγ.
        out_of_bag : ndarray of shape (M, N)
            μ₋ᵢ(x) = μ(x) + c_i t_i(x).
        """
        t = self.covariances.at(cross)
        mean = t @ self.gam
        t *= self.shifts[None, :]
        t += mean[:, None]
        return mean, t

    def jackknife_plus(self, cross: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """J+aB bounds (:func:`jackknife_plus_bounds`) at a block of M test inputs; O(N M) memory.

        Returns
        -------
        low, high : ndarray of shape (M,)
        """
        conformal_level(confidence, self.n)  # a bad confidence fails before any work
        return jackknife_plus_bounds(self.at(cross)[1], self.residuals, confidence)


def out_of_bag_means(sol: ReplicaSolution | ReplicaMeans, K) -> OutOfBagMeans:
    """The out-of-bag means of the replica solution ``sol`` on the kernel ``K`` it was computed with.

    Conditioning a bootstrap sample on s_i = 0 replaces site i's Gaussian term of the ADATAP approximation by the
    exact one, 1 (no copy of x_i, no likelihood): the Gaussian part with site i removed is site i's cavity
    ([MO03] eqs. (54), (58)), whose mean at x_i is γ_c(i)/Δλ_c(i) and whose mean at x moves from eq. (48)'s by
    c_i t_i(x) (``docs/derivations/out_of_bag.md``).

    Parameters
    ----------
    sol : ReplicaSolution or ReplicaMeans
        The replica solution on the training inputs (dense or features). The out-of-bag means need its first moments
        only (Δλ, Δλ_c, γ, γ_c, m), so the means of :func:`~explorer.bootstrap.replica.solve_replica_means`, which
        stops before the variances of eqs. (57), (59), give the same numbers as the full solution.
    K : KernelOperator, LowRankFeatures or ndarray of shape (N, N)
        The kernel the solution was computed with (without its jitter).

    Returns
    -------
    OutOfBagMeans

    Raises
    ------
    ValueError
        If ``K`` does not have one row per training input of ``sol``.
    """
    op = as_operator(K)
    if op.n != sol.n:
        raise ValueError(f"The kernel (`K` or `phi`) must have one row per training input of the solution, "
                         f"{sol.n}, got {op.n}. Pass the kernel or the features the solution was computed with.")
    op = op.with_jitter(sol.jitter)
    covariances = require(op, "cross_covariances", "the out-of-bag means")(sol.dl)
    training = sol.cavity_mean
    shifts = (training - sol.m) * (sol.dl + sol.dl_c)  # (μ₋ᵢ(x_i) − m_i)/G_ii, eq. (54)
    return OutOfBagMeans(training, shifts, np.abs(sol.y - training), np.asarray(sol.gam, dtype=float), covariances)
