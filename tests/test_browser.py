"""The served app in a real headless browser (Debian's chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, switches dataset and S, checks that the plots update (each tab
shows a ``data-revision`` counter that increases when its plot is redrawn), that the browser console shows
no errors, and saves a screenshot to ``artifacts/``. Skips when chromium or Playwright is missing, unless
``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
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
def server():
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


def _revision(page, tab: str) -> int:
    node = page.locator(f".explorer-revision-{tab} [data-revision]").first
    return int(node.get_attribute("data-revision") or 0)


def _wait_revision_above(page, tab: str, previous: int, timeout: float = 60.0) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            current = _revision(page, tab)
        except Exception:  # noqa: BLE001 - element not rendered yet
            current = -1
        if current > previous:
            return current
        page.wait_for_timeout(250)
    raise AssertionError(f"the {tab} plot did not update (revision stayed at {previous})")


def test_served_app_switches_dataset_and_S_without_console_errors(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(120_000)  # page loads and clicks: generous for a loaded CI machine
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(server + "?tab=curve")
    first = _wait_revision_above(page, "curve", 0)
    page.locator(".explorer-plot-curve canvas").first.wait_for(timeout=30_000)

    # switch the dataset: the learning curve is redrawn for the new data
    page.locator(".explorer-dataset select").first.select_option("toy")
    second = _wait_revision_above(page, "curve", first)

    # switch S (typing a value and Enter sends the on-release update): the curve marks the new S
    s_input = page.locator(".explorer-s-over-n input").first
    s_input.click()
    s_input.press("Control+a")
    s_input.type("2")
    s_input.press("Enter")
    page.wait_for_function("() => /[?&]s_over_n=2(\\.0)?(&|$)/.test(window.location.href)", timeout=30_000)
    assert "dataset=toy" in page.evaluate("() => window.location.href")
    _wait_revision_above(page, "curve", second)

    # a link carries the controls' state: open the distribution tab at S/N = 2 and let MC finish
    page.goto(server + "?dataset=toy&s_over_n=2.0&tab=distribution&mc_samples=500")
    _wait_revision_above(page, "distribution", 0)
    page.locator(".explorer-plot-distribution canvas").first.wait_for(timeout=30_000)
    page.locator(".explorer-job-message-distribution pre", has_text="done").first.wait_for(timeout=120_000)
    assert page.locator(".explorer-s-over-n input").first.input_value() in ("2", "2.0", "2.00")

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "browser.png"), full_page=True)
    assert (ARTIFACTS / "browser.png").stat().st_size > 10_000
    assert errors == [], errors
    page.close()
