"""Input validation shared by the core: one message style (what was expected, what arrived, what to do).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_float", "show", "finite", "positive_int", "positive_S"]


def as_float(x: object) -> float:
    """A real scalar as float, NaN for anything else (so that the range checks reject it)."""
    return float(x) if isinstance(x, numbers.Real) and not isinstance(x, bool) else np.nan


def show(x: object) -> str:
    """A user value for an error message: numbers as printed (-1.0, not np.float64(-1.0))."""
    return str(x) if isinstance(x, numbers.Number) else repr(x)


def finite(a: np.ndarray, name: str, hint: str) -> None:
    if not np.all(np.isfinite(a)):
        raise ValueError(f"`{name}` must be finite, got {np.size(a) - np.isfinite(a).sum()} "
                         f"NaN or infinite entries. {hint}")


def positive_int(value, name: str, meaning: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {show(value)}. {meaning}")
    return int(value)


def positive_S(S) -> float:
    S_f = as_float(S)
    if not (np.isfinite(S_f) and S_f > 0):
        raise ValueError(f"`S` must be positive and finite, got {show(S)}. S is the mean "
                         "bootstrap sample size (eq. 11); S = N is the classical bootstrap.")
    return S_f
