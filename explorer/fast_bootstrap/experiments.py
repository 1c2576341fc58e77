"""Full bootstrap vs fast bootstrap vs replica theory ([LSWV05] and [MO03]), shared by the CLI, views and notebooks.

:func:`compare_bootstraps` runs, for one data set and one model family, the full bootstrap of [LSWV05] §3 on
the full grid, the fast bootstrap of §4 on the reduced grid (F test of eq. 11) and — for the LS-SVM, a
kernel model — the replica theory's analytical optimism and the exact leave-one-out error over the full grid
(both without refits), and returns a frozen result with ``as_dict()`` for JSON. The data, the model family and
the default grids and replication counts (Tables 1, toy, and 2, Santa Fe) are :mod:`~explorer.fast_bootstrap.problem`;
the replica theory's stage and the run-time estimates :mod:`~explorer.fast_bootstrap.stages`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from explorer.chunks import Executor, SeedLike, child_seed, item_generator, root_seed
from explorer.datasets import Dataset
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap.lssvm import LSSVM, LSSVMLeaveOneOut
from explorer.fast_bootstrap.problem import Setting, make_model, paper_setting, prepare_data
from explorer.fast_bootstrap.stages import ReplicaOptimism, replica_grid, replica_optimism
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["BootstrapComparison", "compare_bootstraps"]


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
        (``explorer.runtime.engine``); the apparent error and the replica theory run in this process.
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


