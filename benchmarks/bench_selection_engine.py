"""Benchmark: the Model-selection tab's jobs in the calling process against on Dask workers.

A served session's :class:`~explorer.views.model_selection.state.SelectionState` hands its criterion curves,
optimisations and ranking of functional forms to the Dask workers, one task each (``DaskExecutor.call``), so that the
server process only relays progress and results. For a few settings this script runs one state's three jobs
(from empty result caches) once in this process and once on a local cluster of ``--workers`` worker processes, and
prints for each the wall time, the CPU time this process spent (the server's share in a served app) and their
ratios. It also checks that both give the same optima, ranking and curves (exact equality).

Run: .venv/bin/python benchmarks/bench_selection_engine.py [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: the numbers do not depend on BLAS threads

import numpy as np  # noqa: E402

from explorer.chunks import IN_PROCESS  # noqa: E402
from explorer.runtime import engine as dask_engine  # noqa: E402
from explorer.runtime.caches import clear_caches  # noqa: E402
from explorer.views.model_selection.state import SelectionState  # noqa: E402

SETTINGS = (("defaults", {}), ("16 restarts", {"n_restarts": 16}), ("N = 200", {"n_points": 200}),
            ("boston, N = 300", {"dataset": "boston", "n_points": 300}))


class InProcessSelection(SelectionState):
    """The same state, its jobs computed in this process (on the jobs' threads)."""

    @property
    def executor(self):
        return IN_PROCESS


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(state: SelectionState) -> tuple[float, float, SelectionState]:
    """Wall seconds and this process's CPU seconds for the state's three jobs, from empty caches."""
    clear_caches()
    wall, cpu = time.perf_counter(), cpu_seconds()
    state.refresh()
    if not state.wait(timeout=1800):
        raise SystemExit("the jobs did not finish within 30 min")
    return time.perf_counter() - wall, cpu_seconds() - cpu, state


def results(state: SelectionState) -> list[float]:
    """The numbers both runs must share: every optimum, every ranked value and every curve point."""
    values = [r.value for r in state.optima.results]
    values += [float(v) for row in state.ranking.rows for v in row.values.values()]
    values += [float(v) for c in state.curves.curves for v in c.values]
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="local Dask workers (default 2)")
    args = parser.parse_args()
    engine = dask_engine.connect(workers=args.workers)
    try:
        print(f"{'settings':18s} {'in-process: wall, CPU here':>28s} {'Dask: wall, CPU here':>22s} "
              f"{'wall ratio':>10s} {'CPU here ratio':>14s}  same numbers")
        for label, settings in SETTINGS:
            wall0, cpu0, local = run(InProcessSelection(**settings))
            wall1, cpu1, remote = run(SelectionState(client=engine, **settings))
            for state in (local, remote):
                if state.curves is None or state.optima is None or state.ranking is None:
                    raise SystemExit(f"{label}: a job did not finish: {[s.error for s in state.jobs.values()]}")
            same = np.array_equal(results(local), results(remote), equal_nan=True)
            print(f"{label:18s} {wall0:13.1f} s, {cpu0:6.1f} CPU-s {wall1:8.1f} s, {cpu1:5.1f} CPU-s "
                  f"{wall1 / wall0:10.2f} {cpu1 / cpu0:14.2f}  {same}")
    finally:
        engine.close()


if __name__ == "__main__":
    main()
