"""The registry of the result caches shared by the sessions: every cache of the views is registered by name, and
one call empties them all."""

import dataclasses
import importlib
import pkgutil

import numpy as np
import pytest

pytest.importorskip("panel")

import explorer.views  # noqa: E402
from explorer.runtime import caches  # noqa: E402


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


# ------------------------------------------------------------------ the byte budget


def _mb(n: float) -> np.ndarray:
    """An array of ``n`` MB (10**6 bytes)."""
    return np.zeros(int(n * 1e6) // 8)


def test_caches_over_the_budget_drop_the_least_recently_used_result_of_any_cache():
    registry = caches.CacheRegistry(max_bytes=3e6)
    curves, fields = registry.lru("demo.curves", 100), registry.lru("demo.fields", 100)
    curves.put("a", _mb(1))
    fields.put("b", _mb(1))
    curves.put("c", _mb(1))
    assert registry.nbytes == 3_000_000
    assert curves.get("a") is not None  # "a" is now the most recently used: "b" is the oldest
    fields.put("d", _mb(1))
    assert fields.get("b") is None and curves.get("a") is not None and curves.get("c") is not None
    assert fields.get("d") is not None and registry.nbytes == 3_000_000
    fields.put("e", _mb(2.5))  # needs all but itself out
    assert [len(curves), len(fields)] == [0, 1] and registry.nbytes == 2_500_000
    fields.put("e", _mb(0.5))  # a result replaced counts with its new size
    assert registry.nbytes == 500_000


def test_a_result_larger_than_the_budget_is_kept_until_the_next_one():
    registry = caches.CacheRegistry(max_bytes=1e6)
    cache = registry.lru("demo.large", 10)
    cache.put("small", _mb(0.5))
    cache.put("large", _mb(2))  # the newest: shown to the session that asked, and from the cache to the next one
    assert cache.get("large") is not None and cache.get("small") is None
    cache.put("next", _mb(0.5))
    assert cache.get("large") is None and registry.nbytes == 500_000


def test_clear_and_the_entry_limits_give_back_their_bytes():
    registry = caches.CacheRegistry(max_bytes=1e9)
    cache = registry.lru("demo.few", 2)
    for key in "abc":
        cache.put(key, _mb(1))
    assert len(cache) == 2 and registry.nbytes == 2_000_000  # maxsize dropped "a" and its bytes
    registry.clear()
    assert registry.nbytes == 0


def test_nbytes_counts_the_arrays_nested_in_a_result_once_each():
    a, b = np.ones((10, 10)), np.arange(7.0)

    @dataclasses.dataclass(frozen=True)
    class Result:
        curve: np.ndarray
        parts: tuple
        extra: dict
        label: str = "curve"

    result = Result(a, (b, b[::2], 3.0, None), {"b": b, "nested": [np.zeros(3, np.int32)]})
    assert caches.nbytes(result) == a.nbytes + b.nbytes + 12  # b, its view and its second mention count once
    assert caches.nbytes([b[1:], b[2:]]) == b.nbytes  # views keep their whole base alive
    assert caches.nbytes({"x": 1, "y": "text"}) == 0


def test_nbytes_of_a_real_result_is_the_sum_of_its_arrays(empty_view_caches):
    """The data set, the regression problem and the replica solution the GP tabs cache for the toy data set (no
    Monte-Carlo)."""
    from explorer.views.gp_bootstrap.state import GPBootstrapState

    state = GPBootstrapState(dataset="toy", auto_mc=False)
    state.defer_jobs()  # the synchronous replica solve only
    state.refresh()
    [problem] = caches.registry["gp_bootstrap.problems"]._data.values()
    [solution] = caches.registry["gp_bootstrap.solutions"]._data.values()
    lengthscale = problem.kernel._values["lengthscale"]  # an array inside the kernel (a plain object) in the dataclass
    assert caches.nbytes(problem) == sum(x.nbytes for x in [problem.X, problem.y, problem.K, lengthscale])
    assert problem.K.nbytes == 200**2 * 8
    arrays = [getattr(solution, f.name) for f in dataclasses.fields(solution)]
    assert caches.nbytes(solution) == sum(x.nbytes for x in arrays if isinstance(x, np.ndarray)) > 0
    [data] = caches.registry["gp_bootstrap.data"]._data.values()  # the data set, read once per data key
    assert caches.nbytes(data) >= data.inputs.nbytes + data.targets.nbytes > 0
    assert caches.registry.nbytes == caches.nbytes(problem) + caches.nbytes(solution) + caches.nbytes(data)
    state.close()


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(caches.BUDGET_ENV, raising=False)
    assert caches.budget_from_env() == caches.DEFAULT_BUDGET_MB * 1e6 == caches.registry.budget.max_bytes
    monkeypatch.setenv(caches.BUDGET_ENV, "64")
    assert caches.budget_from_env() == 64e6
    for bad in ("-1", "0", "lots", "nan"):
        monkeypatch.setenv(caches.BUDGET_ENV, bad)
        with pytest.raises(ValueError, match=r"\$EXPLORER_CACHE_MB must be a positive number of megabytes, got"):
            caches.budget_from_env()


def test_describe_says_the_megabytes_results_and_budget():
    registry = caches.CacheRegistry(max_bytes=3e6)
    curves, fields = registry.lru("demo.curves", 100), registry.lru("demo.fields", 100)
    assert registry.describe() == "the result caches hold 0.0 MB in 0 results (budget 3 MB)"
    curves.put("a", _mb(1))
    fields.put("b", _mb(0.5))
    assert registry.describe() == "the result caches hold 1.5 MB in 2 results (budget 3 MB)"


def test_when_idle_the_results_not_kept_are_dropped():
    """The warm-up's results are kept (``keep_all``); a class's added later go when no page is open."""
    registry = caches.CacheRegistry(max_bytes=10e6)
    curves, fields = registry.lru("demo.curves", 100), registry.lru("demo.fields", 100)
    curves.put("warm", _mb(1))
    registry.keep_all()
    curves.put("class", _mb(2))
    fields.put("class", _mb(0.5))
    assert registry.drop_unkept() == 2_500_000
    assert curves.get("warm") is not None and curves.get("class") is None and fields.get("class") is None
    assert registry.nbytes == 1_000_000 and registry.drop_unkept() == 0
    curves.clear()  # a kept result that is dropped is forgotten: the same key put again is not kept
    curves.put("warm", _mb(1))
    assert registry.drop_unkept() == 1_000_000 and registry.nbytes == 0
