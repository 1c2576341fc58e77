"""The result caches shared by all sessions of a server, registered by name so that one call empties them all, and
held together to a byte budget.

A view module makes its caches with :func:`lru` (``_SOLUTIONS = lru("gp_bootstrap.solutions", 128)``);
:func:`clear_caches` empties every registered cache (tests, benchmarks, the app). Names are
``<views subpackage>.<what the cache holds>`` and unique.

Every cache of the registry also counts the bytes of its results (:func:`nbytes`: the numpy arrays inside them), and
all of them together keep at most :data:`DEFAULT_BUDGET_MB` MB (``$EXPLORER_CACHE_MB`` to change it): when a new
result would go over, the least recently used results of any cache are dropped. A server handed to a class then
holds a bounded amount of results, however many settings its students try; a dropped result is computed again
when asked for. Once no page is open, a served app drops what its sessions added and keeps what its warm-up computed
(:meth:`CacheRegistry.keep_all` after each warm-up item, :meth:`CacheRegistry.drop_unkept`;
:func:`explorer.serving.server.release_when_idle`): after a class the server comes back to its warm level.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

import numpy as np

__all__ = ["LRU", "ByteBudget", "CacheRegistry", "registry", "lru", "clear_caches", "nbytes", "budget_from_env",
           "BUDGET_ENV", "DEFAULT_BUDGET_MB"]

#: The environment variable that sets the byte budget of the registry's caches, in MB (e.g. ``EXPLORER_CACHE_MB=512``).
BUDGET_ENV = "EXPLORER_CACHE_MB"
#: The default budget of all result caches together, MB (10**6 bytes). The largest results are the Monte-Carlo
#: samples of a predictive distribution (8 MB at 10**6 samples) and the SVM's fields: 256 MB keep dozens of them and
#: every curve of a class's session, on a server whose sessions alone take a few hundred MB.
DEFAULT_BUDGET_MB = 256

#: Objects :func:`nbytes` does not look into (code and classes hold no results).
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, str, bytes)


def nbytes(obj: object) -> int:
    """The bytes of the numpy arrays inside ``obj``, a result of the views (frozen dataclasses, tuples, lists, dicts
    and plain objects nested in any way; pandas objects by their ``memory_usage``).

    Each array's memory counts once: an array met twice, or a view (``a[::2]``), counts the array that owns the
    buffer, which the view keeps alive. Python numbers and strings count nothing (they are small next to the arrays).
    """
    seen: set[int] = set()
    stack, total = [obj], 0
    while stack:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, (_OPAQUE, int, float, complex, bool)):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += _array_bytes(item, seen)
            if item.dtype == object:
                stack.extend(item.ravel().tolist())
        elif type(item).__module__.split(".")[0] == "pandas" and callable(getattr(item, "memory_usage", None)):
            total += int(np.sum(item.memory_usage(deep=True)))
        else:
            stack.extend(_children(item))
    return total


def _array_bytes(array: np.ndarray, seen: set[int]) -> int:
    """The bytes of the array that owns ``array``'s buffer, unless it was counted already."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner is not array:
        if id(owner) in seen:
            return 0
        seen.add(id(owner))
    return owner.nbytes


def _children(obj: object) -> list:
    """What ``obj`` holds: a dataclass's fields, a container's items, a plain object's attributes."""
    if dataclasses.is_dataclass(obj):
        return [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
    if isinstance(obj, Mapping):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (tuple, list, set, frozenset)):
        return list(obj)
    return list(getattr(obj, "__dict__", {}).values())


def budget_from_env() -> float:
    """The byte budget ``$EXPLORER_CACHE_MB`` asks for (default :data:`DEFAULT_BUDGET_MB` MB)."""
    text = os.environ.get(BUDGET_ENV, "").strip()
    try:
        mb = float(text) if text else DEFAULT_BUDGET_MB
    except ValueError:
        mb = -1.0
    if not mb > 0:  # also NaN
        raise ValueError(f"${BUDGET_ENV} must be a positive number of megabytes, got {text!r}. It is the memory the "
                         f"result caches may hold; unset it for the default {DEFAULT_BUDGET_MB}.")
    return mb * 1e6


