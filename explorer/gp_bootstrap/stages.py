"""The stages of [MO03]'s experiments, each built once: the CLI's comparisons (:mod:`~explorer.gp_bootstrap.experiments`) and the app's
state (:mod:`explorer.views.gp_bootstrap.state`) call these with the same grids and seeds.

* :func:`replica_curve` — ADATAP (warm-started along S) and the approximate ADATAP along a grid of S/N;
* :func:`vg_mf_curve` — ε(S) of the variational-Gaussian and mean-field approximations (square loss, eq. 45);
* :func:`theory_curve` — ε(S) of every theory (eq. 45 or 46) from the two stages above (Fig. 1, lines);
* :func:`mc_curve` — Efron's Monte-Carlo estimator (eq. 17) along a grid of S/N (Fig. 1, points);
* :func:`holdout_theory` — the theory's bootstrap mean and variance at the held-out inputs (eq. 48, Fig. 2);
* :func:`linear_response_curve` — ε(S) of the infinitesimal jackknife and the leave-one-out limit along the grid
  (no refits, ``docs/linear_response.md``);
* :func:`holdout_linear_response` — the infinitesimal-jackknife mean and variance at the held-out inputs.

A stage takes a :class:`~.problems.RegressionProblem` and runs the theories on its kernel operator (dense K or
features Φ, :mod:`explorer.operators`); VG and MF need the dense matrix. Every stage returns a frozen dataclass.
Core module: numpy and scipy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap import estimates, replica
from explorer.chunks import Executor, SeedLike
from explorer.gp_bootstrap import linear_response, mean_field, montecarlo, variational
from explorer.gp_bootstrap.problem import RegressionProblem
from explorer.losses import get_loss
from explorer.progress import NO_HOOKS, Hooks
from explorer.validation import holdout_iv, mc_curve_grid, s_over_n_grid, s_over_n_value

__all__ = [
    "VG_MF_LOSSES", "theory_error", "ReplicaCurve", "replica_curve", "VGMFCurve", "vg_mf_curve", "TheoryCurve",
    "theory_curve", "CurvePoint", "CurveMC", "mc_curve", "HoldoutTheory", "holdout_theory", "LinearResponseCurve",
    "linear_response_curve", "holdout_linear_response", "CURVE_METHODS", "ALL_METHODS_ROWS", "FAST_METHODS",
    "curve_methods",
]

#: Losses for which the VG and MF approximations define ε(S) (eq. 45 with their cavities, docs/derivations/vg_mf.md).
VG_MF_LOSSES = ("square",)
#: The methods of a learning curve, by name (:func:`curve_methods`, the CLI's ``--methods``): ADATAP (eqs. 54-59 of
#: [MO03]), the approximate ADATAP (§5), VG, MF, the infinitesimal jackknife (IJ), the closed-form leave-one-out
#: limit (LOO) and Monte-Carlo (eq. 17).
CURVE_METHODS = ("adatap", "approx", "vg", "mf", "ij", "loo", "mc")
#: Training rows up to which the default runs every method (the app's row bound); above, :data:`FAST_METHODS` only.
#: VG, MF and IJ each cost further O(N³) solves per S that dominate a large curve: on a 3,000-row pumadyn CSV (2
#: cores, loaded) VG took 13 s a solve, IJ 6 s and MF 3 s, against 5 s for ADATAP.
ALL_METHODS_ROWS = 1_000
#: The default methods above :data:`ALL_METHODS_ROWS` rows.
FAST_METHODS = ("adatap", "approx", "loo", "mc")


def theory_error(sol: replica.ReplicaSolution, loss: str, loss_params: dict | None = None) -> float:
    """Bootstrap test error of the theory for a loss name: eq. (45) (square) or eq. (46) (any other).

    Parameters
    ----------
    sol : replica.ReplicaSolution
        The replica (ADATAP) solution at one bootstrap size S.
    loss : str
        A name of :func:`explorer.losses.get_loss`.
    loss_params : dict, optional
        Parameters of that loss (e.g. ``eps`` and ``beta`` of ``"eps-insensitive"``).

    Returns
    -------
    float
        ε(S), the bootstrap test error of eq. (45) or (46).
    """
    if loss == "square":
        return replica.bootstrap_test_error(sol)  # eq. (45)
    return replica.bootstrap_loss_error(sol, get_loss(loss, **(loss_params or {})))  # eq. (46)


@dataclass(frozen=True)
class ReplicaCurve:
    """ADATAP and approximate-ADATAP solutions along a grid of S/N (any loss's ε(S) follows from them).

    Attributes
    ----------
    s_over_n : ndarray of shape (n_S,)
        The grid, in the order given.
    exact : tuple of ReplicaSolution, length n_S, or None
        ADATAP, warm-started along S (None when not solved).
    approx : tuple of ReplicaSolution, length n_S, or None
        The approximate ADATAP (None when not solved).
    """

    s_over_n: np.ndarray
    exact: tuple[replica.ReplicaSolution, ...] | None
    approx: tuple[replica.ReplicaSolution, ...] | None


def curve_methods(methods: Sequence[str] | None, n: int) -> tuple[str, ...]:
    """The methods of a learning curve on ``n`` training rows: ``methods`` checked and in the order of
    :data:`CURVE_METHODS`, or (None) every method up to :data:`ALL_METHODS_ROWS` rows, :data:`FAST_METHODS` above.

    Raises
    ------
    ValueError
        If ``methods`` is empty or names a method not in :data:`CURVE_METHODS`.
    """
    if methods is None:
        return CURVE_METHODS if n <= ALL_METHODS_ROWS else FAST_METHODS
    unknown = [m for m in methods if m not in CURVE_METHODS]
    if unknown or not methods:
        raise ValueError(f"`methods` must name one or more of {', '.join(CURVE_METHODS)}, got "
                         f"{', '.join(map(str, methods)) or 'none'}. Pick the theories (and mc) to run.")
    return tuple(m for m in CURVE_METHODS if m in methods)


def replica_curve(problem: RegressionProblem, s_over_n: Sequence[float], *, tol: float = 1e-3,
                  methods: Sequence[str] = ("adatap", "approx")) -> ReplicaCurve:
    """ADATAP (warm-started along S, tolerance ``tol``) and the approximate ADATAP at S = (S/N)·N.

    Parameters
    ----------
    problem : RegressionProblem
        Training data, kernel matrix and noise.
    s_over_n : sequence of float, length n_S
        Bootstrap sizes per data point (positive).
    tol : float
        Stopping tolerance of ADATAP: largest relative change of Δλ(i).
    methods : sequence of str, optional
        Which of ``"adatap"`` and ``"approx"`` to solve; the other's solutions are None.

    Returns
    -------
    ReplicaCurve

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value.
    replica.ConvergenceError
        If ADATAP does not converge at one S.
    """
    grid = s_over_n_grid(s_over_n)
    S = problem.sample_size(grid)
    exact = tuple(replica.replica_learning_curve(problem.operator, problem.y, problem.noise_var, S, tol=tol)) if "adatap" in methods else None
    approx = tuple(replica.approximate_replica(problem.operator, problem.y, problem.noise_var, s) for s in S) if "approx" in methods else None
    return ReplicaCurve(grid, exact, approx)


@dataclass(frozen=True)
class VGMFCurve:
    """Square-loss ε(S) (eq. 45) of the variational-Gaussian (VG) and mean-field (MF) approximations.

    Attributes
    ----------
    s_over_n : ndarray of shape (n_S,)
        The grid.
    vg, mf : ndarray of shape (n_S,) or None
        The two errors along it (None for one not solved).
    """

    s_over_n: np.ndarray
    vg: np.ndarray | None
    mf: np.ndarray | None


def vg_mf_curve(problem: RegressionProblem, s_over_n: Sequence[float], *, tol: float = 1e-3,
                methods: Sequence[str] = ("vg", "mf")) -> VGMFCurve:
    """ε(S) of VG (warm-started along S, tolerance ``tol``) and of MF (a linear solve) at S = (S/N)·N.

    Parameters
    ----------
    problem, s_over_n, tol
        As in :func:`replica_curve` (``tol`` is VG's).
    methods : sequence of str, optional
        Which of ``"vg"`` and ``"mf"`` to solve.

    Returns
    -------
    VGMFCurve
    """
    grid = s_over_n_grid(s_over_n)
    S = problem.sample_size(grid)
    vg = mf = None
    if "vg" in methods:
        vg = np.array([variational.vg_test_error(s) for s in variational.vg_learning_curve(
            problem.K, problem.y, problem.noise_var, S, tol=tol)])
    if "mf" in methods:
        mf = np.array([mean_field.mf_test_error(s)
                       for s in mean_field.mf_learning_curve(problem.K, problem.y, problem.noise_var, S)])
    return VGMFCurve(grid, vg, mf)


@dataclass(frozen=True)
class TheoryCurve:
    """Bootstrap test error ε(S) of the ADATAP theory, the approximate ADATAP, the variational-Gaussian (VG)
    and the mean-field (MF) approximations on a grid of S/N.

    eq. (45) (square loss) or eq. (46) (other losses) of [MO03]; ``expected_test_points`` is N e^(−S/N),
    the mean number of inputs left out of a bootstrap sample (they carry Efron's estimator, eq. 17).
    ``theory_vg`` and ``theory_mf`` are eq. (45) with the VG and MF cavities (``variational``,
    ``mean_field``); they are defined for the square loss only and None for any other.
    """

    s_over_n: np.ndarray
    theory: np.ndarray | None
    theory_approx: np.ndarray | None
    expected_test_points: np.ndarray
    n: int
    loss: str
    theory_vg: np.ndarray | None = None
    theory_mf: np.ndarray | None = None

    def method_values(self) -> dict[str, np.ndarray]:
        """ε(S) of every method defined for this loss, by name (theory, theory_approx, theory_vg, theory_mf)."""
        values = {"theory": self.theory, "theory_approx": self.theory_approx,
                  "theory_vg": self.theory_vg, "theory_mf": self.theory_mf}
        return {name: v for name, v in values.items() if v is not None}


def theory_curve(problem: RegressionProblem, solutions: ReplicaCurve, *, loss: str = "square",
                 loss_params: dict | None = None, vg_mf: VGMFCurve | None = None) -> TheoryCurve:
    """ε(S) of every theory along the grid of ``solutions``: eq. (45) for the square loss, eq. (46) otherwise.

    Parameters
    ----------
    problem : RegressionProblem
        The problem ``solutions`` (and ``vg_mf``) were solved on.
    solutions : ReplicaCurve
        :func:`replica_curve` of ``problem``.
    loss : str
        A name of :func:`explorer.losses.get_loss`.
    loss_params : dict, optional
        Parameters of that loss.
    vg_mf : VGMFCurve, optional
        :func:`vg_mf_curve` on the same grid; used for the square loss only (``theory_vg``, ``theory_mf`` stay
        None without it or for another loss).

    Returns
    -------
    TheoryCurve
    """
    grid = solutions.s_over_n
    use_vg_mf = vg_mf is not None and loss in VG_MF_LOSSES

    def errors(sols):
        return None if sols is None else np.array([theory_error(s, loss, loss_params) for s in sols])

    return TheoryCurve(
        s_over_n=grid, theory=errors(solutions.exact), theory_approx=errors(solutions.approx),
        expected_test_points=problem.n * np.exp(-grid), n=problem.n, loss=loss,
        theory_vg=vg_mf.vg if use_vg_mf else None, theory_mf=vg_mf.mf if use_vg_mf else None)


@dataclass(frozen=True)
class CurvePoint:
    """Monte-Carlo bootstrap test error (Efron's estimator, eq. 17) at one S/N, with its standard error."""

    s_over_n: float
    mc_mean: float
    mc_se: float
    mc_samples: int
    n_inputs_used: int


@dataclass(frozen=True)
class CurveMC:
    """Monte-Carlo points of the learning curve computed so far, in the order of ``grid``."""

    points: tuple[CurvePoint, ...]
    grid: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid)


def mc_curve(problem: RegressionProblem, s_over_n: Sequence[float], mc_samples: int, *, loss: str = "square",
             loss_params: dict | None = None, rng: SeedLike = None, executor: Executor | None = None,
             hooks: Hooks | None = None) -> CurveMC:
    """Efron's estimator (eq. 17; eq. 46's loss for another ``loss``) at every S/N of the grid, all S at once.

    :func:`~explorer.gp_bootstrap.montecarlo.bootstrap_learning_curve` with root seed ``rng``: each S/N draws its own samples.

    Parameters
    ----------
    problem, s_over_n
        As in :func:`replica_curve`.
    mc_samples : int
        Monte-Carlo bootstrap samples per S.
    loss, loss_params
        As in :func:`theory_curve`.
    rng : int, SeedSequence, Generator or None
        Root seed of the Monte-Carlo bootstrap.
    executor : Executor, optional
        Where the chunks run (default: this process).
    hooks : Hooks, optional
        Progress and cancellation; ``publish`` gets the :class:`CurveMC` so far whenever one more S is
        complete, and the returned curve is the last one published (the same object).

    Returns
    -------
    CurveMC
        One :class:`CurvePoint` per S/N, in the order of the grid.

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value or ``mc_samples`` < 1.
    """
    grid = mc_curve_grid(s_over_n, mc_samples)
    hooks = hooks or NO_HOOKS
    S_values = problem.sample_size(grid)
    by_size = dict(zip(S_values.tolist(), grid.tolist()))
    made: dict[int, CurveMC] = {}

    def as_points(curve: estimates.LearningCurve) -> CurveMC:
        if len(curve.errors) not in made:
            made[len(curve.errors)] = CurveMC(
                tuple(CurvePoint(float(by_size[S]), err.value, err.se, mc_samples, err.n_inputs_used)
                      for S, err in zip(curve.s_values.tolist(), curve.errors)), tuple(grid.tolist()))
        return made[len(curve.errors)]

    curve = montecarlo.bootstrap_learning_curve(problem.operator, problem.y, problem.noise_var, S_values, mc_samples,
                                                loss=get_loss(loss, **(loss_params or {})), rng=rng,
                                                executor=executor, hooks=hooks.publishing(as_points))
    return as_points(curve)


@dataclass(frozen=True)
class HoldoutTheory:
    """Theory bootstrap mean and variance of the predictor at the held-out inputs, eq. (48) of [MO03]."""

    mean: np.ndarray
    var: np.ndarray
    y_test: np.ndarray
    s_over_n: float
    n_train: int


def holdout_theory(problem: RegressionProblem, s_over_n: float, *, solution: replica.ReplicaSolution | None = None,
                   tol: float = 1e-3) -> HoldoutTheory:
    """Bootstrap mean and variance of the predictor at ``problem``'s held-out inputs, eq. (48).

    Parameters
    ----------
    problem : RegressionProblem
        With held-out rows (``X_test``, ``y_test``).
    s_over_n : float
        Bootstrap size per data point (Fig. 2: 1).
    solution : ReplicaSolution, optional
        ADATAP at S = (S/N)·N on ``problem`` if already solved; else solved here with ``tol``.
    tol : float
        Tolerance of that solve.

    Returns
    -------
    HoldoutTheory
        Mean and variance of shape (M,), the held-out targets, S/N and N.

    Raises
    ------
    ValueError
        If ``problem`` has no held-out rows or ``s_over_n`` is not a positive finite number.
    """
    if problem.X_test is None or len(problem.X_test) == 0:
        raise ValueError("The problem has no held-out rows: build it with holdout > 0.")
    v = s_over_n_value(s_over_n)
    sol = solution or replica.solve_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), tol=tol)
    moments = replica.bootstrap_moments(sol, problem.operator, problem.cross(problem.X_test))  # eq. (48)
    return HoldoutTheory(moments.mean, moments.var, np.asarray(problem.y_test), v, problem.n)


@dataclass(frozen=True)
class LinearResponseCurve:
    """ε(S) of the no-refit approximations along a grid of S/N (``docs/linear_response.md``).

    Attributes
    ----------
    s_over_n : ndarray of shape (n_S,)
        The grid, as in :class:`ReplicaCurve`.
    ij : ndarray of shape (n_S,) or None
        ε_IJ(S), the infinitesimal jackknife of Efron's estimator (eq. 14 of the docs); None unless the loss is
        square.
    ij_second_order : ndarray of shape (n_S,) or None
        ε_IJ2(S), the same with the mean to second order (eq. 15); None unless the loss is square.
    loo_limit : ndarray of shape (n_S,)
        ε_∞(S/N), the closed-form leave-one-out error at noise σ²N/S (eq. 9; any loss), the S → ∞ limit.
    """

    s_over_n: np.ndarray
    ij: np.ndarray | None
    ij_second_order: np.ndarray | None
    loo_limit: np.ndarray


def linear_response_curve(problem: RegressionProblem, s_over_n: Sequence[float], *, loss: str = "square",
                          loss_params: dict | None = None, ij: bool = True) -> LinearResponseCurve:
    """The infinitesimal-jackknife learning curve and the leave-one-out limit at S = (S/N)·N, one factorisation each.

    Parameters
    ----------
    problem, s_over_n
        As in :func:`replica_curve`.
    loss, loss_params
        As in :func:`theory_curve`; the IJ curves are defined for the square loss only (None otherwise).
    ij : bool, optional
        False: the LOO limit only (its own factorisation per S; the IJ curves None).

    Returns
    -------
    LinearResponseCurve

    Raises
    ------
    ValueError
        If ``s_over_n`` holds a non-positive or non-finite value.
    """
    grid = s_over_n_grid(s_over_n)
    if loss != "square" or not ij:
        g = get_loss(loss, **(loss_params or {}))
        loo = np.array([linear_response.loo_limit(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), loss=g).value for v in grid])
        return LinearResponseCurve(grid, None, None, loo)
    errors = [linear_response.linear_response_error(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), inputs="auto") for v in grid]
    return LinearResponseCurve(grid, np.array([e.value for e in errors]),
                               np.array([e.value_second_order for e in errors]),
                               np.array([e.loo_limit for e in errors]))


def holdout_linear_response(problem: RegressionProblem, s_over_n: float, *,
                            X_test: np.ndarray | None = None) -> linear_response.LinearResponseMoments:
    """The infinitesimal-jackknife bootstrap mean and variance at held-out inputs (eqs. 5-7 of the docs).

    Parameters
    ----------
    problem : RegressionProblem
        Training data, kernel and noise.
    s_over_n : float
        Bootstrap size per data point.
    X_test : ndarray of shape (M, d), optional
        Test inputs; default ``problem.X_test``.

    Returns
    -------
    linear_response.LinearResponseMoments
        First-order mean and variance, the second-order mean (shape (M,)) and the derivatives (M, N).

    Raises
    ------
    ValueError
        If there are no test inputs or ``s_over_n`` is not a positive finite number.
    """
    X_test, v = holdout_iv(X_test, problem.X_test, s_over_n)
    return linear_response.linear_response_moments(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), problem.cross(X_test))
