"""The Monte-Carlo of a problem on its kernel operator (to be replaced by the one Monte-Carlo module). Core module."""
from __future__ import annotations

from explorer.gp_bootstrap import montecarlo, montecarlo_lowrank
from explorer.gp_bootstrap.problems import RegressionProblem

__all__ = ["predictions", "mc_learning_curve"]


def predictions(problem: RegressionProblem, S: float, n_samples: int, *, X_test=None, **options):
    """Monte-Carlo predictions of ``n_samples`` refits (``montecarlo.bootstrap_predictions``)."""
    cross = None if X_test is None else problem.cross(X_test)
    if problem.low_rank:
        return montecarlo_lowrank.bootstrap_predictions_lowrank(problem.phi, problem.y, problem.noise_var, S,
                                                                n_samples, phi_test=cross, **options)
    return montecarlo.bootstrap_predictions(problem.K, problem.y, problem.noise_var, S, n_samples, K_test=cross,
                                            **options)


def mc_learning_curve(problem: RegressionProblem, S_values, n_samples: int, **options):
    """Efron's Monte-Carlo estimator along a grid of S (``montecarlo.bootstrap_learning_curve``)."""
    curve = (montecarlo_lowrank.bootstrap_learning_curve_lowrank if problem.low_rank
             else montecarlo.bootstrap_learning_curve)
    return curve(problem.phi if problem.low_rank else problem.K, problem.y, problem.noise_var, S_values, n_samples,
                 **options)
