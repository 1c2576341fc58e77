"""The stages of [MO03b]'s learning curve on one :class:`~explorer.svm_bootstrap.problem.SVMProblem`, each built
once: the CLI (through :func:`~explorer.svm_bootstrap.experiments.svm_learning_curve`) and the app's SVM tab call
the same functions, so they agree by construction.

* :func:`theory_learning_curve` — ε(S) of the replica/ADATAP theory alone (eq. 17), warm-started along S;
* :func:`theory_curve` — the same with its S → ∞ levels, eq. (20) and the literal leave-one-out error;
* :func:`mc_curve` — Efron's Monte-Carlo estimate (eq. 6) at every S/N, with standard errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.chunks import Executor, SeedLike
from explorer.progress import NO_HOOKS, Hooks
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import svm_replica
from explorer.svm_bootstrap.problem import SVMProblem
from explorer.validation import mc_curve_grid, s_over_n_grid

__all__ = ["TheoryPoint", "theory_learning_curve", "SVMTheoryCurve", "theory_curve", "SVMCurvePoint", "SVMCurveMC",
           "mc_curve"]


@dataclass(frozen=True)
class TheoryPoint:
    """The theory at one bootstrap size: ε(S) of eq. (17), or None when the solver did not converge."""

    s_over_n: float
    S: float
    theory: float | None
    converged: bool
    n_iter: int
    residual: float


def theory_learning_curve(problem: SVMProblem, s_over_n: Sequence[float], *, tol: float = 1e-6,
                          max_iter: int = 200, hooks: Hooks | None = None) -> tuple[TheoryPoint, ...]:
    """ε(S) of the ADATAP theory alone (cheap: for the theory line on a fine grid of S/N).

    Solved in ascending S with warm starts; an unconverged warm start is retried cold. A failure is
    reported in the point (``theory`` None, ``converged`` False, the residual), never raised.

    Parameters
    ----------
    problem, s_over_n
        As in :func:`svm_learning_curve`.
    tol : float
        Tolerance of the ADATAP solves.
    max_iter : int
        Largest number of sweeps per solve.
    hooks : Hooks, optional
        Progress and a stop checked before each S/N; ``publish`` gets the points solved so far (in the order
        given) after each.

    Returns
    -------
    tuple of TheoryPoint, length n_S
        ε(S) of eq. (17) and the convergence record at every S/N, in the order given.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value.
    """
    grid = s_over_n_grid(s_over_n, per="data row")
    out: dict[int, TheoryPoint] = {}
    previous = None
    hooks = hooks or NO_HOOKS
    for k, j in enumerate(np.argsort(grid)):
        hooks.check(k, grid.size, "values of S/N")
        hooks.report(k / grid.size, f"replica theory at S/N = {grid[j]:g} ({k + 1}/{grid.size})")
        S = float(problem.sample_size(grid[j]))
        sol = _solve_or_last(problem, S, tol, max_iter, previous)
        if (sol is None or not sol.converged) and previous is not None:
            sol = _solve_or_last(problem, S, tol, max_iter, None)  # cold retry
        if sol is None:
            out[int(j)] = TheoryPoint(float(grid[j]), S, None, False, 0, math.inf)
        else:
            value = svm_replica.classification_error(sol) if sol.converged else None
            out[int(j)] = TheoryPoint(float(grid[j]), S, value, sol.converged, sol.n_iter, sol.residual)
            previous = sol if sol.converged else previous
        hooks.publish(tuple(out[i] for i in sorted(out)))
    return tuple(out[j] for j in range(grid.size))


def _solve_or_last(problem: SVMProblem, S: float, tol: float, max_iter: int, init
                   ) -> svm_replica.SVMReplicaSolution | None:
    try:
        return svm_replica.solve_svm_replica(problem.K, problem.y_sites, S, counts=problem.sites.counts, tol=tol,
                                             max_iter=max_iter, init=init)
    except svm_replica.ConvergenceError as err:
        return err.last


@dataclass(frozen=True)
class SVMTheoryCurve:
    """Theory ε(S) (eq. 17) on the grid computed so far, and the S → ∞ levels once known.

    ``loo_approximate`` is eq. (20), the limit of the theory; ``loo_exact`` the literal leave-one-out
    error, the limit of the Monte-Carlo bootstrap (None until computed, or when not asked for).
    """

    points: tuple[TheoryPoint, ...]
    grid: tuple[float, ...]
    n: int
    loo_approximate: float | None = None
    loo_exact: float | None = None

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid) and self.loo_exact is not None

    @property
    def unconverged(self) -> tuple[TheoryPoint, ...]:
        return tuple(p for p in self.points if not p.converged)


def theory_curve(problem: SVMProblem, s_over_n: Sequence[float], *, tol: float = 1e-6, exact_loo: bool = True,
                 hooks: Hooks | None = None) -> SVMTheoryCurve:
    """The theory's learning curve (:func:`theory_learning_curve`) and its S → ∞ levels: eq. (20) and, with
    ``exact_loo``, the literal leave-one-out error (one SVM fit per support vector).

    Parameters
    ----------
    problem, s_over_n, tol
        As in :func:`theory_learning_curve`.
    exact_loo : bool
        Also compute the literal leave-one-out error.
    hooks : Hooks, optional
        Progress and a stop checked before each S/N; ``publish`` gets the :class:`SVMTheoryCurve` so far after
        each S/N and after eq. (20).

    Returns
    -------
    SVMTheoryCurve
    """
    grid = s_over_n_grid(s_over_n, per="data row")
    hooks = hooks or NO_HOOKS
    steps, as_tuple = grid.size + 1, tuple(grid.tolist())
    points = theory_learning_curve(problem, grid, tol=tol, hooks=hooks.sub(
        0.0, grid.size / steps, partial=lambda done: hooks.publish(SVMTheoryCurve(done, as_tuple, problem.n))))
    hooks.report(grid.size / steps, "S → ∞: leave-one-out limits")
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    counts = problem.sites.counts
    approx = svm_replica.loo_limit(problem.K, problem.y_sites, counts=counts, solution=d0).error
    if not exact_loo:
        return SVMTheoryCurve(points, as_tuple, problem.n, approx)
    hooks.publish(SVMTheoryCurve(points, as_tuple, problem.n, approx))
    exact = svm.leave_one_out(problem.K, problem.y_sites, counts=counts, solution=d0).error
    return SVMTheoryCurve(points, as_tuple, problem.n, approx, exact)


@dataclass(frozen=True)
class SVMCurvePoint:
    """Efron's bootstrap classification error (eq. 6) at one S/N from Monte-Carlo, with its standard error."""

    s_over_n: float
    mc_mean: float
    mc_se: float
    mc_samples: int


