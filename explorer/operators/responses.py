r"""What the kernel operators offer for the linear response in the bootstrap weights: the infinitesimal jackknife and
the leave-one-out limit of :mod:`explorer.gp_bootstrap.linear_response` (``docs/linear_response.md``).

The theory expands the GP mean refitted with bootstrap weights around the mean weights W = νI
([MO03] eq. (11): s_i ~ Poisson(ν), ν = S/N). Everything it needs of K is the expansion point

    A = K + τI,  τ = σ²/ν,   B = A⁻¹,   α = By,

and four contractions with B. Each implementation computes them its own way and returns an expansion point
(:class:`DenseExpansionPoint`, :class:`FeatureExpansionPoint`) offering the same methods:

* ``diagonal()`` — B_ii (eq. 8 of the docs: r_i = α_i/B_ii, the leave-one-out residual);
* ``test_response(cross)`` — u(x) = B k_x and the mean k_xᵀα at test inputs (eqs. 3, 5);
* ``second_order_shift(u)`` — c Σ_i u_i(x) α_i (1 − τB_ii), c = σ²/ν² (eq. 7);
* ``left_out_sums(drawn)`` — B_ii and, for each left-out input i in ``drawn``, Σ_j (P_ji)² and
  Σ_j P_ji (1 − τB^{(i)}_jj) with P_ji = R_ji (α_j − R_ji α_i), R_ji = B_ji/B_ii (eqs. 10-13);
* ``error_averages(r, variance, bias, drawn)`` — ε_IJ, ε_IJ2 and ε_∞ (eqs. 9, 14, 15) summed in the
  implementation's order.

Dense K (:class:`DenseResponses`): A by Cholesky, O(N³), B formed as an N×N matrix for eqs. (10)-(13).

Features, K = ΦΦᵀ (:class:`FeatureResponses`): with the m×m matrix C = τI_m + ΦᵀΦ = L Lᵀ, Woodbury's identity gives
B = (I − ΦC⁻¹Φᵀ)/τ, hence β = C⁻¹Φᵀy = Φᵀα, α = (y − Φβ)/τ, the leverages h_i = φ_iᵀC⁻¹φ_i = 1 − τB_ii,
u(x) = ΦC⁻¹φ(x) and k_xᵀα = φ(x)ᵀβ: O(N m²) time and O(N m) memory, never an N×N matrix. Eq. (13) is not
O(N m²): it sums Σ_j (φ_jᵀC⁻¹φ_i)⁴, the row sums of the fourth Hadamard power of a rank-m matrix, whose rank is up to
C(m+3, 4) (1.8·10⁸ at m = 256), so the exact value costs min(O(N²m), O(N m⁴)); it is computed in blocks of b columns
of B, (E_I − ΦC⁻¹Φ_Iᵀ)/τ: O(N² m) time, O(N (m + b)) memory. Above :data:`IJ_EXACT_ROWS` rows the default of
``linear_response_error(..., inputs="auto")`` evaluates it at :data:`IJ_INPUTS` inputs drawn at random.

The two implementations keep the order of their floating-point operations (the results of the two former modules,
bit for bit). Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from explorer.validation import finite, noise_variance, positive_S

__all__ = ["IJ_EXACT_ROWS", "IJ_INPUTS", "DenseResponses", "FeatureResponses", "DenseExpansionPoint",
           "FeatureExpansionPoint", "whole_error_averages", "drawn_error_averages"]

#: Above this many rows, features evaluate eq. (13) at :data:`IJ_INPUTS` inputs drawn at random by default
#: (``inputs="auto"``): its quartic term costs O(N² m) over all inputs (268 s at N = 53,940 and m = 256), O(N m) per
#: input.
IJ_EXACT_ROWS = 4_000

#: Inputs drawn for eq. (13) above :data:`IJ_EXACT_ROWS` rows.
IJ_INPUTS = 2_000

#: Entries of Φ's rows handled at once for the leverages (2^20 float64 = 8 MB).
_ROW_BLOCK_ENTRIES = 2**20

#: Entries of each (N, b) block of B in the infinitesimal-jackknife error (2^21 float64 = 16 MB; three are alive).
_COLUMN_BLOCK_ENTRIES = 2**21

#: Fewest columns of B per block: below ~32 the product Φ (C⁻¹Φ_Iᵀ) is bound by reading Φ, not by arithmetic.
_MIN_COLUMNS = 32


def whole_error_averages(r: np.ndarray, variance: np.ndarray, bias: np.ndarray) -> tuple[float, float, float]:
    """(ε_IJ, ε_IJ2, ε_∞) = means over all N inputs of r² + v, (r − b)² + v and r² (eqs. 14, 15, 9 of the docs)."""
    return (float(np.mean(r**2 + variance)),                                # eq. (14)
            float(np.mean((r - bias) ** 2 + variance)),                     # eq. (15)
            float(np.mean(r**2)))                                           # eq. (9)


def drawn_error_averages(r: np.ndarray, variance: np.ndarray, bias: np.ndarray, drawn: np.ndarray
                         ) -> tuple[float, float, float]:
    """(ε_IJ, ε_IJ2, ε_∞): mean_all(r²) + mean_I(v) and mean_all(r²) + mean_I(b² − 2rb + v) over the ``drawn`` inputs
    I (unbiased estimates of eqs. 14-15; the leave-one-out part, eq. 9, exact)."""
    loo, v, b, r_d = float(np.mean(r**2)), variance[drawn], bias[drawn], r[drawn]
    return loo + float(np.mean(v)), loo + float(np.mean(b**2 - 2 * r_d * b + v)), loo


# --------------------------------------------------------------------------------------------------------------------
# Dense K
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DenseExpansionPoint:
    """The GP at the mean weights W = νI: τ = σ²/ν, c = σ²/ν², K, the Cholesky factor of A = K + τI, α = A⁻¹y."""

    tau: float
    c: float
    K: np.ndarray
    factor: tuple[np.ndarray, bool]
    alpha: np.ndarray

    def inverse(self) -> np.ndarray:
        """B = A⁻¹ of shape (N, N) (its diagonal and columns enter eqs. 7-13)."""
        B = linalg.cho_solve(self.factor, np.eye(self.alpha.size), check_finite=False)
        return 0.5 * (B + B.T)

    def diagonal(self) -> np.ndarray:
        """diag(B) of shape (N,) = column sums of (L⁻¹)² for A = L Lᵀ."""
        L_inv = linalg.solve_triangular(self.factor[0], np.eye(self.alpha.size), lower=True, check_finite=False)
        return np.einsum("ij,ij->j", L_inv, L_inv)

    def test_response(self, cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """u(x) = A⁻¹k_x, shape (M, N), and k_xᵀα, shape (M,), for ``cross`` = k(x, x_i) of shape (M, N)."""
        u = linalg.cho_solve(self.factor, cross.T, check_finite=False).T   # (M, N): u(x) = A⁻¹ k_x
        return u, cross @ self.alpha                                        # eq. (5)

    def second_order_shift(self, u: np.ndarray) -> np.ndarray:
        """c Σ_i u_i α_i (1 − τB_ii), the second-order term of eq. (7)."""
        shrink = 1.0 - self.tau * self.diagonal()                          # 1 − τ B_ii
        return self.c * (u * self.alpha[None, :]) @ shrink

    def left_out_sums(self, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """B_ii (N,) and Σ_j P_ji², Σ_j P_ji (1 − τB^{(i)}_jj) for i in ``drawn``, from B formed (eqs. 10-13)."""
        B = self.inverse()
        diag = np.diag(B).copy()
        alpha = self.alpha
        if drawn.size == alpha.size:                                        # every column (no copy)
            B_cols, diag_cols, alpha_cols = B, diag, alpha
        else:
            B_cols, diag_cols, alpha_cols = B[:, drawn], diag[drawn], alpha[drawn]
        R = B_cols / diag_cols[None, :]                                     # R_ji = B_ji / B_ii (column i)
        a = alpha[:, None] - R * alpha_cols[None, :]                        # α^{(i)}_j, eq. (11); 0 at j = i
        P = R * a                                                           # −d^{(i)}_j / c, eq. (12)
        shrink = 1.0 - self.tau * (diag[:, None] - B_cols * R)              # 1 − τ B^{(i)}_jj, eq. (10)
        return diag, np.einsum("ji,ji->i", P, P), np.einsum("ji,ji->i", P, shrink)

    def error_averages(self, r, variance, bias, drawn) -> tuple[float, float, float]:
        """Eqs. (14), (15), (9): over all N inputs when all are drawn (:func:`whole_error_averages`), else
        :func:`drawn_error_averages`."""
        if drawn.size == r.size:
            return whole_error_averages(r, variance, bias)
        return drawn_error_averages(r, variance, bias, drawn)


class DenseResponses:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the expansion point A = K + τI of the linear
    response in the bootstrap weights, by a Cholesky factorisation (see the module docstring)."""

    #: Eq. (13) over all inputs costs no more than the O(N³) factorisation: ``inputs="auto"`` takes every input.
    default_left_out_inputs = None

    def check_response_inputs(self, y, noise_var, S, cross=None):
        """Validated ``(y, noise_var, S, cross)``: y of shape (N,), σ² > 0, S > 0, ``cross`` = k(x, x_i) of shape
        (M, N) if given; a ValueError saying which is wrong."""
        from explorer.bootstrap.replica import check_replica_inputs  # the dense solvers' messages

        _, y, noise_var, S = check_replica_inputs(self.K, y, noise_var, S)
        if cross is not None:
            cross = np.atleast_2d(np.asarray(cross, dtype=float))
            if cross.ndim != 2 or cross.shape[1] != y.size:
                raise ValueError(f"`K_test` must have shape (M, {y.size}) = k(X_test, X), one column per training "
                                 f"input, got shape {cross.shape}.")
            if not np.all(np.isfinite(cross)):
                raise ValueError("`K_test` contains NaN or inf. Check the kernel hyperparameters and the test inputs.")
        return y, noise_var, S, cross

    def expansion_point(self, y: np.ndarray, tau: float, c: float) -> DenseExpansionPoint:
        """A = K + τI factorised and α = A⁻¹y; a ValueError if K is not positive semi-definite."""
        A = self.K + tau * np.eye(y.size)
        try:
            factor = linalg.cho_factor(A, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError("Cholesky factorisation of K + (σ²/ν) I failed: `K` is not positive semi-definite. "
                             "Check the kernel, or add jitter to its diagonal.") from exc
        alpha = linalg.cho_solve(factor, y, check_finite=False)
        return DenseExpansionPoint(tau, c, self.K, factor, alpha)


# --------------------------------------------------------------------------------------------------------------------
# Features, K = ΦΦᵀ
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FeatureExpansionPoint:
    """The low-rank GP at W = νI: Φ, τ, c, the lower Cholesky factor L of C = τI_m + ΦᵀΦ, β = C⁻¹Φᵀy, α, h."""

    phi: np.ndarray
    tau: float
    c: float
    factor: np.ndarray
    weights: np.ndarray
    alpha: np.ndarray
    leverage: np.ndarray

    def diagonal(self) -> np.ndarray:
        """B_ii = (1 − h_i)/τ, shape (N,)."""
        return (1.0 - self.leverage) / self.tau

    def solve(self, b: np.ndarray) -> np.ndarray:
        """C⁻¹ b by the Cholesky factor."""
        return linalg.cho_solve((self.factor, True), b, check_finite=False)

    def test_response(self, cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """u(x) = B k_x = ΦC⁻¹φ(x), shape (M, N), and k_xᵀα = φ(x)ᵀβ, for ``cross`` = φ(x) of shape (M, m)."""
        u = (self.phi @ self.solve(cross.T)).T                              # (M, N): u(x) = B k_x = Φ C⁻¹ φ(x)
        return u, cross @ self.weights                                      # eq. (5): k_xᵀα = φ(x)ᵀβ

    def second_order_shift(self, u: np.ndarray) -> np.ndarray:
        """c Σ_i u_i α_i h_i (eq. 7, 1 − τB_ii = h_i)."""
        return self.c * (u @ (self.alpha * self.leverage))

    def left_out_sums(self, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """B_ii (N,) and Σ_j P_ji², Σ_j P_ji (1 − τB^{(i)}_jj) for i in ``drawn``, over blocks of columns of B.

        1 − τB^{(i)}_jj = 1 − τB_jj + τB_ji R_ji = h_j + τB_ii R_ji² (eq. 10), so the second sum is
        Σ_j h_j P_ji + τB_ii Σ_j P_ji R_ji².
        """
        diag, n = self.diagonal(), self.alpha.size
        squares, shifts = np.empty(drawn.size), np.empty(drawn.size)
        width = min(n, max(_MIN_COLUMNS, _COLUMN_BLOCK_ENTRIES // n))
        for start in range(0, drawn.size, width):
            block = slice(start, start + width)
            squares[block], shifts[block] = self._left_out_block(diag, drawn[block])
        return diag, squares, shifts

    def _left_out_block(self, diag: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two sums of :meth:`left_out_sums` for the inputs in ``cols``, from the columns B_{:,cols} (N, b)."""
        phi = self.phi
        R = phi @ self.solve(phi[cols].T)                                   # φ_jᵀC⁻¹φ_i = −τB_ji (j ≠ i)
        R *= -1.0 / (self.tau * diag[cols])                                 # R_ji = B_ji / B_ii
        R[cols, np.arange(cols.size)] = 1.0                                 # R_ii = 1
        alpha = self.alpha
        P = alpha[:, None] - R * alpha[cols]                                # α^{(i)}_j, eq. (11); 0 at j = i
        P *= R                                                              # −d^{(i)}_j / c, eq. (12)
        squares = np.einsum("ji,ji->i", P, P)
        R *= R
        return squares, self.leverage @ P + self.tau * diag[cols] * np.einsum("ji,ji->i", P, R)

    def error_averages(self, r, variance, bias, drawn) -> tuple[float, float, float]:
        """Eqs. (14), (15), (9) as :func:`drawn_error_averages` (all inputs drawn or not)."""
        return drawn_error_averages(r, variance, bias, drawn)


class FeatureResponses:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the expansion point A = ΦΦᵀ + τI of the
    linear response in the bootstrap weights, by Woodbury's identity on C = τI_m + ΦᵀΦ (see the module docstring)."""

    @property
    def default_left_out_inputs(self) -> int | None:
        """Inputs at which ``inputs="auto"`` evaluates eq. (13): all (None) up to :data:`IJ_EXACT_ROWS` rows, else
        :data:`IJ_INPUTS`."""
        return None if self.n <= IJ_EXACT_ROWS else IJ_INPUTS

    def check_response_inputs(self, y, noise_var, S, cross=None):
        """Validated ``(y, noise_var, S, cross)``: Φ finite, y of shape (N,) and finite, N ≥ 2, σ² > 0, S > 0, ``cross``
        = φ(x) of shape (M, m) if given; a ValueError saying which is wrong."""
        phi = self.phi
        n = phi.shape[0]
        if n == 0:
            raise ValueError(f"`phi` must be a non-empty feature matrix of shape (N, m), got shape {phi.shape}. "
                             "Pass LowRankFeatures.phi (explorer.lowrank), one row per training input.")
        y = np.asarray(y, dtype=float)
        if y.shape != (n,):
            raise ValueError(f"`y` must have shape ({n},) to match `phi` of shape {phi.shape}, got shape {y.shape}. "
                             "Pass one target per training input.")
        finite(phi, "phi", "Check the kernel hyperparameters and the inputs of the feature map.")
        finite(y, "y", "Remove or impute missing targets.")
        noise_variance(noise_var)
        if cross is not None:
            cross = np.ascontiguousarray(np.atleast_2d(cross), dtype=float)
            if cross.ndim != 2 or cross.shape[1] != phi.shape[1]:
                raise ValueError(f"`phi_test` must have shape (M, {phi.shape[1]}), one feature row per test input "
                                 f"as `phi` has, got shape {cross.shape}. Pass LowRankFeatures.transform(X_test).")
            finite(cross, "phi_test", "Check the test inputs of the feature map.")
        if n < 2:
            raise ValueError(f"Need at least 2 training points, got {n}: leave-one-out needs a point to keep.")
        return y, float(noise_var), positive_S(S), cross

    def expansion_point(self, y: np.ndarray, tau: float, c: float) -> FeatureExpansionPoint:
        """C = τI_m + ΦᵀΦ factorised, β = C⁻¹Φᵀy, α = (y − Φβ)/τ (Woodbury) and the leverages h."""
        phi = np.ascontiguousarray(self.phi)
        with np.errstate(over="ignore"):
            C = phi.T @ phi
        C.flat[:: C.shape[0] + 1] += tau                                    # C = τI_m + ΦᵀΦ ⪰ τI: no jitter needed
        try:
            if not np.all(np.isfinite(C)):
                raise np.linalg.LinAlgError("ΦᵀΦ overflows")
            L = linalg.cholesky(C, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError("Cholesky factorisation of τI + ΦᵀΦ failed: `phi` is too large for double precision "
                             f"next to τ = σ²/ν = {tau:.3g}. Rescale the features or raise σ².") from exc
        beta = linalg.cho_solve((L, True), phi.T @ y, check_finite=False)   # β = C⁻¹Φᵀy = Φᵀα
        alpha = (y - phi @ beta) / tau                                      # eq. (2): α = By by Woodbury
        return FeatureExpansionPoint(phi, tau, c, L, beta, alpha, _leverages(phi, L))


def _leverages(phi: np.ndarray, L: np.ndarray) -> np.ndarray:
    """h_i = ‖L⁻¹φ_i‖² = φ_iᵀC⁻¹φ_i = 1 − τB_ii, shape (N,), in blocks of rows (no second N×m array)."""
    h = np.empty(phi.shape[0])
    rows = max(1, _ROW_BLOCK_ENTRIES // phi.shape[1])
    for start in range(0, phi.shape[0], rows):
        Z = linalg.solve_triangular(L, phi[start:start + rows].T, lower=True, check_finite=False)
        h[start:start + rows] = np.einsum("ij,ij->j", Z, Z)
    return h
