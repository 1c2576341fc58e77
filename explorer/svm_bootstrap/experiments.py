"""Theory-vs-Monte-Carlo comparisons of [MO03b] (hard-margin SVM), shared by the CLI, views and notebooks.

Each function takes an :class:`~explorer.svm_bootstrap.problem.SVMProblem` (standardised inputs, labels, the
kernel, the merged sites and their kernel matrix), runs the replica/ADATAP theory (``svm_replica``) and the
Monte-Carlo bootstrap (``svm``) on it, and returns a frozen result object with ``as_dict()`` for JSON:
:func:`svm_learning_curve` joins the stages of :mod:`~explorer.svm_bootstrap.stages` (Fig. 1 left),
:func:`svm_field_comparison` the field distribution at test inputs (Fig. 1 right).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from explorer.chunks import Executor, SeedLike, root_seed
from explorer.progress import NO_HOOKS, Hooks, best_time
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import svm_replica
from explorer.svm_bootstrap.problem import SVMProblem
from explorer.svm_bootstrap.stages import TheoryPoint, mc_curve, theory_curve
from explorer.validation import holdout_iv, mc_curve_grid

__all__ = ["SVMCurveRow", "SVMLearningCurve", "svm_learning_curve", "SVMFieldComparison", "svm_field_comparison",
           "time_theory_and_training", "FitTimes"]


@dataclass(frozen=True)
class FitTimes:
    """Wall-clock seconds of one cold ADATAP solve at S = N and of one SVM fit on all of D0.

    Attributes
    ----------
    theory_seconds : float
        The replica theory (``solve_svm_replica``), best of the repeats.
    training_seconds : float
        One hard-margin SVM fit (``fit_hard_margin``), best of the repeats.
    """

    theory_seconds: float
    training_seconds: float


def time_theory_and_training(problem: SVMProblem, *, tol: float = 1e-6, repeats: int = 3) -> FitTimes:
    """Time a cold ADATAP solve at S = N and one SVM fit on all of D0, in seconds.

    Both are the best of ``repeats`` runs measured back to back, so that their ratio is meaningful.
    A theory solve that fails to converge is timed all the same.

    Parameters
    ----------
    problem : SVMProblem
        The data set, kernel matrix and sites.
    tol : float
        Tolerance of the replica solve.
    repeats : int
        Runs of each; the fastest counts.

    Returns
    -------
    FitTimes
        The two times in seconds.
    """
    def theory():
        try:
            svm_replica.solve_svm_replica(problem.K, problem.y_sites, problem.n, counts=problem.sites.counts, tol=tol)
        except svm_replica.ConvergenceError:
            pass

    return FitTimes(theory_seconds=best_time(theory, repeats),
                    training_seconds=best_time(lambda: svm.fit_hard_margin(problem.K, problem.y_sites), repeats))


# ---------------------------------------------------------------------------------------------
# learning curve (Fig. 1, left)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SVMCurveRow(TheoryPoint):
    """One bootstrap size: theory eq. (17) (None when unconverged), convergence report and MC ± se.

    The fields of :class:`TheoryPoint`, in its order, then the Monte-Carlo estimate.
    """

    mc_mean: float
    mc_se: float
    mc_samples: int


@dataclass(frozen=True)
class SVMLearningCurve:
    """Bootstrap classification error ε(S), theory vs MC ([MO03b], Fig. 1 left), and the S → ∞ limits.

    ``loo_approximate`` is eq. (20), the limit of the theory; ``loo_exact`` the literal leave-one-out error,
    the limit of the Monte-Carlo bootstrap. Timing in seconds, measured in this run.
    """

    problem: str
    n: int
    n_sites: int
    lengthscale: object
    rows: tuple[SVMCurveRow, ...]
    loo_approximate: float
    loo_exact: float | None
    theory_s: float
    svm_train_s: float

    def as_dict(self) -> dict:
        """The learning curve for JSON (non-finite numbers in the rows as None).

        Returns
        -------
        dict
            ``problem``, ``n``, ``n_sites``, ``lengthscale``, ``rows`` (one dict of :class:`SVMCurveRow` fields
            per S), ``loo`` (``approximate_eq20``, ``exact``) and ``timing`` (``theory_s``, ``svm_train_s`` and
            their ratio ``theory_in_svm_fits``).
        """
        ls = self.lengthscale
        return {
            "problem": self.problem, "n": self.n, "n_sites": self.n_sites,
            "lengthscale": ls.tolist() if isinstance(ls, np.ndarray) else ls,
            "rows": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(row).items()}
                     for row in self.rows],
            "loo": {"approximate_eq20": self.loo_approximate, "exact": self.loo_exact},
            "timing": {"theory_s": self.theory_s, "svm_train_s": self.svm_train_s,
                       "theory_in_svm_fits": self.theory_s / self.svm_train_s},
        }


def svm_learning_curve(
    problem: SVMProblem,
    s_over_n: Sequence[float],
    mc_samples: int,
    *,
    rng: SeedLike = None,
    tol: float = 1e-6,
    exact_loo: bool = True,
    executor: Executor | None = None,
    hooks: Hooks | None = None,
) -> SVMLearningCurve:
    """ε(S) from the ADATAP theory (warm-started along S; a failure is reported per row, not raised), the
    Monte-Carlo bootstrap with standard errors, eq. (20) and (optionally) the literal leave-one-out error.

    ``theory_s`` is a cold theory solve at S = N and ``svm_train_s`` one SVM fit on all of D0.

    Parameters
    ----------
    problem : SVMProblem
        Data rows, sites and kernel matrix.
    s_over_n : sequence of float, length n_S
        Bootstrap sizes per data row, S/N (positive).
    mc_samples : int
        Monte-Carlo bootstrap samples per S.
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo bootstrap (``svm.bootstrap_learning_curve``: samples keyed by S/N).
    tol : float
        Tolerance of the ADATAP solves (:func:`solve_svm_replica`).
    exact_loo : bool
        Also compute the literal leave-one-out error (one SVM fit per support vector).
    executor : Executor, optional
        Where the Monte-Carlo chunks run (default: this process; ``explorer.runtime.engine`` for Dask).
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    SVMLearningCurve
        One :class:`SVMCurveRow` per S/N in the order given, the two leave-one-out limits and the timings.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = mc_curve_grid(s_over_n, mc_samples, per="data row")
    root = root_seed(rng)
    hooks = hooks or NO_HOOKS
    theory = theory_curve(problem, grid, tol=tol, exact_loo=exact_loo, hooks=hooks.sub(0.0, 0.1))
    mc = mc_curve(problem, grid, mc_samples, rng=root, executor=executor, hooks=hooks.sub(0.1, 0.9, "Monte-Carlo"))
    rows = [SVMCurveRow(float(v), point.S, point.theory, point.converged, point.n_iter, point.residual,
                        mc_point.mc_mean, mc_point.mc_se, mc_samples)
            for v, point, mc_point in zip(grid, theory.points, mc.points)]
    times = time_theory_and_training(problem, tol=tol)
    hooks.report(1.0, "done")
    return SVMLearningCurve(problem.name, problem.n, problem.n_sites, problem.kernel.params.get("lengthscale"),
                            tuple(rows), theory.loo_approximate, theory.loo_exact, times.theory_seconds,
                            times.training_seconds)


