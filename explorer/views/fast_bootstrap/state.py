"""Session state of the fast-bootstrap view ([LSWV05], Lendasse et al. 2005): controls, background jobs, results.

:class:`FastBootstrapState` (param, no widgets) holds the controls — data (the toy function of eq. 19, the
shipped regression sets, or a time-series CSV embedded as NAR(lags), e.g. the Santa Fe laser), the model
family (LS-SVM, RBFN, MLP), the full and reduced complexity grids with their replication counts (Tables 1-2
by default), κ0/κ1 of the F test of eq. (11) — and, as output parameters, what
:func:`explorer.fast_bootstrap.experiments.compare_bootstraps` returns for them. Three background jobs of the
other tabs' kind (:class:`~explorer.views.common.state.jobs.JobRunner`: progress, cancel, a result
cache shared by the sessions):

``fast``
    eq. (7) on the full grid and the fast bootstrap of §4 on the reduced grid (``compare_bootstraps`` with
    ``with_full=False``). Always automatic: at Table 1's settings it trains 50-100 bootstrap models.
``full``
    the full bootstrap of §3 (``compare_bootstraps`` with ``with_full=True``; its fast part equals the
    ``fast`` job's, same seed). Automatic only when ``auto_run`` is on and it is *cheap*: at most
    :data:`AUTO_SECONDS` by :func:`estimated_seconds`, a fixed cost model calibrated on one unloaded core
    (deterministic: the same settings always behave the same). At Table 1 that is the LS-SVM (≈0.6 s) and the
    RBFN (≈4 s); the MLP (1300 Levenberg–Marquardt fits, ≈2-3 min) waits for ``run("full")`` (the "Run full
    bootstrap" button), shows its progress and can be cancelled between replications.
``replica``
    (LS-SVM only) the replica theory's bootstrap optimism without refits at ``replica_points`` values of γ
    (:func:`explorer.fast_bootstrap.stages.replica_optimism` at the points ``compare_bootstraps`` takes). Its
    cost grows as N³: automatic under the same rule (≈2 s on the toy data), else ``run("replica")`` (the "Run
    replica theory" button; the Santa Fe laser, N = 994: minutes); cancellable between values of γ.

The state computes nothing until :meth:`FastBootstrapState.refresh` is first called (the tab calls it when shown).
Every job message is a sentence that names its job ("Full bootstrap: 3 of 100 replications done."). A fast
bootstrap that was cancelled or failed starts again with ``run("fast")`` (and with any other ``run``): it is
never left without a way back.
"""

from __future__ import annotations

import io
import math
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import param

from explorer import datasets
from explorer.bootstrap.replica import ConvergenceError
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.bootstrap import check_f_test
from explorer.fast_bootstrap.lssvm import LSSVM
from explorer.fast_bootstrap.networks import MLP, RBFN
from explorer.fast_bootstrap.problem import (
    MODELS,
    TABLE_1,
    TABLE_2,
    TOY_LENGTHSCALE,
    Setting,
    make_model,
    paper_setting,
    prepare_data,
)
from explorer.fast_bootstrap.stages import ReplicaOptimism, estimated_seconds, replica_grid, replica_optimism
from explorer.progress import Cancelled, Hooks, Progress
from explorer.runtime.caches import lru
from explorer.views.common.files.data_folder import DATA_DIR_HELP
from explorer.views.common.files.uploads import Upload, use_uploaded_file
from explorer.views.common.state import controls, errors
from explorer.views.common.state.data_source import DataSourced
from explorer.views.common.state.declarations import applies, control, groups, invalidating
from explorer.views.common.state.jobs import HasJobs, Job, JobRunner, JobSpec, output
from explorer.views.common.state.values import CheckedState
from explorer.views.fast_bootstrap.errors import WORDING

__all__ = ["AUTO_SECONDS", "COMPLEXITY", "EXPECTED_ERRORS", "FASTBOOT_DATASETS", "GRIDS", "JOB_KINDS", "JOB_NAMES",
           "MAX_GRID_POINTS", "MAX_JOB_SECONDS", "MAX_POINTS", "MODEL_LABELS", "RUN_LABELS", "SERIES",
           "FastBootstrapState", "ReplicaRun", "describe_error", "progress_sentence"]

