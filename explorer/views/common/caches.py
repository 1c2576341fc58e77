"""The result caches shared by all sessions of a server, registered by name so that one call empties them all.

A view module makes its caches with :func:`lru` (``_SOLUTIONS = lru("gp_bootstrap.solutions", 128)``);
:func:`clear_caches` empties every registered cache (tests, benchmarks, the app). Names are
``<views subpackage>.<what the cache holds>`` and unique.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

import numpy as np

__all__ = ["LRU", "CacheRegistry", "registry", "lru", "clear_caches"]


class LRU:
    """A small thread-safe least-recently-used cache shared by all sessions.

    At most ``maxsize`` entries and, if ``weigh`` is given, at most ``max_weight`` in total (the newest
    entry is always kept).
    """

    def __init__(self, maxsize: int, weigh: Callable[[object], float] | None = None, max_weight: float = np.inf):
        self.maxsize, self.weigh, self.max_weight = maxsize, weigh, max_weight
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > 1 and (len(self._data) > self.maxsize or self._weight() > self.max_weight):
                self._data.popitem(last=False)

    def _weight(self) -> float:
        return sum(map(self.weigh, self._data.values())) if self.weigh else 0.0

    def get_or_compute(self, key, compute: Callable[[], object]):
        value = self.get(key)
        if value is None:
            value = compute()  # outside the lock: other sessions go on meanwhile
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


class CacheRegistry:
    """The named result caches of the views; :meth:`clear` empties all of them."""

    def __init__(self):
        self._caches: dict[str, LRU] = {}
        self._lock = threading.Lock()

    def lru(self, name: str, maxsize: int, *, weigh: Callable[[object], float] | None = None,
            max_weight: float = np.inf) -> LRU:
        """A new :class:`LRU` registered under ``name`` (unique; ValueError if it is taken)."""
        with self._lock:
            if name in self._caches:
                raise ValueError(f"A result cache named {name!r} is already registered; give each cache its own "
                                 "name, '<views subpackage>.<what it holds>'.")
            cache = self._caches[name] = LRU(maxsize, weigh=weigh, max_weight=max_weight)
        return cache

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        with self._lock:
            return tuple(self._caches)

    def __getitem__(self, name: str) -> LRU:
        return self._caches[name]

    def clear(self) -> None:
        """Empty every registered cache."""
        with self._lock:
            caches = list(self._caches.values())
        for cache in caches:
            cache.clear()


#: The caches of the explorer's views (one per server process).
registry = CacheRegistry()
lru = registry.lru


def clear_caches() -> None:
    """Empty every result cache shared by the sessions (for tests, benchmarks and the app)."""
    registry.clear()
