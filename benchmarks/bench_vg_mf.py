"""Benchmark: cost of the VG and MF replica approximations next to ADATAP, in efficient Monte-Carlo samples.

Prints ratios measured in one run (never compare absolute seconds across machines), at S = N, cold start,
default tolerances, for N = 506 (boston, the paper preset of ``experiments.regression_problem``) and
N = 2000 (the synthetic problem of bench_replica.py):
- solve time / time of one MC bootstrap sample at S = N, for ADATAP, approximate ADATAP, VG and MF;
- VG's iteration count, and the relative error of its ε at the default tol against tol = 1e-12.

Both sides run with the same BLAS threads (one, as the explorer command does, unless --blas-threads
default). Run: .venv/bin/python benchmarks/bench_vg_mf.py [--repeats 3]
"""

from __future__ import annotations

from functools import partial

from bench_replica import NOISE, mc_sample_seconds, synthetic_problem
from timing import best_of, parse_with_blas_threads, timing_parser

from explorer import datasets
from explorer.bootstrap import replica
from explorer.gp_bootstrap import mean_field, variational
from explorer.gp_bootstrap.experiments import regression_problem


def boston_problem():
    problem = regression_problem(datasets.load("boston"))
    assert problem.noise_var == NOISE
    return f"boston (N={problem.n}, paper)", problem.K, problem.y


def main() -> None:
    args = parse_with_blas_threads(timing_parser(__doc__, repeats=3))
    print(f"{'problem':<24} {'MC ms':>7} {'ADATAP/MC':>9} {'approx/MC':>9} {'VG/MC':>7} {'MF/MC':>7} "
          f"{'VG iter':>7} {'VG ε rel.err':>12}")
    for name, K, y in (boston_problem(), synthetic_problem()):
        n = len(y)
        mc = mc_sample_seconds(K, y, 200 if n < 1000 else 50, args.repeats)
        solvers = {"adatap": replica.solve_replica, "approx": replica.approximate_replica,
                   "vg": variational.solve_variational, "mf": mean_field.solve_mean_field}
        ratio = {key: best_of(partial(solve, K, y, NOISE, n), args.repeats)[0] / mc for key, solve in solvers.items()}
        vg = variational.solve_variational(K, y, NOISE, n)
        tight = variational.solve_variational(K, y, NOISE, n, tol=1e-12, max_iter=10_000)
        rel = abs(variational.vg_test_error(vg) / variational.vg_test_error(tight) - 1)
        print(f"{name:<24} {mc * 1e3:7.2f} {ratio['adatap']:9.1f} {ratio['approx']:9.1f} {ratio['vg']:7.1f} "
              f"{ratio['mf']:7.1f} {vg.n_iter:7d} {rel:12.1e}")


if __name__ == "__main__":
    main()
