"""Benchmark: the replica bootstrap beyond one machine — the low-rank ADATAP theory on the chunked operator
(:class:`explorer.distributed.ChunkedFeatureKernel`), rows in chunks on a local Dask cluster.

One run: a local cluster of --workers worker processes (one thread each, --worker-memory each), the generated teacher
data set (``explorer.distributed.rows``: 4 standard-normal inputs, a random-feature teacher plus noise of variance
0.01, made on the workers from a seed) at N ∈ --sizes, Nyström rank m ∈ --ranks (squared exponential ℓ = 2, σ_f² = 1,
σ² = 0.01; landmarks drawn with seed 0), S/N = 1, ``solve_replica`` with its defaults (mixed precision, tol 1e-3) and
ε(S); first, with ``--diamonds`` (the default), the same on ggplot2's diamonds (53,940 rows in chunks of 10,000,
the kernel and σ² of the rank-m evidence maximum on 5,000 rows) with one scikit-learn refit beside it. For each
(N, m) it prints and appends to --out (one JSON line each, so a run cut short keeps what it measured):

- theory seconds (wall) and this process's CPU seconds, ADATAP iterations, passes over the data, seconds per pass per
  10⁶ rows (linear scaling: constant in N), and the workers' CPU seconds per pass per 10⁶ rows (``psutil`` before and
  after: on a machine shared with other work, the figure that does not count the time the workers waited for a core);
- peak resident memory of each worker and of this process (the client) during the theory, sampled every 0.25 s
  (``psutil``: resident set size, what the operating system counts), the client's before the theory (its local
  scheduler, the rows' task records and y), and the client's rise in N-vectors of 8·N bytes;
- whether the workers held Φ (``--hold-features``: ``auto`` holds it when it takes at most 40 % of their memory, ``no``
  computes it from X each pass at every N, so that the scaling from the smallest N to the largest is measured like
  for like; the run prints the two ratios of seconds per pass per row, wall and workers' CPU).

Then (after the cluster is closed) the user's alternative, timed in the same run with one BLAS thread as the workers have: scikit-learn
``Nystroem(kernel="rbf", gamma=1/(2ℓ²), n_components=m)`` transform of --sklearn-rows rows (once) and one bootstrap
refit ``Ridge(alpha=σ²/σ_f², fit_intercept=False).fit(Z, y, sample_weight=s)``, s ~ Poisson(1) (the same model as
ΦΦᵀ + σ²I); the theory at that N expressed in such refits. Last, from the measured seconds per chunk-pass, what
N = 10⁸ on 32 workers would take on paper, and what limits it.

The machine is shared with other sessions: CPU seconds and ratios measured in one run are the figures to read.
Run from the repository root: .venv/bin/python benchmarks/bench_distributed.py [--sizes 100000,1000000] [--ranks 128]
[--hold-features auto|yes|no] [--sklearn-rows 0 to skip the scikit-learn refit]
"""
from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path

import numpy as np

LENGTHSCALE, SIGNAL, NOISE, D = 2.0, 1.0, 0.01, 4


class PeakMemory:
    """Peak resident set size of every worker and of this process while it runs, sampled every 0.25 s."""

    def __init__(self, client):
        import psutil

        self.client, self.me = client, psutil.Process()
        self.workers: dict[str, int] = {}
        self.client_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.client_peak = max(self.client_peak, self.me.memory_info().rss)
            try:
                for worker, rss in self.client.run(_rss).items():
                    self.workers[worker] = max(self.workers.get(worker, 0), rss)
            except Exception:  # noqa: BLE001 - a worker restarting: sample again next time
                pass
            self._stop.wait(0.25)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _cpu_seconds() -> float:
    """CPU seconds (user + system) this process has used: a worker's, through ``client.run``."""
    import psutil

    times = psutil.Process().cpu_times()
    return times.user + times.system


def _workers_cpu(client) -> float:
    return float(sum(client.run(_cpu_seconds).values()))


def theory_at(client, n: int, rank: int, chunk_rows: int, hold: bool | str = "auto") -> dict:
    """One cold ADATAP solve and ε(S) at S = N on the chunked operator of the generated data (``hold``: whether the
    workers keep Φ, as ``chunked_nystrom``'s ``hold_features``)."""
    from explorer.distributed import RowChunks
    from explorer.kernels import SquaredExponential

    kernel = SquaredExponential(lengthscale=LENGTHSCALE, signal_var=SIGNAL)
    started = time.perf_counter()
    rows = RowChunks.teacher(client, n, D, chunk_rows, seed=0, noise_var=NOISE)
    return theory_on(client, rows, kernel, NOISE, rank, chunk_rows, hold, started)


