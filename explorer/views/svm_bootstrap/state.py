"""The hard-margin SVM bootstrap of [MO03b] in the explorer: the session state.

:class:`SVMState` (param, no widgets) holds the controls and, as output parameters, what the compute
core (``explorer.svm_bootstrap.stages`` and ``experiments``) returns for them: the bootstrap learning curve ε(S) of the replica
theory (eq. 17) and of the Monte-Carlo bootstrap (eq. 6) with the S → ∞ levels (approximate leave-one-out,
eq. 20, and literal leave-one-out), and the internal-field distribution with p(−1|x) at held-out test inputs
(eqs. 18-19 vs MC). Every computation runs as a background :class:`~explorer.views.common.state.jobs.Job` (progress,
cancel) and lands in a result cache shared by the sessions, as in :mod:`explorer.views.gp_bootstrap.state`.
The state computes nothing until :meth:`SVMState.refresh` is first called (the tab calls it when shown).
"""

from __future__ import annotations

from dataclasses import dataclass

import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import param

from explorer import datasets
from explorer.bootstrap import replica
from explorer.progress import Hooks
from explorer.runtime.caches import lru
from explorer.svm_bootstrap import experiments as svm_experiments
from explorer.svm_bootstrap import stages as svm_stages
from explorer.svm_bootstrap.experiments import SVMFieldComparison
from explorer.svm_bootstrap.problem import BROAD_LENGTHSCALE, SVMProblem, svm_problem
from explorer.svm_bootstrap.stages import SVMCurveMC, SVMCurvePoint, SVMTheoryCurve
from explorer.views.common.files.uploads import UPLOAD, Upload, use_uploaded_table
from explorer.views.common.state import controls, errors
from explorer.views.common.state.data_source import DataSourced
from explorer.views.common.state.declarations import control, invalidating
from explorer.views.common.state.jobs import HasJobs, Job, JobRunner, JobSpec, output
from explorer.views.common.state.values import CheckedState
from explorer.views.svm_bootstrap.errors import WORDING

__all__ = ["SVMState", "SVMTheoryCurve", "SVMCurveMC", "SVMCurvePoint", "SVM_DATASETS", "UPLOAD", "MAX_ROWS",
           "SVM_GRID", "JOB_KINDS", "EXPORT_COLUMNS", "S_OVER_N_COLUMN", "SAMPLES_COLUMN", "describe_error"]



#: The shipped two-class datasets of [MO03b] (sonar is a user CSV: upload it).
SVM_DATASETS = ("crabs", "wisconsin", "pima")
#: Most rows of an uploaded CSV ([MO03b]'s largest set, wisconsin, has 683): the kernel matrix and the replica
#: theory's N × N systems are built for every change of L in the session.
MAX_ROWS = 1000
#: The S/N values offered for the learning curve (theory and Monte-Carlo at each).
SVM_GRID = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
_OUTPUTS = ("problem", "test_problem", "theory_curve", "curve_mc", "field")

#: What a change of the data or the kernel makes stale (``invalidates`` of the controls): the problems and every job.
_EVERY_JOB = ("problem", "theory", "curve", "field")

#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError,
                   IndexError)

#: The CSV column of the S/N of a point of the learning curve (a result, not the control of the same name).
S_OVER_N_COLUMN = "s_over_n"
#: The CSV column of the number of Monte-Carlo samples behind a row (not the control of the same name).
SAMPLES_COLUMN = "mc_samples"
#: Columns of the CSV exports.
EXPORT_COLUMNS = {
    "curve": [S_OVER_N_COLUMN, "S", "theory", "converged", "n_iter", "residual", "mc_mean", "mc_se", SAMPLES_COLUMN,
              "loo_approximate", "loo_exact"],
    "field": ["test_input", "y_test", "theory_mean", "theory_var", "theory_p_negative", "mc_mean", "mc_var",
              "mc_p_negative", "mc_p_negative_se", SAMPLES_COLUMN],
}


