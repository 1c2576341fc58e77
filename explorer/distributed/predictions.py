r"""Monte-Carlo bootstrap predictions on the chunked operator: the refitted predictor at chosen training rows and at
test inputs, for the L1 map on a sample of rows ([MO03] Figs. 3-5) and the bootstrap moments at held-out inputs
(Fig. 2).

Sample b refits the low-rank GP on its occupation numbers s as :mod:`explorer.distributed.bootstrap_error` does:
A_s = I_m + Φᵀ diag(w) Φ, μ_s = A_s⁻¹ Φᵀ(w ∘ y), w = s/σ², summed over the chunks in chunk order, with the
occupations drawn per sample and block of rows (:func:`~explorer.distributed.bootstrap_error.row_occupations`: the
same whatever the chunks and the workers, other draws than the in-memory Monte-Carlo's from the same distribution).
The predictor is f(x; s) = φ(x)ᵀμ_s: at the R chosen rows from their features φ_R (computed here once from the
rows of X gathered from the chunks), at the M test inputs from φ(X_test). A batch of samples is one pass over the
data; only the batch's (batch, m, m) and (batch, m) pieces and the chosen rows' occupations travel back. This
process keeps the (B, R) and (B, M) predictions, as the in-memory Monte-Carlo with ``rows`` does.

Runtime module: numpy and scipy (and the core's seeds and estimates).
"""
from __future__ import annotations

import numpy as np

from explorer.bootstrap.estimates import BootstrapPredictions
from explorer.chunks import root_seed, s_over_n_group
from explorer.distributed import passes
from explorer.distributed.bootstrap_error import (
    BATCH,
    passes_sum,
    row_occupations,
    weighted_refit_means,
    weighted_systems,
)
from explorer.distributed.operator import ALLOWED_FAILURES
from explorer.progress import NO_HOOKS, Hooks
from explorer.runtime.engine import EngineError
from explorer.validation import noise_variance, positive_int, positive_S

__all__ = ["chunked_bootstrap_predictions"]


def _batch_systems(part, fmap, y, start, stop, n, nu, root, group, samples, noise_var, local):
    """For each sample of the batch: Φ_cᵀ diag(w) Φ_c, Φ_cᵀ(w ∘ y_c) (w = s/σ²), and the occupations of the chunk's
    rows ``local`` (positions in the chunk) that the caller keeps."""
    phi = passes.features(part, fmap)
    occ = row_occupations(root, group, samples, start, stop, n, nu)
    A, rhs = weighted_systems(phi, occ, y, noise_var)
    return A, rhs, occ[:, local]


def chunked_bootstrap_predictions(op, y: np.ndarray, noise_var: float, S: float, n_samples: int, *,
                                  cross: np.ndarray | None = None, rows: np.ndarray | None = None, rng=0,
                                  batch: int = BATCH, hooks: Hooks | None = None) -> BootstrapPredictions:
    """The predictors of ``n_samples`` Poisson(S/N) bootstrap refits on the chunked operator ``op`` (module
    docstring): ⌈B/batch⌉ passes over the data.

    Parameters
    ----------
    op : ChunkedFeatureKernel
        The training rows and the feature map.
    y : ndarray of shape (N,)
        The targets (``op.rows.targets()``).
    noise_var : float
        σ² > 0.
    S : float
        Mean bootstrap sample size, ν = S/N.
    n_samples : int
        B, the number of refits.
    cross : ndarray of shape (M, m), optional
        φ(X_test) (``op.features_at(X_test)``): predictions at the test inputs too.
    rows : ndarray of int, shape (R,), optional
        Training rows (sorted, distinct) whose predictions and occupations are kept; default all N (8·B·N bytes).
    rng : int, SeedSequence, Generator or None
        Root seed: sample b, block j of rows draws from ``child_seed(root, s_over_n_group(S/N), b, j)``.
    batch : int
        Samples refitted per pass.
    hooks : Hooks, optional
        ``report`` after every batch; ``should_stop`` cancels between batches (``Cancelled`` counts samples).

    Returns
    -------
    BootstrapPredictions
        ``occupations`` and ``train`` of shape (B, R), ``test`` of shape (B, M) (None without ``cross``), S and
        the ``"poisson"`` scheme.
    """
    hooks = hooks or NO_HOOKS
    n = op.n
    noise_var = float(noise_variance(noise_var))
    S = positive_S(S)
    n_samples = positive_int(n_samples, "n_samples", "It is the number of bootstrap samples.")
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"`y` must have shape ({n},), one target per row, got shape {y.shape}.")
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or rows.size == 0 or rows.min() < 0 or rows.max() >= n or np.any(np.diff(rows) <= 0):
        raise ValueError(f"`rows` must be sorted, distinct training-row indices in 0..{n - 1}.")
    phi_rows = op.features_at(op.rows.rows(rows))                         # φ at the kept rows, (R, m)
    nu = S / n
    root, group = root_seed(rng), s_over_n_group(nu)
    o = op.rows.offsets
    bounds = [(int(o[c]), int(o[c + 1])) for c in range(len(op.parts))]
    local = [rows[(rows >= a) & (rows < b)] - a for a, b in bounds]      # the kept rows of each chunk
    client = op.client
    y_parts = op.rows.split(y)
    train = np.empty((n_samples, rows.size))
    test = None if cross is None else np.empty((n_samples, cross.shape[0]))
    occupations = np.empty((n_samples, rows.size), dtype=np.int64)
    hooks.step(0, n_samples, "samples", "Monte-Carlo refits on the chunks")
    for first in range(0, n_samples, batch):
        hooks.check(first, n_samples)
        samples = range(first, min(first + batch, n_samples))
        small = [client.submit(passes.value, a, pure=False) for a in (samples, noise_var)]
        futures = [client.submit(_batch_systems, part, op._fmap(), y_c, a, b, n, nu, root, group, *small, loc,
                                 pure=False)
                   for part, y_c, (a, b), loc in zip(op.parts, y_parts, bounds, local)]
        op.passes_made["passes"] += 1
        try:
            pieces = client.gather(futures)
        except Exception as exc:
            from distributed.scheduler import KilledWorker

            if isinstance(exc, KilledWorker):
                raise EngineError(f"A chunk of rows lost its Dask worker {ALLOWED_FAILURES} times (out of memory, or "
                                  "stopped); the Monte-Carlo was given up. Give the workers more memory or use "
                                  "smaller chunks.") from None
            raise
        finally:
            client.cancel(futures + small)
        A = passes_sum([p[0] for p in pieces])
        rhs = passes_sum([p[1] for p in pieces])
        mu = weighted_refit_means(A, rhs)
        block = slice(first, first + len(samples))
        train[block] = mu @ phi_rows.T                                    # f(x_i; s) = φ_iᵀ μ_s
        occupations[block] = np.concatenate([p[2] for p in pieces], axis=1)
        if test is not None:
            test[block] = mu @ cross.T
        hooks.step(block.stop, n_samples, "samples", "Monte-Carlo refits on the chunks")
    return BootstrapPredictions(occupations, train, test, S, "poisson")
