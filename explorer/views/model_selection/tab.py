"""GP model selection of seed 001 in the explorer: session state, figures, exports and a tab.

:class:`SelectionState` (param, no widgets) holds the controls — dataset, kernel, criteria, the
hyperparameter swept on the curves, the sizes of the random parts — and, as output parameters, what the
compute core (:mod:`explorer.model_selection.criteria`) returns for them: every criterion as a function of one
hyperparameter with the others fixed (Fig. 5.3-5.5), the hyperparameters selected by optimising each
criterion (with test errors when test rows exist), and the ranking of functional forms (§5.3). Every
computation runs as a background :class:`~explorer.views.common.jobs.Job` (progress, cancel between criteria or
kernels) and lands in a result cache shared by the sessions, as in :mod:`explorer.views.svm_bootstrap.tab`.

The figure functions (:func:`criteria_plot`, :func:`prediction_plot`) and the tables and exports
(:func:`curve_frame`, :func:`optima_frame`, :func:`ranking_frame`, :func:`csv_text`, :func:`html_text`)
only arrange those results; :class:`SelectionTab` lays them out. The state computes nothing until
:meth:`SelectionState.refresh` is first called (the tab calls it when shown).

:class:`SelectionExperimentState` runs the thesis experiments of :mod:`explorer.model_selection.experiments` (the
CLI's ``select-experiment``) as one more background job of the same kind; :func:`experiment_plot`,
:func:`experiment_frame`, :func:`experiment_csv` and :func:`experiment_json` show and export its result, and
:class:`SelectionExperimentsPanel` is the tab's "Experiments" sub-panel.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.embed import file_html
from bokeh.resources import INLINE

from explorer.model_selection import asc
from explorer.gp_bootstrap import replica
from explorer.model_selection import criteria as selection
from explorer import datasets, regression
from explorer.model_selection import experiments as sx
from explorer.kernels import KERNEL_NAMES, Kernel, make_kernel
from explorer.progress import Hooks
from explorer.model_selection.problem import SelectionProblem, selection_problem
from explorer.model_selection.criteria import (
    CRITERIA,
    CRITERION_LABELS,
    CriterionCurve,
    RankingRow,
    SelectionResult,
)
from explorer.views.common.caches import lru
from explorer.views.common.jobs import BackgroundJobs, Job
from explorer.views.common.session import bind_to_session
from explorer.views.common.widgets import job_indicators
from explorer.views.common.uploads import UPLOAD, read_upload, use_uploaded_table

__all__ = [
    "SelectionState", "SelectionTab", "SelectionProblem", "SelectionCurves", "SelectionFits", "SelectionRanking",
    "SELECTION_DATASETS", "UPLOAD", "JOB_KINDS", "CURVE_PARAMETERS", "EXPORT_COLUMNS", "TEACHER_HYPERPARAMETERS",
    "describe_error", "criteria_plot", "prediction_plot", "curve_frame", "optima_frame",
    "ranking_frame", "csv_text", "html_text", "settings_line", "normalise",
    "SelectionExperimentState", "SelectionExperimentsPanel", "EXPERIMENTS", "EXPERIMENT_DATA", "EXPERIMENT_COLUMNS",
    "TEMPERATURE_COLUMNS", "experiment_frame", "experiment_plot", "experiment_csv", "experiment_json",
    "experiment_summary", "experiment_settings_line",
]


#: Shipped or generated regression data: the GP teacher of seed 001 (1-D), the toy function, Boston housing.
SELECTION_DATASETS = ("teacher", "toy", "boston")
#: ``dataset`` value of a CSV uploaded in the page.
#: Background jobs: criterion curves, optimisation under each criterion, ranking of functional forms.
JOB_KINDS = ("curves", "optima", "ranking")
#: Every hyperparameter a curve can sweep (the kernel decides which of them exist).
CURVE_PARAMETERS = ("lengthscale", "signal_std", "noise_std", "alpha", "period")
#: The teacher of seed 001 §5.1 (ℓ = 1, σ_f = 1, σ_n = 0.1, α = 1/2, T = 2): the fixed values of its curves.
TEACHER_HYPERPARAMETERS = {"lengthscale": 1.0, "signal_var": 1.0, "alpha": 0.5, "period": 2.0, "noise_var": 0.01}
#: Controls that change what has to be computed.
_COMPUTE_PARAMETERS = ("dataset", "target", "n_points", "n_test", "standardize", "kernel", "parameter", "criteria",
                       "curve_points", "curve_decades", "n_folds", "n_partitions", "n_objects", "entropy",
                       "n_restarts", "max_iter", "rank_kernels", "select_by", "seed", "auto_run")
_OUTPUTS = ("problem", "curves", "optima", "ranking")

#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError,
                   IndexError)

#: Columns of the CSV exports (all in long format, one row per criterion and point / kernel).
EXPORT_COLUMNS = {
    "curves": ["criterion", "parameter", "parameter_value", "criterion_value", "normalised", "is_minimum"],
    "optima": ["criterion", "value", "hyperparameters", "converged", "n_restarts", "n_failed", "n_iter",
               "n_evaluations", "n_excluded", "test_smse", "test_msll"],
    "ranking": ["kernel", "select_by", "hyperparameters", "criterion", "value", "rank"],
}


# ------------------------------------------------------------------------------------ result objects


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


@dataclass(frozen=True, eq=False)
class SelectionFits:
    """The hyperparameters selected by each criterion so far, in the order of ``criteria``."""

    results: tuple[SelectionResult, ...]
    criteria: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.criteria)


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


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the selection core or the data."""
    if isinstance(err, replica.ConvergenceError):
        return (f"The replica theory of the bootstrap .632 criterion did not converge: {err} Leave out "
                "'bootstrap632' or change the kernel.")
    if isinstance(err, np.linalg.LinAlgError):
        return (f"The covariance matrix could not be factorised ({err}). Duplicate inputs with tiny noise are "
                "the usual cause: standardise the data or change the kernel.")
    if isinstance(err, FloatingPointError):
        return f"The computation became numerically unstable ({err}). Standardise the data or change the kernel."
    if isinstance(err, datasets.DatasetError):
        return f"The data cannot be used: {err}"
    return str(err) if isinstance(err, ValueError) else f"{type(err).__name__}: {err}"


# ------------------------------------------------------------------------------------ caches

_PROBLEMS = lru("model_selection.problems", 16)  # SelectionProblem per data settings
# SelectionCurves per (problem, kernel, parameter, grid, criteria, options, seed)
_CURVES = lru("model_selection.curves", 32)
# SelectionFits per (problem, kernel, criteria, options, restarts, seed)
_OPTIMA = lru("model_selection.optima", 32)
# SelectionRanking per (problem, kernels, select_by, criteria, options, restarts, seed)
_RANKINGS = lru("model_selection.rankings", 16)
# selection_experiments results per (settings, temperature file hash)
_EXPERIMENT_RESULTS = lru("model_selection.experiment_results", 16)
_TEMPERATURE = lru("model_selection.temperature", 4)  # parsed temperature series per file hash


# ------------------------------------------------------------------------------------ computations


def _curve_parameters(kernel_name: str) -> list[str]:
    names = make_kernel(kernel_name, 1).hyperparameter_names
    return [("signal_std" if n == "signal_var" else n) for n in names] + ["noise_std"]


def reference_hyperparameters(problem: SelectionProblem, kernel_name: str) -> tuple[Kernel, float]:
    """The fixed hyperparameters of the curves: the teacher's (§5.1) on teacher data, else the data-scaled
    start of :func:`selection.initial_hyperparameters`."""
    if not problem.teacher:
        start = selection.initial_hyperparameters(kernel_name, problem.X, problem.y)
        return start.kernel, start.noise_var
    names = make_kernel(kernel_name, problem.d).hyperparameter_names
    hyper = {k: v for k, v in TEACHER_HYPERPARAMETERS.items() if k in names}
    return make_kernel(kernel_name, problem.d, **hyper), TEACHER_HYPERPARAMETERS["noise_var"]


def _criterion(name: str, problem: SelectionProblem, gen, options: dict):
    return selection.make_criterion(name, problem.n, rng=gen, **options)


def _hooks(job: Job, partial: Callable[[object], None] | None = None) -> Hooks:
    """The core's hooks for ``job``: its progress, its stop flag, ``partial`` for partial results."""
    return Hooks(progress=job.report, should_stop=job.should_stop, partial=partial)


