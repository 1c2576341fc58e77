"""The served app in a real headless browser (Debian's chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, switches dataset and S, checks that the plots update (each tab
shows a ``data-revision`` counter that increases when its plot is redrawn), that the browser console shows
no errors, and saves a screenshot to ``artifacts/``. Skips when chromium or Playwright is missing, unless
``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import console_errors, new_page, save_screenshot

pytestmark = pytest.mark.browser


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
    page = new_page(browser, 1400, 900)
    errors = console_errors(page)

    page.goto(server + "?tab=curve")
    first = _wait_revision_above(page, "curve", 0)
    page.locator(".explorer-plot-curve canvas").first.wait_for(timeout=30_000)
    # the page is ready once its Monte-Carlo has finished (a choice made while the page still sets up its
    # controls, in its first second or so, could be overwritten; the test plays a student who waits for the figure)
    page.locator(".explorer-job-message-curve pre", has_text="done").first.wait_for(timeout=180_000)
    first = _revision(page, "curve")

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

    save_screenshot(page, "browser.png")
    assert errors == [], errors
    page.close()
