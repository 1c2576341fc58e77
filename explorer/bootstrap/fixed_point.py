"""The iteration of the ADATAP equations (54)-(55) of [MO03]: the fixed-point map x = log Δλ ↦ log Δλ' on any kernel
operator, Anderson acceleration, progress hooks, and warm starts along a grid of S (shared with VG and the SVM theory).

Core module: numpy only.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np

from explorer.bootstrap.occupations import update_delta_lambda
from explorer.operators import KernelOperator
from explorer.progress import Hooks

__all__ = ["fixed_point_map", "with_hooks", "anderson_iteration", "warm_started"]

_Solution = TypeVar("_Solution")


def anderson_iteration(step, x0: np.ndarray, tol: float, max_iter: int, memory: int = 5):
    """Anderson-accelerated fixed-point iteration on x; returns (x, n_iter, residual, converged).

    The residual is max abs(F(x) − x), i.e. the largest relative change of Δλ when x = log Δλ. On
    convergence the returned x is the last point at which F was evaluated (so G is known there).
    A safeguard falls back to the plain step when the accelerated residual grows.
    """
    x = x0
    X_hist, F_hist = [], []
    residual, best = np.inf, np.inf
    for it in range(1, max_iter + 1):
        fx = step(x)
        r = fx - x
        residual = float(np.max(np.abs(r)))
        if residual < tol:
            return x, it, residual, True
        X_hist.append(x.copy())
        F_hist.append(r)
        if residual > 2 * best:  # acceleration went astray: restart from a plain step
            X_hist, F_hist = [x.copy()], [r]
        best = min(best, residual)
        X_hist, F_hist = X_hist[-(memory + 1):], F_hist[-(memory + 1):]
        if len(F_hist) > 1:
            dF = np.diff(np.array(F_hist), axis=0).T
            dX = np.diff(np.array(X_hist), axis=0).T
            coef, *_ = np.linalg.lstsq(dF, r, rcond=None)
            x = x + r - (dX + dF) @ coef
        else:
            x = fx
    return x, max_iter, residual, False


def fixed_point_map(op: KernelOperator, p, noise_var, keep=None) -> Callable[[np.ndarray], np.ndarray]:
    """x = log Δλ ↦ log Δλ' by eq. (54) then eq. (55), in the operator's precision; ``keep`` remembers its factor."""

    def step(x: np.ndarray) -> np.ndarray:
        dl = np.exp(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # a G_ii that cancelled to 0 is refused just below
            dl_c = 1.0 / op.site_variances(dl, keep) - dl  # eq. (54)
        if np.any(~np.isfinite(dl_c)) or np.any(dl_c <= 0):
            raise FloatingPointError("Δλ_c left the positive reals")
        return np.log(update_delta_lambda(dl_c, p, noise_var))  # eq. (55)

    return step


def with_hooks(step, hooks: Hooks, counter: Iterator[int], total: int):
    """``step`` that stops (``Cancelled``) before and reports progress after every evaluation of the map."""

    def checked(x: np.ndarray) -> np.ndarray:
        done = next(counter)
        hooks.check(done, total, "iterations")
        fx = step(x)
        hooks.step(done + 1, total, "iterations", "ADATAP")
        return fx

    return checked


def warm_started(solve: Callable[[float, object], _Solution], S_values) -> list[_Solution]:
    """``solve(S, init)`` at every S of ``S_values``, in ascending order of S, each warm-started from the
    solution at the previous S (``init`` None for the smallest); the solutions in the order of ``S_values``.

    Shared by the learning curves of ADATAP, VG (``variational``) and the SVM replica theory.
    """
    S_arr = np.atleast_1d(np.asarray(S_values, dtype=float))
    solutions: dict[int, _Solution] = {}
    previous = None
    for j in np.argsort(S_arr):
        previous = solve(float(S_arr[j]), previous)
        solutions[int(j)] = previous
    return [solutions[j] for j in range(S_arr.size)]

