"""What the server's allocator costs: ``explorer serve`` runs on ``PYTHONMALLOC=malloc``
(:data:`explorer.engine.SYSTEM_ALLOCATOR_ENV`, so that a class's memory comes back after it), against CPython's own
small-object allocator (``pymalloc``).

    python benchmarks/bench_allocator.py              # 2 runs of each, alternating (about 4 minutes)
    python benchmarks/bench_allocator.py --runs 3

Each run is a fresh process under one allocator that does, in-process (one BLAS thread, no Dask), what the server
does for a class:

- *defaults*: compute every page's default view (the theory and the Monte-Carlo of one session's pages, from
  empty caches: mostly numpy);
- *draw*: draw every tab of one page into a document of its own, twice (the widgets and figures become Bokeh
  models: mostly Python objects; the second draw is a server's steady state);
- *kept*: the resident memory after the draws, once the page is gone and the freed memory is given back
  (:func:`explorer.engine.return_freed_memory`), against the memory before the first draw.

It prints each run, then the medians and the ratio malloc / pymalloc of each time (above 1: malloc is slower).
The memory that matters after a class is measured by ``bench_soak.py --allocator``; this one measures the price.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from explorer.engine import SYSTEM_ALLOCATOR_ENV

RUN = """
import json, time
import psutil
from explorer.app import create_app
from explorer.engine import return_freed_memory, use_single_threaded_blas
from explorer.views.common.page import PageContext
from explorer.views.warmup import draw_every_tab, page_states, wait_all

use_single_threaded_blas()
process = psutil.Process()
start = time.perf_counter()
views, states = page_states(PageContext())
for view in views:
    view.ensure_started()
assert wait_all(states.values(), 900), "the default views did not finish in 15 minutes"
defaults = time.perf_counter() - start
for state in states.values():
    state.close()
return_freed_memory()
before = process.memory_info().rss
draws = []
for _ in range(2):
    start = time.perf_counter()
    assert draw_every_tab(create_app, timeout=300)
    draws.append(time.perf_counter() - start)
    return_freed_memory()
print(json.dumps({"defaults": defaults, "draw 1": draws[0], "draw 2": draws[1],
                  "kept MB": (process.memory_info().rss - before) / 1e6}))
"""

TIMES = ("defaults", "draw 1", "draw 2")


def run(allocator: str) -> dict[str, float]:
    """One fresh process under ``allocator`` (``$PYTHONMALLOC``): its seconds and kept memory."""
    env = {**os.environ, "PYTHONMALLOC": allocator, "OPENBLAS_NUM_THREADS": "1", "EXPLORER_LOG_LEVEL": "error"}
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode:
        raise SystemExit(f"the {allocator} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="runs of each allocator, alternating (default 2)")
    args = parser.parse_args(argv)
    served = SYSTEM_ALLOCATOR_ENV["PYTHONMALLOC"]
    results: dict[str, list[dict[str, float]]] = {"pymalloc": [], served: []}
    for i in range(args.runs):
        for allocator in (("pymalloc", served) if i % 2 == 0 else (served, "pymalloc")):
            results[allocator].append(run(allocator))
            print(f"run {i + 1}, {allocator:8s}: " + ", ".join(f"{k} {v:.1f} s" for k, v in results[allocator][-1].items()
                                                           if k in TIMES)
                  + f", kept {results[allocator][-1]['kept MB']:+.0f} MB", flush=True)
    median = {a: {k: statistics.median(r[k] for r in runs) for k in (*TIMES, "kept MB")} for a, runs in results.items()}
    for key in TIMES:
        print(f"{key}: pymalloc {median['pymalloc'][key]:.1f} s, {served} {median[served][key]:.1f} s, ratio "
              f"{served} / pymalloc = {median[served][key] / median['pymalloc'][key]:.2f}")
    print(f"kept after the draws: pymalloc {median['pymalloc']['kept MB']:+.0f} MB, {served} "
          f"{median[served]['kept MB']:+.0f} MB (medians of {args.runs} runs)")


if __name__ == "__main__":
    main()
