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
``aggregation_method="mean"``. It needs the first moments of the solution only (``ReplicaMeans`` of
:func:`~explorer.bootstrap.replica_means.solve_replica_means`, which stops before eq. (57)).

Cost after the solve, per block of M test inputs: dense, t(x) (O(N² M)) and the order statistics over all N values
(O(N M)). On features, where t_i(x) = ψ_iᵀu(x) and ‖u(x)‖² is the variance of the field at x in the Gaussian part,
Cauchy-Schwarz bounds the shift of each out-of-bag mean, abs(c_i t_i(x)) ≤ b_i ‖u(x)‖ with b_i = abs(c_i)·‖ψ_i‖, so the
order statistic lies near the same order statistic of the residuals and only the training rows whose values can reach
it are computed (:meth:`OutOfBagMeans.jackknife_plus`): the rows whose R_i lie in a band around it, and the
:data:`WIDE_SHARE` of rows with the largest b_i; the others are counted, not computed. The result is the order
statistic of all N values — checked on every test input against the bounds, and computed from all N where a check
fails — at O(C m M) with C the candidates, typically a few per cent of N.

Core module: numpy and scipy only.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from explorer.operators import as_operator, offers, require

if TYPE_CHECKING:
    from explorer.bootstrap.replica import ReplicaMeans, ReplicaSolution

__all__ = ["WIDE_SHARE", "OutOfBagMeans", "out_of_bag_means", "conformal_level", "jackknife_plus_bounds",
           "order_statistic_index"]

#: Share of the training rows with the largest bound b_i on their out-of-bag shift (high-leverage rows) that are
#: always computed by :meth:`OutOfBagMeans.jackknife_plus` on features; the band around the order statistic is then
#: as wide as the largest b_i of the others allows.
WIDE_SHARE = 0.01

#: Margin of the checks of :meth:`OutOfBagMeans.jackknife_plus`, relative to the size of the values compared; far
#: above the round-off of t(x) (m·ε ≈ 1e-12 for m = 4096 features) and far below any gap that matters.
CHECK_RTOL = 1e-9

#: Most groups of similar ‖u(x)‖ a block of test inputs is split into, each with its own band (at least 16 inputs each).
SPREAD_GROUPS = 8


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


def order_statistic_index(confidence: float, n: int) -> int:
    """k, the 0-based index among N sorted values of numpy's "lower" quantile at :func:`conformal_level`."""
    return int(np.floor((n - 1) * conformal_level(confidence, n)))


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
    return _order_statistics(means, residuals, order_statistic_index(confidence, residuals.size))


