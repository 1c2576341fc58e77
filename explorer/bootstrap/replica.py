"""Replica/ADATAP theory of bootstrap averages for GP regression (seed 000, §4-5 and Appendix A).

The bootstrap draws occupation numbers s_i ~ Poisson(v), v = S/N (eq. 11). The ADATAP approximation of
the replicated posterior has, per training input i, a "tilted" Gaussian likelihood with parameters
Δλ(i), λ(i), γ(i) and a Gaussian cavity field with parameters Δλ_c(i), λ_c(i), γ_c(i). Only Δλ, Δλ_c need
iterating (eqs. 54-55); everything else follows by matrix algebra (eqs. 56-59).

Symbols in code: ``dl`` = Δλ, ``dl_c`` = Δλ_c, ``lam`` = λ, ``lam_c`` = λ_c, ``gam`` = γ, ``gam_c`` = γ_c,
``G`` = (K⁻¹ + diag Δλ)⁻¹ (eq. 36), ``H`` = Σ_k p_k (Δλ_c + k/σ²)⁻² (text after eq. 57).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy import linalg, optimize, special, stats
from scipy.sparse import linalg as sparse_linalg

__all__ = [
    "BootstrapSize",
    "CavityMoments",
    "ConvergenceError",
    "IndefiniteKernelError",
    "JITTER_LADDER",
    "ReplicaSolution",
    "poisson_weights",
    "initial_delta_lambda",
    "solve_replica",
    "approximate_replica",
    "replica_learning_curve",
    "bootstrap_test_error",
    "bootstrap_loss_error",
    "bootstrap_optimism",
    "OptimismErrors",
    "bootstrap_moments",
    "BootstrapMoments",
    "mixture_components",
    "MixtureComponents",
    "predictive_density",
    "bin_probabilities",
    "self_consistency_residuals",
    "check_replica_inputs",
    "check_noise_and_sample_size",
    "check_solver_options",
    "cavity_test_errors",
    "start_delta_lambda",
    "update_delta_lambda",
    "root_delta_lambda",
    "anderson_iteration",
    "check_finite_solution",
    "with_jitter",
    "factor_B",
    "G_diag",
    "G_full",
]

_Solution = TypeVar("_Solution")

#: Tail mass of the Poisson occupation distribution dropped from the series of eqs. (51), (55), (60).
SERIES_TAIL = 1e-16


#: Jitter ladder, in units of the mean diagonal of K, tried when I + D^½ K D^½ cannot be factorised
#: because round-off made K slightly indefinite (a kernel matrix is positive semi-definite in exact
#: arithmetic; the jitter restores that at the smallest level that works and is reported).
JITTER_LADDER = (1e-10, 1e-8, 1e-6)


class IndefiniteKernelError(np.linalg.LinAlgError):
    """K is not positive semi-definite (even after the jitter ladder): it cannot be a kernel matrix."""


class ConvergenceError(RuntimeError):
    """The ADATAP iteration did not converge; ``last`` holds the last iterate (a ReplicaSolution, or None
    if the iteration broke down so badly that not even the last iterate could be formed)."""

    def __init__(self, message: str, last: ReplicaSolution | None):
        super().__init__(message)
        self.last = last


class BootstrapSize:
    """``n`` and ``s_over_n`` of a GP-regression solution with fields ``S`` and ``y`` (one target per input).

    Mixed into :class:`ReplicaSolution`, ``variational.VGSolution`` and ``mean_field.MFSolution``.
    """

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.y.shape[0]

    @property
    def s_over_n(self) -> float:
        """S/N, the mean bootstrap sample size per training input."""
        return self.S / self.n


class CavityMoments:
    """Cavity mean and variance of every site from the fields ``dl_c``, ``gam_c``, ``lam_c``.

    The cavity field of site i is Gaussian over the bootstrap samples that do not contain i, with mean
    γ_c(i)/Δλ_c(i) and variance −λ_c(i)/Δλ_c(i)² (eqs. 44, 46 of seed 000; eq. 18 of seed 004). Mixed
    into :class:`ReplicaSolution`, ``variational.VGSolution`` and ``svm_bootstrap.replica.SVMReplicaSolution``.
    """

    @property
    def cavity_mean(self) -> np.ndarray:
        """γ_c(i)/Δλ_c(i): mean of the predictor (field) at site i over samples without i."""
        return self.gam_c / self.dl_c

    @property
    def cavity_var(self) -> np.ndarray:
        """−λ_c(i)/Δλ_c(i)²: variance of the predictor (field) at site i over samples without i."""
        return -self.lam_c / self.dl_c**2


@dataclass(frozen=True)
class ReplicaSolution(BootstrapSize, CavityMoments):
    """ADATAP parameters of the replica model at one bootstrap size S (seed 000, eqs. 54-59).

    All arrays have shape (N,). ``m`` is the bootstrap mean of the predictor at the training inputs
    (eq. 34); ``G_diag`` the diagonal of G (eq. 36). ``residual`` is the largest relative change of Δλ
    in the last iteration; ``jitter`` what was added to K's diagonal to factorise (0 if nothing).
    """

    S: float
    noise_var: float
    y: np.ndarray
    dl: np.ndarray
    dl_c: np.ndarray
    gam: np.ndarray
    gam_c: np.ndarray
    lam: np.ndarray
    lam_c: np.ndarray
    m: np.ndarray
    G_diag: np.ndarray
    converged: bool
    n_iter: int
    residual: float
    tol: float
    method: str = "adatap"
    jitter: float = 0.0

    @property
    def cavity_var(self) -> np.ndarray:
        """Variance of the predictor at i over samples without i: −λ_c(i)/Δλ_c(i)² (eq. 46), λ_c clipped at 0."""
        return np.maximum(-self.lam_c, 0.0) / self.dl_c**2


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def check_replica_inputs(K, y, noise_var: float, S: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validated ``(K, y, noise_var, S)`` of the GP-regression replica problems (every solver of the theory).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric, finite kernel matrix, n >= 2.
    y : array_like of shape (n,)
        Finite targets.
    noise_var : float
        σ² > 0.
    S : float
        Mean bootstrap sample size, > 0.

    Returns
    -------
    tuple
        ``K`` and ``y`` as float ndarrays, ``noise_var`` and ``S`` as floats.

    Raises
    ------
    ValueError
        If a shape, a value or the symmetry of ``K`` is wrong; the message says which.
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"`K` must be a square kernel matrix, got shape {K.shape}.")
    if y.shape != (K.shape[0],):
        raise ValueError(
            f"`y` must have shape ({K.shape[0]},) to match K, got {y.shape}. Pass one target per row of K."
        )
    if K.shape[0] < 2:
        raise ValueError(f"Need at least 2 training points, got {K.shape[0]}.")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(y))):
        raise ValueError("`K` and `y` must be finite; found NaN or inf. Clean the data first.")
    if not (np.array_equal(K, K.T) or np.allclose(K, K.T, rtol=1e-10, atol=1e-12)):
        raise ValueError("`K` must be symmetric; got a non-symmetric matrix. Is it a kernel matrix?")
    return K, y, *check_noise_and_sample_size(noise_var, S)


def check_noise_and_sample_size(noise_var: float, S: float) -> tuple[float, float]:
    """Validated noise variance σ² (eq. 50) and mean bootstrap sample size S (eq. 11), the scalars of every solver.

    Parameters
    ----------
    noise_var, S
        As in :func:`check_replica_inputs`.

    Returns
    -------
    tuple of float
        ``noise_var`` and ``S`` as floats.

    Raises
    ------
    ValueError
        If either is not a positive finite number; the message says which.
    """
    if not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"`noise_var` must be positive, got {noise_var}. It is the noise variance σ².")
    if not (np.isfinite(S) and S > 0):
        raise ValueError(f"`S` must be positive, got {S}. S is the mean bootstrap sample size.")
    return float(noise_var), float(S)


# ---------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------


def poisson_weights(v: float, tail: float = SERIES_TAIL) -> np.ndarray:
    """Weights p_k = v^k e^(−v)/k!, k = 0..k_max, with the dropped tail mass below ``tail`` (eq. 11).

    Parameters
    ----------
    v : float
        The Poisson mean S/N, positive.
    tail : float
        Largest tail mass P(k > k_max) that is dropped.

    Returns
    -------
    ndarray of shape (k_max + 1,)
        p_0 .. p_k_max, renormalised to sum to one.

    Raises
    ------
    ValueError
        If ``v`` is not a positive finite number.
    """
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"`v` = S/N must be positive, got {v}.")
    k_max = int(stats.poisson.isf(tail, v)) + 1
    p = stats.poisson.pmf(np.arange(k_max + 1), v)
    return p / p.sum()


def _occupation_series(dl_c: np.ndarray, p: np.ndarray, noise_var: float) -> tuple[np.ndarray, np.ndarray]:
    """q = Σ_k p_k Δλ_c/(Δλ_c + k/σ²) and 1 − q, computed without cancellation (eqs. 51, 55)."""
    kc = np.arange(p.size) / noise_var
    a = dl_c[:, None]
    q = (p * (a / (a + kc))).sum(axis=1)
    one_minus_q = (p * (kc / (a + kc))).sum(axis=1)
    return q, one_minus_q


def update_delta_lambda(dl_c: np.ndarray, p: np.ndarray, noise_var: float) -> np.ndarray:
    """Eq. (55): Δλ = (Σ_k p_k/(Δλ_c + k/σ²))⁻¹ − Δλ_c, written as Δλ_c (1 − q)/q (no cancellation)."""
    q, one_minus_q = _occupation_series(dl_c, p, noise_var)
    return dl_c * one_minus_q / q


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


def _kernel_spectrum(K: np.ndarray, subset: int | str | None, rng) -> tuple[np.ndarray, float]:
    """Eigenvalues ω of K, or of a random N/P subset (Appendix A.2); returns (ω, scale) with scale = P."""
    n = K.shape[0]
    if subset == "auto":
        subset = n // 4 if n >= 400 else None
    if subset is None or subset >= n:
        return np.clip(linalg.eigvalsh(K), 0.0, None), 1.0
    idx = np.random.default_rng(rng).choice(n, size=subset, replace=False)
    return np.clip(linalg.eigvalsh(K[np.ix_(idx, idx)]), 0.0, None), n / subset


def initial_delta_lambda(
    K: np.ndarray, noise_var: float, S: float, *, subset: int | str | None = None, rng=0
) -> float:
    """Scalar start value Δλ from the 1-D root of eqs. (61)-(62) (Appendix A.2).

    With G(Δλ) = (P/N) Σ_k ω_k/(1 + ω_k Δλ) (eq. 61; P = N/subset when the eigenvalues ω come from a
    random subset of the data) and a(Δλ) = 1 − G Δλ, eq. (62) reads Σ_k p_k/(a + G k/σ²) = 1.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs.
    noise_var : float
        Noise variance σ².
    S : float
        Mean bootstrap sample size.
    subset : int, "auto" or None
        Size of the random subset whose eigenvalues ω_k are used (as ``init_subset`` of
        :func:`solve_replica`); None uses all of K.
    rng : Generator, int or None
        Seed of the subset.

    Returns
    -------
    float
        The start value Δλ > 0.
    """
    K, _, noise_var, S = check_replica_inputs(K, np.zeros(len(K)), noise_var, S)
    omega, P = _kernel_spectrum(K, subset, rng)
    return root_delta_lambda(omega, P, K.shape[0], noise_var, S)


def root_delta_lambda(omega: np.ndarray, P: float, n: int, noise_var: float, S: float) -> float:
    """The 1-D root of eqs. (61)-(62) given the kernel eigenvalues ω (see initial_delta_lambda)."""
    p = poisson_weights(S / n)
    kc = np.arange(p.size) / noise_var

    def excess(log_dl: float) -> float:
        dl = np.exp(log_dl)
        G = P / n * np.sum(omega / (1 + omega * dl))  # eq. (61)
        a = 1 - P / n * np.sum(omega * dl / (1 + omega * dl))  # = 1 − G Δλ, without cancellation
        return float(np.sum(p / (a + G * kc)) - 1.0)  # eq. (62)

    lo, hi = -30.0, 5.0
    while excess(hi) < 0 and hi < 60:
        hi += 5.0
    if excess(lo) > 0 or excess(hi) < 0:
        raise ValueError("Could not bracket the start value of Δλ (eqs. 61-62); is K a kernel matrix?")
    return float(np.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12)))


# ---------------------------------------------------------------------------------------------
# the fixed point of eqs. (54)-(55)
# ---------------------------------------------------------------------------------------------


def _fixed_point_map(K, p, noise_var, dtype, keep=None) -> Callable[[np.ndarray], np.ndarray]:
    """x = log Δλ ↦ log Δλ' by eq. (54) then eq. (55)."""

    def step(x: np.ndarray) -> np.ndarray:
        dl = np.exp(x)
        dl_c = 1.0 / G_diag(K, dl, dtype, keep) - dl  # eq. (54)
        if np.any(~np.isfinite(dl_c)) or np.any(dl_c <= 0):
            raise FloatingPointError("Δλ_c left the positive reals")
        return np.log(update_delta_lambda(dl_c, p, noise_var))  # eq. (55)

    return step


