"""``learning-curve``, ``distribution`` and ``holdout`` beyond one machine: the options that put the rows in chunks
on a Dask cluster, the rule that chooses the in-memory or the chunked low-rank path, and the chunked run itself.

**The rule** (:func:`plan`). The in-memory low-rank path holds Φ and about 2.1 more N×m arrays at its peak
(``benchmarks/bench_scale.py``), 8·3.1·N·m bytes. It runs in this process when that is at most
:data:`IN_MEMORY_BYTES`; above, or with ``--chunk-rows R``, the theory runs on the chunked operator
(:class:`explorer.distributed.ChunkedFeatureKernel`): Φ's rows are computed by the workers from chunks of X, and
only m×m pieces and the N-vectors of the theory travel. The command prints which it chose and why.

Data: ``--dataset NAME`` and a ``--csv`` of at most ``common.MAX_CSV_BYTES`` are read here as before; a larger
``--csv`` and ``--parquet`` are read by partitions with ``dask.dataframe`` on the workers (X never whole here);
``--dataset teacher --rows N`` is a generated data set of N rows made on the workers from ``--seed``
(:func:`explorer.distributed.rows.teacher_block`). On the chunked path the model is ``--kernel`` with its values, or
the maximum evidence of the rank-M Nyström GP on a random subsample of :data:`EVIDENCE_SUBSAMPLE` rows (said in the
output); the methods of ``learning-curve`` are ADATAP and the approximate ADATAP by default, and the infinitesimal
jackknife, the leave-one-out limit and the Monte-Carlo with ``--methods ...,ij,loo,mc`` (:mod:`explorer.distributed.bootstrap_error`: occupations seeded per sample and block of rows).
``distribution`` and ``holdout`` run their comparisons on the chunks (:mod:`explorer.cli.distributed_comparisons`),
the first ``--holdout`` rows kept as test inputs.

Bad input — ``--chunk-rows`` 0 or negative, a Parquet file without the target column, a scheduler address that does
not parse or does not answer (within ``connect``'s 10 s), a rank above the rows of the smallest chunk — is one line
and exit code 2 before anything is computed.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np

from explorer import datasets, kernels
from explorer.cli import common
from explorer.gp_bootstrap import evidence

__all__ = ["IN_MEMORY_BYTES", "EVIDENCE_SUBSAMPLE", "CHUNK_ROWS", "GENERATED_ROWS", "Plan", "add_options", "plan",
           "generated", "learning_curve", "large_csv_path", "rows_on_cluster", "chunked_model"]

#: Bytes the in-memory low-rank path may take (8·3.1·N·m); above, the theory runs in chunks on Dask.
IN_MEMORY_BYTES = 2_000_000_000
#: Rows of the random subsample on which the chunked path fits the model by maximum evidence.
EVIDENCE_SUBSAMPLE = 5_000
#: Inputs of the generated teacher data set (``--dataset teacher --rows N``).
GENERATED_INPUTS = 4
#: Default rows per chunk of the chunked path (8·N_c·m bytes of Φ per chunk: 100 MB at m = 128).
DEFAULT_CHUNK_ROWS = 100_000

CHUNK_ROWS = common.IntRange(1, 10**9, "the rows of a chunk")
GENERATED_ROWS = common.IntRange(10, 10**10, "the rows of the generated data set")

#: The methods of the chunked path (a learning curve's --methods); the default leaves out Monte-Carlo.
CHUNKED_METHODS = ("adatap", "approx", "ij", "loo", "mc")
CHUNKED_DEFAULT = ("adatap", "approx")
#: The commands whose chunked path keeps the first --holdout rows as test inputs (explorer.cli.distributed_comparisons).
HOLDOUT_COMMANDS = ("distribution", "holdout")


def large_csv_path(text: str) -> str:
    """Argument type of ``--csv`` on the GP-bootstrap commands: a regular file of any size (one above
    ``common.MAX_CSV_BYTES`` is read by partitions on the chunked path)."""
    try:
        return common.csv_path(text)
    except argparse.ArgumentTypeError:
        if os.path.isfile(text):
            return text
        raise


def add_options(p: argparse.ArgumentParser) -> None:
    """``--chunk-rows``, ``--parquet`` and ``--rows``: the group "beyond one machine"."""
    g = p.add_argument_group(
        "beyond one machine (rows in chunks on a Dask cluster: --workers N local processes, default one per core, or "
        f"--scheduler ADDRESS; chosen when the in-memory low-rank path would need more than "
        f"{IN_MEMORY_BYTES / 1e9:g} GB = 8·3.1·N·M bytes, or with --chunk-rows; learning-curve: ADATAP and approx, "
        "and ij, loo, mc if asked)")
    g.add_argument("--chunk-rows", type=CHUNK_ROWS, default=None, metavar="R",
                   help=f"put the rows in chunks of R on Dask workers, R from {CHUNK_ROWS} (default "
                        f"{DEFAULT_CHUNK_ROWS:,} when the rule chooses chunks; files: one chunk per partition)")
    g.add_argument("--parquet", metavar="PATH", default=None,
                   help="a Parquet file or folder of your own, read by partitions on the workers; needs --target "
                        "(and pyarrow: pip install 'resampling-explorer[distributed]')")
    g.add_argument("--rows", type=GENERATED_ROWS, default=None, metavar="N",
                   help=f"with --dataset teacher: a generated data set of N rows, N from {GENERATED_ROWS}, and "
                        f"{GENERATED_INPUTS} inputs made on the workers from --seed (x ~ N(0, I), y = a random-feature teacher + noise of variance "
                        "--noise-var)")


@dataclass(frozen=True)
class Plan:
    """The path the rule chose: ``chunked`` or not, and the line that says why."""

    chunked: bool
    reason: str


def _needed(n: int, rank: int) -> float:
    return 8.0 * 3.1 * n * rank


def _from_files_or_generated(args) -> bool:
    return bool(args.parquet or args.rows or (args.csv and os.path.getsize(args.csv) > common.MAX_CSV_BYTES))


def plan(args) -> Plan | None:
    """The path of a ``learning-curve``, ``distribution`` or ``holdout`` run: None when no option of this module is in
    play (today's path), else :class:`Plan` (the rule of the module docstring). Checks the options that need no data
    (exit 2 on error)."""
    if args.parquet and args.csv:
        raise ValueError("Give one data source: --csv or --parquet, not both.")
    if args.rows is not None and (args.dataset != "teacher" or args.csv or args.parquet):
        raise ValueError("--rows N sizes the generated data set: use it with --dataset teacher.")
    if args.chunk_rows is None and not _from_files_or_generated(args):
        return None
    if args.rank is None and args.csv and args.chunk_rows is None:
        raise ValueError(f"argument --csv: {args.csv!r} has {os.path.getsize(args.csv):,} bytes; at most "
                         f"{common.MAX_CSV_BYTES:,} are read in memory. Add --rank M to read it by partitions on a Dask "
                         "cluster.")
    if args.rank is None:
        raise ValueError("The rows in chunks are for the low-rank model: give --rank M (e.g. --rank 128).")
    if args.parquet and not args.target:
        raise ValueError("--parquet needs --target COLUMN (the name of the target column).")
    held = () if getattr(args, "command", None) in HOLDOUT_COMMANDS else (("--holdout", args.holdout),)
    for option, value in (*held, ("--subsample", args.subsample), ("--standardize", args.standardize),
                          ("--preset", args.preset), ("--ard", args.ard)):
        if value:
            raise ValueError(f"{option} is not offered on the chunked path; drop it (the model there is --kernel "
                             "with its values, or maximum evidence on a subsample).")
    if args.features == "rff":
        raise ValueError("The chunked path uses Nyström features; drop --features rff.")
    methods = getattr(args, "methods", None) or CHUNKED_DEFAULT
    if set(methods) - set(CHUNKED_METHODS):
        raise ValueError(f"The chunked path runs {', '.join(CHUNKED_METHODS)} only; got --methods "
                         f"{','.join(methods)}.")
    if getattr(args, "loss", "square") != "square":
        raise ValueError("The chunked path computes the square-loss ε(S) (eq. 45); drop --loss.")
    if args.chunk_rows is not None and args.rank > args.chunk_rows:
        raise ValueError(f"--rank {args.rank:,} is above --chunk-rows {args.chunk_rows:,}: a chunk should hold at "
                         f"least M rows (its m×m piece costs as much as M rows); use --chunk-rows {args.rank:,} or "
                         "more.")
    if args.chunk_rows is not None:
        return Plan(True, f"--chunk-rows {args.chunk_rows:,} forces the chunked path")
    if args.rows is not None:
        need = _needed(args.rows, args.rank)
        chunked = need > IN_MEMORY_BYTES
        return Plan(chunked, f"the in-memory low-rank path needs 8·3.1·N·M = {need / 1e9:.2f} GB "
                             f"{'>' if chunked else '≤'} {IN_MEMORY_BYTES / 1e9:g} GB")
    return Plan(True, "the file is read by partitions (above "
                      f"{common.MAX_CSV_BYTES / 1e6:g} MB, or Parquet): X is never whole in this process")


def generated(args) -> datasets.Dataset:
    """``--dataset teacher --rows N`` made here (the in-memory path: the same rows as on the workers)."""
    from explorer.distributed.rows import teacher_rows

    X, y = teacher_rows(0, args.rows, args.rows, GENERATED_INPUTS, args.seed, _noise(args))
    return datasets.Dataset(name=f"generated teacher ({args.rows:,} rows, seed {args.seed})", inputs=X, targets=y,
                            feature_names=tuple(f"x{j + 1}" for j in range(GENERATED_INPUTS)), target_name="y",
                            task="regression", description="random-feature teacher", provenance="generated")


def _noise(args) -> float:
    return 0.01 if args.noise_var is None else args.noise_var


def rows_on_cluster(args, client):
    """The rows of the options on the cluster (:class:`explorer.distributed.RowChunks`)."""
    from explorer.distributed import RowChunks

    chunk_rows = args.chunk_rows or DEFAULT_CHUNK_ROWS
    if args.rows is not None:
        return RowChunks.teacher(client, args.rows, GENERATED_INPUTS, chunk_rows, seed=args.seed,
                                 noise_var=_noise(args))
    if args.parquet or args.csv:
        return _file_rows(args, client)
    data = common.load_dataset(args, max_rows=10**8)
    return RowChunks.from_arrays(client, data.inputs, data.targets, chunk_rows)


def _file_rows(args, client):
    """A CSV or Parquet file by partitions; the target column checked before anything is read."""
    import dask.dataframe as dd

    from explorer.distributed import RowChunks

    if not args.target:
        raise ValueError("--csv needs --target COLUMN (the name of the target column).")
    path = args.parquet or args.csv
    try:
        frame = dd.read_parquet(path) if args.parquet else dd.read_csv(path, blocksize="64MB")
    except ImportError as exc:
        raise ValueError(f"Reading Parquet needs pyarrow: pip install 'resampling-explorer[distributed]' ({exc}).") \
            from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"Cannot read {path!r} as {'Parquet' if args.parquet else 'CSV'}: {common.one_line(exc)}") \
            from None
    columns = [str(c) for c in frame.columns]
    if args.target not in columns:
        raise ValueError(f"{path!r} has no column {args.target!r}; its columns are {', '.join(columns[:20])}. "
                         "Give --target one of them.")
    inputs = [c for c in columns if c != args.target]
    if not inputs:
        raise ValueError(f"{path!r} has no input column besides the target {args.target!r}.")
    return RowChunks.from_dataframe(client, frame, inputs, args.target, f"{path} ({frame.npartitions} partitions)")


def chunked_model(args, rows, client) -> tuple[kernels.Kernel, float, str]:
    """(kernel, σ², how): ``--kernel`` with its values, or the maximum evidence of the rank-M Nyström GP on
    :data:`EVIDENCE_SUBSAMPLE` rows drawn at random with --seed."""
    if args.kernel is not None:
        hyper = {k: v for k, v in (("lengthscale", args.lengthscale), ("signal_var", args.signal_var),
                                   ("alpha", args.alpha), ("period", args.period)) if v is not None}
        if "lengthscale" in hyper:
            ls = hyper["lengthscale"]
            hyper["lengthscale"] = ls[0] if len(ls) == 1 else np.array(ls)
        return kernels.make_kernel(args.kernel, rows.d, **hyper), _noise(args), "given"
    take = min(EVIDENCE_SUBSAMPLE, rows.n)
    idx = np.sort(np.random.default_rng(args.seed).choice(rows.n, size=take, replace=False))
    X, y = rows.rows(idx), rows.targets()[idx]
    fit = evidence.maximum_evidence_lowrank(X, y, rank=min(args.rank, take), rng=args.seed, hooks=common.progress())
    return fit.kernel, fit.noise_var, f"{fit.note}, on a random subsample of {take:,} of the {rows.n:,} rows"


def learning_curve(args, chosen: Plan) -> common.Output:
    """ε(S) by ADATAP (and the approximate ADATAP) on the chunked operator, at each --s-over-n."""
    from explorer.bootstrap import replica
    from explorer.distributed import chunked_nystrom
    from explorer.distributed.bootstrap_error import chunked_bootstrap_error
    from explorer.gp_bootstrap import linear_response
    from explorer.runtime.engine import connect

    engine = connect(args.scheduler, workers=args.workers, timeout=10.0, dashboard=False)
    try:
        rows = rows_on_cluster(args, engine.client)
        if args.rank > rows.n:
            raise ValueError(f"--rank {args.rank:,} is above the {rows.n:,} rows; take M ≤ N.")
        smallest = min(rows.sizes[:-1] or rows.sizes)
        if args.rank > smallest:
            raise ValueError(f"--rank {args.rank:,} is above the {smallest:,} rows of the smallest chunk; use "
                             f"--chunk-rows {args.rank:,} or more (or fewer, larger partitions).")
        kernel, noise_var, how = chunked_model(args, rows, engine.client)
        op = chunked_nystrom(rows, kernel, args.rank, rng=args.seed)
        y = rows.targets()
        methods = args.methods or CHUNKED_DEFAULT
        results, init = [], None
        for v in sorted(args.s_over_n):
            S = v * rows.n
            started = time.perf_counter()
            before = op.passes_made["passes"]
            row = {"s_over_n": v}
            if "adatap" in methods:
                sol = replica.solve_replica(op, y, noise_var, S, tol=args.tol, init=init, hooks=common.progress())
                init = sol
                row |= {"theory": replica.bootstrap_test_error(sol), "n_iter": sol.n_iter}
            if "approx" in methods:
                row["theory_approx"] = replica.bootstrap_test_error(replica.approximate_replica(op, y, noise_var, S))
            if "ij" in methods:  # eq. (13) at the 2,000 rows the in-memory curve draws above 4,000 rows
                ij = linear_response.linear_response_error(op, y, noise_var, S, inputs="auto")
                row |= {"ij": ij.value, "ij_second_order": ij.value_second_order, "loo_limit": ij.loo_limit}
            elif "loo" in methods:
                row["loo_limit"] = linear_response.loo_limit(op, y, noise_var, S).value
            if "mc" in methods:  # seeds per row block: the same numbers whatever the chunks and workers
                mc = chunked_bootstrap_error(op, y, noise_var, S, args.mc_samples, rng=args.seed)
                row |= {"mc_mean": mc.value, "mc_se": mc.se, "mc_samples": mc.n_samples}
            row |= {"seconds": time.perf_counter() - started, "passes": op.passes_made["passes"] - before}
            results.append(row)
        payload = {"path": "chunked", "rule": chosen.reason, "engine": engine.description, "data": rows.description,
                   "n": rows.n, "d": rows.d, "rank": args.rank, "chunks": len(rows.sizes),
                   "chunk_rows": max(rows.sizes), "features_held_on_workers": op.held,
                   "model": {"kernel": type(kernel).__name__, "hyperparameters":
                             {k: np.asarray(v).tolist() for k, v in kernel.params.items()}, "noise_var": noise_var,
                             "obtained": how}, "rows": results}
        return common.Output(payload, format_curve(payload))
    finally:
        engine.close()


def format_curve(payload: dict) -> str:
    """The chunked learning curve as text."""
    lines = [f"path: chunked on Dask ({payload['rule']}); {payload['engine']}",
             f"data: {payload['data']}: N = {payload['n']:,}, {payload['chunks']} chunks of up to "
             f"{payload['chunk_rows']:,} rows; Φ {'held by' if payload['features_held_on_workers'] else 'recomputed on'}"
             " the workers",
             f"model: {payload['model']['kernel']} {payload['model']['hyperparameters']}, σ² = "
             f"{payload['model']['noise_var']:.4g} ({payload['model']['obtained']}); Nyström rank {payload['rank']}",
             f"{'S/N':>6} {'theory':>10} {'approx':>10} {'IJ':>10} {'LOO lim':>10} {'MC':>10} {'± se':>8} "
             f"{'iter':>5} {'passes':>7} {'seconds':>8}"]
    for r in payload["rows"]:
        theory, approx, ij, loo = (f"{r[k]:10.4g}" if k in r else f"{'n/a':>10}"
                                   for k in ("theory", "theory_approx", "ij", "loo_limit"))
        mc = f"{r['mc_mean']:10.4g} {r['mc_se']:8.2g}" if "mc_mean" in r else f"{'n/a':>10} {'n/a':>8}"
        lines.append(f"{r['s_over_n']:6.3g} {theory} {approx} {ij} {loo} {mc} {r.get('n_iter', 'n/a'):>5} "
                     f"{r['passes']:>7} {r['seconds']:8.1f}")
    return "\n".join(lines)
