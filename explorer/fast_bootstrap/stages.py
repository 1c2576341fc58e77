"""The stages of [LSWV05]'s comparison that the CLI and the app both call, besides the bootstraps themselves.

:func:`replica_optimism` the replica theory's bootstrap optimism of the LS-SVM along γ ([MO03], no refits), at the
values :func:`replica_grid` picks; :func:`estimated_seconds` how long the full bootstrap or the replica theory will
take (:data:`CALIBRATION`), which the app reads before it starts a job by itself and the CLI before a long run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.replica import ConvergenceError, bootstrap_optimism, solve_replica
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap.lssvm import LSSVM
from explorer.fast_bootstrap.problem import Setting
from explorer.kernels import Constant
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["BIAS_VARIANCE", "ReplicaOptimism", "replica_optimism", "replica_grid", "CALIBRATION",
           "estimated_seconds"]


#: Prior variance of the constant kernel that stands in for the LS-SVM's unregularised bias b in the
#: replica theory (b ~ N(0, c); the shrinkage of b is ≈ 1/(1 + c N γ), below 1e-5 here).
BIAS_VARIANCE = 100.0


@dataclass(frozen=True)
class ReplicaOptimism:
    """The replica theory's bootstrap optimism of the LS-SVM along γ (no refits); arrays of shape (G,)."""

    grid: np.ndarray
    validation_error: np.ndarray  # E^{A,I}, bootstrap average of eq. (4)
    training_error: np.ndarray  # E^{A,A}, bootstrap average of eq. (3)
    converged: np.ndarray

    @property
    def optimism(self) -> np.ndarray:
        return self.validation_error - self.training_error


def replica_optimism(model: LSSVM, X: np.ndarray, y: np.ndarray, grid: np.ndarray, *, tol: float = 1e-3,
                     hooks: Hooks | None = None) -> ReplicaOptimism:
    """Bootstrap optimism of the LS-SVM for every γ of ``grid`` from the replica/ADATAP theory of [MO03].

    The LS-SVM is the posterior mean of a GP with covariance k and noise variance σ² = 1/γ; its bias b is
    the GP's constant kernel of variance BIAS_VARIANCE (y centred) in the limit of a flat prior. Bootstrap
    samples of size S = N (Poisson occupations). Solutions are warm-started along the grid. ``hooks``:
    ``check`` before and ``report`` after every γ.

    Parameters
    ----------
    model : LSSVM
        The family (its kernel and ``bias``).
    X : ndarray of shape (N, d)
        Prepared inputs.
    y : ndarray of shape (N,)
        Prepared targets.
    grid : ndarray of shape (G,)
        Values of γ, strictly increasing.
    tol : float
        Tolerance of the ADATAP solves (a failed single-precision solve is redone in double precision).
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    ReplicaOptimism
        E^{A,I} and E^{A,A} (bootstrap averages of eqs. 4 and 3) and convergence at every γ.
    """
    grid = fastboot.check_grid(grid)
    K = model.kernel(X) + (Constant(BIAS_VARIANCE)(X) if model.bias else 0.0)
    yc = y - y.mean() if model.bias else y
    rows, previous = [], None
    hooks = hooks or NO_HOOKS
    for k, gamma in enumerate(grid):
        hooks.check(k, grid.size, "values of γ")
        previous = _replica_solution(K, yc, 1.0 / gamma, y.size, tol, previous)
        errors = bootstrap_optimism(previous)
        rows.append((errors.validation, errors.training, previous.converged))
        hooks.step(k + 1, grid.size, "values of γ", "replica theory")
    v, t, ok = (np.array(c) for c in zip(*rows))
    return ReplicaOptimism(grid=grid, validation_error=v, training_error=t, converged=ok.astype(bool))


def _replica_solution(K, y, noise_var, S, tol, init):
    try:
        return solve_replica(K, y, noise_var, S, tol=tol, init=init)
    except ConvergenceError:  # single-precision phase broke down: redo in double precision
        return solve_replica(K, y, noise_var, S, tol=tol, init=None, precision="double")


def replica_grid(grid: np.ndarray, points: int) -> np.ndarray:
    """The values of γ of the replica theory in :func:`compare_bootstraps`: ``points`` evenly spaced indices
    of ``grid`` (all of it when it is shorter).

    Parameters
    ----------
    grid : ndarray of shape (G,)
        The full grid of γ.
    points : int
        How many values to keep.

    Returns
    -------
    ndarray of shape (min(points, G),)
        A subset of ``grid`` including its ends (for ``points`` ≥ 2), in order.
    """
    return grid[np.unique(np.linspace(0, grid.size - 1, min(points, grid.size)).round().astype(int))]


#: Seconds on one unloaded core (one BLAS thread) of the toy data at Table 1, N = 200, which
#: :func:`estimated_seconds` scales: an LS-SVM bootstrap replication (one eigendecomposition gives the whole
#: γ path), an RBFN / MLP network per (data point × unit) (MLP: 200 epochs, 3 restarts), the replica theory
#: at one γ.
CALIBRATION = {"ls-svm": 0.006, "rbfn": 1.3e-6, "mlp": 8e-5, "replica": 0.045}


def estimated_seconds(kind: str, model: str, n: int, setting: Setting, options: dict | None = None,
                      points: int = 46) -> float:
    """Rough duration on one unloaded core of the ``"full"`` bootstrap or of the ``"replica"`` theory.

    LS-SVM: one eigendecomposition per replication, ∝ J·N²; RBFN and MLP: one network per complexity and
    replication, ∝ J·N·Σq (MLP also ∝ epochs × restarts); replica theory: ∝ points·N³. Constants:
    :data:`CALIBRATION`. A guide for starting jobs by themselves (the app), not a promise.

    Parameters
    ----------
    kind : {"full", "replica"}
    model : str
        One of :data:`MODELS`.
    n : int
        Number of data points N.
    setting : Setting
        Grids and replication counts (``full_replications`` and the full grid are used).
    options : dict, optional
        Model options (MLP: ``max_epochs``, ``n_init``).
    points : int
        Values of γ of the replica theory.

    Returns
    -------
    float
        Estimated seconds.
    """
    if kind == "replica":
        return CALIBRATION["replica"] * points * (n / 200) ** 3
    J = setting.full_replications
    if model == "ls-svm":
        return CALIBRATION["ls-svm"] * J * (n / 200) ** 2
    units = J * n * float(setting.grids().full.sum())
    if model == "rbfn":
        return CALIBRATION["rbfn"] * units
    options = options or {}
    return CALIBRATION["mlp"] * units * options.get("max_epochs", 200) / 200 * options.get("n_init", 3) / 3