# ------------------------------------------------------------------------------------ result objects
# SVMTheoryCurve, SVMCurvePoint and SVMCurveMC are the core stages' (explorer.svm_bootstrap.stages), imported
# above and re-exported here and by the package for the tests and notebooks that import them from the view.


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the SVM core or the data."""
    return errors.describe_error(err, WORDING)


# ------------------------------------------------------------------------------------ caches

_PROBLEMS = lru("svm_bootstrap.problems", 16)  # SVMProblem per (dataset, L, holdout)
_THEORY = lru("svm_bootstrap.theory", 32)      # SVMTheoryCurve per (problem, grid)
_CURVES = lru("svm_bootstrap.curves", 32)      # SVMCurveMC per (problem, grid, samples, seed)
_FIELDS = lru("svm_bootstrap.fields", 16, weigh=lambda f: f.mc_fields.nbytes,
              max_weight=200e6)                # SVMFieldComparison per (problem, S/N, samples, seed)


# ------------------------------------------------------------------------------------ computations


def _hooks(job: Job) -> Hooks:
    """The core's hooks for ``job``: its progress, its stop flag and its partial results."""
    return Hooks(progress=job.report, should_stop=job.should_stop, partial=job.partial)


def _theory_curve(problem: SVMProblem, grid: tuple[float, ...], job: Job) -> SVMTheoryCurve:
    """The core's ``theory_curve``: the theory at each S/N in turn (cancellable in between), then eq. (20) and
    literal leave-one-out, as ``explorer svm-curve`` computes them."""
    return svm_stages.theory_curve(problem, grid, hooks=_hooks(job))


def _mc_curve(problem: SVMProblem, grid: tuple[float, ...], mc_samples: int, seed: int, job: Job,
              executor) -> SVMCurveMC:
    """The core's ``mc_curve`` on ``executor`` with the root seed ``seed``: the points equal ``explorer
    svm-curve``'s for the same seed."""
    return svm_stages.mc_curve(problem, grid, mc_samples, rng=seed, executor=executor, hooks=_hooks(job))


def _field(problem: SVMProblem, v: float, mc_samples: int, seed: int, job: Job, executor) -> SVMFieldComparison:
    return svm_experiments.svm_field_comparison(problem, v, mc_samples, rng=seed, executor=executor,
                                                hooks=Hooks(progress=job.report, should_stop=job.should_stop))


@dataclass(frozen=True)
class _JobInputs:
    """What the jobs of one refresh read, taken on the session's thread: the problems (all rows; without the
    held-out test rows) with their cache keys, and the settings of the curves and the field."""

    key: tuple
    problem: SVMProblem
    test_key: tuple
    test_problem: SVMProblem
    grid: tuple[float, ...]
    samples: int
    seed: int
    s_over_n: float
    field_samples: int


#: The jobs of the SVM tab: the theory curve starts by itself, the Monte-Carlo ones when ``auto_mc`` is on.
_JOBS = (
    JobSpec("theory", "theory_curve", _THEORY, key=lambda i: (i.key, i.grid),
            compute=lambda state, i, job: _theory_curve(i.problem, i.grid, job)),
    JobSpec("curve", "curve_mc", _CURVES, key=lambda i: (i.key, i.grid, i.samples, i.seed),
            compute=lambda state, i, job: _mc_curve(i.problem, i.grid, i.samples, i.seed, job, state.executor),
            optional=True),
    JobSpec("field", "field", _FIELDS, key=lambda i: (i.test_key, i.s_over_n, i.field_samples, i.seed),
            compute=lambda state, i, job: _field(i.test_problem, i.s_over_n, i.field_samples, i.seed, job,
                                                 state.executor),
            optional=True),
)
#: The kinds of the jobs, as declared.
JOB_KINDS = tuple(spec.kind for spec in _JOBS)


# ------------------------------------------------------------------------------------ the state


