"""Session state of the model-selection view ([Fis16]): the controls and the core results for them.

:class:`SelectionState` (param, no widgets) holds the controls — dataset, kernel, criteria, the
hyperparameter swept on the curves, the sizes of the random parts — and, as output parameters, what the
compute core (:mod:`explorer.model_selection.stages`) returns for them: every criterion as a function of one
hyperparameter with the others fixed (Fig. 5.3-5.5), the hyperparameters selected by optimising each
criterion (with test errors when test rows exist), and the ranking of functional forms (§5.3). Every
computation runs as a background :class:`~explorer.views.common.state.jobs.Job` (progress, cancel between criteria or
kernels) and lands in a result cache shared by the sessions. The state computes nothing until
:meth:`SelectionState.refresh` is first called (the tab calls it when shown).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import param

from explorer import datasets
from explorer.bootstrap import replica
from explorer.chunks import IN_PROCESS, Executor
from explorer.kernels import KERNEL_NAMES, make_kernel
from explorer.model_selection import asc, stages
from explorer.model_selection.criterion import CRITERIA
from explorer.model_selection.problem import SelectionProblem, selection_problem
from explorer.model_selection.stages import (
    TEACHER_HYPERPARAMETERS,
    SelectionCurves,
    SelectionFits,
    SelectionRanking,
    reference_hyperparameters,
)
from explorer.progress import Hooks
from explorer.runtime.caches import lru
from explorer.views.common.files.uploads import UPLOAD, Upload, use_uploaded_table
from explorer.views.common.state import controls, errors
from explorer.views.common.state.data_source import DataSourced
from explorer.views.common.state.declarations import control, invalidating
from explorer.views.common.state.jobs import HasJobs, Job, JobRunner, JobSpec, output
from explorer.views.common.state.values import CheckedState
from explorer.views.model_selection.errors import WORDING

__all__ = [
    "SelectionState", "SelectionJobs", "SelectionProblem", "SelectionCurves", "SelectionFits", "SelectionRanking",
    "SELECTION_DATASETS", "UPLOAD", "JOB_KINDS", "CURVE_PARAMETERS", "TEACHER_HYPERPARAMETERS", "EXPECTED_ERRORS",
    "describe_error", "reference_hyperparameters", "job_hooks", "asc_partitions", "asc_entropy", "lbfgs_restarts",
    "lbfgs_iterations",
]


#: Shipped or generated regression data: the GP teacher of [Fis16] (1-D), the toy function, Boston housing.
SELECTION_DATASETS = ("teacher", "toy", "boston")
#: ``dataset`` value of a CSV uploaded in the page.
#: Every hyperparameter a curve can sweep (the kernel decides which of them exist).
CURVE_PARAMETERS = ("lengthscale", "signal_std", "noise_std", "alpha", "period")
_OUTPUTS = ("problem", "curves", "optima", "ranking")
#: What the controls invalidate (their declarations' ``invalidates``): the problem (the data as split and scaled)
#: and the jobs, by their kinds; a job's key is the problem's and the values of the controls that invalidate it.
_PROBLEM_STAGE = "problem"
_CURVES_JOB, _OPTIMA_JOB, _RANKING_JOB = "curves", "optima", "ranking"
#: The criteria's options and the seed enter every job.
_EVERY_JOB = (_CURVES_JOB, _OPTIMA_JOB, _RANKING_JOB)

#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError,
                   IndexError)

# ------------------------------------------------------------------------------------ result objects
# SelectionCurves, SelectionFits, SelectionRanking, TEACHER_HYPERPARAMETERS and reference_hyperparameters are the
# core stages' (explorer.model_selection.stages), imported above and re-exported for the code that imports them here.


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the selection core or the data."""
    return errors.describe_error(err, WORDING)


# ------------------------------------------------------------------------------------ caches

_PROBLEMS = lru("model_selection.problems", 16)  # SelectionProblem per data settings
# SelectionCurves per (problem, kernel, parameter, grid, criteria, options, seed)
_CURVES = lru("model_selection.curves", 32)
# SelectionFits per (problem, kernel, criteria, options, restarts, seed)
_OPTIMA = lru("model_selection.optima", 32)
# SelectionRanking per (problem, kernels, select_by, criteria, options, restarts, seed)
_RANKINGS = lru("model_selection.rankings", 16)


