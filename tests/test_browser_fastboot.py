"""The Fast bootstrap tab of the served app in a real headless browser (as ``test_browser.py``: Debian's
chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, lets the (small) learning-curve tab finish, opens the Fast bootstrap tab, switches the model to the RBFN and back
to the LS-SVM (the grids follow Table 1), lowers the replication counts, waits for the fast and the full
bootstrap, the summary table and the figures, checks that the browser console shows no errors and saves a
screenshot to ``artifacts/``. Skips when chromium or Playwright is missing, unless
``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _require(condition: bool, why: str) -> None:
    if not condition:
        if os.environ.get("EXPLORER_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required but {why}")
        pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    chromium = _chromium()
    _require(chromium is not None, "Debian's chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require(False, "the playwright package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(browser):  # after the browser: no server is started when the test skips
    port = _free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a chatty server never blocks on a full pipe
        proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}/"
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            proc.kill()
            log.seek(0)
            pytest.fail(f"explorer serve did not answer on {url}: {log.read().decode()[-2000:]}")
        yield url
        proc.terminate()
        proc.wait(timeout=20)


def _type(page, css: str, value: str) -> None:
    """Type ``value`` into the input of the widget with class ``css`` and send it (Enter)."""
    box = page.locator(f"{css} input").first
    box.click()
    box.press("Control+a")
    box.type(value)
    box.press("Enter")


def test_fast_bootstrap_tab_runs_in_the_browser_without_console_errors(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.set_default_timeout(120_000)  # page loads and clicks: generous for a loaded CI machine
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: errors.append("FAILED " + req.url))

    # a small learning-curve tab, and let its jobs finish before leaving it: Panel (1.9.4) rewrites shared
    # stylesheets to CDN addresses when a pane of a hidden tab is updated, which fails offline (any tab)
    page.goto(server + "?dataset=teacher&tab=curve&curve_mc_samples=20")
    page.locator(".explorer-job-message-curve pre", has_text="done").first.wait_for(timeout=180_000)
    page.locator(".bk-tab", has_text="Fast bootstrap").first.click()
    page.locator(".explorer-fastboot-job-message-fast pre", has_text="fast:").first.wait_for()

    # the RBFN: its grids (Table 1: 10..19 kernels) replace the LS-SVM's γ grid
    page.locator(".explorer-fastboot-model select").first.select_option("rbfn")
    page.locator(".explorer-fastboot-status", has_text="number of Gaussian kernels").first.wait_for()
    assert page.locator(".explorer-fastboot-full-start input").first.input_value() in ("10", "10.0")
    # back to the LS-SVM with few replications (seconds, even on a loaded machine)
    page.locator(".explorer-fastboot-model select").first.select_option("ls-svm")
    page.locator(".explorer-fastboot-status", has_text="regularization parameter").first.wait_for()
    _type(page, ".explorer-fastboot-full-replications", "10")
    _type(page, ".explorer-fastboot-fast-replications", "4")
    _type(page, ".explorer-fastboot-replica-points", "8")

    page.locator(".explorer-fastboot-job-message-fast pre", has_text="fast: done").first.wait_for(timeout=180_000)
    page.locator(".explorer-fastboot-job-message-full pre", has_text="full: done").first.wait_for(timeout=180_000)
    page.locator(".explorer-fastboot-summary th", has_text="fast bootstrap").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-summary th", has_text="full bootstrap").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-summary th", has_text="models_trained").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-status", has_text="fast bootstrap selects").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-plot-optimism canvas").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-plot-generalization canvas").first.wait_for(timeout=30_000)
    assert not page.locator(".explorer-fastboot-error").first.is_visible()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "browser-fastboot.png"), full_page=True)
    assert (ARTIFACTS / "browser-fastboot.png").stat().st_size > 10_000
    assert errors == [], "\n".join(errors)
    page.close()
