"""The registry of the result caches shared by the sessions: every cache of the views is registered by name, and
one call empties them all."""

import importlib
import pkgutil

import pytest

pytest.importorskip("panel")

import explorer.views  # noqa: E402
from explorer.views.common import caches  # noqa: E402


def _view_modules():
    for info in pkgutil.walk_packages(explorer.views.__path__, "explorer.views."):
        yield importlib.import_module(info.name)


def test_every_cache_of_the_views_is_registered():
    found = {f"{module.__name__}.{name}": value for module in _view_modules()
             for name, value in vars(module).items() if isinstance(value, caches.LRU)}
    registered = {id(caches.registry[name]) for name in caches.registry.names()}
    assert len(found) >= 20  # gp_bootstrap 8, svm_bootstrap 4, model_selection 6, fast_bootstrap 4
    unregistered = [name for name, cache in found.items() if id(cache) not in registered]
    assert unregistered == [], f"caches made without the registry: {unregistered}"
    prefixes = {name.split(".")[0] for name in caches.registry.names()}
    assert {"gp_bootstrap", "svm_bootstrap", "model_selection", "fast_bootstrap"} <= prefixes


def test_clear_caches_empties_every_registered_cache():
    list(_view_modules())  # every view module has registered its caches
    names = caches.registry.names()
    for i, name in enumerate(names):
        cache = caches.registry[name]
        with cache._lock:  # a stand-in entry: a real result of each cache would take a computation to make
            cache._data[("test", i)] = object()
    assert all(len(caches.registry[name]) >= 1 for name in names)
    explorer.views.clear_caches()
    assert [name for name in names if len(caches.registry[name])] == []


def test_a_name_is_registered_once():
    registry = caches.CacheRegistry()
    first = registry.lru("demo.results", 4)
    assert registry["demo.results"] is first and registry.names() == ("demo.results",)
    with pytest.raises(ValueError, match="'demo.results' is already registered"):
        registry.lru("demo.results", 8)
    first.put("key", 1)
    registry.clear()
    assert first.get("key") is None
