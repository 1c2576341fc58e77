"""Held-out rows of data on the cluster: the first K rows as test inputs, the others as the training chunks.

As :func:`explorer.gp_bootstrap.problem.regression_problem` does with ``holdout`` = K in memory (Fig. 2 of [MO03]
keeps the first 50 rows of boston): :func:`hold_out_first` gathers X of rows 0 .. K − 1 here (K ≤ 1,000 rows) and
returns the chunks of rows K .. N − 1 — the chunks wholly before row K dropped, the chunk that holds row K cut by a
task on the workers (so Dask can compute it again), the others as they are.

Runtime module: numpy and dask/distributed.
"""
from __future__ import annotations

import numpy as np

from explorer.distributed.rows import RowChunks

__all__ = ["hold_out_first"]


def _rows_from(part, first: int):
    """The chunk's rows ``first`` .. (copies: the worker owns them)."""
    X, y = part
    return np.ascontiguousarray(X[first:]), np.ascontiguousarray(y[first:])


def hold_out_first(rows: RowChunks, k: int) -> tuple[np.ndarray, RowChunks]:
    """(X of the first ``k`` rows, shape (k, d); the chunks of the other rows). ``k`` = 0 returns ``rows``."""
    if k <= 0:
        return np.empty((0, rows.d)), rows
    if k >= rows.n:
        raise ValueError(f"--holdout {k:,} leaves no training rows of {rows.n:,}.")
    X_test = rows.rows(np.arange(k))
    o = rows.offsets
    parts, sizes = [], []
    for c, (part, size) in enumerate(zip(rows.parts, rows.sizes)):
        start, stop = int(o[c]), int(o[c + 1])
        if stop <= k:
            continue
        if start < k:
            part = rows.client.submit(_rows_from, part, k - start, pure=False)
            size = stop - k
        parts.append(part)
        sizes.append(size)
    description = f"{rows.description}, the first {k:,} rows held out" if rows.description else ""
    return X_test, RowChunks(rows.client, parts, tuple(sizes), rows.d, description)
