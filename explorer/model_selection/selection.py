r"""Selecting hyperparameters by each criterion, and functional forms by ranking them ([Fis16] §5.1-5.3).

:func:`select_hyperparameters` optimises one kernel under each criterion (with the test error when test data are
given); :func:`rank_functional_forms` optimises each covariance function by one criterion and ranks the selected
models by the others (eq. 2.10, Experiments 6-8).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from explorer.kernels import Kernel, check_inputs
from explorer.model_selection.criterion import CRITERIA, make_criterion, safe_value
from explorer.model_selection.held_out import TestError, test_error
from explorer.model_selection.optimisation import SelectionResult, initial_hyperparameters, optimize_hyperparameters
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["RankingRow", "select_hyperparameters", "rank_functional_forms"]


@dataclass(frozen=True, eq=False)
class RankingRow:
    """One functional form in a ranking (§5.3, Experiments 6-8).

    ``values`` and ``ranks`` map each ranking criterion (and ``"smse"`` when test data are given) to the
    value at the selected hyperparameters and the rank among the functional forms (1 = best, by the finite
    values only; a NaN or infinite value is not ranked: its rank is None). ``selection`` holds the
    hyperparameters chosen by the ``select_by`` criterion.
    """

    kernel_name: str
    selection: SelectionResult
    values: dict
    ranks: dict
    test: TestError | None = None


def select_hyperparameters(X, y, kernel: Kernel, criteria: Sequence[str] = ("evidence", "loo"), *,
                           noise_var: float = 0.1, rng: np.random.Generator | int | None = None,
                           n_restarts: int = 16, max_iter: int = 16, X_test=None, y_test=None,
                           hooks: Hooks | None = None,
                           **criterion_options) -> tuple[SelectionResult, ...]:
    """Optimise ``kernel`` under each of ``criteria``; with test data also their :class:`~explorer.model_selection.held_out.TestError`.

    ``criterion_options`` go to :func:`~explorer.model_selection.criterion.make_criterion` (``n_folds``, ``n_partitions``, ``n_subsets``,
    ``n_objects``, ``entropy``, ``tol``). One generator drives every random part, in the order given.
    ``hooks``: ``check`` between criteria and restarts (:class:`~explorer.progress.Cancelled` counts
    criteria); ``publish`` receives the tuple of results so far after every criterion.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training inputs.
    y : ndarray of shape (n,)
        Training targets.
    kernel : Kernel
        The covariance function whose free log hyperparameters are optimised; its current values start
        the first run.
    criteria : sequence of str
        Names from ``CRITERIA``, optimised one after the other.
    noise_var : float
        Starting noise variance σ².
    rng : Generator, int or None
        Seed of the criteria's random parts (folds, ASC partitions) and of the Cauchy restarts.
    n_restarts, max_iter : int
        L-BFGS-B runs per criterion and iterations per run (§5.1.1; the thesis uses 16 and 16).
    X_test : ndarray of shape (n_test, d), optional
        Test inputs; with ``y_test`` fills in ``SelectionResult.test``.
    y_test : ndarray of shape (n_test,), optional
        Test targets.
    hooks : Hooks, optional
        Progress, stop and partial-result hooks.
    **criterion_options
        Passed to :func:`~explorer.model_selection.criterion.make_criterion`.

    Returns
    -------
    tuple of SelectionResult
        One result per criterion, in the order of ``criteria``.

    Raises
    ------
    ValueError
        If a criterion is unknown or none is given, only one of ``X_test``, ``y_test`` is given, or the
        data, ``noise_var``, ``n_restarts``, ``max_iter`` or ``criterion_options`` are invalid.
    numpy.linalg.LinAlgError
        If a criterion cannot be evaluated at any point of its optimisation runs.
    Cancelled
        If ``hooks`` asks to stop.

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.kernels import make_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (30, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(30)
    >>> (res,) = select_hyperparameters(X, y, make_kernel("se", 1), ["evidence"], rng=0, n_restarts=2)
    >>> res.converged, {k: round(v, 2) for k, v in res.hyperparameters.items()}
    (True, {'lengthscale': 1.57, 'signal_std': 1.04, 'noise_std': 0.08})
    """
    y = np.asarray(y, dtype=float)
    unknown = [c for c in criteria if c not in CRITERIA]
    if unknown or not criteria:
        raise ValueError(f"unknown criteria {unknown}; choose from {CRITERIA}.")
    if (X_test is None) != (y_test is None):
        raise ValueError("give both `X_test` and `y_test`, or neither.")
    gen = np.random.default_rng(rng)
    hooks = hooks or NO_HOOKS
    out = []
    for j, name in enumerate(criteria):
        hooks.check(j, len(criteria), "criteria")
        label = f"optimising {name} ({j + 1}/{len(criteria)}, {n_restarts} restarts)"
        hooks.report(j / len(criteria), label)
        crit = make_criterion(name, y.size, rng=gen, **criterion_options)
        res = optimize_hyperparameters(crit, kernel, X, y, noise_var, n_restarts=n_restarts, max_iter=max_iter,
                                       rng=gen, hooks=hooks.sub(j / len(criteria), 1 / len(criteria), label,
                                                                count=(j, len(criteria), "criteria")))
        if X_test is not None:
            res = replace(res, test=test_error(res.kernel, res.noise_var, X, y, X_test, y_test))
        out.append(res)
        hooks.publish(tuple(out))
    return tuple(out)


def _ranks(values: dict) -> dict:
    """Rank 1 = lowest value among the finite values (ties share the lower rank); a NaN or infinite value is
    not ranked (None): a criterion that could not be evaluated says nothing about the model."""
    v = {k: float(x) for k, x in values.items()}
    finite = np.array([x for x in v.values() if np.isfinite(x)])
    return {k: int(np.sum(finite < x) + 1) if np.isfinite(x) else None for k, x in v.items()}


def rank_functional_forms(X, y, kernel_names: Sequence[str] = ("se", "rq", "exponential", "periodic"), *,
                          select_by: str = "loo", rank_by: Sequence[str] = ("evidence", "loo", "asc-bayes"),
                          rng: np.random.Generator | int | None = None, n_restarts: int = 16,
                          max_iter: int = 16, X_test=None, y_test=None, hooks: Hooks | None = None,
                          **criterion_options) -> tuple[RankingRow, ...]:
    """Functional-form selection (§5.3, eq. 2.10): optimise each kernel by ``select_by`` (R_2), then rank the
    selected models by each criterion of ``rank_by`` (R_3), and by test SMSE when test data are given.

    Each optimisation starts from :func:`~explorer.model_selection.optimisation.initial_hyperparameters`. The same ranking criterion
    objects (same folds, same ASC partitions) score every functional form. ``hooks``: ``check`` between
    functional forms and restarts (:class:`~explorer.progress.Cancelled` counts functional forms);
    ``publish`` receives the rows so far, without ranks (empty ``ranks``), after every functional form.

    Parameters
    ----------
    X, y, hooks
        As in :func:`select_hyperparameters`.
    kernel_names : sequence of str, optional
        Functional forms, names of :func:`explorer.kernels.make_kernel`.
    select_by : str, optional
        Criterion (of ``CRITERIA``) that selects each form's hyperparameters.
    rank_by : sequence of str, optional
        Criteria that score the selected models; a value that cannot be evaluated is NaN and is not ranked
        (rank None; the finite values are ranked 1, 2, ... among themselves).
    rng : Generator, int or None, optional
        One generator for the criteria's random parts and the Cauchy restarts.
    n_restarts, max_iter : int, optional
        L-BFGS-B runs per form and iterations per run.
    X_test, y_test : array_like of shapes (N*, d) and (N*,), optional
        Test data; they add the ``"smse"`` ranking and ``RankingRow.test``.
    **criterion_options
        Passed to :func:`~explorer.model_selection.criterion.make_criterion` (for the selecting and the ranking criteria).

    Returns
    -------
    tuple of RankingRow
        One row per functional form, in the order of ``kernel_names``.

    Raises
    ------
    ValueError, TypeError, numpy.linalg.LinAlgError
        As :func:`~explorer.model_selection.criterion.make_criterion`, :func:`~explorer.model_selection.optimisation.initial_hyperparameters` and :func:`~explorer.model_selection.optimisation.optimize_hyperparameters`.
    Cancelled
        If ``hooks`` asks to stop.
    """
    X, y = check_inputs(X, "X"), np.asarray(y, dtype=float)
    gen = np.random.default_rng(rng)
    hooks = hooks or NO_HOOKS
    selector = make_criterion(select_by, y.size, rng=gen, **criterion_options)
    rankers = {name: make_criterion(name, y.size, rng=gen, **criterion_options) for name in rank_by}
    selections, values, tests = {}, {}, {}
    n = len(kernel_names)
    for j, kname in enumerate(kernel_names):
        hooks.check(j, n, "functional forms")
        label = f"{kname}: optimising {select_by} ({j + 1}/{n})"
        hooks.report(j / n, label)
        start = initial_hyperparameters(kname, X, y)
        sel = optimize_hyperparameters(selector, start.kernel, X, y, start.noise_var, n_restarts=n_restarts,
                                       max_iter=max_iter, rng=gen,
                                       hooks=hooks.sub(j / n, 1 / n, label, count=(j, n, "functional forms")))
        selections[kname] = sel
        values[kname] = {c: safe_value(r, sel.kernel, X, y, sel.noise_var) for c, r in rankers.items()}
        if X_test is not None:
            tests[kname] = test_error(sel.kernel, sel.noise_var, X, y, X_test, y_test)
            values[kname]["smse"] = tests[kname].smse
        hooks.publish(tuple(RankingRow(k, selections[k], values[k], {}, tests.get(k)) for k in selections))
    keys = list(rank_by) + (["smse"] if X_test is not None else [])
    ranks = {c: _ranks({k: values[k][c] for k in kernel_names}) for c in keys}
    return tuple(RankingRow(k, selections[k], values[k], {c: ranks[c][k] for c in keys}, tests.get(k))
                 for k in kernel_names)
