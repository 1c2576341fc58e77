"""[Fis16]'s experiments (Fischer 2016, §5) at small repetition counts, for the CLI, the app and notebooks.

* :func:`curves_experiment` — Experiment 2 (Fig. 5.3-5.5): mean criterion curves along one hyperparameter.
* :func:`hyperparameter_experiment` — Experiment 3 (Fig. 5.6-5.7): optimise on N = 64 teacher cases, test
  SMSE (eq. 5.1) and MSLL on 2048 more; Experiment 4 (Fig. 5.8) with ``data=`` a real data set.
* :func:`functional_form_experiment` — Experiments 6 and 7 (Fig. 5.10-5.11): optimise every student form by
  ``select_by``, rank them by each criterion; Experiment 8 (Fig. 5.12) with ``data=`` and test SMSE.
* :func:`beta_experiment` — Experiment 10 (Fig. 5.15): Boltzmann ASC I_β vs β at the teacher's θ.

Teachers are :func:`datasets.gp_teacher` draws (x ~ N(0, 1), ℓ = 1, σ_f = 1, σ_n = 1/10, α = 1/2, T = 2).
The real series is Berkeley Earth's daily anomaly averaged per day of the year (:func:`load_temperature`).
Every function takes ``rng`` and optional :class:`~explorer.progress.Hooks` (progress, and a stop checked
between data sets) and returns a frozen result with ``as_dict()``.

The data sets are the items of a seeded job (:mod:`explorer.chunks`): data set r of setting g draws its data
(teacher draw or random split), its criteria's random parts (folds, ASC partitions) and its optimisation
restarts from ``chunks.item_generator(root, g, r)`` alone, and runs as part of a chunk on ``executor`` (in this
process by default, or on Dask workers); the results are stacked in data-set order, so neither the chunk size
nor the executor changes a number. Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.chunks import Chunk, Executor, SeedLike, item_generator, plan_chunks, root_seed, run_chunks, stack_rows
from explorer.datasets import Dataset, gp_teacher, load_csv, teacher_covariance
from explorer.model_selection import asc
from explorer.model_selection.criterion import CRITERIA, make_criterion
from explorer.model_selection.curves import criterion_curve
from explorer.model_selection.held_out import test_error
from explorer.model_selection.optimisation import StartingPoint, initial_hyperparameters, optimize_hyperparameters
from explorer.model_selection.selection import rank_functional_forms
from explorer.progress import NO_HOOKS, Hooks
from explorer.validation import positive_int

__all__ = ["TEACHERS", "SYNTHETIC_CRITERIA", "ASC_OUTLIER_NATS", "teacher_kernel", "load_temperature",
           "CurvesExperiment", "curves_experiment", "HyperparameterExperiment", "hyperparameter_experiment",
           "FunctionalFormExperiment", "functional_form_experiment", "BetaExperiment", "beta_experiment",
           "DATASETS_PER_CHUNK"]

DATASETS_PER_CHUNK = 1
"""Data sets per chunk (the unit of work of an executor, of progress and of cancellation): one data set costs
0.1-10 s (an optimisation by each criterion with its restarts), far above a Dask task's overhead."""

TEACHERS = {"squared_exponential": "se", "rational_quadratic": "rq", "exponential": "exponential",
            "periodic": "periodic"}
"""Teacher covariance functions (as the CLI and the app name them) and their :func:`explorer.kernels.make_kernel`
names, those of :func:`datasets.gp_teacher` and of the matching student."""

SYNTHETIC_CRITERIA = ("evidence", "loo", "asc-boltzmann", "asc-beta-noise", "asc-bayes")
"""The criteria the thesis compares (§5)."""

ASC_OUTLIER_NATS = 128.0
"""Experiment 2 keeps only approximation capacities above −128 nats (numerical outliers)."""

_TEACHER_PARAMS = dict(lengthscale=1.0, sigma_f=1.0, alpha=0.5, period=2.0)


