"""Each computation of seed 000 on the path of its problem: the dense N×N kernel matrix or the low-rank ΦΦᵀ.

A :class:`~explorer.gp_bootstrap.problems.RegressionProblem` holds K and runs the dense functions
(:mod:`explorer.bootstrap.replica`, :mod:`~explorer.gp_bootstrap.montecarlo`, :mod:`~explorer.gp_bootstrap.linear_response`); a
:class:`~explorer.gp_bootstrap.problems.LowRankRegressionProblem` holds Φ and runs their O(N m²) counterparts
(:mod:`explorer.bootstrap.lowrank`, :mod:`~explorer.gp_bootstrap.montecarlo`, :mod:`~explorer.gp_bootstrap.linear_response_lowrank`) on the same model
quantities, so the stages and the comparisons are written once. VG and MF have no low-rank form here
(:func:`has_vg_mf`). Core module: numpy and scipy only.
"""
from __future__ import annotations

from explorer.bootstrap import lowrank, replica
from explorer.gp_bootstrap import (
    linear_response,
    linear_response_lowrank,
    montecarlo,
)
from explorer.gp_bootstrap.problems import LowRankRegressionProblem, RegressionProblem

__all__ = ["Problem", "IJ_EXACT_ROWS", "IJ_INPUTS", "is_low_rank", "has_vg_mf", "solve", "learning_curve", "approximate", "moments", "predictions",
           "mc_learning_curve", "loo_limit", "ij_error", "ij_moments", "low_rank_record"]

Problem = RegressionProblem | LowRankRegressionProblem
"""A problem of either path."""


def is_low_rank(problem: Problem) -> bool:
    """Whether ``problem`` runs the low-rank path (its kernel matrix is ΦΦᵀ, never formed)."""
    return isinstance(problem, LowRankRegressionProblem)


def has_vg_mf(problem: Problem) -> bool:
    """Whether the variational-Gaussian and mean-field approximations run on ``problem`` (dense path only)."""
    return not is_low_rank(problem)


def _matrix(problem: Problem):
    """The kernel operand of the path: Φ (N, m) or K (N, N)."""
    return problem.phi if is_low_rank(problem) else problem.K


def solve(problem: Problem, S: float, **options) -> replica.ReplicaSolution:
    """ADATAP at S (eqs. 54-59 of seed 000)."""
    solver = lowrank.solve_replica_lowrank if is_low_rank(problem) else replica.solve_replica
    return solver(_matrix(problem), problem.y, problem.noise_var, S, **options)


def learning_curve(problem: Problem, S_values, **options) -> list[replica.ReplicaSolution]:
    """ADATAP along a grid of S, warm-started."""
    curve = lowrank.replica_learning_curve_lowrank if is_low_rank(problem) else replica.replica_learning_curve
    return curve(_matrix(problem), problem.y, problem.noise_var, S_values, **options)


def approximate(problem: Problem, S: float) -> replica.ReplicaSolution:
    """The approximate ADATAP of seed 000 §5 at S."""
    solver = lowrank.approximate_replica_lowrank if is_low_rank(problem) else replica.approximate_replica
    return solver(_matrix(problem), problem.y, problem.noise_var, S)


def moments(problem: Problem, sol: replica.ReplicaSolution, X_test) -> replica.BootstrapMoments:
    """Bootstrap mean and variance of the predictor at test inputs, eq. (48)."""
    if is_low_rank(problem):
        return lowrank.bootstrap_moments_lowrank(sol, problem.phi, problem.cross(X_test))
    return replica.bootstrap_moments(sol, problem.K, problem.cross(X_test))


def predictions(problem: Problem, S: float, n_samples: int, *, X_test=None, **options):
    """Monte-Carlo predictions of ``n_samples`` refits (``montecarlo.bootstrap_predictions``)."""
    cross = None if X_test is None else problem.cross(X_test)
    if is_low_rank(problem):
        return montecarlo.bootstrap_predictions_lowrank(problem.phi, problem.y, problem.noise_var, S,
                                                                n_samples, phi_test=cross, **options)
    return montecarlo.bootstrap_predictions(problem.K, problem.y, problem.noise_var, S, n_samples, K_test=cross,
                                            **options)


def mc_learning_curve(problem: Problem, S_values, n_samples: int, **options):
    """Efron's Monte-Carlo estimator along a grid of S (``montecarlo.bootstrap_learning_curve``)."""
    curve = (montecarlo.bootstrap_learning_curve_lowrank if is_low_rank(problem)
             else montecarlo.bootstrap_learning_curve)
    return curve(_matrix(problem), problem.y, problem.noise_var, S_values, n_samples, **options)


def loo_limit(problem: Problem, S: float, **options) -> linear_response.LeaveOneOutLimit:
    """The closed-form leave-one-out error at noise σ²N/S, ε(S)'s S → ∞ limit."""
    limit = linear_response_lowrank.loo_limit_lowrank if is_low_rank(problem) else linear_response.loo_limit
    return limit(_matrix(problem), problem.y, problem.noise_var, S, **options)


#: Above this many rows the low-rank ε_IJ evaluates eq. (13) at :data:`IJ_INPUTS` inputs drawn at random (seed 0):
#: its quartic term costs O(N² m) over all inputs (268 s at N = 53,940 and m = 256), O(N m) per input.
IJ_EXACT_ROWS = 4_000
IJ_INPUTS = 2_000


def ij_error(problem: Problem, S: float) -> linear_response.LinearResponseError:
    """The infinitesimal-jackknife ε_IJ(S) (and ε_IJ2, the LOO limit) of one factorisation; on the low-rank path above
    :data:`IJ_EXACT_ROWS` rows an unbiased estimate from :data:`IJ_INPUTS` inputs (the LOO part exact)."""
    if is_low_rank(problem):
        inputs = None if problem.n <= IJ_EXACT_ROWS else IJ_INPUTS
        return linear_response_lowrank.linear_response_error_lowrank(problem.phi, problem.y, problem.noise_var, S,
                                                                     inputs=inputs, rng=0)
    return linear_response.linear_response_error(problem.K, problem.y, problem.noise_var, S)


def ij_moments(problem: Problem, S: float, X_test) -> linear_response.LinearResponseMoments:
    """The infinitesimal-jackknife bootstrap mean and variance at test inputs."""
    moments_of = (linear_response_lowrank.linear_response_moments_lowrank if is_low_rank(problem)
                  else linear_response.linear_response_moments)
    return moments_of(_matrix(problem), problem.y, problem.noise_var, S, problem.cross(X_test))


def low_rank_record(problem: Problem) -> dict | None:
    """What rebuilds ΦΦᵀ (method, rank, landmarks, jitter) for a low-rank problem's output, None for a dense one."""
    return problem.features.as_dict() if is_low_rank(problem) else None
