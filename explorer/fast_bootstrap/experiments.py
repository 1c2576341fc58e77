"""Full bootstrap vs fast bootstrap vs replica theory (seeds 002 and 000), shared by the CLI, views and notebooks.

:func:`compare_bootstraps` runs, for one data set and one model family, the full bootstrap of seed 002 §3 on
the full grid, the fast bootstrap of §4 on the reduced grid (F test of eq. 11) and — for the LS-SVM, a
kernel model — the replica theory's analytical optimism and the exact leave-one-out error over the full grid
(both without refits), and returns a frozen result with
``as_dict()`` for JSON. The default grids and replication counts are those of Tables 1 (toy) and 2 (Santa Fe).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial.distance import pdist

from explorer.bootstrap.replica import ConvergenceError, bootstrap_optimism, solve_replica
from explorer.chunks import Executor, SeedLike, child_seed, item_generator, root_seed
from explorer.datasets import Dataset
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap.lssvm import LSSVM, LSSVMLeaveOneOut
from explorer.fast_bootstrap.networks import MLP, RBFN
from explorer.kernels import Constant, SquaredExponential
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["MODELS", "Grids", "Setting", "PreparedData", "TABLE_1", "TABLE_2", "TOY_LENGTHSCALE", "paper_setting", "make_model",
           "prepare_data", "ReplicaOptimism", "replica_optimism", "BootstrapComparison", "compare_bootstraps",
           "replica_grid", "CALIBRATION", "estimated_seconds"]

MODELS = ("ls-svm", "rbfn", "mlp")

#: Kernel width ℓ of the LS-SVM on the toy data: the maximum-evidence lengthscale of a GP on eq. (19) data
#: (0.084-0.087 over seeds 0-2 with seed 001's optimiser); seed 002 does not state its width.
TOY_LENGTHSCALE = 0.085

#: Prior variance of the constant kernel that stands in for the LS-SVM's unregularised bias b in the
#: replica theory (b ~ N(0, c); the shrinkage of b is ≈ 1/(1 + c N γ), below 1e-5 here).
BIAS_VARIANCE = 100.0



@dataclass(frozen=True)
class Grids:
    """The complexity grids of a :class:`Setting` as arrays: ``full`` (full bootstrap, §3) and ``fast``
    (the reduced grid of the fast bootstrap, §4); ndarrays of shape (Q,) and (Q_fast,)."""

    full: np.ndarray
    fast: np.ndarray


@dataclass(frozen=True)
class Setting:
    """Grids (start, stop, step) and replication counts of the full and fast bootstrap (Tables 1-2)."""

    full_grid: tuple[float, float, float]
    full_replications: int
    fast_grid: tuple[float, float, float]
    fast_replications: int
    log_complexity: bool = False

    def grids(self) -> Grids:
        """The full and the reduced grid as arrays (:func:`~explorer.fast_bootstrap.bootstrap.complexity_grid`).

        Returns
        -------
        Grids
            ``full`` from ``full_grid`` and ``fast`` from ``fast_grid``.

        Raises
        ------
        ValueError
            If a (start, stop, step) triple does not describe a grid (see ``complexity_grid``).
        """
        return Grids(fastboot.complexity_grid(*self.full_grid), fastboot.complexity_grid(*self.fast_grid))


#: Table 1 of seed 002 (toy example): full bootstrap 100 replications, fast bootstrap 10.
TABLE_1 = {
    "mlp": Setting((1, 13, 1), 100, (1, 13, 3), 10),
    "rbfn": Setting((10, 19, 1), 100, (10, 19, 3), 10),
    "ls-svm": Setting((5, 50, 0.1), 100, (5, 50, 5), 10, log_complexity=True),
}

#: Table 2 of seed 002 (Santa Fe laser, fast bootstrap only; the full grid here is the reduced one
#: refined to step 1 / 5 / 5 so that the full bootstrap can be compared when asked for).
TABLE_2 = {
    "mlp": Setting((4, 9, 1), 100, (4, 9, 1), 10),
    "rbfn": Setting((60, 140, 5), 100, (60, 140, 20), 20),
    "ls-svm": Setting((15, 105, 1), 100, (15, 105, 5), 10, log_complexity=True),
}


def paper_setting(model: str, data: Dataset) -> Setting:
    """Table 1's setting for the toy data, Table 2's for a time series embedding, Table 1's otherwise.

    Parameters
    ----------
    model : {"ls-svm", "rbfn", "mlp"}
        The model family.
    data : Dataset
        The data; a NAR embedding (target ``x(t+1)``) selects Table 2.

    Returns
    -------
    Setting
        Grids and replication counts of the paper for this model.

    Raises
    ------
    ValueError
        If ``model`` is not one of :data:`MODELS`.
    """
    _check_model(model)
    return (TABLE_2 if data.target_name == "x(t+1)" else TABLE_1)[model]


def make_model(model: str, data: Dataset, *, lengthscale: float | None = None, wsf: float = 8.0,
               max_epochs: int = 200, n_init: int = 3):
    """The model family: LS-SVM with a Gaussian kernel of width ℓ (default: TOY_LENGTHSCALE on the toy data,
    the median distance between standardised inputs otherwise), RBFN with width factor WSF, or MLP.

    Parameters
    ----------
    model : {"ls-svm", "rbfn", "mlp"}
        The model family.
    data : Dataset
        The data (for the LS-SVM's default width).
    lengthscale : float, optional
        ℓ of the LS-SVM's kernel; default :func:`default_lengthscale`.
    wsf : float
        Width scaling factor WSF of the RBFN, eq. (14).
    max_epochs : int
        Largest number of Levenberg–Marquardt evaluations per MLP training run.
    n_init : int
        Random restarts per MLP training.

    Returns
    -------
    LSSVM, RBFN or MLP
        The family; only the options of the chosen model are used.

    Raises
    ------
    ValueError
        If ``model`` is unknown or the LS-SVM width is not positive (or as the RBFN and MLP constructors).
    """
    _check_model(model)
    if model == "ls-svm":
        ell = lengthscale if lengthscale is not None else default_lengthscale(data)
        if not (np.isfinite(ell) and ell > 0):
            raise ValueError(f"the LS-SVM kernel width must be positive, got {ell}.")
        return LSSVM(SquaredExponential(lengthscale=float(ell)))
    if model == "rbfn":
        return RBFN(wsf=float(wsf))
    return MLP(max_epochs=int(max_epochs), n_init=int(n_init))


def default_lengthscale(data: Dataset) -> float:
    """TOY_LENGTHSCALE for the toy data; the median pairwise distance of the prepared inputs otherwise.

    Parameters
    ----------
    data : Dataset
        A regression data set (:func:`prepare_data`).

    Returns
    -------
    float
        ℓ; the median is over the first 1000 prepared inputs.
    """
    if data.name == "toy":
        return TOY_LENGTHSCALE
    return float(np.median(pdist(prepare_data(data).X[:1000])))


@dataclass(frozen=True)
class PreparedData:
    """Inputs and targets as the bootstrap sees them (:func:`prepare_data`)."""

    X: np.ndarray  # inputs, shape (N, d)
    y: np.ndarray  # targets, shape (N,)


def prepare_data(data: Dataset) -> PreparedData:
    """X and y: the toy data in the paper's units; any other data set standardised, inputs and target, by
    :meth:`Dataset.standardized` (mean 0, sample sd 1, as everywhere in the project).

    Parameters
    ----------
    data : Dataset
        A regression data set.

    Returns
    -------
    PreparedData
        ``X`` of shape (N, d) and ``y`` of shape (N,).

    Raises
    ------
    ValueError
        If the data set is not a regression task.
    """
    if data.task != "regression":
        raise ValueError(f"the fast bootstrap of seed 002 is for regression; {data.name!r} is a "
                         f"{data.task} data set.")
    prepared = data if data.name == "toy" else data.standardized(targets=True)
    return PreparedData(np.asarray(prepared.inputs), np.asarray(prepared.targets))


@dataclass(frozen=True)
class ReplicaOptimism:
    """The replica theory's bootstrap optimism of the LS-SVM along γ (no refits); arrays of shape (G,)."""

    grid: np.ndarray
    validation_error: np.ndarray  # E^{A,I}, bootstrap average of eq. (4)
    training_error: np.ndarray  # E^{A,A}, bootstrap average of eq. (3)
    converged: np.ndarray

    @property
    def optimism(self) -> np.ndarray:
        return self.validation_error - self.training_error


def replica_optimism(model: LSSVM, X: np.ndarray, y: np.ndarray, grid: np.ndarray, *, tol: float = 1e-3,
                     hooks: Hooks | None = None) -> ReplicaOptimism:
    """Bootstrap optimism of the LS-SVM for every γ of ``grid`` from the replica/ADATAP theory of seed 000.

    The LS-SVM is the posterior mean of a GP with covariance k and noise variance σ² = 1/γ; its bias b is
    the GP's constant kernel of variance BIAS_VARIANCE (y centred) in the limit of a flat prior. Bootstrap
    samples of size S = N (Poisson occupations). Solutions are warm-started along the grid. ``hooks``:
    ``check`` before and ``report`` after every γ.

    Parameters
    ----------
    model : LSSVM
        The family (its kernel and ``bias``).
    X : ndarray of shape (N, d)
        Prepared inputs.
    y : ndarray of shape (N,)
        Prepared targets.
    grid : ndarray of shape (G,)
        Values of γ, strictly increasing.
    tol : float
        Tolerance of the ADATAP solves (a failed single-precision solve is redone in double precision).
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    ReplicaOptimism
        E^{A,I} and E^{A,A} (bootstrap averages of eqs. 4 and 3) and convergence at every γ.
    """
    grid = fastboot.check_grid(grid)
    K = model.kernel(X) + (Constant(BIAS_VARIANCE)(X) if model.bias else 0.0)
    yc = y - y.mean() if model.bias else y
    rows, previous = [], None
    hooks = hooks or NO_HOOKS
    for k, gamma in enumerate(grid):
        hooks.check(k, grid.size, "values of γ")
        previous = _replica_solution(K, yc, 1.0 / gamma, y.size, tol, previous)
        errors = bootstrap_optimism(previous)
        rows.append((errors.validation, errors.training, previous.converged))
        hooks.step(k + 1, grid.size, "values of γ", "replica theory")
    v, t, ok = (np.array(c) for c in zip(*rows))
    return ReplicaOptimism(grid=grid, validation_error=v, training_error=t, converged=ok.astype(bool))


def _replica_solution(K, y, noise_var, S, tol, init):
    try:
        return solve_replica(K, y, noise_var, S, tol=tol, init=init)
    except ConvergenceError:  # single-precision phase broke down: redo in double precision
        return solve_replica(K, y, noise_var, S, tol=tol, init=None, precision="double")


@dataclass(frozen=True)
class BootstrapComparison:
    """Full vs fast bootstrap (and the replica theory for the LS-SVM) on one data set and model family.

    ``loo`` is the LS-SVM's exact leave-one-out error over the full grid (:func:`~explorer.fast_bootstrap.lssvm.lssvm_loo`,
    zero refits); None for the other families.
    """

    dataset: str
    model: str
    complexity: str
    setting: Setting
    fast: fastboot.FastBootstrapCurve
    full: fastboot.BootstrapCurve | None
    replica: ReplicaOptimism | None
    seconds: dict
    loo: LSSVMLeaveOneOut | None = None

    @property
    def gain(self) -> float | None:
        """1 − (models trained by the fast bootstrap)/(by the full one), as in Table 1 (with eq. 7's models)."""
        return None if self.full is None else 1.0 - self.fast.models_trained / self.full.models_trained

    @property
    def paper_gain(self) -> float | None:
        """Table 1's gain: bootstrap models only (J·Q), the apparent-error models left out."""
        return None if self.full is None else 1.0 - self.fast.bootstrap_models / self.full.bootstrap_models

    def as_dict(self) -> dict:
        """The comparison for JSON (non-finite F and p-value as None).

        Returns
        -------
        dict
            ``dataset``, ``model``, ``complexity``, the ``fast`` and ``full`` curves (``full`` None when not
            run), ``gain``, ``paper_gain``, ``seconds`` and, for the LS-SVM, ``replica`` (when run) and ``loo``
            (``grid``, ``generalization_error``, ``selected``).
        """
        fast = self.fast
        out = {"dataset": self.dataset, "model": self.model, "complexity": self.complexity,
               "fast": {**_curve_dict(fast), "sample_grid": fast.sample_grid.tolist(),
                        "sample_optimism": fast.sample_optimism.tolist(), "F": _num(fast.f_test.F),
                        "df": [fast.f_test.df_num, fast.f_test.df_den], "p_value": _num(fast.f_test.p_value),
                        "degree": fast.degree, "log_complexity": fast.log_complexity},
               "full": None if self.full is None else {**_curve_dict(self.full),
                                                      "optimism_se": self.full.optimism_se.tolist()},
               "gain": self.gain, "paper_gain": self.paper_gain, "seconds": self.seconds}
        if self.replica is not None:
            out["replica"] = {"grid": self.replica.grid.tolist(), "optimism": self.replica.optimism.tolist(),
                              "converged": bool(self.replica.converged.all())}
        if self.loo is not None:
            out["loo"] = {"grid": self.loo.grid.tolist(), "generalization_error": self.loo.generalization_error.tolist(),
                          "selected": self.loo.selected}
        return out


def _num(x: float):
    return None if not np.isfinite(x) else float(x)


def _curve_dict(curve) -> dict:
    return {"grid": curve.grid.tolist(), "apparent_error": curve.apparent_error.tolist(),
            "optimism": curve.optimism.tolist(), "generalization_error": curve.generalization_error.tolist(),
            "selected": curve.selected, "models_trained": int(curve.models_trained),
            "bootstrap_models": int(curve.bootstrap_models), "replications": int(curve.replications)}


def compare_bootstraps(data: Dataset, model: str = "ls-svm", setting: Setting | None = None, *,
                       rng: SeedLike = None, with_full: bool = True, with_replica: bool = True,
                       replica_points: int = 46, kappa0: int = 1, kappa1: int = 2, model_options: dict | None = None,
                       chunk_size: int = fastboot.REPLICATION_CHUNK_SIZE, executor: Executor | None = None,
                       hooks: Hooks | None = None) -> BootstrapComparison:
    """Run the fast bootstrap, and unless switched off the full bootstrap and the replica optimism; for the LS-SVM
    also the exact leave-one-out error over the full grid (one eigendecomposition, no refits, no randomness).

    One root seed drives everything: the apparent error draws from ``chunks.item_generator(root, 0, 0)``, the
    fast and the full bootstrap are jobs seeded by the root's children 1 and 2 (their replications run on
    ``executor`` in chunks of ``chunk_size``), so switching the full bootstrap off does not change the fast
    result, and neither the executor nor the chunk size changes a number. ``hooks``: progress in models
    trained; a stop request cancels the queued replications and is checked between values of γ.

    Parameters
    ----------
    data : Dataset
        A regression data set (:func:`prepare_data`).
    model : {"ls-svm", "rbfn", "mlp"}
        The model family (:func:`make_model`).
    setting : Setting, optional
        Grids and replications; default :func:`paper_setting`.
    rng : int, SeedSequence, Generator or None
        Root seed of everything (``chunks.root_seed``).
    with_full : bool
        Also run the full bootstrap on the full grid.
    with_replica : bool
        Also compute the replica optimism (LS-SVM only).
    replica_points : int
        Values of γ of the replica theory (:func:`replica_grid`).
    kappa0, kappa1 : int
        Polynomial orders of the F test, eq. (11).
    model_options : dict, optional
        Keyword arguments of :func:`make_model`.
    chunk_size : int
        Bootstrap replications per chunk (changes no number).
    executor : Executor, optional
        Where the bootstrap replications run: in this process (default) or on Dask workers
        (``explorer.engine``); the apparent error and the replica theory run in this process.
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    BootstrapComparison
        The fast curve, the full curve, the replica optimism and the LS-SVM leave-one-out (None when not run) and
        seconds per stage.

    Raises
    ------
    ValueError
        If the data, the model or the F-test orders for the reduced grid are invalid (checked before any
        training).
    """
    setting = setting or paper_setting(model, data)
    fam = make_model(model, data, **(model_options or {}))
    prepared, grids = prepare_data(data), setting.grids()
    X, y, grid, sample_grid = prepared.X, prepared.y, grids.full, grids.fast
    fastboot.check_f_test(sample_grid.size, kappa0, kappa1)  # fail before any training
    root = root_seed(rng)
    seed_fast, seed_full = (child_seed(root, k) for k in (1, 2))
    run = dict(chunk_size=chunk_size, executor=executor)
    hooks = hooks or NO_HOOKS
    plan = _Plan(setting, grid.size, sample_grid.size, with_full, hooks)
    seconds = {}
    t = time.perf_counter()
    apparent = fastboot.apparent_error(fam, X, y, grid, item_generator(root, 0, 0))
    seconds["apparent"] = time.perf_counter() - t
    plan.done("apparent", grid.size)
    t = time.perf_counter()
    fast = fastboot.fast_bootstrap(fam, X, y, grid, sample_grid, setting.fast_replications, kappa0=kappa0,
                                   kappa1=kappa1, log_complexity=setting.log_complexity, rng=seed_fast,
                                   apparent=apparent, **run,
                                   hooks=plan.stage("fast bootstrap", sample_grid.size, setting.fast_replications))
    seconds["fast"] = time.perf_counter() - t
    full = None
    if with_full:
        t = time.perf_counter()
        full = fastboot.full_bootstrap(fam, X, y, grid, setting.full_replications, rng=seed_full,
                                       apparent=apparent, **run,
                                       hooks=plan.stage("full bootstrap", grid.size, setting.full_replications))
        seconds["full"] = time.perf_counter() - t
    replica = None
    if with_replica and isinstance(fam, LSSVM):
        t = time.perf_counter()
        points = replica_grid(grid, replica_points)
        hooks.report(0.99, f"replica theory at {points.size} values of γ")
        replica = replica_optimism(fam, X, y, points, hooks=hooks.sub(0.99, 0.0))
        seconds["replica"] = time.perf_counter() - t
    loo = None
    if isinstance(fam, LSSVM):
        t = time.perf_counter()
        loo = fam.leave_one_out(X, y, grid)
        seconds["loo"] = time.perf_counter() - t
    hooks.report(1.0, "done")
    return BootstrapComparison(dataset=data.name, model=model, complexity=fam.complexity, setting=setting,
                               fast=fast, full=full, replica=replica, seconds=seconds, loo=loo)


def replica_grid(grid: np.ndarray, points: int) -> np.ndarray:
    """The values of γ of the replica theory in :func:`compare_bootstraps`: ``points`` evenly spaced indices
    of ``grid`` (all of it when it is shorter).

    Parameters
    ----------
    grid : ndarray of shape (G,)
        The full grid of γ.
    points : int
        How many values to keep.

    Returns
    -------
    ndarray of shape (min(points, G),)
        A subset of ``grid`` including its ends (for ``points`` ≥ 2), in order.
    """
    return grid[np.unique(np.linspace(0, grid.size - 1, min(points, grid.size)).round().astype(int))]


#: Seconds on one unloaded core (one BLAS thread) of the toy data at Table 1, N = 200, which
#: :func:`estimated_seconds` scales: an LS-SVM bootstrap replication (one eigendecomposition gives the whole
#: γ path), an RBFN / MLP network per (data point × unit) (MLP: 200 epochs, 3 restarts), the replica theory
#: at one γ.
CALIBRATION = {"ls-svm": 0.006, "rbfn": 1.3e-6, "mlp": 8e-5, "replica": 0.045}


def estimated_seconds(kind: str, model: str, n: int, setting: Setting, options: dict | None = None,
                      points: int = 46) -> float:
    """Rough duration on one unloaded core of the ``"full"`` bootstrap or of the ``"replica"`` theory.

    LS-SVM: one eigendecomposition per replication, ∝ J·N²; RBFN and MLP: one network per complexity and
    replication, ∝ J·N·Σq (MLP also ∝ epochs × restarts); replica theory: ∝ points·N³. Constants:
    :data:`CALIBRATION`. A guide for starting jobs by themselves (the app), not a promise.

    Parameters
    ----------
    kind : {"full", "replica"}
    model : str
        One of :data:`MODELS`.
    n : int
        Number of data points N.
    setting : Setting
        Grids and replication counts (``full_replications`` and the full grid are used).
    options : dict, optional
        Model options (MLP: ``max_epochs``, ``n_init``).
    points : int
        Values of γ of the replica theory.

    Returns
    -------
    float
        Estimated seconds.
    """
    if kind == "replica":
        return CALIBRATION["replica"] * points * (n / 200) ** 3
    J = setting.full_replications
    if model == "ls-svm":
        return CALIBRATION["ls-svm"] * J * (n / 200) ** 2
    units = J * n * float(setting.grids().full.sum())
    if model == "rbfn":
        return CALIBRATION["rbfn"] * units
    options = options or {}
    return CALIBRATION["mlp"] * units * options.get("max_epochs", 200) / 200 * options.get("n_init", 3) / 3


class _Plan:
    """Progress in units of models trained across the stages (apparent error, fast, full)."""

    def __init__(self, setting: Setting, q_full: int, q_fast: int, with_full: bool, hooks: Hooks):
        self.total = q_full + setting.fast_replications * q_fast + (setting.full_replications * q_full
                                                                    if with_full else 0)
        self.offset = 0
        self.hooks = hooks.sub(0.0, 0.99)  # 1.0 only once everything is done

    def done(self, message: str, models: int) -> None:
        self.offset += models
        self.hooks.report(self.offset / self.total, message)

    def stage(self, message: str, models_per_replication: int, replications: int) -> Hooks:
        """Hooks of a bootstrap stage of ``replications`` × ``models_per_replication`` models."""
        start, self.offset = self.offset, self.offset + replications * models_per_replication
        return self.hooks.sub(start / self.total, (self.offset - start) / self.total, message)


def with_overrides(setting: Setting, **changes) -> Setting:
    """A copy of ``setting`` with some fields replaced (validated by building the grids).

    Parameters
    ----------
    setting : Setting
        The setting to start from.
    **changes
        New values of :class:`Setting` fields; None keeps the old value.

    Returns
    -------
    Setting
        The new setting.

    Raises
    ------
    ValueError
        If a grid is invalid (:func:`complexity_grid`) or a replication count is below 1.
    """

    new = replace(setting, **{k: v for k, v in changes.items() if v is not None})
    new.grids()
    for name in ("full_replications", "fast_replications"):
        if int(getattr(new, name)) < 1:
            raise ValueError(f"`{name}` must be at least 1, got {getattr(new, name)}.")
    return new


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}.")
