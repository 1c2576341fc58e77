r"""A criterion along one hyperparameter, the others fixed ([Fis16] Figs. 5.3-5.5).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.kernels import Kernel
from explorer.model_selection.criterion import Criterion, safe_value
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["CriterionCurve", "criterion_curve"]


@dataclass(frozen=True, eq=False)
class CriterionCurve:
    """A criterion as a function of one hyperparameter, the others fixed (Fig. 5.3-5.5).

    ``grid`` in natural units of ``parameter``; ``values`` NaN where evaluation failed; ``best`` the grid
    value of the minimum (NaN if every evaluation failed).
    """

    criterion: str
    parameter: str
    grid: np.ndarray
    values: np.ndarray
    best: float


_ALIASES = {"signal_std": "signal_var", "noise_std": "noise_var"}


def criterion_curve(criterion: Criterion, kernel: Kernel, X, y, noise_var: float, parameter: str,
                    grid, *, hooks: Hooks | None = None) -> CriterionCurve:
    """``criterion`` at each ``grid`` value of one hyperparameter, the others fixed (Fig. 5.3-5.5).

    ``parameter`` is one of ``kernel.hyperparameter_names``, ``"noise_var"``, or the standard deviations
    ``"signal_std"`` / ``"noise_std"`` (then ``grid`` holds standard deviations). ``grid`` in natural units.
    ``hooks``: ``check`` before and ``report`` after every grid value.

    Parameters
    ----------
    criterion : Criterion
        From :func:`~explorer.model_selection.criterion.make_criterion`.
    kernel : Kernel
        Fixes every hyperparameter but ``parameter``.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float
        σ², unless ``parameter`` is the noise.
    parameter : str
        The hyperparameter swept.
    grid : array_like of shape (n_grid,)
        Positive, finite values of ``parameter``.
    hooks : Hooks, optional
        Progress and stop hooks.

    Returns
    -------
    CriterionCurve
        ``values`` of shape (n_grid,), NaN where the criterion could not be evaluated, and ``best``.

    Raises
    ------
    ValueError
        If ``parameter`` names neither a hyperparameter of ``kernel`` (``"signal_std"`` stands for
        ``signal_var``) nor the noise, or ``grid`` is not a non-empty 1-D array of positive values.
    Cancelled
        If ``hooks`` asks to stop.
    """
    grid = np.asarray(grid, dtype=float)
    names = kernel.hyperparameter_names
    target = _ALIASES.get(parameter, parameter)
    if target != "noise_var" and target not in names:
        raise ValueError(f"`parameter` must be one of {names + ('noise_var', 'signal_std', 'noise_std')}, "
                         f"got {parameter!r}.")
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError(f"`grid` must be a non-empty 1-D array of positive values, got {grid!r}.")
    natural = grid**2 if parameter in _ALIASES else grid
    values = np.empty(grid.size)
    hooks = hooks or NO_HOOKS
    for k, v in enumerate(natural):
        hooks.check(k, grid.size, "grid values")
        if target == "noise_var":
            kern, s2 = kernel, float(v)
        else:
            theta = kernel.theta.copy()
            theta[names.index(target)] = np.log(v)
            kern, s2 = kernel.with_theta(theta), noise_var
        values[k] = safe_value(criterion, kern, X, y, s2)
        hooks.report((k + 1) / grid.size, f"{k + 1}/{grid.size} grid values")
    ok = np.isfinite(values)
    best = float(grid[np.flatnonzero(ok)[np.argmin(values[ok])]]) if ok.any() else np.nan
    return CriterionCurve(criterion=criterion.name, parameter=parameter, grid=grid, values=values, best=best)
