"""Prediction intervals of the scikit-learn front door, from one replica solution and no refit.

* ``"percentile"``: the bootstrap distribution of the predictor at X — at an input equal to a training input, the
  Poisson mixture of Gaussians of [MO03] eq. (60); elsewhere the Gaussian with the bootstrap mean and variance of
  eq. (48) — and its (1 ∓ confidence)/2 quantiles.
* ``"jackknife+-after-bootstrap"``: MAPIE's J+aB (absolute residuals, mean aggregation, "plus") with the out-of-bag
  means of the theory (:mod:`explorer.bootstrap.out_of_bag`), in blocks of test inputs so that memory stays
  O(N · block).
"""
from __future__ import annotations

import numpy as np
from scipy import special

from explorer.bootstrap import replica
from explorer.bootstrap.distribution import BootstrapDistribution
from explorer.bootstrap.out_of_bag import OutOfBagMeans, conformal_level

__all__ = ["METHODS", "BLOCK_ENTRIES", "check_confidence", "percentile_interval", "jackknife_plus_interval",
           "training_rows"]

#: The ``method``s of ``predict_interval``.
METHODS = ("percentile", "jackknife+-after-bootstrap")

#: Entries of the (block × N) matrix of out-of-bag means built at once (2^22 float64 = 32 MB).
BLOCK_ENTRIES = 2**22


def check_confidence(confidence) -> float:
    """``confidence`` as a float in (0, 1), or scikit-learn's wording of a bad parameter."""
    ok = isinstance(confidence, (int, float, np.floating)) and not isinstance(confidence, bool) \
        and 0 < confidence < 1
    if not ok:
        raise ValueError(f"The 'confidence' parameter of predict_interval must be a float in the range (0, 1). "
                         f"Got {confidence!r} instead.")
    return float(confidence)


def training_rows(X: np.ndarray, X_train: np.ndarray) -> np.ndarray:
    """For each row of X, the index of the first training row equal to it, or −1."""
    first: dict[bytes, int] = {}
    for i, row in enumerate(np.ascontiguousarray(X_train, dtype=float)):
        first.setdefault(row.tobytes(), i)
    return np.array([first.get(row.tobytes(), -1) for row in np.ascontiguousarray(X, dtype=float)], dtype=int)


def percentile_interval(sol: replica.ReplicaSolution, operator, cross: np.ndarray, rows: np.ndarray,
                        distribution: BootstrapDistribution | None, confidence: float
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap percentile bounds at M inputs, on the theory's scale (see the module docstring).

    ``rows`` holds the training row equal to each input (−1 if none); ``distribution`` (eq. 60) is needed only
    if one is not −1.
    """
    moments = replica.bootstrap_moments(sol, operator, cross)  # eq. (48)
    z = special.ndtri((1 + confidence) / 2)
    sd = np.sqrt(np.maximum(moments.var, 0.0))
    low, high = moments.mean - z * sd, moments.mean + z * sd
    at = rows >= 0
    if np.any(at):
        lo, hi = distribution.interval(confidence)  # eq. (60)
        low[at], high[at] = lo[rows[at]], hi[rows[at]]
    return low, high


def jackknife_plus_interval(oob: OutOfBagMeans, cross_of, m: int, confidence: float
                            ) -> tuple[np.ndarray, np.ndarray]:
    """J+aB bounds at M = ``m`` inputs on the theory's scale, ``cross_of(rows)`` giving the cross terms of a block
    of them (k(x, x_i), or φ(x)); O(N · block) memory."""
    conformal_level(confidence, oob.n)
    block = max(1, BLOCK_ENTRIES // oob.n)
    low, high = np.empty(m), np.empty(m)
    for start in range(0, m, block):
        rows = slice(start, min(start + block, m))
        low[rows], high[rows] = oob.jackknife_plus(cross_of(rows), confidence)
    return low, high
