"""The inputs of a replica problem of [MO03], validated once with one message per rule: the kernel (a dense matrix, features
Φ or a kernel operator), the targets, the noise variance σ² and the mean bootstrap sample size S.

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np

from explorer.lowrank import LowRankFeatures
from explorer.operators import KernelOperator, as_operator
from explorer.operators.features import FeatureKernel, check_feature_matrix
from explorer.validation import noise_variance

__all__ = ['check_replica_inputs', 'check_replica_problem', 'check_lowrank_inputs', 'check_noise_and_sample_size']


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


def check_replica_problem(K, y, noise_var: float, S: float) -> tuple[KernelOperator, np.ndarray, float, float]:
    """Validated ``(operator, y, noise_var, S)`` of a replica problem, whatever holds its kernel.

    Parameters
    ----------
    K : KernelOperator, LowRankFeatures or array_like of shape (N, N)
        The prior covariance of the training inputs: an operator as it is, features as K = ΦΦᵀ
        (:class:`~explorer.operators.features.FeatureKernel`), an array as the dense kernel matrix (validated by
        :func:`check_replica_inputs`).
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
    if isinstance(K, LowRankFeatures):
        phi, y, noise_var, S = check_lowrank_inputs(K, y, noise_var, S)
        return FeatureKernel(phi), y, noise_var, S
    if not isinstance(K, KernelOperator):
        K, y, noise_var, S = check_replica_inputs(K, y, noise_var, S)
        return as_operator(K), y, noise_var, S
    y = np.asarray(y, dtype=float)
    if y.shape != (K.n,):
        raise ValueError(f"`y` must have shape ({K.n},) to match the kernel, got {y.shape}. Pass one target per "
                         "training input.")
    if not np.all(np.isfinite(y)):
        raise ValueError("`y` must be finite; found NaN or inf. Clean the data first.")
    return K, y, *check_noise_and_sample_size(noise_var, S)


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
    phi = check_feature_matrix(phi)
    y = np.asarray(y, dtype=float)
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