def anderson_iteration(step, x0: np.ndarray, tol: float, max_iter: int, memory: int = 5):
    """Anderson-accelerated fixed-point iteration on x; returns (x, n_iter, residual, converged).

    The residual is max abs(F(x) − x), i.e. the largest relative change of Δλ when x = log Δλ. On
    convergence the returned x is the last point at which F was evaluated (so G is known there).
    A safeguard falls back to the plain step when the accelerated residual grows.
    """
    x = x0
    X_hist, F_hist = [], []
    residual, best = np.inf, np.inf
    for it in range(1, max_iter + 1):
        fx = step(x)
        r = fx - x
        residual = float(np.max(np.abs(r)))
        if residual < tol:
            return x, it, residual, True
        X_hist.append(x.copy())
        F_hist.append(r)
        if residual > 2 * best:  # acceleration went astray: restart from a plain step
            X_hist, F_hist = [x.copy()], [r]
        best = min(best, residual)
        X_hist, F_hist = X_hist[-(memory + 1):], F_hist[-(memory + 1):]
        if len(F_hist) > 1:
            dF = np.diff(np.array(F_hist), axis=0).T
            dX = np.diff(np.array(X_hist), axis=0).T
            coef, *_ = np.linalg.lstsq(dF, r, rcond=None)
            x = x + r - (dX + dF) @ coef
        else:
            x = fx
    return x, max_iter, residual, False


