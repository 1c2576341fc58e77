"""Input validation shared by the core: one message style (what was expected, what arrived, what to do).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

__all__ = ["as_float", "show", "finite", "positive_int", "positive_S", "noise_variance", "s_over_n_grid", "mc_curve_grid",
           "sample_sizes", "held_out_inputs", "s_over_n_value", "holdout_iv"]


def as_float(x: object) -> float:
    """A real scalar as float, NaN for anything else (so that the range checks reject it).

    Parameters
    ----------
    x : object
        A user value; ``bool`` is not accepted as a real number.

    Returns
    -------
    float
        ``float(x)`` for a real number, ``nan`` otherwise.
    """
    return float(x) if isinstance(x, numbers.Real) and not isinstance(x, bool) else np.nan


def show(x: object) -> str:
    """A user value for an error message: numbers as printed (-1.0, not np.float64(-1.0)).

    Parameters
    ----------
    x : object
        The value to show.

    Returns
    -------
    str
        ``str(x)`` for a number, ``repr(x)`` for anything else.
    """
    return str(x) if isinstance(x, numbers.Number) else repr(x)


def finite(a: np.ndarray, name: str, hint: str) -> None:
    """Check that every entry of an array is finite.

    Parameters
    ----------
    a : array_like
        The values to check (any shape).
    name : str
        Name of the argument, for the message.
    hint : str
        What the argument is or what to do, appended to the message.

    Raises
    ------
    ValueError
        If ``a`` has a NaN or infinite entry; the message counts them.
    """
    if not np.all(np.isfinite(a)):
        raise ValueError(f"`{name}` must be finite, got {np.size(a) - np.isfinite(a).sum()} "
                         f"NaN or infinite entries. {hint}")


def positive_int(value, name: str, meaning: str) -> int:
    """Check that a value is a positive integer (``bool`` is rejected).

    Parameters
    ----------
    value : object
        The user value; a Python or numpy integer >= 1.
    name : str
        Name of the argument, for the message.
    meaning : str
        What the argument is, appended to the message.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer, is a bool, or is < 1.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {show(value)}. {meaning}")
    return int(value)


def positive_S(S) -> float:
    """Check the mean bootstrap sample size S of eq. (11) of [MO03].

    Parameters
    ----------
    S : float
        Mean bootstrap sample size; a positive finite real number (S = N is the classical bootstrap).

    Returns
    -------
    float
        ``S`` as float.

    Raises
    ------
    ValueError
        If ``S`` is not a real number, not finite, or not > 0.
    """
    S_f = as_float(S)
    if not (np.isfinite(S_f) and S_f > 0):
        raise ValueError(f"`S` must be positive and finite, got {show(S)}. S is the mean "
                         "bootstrap sample size (eq. 11); S = N is the classical bootstrap.")
    return S_f


def noise_variance(noise_var) -> float:
    """Check the noise variance σ² of the GP ([MO03] eq. 50): the one rule, with the one message, every computation uses.

    Parameters
    ----------
    noise_var : float
        σ², a positive finite real number.

    Returns
    -------
    float
        ``noise_var`` as float.

    Raises
    ------
    ValueError
        If ``noise_var`` is not a real number, not finite, or not > 0.
    """
    value = as_float(noise_var)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"`noise_var` must be a positive finite number, got {show(noise_var)}. It is the noise "
                         "variance σ².")
    return value


def s_over_n_grid(s_over_n: Sequence[float], per: str = "data point") -> np.ndarray:
    """Bootstrap sizes S/N as an ndarray of shape (k,), k >= 1, every one positive and finite.

    ``per`` names what N counts in the message ("data point", "data row").
    """
    grid = np.atleast_1d(np.asarray(s_over_n, dtype=float))
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"`s_over_n` must be positive numbers (S/N, the bootstrap size per {per}), "
                         f"got {np.atleast_1d(s_over_n).tolist()}.")
    return grid


def s_over_n_value(s_over_n: float, per: str = "data point") -> float:
    """One bootstrap size S/N as a float, checked as :func:`s_over_n_grid` checks a grid (``per`` as there)."""
    return float(s_over_n_grid([s_over_n], per)[0])


def mc_curve_grid(s_over_n: Sequence[float], mc_samples: int, per: str = "data point") -> np.ndarray:
    """The S/N grid of a Monte-Carlo learning curve (:func:`s_over_n_grid`), with ``mc_samples`` >= 1 checked.

    Parameters
    ----------
    s_over_n : sequence of float
        Bootstrap sizes S/N, positive and finite.
    mc_samples : int
        Monte-Carlo bootstrap samples per S.
    per : str, optional
        What N counts, for the message ("data point", "data row").

    Returns
    -------
    ndarray of shape (k,)

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = s_over_n_grid(s_over_n, per)
    if mc_samples < 1:
        raise ValueError(f"`mc_samples` must be at least 1, got {mc_samples}.")
    return grid


def sample_sizes(S_values) -> np.ndarray:
    """Bootstrap sample sizes S of a learning curve as an ndarray of shape (k,), k >= 1 (values unchecked)."""
    S_arr = np.atleast_1d(np.asarray(S_values, dtype=float))
    if S_arr.ndim != 1 or S_arr.size == 0:
        raise ValueError(f"`S_values` must be a non-empty 1-D sequence of sample sizes, got shape "
                         f"{np.shape(S_values)}.")
    return S_arr


def held_out_inputs(X_test, default: np.ndarray | None) -> np.ndarray:
    """``X_test`` as an ndarray of shape (M, d), or ``default`` (a problem's held-out inputs) when it is None.

    ``default`` is returned as it is (the same object), so that a caller can tell it was used.
    """
    X = default if X_test is None else np.atleast_2d(np.asarray(X_test, dtype=float))
    if X is None or len(X) == 0:
        raise ValueError("No test inputs: build the problem with `holdout` > 0 or pass `X_test`.")
    return X


def holdout_iv(X_test, default: np.ndarray | None, s_over_n: float, per: str = "data point"
               ) -> tuple[np.ndarray, float]:
    """Input validation of a comparison at held-out inputs: the inputs, then the bootstrap size.

    Parameters
    ----------
    X_test : array_like of shape (M, d) or None
        Test inputs; None takes ``default``.
    default : ndarray of shape (M, d) or None
        The problem's held-out inputs (returned as the same object, see :func:`held_out_inputs`).
    s_over_n, per
        As in :func:`s_over_n_value`.

    Returns
    -------
    tuple of (ndarray of shape (M, d), float)
        The test inputs and S/N.

    Raises
    ------
    ValueError
        If there are no test inputs or ``s_over_n`` is not a positive finite number.
    """
    return held_out_inputs(X_test, default), s_over_n_value(s_over_n, per)
