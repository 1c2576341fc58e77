r"""Replica/ADATAP theory of seed 000 for a low-rank kernel K = ΦΦᵀ, in O(N m²) time and O(N m) memory.

With Φ of shape (N, m) (:mod:`explorer.lowrank`: Nyström, random Fourier or given features) every N×N matrix of
:mod:`explorer.bootstrap.replica` has a factored form. With D = diag Δλ and the m×m matrix

    A = I_m + Φᵀ D Φ = L Lᵀ,    Ψ = Φ L⁻ᵀ   (shape (N, m)),

the push-through identity (I + ΦΦᵀD)⁻¹Φ = Φ A⁻¹ gives G = (K⁻¹ + D)⁻¹ = K (I + DK)⁻¹ = Φ A⁻¹ Φᵀ = ΨΨᵀ (eq. 36), so

* diag G = row sums of Ψ∘Ψ (eq. 54 needs nothing else),
* m = G γ = Ψ(Ψᵀγ) (eq. 34),
* [(G∘G) v]_i = Σ_j G_ij² v_j = (G diag(v) G)_ii = row sums of (Ψ (Ψᵀ diag(v) Ψ)) ∘ Ψ (eq. 57, solved by
  conjugate gradients on its negative, which is positive definite),
* Tᵀk(x) = (I + K D)⁻¹ Φ φ(x) = Φ A⁻¹ φ(x) = Ψ L⁻¹ φ(x) (eq. 48).

A is at least the identity, so it is always positive definite and its Cholesky factor needs no jitter
(``ReplicaSolution.jitter`` is 0). Each iteration of eqs. (54)-(55) costs one product ΦᵀDΦ and one triangular
solve, 2 N m² flops; each product with G∘G costs 4 N m². The start value of Appendix A.2 is exact and cheap: the
eigenvalues ω of ΦΦᵀ are those of the m×m matrix ΦᵀΦ and N − m zeros, which drop out of eq. (61).

Closing (eqs. 57, 59) needs H(i) − G_ii², which the dense path forms by subtraction. A low-rank kernel has inputs
that few or no features reach (‖φ_i‖² ≪ k(x_i, x_i): outliers, points far from every Nyström landmark), where
G_ii → 0, Δλ_c(i) → ∞ and that difference cancels to nothing (or to a negative number). Here it is evaluated as
what eq. (55) makes it at the fixed point, the variance over k ~ Poisson(S/N) of 1/(Δλ_c + k/σ²), without
cancellation: equal to the dense path at a converged iterate (to 1e-9 at tol = 1e-10), closer to the exact fixed
point at a loose tol (error O(tol) instead of O(tol·κ), κ = G_ii²/(H − G_ii²) ≈ 10-60 on ordinary sites), and
finite where no feature reaches at all (see :data:`SITE_FLOOR`).

The results are the dense path's :class:`~explorer.bootstrap.replica.ReplicaSolution`, so
``bootstrap_test_error``, ``bootstrap_loss_error``, ``bootstrap_optimism``, ``mixture_components``,
``predictive_density`` and ``bin_probabilities`` of :mod:`explorer.bootstrap.replica` apply unchanged.

Only products, Cholesky factorisations and triangular solves of dense arrays (BLAS 3 and LAPACK) are used, so an
array library with the same operations could run it. Core module: numpy and scipy only.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np
from scipy import linalg
from scipy.sparse import linalg as sparse_linalg

from explorer.bootstrap.replica import (
    BootstrapMoments,
    ConvergenceError,
    ReplicaSolution,
    anderson_iteration,
    check_finite_solution,
    check_noise_and_sample_size,
    check_solver_options,
    poisson_weights,
    root_delta_lambda,
    start_delta_lambda,
    update_delta_lambda,
    warm_started,
)
from explorer.lowrank import LowRankFeatures
from explorer.progress import NO_HOOKS, Hooks

__all__ = [
    "CG_RTOL",
    "CG_MAX_ITER",
    "DENSE_FALLBACK_MAX_N",
    "SITE_FLOOR",
    "check_lowrank_inputs",
    "initial_delta_lambda_lowrank",
    "solve_replica_lowrank",
    "approximate_replica_lowrank",
    "replica_learning_curve_lowrank",
    "bootstrap_moments_lowrank",
]

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


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def check_lowrank_inputs(phi, y, noise_var: float, S: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validated ``(phi, y, noise_var, S)`` of the low-rank replica problems.

    Parameters
    ----------
    phi : array_like of shape (N, m), or LowRankFeatures
        Feature matrix Φ of the kernel K = ΦΦᵀ (its ``.phi`` for :class:`~explorer.lowrank.LowRankFeatures`).
    y, noise_var, S
        As in :func:`~explorer.bootstrap.replica.check_replica_inputs`, one target per row of Φ.

    Returns
    -------
    tuple
        Φ and ``y`` as float ndarrays, ``noise_var`` and ``S`` as floats.

    Raises
    ------
    ValueError
        If a shape or a value is wrong; the message says which.
    """
    phi = np.asarray(phi.phi if isinstance(phi, LowRankFeatures) else phi, dtype=float)
    y = np.asarray(y, dtype=float)
    if phi.ndim != 2 or phi.shape[1] < 1:
        raise ValueError(f"`phi` must be a feature matrix of shape (N, m), m >= 1, got shape {phi.shape}.")
    if y.shape != (phi.shape[0],):
        raise ValueError(f"`y` must have shape ({phi.shape[0]},) to match phi, got {y.shape}. "
                         "Pass one target per row of phi.")
    if phi.shape[0] < 2:
        raise ValueError(f"Need at least 2 training points, got {phi.shape[0]}.")
    if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(y))):
        raise ValueError("`phi` and `y` must be finite; found NaN or inf. Clean the data first.")
    if not np.any(phi):
        raise ValueError("`phi` is all zeros, so the kernel ΦΦᵀ is 0 and no input is learnt. Check the features.")
    return phi, y, *check_noise_and_sample_size(noise_var, S)


