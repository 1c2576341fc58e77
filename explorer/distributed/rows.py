"""The training rows on a Dask cluster: chunks of (X, y) that the workers hold and can recompute.

A :class:`RowChunks` is a list of Dask futures, one per chunk of consecutive rows, each holding ``(X_c, y_c)``
(float64 arrays of shape (n_c, d) and (n_c,)), with the chunks' sizes known to the client. Every chunk is the result
of a *task* (never of ``Client.scatter``), so Dask can compute it again if the worker that held it dies:

* :meth:`RowChunks.from_arrays` — arrays this process holds (tests, and data that fit here): each chunk's task
  carries its own rows;
* :meth:`RowChunks.teacher` — a generated data set of any size, made on the workers from a seed
  (:func:`teacher_block`): x ~ N(0, I_d) and y = φ_T(x)ᵀw + noise for a random-Fourier-feature teacher. The rows
  are drawn in fixed blocks of :data:`GENERATION_BLOCK` rows, block j from its own child of the seed, so the data
  do not depend on the chunk size or the workers;
* :meth:`RowChunks.from_dataframe` — the partitions of a ``dask.dataframe`` (``--csv``, ``--parquet``), read on the
  workers: X is never whole in this process.

Runtime module: numpy and dask/distributed (never the UI stack).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GENERATION_BLOCK", "TEACHER_FEATURES", "RowChunks", "chunk_bounds", "teacher_block", "teacher_rows"]

#: Rows drawn from one child seed by the generated teacher data set (fixed: the data do not depend on the chunking).
GENERATION_BLOCK = 65_536

#: Random Fourier features of the generated teacher: y = φ_T(x)ᵀw + ε, φ_T of a squared exponential of lengthscale
#: √d on x ~ N(0, I_d) (a smooth function of all inputs).
TEACHER_FEATURES = 64


def chunk_bounds(n: int, chunk_rows: int) -> tuple[tuple[int, int], ...]:
    """``(start, stop)`` of the chunks of ``chunk_rows`` consecutive rows of N = ``n`` (the last may be shorter)."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"--chunk-rows must be a positive whole number of rows, got {chunk_rows!r}.")
    return tuple((start, min(start + int(chunk_rows), n)) for start in range(0, n, int(chunk_rows)))