# ---------------------------------------------------------------------------------------------
# field distribution at test inputs (Fig. 1, right)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SVMFieldComparison:
    """Bootstrap distribution of the internal field at M test inputs: theory (eqs. 18-19) vs MC samples.

    ``theory_mean``, ``theory_var``, ``theory_p_negative`` and ``mc_p_negative`` (± ``mc_p_negative_se``)
    have shape (M,); ``mc_fields`` has shape (mc_samples, M). p(−1|x) is the probability that the
    bootstrapped SVM predicts −1 at x.
    """

    problem: str
    s_over_n: float
    X_test: np.ndarray
    y_test: np.ndarray | None
    theory_mean: np.ndarray
    theory_var: np.ndarray
    theory_p_negative: np.ndarray
    converged: bool
    residual: float
    mc_fields: np.ndarray
    mc_p_negative: np.ndarray
    mc_p_negative_se: np.ndarray

    def as_dict(self) -> dict:
        """The comparison for JSON (MC fields summarised by their mean and variance).

        Returns
        -------
        dict
            ``problem``, ``s_over_n``, ``converged``, ``residual``, ``y_test``, the theory's ``theory_mean``,
            ``theory_var`` and ``theory_p_negative``, and the MC ``mc_mean``, ``mc_var`` (ddof 1),
            ``mc_p_negative`` and ``mc_p_negative_se``, lists of length M.
        """
        return {"problem": self.problem, "s_over_n": self.s_over_n, "converged": self.converged,
                "residual": self.residual,
                "y_test": None if self.y_test is None else self.y_test.tolist(),
                "theory_mean": self.theory_mean.tolist(), "theory_var": self.theory_var.tolist(),
                "theory_p_negative": self.theory_p_negative.tolist(),
                "mc_mean": self.mc_fields.mean(axis=0).tolist(), "mc_var": self.mc_fields.var(axis=0, ddof=1).tolist(),
                "mc_p_negative": self.mc_p_negative.tolist(), "mc_p_negative_se": self.mc_p_negative_se.tolist()}


