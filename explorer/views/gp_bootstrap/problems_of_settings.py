"""The regression problem of the Gaussian-process pages' settings: its cache key, the kernel of the controls, the
dense problem (built at once) and the builder of the low-rank one (built by a job), the held-out warning and the
bound on the Monte-Carlo's arrays.

:class:`GPProblems` is a component of :class:`~explorer.views.gp_bootstrap.state.GPBootstrapState`: it reads the
state's controls and its data (:class:`~explorer.views.gp_bootstrap.data.GPData`).
"""

from __future__ import annotations

import numpy as np

from explorer import kernels
from explorer.chunks import item_generator, root_seed
from explorer.gp_bootstrap import experiments
from explorer.gp_bootstrap import problem as problems
from explorer.views.common.state.declarations import applies, invalidating
from explorer.views.common.state.jobs import Job
from explorer.views.gp_bootstrap import cluster
from explorer.views.gp_bootstrap.data import check_holdout
from explorer.views.gp_bootstrap.jobs import PROBLEMS, GPSettings, JobInputs, ProblemBuild, plan, prefill
from explorer.views.gp_bootstrap.settings import HOLDOUT_TAB, MAX_MC_VALUES, OUTPUTS, SUBSAMPLE_SEED

__all__ = ["GPProblems"]



def check_rank_rows(rank: int, rows: int, holdout: int = 0) -> None:
    """The app's one rule for the rank m of the low-rank mode: at most the training rows (``rows`` − ``holdout``);
    else a ValueError that names the controls to change (the problem and the evidence fit refuse alike)."""
    if rank > rows - holdout:
        held = f", {holdout} held out" if holdout else ""
        raise ValueError(f"Rank m = {rank} is above the {rows - holdout:,} training rows ({rows:,} rows{held}): lower "
                         f"'Rank m (large data)' to at most {rows - holdout:,}" + (", or lower 'Held-out rows'."
                                                                                    if holdout else "."))

