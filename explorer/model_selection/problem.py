"""The data of one GP model-selection problem ([Fis16]): training rows, optional test rows, standardisation.

:func:`selection_problem` is the one path from a :class:`~explorer.datasets.Dataset` to the arrays the criteria
of :mod:`explorer.model_selection.criterion` take: choose the input columns, split training and test rows (a
random or in-order split of one data set, or a second data set as test rows), and standardise both with the
training rows' statistics (:func:`explorer.datasets.standardization`). The CLI's ``select`` command and the
app's model-selection tab both build their :class:`SelectionProblem` with it, so the same settings give the
same numbers.

Core module: numpy and the standard library only.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.datasets import Dataset, DatasetError, Standardization, standardization

__all__ = ["MIN_TRAINING_ROWS", "SelectionProblem", "selection_problem"]

#: Fewest training rows a model-selection problem accepts.
MIN_TRAINING_ROWS = 8


@dataclass(frozen=True, eq=False)
class SelectionProblem:
    """Training rows (and test rows, possibly none) of one data set, as the criteria use them.

    Attributes
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    X_test : ndarray of shape (n_test, d), or None
    y_test : ndarray of shape (n_test,), or None
    feature_names : tuple of d str
        Names of the input columns of ``X``.
    teacher : bool
        The rows are draws from [Fis16]'s GP teacher (the view then fixes the teacher's hyperparameters).
    target_name : str
    scaling : Standardization or None
        The standardisation applied to every row (fitted on the training rows), or None.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    feature_names: tuple[str, ...]
    description: str
    teacher: bool = False
    target_name: str = "y"
    scaling: Standardization | None = None

    def __post_init__(self) -> None:
        _problem_iv(self)

    @property
    def n(self) -> int:
        """Number of training rows."""
        return int(self.y.size)

    @property
    def d(self) -> int:
        """Number of input columns."""
        return int(self.X.shape[1])

    @property
    def n_test(self) -> int:
        """Number of test rows (0 without test rows)."""
        return 0 if self.y_test is None else int(self.y_test.size)

    @property
    def standardized(self) -> bool:
        """Whether inputs and target were standardised."""
        return self.scaling is not None


def _problem_iv(p: SelectionProblem) -> None:
    if p.X.ndim != 2 or p.y.shape != (p.X.shape[0],):
        raise ValueError(f"`X` must have shape (n, d) and `y` shape (n,), got {p.X.shape} and {p.y.shape}.")
    if (p.X_test is None) != (p.y_test is None):
        raise ValueError("`X_test` and `y_test` must be given together (or both None).")
    if p.X_test is not None and (p.X_test.shape[1:] != (p.d,) or p.y_test.shape != (p.X_test.shape[0],)):
        raise ValueError(f"`X_test` must have shape (m, {p.d}) and `y_test` shape (m,), got {p.X_test.shape} "
                         f"and {p.y_test.shape}.")
    if len(p.feature_names) != p.d:
        raise ValueError(f"`feature_names` must name the d = {p.d} input columns, got {len(p.feature_names)}.")


def selection_problem(data: Dataset, *, inputs: Sequence[str] | None = None, n_train: int | None = None,
                      n_test: int = 0, rng: np.random.Generator | int | None = None, test: Dataset | None = None,
                      standardize: bool = False, teacher: bool = False) -> SelectionProblem:
    """Training and test rows of ``data`` for GP model selection, standardised if asked.

    Parameters
    ----------
    data : Dataset
        A regression data set.
    inputs : sequence of str, optional
        Input columns, in this order (default: every input column of ``data``).
    n_train : int, optional
        Training rows: the first ``n_train`` rows of the order (default: all). Capped at the number of rows,
        one fewer when test rows are asked for.
    n_test : int
        Test rows taken from ``data``: the ``n_test`` rows after the training rows (fewer than 2: no test rows).
    rng : Generator, int or None
        None keeps the rows in their order (teacher draws are independent); otherwise the rows are split
        after a permutation drawn from ``np.random.default_rng(rng)``.
    test : Dataset, optional
        Test rows from another data set with the same input columns and target (not with ``n_test``).
    standardize : bool
        Shift and scale inputs and target to mean 0 and sample sd 1 with the training rows' statistics
        (:func:`explorer.datasets.standardization`), applied to training and test rows alike.
    teacher : bool
        Mark the rows as teacher draws (:attr:`SelectionProblem.teacher`).

    Returns
    -------
    SelectionProblem

    Raises
    ------
    ValueError
        If ``data`` (or ``test``) is not a regression data set, ``inputs`` names an unknown column (or
        none), ``n_train`` < 1, ``n_test`` < 0, both ``n_test`` and ``test`` are given, or ``test`` lacks
        an input column.
    DatasetError
        If fewer than ``MIN_TRAINING_ROWS`` training rows remain.

    Examples
    --------
    >>> from explorer import datasets
    >>> p = selection_problem(datasets.load("teacher", n=80, rng=0), n_train=64, n_test=16, standardize=True)
    >>> p.n, p.n_test, p.standardized
    (64, 16, True)
    """
    columns = _selection_iv(data, inputs, n_train, n_test, test)
    X, y = data.inputs[:, [data.feature_names.index(c) for c in columns]], data.targets
    n = y.size if n_train is None else int(n_train)
    if n >= y.size:
        n = y.size - (1 if n_test else 0)
    if n < MIN_TRAINING_ROWS:
        raise DatasetError(f"{data.name} has {y.size} rows; model selection needs at least {MIN_TRAINING_ROWS}.")
    order = np.arange(y.size) if rng is None else np.random.default_rng(rng).permutation(y.size)
    train, held = order[:n], order[n:n + int(n_test)]
    X_test, y_test = (X[held], y[held]) if test is None else (
        test.inputs[:, [test.feature_names.index(c) for c in columns]], test.targets)
    if y_test.size < 2:
        X_test = y_test = None
    scaling = standardization(X[train], y[train]) if standardize else None
    if scaling is not None:
        X, y = scaling.inputs(X), scaling.targets(y)
        if X_test is not None:
            X_test, y_test = scaling.inputs(X_test), scaling.targets(y_test)
    return SelectionProblem(name=data.name, X=X[train], y=y[train], X_test=X_test, y_test=y_test,
                            feature_names=tuple(columns), description=data.description, teacher=teacher,
                            target_name=data.target_name, scaling=scaling)


def _selection_iv(data: Dataset, inputs, n_train, n_test, test: Dataset | None) -> tuple[str, ...]:
    if data.task != "regression":
        raise ValueError(f"{data.name!r} has a classification target; GP regression model selection needs "
                         "real-valued targets. Choose a regression data set or another target column.")
    columns = tuple(data.feature_names if inputs is None else inputs)
    missing = [c for c in columns if c not in data.feature_names]
    if missing or not columns:
        raise ValueError(f"`inputs` names unknown column(s) {missing or 'none'}; available: "
                         f"{', '.join(data.feature_names)}.")
    if n_train is not None and int(n_train) < 1:
        raise ValueError(f"`n_train` must be at least 1, got {n_train}. It is the number of training rows.")
    if int(n_test) < 0:
        raise ValueError(f"`n_test` must be 0 or more, got {n_test}. It is the number of test rows.")
    if test is not None:
        if n_test:
            raise ValueError("Give test rows either as `n_test` rows of `data` or as a `test` data set, not both.")
        absent = [c for c in columns if c not in test.feature_names]
        if absent or test.task != "regression":
            raise ValueError(f"`test` must be regression data with the input column(s) {list(columns)}; it lacks "
                             f"{absent} (task {test.task!r}).")
    return columns
