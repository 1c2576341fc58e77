"""Time per bootstrap sample: active-set GP refit (sigma^2/s identity) vs refit on duplicates.

    python benchmarks/bench_montecarlo.py                    # N = 506 (boston) and N = 2000, S = N
    python benchmarks/bench_montecarlo.py --s-over-n 1 2 3   # also larger bootstrap samples

Both methods run on the same occupation vectors and must agree (max |diff| column). The fast
method factorises |a| ~ N (1 - e^{-S/N}) distinct points, the literal refit ~S duplicated points,
so the Cholesky flop counts differ by (S / |a|)^3 (the "flop ratio" column: ~4 at S = N, ~12 at
S = 2N); gathers and triangular solves scale similarly, so the measured speed-up tracks it.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from explorer.gp_bootstrap.montecarlo import bootstrap_predictions, refit_on_duplicates

BOSTON = Path(__file__).resolve().parents[1] / "datasets" / "boston.csv"
NOISE_VAR = 0.01  # sigma^2 of Fig. 1, [MO03]


def rbf(X: np.ndarray, l2: float, v: np.ndarray) -> np.ndarray:
    """K(x, x') = exp(-sum_j (x_j - x'_j)^2 / (v_j l^2)), the kernel of Fig. 1 of [MO03]."""
    Z = X / np.sqrt(v * l2)
    sq = np.sum(Z**2, axis=1)
    return np.exp(-np.maximum(sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T, 0.0))


def boston_problem() -> tuple[str, np.ndarray, np.ndarray]:
    data = np.loadtxt(BOSTON, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    return "boston", rbf(X, 73.54, X.std(axis=0)), (y - y.mean()) / y.std()


def synthetic_problem(n: int, d: int, rng: np.random.Generator) -> tuple[str, np.ndarray,
                                                                        np.ndarray]:
    X = rng.normal(size=(n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.normal(size=n)
    return f"synthetic {d}-D", rbf(X, 3.0, X.var(axis=0)), (y - y.mean()) / y.std()


def problem(n: int, rng: np.random.Generator) -> tuple[str, np.ndarray, np.ndarray]:
    if n == 506 and BOSTON.exists():
        return boston_problem()
    return synthetic_problem(n, 13 if n == 506 else 8, rng)


def time_per_sample(fn, n: int, repeats: int) -> tuple[float, object]:
    """Best-of-``repeats`` wall time of ``fn()`` divided by its ``n`` samples (timeit's rule)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best, out


def run(n: int, s_over_n: float, n_fast: int, n_naive: int, seed: int, repeats: int) -> dict:
    rng = np.random.default_rng(seed)
    name, K, y = problem(n, rng)
    S = s_over_n * n
    bootstrap_predictions(K, y, NOISE_VAR, S, 2, rng=rng)  # warm-up (BLAS threads, caches)
    t_fast, pred = time_per_sample(
        lambda: bootstrap_predictions(K, y, NOISE_VAR, S, n_fast, rng=seed), n_fast, repeats)
    occ = pred.occupations[:n_naive]
    t_naive, naive = time_per_sample(lambda: refit_on_duplicates(K, y, NOISE_VAR, occ), n_naive,
                                     repeats)
    active = np.count_nonzero(pred.occupations, axis=1).mean()
    size = pred.occupations.sum(axis=1).mean()
    return dict(data=name, N=n, S=S, active=active, size=size, fast=t_fast, naive=t_naive,
                flops=(size / active) ** 3, diff=np.abs(naive - pred.train[:n_naive]).max())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[506, 2000],
                        help="training-set sizes N (506 uses datasets/boston.csv if present)")
    parser.add_argument("--s-over-n", type=float, nargs="+", default=[1.0],
                        help="bootstrap sample sizes as multiples of N (default: S = N)")
    parser.add_argument("--fast-samples", type=int, default=None,
                        help="samples timed for the fast method (default: 2e8 / N^2, >= 10)")
    parser.add_argument("--naive-samples", type=int, default=None,
                        help="samples timed for the literal refit (default: a quarter)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timings")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    threads = os.environ.get("OPENBLAS_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "default"))
    print(f"numpy {np.__version__}, BLAS threads: {threads}, sigma^2 = {NOISE_VAR}, "
          "times are per bootstrap sample (best of --repeats)")

    print(f"{'data':<14}{'N':>6}{'S':>7}{'|a|':>8}{'|D|':>8}{'fast ms':>10}{'naive ms':>10}"
          f"{'speed-up':>10}{'flop ratio':>12}{'max|diff|':>11}")
    for n in args.sizes:
        n_fast = args.fast_samples or max(10, 200_000_000 // n**2)
        n_naive = args.naive_samples or max(3, n_fast // 4)
        for r in args.s_over_n:
            row = run(n, r, n_fast, n_naive, args.seed, args.repeats)
            print(f"{row['data']:<14}{row['N']:>6}{row['S']:>7.0f}{row['active']:>8.0f}"
                  f"{row['size']:>8.0f}{1e3 * row['fast']:>10.2f}{1e3 * row['naive']:>10.2f}"
                  f"{row['naive'] / row['fast']:>9.1f}x{row['flops']:>11.1f}x{row['diff']:>11.1e}")


if __name__ == "__main__":
    main()
