"""Session state of the Resampling Explorer: the controls, the core results for them, background jobs.

Nothing here builds a widget or a plot (STYLE.md, UI layer). :class:`GPBootstrapState` holds the user's
settings as parameters and, as output parameters, what the compute core returns for them. Fast theory
(one ADATAP solve, ~50-100 ms at N ≈ 500) runs when a setting changes; the theory learning curve and
every Monte-Carlo bootstrap run on worker threads, report progress, can be cancelled, publish partial
results and land in caches shared by all sessions of the server (same settings → instant).

Only the work the active tab needs is done (``tab``); the other tabs catch up when they are opened.
The jobs run on the machinery every tab shares (:class:`~explorer.views.common.jobs.BackgroundJobs`): worker
threads hand their updates to the session's event loop in order; a caller may hold the jobs back until it is
ready for them (:meth:`~explorer.views.common.jobs.BackgroundJobs.defer_jobs`).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import param

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.chunks import item_generator, root_seed
from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.gp_bootstrap import evidence_lowrank, experiments, paths, problems, stages
from explorer.gp_bootstrap.l1 import PAPER_BIN_WIDTH, scaled_bin_width
from explorer.gp_bootstrap.linear_response import LinearResponseMoments
from explorer.gp_bootstrap.montecarlo_lowrank import SAMPLE_SECONDS_PER_NM2
from explorer.gp_bootstrap.stages import (
    VG_MF_LOSSES,
    CurveMC,
    CurvePoint,
    HoldoutTheory,
    LinearResponseCurve,
    TheoryCurve,
    theory_error,
)
from explorer.progress import Hooks
from explorer.views.common import controls, errors
from explorer.views.common.caches import lru
from explorer.views.common.data_source import DataSourced
from explorer.views.common.jobs import BackgroundJobs, Job, JobSpec, output
from explorer.views.common.uploads import UPLOAD, Upload, csv_columns, read_upload
from explorer.views.common.values import CheckedState

__all__ = [
    "GPBootstrapState", "TheoryCurve", "METHODS", "APPROXIMATIONS", "IJ_LOSSES", "VG_MF_LOSSES", "CurvePoint", "CurveMC", "HoldoutTheory",
    "REGRESSION_DATASETS", "UPLOAD", "CSV_PREFIX", "KERNELS", "LOSSES", "GP_TABS", "MC_KINDS",
    "MC_GRID", "THEORY_GRID", "BIN_WIDTH", "URL_PARAMETERS", "describe_error", "theory_error",
    "MAX_ROWS", "MAX_COLUMNS", "MAX_MC_VALUES", "SUBSAMPLE_SEED", "EVIDENCE_ROWS", "HYPERPARAMETERS",
    "LOW_RANK_ROWS", "LOW_RANK_GRID", "RANK_BOUNDS", "FITTED_DATASETS",
]

#: The shipped or generated regression datasets offered in the app (the others are classification sets).
REGRESSION_DATASETS = ("boston", "toy", "teacher", "diamonds")
#: Shipped sets whose kernel starts from maximum evidence, as a CSV's does (the command line does the same): diamonds
#: has no paper preset.
FITTED_DATASETS = ("diamonds",)
#: ``dataset`` value of a CSV uploaded in the page; files of the data directory are ``CSV_PREFIX + name``.
CSV_PREFIX = "file: "
#: ``paper`` is seed 000's preset (RBF with l² = 73.54 on the sd-scaled inputs, eq. (1) of §5).
KERNELS = ("paper", *kernels.KERNEL_NAMES)
LOSSES = ("square", "eps-insensitive")
GP_TABS = ("curve", "distribution", "l1", "holdout")
#: Jobs that run the Monte-Carlo bootstrap (cancellable); "theory" is the ADATAP learning curve.
MC_KINDS = ("curve", "distribution", "holdout")
#: Theory curves of the learning-curve tab (``TheoryCurve`` fields) and their labels; VG and MF: square loss only.
METHODS = {"theory": "ADATAP", "theory_approx": "approx. ADATAP", "theory_vg": "VG", "theory_mf": "MF"}
#: The no-refit approximations beside them (``LinearResponseCurve`` fields, docs/linear_response.md) and their
#: labels: the infinitesimal jackknife ε_IJ(S) (square loss only) and the leave-one-out limit at noise σ²N/S.
APPROXIMATIONS = {"ij": "IJ", "loo_limit": "LOO limit"}
#: Losses for which the infinitesimal jackknife defines ε(S) (``stages.linear_response_curve``).
IJ_LOSSES = ("square",)
#: S/N of the Monte-Carlo points of the learning curve, and the finer grid of the theory curve.
MC_GRID = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
THEORY_GRID = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
#: Bin width of boston's histograms (Fig. 5); other targets get 0.2 · sd(y)/sd(boston's target) (``scaled_bin_width``).
BIN_WIDTH = PAPER_BIN_WIDTH
#: Most rows of a CSV (uploaded or of the data directory) the pages take: every change of a control solves the
#: ADATAP theory (an N × N fixed point, ~8 N² bytes per matrix) on the server's event loop. Measured on the 2-core
#: machine: N = 1000 rows, 13 inputs: kernel matrix 0.06 s, one ADATAP solve 0.1-0.24 s (5-9 iterations, peak
#: 33 MB); N = 1500: 0.37-0.46 s, N = 2000: 0.42 s and 132 MB. A larger file is refused before any work, with the
#: offer of a random subsample of MAX_ROWS rows (``subsample``).
MAX_ROWS = 1000
#: Most rows of the low-rank mode, which takes data of more than MAX_ROWS rows from the server (diamonds, a CSV of the
#: data directory; an upload keeps MAX_ROWS): K ≈ ΦΦᵀ of rank m (``rank``), O(N m²) time and O(N m) memory, never an
#: N × N matrix. The theory holds about three N × m arrays: 3 × 8 × 60,000 × 512 bytes = 0.74 GB at the largest rank,
#: for one session of a server the class shares (diamonds: 53,940 rows; the command line takes 200,000).
LOW_RANK_ROWS = 60_000
#: Limits of reading a CSV of the server's data folder (an upload keeps ``uploads.MAX_UPLOAD_*``): the server's own files
#: may hold LOW_RANK_ROWS rows of up to 33 columns; parsed once per file on the event loop (~1 s at 2,000,000
#: values), then shared by every session.
DATA_DIR_LIMITS = {"max_bytes": 40_000_000, "max_rows": LOW_RANK_ROWS, "max_values": 2_000_000}
#: Bounds of the rank m of the low-rank mode (``rank``): below 16 features the kernel is too coarse to compare
#: anything; one ADATAP solve costs ~N m² (diamonds, 2 cores: 6.6 s at m = 256, about 4 × that at 512).
RANK_BOUNDS = (16, 512)
#: S/N of the theory and Monte-Carlo curves of the low-rank mode: five solves of ~7 s each on diamonds at m = 256
#: (THEORY_GRID would take 15), and Monte-Carlo at each of them.
LOW_RANK_GRID = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Most input columns of a CSV: the kernel matrix costs N² × columns (0.1 s at MAX_ROWS rows and 100 columns).
MAX_COLUMNS = 100
#: Most Monte-Carlo samples × training inputs of the distribution and test-input jobs: each keeps two (B, N) arrays
#: (bootstrap occupations and predictions, 8 bytes a number), so at most 2 × 8 × 16e6 bytes = 256 MB, the
#: result caches' budget (boston: up to 31,620 samples; 1,000 rows: 16,000).
MAX_MC_VALUES = 16_000_000
#: Seed of the random subsample of a CSV with more than MAX_ROWS rows (the same rows in every session and link).
SUBSAMPLE_SEED = gp_evidence.SUBSAMPLE_SEED
#: Most rows on which the evidence is maximised (a random subsample, seed SUBSAMPLE_SEED, when there are more):
#: each evaluation is a Cholesky factorisation and an inverse of an N × N matrix, ~60-80 of them in all
#: (~1 s at 300 rows on the 2-core machine, ~4 s at 500, ~30 s at 1000).
EVIDENCE_ROWS = gp_evidence.EVIDENCE_ROWS
#: Where the hyperparameters of the current settings come from (``hyperparameter_source``).
HYPERPARAMETERS = ("set", "evidence", "evidence pending")
#: Seed of the generated datasets (toy, teacher), so that a link always shows the same data.
DATA_SEED = datasets.GENERATED_DATA_SEED
#: Controls that the page URL carries (``pn.state.location.sync``).
URL_PARAMETERS = (
    "dataset", "target", "subsample", "standardize", "ard", "rank", "kernel", "l2", "lengthscale", "signal_var", "alpha", "period",
    "noise_var",
    "s_over_n", "loss", "eps", "beta", "curve_mc_samples", "mc_samples", "seed", "auto_mc", "holdout",
    "input_index", "show_components", "tab",
)
#: Controls that change what has to be computed (everything but the pure view options).
_COMPUTE_PARAMETERS = tuple(p for p in URL_PARAMETERS if p not in ("input_index", "show_components"))
_OUTPUTS = ("problem", "solution", "theory_curve", "linear_response", "curve_mc", "distribution", "holdout_theory",
            "holdout_ij", "holdout_mc")
#: The controls that hold the kernel's and the noise's values: set by hand, a link or a preset, they replace the
#: hyperparameters chosen by maximum evidence.
_HYPER_PARAMETERS = ("kernel", "l2", "lengthscale", "signal_var", "alpha", "period", "noise_var")

#: Errors a user can cause with the controls; they become a message in the page, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError,
                   OSError, IndexError)


# ------------------------------------------------------------------------------------ result objects
# TheoryCurve, CurvePoint, CurveMC and HoldoutTheory are the core stages' (explorer.gp_bootstrap.stages), imported
# above and re-exported here for the tests and notebooks that import them from this module.


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the compute core or the data."""
    return errors.describe_error(err, "gp")


