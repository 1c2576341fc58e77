"""A freshly started ``explorer serve`` warms up in the background, and a page opened meanwhile says so in its
sidebar (in a real browser; the other browser tests' servers start without the warm-up)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import free_port, wait_for_http

pytestmark = pytest.mark.browser


def test_a_page_of_a_warming_server_says_so_in_its_sidebar(browser):
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", EXPLORER_WARM_UP="1")
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_http(url, proc, log=log)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(120_000)
            page.goto(url)
            page.locator(".explorer-warm-up", has_text="still warming up").first.wait_for()
            note = page.locator(".explorer-warm-up", has_text="views ready").first
            note.wait_for()
            text = note.evaluate("el => (el.shadowRoot || el).textContent")
            assert "still warming up" in text and " of 19 views ready" in text  # defaults, every tab drawn, 17 presets
            page.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