#: ``dataset`` value of a time series read from a CSV file (``series_csv``, a file of the server's data folder, or an
#: upload) and embedded as NAR(``lags``).
SERIES = "time series CSV"
#: The data offered: the toy function (eq. 19), the GP teacher, the shipped sets (the classification ones are
#: refused with a message: [LSWV05] is about regression), and a time-series CSV.
FASTBOOT_DATASETS = ("toy", "teacher", "boston", "crabs", "pima", "wisconsin", SERIES)
#: The full bootstrap and the replica theory start by themselves when :func:`estimated_seconds` ≤ this.
AUTO_SECONDS = 15.0
#: Longest complexity grid accepted (a tiny step would otherwise ask for millions of models).
MAX_GRID_POINTS = 2000
#: Most data points accepted (the LS-SVM factorises an N × N kernel matrix per bootstrap replication).
MAX_POINTS = 2000
#: A job estimated (:func:`estimated_seconds`, one core) to take longer than this is refused, not started: a served
#: app is shared, and `explorer fast-bootstrap` runs such a job from the command line.
MAX_JOB_SECONDS = 3600.0

#: What the complexity q of each model is (axis and summary labels).
COMPLEXITY = {"ls-svm": LSSVM.complexity, "rbfn": RBFN.complexity, "mlp": MLP.complexity}
#: How the summary and the messages name each model.
MODEL_LABELS = {"ls-svm": "LS-SVM", "rbfn": "RBFN", "mlp": "MLP"}
#: The data drawn at random (of ``n_points`` points, from ``seed``).
_DRAWN = ("toy", "teacher")

# What the controls invalidate (``declarations.control(..., invalidates=...)``): the data, the model's options
# (:meth:`FastBootstrapState.model_options`: the controls that invalidate "options" and apply) and the results of
# the jobs "fast", "full" and "replica". The settings JSON holds the controls that invalidate "fast".
#: The data and every job's result.
_EVERYTHING = ("data", "fast", "full", "replica")
#: Every job's result.
_RESULTS = ("fast", "full", "replica")
#: The fast and the full bootstrap's results.
_BOOTSTRAPS = ("fast", "full")
#: The sidebar headings (``declarations.control(group, ...)``), in the sidebar's order; :data:`GRIDS` and
#: :data:`F_TEST` hold the values "Reset to paper values" sets (:meth:`FastBootstrapState.reset_to_paper`).
DATA, MODEL, GRIDS, F_TEST, RUNS = "Data", "Model", "Grids (Tables 1-2)", "F test, eq. (11)", "Runs"

#: How the messages name each job.
JOB_NAMES = {"fast": "Fast bootstrap", "full": "Full bootstrap", "replica": "Replica theory"}
#: The label of the button that runs each job (``run(kind)``), as the messages name it.
RUN_LABELS = {"fast": "Run fast bootstrap", "full": "Run full bootstrap", "replica": "Run replica theory"}
#: The counted stages of :func:`explorer.fast_bootstrap.experiments.compare_bootstraps` (replications) and of
#: :func:`~explorer.fast_bootstrap.stages.replica_optimism` (values of γ), and the job each one is.
_STAGES = {"fast bootstrap": "fast", "full bootstrap": "full", "replica theory": "replica"}
#: Its stage of the apparent error of eq. (7) on the full grid.
_APPARENT = "apparent"
#: The switch that :meth:`FastBootstrapState.run` ticks for each job that can be switched off.
_SWITCHES = {"full": "with_full", "replica": "with_replica"}


#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError, IndexError)


def describe_error(err: BaseException) -> str:
    """A readable message for an error of the fast-bootstrap core or the data."""
    return errors.describe_error(err, WORDING)


@dataclass(frozen=True)
class ReplicaRun:
    """The replica theory's optimism along γ (no refits) and how long it took."""

    replica: ReplicaOptimism
    seconds: float


def _refuse_long(kind: str, estimate: float) -> None:
    """ValueError if the job ``kind`` would take longer than :data:`MAX_JOB_SECONDS` (nothing starts then)."""
    if estimate > MAX_JOB_SECONDS:
        raise ValueError(f"{JOB_NAMES[kind]}: these settings would take about {estimate / 3600:.1f} hours on one core; "
                         f"the app runs jobs of at most {MAX_JOB_SECONDS / 3600:g} hour. Lower the replications, the "
                         "grids or the MLP epochs and restarts, or run `explorer fast-bootstrap` from the command "
                         "line.")


