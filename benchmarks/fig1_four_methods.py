"""[MO03], Fig. 1 (left): ε(S) on boston from ADATAP, approximate ADATAP, VG, MF and Monte-Carlo.

The problem is the paper preset the CLI's ``learning-curve`` uses (``regression_problem(load("boston"))``:
RBF with l² = 73.54 and v_j = input sd, σ² = 0.01, raw targets). Theory curves are warm-started along S;
Monte-Carlo uses the Poisson bootstrap with a fixed seed. Prints a table; nothing is cached.

Run: .venv/bin/python benchmarks/fig1_four_methods.py [--mc-samples 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from explorer import datasets
from explorer.bootstrap import replica
from explorer.gp_bootstrap import mean_field, montecarlo, variational
from explorer.gp_bootstrap.experiments import regression_problem
from explorer.runtime.engine import use_single_threaded_blas

GRID = (0.25, 0.5, 1.0, 2.0, 4.0)


def theory_curves(problem, grid: np.ndarray) -> dict[str, np.ndarray]:
    """ε(S) of the four replica approximations at S = grid · N (eq. 45 for each)."""
    K, y, s2, S = problem.K, problem.y, problem.noise_var, grid * problem.n
    adatap = replica.replica_learning_curve(K, y, s2, S)
    approx = [replica.approximate_replica(K, y, s2, s) for s in S]
    vg = variational.vg_learning_curve(K, y, s2, S)
    mf = mean_field.mf_learning_curve(K, y, s2, S)
    return {
        "ADATAP": np.array([replica.bootstrap_test_error(s) for s in adatap]),
        "approx.": np.array([replica.bootstrap_test_error(s) for s in approx]),
        "VG": np.array([variational.vg_test_error(s) for s in vg]),
        "MF": np.array([mean_field.mf_test_error(s) for s in mf]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mc-samples", type=int, default=2000, help="Monte-Carlo samples per S")
    parser.add_argument("--seed", type=int, default=0, help="seed of the Monte-Carlo generator")
    args = parser.parse_args()
    use_single_threaded_blas()
    problem = regression_problem(datasets.load("boston"))
    grid = np.array(GRID)
    t0 = time.perf_counter()
    curves = theory_curves(problem, grid)
    t_theory = time.perf_counter() - t0
    t0 = time.perf_counter()
    mc = montecarlo.bootstrap_learning_curve(problem.K, problem.y, problem.noise_var, grid * problem.n,
                                             args.mc_samples, rng=args.seed)
    t_mc = time.perf_counter() - t0
    print(f"boston (N = {problem.n}, paper preset, σ² = {problem.noise_var}), "
          f"Monte-Carlo {args.mc_samples} samples per S, seed {args.seed}")
    print(f"{'S/N':>5} " + " ".join(f"{name:>9}" for name in curves) + f" {'MC':>9} {'± se':>7}")
    for j, v in enumerate(grid):
        print(f"{v:5.2f} " + " ".join(f"{curves[name][j]:9.3f}" for name in curves)
              + f" {mc.value[j]:9.3f} {mc.se[j]:7.3f}")
    print(f"(theory, all four curves: {t_theory:.1f} s; Monte-Carlo: {t_mc:.1f} s)")


if __name__ == "__main__":
    main()