def diamonds_theory(client, rank: int, chunk_rows: int) -> tuple[dict, tuple]:
    """The same on ggplot2's diamonds (53,940 rows, standardised log price), sent to the workers in chunks, with the
    kernel and σ² of the rank-m Nyström GP's maximum evidence on a random subsample of 5,000 rows (the command line's
    rule, outside the clock); returns the result and (kernel, σ², X, y) for the refit beside it."""
    from explorer import datasets
    from explorer.distributed import RowChunks
    from explorer.gp_bootstrap import evidence

    data = datasets.load("diamonds")
    X, y = np.asarray(data.inputs, dtype=float), np.asarray(data.targets, dtype=float)
    idx = np.sort(np.random.default_rng(0).choice(len(y), size=5_000, replace=False))
    fit = evidence.maximum_evidence_lowrank(X[idx], y[idx], rank=rank, rng=0)
    started = time.perf_counter()
    rows = RowChunks.from_arrays(client, X, y, min(chunk_rows, 10_000))
    result = theory_on(client, rows, fit.kernel, fit.noise_var, rank, min(chunk_rows, 10_000), "auto", started)
    return {"data": "diamonds", **result}, (fit.kernel, fit.noise_var, X, y)


def theory_on(client, rows, kernel, noise_var: float, rank: int, chunk_rows: int, hold, started: float) -> dict:
    """One cold ADATAP solve and ε(S) at S = N on the chunked Nyström operator of ``rows`` (the clock of the set-up
    started at ``started``)."""
    from explorer.bootstrap import replica
    from explorer.distributed import chunked_nystrom

    n = rows.n
    op = chunked_nystrom(rows, kernel, rank, rng=0, hold_features=hold)
    y = rows.targets()
    op.spectrum()  # the rows made and Φ held (if it is) before the clock starts
    setup = time.perf_counter() - started
    before = op.passes_made["passes"]
    baseline = _rss()
    workers_cpu = _workers_cpu(client)
    with PeakMemory(client) as peak:
        wall, cpu = time.perf_counter(), time.process_time()
        sol = replica.solve_replica(op, y, noise_var, float(n))
        eps = replica.bootstrap_test_error(sol)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    workers_cpu = _workers_cpu(client) - workers_cpu
    passes = op.passes_made["passes"] - before
    result = {"n": n, "rank": rank, "chunk_rows": chunk_rows, "chunks": len(rows.sizes), "held": op.held,
              "setup_s": setup, "theory_s": wall, "client_cpu_s": cpu, "n_iter": sol.n_iter, "passes": passes,
              "s_per_pass_per_1e6_rows": wall / passes / (n / 1e6), "workers_cpu_s": workers_cpu,
              "workers_cpu_s_per_pass_per_1e6_rows": workers_cpu / passes / (n / 1e6), "epsilon": eps,
              "worker_peak_gb": sorted(v / 1e9 for v in peak.workers.values()), "client_peak_gb": peak.client_peak / 1e9,
              "client_before_gb": baseline / 1e9,
              "client_n_vectors_above_start": (peak.client_peak - baseline) / (8.0 * n)}
    client.cancel(op.parts + rows.parts + [op.map_future])
    return result


def sklearn_refit(n: int, rank: int) -> dict:
    """The user's alternative at ``n`` rows: Nystroem transform once, one Ridge refit with bootstrap weights."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from threadpoolctl import threadpool_limits

    from explorer.distributed.rows import teacher_rows

    X, y = teacher_rows(0, n, n, D, 0, NOISE)
    s = np.random.default_rng(1).poisson(1.0, n).astype(float)
    with threadpool_limits(1):
        started = time.process_time()
        Z = Nystroem(kernel="rbf", gamma=1 / (2 * LENGTHSCALE**2), n_components=rank, random_state=0).fit_transform(X)
        transform = time.process_time() - started
        started = time.process_time()
        Ridge(alpha=NOISE / SIGNAL, fit_intercept=False).fit(Z, y, sample_weight=s)
        refit = time.process_time() - started
    return {"n": n, "rank": rank, "transform_cpu_s": transform, "refit_cpu_s": refit}


def diamonds_refit(kernel, noise_var: float, X: np.ndarray, y: np.ndarray, rank: int) -> dict:
    """One scikit-learn Nystroem + Ridge refit with bootstrap weights on diamonds, the kernel's ℓ and σ_f²."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from threadpoolctl import threadpool_limits

    s = np.random.default_rng(1).poisson(1.0, len(y)).astype(float)
    ls, signal = float(kernel.params["lengthscale"]), float(kernel.params["signal_var"])
    with threadpool_limits(1):
        Z = Nystroem(kernel="rbf", gamma=1 / (2 * ls**2), n_components=rank,
                     random_state=0).fit_transform(X) * np.sqrt(signal)
        started = time.process_time()
        Ridge(alpha=noise_var, fit_intercept=False).fit(Z, y, sample_weight=s)
        refit = time.process_time() - started
    return {"data": "diamonds", "n": len(y), "rank": rank, "refit_cpu_s": refit}