# ---------------------------------------------------------------------------------------------
# closing the equations: (56)-(59)
# ---------------------------------------------------------------------------------------------


def _close(K, y, noise_var, S, dl, p, keep=None, **meta) -> ReplicaSolution:
    """Given Δλ, compute G, Δλ_c (54) and γ, λ, γ_c, λ_c by eqs. (56)-(59)."""
    G = G_full(K, dl, keep)
    G_diag = np.diag(G).copy()
    dl_c = 1.0 / G_diag - dl  # eq. (54)
    gam = y * dl  # eq. (56)
    m = G @ gam  # eq. (34)
    kc = np.arange(p.size) / noise_var
    H = (p / (dl_c[:, None] + kc) ** 2).sum(axis=1)  # H(i), after eq. (57)
    g = G * G
    g_ii = G_diag**2
    d = H * g_ii / (H - g_ii)
    r2 = (m - y) ** 2
    g[np.diag_indices_from(g)] -= d
    lam = _solve_negative_definite(g, r2)  # eq. (57): (g − diag d) λ = (m − y)²
    gam_c = -gam + m * (dl + dl_c)  # eq. (58)
    lam_c = lam * g_ii / (H - g_ii) + r2 / g_ii  # eq. (59)
    sol = ReplicaSolution(
        S=S, noise_var=noise_var, y=y, dl=dl, dl_c=dl_c, gam=gam, gam_c=gam_c, lam=lam, lam_c=lam_c,
        m=m, G_diag=G_diag, **meta,
    )
    check_finite_solution(sol)
    return sol


