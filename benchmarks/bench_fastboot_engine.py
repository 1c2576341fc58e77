"""Benchmark: the full bootstrap of [LSWV05] (Table 1, toy data N = 200, 100 replications) in this process vs on
a local Dask cluster of worker processes, measured in one run.

For each model (default: ls-svm and rbfn) it times ``full_bootstrap`` once in this process (one BLAS thread) and
once on the Dask engine (``--workers`` worker processes, one thread each; the cluster is started before the clock
runs), checks that both give the same optimism (bit for bit), and prints the seconds and the ratio
in-process / Dask (> 1: Dask is faster). The replications per chunk are ``--chunk-size`` (default: the library's).

Run: .venv/bin/python benchmarks/bench_fastboot_engine.py [--models ls-svm,rbfn] [--workers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from explorer import datasets
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap.problem import TABLE_1, make_model, prepare_data
from explorer.runtime import engine


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="ls-svm,rbfn")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk-size", type=int, default=fastboot.REPLICATION_CHUNK_SIZE)
    args = parser.parse_args()
    engine.use_single_threaded_blas()
    dask = engine.connect(workers=args.workers, dashboard=False)
    try:
        print(f"engine: {dask.description}; chunk size {args.chunk_size} replications")
        for model in args.models.split(","):
            data = datasets.toy_function(rng=args.seed)
            setting, fam, prepared = TABLE_1[model], make_model(model, data), prepare_data(data)
            grid = setting.grids().full

            def run(executor, fam=fam, prepared=prepared, grid=grid, setting=setting):
                return fastboot.full_bootstrap(fam, prepared.X, prepared.y, grid, setting.full_replications,
                                               rng=args.seed, chunk_size=args.chunk_size, executor=executor)
            local, t_local = timed(lambda run=run: run(None))
            remote, t_dask = timed(lambda run=run: run(dask.executor))
            same = np.array_equal(local.optimism, remote.optimism)
            print(f"{model:7s} full bootstrap ({setting.full_replications} replications x {grid.size} models): "
                  f"in-process {t_local:6.2f} s, Dask {t_dask:6.2f} s, ratio {t_local / t_dask:4.2f}; "
                  f"identical: {same}")
    finally:
        dask.close()


if __name__ == "__main__":
    main()