def _solve_iv(phi, y, noise_var, S, tol, max_iter, init, precision):
    """:func:`check_lowrank_inputs` plus the options of :func:`solve_replica_lowrank`."""
    phi, y, noise_var, S = check_lowrank_inputs(phi, y, noise_var, S)
    return phi, y, noise_var, S, check_solver_options(y.size, tol, max_iter, init, precision)


def _factor(phi: np.ndarray, dl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _G_diag(psi: np.ndarray) -> np.ndarray:
    """diag G = row sums of Ψ∘Ψ, at least SITE_FLOOR times its largest entry (eq. 36)."""
    G_diag = _row_squares(psi)
    return np.maximum(G_diag, SITE_FLOOR * G_diag.max())


def _hadamard_square_product(psi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(G∘G) v with G = ΨΨᵀ: [(G∘G) v]_i = (G diag(v) G)_ii = row sums of (Ψ (Ψᵀ diag(v) Ψ)) ∘ Ψ; 4 N m² flops."""
    return np.einsum("ij,ij->i", psi @ (psi.T @ (v[:, None] * psi)), psi)


def _spectrum(phi: np.ndarray) -> np.ndarray:
    """The non-zero eigenvalues ω of ΦΦᵀ: those of the m×m matrix ΦᵀΦ (the other N − m are zero)."""
    return np.clip(linalg.eigvalsh(phi.T @ phi), 0.0, None)


def initial_delta_lambda_lowrank(phi, noise_var: float, S: float) -> float:
    """Scalar start value Δλ from the 1-D root of eqs. (61)-(62) (Appendix A.2), for K = ΦΦᵀ.

    G(Δλ) = (1/N) Σ_k ω_k/(1 + ω_k Δλ) (eq. 61) is exact with the eigenvalues ω of the m×m matrix ΦᵀΦ: the other
    N − m eigenvalues of ΦΦᵀ are zero and add nothing to the sum. Costs N m² + m³.

    Parameters
    ----------
    phi : array_like of shape (N, m), or LowRankFeatures
        Feature matrix Φ.
    noise_var : float
        Noise variance σ².
    S : float
        Mean bootstrap sample size.

    Returns
    -------
    float
        The start value Δλ > 0 (the dense ``replica.initial_delta_lambda(Φ @ Φ.T, ...)`` with all eigenvalues).
    """
    phi = np.asarray(phi.phi if isinstance(phi, LowRankFeatures) else phi, dtype=float)
    phi, _, noise_var, S = check_lowrank_inputs(phi, np.zeros(phi.shape[:1]), noise_var, S)
    return root_delta_lambda(_spectrum(phi), 1.0, phi.shape[0], noise_var, S)


# ---------------------------------------------------------------------------------------------
# the fixed point of eqs. (54)-(55)
# ---------------------------------------------------------------------------------------------


def _fixed_point_map(phi, p, noise_var, keep=None) -> Callable[[np.ndarray], np.ndarray]:
    """x = log Δλ ↦ log Δλ' by eq. (54) then eq. (55), in the dtype of ``phi``; ``keep`` remembers Ψ."""

    def step(x: np.ndarray) -> np.ndarray:
        dl = np.exp(x)
        _, psi = _factor(phi, dl)
        if keep is not None:
            keep["dl"], keep["psi"] = dl, psi
        dl_c = 1.0 / _G_diag(psi) - dl  # eq. (54), diag G = row sums of Ψ²
        if np.any(~np.isfinite(dl_c)) or np.any(dl_c <= 0):
            raise FloatingPointError("Δλ_c left the positive reals")
        return np.log(update_delta_lambda(dl_c, p, noise_var))  # eq. (55)

    return step


def _with_hooks(step, hooks: Hooks, counter: Iterator[int], total: int):
    """``step`` that stops (``Cancelled``) before and reports progress after every evaluation of the map."""

    def checked(x: np.ndarray) -> np.ndarray:
        done = next(counter)
        hooks.check(done, total, "iterations")
        fx = step(x)
        hooks.step(done + 1, total, "iterations", "ADATAP")
        return fx

    return checked


# ---------------------------------------------------------------------------------------------
# closing the equations: (56)-(59)
# ---------------------------------------------------------------------------------------------


def _closing_coefficients(dl, dl_c, G_diag, p, noise_var, at_fixed_point: bool) -> tuple[np.ndarray, np.ndarray]:
    """(e, c) with e = g²/(H − g) and c = g/(H − g), g = G_ii², H = Σ_k p_k q_k², q_k = 1/(Δλ_c + k/σ²) (eqs. 57, 59).

    H − g is a difference of two numbers of order 1/Δλ_c² that can be 1e-15 of either (a site few features reach:
    G_ii ≈ 0, Δλ_c huge), so it is never formed by subtraction. Eq. (55) makes g = q̄², q̄ = Σ_k p_k q_k, at the
    fixed point, where H − g = Σ_k p_k (q_k − q̄)² is the variance of q over k; and q_k − q̄ =
    a r_k Σ_l p_l (l − k) r_l / Δλ_c with r_k = Δλ_c q_k and a = 1/(σ²Δλ_c), free of cancellation. Away from the
    fixed point (``at_fixed_point`` False: the approximate ADATAP) H − g also has the part q̄² − g =
    (Δλ − Δλ')q̄ G_ii (q̄ + G_ii), Δλ' the update (55) of Δλ_c — together exactly the literal H − G_ii². With
    t = G_ii Δλ_c and V = σ⁴Δλ_c⁴ (H − g): e = t⁴σ⁴/V and c = t²σ⁴Δλ_c²/V, finite as G_ii → 0 (e → σ⁴N/S).

    At a converged iterate the variance form is also the more accurate one: its error is O(tol), while that of the
    literal H − G_ii² is O(tol) times κ = g/(H − g), 10-60 on ordinary sites and up to 1e14 on sites few features
    reach.
    """
    k = np.arange(p.size)
    a = 1.0 / (noise_var * dl_c)
    r = 1.0 / (1.0 + a[:, None] * k)  # Δλ_c q_k
    w = r @ (p[:, None] * (k[:, None] - k[None, :]))  # Σ_l p_l (l − k) r_l
    V = (p * (r * w) ** 2).sum(axis=1)  # σ⁴Δλ_c⁴ Σ_k p_k (q_k − q̄)²
    t = G_diag * dl_c
    if not at_fixed_point:
        r_mean = r @ p  # Δλ_c q̄
        V = V + (dl - update_delta_lambda(dl_c, p, noise_var)) * noise_var**2 * dl_c * r_mean * t * (r_mean + t)
    e = t**4 * noise_var**2 / V
    return e, e * (dl_c / t) ** 2


def _solve_eq57(psi, d, e, r2, hooks: Hooks, n_iter: int) -> tuple[np.ndarray, str]:
    """λ of eq. (57), (G∘G − diag d) λ = (m − y)², and "" or why it failed; e = d − G_ii² is the diagonal of the
    negated matrix.

    Jacobi-preconditioned conjugate gradients on the positive definite diag(d) − G∘G, never forming G∘G; a dense
    symmetric solve when they fail and N ≤ DENSE_FALLBACK_MAX_N. ``should_stop`` is polled after every step.
    """
    n = r2.size
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(1.0 / e)) and np.all(np.isfinite(r2))):
        raise FloatingPointError("eq. (57) has a non-finite coefficient")

    def stop(_):
        hooks.check(n_iter, n_iter, "iterations")

    lam, info = sparse_linalg.cg(
        sparse_linalg.LinearOperator((n, n), matvec=lambda v: d * v - _hadamard_square_product(psi, v), dtype=float),
        -r2, M=sparse_linalg.LinearOperator((n, n), matvec=lambda v: v / e, dtype=float),
        rtol=CG_RTOL, atol=0.0, maxiter=CG_MAX_ITER, callback=stop,
    )
    if info == 0 and np.all(np.isfinite(lam)):
        return lam, ""
    if n <= DENSE_FALLBACK_MAX_N:
        A = psi @ psi.T
        A *= A
        A[np.diag_indices_from(A)] -= d
        return linalg.solve(A, r2, assume_a="sym"), ""
    residual = np.linalg.norm(d * lam - _hadamard_square_product(psi, lam) + r2) / max(np.linalg.norm(r2), 1e-300)
    return lam, (f"conjugate gradients on eq. (57) reached a relative residual of {residual:.1e} > {CG_RTOL:.0e} "
                 f"after {CG_MAX_ITER} steps")


