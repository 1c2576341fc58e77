r"""The Bayesian evidence as a model-selection criterion, and the value every criterion returns ([Fis16]).

:class:`CriterionValue` is what each criterion of :mod:`explorer.model_selection.criterion` returns (lower is
better, with its gradient w.r.t. the log hyperparameters ``np.append(kernel.theta, log noise_var)``);
:func:`negative_log_evidence` is −log N(y | 0, K_y), eq. (2.11) of [Fis16].

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer import regression
from explorer.kernels import Kernel

__all__ = ["CriterionValue", "as_criterion_value", "negative_log_evidence"]


@dataclass(frozen=True, eq=False)
class CriterionValue:
    """One evaluation of a criterion.

    Attributes
    ----------
    criterion : str
        One of ``CRITERIA``.
    value : float
        The criterion, lower is better (nats for evidence and ASC; per case for LOO; per fold for K-fold).
    gradient : ndarray of shape (p + 1,) or None
        w.r.t. ``np.append(kernel.theta, log noise_var)``.
    n_excluded : int
        ASC partitions left out because a matrix could not be factorised (§4.4.2); 0 otherwise.
    betas : ndarray of shape (J,) or None
        β* of each ASC partition (Boltzmann), 1 (β-noise); None for the other criteria.
    """

    criterion: str
    value: float
    gradient: np.ndarray | None
    n_excluded: int = 0
    betas: np.ndarray | None = None


def negative_log_evidence(kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
    """R_ME = −log N(y | 0, K_y), eq. (2.11) of [Fis16], via :func:`regression.log_evidence`.

    Parameters
    ----------
    kernel : Kernel
        Prior covariance k; K_y = k(X, X) + σ² I.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float
        σ² >= 0 (> 0 with ``eval_gradient``).
    eval_gradient : bool, optional
        Also compute the gradient w.r.t. ``np.append(kernel.theta, log noise_var)``.

    Returns
    -------
    CriterionValue
        ``criterion="evidence"``, the value in nats and the gradient of shape (p + 1,) (or None).

    Raises
    ------
    TypeError, ValueError, CholeskyError, FloatingPointError
        As :func:`explorer.regression.log_evidence`.
    """
    return as_criterion_value("evidence", -1.0, regression.log_evidence(kernel, X, y, noise_var, eval_gradient))


def as_criterion_value(name: str, sign: float, out) -> CriterionValue:
    """``sign`` times a :mod:`explorer.regression` result, ``value`` or ``(value, gradient)``.

    Parameters
    ----------
    name : str
        The criterion's name, one of ``CRITERIA``.
    sign : float
        +1 or −1: a criterion is lower-is-better, a log likelihood higher-is-better.
    out : float or (float, ndarray of shape (p + 1,))
        The value, or the value and its gradient w.r.t. the log hyperparameters.

    Returns
    -------
    CriterionValue
    """
    value, grad = out if isinstance(out, tuple) else (out, None)
    return CriterionValue(name, sign * value, None if grad is None else sign * grad)