def progress_sentence(kind: str, progress: Progress) -> str:
    """The core's progress of ``compare_bootstraps`` or ``replica_optimism`` as a sentence naming the job ``kind``:
    3 of 100 replications of the stage "full bootstrap" → "Full bootstrap: 3 of 100 replications done."; the fast
    part of the full job → "Full bootstrap: first its fast bootstrap, 3 of 10 replications done."; 3 of 46 values
    of γ of the replica theory → "Replica theory: 3 of 46 values of γ done."."""
    job, stage = JOB_NAMES[kind], _STAGES.get(progress.stage)
    if stage is not None and progress.done is not None:
        part = "" if stage == kind else f"first its {stage} bootstrap, "
        return f"{job}: {part}{progress.done} of {progress.total} {progress.unit} done."
    if progress.stage == _APPARENT:
        return f"{job}: apparent error of eq. (7) computed on the full grid."
    text = str(progress)
    return f"{job}: {text}." if text and text != "done" else f"{job}: finishing."


def _status_sentence(kind: str, message: str) -> str | None:
    """The sentence for a word of the job machinery (``done``, ``starting…``, ...) or None if ``message`` is a
    sentence already."""
    job = JOB_NAMES[kind]
    return {"done": f"{job} done.", "done (cached)": f"{job} done (shown from the cache).",
            "starting…": f"{job} starting…", "cancelling…": f"{job}: cancelling…",
            "failed": f"{job} failed; the reason is below.",
            HasJobs.deferred_message: f"{job} starts once the page has loaded."}.get(message)


# ------------------------------------------------------------------------------------ caches

_DATA = lru("fast_bootstrap.data", 8)  # Dataset per data settings
# BootstrapComparison without the full bootstrap, per settings and seed
_FAST = lru("fast_bootstrap.fast", 32)
# BootstrapComparison with the full bootstrap, per settings and seed
_FULL = lru("fast_bootstrap.full", 32)
_REPLICA = lru("fast_bootstrap.replica", 16)  # ReplicaRun per (data, kernel width, grid, points)


# ------------------------------------------------------------------------------------ computations


def _comparison(data, model, setting, kappa, options, seed, with_full: bool, executor, job: Job) -> fe.BootstrapComparison:
    """Worker thread: ``compare_bootstraps`` as the CLI calls it (the replica theory is a job of its own); the
    bootstrap replications run on ``executor`` (the state's Dask workers)."""
    def progress(fraction: float, step: Progress) -> None:
        job.report(fraction, progress_sentence(job.kind, step))
    return fe.compare_bootstraps(data, model, setting, rng=seed, with_full=with_full, with_replica=False,
                                 kappa0=kappa[0], kappa1=kappa[1], model_options=options, executor=executor,
                                 hooks=Hooks(progress=progress, should_stop=job.should_stop))


def _replica(data, options, points: np.ndarray, job: Job) -> ReplicaRun:
    """Worker thread: the replica optimism of the LS-SVM at ``points`` (cancellable between values of γ)."""
    model = make_model("ls-svm", data, **options)
    prepared = prepare_data(data)
    start = time.perf_counter()

    def progress(fraction: float, step: Progress) -> None:
        job.report(fraction, progress_sentence(job.kind, step))
    rep = replica_optimism(model, prepared.X, prepared.y, points,
                              hooks=Hooks(progress=progress, should_stop=job.should_stop))
    return ReplicaRun(rep, time.perf_counter() - start)


@dataclass(frozen=True)
class _JobInputs:
    """What the jobs of one refresh read, taken on the session's thread: the data and its key, the model, the grids
    (``setting``), κ0/κ1, the model's options, the seed, the switches and each optional job's estimated seconds."""

    data_key: tuple
    data: datasets.Dataset
    model: str
    setting: Setting
    kappa: tuple[int, int]
    options: dict
    seed: int
    with_full: bool
    full_seconds: float
    with_replica: bool
    points: np.ndarray
    replica_seconds: float
    auto_run: bool

    @property
    def key(self) -> tuple:
        """The key of the fast and the full bootstrap's results."""
        return (self.data_key, self.model, self.setting, self.kappa, tuple(sorted(self.options.items())), self.seed)


def _replica_off(i: _JobInputs) -> str | None:
    if i.model != "ls-svm":
        return "Replica theory: for the LS-SVM only."
    if not i.with_replica:
        return "Replica theory switched off: tick 'Replica theory (LS-SVM)' or press 'Run replica theory'."
    return None


def _not_run(kind: str, seconds: float) -> str:
    return f"{JOB_NAMES[kind]} not run yet: press '{RUN_LABELS[kind]}' (≈ {seconds:.0f} s on one core)."