@dataclass(frozen=True)
class SVMCurveMC:
    """Monte-Carlo points of the learning curve computed so far, in the order of ``grid``."""

    points: tuple[SVMCurvePoint, ...]
    grid: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid)


def mc_curve(problem: SVMProblem, s_over_n: Sequence[float], mc_samples: int, *, rng: SeedLike = None,
             executor: Executor | None = None, hooks: Hooks | None = None) -> SVMCurveMC:
    """Efron's estimator (eq. 6) at every S/N of the grid, all S at once, each sample's SVM warm-started from
    the SVM on D0 (:func:`svm.bootstrap_learning_curve`, samples keyed by S/N).

    Parameters
    ----------
    problem, s_over_n, mc_samples, rng, executor
        As in :func:`svm_learning_curve`.
    hooks : Hooks, optional
        Progress and cancellation; ``publish`` gets the :class:`SVMCurveMC` so far whenever one more S is
        complete.

    Returns
    -------
    SVMCurveMC
        One :class:`SVMCurvePoint` per S/N, in the order of the grid.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = mc_curve_grid(s_over_n, mc_samples, per="data row")
    hooks = hooks or NO_HOOKS
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    S_values, as_tuple = problem.sample_size(grid), tuple(grid.tolist())
    by_size = dict(zip(S_values.tolist(), as_tuple))

    def as_points(curve) -> SVMCurveMC:
        return SVMCurveMC(tuple(SVMCurvePoint(float(by_size[S]), float(value), float(se), mc_samples)
                                for S, value, se in zip(curve.s_values.tolist(), curve.value, curve.se)), as_tuple)

    curve = svm.bootstrap_learning_curve(
        problem.K, problem.y_sites, S_values, mc_samples, row_site=problem.sites.row_site, rng=rng, init=d0,
        executor=executor, hooks=hooks.publishing(as_points))
    return as_points(curve)
