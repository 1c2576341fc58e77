"""Switching tabs while a background job runs, in a real headless browser (as ``test_browser.py``: Debian's
chromium driven by Playwright's Python package).

A job keeps updating the panes of a tab the user has left. With Panel's dynamic tabs those panes were
detached from the page's document, and Panel 1.9 then rewrote the page's shared stylesheets to
cdn.holoviz.org (failed requests offline); ``LazyTabs`` keeps an opened tab in the document. The test opens
the Predictive distribution tab, switches to the L1 map tab while the distribution's Monte-Carlo job runs
(both tabs show that job), waits for the job to finish, goes back, and checks that the page requested nothing
from another host and that the console shows no errors. Skips when chromium or Playwright is missing, unless
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
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser

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


def _job_message(page, tab: str) -> str:
    return page.locator(f".explorer-job-message-{tab} pre").first.inner_text()


def test_switching_tabs_while_a_job_runs_requests_nothing_from_other_hosts(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(120_000)  # page loads and clicks: generous for a loaded CI machine
    errors: list[str] = []
    external: list[str] = []
    origin = urlsplit(server).netloc
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda request: external.append(request.url)
            if urlsplit(request.url).scheme in ("http", "https", "ws", "wss")
            and urlsplit(request.url).netloc != origin else None)

    # enough Monte-Carlo samples that the job reports progress for several seconds
    page.goto(server + "?dataset=toy&tab=distribution&mc_samples=30000")
    page.locator(".explorer-job-message-distribution pre", has_text="samples").first.wait_for()
    page.locator(".bk-tab", has_text="L1 map").first.click()  # the hidden distribution tab keeps updating
    message = page.locator(".explorer-job-message-l1 pre").first
    message.wait_for()
    assert "done" not in _job_message(page, "l1"), "the job ended before the tab switch: raise mc_samples"
    page.locator(".explorer-job-message-l1 pre", has_text="done").first.wait_for(timeout=300_000)
    page.locator(".explorer-l1-summary", has_text="noise floor").first.wait_for(timeout=30_000)

    page.locator(".bk-tab", has_text="Predictive distribution").first.click()  # back: still styled locally
    page.locator(".explorer-plot-distribution canvas").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)  # let stylesheet requests of the re-attached tab go out
    assert external == [], external
    assert errors == [], errors
    page.close()
