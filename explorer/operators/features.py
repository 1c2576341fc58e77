r"""The feature implementation of :class:`~explorer.operators.KernelOperator`: K = ΦΦᵀ with Φ (N × m) in memory.

With D = diag Δλ and the m×m matrix

    A = I_m + Φᵀ D Φ = L Lᵀ,    Ψ = Φ L⁻ᵀ   (shape (N, m)),

the push-through identity (I + ΦΦᵀD)⁻¹Φ = Φ A⁻¹ gives G = (K⁻¹ + D)⁻¹ = K (I + DK)⁻¹ = Φ A⁻¹ Φᵀ = ΨΨᵀ
([MO03] eq. 36), so

* diag G = row sums of Ψ∘Ψ (eq. 54 needs nothing else),
* m = G γ = Ψ(Ψᵀγ) (eq. 34),
* [(G∘G) v]_i = Σ_j G_ij² v_j = (G diag(v) G)_ii = row sums of (Ψ (Ψᵀ diag(v) Ψ)) ∘ Ψ (eq. 57, solved by
  conjugate gradients on its negative, which is positive definite),
* Tᵀk(x) = (I + K D)⁻¹ Φ φ(x) = Φ A⁻¹ φ(x) = Ψ L⁻¹ φ(x) (eq. 48).

A is at least the identity, so it is always positive definite and its Cholesky factor needs no jitter. Each
evaluation of diag G costs one product ΦᵀDΦ and one triangular solve, 2 N m² flops; each product with G∘G costs
4 N m². The start value of Appendix A.2 is exact and cheap: the eigenvalues ω of ΦΦᵀ are those of the m×m matrix
ΦᵀΦ and N − m zeros, which drop out of eq. (61).

Closing: ``"fixed-point"`` — a low-rank kernel has inputs that few or no features reach (‖φ_i‖² ≪ k(x_i, x_i)),
where G_ii → 0, Δλ_c(i) → ∞ and H − G_ii² of eqs. (57), (59) cancels to nothing when formed by subtraction; it is
taken in the form eq. (55) gives it at the fixed point (:func:`explorer.bootstrap.replica.fixed_point_closing`).

Only products, Cholesky factorisations and triangular solves of dense blocks (BLAS 3 and LAPACK) are used.
Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from explorer.operators.cross_covariances import FeatureOutOfBag
from explorer.operators.log_evidence import FeatureEvidence
from explorer.operators.refits import FeatureRefits
from explorer.operators.responses import FeatureResponses
from explorer.progress import NO_HOOKS
from explorer.validation import finite

__all__ = ["NeverJittered", "CG_RTOL", "CG_MAX_ITER", "DENSE_FALLBACK_MAX_N", "SITE_FLOOR", "FeatureKernel", "FeatureSitePosterior",
           "check_feature_matrix", "factor_features", "feature_spectrum", "hadamard_square_product",
           "solve_hadamard_system", "conjugate_gradients"]

#: Relative residual ‖b − (G∘G − diag d) λ‖/‖b‖ at which conjugate gradients stop on eq. (57). The matrix has a
#: condition number of 2-40 on the problems measured (``docs/derivations/low_rank.md``), so λ is then accurate to about 1e-9.
CG_RTOL = 1e-10

#: Most conjugate-gradient steps on eq. (57); a few tens are usual (each costs 4 N m² flops).
CG_MAX_ITER = 1000

#: Largest N at which eq. (57) is solved densely when conjugate gradients fail (G∘G is N×N: 72 MB at N = 3000).
#: Above it a failure raises :class:`~explorer.bootstrap.replica.ConvergenceError`.
DENSE_FALLBACK_MAX_N = 3000

#: Smallest G_ii, relative to the largest. An input that no feature reaches (‖φ_i‖² underflows to 0, e.g. an outlier
#: 40 standard deviations out with a squared-exponential kernel: diamonds has two) has G_ii = 0 and Δλ_c(i) = ∞ by
#: eq. (54): its predictor is 0 in every sample. The floor keeps that limit finite (Δλ_c ≈ 1e100/max G, Δλ = S/(Nσ²)
#: by eq. 55, cavity mean 0, cavity variance 0 to the accuracy of λ) and changes no other site: it lies 1e80 times
#: below the round-off of any G_ii that a feature does reach.
SITE_FLOOR = 1e-100


def check_feature_matrix(phi) -> np.ndarray:
    """Φ (its ``.phi`` for ``LowRankFeatures``) as a float array of shape (N, m), m ≥ 1, N ≥ 2, finite and not all
    zeros; else a ValueError that says which — the one check of features, whatever computation takes them."""
    phi = np.asarray(getattr(phi, "phi", phi), dtype=float)
    if phi.ndim != 2 or phi.shape[1] < 1:
        raise ValueError(f"`phi` must be a feature matrix of shape (N, m), m >= 1, got shape {phi.shape}. Pass "
                         "LowRankFeatures.phi (explorer.lowrank), one row per training input.")
    if phi.shape[0] < 2:
        raise ValueError(f"Need at least 2 training points, got {phi.shape[0]}.")
    finite(phi, "phi", "Check the kernel hyperparameters and the inputs of the feature map.")
    if not np.any(phi):
        raise ValueError("`phi` is all zeros, so the kernel ΦΦᵀ is 0 and no input is learnt. Check the features.")
    return phi


def factor_features(phi: np.ndarray, dl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, Ψ): the lower Cholesky factor of A = I + Φᵀ diag(Δλ) Φ and Ψ = Φ L⁻ᵀ, so G = ΨΨᵀ; in Φ's dtype.

    A ≥ I is positive definite whatever Δλ > 0, so no jitter is needed.
    """
    w = phi * np.sqrt(dl).astype(phi.dtype)[:, None]
    A = w.T @ w  # Φᵀ D Φ (a symmetric rank-N update)
    del w
    A[np.diag_indices_from(A)] += 1.0
    L = linalg.cholesky(A, lower=True, check_finite=False)
    psi = linalg.solve_triangular(L, phi.T, lower=True, check_finite=False).T
    return L, psi


