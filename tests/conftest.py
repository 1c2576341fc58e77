import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

# The servers the tests start (``explorer serve``) skip the warm-up that computes every view and preset at start:
# it would compete with the tests for the 2 cores between their pages (tests/cli/test_serve_warm_up.py turns it on).
os.environ.setdefault("EXPLORER_WARM_UP", "0")


def pytest_configure(config):
    """One BLAS thread per process, as the CLI, the server and the Dask workers use: then the in-process
    Monte-Carlo and the Dask workers' give the same numbers bit for bit (a multi-threaded BLAS sums in a
    different order). Set before any thread starts (changing it later can deadlock OpenBLAS)."""
    from explorer.runtime.engine import use_single_threaded_blas

    use_single_threaded_blas()


@pytest.fixture(scope="session")
def dask_engine():
    """The engine the states of this test process share: a local Dask cluster, one worker process per core,
    started once per test session (it takes seconds) and closed at exit."""
    from explorer.runtime.engine import shared_engine

    return shared_engine()


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


@pytest.fixture
def empty_view_caches():
    """Empty the result caches of every view before and after a test (they are shared by all sessions of a
    server, so one test's results would otherwise be served to the next)."""
    from explorer.runtime.caches import clear_caches

    clear_caches()
    yield
    clear_caches()


def rbf(X: np.ndarray, Y: np.ndarray, length: float = 1.0) -> np.ndarray:
    """exp(-|x - x'|^2 / (2 l^2)), built inline (the kernels module is not under test where this is used)."""
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-sq / (2 * length**2))


def two_rings(rng: np.random.Generator, n: int = 30, length: float = 1.0, d: int = 2):
    """Two noisy rings (not linearly separable, separable with an RBF kernel): inputs X, labels y = ±1 and
    the RBF kernel matrix K of lengthscale ``length``."""
    X = rng.normal(size=(n, d))
    y = np.where(np.linalg.norm(X, axis=1) > 1.1, 1.0, -1.0)
    return X, y, rbf(X, X, length)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``explorer ARGV...`` in this process; return its exit code (that of a usage error too, which argparse
    raises as SystemExit), stdout and stderr."""
    from explorer import cli

    try:
        code = cli.main(list(argv))
    except SystemExit as exit_info:
        code = exit_info.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


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


# ------------------------------------------------------------------ the served app in a headless browser
# Debian's chromium driven by Playwright's Python package. The browser tests skip when chromium or
# Playwright is missing, unless EXPLORER_REQUIRE_BROWSER=1 (set by .ci/run), in which case they fail.

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]


def _require_browser(condition: bool, why: str) -> None:
    if not condition:
        if os.environ.get("EXPLORER_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required but {why}")
        pytest.skip(why)


def _ephemeral_ports() -> tuple[int, int]:
    """The kernel's range of ports for binds to port 0 and outgoing connections (Linux's default if unreadable)."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def _port_slice() -> range:
    """The ports this test process picks from: below the ephemeral range, in a slice of its own per pytest-xdist
    process (``gw0``, ``gw1``, ...)."""
    low, _ = _ephemeral_ports()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    width = 1_000
    start = max(low, 9 * width) - width * (1 + index % 8)  # a range starting under 9000 is not Linux's: overlap then
    return range(start, start + width)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now and stays free for the server a test is about to start.

    Not a port the kernel hands out for port 0: between this call and the server's bind (seconds, while the
    server imports and starts its Dask cluster) the kernel may give that port to any other process's bind to
    port 0 or outgoing connection (the other test process's Dask workers, chromium), and the server then exits
    with "Address already in use" (seen in CI). The port comes from below the ephemeral range instead, from a
    slice of ports of this test process's own, starting at a random place; the bind checks that it is free.
    """
    ports = _port_slice()
    rng = np.random.default_rng([os.getpid(), time.monotonic_ns()])  # two modules of one process: two places
    offset = int(rng.integers(len(ports)))
    for k in range(len(ports)):
        port = ports[(offset + k) % len(ports)]
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def wait_for_http(url: str, process: subprocess.Popen, seconds: float = 300, *, log=None,
                  timeout: float = 90) -> None:
    """Wait until ``url`` answers 200 (a page build takes seconds, more on a loaded 2-core machine); fail the
    test if ``process`` exits first or ``seconds`` pass (with the end of ``log``, a file, if given)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                if response.status == 200:
                    return
        except (OSError, http.client.HTTPException):  # not up yet (or another process's port for a moment)
            time.sleep(0.5)
    process.kill()
    said = ""
    if log is not None:
        log.seek(0)
        said = ": " + log.read().decode(errors="replace")[-2000:]
    ended = "exited" if process.poll() is not None else f"did not answer within {seconds:.0f} s"
    pytest.fail(f"{' '.join(map(str, process.args))[:120]} {ended} on {url}{said}")


@pytest.fixture(scope="module")
def browser():
    """A headless chromium (one per test module)."""
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    _require_browser(chromium is not None, "Debian's chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require_browser(False, "the playwright package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(browser):  # after the browser: no server is started when the test skips
    """``explorer serve`` on a free port (one per test module); yields its URL."""
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a chatty server never blocks on a full pipe
        proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}/"
        wait_for_http(url, proc, log=log)
        yield url
        proc.terminate()
        proc.wait(timeout=20)


def new_page(browser, width: int = 1280, height: int = 720):
    """A new page of ``browser``, ``width`` x ``height``, waiting up to 2 minutes per step (page loads and clicks on
    a loaded CI machine)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(120_000)
    return page


def open_page(browser, url: str, width: int = 1280, height: int = 720):
    """A :func:`new_page` of ``browser`` at ``url``."""
    page = new_page(browser, width, height)
    page.goto(url)
    return page


def console_errors(page) -> list[str]:
    """The list to which the browser console's errors and the uncaught exceptions of ``page`` are added from now on
    (before its first ``goto``: those of the page load too)."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def type_value(field, text: str) -> None:
    """Type ``text`` into the input ``field`` (a locator) as a student does: select all, type, Enter (which sends it)."""
    field.click()
    field.press("Control+a")
    field.type(text)
    field.press("Enter")


def save_screenshot(page, name: str) -> None:
    """Save a full-page screenshot to artifacts/NAME and check that it is not empty."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    assert (ARTIFACTS / name).stat().st_size > 10_000
