"""Test losses g(f, y) for bootstrap generalization errors, eqs. (17) and (46) of [MO03].

Every loss is a vectorised function ``g(f, y) -> ndarray`` of the prediction ``f`` and the target
``y`` (any broadcastable shapes), so that Efron's estimator can evaluate it on a whole
(n_samples, N) array of bootstrap predictions at once.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from explorer.validation import as_float as _as_float
from explorer.validation import show as _show

Loss = Callable[[np.ndarray, np.ndarray], np.ndarray]

__all__ = ["Loss", "square_loss", "eps_insensitive_loss", "get_loss", "LOSSES"]


def square_loss(f: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Square loss g(f, y) = (f - y)^2, the test error of eqs. (17) and (45) of [MO03].

    Parameters
    ----------
    f, y : array_like
        Predictions and targets, broadcastable against each other.

    Returns
    -------
    ndarray
        (f - y)^2, of the broadcast shape of ``f`` and ``y``.
    """
    return np.square(np.subtract(f, y))


def eps_insensitive_loss(f: ArrayLike, y: ArrayLike, eps: float = 0.1,
                         beta: float = 0.1) -> np.ndarray:
    """Smoothed epsilon-insensitive loss, the equation after eq. (46) of [MO03].

    With delta = f - y::

        g = 0                                            |delta| <= (1 - beta) eps
        g = (|delta| - (1 - beta) eps)^2 / (4 beta eps)     (1 - beta) eps <= |delta| <= (1 + beta) eps
        g = |delta| - eps                                |delta| >= (1 + beta) eps

    The quadratic piece joins the two linear pieces with matching value and slope. The paper's
    Fig. 1 uses eps = beta = 0.1 (the defaults).

    Parameters
    ----------
    f, y : array_like
        Predictions and targets, broadcastable against each other.
    eps : float
        Half-width of the insensitive tube, > 0.
    beta : float
        Relative half-width of the quadratic smoothing zone, 0 < beta <= 1.

    Returns
    -------
    ndarray
        g(f, y), of the broadcast shape of ``f`` and ``y``.

    Raises
    ------
    ValueError
        If ``eps`` is not positive and finite or ``beta`` is not in (0, 1].
    """
    eps, beta = _eps_insensitive_iv(eps, beta)
    a = np.abs(np.subtract(f, y))
    lo, hi = (1.0 - beta) * eps, (1.0 + beta) * eps
    quadratic = np.square(np.maximum(a - lo, 0.0)) / (4.0 * beta * eps)
    return np.where(a >= hi, a - eps, quadratic)


def _eps_insensitive_iv(eps: float, beta: float) -> tuple[float, float]:
    eps_f, beta_f = _as_float(eps), _as_float(beta)
    if not (np.isfinite(eps_f) and eps_f > 0):
        raise ValueError(f"`eps` must be a positive finite number, got {_show(eps)}. "
                         "It is the half-width of the insensitive tube ([MO03] uses 0.1).")
    if not 0 < beta_f <= 1:
        raise ValueError(f"`beta` must lie in (0, 1], got {_show(beta)}. It is the relative width "
                         "of the quadratic zone around |f - y| = eps ([MO03] uses 0.1).")
    return eps_f, beta_f


LOSSES: dict[str, Loss] = {"square": square_loss, "eps-insensitive": eps_insensitive_loss}


def get_loss(loss: str | Loss, **params: float) -> Loss:
    """Resolve a loss name (``"square"``, ``"eps-insensitive"``) or callable into ``g(f, y)``.

    ``params`` are bound to the loss (e.g. ``get_loss("eps-insensitive", eps=0.2, beta=0.05)``) and
    validated now, not at the first call. A callable is returned as is (with ``params`` bound).

    Parameters
    ----------
    loss : str or callable
        ``"square"`` or ``"eps-insensitive"`` (underscores and upper case accepted), or a callable
        ``g(f, y)``.
    **params : float
        Keyword arguments bound to the loss: none for ``"square"``, ``eps`` and ``beta`` for
        ``"eps-insensitive"``, anything the callable takes.

    Returns
    -------
    callable
        ``g(f, y) -> ndarray``.

    Raises
    ------
    ValueError
        If the name is unknown, ``params`` are given for the square loss, the eps-insensitive loss
        gets a parameter other than ``eps``/``beta``, or ``eps``/``beta`` are out of range.
    """
    if callable(loss):
        return functools.partial(loss, **params) if params else loss
    name = loss.replace("_", "-").lower() if isinstance(loss, str) else None
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {loss!r}; expected one of {sorted(LOSSES)} or a callable "
                         "g(f, y) returning an array of the broadcast shape of f and y.")
    if name == "square":
        if params:
            raise ValueError(f"The square loss takes no parameters, got {sorted(params)}. "
                             "Drop them, or use 'eps-insensitive' (eps, beta).")
        return square_loss
    unknown = set(params) - {"eps", "beta"}
    if unknown:
        raise ValueError(f"The eps-insensitive loss takes `eps` and `beta`, got {sorted(unknown)}.")
    _eps_insensitive_iv(params.get("eps", 0.1), params.get("beta", 0.1))
    return functools.partial(eps_insensitive_loss, **params)