def _teacher_model(d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(Ω, w): the teacher's frequencies (TEACHER_FEATURES/2, d) and weights (TEACHER_FEATURES,), from ``seed``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    omega = rng.standard_normal((TEACHER_FEATURES // 2, d)) / np.sqrt(d)
    return omega, rng.standard_normal(TEACHER_FEATURES)


def teacher_block(block: int, n: int, d: int, seed: int, noise_var: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``block·GENERATION_BLOCK`` .. of the generated teacher data set of N = ``n`` rows (the block's own child
    seed: ``SeedSequence(seed)`` spawn key (1, block)).

    x ~ N(0, I_d); y = φ_T(x)ᵀw + ε, ε ~ N(0, ``noise_var``), φ_T = √(2/F)[cos Ωx, sin Ωx] with F =
    :data:`TEACHER_FEATURES` features and w ~ N(0, I_F) (a draw of a GP with a squared-exponential kernel of
    lengthscale √d, variance ≈ 1).
    """
    start = block * GENERATION_BLOCK
    rows = max(0, min(GENERATION_BLOCK, n - start))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, block)))
    X = rng.standard_normal((rows, d))
    noise = rng.standard_normal(rows) * np.sqrt(noise_var)
    omega, w = _teacher_model(d, seed)
    proj = X @ omega.T
    phi = np.sqrt(2.0 / TEACHER_FEATURES) * np.hstack([np.cos(proj), np.sin(proj)])
    return X, phi @ w + noise


def teacher_rows(start: int, stop: int, n: int, d: int, seed: int, noise_var: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``start`` .. ``stop − 1`` of the generated teacher data set (the blocks they overlap, sliced)."""
    first, last = start // GENERATION_BLOCK, (stop - 1) // GENERATION_BLOCK
    Xs, ys = [], []
    for block in range(first, last + 1):
        X, y = teacher_block(block, n, d, seed, noise_var)
        lo = max(start - block * GENERATION_BLOCK, 0)
        hi = min(stop - block * GENERATION_BLOCK, X.shape[0])
        Xs.append(X[lo:hi])
        ys.append(y[lo:hi])
    return np.concatenate(Xs), np.concatenate(ys)


def _rows_of(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A chunk of rows this process sent with the task (copied by the transfer: the worker owns it)."""
    return np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)


def _partition_rows(frame, columns: Sequence[str], target: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of one pandas partition: the input columns and the target as float64."""
    return (np.ascontiguousarray(frame[list(columns)].to_numpy(dtype=float)),
            np.ascontiguousarray(frame[target].to_numpy(dtype=float)))


def _length(part) -> int:
    return int(part[1].shape[0])


def _take_rows(part, local: np.ndarray) -> np.ndarray:
    return part[0][local]


def _targets(part) -> np.ndarray:
    return part[1]


def _finite_rows(part) -> int:
    """How many rows of a chunk have a non-finite input or target."""
    X, y = part
    return int(np.count_nonzero(~(np.all(np.isfinite(X), axis=1) & np.isfinite(y))))


@dataclass(frozen=True, eq=False)
class RowChunks:
    """Training rows held by the workers of ``client`` as chunks of consecutive rows (see the module docstring).

    Attributes
    ----------
    client : distributed.Client
    parts : list of Future
        Chunk c holds ``(X_c, y_c)``.
    sizes : tuple of int
        Rows of each chunk.
    d : int
        Inputs per row.
    """

    client: Any = field(repr=False)
    parts: list = field(repr=False)
    sizes: tuple[int, ...]
    d: int
    description: str = ""

    @property
    def n(self) -> int:
        """N, the number of rows."""
        return int(sum(self.sizes))

    @property
    def offsets(self) -> np.ndarray:
        """Row where each chunk starts, and N at the end (shape (chunks + 1,))."""
        return np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    def split(self, v: np.ndarray) -> list[np.ndarray]:
        """An N-vector (or N × k array) cut into the chunks' pieces (views)."""
        o = self.offsets
        return [v[o[c]:o[c + 1]] for c in range(len(self.sizes))]

    @classmethod
    def from_arrays(cls, client, X: np.ndarray, y: np.ndarray, chunk_rows: int) -> RowChunks:
        """Chunks of ``chunk_rows`` rows of arrays this process holds; each chunk's task carries its rows."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        bounds = chunk_bounds(X.shape[0], chunk_rows)
        parts = [client.submit(_rows_of, X[a:b], y[a:b], pure=False) for a, b in bounds]
        return cls(client, parts, tuple(b - a for a, b in bounds), X.shape[1], f"{X.shape[0]:,} rows in memory")

    @classmethod
    def teacher(cls, client, n: int, d: int, chunk_rows: int, *, seed: int = 0, noise_var: float = 0.01) -> RowChunks:
        """The generated teacher data set of ``n`` rows and ``d`` inputs (:func:`teacher_block`), made on the workers."""
        bounds = chunk_bounds(n, chunk_rows)
        parts = [client.submit(teacher_rows, a, b, n, d, seed, noise_var, pure=False) for a, b in bounds]
        return cls(client, parts, tuple(b - a for a, b in bounds), d,
                   f"generated teacher data, {n:,} rows, {d} inputs, seed {seed}")

    @classmethod
    def from_dataframe(cls, client, frame, columns: Sequence[str], target: str, description: str = "") -> RowChunks:
        """The partitions of a ``dask.dataframe`` as chunks (read on the workers); empty partitions are dropped."""
        import dask

        delayed = frame.to_delayed()
        parts = client.compute([dask.delayed(_partition_rows)(p, list(columns), target) for p in delayed])
        sizes = client.gather(client.map(_length, parts, pure=False))
        kept = [(p, s) for p, s in zip(parts, sizes) if s > 0]
        return cls(client, [p for p, _ in kept], tuple(int(s) for _, s in kept), len(columns), description)

    def rows(self, index: np.ndarray) -> np.ndarray:
        """X at the (sorted, distinct) rows ``index``, gathered from the chunks that hold them (landmarks)."""
        index = np.asarray(index, dtype=np.int64)
        o = self.offsets
        chunk_of = np.searchsorted(o, index, side="right") - 1
        futures, order = [], []
        for c in np.unique(chunk_of):
            local = index[chunk_of == c] - o[c]
            futures.append(self.client.submit(_take_rows, self.parts[c], local, pure=False))
            order.append(c)
        return np.concatenate(self.client.gather(futures))

    def targets(self) -> np.ndarray:
        """y, gathered in row order (the theory keeps its N-vectors in this process)."""
        return np.concatenate(self.client.gather(self.client.map(_targets, self.parts, pure=False)))

    def count_non_finite(self) -> int:
        """Rows with a NaN or infinite input or target."""
        return int(sum(self.client.gather(self.client.map(_finite_rows, self.parts, pure=False))))
