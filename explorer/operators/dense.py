r"""The dense implementation of :class:`~explorer.operators.KernelOperator`: the N×N kernel matrix K in memory.

G = (K⁻¹ + D)⁻¹, D = diag Δλ ([MO03] eq. 36), is computed without K⁻¹ through the well-conditioned
B = I + D^½ K D^½ = UᵀU (cf. eq. 63): G = D^(−½)(I − B⁻¹)D^(−½), so diag G = (1 − row sums of U⁻¹∘U⁻¹)/Δλ.
O(N³) per factorisation, O(N²) memory. A K that round-off made slightly indefinite is repaired by the smallest
jitter of :data:`JITTER_LADDER` that lets B be factorised (:meth:`DenseKernel.jittered`).

Closing: ``"literal"`` — H − G_ii² of eqs. (57), (59) is formed by subtraction, as the equations are written (see
:mod:`explorer.bootstrap.replica` for why the feature implementation does otherwise).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from scipy.sparse import linalg as sparse_linalg

from explorer.operators.log_evidence import DenseEvidence
from explorer.operators.out_of_bag import DenseOutOfBag
from explorer.operators.refits import DenseRefits
from explorer.operators.responses import DenseResponses
from explorer.validation import finite

__all__ = ["JITTER_LADDER", "IndefiniteKernelError", "DenseKernel", "DenseSitePosterior", "check_kernel_matrix",
           "factor_B", "G_diag", "G_full", "kernel_spectrum", "solve_negative_definite", "with_jitter",
           "first_jitter", "inverse_diagonal", "weighted_posterior_mean", "positive_definite_solve"]

#: Jitter ladder, in units of the mean diagonal of K, tried when I + D^½ K D^½ cannot be factorised
#: because round-off made K slightly indefinite (a kernel matrix is positive semi-definite in exact
#: arithmetic; the jitter restores that at the smallest level that works and is reported).
JITTER_LADDER = (1e-10, 1e-8, 1e-6)


class IndefiniteKernelError(np.linalg.LinAlgError):
    """K is not positive semi-definite (even after the jitter ladder): it cannot be a kernel matrix."""


def check_kernel_matrix(K) -> np.ndarray:
    """K as a float array: square, at least 2 rows, finite and symmetric (to 1e-10 relative); else a ValueError
    saying which and what to pass — the one check of a kernel matrix, whatever computation takes it."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"`K` must be a square kernel matrix, got shape {K.shape}. Pass k(X, X) of the training "
                         "inputs.")
    if K.shape[0] < 2:
        raise ValueError(f"Need at least 2 training points, got {K.shape[0]}.")
    finite(K, "K", "Check the kernel hyperparameters and the inputs.")
    if not (np.array_equal(K, K.T) or np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.abs(K).max())):
        raise ValueError(f"`K` must be symmetric, got max |K - K^T| = {np.abs(K - K.T).max():.3g}. Pass k(X, X) of "
                         "the training inputs (k(X_test, X) goes to the test inputs' argument).")
    return K


