"""Theory-vs-Monte-Carlo experiments of seed 004 (hard-margin SVM), shared by the CLI, views and notebooks.

Each function takes an :class:`SVMProblem` (standardised inputs, labels, the kernel, the merged sites and
their kernel matrix), runs the replica/ADATAP theory (``svm_replica``) and the Monte-Carlo bootstrap
(``svm``) on it, and returns a frozen result object with ``as_dict()`` for JSON.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from explorer.bootstrap.problem import KernelProblem
from explorer.chunks import Executor, SeedLike, root_seed
from explorer.datasets import Dataset, holdout_split
from explorer.kernels import Kernel, SquaredExponential
from explorer.progress import NO_HOOKS, Hooks, best_time
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import replica as svm_replica
from explorer.validation import holdout_iv, mc_curve_grid, s_over_n_grid

__all__ = [
    "BROAD_LENGTHSCALE",
    "SVMProblem",
    "svm_problem",
    "TheoryPoint",
    "theory_learning_curve",
    "SVMTheoryCurve",
    "theory_curve",
    "SVMCurvePoint",
    "SVMCurveMC",
    "mc_curve",
    "SVMCurveRow",
    "SVMLearningCurve",
    "svm_learning_curve",
    "SVMFieldComparison",
    "svm_field_comparison",
    "time_theory_and_training",
    "FitTimes",
]

#: The "broad" kernel of the issue for crabs and wisconsin: L = √10 on standardised inputs.
BROAD_LENGTHSCALE = math.sqrt(10.0)


@dataclass(frozen=True)
class SVMProblem(KernelProblem):
    """A hard-margin SVM bootstrap problem: data rows D0, kernel, merged sites and K on the sites.

    ``X``, ``y`` hold the N data rows (standardised inputs); ``sites`` merges identical rows, and ``K`` is
    the kernel matrix of the distinct inputs ``X[sites.index]`` (the :attr:`kernel_inputs`, so ``cross`` is
    K(X_other, X_sites)). ``X_test``, ``y_test``: held-out rows.
    """

    sites: svm.Sites
    K: np.ndarray = field(repr=False)
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @property
    def n_sites(self) -> int:
        return self.sites.n_sites

    @property
    def X_sites(self) -> np.ndarray:
        return self.X[self.sites.index]

    @property
    def y_sites(self) -> np.ndarray:
        return self.sites.y

    @property
    def kernel_inputs(self) -> np.ndarray:
        """The sites' inputs ``X_sites``: K is the kernel matrix of the distinct inputs."""
        return self.X_sites

    def k_diag(self, X_other: np.ndarray) -> np.ndarray:
        """K(x, x) at other inputs (the prior variance of the field, needed by eq. 19).

        Parameters
        ----------
        X_other : ndarray of shape (M, d)
            As in :meth:`cross`.

        Returns
        -------
        ndarray of shape (M,)
            K(x_m, x_m).
        """
        return self.kernel.diag(np.atleast_2d(X_other))


def svm_problem(dataset: Dataset, lengthscale: float | Sequence[float] = BROAD_LENGTHSCALE, *,
                holdout: int = 0, standardize: bool = True, kernel: Kernel | None = None) -> SVMProblem:
    """Build a problem from a classification dataset.

    Inputs are standardised (mean 0, sample sd 1) over all rows first; the kernel is
    K(x, x') = exp(−Σ_j (x_j − x'_j)²/(2 L_j²)) with one lengthscale or one per input (or ``kernel``).
    ``holdout`` > 0 keeps the first ``holdout`` rows as test inputs; the rest is D0.

    Parameters
    ----------
    dataset : Dataset
        A two-class data set (labels -1 / +1).
    lengthscale : float or sequence of float
        L, one for all inputs or one per input; default √10 (``BROAD_LENGTHSCALE``). Ignored with ``kernel``.
    holdout : int
        Number of leading rows kept as test inputs (``X_test``, ``y_test``); 0 keeps none.
    standardize : bool
        Standardise the inputs (over all rows, holdout included) before anything else.
    kernel : Kernel, optional
        Covariance function to use instead of the squared exponential with ``lengthscale``.

    Returns
    -------
    SVMProblem
        The N data rows, their merged sites (``svm.merge_identical``) and K of shape (n_sites, n_sites).

    Raises
    ------
    ValueError
        If the data set is not a classification task, ``holdout`` leaves fewer than 2 training rows or is
        negative, or ``lengthscale`` is not one positive number or d of them.
    """
    if dataset.task != "classification":
        raise ValueError(f"Dataset {dataset.name!r} is a {dataset.task} task; the SVM bootstrap needs two classes "
                         "(labels -1/+1). Load a classification dataset or give --target a two-class column.")
    data = dataset.standardized() if standardize else dataset
    X, y, X_test, y_test = holdout_split(data, holdout, 2, "two")
    if kernel is None:
        kernel = SquaredExponential(lengthscale=_lengthscale_iv(lengthscale, data.d))
    sites = svm.merge_identical(X, y)
    K = kernel(X[sites.index])
    return SVMProblem(dataset.name, X, y, kernel, sites, K, X_test, y_test)