class ByteBudget:
    """The bytes of the results of one or more caches, oldest use first: at most ``max_bytes`` together.

    The caches that share a budget share its lock (:attr:`lock`), so that an entry dropped for the budget is
    dropped from its cache at once.
    """

    def __init__(self, max_bytes: float = np.inf):
        self.max_bytes = float(max_bytes)
        self.lock = threading.RLock()
        self._entries: OrderedDict[tuple[int, Hashable], tuple[LRU, int]] = OrderedDict()
        self._kept: set[tuple[int, Hashable]] = set()  # entries that stay when the server is idle
        self._used = 0

    def __len__(self) -> int:
        return len(self._entries)

    def keep_all(self) -> None:
        """Mark every result held now as one to keep when the server is idle (:meth:`drop_unkept`)."""
        with self.lock:
            self._kept.update(self._entries)

    def drop_unkept(self) -> int:
        """Drop every result not marked by :meth:`keep_all`; return the bytes dropped."""
        with self.lock:
            before = self._used
            for key in [k for k in self._entries if k not in self._kept]:
                cache, _ = self._entries[key]
                cache._drop(key[1])
            return before - self._used

    @property
    def used(self) -> int:
        """The bytes of the results held now."""
        return self._used

    def add(self, cache: LRU, key: Hashable, size: int) -> None:
        self.remove(cache, key)
        self._entries[id(cache), key] = (cache, size)
        self._used += size

    def touch(self, cache: LRU, key: Hashable) -> None:
        if (id(cache), key) in self._entries:
            self._entries.move_to_end((id(cache), key))

    def remove(self, cache: LRU, key: Hashable) -> None:
        entry = self._entries.pop((id(cache), key), None)
        self._kept.discard((id(cache), key))
        if entry is not None:
            self._used -= entry[1]

    def evict_over(self, keep: tuple[LRU, Hashable]) -> None:
        """Drop the least recently used entries until the budget holds, but never ``keep`` (the newest)."""
        keep_id = (id(keep[0]), keep[1])
        while self._used > self.max_bytes:
            oldest = next((k for k in self._entries if k != keep_id), None)
            if oldest is None:
                return  # the newest result alone is over the budget: it stays, until the next one comes
            cache, _ = self._entries[oldest]
            cache._drop(oldest[1])


class LRU:
    """A small thread-safe least-recently-used cache shared by all sessions.

    At most ``maxsize`` entries and, if ``weigh`` is given, at most ``max_weight`` in total (the newest entry is
    always kept). Its entries also count toward ``budget`` (their :func:`nbytes`), which they may share with other
    caches (the :data:`registry`'s); without one, the cache has a budget of its own of ``max_bytes``.
    """

    def __init__(self, maxsize: int, weigh: Callable[[object], float] | None = None, max_weight: float = np.inf,
                 *, budget: ByteBudget | None = None, max_bytes: float = np.inf):
        self.maxsize, self.weigh, self.max_weight = maxsize, weigh, max_weight
        self.budget = budget if budget is not None else ByteBudget(max_bytes)
        self._data: OrderedDict = OrderedDict()
        self._lock = self.budget.lock

    def get(self, key):
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            self.budget.touch(self, key)
            return self._data[key]

    def put(self, key, value) -> None:
        size = nbytes(value)  # outside the lock: other sessions go on meanwhile
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            self.budget.add(self, key, size)
            while len(self._data) > 1 and (len(self._data) > self.maxsize or self._weight() > self.max_weight):
                self._drop(next(iter(self._data)))
            self.budget.evict_over(keep=(self, key))

    def _drop(self, key) -> None:
        """Remove ``key`` (with the lock held)."""
        self._data.pop(key, None)
        self.budget.remove(self, key)

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
            for key in list(self._data):
                self._drop(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


class CacheRegistry:
    """The named result caches of the views, holding at most ``max_bytes`` of results together (least recently
    used out); :meth:`clear` empties all of them."""

    def __init__(self, max_bytes: float = np.inf):
        self.budget = ByteBudget(max_bytes)
        self._caches: dict[str, LRU] = {}

    def lru(self, name: str, maxsize: int, *, weigh: Callable[[object], float] | None = None,
            max_weight: float = np.inf) -> LRU:
        """A new :class:`LRU` registered under ``name`` (unique; ValueError if it is taken), within the budget."""
        with self.budget.lock:
            if name in self._caches:
                raise ValueError(f"A result cache named {name!r} is already registered; give each cache its own "
                                 "name, '<views subpackage>.<what it holds>'.")
            cache = self._caches[name] = LRU(maxsize, weigh=weigh, max_weight=max_weight, budget=self.budget)
        return cache

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        with self.budget.lock:
            return tuple(self._caches)

    def __getitem__(self, name: str) -> LRU:
        return self._caches[name]

    @property
    def nbytes(self) -> int:
        """The bytes of the results the caches hold now."""
        return self.budget.used

    def describe(self) -> str:
        """What the caches hold, in words (for the server's log): MB, results and the budget."""
        with self.budget.lock:
            count = len(self.budget)
        return (f"the result caches hold {self.budget.used / 1e6:.1f} MB in {count} results "
                f"(budget {self.budget.max_bytes / 1e6:g} MB)")

    def keep_all(self) -> None:
        """Keep the results held now when the server is idle (the server's warm-up: defaults and presets)."""
        self.budget.keep_all()

    def drop_unkept(self) -> int:
        """Drop the results not kept by :meth:`keep_all` (a class's own results, once no page is open); return the
        bytes dropped."""
        return self.budget.drop_unkept()

    def clear(self) -> None:
        """Empty every registered cache."""
        with self.budget.lock:
            for cache in self._caches.values():
                cache.clear()


#: The caches of the explorer's views (one per server process), within ``$EXPLORER_CACHE_MB`` (default 256 MB).
registry = CacheRegistry(budget_from_env())
lru = registry.lru


def clear_caches() -> None:
    """Empty every result cache shared by the sessions (for tests, benchmarks and the app)."""
    registry.clear()
