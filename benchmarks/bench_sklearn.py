"""J+aB prediction intervals without refits (explorer.sklearn) against MAPIE's refits: time, peak memory, coverage.

Issue 50's point 4. For KernelRidge (rbf) at N = 2,000 and Nystroem(256) + Ridge at N = 20,000 and 200,000 rows of
Friedman's first regression function (``sklearn.datasets.make_friedman1``, 10 inputs, noise sd 1, 2,000 held-out
rows), the estimator is fitted once (the user's model), then:

(a) the replica theory: ``ReplicaBootstrapRegressor.from_estimator(est, X, y)`` and
    ``predict_interval(X_test, 0.9, method="jackknife+-after-bootstrap")``;
(b) MAPIE's ``JackknifeAfterBootstrapRegressor(est, resampling=B, method="plus", aggregation_method="mean")``,
    ``fit_conformalize`` and ``predict_interval``, B = 30 and 300 (the literal loop of B refits with Poisson
    sample weights where MAPIE is not installed).

Each side runs in a forked child process with the same number of BLAS threads (``--threads``, default 1), which
reports its CPU seconds, its wall-clock seconds and its peak resident memory above what it started with
(``ru_maxrss`` less the RSS at the fork); the machine's 1-minute load average is recorded before each side. "refits"
is a side's CPU time over one fit of the estimator on the N rows (CPU time, because wall time on a shared machine
counts the other processes' time too). One JSON line per measurement,
then a table. Each side's process is capped at ``--memory-cap-gb`` of address space (default 8 GB: MAPIE's "plus"
intervals hold N × (held-out rows) matrices, 3.2 GB each at N = 200,000); a side that needs more is reported as
such. ``--skip`` names runs to leave out (e.g. ``--skip 200000:300``: 300 refits of 200,000 rows take
about half an hour on one core); a skipped run is listed as such.

    python benchmarks/bench_sklearn.py [--threads 1] [--sizes 2000 20000 200000] [--skip 200000:300]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue as queue_module
import resource
import time

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from explorer.sklearn import ReplicaBootstrapRegressor

CONFIDENCE = 0.9
HELD_OUT = 2_000
RESAMPLES = (30, 300)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _model(n: int):
    """KernelRidge(rbf) up to 2,000 rows (Friedman's inputs are uniform on [0, 1]), Nystroem(256) + Ridge above
    (on standardised inputs; MAPIE refits the scaler and the landmarks per resample, the theory holds them fixed)."""
    if n <= 2_000:
        return KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5)
    return make_pipeline(StandardScaler(), Nystroem(gamma=0.05, n_components=256, random_state=0), Ridge(alpha=0.1))


def _theory(est, X, y, X_test):
    boot = ReplicaBootstrapRegressor.from_estimator(est, X, y)
    return boot.predict_interval(X_test, CONFIDENCE, method="jackknife+-after-bootstrap")


def _mapie(est, X, y, X_test, resamples):
    try:
        from mapie.regression import JackknifeAfterBootstrapRegressor
    except ImportError:
        return _literal(est, X, y, X_test, resamples)
    jab = JackknifeAfterBootstrapRegressor(clone(est), confidence_level=CONFIDENCE, resampling=resamples,
                                           method="plus", aggregation_method="mean", random_state=0)
    _, bounds = jab.fit_conformalize(X, y).predict_interval(X_test)
    return bounds[:, 0, 0], bounds[:, 1, 0]


def _literal(est, X, y, X_test, resamples):
    """J+aB from ``resamples`` literal refits with Poisson(1) sample weights (no MAPIE)."""
    from explorer.bootstrap.out_of_bag import jackknife_plus_bounds

    occ = np.random.default_rng(0).poisson(1.0, (resamples, len(y)))
    key = f"{est.steps[-1][0]}__sample_weight" if isinstance(est, Pipeline) else "sample_weight"
    out = (occ == 0).astype(float)
    at_train, at_test = np.zeros(len(y)), np.zeros((X_test.shape[0], len(y)))
    for s, o in zip(occ, out):
        fitted = clone(est).fit(X, y, **{key: s.astype(float)})
        at_train += o * fitted.predict(X)
        at_test += np.outer(fitted.predict(X_test), o)
    count = np.maximum(out.sum(axis=0), 1)
    return jackknife_plus_bounds(at_test / count, np.abs(y - at_train / count), CONFIDENCE)


def _child(queue, threads, cap_gb, work, args):
    if cap_gb:  # a side that needs more fails alone, instead of taking the machine's memory from everyone
        limit = int(cap_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with threadpool_limits(threads):
        base = _rss_bytes()
        start, wall = time.process_time(), time.perf_counter()
        try:
            low, high = work(*args)
        except MemoryError:
            queue.put(None)
            return
        cpu, wall = time.process_time() - start, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    queue.put((cpu, wall, max(peak - base, 0), np.asarray(low), np.asarray(high)))


def _measure(threads, cap_gb, work, *args):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, threads, cap_gb, work, args))
    proc.start()
    while True:  # a child the cap kills outright (not by a MemoryError) puts nothing: count it as out of memory
        try:
            result = queue.get(timeout=5)
            break
        except queue_module.Empty:
            if not proc.is_alive():
                try:  # what it put just before it ended
                    result = queue.get(timeout=1)
                except queue_module.Empty:
                    result = None
                break
    proc.join()
    return result


def _fit_seconds(threads, est, X, y) -> float:
    with threadpool_limits(threads):
        start = time.process_time()
        clone(est).fit(X, y)
        return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of both sides (default 1)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000, 200_000])
    parser.add_argument("--held-out", type=int, default=HELD_OUT, help=f"held-out rows (default {HELD_OUT})")
    parser.add_argument("--skip", nargs="*", default=[], help="runs to leave out, as N:B (B = 0 for the theory)")
    parser.add_argument("--memory-cap-gb", type=float, default=8.0,
                        help="address-space cap of each side's process (default 8; 0: none); a side above it is "
                             "reported as out of memory")
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        X_all, y_all = make_friedman1(n + args.held_out, noise=1.0, random_state=0)
        X, y, X_test, y_test = X_all[:n], y_all[:n], X_all[n:], y_all[n:]
        est = _model(n).fit(X, y)
        fit = _fit_seconds(args.threads, est, X, y)
        name = "KernelRidge(rbf)" if isinstance(est, KernelRidge) else "Nystroem(256) + Ridge"
        runs = [("theory", 0, _theory, (est, X, y, X_test))]
        runs += [(f"MAPIE B={b}", b, _mapie, (est, X, y, X_test, b)) for b in RESAMPLES]
        for side, b, work, work_args in runs:
            row = {"model": name, "N": n, "held_out": args.held_out, "side": side, "threads": args.threads,
                   "one_fit_cpu_s": round(fit, 3), "load_1min": round(os.getloadavg()[0], 2)}
            if f"{n}:{b}" in args.skip:
                rows.append({**row, "skipped": True})
                print(json.dumps(rows[-1]), flush=True)
                continue
            result = _measure(args.threads, args.memory_cap_gb, work, *work_args)
            if result is None:
                rows.append({**row, "out_of_memory_gb": args.memory_cap_gb})
                print(json.dumps(rows[-1]), flush=True)
                continue
            cpu, wall, peak, low, high = result
            inside = (y_test >= low) & (y_test <= high)
            rows.append({**row, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "refits": round(cpu / fit, 1),
                         "peak_mb": round(peak / 2**20, 1), "coverage": round(float(inside.mean()), 4),
                         "median_width": round(float(np.median(high - low)), 4)})
            print(json.dumps(rows[-1]), flush=True)
    print(f"\n{'model':22s} {'N':>8s} {'side':12s} {'CPU s':>9s} {'wall s':>9s} {'refits':>8s} {'peak MB':>9s} "
          f"{'coverage':>9s} {'load':>6s}")
    for r in rows:
        if r.get("skipped") or r.get("out_of_memory_gb"):
            what = "skipped" if r.get("skipped") else f"needs more than {r['out_of_memory_gb']:g} GB"
            print(f"{r['model']:22s} {r['N']:8d} {r['side']:12s} {what}")
            continue
        print(f"{r['model']:22s} {r['N']:8d} {r['side']:12s} {r['cpu_s']:9.2f} {r['wall_s']:9.2f} {r['refits']:8.1f} "
              f"{r['peak_mb']:9.1f} {r['coverage']:9.3f} {r['load_1min']:6.2f}")


if __name__ == "__main__":
    main()