def main() -> None:
    from distributed import Client, LocalCluster

    from explorer.runtime.engine import Engine, use_single_threaded_blas

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100000,1000000,3000000,10000000")
    p.add_argument("--ranks", default="128")
    p.add_argument("--chunk-rows", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--worker-memory", default="4GB")
    p.add_argument("--sklearn-rows", type=int, default=1_000_000)
    p.add_argument("--hold-features", choices=("auto", "yes", "no"), default="auto",
                   help="whether the workers keep Φ: auto (when it takes at most 40 %% of their memory), yes, or no "
                        "(computed from X each pass; the same policy at every N measures the scaling like for like)")
    p.add_argument("--diamonds", action=argparse.BooleanOptionalAction, default=True,
                   help="also the theory on diamonds (53,940 rows; chunks of 10,000) at each rank, with one refit")
    p.add_argument("--out", default="artifacts/bench_distributed.jsonl")
    args = p.parse_args()
    use_single_threaded_blas()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    out = open(args.out, "a", encoding="utf-8")  # noqa: SIM115 - one line per measurement, flushed as it comes

    def emit(record: dict) -> None:
        print(json.dumps(record), flush=True)
        out.write(json.dumps(record) + "\n")
        out.flush()

    ranks = [int(r) for r in args.ranks.split(",")]
    hold = {"auto": "auto", "yes": True, "no": False}[args.hold_features]
    # The engine's local cluster, without its preload that lowers the workers' CPU priority (right for a server that
    # must stay responsive; on a machine shared with other work a niced worker gets a fraction of a core).
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           memory_limit=args.worker_memory, dashboard_address=None, host="127.0.0.1")
    engine = Engine(Client(cluster, set_as_default=False), cluster, f"local Dask cluster, {args.workers} workers")
    emit({"cluster": engine.description, "worker_memory": args.worker_memory, "cpu_count": os.cpu_count(),
          "load_average": os.getloadavg()})
    per_chunk_pass, results, on_diamonds = [], [], []
    try:
        for rank in ranks if args.diamonds else ():
            result, model = diamonds_theory(engine.client, rank, args.chunk_rows)
            emit(result)
            on_diamonds.append((rank, result, model))
        for rank in ranks:
            for n in (int(float(v)) for v in args.sizes.split(",")):
                result = theory_at(engine.client, n, rank, args.chunk_rows, hold)
                emit(result)
                results.append(result)
                per_chunk_pass.append((rank, result["theory_s"] / result["passes"] * args.workers / result["chunks"],
                                       result["passes"]))
    finally:
        engine.close()
    for rank in ranks:  # linear scaling: seconds per pass per row, largest N against smallest, with Φ held alike
        alike = sorted((r for r in results if r["rank"] == rank), key=lambda r: r["n"])
        if len(alike) > 1 and len({r["held"] for r in alike}) == 1:
            small, large = alike[0], alike[-1]
            emit({"linear": f"N = {small['n']:.0e} to {large['n']:.0e}", "rank": rank, "held": large["held"],
                  "wall_ratio": large["s_per_pass_per_1e6_rows"] / small["s_per_pass_per_1e6_rows"],
                  "workers_cpu_ratio": (large["workers_cpu_s_per_pass_per_1e6_rows"]
                                        / small["workers_cpu_s_per_pass_per_1e6_rows"])})
    for rank, result, model in on_diamonds:
        refit = diamonds_refit(*model, rank)
        emit({"sklearn": refit})
        emit({"data": "diamonds", "n": result["n"], "rank": rank,
              "theory_in_refits": result["theory_s"] / refit["refit_cpu_s"]})
    if args.sklearn_rows <= 0:
        return
    for rank in ranks:  # after the cluster (the transform's N×m array would stay in this process's peak)
        refit = sklearn_refit(args.sklearn_rows, rank)
        emit({"sklearn": refit})
        for result in results:
            if (result["n"], result["rank"]) == (args.sklearn_rows, rank):
                emit({"n": result["n"], "rank": rank, "theory_in_refits": result["theory_s"] / refit["refit_cpu_s"]})
    for rank, chunk_s, passes in per_chunk_pass[-1:]:
        chunks = 10**8 // args.chunk_rows
        waves = -(-chunks // 32)
        emit({"on_paper": "N = 1e8 on 32 workers", "rank": rank, "chunk_pass_s": chunk_s, "passes": passes,
              "compute_s_per_pass": waves * chunk_s, "theory_s": passes * waves * chunk_s,
              "client_n_vectors_gb_each": 8e8 / 1e9})


if __name__ == "__main__":
    main()
