"""The feature map φ that the workers apply to their chunks of X: what is broadcast once per operator.

A :class:`FeatureMap` holds what turns rows of X into rows of Φ — for Nyström features the m landmark inputs X_L,
the kernel and the lower Cholesky factor C of K_LL + jitter·I (Φ = K_nL C⁻ᵀ, :func:`explorer.lowrank.nystrom_features`),
for random Fourier features the frequencies Ω and the scale — and nothing of size N. :meth:`FeatureMap.rows` computes
Φ's rows in the same blocks and by the same calls as :mod:`explorer.lowrank`, so a chunk's Φ is that of the same rows
in memory.

Runtime module: numpy and scipy (and the core's kernels).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from explorer.kernels import Kernel
from explorer.lowrank import NYSTROM_JITTER, random_fourier_features

__all__ = ["FeatureMap", "nystrom_map", "rff_map"]

#: Rows of Φ computed at once (as explorer.lowrank does): bounds the kernel values alive beside Φ.
_BLOCK = 8192


@dataclass(frozen=True, eq=False)
class FeatureMap:
    """φ(x) of a low-rank model: ``method`` "nystrom" (``landmarks``, ``factor`` C, ``kernel``) or "rff"
    (``frequencies`` Ω, ``scale``)."""

    method: str
    rank: int
    kernel: Kernel | None = field(default=None, repr=False)
    landmarks: np.ndarray | None = field(default=None, repr=False)
    factor: np.ndarray | None = field(default=None, repr=False)
    frequencies: np.ndarray | None = field(default=None, repr=False)
    scale: float = 1.0
    jitter: float = 0.0

    def rows(self, X: np.ndarray) -> np.ndarray:
        """Φ at the rows of ``X``, shape (n, m), float64."""
        X = np.asarray(X, dtype=float)
        if self.method == "rff":
            proj = X @ self.frequencies.T
            return np.sqrt(self.scale / self.frequencies.shape[0]) * np.hstack([np.cos(proj), np.sin(proj)])
        phi = np.empty((X.shape[0], self.rank))
        for start in range(0, X.shape[0], _BLOCK):
            rows = slice(start, start + _BLOCK)
            phi[rows] = linalg.solve_triangular(self.factor, self.kernel(X[rows], self.landmarks).T, lower=True).T
        return phi

    def nbytes(self) -> int:
        """Bytes broadcast to every worker."""
        return int(sum(a.nbytes for a in (self.landmarks, self.factor, self.frequencies) if a is not None))


def nystrom_map(kernel: Kernel, X_L: np.ndarray, jitter: float = NYSTROM_JITTER) -> FeatureMap:
    """The Nyström map of the landmark inputs ``X_L`` (m × d): C Cᵀ = K_LL + jitter·mean(diag K_LL)·I, as
    :func:`explorer.lowrank.nystrom_features` factorises it (the same calls, so the same C)."""
    X_L = np.asarray(X_L, dtype=float)
    K_LL = kernel(X_L)
    added = float(jitter * np.mean(np.diag(K_LL)))
    try:
        C = linalg.cholesky(K_LL + added * np.eye(X_L.shape[0]), lower=True)
    except linalg.LinAlgError as err:
        raise ValueError("The landmarks' kernel matrix K_LL is not positive definite even with the jitter "
                         f"{added:.1e}: is the kernel valid?") from err
    return FeatureMap("nystrom", X_L.shape[0], kernel, X_L.copy(), C, jitter=added)


def rff_map(kernel: Kernel, d: int, rank: int, rng=0) -> FeatureMap:
    """The random-Fourier-feature map of :func:`explorer.lowrank.random_fourier_features` (the same frequencies for
    the same kernel, input dimension, rank and seed: they depend on nothing else)."""
    made = random_fourier_features(kernel, np.zeros((rank, d)), rank, rng=rng)
    return FeatureMap("rff", rank, kernel, frequencies=made._frequencies, scale=made._scale)