def factor_B(K: np.ndarray, dl: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """Upper Cholesky factor of B = I + D^½ K D^½, D = diag Δλ (cf. eq. 63); B is well conditioned."""
    r = np.sqrt(dl).astype(dtype)
    B = np.multiply(K, r[:, None], dtype=dtype)
    B *= r[None, :]
    B.flat[:: B.shape[0] + 1] += 1
    potrf = linalg.get_lapack_funcs("potrf", (B,))
    # B is symmetric: its transpose is the Fortran-ordered view LAPACK wants, so nothing is copied
    U, info = potrf(B.T, lower=False, overwrite_a=True, clean=True)
    if info != 0:
        raise IndefiniteKernelError(
            f"I + D^½ K D^½ is not positive definite (LAPACK info {info}); K is not a valid kernel matrix."
        )
    return U


def _inverse_factor(K: np.ndarray, dl: np.ndarray, dtype) -> np.ndarray:
    """U⁻¹ for the upper Cholesky factor U of B = I + D^½ K D^½, so B⁻¹ = U⁻¹ U⁻ᵀ (LAPACK trtri)."""
    U = factor_B(K, dl, dtype)
    trtri = linalg.get_lapack_funcs("trtri", (U,))
    U_inv, info = trtri(U, lower=0, unitdiag=0, overwrite_c=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Inverting the Cholesky factor failed (LAPACK info {info}).")
    return U_inv  # upper triangular: potrf(clean=True) zeroed the rest


def G_diag(K: np.ndarray, dl: np.ndarray, dtype: type = np.float64, keep: dict | None = None) -> np.ndarray:
    """diag G, G = (K⁻¹ + D)⁻¹ = D^(−½)(I − B⁻¹)D^(−½) (eq. 63, no K⁻¹ needed); diag B⁻¹ = row sums of U⁻¹².

    In double precision, ``keep`` remembers U⁻¹ so that closing the equations need not refactorise.
    """
    U_inv = _inverse_factor(K, dl, dtype)
    if keep is not None and dtype == np.float64:
        keep["dl"], keep["U_inv"] = dl, U_inv
    return (1.0 - np.einsum("ij,ij->i", U_inv, U_inv).astype(np.float64)) / dl


def G_full(K: np.ndarray, dl: np.ndarray, keep: dict | None = None) -> np.ndarray:
    """G = (K⁻¹ + diag Δλ)⁻¹ (eq. 36) in double precision, via B⁻¹ (U⁻¹ reused from ``keep`` if it matches)."""
    if keep and np.array_equal(keep.get("dl"), dl):
        U_inv = keep["U_inv"]
    else:
        U_inv = _inverse_factor(K, dl, np.float64)
    lauum = linalg.get_lapack_funcs("lauum", (U_inv,))
    Binv, info = lauum(U_inv, lower=0, overwrite_c=0)  # upper triangle of U⁻¹ U⁻ᵀ = B⁻¹
    if info != 0:
        raise np.linalg.LinAlgError(f"Forming B⁻¹ failed (LAPACK info {info}).")
    Binv = np.triu(Binv) + np.triu(Binv, 1).T
    r = 1.0 / np.sqrt(dl)
    G = -Binv * r[:, None] * r[None, :]
    G[np.diag_indices_from(G)] += 1.0 / dl
    return G


def kernel_spectrum(K: np.ndarray, subset: int | str | None, rng) -> tuple[np.ndarray, float]:
    """Eigenvalues ω of K, or of a random N/P subset (Appendix A.2); returns (ω, scale) with scale = P."""
    n = K.shape[0]
    if subset == "auto":
        subset = n // 4 if n >= 400 else None
    if subset is None or subset >= n:
        return np.clip(linalg.eigvalsh(K), 0.0, None), 1.0
    idx = np.random.default_rng(rng).choice(n, size=subset, replace=False)
    return np.clip(linalg.eigvalsh(K[np.ix_(idx, idx)]), 0.0, None), n / subset


def solve_negative_definite(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for the negative definite matrix g − diag(d) of eq. (57).

    Jacobi-preconditioned conjugate gradients on −A (about 20 matrix-vector products instead of an
    O(N³) factorisation); a dense symmetric solve if CG does not reach 1e-12 relative residual.
    """
    inv_diag = 1.0 / np.diag(A)
    n = b.size
    x, info = sparse_linalg.cg(
        sparse_linalg.LinearOperator((n, n), matvec=lambda z: -(A @ z), dtype=float), -b,
        M=sparse_linalg.LinearOperator((n, n), matvec=lambda z: -inv_diag * z, dtype=float),
        rtol=1e-12, atol=0.0, maxiter=10 * n,
    )
    if info != 0 or not np.all(np.isfinite(x)):
        x = linalg.solve(A, b, assume_a="sym")
    return x


@dataclass(frozen=True)
class DenseSitePosterior:
    """G = (K⁻¹ + diag Δλ)⁻¹ formed as an N×N matrix (eq. 36)."""

    G: np.ndarray = field(repr=False)

    def diagonal(self) -> np.ndarray:
        """diag G."""
        return np.diag(self.G).copy()

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """G v."""
        return self.G @ v

    def solve_hadamard(self, d: np.ndarray, e: np.ndarray, r: np.ndarray, hooks=None, n_iter: int = 0
                       ) -> tuple[np.ndarray, str]:
        """λ of (G∘G − diag d) λ = r (eq. 57) with G∘G formed; never fails (a dense solve backs up CG)."""
        g = self.G * self.G
        g[np.diag_indices_from(g)] -= d
        return solve_negative_definite(g, r), ""


@dataclass(frozen=True)
class DenseKernel(DenseRefits, DenseResponses, DenseEvidence, DenseOutOfBag):
    """The kernel matrix K of N training inputs held as an N×N array (see the module docstring).

    Attributes
    ----------
    K : ndarray of shape (N, N)
        The (possibly jittered) kernel matrix.
    dtype : type
        The precision of the factorisations behind :meth:`site_variances` (np.float64 or np.float32).
    jitter : float
        What was added to the diagonal of the matrix the caller gave.
    """

    K: np.ndarray = field(repr=False)
    dtype: type = np.float64
    jitter: float = 0.0
    closing: str = "literal"
    name: str = "K"

    @classmethod
    def of(cls, K) -> DenseKernel:
        """A validated :class:`DenseKernel` of the matrix ``K`` (see :func:`check_kernel_matrix`)."""
        return cls(check_kernel_matrix(K))

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.K.shape[0]

    def dense_matrix(self) -> np.ndarray:
        """K itself (VG and MF of [MO03] §5 need it; the feature implementation does not offer it)."""
        return self.K

    def rank_deficient_features(self, rtol: float | None = None):
        """Features Φ = V_r diag(√ω_r) of K's r eigenvalues above ``rtol``·max ω (default N·machine ε, numpy's
        ``matrix_rank`` rule), so ΦΦᵀ = K to round-off; None if K has full rank (every eigenvalue above it)."""
        from explorer.operators.features import FeatureKernel

        omega, V = linalg.eigh(self.K)
        rtol = self.n * np.finfo(float).eps if rtol is None else rtol
        keep = omega > rtol * omega[-1]
        if keep.all():
            return None
        return FeatureKernel(V[:, keep] * np.sqrt(omega[keep]))

    def spectrum(self, subset: int | str | None = None, rng=0) -> tuple[np.ndarray, float]:
        """Eigenvalues ω of K or of a random subset of N/P of its rows, and P (Appendix A.2)."""
        return kernel_spectrum(self.K, subset, rng)

    def with_jitter(self, jitter: float) -> DenseKernel:
        """K + jitter·I (the matrix a solution was computed with, ``ReplicaSolution.jitter``)."""
        return DenseKernel(self.K + jitter * np.eye(self.n), self.dtype, self.jitter + jitter)

    def jittered(self) -> Iterator[tuple[DenseKernel, float]]:
        """K, then K + jitter·I for each jitter of :data:`JITTER_LADDER` times the mean diagonal of K."""
        scale = float(np.mean(np.diag(self.K)))
        for jitter in (0.0, *(j * scale for j in JITTER_LADDER)):
            yield (self if jitter == 0 else DenseKernel(self.K + jitter * np.eye(self.n), self.dtype, jitter)), jitter

    def in_precision(self, dtype) -> DenseKernel:
        """The same K, factorised in ``dtype``."""
        return DenseKernel(self.K, dtype, self.jitter)

    def site_variances(self, dl: np.ndarray, keep: dict | None = None) -> np.ndarray:
        """diag G at Δλ (eq. 54) by :func:`G_diag`."""
        return G_diag(self.K, dl, self.dtype, keep)

    def site_posterior(self, dl: np.ndarray, keep: dict | None = None) -> DenseSitePosterior:
        """G at Δλ (:func:`G_full`)."""
        return DenseSitePosterior(G_full(self.K, dl, keep))

    def test_moments(self, dl: np.ndarray, gam: np.ndarray, lam: np.ndarray, cross: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (48) with Tᵀk(x) = (I + K D)⁻¹ k = k − K D^½ B⁻¹ D^½ k; ``cross`` = k(x, x_i), shape (M, N)."""
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        if cross.shape[1] != self.n:
            raise ValueError(f"`K_cross` must have {self.n} columns (one per training input), got {cross.shape}.")
        U = factor_B(self.K, dl, np.float64)
        r = np.sqrt(dl)
        t = cross.T - self.K @ (r[:, None] * linalg.cho_solve((U, False), r[:, None] * cross.T))
        return t.T @ gam, -(t**2).T @ lam


def with_jitter(K: np.ndarray, solve):
    """``solve(K + jitter·I, jitter)`` with the smallest jitter of :data:`JITTER_LADDER` (times the mean diagonal of
    K; 0 first) for which ``solve`` raises no :class:`IndefiniteKernelError` (:meth:`DenseKernel.jittered`).

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix.
    solve : callable
        ``solve(K_j, jitter)``: a solver on the jittered matrix K_j; it raises ``IndefiniteKernelError`` when K_j is
        not positive semi-definite enough for it.

    Returns
    -------
    object
        What ``solve`` returned at the first jitter that worked.

    Raises
    ------
    IndefiniteKernelError
        If ``solve`` fails at every jitter of the ladder.
    """
    return first_jitter(DenseKernel(np.asarray(K, dtype=float)), lambda op, jitter: solve(op.K, jitter))


def first_jitter(operator, solve):
    """``solve(op_j, jitter)`` for the first (operator, jitter) of ``operator.jittered()`` that raises no
    :class:`IndefiniteKernelError`; that error, naming the largest jitter tried, if every one does."""
    jitter = 0.0
    for op_j, jitter in operator.jittered():
        try:
            return solve(op_j, jitter)
        except IndefiniteKernelError:
            continue
    raise IndefiniteKernelError(
        f"The kernel matrix is not positive semi-definite, even with a jitter of {jitter:.1e} on its "
        "diagonal. Check the kernel and its hyperparameters.")


def inverse_diagonal(K: np.ndarray, purpose: str) -> tuple[np.ndarray, float]:
    """(diag K⁻¹, jitter) from the inverse of K's Cholesky factor (K⁻¹ itself is never formed): (K⁻¹)_ii = Σ_k
    (L⁻¹)_ki² for K = L Lᵀ, with the smallest jitter of :data:`JITTER_LADDER` (times the mean diagonal) that
    factorises. The mean-field approximation of [MO03] §5 needs it.

    Raises
    ------
    IndefiniteKernelError
        If K does not factorise even with the largest jitter; the message names ``purpose``.
    """
    scale = float(np.mean(np.diag(K)))
    for jitter in (0.0, *(j * scale for j in JITTER_LADDER)):
        try:
            L = linalg.cholesky(K + jitter * np.eye(K.shape[0]), lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
        L_inv, info = linalg.lapack.dtrtri(L, lower=1)
        if info == 0:
            return np.einsum("ki,ki->i", L_inv, L_inv), jitter
    raise IndefiniteKernelError(
        f"The kernel matrix is not positive definite, even with a jitter of {jitter:.1e} on its diagonal; "
        f"{purpose} needs K⁻¹. Check the kernel and its hyperparameters.")


def weighted_posterior_mean(K: np.ndarray, d: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(K⁻¹ + diag d)⁻¹ (d ∘ y) = K D^½ B⁻¹ D^½ y with B = I + D^½ K D^½ = UᵀU (:func:`factor_B`), no K⁻¹."""
    U = factor_B(K, d, np.float64)
    r = np.sqrt(d)
    return K @ (r * linalg.cho_solve((U, False), r * y))


def positive_definite_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A⁻¹ b for a symmetric positive definite A by its Cholesky factor; ``np.linalg.LinAlgError`` if it has none."""
    return linalg.cho_solve(linalg.cho_factor(A, lower=False, check_finite=False), b)