def _curves(problem, kernel_name, parameter, points, decades, criteria, options, seed, job: Job) -> SelectionCurves:
    """Each criterion along ``parameter`` in turn (cancellable in between); ``job.partial`` after each."""
    kernel, noise_var = reference_hyperparameters(problem, kernel_name)
    reference = selection.hyperparameter_dict(kernel, noise_var)
    centre = float(reference[parameter])
    grid = np.geomspace(centre * 10.0**-decades, centre * 10.0**decades, points)
    gen = np.random.default_rng(seed)
    hooks, n = _hooks(job), len(criteria)
    done: list[CriterionCurve] = []
    out = SelectionCurves((), criteria, parameter, reference)
    for j, name in enumerate(criteria):
        hooks.check(j, n, "criteria")
        label = f"curve of {name} ({j + 1}/{n})"
        hooks.report(j / n, label)
        crit = _criterion(name, problem, gen, options)
        done.append(selection.criterion_curve(crit, kernel, problem.X, problem.y, noise_var, parameter, grid,
                                              hooks=hooks.sub(j / n, 1 / n, label, count=(j, n, "criteria"))))
        out = SelectionCurves(tuple(done), criteria, parameter, reference)
        job.partial(out)
    return out


def _optima(problem, kernel_name, criteria, options, restarts, max_iter, seed, job: Job) -> SelectionFits:
    """:func:`selection.select_hyperparameters` from the data-scaled start, each criterion's result published."""
    start = selection.initial_hyperparameters(kernel_name, problem.X, problem.y)
    test = {} if problem.X_test is None else {"X_test": problem.X_test, "y_test": problem.y_test}
    results = selection.select_hyperparameters(
        problem.X, problem.y, start.kernel, criteria, noise_var=start.noise_var, rng=seed, n_restarts=restarts,
        max_iter=max_iter, **test, **options,
        hooks=_hooks(job, lambda done: job.partial(SelectionFits(done, criteria))))
    return SelectionFits(results, criteria)


def _ranking(problem, kernels, select_by, rank_by, options, restarts, max_iter, seed, job: Job) -> SelectionRanking:
    """:func:`selection.rank_functional_forms`, the rows published (without ranks) after each kernel."""
    test = {} if problem.X_test is None else {"X_test": problem.X_test, "y_test": problem.y_test}
    rows = selection.rank_functional_forms(
        problem.X, problem.y, kernels, select_by=select_by, rank_by=rank_by, rng=seed, n_restarts=restarts,
        max_iter=max_iter, **test, **options,
        hooks=_hooks(job, lambda done: job.partial(SelectionRanking(done, kernels, select_by, rank_by))))
    return SelectionRanking(rows, kernels, select_by, rank_by)


# ------------------------------------------------------------------------------------ the state


class _BackgroundJobs(BackgroundJobs):
    """The job machinery of :mod:`explorer.views.common.jobs` with this module's error vocabulary."""

    expected_errors = EXPECTED_ERRORS
    describe_error = staticmethod(describe_error)


class SelectionState(_BackgroundJobs, param.Parameterized):
    """Controls of the model-selection view and the core results for them, for one session (or notebook).

    Set the controls, call :meth:`refresh` (later changes refresh by themselves), then :meth:`wait` for the
    background jobs. Outputs: ``problem`` (training and test rows), ``curves``, ``optima``, ``ranking`` and
    ``error``; ``jobs[kind]`` reports each job (kinds ``JOB_KINDS``).
    """

    # --- data
    dataset = param.Selector(default="teacher", objects=list(SELECTION_DATASETS), label="Dataset",
                             doc="teacher: 1-D draws from the GP teacher of seed 001 (squared exponential, ℓ = 1, "
                                 "σ_f = 1, σ_n = 0.1, the thesis setting); toy: sin(5x) + sin(15x) + sin(25x) "
                                 "plus noise; boston: Boston housing (13 inputs); or an uploaded CSV.")
    target = param.Selector(default=None, objects=[], allow_None=True, label="Target column",
                            doc="Column of an uploaded CSV holding the real-valued target; every other column "
                                "is an input.")
    n_points = param.Integer(default=64, bounds=(8, 5000), softbounds=(16, 500), label="Training cases N",
                             doc="Training cases: drawn from the teacher (the thesis uses N = 64), or a random "
                                 "subset (by the seed) of the rows of the other datasets.")
    n_test = param.Integer(default=256, bounds=(0, 20_000), softbounds=(0, 2048), label="Test cases",
                           doc="Test cases for SMSE (eq. 5.1) and MSLL of each selected model: further teacher "
                               "draws, or the rows not used for training (0: no test errors).")
    standardize = param.Boolean(default=False, label="Standardise inputs and target",
                                doc="Scale every input column and the target to mean 0 and sample sd 1 (by the "
                                    "training rows, as `explorer select --standardize`). Recommended for boston and "
                                    "most CSVs; the teacher is already on that scale.")
    # --- model
    kernel = param.Selector(default="se", objects=list(KERNEL_NAMES), label="Covariance function",
                            doc="Kernel whose hyperparameters the criteria select: squared exponential (se), "
                                "rational quadratic (rq), exponential, Matérn 3/2 and 5/2, periodic.")
    criteria = param.ListSelector(default=["evidence", "loo", "kfold", "asc-beta-noise", "bootstrap632"],
                                  objects=list(CRITERIA), label="Criteria",
                                  doc="Model-selection criteria (lower is better): negative log evidence, LOO-CV, "
                                      "K-fold CV, the three ASC variants (−I) and the bootstrap .632 error.")
    # --- curves (Fig. 5.3-5.5)
    parameter = param.Selector(default="lengthscale", objects=list(CURVE_PARAMETERS), label="Hyperparameter swept",
                               doc="The curves vary this hyperparameter (standard deviations for signal and noise) "
                                   "with the others fixed: the teacher's values on teacher data, else a "
                                   "data-scaled start.")
    curve_points = param.Integer(default=15, bounds=(3, 200), softbounds=(5, 60), label="Curve points",
                                 doc="Grid points of each curve (log-spaced).")
    curve_decades = param.Number(default=1.0, bounds=(0.1, 4.0), softbounds=(0.3, 2.0), step=0.1,
                                 label="Curve range (decades each side)",
                                 doc="The grid spans the fixed value × 10^(± this).")
    # --- random parts of the criteria
    n_folds = param.Integer(default=5, bounds=(2, 1000), softbounds=(2, 20), label="K-fold: K",
                            doc="Folds K of K-fold CV (capped at N; K = N is leave-one-out).")
    n_partitions = param.Integer(default=8, bounds=(1, 1000), softbounds=(2, 64), label="ASC: partitions J",
                                 doc="Random partitions J of ASC (Algorithm 2; the thesis uses 32).")
    n_objects = param.Integer(default=8, bounds=(1, 1000), softbounds=(2, 32), label="ASC: objects M",
                              doc="Objects M per subset of an ASC partition (L = 2 subsets; thesis: 4 or 8).")
    entropy = param.Selector(default="zero", objects=list(asc.ENTROPIES), label="ASC: h(τ)",
                             doc="Entropy term of ASC (eq. 4.2): zero, or the prior entropy.")
    # --- optimisation
    n_restarts = param.Integer(default=3, bounds=(1, 200), softbounds=(1, 32), label="Restarts",
                               doc="L-BFGS runs per criterion from Cauchy-distributed starts (the thesis uses 16).")
    max_iter = param.Integer(default=16, bounds=(1, 1000), softbounds=(4, 100), label="Iterations per run",
                             doc="Maximum L-BFGS iterations per run (the thesis uses 16).")
    rank_kernels = param.ListSelector(default=["se", "rq", "exponential", "periodic"], objects=list(KERNEL_NAMES),
                                      label="Functional forms ranked",
                                      doc="Covariance functions compared (§5.3): each is optimised by the "
                                          "'select by' criterion, then ranked by every chosen criterion.")
    select_by = param.Selector(default="loo", objects=list(CRITERIA), label="Select by",
                               doc="Criterion that optimises the hyperparameters of each functional form.")
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Seed",
                         doc="Seed of the teacher draw / row subset, the folds and partitions and the restarts; "
                             "same settings and seed, same numbers.")
    auto_run = param.Boolean(default=True, label="Run automatically",
                             doc="Start the optimisation and the ranking whenever the settings change (else press "
                                 "Run); the curves always run.")

    # --- outputs
    problem = param.ClassSelector(class_=SelectionProblem, default=None, allow_None=True, precedence=-1,
                                  label="Problem", doc="Output: training and test rows as used.")
    curves = param.ClassSelector(class_=SelectionCurves, default=None, allow_None=True, precedence=-1,
                                 label="Criterion curves", doc="Output: the criteria along the swept hyperparameter.")
    optima = param.ClassSelector(class_=SelectionFits, default=None, allow_None=True, precedence=-1,
                                 label="Selected hyperparameters", doc="Output: the optimum of each criterion.")
    ranking = param.ClassSelector(class_=SelectionRanking, default=None, allow_None=True, precedence=-1,
                                  label="Ranking", doc="Output: functional forms ranked by each criterion.")
    error = param.String(default="", precedence=-1, label="Error",
                         doc="Output: why the current settings cannot be computed; empty when they can.")

    _job_kinds = JOB_KINDS
    _outputs = _OUTPUTS

    def __init__(self, **params):
        super().__init__(**params)
        self._init_jobs()
        self._upload: tuple[str, str, str] | None = None
        self.param.watch(self._on_change, list(_COMPUTE_PARAMETERS))

    def _auto_run(self) -> bool:
        return bool(self.auto_run)

    # ----------------------------------------------------------------------------- public API

    def upload_csv(self, filename: str, content: bytes | str, target: str | None = None) -> None:
        """Use an uploaded CSV as the dataset; ``target`` (default: the last column) is the regression target."""
        use_uploaded_table(self, filename, content, target, "inputs and a target")

    # ----------------------------------------------------------------------------- settings → problem

    def _data_key(self) -> tuple:
        if self.dataset == UPLOAD:
            if self._upload is None:
                raise datasets.DatasetError("no CSV has been uploaded in this session; upload the file again.")
            source = ("upload", self._upload[2], self.target)
        else:
            source = ("shipped", self.dataset)
        return source + (int(self.n_points), int(self.n_test), bool(self.standardize), int(self.seed))

    def _load(self) -> datasets.Dataset:
        if self.dataset == "teacher":
            return datasets.load("teacher", n=int(self.n_points) + int(self.n_test), rng=int(self.seed))
        if self.dataset != UPLOAD:
            return datasets.load(self.dataset)
        if self.target is None:
            raise datasets.DatasetError("choose the column of the CSV file that holds the target.")
        name, text, _ = self._upload
        return datasets.load_csv(io.StringIO(text), self.target, name=Path(name).stem, task="regression")

    def _build_problem(self) -> SelectionProblem:
        """The core's :func:`selection_problem` (as the CLI's ``select``): teacher rows in order, other data
        split after a permutation drawn from the seed."""
        teacher = self.dataset == "teacher"
        return selection_problem(self._load(), n_train=int(self.n_points), n_test=int(self.n_test),
                                 rng=None if teacher else int(self.seed), standardize=bool(self.standardize),
                                 teacher=teacher)

    # ----------------------------------------------------------------------------- refresh

    def _options(self) -> dict:
        return dict(n_folds=int(self.n_folds), n_partitions=int(self.n_partitions), n_subsets=2,
                    n_objects=int(self.n_objects), entropy=self.entropy)

    def _refresh_outputs(self) -> None:
        allowed = _curve_parameters(self.kernel)
        parameter = self.parameter if self.parameter in allowed else "lengthscale"
        if parameter != self.parameter:
            self._assign("parameter", parameter)
        criteria = tuple(c for c in CRITERIA if c in self.criteria)
        if not criteria:
            raise ValueError("Choose at least one criterion.")
        kernels = tuple(k for k in KERNEL_NAMES if k in self.rank_kernels)
        if not kernels:
            raise ValueError("Choose at least one functional form to rank.")
        data_key = self._data_key()
        problem = _PROBLEMS.get_or_compute(data_key, self._build_problem)
        if 2 * int(self.n_objects) > problem.n and any(c.startswith("asc") for c in criteria + (self.select_by,)):
            raise ValueError(f"ASC needs 2 subsets of M = {self.n_objects} objects, more than the N = {problem.n} "
                             "training cases: lower 'ASC: objects M' or raise N.")
        self._assign("problem", problem)
        opts, seed, kname = self._options(), int(self.seed), self.kernel
        okey = tuple(sorted(opts.items()))
        restarts, max_iter = int(self.n_restarts), int(self.max_iter)
        points, decades = int(self.curve_points), float(self.curve_decades)
        self._request("curves", (data_key, kname, parameter, points, decades, criteria, okey, seed), "curves",
                      _CURVES, lambda job: _curves(problem, kname, parameter, points, decades, criteria, opts, seed,
                                                   job), optional=False)
        self._request("optima", (data_key, kname, criteria, okey, restarts, max_iter, seed), "optima", _OPTIMA,
                      lambda job: _optima(problem, kname, criteria, opts, restarts, max_iter, seed, job))
        select_by = self.select_by
        self._request("ranking", (data_key, kernels, select_by, criteria, okey, restarts, max_iter, seed), "ranking",
                      _RANKINGS, lambda job: _ranking(problem, kernels, select_by, criteria, opts, restarts,
                                                      max_iter, seed, job))

