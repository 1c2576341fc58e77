"""The core's problem (:class:`~explorer.gp_bootstrap.problem.RegressionProblem`) for the scikit-learn estimator:
a kernel model dense or Nyström (:func:`~explorer.gp_bootstrap.problem.build_problem`), an explicit-feature model on
its features Φ (never an N×N matrix) up to :data:`~explorer.lowrank.MAX_RANK` of them."""
from __future__ import annotations

import numpy as np

from explorer.gp_bootstrap.problem import RegressionProblem, build_problem
from explorer.lowrank import MAX_RANK, given_features
from explorer.sklearn.estimators import TheoryModel

__all__ = ["kernel_problem", "model_problem"]


def kernel_problem(X: np.ndarray, y: np.ndarray, kernel, noise_var: float, rank: int | None,
                   rng: np.random.Generator) -> RegressionProblem:
    """K = k(X, X) (``rank`` None) or Nyström features of rank m; a scikit-learn kernel is called k(X) and k(X, Y)
    as the core calls its kernels."""
    return build_problem("scikit-learn", X, y, kernel, noise_var, rank=rank, rng=rng)


def model_problem(X: np.ndarray, y: np.ndarray, model: TheoryModel, rank: int | None, rng: np.random.Generator
                  ) -> RegressionProblem:
    """An estimator's model: its features Φ when there are at most MAX_RANK of them (O(N m²)), else the kernel
    φ(x)ᵀφ(x') or the estimator's kernel (dense, or Nyström with ``rank``). ``y`` as the theory sees it; X the inputs
    the model was built on (its ``training_features`` are theirs)."""
    if model.features is None:
        return kernel_problem(X, y, model.kernel, model.noise_var, rank, rng)
    phi = model.features(X) if model.training_features is None else model.training_features
    if phi.shape[1] <= MAX_RANK:
        return build_problem("scikit-learn", X, y, None, model.noise_var, features=given_features(phi))

    def linear(A, B=None):
        return model.features(A) @ model.features(A if B is None else B).T

    return kernel_problem(X, y, linear, model.noise_var, rank, rng)