def _row_squares(a: np.ndarray) -> np.ndarray:
    """Row sums of a∘a in double precision: diag(aaᵀ)."""
    return np.einsum("ij,ij->i", a, a).astype(np.float64)


def _floored_diagonal(psi: np.ndarray) -> np.ndarray:
    """diag G = row sums of Ψ∘Ψ, at least SITE_FLOOR times its largest entry (eq. 36)."""
    G_diag = _row_squares(psi)
    return np.maximum(G_diag, SITE_FLOOR * G_diag.max())


def hadamard_square_product(psi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(G∘G) v with G = ΨΨᵀ: [(G∘G) v]_i = (G diag(v) G)_ii = row sums of (Ψ (Ψᵀ diag(v) Ψ)) ∘ Ψ; 4 N m² flops."""
    return np.einsum("ij,ij->i", psi @ (psi.T @ (v[:, None] * psi)), psi)


def feature_spectrum(phi: np.ndarray) -> np.ndarray:
    """The non-zero eigenvalues ω of ΦΦᵀ: those of the m×m matrix ΦᵀΦ (the other N − m are zero)."""
    return np.clip(linalg.eigvalsh(phi.T @ phi), 0.0, None)


@dataclass(frozen=True)
class FeatureSitePosterior:
    """G = ΨΨᵀ at one Δλ, never formed (see the module docstring)."""

    psi: np.ndarray = field(repr=False)

    def diagonal(self) -> np.ndarray:
        """diag G = row sums of Ψ∘Ψ, floored at :data:`SITE_FLOOR` times the largest."""
        return _floored_diagonal(self.psi)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """G v = Ψ(Ψᵀ v)."""
        return self.psi @ (self.psi.T @ v)

    def solve_hadamard(self, d: np.ndarray, e: np.ndarray, r: np.ndarray, hooks=NO_HOOKS, n_iter: int = 0
                       ) -> tuple[np.ndarray, str]:
        """λ of (G∘G − diag d) λ = r (eq. 57), and "" or why it failed (:func:`solve_hadamard_system`)."""
        psi = self.psi
        return solve_hadamard_system(lambda v: hadamard_square_product(psi, v), lambda: psi @ psi.T, d, e, r, hooks,
                                     n_iter)


def solve_hadamard_system(product, gram, d: np.ndarray, e: np.ndarray, r: np.ndarray, hooks=NO_HOOKS,
                          n_iter: int = 0) -> tuple[np.ndarray, str]:
    """λ of (G∘G − diag d) λ = r (eq. 57) given ``product(v)`` = (G∘G) v, and "" or why it failed.

    Jacobi-preconditioned conjugate gradients on the positive definite diag(d) − G∘G (its diagonal is e), never
    forming G∘G; a dense symmetric solve on ``gram()`` = G (N×N) when they fail and N ≤ DENSE_FALLBACK_MAX_N.
    ``hooks.check`` is polled after every step. Shared by every operator whose G = ΨΨᵀ (features in memory or in
    chunks on a cluster).
    """
    n = r.size
    with np.errstate(divide="ignore"):
        if not (np.all(np.isfinite(d)) and np.all(np.isfinite(np.reciprocal(e))) and np.all(np.isfinite(r))):
            raise FloatingPointError("eq. (57) has a non-finite coefficient")

    def stop(_):
        hooks.check(n_iter, n_iter, "iterations")

    lam, info = conjugate_gradients(product, d, e, r, CG_RTOL, CG_MAX_ITER, stop)
    if info == 0 and np.all(np.isfinite(lam)):
        return lam, ""
    if n <= DENSE_FALLBACK_MAX_N:
        A = gram()
        A *= A
        A[np.diag_indices_from(A)] -= d
        return linalg.solve(A, r, assume_a="sym"), ""
    residual = np.linalg.norm(d * lam - product(lam) + r) / max(np.linalg.norm(r), 1e-300)
    return lam, (f"conjugate gradients on eq. (57) reached a relative residual of {residual:.1e} > {CG_RTOL:.0e} "
                 f"after {CG_MAX_ITER} steps. N = {n} is above {DENSE_FALLBACK_MAX_N}, where no dense fallback "
                 "is tried")


def conjugate_gradients(product, d: np.ndarray, e: np.ndarray, r: np.ndarray, rtol: float, maxiter: int,
                        callback) -> tuple[np.ndarray, int]:
    """(λ, info) of (diag d − G∘G) λ = −r by Jacobi-preconditioned conjugate gradients (preconditioner diag(1/e)).

    The iteration of ``scipy.sparse.linalg.cg(A, -r, M=M, rtol=rtol, atol=0, maxiter=maxiter, callback=callback)``
    with A v = d v − ``product(v)`` and M v = v/e — the same operations in the same order, so the same numbers
    (tests/operators compare them) — with its vectors updated in place, a block of rows at a time: λ, the residual,
    the direction and A times it are the N-vectors alive at once (the preconditioned residual lives only until the
    direction is updated). scipy's keeps six and two temporaries a step; where N is large, with the rows in chunks on
    a cluster, the N-vectors are the memory. ``info`` is 0 when the residual fell below ``rtol``·‖r‖, else
    ``maxiter``.
    """
    res = np.negative(r)
    atol = rtol * float(np.linalg.norm(res))
    if atol == 0:
        return res, 0
    x = np.zeros_like(res)
    p = None
    rho_prev = 1.0
    for iteration in range(maxiter):
        if np.linalg.norm(res) < atol:
            return x, 0
        z = res / e
        rho = np.dot(res, z)
        if iteration > 0:
            p *= rho / rho_prev
            p += z
        else:
            p = z.copy()
        del z
        q = product(p)
        for rows in _row_blocks(q.size):
            np.subtract(d[rows] * p[rows], q[rows], out=q[rows])  # A p = d p − (G∘G) p
        alpha = rho / np.dot(p, q)
        for rows in _row_blocks(q.size):
            x[rows] += alpha * p[rows]
            res[rows] -= alpha * q[rows]
        del q
        rho_prev = rho
        callback(x)
    return x, maxiter


def _row_blocks(n: int, block: int = 65_536):
    """Slices of ``block`` consecutive rows covering n: elementwise steps on them need no temporary of size N."""
    return (slice(start, start + block) for start in range(0, n, block))


class NeverJittered:
    """What a feature operator (in memory or in chunks) answers about jitter: A = I + ΦᵀDΦ ⪰ I needs none."""

    def with_jitter(self, jitter: float):
        """Itself: A = I + ΦᵀDΦ needs no jitter, so a solution on features has ``jitter`` 0."""
        if jitter != 0:
            raise ValueError(f"A feature kernel is never jittered, got jitter {jitter}.")
        return self

    def jittered(self) -> Iterator[tuple[object, float]]:
        """Only itself, with jitter 0."""
        yield self, 0.0


@dataclass(frozen=True)
class FeatureKernel(FeatureRefits, FeatureResponses, FeatureEvidence, FeatureOutOfBag, NeverJittered):
    """K = ΦΦᵀ with the features Φ of the N training inputs held in memory (see the module docstring).

    Attributes
    ----------
    phi : ndarray of shape (N, m)
        Φ, in the precision the operator computes in.
    """

    phi: np.ndarray = field(repr=False)
    closing: str = "fixed-point"
    name: str = "phi"

    @classmethod
    def of(cls, phi) -> FeatureKernel:
        """A :class:`FeatureKernel` of features Φ (an array or ``LowRankFeatures``), validated."""
        return cls(check_feature_matrix(phi))

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.phi.shape[0]

    @property
    def rank(self) -> int:
        """m, the number of features."""
        return self.phi.shape[1]

    def spectrum(self, subset: int | str | None = None, rng=0) -> tuple[np.ndarray, float]:
        """The exact non-zero eigenvalues of ΦΦᵀ and P = 1 (``subset`` is not needed: m×m is cheap)."""
        return feature_spectrum(self.phi), 1.0

    def in_precision(self, dtype) -> FeatureKernel:
        """Φ in ``dtype``."""
        return FeatureKernel(self.phi.astype(dtype))

    def site_variances(self, dl: np.ndarray, keep: dict | None = None) -> np.ndarray:
        """diag G at Δλ (eq. 54): row sums of Ψ∘Ψ; ``keep`` remembers Ψ."""
        _, psi = factor_features(self.phi, dl)
        if keep is not None:
            keep["dl"], keep["psi"] = dl, psi
        return _floored_diagonal(psi)

    def site_posterior(self, dl: np.ndarray, keep: dict | None = None) -> FeatureSitePosterior:
        """G = ΨΨᵀ at Δλ, Ψ reused from ``keep`` if it was remembered at the same Δλ."""
        if keep and np.array_equal(keep.get("dl"), dl):
            return FeatureSitePosterior(keep["psi"])
        return FeatureSitePosterior(factor_features(self.phi, dl)[1])

    def test_moments(self, dl: np.ndarray, gam: np.ndarray, lam: np.ndarray, cross: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (48) with Tᵀk(x) = Ψ u(x), u(x) = L⁻¹φ(x); ``cross`` = φ(x), shape (M, m): O(N m² + M m²).

        E_D[f(x)] = (Ψᵀγ)ᵀ u(x) and Var_D[f(x)] = −u(x)ᵀ (Ψᵀ diag(λ) Ψ) u(x); no N×M matrix is formed.
        """
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        if cross.ndim != 2 or cross.shape[1] != self.rank:
            raise ValueError(f"`phi_test` must have shape (M, {self.rank}), one column per column of phi, got shape "
                             f"{cross.shape}. Pass features.transform(X_test).")
        if not np.all(np.isfinite(cross)):
            raise ValueError("`phi` and `phi_test` must be finite; found NaN or inf.")
        L, psi = factor_features(self.phi, dl)
        u = linalg.solve_triangular(L, cross.T, lower=True, check_finite=False)  # L⁻¹ φ(x), shape (m, M)
        C = psi.T @ (lam[:, None] * psi)  # Ψᵀ diag(λ) Ψ
        mean = (psi.T @ gam) @ u  # eq. (48): γᵀ Tᵀ k(x)
        var = -np.einsum("jk,jk->k", u, C @ u)  # eq. (48): −k(x)ᵀ T diag(λ) Tᵀ k(x)
        return mean, var