def teacher_kernel(teacher: str = "squared_exponential", sigma_n: float = 0.1) -> StartingPoint:
    """The teacher's covariance as an :mod:`explorer.kernels` kernel and its noise variance σ_n².

    Parameters
    ----------
    teacher : str, optional
        A key of ``TEACHERS``.
    sigma_n : float, optional
        Noise standard deviation σ_n (thesis: 1/10).

    Returns
    -------
    StartingPoint
        ``kernel``: the student kernel of the same form on D = 1 inputs at the teacher's values (ℓ = 1,
        σ_f² = 1, α = 1/2 for the rational quadratic, T = 2 for the periodic); ``noise_var``: σ_n².

    Raises
    ------
    ValueError
        If ``teacher`` is not a key of ``TEACHERS``.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"`teacher` must be one of {tuple(TEACHERS)}, got {teacher!r}.")
    return StartingPoint(teacher_covariance(TEACHERS[teacher], **_TEACHER_PARAMS), sigma_n**2)


def load_temperature(path, *, target: str = "mean_anomaly_by_file_doy", inputs: str = "day_of_year") -> Dataset:
    """The real-world series of §5.1: mean temperature anomaly per day of the year (N = 365, D = 1).

    ``path`` is a CSV with a day-of-year column ``inputs`` and the anomaly column ``target`` (the Berkeley
    Earth series, ``berkeley_tavg_doy_mean_1880_2014.csv``: see the tests). Other columns are ignored.

    Parameters
    ----------
    path : str or PathLike or text file object
        The CSV, read by :func:`explorer.datasets.load_csv`.
    target : str, optional
        Name of the anomaly column.
    inputs : str, optional
        Name of the day-of-year column.

    Returns
    -------
    Dataset
        Regression data named "temperature" with inputs of shape (N, 1) and targets of shape (N,).

    Raises
    ------
    ValueError
        If the CSV has no column ``inputs``; :class:`~explorer.datasets.DatasetError` (a ValueError) if
        :func:`~explorer.datasets.load_csv` cannot read it or it has no column ``target``.
    """
    data = load_csv(path, target, name="temperature")
    if inputs not in data.feature_names:
        raise ValueError(f"the CSV has no input column {inputs!r}; columns: {data.feature_names}. Pass "
                         "inputs=<day-of-year column>.")
    j = data.feature_names.index(inputs)
    return Dataset(name="temperature", inputs=data.inputs[:, [j]], targets=data.targets, feature_names=(inputs,),
                   target_name=target, task="regression", description=f"{data.description} Input {inputs!r}.",
                   provenance=data.provenance)


def _teacher_draw(teacher, n, n_test, sigma_n, gen) -> tuple:
    """(X, y, X_test, y_test): ``n`` training and ``n_test`` test cases of one draw of ``teacher``."""
    ds = gp_teacher(n + n_test, gen, kernel=TEACHERS[teacher], sigma_n=sigma_n, **_TEACHER_PARAMS)
    return ds.inputs[:n], ds.targets[:n], ds.inputs[n:], ds.targets[n:]


def _random_split(data: Dataset, n_train, gen) -> tuple:
    """(X, y, X_test, y_test): a random split of ``data`` into ``n_train`` training cases and the rest."""
    perm = gen.permutation(data.n)
    train, test = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    return data.inputs[train], data.targets[train], data.inputs[test], data.targets[test]


def _check_n_train(data: Dataset, n_train) -> None:
    if not (isinstance(n_train, (int, np.integer)) and 3 <= n_train < data.n - 1):
        raise ValueError(f"`n_train` must be an integer in [3, {data.n - 2}], got {n_train!r}.")


def _run(task, shared, n_groups: int, n_datasets: int, rng, args, chunk_size, executor, hooks, unit) -> list:
    """Run ``task`` over ``n_groups`` × ``n_datasets`` seeded data sets; per group its rows in data-set order."""
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of data sets per chunk.")
    chunks = plan_chunks([n_datasets] * n_groups, chunk_size)
    hooks = hooks or NO_HOOKS
    rows = run_chunks(task, shared, chunks, root_seed(rng), args, executor=executor, hooks=hooks, unit=unit)
    hooks.report(1.0, "done")
    return [stack_rows(rows, chunks, g) for g in range(n_groups)]


def _check_repetitions(n, name="n_datasets"):
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"`{name}` must be an integer >= 1, got {n!r}. It is the number of repetitions.")


def _check_criteria(criteria):
    bad = [c for c in criteria if c not in CRITERIA]
    if bad or not criteria:
        raise ValueError(f"unknown criteria {bad}; choose from {CRITERIA}.")
    return tuple(criteria)


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean over ``axis`` of the finite entries; NaN where there is none (without numpy's warning)."""
    ok = np.isfinite(values)
    count = ok.sum(axis=axis)
    total = np.where(ok, values, 0.0).sum(axis=axis)
    return np.divide(total, count, out=np.full(np.shape(total), np.nan), where=count > 0)