# ------------------------------------------------------------------------------------ figures

NORM_DIM = hv.Dimension("normalised", label="criterion, normalised to [0, 1] (lower is better)", range=(-0.05, 1.05))
Y_DIM = hv.Dimension("y", label="target y")
_SIZE = dict(responsive=True, height=430)
_EMPTY = np.array([])
#: One colour per criterion, the same in every figure.
CRITERION_COLORS = dict(zip(CRITERIA, ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                        "#e377c2")))


def normalise(values: np.ndarray) -> np.ndarray:
    """Map the finite values linearly onto [0, 1] (min → 0, max → 1); NaN stays NaN, a flat curve is 0."""
    values = np.asarray(values, dtype=float)
    ok = np.isfinite(values)
    if not ok.any():
        return np.full(values.shape, np.nan)
    lo, hi = values[ok].min(), values[ok].max()
    return np.where(ok, (values - lo) / (hi - lo) if hi > lo else 0.0, np.nan)


def _param_label(parameter: str) -> str:
    return {"signal_std": "signal sd σ_f", "noise_std": "noise sd σ_n", "lengthscale": "lengthscale ℓ",
            "alpha": "shape α", "period": "period T"}.get(parameter, parameter)


def criteria_plot(state: SelectionState) -> hv.Overlay:
    """Every chosen criterion vs the swept hyperparameter (log axis), each normalised to [0, 1] so they share
    one axis (Fig. 5.3-5.5), with a marker at each curve's minimum; the fixed value as a dotted line."""
    curves = state.curves
    parameter = curves.parameter if curves is not None else state.parameter
    x_dim = hv.Dimension("parameter_value", label=_param_label(parameter))
    layers = []
    for c in (curves.curves if curves is not None else ()):
        color = CRITERION_COLORS[c.criterion]
        norm = normalise(c.values)
        layers.append(hv.Curve((c.grid, norm), x_dim, NORM_DIM, label=CRITERION_LABELS[c.criterion]).opts(
            color=color, line_width=2, framewise=True, logx=True))
        if np.isfinite(c.best):
            i = int(np.flatnonzero(c.grid == c.best)[0])
            layers.append(hv.Scatter(([c.best], [norm[i]]), x_dim, NORM_DIM).opts(
                color=color, size=11, marker="circle", line_color="black", framewise=True, logx=True))
    if not layers:
        layers.append(hv.Curve((_EMPTY, _EMPTY), x_dim, NORM_DIM).opts(framewise=True, logx=True))
    overlay = hv.Overlay(layers)
    if curves is not None:
        overlay = overlay * hv.VLine(float(curves.reference[parameter])).opts(color="gray", line_dash="dotted")
    fixed = "teacher values" if state.problem is not None and state.problem.teacher else "data-scaled start"
    title = f"Criteria vs {_param_label(parameter)}, others fixed ({fixed}); ● = minimum"
    return overlay.opts(
        logx=True, legend_position="top_left", title=title, show_grid=True, **_SIZE)


def _predictions(result: SelectionResult, problem: SelectionProblem, Xs: np.ndarray):
    post = regression.fit(result.kernel, problem.X, problem.y, result.noise_var)
    mean, var = post.predict(Xs, return_var=True)
    return mean, 2.0 * np.sqrt(np.maximum(var, 0.0))


