r"""The theory-vs-Monte-Carlo comparisons of [MO03] on the chunked operator: the L1 map on a sample of rows
(Figs. 3-5) and the bootstrap moments at held-out inputs with the infinitesimal jackknife (Fig. 2).

They compose what exists, as :func:`explorer.gp_bootstrap.experiments.distribution_comparison` and
:func:`~explorer.gp_bootstrap.experiments.holdout_comparison` do in memory, and return the same result objects:

* the theory — ADATAP (:func:`explorer.bootstrap.replica.solve_replica`), eq. (60) at the mapped rows
  (:func:`~explorer.gp_bootstrap.experiments.at_inputs`), eq. (48) and the infinitesimal jackknife
  (:func:`explorer.gp_bootstrap.linear_response.linear_response_moments`) — runs on the chunked operator unchanged;
* the Monte-Carlo is :func:`explorer.distributed.predictions.chunked_bootstrap_predictions` (occupations seeded per
  sample and block of rows: the same numbers whatever the chunks and workers, other draws than in memory);
* the mapped rows are those of the in-memory comparison with the same seed (all N up to
  :data:`~explorer.gp_bootstrap.experiments.MAP_ALL_ROWS`, else
  :data:`~explorer.gp_bootstrap.experiments.MAP_INPUTS` drawn at random), and so is the noise floor's seed.

The infinitesimal jackknife at held-out inputs holds the derivatives d_i(x) of every training row (8·M·N bytes):
above :data:`IJ_HOLDOUT_ENTRIES` of them it is not computed (None, and said).

Runtime module: numpy and scipy (and the core).
"""
from __future__ import annotations

import numpy as np

from explorer.bootstrap import estimates, replica
from explorer.chunks import item_generator, root_seed
from explorer.distributed.predictions import chunked_bootstrap_predictions
from explorer.gp_bootstrap import experiments, linear_response
from explorer.gp_bootstrap.l1 import l1_all_inputs, l1_noise_floor, scaled_bin_width
from explorer.progress import NO_HOOKS, Hooks
from explorer.validation import holdout_iv, s_over_n_value

__all__ = ["IJ_HOLDOUT_ENTRIES", "chunked_distribution_comparison", "chunked_holdout_comparison"]

#: Largest M·N of the infinitesimal jackknife at held-out inputs on the chunks (its (M, N) derivatives: 800 MB).
IJ_HOLDOUT_ENTRIES = 100_000_000


def chunked_distribution_comparison(op, y: np.ndarray, noise_var: float, s_over_n: float, mc_samples: int, *,
                                    name: str = "data", bin_width: float | None = None, rng=None, tol: float = 1e-3,
                                    hooks: Hooks | None = None) -> experiments.DistributionComparison:
    """L1 between the Monte-Carlo histograms and the eq. (60) mixture at the mapped rows, and the noise floor, on the
    chunked operator ``op`` (parameters as :func:`~explorer.gp_bootstrap.experiments.distribution_comparison`;
    ``y`` = ``op.rows.targets()``, ``name`` the data's)."""
    v = s_over_n_value(s_over_n)
    root = root_seed(rng)
    hooks = hooks or NO_HOOKS
    n = op.n
    hooks.report(0.0, "solving the replica theory on the chunks")
    inputs = experiments.map_inputs(n, item_generator(root, 2, 0))
    S = v * n
    sol = replica.solve_replica(op, y, noise_var, S, tol=tol)
    preds = chunked_bootstrap_predictions(op, y, noise_var, S, mc_samples, rows=inputs, rng=root,
                                          hooks=hooks.sub(0.05, 0.85, "Monte-Carlo"))
    hooks.report(0.9, "L1 distances")
    bin_width = scaled_bin_width(y) if bin_width is None else bin_width
    mapped = sol if inputs.size == n else experiments.at_inputs(sol, inputs)
    l1 = l1_all_inputs(preds.train, mapped, bin_width)
    floor = l1_noise_floor(mapped, mc_samples, bin_width, item_generator(root, 1, 0))
    hooks.report(1.0, "done")
    return experiments.DistributionComparison(name, mapped, preds.train, l1, floor, n, inputs)


def chunked_holdout_comparison(op, y: np.ndarray, noise_var: float, s_over_n: float, mc_samples: int,
                               X_test: np.ndarray, *, rng=None, tol: float = 1e-3, hooks: Hooks | None = None
                               ) -> experiments.HoldoutComparison:
    """Theory (eq. 48), infinitesimal jackknife (eqs. 5-7 of docs/linear_response.md; None above
    :data:`IJ_HOLDOUT_ENTRIES` entries M·N) and Monte-Carlo mean and variance at the test inputs ``X_test`` (M, d),
    on the chunked operator ``op`` (parameters as :func:`~explorer.gp_bootstrap.experiments.holdout_comparison`)."""
    X_test, v = holdout_iv(X_test, None, s_over_n)
    hooks = hooks or NO_HOOKS
    hooks.report(0.0, "solving the replica theory on the chunks")
    S = v * op.n
    cross = op.features_at(X_test)
    sol = replica.solve_replica(op, y, noise_var, S, tol=tol)
    theory = replica.bootstrap_moments(sol, op, cross)
    preds = chunked_bootstrap_predictions(op, y, noise_var, S, mc_samples, cross=cross, rows=np.array([0]),
                                          rng=rng, hooks=hooks.sub(0.05, 0.9, "Monte-Carlo"))
    mc = estimates.predictive_moments(preds)
    ij = None
    if X_test.shape[0] * op.n <= IJ_HOLDOUT_ENTRIES:
        hooks.report(0.95, "infinitesimal jackknife")
        ij = linear_response.linear_response_moments(op, y, noise_var, S, cross)
    hooks.report(1.0, "done")
    return experiments.HoldoutComparison(theory.mean, theory.var, mc.mean, mc.var, mc.mean_se, mc.var_se, v,
                                         mc_samples, *((ij.mean, ij.var, ij.mean_second_order) if ij else ()))