# ------------------------------------------------------------------------------------ caches


_PROBLEMS = lru("gp_bootstrap.problems", 16)      # RegressionProblem per (dataset, kernel settings, noise, holdout)
_SOLUTIONS = lru("gp_bootstrap.solutions", 128)   # ReplicaSolution per (problem, S/N)
_THEORY_SOLUTIONS = lru("gp_bootstrap.theory_solutions", 16)  # stages.ReplicaCurve along THEORY_GRID per problem
_VG_MF = lru("gp_bootstrap.vg_mf", 16)          # stages.VGMFCurve along THEORY_GRID per problem (square loss)
_THEORY = lru("gp_bootstrap.theory", 32)          # TheoryCurve per (problem, loss)
_LINEAR_RESPONSE = lru("gp_bootstrap.linear_response", 32)  # LinearResponseCurve per (problem, loss)
_HOLDOUT_THEORY = lru("gp_bootstrap.holdout_theory", 64)  # HoldoutTheory per (problem, S/N)
_HOLDOUT_IJ = lru("gp_bootstrap.holdout_ij", 64)  # LinearResponseMoments per (problem, S/N)
_CURVES = lru("gp_bootstrap.curves", 32)          # CurveMC per (problem, loss, grid, samples, seed)
_DISTRIBUTIONS = lru("gp_bootstrap.distributions", 8, weigh=lambda d: d.samples.nbytes,
                     max_weight=400e6)            # (B, N) samples each
_HOLDOUTS = lru("gp_bootstrap.holdouts", 16)      # HoldoutComparison per (problem, S/N, samples, seed)
_EVIDENCE = lru("gp_bootstrap.evidence", 32)      # EvidenceFit (LowRankEvidenceFit) per data key
_DATA = lru("gp_bootstrap.data", 4)               # Dataset per data key (read once: diamonds takes 0.45 s)


# ------------------------------------------------------------------------------------ computations


def _theory_curve(problem, problem_key, loss: str, loss_params: dict, job: Job | None = None) -> TheoryCurve:
    """The core's stages along THEORY_GRID: ADATAP and approximate ADATAP (``stages.replica_curve``, cached per
    problem), then VG and MF for the square loss (``stages.vg_mf_curve``), joined by ``stages.theory_curve``.

    VG/MF about double the cost (boston: ~0.85 → ~1.9 s CPU), so a ``job`` first gets the curve with NaN in
    their place (``job.partial``): ADATAP shows as soon as before, VG and MF follow.
    """
    report = job.report if job is not None else (lambda fraction, message: None)
    if paths.is_low_rank(problem):
        solutions = _THEORY_SOLUTIONS.get_or_compute(
            problem_key, lambda: _low_rank_replica_curve(problem, loss, loss_params, job))
        return stages.theory_curve(problem, solutions, loss=loss, loss_params=loss_params)
    report(0.0, "ADATAP and approximate ADATAP")
    solutions = _THEORY_SOLUTIONS.get_or_compute(problem_key, lambda: stages.replica_curve(problem, THEORY_GRID))
    curve = stages.theory_curve(problem, solutions, loss=loss, loss_params=loss_params)
    if loss not in VG_MF_LOSSES:
        return curve
    vg_mf = _VG_MF.get(problem_key)
    if vg_mf is None and job is not None:
        nan = np.full(solutions.s_over_n.size, np.nan)
        job.partial(replace(curve, theory_vg=nan, theory_mf=nan))
        report(0.5, "variational Gaussian and mean field")
    vg_mf = vg_mf or _VG_MF.get_or_compute(problem_key, lambda: stages.vg_mf_curve(problem, THEORY_GRID))
    return stages.theory_curve(problem, solutions, loss=loss, loss_params=loss_params, vg_mf=vg_mf)


def _low_rank_replica_curve(problem, loss: str, loss_params: dict, job: Job | None) -> stages.ReplicaCurve:
    """ADATAP (warm-started in ascending S, as ``stages.replica_curve``) and the approximate ADATAP along
    LOW_RANK_GRID, one S/N at a time: each takes seconds at N = 53,940, so ``job`` reports which and shows the curve
    so far (``job.partial``), and a superseded job stops within one ADATAP iteration."""
    hooks = Hooks(should_stop=job.should_stop) if job is not None else None
    exact: list[replica.ReplicaSolution] = []
    approx: list[replica.ReplicaSolution] = []
    grid = np.array(LOW_RANK_GRID)
    for j, v in enumerate(grid):
        if job is not None:
            job.report(j / grid.size, f"ADATAP at S/N = {v:g} ({j + 1} of {grid.size}; low-rank kernel, "
                                      f"N = {problem.n:,}, m = {problem.features.rank})")
        exact.append(paths.solve(problem, v * problem.n, init=exact[-1] if exact else None, hooks=hooks))
        approx.append(paths.approximate(problem, v * problem.n))
        if job is not None and j + 1 < grid.size:
            done = stages.ReplicaCurve(grid[:j + 1], tuple(exact), tuple(approx))
            job.partial(stages.theory_curve(problem, done, loss=loss, loss_params=loss_params))
    return stages.ReplicaCurve(grid, tuple(exact), tuple(approx))


def theory_grid(problem) -> tuple[float, ...]:
    """S/N of the theory curve of ``problem``: THEORY_GRID, or LOW_RANK_GRID on the low-rank path."""
    return LOW_RANK_GRID if paths.is_low_rank(problem) else THEORY_GRID


def mc_grid(problem) -> tuple[float, ...]:
    """S/N of the Monte-Carlo points of ``problem``'s learning curve: MC_GRID, or LOW_RANK_GRID on the low-rank
    path."""
    return LOW_RANK_GRID if paths.is_low_rank(problem) else MC_GRID