def _lengthscale_iv(lengthscale, d: int):
    L = np.atleast_1d(np.asarray(lengthscale, dtype=float))
    if L.ndim != 1 or L.size not in (1, d) or not np.all(np.isfinite(L) & (L > 0)):
        raise ValueError(f"`lengthscale` must be one positive number or {d} (one per input), got "
                         f"{np.asarray(lengthscale).tolist()}.")
    return float(L[0]) if L.size == 1 else L


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
class TheoryPoint:
    """The theory at one bootstrap size: ε(S) of eq. (17), or None when the solver did not converge."""

    s_over_n: float
    S: float
    theory: float | None
    converged: bool
    n_iter: int
    residual: float


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
    """Bootstrap classification error ε(S), theory vs MC (seed 004, Fig. 1 left), and the S → ∞ limits.

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
        Root seed of the Monte-Carlo bootstrap (``svm.bootstrap_learning_curve``: group k for the k-th S/N).
    tol : float
        Tolerance of the ADATAP solves (:func:`solve_svm_replica`).
    exact_loo : bool
        Also compute the literal leave-one-out error (one SVM fit per support vector).
    executor : Executor, optional
        Where the Monte-Carlo chunks run (default: this process; ``explorer.engine`` for Dask).
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


def theory_learning_curve(problem: SVMProblem, s_over_n: Sequence[float], *, tol: float = 1e-6,
                          max_iter: int = 200, hooks: Hooks | None = None) -> tuple[TheoryPoint, ...]:
    """ε(S) of the ADATAP theory alone (cheap: for the theory line on a fine grid of S/N).

    Solved in ascending S with warm starts; an unconverged warm start is retried cold. A failure is
    reported in the point (``theory`` None, ``converged`` False, the residual), never raised.

    Parameters
    ----------
    problem, s_over_n
        As in :func:`svm_learning_curve`.
    tol : float
        Tolerance of the ADATAP solves.
    max_iter : int
        Largest number of sweeps per solve.
    hooks : Hooks, optional
        Progress and a stop checked before each S/N; ``publish`` gets the points solved so far (in the order
        given) after each.

    Returns
    -------
    tuple of TheoryPoint, length n_S
        ε(S) of eq. (17) and the convergence record at every S/N, in the order given.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value.
    """
    grid = s_over_n_grid(s_over_n, per="data row")
    out: dict[int, TheoryPoint] = {}
    previous = None
    hooks = hooks or NO_HOOKS
    for k, j in enumerate(np.argsort(grid)):
        hooks.check(k, grid.size, "values of S/N")
        hooks.report(k / grid.size, f"replica theory at S/N = {grid[j]:g} ({k + 1}/{grid.size})")
        S = float(grid[j] * problem.n)
        sol = _solve_or_last(problem, S, tol, max_iter, previous)
        if (sol is None or not sol.converged) and previous is not None:
            sol = _solve_or_last(problem, S, tol, max_iter, None)  # cold retry
        if sol is None:
            out[int(j)] = TheoryPoint(float(grid[j]), S, None, False, 0, math.inf)
        else:
            value = svm_replica.classification_error(sol) if sol.converged else None
            out[int(j)] = TheoryPoint(float(grid[j]), S, value, sol.converged, sol.n_iter, sol.residual)
            previous = sol if sol.converged else previous
        hooks.publish(tuple(out[i] for i in sorted(out)))
    return tuple(out[j] for j in range(grid.size))


@dataclass(frozen=True)
class SVMTheoryCurve:
    """Theory ε(S) (eq. 17) on the grid computed so far, and the S → ∞ levels once known.

    ``loo_approximate`` is eq. (20), the limit of the theory; ``loo_exact`` the literal leave-one-out
    error, the limit of the Monte-Carlo bootstrap (None until computed, or when not asked for).
    """

    points: tuple[TheoryPoint, ...]
    grid: tuple[float, ...]
    n: int
    loo_approximate: float | None = None
    loo_exact: float | None = None

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid) and self.loo_exact is not None

    @property
    def unconverged(self) -> tuple[TheoryPoint, ...]:
        return tuple(p for p in self.points if not p.converged)


def theory_curve(problem: SVMProblem, s_over_n: Sequence[float], *, tol: float = 1e-6, exact_loo: bool = True,
                 hooks: Hooks | None = None) -> SVMTheoryCurve:
    """The theory's learning curve (:func:`theory_learning_curve`) and its S → ∞ levels: eq. (20) and, with
    ``exact_loo``, the literal leave-one-out error (one SVM fit per support vector).

    Parameters
    ----------
    problem, s_over_n, tol
        As in :func:`theory_learning_curve`.
    exact_loo : bool
        Also compute the literal leave-one-out error.
    hooks : Hooks, optional
        Progress and a stop checked before each S/N; ``publish`` gets the :class:`SVMTheoryCurve` so far after
        each S/N and after eq. (20).

    Returns
    -------
    SVMTheoryCurve
    """
    grid = s_over_n_grid(s_over_n, per="data row")
    hooks = hooks or NO_HOOKS
    steps, as_tuple = grid.size + 1, tuple(grid.tolist())
    points = theory_learning_curve(problem, grid, tol=tol, hooks=hooks.sub(
        0.0, grid.size / steps, partial=lambda done: hooks.publish(SVMTheoryCurve(done, as_tuple, problem.n))))
    hooks.report(grid.size / steps, "S → ∞: leave-one-out limits")
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    counts = problem.sites.counts
    approx = svm_replica.loo_limit(problem.K, problem.y_sites, counts=counts, solution=d0).error
    if not exact_loo:
        return SVMTheoryCurve(points, as_tuple, problem.n, approx)
    hooks.publish(SVMTheoryCurve(points, as_tuple, problem.n, approx))
    exact = svm.leave_one_out(problem.K, problem.y_sites, counts=counts, solution=d0).error
    return SVMTheoryCurve(points, as_tuple, problem.n, approx, exact)


@dataclass(frozen=True)
class SVMCurvePoint:
    """Efron's bootstrap classification error (eq. 6) at one S/N from Monte-Carlo, with its standard error."""

    s_over_n: float
    mc_mean: float
    mc_se: float
    mc_samples: int


