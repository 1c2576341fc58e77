"""Benchmark: cost of the SVM replica/ADATAP theory ([MO03b]) in units of exact SVM fits on D0.

Prints ratios measured in one run (never compare absolute seconds across machines):
- one SVM trained on all of D0 (Lawson-Hanson NNLS on the dual; best of --repeats);
- a cold theory solve at S = N, in SVM fits (the issue's target: ≤ 50 for broad kernels at N = 683);
- a theory learning curve over 10 values of S/N in [0.25, 4] (warm starts), against a Monte-Carlo estimate
  of ε at S = N with --mc-samples samples (1000: the issue's comparison).

Datasets: crabs (N = 200) and wisconsin (N = 683, 449 distinct inputs) with the broad kernel L = √10 on
standardised inputs; pima (L = 1) and sonar (L = 3, from ../shared/datasets/sonar.csv if present) as
narrow-kernel cases. BLAS runs single-threaded by default (--threads): on a shared machine the many small
BLAS calls otherwise wait for descheduled worker threads, which distorts the ratios.

Run: .venv/bin/python benchmarks/bench_svm.py [--repeats 3] [--mc-samples 1000] [--threads 1]
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
from timing import best_of, timing_parser

from explorer import datasets
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import svm_replica
from explorer.svm_bootstrap.problem import BROAD_LENGTHSCALE, svm_problem

SONAR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "sonar.csv"
GRID = np.linspace(0.25, 4.0, 10)


def problems():
    broad = BROAD_LENGTHSCALE
    yield "crabs L=√10", svm_problem(datasets.load("crabs"), broad)
    yield "wisconsin L=√10", svm_problem(datasets.load("wisconsin"), broad)
    yield "pima L=1 (narrow)", svm_problem(datasets.load("pima"), 1.0)
    if SONAR.exists():
        yield "sonar L=3 (narrow)", svm_problem(datasets.load_csv(SONAR, "label"), 3.0)


def theory_at(problem, S, **options):
    try:
        return svm_replica.solve_svm_replica(problem.K, problem.y_sites, S, counts=problem.sites.counts, **options)
    except svm_replica.ConvergenceError as err:
        return err.last


def curve(problem):
    previous, n_iter = None, 0
    for v in GRID:
        sol = theory_at(problem, v * problem.n, init=previous)
        n_iter += sol.n_iter if sol is not None else 0
        previous = sol if sol is not None and sol.converged else previous
    return n_iter


def thread_limit(threads: int):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("(threadpoolctl not installed: BLAS threads not limited)")
        return contextlib.nullcontext()
    return threadpool_limits(threads, user_api="blas")


def main() -> None:
    parser = timing_parser(__doc__, repeats=3)
    parser.add_argument("--mc-samples", type=int, default=1000, help="Monte-Carlo samples at S = N")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args()
    print(f"{'problem':<20} {'N':>4} {'sites':>5} {'fit ms':>7} {'theory ms':>9} {'fits':>6} {'sweeps':>6} "
          f"{'curve(10 S) s':>13} {f'MC({args.mc_samples}) s':>11} {'curve/MC':>8}")
    with thread_limit(args.threads):
        for name, problem in problems():
            fit_s, _ = best_of(lambda: svm.fit_hard_margin(problem.K, problem.y_sites), args.repeats)
            theory_s, sol = best_of(lambda: theory_at(problem, float(problem.n)), args.repeats)
            curve_s, _ = best_of(lambda: curve(problem), 1)
            mc_s, _ = best_of(lambda: svm.bootstrap_fields(problem.K, problem.y_sites, problem.n, args.mc_samples,
                                                           row_site=problem.sites.row_site, rng=0), 1)
            sweeps = f"{sol.n_iter}{'' if sol.converged else '!'}" if sol is not None else "fail"
            print(f"{name:<20} {problem.n:>4} {problem.n_sites:>5} {fit_s * 1e3:7.2f} {theory_s * 1e3:9.1f} "
                  f"{theory_s / fit_s:6.1f} {sweeps:>6} {curve_s:13.2f} {mc_s:11.2f} {curve_s / mc_s:8.2f}")
    print("fits = theory time at S = N / one exact SVM fit on D0; '!' marks an unconverged solve.")


if __name__ == "__main__":
    main()
