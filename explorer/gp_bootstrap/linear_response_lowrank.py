r"""Linear response (infinitesimal jackknife) and closed-form leave-one-out for the low-rank GP, K = ΦΦᵀ.

The quantities of :mod:`explorer.gp_bootstrap.linear_response` (``docs/linear_response.md``, eqs. 2-15) for the GP
whose prior covariance is ΦΦᵀ, Φ of shape (N, m), without an N×N matrix. With τ = σ²/ν and the m×m matrix
C = τI_m + ΦᵀΦ = L Lᵀ, Woodbury's identity gives B = (K + τI)⁻¹ = (1/τ)(I − Φ C⁻¹ Φᵀ), hence

    β = C⁻¹Φᵀy = Φᵀα,            α = By = (y − Φβ)/τ,                                        (eq. 2)
    h_i = φ_iᵀ C⁻¹ φ_i = 1 − τB_ii,      B_ii = (1 − h_i)/τ,
    u(x) = B k_x = Φ C⁻¹ φ(x),   k_xᵀα = φ(x)ᵀβ,

(B Φ = Φ C⁻¹ because (I − ΦC⁻¹Φᵀ)Φ = ΦC⁻¹(C − ΦᵀΦ) = τΦC⁻¹). One factorisation of C and a pass over Φ: O(N m²)
time and O(N m) memory for :func:`loo_limit_lowrank` and :func:`linear_response_moments_lowrank` (whose
``derivatives`` are an (M, N) array by definition).

:func:`linear_response_error_lowrank` is not O(N m²). Eq. (13) sums over j the squares of
d^{(i)}_j = −c R_ji (α_j − R_ji α_i), with R_ji = −φ_jᵀC⁻¹φ_i / (τB_ii) for j ≠ i: v_i contains
Σ_j (φ_jᵀC⁻¹φ_i)⁴, the row sums of the fourth Hadamard power of a rank-m matrix, whose rank is up to
C(m+3, 4) (1.8·10⁸ at m = 256), not m. So the exact value costs min(O(N²m), O(N m⁴)); this module computes it
exactly in blocks of b columns of B, (E_I − ΦC⁻¹Φ_Iᵀ)/τ: O(N² m) time, O(N (m + b)) memory, never an N×N matrix.

Symbols in code as in the dense module: ``tau`` = τ, ``c`` = σ²/ν², ``alpha`` = α, ``diag`` = B_ii, plus
``weights`` = β and ``leverage`` = h. Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from explorer.gp_bootstrap.linear_response import LeaveOneOutLimit, LinearResponseError, LinearResponseMoments
from explorer.gp_bootstrap.montecarlo import check_features
from explorer.losses import Loss, get_loss
from explorer.validation import positive_S

__all__ = ["loo_limit_lowrank", "linear_response_moments_lowrank", "linear_response_error_lowrank"]

#: Entries of Φ's rows handled at once for the leverages (2^20 float64 = 8 MB).
_ROW_BLOCK_ENTRIES = 2**20

#: Entries of each (N, b) block of B in the infinitesimal-jackknife error (2^21 float64 = 16 MB; three are alive).
_COLUMN_BLOCK_ENTRIES = 2**21

#: Fewest columns of B per block: below ~32 the product Φ (C⁻¹Φ_Iᵀ) is bound by reading Φ, not by arithmetic.
_MIN_COLUMNS = 32


@dataclass(frozen=True)
class _ExpansionPoint:
    """The low-rank GP at the mean weights W = νI: ν, τ, c, the lower Cholesky factor L of C = τI_m + ΦᵀΦ, β, α, h."""

    nu: float
    tau: float
    c: float
    factor: np.ndarray
    weights: np.ndarray
    alpha: np.ndarray
    leverage: np.ndarray

    @property
    def diag(self) -> np.ndarray:
        """B_ii = (1 − h_i)/τ, shape (N,)."""
        return (1.0 - self.leverage) / self.tau

    def solve(self, b: np.ndarray) -> np.ndarray:
        """C⁻¹ b by the Cholesky factor."""
        return linalg.cho_solve((self.factor, True), b, check_finite=False)


def _expansion_point(phi: np.ndarray, y: np.ndarray, noise_var: float, S: float) -> _ExpansionPoint:
    nu = S / y.size
    tau = noise_var / nu
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
    beta = linalg.cho_solve((L, True), phi.T @ y, check_finite=False)    # β = C⁻¹Φᵀy = Φᵀα
    alpha = (y - phi @ beta) / tau                                      # eq. (2): α = By by Woodbury
    return _ExpansionPoint(nu, tau, noise_var / nu**2, L, beta, alpha, _leverages(phi, L))


def _leverages(phi: np.ndarray, L: np.ndarray) -> np.ndarray:
    """h_i = ‖L⁻¹φ_i‖² = φ_iᵀC⁻¹φ_i = 1 − τB_ii, shape (N,), in blocks of rows (no second N×m array)."""
    h = np.empty(phi.shape[0])
    rows = max(1, _ROW_BLOCK_ENTRIES // phi.shape[1])
    for start in range(0, phi.shape[0], rows):
        Z = linalg.solve_triangular(L, phi[start:start + rows].T, lower=True, check_finite=False)
        h[start:start + rows] = np.einsum("ij,ij->j", Z, Z)
    return h


def loo_limit_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S: float, *,
                      loss: str | Loss = "square") -> LeaveOneOutLimit:
    """Closed-form leave-one-out error at noise σ²/ν of the GP with covariance ΦΦᵀ, eqs. (8)-(9) of the docs.

    ``linear_response.loo_limit`` on K = ΦΦᵀ in O(N m²): r_i = α_i/B_ii (eq. 8) with α = (y − Φβ)/τ and
    B_ii = (1 − h_i)/τ (module docstring), i.e. r_i = (y_i − φ_iᵀβ)/(1 − h_i), the leverage form of R&W eq. (5.12).

    Parameters
    ----------
    phi : ndarray of shape (N, m)
        Features Φ of the training inputs, N >= 2.
    y, noise_var, S, loss
        As in :func:`explorer.gp_bootstrap.linear_response.loo_limit`.

    Returns
    -------
    LeaveOneOutLimit
        As in :func:`~explorer.gp_bootstrap.linear_response.loo_limit`: ε_∞, the residuals r and the leave-one-out
        variances 1/B_ii.

    Raises
    ------
    ValueError
        If a shape or value is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.random.default_rng(0).normal(size=(40, 6))
    >>> out = loo_limit_lowrank(phi, phi[:, 0] + 0.1, 0.01, S=80.0)
    >>> out.residuals.shape, out.s_over_n
    ((40,), 2.0)
    """
    phi, y, noise_var, S, _ = _lowrank_iv(phi, y, noise_var, S)
    g = get_loss(loss)
    point = _expansion_point(phi, y, noise_var, S)
    diag = point.diag
    r = point.alpha / diag                                              # eq. (8): r_i = α_i / B_ii
    value = np.mean(r**2) if loss == "square" else np.mean(g(y - r, y))  # eq. (9); eq. (46) at μ_i
    return LeaveOneOutLimit(float(value), r, 1.0 / diag, point.nu)


def linear_response_moments_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S: float,
                                    phi_test: ArrayLike) -> LinearResponseMoments:
    """First-order infinitesimal-jackknife mean and variance of the low-rank GP mean at test inputs, eqs. (3)-(7).

    ``linear_response.linear_response_moments`` on K = ΦΦᵀ, K_test = phi_test Φᵀ, with u(x) = ΦC⁻¹φ(x) and
    k_xᵀα = φ(x)ᵀβ (module docstring): O(N m²) for the factorisation and O(M N m) for the M rows of
    ``derivatives``.

    Parameters
    ----------
    phi, y, noise_var, S
        As in :func:`loo_limit_lowrank`.
    phi_test : ndarray of shape (M, m)
        Features φ(x) of the M test inputs.

    Returns
    -------
    LinearResponseMoments
        As in :func:`~explorer.gp_bootstrap.linear_response.linear_response_moments`.

    Raises
    ------
    ValueError
        As in :func:`loo_limit_lowrank`, or if ``phi_test`` has the wrong shape.
    """
    phi, y, noise_var, S, phi_test = _lowrank_iv(phi, y, noise_var, S, np.atleast_2d(phi_test))
    point = _expansion_point(phi, y, noise_var, S)
    u = (phi @ point.solve(phi_test.T)).T                               # (M, N): u(x) = B k_x = Φ C⁻¹ φ(x)
    d = point.c * u * point.alpha[None, :]                              # eq. (3)
    mean = phi_test @ point.weights                                     # eq. (5): k_xᵀα = φ(x)ᵀβ
    var = point.nu * np.einsum("mi,mi->m", d, d)                        # eq. (6)
    mean2 = mean - point.c * (u @ (point.alpha * point.leverage))       # eq. (7), 1 − τB_ii = h_i
    return LinearResponseMoments(mean, var, mean2, d, point.nu)


def linear_response_error_lowrank(phi: ArrayLike, y: ArrayLike, noise_var: float, S: float, *,
                                  inputs: int | None = None, rng=0) -> LinearResponseError:
    """Infinitesimal-jackknife learning curve ε_IJ(S) of the low-rank GP, square loss, eqs. (10)-(15) of the docs.

    ``linear_response.linear_response_error`` on K = ΦΦᵀ, computed exactly over blocks I of columns of B:

    * B_{:,I} from B = (I − ΦC⁻¹Φᵀ)/τ: R_ji = B_ji/B_ii = −φ_jᵀC⁻¹φ_i/(τB_ii) for j ≠ i, R_ii = 1;
    * α^{(i)}_j = α_j − R_ji α_i (eq. 11) and P_ji = R_ji α^{(i)}_j = −d^{(i)}_j/c (eq. 12);
    * v_i = ν c² Σ_j P_ji² and b_i = c Σ_j P_ji (1 − τB^{(i)}_jj) (eq. 13), where by eq. (10)
      1 − τB^{(i)}_jj = 1 − τB_jj + τB_ji R_ji = h_j + τB_ii R_ji², so b_i = c (Σ_j h_j P_ji + τB_ii Σ_j P_ji R_ji²);
    * ε_IJ = mean(r² + v) (eq. 14) and ε_IJ2 = mean((r − b)² + v) (eq. 15), r = α/B_ii (eq. 8).

    Cost: O(N² m) time and O(N (m + b)) memory, b = max(32, 2^21 / N) columns per block. Eq. (13) is a quartic
    form in the features (module docstring), so no O(N m²) formula gives it exactly; this is the dense algorithm
    without the N×N matrix (measured: 268 s and 52 MB beyond Φ at N = 53,940, m = 256, on one core of a
    busy machine).

    With ``inputs`` = n_I < N, v_i and b_i are computed at n_I inputs drawn at random without replacement (O(N n_I m)
    time): ε_IJ = mean_all(r²) + mean_I(v) and ε_IJ2 = mean_all(r²) + mean_I(b² − 2rb + v), unbiased estimates of
    the two averages over all N inputs (the leave-one-out part r is exact); ``variance`` and ``bias`` are NaN at the
    inputs not drawn.

    Parameters
    ----------
    phi, y, noise_var, S
        As in :func:`loo_limit_lowrank`.
    inputs : int, optional
        Number of inputs at which eq. (13) is evaluated (None: all N, exact).
    rng : Generator, int or None
        Seed of the inputs drawn when ``inputs`` < N.

    Returns
    -------
    LinearResponseError
        As in :func:`~explorer.gp_bootstrap.linear_response.linear_response_error`; with ``inputs`` < N,
        ``variance`` and ``bias`` are NaN at the inputs not drawn.

    Raises
    ------
    ValueError
        As in :func:`loo_limit_lowrank`.
    """
    phi, y, noise_var, S, _ = _lowrank_iv(phi, y, noise_var, S)
    point = _expansion_point(phi, y, noise_var, S)
    diag, n = point.diag, y.size
    drawn = _drawn_inputs(n, inputs, rng)
    variance, bias = np.full(n, np.nan), np.full(n, np.nan)
    width = min(n, max(_MIN_COLUMNS, _COLUMN_BLOCK_ENTRIES // n))
    for start in range(0, drawn.size, width):
        cols = drawn[start:start + width]
        variance[cols], bias[cols] = _left_out_moments(phi, point, diag, cols)
    r = point.alpha / diag                                              # eq. (8)
    loo, v, b, r_d = float(np.mean(r**2)), variance[drawn], bias[drawn], r[drawn]
    return LinearResponseError(value=loo + float(np.mean(v)),                             # eq. (14)
                               value_second_order=loo + float(np.mean(b**2 - 2 * r_d * b + v)),  # eq. (15)
                               loo_limit=loo, residuals=r, variance=variance, bias=bias, s_over_n=point.nu)


def _drawn_inputs(n: int, inputs: int | None, rng) -> np.ndarray:
    """All N inputs (``inputs`` None or ≥ N), or ``inputs`` of them drawn without replacement, sorted."""
    if inputs is None or inputs >= n:
        return np.arange(n)
    if isinstance(inputs, bool) or not isinstance(inputs, (int, np.integer)) or inputs < 1:
        raise ValueError(f"`inputs` must be a positive number of inputs, got {inputs!r}.")
    return np.sort(np.random.default_rng(rng).choice(n, size=int(inputs), replace=False))


def _left_out_moments(phi, point: _ExpansionPoint, diag, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v_i and b_i of eq. (13) for the inputs i in ``cols``, from the columns B_{:,cols} (N, b)."""
    R = phi @ point.solve(phi[cols].T)                                  # φ_jᵀC⁻¹φ_i = −τB_ji (j ≠ i)
    R *= -1.0 / (point.tau * diag[cols])                                # R_ji = B_ji / B_ii
    R[cols, np.arange(cols.size)] = 1.0                                 # R_ii = 1
    alpha = point.alpha
    P = alpha[:, None] - R * alpha[cols]                                # α^{(i)}_j, eq. (11); 0 at j = i
    P *= R                                                              # −d^{(i)}_j / c, eq. (12)
    variance = point.nu * point.c**2 * np.einsum("ji,ji->i", P, P)      # eq. (13), v_i
    R *= R
    bias = point.c * (point.leverage @ P + point.tau * diag[cols] * np.einsum("ji,ji->i", P, R))  # eq. (13), b_i
    return variance, bias


def _lowrank_iv(phi, y, noise_var, S, phi_test=None):
    phi, y, noise_var, phi_test = check_features(phi, y, noise_var, phi_test)
    if y.size < 2:
        raise ValueError(f"Need at least 2 training points, got {y.size}: leave-one-out needs a point to keep.")
    return phi, y, noise_var, positive_S(S), phi_test
