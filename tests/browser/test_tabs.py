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

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser


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
