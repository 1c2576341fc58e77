"""Benchmark: cost of the ADATAP theory in units of one efficient Monte-Carlo bootstrap sample.

Prints ratios measured in one run (never compare absolute seconds across machines):
- theory solve at S = N (cold start, default tol) / one MC sample at S = N, at N = 506 (boston, paper
  preset) and N = 2000 (synthetic, 8 inputs, the paper's pumadyn-style kernel l² = 3, v_j = variance);
- a learning curve of 10 values of S with warm starts, per S, in MC samples;
- the accuracy traded: relative error of ε(S) at the default tol against tol = 1e-12.

Both sides run with the same BLAS threads (one, as the explorer command does, unless --blas-threads
default). Run: .venv/bin/python benchmarks/bench_replica.py [--repeats 3]
"""

from __future__ import annotations

import numpy as np
from timing import best_of, parse_with_blas_threads, timing_parser

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import montecarlo

NOISE = 0.01


def boston_problem():
    data = datasets.load("boston")
    return "boston (N=506, paper)", kernels.paper_rbf(data.inputs, l2=73.54, scale="sd")(data.inputs), data.targets


def synthetic_problem(n: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, size=(n, 8))
    y = np.sin(X[:, 0] * X[:, 1]) + 0.5 * np.cos(2 * X[:, 2]) + X[:, 3] ** 2 / 3 + 0.1 * rng.normal(size=n)
    v = X.var(axis=0, ddof=1)
    K = np.exp(-(((X[:, None, :] - X[None, :, :]) ** 2) / v).sum(-1) / 3.0)
    return f"synthetic (N={n}, d=8)", K, y


def mc_sample_seconds(K, y, n_samples: int, repeats: int) -> float:
    montecarlo.bootstrap_predictions(K, y, NOISE, len(y), 5, rng=0)  # warm-up
    seconds, _ = best_of(lambda: montecarlo.bootstrap_predictions(K, y, NOISE, len(y), n_samples, rng=1), repeats)
    return seconds / n_samples


def main() -> None:
    args = parse_with_blas_threads(timing_parser(__doc__, repeats=3))
    grid = np.linspace(0.25, 4.0, 10)
    print(f"{'problem':<24} {'MC ms':>7} {'theory ms':>9} {'theory/MC':>9} {'iter':>4} {'ε rel.err':>9} "
          f"{'curve/S in MC':>13}")
    for name, K, y in (boston_problem(), synthetic_problem()):
        n = len(y)
        mc = mc_sample_seconds(K, y, 200 if n < 1000 else 50, args.repeats)
        sol = replica.solve_replica(K, y, NOISE, n)
        theory, _ = best_of(lambda: replica.solve_replica(K, y, NOISE, n), args.repeats)
        exact = replica.solve_replica(K, y, NOISE, n, tol=1e-12, precision="double")
        rel = abs(replica.bootstrap_test_error(sol) / replica.bootstrap_test_error(exact) - 1)
        curve, _ = best_of(lambda: replica.replica_learning_curve(K, y, NOISE, grid * n), args.repeats)
        print(f"{name:<24} {mc * 1e3:7.2f} {theory * 1e3:9.1f} {theory / mc:9.1f} {sol.n_iter:4d} {rel:9.1e} "
              f"{curve / len(grid) / mc:13.1f}")


if __name__ == "__main__":
    main()