def prediction_plot(state: SelectionState, points: int = 300) -> hv.Overlay:
    """The predictive mean ± 2σ (σ of the latent f) of the model each criterion selected, over the data.

    1-D inputs: the training data (black) and test data (grey) with one mean and band per criterion.
    More inputs: predicted mean (± 2σ) against the target on the test rows (training rows if none), with
    the diagonal of perfect prediction.
    """
    problem, fits = state.problem, state.optima
    results = fits.results if fits is not None else ()
    if problem is None:
        return hv.Overlay([hv.Curve((_EMPTY, _EMPTY), "x", Y_DIM)]).opts(title="No data", **_SIZE)
    if problem.d == 1:
        x_dim = hv.Dimension("x", label=problem.feature_names[0] if problem.feature_names else "x")
        xs = np.concatenate([problem.X[:, 0]] + ([problem.X_test[:, 0]] if problem.X_test is not None else []))
        pad = 0.05 * (np.ptp(xs) or 1.0)
        grid = np.linspace(xs.min() - pad, xs.max() + pad, points)
        layers = []
        if problem.X_test is not None:
            layers.append(hv.Scatter((problem.X_test[:, 0], problem.y_test), x_dim, Y_DIM, label="test data").opts(
                color="#bbbbbb", size=3))
        layers.append(hv.Scatter((problem.X[:, 0], problem.y), x_dim, Y_DIM, label="training data").opts(
            color="black", size=5))
        for res in results:
            mean, band = _predictions(res, problem, grid[:, None])
            color = CRITERION_COLORS[res.criterion]
            layers.append(hv.Area((grid, mean - band, mean + band), x_dim, [Y_DIM, "y2"]).opts(
                color=color, alpha=0.15, line_alpha=0))
            layers.append(hv.Curve((grid, mean), x_dim, Y_DIM, label=f"{res.criterion}: mean ± 2σ").opts(
                color=color, line_width=2))
        title = f"Predictive mean ± 2σ of each selected model, {problem.name} (N = {problem.n})"
        return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
            legend_position="top_left", title=title, show_grid=True, **_SIZE)
    X, y, which = ((problem.X_test, problem.y_test, "test") if problem.X_test is not None
                   else (problem.X, problem.y, "training"))
    t_dim, p_dim = hv.Dimension("target", label=f"target ({which} rows)"), hv.Dimension("predicted",
                                                                                          label="predicted mean")
    lo, hi = float(np.min(y)), float(np.max(y))
    layers = [hv.Curve(([lo, hi], [lo, hi]), t_dim, p_dim, label="perfect prediction").opts(
        color="gray", line_dash="dashed")]
    for res in results:
        mean, band = _predictions(res, problem, X)
        color = CRITERION_COLORS[res.criterion]
        layers.append(hv.ErrorBars((y, mean, band), t_dim, [p_dim, "band"]).opts(color=color, alpha=0.4))
        layers.append(hv.Scatter((y, mean), t_dim, p_dim, label=f"{res.criterion}: mean ± 2σ").opts(
            color=color, size=5))
    title = f"Predicted vs target of each selected model, {problem.name} ({problem.d} inputs)"
    return hv.Overlay([e.opts(framewise=True) for e in layers]).opts(
        legend_position="top_left", title=title, show_grid=True, **_SIZE)


# ------------------------------------------------------------------------------------ tables and exports


def _hyper_text(hyper: dict) -> str:
    return json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in hyper.items()})


def curve_frame(state: SelectionState) -> pd.DataFrame:
    """Every curve point: criterion, swept value, criterion value, normalised value, minimum flag."""
    rows = []
    for c in (state.curves.curves if state.curves is not None else ()):
        for x, v, nv in zip(c.grid, c.values, normalise(c.values)):
            rows.append({"criterion": c.criterion, "parameter": c.parameter, "parameter_value": x,
                         "criterion_value": v, "normalised": nv, "is_minimum": bool(x == c.best)})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["curves"])


def optima_frame(state: SelectionState) -> pd.DataFrame:
    """The hyperparameters each criterion selected, its value there, optimiser diagnostics, test errors."""
    rows = []
    for r in (state.optima.results if state.optima is not None else ()):
        rows.append({"criterion": r.criterion, "value": r.value, "hyperparameters": _hyper_text(r.hyperparameters),
                     "converged": r.converged, "n_restarts": r.n_restarts, "n_failed": r.n_failed,
                     "n_iter": r.n_iter, "n_evaluations": r.n_evaluations, "n_excluded": r.n_excluded,
                     "test_smse": r.test.smse if r.test else np.nan, "test_msll": r.test.msll if r.test else np.nan})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["optima"])


def ranking_frame(state: SelectionState) -> pd.DataFrame:
    """The ranking table: one row per functional form, the value and rank (1 = best) under each criterion
    (and test SMSE when test rows exist), the hyperparameters chosen by 'select by'."""
    ranking = state.ranking
    if ranking is None:
        return pd.DataFrame(columns=["kernel", "hyperparameters"])
    keys = list(ranking.rank_by) + (["smse"] if any(r.test is not None for r in ranking.rows) else [])
    rows = []
    for r in ranking.rows:
        row = {"kernel": r.kernel_name}
        for c in keys:
            row[f"rank {c}"] = r.ranks.get(c, np.nan)
            row[c] = r.values.get(c, np.nan)
        row["hyperparameters"] = _hyper_text(r.selection.hyperparameters)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(f"rank {ranking.select_by}", kind="stable") if (
        ranking.complete and f"rank {ranking.select_by}" in frame) else frame


def _ranking_long(state: SelectionState) -> pd.DataFrame:
    ranking = state.ranking
    rows = []
    for r in (ranking.rows if ranking is not None else ()):
        for c, v in r.values.items():
            rows.append({"kernel": r.kernel_name, "select_by": ranking.select_by,
                         "hyperparameters": _hyper_text(r.selection.hyperparameters), "criterion": c, "value": v,
                         "rank": r.ranks.get(c, np.nan)})
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS["ranking"])


_FIGURES = {"curves": criteria_plot, "predictions": prediction_plot}
_FRAMES = {"curves": curve_frame, "optima": optima_frame, "ranking": _ranking_long}


def settings_line(state: SelectionState) -> str:
    """The controls behind a figure or table, for the header of its exports."""
    target = f" target={state.target}" if state.dataset == UPLOAD else ""
    return (f"dataset={state.dataset}{target} N={state.n_points} n_test={state.n_test} "
            f"standardize={state.standardize} kernel={state.kernel} parameter={state.parameter} "
            f"criteria={','.join(state.criteria)} K={state.n_folds} J={state.n_partitions} M={state.n_objects} "
            f"entropy={state.entropy} restarts={state.n_restarts} max_iter={state.max_iter} "
            f"rank_kernels={','.join(state.rank_kernels)} select_by={state.select_by} seed={state.seed}")


def csv_text(state: SelectionState, what: str) -> str:
    """CSV of ``what`` ("curves", "optima" or "ranking"), with a comment line naming the settings."""
    return f"# GP model selection (seed 001): {settings_line(state)}\n" + _FRAMES[what](state).to_csv(index=False)


def html_text(state: SelectionState, what: str) -> str:
    """``what`` as a standalone HTML page: a figure ("curves", "predictions", Bokeh with inlined resources)
    or the ranking table ("ranking")."""
    title = f"Resampling Explorer: model selection {what} — {settings_line(state)}"
    if what == "ranking":
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
                f"<h1>Ranking of functional forms</h1><p>{settings_line(state)}</p>"
                f"{ranking_frame(state).to_html(index=False, na_rep='')}</body></html>")
    return file_html(hv.render(_FIGURES[what](state), backend="bokeh"), INLINE, title=title)


def summary(state: SelectionState) -> str:
    """One line on the data, the jobs' progress and the selected values of the swept hyperparameter."""
    p = state.problem
    if p is None:
        return f"**{state.dataset}**"
    parts = [f"**{p.name}**: N = {p.n} training cases, {p.d} input(s)",
             f"{0 if p.y_test is None else p.y_test.size} test cases"]
    if state.curves is not None:
        parts.append(f"curves {len(state.curves.curves)}/{len(state.curves.criteria)}")
    if state.optima is not None:
        parts.append(f"optima {len(state.optima.results)}/{len(state.optima.criteria)}")
        sel = ", ".join(f"{r.criterion}: {r.hyperparameters.get(state.parameter, float('nan')):.3g}"
                        for r in state.optima.results if state.parameter in r.hyperparameters)
        if sel:
            parts.append(f"selected {_param_label(state.parameter)} — {sel}")
    return " · ".join(parts)


# ------------------------------------------------------------------------------------ thesis experiments

#: The experiments of ``explorer select-experiment`` (:mod:`explorer.model_selection.experiments`) and what they show.
EXPERIMENTS = {
    "curves": "Experiment 2 (Fig. 5.3-5.5): every criterion along one hyperparameter of the squared-exponential "
              "teacher, averaged over the data sets; where each data set's curve has its minimum.",
    "hyperparameters": "Experiments 3 and 4 (Fig. 5.6-5.8): the hyperparameters optimised by each criterion; test "
                       "SMSE (eq. 5.1) and MSLL, and how often each criterion had the lowest SMSE.",
    "functional-forms": "Experiments 6-8 (Fig. 5.10-5.12): every covariance function optimised by 'select by', then "
                        "ranked by each criterion; mean ranks and how often the teacher's own form ranked first.",
    "beta": "Experiment 10 (Fig. 5.15): Boltzmann ASC mutual information I_β against β at the teacher's "
            "hyperparameters; the thesis finds the mean curve peaking near β = 1.",
}
#: Data of the experiments: GP teacher draws, or the day-of-year temperature series (Experiments 4 and 8).
EXPERIMENT_DATA = ("teacher", "temperature")
#: Experiments that can run on the temperature series (the others always use teacher draws).
TEMPERATURE_EXPERIMENTS = ("hyperparameters", "functional-forms")
#: A temperature CSV larger than this is refused (the series has 365 rows; a huge file would stall the session).
MAX_TEMPERATURE_BYTES = 20_000_000
#: Training cases of a random split of the temperature series (§5.1: 64 training, the rest test cases).
_TEMPERATURE_TRAIN = 64

