"""The bootstrap means of the replica/ADATAP theory of [MO03] without its variances: the solve that stops before
eq. (57).

:func:`solve_replica_means` runs the iteration of eqs. (54)-(55) of :func:`~explorer.bootstrap.replica.solve_replica`
and closes it with the equations the first moments need — Δλ_c (54), γ (56), the bootstrap mean m at the training
inputs (34), γ_c (58), so the cavity means γ_c/Δλ_c (eq. 44) — but not the linear system of eq. (57) for λ nor
eq. (59) for λ_c, which only the variances and the bootstrap distribution need (eqs. 46, 48, 60). On features that
system is solved by conjugate gradients at 4 N m² flops a step, often more than the whole iteration; the out-of-bag
means of jackknife+-after-bootstrap (:mod:`explorer.bootstrap.out_of_bag`) and eq. (48)'s mean need none of it.
:func:`solve_variances` completes a :class:`ReplicaMeans` to the full
:class:`~explorer.bootstrap.replica.ReplicaSolution` later, without iterating again. Written once against the kernel
operator protocol, like the full solve.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from explorer.bootstrap.checks import check_finite_solution, check_replica_problem
from explorer.bootstrap.occupations import poisson_weights
from explorer.bootstrap.replica import (
    BootstrapSize,
    ReplicaSolution,
    close_first_moments,
    close_replica,
    iterate_and_close,
)
from explorer.operators import KernelOperator, as_operator
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["ReplicaMeans", "solve_replica_means", "solve_variances"]


@dataclass(frozen=True)
class ReplicaMeans(BootstrapSize):
    """The first moments of the replica model at one bootstrap size S: the ADATAP solution without its variances.

    What :func:`solve_replica_means` gives: Δλ of the iteration of eqs. (54)-(55), then Δλ_c (54), γ (56), the
    bootstrap mean m at the training inputs (34), γ_c (58) and diag G (36) — the same numbers as the fields of the same
    name of the :class:`~explorer.bootstrap.replica.ReplicaSolution` of
    :func:`~explorer.bootstrap.replica.solve_replica` — but not λ, λ_c: the linear system of eq. (57) and eq. (59),
    which only the variances and the bootstrap distribution (eqs. 46, 48, 60) need, are not solved. The cavity means
    γ_c(i)/Δλ_c(i) (eq. 44), the bootstrap mean at a test input (eq. 48, first part) and the out-of-bag means of
    jackknife+-after-bootstrap (:mod:`explorer.bootstrap.out_of_bag`) need nothing more. :func:`solve_variances`
    completes it to the full solution without iterating again.
    """

    S: float
    noise_var: float
    y: np.ndarray
    dl: np.ndarray
    dl_c: np.ndarray
    gam: np.ndarray
    gam_c: np.ndarray
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
    def cavity_mean(self) -> np.ndarray:
        """γ_c(i)/Δλ_c(i): mean of the predictor (field) at site i over samples without i (eq. 44)."""
        return self.gam_c / self.dl_c


def _close_means(op: KernelOperator, y, noise_var, S, dl, p, keep=None, hooks: Hooks = NO_HOOKS, *,
                 at_fixed_point: bool = True, **meta) -> ReplicaMeans:
    """Given Δλ, the first moments only: Δλ_c (54), γ (56), m (34), γ_c (58); eqs. (57), (59) are not solved."""
    _, G_diag, dl_c, gam, m, gam_c = close_first_moments(op, y, dl, keep, at_fixed_point)
    means = ReplicaMeans(S=S, noise_var=noise_var, y=y, dl=dl, dl_c=dl_c, gam=gam, gam_c=gam_c, m=m, G_diag=G_diag,
                         **meta)
    check_finite_solution(means)
    return means


def solve_replica_means(K, y: np.ndarray, noise_var: float, S: float, *, tol: float = 1e-3, max_iter: int = 200,
                        init: ReplicaSolution | np.ndarray | None = None, precision: str = "mixed",
                        init_subset: int | str | None = "auto", hooks: Hooks | None = None) -> ReplicaMeans:
    """The ADATAP equations of [MO03] for the bootstrap means only: eqs. (54)-(56), (34), (58), not (57), (59).

    The same iteration of eqs. (54)-(55) as :func:`~explorer.bootstrap.replica.solve_replica`, closed by the equations the means need: Δλ_c
    (54), γ (56), the bootstrap mean m at the training inputs (34) and γ_c (58), whose ratio γ_c/Δλ_c is the cavity
    mean (eq. 44: the mean of the predictor at x_i over the samples without i). It stops before the linear system
    of eq. (57) for λ and eq. (59) for λ_c, which only the variances need (eqs. 46, 48, 60): on features that
    system is solved by conjugate gradients at 4 N m² flops a step, often more than the whole iteration. Every
    field it returns is the same number :func:`~explorer.bootstrap.replica.solve_replica` gives (the same arithmetic on the same Δλ);
    :func:`solve_variances` adds λ, λ_c later without iterating again.

    Parameters
    ----------
    K, y, noise_var, S, tol, max_iter, init, precision, init_subset
        As in :func:`~explorer.bootstrap.replica.solve_replica`.
    hooks : Hooks, optional
        As in :func:`~explorer.bootstrap.replica.solve_replica` (there is no eq. (57) solve to poll).

    Returns
    -------
    ReplicaMeans
        Δλ, Δλ_c, γ, γ_c, m, diag G and the convergence record.

    Raises
    ------
    ValueError, ConvergenceError, IndefiniteKernelError, Cancelled
        As :func:`~explorer.bootstrap.replica.solve_replica` (a ``ConvergenceError``'s ``last`` is then a :class:`ReplicaMeans`).

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.bootstrap.replica import solve_replica
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.1)
    >>> y = np.sin(6 * X[:, 0])
    >>> means = solve_replica_means(K, y, 0.01, S=20.0)
    >>> bool(np.array_equal(means.cavity_mean, solve_replica(K, y, 0.01, S=20.0).cavity_mean))
    True
    """
    return iterate_and_close(_close_means, K, y, noise_var, S, tol, max_iter, init, precision, init_subset, hooks)


def solve_variances(means: ReplicaMeans, K, *, hooks: Hooks | None = None) -> ReplicaSolution:
    """Complete the first moments of :func:`solve_replica_means` with the variances: eqs. (57) and (59) at its Δλ.

    No iteration: one factorisation at Δλ, the closing and the linear system (57) for λ, then λ_c (59). The result
    is the :class:`ReplicaSolution` :func:`~explorer.bootstrap.replica.solve_replica` gives for the same problem and options (the same arithmetic
    on the same Δλ), with the convergence record of ``means``.

    Parameters
    ----------
    means : ReplicaMeans
        From :func:`solve_replica_means` on ``K``.
    K : KernelOperator, LowRankFeatures or ndarray of shape (N, N)
        The kernel ``means`` was solved on (without its jitter; a rank-deficient K is taken in the same features
        again, ``means.features_rank``).
    hooks : Hooks, optional
        ``should_stop`` is polled during the solve of eq. (57) on features.

    Returns
    -------
    ReplicaSolution

    Raises
    ------
    ValueError
        If ``K`` does not have one row per training input of ``means``.
    ConvergenceError
        If eq. (57) cannot be solved (features, N above ``DENSE_FALLBACK_MAX_N``); ``last`` holds the unconverged
        solution.
    """
    if not isinstance(means, ReplicaMeans):
        raise TypeError(f"`means` must be a ReplicaMeans (from solve_replica_means), got {type(means).__name__}.")
    op, y, noise_var, S = check_replica_problem(K, means.y, means.noise_var, means.S)
    if means.features_rank:
        op = as_operator(op.rank_deficient_features())
    op = op.with_jitter(means.jitter)
    sol = close_replica(op, y, noise_var, S, means.dl, poisson_weights(S / op.n), None, hooks or NO_HOOKS,
                 at_fixed_point=means.method == "adatap", converged=means.converged, n_iter=means.n_iter,
                 residual=means.residual, tol=means.tol, method=means.method, jitter=means.jitter)
    return replace(sol, features_rank=means.features_rank) if means.features_rank else sol
