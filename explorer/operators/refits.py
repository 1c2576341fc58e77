r"""What the kernel operators offer for the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo).

A bootstrap sample with occupation numbers s holds s_i copies of training example i ([MO03] eqs. (10)-(11)); s
copies at noise σ² are one point at σ²/s (the product of s equal Gaussian likelihoods, eqs. (10), (50)), so the GP
retrained on it is a weighted GP on the active set a = {i : s_i > 0}. Each implementation solves it its own way:

* :class:`DenseRefits` (K an N×N matrix): f(s) = K[:, a] (K[a, a] + σ² diag(1/s_a))⁻¹ y_a by a Cholesky factor of
  #a ≈ N (1 − e^{−S/N}) points (small active sets stacked, one batched factorisation per size);
* :class:`FeatureRefits` (K = ΦΦᵀ): A_s = I_m + Φᵀ diag(w) Φ, μ_s = A_s⁻¹ Φᵀ(w ∘ y), w = s/σ², f(x; s) = φ(x)ᵀ μ_s,
  an m×m system whatever #a (the push-through identity makes it the same predictor on K = ΦΦᵀ).

Both offer ``refit_predictions`` (the predictors of a batch of samples, each computed by a path that depends on its
own occupations only, so that no number depends on the batch), ``check_refit_cross`` (the test-input operand's own
checks), ``refit_name`` (the operand's name in messages) and ``refit_reduction``, how a learning curve reduces the
samples of one S: ``"stacked"`` (every sample's predictions kept and reduced by ``estimates.efron_error``; bit for bit
the same across chunk sizes; O(N B) memory, fine where K itself is O(N²)) or ``"streamed"`` (a chunk returns the
sums of its left-out losses, O(N) whatever B; see ``montecarlo.bootstrap_learning_curve``). The dense operator also
offers ``duplicated_refits``, the literal refit on duplicated points of [MO03] sec. 5 (for tests and benchmarks).

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg.blas import dsyrk

from explorer.validation import finite

__all__ = ["DenseRefits", "FeatureRefits", "dense_refit_predictions"]

# Samples with at most this many distinct points are solved together: one stacked Cholesky
# (np.linalg.cholesky) per active-set size, which beats a Python loop of LAPACK calls for tiny
# systems (crossover measured at ~20 points); larger ones go one by one through cho_factor.
_STACKED_MAX_ACTIVE = 20

#: Entries of Φ gathered at once for A_s: 2^18 float64 = 2 MB, a block that stays in cache (1,024 rows at m = 256;
#: measured on one core at N = 53,940: 1,024 rows beat 512 and 4,096).
_BLOCK_ENTRIES = 2**18


# ----------------------------------------------------------------------------- dense K

class DenseRefits:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo)."""

    #: A learning curve keeps every sample's predictions (see the module docstring).
    refit_reduction = "stacked"
    #: The operand's name in messages.
    refit_name = "K"

    def refit_flops(self) -> float:
        """Floating-point operations of one refit: a Cholesky factor of the N×N matrix, N³/3."""
        return self.n ** 3 / 3

    def refit_operand(self) -> str:
        """The operand as messages name it: "`K` of shape (N, N)"."""
        return f"`K` of shape {self.K.shape}"

    def check_refit_cross(self, cross) -> np.ndarray | None:
        """k(X_test, X) as a finite float array of shape (M, N), or a ValueError saying what to pass."""
        if cross is None:
            return None
        n = self.K.shape[0]
        cross = np.asarray(cross, dtype=float)
        if cross.ndim != 2 or cross.shape[1] != n:
            raise ValueError(f"`K_test` must have shape (M, {n}) = k(X_test, X) with one column "
                             f"per training input, got shape {cross.shape}.")
        finite(cross, "K_test", "Check the kernel hyperparameters and the test inputs.")
        return cross

    def refit_predictions(self, y: np.ndarray, noise_var: float, occ: np.ndarray, cross: np.ndarray | None,
                          rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Predictors f(s) of the samples ``occ`` (B, N) at the training inputs (B, N) (at ``rows`` only: (B, R))
        and at the test inputs of ``cross`` = k(X_test, X) (B, M), by :func:`dense_refit_predictions`."""
        train = np.empty((occ.shape[0], self.K.shape[0]))
        test = None if cross is None else np.empty((occ.shape[0], cross.shape[0]))
        dense_refit_predictions(self.K, y, noise_var, occ, cross, train, test)
        return (train if rows is None else train[:, rows]), test

    def duplicated_refits(self, y: np.ndarray, noise_var: float, occ: np.ndarray) -> np.ndarray:
        """The literal GP refit on the duplicated data set of each row of ``occ`` ([MO03] sec. 5), shape of ``occ``.

        D holds s_i copies of point i (duplicated rows and columns of K); α' = (K' + σ² I)⁻¹ y' by Cholesky and
        f = K[:, D] α' at all N training inputs. Slow: it factorises a matrix of size Σ_i s_i.
        """
        K = self.K
        out = np.zeros(occ.shape, dtype=float)
        for s, f in zip(occ.reshape(-1, K.shape[0]), out.reshape(-1, K.shape[0])):
            d = np.repeat(np.arange(K.shape[0]), s)      # the duplicated data set D
            if d.size:
                KD = K.take(d, axis=0).take(d, axis=1)
                KD.flat[:: d.size + 1] += noise_var                          # K' + sigma^2 I
                factor = linalg.cho_factor(KD, lower=True, overwrite_a=True)
                f[:] = K.take(d, axis=0).T @ linalg.cho_solve(factor, y[d])  # K[:, D] alpha'
        return out


def dense_refit_predictions(K, y, noise_var, occ, K_test, train_out, test_out) -> None:
    """Fill ``train_out`` (and ``test_out``) with the refits of one batch of occupation vectors, in place.

    Every sample is computed by a path that depends on its own active-set size only, never on
    the other samples of the batch, so that results do not depend on the batch size.
    """
    n_active = np.count_nonzero(occ, axis=1)
    for n in np.unique(n_active):
        rows = np.flatnonzero(n_active == n)
        if n == 0:                                   # no data: the prior mean 0
            F, F_test = 0.0, 0.0
        elif n <= _STACKED_MAX_ACTIVE:
            F, F_test = _predict_stacked(K, y, noise_var, occ[rows], K_test)
        else:
            F, F_test = _predict_one_by_one(K, y, noise_var, occ[rows], K_test)
        train_out[rows] = F
        if test_out is not None:
            test_out[rows] = F_test


def _predict_one_by_one(K, y, noise_var, occ, K_test):
    """Predictions (g, N) and (g, M) of g samples, one Cholesky factorisation each."""
    F = np.empty((occ.shape[0], K.shape[0]))
    F_test = None if K_test is None else np.empty((occ.shape[0], K_test.shape[0]))
    for r, s in enumerate(occ):
        a = np.flatnonzero(s)
        w = np.zeros(K.shape[0])
        w[a] = _active_weights(K, y, noise_var, a, s[a])
        F[r] = K @ w                                 # K[:, a] w_a without gathering K[:, a]
        if K_test is not None:
            F_test[r] = K_test @ w
    return F, F_test


def _active_weights(K, y, noise_var, a, s_a) -> np.ndarray:
    """w = (K[a, a] + sigma^2 diag(1/s_a))^{-1} y_a by Cholesky (sigma^2/s identity, [MO03] sec. 5)."""
    A = K.take(a, axis=0).take(a, axis=1)           # K[a, a]; two takes beat np.ix_ here
    A.flat[:: a.size + 1] += noise_var / s_a
    try:
        factor = linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise _not_psd_error() from exc
    return linalg.cho_solve(factor, y[a], check_finite=False)


def _predict_stacked(K, y, noise_var, occ, K_test):
    """The same for g samples sharing the active-set size n, stacked as (g, n, n) systems."""
    g = occ.shape[0]
    a = np.nonzero(occ)[1].reshape(g, -1)            # active indices, row by row
    s_a = np.take_along_axis(occ, a, axis=1)
    A = K[a[:, :, None], a[:, None, :]]
    A += np.einsum("gi,ij->gij", noise_var / s_a, np.eye(a.shape[1]))
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError as exc:
        raise _not_psd_error() from exc
    w = _cholesky_solve_stacked(L, y[a])
    F_test = None if K_test is None else _accumulate_columns(K_test, a, w)
    return _accumulate_columns(K, a, w), F_test


def _cholesky_solve_stacked(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L L^T x = b for stacked lower factors L (g, n, n) and b (g, n) by substitution."""
    n = b.shape[1]
    z = np.empty_like(b)
    for i in range(n):
        z[:, i] = (b[:, i] - np.sum(L[:, i, :i] * z[:, :i], axis=1)) / L[:, i, i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[:, i] = (z[:, i] - np.sum(L[:, i + 1:, i] * x[:, i + 1:], axis=1)) / L[:, i, i]
    return x


def _accumulate_columns(K: np.ndarray, a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """F[g] = sum_j K[:, a[g, j]] w[g, j] for active sets a (g, n) and weights w (g, n).

    Accumulated column by column, so each row's summation order is fixed whatever g is.
    """
    KT = K.T
    F = KT[a[:, 0]] * w[:, :1]
    for j in range(1, a.shape[1]):
        F += KT[a[:, j]] * w[:, j:j + 1]
    return F


def _not_psd_error() -> ValueError:
    return ValueError("Cholesky factorisation of K[a, a] + sigma^2 diag(1/s_a) failed: `K` is not "
                      "positive semi-definite. Check the kernel, or add jitter to its diagonal.")


# ----------------------------------------------------------------------------- features Φ

class FeatureRefits:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo)."""

    #: A learning curve streams the left-out losses (see the module docstring).
    refit_reduction = "streamed"
    #: The operand's name in messages.
    refit_name = "phi"

    def refit_flops(self) -> float:
        """Floating-point operations of one refit: the m×m matrix Φᵀ diag(s) Φ, N m²."""
        return self.n * self.phi.shape[1] ** 2

    def refit_operand(self) -> str:
        """The operand as messages name it: "`phi` of shape (N, m)"."""
        return f"`phi` of shape {self.phi.shape}"

    def check_refit_cross(self, cross) -> np.ndarray | None:
        """φ(X_test) as a finite C-ordered float array of shape (M, m), or a ValueError saying what to pass."""
        if cross is None:
            return None
        cross = np.ascontiguousarray(cross, dtype=float)
        if cross.ndim != 2 or cross.shape[1] != self.phi.shape[1]:
            raise ValueError(f"`phi_test` must have shape (M, {self.phi.shape[1]}), one feature row per test input as "
                             f"`phi` has, got shape {cross.shape}. Pass LowRankFeatures.transform(X_test).")
        finite(cross, "phi_test", "Check the test inputs of the feature map.")
        return cross

    def refit_predictions(self, y: np.ndarray, noise_var: float, occ: np.ndarray, cross: np.ndarray | None,
                          rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """f = Φ μ_s (and φ(X_test) μ_s) sample by sample: a matrix-vector product each, so that no row depends on
        the number of samples computed with it (a matrix product may sum differently for another number of rows);
        with ``rows``, f at those training inputs only."""
        phi = self.phi
        kept = phi if rows is None else phi[rows]
        train = np.empty((occ.shape[0], kept.shape[0]))
        test = None if cross is None else np.empty((occ.shape[0], cross.shape[0]))
        for r, s in enumerate(occ):
            mu = self.posterior_weights(y, noise_var, s)
            train[r] = kept @ mu
            if test is not None:
                test[r] = cross @ mu
        return train, test

    def posterior_weights(self, y: np.ndarray, noise_var: float, s: np.ndarray) -> np.ndarray:
        """μ_s = A_s⁻¹ Φᵀ(w ∘ y), A_s = I_m + Φ_aᵀ diag(w_a) Φ_a, w = s/σ²: the posterior mean weights of one sample.

        The active rows a = {s_i > 0} are gathered in blocks of 2 MB; A_s accumulates Φ_bᵀ W_b Φ_b by ``dsyrk`` (its
        lower triangle, which the Cholesky factor reads). A_s ⪰ I_m, so the factorisation needs no jitter (the empty
        sample gives μ = 0, the prior mean). O(#a m²) time, O(N + m²) memory beyond Φ. Arguments are not checked.

        Returns
        -------
        ndarray of shape (m,)
            μ_s; the predictor is f(x; s) = φ(x)ᵀ μ_s.
        """
        phi = self.phi
        a = np.flatnonzero(s)
        w = s[a] / noise_var                                        # s copies at σ² = one point at σ²/s (sec. 5)
        A = np.eye(phi.shape[1], order="F")
        rhs = np.zeros(phi.shape[1])
        rows = max(1, _BLOCK_ENTRIES // phi.shape[1])
        for start in range(0, a.size, rows):
            block, w_b = a[start:start + rows], w[start:start + rows]
            P = phi[block]                                          # Φ_b, (b, m)
            rhs += P.T @ (w_b * y[block])                           # Φ_bᵀ (w_b ∘ y_b)
            P *= np.sqrt(w_b)[:, None]
            A = dsyrk(1.0, P.T, beta=1.0, c=A, trans=0, lower=1, overwrite_c=1)  # A_s += Φ_bᵀ W_b Φ_b
        factor = linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
        return linalg.cho_solve(factor, rhs, check_finite=False)
