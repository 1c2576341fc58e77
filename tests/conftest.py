import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator, so every test is reproducible."""
    return np.random.default_rng(20261121)


@pytest.fixture(scope="module")
def one_blas_thread():
    """Single-threaded BLAS for a test module: on a busy machine the many small BLAS calls of the solvers
    otherwise wait for descheduled OpenBLAS worker threads (5x slower). Results do not depend on it."""
    if threading.active_count() > 1:  # never change OpenBLAS's pool while another thread may be inside it
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield


def assert_documented_controls(cls) -> None:
    """Every control of a param state class has a doc and a label; numbers have bounds; choices exist."""
    import param

    for name, p in cls.param.objects().items():
        if name == "name":
            continue
        assert p.doc and p.label, name
        if isinstance(p, param.Number) and p.precedence is None:
            assert p.bounds is not None and None not in p.bounds, name
        if isinstance(p, (param.Selector, param.ListSelector)) and p.precedence is None and name != "target":
            assert p.objects, name
