"""Theory-vs-Monte-Carlo experiments of [MO03] (Fig. 1-5), shared by the CLI, the views and notebooks.

Each function takes a :class:`~explorer.gp_bootstrap.problem.RegressionProblem` (data, kernel, noise and the
kernel operator: the dense K or the features Φ of K ≈ ΦΦᵀ; re-exported here with :func:`regression_problem` and the
paper's constants), runs the replica theory and the Monte-Carlo bootstrap on its operator, and returns a frozen
result object.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap import estimates, replica
from explorer.chunks import Executor, SeedLike, item_generator, root_seed
from explorer.gp_bootstrap import linear_response, mean_field, montecarlo, variational
from explorer.gp_bootstrap.l1 import L1Summary, l1_all_inputs, l1_noise_floor, scaled_bin_width
from explorer.gp_bootstrap.problem import (
    PAPER_L2,
    PAPER_NOISE_VAR,
    RegressionProblem,
    regression_problem,
)
from explorer.gp_bootstrap.stages import (
    ALL_METHODS_ROWS,
    CURVE_METHODS,
    VG_MF_LOSSES,
    CurvePoint,
    LinearResponseCurve,
    TheoryCurve,
    curve_methods,
    holdout_linear_response,
    linear_response_curve,
    mc_curve,
    replica_curve,
    theory_curve,
    theory_error,
    vg_mf_curve,
)
from explorer.operators import offers
from explorer.progress import NO_HOOKS, Hooks, best_time
from explorer.validation import holdout_iv, mc_curve_grid, s_over_n_value

__all__ = [
    "RegressionProblem",
    "regression_problem",
    "PAPER_NOISE_VAR",
    "PAPER_L2",
    "LearningCurveRow",
    "LearningCurveComparison",
    "learning_curve_comparison",
    "DistributionComparison",
    "distribution_comparison",
    "MAP_ALL_ROWS",
    "MAP_INPUTS",
    "at_inputs",
    "map_inputs",
    "HoldoutComparison",
    "holdout_comparison",
    "solve_with_timing",
    "TimedSolution",
    "theory_error",
]


@dataclass(frozen=True)
class TimedSolution:
    """A replica solution and how long it took.

    Attributes
    ----------
    solution : replica.ReplicaSolution
        The cold-start ADATAP solution.
    seconds : float
        Wall-clock time of the solve, best of the repeats.
    """

    solution: replica.ReplicaSolution
    seconds: float


def solve_with_timing(problem: RegressionProblem, S: float, repeats: int = 3, **options) -> TimedSolution:
    """A cold-start ADATAP solve and its wall-clock time in seconds (best of ``repeats``).

    Parameters
    ----------
    problem : RegressionProblem or RegressionProblem
    S : float
        Mean bootstrap sample size.
    repeats : int
        Number of timed solves; the fastest counts.
    **options
        Passed to the path's ADATAP solver (``tol``, ...; :func:`~explorer.bootstrap.replica.solve_replica`).

    Returns
    -------
    TimedSolution
    """
    solutions = []
    seconds = best_time(
        lambda: solutions.append(replica.solve_replica(problem.operator, problem.y, problem.noise_var, S, **options)),
        repeats)
    return TimedSolution(solutions[-1], seconds)


@dataclass(frozen=True)
class LearningCurveRow:
    """One bootstrap size: theory (ADATAP), approximate ADATAP, VG, MF, IJ, the LOO limit and MC with its standard error.

    ``theory_vg`` and ``theory_mf`` are ε(S) of the variational-Gaussian and mean-field approximations
    (``variational``, ``mean_field``); ``ij`` and ``ij_second_order`` the infinitesimal-jackknife ε_IJ and ε_IJ2
    (eqs. 14-15 of ``docs/linear_response.md``); all four are defined for the square loss only and None for any
    other. ``loo_limit`` is the closed-form leave-one-out error at noise σ²N/S (eq. 9), the S → ∞ limit.
    ``converged``, ``n_iter`` and ``residual`` are ADATAP's. A method not run (``methods`` of
    :func:`learning_curve_comparison`) has None in its fields (``mc_*`` for Monte-Carlo, the last three for ADATAP).
    """

    s_over_n: float
    S: float
    theory: float | None
    theory_approx: float | None
    theory_vg: float | None
    theory_mf: float | None
    mc_mean: float | None
    mc_se: float | None
    mc_samples: int | None
    converged: bool | None
    n_iter: int | None
    residual: float | None
    expected_test_points: float
    ij: float | None = None
    ij_second_order: float | None = None
    loo_limit: float | None = None


@dataclass(frozen=True)
class LearningCurveComparison:
    """Bootstrap learning curve ε(S), theory vs MC ([MO03], Fig. 1); timing in seconds.

    ``theory_s``, ``vg_s`` and ``mf_s`` are cold solves at S = N of ADATAP, VG and MF (``vg_s`` and ``mf_s``
    None when the loss is not square: VG and MF are then not solved); ``mc_sample_s`` one MC sample at S = N;
    ``ij_s`` the infinitesimal-jackknife ε_IJ at S = N (with ε_IJ2 and the LOO limit from the same factorisation;
    None unless the loss is square). On the low-rank path VG and MF do not run (their timings and values None).
    ``methods`` are the methods that ran (:data:`~explorer.gp_bootstrap.stages.CURVE_METHODS`); the timing of one
    that did not is None.
    """

    problem: str
    n: int
    loss: str
    rows: tuple[LearningCurveRow, ...]
    theory_s: float | None
    mc_sample_s: float | None
    vg_s: float | None
    mf_s: float | None
    ij_s: float | None = None
    methods: tuple[str, ...] = CURVE_METHODS

    def as_dict(self) -> dict:
        """The comparison for JSON.

        Returns
        -------
        dict
            ``problem``, ``n``, ``loss``, ``methods``, ``rows`` (one dict of :class:`LearningCurveRow` fields per S)
            and ``timing`` (``theory_s``, ``mc_sample_s``, their ratio ``theory_in_mc_samples``, ``vg_s``, ``mf_s`` and
            ``ij_s``; the last three None unless the loss is square; ``vg_s`` and ``mf_s`` None on the low-rank
            path).
        """
        return {
            "problem": self.problem, "n": self.n, "loss": self.loss, "methods": list(self.methods),
            "rows": [row.__dict__ for row in self.rows],
            "timing": {"theory_s": self.theory_s, "mc_sample_s": self.mc_sample_s,
                       "theory_in_mc_samples": None if self.theory_s is None or self.mc_sample_s is None
                       else self.theory_s / self.mc_sample_s,
                       "vg_s": self.vg_s, "mf_s": self.mf_s, "ij_s": self.ij_s},
        }


def learning_curve_comparison(
    problem: RegressionProblem,
    s_over_n: Sequence[float],
    mc_samples: int,
    *,
    loss: str = "square",
    loss_params: dict | None = None,
    rng: SeedLike = None,
    tol: float = 1e-3,
    executor: Executor | None = None,
    hooks: Hooks | None = None,
    methods: Sequence[str] | None = None,
) -> LearningCurveComparison:
    """ε(S) from ADATAP, the approximate ADATAP, VG, MF ([MO03] Fig. 1, left), IJ, the LOO limit and Monte-Carlo.

    ADATAP and VG are warm-started along S, both with tolerance ``tol``; MF is a linear solve; IJ and the LOO limit
    are one factorisation per S (:func:`linear_response_curve`). VG, MF and IJ define ε(S) for the square loss
    only (eq. 45 with their cavities, ``docs/derivations/vg_mf.md``; eqs. 14-15 of ``docs/linear_response.md``): for
    any other loss their row entries and timings are None. ``theory_s``, ``vg_s`` and ``mf_s`` are cold solves
    at S = N (best of 3) and ``mc_sample_s`` the time of one MC bootstrap sample at S = N, all measured in
    this call so that their ratios are meaningful.

    Parameters
    ----------
    problem : RegressionProblem or RegressionProblem
        Training data, kernel and noise.
    s_over_n : sequence of float, length n_S
        Bootstrap sizes per data point, S/N (positive).
    mc_samples : int
        Monte-Carlo bootstrap samples per S.
    loss : str
        A name of :func:`explorer.losses.get_loss`: eq. (45) for ``"square"``, eq. (46) otherwise.
    loss_params : dict, optional
        Parameters of that loss.
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo bootstrap (``montecarlo.bootstrap_learning_curve``: samples keyed by S/N).
    tol : float
        Stopping tolerance of ADATAP and VG: largest relative change of Δλ(i).
    executor : Executor, optional
        Where the Monte-Carlo chunks run (default: this process; ``explorer.runtime.engine`` for Dask).
    hooks : Hooks, optional
        Progress and cancellation.
    methods : sequence of str, optional
        Which of :data:`~explorer.gp_bootstrap.stages.CURVE_METHODS` run (the others' entries are None). Default:
        all of them up to ``ALL_METHODS_ROWS`` = 1,000 training rows, above it ADATAP, the approximate ADATAP, the
        LOO limit and Monte-Carlo (:func:`~explorer.gp_bootstrap.stages.curve_methods`). Above that bound the cold
        solves behind the timings run once instead of best of 3, and one MC sample is timed over 5 samples.

    Returns
    -------
    LearningCurveComparison
        One :class:`LearningCurveRow` per S/N, in the order given, the timings and the methods that ran.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = mc_curve_grid(s_over_n, mc_samples)
    loss_params = dict(loss_params or {})
    root = root_seed(rng)
    n = problem.n
    hooks = hooks or NO_HOOKS
    methods, repeats = curve_methods(methods, n), 3 if n <= ALL_METHODS_ROWS else 1
    hooks.report(0.0, "solving the replica theory")
    solutions = replica_curve(problem, grid, tol=tol, methods=methods)
    theory_s = solve_with_timing(problem, float(n), repeats, tol=tol).seconds if "adatap" in methods else None
    hooks.report(0.05, "solving the variational-Gaussian and mean-field approximations")
    vg_mf, vg_s, mf_s = _vg_and_mf(problem, grid, loss, tol, methods, repeats)
    theory = theory_curve(problem, solutions, loss=loss, loss_params=loss_params, vg_mf=vg_mf)
    lr_curve, ij_s = _linear_response(problem, grid, loss, loss_params, methods, repeats)
    mc, mc_sample_s = None, None
    if "mc" in methods:
        mc = mc_curve(problem, grid, mc_samples, loss=loss, loss_params=loss_params, rng=root, executor=executor,
                      hooks=hooks.sub(0.1, 0.9, "Monte-Carlo"))
        mc_sample_s = _time_mc_sample(problem, root)
    rows = tuple(_row(theory, lr_curve, j, None if solutions.exact is None else solutions.exact[j],
                      None if mc is None else mc.points[j]) for j in range(grid.size))
    hooks.report(1.0, "done")
    return LearningCurveComparison(problem.name, n, loss, rows, theory_s, mc_sample_s, vg_s, mf_s, ij_s, methods)


def _linear_response(problem: RegressionProblem, grid: np.ndarray, loss: str, loss_params: dict, methods: tuple[str, ...],
                     repeats: int) -> tuple[LinearResponseCurve | None, float | None]:
    """The IJ and LOO-limit curves of ``methods`` (None if neither runs) and the IJ time at S = N (None unless IJ
    runs for the square loss)."""
    if "ij" not in methods and "loo" not in methods:
        return None, None
    ij = "ij" in methods and loss == "square"
    curve = linear_response_curve(problem, grid, loss=loss, loss_params=loss_params, ij=ij)
    if "loo" not in methods:
        curve = dataclasses.replace(curve, loo_limit=None)
    return curve, best_time(lambda: linear_response.linear_response_error(problem.operator, problem.y, problem.noise_var, problem.sample_size(1.0), inputs="auto"), repeats) if ij else None


def _row(theory: TheoryCurve, lr_curve: LinearResponseCurve | None, j: int, sol: replica.ReplicaSolution | None,
         point: CurvePoint | None) -> LearningCurveRow:
    """Row ``j`` of the comparison: the theory curves' values there, ADATAP's convergence and the MC point (None for
    a method that did not run)."""
    v, n = theory.s_over_n[j], theory.n
    lr = lr_curve or LinearResponseCurve(theory.s_over_n, None, None, None)
    exact, approx, vg, mf, ij, ij2, loo = (None if values is None else float(values[j]) for values in (
        theory.theory, theory.theory_approx, theory.theory_vg, theory.theory_mf, lr.ij, lr.ij_second_order,
        lr.loo_limit))
    return LearningCurveRow(
        s_over_n=float(v), S=float(v * n), theory=exact, theory_approx=approx, theory_vg=vg, theory_mf=mf,
        mc_mean=None if point is None else float(point.mc_mean), mc_se=None if point is None else float(point.mc_se),
        mc_samples=None if point is None else point.mc_samples, converged=None if sol is None else sol.converged,
        n_iter=None if sol is None else sol.n_iter, residual=None if sol is None else sol.residual,
        expected_test_points=float(n * np.exp(-v)), ij=ij, ij_second_order=ij2, loo_limit=loo)


def _vg_and_mf(problem: RegressionProblem, grid: np.ndarray, loss: str, tol: float, methods: tuple[str, ...] = ("vg", "mf"),
               repeats: int = 3):
    """VG and MF of ``methods`` along ``grid`` (:func:`vg_mf_curve`) and their cold solve times at S = N (best of
    ``repeats``): ``(curve, vg seconds, mf seconds)``; all None unless the loss is square, a time None for a method
    not run."""
    if loss not in VG_MF_LOSSES or not offers(problem.operator, "dense_matrix"):  # eq. (45) only (docs/derivations/vg_mf.md); dense path only
        return None, None, None
    chosen = tuple(m for m in ("vg", "mf") if m in methods)
    if not chosen:
        return None, None, None
    K, y, noise_var, n = problem.K, problem.y, problem.noise_var, float(problem.n)
    curve = vg_mf_curve(problem, grid, tol=tol, methods=chosen)
    vg_s = best_time(lambda: variational.solve_variational(K, y, noise_var, n, tol=tol), repeats) \
        if "vg" in chosen else None
    mf_s = best_time(lambda: mean_field.solve_mean_field(K, y, noise_var, n), repeats) if "mf" in chosen else None
    return curve, vg_s, mf_s


def _time_mc_sample(problem: RegressionProblem, rng) -> float:
    """Seconds per MC bootstrap sample at S = N: the mean over 100 samples after 5, or over 5 after 1 where one refit
    costs more than a dense one of ``ALL_METHODS_ROWS`` rows (a tenth of a second or more)."""
    costly = problem.operator.refit_flops() > ALL_METHODS_ROWS ** 3 / 3
    warm, n_samples = (1, 5) if costly else (5, 100)
    montecarlo.bootstrap_predictions(problem.operator, problem.y, problem.noise_var, problem.sample_size(1.0), warm,
                                     rng=rng)
    t0 = time.perf_counter()
    montecarlo.bootstrap_predictions(problem.operator, problem.y, problem.noise_var, problem.sample_size(1.0),
                                     n_samples, rng=rng)
    return (time.perf_counter() - t0) / n_samples


#: Training inputs a distribution map covers at most: above, :data:`MAP_INPUTS` of them drawn at random (the Monte-Carlo
#: keeps B numbers per input mapped: 20,000 samples of 53,940 inputs would be 8.6 GB).
MAP_ALL_ROWS = 5_000
MAP_INPUTS = 2_000


@dataclass(frozen=True)
class DistributionComparison:
    """Bootstrap distribution of the predictor at the training inputs, theory (eq. 60) vs MC (Fig. 3-5).

    ``inputs`` are the training inputs mapped (all N, or :data:`MAP_INPUTS` drawn at random above
    :data:`MAP_ALL_ROWS`); ``solution`` is ADATAP at those inputs (:func:`at_inputs`), ``samples`` the (B, len(inputs))
    Monte-Carlo predictor there, and ``l1`` and ``noise_floor`` their L1 summaries in the order of ``inputs``.
    """

    problem: str
    solution: replica.ReplicaSolution
    samples: np.ndarray
    l1: L1Summary
    noise_floor: L1Summary
    n: int
    inputs: np.ndarray

    def as_dict(self) -> dict:
        """The comparison for JSON (without the samples).

        Returns
        -------
        dict
            ``problem``, ``n``, ``s_over_n``, the ``inputs`` mapped (None when all N are), the per-input ``l1`` (in
            the order of ``inputs``), its ``summary``, the ``noise_floor`` summary and the 10 ``worst_inputs``
            (training-row indices).
        """
        every = self.inputs.size == self.n
        return {"problem": self.problem, "n": self.n, "s_over_n": self.solution.s_over_n,
                "inputs": None if every else self.inputs.tolist(),
                "l1": self.l1.l1.tolist(), "summary": self.l1.as_dict(),
                "noise_floor": self.noise_floor.as_dict(),
                "worst_inputs": self.inputs[self.l1.worst(10)].tolist()}


def at_inputs(sol: replica.ReplicaSolution, inputs: np.ndarray) -> replica.ReplicaSolution:
    """The sites ``inputs`` of a solution as a solution of their own (S scaled so that S/N is kept): eq. (60) at a
    site needs only S/N and the site's own parameters."""
    per_site = {name: getattr(sol, name)[inputs] for name in
                ("y", "dl", "dl_c", "gam", "gam_c", "lam", "lam_c", "m", "G_diag")}
    return dataclasses.replace(sol, S=sol.s_over_n * inputs.size, **per_site)


def map_inputs(n: int, rng: np.random.Generator) -> np.ndarray:
    """The training inputs a distribution map covers: all N up to :data:`MAP_ALL_ROWS`, else :data:`MAP_INPUTS` of
    them drawn without replacement (sorted)."""
    if n <= MAP_ALL_ROWS:
        return np.arange(n)
    return np.sort(rng.choice(n, size=MAP_INPUTS, replace=False))


def distribution_comparison(
    problem: RegressionProblem,
    s_over_n: float,
    mc_samples: int,
    *,
    bin_width: float | None = None,
    rng: SeedLike = None,
    tol: float = 1e-3,
    executor: Executor | None = None,
    hooks: Hooks | None = None,
) -> DistributionComparison:
    """L1 between MC histograms and the eq. (60) mixture at all inputs, and the MC noise floor.

    Parameters
    ----------
    problem : RegressionProblem or RegressionProblem
        Training data, kernel and noise.
    s_over_n : float
        Bootstrap size per data point, S/N (Fig. 3-5: 1).
    mc_samples : int
        Monte-Carlo bootstrap samples B (also the draws of the noise floor).
    bin_width : float, optional
        Histogram bin width Δh; default :func:`~explorer.gp_bootstrap.l1.scaled_bin_width` of the training
        targets, 0.2 · sd(y)/sd(boston's target): 0.2 for boston (Fig. 5), and the same L1 summary for a
        rescaled target (the noise floor uses the same bins).
    rng : int, SeedSequence, Generator or None
        Root seed: the Monte-Carlo bootstrap draws group 0, the noise floor group 1's generator.
    tol : float
        Tolerance of the ADATAP solve.
    executor : Executor, optional
        Where the Monte-Carlo chunks run (default: this process).
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    DistributionComparison
        The solution, the (B, N) MC samples, their L1 summary and the noise floor (:func:`l1_noise_floor`).

    Raises
    ------
    ValueError
        If ``s_over_n`` is not a positive finite number.
    """
    v = s_over_n_value(s_over_n)
    root = root_seed(rng)
    hooks = hooks or NO_HOOKS
    hooks.report(0.0, "solving the replica theory")
    inputs = map_inputs(problem.n, item_generator(root, 2, 0))
    sol = replica.solve_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), tol=tol)
    rows = {} if inputs.size == problem.n else {"rows": inputs}  # the low-rank path (the dense N ≤ MAP_ALL_ROWS)
    preds = montecarlo.bootstrap_predictions(problem.operator, problem.y, problem.noise_var, problem.sample_size(v),
                                             mc_samples, rng=root, executor=executor,
                                             hooks=hooks.sub(0.05, 0.85, "Monte-Carlo"), **rows)
    hooks.report(0.9, "L1 distances")
    bin_width = scaled_bin_width(problem.y) if bin_width is None else bin_width
    mapped = sol if inputs.size == problem.n else at_inputs(sol, inputs)
    l1 = l1_all_inputs(preds.train, mapped, bin_width)
    floor = l1_noise_floor(mapped, mc_samples, bin_width, item_generator(root, 1, 0))
    hooks.report(1.0, "done")
    return DistributionComparison(problem.name, mapped, preds.train, l1, floor, problem.n, inputs)


