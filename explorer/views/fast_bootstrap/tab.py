"""The fast bootstrap of seed 002 (Lendasse et al. 2005) in the explorer: session state, figures, exports and a tab.

:class:`FastBootstrapState` (param, no widgets) holds the controls — data (the toy function of eq. 19, the
shipped regression sets, or a time-series CSV embedded as NAR(lags), e.g. the Santa Fe laser), the model
family (LS-SVM, RBFN, MLP), the full and reduced complexity grids with their replication counts (Tables 1-2
by default), κ0/κ1 of the F test of eq. (11) — and, as output parameters, what
:func:`explorer.fast_bootstrap.experiments.compare_bootstraps` returns for them. Three background jobs of the
other tabs' kind (:class:`~explorer.views.common.jobs.BackgroundJobs`: progress, cancel, a result
cache shared by the sessions):

``fast``
    eq. (7) on the full grid and the fast bootstrap of §4 on the reduced grid (``compare_bootstraps`` with
    ``with_full=False``). Always automatic: at Table 1's settings it trains 50-100 bootstrap models.
``full``
    the full bootstrap of §3 (``compare_bootstraps`` with ``with_full=True``; its fast part equals the
    ``fast`` job's, same seed). Automatic only when ``auto_run`` is on and it is *cheap*: at most
    :data:`AUTO_SECONDS` by :func:`estimated_seconds`, a fixed cost model calibrated on one unloaded core
    (deterministic: the same settings always behave the same). At Table 1 that is the LS-SVM (≈0.6 s) and the
    RBFN (≈4 s); the MLP (1300 Levenberg–Marquardt fits, ≈2-3 min) waits for the "Run full bootstrap" button,
    shows its progress and can be cancelled between replications.
``replica``
    (LS-SVM only) the replica theory's bootstrap optimism without refits at ``replica_points`` values of γ
    (:func:`explorer.fast_bootstrap.experiments.replica_optimism` at the points ``compare_bootstraps`` takes). Its
    cost grows as N³: automatic under the same rule (≈2 s on the toy data), else the "Run replica theory"
    button (the Santa Fe laser, N = 994: minutes); cancellable between values of γ.

The figure functions (:func:`optimism_plot`, :func:`generalization_plot`), the tables and the exports
(:func:`summary_frame`, :func:`curve_frame`, :func:`csv_text`, :func:`json_text`) only arrange those results;
:class:`FastBootstrapTab` lays them out. The state computes nothing until :meth:`FastBootstrapState.refresh`
is first called (the tab calls it when shown).
"""

from __future__ import annotations

import io
import json
import math
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
import panel as pn
import param

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.bootstrap import check_f_test
from explorer.fast_bootstrap.experiments import CALIBRATION, estimated_seconds, replica_grid
from explorer.fast_bootstrap.lssvm import LSSVM
from explorer.progress import Hooks
from explorer.fast_bootstrap.networks import MLP, RBFN
from explorer.gp_bootstrap.replica import ConvergenceError
from explorer.views.common.caches import LRU, lru
from explorer.views.common.jobs import BackgroundJobs, Job
from explorer.views.common.session import bind_to_session
from explorer.views.common.widgets import job_indicators
from explorer.views.common.uploads import read_upload

__all__ = [
    "FastBootstrapState", "FastBootstrapTab", "ReplicaRun", "FASTBOOT_DATASETS", "SERIES", "JOB_KINDS",
    "AUTO_SECONDS", "CALIBRATION", "MAX_GRID_POINTS", "MAX_POINTS", "SUMMARY_COLUMNS",
    "CURVE_COLUMNS", "estimated_seconds", "replica_grid", "optimism_plot",
    "generalization_plot", "summary_frame", "curve_frame", "summary", "settings", "csv_text", "json_text",
]

#: ``dataset`` value of a time series read from a CSV file (``series_csv``) and embedded as NAR(``lags``).
SERIES = "time series CSV"
#: The data offered: the toy function (eq. 19), the GP teacher, the shipped sets (the classification ones are
#: refused with a message: seed 002 is about regression), and a time-series CSV.
FASTBOOT_DATASETS = ("toy", "teacher", "boston", "crabs", "pima", "wisconsin", SERIES)
#: Background jobs (see the module docstring).
JOB_KINDS = ("fast", "full", "replica")
#: The full bootstrap and the replica theory start by themselves when :func:`estimated_seconds` ≤ this.
AUTO_SECONDS = 15.0
#: Longest complexity grid accepted (a tiny step would otherwise ask for millions of models).
MAX_GRID_POINTS = 2000
#: Most data points accepted (the LS-SVM factorises an N × N kernel matrix per bootstrap replication).
MAX_POINTS = 2000
#: A time-series CSV larger than this is refused (it would stall the session).
MAX_SERIES_BYTES = 20_000_000

_COMPLEXITY = {"ls-svm": LSSVM.complexity, "rbfn": RBFN.complexity, "mlp": MLP.complexity}
_MODEL_LABELS = {"ls-svm": "LS-SVM", "rbfn": "RBFN", "mlp": "MLP"}
#: Controls that change what has to be computed.
_COMPUTE_PARAMETERS = ("dataset", "n_points", "series_csv", "series_column", "lags", "model", "full_start",
                       "full_stop", "full_step", "full_replications", "fast_start", "fast_stop", "fast_step",
                       "fast_replications", "log_complexity", "kappa0", "kappa1", "lengthscale", "wsf",
                       "max_epochs", "n_init", "with_full", "with_replica", "replica_points", "auto_run", "seed")

#: Columns of the summary table and of the curves CSV.
SUMMARY_COLUMNS = ["method", "selected", "F", "df", "p_value", "degree", "replications", "grid_points",
                   "bootstrap_models", "models_trained", "gain", "seconds"]