#: The three jobs (see the module docstring). Any Run button also starts a cancelled or failed fast bootstrap again:
#: every other result is shown with it, and a Cancel during a long job must not leave it without a way back.
_JOBS = (
    JobSpec("fast", "fast", _FAST, key=lambda i: i.key, rerun_with_any=True,
            compute=lambda state, i, job: _comparison(i.data, i.model, i.setting, i.kappa, i.options, i.seed, False,
                                                      state.executor, job)),
    JobSpec("full", "full", _FULL, key=lambda i: i.key,
            compute=lambda state, i, job: _comparison(i.data, i.model, i.setting, i.kappa, i.options, i.seed, True,
                                                      state.executor, job),
            optional=lambda i: not (i.auto_run and i.full_seconds <= AUTO_SECONDS),
            off=lambda i: None if i.with_full else ("Full bootstrap switched off: tick 'Run the full bootstrap' or "
                                                    "press 'Run full bootstrap'."),
            not_run=lambda i: _not_run("full", i.full_seconds)),
    JobSpec("replica", "replica", _REPLICA,
            key=lambda i: (i.data_key, i.options["lengthscale"], tuple(i.points.tolist())),
            compute=lambda state, i, job: _replica(i.data, i.options, i.points, job),
            optional=lambda i: not (i.auto_run and i.replica_seconds <= AUTO_SECONDS),
            off=_replica_off, not_run=lambda i: _not_run("replica", i.replica_seconds)),
)
#: The kinds of the jobs, as declared.
JOB_KINDS = tuple(spec.kind for spec in _JOBS)


# ------------------------------------------------------------------------------------ checks of the settings


def _checked_grid(state, which: str) -> tuple[float, float, float]:
    """(start, stop, step) of the full or reduced grid (``which``: "full" or "fast") of ``state``, with a message
    for each way it can be wrong."""
    start, stop, step = (float(getattr(state, f"{which}_{p}")) for p in ("start", "stop", "step"))
    name = "full grid" if which == "full" else "reduced grid (fast bootstrap)"
    if step <= 0:
        raise ValueError(f"The {name}'s step must be positive, got {step:g}. Set a step > 0.")
    if stop < start:
        raise ValueError(f"The {name} is empty: start {start:g} is above stop {stop:g}. Set start ≤ stop.")
    points = math.floor((stop - start) / step + 1e-9) + 1
    if points > MAX_GRID_POINTS:
        raise ValueError(f"The {name} has {points} complexities; at most {MAX_GRID_POINTS} are allowed. "
                         "Raise its step or narrow its range.")
    return start, stop, step


def _checked_setting(state, n: int) -> Setting:
    """The grids of ``state`` as a :class:`Setting`, with a message for each way they do not fit the model or the
    ``n`` data points."""
    setting = Setting(_checked_grid(state, "full"), int(state.full_replications), _checked_grid(state, "fast"),
                      int(state.fast_replications), bool(state.log_complexity))
    grids = setting.grids()
    grid, sample = grids.full, grids.fast
    both = np.concatenate([grid, sample])
    check_f_test(sample.size, int(state.kappa0), int(state.kappa1))
    if (state.model == "ls-svm" or state.log_complexity) and both.min() <= 0:
        what = "γ" if state.model == "ls-svm" else "log complexity"
        raise ValueError(f"The complexities must be positive for {what}; the grids start at {both.min():g}. "
                         "Set the grid starts above 0.")
    if state.model != "ls-svm":
        if np.any(both != np.round(both)) or both.min() < 1:
            raise ValueError(f"The {MODEL_LABELS[state.model]}'s complexity is a {COMPLEXITY[state.model]}: the "
                             "grids must hold whole numbers ≥ 1. Use whole starts and steps.")
        if both.max() > n // 2:
            raise ValueError(f"{MODEL_LABELS[state.model]} with up to {both.max():g} units on N = {n} points: a "
                             f"bootstrap sample holds about 63% distinct points, so keep the grids ≤ N/2 = "
                             f"{n // 2}.")
    return setting


# ------------------------------------------------------------------------------------ the state


def _grid_controls(label: str, step: tuple[float, float], replications: tuple[int, int, str],
                   docs: tuple[str, str, str, str], invalidates: tuple[str, ...],
                   ) -> tuple[param.Number, param.Number, param.Number, param.Integer]:
    """Start, stop and step of a complexity grid (Tables 1-2) and its bootstrap replications per complexity, under
    the sidebar heading :data:`GRIDS`; a change makes the computations ``invalidates`` stale.

    The numbers are labelled "<label>: start" and so on: start 5 and stop 50 by default (soft range 0-200), the step
    ``step = (default, soft maximum)``, all within [0, 1e9]. ``replications = (default, soft maximum, label)``, within
    [1, 10,000]. ``docs`` are the help texts of start, stop, step and replications.
    """
    def number(default: float, softmax: float, part: str, doc: str) -> param.Number:
        return param.Number(default=default, bounds=(0.0, 1e9), softbounds=(0.0, softmax), label=f"{label}: {part}",
                            doc=doc, metadata=control(GRIDS, invalidates=invalidates))

    count, count_softmax, count_label = replications
    return (number(5.0, 200.0, "start", docs[0]), number(50.0, 200.0, "stop", docs[1]),
            number(*step, "step", docs[2]),
            param.Integer(default=count, bounds=(1, 10_000), softbounds=(2, count_softmax), label=count_label,
                          doc=docs[3], metadata=control(GRIDS, invalidates=invalidates)))


