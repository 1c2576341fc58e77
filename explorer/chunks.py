"""Monte-Carlo work in seeded chunks: the same numbers in this process, on one or many Dask workers, for any chunk size.

A Monte-Carlo job is a set of *items* (bootstrap samples, replications, data sets, restarts) in *groups* (one
group per S value of a learning curve, say). Item b of group g draws all its randomness from its own generator,
:func:`item_generator` (root, g, b): the child of the job's ``numpy.random.SeedSequence`` that ``root.spawn``
gives, by index (``root.spawn(G)[g].spawn(B)[b]``). Bootstrap resamples are keyed by their S/N, not by the S's
place in a list: their group is :func:`s_over_n_group` (S/N), a number at least 2**64 that no fixed small group
(0, 1, 2, ... of the other jobs) can equal, so sample b at one S/N is the same whatever else a job computes. A :class:`Chunk` is a run of consecutive items of one group;
its boundaries depend on the item index only and change no number. A chunk task returns per-item rows (arrays
whose first axis runs over the chunk's items); :func:`run_chunks` puts them back in item order, so every
reduction afterwards sees the same arrays whatever the chunk size, the order of completion or the executor.

An *executor* runs the chunks: :class:`InProcess` (a loop here, the default) or the Dask executor of
:mod:`explorer.runtime.engine`, which scatters the shared inputs once per job and yields results as they complete.
Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from explorer.progress import NO_HOOKS, Cancelled, Hooks

__all__ = ["DEFAULT_CHUNK_SIZE", "Chunk", "ChunkTask", "Executor", "InProcess", "IN_PROCESS", "SeedLike",
           "root_seed", "item_generator", "child_seed", "s_over_n_group", "S_OVER_N_DIGITS", "plan_chunks", "run_chunks", "run_groups", "stack_rows",
           "run_items"]

DEFAULT_CHUNK_SIZE = 32
"""Items per chunk unless a caller says otherwise (a GP sample on boston costs ~2 ms, so ~60 ms a chunk)."""

SeedLike = int | np.random.SeedSequence | np.random.Generator | None


@dataclass(frozen=True)
class Chunk:
    """Items ``start`` .. ``stop - 1`` of group ``group``; ``index`` is the chunk's place in the job."""

    index: int
    group: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


ChunkTask = Callable[..., Any]
"""``task(shared, chunk, root, *args) -> rows``: a module-level function (picklable) that computes one chunk."""


class Executor(Protocol):
    """Runs the chunk tasks of a job; yields ``(chunk, rows)`` as chunks complete, in any order."""

    description: str

    def map_chunks(self, task: ChunkTask, shared: Any, chunks: Sequence[Chunk], root: np.random.SeedSequence,
                   args: tuple, should_stop: Callable[[], bool]) -> Iterator[tuple[Chunk, Any]]: ...

    def call(self, function: Callable[..., Any], args: tuple, kwargs: dict, hooks: Hooks) -> Any:
        """``function(*args, hooks=..., **kwargs)`` as one unit of work (a computation whose own steps are
        sequential, e.g. optimisation restarts drawn from one generator): ``hooks`` receives its progress and
        partial results and stops it (between its steps) as if it ran here."""
        ...


def root_seed(seed: SeedLike) -> np.random.SeedSequence:
    """The job's root ``SeedSequence``: from an int (reproducible), a Generator (drawn from it) or None (fresh).

    Parameters
    ----------
    seed : int, SeedSequence, Generator or None
        An int or a SeedSequence gives the same numbers every time; a Generator gives the root from four
        64-bit words drawn from it (so it advances); None takes fresh entropy from the operating system.

    Returns
    -------
    numpy.random.SeedSequence
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if seed is not None and not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"`rng` must be an int seed, a numpy Generator, a SeedSequence or None, got {seed!r}.")
    return np.random.SeedSequence(None if seed is None else int(seed))


def item_generator(root: np.random.SeedSequence, group: int, item: int) -> np.random.Generator:
    """The generator of item ``item`` of group ``group``: child ``root.spawn(.)[group].spawn(.)[item]``.

    Built directly from the spawn key (``SeedSequence.spawn`` numbers its children 0, 1, ... after the
    parent's key), so a chunk makes only its own items' generators.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The job's root (not spawned from before: ``n_children_spawned == 0``).
    group, item : int
        Indices of the group and of the item within it.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng(child_seed(root, group, item))


S_OVER_N_DIGITS = 12
"""Significant digits to which :func:`s_over_n_group` reads an S/N: two S/N that agree to 12 digits are one S/N."""


def s_over_n_group(s_over_n: float) -> int:
    """The group of the bootstrap resamples at S/N = ``s_over_n``: a function of that value alone.

    The value is read as its canonical decimal, ``format(s_over_n, ".12g")`` (:data:`S_OVER_N_DIGITS`
    significant digits), and the group is 2**64 plus the 64 bits of that decimal's IEEE double. So two S/N
    that print the same to 12 significant digits (e.g. ``0.1`` and ``0.1 * 506 / 506``, or an S/N recomputed
    as S/N from S = (S/N)·N) are the same S/N and draw the same resamples; any two that differ in those
    digits draw different ones. Every group is >= 2**64, so it never equals a fixed small group (0, 1, 2, ...,
    e.g. the L1 noise floor's group 1 or the input map's group 2): their spawn keys differ.

    Parameters
    ----------
    s_over_n : float
        The bootstrap size S/N, positive and finite.

    Returns
    -------
    int
        The group, for :func:`item_generator`.

    Raises
    ------
    ValueError
        If ``s_over_n`` is not positive and finite.

    Examples
    --------
    >>> s_over_n_group(0.1) == s_over_n_group(0.1 * 506 / 506)
    True
    >>> s_over_n_group(1.0) >= 2**64
    True
    """
    value = float(s_over_n)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"S/N must be positive and finite, got {s_over_n!r}.")
    canonical = np.float64(float(format(value, f".{S_OVER_N_DIGITS}g")))
    return 2**64 + int(canonical.view(np.uint64))


