r"""The replica bootstrap beyond one machine: the low-rank theory with the rows of the data in chunks on a Dask cluster.

A third implementation of the kernel operator (:mod:`explorer.operators`): :class:`ChunkedFeatureKernel`, K = ΦΦᵀ
with Φ's rows computed by the workers from the chunks of X they hold. Every O(N m²) step of the low-rank theory is a
sum over rows of m×m (or m-vector) pieces — ΦᵀDΦ, Φᵀv, the diagonal of ΦMΦᵀ, (G∘G)v — so the chunks return those
pieces and this process adds them in chunk order (:mod:`explorer.distributed.operator`). The theory of
:mod:`explorer.bootstrap` runs on it unchanged: ADATAP iterated and approximate, ε(S) for any loss (eqs. 45-46),
eq. (48) at test inputs, eq. (60) at any row, the leave-one-out limit and the infinitesimal jackknife
(:mod:`explorer.distributed.responses`); the closing is the features' ``"fixed-point"``; a capability it lacks (the
dense matrix for VG and MF) is a method it does not have. The Monte-Carlo bootstrap runs on the same chunks
(:mod:`explorer.distributed.bootstrap_error` for ε(S), :mod:`explorer.distributed.predictions` for the predictors at
chosen rows and test inputs), and so do the L1 map on a sample of rows and the comparison at held-out inputs
(:mod:`explorer.distributed.comparisons`).

* :mod:`~explorer.distributed.rows` — the rows on the cluster: from arrays, from the partitions of CSV or Parquet
  files (``dask.dataframe``), or generated on the workers from a seed (:func:`~explorer.distributed.rows.teacher_block`);
* :mod:`~explorer.distributed.feature_maps` — the map φ broadcast once (Nyström landmarks and factor, or random
  Fourier frequencies);
* :mod:`~explorer.distributed.passes` — what a worker computes on one chunk;
* :mod:`~explorer.distributed.operator` — the operator and its site posterior G;
* :mod:`~explorer.distributed.held_out_rows` — the first K rows as test inputs, the others as the training chunks.

:func:`chunked_nystrom` builds the operator of a Nyström model whose landmarks are drawn as
:func:`explorer.lowrank.nystrom_features` draws them (the same rows for the same N, m and seed), so the chunked and
the in-memory models are the same model.

Runtime layer: imports dask/distributed and the core, never the UI stack (panel, param, holoviews, bokeh, views).
"""
from __future__ import annotations

import numpy as np

from explorer.distributed.feature_maps import FeatureMap, nystrom_map, rff_map
from explorer.distributed.operator import ChunkedFeatureKernel, ChunkedSitePosterior, worker_memory
from explorer.distributed.rows import RowChunks, chunk_bounds, teacher_rows
from explorer.kernels import Kernel
from explorer.lowrank import NYSTROM_JITTER, check_rank, draw_landmarks

__all__ = ["ChunkedFeatureKernel", "ChunkedSitePosterior", "FeatureMap", "RowChunks", "chunk_bounds",
           "chunked_nystrom", "nystrom_map", "rff_map", "teacher_rows", "worker_memory"]


def chunked_nystrom(rows: RowChunks, kernel: Kernel, rank: int, *, rng=0, jitter: float = NYSTROM_JITTER,
                    hold_features: bool | str = "auto") -> ChunkedFeatureKernel:
    """The chunked operator of Nyström features of ``rank`` landmarks drawn from ``rng`` among the N rows.

    Parameters
    ----------
    rows : RowChunks
        The training rows on the cluster.
    kernel : Kernel
        The covariance function.
    rank : int
        m, the number of landmarks (:func:`explorer.lowrank.check_rank`; at most the rows of the smallest chunk is
        not required: landmarks are gathered from whichever chunks hold them).
    rng : int, Generator or None
        Seed of the landmark rows (:func:`explorer.lowrank.draw_landmarks`).
    jitter : float
        Relative jitter of K_LL (:data:`explorer.lowrank.NYSTROM_JITTER`).
    hold_features : bool or "auto"
        Whether the workers keep Φ's chunks (see :class:`ChunkedFeatureKernel`).

    Returns
    -------
    ChunkedFeatureKernel
    """
    check_rank(rank, rows.n)
    idx = draw_landmarks(rows.n, rank, rng)
    return ChunkedFeatureKernel.of(rows, nystrom_map(kernel, rows.rows(idx), jitter), hold_features=hold_features)


def landmark_rows(n: int, rank: int, rng=0) -> np.ndarray:
    """The landmark rows :func:`chunked_nystrom` draws (those of :func:`explorer.lowrank.nystrom_features`)."""
    return draw_landmarks(n, rank, rng)