#: Columns of the temperature CSV: the input (day of the year) and the target (mean anomaly).
TEMPERATURE_COLUMNS = ("day_of_year", "mean_anomaly_by_file_doy")

_EXPERIMENT_TYPES = (sx.CurvesExperiment, sx.HyperparameterExperiment, sx.FunctionalFormExperiment,
                     sx.BetaExperiment)


def _read_temperature(path: str) -> str:
    """The text of the temperature CSV at ``path`` (on the machine running the app), or a readable error."""
    file = Path(path).expanduser()
    if not file.is_file():
        where = "" if file.is_absolute() else f" (relative to {Path.cwd()})"
        raise datasets.DatasetError(f"there is no file {str(file)!r}{where}. Give the path of a CSV with the columns "
                                    f"{' and '.join(TEMPERATURE_COLUMNS)}, or upload one.")
    if file.stat().st_size > MAX_TEMPERATURE_BYTES:
        raise datasets.DatasetError(f"{file.name} has {file.stat().st_size / 1e6:.0f} MB; the temperature series is "
                                    "one row per day of the year. Average the daily anomalies per day of the year "
                                    "first.")
    try:
        return file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise datasets.DatasetError(f"{file.name} is not UTF-8 text ({err.reason} at byte {err.start}); save it as "
                                    "a UTF-8 CSV.") from None


def _parse_temperature(text: str) -> datasets.Dataset:
    data = sx.load_temperature(io.StringIO(text), inputs=TEMPERATURE_COLUMNS[0], target=TEMPERATURE_COLUMNS[1])
    if data.n < _TEMPERATURE_TRAIN + 2:
        raise datasets.DatasetError(f"the temperature CSV has {data.n} rows; the experiments split it into "
                                    f"{_TEMPERATURE_TRAIN} training cases and the rest as test cases, so at least "
                                    f"{_TEMPERATURE_TRAIN + 2} rows are needed (the series has 365).")
    return data


class SelectionExperimentState(_BackgroundJobs, param.Parameterized):
    """The thesis experiments of seed 001 (as ``explorer select-experiment``) at small repetition counts.

    Choose the experiment and its settings, call :meth:`refresh` (shows a cached result or says "press 'Run'"),
    then :meth:`run` and :meth:`wait`. The job (kind ``"experiment"`` in ``jobs``) calls the
    :mod:`explorer.model_selection.experiments` function with these settings and ``rng=seed``; ``result`` is its
    frozen result, ``error`` why the settings cannot run (e.g. a missing temperature CSV).
    """

    experiment = param.Selector(default="hyperparameters", objects=list(EXPERIMENTS), label="Experiment",
                                doc="curves: Experiment 2; hyperparameters: Experiments 3 and 4; functional-forms: "
                                    "Experiments 6-8; beta: Experiment 10 (the choices of `explorer "
                                    "select-experiment`).")
    data = param.Selector(default="teacher", objects=list(EXPERIMENT_DATA), label="Data",
                          doc="teacher: fresh GP teacher draws per repetition (x ~ N(0, 1), ℓ = 1, σ_f = 1); "
                              "temperature: random 64/301 splits of the day-of-year temperature series "
                              "(Experiments 4 and 8; curves and beta always use teacher draws).")
    temperature_csv = param.String(default="", label="Temperature CSV (path)",
                                   doc="Path, on the machine running the app, of a CSV with the columns "
                                       "day_of_year and mean_anomaly_by_file_doy (Berkeley Earth's daily anomaly "
                                       "averaged per day of the year). Leave empty to use an uploaded file.")
    teacher = param.Selector(default="squared_exponential", objects=list(sx.TEACHERS), label="Teacher",
                             doc="Covariance function of the teacher (hyperparameters, beta); the student has "
                                 "the same form.")
    teachers = param.ListSelector(default=list(sx.TEACHERS), objects=list(sx.TEACHERS), label="Teachers",
                                  doc="Functional forms: the teachers whose draws the four students (se, rq, "
                                      "exponential, periodic) are ranked on, one block of repetitions each.")
    repetitions = param.Integer(default=2, bounds=(1, 256), softbounds=(1, 16), label="Repetitions",
                                doc="Data sets drawn (or random splits of the temperature series) per teacher; "
                                    "the thesis uses 256 (16 to 64 for the slower experiments).")
    criteria = param.ListSelector(default=list(sx.SYNTHETIC_CRITERIA), objects=list(CRITERIA), label="Criteria",
                                  doc="The criteria compared (curves, hyperparameters) or ranking the functional "
                                      "forms; the thesis compares evidence, LOO-CV and the three ASC variants.")
    parameter = param.Selector(default="lengthscale", objects=["lengthscale", "signal_std", "noise_std"],
                               label="Hyperparameter swept",
                               doc="Curves: the hyperparameter varied over a factor 10 either side of the "
                                   "teacher's value (32 points), the others fixed at the teacher's.")
    select_by = param.Selector(default="loo", objects=list(CRITERIA), label="Select by",
                               doc="Functional forms: the criterion that optimises each student (loo: Experiment "
                                   "6; evidence: Experiment 7).")
    noise_std = param.Number(default=0.1, bounds=(1e-3, 10.0), softbounds=(0.01, 1.0), step=0.01,
                             label="Teacher noise σ_n",
                             doc="Hyperparameters on teacher data: the noise standard deviation of the draws "
                                 "(the thesis: 0.1).")
    n_partitions = param.Integer(default=8, bounds=(1, 1000), softbounds=(1, 64), label="ASC: partitions J",
                                 doc="Random partitions J per ASC evaluation (the thesis: 32; beta uses one, "
                                     "'one drawn objective function').")
    n_objects = param.Integer(default=4, bounds=(1, 32), softbounds=(2, 16), label="ASC: objects M",
                              doc="Objects M per subset of an ASC partition (L = 2; the thesis: 4 for "
                                  "Experiment 3, 8 for the others).")
    entropy = param.Selector(default="zero", objects=list(asc.ENTROPIES), label="ASC: h(τ)",
                             doc="Entropy term of ASC (eq. 4.2): zero (eq. 3.3), or the prior entropy.")
    n_restarts = param.Integer(default=4, bounds=(1, 200), softbounds=(1, 32), label="Restarts",
                               doc="L-BFGS runs from Cauchy-distributed starts per optimisation (the thesis: 16).")
    max_iter = param.Integer(default=16, bounds=(1, 1000), softbounds=(4, 100), label="Iterations per run",
                             doc="Maximum L-BFGS iterations per run (the thesis: 16).")
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Seed",
                         doc="Seed of the teacher draws or splits, the partitions and the restarts (the CLI's "
                             "--seed): same settings and seed, same numbers.")

    result = param.ClassSelector(class_=_EXPERIMENT_TYPES, default=None, allow_None=True, precedence=-1,
                                 label="Result", doc="Output: the experiment's result for the current settings.")
    error = param.String(default="", precedence=-1, label="Error",
                         doc="Output: why the current settings cannot run; empty when they can.")

    _job_kinds = ("experiment",)
    _outputs = ("result",)

    def __init__(self, **params):
        super().__init__(**params)
        self._init_jobs()
        self._upload: tuple[str, str, str] | None = None
        self.param.watch(self._on_change, [n for n, p in self.param.objects().items()
                                           if n != "name" and p.precedence is None])

    def upload_temperature(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV as the temperature series (clears the path, switches the data to it)."""
        try:
            self._upload = read_upload(filename, content)
        except ValueError as err:
            self.error = str(err)
            return
        self.param.update(temperature_csv="", data="temperature")
        if self._started:
            self.refresh()

    def settings(self) -> dict:
        """The settings the current experiment uses (the rest do not change its result)."""
        kind, temperature = self.experiment, self._uses_temperature()
        out = {"experiment": kind, "data": "temperature" if temperature else "teacher",
               "repetitions": int(self.repetitions)}
        if kind != "beta":
            out.update(criteria=[c for c in CRITERIA if c in self.criteria], n_partitions=int(self.n_partitions))
        if kind == "curves":
            out["parameter"] = self.parameter
        if kind in ("hyperparameters", "beta") and not temperature:
            out["teacher"] = self.teacher
        if kind == "hyperparameters" and not temperature:
            out["noise_std"] = float(self.noise_std)
        if kind == "functional-forms":
            out["select_by"] = self.select_by
            if not temperature:
                out["teachers"] = [t for t in sx.TEACHERS if t in self.teachers]
        if kind in TEMPERATURE_EXPERIMENTS:
            out.update(n_restarts=int(self.n_restarts), max_iter=int(self.max_iter))
        out.update(n_objects=int(self.n_objects), entropy=self.entropy, seed=int(self.seed))
        return out

    def _uses_temperature(self) -> bool:
        return self.data == "temperature" and self.experiment in TEMPERATURE_EXPERIMENTS

    def _temperature(self) -> tuple[datasets.Dataset, str]:
        """The temperature series of the path (or else the upload) and the hash of its text."""
        if self.temperature_csv.strip():
            text = _read_temperature(self.temperature_csv.strip())
        elif self._upload is not None:
            text = self._upload[1]
        else:
            raise datasets.DatasetError("give the path of the temperature CSV (columns day_of_year and "
                                        "mean_anomaly_by_file_doy) or upload it.")
        digest = hashlib.sha256(text.encode()).hexdigest()
        return _TEMPERATURE.get_or_compute(digest, lambda: _parse_temperature(text)), digest

    def _refresh_outputs(self) -> None:
        settings = self.settings()
        if settings.get("criteria") == [] or settings.get("teachers") == []:
            raise ValueError("Choose at least one criterion" + (" and one teacher." if "teachers" in settings
                                                                else "."))
        data, source = (self._temperature() if settings["data"] == "temperature" else (None, None))
        key = (json.dumps(settings, sort_keys=True), source)
        self._request("experiment", key, "result", _EXPERIMENT_RESULTS, partial(_run_experiment, settings, data))


def _run_experiment(settings: dict, data: datasets.Dataset | None, job: Job):
    """Worker thread: the :mod:`~explorer.model_selection.experiments` function of ``settings`` (as the CLI calls it)."""
    s, reps = settings, settings["repetitions"]
    common = dict(n_datasets=reps, n_objects=s["n_objects"], entropy=s["entropy"], rng=s["seed"])
    fit = dict(n_restarts=s.get("n_restarts"), max_iter=s.get("max_iter"), n_partitions=s.get("n_partitions"))
    kind = s["experiment"]
    common["hooks"] = _hooks(job)
    if kind == "curves":
        return sx.curves_experiment(s["parameter"], s["criteria"], n_partitions=s["n_partitions"], **common)
    if kind == "hyperparameters":
        teacher = dict(teacher=s["teacher"], sigma_n=s["noise_std"]) if data is None else {"data": data}
        return sx.hyperparameter_experiment(s["criteria"], **teacher, **fit, **common)
    if kind == "functional-forms":
        source = {"teachers": s["teachers"]} if data is None else {"data": data, "n": _TEMPERATURE_TRAIN}
        return sx.functional_form_experiment(s["select_by"], s["criteria"], **source, **fit, **common)
    return sx.beta_experiment(s["teacher"], **common)


# --- figures and tables of the experiments

#: Columns of the experiment tables (and CSV exports), per experiment; functional forms add one column per student.
EXPERIMENT_COLUMNS = {
    "curves": ["criterion", "parameter", "true_value", "argmin_q25", "argmin_median", "argmin_q75"],
    "hyperparameters": ["criterion", "smse_q25", "smse_median", "smse_q75", "msll_q25", "msll_median", "msll_q75",
                        "wins_smse"],
    "functional-forms": ["setting", "ranked_by", "select_by", "hit_rate"],
    "beta": ["teacher", "repetitions", "n_failed", "beta_star_q25", "beta_star_median", "beta_star_q75",
             "beta_at_max_of_mean"],
}


def _quartiles(prefix: str, summary: dict) -> dict:
    return {f"{prefix}_{q}": summary[q] for q in ("q25", "median", "q75")}


def experiment_frame(state: SelectionExperimentState) -> pd.DataFrame:
    """The numbers ``explorer select-experiment --json`` prints for the result, one row per criterion (curves,
    hyperparameters), per setting and ranking key (functional forms; mean rank of each student), or one row
    (beta). Empty, with the experiment's columns, before a result exists."""
    res = state.result
    if res is None:
        return pd.DataFrame(columns=EXPERIMENT_COLUMNS[state.experiment])
    d = res.as_dict()
    if isinstance(res, sx.CurvesExperiment):
        rows = [{"criterion": c, "parameter": d["parameter"], "true_value": d["true_value"],
                 **_quartiles("argmin", d["argmin_summary"][c])} for c in d["criteria"]]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["curves"])
    if isinstance(res, sx.HyperparameterExperiment):
        rows = [{"criterion": c, **_quartiles("smse", d["smse"][c]), **_quartiles("msll", d["msll"][c]),
                 "wins_smse": d["wins_smse"][c]} for c in d["criteria"]]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["hyperparameters"])
    if isinstance(res, sx.FunctionalFormExperiment):
        rows = [{"setting": setting, "ranked_by": key, "select_by": d["select_by"],
                 **{f"mean_rank_{student}": d["mean_rank"][s][k][j] for j, student in enumerate(d["students"])},
                 "hit_rate": d["hit_rate"][s][k]}
                for s, setting in enumerate(d["settings"]) for k, key in enumerate(d["keys"])]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["functional-forms"][:3]
                            + [f"mean_rank_{s}" for s in d["students"]] + ["hit_rate"])
    mean = np.asarray(d["mean"], dtype=float)
    peak = float(res.betas[np.nanargmax(mean)]) if np.isfinite(mean).any() else np.nan
    row = {"teacher": d["teacher"], "repetitions": res.curves.shape[0], "n_failed": d["n_failed"],
           **_quartiles("beta_star", d["beta_star"]), "beta_at_max_of_mean": peak}
    return pd.DataFrame([row], columns=EXPERIMENT_COLUMNS["beta"])