CURVE_COLUMNS = ["complexity", "apparent_error", "full_optimism", "full_optimism_se", "full_generalization_error",
                 "fast_optimism", "fast_generalization_error", "fast_sample_optimism", "fast_sample_se",
                 "replica_optimism"]


#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError, IndexError)


def describe_error(err: BaseException) -> str:
    """A readable message for an error of the fast-bootstrap core or the data."""
    if isinstance(err, ConvergenceError):
        return (f"The replica theory did not converge: {err} Switch the replica theory off or change the kernel "
                "width or the γ grid.")
    if isinstance(err, np.linalg.LinAlgError):
        return f"A least-squares or kernel system could not be solved ({err}). Change the model settings."
    if isinstance(err, datasets.DatasetError):
        return f"The data cannot be used: {err}"
    return str(err) if isinstance(err, ValueError) else f"{type(err).__name__}: {err}"


@dataclass(frozen=True)
class ReplicaRun:
    """The replica theory's optimism along γ (no refits) and how long it took."""

    replica: fe.ReplicaOptimism
    seconds: float


# ------------------------------------------------------------------------------------ caches

_DATA = lru("fast_bootstrap.data", 8)  # Dataset per data settings
# BootstrapComparison without the full bootstrap, per settings and seed
_FAST = lru("fast_bootstrap.fast", 32)
# BootstrapComparison with the full bootstrap, per settings and seed
_FULL = lru("fast_bootstrap.full", 32)
_REPLICA = lru("fast_bootstrap.replica", 16)  # ReplicaRun per (data, kernel width, grid, points)


# ------------------------------------------------------------------------------------ computations


def _comparison(data, model, setting, kappa, options, seed, with_full: bool, job: Job) -> fe.BootstrapComparison:
    """Worker thread: ``compare_bootstraps`` as the CLI calls it (the replica theory is a job of its own)."""
    return fe.compare_bootstraps(data, model, setting, rng=seed, with_full=with_full, with_replica=False,
                                 kappa0=kappa[0], kappa1=kappa[1], model_options=options,
                                 hooks=Hooks(progress=job.report, should_stop=job.should_stop))


def _replica(data, options, points: np.ndarray, job: Job) -> ReplicaRun:
    """Worker thread: the replica optimism of the LS-SVM at ``points`` (cancellable between values of γ)."""
    model = fe.make_model("ls-svm", data, **options)
    prepared = fe.prepare_data(data)
    start = time.perf_counter()
    rep = fe.replica_optimism(model, prepared.X, prepared.y, points, hooks=Hooks(progress=job.report, should_stop=job.should_stop))
    return ReplicaRun(rep, time.perf_counter() - start)


# ------------------------------------------------------------------------------------ the state


