"""The stages of [Fis16]'s model selection on one data set, each built once: ``explorer select`` and the app's
Explore sub-panel (:mod:`explorer.views.model_selection.state`) call these with the same seeds and options.

* :func:`criterion_curves` — every criterion along one hyperparameter, the others fixed (Fig. 5.3-5.5);
* :func:`selection_fits` — the hyperparameters each criterion selects, with test errors (Fig. 5.6-5.8);
* :func:`functional_form_ranking` — covariance functions optimised by one criterion, ranked by each (§5.3).

Each runs as tasks of an :class:`~explorer.chunks.Executor` (this process by default), publishes its partial
result through the hooks and returns a frozen dataclass. Core module: numpy and scipy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.chunks import IN_PROCESS, Executor
from explorer.kernels import Kernel, make_kernel
from explorer.model_selection.criterion import make_criterion
from explorer.model_selection.curves import CriterionCurve, criterion_curve
from explorer.model_selection.optimisation import SelectionResult, hyperparameter_dict, initial_hyperparameters
from explorer.model_selection.problem import SelectionProblem
from explorer.model_selection.selection import RankingRow, rank_functional_forms, select_hyperparameters
from explorer.progress import NO_HOOKS, Hooks

__all__ = [
    "TEACHER_HYPERPARAMETERS", "reference_hyperparameters", "SelectionCurves", "criterion_curves", "SelectionFits",
    "selection_fits", "SelectionRanking", "functional_form_ranking",
]

#: The teacher of [Fis16] §5.1 (ℓ = 1, σ_f = 1, σ_n = 0.1, α = 1/2, T = 2): the fixed values of its curves.
TEACHER_HYPERPARAMETERS = {"lengthscale": 1.0, "signal_var": 1.0, "alpha": 0.5, "period": 2.0, "noise_var": 0.01}


def reference_hyperparameters(problem: SelectionProblem, kernel_name: str) -> tuple[Kernel, float]:
    """The fixed hyperparameters of the curves: the teacher's (§5.1) on teacher data, else the data-scaled
    start of :func:`~explorer.model_selection.optimisation.initial_hyperparameters`.

    Parameters
    ----------
    problem : SelectionProblem
        Training rows (``teacher`` says whether they are teacher draws).
    kernel_name : str
        A name of :func:`explorer.kernels.make_kernel`.

    Returns
    -------
    (Kernel, float)
        The kernel at the reference values and the noise variance σ².
    """
    if not problem.teacher:
        start = initial_hyperparameters(kernel_name, problem.X, problem.y)
        return start.kernel, start.noise_var
    names = make_kernel(kernel_name, problem.d).hyperparameter_names
    hyper = {k: v for k, v in TEACHER_HYPERPARAMETERS.items() if k in names}
    return make_kernel(kernel_name, problem.d, **hyper), TEACHER_HYPERPARAMETERS["noise_var"]


@dataclass(frozen=True, eq=False)
class SelectionCurves:
    """Criterion curves computed so far, in the order of ``criteria``, around the reference hyperparameters."""

    curves: tuple[CriterionCurve, ...]
    criteria: tuple[str, ...]
    parameter: str
    reference: dict

    @property
    def complete(self) -> bool:
        return len(self.curves) == len(self.criteria)


def criterion_curves(problem: SelectionProblem, kernel_name: str, parameter: str, criteria: Sequence[str], *,
                     points: int = 15, decades: float = 1.0, options: dict | None = None, rng=None,
                     executor: Executor | None = None, hooks: Hooks | None = None) -> SelectionCurves:
    """Each criterion along ``parameter`` on a log grid around its reference value, the others fixed.

    The grid spans the reference value × 10^(± ``decades``) in ``points`` steps; criterion j draws its random
    parts (folds, ASC partitions) from one generator ``np.random.default_rng(rng)``, in the order of ``criteria``.

    Parameters
    ----------
    problem : SelectionProblem
        Training rows.
    kernel_name : str
        The covariance function (:func:`reference_hyperparameters` gives the fixed values).
    parameter : str
        The hyperparameter swept: a name of the kernel's, ``"signal_std"`` or ``"noise_std"``.
    criteria : sequence of str
        Names of :data:`~explorer.model_selection.criterion.CRITERIA`.
    points : int
        Grid points.
    decades : float
        Half-width of the grid in decades.
    options : dict, optional
        Options of :func:`~explorer.model_selection.criterion.make_criterion` (``n_folds``, ``n_partitions``, ...).
    rng : int, Generator or None
        Seed of the criteria's random parts.
    executor : Executor, optional
        Where each curve runs (one task per criterion; default: this process).
    hooks : Hooks, optional
        Progress, a stop checked between criteria, and ``publish`` of the :class:`SelectionCurves` so far after
        each criterion.

    Returns
    -------
    SelectionCurves
    """
    executor, hooks, criteria = executor or IN_PROCESS, hooks or NO_HOOKS, tuple(criteria)
    kernel, noise_var = reference_hyperparameters(problem, kernel_name)
    reference = hyperparameter_dict(kernel, noise_var)
    centre = float(reference[parameter])
    grid = np.geomspace(centre * 10.0**-decades, centre * 10.0**decades, points)
    gen, n = np.random.default_rng(rng), len(criteria)
    done: list[CriterionCurve] = []
    out = SelectionCurves((), criteria, parameter, reference)
    for j, name in enumerate(criteria):
        hooks.check(j, n, "criteria")
        label = f"curve of {name} ({j + 1}/{n})"
        hooks.report(j / n, label)
        crit = make_criterion(name, problem.n, rng=gen, **(options or {}))
        done.append(executor.call(criterion_curve, (crit, kernel, problem.X, problem.y, noise_var,
                                                              parameter, grid), {},
                                  hooks.sub(j / n, 1 / n, label, count=(j, n, "criteria"))))
        out = SelectionCurves(tuple(done), criteria, parameter, reference)
        hooks.publish(out)
    return out


@dataclass(frozen=True, eq=False)
class SelectionFits:
    """The hyperparameters selected by each criterion so far, in the order of ``criteria``."""

    results: tuple[SelectionResult, ...]
    criteria: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.criteria)


def _test_rows(problem: SelectionProblem) -> dict:
    return {} if problem.X_test is None else {"X_test": problem.X_test, "y_test": problem.y_test}


def selection_fits(problem: SelectionProblem, kernel_name: str, criteria: Sequence[str], *, n_restarts: int = 3,
                   max_iter: int = 16, options: dict | None = None, rng=None, executor: Executor | None = None,
                   hooks: Hooks | None = None) -> SelectionFits:
    """:func:`~explorer.model_selection.selection.select_hyperparameters` from the data-scaled start, with test
    errors when ``problem`` has test rows (one task on ``executor``: its restarts share one generator).

    Parameters
    ----------
    problem, kernel_name, criteria, options, executor
        As in :func:`criterion_curves`.
    n_restarts, max_iter : int
        L-BFGS runs per criterion and iterations per run.
    rng : int, Generator or None
        Seed of the criteria's random parts and the restarts.
    hooks : Hooks, optional
        Progress, stop between restarts; ``publish`` gets the :class:`SelectionFits` so far after each criterion.

    Returns
    -------
    SelectionFits
    """
    criteria, hooks = tuple(criteria), hooks or NO_HOOKS
    start = initial_hyperparameters(kernel_name, problem.X, problem.y)
    results = (executor or IN_PROCESS).call(
        select_hyperparameters, (problem.X, problem.y, start.kernel, criteria),
        dict(noise_var=start.noise_var, rng=rng, n_restarts=n_restarts, max_iter=max_iter, **_test_rows(problem),
             **(options or {})),
        hooks.publishing(lambda done: SelectionFits(done, criteria)))
    return SelectionFits(results, criteria)


@dataclass(frozen=True, eq=False)
class SelectionRanking:
    """Functional forms optimised by ``select_by`` and ranked by ``rank_by`` (ranks once ``complete``)."""

    rows: tuple[RankingRow, ...]
    kernels: tuple[str, ...]
    select_by: str
    rank_by: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.kernels)


def functional_form_ranking(problem: SelectionProblem, kernels: Sequence[str], select_by: str,
                            rank_by: Sequence[str], *, n_restarts: int = 3, max_iter: int = 16,
                            options: dict | None = None, rng=None, executor: Executor | None = None,
                            hooks: Hooks | None = None) -> SelectionRanking:
    """:func:`~explorer.model_selection.selection.rank_functional_forms` (one task on ``executor``).

    Parameters
    ----------
    problem, options, executor, n_restarts, max_iter, rng
        As in :func:`selection_fits`.
    kernels : sequence of str
        The covariance functions compared.
    select_by : str
        The criterion that optimises each.
    rank_by : sequence of str
        The criteria that rank the optimised forms.
    hooks : Hooks, optional
        Progress and stop; ``publish`` gets the :class:`SelectionRanking` so far (rows without ranks) after each
        kernel.

    Returns
    -------
    SelectionRanking
    """
    kernels, rank_by, hooks = tuple(kernels), tuple(rank_by), hooks or NO_HOOKS
    rows = (executor or IN_PROCESS).call(
        rank_functional_forms, (problem.X, problem.y, kernels),
        dict(select_by=select_by, rank_by=rank_by, rng=rng, n_restarts=n_restarts, max_iter=max_iter,
             **_test_rows(problem), **(options or {})),
        hooks.publishing(lambda done: SelectionRanking(done, kernels, select_by, rank_by)))
    return SelectionRanking(rows, kernels, select_by, rank_by)