# ------------------------------------------------------------------------------------ computations


def _curve_parameters(kernel_name: str) -> list[str]:
    names = make_kernel(kernel_name, 1).hyperparameter_names
    return [("signal_std" if n == "signal_var" else n) for n in names] + ["noise_std"]


def job_hooks(job: Job, partial: Callable[[object], None] | None = None) -> Hooks:
    """The core's hooks for ``job``: its progress, its stop flag, ``partial`` for partial results."""
    return Hooks(progress=job.report, should_stop=job.should_stop, partial=partial)


def _curves(problem, kernel_name, parameter, points, decades, criteria, options, seed, job: Job,
            executor: Executor = IN_PROCESS) -> SelectionCurves:
    """The core's ``criterion_curves``: each criterion in turn (cancellable in between), one task on ``executor``
    each, ``job.partial`` after each."""
    return stages.criterion_curves(problem, kernel_name, parameter, criteria, points=points, decades=decades,
                                   options=options, rng=seed, executor=executor, hooks=job_hooks(job, job.partial))


def _optima(problem, kernel_name, criteria, options, restarts, max_iter, seed, job: Job,
            executor: Executor = IN_PROCESS) -> SelectionFits:
    """The core's ``selection_fits`` (as ``explorer select``), each criterion's result published."""
    return stages.selection_fits(problem, kernel_name, criteria, n_restarts=restarts, max_iter=max_iter,
                                 options=options, rng=seed, executor=executor, hooks=job_hooks(job, job.partial))


def _ranking(problem, kernels, select_by, rank_by, options, restarts, max_iter, seed, job: Job,
             executor: Executor = IN_PROCESS) -> SelectionRanking:
    """The core's ``functional_form_ranking`` (as ``explorer select --rank``), the rows published (without ranks)
    after each kernel."""
    return stages.functional_form_ranking(problem, kernels, select_by, rank_by, n_restarts=restarts,
                                          max_iter=max_iter, options=options, rng=seed, executor=executor,
                                          hooks=job_hooks(job, job.partial))


@dataclass(frozen=True)
class _JobInputs:
    """What the jobs of one refresh read, taken on the session's thread (``options`` are the criteria's options,
    ``keys`` each job's key by its kind)."""

    keys: Mapping[str, tuple]
    problem: SelectionProblem
    kernel: str
    parameter: str
    points: int
    decades: float
    criteria: tuple[str, ...]
    options: dict
    restarts: int
    max_iter: int
    seed: int
    kernels: tuple[str, ...]
    select_by: str


def _key_of(kind: str) -> Callable[[_JobInputs], tuple]:
    """The key of the job ``kind`` in the inputs of a refresh."""
    return lambda inputs: inputs.keys[kind]


#: The jobs of the Explore sub-panel: the curves start by themselves, the optima and the ranking when ``auto_run``
#: is on.
_JOBS = (
    JobSpec(_CURVES_JOB, "curves", _CURVES, key=_key_of(_CURVES_JOB),
            compute=lambda state, i, job: _curves(i.problem, i.kernel, i.parameter, i.points, i.decades, i.criteria,
                                                  i.options, i.seed, job, state.executor)),
    JobSpec(_OPTIMA_JOB, "optima", _OPTIMA, key=_key_of(_OPTIMA_JOB),
            compute=lambda state, i, job: _optima(i.problem, i.kernel, i.criteria, i.options, i.restarts,
                                                  i.max_iter, i.seed, job, state.executor),
            optional=True),
    JobSpec(_RANKING_JOB, "ranking", _RANKINGS, key=_key_of(_RANKING_JOB),
            compute=lambda state, i, job: _ranking(i.problem, i.kernels, i.select_by, i.criteria, i.options,
                                                   i.restarts, i.max_iter, i.seed, job, state.executor),
            optional=True),
)
#: The kinds of the jobs, as declared.
JOB_KINDS = tuple(spec.kind for spec in _JOBS)