class GPProblems:
    """The problems of one GP state's (``state``) settings."""

    def __init__(self, state):
        self.state = state

    def kernel_values(self) -> dict:
        """The values of the kernel function of the current controls, by name: the controls declared to make the
        kernel stale that apply to the chosen kernel (l² of the paper kernel; ℓ, σ_f², and α of rq or the period
        of the periodic kernel), with ℓ_1..ℓ_d in place of ℓ while one lengthscale per input (ARD) is used."""
        s = self.state
        values = {name: getattr(s, name) for name in invalidating(s, "kernel function") if applies(s, name)}
        if s.ard_lengthscales is not None:
            values["lengthscale"] = s.ard_lengthscales
        return values

    def kernel_key(self) -> tuple:
        """The kernel's part of a problem's key: its name and every value."""
        values = self.kernel_values().items()
        return (self.state.kernel, *((name, tuple(np.atleast_1d(np.asarray(v, dtype=float)).tolist()))
                                     for name, v in values))

    def key(self, holdout: int) -> tuple:
        """The problem's cache key: data, kernel, σ², held-out rows and (low-rank path) the rank."""
        s = self.state
        rank = int(s.rank) if s.data.large() else None  # the rank matters on the low-rank path only
        return (s.data.key(), self.kernel_key(), float(s.noise_var), int(holdout), rank)

    def covariance(self, X: np.ndarray) -> kernels.Kernel:
        """The kernel of the current controls for training inputs ``X`` (the paper's scales with their sd)."""
        s, values = self.state, self.kernel_values()
        if s.kernel == "paper":
            return kernels.paper_rbf(X, scale="sd", **values)
        return kernels.make_kernel(s.kernel, X.shape[1], **values)

    def _dense(self, holdout: int) -> problems.RegressionProblem:
        """The dense problem (its N × N kernel matrix: 0.06 s at 1,000 rows, on the session's thread)."""
        s = self.state
        data = s.data.load()
        check_holdout(data, holdout)
        return problems.regression_problem(data, self.covariance(data.inputs[holdout:]), s.noise_var, holdout=holdout)

    def warn_holdout(self, holdout: int, rows: int, name: str) -> None:
        """Warn when at least half of the ``rows`` are held out (the bootstrap then trains on the smaller part)."""
        s = self.state
        text = ""
        if 2 * holdout >= rows:
            text = (f"Held-out rows: {holdout} of the {rows} rows of {name} are held out, so the bootstrap trains "
                    f"on N = {rows - holdout} only. Lower 'Held-out rows' below {(rows + 1) // 2} to train on the "
                    "larger part.")
        s.tell("holdout", text)

    def get(self, holdout: int = 0) -> tuple[tuple, problems.RegressionProblem | None]:
        """The problem of the current settings and its key; None for a low-rank problem not built yet (the "problem"
        job builds it from :meth:`builder`)."""
        key = self.key(holdout)
        if key[-1] is not None:  # low-rank
            return key, PROBLEMS.get(key)
        return key, PROBLEMS.get_or_compute(key, lambda: self._dense(holdout))

    def builder(self, holdout: int):
        """``build(job)``: the low-rank problem of the current settings (read now, on the session's thread); on a
        cluster given by address, its rows in chunks there (:func:`~explorer.views.gp_bootstrap.cluster.chunked_problem`,
        the engine reached from the job's thread)."""
        s = self.state
        data, rank, noise_var = s.data.load(), int(s.rank), float(s.noise_var)
        check_holdout(data, holdout)
        check_rank_rows(rank, data.n, holdout)
        kernel = self.covariance(data.inputs[holdout:])
        on_cluster = cluster.scheduler_given(s.client)

        def build(job: Job) -> problems.RegressionProblem:
            if on_cluster:  # the rows in chunks on the cluster, Φ made there (cluster.py)
                job.report(0.0, f"sending {data.n - holdout:,} rows to the Dask cluster and building the low-rank "
                                f"kernel K ≈ ΦΦᵀ there ({rank} Nyström landmarks)")
                return cluster.chunked_problem(data, kernel, noise_var, rank, holdout, s.engine)
            job.report(0.0, f"building the low-rank kernel K ≈ ΦΦᵀ ({rank} Nyström landmarks of {data.n - holdout:,} "
                            "rows)")
            return problems.regression_problem(data, kernel, noise_var, rank=rank, rng=SUBSAMPLE_SEED, holdout=holdout)
        return build

    def check_mc_size(self, n: int, samples: int) -> None:
        """ValueError before a Monte-Carlo job whose (B, N) arrays would exceed MAX_MC_VALUES numbers (B: the
        ``samples`` of the form; N: the inputs kept, ``experiments.MAP_INPUTS`` of a larger problem)."""
        n = n if n <= experiments.MAP_ALL_ROWS else experiments.MAP_INPUTS
        if samples * n > MAX_MC_VALUES:
            raise ValueError(f"{samples:,} Monte-Carlo samples at N = {n:,} inputs would keep {samples * n:,} "
                             f"numbers twice (occupations and predictions); the server keeps at most "
                             f"{MAX_MC_VALUES:,}. Lower 'MC samples (distribution, test inputs)' to at most "
                             f"{MAX_MC_VALUES // n:,}.")

    def prepare(self, settings: GPSettings) -> JobInputs:
        """The open tab's problem (``settings.held_out`` rows held out) shown, its Monte-Carlo's size checked, and the
        jobs planned from the form's ``settings`` (:func:`~explorer.views.gp_bootstrap.jobs.plan`; a low-rank problem
        not built yet: its builder's job)."""
        s, holdout = self.state, settings.held_out
        key, problem = self.get(holdout)
        if problem is None:
            return self.building(settings, key, holdout)
        if settings.tab == HOLDOUT_TAB:
            self.warn_holdout(holdout, problem.n + holdout, problem.name)
        else:  # the training problem is the one the figures show
            s.param.input_index.bounds = (0, problem.n - 1)
            if s.input_index > problem.n - 1:
                s._assign("input_index", problem.n - 1)
            s._assign("problem", problem)
        inputs = plan(settings, key, problem)
        prefill(inputs)
        if settings.tab != "curve":
            self.check_mc_size(problem.n, settings.mc_samples)
        return inputs

    def building(self, settings: GPSettings, key: tuple, holdout: int) -> JobInputs:
        """Show nothing while the "problem" job builds the low-rank features; what it reads is taken now."""
        s = self.state
        for name in OUTPUTS:
            s._assign(name, None)
        return plan(settings, build=ProblemBuild(key, self.builder(holdout)))

    def mapped_inputs(self) -> np.ndarray | None:
        """The training inputs the distribution and L1 pages cover when the problem has more than
        ``experiments.MAP_ALL_ROWS`` rows (a random sample of ``experiments.MAP_INPUTS``, drawn from ``seed`` as
        the Monte-Carlo draws them, ``experiments.distribution_comparison``); None when they cover every input."""
        problem = self.state.problem
        if problem is None or problem.n <= experiments.MAP_ALL_ROWS:
            return None
        return experiments.map_inputs(problem.n, item_generator(root_seed(int(self.state.seed)), 2, 0))