def _empty_plot(title: str) -> hv.Overlay:
    return hv.Overlay([hv.Curve((_EMPTY, _EMPTY), "x", "y")]).opts(title=title, **_SIZE)


def _curves_experiment_plot(res: sx.CurvesExperiment) -> hv.Overlay:
    x_dim = hv.Dimension("parameter_value", label=_param_label(res.parameter))
    layers = [hv.Curve((res.grid, normalise(m)), x_dim, NORM_DIM, label=CRITERION_LABELS[c]).opts(
        color=CRITERION_COLORS[c], line_width=2) for c, m in zip(res.criteria, res.mean)]
    title = (f"Experiment 2: mean criteria vs {_param_label(res.parameter)}, {res.values.shape[1]} data set(s), "
             "normalised; dotted: teacher")
    return (hv.Overlay(layers) * hv.VLine(res.true_value).opts(color="gray", line_dash="dotted")).opts(
        logx=True, legend_position="top_left", title=title, show_grid=True, **_SIZE)


def _hyperparameter_experiment_plot(res: sx.HyperparameterExperiment) -> hv.Overlay:
    frame = pd.DataFrame([{"criterion": c, "smse": v} for c, row in zip(res.criteria, res.smse)
                          for v in row if np.isfinite(v)], columns=["criterion", "smse"])
    colors = hv.dim("criterion").categorize(CRITERION_COLORS, default="gray")
    title = f"Test SMSE of the model each criterion selected, {res.n_repetitions} repetition(s)"
    box = hv.BoxWhisker(frame, "criterion", hv.Dimension("smse", label="test SMSE (lower is better)"))
    return hv.Overlay([box.opts(box_fill_color=colors)]).opts(title=title, show_grid=True, **_SIZE)


def _functional_form_experiment_plot(res: sx.FunctionalFormExperiment) -> hv.Overlay:
    rows = [(student, f"{setting} · {key}", float(rank)) for s, setting in enumerate(res.settings)
            for k, key in enumerate(res.keys) for student, rank in zip(res.students, res.mean_rank[s, k])]
    kdims = ["student", "setting · ranked by"]
    heat = hv.HeatMap(rows, kdims, "mean rank").opts(cmap="RdYlGn_r", colorbar=True, tools=["hover"])
    labels = hv.Labels([(x, y, f"{v:.2f}") for x, y, v in rows], kdims, "text").opts(
        text_font_size="9pt", text_color="black")
    title = f"Mean rank (1 = best), forms optimised by {res.select_by}, {res.ranks.shape[1]} repetition(s)"
    height = max(300, 90 + 28 * len(res.settings) * len(res.keys))
    return (heat * labels).opts(title=title, responsive=True, height=height)