def _solve_negative_definite(A: np.ndarray, b: np.ndarray) -> np.ndarray:
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


def check_finite_solution(sol: ReplicaSolution) -> None:
    """Raise FloatingPointError if a site parameter of ``sol`` is not finite (a degenerate kernel matrix)."""
    for name in ("dl", "dl_c", "gam", "gam_c", "lam", "lam_c", "m"):
        if not np.all(np.isfinite(getattr(sol, name))):
            raise FloatingPointError(f"The replica solution has non-finite {name}; K may be degenerate.")


def solve_replica(K: np.ndarray, y: np.ndarray, noise_var: float, S: float, *, tol: float = 1e-3, max_iter: int = 200,
                  init: ReplicaSolution | np.ndarray | None = None, precision: str = "mixed",
                  init_subset: int | str | None = "auto") -> ReplicaSolution:
    """Solve the ADATAP equations (54)-(59) of seed 000 for GP regression at bootstrap size S.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the training inputs.
    y : ndarray of shape (N,)
        Targets.
    noise_var : float
        Noise variance σ² of the GP (training energy eq. 50).
    S : float
        Mean bootstrap sample size (occupation numbers s_i ~ Poisson(S/N)).
    tol : float
        Stop when the largest relative change of any Δλ(i) is below ``tol`` (the paper: 1e-3).
    max_iter : int
        Most iterations of eqs. (54)-(55) per precision.
    init : ReplicaSolution or ndarray, optional
        Warm start (a solution at a nearby S, or Δλ itself); default the root of eqs. (61)-(62).
    precision : {"mixed", "double"}
        "mixed" iterates in single precision until max(tol, 1e-4) and finishes in double precision.
    init_subset : int, "auto" or None
        Size of the random subset whose kernel eigenvalues start the iteration (Appendix A.2); "auto"
        uses N/4 points (the paper's P = 4) when N ≥ 400 and all of them below; None uses all.

    Returns
    -------
    ReplicaSolution
        The converged site parameters Δλ, γ, λ, their cavities and the convergence record.

    Raises
    ------
    ConvergenceError
        If the iteration does not reach ``tol`` in ``max_iter`` steps; ``.last`` is the last iterate.
    IndefiniteKernelError
        If K is not positive semi-definite even with the largest jitter of ``JITTER_LADDER``; a smaller
        jitter that made it work is reported in ``ReplicaSolution.jitter``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.1)
    >>> sol = solve_replica(K, np.sin(6 * X[:, 0]), 0.01, S=20.0)
    >>> sol.converged, round(bootstrap_test_error(sol), 4)
    (True, 0.0016)
    """
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    init = check_solver_options(y.size, tol, max_iter, init, precision)
    return with_jitter(K, lambda K_j, jitter: _solve(K_j, y, noise_var, S, tol, max_iter, init, precision,
                                                      init_subset, jitter))


