"""Replica/ADATAP theory of bootstrap averages for GP regression ([MO03] §4-5 and Appendix A), written once against
a kernel operator (:mod:`explorer.operators`): the dense kernel matrix and the features Φ of a low-rank kernel
K = ΦΦᵀ run the same equations.

The bootstrap draws occupation numbers s_i ~ Poisson(v), v = S/N (eq. 11). The ADATAP approximation of
the replicated posterior has, per training input i, a "tilted" Gaussian likelihood with parameters
Δλ(i), λ(i), γ(i) and a Gaussian cavity field with parameters Δλ_c(i), λ_c(i), γ_c(i). Only Δλ, Δλ_c need
iterating (eqs. 54-55); everything else follows by matrix algebra (eqs. 56-59).

What the equations need of the prior covariance is named once by :class:`~explorer.operators.KernelOperator`:
diag G for G = (K⁻¹ + diag Δλ)⁻¹ (eq. 36, :meth:`site_variances`), then at the solution G v (eq. 34) and the system
(G∘G − diag d) λ = r of eq. (57) (:meth:`site_posterior`), and the spectrum for the start value (Appendix A.2).

Closing eqs. (57), (59) needs H − G_ii², H = Σ_k p_k (Δλ_c + k/σ²)⁻². Each implementation names the form it is
accurate with (``operator.closing``, :data:`CLOSINGS`): the dense kernel forms it by subtraction as the equations are
written (:func:`literal_closing`); a low-rank kernel has inputs few features reach, where G_ii → 0, Δλ_c → ∞ and the
subtraction cancels to nothing, so it takes the form eq. (55) gives it at the fixed point, the variance of
1/(Δλ_c + k/σ²) over k ~ Poisson(S/N) (:func:`fixed_point_closing`): equal to the literal form at a converged
iterate, closer to the exact fixed point at a loose tolerance, finite where no feature reaches.

Precision: by default the iteration starts in single precision (half the memory traffic) and finishes in double.
Single precision cannot represent the cavity of a rank-deficient kernel matrix (1 − Σ_j (U⁻¹)_ij² of
:func:`~explorer.operators.dense.G_diag` cancels): when a single-precision step leaves the positive reals the
solver detects it and iterates in double precision from the start instead (``ReplicaSolution.precision``).

Symbols in code: ``dl`` = Δλ, ``dl_c`` = Δλ_c, ``lam`` = λ, ``lam_c`` = λ_c, ``gam`` = γ, ``gam_c`` = γ_c,
``G`` = (K⁻¹ + diag Δλ)⁻¹ (eq. 36), ``H`` = Σ_k p_k (Δλ_c + k/σ²)⁻² (text after eq. 57).

Core module: numpy and scipy only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from explorer.bootstrap.checks import (
    check_finite_solution,
    check_lowrank_inputs,
    check_noise_and_sample_size,
    check_replica_inputs,
    check_replica_problem,
)
from explorer.bootstrap.closing import CLOSINGS, cavity_means, fixed_point_closing, literal_closing, site_means
from explorer.bootstrap.fixed_point import anderson_iteration, delta_lambda, fixed_point_map, warm_started, with_hooks
from explorer.bootstrap.occupations import poisson_weights, root_delta_lambda, row_blocks, update_delta_lambda
from explorer.operators import KernelOperator
from explorer.operators.dense import JITTER_LADDER, IndefiniteKernelError, first_jitter, with_jitter
from explorer.operators.features import FeatureKernel
from explorer.progress import NO_HOOKS, Hooks

if TYPE_CHECKING:  # replica_means builds on this module; its result type appears here in annotations only
    from explorer.bootstrap.replica_means import ReplicaMeans

__all__ = [
    "BootstrapSize",
    "CavityMoments",
    "ConvergenceError",
    "IndefiniteKernelError",
    "JITTER_LADDER",
    "ReplicaSolution",
    "CLOSINGS",
    "poisson_weights",
    "initial_delta_lambda",
    "solve_replica",
    "approximate_replica",
    "replica_learning_curve",
    "check_replica_inputs",
    "check_replica_problem",
    "check_noise_and_sample_size",
    "check_solver_options",
    "literal_closing",
    "fixed_point_closing",
    "start_delta_lambda",
    "update_delta_lambda",
    "root_delta_lambda",
    "anderson_iteration",
    "check_finite_solution",
    "with_jitter",
    "warm_started",
    "solve_replica_lowrank",
    "approximate_replica_lowrank",
    "replica_learning_curve_lowrank",
    "initial_delta_lambda_lowrank",
    "check_lowrank_inputs",
]

_Solution = TypeVar("_Solution")


class ConvergenceError(RuntimeError):
    """The ADATAP iteration did not converge; ``last`` holds the last iterate (a ReplicaSolution or ReplicaMeans), or
    None if the iteration broke down so badly that not even the last iterate could be formed."""

    def __init__(self, message: str, last: ReplicaSolution | ReplicaMeans | None, *, breakdown: bool = False):
        super().__init__(message)
        self.last = last
        self.breakdown = breakdown  # Δλ_c or a factorisation failed, as opposed to too few iterations


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
    γ_c(i)/Δλ_c(i) and variance −λ_c(i)/Δλ_c(i)² (eqs. 44, 46 of [MO03]; eq. 18 of [MO03b]). Mixed
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
    """ADATAP parameters of the replica model at one bootstrap size S ([MO03], eqs. 54-59).

    All arrays have shape (N,). ``m`` is the bootstrap mean of the predictor at the training inputs
    (eq. 34); ``G_diag`` the diagonal of G (eq. 36). ``residual`` is the largest relative change of Δλ
    in the last iteration; ``jitter`` what was added to K's diagonal to factorise (0 if nothing); ``features_rank``
    the rank r of the features Φ (N × r, ΦΦᵀ = K) a dense K was solved on because it is rank-deficient (0: solved
    as given; see :func:`solve_replica`).
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
    features_rank: int = 0

    @property
    def cavity_var(self) -> np.ndarray:
        """Variance of the predictor at i over samples without i: −λ_c(i)/Δλ_c(i)² (eq. 46), λ_c clipped at 0."""
        return np.maximum(-self.lam_c, 0.0) / self.dl_c**2