def mc_seconds(problem, samples: int) -> float:
    """Estimated CPU seconds of ``samples`` Monte-Carlo refits of ``problem`` on the low-rank path (each a weighted
    m × m solve after forming ΦᵀWΦ, ``montecarlo_lowrank.SAMPLE_SECONDS_PER_NM2``)."""
    return samples * SAMPLE_SECONDS_PER_NM2 * problem.n * problem.features.rank ** 2


def _mc_curve(problem, grid, mc_samples: int, loss: str, loss_params: dict, seed: int, job: Job,
              executor) -> CurveMC:
    """The core's ``stages.mc_curve`` (all S at once on ``executor``); ``job.partial`` gets the curve whenever one
    more S is complete. The CLI's ``learning-curve`` calls the same stage with the same root seed."""
    return stages.mc_curve(problem, grid, mc_samples, loss=loss, loss_params=loss_params, rng=seed,
                           executor=executor,
                           hooks=Hooks(progress=job.report, should_stop=job.should_stop, partial=job.partial))


#: The jobs each tab needs (the others' jobs are left as they are: a running one goes on, its result is cached).
_TAB_JOBS = {"curve": ("solution", "theory", "linear_response", "curve"), "distribution": ("solution", "distribution"),
             "l1": ("solution", "distribution"), "holdout": ("holdout_theory", "holdout_ij", "holdout")}


@dataclass(frozen=True)
class _JobInputs:
    """What the jobs of one refresh read, taken on the session's thread: the active tab's problem with its key,
    S/N, the loss, the sample counts and the seed; or, while the hyperparameters of CSV data are chosen by maximum
    evidence, only ``evidence`` (the data's key and the data)."""

    tab: str
    key: tuple | None = None
    problem: problems.RegressionProblem | None = None
    s_over_n: float = 1.0
    loss: str = "square"
    loss_params: dict = field(default_factory=dict)
    loss_key: tuple = ()
    curve_samples: int = 0
    mc_samples: int = 0
    seed: int = 0
    evidence: tuple | None = None
    build: tuple | None = None

    @property
    def low_rank(self) -> bool:
        """Whether the problem runs the low-rank path (its theory and Monte-Carlo take seconds to minutes)."""
        return self.problem is not None and paths.is_low_rank(self.problem)

    def wants(self, kind: str) -> bool:
        """Whether the job ``kind`` is needed now."""
        if kind == "evidence":
            return self.evidence is not None
        if kind == "problem":
            return self.build is not None
        return self.problem is not None and kind in _TAB_JOBS[self.tab]


def _needed(kind: str, key):
    """``key`` of the job ``kind`` when the inputs want it, else None (left as it is)."""
    return lambda i: key(i) if i.wants(kind) else None


def _solve(i: _JobInputs, job: Job) -> replica.ReplicaSolution:
    """ADATAP at the current S/N (eqs. 54-59), cached; on the session's thread for a dense problem (its refresh fills
    the cache first), on the job's for a low-rank one (seconds at N = 53,940)."""
    low_rank = "low-rank kernel, " if i.low_rank else ""
    job.report(0.0, f"solving the theory at S/N = {i.s_over_n:g} ({low_rank}N = {i.problem.n:,})")
    return solution_of(i.key, i.problem, i.s_over_n, Hooks(should_stop=job.should_stop))


def _not_run(i: _JobInputs, samples: int) -> str:
    """What a Monte-Carlo job that waits for its button says; on the low-rank path, how long it will take."""
    if not i.low_rank:
        return GPBootstrapState.not_run_message
    minutes = mc_seconds(i.problem, samples) / 60
    # short: it stands beside the progress bar in the tab's job line (at 1280 px a longer one ran off the screen)
    return f"Waits for 'Run Monte-Carlo': {samples:,} refits, about {max(minutes, 0.1):.2g} CPU minutes."


def solution_of(key: tuple, problem: paths.Problem, v: float, hooks: Hooks | None = None) -> replica.ReplicaSolution:
    """ADATAP of ``problem`` (cache key ``key``) at S = v·N, from the cache the sessions share or solved."""
    options = {"hooks": hooks} if paths.is_low_rank(problem) and hooks is not None else {}  # stops a superseded job
    return _SOLUTIONS.get_or_compute((key, round(v, 12)), lambda: paths.solve(problem, v * problem.n, **options))


def holdout_theory_of(key: tuple, problem: paths.Problem, v: float) -> HoldoutTheory:
    """The theory's bootstrap mean and variance at the held-out inputs (eq. 48), cached."""
    return _HOLDOUT_THEORY.get_or_compute(
        (key, v), lambda: stages.holdout_theory(problem, v, solution=solution_of(key, problem, v)))


def _distribution(i: _JobInputs, executor, job: Job) -> experiments.DistributionComparison:
    return experiments.distribution_comparison(i.problem, i.s_over_n, i.mc_samples,
                                               bin_width=scaled_bin_width(i.problem.y), rng=i.seed, executor=executor,
                                               hooks=Hooks(progress=job.report, should_stop=job.should_stop))


def _holdout(i: _JobInputs, executor, job: Job) -> experiments.HoldoutComparison:
    return experiments.holdout_comparison(i.problem, i.s_over_n, i.mc_samples, rng=i.seed, executor=executor,
                                          hooks=Hooks(progress=job.report, should_stop=job.should_stop))


#: The jobs of the GP tabs. The Monte-Carlo ones wait for Run unless ``auto_mc`` is on and are the ones Cancel
#: stops; partial redraws through HoloViews share the server's loop and are spaced by the gate, the learning curve's
#: are patched in place (views.common.patching, ~15 ms) and drawn at once.
_JOBS = (
    # the low-rank problem's features Φ (Nyström: 0.5 s at N = 53,940, m = 256), off the event loop; a dense problem
    # is built in the refresh (its K: 0.06 s at 1,000 rows)
    JobSpec("problem", None, _PROBLEMS, key=_needed("problem", lambda i: i.build[0]),
            compute=lambda state, i, job: i.build[1](job), cancellable=False),
    # dense: solved on the session's thread in ~0.1 s (the refresh fills the cache, so this shows it at once);
    # low-rank: seconds, off the event loop
    JobSpec("solution", "solution", _SOLUTIONS, key=_needed("solution", lambda i: (i.key, round(i.s_over_n, 12))),
            compute=lambda state, i, job: _solve(i, job), cancellable=False),
    JobSpec("holdout_theory", "holdout_theory", _HOLDOUT_THEORY,
            key=_needed("holdout_theory", lambda i: (i.key, i.s_over_n)),
            compute=lambda state, i, job: holdout_theory_of(i.key, i.problem, i.s_over_n), cancellable=False),
    JobSpec("holdout_ij", "holdout_ij", _HOLDOUT_IJ, key=_needed("holdout_ij", lambda i: (i.key, i.s_over_n)),
            compute=lambda state, i, job: stages.holdout_linear_response(i.problem, i.s_over_n), cancellable=False),
    JobSpec("theory", "theory_curve", _THEORY, key=_needed("theory", lambda i: (i.key, i.loss_key)),
            compute=lambda state, i, job: _theory_curve(i.problem, i.key, i.loss, i.loss_params, job),
            cancellable=False),
    # ε_IJ and the LOO limit along THEORY_GRID: one factorisation per S/N, yet 15 of them take 0.45-0.9 s on boston
    # (N = 506, one core), so a job of their own, off the event loop, drawn when done
    JobSpec("linear_response", "linear_response", _LINEAR_RESPONSE,
            key=_needed("linear_response", lambda i: (i.key, i.loss_key)),
            compute=lambda state, i, job: stages.linear_response_curve(i.problem, theory_grid(i.problem), loss=i.loss,
                                                                       loss_params=i.loss_params, ij=not i.low_rank),
            cancellable=False),
    JobSpec("curve", "curve_mc", _CURVES,
            key=_needed("curve", lambda i: (i.key, i.loss_key, mc_grid(i.problem), i.curve_samples, i.seed)),
            compute=lambda state, i, job: _mc_curve(i.problem, mc_grid(i.problem), i.curve_samples, i.loss,
                                                    i.loss_params, i.seed, job, state.executor),
            optional=True, not_run=lambda i: _not_run(i, i.curve_samples * len(mc_grid(i.problem)))),
    JobSpec("distribution", "distribution", _DISTRIBUTIONS,
            key=_needed("distribution", lambda i: (i.key, i.s_over_n, i.mc_samples, i.seed)),
            compute=lambda state, i, job: _distribution(i, state.executor, job), optional=True, gated=True,
            not_run=lambda i: _not_run(i, i.mc_samples)),
    JobSpec("holdout", "holdout_mc", _HOLDOUTS,
            key=_needed("holdout", lambda i: (i.key, i.s_over_n, i.mc_samples, i.seed)),
            compute=lambda state, i, job: _holdout(i, state.executor, job), optional=True, gated=True,
            not_run=lambda i: _not_run(i, i.mc_samples)),
    JobSpec("evidence", "evidence", _EVIDENCE, key=_needed("evidence", lambda i: i.evidence[0]),
            compute=lambda state, i, job: _evidence_fit(i.evidence[1], job, ard=i.evidence[2], rank=i.evidence[3]),
            cancellable=False),
)


