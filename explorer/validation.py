"""Input validation shared by the core: one message style (what was expected, what arrived, what to do).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_float", "show", "finite", "positive_int", "positive_S"]


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
    """Check the mean bootstrap sample size S of eq. (11) of seed 000.

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