def _order_statistics(means: np.ndarray, residuals: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """−(k-th smallest of R_i − μ₋ᵢ(x)) and the k-th smallest of μ₋ᵢ(x) + R_i, per row of ``means``."""
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
        """J+aB bounds (:func:`jackknife_plus_bounds`) at a block of M test inputs.

        Dense: from the (M, N) out-of-bag means, O(N M) memory. Features: the same order statistics from the
        candidate rows only (see the module docstring), O(C M) memory; the values are those of the (M, N) matrix up
        to the order in which BLAS sums t(x) over the m features (1e-15 relative).

        Returns
        -------
        low, high : ndarray of shape (M,)
        """
        k = order_statistic_index(confidence, self.n)  # a bad confidence fails before any work
        if not offers(self.covariances, "whitened"):
            return jackknife_plus_bounds(self.at(cross)[1], self.residuals, confidence)
        return self._banded_bounds(self.covariances.whitened(cross), k)

    @cached_property
    def _ranking(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """(R sorted, the other rows sorted by R, their R, the wide rows, B₀ = the largest b_i of the others)."""
        with np.errstate(invalid="ignore", over="ignore"):
            b = np.abs(self.shifts) * self.covariances.site_norms()  # b_i of |c_i t_i(x)| ≤ b_i ‖u(x)‖
        b = np.where(np.isfinite(b), b, np.inf)
        n_wide = int(np.ceil(WIDE_SHARE * self.n))
        by_bound = np.argsort(b, kind="stable")
        narrow, wide = by_bound[:self.n - n_wide], by_bound[self.n - n_wide:]
        bound = float(b[narrow].max()) if narrow.size else 0.0
        narrow = narrow[np.argsort(self.residuals[narrow], kind="stable")]
        return np.sort(self.residuals), narrow, self.residuals[narrow], wide, bound

    def _banded_bounds(self, u: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """low, high from u(x) = L⁻¹φ(x) (m, M): the k-th smallest of μ₋ᵢ(x) + R_i and of R_i − μ₋ᵢ(x), from the
        candidate rows, every test input checked (see the module docstring)."""
        cov, R = self.covariances, self.residuals
        r_all, narrow, r_narrow, wide, bound = self._ranking
        if not np.isfinite(bound) or u.shape[1] == 0:  # no bound on the shifts (every row is a candidate), or no x
            return _order_statistics(self._all_rows(u), R, k)
        mean = u.T @ cov.weighted_sum(self.gam)  # μ(x) = t(x)ᵀγ
        spread = np.sqrt(np.einsum("jk,jk->k", u, u))  # ‖u(x)‖
        low, high = np.empty(mean.size), np.empty(mean.size)
        by_spread = np.argsort(spread, kind="stable")  # a band per group of similar ‖u(x)‖: a far x widens only its own
        for group in np.array_split(by_spread, max(1, min(SPREAD_GROUPS, mean.size // 16))):
            low[group], high[group] = self._band(u[:, group], mean[group], spread[group], k)
        return low, high

    def _band(self, u: np.ndarray, mean: np.ndarray, spread: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_banded_bounds` for one group of test inputs, given μ(x) and ‖u(x)‖."""
        cov, R = self.covariances, self.residuals
        r_all, narrow, r_narrow, wide, bound = self._ranking
        n_wide = wide.size
        # Narrow rows move by at most bound·‖u‖ and at most n_wide rows move further, so both order statistics lie
        # within bound·‖u‖ of the residuals' order statistics k ∓ n_wide (shifted by ±μ); rows whose R is more than
        # twice that below (above) the band are below (above) them whatever their t(x).
        slack = CHECK_RTOL * (float(np.abs(mean).max(initial=0.0)) + float(r_all[-1]) + bound * float(spread.max()))
        half = 2.0 * bound * float(spread.max()) + 2.0 * slack
        first = int(np.searchsorted(r_narrow, r_all[max(k - n_wide, 0)] - half, side="left"))
        last = int(np.searchsorted(r_narrow, r_all[min(k + n_wide, self.n - 1)] + half, side="right"))
        rows = np.concatenate([narrow[first:last], wide])
        j = k - first
        high, low = np.full(mean.size, np.nan), np.full(mean.size, np.nan)
        if 0 <= j < rows.size:
            oob = cov.rows_at(u, rows)  # t_i(x) of the candidates, then μ₋ᵢ(x) as in :meth:`at`
            oob *= self.shifts[rows][None, :]
            oob += mean[:, None]
            values = oob + R[rows]
            values.partition(j, axis=1)
            high = values[:, j].copy()
            np.subtract(R[rows], oob, out=values)
            values.partition(j, axis=1)
            low = -values[:, j]
            reach = bound * spread + slack  # the farthest a counted row can come
            ok = np.ones(mean.size, dtype=bool)
            if first > 0:  # every row counted below is at most the order statistics
                below = r_narrow[first - 1]
                ok &= (high >= mean + below + reach) & (-low >= below - mean + reach)
            if last < r_narrow.size:  # every row counted above is at least them
                above = r_narrow[last]
                ok &= (high <= mean + above - reach) & (-low <= above - mean - reach)
        else:
            ok = np.zeros(mean.size, dtype=bool)
        if not np.all(ok):  # all N values of the test inputs a check refuses (in exact arithmetic, none)
            bad = np.flatnonzero(~ok)
            low[bad], high[bad] = _order_statistics(self._all_rows(u[:, bad], mean[bad]), R, k)
        return low, high

    def _all_rows(self, u: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
        """The (M, N) out-of-bag means μ₋ᵢ(x) from u(x), as :meth:`at` forms them."""
        if mean is None:
            mean = u.T @ self.covariances.weighted_sum(self.gam)
        oob = self.covariances.rows_at(u)
        oob *= self.shifts[None, :]
        oob += mean[:, None]
        return oob


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
        only (Δλ, Δλ_c, γ, γ_c, m), so the means of :func:`~explorer.bootstrap.replica_means.solve_replica_means`, which
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
