"""GP Monte-Carlo on Dask: throughput with 2 workers vs 1, and the cost of chunking vs a plain loop.

    python benchmarks/bench_engine.py                        # boston, the app's MC grid, 300 samples per S
    python benchmarks/bench_engine.py --samples 600 --repeats 3

The job is the app's learning curve (``montecarlo.bootstrap_learning_curve`` on boston with the paper
preset at every S/N of ``MC_GRID``). Printed, all measured in this run (best of ``--repeats``):

- *2 workers vs 1*: wall time on a local Dask cluster of 1 worker process over that of 2 (ideal 2.0 on two
  free cores; the target is about 1.8).
- *chunking overhead*: the same curve in-process at the default chunk size (seeded chunks, one child
  generator per sample) over a plain loop (one generator per S, one batch of all samples), minus 1 (target
  <= 10%). The plain loop draws other samples, so only its time is compared, not its numbers.

Every engine's curve must equal the in-process one bit for bit (checked). One BLAS thread per process, as
the CLI, the server and the workers run. The machine's load average is printed: on a shared machine the
ratios are only as good as the idle cores.
"""
from __future__ import annotations

import argparse
import os

import numpy as np
from timing import best_of

from explorer import datasets
from explorer.bootstrap.estimates import efron_error as _efron
from explorer.chunks import DEFAULT_CHUNK_SIZE
from explorer.gp_bootstrap import experiments, montecarlo
from explorer.kernels import paper_rbf
from explorer.losses import get_loss
from explorer.operators.refits import dense_refit_predictions as _predict_batch
from explorer.resampling import occupation_numbers
from explorer.runtime import engine
from explorer.runtime.engine import use_single_threaded_blas

MC_GRID = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)  # the app's learning-curve grid (explorer.views.gp_bootstrap.state)


def boston() -> experiments.RegressionProblem:
    data = datasets.load("boston")
    return experiments.regression_problem(data, paper_rbf(data.inputs, l2=experiments.PAPER_L2, scale="sd"),
                                          experiments.PAPER_NOISE_VAR)


def plain_curve(problem, S_values: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """Efron's estimator at every S by a plain loop: one generator, one batch of all samples per S."""
    rng, g, values = np.random.default_rng(seed), get_loss("square"), []
    for S in S_values:
        occ = occupation_numbers(problem.n, S, n_samples, rng=rng)
        train = np.empty((n_samples, problem.n))
        _predict_batch(problem.K, problem.y, problem.noise_var, occ, None, train, None)
        values.append(_efron(occ, train, problem.y, g).value)
    return np.array(values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="MC samples per S/N (default 300, as the issue)")
    parser.add_argument("--repeats", type=int, default=2, help="repetitions, best time kept (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    use_single_threaded_blas()
    problem = boston()
    S_values = np.asarray(MC_GRID) * problem.n
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores); boston N = {problem.n}, {len(MC_GRID)} S/N x {args.samples} samples")

    def curve(executor=None, chunk_size=DEFAULT_CHUNK_SIZE):
        return montecarlo.bootstrap_learning_curve(problem.K, problem.y, problem.noise_var, S_values, args.samples,
                                                   rng=args.seed, chunk_size=chunk_size, executor=executor).value

    plain_curve(problem, S_values[:1], 8, args.seed)  # warm-up (imports, caches)
    t_plain, _ = best_of(lambda: plain_curve(problem, S_values, args.samples, args.seed), args.repeats)
    t_chunked, reference = best_of(curve, args.repeats)
    print(f"in-process plain loop:          {t_plain:7.2f} s")
    print(f"in-process, chunks of {DEFAULT_CHUNK_SIZE:<4d}:     {t_chunked:7.2f} s   "
          f"chunking overhead {t_chunked / t_plain - 1:+.1%} (target <= +10%)")

    times = {}
    for workers in (1, 2):
        eng = engine.connect(workers=workers, dashboard=False)
        try:
            curve(eng.executor)  # warm-up: the workers import numpy/scipy and the task
            times[workers], values = best_of(lambda e=eng: curve(e.executor), args.repeats)
        finally:
            eng.close()
        assert np.array_equal(values, reference), f"{workers} worker(s) changed the numbers"
        print(f"Dask, {workers} worker process{'es' if workers > 1 else '  '}:      {times[workers]:7.2f} s   "
              f"({len(MC_GRID) * args.samples / times[workers]:.0f} samples/s, same numbers as in-process)")
    print(f"throughput 2 workers vs 1:      {times[1] / times[2]:7.2f}x (expect about 1.8x on 2 free cores)")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