def child_seed(root: np.random.SeedSequence, *indices: int) -> np.random.SeedSequence:
    """The descendant ``root.spawn(.)[i].spawn(.)[j]...`` of ``root`` for ``indices = (i, j, ...)``.

    Built directly from the spawn key, without spawning from ``root`` (see :func:`item_generator`).

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The job's root (not spawned from before: ``n_children_spawned == 0``).
    *indices : int
        The child's index at each level below ``root``.

    Returns
    -------
    numpy.random.SeedSequence
    """
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *(int(i) for i in indices)),
                                  pool_size=root.pool_size)


def plan_chunks(group_sizes: Sequence[int], chunk_size: int = DEFAULT_CHUNK_SIZE) -> tuple[Chunk, ...]:
    """Consecutive chunks of at most ``chunk_size`` items, group after group (no chunk spans two groups).

    Parameters
    ----------
    group_sizes : sequence of int
        Number of items of each group (e.g. ``[n_samples] * len(S_values)``).
    chunk_size : int
        Items per chunk, >= 1.

    Returns
    -------
    tuple of Chunk

    Raises
    ------
    ValueError
        If ``chunk_size`` is not a positive integer or a group size is negative.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"`chunk_size` must be a positive integer (items per chunk), got {chunk_size!r}.")
    if any(int(n) < 0 for n in group_sizes):
        raise ValueError(f"Group sizes must be >= 0, got {list(group_sizes)}.")
    chunks = []
    for group, n in enumerate(group_sizes):
        for start in range(0, int(n), int(chunk_size)):
            chunks.append(Chunk(len(chunks), group, start, min(start + int(chunk_size), int(n))))
    return tuple(chunks)


class InProcess:
    """Runs the chunks one after the other in this process (the default executor)."""

    description = "in this process"

    def map_chunks(self, task, shared, chunks, root, args, should_stop):
        for chunk in chunks:
            if should_stop():
                return
            yield chunk, task(shared, chunk, root, *args)

    def call(self, function, args, kwargs, hooks):
        return function(*args, hooks=hooks, **kwargs)

    def __repr__(self) -> str:
        return "InProcess()"


IN_PROCESS = InProcess()


def run_chunks(task: ChunkTask, shared: Any, chunks: Sequence[Chunk], root: np.random.SeedSequence,
               args: tuple = (), *, executor: Executor | None = None, hooks: Hooks | None = None,
               unit: str = "samples", on_chunk: Callable[[Chunk, Any], None] | None = None) -> list:
    """Run ``task`` on every chunk with ``executor`` and return the results in chunk order.

    Parameters
    ----------
    task : callable
        ``task(shared, chunk, root, *args)``, a module-level function (it is pickled for Dask workers).
    shared : object
        The large inputs (K, X, y, ...), sent to the workers once per job.
    chunks : sequence of Chunk
        From :func:`plan_chunks`.
    root : numpy.random.SeedSequence
        The job's root seed (:func:`root_seed`); tasks draw with :func:`item_generator`.
    args : tuple
        Small further arguments of ``task``.
    executor : Executor, optional
        Default :data:`IN_PROCESS`.
    hooks : Hooks, optional
        ``report`` after every chunk ("done/total unit"), ``should_stop`` polled while waiting (queued chunks
        are cancelled, :class:`Cancelled` counts finished items).
    unit : str
        What an item is, for messages.
    on_chunk : callable(chunk, rows), optional
        Called as each chunk completes (in completion order), e.g. to publish partial results.

    Returns
    -------
    list
        ``rows`` of every chunk, in the order of ``chunks``.

    Raises
    ------
    Cancelled
        If ``hooks.should_stop()`` became True before all chunks finished.
    """
    hooks = hooks or NO_HOOKS
    executor = executor or IN_PROCESS
    should_stop = hooks.should_stop or (lambda: False)
    total = sum(c.size for c in chunks)
    results: list = [None] * len(chunks)
    done = finished = 0
    for chunk, rows in executor.map_chunks(task, shared, chunks, root, tuple(args), should_stop):
        results[chunk.index] = rows
        done += chunk.size
        finished += 1
        if on_chunk is not None:
            on_chunk(chunk, rows)
        hooks.step(done, total, unit)
    if finished < len(chunks):
        raise Cancelled(*(hooks.count or (done, total, unit)))
    return results


def run_groups(task: ChunkTask, shared: Any, chunks: Sequence[Chunk], root: np.random.SeedSequence,
               args: tuple = (), *, on_group: Callable[[int, Any], None], executor: Executor | None = None,
               hooks: Hooks | None = None, unit: str = "samples") -> None:
    """:func:`run_chunks`, handing each group's rows (stacked in item order) to ``on_group`` once it is complete.

    A learning curve reduces each S as soon as its samples are in (and publishes the curve so far), whatever
    order the chunks complete in.

    Parameters
    ----------
    task, shared, chunks, root, args, executor, hooks, unit
        As in :func:`run_chunks`.
    on_group : callable(group, rows)
        Called once per group, in completion order, with :func:`stack_rows` of that group.

    Raises
    ------
    Cancelled
        If ``hooks.should_stop()`` became True before all chunks finished.
    """
    results: list = [None] * len(chunks)
    left: dict[int, int] = {}
    for chunk in chunks:
        left[chunk.group] = left.get(chunk.group, 0) + 1

    def finished(chunk: Chunk, rows) -> None:
        results[chunk.index] = rows
        left[chunk.group] -= 1
        if left[chunk.group] == 0:
            on_group(chunk.group, stack_rows(results, chunks, chunk.group))

    run_chunks(task, shared, chunks, root, args, executor=executor, hooks=hooks, unit=unit, on_chunk=finished)


def stack_rows(results: Sequence, chunks: Sequence[Chunk], group: int) -> Any:
    """The rows of one group's chunks stacked in item order (arrays, or tuples/dataclass-free tuples of arrays).

    Parameters
    ----------
    results : sequence
        ``run_chunks``'s output (``None`` for chunks not finished, which are skipped: partial results).
    chunks : sequence of Chunk
        The job's chunks.
    group : int
        Which group.

    Returns
    -------
    ndarray or tuple of ndarray
        Concatenation along axis 0; a tuple of rows gives a tuple of concatenations. None if no chunk of the
        group has finished.
    """
    parts = [r for c, r in zip(chunks, results) if c.group == group and r is not None]
    if not parts:
        return None
    if isinstance(parts[0], tuple):
        return tuple(None if parts[0][k] is None else np.concatenate([p[k] for p in parts])
                     for k in range(len(parts[0])))
    return np.concatenate(parts)


def run_items(task: ChunkTask, shared: Any, n_items: int, rng: SeedLike = None, args: tuple = (), *,
              chunk_size: int = DEFAULT_CHUNK_SIZE, executor: Executor | None = None, hooks: Hooks | None = None,
              unit: str = "samples") -> Any:
    """One group of ``n_items`` items in chunks of ``chunk_size``, run and stacked: the shape of one Monte-Carlo job.

    :func:`plan_chunks`, :func:`run_chunks` from ``root_seed(rng)``, then :func:`stack_rows` of the group.

    Parameters
    ----------
    task, shared, args, executor, hooks, unit
        As in :func:`run_chunks`.
    n_items : int
        Items of the job (e.g. bootstrap samples), at least 1.
    rng : int, SeedSequence, Generator or None
        The job's root seed (:func:`root_seed`).
    chunk_size : int
        Items per chunk (it changes no number).

    Returns
    -------
    ndarray or tuple of ndarray
        The rows of every item in item order, as :func:`stack_rows` gives them.

    Raises
    ------
    Cancelled
        If ``hooks.should_stop()`` became True before all chunks finished.
    """
    chunks = plan_chunks([n_items], chunk_size)
    rows = run_chunks(task, shared, chunks, root_seed(rng), args, executor=executor, hooks=hooks, unit=unit)
    return stack_rows(rows, chunks, 0)
