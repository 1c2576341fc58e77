"""The Model selection tab of the served app in a real headless browser (as ``test_browser.py``: Debian's
chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, opens the Model selection tab and its Experiments sub-panel, runs
one small experiment (Experiment 2, one data set), waits for its table and figure, checks that the browser
console shows no errors and saves a screenshot to ``artifacts/``. Skips when chromium or Playwright is
missing, unless ``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import pytest

from tests.conftest import console_errors, new_page, save_screenshot, type_value

pytestmark = pytest.mark.browser


def test_model_selection_experiment_runs_in_the_browser_without_console_errors(server, browser):
    page = new_page(browser, 1400, 1000)
    errors = console_errors(page)

    page.goto(server)
    page.locator(".bk-tab", has_text="Model selection").first.click()
    page.locator(".bk-tab", has_text="Experiments").first.click()
    page.locator(".explorer-experiment-job-message pre", has_text="not run yet").first.wait_for()

    # Experiment 2 on one teacher data set (a second or two)
    page.locator(".explorer-experiment-experiment select").first.select_option("curves")
    type_value(page.locator(".explorer-experiment-repetitions input").first, "1")
    page.locator(".explorer-experiment-parameter select").first.wait_for(state="visible")
    page.locator(".explorer-experiment-run button").first.click()

    page.locator(".explorer-experiment-job-message pre", has_text="experiment: done").first.wait_for(timeout=180_000)
    page.locator(".explorer-experiment-table td", has_text="asc-beta-noise").first.wait_for(timeout=30_000)
    page.locator(".explorer-experiment-status", has_text="1 data set(s)").first.wait_for(timeout=30_000)
    page.locator(".explorer-experiment-plot canvas").first.wait_for(timeout=30_000)
    assert not page.locator(".explorer-experiment-error").first.is_visible()

    save_screenshot(page, "browser-selection.png")
    assert errors == [], errors
    page.close()