class SVMState(CheckedState, HasJobs, DataSourced):
    """Controls of the SVM bootstrap view and the core results for them, for one session (or notebook).

    Set the controls, call :meth:`refresh` (later changes refresh by themselves), then :meth:`wait`
    for the background jobs. Outputs: ``problem`` (D0 for the learning curve), ``test_problem`` (D0
    without the first ``holdout`` rows, which become test inputs), ``theory_curve``, ``curve_mc``,
    ``field`` and ``error``; ``jobs[kind]`` reports each job (kinds ``JOB_KINDS``).

    Each control declares (:func:`~explorer.views.common.state.declarations.control`) its sidebar group and the jobs its
    change makes stale: ``problem`` (every job: the data and kernel), ``theory`` and ``curve`` (the learning curve's
    theory and Monte-Carlo) and ``field``; ``test_index`` only picks the test input shown. Every control goes into
    the link; the settings JSON leaves out ``auto_mc`` (when the Monte-Carlo runs, not what it computes).
    """

    # --- data
    dataset = param.Selector(default="crabs", objects=list(SVM_DATASETS), label="Dataset",
                             doc="Two-class data of [MO03b]: crabs (species B/O, 200 rows), wisconsin (683), "
                                 "pima (532), or an uploaded CSV (e.g. sonar). Inputs are standardised.",
                             metadata=control("Data", invalidates=_EVERY_JOB))
    target = controls.target("an uploaded CSV holding the two class labels",
                             metadata=control("Data", invalidates=_EVERY_JOB,
                                              applies=lambda s: s.dataset == UPLOAD))
    # --- model
    lengthscale = param.Number(default=BROAD_LENGTHSCALE, bounds=(1e-3, 1e4),
                               softbounds=(0.3, 10.0), step=0.1, label="Lengthscale L",
                               doc="L of the kernel K(x, x') = exp(−|x − x'|²/(2L²)) on standardised inputs. "
                                   "Broad kernels (L ≈ 3) suit the theory; narrow ones (L < 1) degrade it.",
                               metadata=control("Kernel", invalidates=_EVERY_JOB))
    # --- learning curve (Fig. 1 left)
    curve_grid = param.ListSelector(default=[0.5, 1.0, 2.0], objects=list(SVM_GRID), label="S/N values",
                                    doc="Bootstrap sizes S/N of the learning curve: theory and Monte-Carlo at each.",
                                    metadata=control("Learning curve", invalidates=("theory", "curve")))
    curve_mc_samples = controls.mc_samples(200, (20, 5000), "MC samples per S (curve)",
                                           "Monte-Carlo bootstrap samples at each S/N; every sample is one "
                                           "hard-margin SVM training (a quadratic programme).", minimum=1,
                                           metadata=control("Learning curve", invalidates=("curve",)))
    # --- field at a test input (Fig. 1 right)
    s_over_n = param.Number(default=1.0, bounds=(0.05, 10.0), softbounds=(0.1, 4.0), step=0.05,
                            label="S/N (field distribution)",
                            doc="How large each bootstrap sample of the field distribution is: S of the N rows "
                                "drawn with replacement (about N·e^(−S/N) left out). [MO03b] Fig. 1 right: S = N.",
                            metadata=control("Field at a test input", invalidates=("field",)))
    mc_samples = controls.mc_samples(1000, (100, 20_000), "MC samples (field)",
                                     "Monte-Carlo bootstrap samples for the field distribution and p(−1|x).",
                                     metadata=control("Field at a test input", invalidates=("field",)))
    holdout = param.Integer(default=10, bounds=(1, 1000), softbounds=(1, 50), label="Held-out test inputs",
                            doc="The first rows are kept out of D0 as test inputs x ∉ D0 for the field "
                                "distribution; the learning curve uses all rows.",
                            metadata=control("Field at a test input", invalidates=("field",)))
    test_index = param.Integer(default=0, bounds=(0, 999), label="Test input",
                               doc="Which held-out test input (0-based, among the first 'Held-out test inputs' "
                                   "rows) the field distribution shows.",
                               metadata=control("Field at a test input"))
    seed = controls.seed(metadata=control("Monte-Carlo", invalidates=("curve", "field")))
    auto_mc = param.Boolean(default=True, label="Run Monte-Carlo automatically",
                            doc="Start the Monte-Carlo bootstrap whenever the settings change (else press Run).",
                            metadata=control("Monte-Carlo", invalidates=("curve", "field")))

    # --- outputs
    problem = output(SVMProblem, "Problem", "D0 (all rows), kernel and merged sites of the curve.")
    test_problem = output(SVMProblem, "Problem with test inputs", "D0 without the held-out rows, which are its X_test.")
    theory_curve = output(SVMTheoryCurve, "Theory learning curve", "ε(S) of eq. (17) and the S → ∞ levels (so far).")
    curve_mc = output(SVMCurveMC, "Monte-Carlo learning curve", "MC points so far.")
    field = output(SVMFieldComparison, "Field comparison",
                   "theory (eqs. 18-19) and MC fields with p(−1|x) at the test inputs.")

    job_specs = _JOBS
    outputs = _OUTPUTS
    auto_run_parameter = "auto_mc"
    not_run_message = "Monte-Carlo not run yet: press 'Run Monte-Carlo'."
    expected_errors = EXPECTED_ERRORS
    error_wordings = WORDING

    def __init__(self, **params):
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self.param.watch(self._on_change, list(invalidating(self)))

    # ----------------------------------------------------------------------------- public API

    @property
    def index(self) -> int:
        """``test_index`` clipped to the held-out rows."""
        return min(int(self.test_index), int(self.holdout) - 1)

    def run_mc(self) -> None:
        """Start the Monte-Carlo jobs even if ``auto_mc`` is off, or again after a cancel or a failure."""
        self.run()

    def upload_csv(self, filename: str, content: bytes | str, target: str | None = None) -> None:
        """Use an uploaded CSV as the dataset; ``target`` (default: the last column) holds the two labels."""
        use_uploaded_table(self, filename, content, target, "inputs and a class label")

    @property
    def uploaded_file(self) -> Upload | None:
        """The CSV uploaded in this session (name, text, SHA-256), if any."""
        return self.source.upload

    # ----------------------------------------------------------------------------- settings → problems

    def _dataset_key(self) -> tuple:
        return self.source.key(self.target) if self.dataset == UPLOAD else ("shipped", self.dataset)

    def _load_dataset(self) -> datasets.Dataset:
        if self.dataset != UPLOAD:
            return datasets.load(self.dataset)
        if self.target is None:
            raise datasets.DatasetError("choose the column of the CSV file that holds the class labels.")
        data = self.source.table(self.target, task="classification")
        if data.n > MAX_ROWS:
            raise datasets.DatasetError(f"{self.source.upload.filename} has {data.n} rows; the SVM bootstrap here takes at most {MAX_ROWS} "
                                        "(its replica theory solves N × N systems on the server). Upload a random "
                                        f"sample of at most {MAX_ROWS} rows.")
        return data

    def _problem(self, holdout: int) -> tuple[tuple, SVMProblem]:
        key = (self._dataset_key(), float(self.lengthscale), int(holdout))
        return key, _PROBLEMS.get_or_compute(
            key, lambda: svm_problem(self._load_dataset(), float(self.lengthscale), holdout=holdout))

    # ----------------------------------------------------------------------------- refresh

    def _prepare_jobs(self) -> _JobInputs:
        key, problem = self._problem(0)
        test_key, test_problem = self._problem(int(self.holdout))
        self.param.test_index.bounds = (0, int(self.holdout) - 1)
        if self.test_index > self.holdout - 1:
            self._assign("test_index", int(self.holdout) - 1)
        self._assign("problem", problem)
        self._assign("test_problem", test_problem)
        grid = tuple(sorted(float(v) for v in self.curve_grid))
        if not grid:
            raise ValueError("Choose at least one value of S/N for the learning curve.")
        return _JobInputs(key, problem, test_key, test_problem, grid, int(self.curve_mc_samples), int(self.seed),
                          float(self.s_over_n), int(self.mc_samples))