def with_jitter(K: np.ndarray, solve: Callable[[np.ndarray, float], _Solution]) -> _Solution:
    """``solve(K + jitter·I, jitter)`` with the smallest jitter of :data:`JITTER_LADDER` (times the mean diagonal of
    K; 0 first) for which ``solve`` raises no :class:`IndefiniteKernelError`.

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
    scale = float(np.mean(np.diag(K)))
    for jitter in (0.0, *(j * scale for j in JITTER_LADDER)):
        try:
            return solve(K if jitter == 0 else K + jitter * np.eye(K.shape[0]), jitter)
        except IndefiniteKernelError:
            continue
    raise IndefiniteKernelError(
        f"The kernel matrix is not positive semi-definite, even with a jitter of {jitter:.1e} on its "
        "diagonal. Check the kernel and its hyperparameters.")


def _solve(K, y, noise_var, S, tol, max_iter, init, precision, init_subset, jitter) -> ReplicaSolution:
    """solve_replica for validated inputs and one jitter level (see there)."""
    n = K.shape[0]
    p = poisson_weights(S / n)
    x = np.log(start_delta_lambda(lambda: _kernel_spectrum(K, init_subset, 0), n, noise_var, S, init))
    n_iter, residual, converged = 0, np.inf, False
    try:
        if precision == "mixed":  # single precision resolves Δλ to ~1e-6; finish in double precision
            x, n_iter, residual, _ = anderson_iteration(_fixed_point_map(K, p, noise_var, np.float32), x,
                                               max(tol, 1e-4), max_iter)
        keep: dict = {}
        x, k, residual, converged = anderson_iteration(_fixed_point_map(K, p, noise_var, np.float64, keep), x, tol,
                                              max_iter)
        n_iter += k
    except IndefiniteKernelError:
        raise
    except (FloatingPointError, np.linalg.LinAlgError) as err:
        raise ConvergenceError(f"ADATAP iteration broke down at S/N = {S / n:g}: {err}",
                               _last_iterate(K, y, noise_var, S, x, p, n_iter, residual, tol)) from err
    sol = _close(K, y, noise_var, S, np.exp(x), p, keep, converged=converged, n_iter=n_iter,
                 residual=residual, tol=tol, jitter=jitter)
    if not converged:
        raise ConvergenceError(
            f"ADATAP iteration did not converge at S/N = {S / n:g}: relative change {residual:.2e} > tol "
            f"{tol:.1e} after {n_iter} iterations. Raise max_iter or tol.",
            sol,
        )
    return sol


def _last_iterate(K, y, noise_var, S, x, p, n_iter, residual, tol) -> ReplicaSolution | None:
    """The unconverged iterate as a solution object, or None if even that cannot be formed."""
    try:
        return _close(K, y, noise_var, S, np.exp(x), p, converged=False, n_iter=n_iter, residual=residual,
                      tol=tol)
    except (FloatingPointError, np.linalg.LinAlgError, ValueError):
        return None


def check_solver_options(n: int, tol: float, max_iter: int, init, precision: str) -> ReplicaSolution | np.ndarray | None:
    """Validated options of the iteration of eqs. (54)-(55), shared by the dense and the low-rank solver.

    Parameters
    ----------
    n : int
        N, the number of data rows.
    tol, max_iter, init, precision
        As in :func:`solve_replica`.

    Returns
    -------
    ReplicaSolution, ndarray of shape (N,) or None
        ``init``, an array of Δλ as floats.

    Raises
    ------
    ValueError
        If an option is out of its range or ``init`` does not fit N rows; the message says which.
    """
    if precision not in ("mixed", "double"):
        raise ValueError(f"`precision` must be 'mixed' or 'double', got {precision!r}.")
    if not (0 < tol < 1):
        raise ValueError(f"`tol` must be in (0, 1), got {tol}. It is the relative accuracy of Δλ.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"`max_iter` must be a positive integer, got {max_iter!r}.")
    if isinstance(init, ReplicaSolution):
        if init.n != n:
            raise ValueError(f"`init` is a solution for N = {init.n} inputs, but the data have {n} rows.")
        return init
    if init is None:
        return None
    init = np.asarray(init, dtype=float)
    if init.shape != (n,) or not np.all(np.isfinite(init)) or np.any(init <= 0):
        raise ValueError(f"`init` must be a positive array of shape ({n},) or a ReplicaSolution.")
    return init


def start_delta_lambda(spectrum: Callable[[], tuple[np.ndarray, float]], n: int, noise_var: float, S: float,
                       init: ReplicaSolution | np.ndarray | None) -> np.ndarray:
    """Δλ where the iteration of eqs. (54)-(55) starts.

    The root of eqs. (61)-(62) (Appendix A.2) for ``init`` None; ``init`` itself for an array of Δλ; for a solution
    at another S, its Δλ times the ratio of the two scalar start values (a warm start along a learning curve).

    Parameters
    ----------
    spectrum : callable
        ``spectrum()`` gives (ω, P), the kernel's eigenvalues and the number of rows they were computed on, as
        :func:`root_delta_lambda` takes them; called only when needed.
    n, noise_var, S
        N, σ² and the mean bootstrap sample size.
    init : ReplicaSolution, ndarray or None
        As returned by :func:`check_solver_options`.

    Returns
    -------
    ndarray of shape (N,)
        Δλ > 0.
    """
    if init is not None and not isinstance(init, ReplicaSolution):
        return init
    omega, P = spectrum()
    start = root_delta_lambda(omega, P, n, noise_var, S)
    if init is None:
        return np.full(n, start)
    return init.dl * (start / root_delta_lambda(omega, P, n, noise_var, init.S))


def approximate_replica(K: np.ndarray, y: np.ndarray, noise_var: float, S: float, *,
                        init_subset: int | str | None = None) -> ReplicaSolution:
    """The "approximate ADATAP" of seed 000 §5: no iteration of eqs. (54)-(55).

    Δλ(i) = the scalar start value of Appendix A.2; Δλ_c(i) = 1/G_ii − Δλ; then eqs. (56)-(59).

    Parameters
    ----------
    K, y, noise_var, S
        As in :func:`solve_replica`.
    init_subset : int, "auto" or None
        Subset for the start value, as in :func:`solve_replica` (default: all of K).

    Returns
    -------
    ReplicaSolution
        With ``method="approximate"``, ``n_iter=0`` and ``converged=True``.

    Raises
    ------
    ValueError
        If the inputs are invalid (as in :func:`solve_replica`).
    IndefiniteKernelError
        If K is not positive semi-definite even with the largest jitter of ``JITTER_LADDER``.
    """
    K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
    dl = np.full(K.shape[0], initial_delta_lambda(K, noise_var, S, subset=init_subset))
    return with_jitter(K, lambda K_j, jitter: _close(
        K_j, y, noise_var, S, dl, poisson_weights(S / K.shape[0]), converged=True, n_iter=0,
        residual=float("nan"), tol=float("nan"), method="approximate", jitter=jitter))


def replica_learning_curve(K, y, noise_var, S_values, **options) -> list[ReplicaSolution]:
    """Solutions along a grid of S (sorted ascending), each warm-started from its neighbour.

    Parameters
    ----------
    K, y, noise_var
        As in :func:`solve_replica`.
    S_values : sequence of float
        Mean bootstrap sample sizes; solved in ascending order.
    **options
        Passed to :func:`solve_replica`.

    Returns
    -------
    list of ReplicaSolution
        One solution per entry of ``S_values``, in the order given.

    Raises
    ------
    ConvergenceError
        If the solve at one value of S fails (as in :func:`solve_replica`).
    """
    return warm_started(lambda S, init: solve_replica(K, y, noise_var, S, init=init, **options), S_values)


def warm_started(solve: Callable[[float, object], _Solution], S_values) -> list[_Solution]:
    """``solve(S, init)`` at every S of ``S_values``, in ascending order of S, each warm-started from the
    solution at the previous S (``init`` None for the smallest); the solutions in the order of ``S_values``.

    Shared by the learning curves of ADATAP, VG (``variational``) and the SVM replica theory.
    """
    S_arr = np.atleast_1d(np.asarray(S_values, dtype=float))
    solutions: dict[int, _Solution] = {}
    previous = None
    for j in np.argsort(S_arr):
        previous = solve(float(S_arr[j]), previous)
        solutions[int(j)] = previous
    return [solutions[j] for j in range(S_arr.size)]


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------


def bootstrap_test_error(sol: ReplicaSolution) -> float:
    """Efron's bootstrap square-loss test error ε(S), eq. (45) of seed 000.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.

    Returns
    -------
    float
        (1/N) Σ_i ((γ_c(i) − y_i Δλ_c(i))² − λ_c(i)) / Δλ_c(i)².
    """
    return float(np.mean(cavity_test_errors(sol)))


def cavity_test_errors(sol) -> np.ndarray:
    """ε_i of eq. (45) of seed 000: the expected square error at each training input over the samples without it,
    ((γ_c(i) − y_i Δλ_c(i))² − λ_c(i)) / Δλ_c(i)², from the cavity of any solution that has one.

    Parameters
    ----------
    sol : ReplicaSolution or a solution with the same cavity fields
        ``y``, ``dl_c`` = Δλ_c, ``gam_c`` = γ_c and ``lam_c`` = λ_c, each of shape (N,): ADATAP's, VG's
        (``gp_bootstrap.variational``) or MF's (``gp_bootstrap.mean_field``, λ_c = 0).

    Returns
    -------
    ndarray of shape (N,)
        ε_i for every training input.
    """
    return ((sol.gam_c - sol.y * sol.dl_c) ** 2 - sol.lam_c) / sol.dl_c**2


def bootstrap_loss_error(sol: ReplicaSolution, loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
                         n_nodes: int = 40) -> float:
    """Efron's bootstrap test error for any loss g(f, y), eq. (46), by Gauss-Hermite quadrature in u.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S.
    loss : callable
        g(f, y) on broadcast arrays f of shape (N, n_nodes) and y of shape (N, 1).
    n_nodes : int
        Number of Gauss-Hermite nodes.

    Returns
    -------
    float
        The error averaged over the N training inputs.
    """
    u, w = special.roots_hermitenorm(n_nodes)
    w = w / np.sqrt(2 * np.pi)
    f = (sol.gam_c[:, None] + u[None, :] * np.sqrt(np.maximum(-sol.lam_c, 0.0))[:, None]) / sol.dl_c[:, None]
    values = np.asarray(loss(f, sol.y[:, None]), dtype=float)  # eq. (46)
    return float(np.mean(values @ w))


@dataclass(frozen=True)
class OptimismErrors:
    """The two bootstrap-averaged errors whose difference is Efron's optimism (seed 002 eqs. 3-6).

    Attributes
    ----------
    validation : float
        E^{A,I}, the error of the retrained predictor on the original set (eq. 4).
    training : float
        E^{A,A}, the error on the bootstrap sample itself (eq. 3).
    """

    validation: float
    training: float

    @property
    def optimism(self) -> float:
        """E^{A,I} − E^{A,A}, the optimism of eqs. (5)-(6)."""
        return self.validation - self.training


def bootstrap_optimism(sol: ReplicaSolution, tail_mass: float = SERIES_TAIL) -> OptimismErrors:
    """Bootstrap averages of the two errors whose difference is Efron's optimism (seed 002 eqs. 3-5).

    With the eq. (60) mixture of seed 000 — given k copies of point i in the sample, the retrained
    predictor at x_i is Gaussian with mean μ_ik = (γ_c + y_i k/σ²)/(Δλ_c + k/σ²) and variance
    −λ_c/(Δλ_c + k/σ²)², so E[(h − y_i)² | k] = (μ_ik − y_i)² + var_ik — averaging over k ~ Poisson(S/N):

        E^{A,I} = (1/N) Σ_i Σ_k p_k E[(h − y_i)² | k]     (validation error on the original set, eq. 4)
        E^{A,A} = (1/N) Σ_i Σ_k k p_k E[(h − y_i)² | k]   (training error on the sample, eq. 3; S = N)

    No refits.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution at S = N.
    tail_mass : float
        Poisson tail mass dropped from the series over k.

    Returns
    -------
    OptimismErrors
        E^{A,I} (``validation``) and E^{A,A} (``training``); ``optimism`` is their difference (eqs. 5-6).
    """
    p = poisson_weights(sol.S / sol.n, tail=tail_mass)
    k = np.arange(p.size)
    prec = sol.dl_c[:, None] + k / sol.noise_var
    mean_gap = (sol.gam_c[:, None] - sol.y[:, None] * sol.dl_c[:, None]) / prec  # μ_ik − y_i
    sq = mean_gap**2 + np.maximum(-sol.lam_c, 0.0)[:, None] / prec**2
    validation = float(np.mean(sq @ p))
    training = float(np.sum(sq @ (k * p)) / sol.S)
    return OptimismErrors(validation=validation, training=training)


@dataclass(frozen=True)
class BootstrapMoments:
    """Bootstrap mean and variance of the predictor at M inputs, eq. (48) of seed 000.

    Attributes
    ----------
    mean : ndarray of shape (M,)
        E_D[f(x)] = k(x)ᵀ T γ.
    var : ndarray of shape (M,)
        Var_D[f(x)] = −k(x)ᵀ T diag(λ) Tᵀ k(x), with T = (I + diag(Δλ) K)⁻¹.
    """

    mean: np.ndarray
    var: np.ndarray


@dataclass(frozen=True)
class MixtureComponents:
    """The Poisson mixture of Gaussians of eq. (60) at one training input; arrays of shape (k_max + 1,).

    Attributes
    ----------
    weights : ndarray
        p_k, the Poisson probability of k copies of the input in a sample.
    means : ndarray
        (γ_c + y k/σ²)/(Δλ_c + k/σ²), the mean of component k.
    sds : ndarray
        √(−λ_c)/(Δλ_c + k/σ²), the standard deviation of component k.
    """

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray


def bootstrap_moments(sol: ReplicaSolution, K: np.ndarray, K_cross: np.ndarray) -> BootstrapMoments:
    """Bootstrap mean and variance of the predictor at arbitrary inputs, eq. (48) of seed 000.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution on the training inputs.
    K : ndarray of shape (N, N)
        The kernel matrix the solution was computed with (without its jitter).
    K_cross : ndarray of shape (M, N)
        k(x, x_i) for M inputs x.

    Returns
    -------
    BootstrapMoments
        ``mean`` and ``var``, each of shape (M,).

    Raises
    ------
    ValueError
        If ``K_cross`` does not have one column per training input.
    """
    K_cross = np.atleast_2d(np.asarray(K_cross, dtype=float))
    if K_cross.shape[1] != sol.n:
        raise ValueError(f"`K_cross` must have {sol.n} columns (one per training input), got {K_cross.shape}.")
    K = np.asarray(K, dtype=float) + sol.jitter * np.eye(sol.n)  # the K the solution was computed with
    U = factor_B(K, sol.dl, np.float64)
    r = np.sqrt(sol.dl)
    # Tᵀ k(x) = (I + K D)⁻¹ k = k − K D^½ B⁻¹ D^½ k
    t = K_cross.T - K @ (r[:, None] * linalg.cho_solve((U, False), r[:, None] * K_cross.T))
    return BootstrapMoments(mean=t.T @ sol.gam, var=-(t**2).T @ sol.lam)


def mixture_components(sol: ReplicaSolution, i: int, tail_mass: float = 1e-6) -> MixtureComponents:
    """Poisson mixture of Gaussians for the bootstrap density of the predictor at input i, eq. (60).

    Component k (k copies of point i): weight p_k, mean (γ_c + y k/σ²)/(Δλ_c + k/σ²),
    sd √(−λ_c)/(Δλ_c + k/σ²). Truncated where the dropped Poisson tail mass is below ``tail_mass``.

    Parameters
    ----------
    sol : ReplicaSolution
    i : int
        Index of the training input.
    tail_mass : float
        Largest Poisson tail mass left out.

    Returns
    -------
    MixtureComponents
        ``weights``, ``means`` and ``sds``, each of shape (k_max + 1,).

    Raises
    ------
    IndexError
        If ``i`` is not in 0..N − 1.
    """
    if not 0 <= i < sol.n:
        raise IndexError(f"Input index must be in 0..{sol.n - 1}, got {i}.")
    p = poisson_weights(sol.S / sol.n, tail=tail_mass)
    prec = sol.dl_c[i] + np.arange(p.size) / sol.noise_var
    means = (sol.gam_c[i] + sol.y[i] * np.arange(p.size) / sol.noise_var) / prec
    sds = np.sqrt(max(-sol.lam_c[i], 0.0)) / prec
    return MixtureComponents(weights=p, means=means, sds=sds)


def predictive_density(sol: ReplicaSolution, i: int, h: np.ndarray, tail_mass: float = 1e-6) -> np.ndarray:
    """Theory density ρ_i(h) of the bootstrapped predictor at training input i, eq. (60).

    Parameters
    ----------
    sol, i, tail_mass
        As in :func:`mixture_components`: the replica solution at S, the index of the training input and
        the Poisson tail mass dropped from the mixture.
    h : ndarray of any shape
        Predictor values at which to evaluate the density.

    Returns
    -------
    ndarray of the shape of ``h``
        ρ_i(h).
    """
    mix = mixture_components(sol, i, tail_mass)
    h = np.asarray(h, dtype=float)
    return (mix.weights * stats.norm.pdf(h[..., None], mix.means, mix.sds)).sum(axis=-1)


def bin_probabilities(sol: ReplicaSolution, i: int, edges: np.ndarray, tail_mass: float = 1e-6) -> np.ndarray:
    """Mass of the eq. (60) mixture in each histogram bin (the k ≥ 1 components are narrower than a bin).

    Parameters
    ----------
    sol, i, tail_mass
        As in :func:`predictive_density`.
    edges : ndarray of shape (n_bins + 1,)
        Increasing bin edges.

    Returns
    -------
    ndarray of shape (n_bins,)
        The probability of each bin.
    """
    mix = mixture_components(sol, i, tail_mass)
    w, mu, sd = mix.weights, mix.means, mix.sds
    edges = np.asarray(edges, dtype=float)
    if sd[0] > 0:
        cdf = stats.norm.cdf(edges[:, None], mu, sd)
    else:  # K ∝ I: point masses
        cdf = (edges[:, None] >= mu).astype(float)
    return np.diff(cdf @ w)


def self_consistency_residuals(sol: ReplicaSolution, K: np.ndarray) -> dict[str, float]:
    """Largest relative violation of eqs. (30)-(35) and (51)-(53) by a solution.

    Each moment — M − Q, m, Q − m² — is computed three ways: from the tilted-likelihood side (30)-(32),
    the Gaussian side (33)-(35) with G = (K⁻¹ + diag Δλ)⁻¹ formed independently by a dense solve, and the
    exact local average over occupation numbers (51)-(53); the residuals compare them pairwise.

    Parameters
    ----------
    sol : ReplicaSolution
        The solution to check.
    K : ndarray of shape (N, N)
        The kernel matrix it was computed with.

    Returns
    -------
    dict of str to float
        The largest relative residual of each pairwise comparison, keyed by the equations compared,
        e.g. ``"(30)-(33)"``; each is scaled by the largest magnitude of the first moment of its pair.
    """
    K = np.asarray(K, dtype=float)
    G = np.linalg.solve(np.eye(sol.n) + K * sol.dl[None, :], K)  # (I + K D)⁻¹ K = (K⁻¹ + D)⁻¹
    p = poisson_weights(sol.S / sol.n)
    prec = sol.dl_c[:, None] + np.arange(p.size) / sol.noise_var
    s = sol.dl + sol.dl_c
    mq = {"30": 1 / s, "33": np.diag(G), "51": (p / prec).sum(axis=1)}
    m = {"31": (sol.gam + sol.gam_c) / s, "34": G @ sol.gam,
         "52": (sol.gam_c - sol.y * sol.dl_c) * mq["51"] + sol.y}
    H = (p / prec**2).sum(axis=1)
    qm = {"32": -(sol.lam + sol.lam_c) / s**2, "35": -np.einsum("ij,j,ij->i", G, sol.lam, G),
          "53": ((m["52"] - sol.y) ** 2 / mq["51"] ** 2 - sol.lam_c) * H - (m["52"] - sol.y) ** 2}
    out = {}
    for group in (mq, m, qm):
        keys = list(group)
        scale = max(np.max(np.abs(group[keys[0]])), 1e-300)
        for a, b in ((keys[0], keys[1]), (keys[0], keys[2])):
            out[f"({a})-({b})"] = float(np.max(np.abs(group[a] - group[b])) / scale)
    return out