# ------------------------------------------------------------------------------------ the state


class GPBootstrapState(CheckedState, BackgroundJobs, DataSourced):
    """Controls of the Gaussian-process bootstrap tabs (seed 000) and the core results for them, for one
    session (or notebook).

    Set the controls (``dataset``, ``kernel``, ``s_over_n``, ...); the outputs (``problem``, ``solution``,
    ``theory_curve``, ``linear_response``, ``curve_mc``, ``distribution``, ``holdout_theory``, ``holdout_ij``,
    ``holdout_mc``, ``error``) follow for the active ``tab`` (every change refreshes, also before the first
    :meth:`refresh`). Call :meth:`wait` to block until background jobs are done (in a script their results and
    progress are applied by ``wait``, see :func:`~explorer.views.common.session.script_dispatcher`); ``jobs[kind]``
    reports each job ("theory", "linear_response" and ``MC_KINDS``).
    """

    #: What a link carries (:func:`~explorer.views.common.links.link_parameters`): the URL's controls but ``tab``
    #: (the page's ``tab`` says it).
    LINK_PARAMETERS = tuple(name for name in URL_PARAMETERS if name != "tab")
    job_specs = _JOBS
    outputs = _OUTPUTS
    auto_run_parameter = "auto_mc"
    not_run_message = "Monte-Carlo not run yet: press 'Run Monte-Carlo'."
    expected_errors = EXPECTED_ERRORS
    error_wording = "gp"

    # --- data
    dataset = param.Selector(default="boston", objects=list(REGRESSION_DATASETS), label="Dataset",
                             doc="Regression data: shipped boston (seed 000 §5), generated toy (seed 002 eq. 19), "
                                 "teacher (GP teacher, seed 001) or diamonds (53,940 rows, low-rank kernel), a CSV "
                                 "of the data directory, or an upload.")
    target = controls.target("a CSV dataset to predict")
    subsample = param.Boolean(default=False, label=f"Use a random subsample of {MAX_ROWS:,} rows",
                              doc=f"An uploaded CSV with more than {MAX_ROWS:,} rows is refused (the theory solves "
                                  f"an N × N system on the server at every change), a CSV of the data folder uses the "
                                  f"low-rank kernel (Rank m); ticked, the pages use {MAX_ROWS:,} of its rows drawn at "
                                  f"random (seed {SUBSAMPLE_SEED}, kept in their file order) and the exact kernel.")
    holdout = param.Integer(default=50, bounds=(1, 1000), softbounds=(1, 200), label="Held-out rows",
                            doc="The first rows kept out as test inputs in the 'Test inputs' tab (Fig. 2: 50); "
                                "the bootstrap resamples the rest.")
    standardize = controls.standardize(
        "over all rows (datasets.standardization, as `explorer learning-curve --standardize`)",
        "The paper kernel scales the inputs itself; the other kernels need it on raw data such as boston.")
    ard = param.Boolean(default=False, label="One lengthscale per input (ARD)",
                        doc="For a CSV with the se kernel: choose one lengthscale ℓ_j per input column by maximum "
                            "evidence (automatic relevance determination); the theory and Monte-Carlo use that "
                            "kernel, and the note lists ℓ_j (a large ℓ_j: input j hardly matters).")
    rank = param.Integer(default=256, bounds=RANK_BOUNDS, label="Rank m (large data)",
                         doc=f"Data of more than {MAX_ROWS:,} rows from the server (diamonds, a CSV of the data "
                             "folder) use a low-rank kernel K ≈ ΦΦᵀ built from m of their rows (Nyström landmarks "
                             f"drawn with seed {SUBSAMPLE_SEED}): a larger m is closer to the exact kernel and slower "
                             "(the time grows as N·m²). Theory and Monte-Carlo both use this kernel. "
                             "docs/derivations/low_rank.md")
    # --- model
    kernel = param.Selector(default="paper", objects=list(KERNELS), label="Kernel",
                            doc="Covariance function: 'paper' is seed 000's RBF exp(−Σ_j (x_j−x'_j)²/(v_j l²)) "
                                "with v_j the sd of input j; or squared exponential (se), rational quadratic "
                                "(rq), exponential, Matérn 3/2, Matérn 5/2, periodic.")
    l2 = param.Number(default=problems.PAPER_L2, bounds=(1e-3, 1e6), softbounds=(1.0, 500.0),
                      label="l² (paper kernel)", doc="Squared global lengthscale l² of the paper kernel (73.54).")
    lengthscale = param.Number(default=1.0, bounds=(1e-6, 1e9), softbounds=(0.01, 100.0), label="Lengthscale",
                               doc="Lengthscale ℓ of the chosen kernel, in the units of the inputs.")
    signal_var = param.Number(default=1.0, bounds=(1e-9, 1e12), softbounds=(0.01, 100.0),
                              label="Signal variance", doc="Prior variance of the latent function, k(x, x).")
    alpha = param.Number(default=1.0, bounds=(1e-3, 1e3), softbounds=(0.1, 10.0), label="α (rq)",
                         doc="Shape parameter α of the rational quadratic kernel.")
    period = param.Number(default=1.0, bounds=(1e-4, 1e6), softbounds=(0.1, 10.0), label="Period",
                          doc="Period of the periodic kernel, in the units of the inputs.")
    noise_var = param.Number(default=problems.PAPER_NOISE_VAR, bounds=(1e-8, 1e8), softbounds=(1e-4, 1.0),
                             label="Noise σ²", doc="Noise variance σ² of the GP, eq. (50) (seed 000: 0.01).")
    # --- bootstrap
    s_over_n = param.Number(default=1.0, bounds=(0.05, 5.0), step=0.05, label="Bootstrap size S/N",
                            doc="How large each bootstrap sample is: it draws S of the N training points with "
                                "replacement (some twice, about N·e^(−S/N) not at all); S/N = 1 is Efron's classical "
                                "bootstrap. Seed 000 §3, eq. (11).")
    loss = param.Selector(default="square", objects=list(LOSSES), label="Test loss",
                          doc="Loss of the learning curve: square (eq. 45) or smoothed ε-insensitive (eq. 46).")
    eps = param.Number(default=0.1, bounds=(1e-4, 1e3), softbounds=(0.01, 2.0), label="ε",
                       doc="Half-width ε of the insensitive tube of the ε-insensitive loss (seed 000: 0.1).")
    beta = param.Number(default=0.1, bounds=(0.01, 1.0), label="β",
                        doc="Relative width β of the quadratic zone of the ε-insensitive loss (seed 000: 0.1).")
    curve_mc_samples = controls.mc_samples(500, (50, 5000), "MC samples per S (learning curve)",
                                           f"Monte-Carlo bootstrap samples at each S/N of {MC_GRID}.")
    mc_samples = controls.mc_samples(5000, (500, 50_000), "MC samples (distribution, test inputs)",
                                     "Monte-Carlo bootstrap samples for the predictive distribution, the L1 map and "
                                     "the test inputs.")
    seed = controls.seed()
    auto_mc = param.Boolean(default=True, label="Run Monte-Carlo automatically",
                            doc="Start the Monte-Carlo bootstrap of the active tab whenever the settings change.")
    # --- view
    tab = param.Selector(default="curve", objects=list(GP_TABS), label="Tab",
                         doc="The active view: learning curve, predictive distribution, L1 map or test inputs.")
    input_index = param.Integer(default=0, bounds=(0, 100_000), label="Input index i",
                                doc="Training input whose bootstrap distribution is shown (0-based row of D0).")
    show_components = param.Boolean(default=False, label="Show Poisson components",
                                    doc="Draw the components of the eq. (60) mixture: k copies of input i "
                                        "in the sample, k = 0, 1, 2, ...")
    data_dir = param.String(default=None, allow_None=True, constant=True, precedence=-1, label="Data directory",
                            doc="Folder whose *.csv files are offered as datasets (EXPLORER_DATA_DIR).")

    # --- outputs (set by the state, read by the views)
    problem = output((problems.RegressionProblem, problems.LowRankRegressionProblem), "Problem",
                     "data, kernel and K of D0 (or its features Φ, K ≈ ΦΦᵀ, on large data).")
    solution = output(replica.ReplicaSolution, "ADATAP solution", "the replica solution at S/N (eqs. 54-59).")
    theory_curve = output(TheoryCurve, "Theory learning curve", "ε(S) of the theory on THEORY_GRID.")
    linear_response = output(LinearResponseCurve, "Linear response and leave-one-out",
                             "ε_IJ(S) (square loss) and the leave-one-out limit on THEORY_GRID.")
    curve_mc = output(CurveMC, "Monte-Carlo learning curve", "MC points so far.")
    distribution = output(experiments.DistributionComparison, "Distribution comparison",
                          "MC samples at every input, L1 distances and noise floor.")
    holdout_theory = output(HoldoutTheory, "Held-out theory", "eq. (48) at the held-out inputs.")
    holdout_ij = output(LinearResponseMoments, "Held-out linear response",
                        "the first-order infinitesimal-jackknife mean and variance at the held-out inputs.")
    holdout_mc = output(experiments.HoldoutComparison, "Held-out comparison",
                        "theory and MC moments at the held-out inputs.")
    evidence = output((gp_evidence.EvidenceFit, evidence_lowrank.LowRankEvidenceFit), "Evidence maximum",
                      "the hyperparameters of largest evidence on the current CSV data, once computed.")

    def __init__(self, **params):
        dataset = params.pop("dataset", None)  # may name a file of data_dir: set once the choices are known
        super().__init__(**params)
        self._init_jobs()
        self._columns: dict[str, list[str]] = {}
        self._init_dataset_choices()
        if dataset is not None:
            self.dataset = dataset
        # a CSV starts from the hyperparameters of largest evidence unless the caller set them
        self._evidence_pending = self._fits_evidence() and not set(params) & set(_HYPER_PARAMETERS)
        self._applying_evidence = self._from_evidence = False
        self._ard_lengthscales: np.ndarray | None = None  # ℓ_j of the ARD evidence maximum, once applied
        # registered before the refresh: they run first: the new kernel computes with its new start
        self.param.watch(self._on_kernel, ["kernel", "lengthscale", "signal_var"])
        self.param.watch(self._on_data, ["dataset", "target", "standardize", "subsample", "ard"])
        self.param.watch(self._on_hyperparameter, list(_HYPER_PARAMETERS))
        self.param.watch(self._on_change, list(_COMPUTE_PARAMETERS))
        self._long_mc = False  # the current problem's Monte-Carlo waits for its button (low-rank path)
        self.param.watch(self._on_evidence, ["evidence"])
        self.jobs["evidence"].param.watch(self._on_evidence_error, ["error"])
        self.jobs["problem"].param.watch(self._on_problem_built, ["message"])
        for kind in ("problem", "solution", "holdout_theory", "holdout_ij"):  # the theory every figure needs
            self.jobs[kind].param.watch(self._on_problem_error, ["error"])

    # ----------------------------------------------------------------------------- public API

    @property
    def index(self) -> int:
        """``input_index`` clipped to the rows of the current problem."""
        n = self.problem.n if self.problem is not None else 1
        return min(int(self.input_index), n - 1)

    def run_mc(self, kind: str | None = None) -> None:
        """Start the Monte-Carlo job of ``kind`` (default: the active tab's) even if auto_mc is off."""
        self.run(kind or self.mc_kind)

    @property
    def low_rank(self) -> bool:
        """Whether the current data run the low-rank path (more than MAX_ROWS rows from the server): K ≈ ΦΦᵀ of
        rank ``rank``, the theory and Monte-Carlo on LOW_RANK_GRID, the distribution pages on a sample of inputs."""
        try:
            return self._large_data()
        except EXPECTED_ERRORS:
            return False

    @property
    def mapped_inputs(self) -> np.ndarray | None:
        """The training inputs the distribution and L1 pages cover when the problem has more than
        ``experiments.MAP_ALL_ROWS`` (a random sample of ``experiments.MAP_INPUTS``, drawn from ``seed`` as the
        Monte-Carlo draws them); None when they cover every input."""
        problem = self.problem
        if problem is None or problem.n <= experiments.MAP_ALL_ROWS:
            return None
        return experiments.map_inputs(problem.n, item_generator(root_seed(int(self.seed)), 2, 0))

    @property
    def mc_grid(self) -> tuple[float, ...]:
        """S/N of the Monte-Carlo points of the learning curve (MC_GRID, or LOW_RANK_GRID on large data)."""
        return mc_grid(self.problem) if self.problem is not None else MC_GRID

    def _auto_run(self) -> bool:
        """Monte-Carlo starts by itself (``auto_mc``) except on large data, where it takes minutes: its button."""
        return super()._auto_run() and not self._long_mc

    @property
    def mc_kind(self) -> str:
        """The Monte-Carlo job the active tab shows."""
        return {"curve": "curve", "distribution": "distribution", "l1": "distribution",
                "holdout": "holdout"}[self.tab]

    def upload_csv(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV as the dataset; its last column becomes the target until another is picked.

        A file that cannot be read clears the figures and says why in ``error``; a readable one starts from the
        hyperparameters of largest evidence on it (``evidence``)."""
        try:
            upload = read_upload(filename, content)  # an empty file is refused there, with a message
            columns = csv_columns(upload, "inputs and a target")
        except ValueError as err:
            self.refuse(str(err))  # no figure of the previous data under a message about this file
            return
        self._evidence_pending = True
        self.source.upload = upload
        self._columns[UPLOAD] = columns
        if UPLOAD not in self.param.dataset.objects:
            self.param.dataset.objects = [*self.param.dataset.objects, UPLOAD]
        self.param.update(dataset=UPLOAD, target=columns[-1])
        self.refresh()  # also when dataset and target did not change (a new file with the same header)

    def apply_url(self, values: dict) -> None:
        """Apply link parameters one by one, skipping (and reporting) those that are invalid."""
        bad = []
        for name, value in values.items():
            try:
                setattr(self, name, value)
            except Exception:  # noqa: BLE001 - any invalid link value is reported, never raised
                bad.append(f"{name}={value!r}")
        self.linked(set(values))
        self.tell("link", f"Ignored link parameter(s) that do not fit this app: {', '.join(bad)}." if bad else "")

    def linked(self, names: set[str]) -> None:
        """A link or a preset set ``names``: hyperparameters among them stay, also those equal to the current
        values (no change event then), and no evidence search of the data replaces them."""
        if names & set(_HYPER_PARAMETERS):
            self._evidence_pending = False

    def data_driven_start(self) -> kernels.DataDrivenHyperparameters:
        """ℓ and σ_f² from the current data (:func:`explorer.kernels.data_driven_hyperparameters`)."""
        data = self._load_dataset()
        return kernels.data_driven_hyperparameters(data.inputs, data.targets)

    @property
    def bin_width(self) -> float:
        """Δh of the predictive-distribution histograms: 0.2 · sd(y)/sd(boston's target) of the training targets
        (:func:`~explorer.gp_bootstrap.l1.scaled_bin_width`; boston: the paper's 0.2)."""
        if self.distribution is not None:
            return self.distribution.l1.bin_width
        return scaled_bin_width(self.problem.y) if self.problem is not None else BIN_WIDTH

    @property
    def hyperparameter_source(self) -> str:
        """Where the kernel's values come from (``HYPERPARAMETERS``): the controls as set, the evidence maximum
        on the CSV data, or that maximum while it is being computed."""
        if self._evidence_pending:
            return "evidence pending"
        return "evidence" if self._from_evidence else "set"

    @property
    def ard_lengthscales(self) -> np.ndarray | None:
        """ℓ_1..ℓ_d of the kernel, one per input column, while ``ard`` is ticked for CSV data with the se kernel and
        its evidence maximum is known (None otherwise: one ℓ, ``lengthscale``)."""
        if self._ard_lengthscales is None or not self._wants_ard() or self.kernel != "se":
            return None
        return self._ard_lengthscales

    def data_file(self) -> dict | None:
        """The CSV file behind the data: ``{"file": its name, "sha256": of its text}``; None for the shipped and
        generated sets (boston, toy, teacher)."""
        if self.dataset == UPLOAD and self.source.upload is not None:
            return self.source.settings()
        if self.dataset.startswith(CSV_PREFIX):
            file = self._data_file()
            return {"file": file.filename, "sha256": file.sha256}
        return None

    def data_label(self) -> str:
        """The data in a few words, for file names: the shipped set's name or the CSV file's name without
        ``.csv``, with the target column of a CSV and ``subsample`` when a random subsample is used."""
        file = self.data_file()
        if file is None:
            return self.dataset
        parts = [Path(file["file"]).stem, self.target or ""]
        if self.low_rank:
            return "-".join([*parts, f"rank-{int(self.rank)}"])
        return "-".join([*parts, f"subsample-{MAX_ROWS}"] if self.subsample else parts)

    def _on_kernel(self, *events) -> None:
        """A switch to a kernel other than ``paper`` starts from the data's scale, unless the same change sets ℓ
        or σ_f² (a link, a preset); the notice says where the values come from."""
        names = {event.name for event in events}
        if names != {"kernel"} or self.kernel == "paper" or self.__dict__.get("_linking"):
            if "kernel" in names:
                self.tell("kernel")
            return
        try:
            start = self.data_driven_start()
        except EXPECTED_ERRORS:
            return  # the refresh that follows says what is wrong with the data
        self.param.update(lengthscale=start.lengthscale, signal_var=start.signal_var)
        self.tell("kernel", f"Kernel {self.kernel}: started from the data's scale, lengthscale ℓ = "
                            f"{self.lengthscale:g} (median distance between inputs) and signal variance σ_f² = "
                            f"{self.signal_var:g} (variance of the target).")

    # ----------------------------------------------------------------------------- hyperparameters of a CSV

    def _is_csv(self) -> bool:
        return self.dataset == UPLOAD or self.dataset.startswith(CSV_PREFIX)

    def _fits_evidence(self) -> bool:
        """Whether the data's kernel starts from the evidence maximum: a CSV, or diamonds (FITTED_DATASETS)."""
        return self._is_csv() or self.dataset in FITTED_DATASETS

    def _on_data(self, *events) -> None:
        """New CSV data (file, target, scaling, subsample) starts from its evidence maximum."""
        self._from_evidence = False
        if self._fits_evidence():
            self._evidence_pending = True
        else:
            self._evidence_pending = False
            self.tell("evidence")

    def _on_hyperparameter(self, *events) -> None:
        """Hyperparameters set by hand, a link or a preset replace those of the evidence maximum."""
        if not self._applying_evidence:
            self._evidence_pending = self._from_evidence = False
            self.tell("evidence")

    def _on_problem_built(self, event) -> None:
        if event.new == "done":
            self.refresh()  # the low-rank problem is in the cache: compute with it

    def _on_problem_error(self, event) -> None:
        if event.new:  # the features or the theory failed (seconds off the event loop on large data): say why over the
            # figure, as any error of the settings
            self.refuse(event.new)

    def _on_evidence(self, event) -> None:
        if event.new is not None and self._evidence_pending:
            self.refresh()  # the job's result: apply it and compute

    def _on_evidence_error(self, event) -> None:
        if event.new and self._evidence_pending:
            self._evidence_pending = False
            self.tell("evidence", f"The hyperparameters could not be chosen by maximum evidence ({event.new}); the "
                                  "kernel keeps its values: set them by hand or pick the paper preset.")
            self.refresh()

    def _choose_hyperparameters(self) -> tuple | None:
        """Apply the evidence maximum of the current CSV data if it is known (None); else show nothing meanwhile
        and return what the job that computes it reads: the data's key and the data."""
        data = self._load_dataset()  # rows checked before the job
        rank = min(int(self.rank), data.n) if self._large_data() else None
        key = (self._data_key(), self._wants_ard(), rank)
        fit = _EVIDENCE.get(key)
        if fit is None:
            for name in _OUTPUTS:
                self._assign(name, None)
            what = "one lengthscale per input (ARD) and the other hyperparameters" if key[1] else \
                "the kernel's hyperparameters"
            on = "your data" if self._is_csv() else f"{data.name}"
            how = "" if rank is None else (f" (the low-rank GP of rank m = {rank} on all {data.n:,} rows; about 20 s "
                                           "at 53,940 rows)")
            self.tell("evidence", f"Choosing {what} by maximum evidence on {on}{how}…")
            return key, data, key[1], rank
        self._apply_evidence(fit, data.n, data.feature_names)
        return None

    def _wants_ard(self) -> bool:
        """Whether the evidence is maximised with one lengthscale per input: ``ard`` ticked for CSV data (the
        maximum is always an se kernel)."""
        return bool(self.ard) and self._fits_evidence()

    def _apply_evidence(self, fit, rows: int, names: tuple[str, ...] = ()) -> None:
        ard = np.ndim(fit.lengthscale) > 0
        self._ard_lengthscales = np.asarray(fit.lengthscale, dtype=float) if ard else None
        # ARD: the control shows the geometric mean of the ℓ_j (the kernel uses each ℓ_j; the note lists them)
        ell = float(np.exp(np.mean(np.log(fit.lengthscale)))) if ard else float(fit.lengthscale)
        values = {"lengthscale": ell, "signal_var": fit.signal_var, "noise_var": fit.noise_var}
        clipped = {name: float(np.clip(v, *self.param[name].bounds)) for name, v in values.items()}
        self._evidence_pending, self._applying_evidence = False, True
        try:
            self.param.update(kernel="se", **clipped)
        finally:
            self._applying_evidence = False
        self._from_evidence = True
        note = _evidence_note(self, fit, rows, clipped != values)
        ells = self.ard_lengthscales
        self.tell("evidence", note if ells is None else note + _ard_sentence(names, ells))

    # ----------------------------------------------------------------------------- settings → keys

    def _init_dataset_choices(self) -> None:
        objects = list(REGRESSION_DATASETS)
        if self.data_dir and not os.path.isdir(self.data_dir):
            self.tell("data_dir", "The server's data folder cannot be read: only the shipped datasets and uploads "
                                  "are offered. (Whoever runs the app can check `--data-dir`.)")
        objects += [CSV_PREFIX + name for name in self.source.files()]
        self.param.dataset.objects = objects

    def _data_file(self) -> Upload:
        """The chosen file of the data folder, read and checked as an upload, with the larger limits of the low-rank
        mode (DATA_DIR_LIMITS)."""
        return self.source.read(self.dataset[len(CSV_PREFIX):], **DATA_DIR_LIMITS)

    def _sync_target(self) -> None:
        """Target choices follow the dataset: the CSV's columns, or none for the built-in sets."""
        if self.dataset in REGRESSION_DATASETS:
            columns = []
        elif self.dataset == UPLOAD:
            columns = self._columns.get(UPLOAD, [])
        else:
            if self.dataset not in self._columns:
                self._columns[self.dataset] = _csv_header(self._data_file().text)
            columns = self._columns[self.dataset]
        wanted = self.target if self.target in columns else (columns[-1] if columns else None)
        if list(self.param.target.objects) != columns:
            self.param.target.objects = columns  # a linked Select may now pick its first option: reset below
        if wanted != self.target:
            self.target = wanted

    def _dataset_key(self) -> tuple:
        if self.dataset == UPLOAD:
            return self.source.key(self.target)
        if self.dataset.startswith(CSV_PREFIX):
            file = self._data_file()
            return ("csv", file.filename, file.sha256, self.target)
        return ("shipped", self.dataset)

    def _data_key(self) -> tuple:
        return (self._dataset_key(), bool(self.standardize), bool(self.subsample) and self._is_csv())

    def _kernel_key(self) -> tuple:
        if self.kernel == "paper":
            return ("paper", float(self.l2))
        extra = {"rq": (("alpha", float(self.alpha)),), "periodic": (("period", float(self.period)),)}
        ell = tuple(self.ard_lengthscales) if self.ard_lengthscales is not None else float(self.lengthscale)
        return (self.kernel, ell, float(self.signal_var), *extra.get(self.kernel, ()))

    def _problem_key(self, holdout: int) -> tuple:
        rank = int(self.rank) if self._large_data() else None  # the rank matters on the low-rank path only
        return (self._data_key(), self._kernel_key(), float(self.noise_var), int(holdout), rank)

    def _loss_key(self) -> tuple:
        return ("square",) if self.loss == "square" else (self.loss, float(self.eps), float(self.beta))

    @property
    def loss_params(self) -> dict:
        """Parameters of the chosen loss for ``losses.get_loss``."""
        return {} if self.loss == "square" else {"eps": float(self.eps), "beta": float(self.beta)}

    @property
    def current_theory_error(self) -> float | None:
        """Theory ε at the current S/N from ``solution`` (eq. 45 or 46); None without a solution."""
        return None if self.solution is None else theory_error(self.solution, self.loss, self.loss_params)

    # ----------------------------------------------------------------------------- building the problem

    def _load_dataset(self) -> datasets.Dataset:
        """The chosen data, standardised (inputs and target) when ``standardize`` is on (read once per data key)."""
        def load():
            data = self._load_raw_dataset()
            return data.standardized(targets=True) if self.standardize else data
        return _DATA.get_or_compute(self._data_key(), load)

    def _large_data(self) -> bool:
        """Whether the current data have more than MAX_ROWS rows: they run the low-rank path (``rank``)."""
        return self._load_dataset().n > MAX_ROWS

    def _load_raw_dataset(self) -> datasets.Dataset:
        if self.dataset in ("toy", "teacher"):
            return datasets.load(self.dataset, rng=DATA_SEED)
        if self.dataset in REGRESSION_DATASETS:
            return datasets.load(self.dataset)
        if self.target is None:
            raise datasets.DatasetError("choose the target column of the CSV file.")
        if self.dataset == UPLOAD:
            data = self.source.table(self.target)
        else:
            file = self._data_file()  # read as an upload: no message quotes the server's path
            data = datasets.load_csv(io.StringIO(file.text), self.target, name=Path(file.filename).stem,
                                     task="regression")
        return self._limit_rows(data)

    def _limit_rows(self, data: datasets.Dataset) -> datasets.Dataset:
        """``data`` within MAX_ROWS and MAX_COLUMNS, checked before any kernel matrix: a random subsample of
        MAX_ROWS rows if ``subsample`` is ticked, else, for an upload, DatasetError saying the limit and the file's
        count; a CSV of the data folder of up to LOW_RANK_ROWS rows runs the low-rank path."""
        if data.d > MAX_COLUMNS:
            raise datasets.DatasetError(
                f"{data.name} has {data.d} input columns; these pages take at most {MAX_COLUMNS}. Upload a CSV "
                "with fewer columns (drop the ones you do not need).")
        if data.n <= MAX_ROWS:
            return data
        if self.dataset != UPLOAD and not self.subsample:
            if data.n > LOW_RANK_ROWS:
                raise datasets.DatasetError(
                    f"{data.name} has {data.n:,} rows; the low-rank mode of these pages takes at most "
                    f"{LOW_RANK_ROWS:,}. Tick 'Use a random subsample of {MAX_ROWS:,} rows' under Data, or run "
                    "`explorer learning-curve --csv FILE --rank 256` on the command line (up to 1,000,000 rows).")
            return data
        if not self.subsample:
            raise datasets.DatasetError(
                f"{data.name} has {data.n:,} rows; these pages take at most {MAX_ROWS:,} (the theory solves an "
                f"N × N system on the server at every change). Tick 'Use a random subsample of {MAX_ROWS:,} rows' "
                f"under Data to use {MAX_ROWS:,} of its rows drawn at random (seed {SUBSAMPLE_SEED}), or upload a "
                "smaller file.")
        return replace(data.subset(subsample_rows(data.n, MAX_ROWS)),
                       name=f"{data.name} (random {MAX_ROWS:,} of {data.n:,} rows, seed {SUBSAMPLE_SEED})")

    def _kernel(self, X: np.ndarray) -> kernels.Kernel:
        if self.kernel == "paper":
            return kernels.paper_rbf(X, l2=self.l2, scale="sd")
        ell = self.ard_lengthscales if self.ard_lengthscales is not None else self.lengthscale
        hyper = {"lengthscale": ell, "signal_var": self.signal_var}
        hyper.update({"rq": {"alpha": self.alpha}, "periodic": {"period": self.period}}.get(self.kernel, {}))
        return kernels.make_kernel(self.kernel, X.shape[1], **hyper)

    def _build_problem(self, holdout: int) -> paths.Problem:
        data = self._load_dataset()
        _check_holdout(data, holdout)
        return problems.regression_problem(data, self._kernel(data.inputs[holdout:]), self.noise_var, holdout=holdout)

    def _warn_holdout(self, holdout: int, rows: int, name: str) -> None:
        """Warn when at least half of the ``rows`` are held out (the bootstrap then trains on the smaller part)."""
        text = ""
        if 2 * holdout >= rows:
            text = (f"Held-out rows: {holdout} of the {rows} rows of {name} are held out, so the bootstrap trains "
                    f"on N = {rows - holdout} only. Lower 'Held-out rows' below {(rows + 1) // 2} to train on the "
                    "larger part.")
        self.tell("holdout", text)

    def _problem(self, holdout: int = 0) -> tuple[tuple, paths.Problem | None]:
        """The problem of the current settings and its key; None for a low-rank problem not built yet (the "problem"
        job builds it, :meth:`_building`)."""
        key = self._problem_key(holdout)
        if key[-1] is not None:  # low-rank
            return key, _PROBLEMS.get(key)
        return key, _PROBLEMS.get_or_compute(key, lambda: self._build_problem(holdout))

    def _building(self, key: tuple, holdout: int) -> _JobInputs:
        """Show nothing while the "problem" job builds the low-rank features; what it reads is taken now."""
        for name in _OUTPUTS:
            self._assign(name, None)
        build = self._problem_builder(holdout)
        return _JobInputs(self.tab, build=(key, build))

    def _problem_builder(self, holdout: int):
        """``build(job)``: the low-rank problem of the current settings (read now, on the session's thread)."""
        data, rank, noise_var = self._load_dataset(), int(self.rank), float(self.noise_var)
        _check_holdout(data, holdout)
        if rank > data.n - holdout:
            raise ValueError(f"Rank m = {rank} is above the {data.n - holdout:,} training rows ({data.n:,} rows, "
                             f"{holdout} held out): lower 'Rank m (large data)' to at most {data.n - holdout:,}, or "
                             "lower 'Held-out rows'.")
        kernel = self._kernel(data.inputs[holdout:])

        def build(job: Job) -> problems.LowRankRegressionProblem:
            job.report(0.0, f"building the low-rank kernel K ≈ ΦΦᵀ ({rank} Nyström landmarks of {data.n - holdout:,} "
                            "rows)")
            return problems.low_rank_problem(data, kernel, noise_var, rank=rank, rng=SUBSAMPLE_SEED, holdout=holdout)
        return build

    # ----------------------------------------------------------------------------- refresh

    def _on_change(self, *events) -> None:
        """Every change of a control refreshes, also before the first :meth:`refresh` (a link, a notebook)."""
        self.refresh()

    def _prepare_jobs(self) -> _JobInputs:
        self._sync_target()
        evidence = self._choose_hyperparameters() if self._evidence_pending else None
        if evidence is not None:
            return _JobInputs(self.tab, evidence=evidence)
        if self.tab == "holdout":
            return self._prepare_holdout()
        self.tell("holdout")  # the held-out rows matter in the 'Test inputs' tab only
        return self._prepare_training()

    def _inputs(self, key, problem) -> _JobInputs:
        self._long_mc = paths.is_low_rank(problem)
        return _JobInputs(self.tab, key, problem, float(self.s_over_n), self.loss, self.loss_params, self._loss_key(),
                          int(self.curve_mc_samples), int(self.mc_samples), int(self.seed))

    def _prepare_training(self) -> _JobInputs:
        key, problem = self._problem(0)
        if problem is None:
            return self._building(key, 0)
        self.param.input_index.bounds = (0, problem.n - 1)
        if self.input_index > problem.n - 1:
            self._assign("input_index", problem.n - 1)
        self._assign("problem", problem)
        if not paths.is_low_rank(problem):  # ~0.1 s: now, so that the "solution" job shows it in this refresh
            solution_of(key, problem, float(self.s_over_n))
        if self.tab != "curve":
            self._check_mc_size(problem.n)
        return self._inputs(key, problem)

    def _check_mc_size(self, n: int) -> None:
        """ValueError before a Monte-Carlo job whose (B, N) arrays would exceed MAX_MC_VALUES numbers (N: the inputs
        kept, ``experiments.MAP_INPUTS`` of a larger problem)."""
        n = n if n <= experiments.MAP_ALL_ROWS else experiments.MAP_INPUTS
        samples = int(self.mc_samples)
        if samples * n > MAX_MC_VALUES:
            raise ValueError(f"{samples:,} Monte-Carlo samples at N = {n:,} inputs would keep {samples * n:,} "
                             f"numbers twice (occupations and predictions); the server keeps at most "
                             f"{MAX_MC_VALUES:,}. Lower 'MC samples (distribution, test inputs)' to at most "
                             f"{MAX_MC_VALUES // n:,}.")

    def _prepare_holdout(self) -> _JobInputs:
        key, problem = self._problem(int(self.holdout))
        if problem is None:
            return self._building(key, int(self.holdout))
        self._warn_holdout(int(self.holdout), problem.n + int(self.holdout), problem.name)
        self._check_mc_size(problem.n)
        v = float(self.s_over_n)
        if not paths.is_low_rank(problem):  # dense: now (the jobs show them in this refresh); low-rank: the jobs
            holdout_theory_of(key, problem, v)
            # one factorisation (30-40 ms on boston, N = 456): on the session's thread, as eq. (48) is
            _HOLDOUT_IJ.get_or_compute((key, v), lambda: stages.holdout_linear_response(problem, v))
        return self._inputs(key, problem)


def _check_holdout(data: datasets.Dataset, holdout: int) -> None:
    """ValueError unless ``holdout`` rows leave at least 10 training rows of ``data``."""
    if holdout > data.n - 10:
        raise ValueError(f"Held-out rows must leave at least 10 training rows: {data.name} has {data.n} rows, "
                         f"got {holdout} held out. Lower 'Held-out rows' to at most {data.n - 10}.")


def _csv_header(text: str) -> list[str]:
    """Column names of the first row of CSV text (for the target picker; load_csv validates the rest)."""
    row = next(csv.reader(io.StringIO(text)), [])
    return [name.strip().lstrip("\ufeff") for name in row if name.strip()]


def subsample_rows(n: int, size: int) -> np.ndarray:
    """``size`` of the row indices 0..n−1 drawn without replacement (seed ``SUBSAMPLE_SEED``), in increasing order."""
    return gp_evidence.subsample_rows(n, size, SUBSAMPLE_SEED)


def _evidence_fit(data: datasets.Dataset, job: Job, *, ard: bool = False, rank: int | None = None):
    """The evidence maximum on at most EVIDENCE_ROWS rows of ``data`` (a random subsample when it has more), with one
    lengthscale per input column if ``ard``: the core's :func:`~explorer.gp_bootstrap.evidence.fit_to_data`, which the
    command line calls too; with a ``rank`` (large data), the evidence of the rank-m Nyström GP on all rows
    (:func:`~explorer.gp_bootstrap.evidence_lowrank.maximum_evidence_lowrank`, landmarks drawn with SUBSAMPLE_SEED),
    as ``explorer learning-curve --rank M --seed 0`` fits it."""
    hooks = Hooks(progress=job.report, should_stop=job.should_stop)
    if rank is not None:
        return evidence_lowrank.maximum_evidence_lowrank(data.inputs, data.targets, rank=rank, rng=SUBSAMPLE_SEED,
                                                         ard=ard, hooks=hooks)
    return gp_evidence.fit_to_data(data.inputs, data.targets, ard=ard, max_rows=EVIDENCE_ROWS, seed=SUBSAMPLE_SEED,
                                   hooks=Hooks(progress=job.report, should_stop=job.should_stop))


def _ard_sentence(names: tuple[str, ...], lengthscales: np.ndarray) -> str:
    """The ℓ_j of each input, shortest (the input that matters most) first."""
    order = np.argsort(lengthscales)
    listed = ", ".join(f"{names[j]} {lengthscales[j]:.3g}" for j in order)
    return (f" ℓ_j per input, shortest first: {listed}; a short ℓ_j means the prediction follows input j closely, a "
            "long one that it hardly depends on it.")


def _evidence_note(state: GPBootstrapState, fit, rows: int, clipped: bool) -> str:
    """What the notice says about hyperparameters chosen by maximum evidence."""
    if isinstance(fit, evidence_lowrank.LowRankEvidenceFit):
        on = (f"all {rows:,} rows, for the low-rank kernel of rank m = {fit.rank} (Nyström landmarks drawn with seed "
              f"{SUBSAMPLE_SEED}; a new m keeps these values)")
    else:
        on = "your data" if fit.n == rows else (f"a random subsample of {fit.n} of your {rows:,} rows "
                                                f"(seed {SUBSAMPLE_SEED})")
    ell = f"ℓ = {state.lengthscale:g}" if state.ard_lengthscales is None else "one ℓ_j per input (ARD)"
    text = (f"Kernel se, {ell}, σ_f² = {state.signal_var:g}, σ² = {state.noise_var:g} chosen by "
            f"maximum evidence on {on} (log evidence {fit.log_evidence:.1f}); pick the paper preset to use the "
            "paper's values.")
    if fit.at_noise_floor:
        text += (f" σ² stopped at its lower bound {gp_evidence.NOISE_FLOOR:g} × var(target): the target looks nearly "
                 "noise-free, and the theory needs some noise.")
    return text + (" Some values were clipped to the range of their control." if clipped else "")
