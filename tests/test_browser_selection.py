"""The Model selection tab of the served app in a real headless browser (as ``test_browser.py``: Debian's
chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, opens the Model selection tab and its Experiments sub-panel, runs
one small experiment (Experiment 2, one data set), waits for its table and figure, checks that the browser
console shows no errors and saves a screenshot to ``artifacts/``. Skips when chromium or Playwright is
missing, unless ``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
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
    proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
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
        pytest.fail(f"explorer serve did not answer on {url}: {proc.stdout.read().decode()[-2000:]}")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def test_model_selection_experiment_runs_in_the_browser_without_console_errors(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)  # page loads and clicks: generous for a loaded CI machine
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(server)
    page.locator(".bk-tab", has_text="Model selection").first.click()
    page.locator(".bk-tab", has_text="Experiments").first.click()
    page.locator(".explorer-experiment-job-message pre", has_text="not run yet").first.wait_for()

    # Experiment 2 on one teacher data set (a second or two)
    page.locator(".explorer-experiment-experiment select").first.select_option("curves")
    repetitions = page.locator(".explorer-experiment-repetitions input").first
    repetitions.click()
    repetitions.press("Control+a")
    repetitions.type("1")
    repetitions.press("Enter")
    page.locator(".explorer-experiment-parameter select").first.wait_for(state="visible")
    page.locator(".explorer-experiment-run button").first.click()

    page.locator(".explorer-experiment-job-message pre", has_text="experiment: done").first.wait_for(timeout=180_000)
    page.locator(".explorer-experiment-table td", has_text="asc-beta-noise").first.wait_for(timeout=30_000)
    page.locator(".explorer-experiment-status", has_text="1 data set(s)").first.wait_for(timeout=30_000)
    page.locator(".explorer-experiment-plot canvas").first.wait_for(timeout=30_000)
    assert not page.locator(".explorer-experiment-error").first.is_visible()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "browser-selection.png"), full_page=True)
    assert (ARTIFACTS / "browser-selection.png").stat().st_size > 10_000
    assert errors == [], errors
    page.close()