# ------------------------------------------------------------------------------------ controls of both panels


def asc_partitions(softbounds: tuple[int, int], doc: str, metadata: dict) -> param.Integer:
    """The ASC partitions J of a [Fis16] panel (8 by default, 1 to 1000); ``metadata``: its declaration."""
    return param.Integer(default=8, bounds=(1, 1000), softbounds=softbounds, label="ASC: partitions J", doc=doc,
                         metadata=metadata)


def asc_entropy(doc: str, metadata: dict) -> param.Selector:
    """The entropy term h(τ) of ASC, eq. (4.2), of a [Fis16] panel ("zero" by default)."""
    return param.Selector(default="zero", objects=list(asc.ENTROPIES), label="ASC: h(τ)", doc=doc,
                          metadata=metadata)


def lbfgs_restarts(default: int, doc: str, metadata: dict) -> param.Integer:
    """The L-BFGS restarts of a [Fis16] panel (1 to 200)."""
    return param.Integer(default=default, bounds=(1, 200), softbounds=(1, 32), label="Restarts", doc=doc,
                         metadata=metadata)


def lbfgs_iterations(doc: str, metadata: dict) -> param.Integer:
    """The L-BFGS iterations per run of a [Fis16] panel (16 by default, the thesis' count)."""
    return param.Integer(default=16, bounds=(1, 1000), softbounds=(4, 100), label="Iterations per run", doc=doc,
                         metadata=metadata)


# ------------------------------------------------------------------------------------ the state


class SelectionJobs(HasJobs):
    """The jobs' public API (:class:`~explorer.views.common.state.jobs.HasJobs`) with the model-selection error vocabulary
    (:func:`describe_error`); the Explore and the Experiments states share it."""

    expected_errors = EXPECTED_ERRORS
    error_wordings = WORDING


#: The sidebar's headings, in order; each control's declaration names its own.
_DATA, _MODEL, _CURVES_GROUP, _RANDOM, _OPTIMISATION = ("Data", "Model and criteria", "Curves", "Random parts",
                                                        "Optimisation and ranking")