def _summary(values: np.ndarray) -> dict:
    """Median and quartiles of each row (last axis), ignoring NaN; NaN for a row without finite values."""
    rows = values.reshape(-1, values.shape[-1])
    q = np.array([np.quantile(r[np.isfinite(r)], [0.25, 0.5, 0.75]) if np.isfinite(r).any()
                  else np.full(3, np.nan) for r in rows]).T.reshape((3,) + values.shape[:-1])
    return {"q25": q[0].tolist(), "median": q[1].tolist(), "q75": q[2].tolist()}


# --------------------------------------------------------------------------- Experiment 2


@dataclass(frozen=True, eq=False)
class CurvesExperiment:
    """Criterion curves along one hyperparameter (Experiment 2, Fig. 5.3-5.5).

    ``values`` has shape (n_criteria, n_datasets, n_grid); ``mean`` (n_criteria, n_grid) averages the
    finite values (ASC values beyond ``ASC_OUTLIER_NATS`` dropped); ``argmin`` (n_criteria, n_datasets) is the
    grid value of each curve's minimum; ``true_value`` the teacher's.
    """

    parameter: str
    grid: np.ndarray
    criteria: tuple
    values: np.ndarray
    mean: np.ndarray
    argmin: np.ndarray
    true_value: float

    def as_dict(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            ``parameter``, ``true_value``, ``grid``, ``criteria``, ``mean`` (NaN for no finite value) and,
            per criterion, the quartiles of ``argmin`` over the data sets.
        """
        return {"experiment": "curves", "parameter": self.parameter, "true_value": self.true_value,
                "grid": self.grid.tolist(), "criteria": list(self.criteria), "mean": _nan_list(self.mean),
                "argmin_summary": dict(zip(self.criteria, _rows(_summary(self.argmin))))}


def _nan_list(a):
    return np.where(np.isfinite(a), a, np.nan).tolist()


def _rows(summary):
    """{"q25": [..], ...} per row -> list of {"q25": x, ...}."""
    return [dict(zip(summary, vals)) for vals in zip(*summary.values())]


_CURVE_DEFAULTS = {"lengthscale": (1.0, (0.1, 10.0)), "signal_std": (1.0, (0.1, 10.0)),
                   "noise_std": (0.1, (0.01, 1.0))}


def curves_experiment(parameter: str = "lengthscale", criteria: Sequence[str] = SYNTHETIC_CRITERIA, *,
                      n_datasets: int = 8, n: int = 64, grid=None, n_partitions: int = 32, n_objects: int = 8,
                      entropy: str = "zero", rng: SeedLike = None, chunk_size: int = DATASETS_PER_CHUNK,
                      executor: Executor | None = None, hooks: Hooks | None = None) -> CurvesExperiment:
    """Experiment 2: SE teacher (ℓ = 1, σ_f = 1, σ_n = 1/10), N = 64; one hyperparameter varies on ``grid``
    (default 32 log-spaced values over a factor 10 either side), the others stay at the teacher's values.
    ASC uses L = 2, M = ``n_objects`` (thesis: 8) and J = ``n_partitions`` partitions per data set.

    Parameters
    ----------
    parameter : {"lengthscale", "signal_std", "noise_std"}, optional
        The hyperparameter swept (teacher values 1, 1 and 0.1).
    criteria : sequence of str, optional
        Names from ``CRITERIA``.
    n_datasets : int, optional
        Number of teacher data sets, >= 1.
    n : int, optional
        Cases N per data set.
    grid : array_like of shape (n_grid,), optional
        Positive values of ``parameter``, natural units.
    n_partitions, n_objects : int, optional
        J and M of ASC.
    entropy : {"zero", "prior"}, optional
        h(τ) of ASC.
    rng : int, SeedSequence, Generator or None, optional
        Root seed of the job (``chunks.root_seed``); data set r draws everything from
        ``chunks.item_generator(root, g, r)`` (module docstring).
    chunk_size : int, optional
        Data sets per chunk (changes no number).
    executor : Executor, optional
        Where the data sets run: in this process (default) or on Dask workers (``explorer.runtime.engine``).
    hooks : Hooks, optional
        Progress and stop hooks (counted in data sets).

    Returns
    -------
    CurvesExperiment

    Raises
    ------
    ValueError
        If ``parameter`` is not one of the three, ``n_datasets`` is not an integer >= 1, a criterion is
        unknown or none is given, or ``grid`` is not a non-empty 1-D array of positive values.
    Cancelled
        If ``hooks`` asks to stop.
    """
    if parameter not in _CURVE_DEFAULTS:
        raise ValueError(f"`parameter` must be one of {tuple(_CURVE_DEFAULTS)}, got {parameter!r}.")
    _check_repetitions(n_datasets)
    criteria = _check_criteria(criteria)
    true, (lo, hi) = _CURVE_DEFAULTS[parameter]
    grid = np.geomspace(lo, hi, 32) if grid is None else np.asarray(grid, dtype=float)
    options = dict(n_partitions=n_partitions, n_objects=n_objects, entropy=entropy)
    [rows] = _run(_curves_chunk, None, 1, n_datasets, rng, (parameter, criteria, grid, n, options), chunk_size,
                  executor, hooks, "data sets")
    values = rows.transpose(1, 0, 2)                                  # (n_criteria, n_datasets, n_grid)
    mean = _nanmean(values, axis=1)
    argmin = np.array([[grid[np.nanargmin(v)] if np.isfinite(v).any() else np.nan for v in crit_values]
                       for crit_values in values])
    return CurvesExperiment(parameter, grid, criteria, values, mean, argmin, true)


def _curves_chunk(shared, chunk: Chunk, root, parameter, criteria, grid, n, options) -> np.ndarray:
    """Criterion curves of the chunk's data sets, rows of shape (chunk.size, n_criteria, n_grid)."""
    start = teacher_kernel()
    out = np.full((chunk.size, len(criteria), grid.size), np.nan)
    for row, d in enumerate(range(chunk.start, chunk.stop)):
        gen = item_generator(root, chunk.group, d)
        X, y, _, _ = _teacher_draw("squared_exponential", n, 0, 0.1, gen)
        for c, name in enumerate(criteria):
            crit = make_criterion(name, n, rng=gen, **options)
            curve = criterion_curve(crit, start.kernel, X, y, start.noise_var, parameter, grid).values
            if name.startswith("asc-"):
                curve = np.where(curve < ASC_OUTLIER_NATS, curve, np.nan)    # −I < 128 nats
            out[row, c] = curve
    return out


# --------------------------------------------------------------------------- Experiments 3 and 4


@dataclass(frozen=True, eq=False)
class HyperparameterExperiment:
    """Hyperparameter optimisation by each criterion, scored on test data (Experiments 3 and 4).

    ``smse`` and ``msll`` have shape (n_criteria, n_repetitions); NaN where the optimisation failed.
    ``hyperparameters[c][r]`` is the dict selected by criterion c in repetition r (None if failed).
    """

    setting: str
    kernel: str
    criteria: tuple
    smse: np.ndarray
    msll: np.ndarray
    hyperparameters: tuple

    @property
    def n_repetitions(self) -> int:
        return self.smse.shape[1]

    def wins(self) -> dict:
        """Fraction of repetitions in which each criterion had the lowest test SMSE (ties shared).

        Returns
        -------
        dict
            Criterion -> fraction in [0, 1]; a failed optimisation (NaN SMSE) never wins.
        """
        s = np.where(np.isfinite(self.smse), self.smse, np.inf)
        best = s == s.min(axis=0, keepdims=True)
        return dict(zip(self.criteria, (best / best.sum(axis=0)).mean(axis=1).tolist()))

    def as_dict(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            ``setting``, ``kernel``, ``n_repetitions``, ``criteria``, per criterion the quartiles of
            ``smse`` and ``msll`` over the repetitions, and :meth:`wins` as ``wins_smse``.
        """
        return {"experiment": "hyperparameters", "setting": self.setting, "kernel": self.kernel,
                "n_repetitions": self.n_repetitions, "criteria": list(self.criteria),
                "smse": dict(zip(self.criteria, _rows(_summary(self.smse)))),
                "msll": dict(zip(self.criteria, _rows(_summary(self.msll)))), "wins_smse": self.wins()}


def hyperparameter_experiment(criteria: Sequence[str] = SYNTHETIC_CRITERIA, *, teacher: str = "squared_exponential",
                              data: Dataset | None = None, n_datasets: int = 8, n: int = 64, n_test: int = 2048,
                              sigma_n: float = 0.1, n_partitions: int = 32, n_objects: int = 4,
                              entropy: str = "zero", n_restarts: int = 16, max_iter: int = 16,
                              rng: SeedLike = None, chunk_size: int = DATASETS_PER_CHUNK,
                              executor: Executor | None = None,
                              hooks: Hooks | None = None) -> HyperparameterExperiment:
    """Experiment 3: per repetition draw N = ``n`` training and ``n_test`` test cases from ``teacher``; the
    student (same functional form, hyperparameters unknown) is optimised by each criterion (§5.1.1 restarts);
    record test SMSE and MSLL. ASC: J = 32, L = 2, M = 4 as in the thesis.

    With ``data`` (Experiment 4, thesis: the temperature series, 64 training / 301 test cases, M = 8) each
    repetition is a random split of ``data`` into ``n`` training cases and the rest as test cases, and the
    student is the squared exponential (or the ``teacher``'s form).

    Parameters
    ----------
    criteria : sequence of str, optional
        Names from ``CRITERIA``.
    teacher : str, optional
        A key of ``TEACHERS``; also sets the student's form.
    data : Dataset, optional
        Real regression data for Experiment 4 (instead of teacher draws).
    n_datasets : int, optional
        Number of repetitions, >= 1.
    n : int, optional
        Training cases N (with ``data``: 3 <= n <= data.n − 2).
    n_test : int, optional
        Test cases per teacher draw (unused with ``data``).
    sigma_n : float, optional
        Teacher noise standard deviation.
    n_partitions, n_objects, entropy
        J, M and h(τ) of ASC, as in :func:`curves_experiment`.
    n_restarts, max_iter : int, optional
        L-BFGS-B runs per optimisation and iterations per run.
    rng, chunk_size, executor
        As in :func:`curves_experiment`.
    hooks : Hooks, optional
        Progress and stop hooks (counted in repetitions).

    Returns
    -------
    HyperparameterExperiment
        An optimisation in which every run failed leaves NaN SMSE and MSLL and None hyperparameters.

    Raises
    ------
    ValueError
        If ``n_datasets`` is not an integer >= 1, a criterion or ``teacher`` is unknown, or (with
        ``data``) ``n`` is out of range.
    Cancelled
        If ``hooks`` asks to stop.
    """
    _check_repetitions(n_datasets)
    criteria = _check_criteria(criteria)
    teacher_kernel(teacher)                                           # validates the name
    student = TEACHERS[teacher]
    if data is None:
        setting = f"teacher {teacher}, sigma_n = {sigma_n:g}, N = {n}, {n_test} test cases"
    else:
        _check_n_train(data, n)
        setting = f"{data.name}: random splits, {n} training / {data.n - n} test cases"
    options = dict(n_partitions=n_partitions, n_objects=n_objects, entropy=entropy)
    fit = dict(n_restarts=n_restarts, max_iter=max_iter)
    [(smse, msll, chosen)] = _run(_hyperparameter_chunk, data, 1, n_datasets, rng,
                                  (criteria, teacher, n, n_test, sigma_n, options, fit), chunk_size, executor,
                                  hooks, "repetitions")
    smse, msll, chosen = smse.T, msll.T, chosen.T                     # (n_criteria, n_repetitions)
    return HyperparameterExperiment(setting, student, criteria, smse, msll, tuple(tuple(h) for h in chosen))


def _hyperparameter_chunk(data, chunk: Chunk, root, criteria, teacher, n, n_test, sigma_n, options, fit) -> tuple:
    """Test SMSE, MSLL (rows (chunk.size, n_criteria)) and the selected hyperparameters (object rows, None if
    every run failed) of the chunk's repetitions."""
    smse, msll = np.full((2, chunk.size, len(criteria)), np.nan)
    chosen = np.full((chunk.size, len(criteria)), None, dtype=object)
    for row, r in enumerate(range(chunk.start, chunk.stop)):
        gen = item_generator(root, chunk.group, r)
        X, y, Xt, yt = (_teacher_draw(teacher, n, n_test, sigma_n, gen) if data is None
                        else _random_split(data, n, gen))
        start = initial_hyperparameters(TEACHERS[teacher], X, y)
        for c, name in enumerate(criteria):
            crit = make_criterion(name, y.size, rng=gen, **options)
            try:
                res = optimize_hyperparameters(crit, start.kernel, X, y, start.noise_var, rng=gen, **fit)
            except np.linalg.LinAlgError:
                continue                                              # every run failed: counted as NaN
            err = test_error(res.kernel, res.noise_var, X, y, Xt, yt)
            smse[row, c], msll[row, c], chosen[row, c] = err.smse, err.msll, res.hyperparameters
    return smse, msll, chosen


# --------------------------------------------------------------------------- Experiments 6, 7 and 8


@dataclass(frozen=True, eq=False)
class FunctionalFormExperiment:
    """Functional-form rankings (Experiments 6-8).

    ``ranks`` has shape (n_settings, n_repetitions, n_keys, n_students): settings are the teachers
    (synthetic) or the one data set; keys are the ranking criteria (plus ``"smse"`` with test data); NaN
    where a criterion could not be evaluated and the form was not ranked. ``mean_rank`` averages over
    repetitions (NaN if a repetition left the form unranked); ``hit_rate[s, k]`` is the fraction of repetitions in which key k
    ranked the teacher's own form first (synthetic settings only; NaN otherwise).
    """

    settings: tuple
    students: tuple
    select_by: str
    keys: tuple
    ranks: np.ndarray

    @property
    def mean_rank(self) -> np.ndarray:
        return self.ranks.mean(axis=1)

    @property
    def hit_rate(self) -> np.ndarray:
        out = np.full(self.ranks.shape[0:1] + self.ranks.shape[2:3], np.nan)
        for s, setting in enumerate(self.settings):
            if TEACHERS.get(setting) in self.students:
                own = self.students.index(TEACHERS[setting])
                out[s] = (self.ranks[s, :, :, own] == 1).mean(axis=0)
        return out

    def as_dict(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            ``select_by``, ``settings``, ``students``, ``keys``, ``n_repetitions``, ``mean_rank``
            (n_settings × n_keys × n_students nested lists) and ``hit_rate`` (NaN where undefined).
        """
        return {"experiment": "functional-forms", "select_by": self.select_by, "settings": list(self.settings),
                "students": list(self.students), "keys": list(self.keys),
                "n_repetitions": self.ranks.shape[1], "mean_rank": _nan_list(self.mean_rank),
                "hit_rate": _nan_list(self.hit_rate)}


def functional_form_experiment(select_by: str = "loo",
                               rank_by: Sequence[str] = SYNTHETIC_CRITERIA, *,
                               teachers: Sequence[str] = tuple(TEACHERS), data: Dataset | None = None,
                               students: Sequence[str] = ("se", "rq", "exponential", "periodic"),
                               n_datasets: int = 4, n: int = 128, n_partitions: int = 32, n_objects: int = 8,
                               entropy: str = "zero", n_restarts: int = 16, max_iter: int = 16,
                               rng: SeedLike = None, chunk_size: int = DATASETS_PER_CHUNK,
                               executor: Executor | None = None,
                               hooks: Hooks | None = None) -> FunctionalFormExperiment:
    """Experiment 6 (``select_by="loo"``) / 7 (``"evidence"``): for each teacher draw N = 128 cases, optimise
    every student form by ``select_by`` and rank the selected models by each criterion of ``rank_by``
    (:func:`rank_functional_forms`). ASC: J = 32, L = 2, M = 8.

    With ``data`` (Experiment 8: temperature series, 64 training / 301 test cases) each repetition is a
    random split into ``n`` training cases and test cases, and the test SMSE is one more ranking key.

    Parameters
    ----------
    select_by : str, optional
        Criterion (of ``CRITERIA``) that selects each student's hyperparameters.
    rank_by : sequence of str, optional
        Criteria that rank the selected students.
    teachers : sequence of str, optional
        Keys of ``TEACHERS``, one setting each (ignored with ``data``).
    data : Dataset, optional
        Real regression data for Experiment 8.
    students : sequence of str, optional
        Student kernel names of :func:`explorer.kernels.make_kernel`.
    n_datasets : int, optional
        Repetitions per setting, >= 1.
    n : int, optional
        Training cases N (with ``data``: 3 <= n <= data.n − 2).
    n_partitions, n_objects, entropy
        J, M and h(τ) of ASC, as in :func:`curves_experiment`.
    n_restarts, max_iter : int, optional
        L-BFGS-B runs per optimisation and iterations per run.
    rng, chunk_size, executor
        As in :func:`curves_experiment`; g is the setting.
    hooks : Hooks, optional
        Progress and stop hooks (counted in setting × repetition data sets).

    Returns
    -------
    FunctionalFormExperiment

    Raises
    ------
    ValueError
        If ``n_datasets`` is not an integer >= 1, a criterion or teacher is unknown, or (with ``data``)
        ``n`` is out of range.
    numpy.linalg.LinAlgError
        If a student's selecting criterion cannot be evaluated in any optimisation run.
    Cancelled
        If ``hooks`` asks to stop.
    """
    _check_repetitions(n_datasets)
    rank_by = _check_criteria(rank_by)
    _check_criteria([select_by])
    for t in teachers:
        teacher_kernel(t)
    if data is not None:
        _check_n_train(data, n)
    settings = (data.name,) if data is not None else tuple(teachers)
    keys = tuple(rank_by) + (("smse",) if data is not None else ())
    options = dict(n_partitions=n_partitions, n_objects=n_objects, entropy=entropy, n_restarts=n_restarts,
                   max_iter=max_iter)
    per_setting = _run(_ranking_chunk, data, len(settings), n_datasets, rng,
                       (settings, select_by, rank_by, tuple(students), keys, n, options), chunk_size, executor,
                       hooks, "data sets")
    ranks = np.stack(per_setting)           # float: NaN where a criterion could not be evaluated (unranked)
    return FunctionalFormExperiment(settings, tuple(students), select_by, keys, ranks)


def _ranking_chunk(data, chunk: Chunk, root, settings, select_by, rank_by, students, keys, n, options) -> np.ndarray:
    """Ranks of the students by every key for the chunk's data sets of setting ``chunk.group``, rows of shape
    (chunk.size, n_keys, n_students)."""
    out = np.empty((chunk.size, len(keys), len(students)))
    for row, r in enumerate(range(chunk.start, chunk.stop)):
        gen = item_generator(root, chunk.group, r)
        X, y, Xt, yt = (_random_split(data, n, gen) if data is not None
                        else _teacher_draw(settings[chunk.group], n, 0, 0.1, gen))
        test = dict(X_test=Xt, y_test=yt) if data is not None else {}
        rows = rank_functional_forms(X, y, students, select_by=select_by, rank_by=rank_by, rng=gen,
                                               **options, **test)
        out[row] = [[np.nan if rr.ranks[k] is None else rr.ranks[k] for rr in rows] for k in keys]
    return out


# --------------------------------------------------------------------------- Experiment 10


@dataclass(frozen=True, eq=False)
class BetaExperiment:
    """Boltzmann ASC I_β vs β at the teacher's hyperparameters (Experiment 10, Fig. 5.15).

    ``curves`` (n_datasets, n_beta) is each data set's I_β (mean over its partitions; NaN if all were
    excluded), ``mean`` their average, ``beta_star`` (n_datasets,) the per-data-set maximiser.
    """

    teacher: str
    betas: np.ndarray
    curves: np.ndarray
    mean: np.ndarray
    beta_star: np.ndarray
    n_failed: int

    def as_dict(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            ``teacher``, ``betas``, the ``mean`` curve (NaN where no data set was finite), ``n_failed`` and
            the quartiles of ``beta_star`` over the data sets.
        """
        return {"experiment": "beta", "teacher": self.teacher, "betas": self.betas.tolist(),
                "mean": _nan_list(self.mean), "n_failed": self.n_failed,
                "beta_star": _rows(_summary(self.beta_star[None, :]))[0]}


def beta_experiment(teacher: str = "squared_exponential", *, n_datasets: int = 8, n: int = 64, betas=None,
                    n_partitions: int = 1, n_objects: int = 8, entropy: str = "zero", rng: SeedLike = None,
                    chunk_size: int = DATASETS_PER_CHUNK, executor: Executor | None = None,
                    hooks: Hooks | None = None) -> BetaExperiment:
    """Experiment 10: per data set (N = 64 from ``teacher``) I_β on a grid of β (default 64 log-spaced values
    in [10⁻², 10²]) with h(τ) = 0, L = 2, M = 8 and one partition ("one drawn objective function").
    The thesis finds the mean curve peaking near β = 1 for every covariance function.

    Parameters
    ----------
    teacher : str, optional
        A key of ``TEACHERS``; I_β is evaluated at its hyperparameters (σ_n = 1/10).
    n_datasets : int, optional
        Number of data sets, >= 1.
    n : int, optional
        Cases N per data set.
    betas : array_like of shape (n_beta,), optional
        Positive grid of β.
    n_partitions, n_objects, entropy
        J, M and h(τ) of ASC (L = 2), as in :func:`curves_experiment`.
    rng, chunk_size, executor
        As in :func:`curves_experiment`.
    hooks : Hooks, optional
        Progress and stop hooks (counted in data sets).

    Returns
    -------
    BetaExperiment
        ``beta_star[d]`` is the median over data set d's partitions of their maximiser; data sets whose
        partitions were all singular are counted in ``n_failed`` and left NaN.

    Raises
    ------
    ValueError
        If ``n_datasets`` is not an integer >= 1, ``teacher`` is unknown, ``betas`` is not a non-empty
        1-D positive array, or the ASC counts are out of range.
    Cancelled
        If ``hooks`` asks to stop.
    """
    _check_repetitions(n_datasets)
    teacher_kernel(teacher)                                           # validates the name
    betas = np.geomspace(1e-2, 1e2, 64) if betas is None else np.asarray(betas, dtype=float)
    [(curves, star, failed)] = _run(_beta_chunk, None, 1, n_datasets, rng,
                                    (teacher, n, betas, n_partitions, n_objects, entropy), chunk_size, executor,
                                    hooks, "data sets")
    failed = int(failed.sum())
    return BetaExperiment(teacher, betas, curves, _nanmean(curves, axis=0), star, failed)


def _beta_chunk(shared, chunk: Chunk, root, teacher, n, betas, n_partitions, n_objects, entropy) -> tuple:
    """I_β curves (rows (chunk.size, n_beta)), the median maximisers β* and whether all partitions were
    singular, of the chunk's data sets."""
    start = teacher_kernel(teacher)
    curves, star = np.full((chunk.size, betas.size), np.nan), np.full(chunk.size, np.nan)
    failed = np.zeros(chunk.size, dtype=bool)
    for row, d in enumerate(range(chunk.start, chunk.stop)):
        gen = item_generator(root, chunk.group, d)
        X, y, _, _ = _teacher_draw(teacher, n, 0, 0.1, gen)
        parts = asc.draw_partitions(n, n_partitions, 2, n_objects, gen)
        try:
            res = asc.mutual_information_vs_beta(start.kernel, X, y, start.noise_var, parts, betas, entropy)
        except asc.SingularPartitionsError:
            failed[row] = True
            continue
        curves[row], star[row] = res.mean, np.nanmedian(res.beta_star)
    return curves, star, failed
