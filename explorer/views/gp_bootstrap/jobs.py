"""The background jobs of the Gaussian-process pages ([MO03]), declared once (``JOBS``), with the caches the sessions
of a server share and the computations the jobs run: the theory curve (dense, or one S/N at a time on the low-rank
path), ADATAP at the current S/N, the held-out theory, the Monte-Carlo comparisons and the evidence maximum.

The settings are read once, on the session's thread, into a frozen value (:class:`GPSettings`: the form at the
click); the jobs of a refresh are planned from it by a pure function (:func:`plan` → :class:`JobInputs`). Every
computation here is a core stage (:mod:`explorer.gp_bootstrap.stages`, ``experiments``, the theories on the problem's
kernel operator) called with those inputs; none reads a control.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from explorer import datasets
from explorer.bootstrap import replica
from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.gp_bootstrap import experiments, stages
from explorer.gp_bootstrap import problem as problems
from explorer.gp_bootstrap.l1 import scaled_bin_width
from explorer.gp_bootstrap.montecarlo import SAMPLE_SECONDS_PER_NM2
from explorer.gp_bootstrap.stages import VG_MF_LOSSES, CurveMC, HoldoutTheory, TheoryCurve
from explorer.operators import offers
from explorer.progress import Hooks
from explorer.runtime.caches import lru
from explorer.views.common.state.jobs import Job, JobSpec
from explorer.views.gp_bootstrap import cluster
from explorer.views.gp_bootstrap.settings import (
    EVIDENCE_ROWS,
    HOLDOUT_TAB,
    LOW_RANK_GRID,
    MC_GRID,
    SUBSAMPLE_SEED,
    THEORY_GRID,
)

__all__ = ["JOBS", "GPSettings", "EvidenceRequest", "ProblemBuild", "JobInputs", "plan", "prefill", "NOT_RUN_MESSAGE",
           "solves_at_once", "offers_vg_mf", "theory_grid", "mc_grid",
           "mc_seconds", "solution_of",
           "holdout_theory_of", "holdout_ij_of", "PROBLEMS", "DATA", "EVIDENCE"]

#: What a Monte-Carlo job that waits for its button says (dense data; large data say how long it will take).
NOT_RUN_MESSAGE = "Monte-Carlo not run yet: press 'Run Monte-Carlo'."

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


def solves_at_once(problem) -> bool:
    """Whether one ADATAP solve of ``problem`` is quick (~0.1 s): its kernel operator holds the matrix K whole
    (``operators.offers(op, "dense_matrix")``), which the pages build for at most MAX_ROWS rows. Then the page
    solves it on the session's thread, along the fine grids, with the IJ curve and Monte-Carlo by itself; an operator
    of features Φ of large data takes seconds a solve (N = 53,940, m = 256): one S/N at a time, off the event loop,
    on LOW_RANK_GRID, Monte-Carlo on its button."""
    return offers(problem.operator, "dense_matrix")


def offers_vg_mf(problem) -> bool:
    """Whether the variational-Gaussian and mean-field approximations can run on ``problem``: they need the N × N
    kernel matrix (:func:`explorer.gp_bootstrap.stages.vg_mf_curve`), which its operator offers or not."""
    return offers(problem.operator, "dense_matrix")


def _theory_curve(problem, problem_key, loss: str, loss_params: dict, job: Job | None = None) -> TheoryCurve:
    """The core's stages along the problem's theory grid (:func:`theory_grid`): ADATAP and approximate ADATAP
    (``stages.replica_curve`` at once for a quick problem, one S/N at a time with partial results otherwise, cached per
    problem), then VG and MF for the square loss where the problem offers them (``stages.vg_mf_curve``), joined by
    ``stages.theory_curve``.

    VG/MF about double the cost (boston: ~0.85 → ~1.9 s CPU), so a ``job`` first gets the curve with NaN in
    their place (``job.partial``): ADATAP shows as soon as before, VG and MF follow.
    """
    report = job.report if job is not None else (lambda fraction, message: None)
    if solves_at_once(problem):
        report(0.0, "ADATAP and approximate ADATAP")
        solutions = _THEORY_SOLUTIONS.get_or_compute(problem_key,
                                                     lambda: stages.replica_curve(problem, theory_grid(problem)))
    else:
        solutions = _THEORY_SOLUTIONS.get_or_compute(
            problem_key, lambda: _stepwise_replica_curve(problem, loss, loss_params, job))
    curve = stages.theory_curve(problem, solutions, loss=loss, loss_params=loss_params)
    if loss not in VG_MF_LOSSES or not offers_vg_mf(problem):
        return curve
    vg_mf = _VG_MF.get(problem_key)
    if vg_mf is None and job is not None:
        nan = np.full(solutions.s_over_n.size, np.nan)
        job.partial(replace(curve, theory_vg=nan, theory_mf=nan))
        report(0.5, "variational Gaussian and mean field")
    vg_mf = vg_mf or _VG_MF.get_or_compute(problem_key, lambda: stages.vg_mf_curve(problem, theory_grid(problem)))
    return stages.theory_curve(problem, solutions, loss=loss, loss_params=loss_params, vg_mf=vg_mf)


def _stepwise_replica_curve(problem, loss: str, loss_params: dict, job: Job | None) -> stages.ReplicaCurve:
    """ADATAP (warm-started in ascending S, as ``stages.replica_curve``) and the approximate ADATAP along
    the problem's theory grid, one S/N at a time: each takes seconds at N = 53,940, so ``job`` reports which and shows
    the curve so far (``job.partial``), and a superseded job stops within one ADATAP iteration."""
    hooks = Hooks(should_stop=job.should_stop) if job is not None else None
    exact: list[replica.ReplicaSolution] = []
    approx: list[replica.ReplicaSolution] = []
    grid = np.array(theory_grid(problem))
    for j, v in enumerate(grid):
        if job is not None:
            job.report(j / grid.size, f"ADATAP at S/N = {v:g} ({j + 1} of {grid.size}; {_kernel_words(problem)}"
                                      f"N = {problem.n:,}, m = {problem.features.rank})")
        exact.append(replica.solve_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), init=exact[-1] if exact else None, hooks=hooks))
        approx.append(replica.approximate_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(v)))
        if job is not None and j + 1 < grid.size:
            done = stages.ReplicaCurve(grid[:j + 1], tuple(exact), tuple(approx))
            job.partial(stages.theory_curve(problem, done, loss=loss, loss_params=loss_params))
    return stages.ReplicaCurve(grid, tuple(exact), tuple(approx))


def _kernel_words(problem) -> str:
    """What the progress messages say of the kernel: "low-rank kernel, " for features Φ (K ≈ ΦΦᵀ), "" for K."""
    return "" if solves_at_once(problem) else "low-rank kernel, "


def theory_grid(problem) -> tuple[float, ...]:
    """S/N of the theory curve of ``problem``: THEORY_GRID (15 values) where a solve is quick
    (:func:`solves_at_once`), else LOW_RANK_GRID (5: each solve takes seconds)."""
    return THEORY_GRID if solves_at_once(problem) else LOW_RANK_GRID


def mc_grid(problem) -> tuple[float, ...]:
    """S/N of the Monte-Carlo points of ``problem``'s learning curve: MC_GRID where a solve is quick, else
    LOW_RANK_GRID (the theory's own, so that every point has its theory)."""
    return MC_GRID if solves_at_once(problem) else LOW_RANK_GRID


def mc_seconds(problem, samples: int) -> float:
    """Estimated CPU seconds of ``samples`` Monte-Carlo refits of ``problem`` on the low-rank path (each a weighted
    m × m solve after forming ΦᵀWΦ, ``montecarlo.SAMPLE_SECONDS_PER_NM2``)."""
    return samples * SAMPLE_SECONDS_PER_NM2 * problem.n * problem.features.rank ** 2


def _mc_curve(problem, grid, mc_samples: int, loss: str, loss_params: dict, seed: int, job: Job,
              executor) -> CurveMC:
    """The core's ``stages.mc_curve`` (all S at once on ``executor``); ``job.partial`` gets the curve whenever one
    more S is complete. The CLI's ``learning-curve`` calls the same stage with the same root seed. Rows in chunks on
    a cluster: :func:`~explorer.views.gp_bootstrap.cluster.mc_curve` there."""
    if cluster.is_chunked(problem):
        return cluster.mc_curve(problem, grid, mc_samples, loss, seed,
                                Hooks(progress=job.report, should_stop=job.should_stop, partial=job.partial))
    return stages.mc_curve(problem, grid, mc_samples, loss=loss, loss_params=loss_params, rng=seed,
                           executor=executor,
                           hooks=Hooks(progress=job.report, should_stop=job.should_stop, partial=job.partial))


#: The jobs each tab needs (the others' jobs are left as they are: a running one goes on, its result is cached).
_TAB_JOBS = {"curve": ("solution", "theory", "linear_response", "curve"), "distribution": ("solution", "distribution"),
             "l1": ("solution", "distribution"), HOLDOUT_TAB: ("holdout_theory", "holdout_ij", HOLDOUT_TAB)}


@dataclass(frozen=True)
class GPSettings:
    """The Gaussian-process page's form at the click: what the jobs of one refresh read, taken once from the state's
    controls on the session's thread (:meth:`read`); nothing after reads a control."""

    tab: str
    s_over_n: float
    loss: str
    loss_params: Mapping[str, float]
    curve_samples: int
    mc_samples: int
    seed: int
    holdout: int

    @classmethod
    def read(cls, state) -> GPSettings:
        """The settings of ``state`` (a :class:`~explorer.views.gp_bootstrap.state.GPBootstrapState`) now."""
        return cls(tab=state.tab, s_over_n=float(state.s_over_n), loss=state.loss,
                   loss_params=dict(state.loss_params), curve_samples=int(state.curve_mc_samples),
                   mc_samples=int(state.mc_samples), seed=int(state.seed), holdout=int(state.holdout))

    @property
    def loss_key(self) -> tuple:
        """The loss and its parameters' values: the part of a theory curve's cache key the loss makes."""
        return (self.loss, *self.loss_params.values())

    @property
    def held_out(self) -> int:
        """The rows held out of the problem of the open tab: ``holdout`` in the 'Test inputs' tab, else none."""
        return self.holdout if self.tab == HOLDOUT_TAB else 0


@dataclass(frozen=True)
class EvidenceRequest:
    """The evidence maximum to compute before anything else (CSV data start from it): its cache key, the data, one
    lengthscale per input (``ard``) and the rank of the low-rank GP (large data; else None)."""

    key: tuple
    data: datasets.Dataset
    ard: bool
    rank: int | None


@dataclass(frozen=True)
class ProblemBuild:
    """A low-rank problem to build off the event loop: its cache key and ``build(job)``, which builds it."""

    key: tuple
    build: Callable[[Job], problems.RegressionProblem]


@dataclass(frozen=True)
class JobInputs:
    """What the jobs of one refresh read (:func:`plan`): the form's :class:`GPSettings` and the open tab's problem
    with its cache key; or, while the hyperparameters of CSV data are chosen by maximum evidence, only ``evidence``;
    or, while a low-rank problem is built, only ``build``."""

    settings: GPSettings
    key: tuple | None = None
    problem: problems.RegressionProblem | None = None
    evidence: EvidenceRequest | None = None
    build: ProblemBuild | None = None

    tab = property(lambda self: self.settings.tab, doc="The open tab.")
    s_over_n = property(lambda self: self.settings.s_over_n, doc="S/N.")
    loss = property(lambda self: self.settings.loss, doc="The test loss.")
    loss_params = property(lambda self: self.settings.loss_params, doc="The test loss's parameters.")
    loss_key = property(lambda self: self.settings.loss_key, doc="The loss's part of a cache key.")
    curve_samples = property(lambda self: self.settings.curve_samples, doc="Monte-Carlo samples per S/N.")
    mc_samples = property(lambda self: self.settings.mc_samples, doc="Monte-Carlo samples at one S/N.")
    seed = property(lambda self: self.settings.seed, doc="The Monte-Carlo's root seed.")

    @property
    def long_mc(self) -> bool:
        """Whether the problem's Monte-Carlo takes minutes (a solve is not quick, :func:`solves_at_once`): it waits
        for its button and says how long it will take."""
        return self.problem is not None and not solves_at_once(self.problem)

    def wants(self, kind: str) -> bool:
        """Whether the job ``kind`` is needed now."""
        if kind == "evidence":
            return self.evidence is not None
        if kind == "problem":
            return self.build is not None
        return self.problem is not None and kind in _TAB_JOBS[self.tab]


def plan(settings: GPSettings, key: tuple | None = None, problem: problems.RegressionProblem | None = None, *,
         evidence: EvidenceRequest | None = None, build: ProblemBuild | None = None) -> JobInputs:
    """The jobs of one refresh, planned from the form's ``settings`` alone (a pure function: it reads no control and
    computes nothing): the open tab's ``problem`` (cache key ``key``), else the ``evidence`` maximum to find first or
    the low-rank problem to ``build``. Which jobs run is :meth:`JobInputs.wants`, their keys the ``JOBS`` rows'."""
    return JobInputs(settings, key, problem, evidence, build)


def prefill(inputs: JobInputs) -> None:
    """Fill the caches with what a quick problem (:func:`solves_at_once`) needs at once, on the session's thread,
    so that the jobs show it in this refresh: ADATAP at S/N (~0.1 s), or in the 'Test inputs' tab the theory and the
    linear response at the held-out inputs (30-40 ms on boston). A slow problem's jobs compute them off the loop."""
    problem = inputs.problem
    if problem is None or not solves_at_once(problem):
        return
    if inputs.tab == HOLDOUT_TAB:
        holdout_theory_of(inputs.key, problem, inputs.s_over_n)
        holdout_ij_of(inputs.key, problem, inputs.s_over_n)
    else:
        solution_of(inputs.key, problem, inputs.s_over_n)


def _needed(kind: str, key):
    """``key`` of the job ``kind`` when the inputs want it, else None (left as it is)."""
    return lambda i: key(i) if i.wants(kind) else None


def _solve(i: JobInputs, job: Job) -> replica.ReplicaSolution:
    """ADATAP at the current S/N (eqs. 54-59), cached; on the session's thread for a dense problem (its refresh fills
    the cache first), on the job's for a low-rank one (seconds at N = 53,940)."""
    job.report(0.0, f"solving the theory at S/N = {i.s_over_n:g} ({_kernel_words(i.problem)}N = {i.problem.n:,})")
    return solution_of(i.key, i.problem, i.s_over_n, Hooks(should_stop=job.should_stop))


def _not_run(i: JobInputs, samples: int) -> str:
    """What a Monte-Carlo job that waits for its button says; where it takes minutes, how long it will take."""
    if not i.long_mc:
        return NOT_RUN_MESSAGE
    minutes = mc_seconds(i.problem, samples) / 60
    # short: it stands beside the progress bar in the tab's job line (at 1280 px a longer one ran off the screen)
    return f"Waits for 'Run Monte-Carlo': {samples:,} refits, about {max(minutes, 0.1):.2g} CPU minutes."


def solution_of(key: tuple, problem: problems.RegressionProblem, v: float, hooks: Hooks | None = None) -> replica.ReplicaSolution:
    """ADATAP of ``problem`` (cache key ``key``) at S = v·N, from the cache the sessions share or solved."""
    return _SOLUTIONS.get_or_compute((key, round(v, 12)), lambda: replica.solve_replica(  # hooks stop a superseded job
        problem.operator, problem.y, problem.noise_var, problem.sample_size(v), hooks=hooks))


def holdout_theory_of(key: tuple, problem: problems.RegressionProblem, v: float) -> HoldoutTheory:
    """The theory's bootstrap mean and variance at the held-out inputs (eq. 48), cached."""
    return _HOLDOUT_THEORY.get_or_compute(
        (key, v), lambda: stages.holdout_theory(problem, v, solution=solution_of(key, problem, v)))


def holdout_ij_of(key: tuple, problem: problems.RegressionProblem, v: float):
    """The first-order infinitesimal-jackknife mean and variance at the held-out inputs, cached."""
    return _HOLDOUT_IJ.get_or_compute((key, v), lambda: stages.holdout_linear_response(problem, v))


def _holdout_ij(i: JobInputs):
    """The jackknife at the held-out inputs (its derivatives at every training row: on a cluster, refused above
    ``cluster.IJ_HOLDOUT_ENTRIES`` numbers with one sentence in the job's line)."""
    if cluster.is_chunked(i.problem):
        cluster.check_holdout_ij(i.problem)
    return stages.holdout_linear_response(i.problem, i.s_over_n)


def _distribution(i: JobInputs, executor, job: Job) -> experiments.DistributionComparison:
    if cluster.is_chunked(i.problem):  # the L1 map on a sample of rows, on the chunks
        return cluster.distribution(i.problem, i.s_over_n, i.mc_samples, i.seed,
                                    Hooks(progress=job.report, should_stop=job.should_stop))
    return experiments.distribution_comparison(i.problem, i.s_over_n, i.mc_samples,
                                               bin_width=scaled_bin_width(i.problem.y), rng=i.seed, executor=executor,
                                               hooks=Hooks(progress=job.report, should_stop=job.should_stop))


def _holdout(i: JobInputs, executor, job: Job) -> experiments.HoldoutComparison:
    if cluster.is_chunked(i.problem):
        return cluster.holdout(i.problem, i.s_over_n, i.mc_samples, i.seed,
                               Hooks(progress=job.report, should_stop=job.should_stop))
    return experiments.holdout_comparison(i.problem, i.s_over_n, i.mc_samples, rng=i.seed, executor=executor,
                                          hooks=Hooks(progress=job.report, should_stop=job.should_stop))


#: The jobs of the GP tabs. The Monte-Carlo ones wait for Run unless ``auto_mc`` is on and are the ones Cancel
#: stops; partial redraws through HoloViews share the server's loop and are spaced by the gate, the learning curve's
#: are patched in place (views.common.patching, ~15 ms) and drawn at once.
JOBS = (
    # the low-rank problem's features Φ (Nyström: 0.5 s at N = 53,940, m = 256), off the event loop; a dense problem
    # is built in the refresh (its K: 0.06 s at 1,000 rows)
    JobSpec("problem", None, _PROBLEMS, key=_needed("problem", lambda i: i.build.key),
            compute=lambda state, i, job: i.build.build(job), cancellable=False),
    # dense: solved on the session's thread in ~0.1 s (the refresh fills the cache, so this shows it at once);
    # low-rank: seconds, off the event loop
    JobSpec("solution", "solution", _SOLUTIONS, key=_needed("solution", lambda i: (i.key, round(i.s_over_n, 12))),
            compute=lambda state, i, job: _solve(i, job), cancellable=False),
    JobSpec("holdout_theory", "holdout_theory", _HOLDOUT_THEORY,
            key=_needed("holdout_theory", lambda i: (i.key, i.s_over_n)),
            compute=lambda state, i, job: holdout_theory_of(i.key, i.problem, i.s_over_n), cancellable=False),
    JobSpec("holdout_ij", "holdout_ij", _HOLDOUT_IJ, key=_needed("holdout_ij", lambda i: (i.key, i.s_over_n)),
            compute=lambda state, i, job: _holdout_ij(i), cancellable=False),
    JobSpec("theory", "theory_curve", _THEORY, key=_needed("theory", lambda i: (i.key, i.loss_key)),
            compute=lambda state, i, job: _theory_curve(i.problem, i.key, i.loss, i.loss_params, job),
            cancellable=False),
    # ε_IJ and the LOO limit along THEORY_GRID: one factorisation per S/N, yet 15 of them take 0.45-0.9 s on boston
    # (N = 506, one core), so a job of their own, off the event loop, drawn when done
    JobSpec("linear_response", "linear_response", _LINEAR_RESPONSE,
            key=_needed("linear_response", lambda i: (i.key, i.loss_key)),
            compute=lambda state, i, job: stages.linear_response_curve(i.problem, theory_grid(i.problem), loss=i.loss,
                                                                       loss_params=i.loss_params,
                                                                       ij=solves_at_once(i.problem)),
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
    JobSpec(HOLDOUT_TAB, "holdout_mc", _HOLDOUTS,
            key=_needed(HOLDOUT_TAB, lambda i: (i.key, i.s_over_n, i.mc_samples, i.seed)),
            compute=lambda state, i, job: _holdout(i, state.executor, job), optional=True, gated=True,
            not_run=lambda i: _not_run(i, i.mc_samples)),
    JobSpec("evidence", "evidence", _EVIDENCE, key=_needed("evidence", lambda i: i.evidence.key),
            compute=lambda state, i, job: _evidence_fit(i.evidence.data, job, ard=i.evidence.ard, rank=i.evidence.rank),
            cancellable=False),
)



def _evidence_fit(data: datasets.Dataset, job: Job, *, ard: bool = False, rank: int | None = None):
    """The evidence maximum on at most EVIDENCE_ROWS rows of ``data`` (a random subsample when it has more), with one
    lengthscale per input column if ``ard``: the core's :func:`~explorer.gp_bootstrap.evidence.fit_to_data`, which the
    command line calls too; with a ``rank`` (large data), the evidence of the rank-m Nyström GP on all rows
    (:func:`~explorer.gp_bootstrap.evidence.maximum_evidence_lowrank`, landmarks drawn with SUBSAMPLE_SEED),
    as ``explorer learning-curve --rank M --seed 0`` fits it."""
    hooks = Hooks(progress=job.report, should_stop=job.should_stop)
    if rank is not None:
        data = cluster.evidence_rows(data)  # above LOW_RANK_ROWS (a cluster): a random subsample of its rows
        return gp_evidence.maximum_evidence_lowrank(data.inputs, data.targets, rank=rank, rng=SUBSAMPLE_SEED,
                                                    ard=ard, hooks=hooks)
    return gp_evidence.fit_to_data(data.inputs, data.targets, ard=ard, max_rows=EVIDENCE_ROWS, seed=SUBSAMPLE_SEED,
                                   hooks=Hooks(progress=job.report, should_stop=job.should_stop))




#: The caches the state's data and problems use (the others are the jobs' own).
PROBLEMS, DATA, EVIDENCE = _PROBLEMS, _DATA, _EVIDENCE