class SelectionState(CheckedState, SelectionJobs, DataSourced):
    """Controls of the model-selection view and the core results for them, for one session (or notebook).

    Set the controls, call :meth:`refresh` (later changes refresh by themselves), then :meth:`wait` for the
    background jobs. Outputs: ``problem`` (training and test rows), ``curves``, ``optima``, ``ranking`` and
    ``error``; ``jobs[kind]`` reports each job (kinds ``JOB_KINDS``).
    """

    # --- data
    dataset = param.Selector(default="teacher", objects=list(SELECTION_DATASETS), label="Dataset",
                             doc="teacher: 1-D draws from the GP teacher of [Fis16] (squared exponential, ℓ = 1, "
                                 "σ_f = 1, σ_n = 0.1, the thesis setting); toy: sin(5x) + sin(15x) + sin(25x) "
                                 "plus noise; boston: Boston housing (13 inputs); or an uploaded CSV.",
                             metadata=control(_DATA, invalidates=(_PROBLEM_STAGE,)))
    target = controls.target("an uploaded CSV holding the real-valued target",
                             metadata=control(_DATA, invalidates=(_PROBLEM_STAGE,),
                                              applies=lambda s: s.dataset == UPLOAD))
    n_points = param.Integer(default=64, bounds=(8, 2000), softbounds=(16, 500), label="Training cases N",
                             doc="Training cases: drawn from the teacher (the thesis uses N = 64), or a random "
                                 "subset (by the seed) of the rows of the other datasets.",
                             metadata=control(_DATA, invalidates=(_PROBLEM_STAGE,)))
    n_test = param.Integer(default=256, bounds=(0, 20_000), softbounds=(0, 2048), label="Test cases",
                           doc="Test cases for SMSE (eq. 5.1) and MSLL of each selected model: further teacher "
                               "draws, or the rows not used for training (0: no test errors).",
                           metadata=control(_DATA, invalidates=(_PROBLEM_STAGE,)))
    standardize = controls.standardize(
        "(by the training rows, as `explorer select --standardize`)",
        "Recommended for boston and most CSVs; the teacher is already on that scale.",
        metadata=control(_DATA, invalidates=(_PROBLEM_STAGE,)))
    # --- model
    kernel = param.Selector(default="se", objects=list(KERNEL_NAMES), label="Covariance function",
                            doc="Kernel whose hyperparameters the criteria select: squared exponential (se), "
                                "rational quadratic (rq), exponential, Matérn 3/2 and 5/2, periodic.",
                            metadata=control(_MODEL, invalidates=(_CURVES_JOB, _OPTIMA_JOB)))
    criteria = param.ListSelector(default=["evidence", "loo", "kfold", "asc-beta-noise", "bootstrap632"],
                                  objects=list(CRITERIA), label="Criteria",
                                  doc="Model-selection criteria (lower is better): negative log evidence, LOO-CV, "
                                      "K-fold CV, the three ASC variants (−I) and the bootstrap .632 error.",
                                  metadata=control(_MODEL, invalidates=_EVERY_JOB))
    # --- curves (Fig. 5.3-5.5)
    parameter = param.Selector(default="lengthscale", objects=list(CURVE_PARAMETERS), label="Hyperparameter swept",
                               doc="The curves vary this hyperparameter (standard deviations for signal and noise) "
                                   "with the others fixed: the teacher's values on teacher data, else a "
                                   "data-scaled start.",
                               metadata=control(_CURVES_GROUP, invalidates=(_CURVES_JOB,)))
    curve_points = param.Integer(default=15, bounds=(3, 200), softbounds=(5, 60), label="Curve points",
                                 doc="Grid points of each curve (log-spaced).",
                                 metadata=control(_CURVES_GROUP, invalidates=(_CURVES_JOB,)))
    curve_decades = param.Number(default=1.0, bounds=(0.1, 4.0), softbounds=(0.3, 2.0), step=0.1,
                                 label="Curve range (decades each side)",
                                 doc="The grid spans the fixed value × 10^(± this).",
                                 metadata=control(_CURVES_GROUP, invalidates=(_CURVES_JOB,)))
    # --- random parts of the criteria
    n_folds = param.Integer(default=5, bounds=(2, 1000), softbounds=(2, 20), label="K-fold: K",
                            doc="Folds K of K-fold CV (capped at N; K = N is leave-one-out).",
                            metadata=control(_RANDOM, invalidates=_EVERY_JOB))
    n_partitions = asc_partitions((2, 64), "Random partitions J of ASC (Algorithm 2; the thesis uses 32).",
                                  control(_RANDOM, invalidates=_EVERY_JOB))
    n_objects = param.Integer(default=8, bounds=(1, 1000), softbounds=(2, 32), label="ASC: objects M",
                              doc="Objects M per subset of an ASC partition (L = 2 subsets; thesis: 4 or 8).",
                              metadata=control(_RANDOM, invalidates=_EVERY_JOB))
    entropy = asc_entropy("Entropy term of ASC (eq. 4.2): zero, or the prior entropy.",
                          control(_RANDOM, invalidates=_EVERY_JOB))
    # --- optimisation
    n_restarts = lbfgs_restarts(3, "L-BFGS runs per criterion from Cauchy-distributed starts (the thesis uses 16).",
                                control(_OPTIMISATION, invalidates=(_OPTIMA_JOB, _RANKING_JOB)))
    max_iter = lbfgs_iterations("Maximum L-BFGS iterations per run (the thesis uses 16).",
                                control(_OPTIMISATION, invalidates=(_OPTIMA_JOB, _RANKING_JOB)))
    rank_kernels = param.ListSelector(default=["se", "rq", "exponential", "periodic"], objects=list(KERNEL_NAMES),
                                      label="Functional forms ranked",
                                      doc="Covariance functions compared (§5.3): each is optimised by the "
                                          "'select by' criterion, then ranked by every chosen criterion.",
                                      metadata=control(_OPTIMISATION, invalidates=(_RANKING_JOB,)))
    select_by = param.Selector(default="loo", objects=list(CRITERIA), label="Select by",
                               doc="Criterion that optimises the hyperparameters of each functional form.",
                               metadata=control(_OPTIMISATION, invalidates=(_RANKING_JOB,)))
    seed = controls.seed("Seed of the teacher draw / row subset, the folds and partitions and the restarts; "
                         "same settings and seed, same numbers.",
                         metadata=control(_OPTIMISATION, invalidates=(_PROBLEM_STAGE, *_EVERY_JOB)))
    auto_run = param.Boolean(default=True, label="Run automatically",
                             doc="Start the optimisation and the ranking whenever the settings change (else press "
                                 "Run); the curves always run.",
                             metadata=control(_OPTIMISATION))  # how the jobs start, not what they compute

    # --- view
    subpanel = param.Selector(default="explore", objects=["explore", "experiments"], label="Sub-panel",
                              doc="The sub-panel shown: Explore (these controls) or Experiments (the thesis runs).",
                              metadata=control(None))  # not in the sidebar; a link names it

    # --- outputs
    problem = output(SelectionProblem, "Problem", "training and test rows as used.")
    curves = output(SelectionCurves, "Criterion curves", "the criteria along the swept hyperparameter.")
    optima = output(SelectionFits, "Selected hyperparameters", "the optimum of each criterion.")
    ranking = output(SelectionRanking, "Ranking", "functional forms ranked by each criterion.")

    job_specs = _JOBS
    outputs = _OUTPUTS
    auto_run_parameter = "auto_run"

    def __init__(self, **params):
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self.param.watch(self._on_change, [*invalidating(self), self.auto_run_parameter])

    # ----------------------------------------------------------------------------- public API

    def upload_csv(self, filename: str, content: bytes | str, target: str | None = None) -> None:
        """Use an uploaded CSV as the dataset; ``target`` (default: the last column) is the regression target.

        The message of an earlier upload goes with it: a file that cannot be read says why in ``error``, one
        that can is computed (after :meth:`refresh`) and ``error`` says what its settings lack, if anything."""
        self.error = ""
        use_uploaded_table(self, filename, content, target, "inputs and a target")

    def _on_change(self, *events) -> None:
        if not self.started:
            self.error = ""  # before the first refresh, the only error is an upload's: its cause is gone
        super()._on_change(*events)

    @property
    def uploaded_file(self) -> Upload | None:
        """The CSV uploaded in this session (name, text, SHA-256), if any."""
        return self.source.upload

    # ----------------------------------------------------------------------------- settings → problem

    def _key_value(self, name: str):
        """The value of the control ``name`` as a key holds it: a list as a tuple in the order of its choices (the
        same criteria in another order are the same computation)."""
        value = getattr(self, name)
        return tuple(o for o in self.param[name].objects if o in value) if isinstance(value, list) else value

    def _key(self, stage: str, **values) -> tuple:
        """The values (``values`` where given, else :meth:`_key_value`) of the controls that invalidate
        ``stage``, in the order of their declarations."""
        return tuple(values[n] if n in values else self._key_value(n) for n in invalidating(self, stage))

    def _data_key(self) -> tuple:
        """The problem's key: the uploaded file's (its hash and target) or the shipped dataset's, then the
        controls that invalidate the problem."""
        source = self.source.key(self.target) if self.dataset == UPLOAD else ("shipped",)
        return source + self._key(_PROBLEM_STAGE)

    def _load(self) -> datasets.Dataset:
        if self.dataset == "teacher":
            return datasets.load("teacher", n=int(self.n_points) + int(self.n_test), rng=int(self.seed))
        if self.dataset != UPLOAD:
            return datasets.load(self.dataset)
        if self.target is None:
            raise datasets.DatasetError("choose the column of the CSV file that holds the target.")
        return self.source.table(self.target)

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

    def _prepare_jobs(self) -> _JobInputs:
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
        keys = {kind: (data_key, *self._key(kind, parameter=parameter)) for kind in JOB_KINDS}
        return _JobInputs(keys, problem, self.kernel, parameter, int(self.curve_points), float(self.curve_decades),
                          criteria, self._options(), int(self.n_restarts), int(self.max_iter), int(self.seed),
                          kernels, self.select_by)
