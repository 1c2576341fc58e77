"""Benchmark: every no-refit approximation of the GP bootstrap learning curve beside Monte-Carlo (issue 25, item 3).

For boston (N = 506; the app's paper preset: RBF with l² = 73.54 on sd-scaled raw inputs, σ² = 0.01) and the
synthetic N = 2000 problem of bench_replica.py, prints per method — replica ADATAP, approximate ADATAP, VG, MF,
the infinitesimal jackknife ε_IJ (eq. 14 of docs/linear_response.md; ε_IJ2, eq. 15, on a line of its own) and the
leave-one-out limit ε_∞ (eq. 9) — its cost at S = N (cold, best of --repeats) in seconds and in Monte-Carlo
samples (its time / the time of one Monte-Carlo refit at S = N), its ε(S) and its gap to Monte-Carlo (Efron's
estimator, eq. 17 of [MO03], square loss) at S/N = 0.5, 1, 2 in Monte-Carlo standard errors. A biased method's
gap in SE grows as √B with the number B of Monte-Carlo samples: compare gaps at the same B.

One BLAS thread (the explorer command's policy). Run from the repository root:
.venv/bin/python benchmarks/bench_approximations.py [--mc-boston 2000] [--mc-large 300] [--repeats 5]
"""

from __future__ import annotations

import platform
import time

import numpy as np
from bench_replica import NOISE, mc_sample_seconds, synthetic_problem
from timing import best_of, timing_parser

from explorer import datasets
from explorer.bootstrap import replica
from explorer.gp_bootstrap import linear_response, mean_field, montecarlo, variational
from explorer.gp_bootstrap.experiments import regression_problem
from explorer.runtime.engine import use_single_threaded_blas

GRID = np.array([0.5, 1.0, 2.0])

#: method -> (solve(K, y, S), rows: label -> ε(S) from the solution); one timing per method.
METHODS = {
    "adatap": (lambda K, y, S: replica.solve_replica(K, y, NOISE, S),
               {"ADATAP (replica)": replica.bootstrap_test_error}),
    "approx": (lambda K, y, S: replica.approximate_replica(K, y, NOISE, S),
               {"approximate ADATAP": replica.bootstrap_test_error}),
    "vg": (lambda K, y, S: variational.solve_variational(K, y, NOISE, S), {"VG": variational.vg_test_error}),
    "mf": (lambda K, y, S: mean_field.solve_mean_field(K, y, NOISE, S), {"MF": mean_field.mf_test_error}),
    "ij": (lambda K, y, S: linear_response.linear_response_error(K, y, NOISE, S),
           {"IJ (first order)": lambda e: e.value, "  IJ2 (same solve)": lambda e: e.value_second_order}),
    "loo": (lambda K, y, S: linear_response.loo_limit(K, y, NOISE, S), {"LOO limit": lambda e: e.value}),
}


def boston_problem():
    problem = regression_problem(datasets.load("boston"))  # the paper preset (l² = 73.54, raw data, σ² = 0.01)
    assert problem.noise_var == NOISE
    return f"boston (N={problem.n}, paper)", problem.K, problem.y


def report(name: str, K: np.ndarray, y: np.ndarray, mc_samples: int, repeats: int) -> None:
    n = len(y)
    t0 = time.perf_counter()
    curve = montecarlo.bootstrap_learning_curve(K, y, NOISE, GRID * n, mc_samples, rng=0)
    mc_wall = time.perf_counter() - t0
    sample = mc_sample_seconds(K, y, 100 if n < 1000 else 20, repeats)
    print(f"\n{name}: one MC refit at S = N {sample * 1e3:.2f} ms; MC {mc_samples} samples per S/N "
          f"({mc_wall:.0f} s for the curve)")
    head = " ".join(f"{'ε @' + format(v, 'g'):>9} {'gap/SE':>7}" for v in GRID)
    print(f"{'method':<24} {'cost s':>8} {'in MC':>8} {head}")
    print(f"{'Monte-Carlo':<24} {'':>8} {'':>8} "
          + " ".join(f"{m:9.4f} {'±' + format(s, '.1g'):>7}" for m, s in zip(curve.value, curve.se)))
    for solve, rows in METHODS.values():
        seconds, _ = best_of(lambda: solve(K, y, float(n)), repeats)
        solutions = [solve(K, y, v * n) for v in GRID]
        for label, eps in rows.items():
            values = np.array([eps(sol) for sol in solutions])
            gaps = (values - curve.value) / curve.se
            cells = " ".join(f"{e:9.4f} {g:7.1f}" for e, g in zip(values, gaps))
            print(f"{label:<24} {seconds:8.3f} {seconds / sample:8.1f} {cells}")


def main() -> None:
    parser = timing_parser(__doc__, repeats=5)
    parser.add_argument("--mc-boston", type=int, default=2000, help="MC samples per S/N on boston (default 2000)")
    parser.add_argument("--mc-large", type=int, default=300, help="MC samples per S/N at N = 2000 (default 300)")
    args = parser.parse_args()
    use_single_threaded_blas()
    print(f"{time.strftime('%Y-%m-%d')}, {platform.machine()} {platform.processor() or ''}, one BLAS thread")
    report(*boston_problem(), args.mc_boston, args.repeats)
    report(*synthetic_problem(), args.mc_large, args.repeats)


if __name__ == "__main__":
    main()