# ---------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------


def initial_delta_lambda(K, noise_var: float, S: float, *, subset: int | str | None = None, rng=0) -> float:
    """Scalar start value Δλ from the 1-D root of eqs. (61)-(62) (Appendix A.2).

    With G(Δλ) = (P/N) Σ_k ω_k/(1 + ω_k Δλ) (eq. 61; P = N/subset when the eigenvalues ω come from a
    random subset of the data) and a(Δλ) = 1 − G Δλ, eq. (62) reads Σ_k p_k/(a + G k/σ²) = 1.

    Parameters
    ----------
    K : KernelOperator, LowRankFeatures or ndarray of shape (N, N)
        The kernel of the training inputs (features: the eigenvalues of the m×m ΦᵀΦ, exact; ``subset`` unused).
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
    op, _, noise_var, S = check_replica_problem(K, np.zeros(_rows(K)), noise_var, S)
    omega, P = op.spectrum(subset, rng)
    return root_delta_lambda(omega, P, op.n, noise_var, S)


def _rows(K) -> int:
    """N of a kernel in any of the forms :func:`check_replica_problem` takes (before it validates it)."""
    n = getattr(K, "n", None)
    return n if isinstance(n, int) else len(np.asarray(getattr(K, "phi", K)))


# ---------------------------------------------------------------------------------------------
# closing the equations: (56)-(59) (the two closings: explorer.bootstrap.closing)
# ---------------------------------------------------------------------------------------------


def close_first_moments(op: KernelOperator, y, dl, keep, at_fixed_point: bool):
    """Given Δλ: G (eq. 36), its diagonal, Δλ_c (54), γ (56), m (34) and γ_c (58) — everything but eq. (57)."""
    G, G_diag, dl_c, m = site_means(op, y, dl, keep, at_fixed_point)
    gam, gam_c = cavity_means(y, dl, dl_c, m)
    return G, G_diag, dl_c, gam, m, gam_c


def close_replica(op: KernelOperator, y, noise_var, S, dl, p, keep=None, hooks: Hooks = NO_HOOKS, *,
                  at_fixed_point: bool = True, **meta) -> ReplicaSolution:
    """Given Δλ, compute G's diagonal, Δλ_c (54), γ (56), m (34), λ (57), γ_c (58), λ_c (59).

    ``at_fixed_point``: whether Δλ is a (converged or last) iterate of eqs. (54)-(55), or not (the approximate
    ADATAP); the fixed-point closing uses it. γ and γ_c are formed after eq. (57), (m − y)²/G_ii² a block at a time.
    """
    G, G_diag, dl_c, m = site_means(op, y, dl, keep, at_fixed_point)
    closing = CLOSINGS[op.closing](dl, dl_c, G_diag, p, noise_var, at_fixed_point)
    r2 = m - y
    r2 *= r2  # (m − y)²
    lam, failure = G.solve_hadamard(closing.d, closing.e, r2, hooks, meta.get("n_iter", 0))  # eq. (57)
    lam_c, den = closing.ratio()
    del closing
    gam, gam_c = cavity_means(y, dl, dl_c, m)
    lam_c *= lam  # eq. (59): λ num/den + (m − y)²/G_ii²
    lam_c /= den
    for rows in row_blocks(r2.size):
        r2[rows] /= G_diag[rows] ** 2
    lam_c += r2
    del r2
    sol = ReplicaSolution(
        S=S, noise_var=noise_var, y=y, dl=dl, dl_c=dl_c, gam=gam, gam_c=gam_c, lam=lam, lam_c=lam_c,
        m=m, G_diag=G_diag, **meta,
    )
    if failure:
        raise ConvergenceError(f"Closing the ADATAP equations failed at S/N = {S / y.size:g}: {failure}.",
                               replace(sol, converged=False))
    check_finite_solution(sol)
    return sol


def solve_replica(K, y: np.ndarray, noise_var: float, S: float, *, tol: float = 1e-3, max_iter: int = 200,
                  init: ReplicaSolution | np.ndarray | None = None, precision: str = "mixed",
                  init_subset: int | str | None = "auto", hooks: Hooks | None = None) -> ReplicaSolution:
    """Solve the ADATAP equations (54)-(59) of [MO03] for GP regression at bootstrap size S.

    Parameters
    ----------
    K : KernelOperator, LowRankFeatures or ndarray of shape (N, N)
        The prior covariance of the training inputs (:func:`check_replica_problem`): the kernel matrix, the features
        Φ of K = ΦΦᵀ (O(N m²) per iteration, never an N×N matrix) or any kernel operator.
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
        "mixed" iterates in single precision until max(tol, 1e-4) and finishes in double precision; where single
        precision cannot represent the cavity (a step leaves the positive reals) it iterates in double from the start.
        Where double precision cannot either, because K is rank-deficient, the solution is that of the features of
        K's non-zero eigenvalues (``ReplicaSolution.features_rank``, O(N³) once more for the eigen-decomposition).
    init_subset : int, "auto" or None
        Size of the random subset whose kernel eigenvalues start the iteration (Appendix A.2); "auto"
        uses N/4 points (the paper's P = 4) when N ≥ 400 and all of them below; None uses all. Features use the
        exact eigenvalues of ΦᵀΦ whatever this is.
    hooks : Hooks, optional
        ``step`` after every iteration (stage "ADATAP", unit "iterations", of the most there can be: ``max_iter``,
        twice that for "mixed"; the last report is n_iter of n_iter); ``should_stop`` is polled before every
        iteration and during the solve of eq. (57) on features.

    Returns
    -------
    ReplicaSolution
        The converged site parameters Δλ, γ, λ, their cavities and the convergence record.

    Raises
    ------
    ValueError
        If an input is invalid; the message says which.
    ConvergenceError
        If the iteration does not reach ``tol`` in ``max_iter`` steps; ``.last`` is the last iterate.
    IndefiniteKernelError
        If K is not positive semi-definite even with the largest jitter of ``JITTER_LADDER``; a smaller
        jitter that made it work is reported in ``ReplicaSolution.jitter``.
    Cancelled
        If ``hooks.should_stop()`` returned True.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.1)
    >>> sol = solve_replica(K, np.sin(6 * X[:, 0]), 0.01, S=20.0)
    >>> sol.converged, round(bootstrap_test_error(sol), 4)
    (True, 0.0016)
    """
    return iterate_and_close(close_replica, K, y, noise_var, S, tol, max_iter, init, precision, init_subset, hooks)


def iterate_and_close(close, K, y, noise_var, S, tol, max_iter, init, precision, init_subset, hooks):
    """The iteration of eqs. (54)-(55) at S, closed at its last Δλ by ``close`` (:func:`close_replica`, or the means'
    closing of ``replica_means``): the whole of :func:`solve_replica` with another closing, inputs as there."""
    op, y, noise_var, S = check_replica_problem(K, y, noise_var, S)
    init = check_solver_options(y.size, tol, max_iter, init, precision)
    try:
        return first_jitter(op, lambda op_j, jitter: _solve(op_j, y, noise_var, S, tol, max_iter, init, precision,
                                                            init_subset, jitter, hooks or NO_HOOKS, close))
    except ConvergenceError as err:
        features = _rank_deficient_form(op, err)
        if features is None:
            raise
    sol = iterate_and_close(close, features, y, noise_var, S, tol, max_iter,
                  None if init is None or isinstance(init, ReplicaSolution) else init, precision, init_subset, hooks)
    return replace(sol, features_rank=features.rank)


def _rank_deficient_form(op: KernelOperator, err: ConvergenceError):
    """The features of a rank-deficient K (``op.rank_deficient_features()``) when the iteration on K itself broke
    down, else None (a genuine breakdown, or an operator without the method).

    A rank-deficient K (a low-rank model's ΦΦᵀ, duplicated rows, a linear kernel) has sites whose G_ii is far below
    1/Δλ: G_ii = (1 − Σ_j (U⁻¹)_ij²)/Δλ cancels to nothing or below in any precision, and Δλ_c = 1/G_ii − Δλ leaves
    the positive reals. The breakdown is the detection; the features Φ of K's non-zero eigenvalues give the same K
    and a diag G = row sums of Ψ∘Ψ that needs no subtraction.
    """
    if not err.breakdown:
        return None
    form = getattr(op, "rank_deficient_features", None)
    return None if form is None else form()


def _solve(op: KernelOperator, y, noise_var, S, tol, max_iter, init, precision, init_subset, jitter,
           hooks: Hooks, close=close_replica) -> ReplicaSolution | ReplicaMeans:
    """solve_replica for validated inputs and one jitter level (see there); ``close`` closes the equations at Δλ."""
    n = op.n
    p = poisson_weights(S / n)
    x = np.log(start_delta_lambda(lambda: op.spectrum(init_subset, 0), n, noise_var, S, init))
    counter, most = itertools.count(), max_iter * (2 if precision == "mixed" else 1)
    n_iter, residual, converged, keep = 0, np.inf, False, {}
    dl = None
    try:
        if precision == "mixed":  # single precision resolves Δλ to ~1e-6; finish in double precision
            x, n_iter, residual = _single_precision_start(op, p, noise_var, x, tol, max_iter, hooks, counter, most)
        step = with_hooks(fixed_point_map(op, p, noise_var, keep), hooks, counter, most)
        x, k, residual, converged = anderson_iteration(step, x, tol, max_iter, discard=keep.clear)
        n_iter += k
        dl, x = delta_lambda(x, keep), None  # from here Δλ only (one N-vector, not three)
        sol = close(op, y, noise_var, S, dl, p, keep, hooks, converged=converged, n_iter=n_iter,
                    residual=residual, tol=tol, jitter=jitter)
    except IndefiniteKernelError:
        raise
    except (FloatingPointError, np.linalg.LinAlgError) as err:
        raise ConvergenceError(f"ADATAP iteration broke down at S/N = {S / n:g}: {err}",
                               _last_iterate(op, y, noise_var, S, np.exp(x) if dl is None else dl, p, n_iter,
                                             residual, tol, close),
                               breakdown=True) from err
    if not converged:
        raise ConvergenceError(
            f"ADATAP iteration did not converge at S/N = {S / n:g}: relative change {residual:.2e} > tol "
            f"{tol:.1e} after {n_iter} iterations. Raise max_iter or tol.",
            sol,
        )
    hooks.step(n_iter, n_iter, "iterations", "ADATAP")
    return sol


def _single_precision_start(op, p, noise_var, x, tol, max_iter, hooks, counter, most):
    """(x, n_iter, residual) after iterating eqs. (54)-(55) in single precision to max(tol, 1e-4); the start x
    itself (0 iterations) where single precision breaks down — the cavity 1/G_ii − Δλ of a rank-deficient K is
    not representable there — so that the double-precision iteration starts afresh."""
    step = with_hooks(fixed_point_map(op.in_precision(np.float32), p, noise_var), hooks, counter, most)
    try:
        x_single, n_iter, residual, _ = anderson_iteration(step, x, max(tol, 1e-4), max_iter)
    except IndefiniteKernelError:
        raise
    except (FloatingPointError, np.linalg.LinAlgError):
        return x, 0, np.inf
    return x_single, n_iter, residual


def _last_iterate(op, y, noise_var, S, dl, p, n_iter, residual, tol,
                  close=close_replica) -> ReplicaSolution | ReplicaMeans | None:
    """The unconverged iterate Δλ as a solution object, or None if even that cannot be formed."""
    try:
        return close(op, y, noise_var, S, dl, p, converged=False, n_iter=n_iter, residual=residual, tol=tol)
    except ConvergenceError as err:
        return err.last
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


def approximate_replica(K, y: np.ndarray, noise_var: float, S: float, *,
                        init_subset: int | str | None = None) -> ReplicaSolution:
    """The "approximate ADATAP" of [MO03] §5: no iteration of eqs. (54)-(55).

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
    ConvergenceError
        If eq. (57) cannot be solved (features, N above ``DENSE_FALLBACK_MAX_N``).
    """
    op, y, noise_var, S = check_replica_problem(K, y, noise_var, S)
    omega, P = op.spectrum(init_subset, 0)
    dl = np.full(op.n, root_delta_lambda(omega, P, op.n, noise_var, S))
    return first_jitter(op, lambda op_j, jitter: close_replica(
        op_j, y, noise_var, S, dl, poisson_weights(S / op.n), at_fixed_point=False, converged=True, n_iter=0,
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
    ValueError
        If the inputs are invalid (checked once, before the first solve).
    ConvergenceError
        If the solve at one value of S fails (as in :func:`solve_replica`).
    """
    op, y, noise_var, _ = check_replica_problem(K, y, noise_var, 1.0)
    return warm_started(lambda S, init: solve_replica(op, y, noise_var, S, init=init, **options), S_values)


# ---------------------------------------------------------------------------------------------
# the same on the features Φ of K = ΦΦᵀ (conveniences: Φ as an array cannot be told from K by its shape)
# ---------------------------------------------------------------------------------------------


def solve_replica_lowrank(phi, y, noise_var: float, S: float, **options) -> ReplicaSolution:
    """:func:`solve_replica` on the features Φ (array of shape (N, m) or ``LowRankFeatures``) of K = ΦΦᵀ."""
    phi, y, noise_var, S = check_lowrank_inputs(phi, y, noise_var, S)
    return solve_replica(FeatureKernel(phi), y, noise_var, S, **options)


def approximate_replica_lowrank(phi, y, noise_var: float, S: float) -> ReplicaSolution:
    """:func:`approximate_replica` on the features Φ of K = ΦΦᵀ."""
    phi, y, noise_var, S = check_lowrank_inputs(phi, y, noise_var, S)
    return approximate_replica(FeatureKernel(phi), y, noise_var, S)


def replica_learning_curve_lowrank(phi, y, noise_var: float, S_values, **options) -> list[ReplicaSolution]:
    """:func:`replica_learning_curve` on the features Φ of K = ΦΦᵀ."""
    phi, y, noise_var, _ = check_lowrank_inputs(phi, y, noise_var, 1.0)
    return replica_learning_curve(FeatureKernel(phi), y, noise_var, S_values, **options)


def initial_delta_lambda_lowrank(phi, noise_var: float, S: float) -> float:
    """:func:`initial_delta_lambda` on the features Φ of K = ΦΦᵀ (the exact eigenvalues of ΦᵀΦ)."""
    phi, _, noise_var, S = check_lowrank_inputs(phi, np.zeros(np.shape(getattr(phi, "phi", phi))[:1]), noise_var, S)
    return initial_delta_lambda(FeatureKernel(phi), noise_var, S)


# What a solution gives lives in :mod:`explorer.bootstrap.averages`; importable from here as before this module was
# split (``replica.bootstrap_test_error`` and the rest).
from explorer.bootstrap.averages import (  # noqa: E402 - averages imports ReplicaSolution from above
    BootstrapMoments,
    MixtureComponents,
    OptimismErrors,
    bootstrap_loss_error,
    bootstrap_moments,
    bootstrap_moments_lowrank,
    bootstrap_optimism,
    bootstrap_test_error,
    cavity_test_errors,
    mixture_components,
    self_consistency_residuals,
)
from explorer.bootstrap.distribution import bin_probabilities, predictive_density  # noqa: E402 - eq. (60) at one input

__all__ += ["bootstrap_test_error", "cavity_test_errors", "bootstrap_loss_error", "OptimismErrors",
            "bootstrap_optimism", "BootstrapMoments", "bootstrap_moments", "bootstrap_moments_lowrank",
            "MixtureComponents", "mixture_components", "predictive_density", "bin_probabilities",
            "self_consistency_residuals"]
