"""``distribution`` and ``holdout`` beyond one machine: the L1 map on a sample of rows and the comparison at held-out
inputs with the rows in chunks on a Dask cluster (:mod:`explorer.distributed.comparisons`).

The options, the rule that chooses the path and the data are those of ``learning-curve``
(:mod:`explorer.cli.distributed_options`): ``--chunk-rows``, ``--parquet``, ``--scheduler`` / ``--workers`` and
``--dataset teacher --rows N``; the first ``--holdout`` rows are the test inputs (gathered here) and the others the
training chunks. The output is the in-memory command's JSON and text, with the path, the rule, the engine, the data
and the chunks said. A run whose Monte-Carlo is estimated at more than an hour (the in-memory estimate, one process)
is refused before the theory starts.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from explorer.cli import common, distributed_options

__all__ = ["distribution", "holdout"]


def _run(args, chosen: distributed_options.Plan, check_duration: Callable[[int], None], compare) -> tuple:
    """Connect, read the rows, hold out the first --holdout, build the operator and run ``compare(op, y, σ², X_test)``:
    (the payload, the comparison's ``as_dict()`` with the run described, and the comparison)."""
    from explorer.distributed import chunked_nystrom
    from explorer.distributed.held_out_rows import hold_out_first
    from explorer.runtime.engine import connect

    if args.rows is not None:  # the generated rows are known before any is made
        check_duration(args.rows - args.holdout)
    engine = connect(args.scheduler, workers=args.workers, timeout=10.0, dashboard=False)
    try:
        rows = distributed_options.rows_on_cluster(args, engine.client)
        smallest = min(rows.sizes[:-1] or rows.sizes)  # of the chunks as read (the held-out rows cut the first)
        X_test, rows = hold_out_first(rows, args.holdout)
        if args.rank > rows.n:
            raise ValueError(f"--rank {args.rank:,} is above the {rows.n:,} training rows; take M ≤ N.")
        if args.rank > smallest:
            raise ValueError(f"--rank {args.rank:,} is above the {smallest:,} rows of the smallest chunk; use "
                             f"--chunk-rows {args.rank:,} or more (or fewer, larger partitions).")
        check_duration(rows.n)
        kernel, noise_var, how = distributed_options.chunked_model(args, rows, engine.client)
        op = chunked_nystrom(rows, kernel, args.rank, rng=args.seed)
        res = compare(op, rows.targets(), noise_var, X_test)
        return res.as_dict() | {
            "path": "chunked", "rule": chosen.reason, "engine": engine.description, "data": rows.description,
            "n": rows.n, "d": rows.d, "rank": args.rank, "chunks": len(rows.sizes), "chunk_rows": max(rows.sizes),
            "features_held_on_workers": op.held, "passes": op.passes_made["passes"],
            "model": {"kernel": type(kernel).__name__,
                      "hyperparameters": {k: np.asarray(v).tolist() for k, v in kernel.params.items()},
                      "noise_var": noise_var, "obtained": how}}, res
    finally:
        engine.close()


def _header(payload: dict) -> str:
    m = payload["model"]
    return (f"path: chunked on Dask ({payload['rule']}); {payload['engine']}\n"
            f"data: {payload['data']}: N = {payload['n']:,} training rows, {payload['chunks']} chunks of up to "
            f"{payload['chunk_rows']:,} rows; Φ {'held by' if payload['features_held_on_workers'] else 'recomputed on'}"
            f" the workers; {payload['passes']} passes over the data\n"
            f"model: {m['kernel']} {m['hyperparameters']}, σ² = {m['noise_var']:.4g} ({m['obtained']}); Nyström rank "
            f"{payload['rank']}\n")


def distribution(args, chosen: distributed_options.Plan, v: float, check_duration: Callable[[int], None]
                 ) -> common.Output:
    """The L1 map at S/N = ``v`` on the chunks: all training rows up to 5,000, else 2,000 drawn with --seed."""
    from explorer.cli.gp_bootstrap import format_distribution
    from explorer.distributed.comparisons import chunked_distribution_comparison

    def compare(op, y, noise_var, X_test):
        return chunked_distribution_comparison(op, y, noise_var, v, args.mc_samples, name=op.rows.description,
                                               bin_width=args.bin_width, rng=args.seed, tol=args.tol,
                                               hooks=common.progress())

    payload, res = _run(args, chosen, check_duration, compare)
    return common.Output(payload, _header(payload) + format_distribution(res))


def holdout(args, chosen: distributed_options.Plan, v: float, check_duration: Callable[[int], None]) -> common.Output:
    """Eq. (48), the infinitesimal jackknife and the Monte-Carlo at the first --holdout rows, on the chunks."""
    from explorer.cli.gp_bootstrap import format_holdout
    from explorer.distributed.comparisons import chunked_holdout_comparison

    if args.holdout < 1:
        raise ValueError("`holdout` compares at held-out rows: give --holdout K with K ≥ 1.")

    def compare(op, y, noise_var, X_test):
        return chunked_holdout_comparison(op, y, noise_var, v, args.mc_samples, X_test, rng=args.seed, tol=args.tol,
                                          hooks=common.progress())

    payload, res = _run(args, chosen, check_duration, compare)
    return common.Output(payload, _header(payload) + format_holdout(res))