def _beta_experiment_plot(res: sx.BetaExperiment) -> hv.Overlay:
    b_dim, i_dim = hv.Dimension("beta", label="β"), hv.Dimension("I", label="I_β (nats)")
    layers = [hv.Curve((res.betas, c), b_dim, i_dim).opts(color="#9ecae1", line_width=1)
              for c in res.curves if np.isfinite(c).any()]
    layers.append(hv.Curve((res.betas, res.mean), b_dim, i_dim, label="mean over data sets").opts(
        color="#08519c", line_width=3))
    title = f"Experiment 10: Boltzmann ASC I_β vs β, {res.teacher} teacher; dotted: β = 1"
    return (hv.Overlay(layers) * hv.VLine(1.0).opts(color="gray", line_dash="dotted")).opts(
        logx=True, legend_position="top_left", title=title, show_grid=True, **_SIZE)


_EXPERIMENT_PLOTS = {sx.CurvesExperiment: _curves_experiment_plot,
                     sx.HyperparameterExperiment: _hyperparameter_experiment_plot,
                     sx.FunctionalFormExperiment: _functional_form_experiment_plot,
                     sx.BetaExperiment: _beta_experiment_plot}


def experiment_plot(state: SelectionExperimentState):
    """The figure of the experiment's result (empty with a hint before one exists)."""
    if state.result is None:
        return _empty_plot(f"{state.experiment}: no result yet (press 'Run')")
    return _EXPERIMENT_PLOTS[type(state.result)](state.result)


def experiment_settings_line(state: SelectionExperimentState) -> str:
    """The settings behind the result, for the header of its exports."""
    return " ".join(f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in state.settings().items())


def experiment_summary(state: SelectionExperimentState) -> str:
    """One line on the experiment's result (setting and repetitions), or what the experiment does."""
    res = state.result
    if res is None:
        return EXPERIMENTS[state.experiment]
    if isinstance(res, sx.HyperparameterExperiment):
        return f"**{res.setting}** · student {res.kernel} · {res.n_repetitions} repetition(s)"
    if isinstance(res, sx.FunctionalFormExperiment):
        return (f"**{', '.join(res.settings)}** · students {', '.join(res.students)} optimised by {res.select_by} · "
                f"{res.ranks.shape[1]} repetition(s)")
    if isinstance(res, sx.CurvesExperiment):
        return (f"**squared-exponential teacher** · {_param_label(res.parameter)} on {res.grid.size} points · "
                f"{res.values.shape[1]} data set(s)")
    return f"**teacher {res.teacher}** · {res.curves.shape[0]} data set(s), {res.n_failed} without a valid I_β"


def _json_ready(value):
    """NaN → None (JSON null), numpy scalars and arrays → Python, recursively."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value.item() if isinstance(value, np.generic) else value


def experiment_csv(state: SelectionExperimentState) -> str:
    """The experiment's table as CSV, with a comment line naming the settings."""
    return (f"# GP model selection experiment (seed 001): {experiment_settings_line(state)}\n"
            + experiment_frame(state).to_csv(index=False))


def experiment_json(state: SelectionExperimentState) -> str:
    """The result as ``explorer select-experiment --json`` prints it, plus ``settings``; NaN written as null."""
    payload = state.result.as_dict() if state.result is not None else {"experiment": state.experiment}
    return json.dumps(_json_ready({**payload, "settings": state.settings()}), indent=1)


# ------------------------------------------------------------------------------------ the tab

_Revision = hv.streams.Stream.define("SelectionRevision", revision=0)