class FastBootstrapState(BackgroundJobs, param.Parameterized):
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
                             doc="toy: y = sin(5x) + sin(15x) + sin(25x) + U(−0.5, 0.5) noise, eq. (19) (Table 1); "
                                 "teacher: 1-D GP draws; boston: Boston housing (standardised); crabs, pima, "
                                 "wisconsin are classification sets and are refused; time series CSV: a column of "
                                 "a CSV embedded as NAR(lags), e.g. the Santa Fe laser (Table 2).")
    n_points = param.Integer(default=200, bounds=(10, MAX_POINTS), softbounds=(20, 1000),
                             label="Points N (toy, teacher)",
                             doc="Data points drawn for the toy function (the paper: 200) or the GP teacher.")
    series_csv = param.String(default="", label="Time series CSV (path)",
                              doc="Path, on the machine running the app, of a CSV whose rows are in time order, e.g. "
                                  "santafe_laser_A.csv (columns t, value). Leave it empty to use an uploaded CSV.")
    series_column = param.String(default="value", label="Series column",
                                 doc="The column of the CSV holding the series x(t).")
    lags = param.Integer(default=6, bounds=(1, 50), softbounds=(1, 12), label="Lags (NAR order)",
                         doc="Predict x(t+1) from x(t), ..., x(t−lags+1), eq. (20); the paper uses 6.")
    # --- model
    model = param.Selector(default="ls-svm", objects=list(fe.MODELS), label="Model",
                           doc="ls-svm: complexity γ (regularization); rbfn: number of Gaussian kernels P (eq. 14); "
                               "mlp: number of tanh hidden units P (eq. 13), Levenberg–Marquardt.")
    lengthscale = param.Number(default=0.0, bounds=(0.0, 1e4), softbounds=(0.0, 5.0), step=0.005,
                               label="LS-SVM kernel width ℓ (0: automatic)",
                               doc=f"Width of the Gaussian kernel; 0 picks {fe.TOY_LENGTHSCALE} on the toy data (the "
                                   "maximum-evidence value) and the median distance between standardised inputs "
                                   "otherwise.")
    wsf = param.Number(default=8.0, bounds=(1e-3, 1e3), softbounds=(0.5, 20.0), step=0.5, label="RBFN width factor WSF",
                       doc="Width scaling factor of the RBFN kernels, eq. (14).")
    max_epochs = param.Integer(default=200, bounds=(1, 10_000), softbounds=(10, 500), label="MLP epochs",
                               doc="Levenberg–Marquardt iterations per MLP training.")
    n_init = param.Integer(default=3, bounds=(1, 50), softbounds=(1, 10), label="MLP restarts",
                           doc="Random initialisations per MLP training; the best fit is kept.")
    # --- grids (Tables 1-2)
    full_start = param.Number(default=5.0, bounds=(0.0, 1e9), softbounds=(0.0, 200.0), label="Full grid: start",
                              doc="Smallest complexity of the full bootstrap (and of eq. 8's curves).")
    full_stop = param.Number(default=50.0, bounds=(0.0, 1e9), softbounds=(0.0, 200.0), label="Full grid: stop",
                             doc="Largest complexity of the full grid (included when on the grid).")
    full_step = param.Number(default=0.1, bounds=(0.0, 1e9), softbounds=(0.0, 20.0), label="Full grid: step",
                             doc="Step of the full grid; must be positive (whole numbers for RBFN and MLP).")
    full_replications = param.Integer(default=100, bounds=(1, 10_000), softbounds=(2, 200),
                                      label="Full bootstrap: replications J",
                                      doc="Bootstrap replications per complexity of the full bootstrap (Table 1: 100).")
    fast_start = param.Number(default=5.0, bounds=(0.0, 1e9), softbounds=(0.0, 200.0), label="Reduced grid: start",
                              doc="Smallest complexity of the fast bootstrap's reduced grid.")
    fast_stop = param.Number(default=50.0, bounds=(0.0, 1e9), softbounds=(0.0, 200.0), label="Reduced grid: stop",
                             doc="Largest complexity of the reduced grid.")
    fast_step = param.Number(default=5.0, bounds=(0.0, 1e9), softbounds=(0.0, 50.0), label="Reduced grid: step",
                             doc="Step of the reduced grid; the F test needs at least κ1 + 2 points on it.")
    fast_replications = param.Integer(default=10, bounds=(1, 10_000), softbounds=(2, 100),
                                      label="Fast bootstrap: replications",
                                      doc="Bootstrap replications per complexity of the fast bootstrap (Table 1: 10).")
    log_complexity = param.Boolean(default=True, label="Log complexity",
                                   doc="Fit the optimism polynomial in log q and draw log x-axes (the paper does "
                                       "this for the LS-SVM's γ).")
    paper_values = param.Action(lambda state: state.reset_to_paper(), label="Reset to paper values",
                                doc="Set the grids, replications, log complexity and κ0, κ1 to Table 1 (Table 2 "
                                    "for a time series) for the chosen model.")
    # --- F test, eq. (11)
    kappa0 = param.Integer(default=1, bounds=(0, 10), label="κ0 (order under H0)",
                           doc="Polynomial order of the optimism under H0 of the F test of eq. (11); the paper: 1.")
    kappa1 = param.Integer(default=2, bounds=(1, 11), label="κ1 (order under H1)",
                           doc="Polynomial order under H1 (κ1 > κ0); the paper: 2.")
    # --- what runs
    with_full = param.Boolean(default=True, label="Run the full bootstrap",
                              doc="Compare with the full bootstrap of §3 (every complexity, J replications).")
    with_replica = param.Boolean(default=True, label="Replica theory (LS-SVM)",
                                 doc="Also show the replica theory's bootstrap optimism of the LS-SVM, without refits "
                                     "(seed 000).")
    replica_points = param.Integer(default=46, bounds=(2, 500), softbounds=(5, 100), label="Replica: values of γ",
                                   doc="Values of γ (evenly spread over the full grid) of the replica theory.")
    auto_run = param.Boolean(default=True, label="Run automatically when cheap",
                             doc=f"Start the full bootstrap and the replica theory by themselves when they should "
                                 f"take ≤ {AUTO_SECONDS:g} s on one core (LS-SVM and RBFN at Table 1); otherwise "
                                 "press their Run buttons. The fast bootstrap always runs.")
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Seed",
                         doc="Seed of the toy/teacher draw, the bootstrap resamples and the network initialisations; "
                             "same settings and seed, same numbers (as `explorer fast-bootstrap --seed`).")

    # --- outputs
    data = param.ClassSelector(class_=datasets.Dataset, default=None, allow_None=True, precedence=-1,
                               label="Data", doc="Output: the data set as loaded (before standardisation).")
    fast = param.ClassSelector(class_=fe.BootstrapComparison, default=None, allow_None=True, precedence=-1,
                               label="Fast bootstrap", doc="Output: eq. (7) and the fast bootstrap (full is None).")
    full = param.ClassSelector(class_=fe.BootstrapComparison, default=None, allow_None=True, precedence=-1,
                               label="Full bootstrap", doc="Output: the comparison including the full bootstrap.")
    replica = param.ClassSelector(class_=ReplicaRun, default=None, allow_None=True, precedence=-1,
                                  label="Replica optimism", doc="Output: the replica theory's optimism (LS-SVM).")
    error = param.String(default="", precedence=-1, label="Error",
                         doc="Output: why the current settings cannot be computed; empty when they can.")

    _job_kinds = JOB_KINDS
    _outputs = ("data", "fast", "full", "replica")
    expected_errors = EXPECTED_ERRORS
    describe_error = staticmethod(describe_error)

    def __init__(self, **params):
        given = set(params)
        super().__init__(**params)
        self._init_jobs()
        self._force_only: str | None = None
        self._upload: tuple[str, str, str] | None = None  # uploaded series: (file name, text, sha256)
        if (self.model, self.dataset) != ("ls-svm", "toy"):  # the defaults are Table 1's LS-SVM values
            self.param.update({k: v for k, v in self._paper_values().items() if k not in given})
        self.param.watch(self._on_settings, list(_COMPUTE_PARAMETERS))

    # ----------------------------------------------------------------------------- public API

    @property
    def comparison(self) -> fe.BootstrapComparison | None:
        """Fast, full (when computed) and replica results as one
        :class:`~explorer.fast_bootstrap.experiments.BootstrapComparison` (what the tab shows and exports)."""
        base = self.full if self.full is not None else self.fast
        if base is None or self.replica is None:
            return base
        return replace(base, replica=self.replica.replica, seconds={**base.seconds, "replica": self.replica.seconds})

    def paper_setting(self) -> fe.Setting:
        """Table 1's setting for the model (Table 2's for a time series), by :func:`fe.paper_setting` on the data
        when it loads, else by the kind of data chosen."""
        try:
            return fe.paper_setting(self.model, self._load()[1])
        except EXPECTED_ERRORS:
            return (fe.TABLE_2 if self.dataset == SERIES else fe.TABLE_1)[self.model]

    def upload_series(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV (rows in time order) as the time series; a path typed later takes precedence."""
        try:
            self._upload = read_upload(filename, content, max_bytes=MAX_SERIES_BYTES)
        except ValueError as err:
            self.error = str(err)
            return
        self.param.update(dataset=SERIES, series_csv="")
        if self.started:
            self.refresh()

    def reset_to_paper(self) -> None:
        """Set the grids, replication counts, log complexity and κ0 = 1, κ1 = 2 to the paper's values."""
        self.param.update(self._paper_values())

    def run_full(self) -> None:
        """Start the full bootstrap (ticks "Run the full bootstrap"), or start it again after a cancel."""
        self._run_only("full", "with_full")

    def run_replica(self) -> None:
        """Start the replica theory (LS-SVM), or start it again after a cancel."""
        self._run_only("replica", "with_replica")

    # ----------------------------------------------------------------------------- settings

    def _paper_values(self) -> dict:
        s = self.paper_setting()
        return dict(full_start=float(s.full_grid[0]), full_stop=float(s.full_grid[1]),
                    full_step=float(s.full_grid[2]), full_replications=int(s.full_replications),
                    fast_start=float(s.fast_grid[0]), fast_stop=float(s.fast_grid[1]),
                    fast_step=float(s.fast_grid[2]), fast_replications=int(s.fast_replications),
                    log_complexity=bool(s.log_complexity), kappa0=1, kappa1=2)

    def _run_only(self, kind: str, switch: str) -> None:
        self._force_only = kind
        try:
            if not getattr(self, switch):
                setattr(self, switch, True)  # refreshes (and starts the job) when started
            self.refresh()
        finally:
            self._force_only = None

    def _on_settings(self, *events) -> None:
        names = {e.name: e for e in events}
        if "model" in names or ("dataset" in names and (names["dataset"].old == SERIES) != (self.dataset == SERIES)):
            self.reset_to_paper()  # refreshes through this watcher when a value changes
        if self._started:
            self.refresh()

    def _data_key(self) -> tuple:
        if self.dataset in ("toy", "teacher"):
            return (self.dataset, int(self.n_points), int(self.seed))
        if self.dataset != SERIES:
            return ("shipped", self.dataset)
        if not self.series_csv.strip():
            if self._upload is not None:
                return ("upload", self._upload[2], self._upload[0], self.series_column.strip(), int(self.lags))
            raise datasets.DatasetError("upload a time series CSV or give its path on the server (e.g. "
                                        "santafe_laser_A.csv, column value) in 'Time series CSV (path)'.")
        file = Path(self.series_csv.strip()).expanduser()
        if not file.is_file():
            where = "" if file.is_absolute() else f" (relative to {Path.cwd()})"
            raise datasets.DatasetError(f"there is no file {str(file)!r}{where}. Give the path of a CSV whose rows "
                                        "are in time order.")
        stat = file.stat()
        if stat.st_size > MAX_SERIES_BYTES:
            raise datasets.DatasetError(f"{file.name} has {stat.st_size / 1e6:.0f} MB; give a series of at most "
                                        f"{MAX_SERIES_BYTES / 1e6:.0f} MB.")
        return (SERIES, str(file.resolve()), stat.st_mtime_ns, stat.st_size, self.series_column.strip(),
                int(self.lags))

    def _load(self) -> tuple[tuple, datasets.Dataset]:
        key = self._data_key()

        def load() -> datasets.Dataset:
            if key[0] == "toy":
                return datasets.toy_function(n=key[1], rng=key[2])
            if key[0] == "teacher":
                return datasets.load("teacher", n=key[1], rng=key[2])
            if key[0] == "shipped":
                return datasets.load(key[1])
            if key[0] == "upload":
                return datasets.load_series_csv(io.StringIO(self._upload[1]), key[3], key[4], name=Path(key[2]).stem)
            return datasets.load_series_csv(key[1], key[4], key[5], name=Path(key[1]).stem)
        return key, _DATA.get_or_compute(key, load)

    def _grid(self, which: str) -> tuple[float, float, float]:
        """(start, stop, step) of the full or reduced grid, with a message for each way it can be wrong."""
        start, stop, step = (float(getattr(self, f"{which}_{p}")) for p in ("start", "stop", "step"))
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

    def _setting(self, n: int) -> fe.Setting:
        setting = fe.Setting(self._grid("full"), int(self.full_replications), self._grid("fast"),
                             int(self.fast_replications), bool(self.log_complexity))
        grids = setting.grids()
        grid, sample = grids.full, grids.fast
        both = np.concatenate([grid, sample])
        check_f_test(sample.size, int(self.kappa0), int(self.kappa1))
        if self.model == "ls-svm" or self.log_complexity:
            if both.min() <= 0:
                what = "γ" if self.model == "ls-svm" else "log complexity"
                raise ValueError(f"The complexities must be positive for {what}; the grids start at {both.min():g}. "
                                 "Set the grid starts above 0.")
        if self.model != "ls-svm":
            if np.any(both != np.round(both)) or both.min() < 1:
                raise ValueError(f"The {_MODEL_LABELS[self.model]}'s complexity is a {_COMPLEXITY[self.model]}: the "
                                 "grids must hold whole numbers ≥ 1. Use whole starts and steps.")
            if both.max() > n // 2:
                raise ValueError(f"{_MODEL_LABELS[self.model]} with up to {both.max():g} units on N = {n} points: a "
                                 f"bootstrap sample holds about 63% distinct points, so keep the grids ≤ N/2 = "
                                 f"{n // 2}.")
        return setting

    def _options(self) -> dict:
        if self.model == "ls-svm":
            return {"lengthscale": float(self.lengthscale) if self.lengthscale > 0 else None}
        if self.model == "rbfn":
            return {"wsf": float(self.wsf)}
        return {"max_epochs": int(self.max_epochs), "n_init": int(self.n_init)}

    # ----------------------------------------------------------------------------- refresh

    def _refresh_outputs(self) -> None:
        data_key, data = self._load()
        X = fe.prepare_data(data).X  # refuses classification data
        if X.shape[0] > MAX_POINTS:
            raise ValueError(f"{data.name} has {X.shape[0]} examples; the fast bootstrap here takes at most "
                             f"{MAX_POINTS} (an N × N kernel matrix per replication). Use a shorter series.")
        self._assign("data", data)
        setting = self._setting(X.shape[0])
        model, options, seed = self.model, self._options(), int(self.seed)
        kappa = (int(self.kappa0), int(self.kappa1))
        key = (data_key, model, setting, kappa, tuple(sorted(options.items())), seed)
        self._request_kind("fast", key, "fast", _FAST,
                           partial(_comparison, data, model, setting, kappa, options, seed, False), optional=False)
        if not self.with_full:
            self._skip("full", "switched off: tick 'Run the full bootstrap' or press 'Run full bootstrap'.")
        else:
            estimate = estimated_seconds("full", model, X.shape[0], setting, options)
            self._request_kind("full", key, "full", _FULL,
                               partial(_comparison, data, model, setting, kappa, options, seed, True),
                               optional=not (self.auto_run and estimate <= AUTO_SECONDS))
            self._waiting("full", "Run full bootstrap", estimate)
        if model != "ls-svm":
            self._skip("replica", "the replica theory is for the LS-SVM only.")
        elif not self.with_replica:
            self._skip("replica", "switched off: tick 'Replica theory (LS-SVM)' or press 'Run replica theory'.")
        else:
            points = replica_grid(setting.grids().full, int(self.replica_points))
            rkey = (data_key, options["lengthscale"], tuple(points.tolist()))
            estimate = estimated_seconds("replica", model, X.shape[0], setting, points=points.size)
            self._request_kind("replica", rkey, "replica", _REPLICA, partial(_replica, data, options, points),
                               optional=not (self.auto_run and estimate <= AUTO_SECONDS))
            self._waiting("replica", "Run replica theory", estimate)

    def _request_kind(self, kind: str, key, attr: str, cache: LRU, work, optional: bool) -> None:
        """:meth:`_request`, forcing a (re)start only for the kind whose Run button was pressed."""
        forced = self._forced
        self._forced = forced or self._force_only == kind
        try:
            self._request(kind, key, attr, cache, work, optional=optional)
        finally:
            self._forced = forced

    def _waiting(self, kind: str, button: str, estimate: float) -> None:
        status = self.jobs[kind]
        if status.message.startswith("not run yet"):
            status.message = f"not run yet: press '{button}' (≈ {estimate:.0f} s on one core)."

    def _skip(self, kind: str, message: str) -> None:
        job = self._jobs.pop(kind, None)
        if job is not None:
            job.stop.set()
        self._wanted.pop(kind, None)
        self._assign(kind, None)
        self.jobs[kind].param.update(running=False, progress=0.0, message=message, error="")


# ------------------------------------------------------------------------------------ figures

OPT_DIM = hv.Dimension("optimism", label="optimism, eq. (6)")
GEN_DIM = hv.Dimension("generalization_error", label="generalization error, eq. (8)")
FULL_COLOR, FAST_COLOR, REPLICA_COLOR = "#1f77b4", "#d62728", "#2ca02c"
_SIZE = dict(responsive=True, height=360)
_EMPTY = np.array([])


def _x_dim(state: FastBootstrapState) -> hv.Dimension:
    return hv.Dimension("complexity", label=_COMPLEXITY[state.model])


def _finish(layers: list, state: FastBootstrapState, title: str) -> hv.Overlay:
    logx = bool(state.comparison.setting.log_complexity) if state.comparison is not None else state.log_complexity
    return hv.Overlay([e.opts(framewise=True, logx=logx) for e in layers]).opts(
        logx=logx, legend_position="right", title=title, show_grid=True, **_SIZE)


def optimism_plot(state: FastBootstrapState) -> hv.Overlay:
    """Optimism vs complexity: the full bootstrap ± one standard error, the fast bootstrap's measurements on
    the reduced grid (± SE) and its fitted polynomial on the full grid, the LS-SVM's replica optimism."""
    res, x = state.comparison, _x_dim(state)
    if res is None:
        return _finish([hv.Curve((_EMPTY, _EMPTY), x, OPT_DIM)], state, "Optimism: no result yet")
    layers, fast = [], res.fast
    if res.full is not None:
        full = res.full
        layers.append(hv.Spread((full.grid, full.optimism, full.optimism_se), x, [OPT_DIM, "se"]).opts(
            color=FULL_COLOR, alpha=0.2, line_alpha=0))
        layers.append(hv.Curve((full.grid, full.optimism), x, OPT_DIM,
                               label=f"full bootstrap (J = {full.replications}) ± SE").opts(color=FULL_COLOR,
                                                                                            line_width=2))
    log = "log " if fast.log_complexity else ""
    layers.append(hv.Curve((fast.grid, fast.optimism), x, OPT_DIM,
                           label=f"fitted polynomial, degree {fast.degree} in {log}q").opts(
        color=FAST_COLOR, line_width=2, line_dash="dashed"))
    layers.append(hv.ErrorBars((fast.sample_grid, fast.sample_optimism, fast.sample_se), x, [OPT_DIM, "se"]).opts(
        color=FAST_COLOR))
    layers.append(hv.Scatter((fast.sample_grid, fast.sample_optimism), x, OPT_DIM,
                             label=f"fast bootstrap, reduced grid (J = {fast.replications})").opts(
        color=FAST_COLOR, size=8))
    if res.replica is not None:
        layers.append(hv.Curve((res.replica.grid, res.replica.optimism), x, OPT_DIM,
                               label="replica theory (no refits)").opts(color=REPLICA_COLOR, line_width=2,
                                                                         line_dash="dotted"))
    f = fast.f_test
    title = f"Optimism, eq. (6): F({f.df_num}, {f.df_den}) = {f.F:.3g}, p = {f.p_value:.2g} → degree {fast.degree}"
    return _finish(layers, state, title)


def generalization_plot(state: FastBootstrapState) -> hv.Overlay:
    """Generalization error of eq. (8) vs complexity, full and fast bootstrap, a marker at each selection."""
    res, x = state.comparison, _x_dim(state)
    if res is None:
        return _finish([hv.Curve((_EMPTY, _EMPTY), x, GEN_DIM)], state, "Generalization error: no result yet")
    layers = []
    for name, curve, color in (("full bootstrap", res.full, FULL_COLOR), ("fast bootstrap", res.fast, FAST_COLOR)):
        if curve is None:
            continue
        gen = curve.generalization_error
        i = int(np.argmin(gen))
        layers.append(hv.Curve((curve.grid, gen), x, GEN_DIM, label=name).opts(color=color, line_width=2))
        layers.append(hv.Scatter(([curve.grid[i]], [gen[i]]), x, GEN_DIM,
                                 label=f"{name}: selected {curve.grid[i]:.4g}").opts(
            color=color, size=12, marker="diamond", line_color="black"))
    return _finish(layers, state, "Generalization error, eq. (8); ◆ = selected")


# ------------------------------------------------------------------------------------ tables and exports


def _seconds(res: fe.BootstrapComparison, part: str) -> float:
    return float(res.seconds.get("apparent", 0.0) + res.seconds.get(part, np.nan))


def summary_frame(state: FastBootstrapState) -> pd.DataFrame:
    """One row per method: selected complexity, the F test (fast), models trained, gain, seconds (eq. 7 incl.)."""
    res = state.comparison
    rows = []
    if res is not None:
        f, fast = res.fast.f_test, res.fast
        rows.append({"method": "fast bootstrap", "selected": fast.selected, "F": f.F, "df": f"{f.df_num}, {f.df_den}",
                     "p_value": f.p_value, "degree": fast.degree, "replications": fast.replications,
                     "grid_points": fast.sample_grid.size, "bootstrap_models": fast.bootstrap_models,
                     "models_trained": fast.models_trained, "gain": np.nan if res.gain is None else res.gain,
                     "seconds": _seconds(res, "fast")})
        if res.full is not None:
            full = res.full
            rows.append({"method": "full bootstrap", "selected": full.selected, "F": np.nan, "df": "",
                         "p_value": np.nan, "degree": np.nan, "replications": full.replications,
                         "grid_points": full.grid.size, "bootstrap_models": full.bootstrap_models,
                         "models_trained": full.models_trained, "gain": np.nan, "seconds": _seconds(res, "full")})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _summary_display(state: FastBootstrapState) -> pd.DataFrame:
    """:func:`summary_frame` as text, one column per method and one row per quantity (fits the page)."""
    def text(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if not np.isfinite(value) else f"{value:.4g}"
        return str(value)
    frame = summary_frame(state)
    if frame.empty:
        return pd.DataFrame(columns=["fast bootstrap", "full bootstrap"])
    frame = frame.set_index("method").T
    frame.index.name = frame.columns.name = None
    return frame.apply(lambda column: column.map(text))


def curve_frame(state: FastBootstrapState) -> pd.DataFrame:
    """Every curve on the union of the full, reduced and replica grids (NaN where a curve has no value)."""
    res = state.comparison
    if res is None:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    fast = res.fast
    parts = [pd.DataFrame({"complexity": fast.grid, "apparent_error": fast.apparent_error,
                           "fast_optimism": fast.optimism, "fast_generalization_error": fast.generalization_error}),
             pd.DataFrame({"complexity": fast.sample_grid, "fast_sample_optimism": fast.sample_optimism,
                           "fast_sample_se": fast.sample_se})]
    if res.full is not None:
        parts.append(pd.DataFrame({"complexity": res.full.grid, "full_optimism": res.full.optimism,
                                   "full_optimism_se": res.full.optimism_se,
                                   "full_generalization_error": res.full.generalization_error}))
    if res.replica is not None:
        parts.append(pd.DataFrame({"complexity": res.replica.grid, "replica_optimism": res.replica.optimism}))
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.merge(part, on="complexity", how="outer")
    return frame.sort_values("complexity", kind="stable").reindex(columns=CURVE_COLUMNS).reset_index(drop=True)


def settings(state: FastBootstrapState) -> dict:
    """The controls behind the result, for the exports."""
    out = {"dataset": state.dataset, "model": state.model, **state._options(), "seed": int(state.seed),
           "full_grid": [state.full_start, state.full_stop, state.full_step],
           "full_replications": int(state.full_replications),
           "fast_grid": [state.fast_start, state.fast_stop, state.fast_step],
           "fast_replications": int(state.fast_replications), "log_complexity": bool(state.log_complexity),
           "kappa0": int(state.kappa0), "kappa1": int(state.kappa1)}
    if state.dataset in ("toy", "teacher"):
        out["n_points"] = int(state.n_points)
    if state.dataset == SERIES:
        out.update(series_csv=state.series_csv, series_column=state.series_column, lags=int(state.lags))
    return out


def _json_ready(value):
    """NaN → None (JSON null), numpy scalars and arrays → Python, recursively."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value.item() if isinstance(value, np.generic) else value


def json_text(state: FastBootstrapState) -> str:
    """The result as ``BootstrapComparison.as_dict()`` (``explorer fast-bootstrap --json``) plus ``settings``."""
    res = state.comparison
    payload = res.as_dict() if res is not None else {}
    return json.dumps(_json_ready({**payload, "settings": settings(state)}), indent=1)


def csv_text(state: FastBootstrapState) -> str:
    """The curves as CSV, with a comment line naming the settings."""
    line = " ".join(f"{k}={v}" for k, v in settings(state).items())
    return f"# fast bootstrap (seed 002): {line}\n" + curve_frame(state).to_csv(index=False)


def summary(state: FastBootstrapState) -> str:
    """One paragraph on the data, the selections, the F test and the replica theory."""
    data, res = state.data, state.comparison
    if data is None:
        return f"**{state.dataset}** · {_MODEL_LABELS[state.model]}"
    parts = [f"**{data.name}**: N = {data.n} examples, {data.d} input(s) · {_MODEL_LABELS[state.model]}, "
             f"{_COMPLEXITY[state.model]}"]
    if res is not None:
        f = res.fast.f_test
        log = " in log q" if res.fast.log_complexity else ""
        verdict = "kept" if f.accepted else "rejected"
        parts.append(f"fast bootstrap selects **{res.fast.selected:.4g}** (H0 order κ0 = {f.kappa0} {verdict}: "
                     f"F({f.df_num}, {f.df_den}) = {f.F:.3g}, p = {f.p_value:.3g}; degree {res.fast.degree}{log})")
        if res.full is not None:
            parts.append(f"full bootstrap selects **{res.full.selected:.4g}**; the fast one trains "
                         f"{res.gain:.1%} fewer models")
        if res.replica is not None:
            ok = "converged" if res.replica.converged.all() else "⚠ not converged everywhere"
            parts.append(f"replica theory at {res.replica.grid.size} values of γ without refits ({ok})")
    return " · ".join(parts)


# ------------------------------------------------------------------------------------ the tab


class FastBootstrapTab(pn.viewable.Viewer):
    """Seed 002 as a tab: controls, job progress with Run/Cancel, optimism and generalization error vs
    complexity (Figs. 2-7), the summary table (Table 1's quantities), JSON/CSV exports. CSS classes
    ``explorer-fastboot-…``: the controls ``explorer-fastboot-<parameter with - for _>``, ``-plot-optimism``,
    ``-plot-generalization``, ``-summary`` (table), ``-status``, ``-error``, ``-progress-<kind>``,
    ``-job-message-<kind>``, ``-job-error-<kind>``, ``-run-full``, ``-run-replica``, ``-cancel``, ``-reset``,
    ``-json``, ``-csv`` (kinds ``fast``, ``full``, ``replica``).

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=FastBootstrapState, label="State",
                                doc="The fast-bootstrap session state the tab shows.")

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = FastBootstrapState()
        super().__init__(**params)
        s = self.state
        bind_to_session(s)
        self.widgets = self._make_widgets()
        self.upload = pn.widgets.FileInput(accept=".csv", multiple=False, sizing_mode="stretch_width",
                                           css_classes=["explorer-fastboot-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width",
                                   css_classes=["explorer-fastboot-error"])
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["explorer-fastboot-status"])
        self.plots = {what: pn.pane.HoloViews(figure(s), sizing_mode="stretch_width", min_height=360,
                                              linked_axes=False, css_classes=[f"explorer-fastboot-plot-{what}"])
                      for what, figure in (("optimism", optimism_plot), ("generalization", generalization_plot))}
        self.table = pn.pane.DataFrame(_summary_display(s), sizing_mode="stretch_width",
                                       css_classes=["explorer-fastboot-summary"])
        indicators = job_indicators(s, "explorer-fastboot", self._on_job, width=140)
        self.progress, self.job_message, self.job_error = indicators.progress, indicators.message, indicators.error
        self.buttons = {
            "run-full": pn.widgets.Button(label="Run full bootstrap", color="primary",
                                          css_classes=["explorer-fastboot-run-full"]),
            "run-replica": pn.widgets.Button(label="Run replica theory", color="primary",
                                             css_classes=["explorer-fastboot-run-replica"]),
            "cancel": pn.widgets.Button(label="Cancel", color="warning", css_classes=["explorer-fastboot-cancel"]),
            "reset": pn.widgets.Button(label=s.param.paper_values.label, color="light",
                                       sizing_mode="stretch_width", css_classes=["explorer-fastboot-reset"]),
        }
        self.buttons["run-full"].on_click(lambda event: self.state.run_full())
        self.buttons["run-replica"].on_click(lambda event: self.state.run_replica())
        self.buttons["cancel"].on_click(lambda event: self.state.cancel())
        self.buttons["reset"].on_click(lambda event: self.state.reset_to_paper())
        self.downloads = [pn.widgets.FileDownload(
            callback=partial(self._export, fmt), filename=f"explorer-fast-bootstrap.{fmt}",
            label=label, color="light", css_classes=[f"explorer-fastboot-{fmt}"])
            for fmt, label in (("json", "Result (JSON)"), ("csv", "Curves (CSV)"))]
        s.param.watch(self._on_results, ["data", "fast", "full", "replica"])
        s.param.watch(self._on_error, "error")
        s.param.watch(self._on_visibility, ["dataset", "model"])
        for kind in JOB_KINDS:
            self._on_job(kind)
        self._on_results()
        self._on_error()
        self._on_visibility()

    def _make_widgets(self) -> dict[str, pn.widgets.Widget]:
        kinds = {"dataset": pn.widgets.Select, "n_points": pn.widgets.IntInput, "series_csv": pn.widgets.TextInput,
                 "series_column": pn.widgets.TextInput, "lags": pn.widgets.IntInput, "model": pn.widgets.Select,
                 "lengthscale": pn.widgets.FloatInput, "wsf": pn.widgets.FloatInput,
                 "max_epochs": pn.widgets.IntInput, "n_init": pn.widgets.IntInput,
                 "full_start": pn.widgets.FloatInput, "full_stop": pn.widgets.FloatInput,
                 "full_step": pn.widgets.FloatInput, "full_replications": pn.widgets.IntInput,
                 "fast_start": pn.widgets.FloatInput, "fast_stop": pn.widgets.FloatInput,
                 "fast_step": pn.widgets.FloatInput, "fast_replications": pn.widgets.IntInput,
                 "log_complexity": pn.widgets.Checkbox, "kappa0": pn.widgets.IntInput, "kappa1": pn.widgets.IntInput,
                 "with_full": pn.widgets.Checkbox, "with_replica": pn.widgets.Checkbox,
                 "replica_points": pn.widgets.IntInput, "auto_run": pn.widgets.Checkbox, "seed": pn.widgets.IntInput}
        return {name: kind.from_param(self.state.param[name], sizing_mode="stretch_width",
                                      css_classes=[f"explorer-fastboot-{name.replace('_', '-')}"])
                for name, kind in kinds.items()}

    def _on_upload(self, event) -> None:
        if event.new:
            self.state.upload_series(self.upload.filename or "series.csv", event.new)

    # --- updates
    def _on_visibility(self, *events) -> None:
        """Show the controls of the chosen data source and model, and nothing else."""
        s, w = self.state, self.widgets
        w["n_points"].visible = s.dataset in ("toy", "teacher")
        for name in ("series_csv", "series_column", "lags"):
            w[name].visible = s.dataset == SERIES
        self.upload.visible = s.dataset == SERIES
        w["lengthscale"].visible = w["with_replica"].visible = w["replica_points"].visible = s.model == "ls-svm"
        self.buttons["run-replica"].visible = s.model == "ls-svm"
        w["wsf"].visible = s.model == "rbfn"
        w["max_epochs"].visible = w["n_init"].visible = s.model == "mlp"

    def _on_job(self, kind: str, *events) -> None:
        job = self.state.jobs[kind]
        self.progress[kind].param.update(value=int(round(100 * job.progress)), active=job.running)
        self.job_message[kind].object = f"{kind}: {job.message}" if job.message else ""
        self.job_error[kind].param.update(object=job.error, visible=bool(job.error))
        if hasattr(self, "buttons"):
            self.buttons["cancel"].disabled = not any(j.running for j in self.state.jobs.values())

    def _on_results(self, *events) -> None:
        self.plots["optimism"].object = optimism_plot(self.state)
        self.plots["generalization"].object = generalization_plot(self.state)
        self.table.object = _summary_display(self.state)
        self.status.object = summary(self.state)

    def _on_error(self, *events) -> None:
        self.error.param.update(object=self.state.error, visible=bool(self.state.error))

    def _export(self, fmt: str) -> io.StringIO:
        return io.StringIO(json_text(self.state) if fmt == "json" else csv_text(self.state))

    def __panel__(self):
        if not self.state.started:
            self.state.refresh()
        w = self.widgets
        controls = pn.Column(
            "### Data", w["dataset"], w["n_points"], self.upload, w["series_csv"], w["series_column"], w["lags"],
            "### Model", w["model"], w["lengthscale"], w["wsf"], w["max_epochs"], w["n_init"],
            "### Grids (Tables 1-2)", w["full_start"], w["full_stop"], w["full_step"], w["full_replications"],
            w["fast_start"], w["fast_stop"], w["fast_step"], w["fast_replications"], w["log_complexity"],
            self.buttons["reset"],
            "### F test, eq. (11)", w["kappa0"], w["kappa1"],
            "### Runs", w["with_full"], w["with_replica"], w["replica_points"], w["auto_run"], w["seed"],
            width=300, css_classes=["explorer-fastboot-controls"])
        jobs = pn.Column(pn.Row(self.buttons["run-full"], self.buttons["run-replica"], self.buttons["cancel"]),
                         *[pn.Row(self.progress[k], self.job_message[k], margin=(0, 5)) for k in JOB_KINDS],
                         sizing_mode="stretch_width")
        figures = pn.Column(self.plots["optimism"], self.plots["generalization"], sizing_mode="stretch_width")
        main = pn.Column(self.error, jobs, *self.job_error.values(), self.status, figures,
                         "#### Summary (models trained include eq. (7)'s; seconds include eq. (7))", self.table,
                         pn.Row(*self.downloads), sizing_mode="stretch_width")
        return pn.Row(controls, main, sizing_mode="stretch_width", css_classes=["explorer-fastboot-tab"])
