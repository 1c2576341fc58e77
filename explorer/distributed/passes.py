"""What a worker computes on one chunk of rows: the pieces of the sums over rows that the low-rank theory needs.

Every function takes the chunk (``(X_c, y_c)``, or Φ_c when the workers hold the features), the feature map
(None when the chunk is Φ_c), and small arguments (m×m matrices, m-vectors) or the chunk's piece of an N-vector. It
returns an m×m matrix or an m-vector (a piece of a sum over rows, added up by the client in chunk order) or the
chunk's rows of an N-vector. The arithmetic is that of :mod:`explorer.operators.features` on the chunk's rows.

With Ψ_c = Φ_c L⁻ᵀ (L the Cholesky factor of A = I + ΦᵀDΦ, G = ΨΨᵀ, [MO03] eq. 36):

* :func:`gram` — Φ_cᵀ diag(Δλ_c) Φ_c (or Φ_cᵀΦ_c), a piece of A;
* :func:`site_diagonal` — rows of Ψ_c∘Ψ_c summed: the chunk's diag G (eq. 54);
* :func:`psi_transpose_times` / :func:`psi_times` — Ψ_cᵀ v_c and Ψ_c z: G v = Ψ(Ψᵀv) (eq. 34);
* :func:`weighted_psi_gram` / :func:`quadratic_rows` — Ψ_cᵀ diag(v_c) Ψ_c and the rows of (Ψ_c M) ∘ Ψ_c: (G∘G) v
  (eq. 57);
* :func:`moment_pieces` — Ψ_cᵀγ_c and Ψ_cᵀ diag(λ_c) Ψ_c for eq. (48);
* :func:`gram_and_moment` / :func:`fit_and_leverage` — Φ_cᵀΦ_c, Φ_cᵀy_c, then Φ_cβ and the leverages, for the
  leave-one-out limit (C = τI + ΦᵀΦ = LLᵀ, :mod:`explorer.operators.responses`).

Runtime module: numpy and scipy only (it runs on the workers).
"""
from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["features", "gram", "site_diagonal", "psi_transpose_times", "psi_times", "weighted_psi_gram",
           "quadratic_rows", "moment_pieces", "value", "rows_of_psi", "gram_and_moment", "fit_and_leverage"]


def value(x):
    """``x`` itself: a task whose result is a small array the client made (recomputable, unlike scattered data)."""
    return x


def features(part, fmap, dtype=np.float64) -> np.ndarray:
    """Φ_c in ``dtype``: the chunk itself when the workers hold Φ, else φ of its rows of X."""
    phi = part if fmap is None else fmap.rows(part[0])
    return phi if phi.dtype == dtype else phi.astype(dtype)


def _psi(part, fmap, L) -> np.ndarray:
    """Ψ_c = Φ_c L⁻ᵀ, in L's dtype (as ``factor_features``)."""
    phi = features(part, fmap, L.dtype)
    return linalg.solve_triangular(L, phi.T, lower=True, check_finite=False).T


def gram(part, fmap, dtype, dl) -> np.ndarray:
    """Φ_cᵀ diag(Δλ_c) Φ_c in ``dtype`` (Φ_cᵀΦ_c for ``dl`` None)."""
    phi = features(part, fmap, dtype)
    if dl is None:
        return phi.T @ phi
    w = phi * np.sqrt(dl).astype(phi.dtype)[:, None]
    return w.T @ w


def site_diagonal(part, fmap, L) -> np.ndarray:
    """The chunk's diag G = row sums of Ψ_c∘Ψ_c, in double precision (not floored: the floor needs the largest)."""
    psi = _psi(part, fmap, L)
    return np.einsum("ij,ij->i", psi, psi).astype(np.float64)


def psi_transpose_times(part, fmap, L, v) -> np.ndarray:
    """Ψ_cᵀ v_c."""
    return _psi(part, fmap, L).T @ v


def psi_times(part, fmap, L, z) -> np.ndarray:
    """Ψ_c z, the chunk's rows of Ψ z."""
    return _psi(part, fmap, L) @ z


def weighted_psi_gram(part, fmap, L, v) -> np.ndarray:
    """Ψ_cᵀ diag(v_c) Ψ_c."""
    psi = _psi(part, fmap, L)
    return psi.T @ (v[:, None] * psi)


def quadratic_rows(part, fmap, L, M) -> np.ndarray:
    """The chunk's rows of (Ψ M) ∘ Ψ summed: [(G∘G) v]_i with M = Ψᵀ diag(v) Ψ."""
    psi = _psi(part, fmap, L)
    return np.einsum("ij,ij->i", psi @ M, psi)


def moment_pieces(part, fmap, L, gam, lam) -> tuple[np.ndarray, np.ndarray]:
    """(Ψ_cᵀγ_c, Ψ_cᵀ diag(λ_c) Ψ_c), the chunk's pieces of eq. (48)."""
    psi = _psi(part, fmap, L)
    return psi.T @ gam, psi.T @ (lam[:, None] * psi)


def rows_of_psi(part, fmap, L) -> np.ndarray:
    """Ψ_c itself (the dense fallback of eq. (57), N ≤ DENSE_FALLBACK_MAX_N only)."""
    return _psi(part, fmap, L)


def gram_and_moment(part, fmap, y) -> tuple[np.ndarray, np.ndarray]:
    """(Φ_cᵀΦ_c, Φ_cᵀy_c): the chunk's pieces of C = τI + ΦᵀΦ and Φᵀy (the linear response's expansion point)."""
    phi = features(part, fmap)
    return phi.T @ phi, phi.T @ y


def fit_and_leverage(part, fmap, L, beta) -> tuple[np.ndarray, np.ndarray]:
    """(Φ_cβ, h_c): the chunk's fitted values and leverages h_i = ‖L⁻¹φ_i‖² = φ_iᵀC⁻¹φ_i."""
    phi = features(part, fmap)
    Z = linalg.solve_triangular(L, phi.T, lower=True, check_finite=False)
    return phi @ beta, np.einsum("ij,ij->j", Z, Z)
