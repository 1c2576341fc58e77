"""The GP page's large-data mode on a Dask cluster in a real browser (issue 49, point 5): ``explorer serve
--scheduler ADDRESS`` (the scheduler of a local cluster this test starts) offers a data-folder CSV of 62,000 rows —
above the 60,000 of a server with its own cluster — and the page's theory and Monte-Carlo run in chunks on the
cluster, at 1280×720, with no error in the page.

Slow (the evidence fit, five ADATAP solves and 250 refits on the cluster): ``pytest -m 'browser and slow'``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from tests.conftest import console_errors, free_port, open_page, save_screenshot, wait_for_http

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROWS = 62_000


def _status(page, kind: str) -> str:
    node = page.locator(f".explorer-status-{kind} div")
    return node.first.inner_text() if node.count() else ""


def _wait(page, kind: str, words: str, seconds: float) -> None:
    start = time.monotonic()
    while words not in _status(page, kind):
        if time.monotonic() - start > seconds:
            raise AssertionError(f"the {kind} status did not say {words!r} within {seconds:.0f} s: "
                                 f"{_status(page, kind)!r}")
        page.wait_for_timeout(500)


@pytest.fixture(scope="module")
def cluster_server(browser, tmp_path_factory):
    from explorer.runtime.engine import connect

    folder = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(ROWS, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=ROWS)
    np.savetxt(folder / "big.csv", np.c_[X, y], delimiter=",", header="a,b,c,y", comments="", fmt="%.6f")
    engine = connect(workers=2, memory_limit="1GB", dashboard=False)
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show",
                                 "--no-warm-up", "--scheduler", engine.client.scheduler.address, "--data-dir",
                                 str(folder)], stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}/"
        try:
            wait_for_http(url, proc, log=log)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=20)
            engine.close()


def test_a_62_000_row_file_runs_in_chunks_on_the_cluster(cluster_server, browser):
    page = open_page(browser, "about:blank")
    errors = console_errors(page)
    page.goto(cluster_server + "?dataset=file%3A%20big.csv&tab=curve&rank=32&curve_mc_samples=50")
    _wait(page, "curve", "theory on 5 values of S/N", 400)
    assert f"N = {ROWS:,}, low-rank kernel m = 32" in _status(page, "curve")
    assert page.get_by_text("random subsample of 5,000 of the 62,000 rows").count()  # the evidence notice
    page.locator(".explorer-run-curve button").first.click()
    _wait(page, "curve", "Monte-Carlo: 5/5 values of S/N", 400)
    save_screenshot(page, "cluster-large-data-curve.png")
    assert not [e for e in errors if "favicon" not in e], errors