def _is_series(state) -> bool:
    """Whether the data is a time series CSV (its file, column and lags apply)."""
    return state.dataset == SERIES


def _for_model(model: str):
    """``applies`` of a control of the model ``model`` only."""
    return lambda state: state.model == model


def _plain(parameter: param.Parameter, value):
    """``value`` of ``parameter`` as the Python type the core and the JSON take (bool, int or float)."""
    for ptype, kind in ((param.Boolean, bool), (param.Integer, int), (param.Number, float)):
        if isinstance(parameter, ptype):
            return kind(value)
    return value


class FastBootstrapState(CheckedState, HasJobs, DataSourced):
    """Controls of the fast-bootstrap view and the core results for them, for one session (or notebook).

    Set the controls, call :meth:`refresh` (later changes refresh by themselves), then :meth:`wait` for the
    background jobs; :meth:`run_full` / :meth:`run_replica` start the jobs that wait for a button. Outputs:
    ``fast`` and ``full`` (:class:`~explorer.fast_bootstrap.experiments.BootstrapComparison`), ``replica``
    (:class:`ReplicaRun`), ``error``; :attr:`comparison` merges them; ``jobs[kind]`` reports each job.

    Changing the model resets the grids to the paper's values for it (a γ grid means nothing to an MLP), as
    does switching between a time series (Table 2) and the other data (Table 1).
    """

    # --- data
    dataset = param.Selector(default="toy", objects=list(FASTBOOT_DATASETS), label="Dataset",
                             metadata=control(DATA, invalidates=_EVERYTHING),
                             doc="toy: y = sin(5x) + sin(15x) + sin(25x) + U(−0.5, 0.5) noise, eq. (19) (Table 1); "
                                 "teacher: 1-D GP draws; boston: Boston housing (standardised); crabs, pima, "
                                 "wisconsin are classification sets and are refused; time series CSV: a column of "
                                 "a CSV embedded as NAR(lags), e.g. the Santa Fe laser (Table 2).")
    n_points = param.Integer(default=200, bounds=(10, MAX_POINTS), softbounds=(20, 1000),
                             label="Points N (toy, teacher)",
                             metadata=control(DATA, invalidates=_EVERYTHING, applies=lambda s: s.dataset in _DRAWN),
                             doc="Data points drawn for the toy function (the paper: 200) or the GP teacher.")
    series_csv = param.Selector(default="", objects=[""], label="Time series CSV (data folder)",
                                metadata=control(DATA, invalidates=_EVERYTHING, applies=_is_series),
                                doc="A CSV whose rows are in time order, e.g. santafe_laser_A.csv (columns t, value). "
                                    + DATA_DIR_HELP + " Leave it empty to use the uploaded CSV.")
    series_column = param.String(default="value", label="Series column",
                                 metadata=control(DATA, invalidates=_EVERYTHING, applies=_is_series),
                                 doc="The column of the CSV holding the series x(t).")
    lags = param.Integer(default=6, bounds=(1, 50), softbounds=(1, 12), label="Lags (NAR order)",
                         metadata=control(DATA, invalidates=_EVERYTHING, applies=_is_series),
                         doc="Predict x(t+1) from x(t), ..., x(t−lags+1), eq. (20); the paper uses 6.")
    # --- model
    model = param.Selector(default="ls-svm", objects=list(MODELS), label="Model",
                           metadata=control(MODEL, invalidates=_RESULTS),
                           doc="ls-svm: complexity γ (regularization); rbfn: number of Gaussian kernels P (eq. 14); "
                               "mlp: number of tanh hidden units P (eq. 13), Levenberg–Marquardt.")
    lengthscale = param.Number(default=0.0, bounds=(0.0, 1e4), softbounds=(0.0, 5.0), step=0.005,
                               label="LS-SVM kernel width ℓ (0: automatic)",
                               metadata=control(MODEL, invalidates=("options", *_RESULTS), applies=_for_model("ls-svm")),
                               doc=f"Width of the Gaussian kernel; 0 picks {TOY_LENGTHSCALE} on the toy data (the "
                                   "maximum-evidence value) and the median distance between standardised inputs "
                                   "otherwise.")
    wsf = param.Number(default=8.0, bounds=(1e-3, 1e3), softbounds=(0.5, 20.0), step=0.5, label="RBFN width factor WSF",
                       metadata=control(MODEL, invalidates=("options", *_BOOTSTRAPS), applies=_for_model("rbfn")),
                       doc="Width scaling factor of the RBFN kernels, eq. (14).")
    max_epochs = param.Integer(default=200, bounds=(1, 10_000), softbounds=(10, 500), label="MLP epochs",
                               metadata=control(MODEL, invalidates=("options", *_BOOTSTRAPS), applies=_for_model("mlp")),
                               doc="Levenberg–Marquardt iterations per MLP training.")
    n_init = param.Integer(default=3, bounds=(1, 50), softbounds=(1, 10), label="MLP restarts",
                           metadata=control(MODEL, invalidates=("options", *_BOOTSTRAPS), applies=_for_model("mlp")),
                           doc="Random initialisations per MLP training; the best fit is kept.")
    # --- grids (Tables 1-2)
    full_start, full_stop, full_step, full_replications = _grid_controls(
        "Full grid", (0.1, 20.0), (100, 200, "Full bootstrap: replications J"), (
            "Smallest complexity of the full bootstrap (and of eq. 8's curves).",
            "Largest complexity of the full grid (included when on the grid).",
            "Step of the full grid; must be positive (whole numbers for RBFN and MLP).",
            "Bootstrap replications per complexity of the full bootstrap (Table 1: 100)."), _RESULTS)
    fast_start, fast_stop, fast_step, fast_replications = _grid_controls(
        "Reduced grid", (5.0, 50.0), (10, 100, "Fast bootstrap: replications"), (
            "Smallest complexity of the fast bootstrap's reduced grid.", "Largest complexity of the reduced grid.",
            "Step of the reduced grid; the F test needs at least κ1 + 2 points on it.",
            "Bootstrap replications per complexity of the fast bootstrap (Table 1: 10)."), _BOOTSTRAPS)
    log_complexity = param.Boolean(default=True, label="Log complexity",
                                   metadata=control(GRIDS, invalidates=_BOOTSTRAPS),
                                   doc="Fit the optimism polynomial in log q and draw log x-axes (the paper does "
                                       "this for the LS-SVM's γ).")
    paper_values = param.Action(lambda state: state.reset_to_paper(), label="Reset to paper values",
                                doc="Set the grids, replications, log complexity and κ0, κ1 to Table 1 (Table 2 "
                                    "for a time series) for the chosen model.")
    # --- F test, eq. (11)
    kappa0 = param.Integer(default=1, bounds=(0, 10), label="κ0 (order under H0)",
                           metadata=control(F_TEST, invalidates=_BOOTSTRAPS),
                           doc="Polynomial order of the optimism under H0 of the F test of eq. (11); the paper: 1.")
    kappa1 = param.Integer(default=2, bounds=(1, 11), label="κ1 (order under H1)",
                           metadata=control(F_TEST, invalidates=_BOOTSTRAPS),
                           doc="Polynomial order under H1 (κ1 > κ0); the paper: 2.")
    # --- what runs
    with_full = param.Boolean(default=True, label="Run the full bootstrap",
                              metadata=control(RUNS, invalidates=("full",)),
                              doc="Compare with the full bootstrap of §3 (every complexity, J replications).")
    with_replica = param.Boolean(default=True, label="Replica theory (LS-SVM)",
                                 metadata=control(RUNS, invalidates=("replica",), applies=_for_model("ls-svm")),
                                 doc="Also show the replica theory's bootstrap optimism of the LS-SVM, without refits "
                                     "([MO03]).")
    replica_points = param.Integer(default=46, bounds=(2, 500), softbounds=(5, 100), label="Replica: values of γ",
                                   metadata=control(RUNS, invalidates=("replica",), applies=_for_model("ls-svm")),
                                   doc="Values of γ (evenly spread over the full grid) of the replica theory.")
    auto_run = param.Boolean(default=True, label="Run automatically when cheap",
                             metadata=control(RUNS, invalidates=("full", "replica")),
                             doc=f"Start the full bootstrap and the replica theory by themselves when they should "
                                 f"take ≤ {AUTO_SECONDS:g} s on one core (LS-SVM and RBFN at Table 1); otherwise "
                                 "press their Run buttons. The fast bootstrap always runs.")
    seed = controls.seed("Seed of the toy/teacher draw, the bootstrap resamples and the network initialisations; "
                         "same settings and seed, same numbers (as `explorer fast-bootstrap --seed`).",
                         metadata=control(RUNS, invalidates=_EVERYTHING))
    data_dir = param.String(default=None, allow_None=True, constant=True, precedence=-1, label="Data directory",
                            doc="Folder whose *.csv files are offered as time series (explorer serve --data-dir).")

    # --- outputs
    data = output(datasets.Dataset, "Data", "the data set as loaded (before standardisation).")
    fast = output(fe.BootstrapComparison, "Fast bootstrap", "eq. (7) and the fast bootstrap (full is None).")
    full = output(fe.BootstrapComparison, "Full bootstrap", "the comparison including the full bootstrap.")
    replica = output(ReplicaRun, "Replica optimism", "the replica theory's optimism (LS-SVM).")

    job_specs = _JOBS
    outputs = ("data", "fast", "full", "replica")
    expected_errors = EXPECTED_ERRORS
    error_wordings = WORDING

    def __init__(self, **params):
        given = set(params)
        series_csv = params.pop("series_csv", "")  # a file of data_dir: set once the choices are known
        super().__init__(**params)
        self.param.series_csv.objects = ["", *self.source.files()]
        self.series_csv = series_csv
        self.job_runner = JobRunner(self)
        for kind, status in self.jobs.items():
            status.param.watch(partial(self._say, kind), "message")
        if (self.model, self.dataset) != ("ls-svm", "toy"):  # the defaults are Table 1's LS-SVM values
            self.param.update({k: v for k, v in self._paper_values().items() if k not in given})
        self.param.watch(self._on_settings, list(invalidating(self)))

    # ----------------------------------------------------------------------------- public API

    @property
    def comparison(self) -> fe.BootstrapComparison | None:
        """Fast, full (when computed) and replica results as one
        :class:`~explorer.fast_bootstrap.experiments.BootstrapComparison` (what the tab shows and exports)."""
        base = self.full if self.full is not None else self.fast
        if base is None or self.replica is None:
            return base
        return replace(base, replica=self.replica.replica, seconds={**base.seconds, "replica": self.replica.seconds})

    def paper_setting(self) -> Setting:
        """Table 1's setting for the model (Table 2's for a time series), by :func:`fe.paper_setting` on the data
        when it loads, else by the kind of data chosen."""
        try:
            return paper_setting(self.model, self._load()[1])
        except EXPECTED_ERRORS:
            return (TABLE_2 if self.dataset == SERIES else TABLE_1)[self.model]

    def upload_series(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV (rows in time order) as the time series; a path typed later takes precedence.
        The message of an earlier upload goes with it (see :meth:`refresh` for the new file's)."""
        use_uploaded_file(self, filename, content, dataset=SERIES, series_csv="")

    def reset_to_paper(self) -> None:
        """Set the grids, replication counts, log complexity and κ0 = 1, κ1 = 2 to the paper's values."""
        self.param.update(self._paper_values())

    def run(self, kind: str | None = None) -> None:
        """Start the jobs of ``kind`` (default: every kind) that wait for a button, or start them again after a
        cancel; ``run("full")`` ticks "Run the full bootstrap" and ``run("replica")`` "Replica theory" first."""
        switch = _SWITCHES.get(kind)
        if switch is not None and not getattr(self, switch):
            setattr(self, switch, True)  # refreshes (and starts the job if it is cheap) when started
        super().run(kind)

    def run_fast(self) -> None:
        """Start the fast bootstrap again after a cancel or a failure (it starts by itself otherwise)."""
        self.run("fast")

    def run_full(self) -> None:
        """Start the full bootstrap (ticks "Run the full bootstrap"), or start it again after a cancel."""
        self.run("full")

    def run_replica(self) -> None:
        """Start the replica theory (LS-SVM), or start it again after a cancel."""
        self.run("replica")

    # ----------------------------------------------------------------------------- settings

    def _paper_values(self) -> dict:
        """The controls under :data:`GRIDS` and :data:`F_TEST`, in the order of their declarations: the full grid, J,
        the reduced grid, its replications, log complexity (the paper's setting), then κ0 = 1, κ1 = 2."""
        s = self.paper_setting()
        values = (*s.full_grid, s.full_replications, *s.fast_grid, s.fast_replications, s.log_complexity, 1, 2)
        names = (*groups(self)[GRIDS], *groups(self)[F_TEST])
        return {name: _plain(self.param[name], value) for name, value in zip(names, values, strict=True)}

    def _on_settings(self, *events) -> None:
        if not self.started:
            self.error = ""  # before the first refresh, the only error is an upload's: its cause is gone
        names = {e.name: e for e in events}
        if "model" in names or ("dataset" in names and (names["dataset"].old == SERIES) != (self.dataset == SERIES)):
            self.reset_to_paper()  # refreshes through this watcher when a value changes
        if self.started:
            self.refresh()

    def _data_key(self) -> tuple:
        if self.dataset in ("toy", "teacher"):
            return (self.dataset, int(self.n_points), int(self.seed))
        if self.dataset != SERIES:
            return ("shipped", self.dataset)
        series = self._series_file()
        return ("series", series.sha256, series.filename, self.series_column.strip(), int(self.lags))

    def data_name(self) -> str:
        """The data in a download's name: the series file's name without ``.csv``, else ``dataset``."""
        file = self.series_file if self.dataset == SERIES else None
        return Path(file.filename).stem if file is not None else self.dataset

    @property
    def series_file(self) -> Upload | None:
        """The time-series CSV (the data folder's file, else the upload), if one can be read."""
        try:
            return self._series_file()
        except ValueError:  # DatasetError too: the error message of the refresh says why
            return None

    def _series_file(self) -> Upload:
        """The chosen file of the data folder, else the uploaded one (read again only when the file changed)."""
        if not self.series_csv:
            if self.source.upload is not None:
                return self.source.upload
            raise datasets.DatasetError("upload a time series CSV (rows in time order, e.g. santafe_laser_A.csv, "
                                        "column value), or choose a file of the server's data folder in 'Time "
                                        "series CSV (data folder)'.")
        return self.source.read(self.series_csv)

    def _load(self) -> tuple[tuple, datasets.Dataset]:
        key = self._data_key()

        def load() -> datasets.Dataset:
            if key[0] == "toy":
                return datasets.toy_function(n=key[1], rng=key[2])
            if key[0] == "teacher":
                return datasets.load("teacher", n=key[1], rng=key[2])
            if key[0] == "shipped":
                return datasets.load(key[1])
            return datasets.load_series_csv(io.StringIO(self._series_file().text), key[3], key[4],
                                            name=Path(key[2]).stem)
        return key, _DATA.get_or_compute(key, load)

    def model_options(self) -> dict:
        """The ``model_options`` of ``compare_bootstraps`` for the chosen model: its own controls (those that
        invalidate "options" and apply), by name; a kernel width of 0 ("automatic") is None."""
        return {name: _plain(self.param[name], getattr(self, name)) or None
                for name in invalidating(self, "options") if applies(self, name)}

    # ----------------------------------------------------------------------------- refresh

    def _prepare_jobs(self) -> _JobInputs:
        data_key, data = self._load()
        X = prepare_data(data).X  # refuses classification data
        if X.shape[0] > MAX_POINTS:
            raise ValueError(f"{data.name} has {X.shape[0]} examples; the fast bootstrap here takes at most "
                             f"{MAX_POINTS} (an N × N kernel matrix per replication). Use a shorter series.")
        self._assign("data", data)
        setting = _checked_setting(self, X.shape[0])
        model, options, seed = self.model, self.model_options(), int(self.seed)
        kappa = (int(self.kappa0), int(self.kappa1))
        fast_only = replace(setting, full_grid=setting.fast_grid, full_replications=setting.fast_replications)
        full_seconds = estimated_seconds("full", model, X.shape[0], setting, options)
        points = replica_grid(setting.grids().full, int(self.replica_points))
        replica_seconds = estimated_seconds("replica", model, X.shape[0], setting, points=points.size)
        # every job too long for a shared server is refused before any of them starts
        _refuse_long("fast", estimated_seconds("full", model, X.shape[0], fast_only, options))
        if self.with_full:
            _refuse_long("full", full_seconds)
        if model == "ls-svm" and self.with_replica:
            _refuse_long("replica", replica_seconds)
        return _JobInputs(data_key, data, model, setting, kappa, options, seed, bool(self.with_full), full_seconds,
                          bool(self.with_replica), points, replica_seconds, bool(self.auto_run))

    def _cancelled_message(self, kind: str, stop: Cancelled) -> str:
        return (f"{JOB_NAMES[kind]} cancelled after {stop.done} of {stop.total} {stop.unit}. Press "
                f"'{RUN_LABELS[kind]}' to start it again.")

    def _say(self, kind: str, event) -> None:
        """Rewrite a word of the job machinery ("done", "starting…") as a sentence."""
        sentence = _status_sentence(kind, event.new)
        if sentence is not None:
            self.jobs[kind].message = sentence