@dataclass(frozen=True)
class HoldoutComparison:
    """Bootstrap mean and variance of the predictor at held-out inputs, theory (eq. 48) vs MC (Fig. 2).

    ``ij_mean`` and ``ij_var`` are the first-order infinitesimal-jackknife moments, ``ij_mean_second_order`` the
    mean with its second-order correction (eqs. 5-7 of ``docs/linear_response.md``); ndarrays of shape (M,).
    """

    theory_mean: np.ndarray
    theory_var: np.ndarray
    mc_mean: np.ndarray
    mc_var: np.ndarray
    mc_mean_se: np.ndarray
    mc_var_se: np.ndarray
    s_over_n: float
    mc_samples: int
    ij_mean: np.ndarray | None = None
    ij_var: np.ndarray | None = None
    ij_mean_second_order: np.ndarray | None = None

    def as_dict(self) -> dict:
        """The comparison for JSON.

        Returns
        -------
        dict
            Every field by name, arrays as lists.
        """
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}


def holdout_comparison(
    problem: RegressionProblem,
    s_over_n: float,
    mc_samples: int,
    *,
    X_test: np.ndarray | None = None,
    rng: SeedLike = None,
    tol: float = 1e-3,
    executor: Executor | None = None,
    hooks: Hooks | None = None,
) -> HoldoutComparison:
    """Theory (eq. 48), infinitesimal jackknife (eqs. 5-7 of docs/linear_response.md) and MC bootstrap mean/variance
    at test inputs (default: the problem's holdout).

    Parameters
    ----------
    problem, s_over_n, mc_samples
        As in :func:`distribution_comparison` (Fig. 2: S/N = 1).
    X_test : ndarray of shape (M, d), optional
        Test inputs; default ``problem.X_test``.
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo bootstrap.
    tol, executor, hooks
        As in :func:`distribution_comparison`.

    Returns
    -------
    HoldoutComparison
        Theory, IJ and MC mean and variance (with MC standard errors), ndarrays of shape (M,).

    Raises
    ------
    ValueError
        If there are no test inputs or ``s_over_n`` is not a positive finite number.
    """
    X_test, v = holdout_iv(X_test, problem.X_test, s_over_n)
    hooks = hooks or NO_HOOKS
    hooks.report(0.0, "solving the replica theory")
    sol = replica.solve_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), tol=tol)
    theory = replica.bootstrap_moments(sol, problem.operator, problem.cross(X_test))
    preds = montecarlo.bootstrap_predictions(problem.operator, problem.y, problem.noise_var, problem.sample_size(v),
                                             mc_samples, K_test=problem.cross(X_test), rng=rng, executor=executor,
                                             hooks=hooks.sub(0.05, 0.95, "Monte-Carlo"))
    mc = estimates.predictive_moments(preds)
    ij = holdout_linear_response(problem, v, X_test=X_test)
    hooks.report(1.0, "done")
    return HoldoutComparison(theory.mean, theory.var, mc.mean, mc.var, mc.mean_se, mc.var_se, v, mc_samples,
                             ij.mean, ij.var, ij.mean_second_order)
