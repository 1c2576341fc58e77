"""Benchmark: how long the jobs of each "Reproduce a figure" preset take (explorer.views.common.presets).

For each preset: empty result caches, fresh states on the process's shared Dask engine (a local cluster, one
worker per core), apply the preset, refresh the states it sets and wait for their jobs. Prints the seconds and
the paper's numbers beside ours. The ``seconds`` stored in each preset are what this printed on the 2-core
development machine (shared with other work, so they are upper-ish estimates).

Run: .venv/bin/python benchmarks/bench_presets.py [KEY ...] [--series-dir ../shared/datasets]
"""

from __future__ import annotations

import argparse
import os
import time

from explorer.engine import shared_engine, use_single_threaded_blas
from explorer.views import GPBootstrapState
from explorer.views.common.caches import clear_caches
from explorer.views.common.presets import apply_preset, comparison_frame
from explorer.views.fast_bootstrap import FastBootstrapState
from explorer.views.model_selection import SelectionState
from explorer.views.model_selection.experiments import SelectionExperimentState
from explorer.views.pages import PRESETS, preset
from explorer.views.svm_bootstrap import SVMState


def fresh_states() -> dict:
    return {"": GPBootstrapState(), "svm_": SVMState(), "sel_": SelectionState(auto_run=False),
            "selx_": SelectionExperimentState(), "fb_": FastBootstrapState()}


def time_preset(key: str) -> tuple[float, dict]:
    clear_caches()
    states = fresh_states()
    p = preset(key)
    start = time.perf_counter()
    apply_preset(p, states)
    for prefix in p.settings:
        if prefix != "sel_":
            states[prefix].refresh()
    for prefix in p.settings:
        states[prefix].wait(timeout=600)
    seconds = time.perf_counter() - start
    errors = {prefix: states[prefix].error for prefix in p.settings if states[prefix].error}
    frame = comparison_frame(p, states)
    for state in states.values():
        state.close()
    return seconds, {"errors": errors, "numbers": frame}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", help="preset keys (default: all)")
    parser.add_argument("--series-dir", default=None, help="run in this folder (where santafe_laser_A.csv is)")
    args = parser.parse_args()
    use_single_threaded_blas()
    shared_engine()  # start the cluster before timing
    if args.series_dir:
        os.chdir(args.series_dir)
    for key in args.keys or [p.key for p in PRESETS]:
        seconds, out = time_preset(key)
        print(f"{key}: {seconds:.1f} s {out['errors'] or ''}", flush=True)
        if len(out["numbers"]):
            print(out["numbers"].to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
