"""Timing shared by the benchmark scripts (run from the repository root: ``python benchmarks/NAME.py``)."""
from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

from explorer.runtime.engine import use_single_threaded_blas


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best-of-``repeats`` wall time of ``fn()`` in seconds (timeit's rule) and the result of its last call."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def timing_parser(doc: str, repeats: int) -> argparse.ArgumentParser:
    """The command line of a benchmark described by the first line of ``doc``, with ``--repeats`` (best of, default
    ``repeats``); the benchmark adds its own options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=repeats, help=f"timing repeats (best of, default {repeats})")
    return parser


def parse_with_blas_threads(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``parser``'s arguments and ``--blas-threads``: one BLAS thread (the explorer command's policy, the default),
    set here before any timing, or the library's default."""
    parser.add_argument("--blas-threads", choices=["one", "default"], default="one",
                        help="one BLAS thread (the explorer command's policy, default) or the library default")
    args = parser.parse_args()
    if args.blas_threads == "one":
        use_single_threaded_blas()
    return args
