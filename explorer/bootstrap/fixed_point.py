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

__all__ = ["fixed_point_map", "with_hooks", "anderson_iteration", "warm_started", "delta_lambda"]

_Solution = TypeVar("_Solution")


def anderson_iteration(step, x0: np.ndarray, tol: float, max_iter: int, memory: int = 5, discard=None):
    """Anderson-accelerated fixed-point iteration on x; returns (x, n_iter, residual, converged).

    The residual is max abs(F(x) − x), i.e. the largest relative change of Δλ when x = log Δλ. On
    convergence the returned x is the last point at which F was evaluated (so G is known there).
    A safeguard falls back to the plain step when the accelerated residual grows. ``discard()``, if given, is
    called when an evaluated point is not accepted (what ``step`` remembered there will not be needed).

    The mixing takes the last ``memory`` differences ΔX, ΔF of the iterates and of their residuals r = F(x) − x and
    steps by r − (ΔX + ΔF)γ, γ the least-squares solution of ΔF γ ≈ r, found from the ``memory``×``memory`` normal
    equations ΔFᵀΔF γ = ΔFᵀr (a pseudo-inverse that drops directions below round-off). The N-vectors it keeps while F
    is evaluated are x, the last residual and 2·``memory`` − 1 differences (the step just taken is the newest ΔX; the
    oldest pair, which the next mixing would not use, is dropped before), and it forms the next ones in place — no
    stacked copy of the history: where N is large (rows in chunks on a cluster) the N-vectors are the memory.
    """
    x = x0
    dX: list[np.ndarray] = []  # x_{j+1} − x_j, oldest first; while F is evaluated, the last is the step just taken
    dF: list[np.ndarray] = []  # r_{j+1} − r_j, its partner, oldest first
    r_last = None
    residual, best = np.inf, np.inf
    for it in range(1, max_iter + 1):
        fx = step(x)
        residual = _largest_difference(fx, x)
        if residual < tol:
            return x, it, residual, True
        if discard is not None:
            discard()
        restart = residual > 2 * best  # acceleration went astray: restart from a plain step
        best = min(best, residual)
        if restart or r_last is None:  # a plain step: x ← F(x)
            dX, dF = [], []
            r = fx - x
            step_taken, x = r.copy(), fx
        else:
            r = np.subtract(fx, x, out=fx)
            del fx
            dF.append(np.subtract(r, r_last, out=r_last))
            gram = np.array([[np.dot(a, b) for b in dF] for a in dF])
            coef, *_ = np.linalg.lstsq(gram, np.array([np.dot(a, r) for a in dF]), rcond=None)
            step_taken = r.copy()  # r − (ΔX + ΔF)γ
            for c, a, b in zip(coef, dX, dF):
                _subtract_multiple(step_taken, c, a)
                _subtract_multiple(step_taken, c, b)
            if x is x0:  # never the caller's array
                x = x.copy()
            x += step_taken
        if len(dF) == memory:  # the oldest pair: the next mixing takes the newest ``memory`` only
            del dX[0], dF[0]
        dX.append(step_taken)
        r_last = r
    return x, max_iter, residual, False


def _largest_difference(a: np.ndarray, b: np.ndarray, block: int = 65_536) -> float:
    """max |a − b|, a block of rows at a time (no temporary of size N)."""
    largest = 0.0
    for start in range(0, a.size, block):
        here = float(np.max(np.abs(a[start:start + block] - b[start:start + block])))
        if here != here:  # NaN, as np.max gives it: never below the tolerance
            return here
        largest = max(largest, here)
    return largest


def _subtract_multiple(out: np.ndarray, c: float, v: np.ndarray, block: int = 65_536) -> None:
    """out −= c·v in place, a block of rows at a time (no temporary of size N)."""
    for start in range(0, out.size, block):
        rows = slice(start, start + block)
        out[rows] -= c * v[rows]


def fixed_point_map(op: KernelOperator, p, noise_var, keep=None) -> Callable[[np.ndarray], np.ndarray]:
    """x = log Δλ ↦ log Δλ' by eq. (54) then eq. (55), in the operator's precision; ``keep`` remembers its factor."""

    def step(x: np.ndarray) -> np.ndarray:
        if keep is not None:
            keep.clear()  # what the last step remembered is superseded: not alive beside the new
        dl = np.exp(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # a G_ii that cancelled to 0 is refused just below
            dl_c = np.reciprocal(op.site_variances(dl, keep))  # eq. (54), in place: N-vectors are the memory
            dl_c -= dl
        if not np.all(np.isfinite(dl_c)) or np.any(dl_c <= 0):
            raise FloatingPointError("Δλ_c left the positive reals")
        del dl  # (``keep`` may hold it)
        fx = update_delta_lambda(dl_c, p, noise_var, out=dl_c)  # eq. (55), over Δλ_c
        return np.log(fx, out=fx)

    return step


def delta_lambda(x: np.ndarray, keep: dict) -> np.ndarray:
    """Δλ = exp(x): the array the last step of the iteration remembered in ``keep`` when it was taken at x (the
    converged iterate: the same numbers, one N-vector fewer), else exp(x) itself."""
    dl = np.exp(x)
    kept = keep.get("dl")
    return kept if kept is not None and np.array_equal(kept, dl) else dl


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