def svm_field_comparison(
    problem: SVMProblem,
    s_over_n: float,
    mc_samples: int,
    *,
    X_test: np.ndarray | None = None,
    rng: SeedLike = None,
    tol: float = 1e-6,
    executor: Executor | None = None,
    hooks: Hooks | None = None,
) -> SVMFieldComparison:
    """Theory (eq. 19, Gaussian) and MC bootstrap fields with p(−1|x) at test inputs (default: the holdout).

    Parameters
    ----------
    problem : SVMProblem
        Data rows, sites and kernel matrix.
    s_over_n : float
        Bootstrap size per data row, S/N.
    mc_samples : int
        Monte-Carlo bootstrap samples.
    X_test : ndarray of shape (M, d), optional
        Standardised test inputs; default ``problem.X_test`` (then ``y_test`` is kept too).
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo bootstrap (``svm.bootstrap_fields``).
    tol : float
        Tolerance of the ADATAP solve.
    executor, hooks
        As in :func:`svm_learning_curve`.

    Returns
    -------
    SVMFieldComparison
        Theory mean, variance and p(−1|x) (eqs. 18-19), the MC fields of shape (mc_samples, M) and the MC
        p(−1|x) with standard errors.

    Raises
    ------
    ValueError
        If there are no test inputs or ``s_over_n`` is not a positive finite number.
    svm_replica.ConvergenceError
        If the theory does not converge (its ``last`` iterate attached).
    """
    X_test, v = holdout_iv(X_test, problem.X_test, s_over_n, per="data row")
    K_cross = problem.cross(X_test)
    hooks = hooks or NO_HOOKS
    hooks.report(0.0, "solving the replica theory")
    sol = svm_replica.solve_svm_replica(problem.K, problem.y_sites, problem.sample_size(v), counts=problem.sites.counts,
                                        tol=tol)
    theory = svm_replica.fields_at(sol, problem.K, K_cross, problem.k_diag(X_test))
    fields = svm.bootstrap_fields(problem.K, problem.y_sites, problem.sample_size(v), mc_samples,
                                  row_site=problem.sites.row_site, K_test=K_cross, rng=rng, executor=executor,
                                  hooks=hooks.sub(0.05, 0.95, "Monte-Carlo"))
    mc = svm.probability_negative(fields)
    hooks.report(1.0, "done")
    y_test = problem.y_test if X_test is problem.X_test else None
    return SVMFieldComparison(problem.name, v, X_test, y_test, theory.mean, theory.var,
                              svm_replica.probability_negative(theory), sol.converged, sol.residual, fields.test,
                              mc.value, mc.se)