@dataclass(frozen=True)
class SVMCurveMC:
    """Monte-Carlo points of the learning curve computed so far, in the order of ``grid``."""

    points: tuple[SVMCurvePoint, ...]
    grid: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid)


def mc_curve(problem: SVMProblem, s_over_n: Sequence[float], mc_samples: int, *, rng: SeedLike = None,
             executor: Executor | None = None, hooks: Hooks | None = None) -> SVMCurveMC:
    """Efron's estimator (eq. 6) at every S/N of the grid, all S at once, each sample's SVM warm-started from
    the SVM on D0 (:func:`svm.bootstrap_learning_curve`, group k for the k-th S/N).

    Parameters
    ----------
    problem, s_over_n, mc_samples, rng, executor
        As in :func:`svm_learning_curve`.
    hooks : Hooks, optional
        Progress and cancellation; ``publish`` gets the :class:`SVMCurveMC` so far whenever one more S is
        complete.

    Returns
    -------
    SVMCurveMC
        One :class:`SVMCurvePoint` per S/N, in the order of the grid.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = mc_curve_grid(s_over_n, mc_samples, per="data row")
    hooks = hooks or NO_HOOKS
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    S_values, as_tuple = grid * problem.n, tuple(grid.tolist())
    by_size = dict(zip(S_values.tolist(), as_tuple))

    def as_points(curve) -> SVMCurveMC:
        return SVMCurveMC(tuple(SVMCurvePoint(float(by_size[S]), float(value), float(se), mc_samples)
                                for S, value, se in zip(curve.s_values.tolist(), curve.value, curve.se)), as_tuple)

    curve = svm.bootstrap_learning_curve(
        problem.K, problem.y_sites, S_values, mc_samples, row_site=problem.sites.row_site, rng=rng, init=d0,
        executor=executor, hooks=hooks.publishing(as_points))
    return as_points(curve)


def _solve_or_last(problem: SVMProblem, S: float, tol: float, max_iter: int, init
                   ) -> svm_replica.SVMReplicaSolution | None:
    try:
        return svm_replica.solve_svm_replica(problem.K, problem.y_sites, S, counts=problem.sites.counts, tol=tol,
                                             max_iter=max_iter, init=init)
    except svm_replica.ConvergenceError as err:
        return err.last


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
    sol = svm_replica.solve_svm_replica(problem.K, problem.y_sites, v * problem.n, counts=problem.sites.counts,
                                        tol=tol)
    theory = svm_replica.fields_at(sol, problem.K, K_cross, problem.k_diag(X_test))
    fields = svm.bootstrap_fields(problem.K, problem.y_sites, v * problem.n, mc_samples,
                                  row_site=problem.sites.row_site, K_test=K_cross, rng=rng, executor=executor,
                                  hooks=hooks.sub(0.05, 0.95, "Monte-Carlo"))
    mc = svm.probability_negative(fields)
    hooks.report(1.0, "done")
    y_test = problem.y_test if X_test is problem.X_test else None
    return SVMFieldComparison(problem.name, v, X_test, y_test, theory.mean, theory.var,
                              svm_replica.probability_negative(theory), sol.converged, sol.residual, fields.test,
                              mc.value, mc.se)
