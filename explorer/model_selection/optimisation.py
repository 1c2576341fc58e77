r"""Minimising a criterion over the hyperparameters ([Fis16] §5.1.1): starts, L-BFGS-B restarts, the result.

:func:`initial_hyperparameters` a data-scaled start, :func:`optimize_hyperparameters` L-BFGS-B in log space from
Cauchy-distributed starts, :class:`SelectionResult` the hyperparameters it selects, :func:`hyperparameter_dict`
them in natural units.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from explorer import regression
from explorer.kernels import Kernel, check_inputs, make_kernel
from explorer.model_selection.criterion import NUMERICAL_ERRORS, Criterion
from explorer.model_selection.held_out import TestError
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["NOISE_BOUNDS", "SelectionResult", "StartingPoint", "hyperparameter_dict", "initial_hyperparameters",
           "optimize_hyperparameters"]


NOISE_BOUNDS = (1e-8, 1e5)
"""Default (lower, upper) bounds of the noise variance σ² during optimisation, natural units."""


@dataclass(frozen=True, eq=False)
class SelectionResult:
    """Hyperparameters selected by minimising one criterion.

    Attributes
    ----------
    criterion : str
    kernel : Kernel
        The kernel at the optimum.
    noise_var : float
    hyperparameters : dict
        Natural units: kernel hyperparameters (variances reported as standard deviations,
        ``signal_std``) and ``noise_std``; see :func:`hyperparameter_dict`.
    value : float
        The criterion at the optimum.
    theta : ndarray of shape (p + 1,)
        ``np.append(kernel.theta, log noise_var)`` at the optimum.
    n_restarts, n_failed : int
        Optimisation runs made, and runs in which no evaluation succeeded.
    converged : bool
        Whether L-BFGS-B reported convergence (within ``max_iter``) on the best run.
    n_iter, n_evaluations : int
        Iterations of the best run; criterion evaluations over all runs.
    n_excluded : int
        ASC partitions excluded at the optimum.
    test : TestError or None
        Filled in by :func:`~explorer.model_selection.selection.select_hyperparameters` when test data are given.
    """

    criterion: str
    kernel: Kernel
    noise_var: float
    hyperparameters: dict
    value: float
    theta: np.ndarray
    n_restarts: int
    n_failed: int
    converged: bool
    n_iter: int
    n_evaluations: int
    n_excluded: int = 0
    test: TestError | None = None


@dataclass(frozen=True, eq=False)
class StartingPoint:
    """Where :func:`optimize_hyperparameters` starts: a kernel and a noise variance.

    Attributes
    ----------
    kernel : Kernel
        The kernel with its starting hyperparameters.
    noise_var : float
        The starting noise variance σ².
    """

    kernel: Kernel
    noise_var: float


def hyperparameter_dict(kernel: Kernel, noise_var: float) -> dict:
    """Hyperparameters in natural units: variances as standard deviations (``signal_std``), ``noise_std``.

    Arrays (ARD lengthscales) become lists. Sums and products keep the ``k1.``/``k2.`` prefixes.

    Parameters
    ----------
    kernel : Kernel
        Its ``params`` are reported; every ``...signal_var`` becomes ``...signal_std``.
    noise_var : float
        σ², reported as ``noise_std`` = σ.

    Returns
    -------
    dict
        Name -> float, or list of float for an array hyperparameter.
    """
    out = {}
    for name, value in kernel.params.items():
        if name.endswith("signal_var"):
            name, value = name[: -len("signal_var")] + "signal_std", np.sqrt(value)
        out[name] = np.asarray(value).tolist() if np.ndim(value) else float(value)
    out["noise_std"] = float(np.sqrt(noise_var))
    return out


def initial_hyperparameters(kernel_name: str, X, y) -> StartingPoint:
    """A data-scaled start for :func:`optimize_hyperparameters`: kernel ``kernel_name`` and σ².

    Lengthscale = mean sample sd of the input columns, signal variance = var(y), σ² = var(y)/10, period
    (periodic kernel) = half the range of the first input column, α (rational quadratic) = 1. For the
    thesis' data (x ~ N(0, 1), var(y) ≈ 1) this is the unit start around which it draws Cauchy starts.

    Parameters
    ----------
    kernel_name : str
        A name of :func:`explorer.kernels.make_kernel`.
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)

    Returns
    -------
    StartingPoint
        ``kernel`` and ``noise_var``.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array, ``y`` is not of shape (n,), n < 2, or ``kernel_name`` is not
        a name of :func:`explorer.kernels.make_kernel`.
    """
    X, y = check_inputs(X, "X"), np.asarray(y, dtype=float)
    if X.shape[0] < 2 or y.shape != (X.shape[0],):
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 2 cases, got shapes {X.shape} "
                         f"and {y.shape}.")
    spread = X.std(axis=0, ddof=1)
    ls = float(np.mean(spread)) if np.all(spread > 0) else 1.0
    var = float(np.var(y)) if np.var(y) > 0 else 1.0
    extra = {"period": float(np.ptp(X[:, 0]) / 2) or 1.0} if str(kernel_name).lower() == "periodic" else {}
    return StartingPoint(make_kernel(kernel_name, X.shape[1], lengthscale=ls, signal_var=var, **extra), var / 10.0)


def _check_optimisation(criterion, kernel, X, y, noise_var, n_restarts, max_iter, noise_bounds):
    if not isinstance(criterion, Criterion):
        raise TypeError(f"`criterion` must be a Criterion from make_criterion(), got {type(criterion).__name__}.")
    X, y, noise_var = regression.check_data(kernel, X, y, noise_var, True)
    for name, value in (("n_restarts", n_restarts), ("max_iter", max_iter)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}.")
    lo, hi = noise_bounds
    if not (0 < lo < hi and np.isfinite(hi)):
        raise ValueError(f"`noise_bounds` must be 0 < lower < upper (variances), got {noise_bounds!r}.")
    return X, y, noise_var


class _Objective:
    """phi ↦ (criterion, gradient) for L-BFGS-B; failed evaluations return +inf and are counted."""

    def __init__(self, criterion, kernel, X, y):
        self.criterion, self.kernel, self.X, self.y = criterion, kernel, X, y
        self.n_eval, self.best = 0, (np.inf, None, None)

    def __call__(self, phi):
        self.n_eval += 1
        try:
            with np.errstate(all="ignore"):                            # non-finite results are checked below
                cv = self.criterion(self.kernel.with_theta(phi[:-1]), self.X, self.y, float(np.exp(phi[-1])),
                                    True)
        except NUMERICAL_ERRORS:
            return np.inf, np.zeros_like(phi)
        if not (np.isfinite(cv.value) and np.all(np.isfinite(cv.gradient))):
            return np.inf, np.zeros_like(phi)
        if cv.value < self.best[0]:
            self.best = (cv.value, phi.copy(), cv)
        return cv.value, cv.gradient


def optimize_hyperparameters(criterion: Criterion, kernel: Kernel, X, y, noise_var: float = 0.1, *,
                             n_restarts: int = 16, max_iter: int = 16,
                             rng: np.random.Generator | int | None = None,
                             noise_bounds: tuple[float, float] = NOISE_BOUNDS,
                             hooks: Hooks | None = None) -> SelectionResult:
    """Minimise ``criterion`` over the kernel's free log hyperparameters and log σ² (§5.1.1).

    L-BFGS-B (memory m = 4, relative tolerance 1e-7) with the analytic gradient, ``n_restarts`` runs of at
    most ``max_iter`` iterations (thesis: 16 and 16). Run 1 starts at (kernel.theta, log noise_var), the
    others at that point plus standard-Cauchy draws (clipped to the bounds), as the thesis draws its starts
    from a standard Cauchy distribution. The best value over all runs wins; a run in which no evaluation
    succeeded counts as failed.

    ``bootstrap632`` is constant when the signal and noise variances are scaled together; its optimum is
    moved along that ray to the scale c = yᵀK_y⁻¹y/N that maximises the evidence (exact, one solve), when
    the kernel has a free top-level ``signal_var``. ``hooks``: ``check`` before and ``report`` after every
    restart (:class:`~explorer.progress.Cancelled` counts restarts).

    Parameters
    ----------
    criterion : Criterion
        From :func:`~explorer.model_selection.criterion.make_criterion`, for N = len(y) cases.
    kernel : Kernel
        Its current hyperparameters start run 1; its bounds bound the search.
    X : array_like of shape (N, d)
    y : array_like of shape (N,)
    noise_var : float, optional
        Starting σ² > 0 (clipped to ``noise_bounds``).
    n_restarts : int, optional
        Number of L-BFGS-B runs, >= 1.
    max_iter : int, optional
        Iterations per run, >= 1.
    rng : Generator, int or None, optional
        Seed of the Cauchy starts.
    noise_bounds : (float, float), optional
        0 < lower < upper bounds of σ².
    hooks : Hooks, optional
        Progress and stop hooks.

    Returns
    -------
    SelectionResult
        The best point over all runs, without ``test``.

    Raises
    ------
    TypeError
        If ``criterion`` is not a :class:`~explorer.model_selection.criterion.Criterion` or ``kernel`` not a Kernel.
    ValueError
        If the data or ``noise_var`` are invalid, ``n_restarts`` or ``max_iter`` is not an integer >= 1,
        or ``noise_bounds`` is not 0 < lower < upper.
    numpy.linalg.LinAlgError
        If the criterion could not be evaluated at any point of any run.
    Cancelled
        If ``hooks`` asks to stop.
    """
    X, y, noise_var = _check_optimisation(criterion, kernel, X, y, noise_var, n_restarts, max_iter, noise_bounds)
    gen = np.random.default_rng(rng)
    bounds = np.vstack([kernel.bounds, np.log(noise_bounds)])
    start = np.clip(np.append(kernel.theta, np.log(noise_var)), bounds[:, 0], bounds[:, 1])
    best, n_failed, n_eval = None, 0, 0
    hooks = hooks or NO_HOOKS
    for k in range(n_restarts):
        hooks.check(k, n_restarts, "restarts")
        phi0 = start if k == 0 else np.clip(start + gen.standard_cauchy(start.size), bounds[:, 0], bounds[:, 1])
        objective = _Objective(criterion, kernel, X, y)
        res = optimize.minimize(objective, phi0, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": max_iter, "maxcor": 4, "ftol": 1e-7})
        n_eval += objective.n_eval
        hooks.report((k + 1) / n_restarts, f"restart {k + 1}/{n_restarts}")
        if objective.best[1] is None:
            n_failed += 1
            continue
        if best is None or objective.best[0] < best[0][0]:
            best = (objective.best, bool(res.success), int(res.nit))
    if best is None:
        raise np.linalg.LinAlgError(
            f"criterion {criterion.name!r} could not be evaluated at any point of {n_restarts} optimisation "
            "runs (numerically singular matrices). Standardize the data, narrow the bounds or use fewer "
            "ASC objects.")
    (value, phi, cv), converged, n_iter = best
    kern, s2 = kernel.with_theta(phi[:-1]), float(np.exp(phi[-1]))
    if criterion.name == "bootstrap632":
        kern, s2 = _evidence_scale(kern, X, y, s2, bounds)
    return SelectionResult(criterion=criterion.name, kernel=kern, noise_var=s2,
                           hyperparameters=hyperparameter_dict(kern, s2), value=float(value),
                           theta=np.append(kern.theta, np.log(s2)), n_restarts=n_restarts, n_failed=n_failed,
                           converged=converged, n_iter=n_iter, n_evaluations=n_eval, n_excluded=cv.n_excluded)


def _evidence_scale(kernel, X, y, noise_var, bounds):
    """Scale K and σ² by c = yᵀK_y⁻¹y/N, the evidence-maximising factor along the ray (K, σ²) → c (K, σ²)."""
    names = kernel.hyperparameter_names
    if "signal_var" not in names:
        return kernel, noise_var
    c = float(y @ regression.fit(kernel, X, y, noise_var).alpha / y.size)
    phi = np.append(kernel.theta, np.log(noise_var))
    i = names.index("signal_var")
    shift = np.log(c)
    shift = np.clip(shift, max(bounds[i, 0] - phi[i], bounds[-1, 0] - phi[-1]),
                    min(bounds[i, 1] - phi[i], bounds[-1, 1] - phi[-1]))
    phi[[i, -1]] += shift
    return kernel.with_theta(phi[:-1]), float(np.exp(phi[-1]))
