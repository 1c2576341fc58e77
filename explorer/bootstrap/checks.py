"""The inputs of a replica problem of [MO03], validated once with one message per rule: the kernel (a dense matrix, features
Φ or a kernel operator), the targets, the noise variance σ² and the mean bootstrap sample size S.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from explorer.operators import KernelOperator, as_operator
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel
from explorer.validation import finite, noise_variance

if TYPE_CHECKING:  # the solvers import this module; their results appear here in annotations only
    from explorer.bootstrap.replica import ReplicaSolution
    from explorer.bootstrap.replica_means import ReplicaMeans

__all__ = ['check_targets', 'check_replica_inputs', 'check_replica_problem', 'check_lowrank_inputs', 'check_noise_and_sample_size',
           'check_finite_solution']


def check_targets(y, operator: KernelOperator) -> np.ndarray:
    """The targets y as a finite float array of one value per training input of ``operator``; else a ValueError
    saying which and what to pass — the one check of the targets of every GP-regression computation."""
    y = np.asarray(y, dtype=float)
    if y.shape != (operator.n,):
        raise ValueError(f"`y` must have shape ({operator.n},) to match {operator.refit_operand()}, got shape "
                         f"{y.shape}. Pass one target per training input.")
    finite(y, "y", "Remove or impute missing targets.")
    return y


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
    op = DenseKernel.of(K)
    y = check_targets(y, op)
    return op.K, y, *check_noise_and_sample_size(noise_var, S)


def check_replica_problem(K, y, noise_var: float, S: float) -> tuple[KernelOperator, np.ndarray, float, float]:
    """Validated ``(operator, y, noise_var, S)`` of a replica problem, whatever holds its kernel.

    Parameters
    ----------
    K : KernelOperator, LowRankFeatures or array_like of shape (N, N)
        The prior covariance of the training inputs, as :func:`~explorer.operators.as_operator` takes it (and
        validates it): an operator as it is, features as K = ΦΦᵀ, an array as the dense kernel matrix.
    y, noise_var, S
        As in :func:`check_replica_inputs`.

    Returns
    -------
    tuple
        The kernel operator, ``y`` as a float array, ``noise_var`` and ``S`` as floats.

    Raises
    ------
    ValueError
        If a shape or a value is wrong; the message says which.
    """
    op = as_operator(K)
    y = check_targets(y, op)
    return op, y, *check_noise_and_sample_size(noise_var, S)


def check_lowrank_inputs(phi, y, noise_var: float, S: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validated ``(phi, y, noise_var, S)`` of a replica problem on features (K = ΦΦᵀ).

    Parameters
    ----------
    phi : array_like of shape (N, m), or LowRankFeatures
        Feature matrix Φ of the kernel K = ΦΦᵀ (its ``.phi`` for :class:`~explorer.lowrank.LowRankFeatures`).
    y, noise_var, S
        As in :func:`check_replica_inputs`, one target per row of Φ.

    Returns
    -------
    tuple
        Φ and ``y`` as float ndarrays, ``noise_var`` and ``S`` as floats.

    Raises
    ------
    ValueError
        If a shape or a value is wrong; the message says which.
    """
    op, y, noise_var, S = check_replica_problem(FeatureKernel.of(phi), y, noise_var, S)
    return op.phi, y, noise_var, S


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
    noise_var = noise_variance(noise_var)
    if not (np.isfinite(S) and S > 0):
        raise ValueError(f"`S` must be positive, got {S}. S is the mean bootstrap sample size.")
    return float(noise_var), float(S)


def check_finite_solution(sol: ReplicaSolution | ReplicaMeans) -> None:
    """Raise FloatingPointError if a site parameter of ``sol`` (a ReplicaSolution or ReplicaMeans: those of its fields
    it has) is not finite (a degenerate kernel matrix)."""
    for name in ("dl", "dl_c", "gam", "gam_c", "lam", "lam_c", "m"):
        if hasattr(sol, name) and not np.all(np.isfinite(getattr(sol, name))):
            raise FloatingPointError(f"The replica solution has non-finite {name}; K may be degenerate.")
