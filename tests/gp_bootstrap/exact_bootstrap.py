"""Exact Poisson-bootstrap averages of GP regression on tiny problems, by enumerating occupation vectors.

Shared by the VG/MF tests: the truth the replica approximations are compared with. Each site's occupation
number s_i ~ Poisson(ν) is truncated at k_max, the smallest k with P(s_i > k) < ``tail`` (the weights
are renormalised), so the dropped probability mass is below N · tail. The predictor of every occupation
vector s uses the σ²/s identity of ``montecarlo`` in the symmetric form

    f(s) = K S^½ (σ² I + S^½ K S^½)⁻¹ S^½ y,      S = diag(s),

which is the duplicated-point refit (``montecarlo.refit_on_duplicates``, checked in the tests) and needs
no special case for s_i = 0.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class ExactBootstrap:
    """Exact (truncated) bootstrap averages: ε_i of eq. (17), mean and second moment of f_i (eq. 16)."""

    per_input: np.ndarray
    mean: np.ndarray
    second_moment: np.ndarray
    occupations: np.ndarray
    predictors: np.ndarray
    dropped_mass: float

    @property
    def error(self) -> float:
        return float(np.mean(self.per_input))


def predictors(K: np.ndarray, y: np.ndarray, noise_var: float, occupations: np.ndarray) -> np.ndarray:
    """f(s) for every row s of ``occupations`` (shape (B, N)), stacked solves."""
    r = np.sqrt(occupations)
    A = noise_var * np.eye(len(y)) + r[:, :, None] * K[None] * r[:, None, :]
    alpha = r * np.linalg.solve(A, (r * y)[..., None])[..., 0]
    return alpha @ K.T


def exact_bootstrap(K: np.ndarray, y: np.ndarray, noise_var: float, v: float,
                    tail: float = 1e-7) -> ExactBootstrap:
    """Enumerate all occupation vectors with s_i ≤ k_max (see module docstring); N ≤ 5 keeps it < 10⁶."""
    n = len(y)
    k_max = int(stats.poisson.isf(tail, v)) + 1
    p = stats.poisson.pmf(np.arange(k_max + 1), v)
    dropped = 1.0 - p.sum() ** n
    p = p / p.sum()
    occ = np.array(list(itertools.product(range(k_max + 1), repeat=n)))
    weight = np.prod(p[occ], axis=1)
    f = predictors(K, y, noise_var, occ)
    left_out = (occ == 0) * weight[:, None]
    per_input = (left_out * (f - y) ** 2).sum(axis=0) / left_out.sum(axis=0)  # eq. (17)
    return ExactBootstrap(per_input, weight @ f, weight @ f**2, occ, f, float(dropped))


def correlated_problem(rng: np.random.Generator, n: int, l2: float) -> tuple[np.ndarray, np.ndarray]:
    """RBF kernel on n random 2-D inputs (length scale² l2) and smooth noisy targets."""
    X = rng.normal(size=(n, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / l2)
    y = np.sin(X @ np.array([1.0, -0.7])) + 0.1 * rng.normal(size=n)
    return K, y
