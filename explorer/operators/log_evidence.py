r"""What the kernel operators offer for the log evidence and its gradient (:mod:`explorer.gp_bootstrap.evidence`).

The log evidence of y ~ N(0, K + σ²I), Rasmussen & Williams (2006) eq. (2.30),

    log p(y | X) = −½ yᵀ(K + σ²I)⁻¹y − ½ log det(K + σ²I) − (N/2) log 2π,

is one method, ``log_evidence(y, noise_var)``, of each implementation:

* :class:`DenseEvidence` (K an N×N matrix): a Cholesky factor of K + σ²I with the jitter ladder of
  :mod:`explorer.regression`, and with ∂K/∂θ its gradient ½ tr((ααᵀ − (K + σ²I)⁻¹) ∂(K + σ²I)/∂θ_j), R&W eq. (5.9) —
  the arithmetic of :func:`explorer.regression.log_evidence`, on a K the caller holds;
* :class:`FeatureEvidence` (K = ΦΦᵀ, Φ of shape (N, m)): with A = σ²I_m + ΦᵀΦ = LLᵀ (m×m, never an N×N matrix),
  log det(ΦΦᵀ + σ²I) = (N − m) log σ² + 2 Σ_k log L_kk (matrix determinant lemma) and
  yᵀ(ΦΦᵀ + σ²I)⁻¹y = (yᵀy − ‖L⁻¹Φᵀy‖²)/σ² (Woodbury identity); O(N m²).

For Nyström features of a squared-exponential kernel, Φ = U C⁻ᵀ with U = K_nL and C Cᵀ = W = K_LL + ε I on fixed
landmark inputs (:meth:`FeatureEvidence.nystrom`), the feature implementation also gives the gradient with respect
to θ = (log ℓ, log σ_f², log σ²) (:meth:`FeatureEvidence.nystrom_log_evidence`); with β = A⁻¹Φᵀy and
α = (ΦΦᵀ + σ²I)⁻¹y = (y − Φβ)/σ²:

* ∂ log p/∂θ_j = −Σ (G ∘ ∂U/∂θ_j) / 2 − Σ (H ∘ ∂W/∂θ_j) / 2 for a kernel hyperparameter, with
  G = 2 (Φ A⁻¹ − α βᵀ) C⁻¹ (N×m) and H = C⁻ᵀ (σ² A⁻¹ − I + β βᵀ) C⁻¹ (m×m);
* ∂ log p/∂ log σ_f² = −(m − σ² tr A⁻¹ − βᵀβ) / 2 (K̃ is proportional to σ_f², ε included);
* ∂ log p/∂ log σ² = −(N − m + σ² tr A⁻¹ − σ² αᵀα) / 2.

For the squared exponential ∂U/∂ log ℓ_j = U ∘ (x_ij − x_kj)²/ℓ_j², so every term is one pass over blocks of
:data:`BLOCK_ROWS` rows of Φ: O(N m²) time (three BLAS-3 products of N×m by m×m) and O(N m) memory per evaluation.

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from scipy import linalg

from explorer import regression
from explorer.lowrank import NYSTROM_JITTER

__all__ = ["DenseEvidence", "FeatureEvidence", "BLOCK_ROWS"]

#: Rows of Φ handled at once in the Nyström gradient pass: bounds the N×m temporaries to BLOCK_ROWS×m (16 MB at
#: m = 256).
BLOCK_ROWS = 8192
_LOG_2PI = np.log(2.0 * np.pi)


class DenseEvidence:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the log evidence and its gradient."""

    def log_evidence(self, y: np.ndarray, noise_var: float, dK: np.ndarray | None = None):
        """log p(y | X) of y ~ N(0, K + σ²I), R&W eq. (2.30), and with ``dK`` its gradient, eq. (5.9).

        The steps of :func:`explorer.regression.log_evidence` on the held K: its Cholesky factor with the jitter
        ladder (``regression.JITTER_LADDER``), its finiteness checks, the same value and gradient arithmetic.

        Parameters
        ----------
        y : ndarray of shape (N,)
            Targets (prior mean 0).
        noise_var : float
            σ² (> 0 with ``dK``).
        dK : ndarray of shape (N, N, p), optional
            ∂K/∂θ_j for the kernel's log hyperparameters θ, as ``kernel(X, eval_gradient=True)`` returns it.

        Returns
        -------
        float, or (float, ndarray of shape (p + 1,)) with ``dK``
            The value and the gradient with respect to ``(θ, log σ²)``.

        Raises
        ------
        explorer.regression.CholeskyError, FloatingPointError
            As :func:`explorer.regression.log_evidence`.
        """
        n = len(y)
        A = self.K.copy()
        A[np.diag_indices_from(A)] += noise_var
        L, _ = regression.jittered_cholesky(A)
        alpha = regression.finite_result(linalg.cho_solve((L, True), y, check_finite=False), "vector A⁻¹y")
        log_det_half = np.log(np.diag(L)).sum()  # ½ log|A|
        value = regression.finite_result(float(-0.5 * y @ alpha - log_det_half - 0.5 * y.size * _LOG_2PI),
                                         "log evidence")
        if dK is None:
            return value
        dA = np.concatenate([np.moveaxis(dK, 2, 0), noise_var * np.eye(n)[None]])
        M = np.outer(alpha, alpha) - linalg.cho_solve((L, True), np.eye(y.size), check_finite=False)
        grad = 0.5 * np.tensordot(dA, M, axes=([1, 2], [0, 1]))  # eq. (5.9)
        return value, regression.finite_result(grad, "log-evidence gradient")