def _close(phi, y, noise_var, S, dl, p, keep=None, hooks: Hooks = NO_HOOKS, *, at_fixed_point: bool = True,
           **meta) -> ReplicaSolution:
    """Given Δλ, compute Δλ_c (54), γ (56), m (34), λ (57), γ_c (58), λ_c (59) with G = ΨΨᵀ never formed.

    ``at_fixed_point``: H − G_ii² in its fixed-point form (a converged or last iterate), or exactly as written (the
    approximate ADATAP, whose Δλ is not a fixed point); see :func:`_closing_coefficients`.
    """
    if keep and np.array_equal(keep.get("dl"), dl):
        psi = keep["psi"]
    else:
        psi = _factor(phi, dl)[1]
    G_diag = _G_diag(psi)
    dl_c = 1.0 / G_diag - dl  # eq. (54)
    gam = y * dl  # eq. (56)
    m = psi @ (psi.T @ gam)  # eq. (34): m = G γ = Ψ(Ψᵀγ)
    e, c = _closing_coefficients(dl, dl_c, G_diag, p, noise_var, at_fixed_point)  # g²/(H − g), g/(H − g)
    g_ii = G_diag**2
    r2 = (m - y) ** 2
    lam, failure = _solve_eq57(psi, g_ii + e, e, r2, hooks, meta.get("n_iter", 0))  # eq. (57), d = Hg/(H − g)
    gam_c = -gam + m * (dl + dl_c)  # eq. (58)
    lam_c = lam * c + r2 / g_ii  # eq. (59)
    sol = ReplicaSolution(S=S, noise_var=noise_var, y=y, dl=dl, dl_c=dl_c, gam=gam, gam_c=gam_c, lam=lam,
                          lam_c=lam_c, m=m, G_diag=G_diag, **meta)
    if failure:
        raise ConvergenceError(f"Closing the ADATAP equations failed at S/N = {S / y.size:g}: {failure}. "
                               f"N = {y.size} is above {DENSE_FALLBACK_MAX_N}, where no dense fallback is tried.",
                               replace(sol, converged=False))
    check_finite_solution(sol)
    return sol


