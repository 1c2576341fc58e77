"""What the scikit-learn front door returns besides arrays, and the small checks of its parameters."""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["BootstrapLearningCurve", "is_real", "is_integer", "generator", "seed_of"]


@dataclass(frozen=True)
class BootstrapLearningCurve:
    """Efron's bootstrap test error ε(S) along a grid of S/N: the theory (eq. 45) and, if asked, Monte-Carlo (eq. 17).

    Attributes
    ----------
    s_over_n : ndarray of shape (n_S,)
        The grid S/N, in the order given.
    theory : ndarray of shape (n_S,)
        ε(S) of the ADATAP theory, eq. (45).
    monte_carlo : ndarray of shape (n_S,) or None
        Efron's estimator on ``mc_samples`` refits per S (eq. 17), None if not asked.
    standard_error : ndarray of shape (n_S,) or None
        Its Monte-Carlo standard error (delta method).
    mc_samples : int or None
        Bootstrap samples per S of the Monte-Carlo.
    """

    s_over_n: np.ndarray
    theory: np.ndarray
    monte_carlo: np.ndarray | None = None
    standard_error: np.ndarray | None = None
    mc_samples: int | None = None


def is_real(value) -> bool:
    """Whether ``value`` is a finite real number (not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and bool(np.isfinite(value))


def is_integer(value) -> bool:
    """Whether ``value`` is an integer (not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def generator(random_state) -> np.random.Generator:
    """A numpy Generator from a scikit-learn ``random_state`` (int, RandomState or None)."""
    return np.random.default_rng(seed_of(random_state))


def seed_of(random_state) -> int | None:
    """An int seed from a scikit-learn ``random_state``: the int itself, one drawn from a RandomState, or None."""
    if random_state is None or is_integer(random_state):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
