"""Benchmark: one evaluation of each model-selection criterion at N = 365, in milliseconds.

The data are the temperature series of [Fis16] §5.1 (365 days, ``../shared/datasets/``) when present, else a
squared-exponential GP teacher draw of the same size. The kernel is a squared exponential near the evidence
optimum. For each criterion it prints the best of ``--repeats`` timings of

- ``value``: the criterion alone (what a slider needs),
- ``value+grad``: with the analytic gradient (what one L-BFGS-B step needs),

- ``slider``: value only, from a criterion that was just evaluated at a lengthscale 2 % away (what moving a
  slider costs; only bootstrap632 keeps state — its last Δλ warm-starts the ADATAP fixed point),

with ASC at the thesis' J = 32, L = 2, M = 8 and bootstrap632 solved to tol 1e-9 (cold in the first two
columns).
BLAS threads are limited with ``--threads`` (default 1: the numbers then do not depend on how busy a shared
machine is). Absolute times depend on the machine; compare criteria with each other.

Run: .venv/bin/python benchmarks/bench_selection.py [--repeats 5] [--threads 1]
"""

from __future__ import annotations

import os

import numpy as np
from timing import best_of, timing_parser

from explorer.datasets import gp_teacher
from explorer.kernels import SquaredExponential
from explorer.model_selection import experiments as selection_experiments
from explorer.model_selection.criterion import CRITERIA, make_criterion

TEMPERATURE = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets",
                           "berkeley_tavg_doy_mean_1880_2014.csv")


def problem():
    if os.path.exists(TEMPERATURE):
        data = selection_experiments.load_temperature(TEMPERATURE)
        return "temperature (N=365, D=1)", data.inputs, data.targets, SquaredExponential(3.66, 0.0055), 5.5e-5
    data = gp_teacher(365, 0)
    return "SE teacher (N=365, D=1)", data.inputs, data.targets, SquaredExponential(1.0, 1.0), 0.01


def cold(name, n):
    """A fresh criterion each call, so that bootstrap632 gets no warm start."""
    return make_criterion(name, n, rng=0, n_partitions=32, n_subsets=2, n_objects=8)


def main() -> None:
    parser = timing_parser(__doc__, repeats=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args()
    try:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(args.threads)
    except ImportError:                                                # timings then use every core
        limit = None
    label, X, y, kernel, noise_var = problem()
    print(f"{label}; {kernel!r}, noise_var = {noise_var:g}; BLAS threads: "
          f"{args.threads if limit is not None else 'all'}")
    print(f"{'criterion':<16} {'value ms':>9} {'value+grad ms':>14} {'slider ms':>10} {'value':>12} {'excluded':>8}")
    near = kernel.with_theta(kernel.theta + np.log(1.02) * (np.arange(kernel.theta.size) == 0))
    for name in CRITERIA:
        crit = cold(name, y.size)
        out = crit(kernel, X, y, noise_var)
        t_value, _ = best_of(lambda: cold(name, y.size)(kernel, X, y, noise_var), args.repeats)
        t_grad, _ = best_of(lambda: cold(name, y.size)(kernel, X, y, noise_var, True), args.repeats)
        positions = iter([near, kernel] * args.repeats)
        t_slider, _ = best_of(lambda: crit(next(positions), X, y, noise_var), args.repeats)
        print(f"{name:<16} {t_value * 1e3:9.1f} {t_grad * 1e3:14.1f} {t_slider * 1e3:10.1f} {out.value:12.5g} "
              f"{out.n_excluded:8d}")


if __name__ == "__main__":
    main()
