"""Benchmark: fast bootstrap vs full bootstrap on the toy example of [LSWV05] (Table 1), and the replica optimism.

For each model (ls-svm, rbfn, mlp) and each seed (a new draw of the eq. 19 data and new resamples) it prints:
- the complexity selected by the full bootstrap (Table 1 grid, 100 replications) and by the fast bootstrap
  (reduced grid, 10 replications), and their distance in steps of the reduced grid (the issue's target:
  the same or an adjacent complexity, i.e. ≤ 1 step);
- what choosing the fast bootstrap's complexity costs on the full bootstrap's own curve:
  Ê_full(q_fast) − Ê_full(q_full), in units of the full bootstrap's standard error of the optimism;
- the F statistic of eq. (11) next to the paper's (Table 1), and the decision at 5%;
- the models trained by each (with and without the apparent-error models of eq. 7) and the gain
  (target ≥ 90%; the paper: 96-99.8%), and the wall-time ratio full/fast measured in this run;
- for the LS-SVM, the replica theory's optimism (no refits) against the full bootstrap's: the largest
  difference over γ in units of the full bootstrap's standard error, and its time in units of the full bootstrap.

With --laser (needs ../shared/datasets/santafe_laser_A.csv beside the checkout) it also runs the fast bootstrap
of Table 2 on the NAR(6) embedding of the Santa Fe laser series (standardised) and prints the F statistics next
to the paper's.

Run: .venv/bin/python benchmarks/bench_fastboot.py [--seeds 10] [--mlp-seeds 3] [--models ls-svm,rbfn,mlp] [--laser]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from explorer import datasets
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.problem import MODELS
from explorer.runtime.engine import use_single_threaded_blas

PAPER_F = {"mlp": "F(1,2) = 3.2545", "rbfn": "F(1,1) = 16.3085", "ls-svm": "F(1,7) = 0*"}
PAPER_F_LASER = {"mlp": "F(1,3) = 0.2002", "rbfn": "F(1,2) = 1.6472", "ls-svm": "F(1,16) = 0*"}
LASER = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "santafe_laser_A.csv"


def one_run(model: str, seed: int) -> dict:
    res = fe.compare_bootstraps(datasets.toy_function(rng=seed), model, rng=seed, with_replica=model == "ls-svm")
    full, fast = res.full, res.fast
    step = res.setting.fast_grid[2]
    i_full, i_fast = (int(np.argmin(c.generalization_error)) for c in (full, fast))
    se = float(np.median(full.optimism_se))
    row = {"seed": seed, "full": full.selected, "fast": fast.selected,
           "steps": abs(full.selected - fast.selected) / step,
           "cost_se": (full.generalization_error[i_fast] - full.generalization_error[i_full]) / se,
           "F": fast.f_test.F, "p": fast.f_test.p_value, "degree": fast.degree,
           "models": (full.models_trained, fast.models_trained), "gain": res.gain, "paper_gain": res.paper_gain,
           "time_ratio": res.seconds["full"] / res.seconds["fast"]}
    if res.replica is not None:
        on_grid = np.interp(res.replica.grid, full.grid, full.optimism)
        se_grid = np.interp(res.replica.grid, full.grid, full.optimism_se)
        row["replica_se"] = float(np.max(np.abs(res.replica.optimism - on_grid) / se_grid))
        row["replica_time"] = res.seconds["replica"] / res.seconds["full"]
    return row


def report(model: str, rows: list[dict]) -> None:
    print(f"\n== {model} (Table 1 settings; paper: {PAPER_F[model]})")
    for r in rows:
        extra = (f"  replica: max |Δoptimism| = {r['replica_se']:.2f} SE, time {r['replica_time']:.2f}× full"
                 if "replica_se" in r else "")
        print(f"seed {r['seed']:2d}: full {r['full']:g}, fast {r['fast']:g} ({r['steps']:.2f} reduced steps, costs "
              f"{r['cost_se']:.2f} SE); F = {r['F']:.4g}, p = {r['p']:.3g}, degree {r['degree']}; models "
              f"{r['models'][0]}/{r['models'][1]}, gain {r['gain']:.1%} (paper's count {r['paper_gain']:.1%}); "
              f"time full/fast {r['time_ratio']:.0f}×{extra}")
    close = np.mean([r["steps"] <= 1 + 1e-9 for r in rows])
    print(f"-> same or adjacent (≤ 1 reduced step) in {close:.0%} of {len(rows)} seeds; median cost "
          f"{np.median([r['cost_se'] for r in rows]):.2f} SE; F accepted linear in "
          f"{np.mean([r['p'] >= 0.05 for r in rows]):.0%}; gain {rows[0]['gain']:.1%}")


def laser(models: list[str], seed: int = 0) -> None:
    data = datasets.load_series_csv(LASER, "value", lags=6)
    print(f"\n== Santa Fe laser A, NAR(6), {data.n} examples, standardised (Table 2 settings, fast bootstrap only)")
    for model in models:
        res = fe.compare_bootstraps(data, model, rng=seed, with_full=False, with_replica=False)
        f = res.fast.f_test
        print(f"{model}: selected {res.fast.selected:g}; F({f.df_num},{f.df_den}) = {f.F:.4g}, p = {f.p_value:.3g}, "
              f"degree {res.fast.degree} (paper: {PAPER_F_LASER[model]}); {res.fast.models_trained} models, "
              f"{res.seconds['fast'] + res.seconds['apparent']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds for ls-svm and rbfn (default 10)")
    parser.add_argument("--mlp-seeds", type=int, default=3, help="seeds for the mlp (≈ 2.5 min each; default 3)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated models")
    parser.add_argument("--laser", action="store_true", help="also the Santa Fe laser (Table 2)")
    parser.add_argument("--laser-only", action="store_true", help="only the Santa Fe laser")
    args = parser.parse_args()
    use_single_threaded_blas()
    if args.laser or args.laser_only:
        laser(args.models.split(","))
    for model in [] if args.laser_only else args.models.split(","):
        n = args.mlp_seeds if model == "mlp" else args.seeds
        report(model, [one_run(model, seed) for seed in range(n)])


if __name__ == "__main__":
    main()