class SelectionTab(pn.viewable.Viewer):
    """Seed 001 model selection as a tab. Sub-panel "Explore": controls, job progress with Run/Cancel, the
    criteria on one normalised axis, the predictive mean ± 2σ of each selected model, the ranking of functional
    forms and the optima table, CSV/HTML exports (CSS classes ``explorer-selection-…``). Sub-panel
    "Experiments": :class:`SelectionExperimentsPanel`.

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=SelectionState, label="State",
                                doc="The model-selection session state the tab shows.")
    experiments = param.ClassSelector(class_=SelectionExperimentState, label="Experiments",
                                      doc="The thesis-experiments state of the 'Experiments' sub-panel.")

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = SelectionState()
        if params.get("experiments") is None:
            params["experiments"] = SelectionExperimentState()
        super().__init__(**params)
        self.experiments_panel = SelectionExperimentsPanel(state=self.experiments)
        s = self.state
        bind_to_session(s)
        self.widgets = self._make_widgets()
        self.upload = pn.widgets.FileInput(accept=".csv", multiple=False,
                                           css_classes=["explorer-selection-upload"], sizing_mode="stretch_width")
        self.upload.param.watch(self._on_upload, "value")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, css_classes=["explorer-selection-error"],
                                   sizing_mode="stretch_width")
        self.streams = {what: _Revision() for what in _FIGURES}
        self.plots = {what: pn.pane.HoloViews(
            hv.DynamicMap(lambda revision, what=what: _FIGURES[what](self.state), streams=[self.streams[what]],
                          cache_size=1),
            sizing_mode="stretch_width", min_height=430, linked_axes=False,
            css_classes=[f"explorer-selection-plot-{what}"]) for what in _FIGURES}
        self.status = pn.pane.Markdown("", css_classes=["explorer-selection-status"], sizing_mode="stretch_width")
        self.tables = {"ranking": pn.pane.DataFrame(ranking_frame(s), index=False, sizing_mode="stretch_width",
                                                    css_classes=["explorer-selection-ranking"]),
                       "optima": pn.pane.DataFrame(optima_frame(s), index=False, sizing_mode="stretch_width",
                                                   css_classes=["explorer-selection-optima"])}
        indicators = job_indicators(s, "explorer-selection", self._on_job, width=160)
        self.progress, self.job_message, self.job_error = indicators.progress, indicators.message, indicators.error
        for kind in JOB_KINDS:
            self._on_job(kind)
        self.run = pn.widgets.Button(label="Run", color="primary", css_classes=["explorer-selection-run"])
        self.cancel = pn.widgets.Button(label="Cancel", color="warning", css_classes=["explorer-selection-cancel"])
        self.run.on_click(lambda event: self.state.run())
        self.cancel.on_click(lambda event: self.state.cancel())
        names = {"curves": "Criteria curves", "predictions": "Predictions", "optima": "Optima",
                 "ranking": "Ranking"}
        exports = [("csv", "curves"), ("html", "curves"), ("html", "predictions"), ("csv", "optima"),
                   ("csv", "ranking"), ("html", "ranking")]
        self.downloads = [pn.widgets.FileDownload(
            callback=partial(self._export, fmt, what), filename=f"explorer-selection-{what}.{fmt}",
            label=f"{names[what]} ({fmt.upper()})", color="light",
            css_classes=[f"explorer-selection-{fmt}-{what}"]) for fmt, what in exports]
        s.param.watch(self._on_results, ["curves", "optima", "ranking", "problem"])
        s.param.watch(self._on_error, "error")
        self._update_cancel()
        self._on_results()
        self._on_error()

    def _make_widgets(self) -> dict[str, pn.widgets.Widget]:
        s = self.state
        kinds = {"dataset": pn.widgets.Select, "target": pn.widgets.Select, "n_points": pn.widgets.IntInput,
                 "n_test": pn.widgets.IntInput, "standardize": pn.widgets.Checkbox, "kernel": pn.widgets.Select,
                 "criteria": pn.widgets.MultiChoice, "parameter": pn.widgets.Select,
                 "curve_points": pn.widgets.IntInput, "curve_decades": pn.widgets.FloatInput,
                 "n_folds": pn.widgets.IntInput, "n_partitions": pn.widgets.IntInput,
                 "n_objects": pn.widgets.IntInput, "entropy": pn.widgets.Select, "n_restarts": pn.widgets.IntInput,
                 "max_iter": pn.widgets.IntInput, "rank_kernels": pn.widgets.MultiChoice,
                 "select_by": pn.widgets.Select, "seed": pn.widgets.IntInput, "auto_run": pn.widgets.Checkbox}
        widgets = {name: kind.from_param(s.param[name], sizing_mode="stretch_width",
                                         css_classes=[f"explorer-selection-{name.replace('_', '-')}"])
                   for name, kind in kinds.items()}
        widgets["target"].visible = s.dataset == UPLOAD
        s.param.watch(lambda e: setattr(widgets["target"], "visible", e.new == UPLOAD), "dataset")
        return widgets

    def _on_upload(self, event) -> None:
        if event.new:
            self.state.upload_csv(self.upload.filename or "upload.csv", event.new)

    def _on_job(self, kind: str, *events) -> None:
        job = self.state.jobs[kind]
        self.progress[kind].param.update(value=int(round(100 * job.progress)), active=job.running)
        self.job_message[kind].object = f"{kind}: {job.message}" if job.message else ""
        self.job_error[kind].param.update(object=job.error, visible=bool(job.error))
        if hasattr(self, "cancel"):
            self._update_cancel()

    def _update_cancel(self) -> None:
        self.cancel.disabled = not any(job.running for job in self.state.jobs.values())

    def _on_results(self, *events) -> None:
        for stream in self.streams.values():
            stream.event(revision=stream.revision + 1)
        self.status.object = summary(self.state)
        self.tables["ranking"].object = ranking_frame(self.state)
        self.tables["optima"].object = optima_frame(self.state)

    def _on_error(self, *events) -> None:
        self.error.param.update(object=self.state.error, visible=bool(self.state.error))

    def _export(self, fmt: str, what: str) -> io.StringIO:
        return io.StringIO(csv_text(self.state, what) if fmt == "csv" else html_text(self.state, what))

    def __panel__(self):
        if not self.state.started:
            self.state.refresh()
        w = self.widgets
        controls = pn.Column(
            "### Data", w["dataset"], pn.pane.Markdown("Upload a regression CSV (header row, numeric columns):",
                                                       margin=(0, 10)),
            self.upload, w["target"], w["n_points"], w["n_test"], w["standardize"],
            "### Model and criteria", w["kernel"], w["criteria"],
            "### Curves", w["parameter"], w["curve_points"], w["curve_decades"],
            "### Random parts", w["n_folds"], w["n_partitions"], w["n_objects"], w["entropy"],
            "### Optimisation and ranking", w["n_restarts"], w["max_iter"], w["rank_kernels"], w["select_by"],
            w["seed"], w["auto_run"],
            width=300, css_classes=["explorer-selection-controls"])
        jobs = pn.Row(self.run, self.cancel,
                      *[pn.Column(self.progress[k], self.job_message[k], margin=(0, 5)) for k in JOB_KINDS],
                      sizing_mode="stretch_width")
        figures = pn.Row(self.plots["curves"], self.plots["predictions"], sizing_mode="stretch_width")
        tables = pn.Row(pn.Column("#### Ranking of functional forms", self.tables["ranking"],
                                  sizing_mode="stretch_width"),
                        pn.Column("#### Selected hyperparameters", self.tables["optima"], sizing_mode="stretch_width"),
                        sizing_mode="stretch_width")
        main = pn.Column(self.error, jobs, *self.job_error.values(), self.status, figures, tables,
                         pn.Row(*self.downloads), sizing_mode="stretch_width")
        explore = pn.Row(controls, main, sizing_mode="stretch_width", css_classes=["explorer-selection-tab"])
        return pn.Tabs(("Explore", explore), ("Experiments", self.experiments_panel), sizing_mode="stretch_width",
                       css_classes=["explorer-selection-subtabs"])


class SelectionExperimentsPanel(pn.viewable.Viewer):
    """The thesis experiments as the "Experiments" sub-panel of the model-selection tab: the experiment and its
    settings (only those it uses are shown), the temperature CSV (path or upload), Run/Cancel with progress, the
    figure and the table of the result, CSV/JSON exports. CSS classes ``explorer-experiment-…``.

    Nothing is computed until Run is pressed (a cached result for the settings is shown at once).
    """

    state = param.ClassSelector(class_=SelectionExperimentState, label="State",
                                doc="The experiments state the panel shows.")

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = SelectionExperimentState()
        super().__init__(**params)
        s = self.state
        bind_to_session(s)
        self.widgets = self._make_widgets()
        self.upload = pn.widgets.FileInput(accept=".csv", multiple=False, sizing_mode="stretch_width",
                                           css_classes=["explorer-experiment-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width",
                                   css_classes=["explorer-experiment-error"])
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["explorer-experiment-status"])
        self.plot = pn.pane.HoloViews(experiment_plot(s), sizing_mode="stretch_width", min_height=430,
                                      linked_axes=False, css_classes=["explorer-experiment-plot"])
        self.table = pn.pane.DataFrame(experiment_frame(s), index=False, sizing_mode="stretch_width",
                                       css_classes=["explorer-experiment-table"])
        self.progress = pn.indicators.Progress(value=0, max=100, active=False, width=160,
                                               css_classes=["explorer-experiment-progress"])
        self.job_message = pn.pane.Str("", css_classes=["explorer-experiment-job-message"])
        self.job_error = pn.pane.Alert("", alert_type="danger", visible=False,
                                       css_classes=["explorer-experiment-job-error"])
        self.run = pn.widgets.Button(label="Run experiment", color="primary", css_classes=["explorer-experiment-run"])
        self.cancel = pn.widgets.Button(label="Cancel", color="warning", css_classes=["explorer-experiment-cancel"])
        self.run.on_click(lambda event: self.state.run())
        self.cancel.on_click(lambda event: self.state.cancel())
        self.downloads = [pn.widgets.FileDownload(
            callback=partial(self._export, fmt), filename=f"explorer-selection-experiment.{fmt}",
            label=f"Experiment ({fmt.upper()})", color="light", css_classes=[f"explorer-experiment-{fmt}"])
            for fmt in ("csv", "json")]
        s.jobs["experiment"].param.watch(self._on_job, ["running", "progress", "message", "error"])
        s.param.watch(self._on_result, "result")
        s.param.watch(self._on_error, "error")
        s.param.watch(self._on_settings, list(self.widgets))
        self._on_job()
        self._on_result()
        self._on_error()
        self._on_settings()

    def _make_widgets(self) -> dict[str, pn.widgets.Widget]:
        kinds = {"experiment": pn.widgets.Select, "data": pn.widgets.Select, "temperature_csv": pn.widgets.TextInput,
                 "teacher": pn.widgets.Select, "teachers": pn.widgets.MultiChoice,
                 "repetitions": pn.widgets.IntInput, "criteria": pn.widgets.MultiChoice,
                 "parameter": pn.widgets.Select, "select_by": pn.widgets.Select, "noise_std": pn.widgets.FloatInput,
                 "n_partitions": pn.widgets.IntInput, "n_objects": pn.widgets.IntInput, "entropy": pn.widgets.Select,
                 "n_restarts": pn.widgets.IntInput, "max_iter": pn.widgets.IntInput, "seed": pn.widgets.IntInput}
        return {name: kind.from_param(self.state.param[name], sizing_mode="stretch_width",
                                      css_classes=[f"explorer-experiment-{name.replace('_', '-')}"])
                for name, kind in kinds.items()}

    def _on_settings(self, *events) -> None:
        """Show the controls the chosen experiment uses, and nothing else."""
        s = self.state
        used = set(s.settings()) | {"experiment"}
        if s.experiment not in TEMPERATURE_EXPERIMENTS:
            used.discard("data")
        for name, widget in self.widgets.items():
            widget.visible = name in used or (name == "temperature_csv" and s._uses_temperature())
        self.upload.visible = s._uses_temperature()
        self.status.object = experiment_summary(s)

    def _on_upload(self, event) -> None:
        if event.new:
            self.state.upload_temperature(self.upload.filename or "temperature.csv", event.new)

    def _on_job(self, *events) -> None:
        job = self.state.jobs["experiment"]
        self.progress.param.update(value=int(round(100 * job.progress)), active=job.running)
        self.job_message.object = f"experiment: {job.message}" if job.message else ""
        self.job_error.param.update(object=job.error, visible=bool(job.error))
        self.cancel.disabled = not job.running

    def _on_result(self, *events) -> None:
        self.plot.object = experiment_plot(self.state)
        self.table.object = experiment_frame(self.state)
        self.status.object = experiment_summary(self.state)

    def _on_error(self, *events) -> None:
        self.error.param.update(object=self.state.error, visible=bool(self.state.error))

    def _export(self, fmt: str) -> io.StringIO:
        return io.StringIO(experiment_csv(self.state) if fmt == "csv" else experiment_json(self.state))

    def __panel__(self):
        if not self.state.started:
            self.state.refresh()
        w = self.widgets
        controls = pn.Column(
            "### Experiment", w["experiment"], w["data"], w["temperature_csv"], self.upload,
            w["teacher"], w["teachers"], w["parameter"], w["select_by"], w["noise_std"],
            "### Repetitions and criteria", w["repetitions"], w["criteria"], w["n_partitions"], w["n_objects"],
            w["entropy"], w["n_restarts"], w["max_iter"], w["seed"],
            width=300, css_classes=["explorer-experiment-controls"])
        jobs = pn.Row(self.run, self.cancel, pn.Column(self.progress, self.job_message, margin=(0, 5)),
                      sizing_mode="stretch_width")
        main = pn.Column(self.error, jobs, self.job_error, self.status, self.plot, self.table,
                         pn.Row(*self.downloads), sizing_mode="stretch_width")
        return pn.Row(controls, main, sizing_mode="stretch_width", css_classes=["explorer-experiment-panel"])