class FeatureEvidence:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the log evidence and its gradient."""

    def log_evidence(self, y: np.ndarray, noise_var: float) -> float:
        """log N(y | 0, ΦΦᵀ + σ²I) in O(N m²) by the determinant lemma and the Woodbury identity (module docstring)."""
        return _woodbury(self.phi, y, noise_var)[2]

    @classmethod
    def nystrom(cls, kernel, X: np.ndarray, X_L: np.ndarray):
        """(operator, U, C): Φ = U C⁻ᵀ of the landmark inputs ``X_L``, U = K_nL, C Cᵀ = K_LL + ``NYSTROM_JITTER`` σ_f² I.

        The features of :func:`explorer.lowrank.nystrom_features` for a squared exponential (whose mean diagonal of
        K_LL is σ_f²); U and C are kept for :meth:`nystrom_log_evidence` (a second N×m array rather than a second
        pass of N m kernel values).
        """
        W = kernel(X_L)
        W[np.diag_indices_from(W)] += NYSTROM_JITTER * kernel.params["signal_var"]  # mean diag K_LL = σ_f²
        C = linalg.cholesky(W, lower=True)
        U, phi = np.empty((X.shape[0], X_L.shape[0])), np.empty((X.shape[0], X_L.shape[0]))
        for start in range(0, X.shape[0], BLOCK_ROWS):
            rows = slice(start, start + BLOCK_ROWS)
            U[rows] = kernel(X[rows], X_L)
            phi[rows] = linalg.solve_triangular(C, U[rows].T, lower=True, check_finite=False).T
        return cls(phi), U, C

    def nystrom_log_evidence(self, kernel, X: np.ndarray, X_L: np.ndarray, U: np.ndarray, C: np.ndarray,
                             y: np.ndarray, noise_var: float, eval_gradient: bool = False):
        """log p and, with ``eval_gradient``, its gradient with respect to (full θ of ``kernel``, log σ²) of the
        Nyström GP whose Φ, U and C :meth:`nystrom` built from a squared-exponential ``kernel``, ``X`` and ``X_L``.

        Returns
        -------
        (float, ndarray of shape (p + 1,) or None)
        """
        L, v, value = _woodbury(self.phi, y, noise_var)
        if not eval_gradient:
            return value, None
        return value, _nystrom_gradient(kernel, X, y, noise_var, X_L, U, self.phi, C, L, v)


def _woodbury(phi: np.ndarray, y: np.ndarray, noise_var: float) -> tuple[np.ndarray, np.ndarray, float]:
    """L with LLᵀ = A = σ²I + ΦᵀΦ, v = L⁻¹Φᵀy and log p(y | X) of y ~ N(0, ΦΦᵀ + σ²I)."""
    n, m = phi.shape
    A = phi.T @ phi
    A[np.diag_indices_from(A)] += noise_var
    L = linalg.cholesky(A, lower=True)  # A ≥ σ²I: positive definite for σ² > 0
    v = linalg.solve_triangular(L, phi.T @ y, lower=True)
    log_det = (n - m) * np.log(noise_var) + 2.0 * np.sum(np.log(np.diag(L)))  # determinant lemma
    quad = (y @ y - v @ v) / noise_var  # Woodbury
    return L, v, float(-0.5 * (quad + log_det + n * _LOG_2PI))


def _cross_lengthscale_terms(kernel, X, X_L, U, phi, R, alpha, a) -> np.ndarray:
    """Σ_ik G_ik ∂U_ik/∂ log ℓ_j for each j (shape (d,)), G = 2 (Φ R − α aᵀ), R = A⁻¹C⁻¹, a = C⁻ᵀβ, in row blocks.

    With P = U ∘ G and z = x/ℓ: Σ_ik P_ik (z_ij − z_kj)² = Σ_i z_ij² (P1)_i − 2 Σ_i z_ij (P Z_L)_ij + Σ_k z_kj² (Pᵀ1)_k.
    """
    ell = np.asarray(kernel.params["lengthscale"])
    Z_L, out = X_L / ell, np.zeros(X.shape[1])
    for start in range(0, X.shape[0], BLOCK_ROWS):
        rows = slice(start, start + BLOCK_ROWS)
        P = phi[rows] @ R
        P -= np.outer(alpha[rows], a)
        P *= U[rows]  # P = U ∘ G / 2, in place: one block×m temporary
        Z = X[rows] / ell
        out += (Z * Z).T @ P.sum(axis=1) - 2.0 * np.einsum("ij,ij->j", Z, P @ Z_L) + P.sum(axis=0) @ (Z_L * Z_L)
    return 2.0 * out


def _nystrom_gradient(kernel, X, y, noise_var, X_L, U, phi, C, L, v) -> np.ndarray:
    """∂ log p/∂(log ℓ, log σ_f², log σ²) from the factors of the value (formulas of the module docstring)."""
    n, m = phi.shape
    beta = linalg.solve_triangular(L, v, lower=True, trans="T")  # β = A⁻¹Φᵀy
    alpha = (y - phi @ beta) / noise_var  # α = (ΦΦᵀ + σ²I)⁻¹y
    A_inv = linalg.cho_solve((L, True), np.eye(m))
    C_inv = linalg.solve_triangular(C, np.eye(m), lower=True)
    R, a = A_inv @ C_inv, C_inv.T @ beta  # G = 2 (Φ R − α aᵀ): one m×m matrix, so each row block costs one GEMM
    H = C_inv.T @ (noise_var * A_inv - np.eye(m) + np.outer(beta, beta)) @ C_inv
    d_cross = _cross_lengthscale_terms(kernel, X, X_L, U, phi, R, alpha, a)
    if np.ndim(kernel.params["lengthscale"]) == 0:
        d_cross = d_cross.sum(keepdims=True)  # one ℓ: the sum of the per-column derivatives
    dW = kernel(X_L, eval_gradient=True)[1][..., :-1]  # ∂K_LL/∂ log ℓ_j (ε does not depend on ℓ)
    tr = float(np.sum(A_inv.diagonal()))
    d_f = [d_cross + np.einsum("kl,klj->j", H, dW), [m - noise_var * tr - beta @ beta],  # f = −2 log p + const
           [n - m + noise_var * tr - noise_var * (alpha @ alpha)]]
    return -0.5 * np.concatenate(d_f)
