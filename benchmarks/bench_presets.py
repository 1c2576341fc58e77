"""Benchmark: how long the jobs of each "Reproduce a figure" preset take (explorer.views.common.state.presets), cold and
after the server's warm-up.

For each preset: empty result caches, fresh page states on the process's shared Dask engine (a local cluster, one
worker per core), apply the preset, refresh the states it sets and wait for their jobs
(:func:`explorer.app.warmup.compute_preset`). Prints the seconds against the preset's stated estimate
(``seconds``: what this printed on the 2-core development machine, shared with other work) and the paper's
numbers beside ours.

``--warm`` then does what ``explorer serve`` does at start: empty caches, the warm-up of every default view and
every preset (:class:`explorer.app.warmup.WarmUp`), timed; then each preset again on fresh states, as a class
opening it on the warmed server would, against its estimate.

Run: .venv/bin/python benchmarks/bench_presets.py [KEY ...] [--warm [--skip-cold]] [--data-dir ../shared/datasets]
"""

from __future__ import annotations

import argparse
import os
import time

from explorer.app.warmup import WarmUp, compute_preset, page_states
from explorer.runtime.caches import clear_caches
from explorer.runtime.engine import shared_engine, use_single_threaded_blas
from explorer.views.common.layout.page import PageContext
from explorer.views.common.state.presets import comparison_frame
from explorer.views.pages import PRESETS, preset


def time_preset(key: str, context: PageContext) -> tuple[float, dict]:
    """Seconds of preset ``key``'s jobs on fresh states (with the caches as they are), its errors and numbers."""
    _, states = page_states(context)
    p = preset(key)
    start = time.perf_counter()
    compute_preset(p, states)
    seconds = time.perf_counter() - start
    errors = {prefix: states[prefix].error for prefix in p.settings if states[prefix].error}
    frame = comparison_frame(p, states)
    for state in states.values():
        state.close()
    return seconds, {"errors": errors, "numbers": frame}


def against(seconds: float, key: str) -> str:
    estimate = preset(key).seconds
    return f"{seconds:.1f} s" + ("" if estimate is None else f" (estimate {estimate:.0f} s: {seconds / estimate:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", help="preset keys (default: all)")
    parser.add_argument("--warm", action="store_true", help="also time the warm-up and each preset after it")
    parser.add_argument("--skip-cold", action="store_true", help="with --warm: only the warm-up and after it")
    parser.add_argument("--data-dir", "--series-dir", default=None,
                        help="the server's --data-dir (the Santa Fe presets need santafe_laser_A.csv there)")
    args = parser.parse_args()
    use_single_threaded_blas()
    shared_engine()  # start the cluster before timing
    context = PageContext(data_dir=args.data_dir)
    keys = args.keys or [p.key for p in PRESETS]
    print(f"# cold: empty caches before each preset; load average {os.getloadavg()[0]:.1f}", flush=True)
    for key in [] if args.skip_cold else keys:
        clear_caches()
        seconds, out = time_preset(key, context)
        print(f"{key}: {against(seconds, key)} {out['errors'] or ''}", flush=True)
        if len(out["numbers"]):
            print(out["numbers"].to_string(index=False), flush=True)
    if args.warm:
        clear_caches()
        warm = WarmUp(context, presets=tuple(preset(key) for key in keys))
        start = time.perf_counter()
        warm.run()
        print(f"\n# the warm-up of a fresh server: {time.perf_counter() - start:.0f} s for the default views and "
              f"{len(keys)} presets", flush=True)
        print("# after the warm-up: each preset as a class opens it", flush=True)
        for key in keys:
            seconds, out = time_preset(key, context)
            print(f"{key}: {against(seconds, key)} {out['errors'] or ''}", flush=True)
        print(f"load average at the end {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
