"""BLAS thread policy of the explorer's entry points (CLI, server, notebooks).

A Monte-Carlo bootstrap sample is a chain of small Cholesky factorisations; with a multi-threaded BLAS
the threads only contend for the cores (measured here: the seed-000 notebook ran 4-5x slower on two busy
cores). Parallelism comes from running samples, sessions and jobs side by side instead.

The limit is process-wide and must be set once, before worker threads start: changing OpenBLAS's
thread count while another thread is inside a BLAS call can deadlock it (we saw exactly that when the
limit was toggled per batch inside a served session).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["use_single_threaded_blas"]


def use_single_threaded_blas() -> None:
    """Limit every BLAS library loaded in this process to one thread (call once, at start-up)."""
    threadpool_limits(limits=1, user_api="blas")
