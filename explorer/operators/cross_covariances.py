r"""What the kernel operators offer for the out-of-bag means of :mod:`explorer.bootstrap.out_of_bag`.

The bootstrap mean at a test input x over the samples that leave training input i out, μ₋ᵢ(x), is the replica
theory's mean (eq. 48) moved by the cavity of site i (``docs/derivations/out_of_bag.md``):

    μ₋ᵢ(x) = μ(x) + c_i t_i(x),    t(x) = Tᵀk(x),    T = (I + diag(Δλ) K)⁻¹   ([MO03] eq. (48)),

where t_i(x) is the covariance of the field at x with the field at x_i in the Gaussian part of the ADATAP
approximation (G = (K⁻¹ + diag Δλ)⁻¹, eq. (36)). What that needs of K is t(x) at a block of test inputs, after one
factorisation at the solution's Δλ: :meth:`DenseOutOfBag.cross_covariances` and
:meth:`FeatureOutOfBag.cross_covariances` return an object whose ``at(cross)`` gives the (M, N) matrix of t_i(x).

* Dense K: B = I + D^½ K D^½ = UᵀU once (O(N³), as eq. (48) does), then t(x) = D^(−½) B⁻¹ D^½ k(x) (Tᵀ =
  (I + K D)⁻¹ = D^(−½) B⁻¹ D^½: (I + K D) D^(−½) = D^(−½) B), two triangular solves, 2 N² M flops per block of M
  inputs and no difference of large numbers.
* Features, K = ΦΦᵀ: A = I + ΦᵀDΦ = LLᵀ once (O(N m²)), then t(x) = Ψ L⁻¹ φ(x) with Ψ = Φ L⁻ᵀ: O(N m M) per block,
  never an N×N matrix. The pieces are offered one by one too (``whitened``: u(x) = L⁻¹φ(x); ``rows_at``: t_i(x) for
  some rows i, O(m) each; ``site_norms``: ‖ψ_i‖; ``weighted_sum``: Ψᵀv), so that the order statistics of the out-of-bag
  means can compute only the rows that can reach them (``|t_i(x)| ≤ ‖ψ_i‖ ‖u(x)‖``).

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

__all__ = ["DenseOutOfBag", "FeatureOutOfBag", "DenseCrossCovariances", "FeatureCrossCovariances"]


@dataclass(frozen=True)
class DenseCrossCovariances:
    """t(x) = Tᵀk(x) = D^(−½) B⁻¹ D^½ k(x) for a dense K, from the Cholesky factor U of B = I + D^½ K D^½ at one Δλ."""

    K: np.ndarray = field(repr=False)
    U: np.ndarray = field(repr=False)
    root_dl: np.ndarray = field(repr=False)

    def at(self, cross: np.ndarray) -> np.ndarray:
        """The (M, N) matrix t_i(x) at the M inputs of ``cross`` = k(x, x_i), shape (M, N)."""
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        if cross.shape[1] != self.K.shape[0]:
            raise ValueError(f"`K_cross` must have {self.K.shape[0]} columns (one per training input), got "
                             f"{cross.shape}.")
        r = self.root_dl
        solved = linalg.cho_solve((self.U, False), r[:, None] * cross.T, check_finite=False)  # B⁻¹ D^½ k(x)
        solved /= r[:, None]
        return solved.T


@dataclass(frozen=True)
class FeatureCrossCovariances:
    """t(x) = Ψ L⁻¹ φ(x) for K = ΦΦᵀ, from the Cholesky factor L of A = I + ΦᵀDΦ and Ψ = Φ L⁻ᵀ at one Δλ."""

    L: np.ndarray = field(repr=False)
    psi: np.ndarray = field(repr=False)

    def at(self, cross: np.ndarray) -> np.ndarray:
        """The (M, N) matrix t_i(x) at the M inputs of ``cross`` = φ(x), shape (M, m)."""
        return self.rows_at(self.whitened(cross))

    def whitened(self, cross: np.ndarray) -> np.ndarray:
        """u(x) = L⁻¹φ(x) at the M inputs of ``cross`` = φ(x) (shape (M, m)), as an (m, M) array.

        t(x) = Ψ u(x), and ‖u(x)‖² = φ(x)ᵀA⁻¹φ(x) is the variance of the field at x in the Gaussian part of the
        approximation (G at x), so that ``|t_i(x)| ≤ ‖ψ_i‖ ‖u(x)‖`` (Cauchy-Schwarz; ‖ψ_i‖² = G_ii).
        """
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        if cross.shape[1] != self.L.shape[0]:
            raise ValueError(f"`phi_test` must have shape (M, {self.L.shape[0]}), one column per column of phi, got "
                             f"shape {cross.shape}. Pass features.transform(X_test).")
        return linalg.solve_triangular(self.L, cross.T, lower=True, check_finite=False)  # L⁻¹ φ(x), shape (m, M)

    def rows_at(self, u: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """t_i(x) = ψ_iᵀu(x) for the training inputs ``rows`` (all if None), shape (M, len(rows)); O(m) each."""
        psi = self.psi if rows is None else self.psi[rows]
        return (psi @ u).T

    def site_norms(self) -> np.ndarray:
        """‖ψ_i‖ = √G_ii (not floored), shape (N,)."""
        return np.sqrt(np.einsum("ij,ij->i", self.psi, self.psi))

    def weighted_sum(self, v: np.ndarray) -> np.ndarray:
        """Ψᵀv, shape (m,): t(x)ᵀv = u(x)ᵀ(Ψᵀv) without the N values of t(x)."""
        return self.psi.T @ v


class DenseOutOfBag:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the cross covariances t(x) of the cavity."""

    def cross_covariances(self, dl: np.ndarray) -> DenseCrossCovariances:
        """t(x) = Tᵀk(x) at Δλ = ``dl``, factorised once for every block of test inputs (O(N³))."""
        from explorer.operators.dense import factor_B

        return DenseCrossCovariances(self.K, factor_B(self.K, dl, np.float64), np.sqrt(dl))


class FeatureOutOfBag:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the cross covariances t(x) of the cavity."""

    def cross_covariances(self, dl: np.ndarray) -> FeatureCrossCovariances:
        """t(x) = Ψ L⁻¹ φ(x) at Δλ = ``dl``, factorised once for every block of test inputs (O(N m²))."""
        from explorer.operators.features import factor_features

        phi = self.phi.astype(np.float64, copy=False)
        return FeatureCrossCovariances(*factor_features(phi, dl))
