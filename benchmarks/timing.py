"""Timing shared by the benchmark scripts (run from the repository root: ``python benchmarks/NAME.py``)."""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best-of-``repeats`` wall time of ``fn()`` in seconds (timeit's rule) and the result of its last call."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