def _last_iterate(phi, y, noise_var, S, x, p, n_iter, residual, tol) -> ReplicaSolution | None:
    """The unconverged iterate as a solution object, or None if even that cannot be formed."""
    try:
        return _close(phi, y, noise_var, S, np.exp(x), p, converged=False, n_iter=n_iter, residual=residual,
                      tol=tol)
    except ConvergenceError as err:
        return err.last
    except (FloatingPointError, np.linalg.LinAlgError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# public solvers
# ---------------------------------------------------------------------------------------------


def solve_replica_lowrank(phi, y, noise_var: float, S: float, *, tol: float = 1e-3, max_iter: int = 200,
                          init: ReplicaSolution | np.ndarray | None = None, precision: str = "mixed",
                          hooks: Hooks | None = None) -> ReplicaSolution:
    """Solve the ADATAP equations (54)-(59) of seed 000 at bootstrap size S for the kernel K = ΦΦᵀ.

    The same fixed point, Anderson acceleration and results as :func:`explorer.bootstrap.replica.solve_replica`
    on ``phi @ phi.T``, in O(N m²) time per iteration and O(N m) memory: G = (K⁻¹ + diag Δλ)⁻¹ (eq. 36) is kept
    as ΨΨᵀ, eq. (57) is solved by conjugate gradients and H − G_ii² of eqs. (57), (59) is taken in its fixed-point
    form (see the module docstring: equal to the dense path at a tight ``tol``, closer to the fixed point at a loose
    one, finite at inputs no feature reaches).

    Parameters
    ----------
    phi : ndarray of shape (N, m), or LowRankFeatures
        Feature matrix Φ; the kernel matrix of the training inputs is ΦΦᵀ.
    y, noise_var, S, tol, max_iter, precision
        As in :func:`explorer.bootstrap.replica.solve_replica`.
    init : ReplicaSolution or ndarray of shape (N,), optional
        As in :func:`~explorer.bootstrap.replica.solve_replica`; the default start uses the exact eigenvalues of ΦΦᵀ
        (Appendix A.2).
    hooks : Hooks, optional
        ``step`` after every iteration (stage "ADATAP", unit "iterations", of the most there can be: ``max_iter``,
        twice that for "mixed"; the last report is n_iter of n_iter); ``should_stop`` is polled before every
        iteration and after every conjugate-gradient step of eq. (57).

    Returns
    -------
    ReplicaSolution
        As in :func:`~explorer.bootstrap.replica.solve_replica`, with ``jitter`` 0.

    Raises
    ------
    ValueError
        If an input is invalid; the message says which.
    ConvergenceError
        If the iteration does not reach ``tol`` in ``max_iter`` steps, breaks down, or conjugate gradients do not
        solve eq. (57) at N > DENSE_FALLBACK_MAX_N; ``.last`` is the last iterate (None after a breakdown that
        left nothing to close).
    Cancelled
        If ``hooks.should_stop()`` returned True.

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.bootstrap.replica import bootstrap_test_error
    >>> from explorer.kernels import SquaredExponential
    >>> from explorer.lowrank import nystrom_features
    >>> X = np.linspace(0, 1, 200)[:, None]
    >>> y = np.sin(6 * X[:, 0]) + 0.3 * np.cos(40 * X[:, 0])
    >>> features = nystrom_features(SquaredExponential(0.1), X, 20, rng=0)
    >>> sol = solve_replica_lowrank(features, y, 0.01, S=200.0)
    >>> sol.converged, round(bootstrap_test_error(sol), 4)
    (True, 0.0077)
    """
    phi, y, noise_var, S, init = _solve_iv(phi, y, noise_var, S, tol, max_iter, init, precision)
    hooks = hooks or NO_HOOKS
    n = y.size
    p = poisson_weights(S / n)
    x = np.log(start_delta_lambda(lambda: (_spectrum(phi), 1.0), n, noise_var, S, init))
    counter, most = itertools.count(), max_iter * (2 if precision == "mixed" else 1)
    n_iter, residual, converged, keep = 0, np.inf, False, {}
    try:
        if precision == "mixed":  # single precision resolves Δλ to ~1e-6; finish in double precision
            step = _with_hooks(_fixed_point_map(phi.astype(np.float32), p, noise_var), hooks, counter, most)
            x, n_iter, residual, _ = anderson_iteration(step, x, max(tol, 1e-4), max_iter)
        step = _with_hooks(_fixed_point_map(phi, p, noise_var, keep), hooks, counter, most)
        x, k, residual, converged = anderson_iteration(step, x, tol, max_iter)
        n_iter += k
    except (FloatingPointError, np.linalg.LinAlgError) as err:
        raise ConvergenceError(f"ADATAP iteration broke down at S/N = {S / n:g}: {err}",
                               _last_iterate(phi, y, noise_var, S, x, p, n_iter, residual, tol)) from err
    sol = _close(phi, y, noise_var, S, np.exp(x), p, keep, hooks, converged=converged, n_iter=n_iter,
                 residual=residual, tol=tol)
    if not converged:
        raise ConvergenceError(
            f"ADATAP iteration did not converge at S/N = {S / n:g}: relative change {residual:.2e} > tol "
            f"{tol:.1e} after {n_iter} iterations. Raise max_iter or tol.", sol)
    hooks.step(n_iter, n_iter, "iterations", "ADATAP")
    return sol


def approximate_replica_lowrank(phi, y, noise_var: float, S: float) -> ReplicaSolution:
    """The "approximate ADATAP" of seed 000 §5 for K = ΦΦᵀ: no iteration of eqs. (54)-(55).

    Δλ(i) = the scalar start value of Appendix A.2 (eqs. 61-62, exact eigenvalues of ΦΦᵀ); Δλ_c(i) = 1/G_ii − Δλ;
    then eqs. (56)-(59). Equals :func:`explorer.bootstrap.replica.approximate_replica` on ``phi @ phi.T``.

    Parameters
    ----------
    phi, y, noise_var, S
        As in :func:`solve_replica_lowrank`.

    Returns
    -------
    ReplicaSolution
        As in :func:`~explorer.bootstrap.replica.approximate_replica`, with ``jitter`` 0.

    Raises
    ------
    ValueError
        If the inputs are invalid (as in :func:`solve_replica_lowrank`).
    ConvergenceError
        If conjugate gradients do not solve eq. (57) at N > DENSE_FALLBACK_MAX_N.
    """
    phi, y, noise_var, S = check_lowrank_inputs(phi, y, noise_var, S)
    dl = np.full(y.size, root_delta_lambda(_spectrum(phi), 1.0, y.size, noise_var, S))
    return _close(phi, y, noise_var, S, dl, poisson_weights(S / y.size), at_fixed_point=False, converged=True,
                  n_iter=0, residual=float("nan"), tol=float("nan"), method="approximate")


def replica_learning_curve_lowrank(phi, y, noise_var: float, S_values, **options) -> list[ReplicaSolution]:
    """Solutions along a grid of S (solved in ascending order), each warm-started from its neighbour.

    Parameters
    ----------
    phi, y, noise_var
        As in :func:`solve_replica_lowrank`.
    S_values : sequence of float
        Mean bootstrap sample sizes.
    **options
        Passed to :func:`solve_replica_lowrank` (``tol``, ``max_iter``, ``precision``, ``hooks``).

    Returns
    -------
    list of ReplicaSolution
        As in :func:`~explorer.bootstrap.replica.replica_learning_curve`.

    Raises
    ------
    ValueError
        If the inputs are invalid (checked once, before the first solve).
    ConvergenceError
        If the solve at one value of S fails (as in :func:`solve_replica_lowrank`).
    """
    phi, y, noise_var, _ = check_lowrank_inputs(phi, y, noise_var, 1.0)
    return warm_started(lambda S, init: solve_replica_lowrank(phi, y, noise_var, S, init=init, **options), S_values)


def bootstrap_moments_lowrank(sol: ReplicaSolution, phi, phi_test) -> BootstrapMoments:
    """Bootstrap mean and variance of the predictor at arbitrary inputs, eq. (48) of seed 000, for K = ΦΦᵀ.

    With k(x) = Φ φ(x), T = (I + diag(Δλ) K)⁻¹ and the push-through identity, Tᵀk(x) = Φ A⁻¹ φ(x) = Ψ u(x) with
    u(x) = L⁻¹ φ(x) (A = I + ΦᵀDΦ = LLᵀ, Ψ = ΦL⁻ᵀ). Hence

        E_D[f(x)] = γᵀ Ψ u(x) = (Ψᵀγ)ᵀ u(x),
        Var_D[f(x)] = −Σ_i λ_i (Ψ u(x))_i² = −u(x)ᵀ (Ψᵀ diag(λ) Ψ) u(x),

    so no N×M matrix is formed: the cost is O(N m² + M m²) and the memory that of Φ and ``phi_test``.

    Parameters
    ----------
    sol : ReplicaSolution
        The replica solution on the training inputs, computed with ``phi``.
    phi : ndarray of shape (N, m), or LowRankFeatures
        The feature matrix Φ of the training inputs.
    phi_test : ndarray of shape (M, m)
        Features φ(x) of M inputs x (e.g. ``features.transform(X)``), so that k(x, x_i) = φ(x)ᵀφ_i.

    Returns
    -------
    BootstrapMoments
        As in :func:`~explorer.bootstrap.replica.bootstrap_moments`.

    Raises
    ------
    ValueError
        If ``phi`` does not have one row per training input of ``sol``, or ``phi_test`` not one column per feature.
    """
    phi, phi_test = _moments_iv(sol, phi, phi_test)
    L, psi = _factor(phi, sol.dl)
    u = linalg.solve_triangular(L, phi_test.T, lower=True, check_finite=False)  # L⁻¹ φ(x), shape (m, M)
    C = psi.T @ (sol.lam[:, None] * psi)  # Ψᵀ diag(λ) Ψ
    mean = (psi.T @ sol.gam) @ u  # eq. (48): γᵀ Tᵀ k(x)
    var = -np.einsum("jk,jk->k", u, C @ u)  # eq. (48): −k(x)ᵀ T diag(λ) Tᵀ k(x)
    return BootstrapMoments(mean=mean, var=var)


def _moments_iv(sol: ReplicaSolution, phi, phi_test) -> tuple[np.ndarray, np.ndarray]:
    """Φ and the test features of :func:`bootstrap_moments_lowrank` as float arrays, or a ValueError."""
    phi = np.asarray(phi.phi if isinstance(phi, LowRankFeatures) else phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] != sol.n:
        raise ValueError(f"`phi` must have one row per training input of the solution, shape ({sol.n}, m), got "
                         f"shape {phi.shape}. Pass the features the solution was computed with.")
    phi_test = np.atleast_2d(np.asarray(phi_test, dtype=float))
    if phi_test.ndim != 2 or phi_test.shape[1] != phi.shape[1]:
        raise ValueError(f"`phi_test` must have shape (M, {phi.shape[1]}), one column per column of phi, got shape "
                         f"{phi_test.shape}. Pass features.transform(X_test).")
    if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(phi_test))):
        raise ValueError("`phi` and `phi_test` must be finite; found NaN or inf.")
    return phi, phi_test
