"""The low-rank mode of the Gaussian-process pages in a real browser (issue 35, item 6): diamonds' 53,940 rows at
1280×720, and a second student's page answering while the large theory computes (it runs off the event loop).

Slow (a minute or two of evidence and theory on diamonds): run with ``pytest -m 'browser and slow'``.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import open_page, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _text(page, css: str) -> str:
    node = page.locator(css)
    return node.first.inner_text() if node.count() else ""


def _wait_text(page, css: str, words: str, seconds: float) -> float:
    """Seconds until the element ``css`` holds ``words``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if words in _text(page, css):
            return time.monotonic() - start
        page.wait_for_timeout(250)
    raise AssertionError(f"{css} did not say {words!r} within {seconds:.0f} s; it says {_text(page, css)!r}")


def test_diamonds_runs_in_the_low_rank_mode_and_another_page_answers_meanwhile(server, browser):
    errors: list[str] = []
    page = open_page(browser, server + "?dataset=diamonds&tab=curve&rank=64")
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.locator(".explorer-rank input").first.wait_for(state="visible")  # the rank shows for large data only
    # while the evidence and the theory of 53,940 rows compute, another student's page (dense toy) gets its curve
    other = open_page(browser, server + "?dataset=toy&tab=curve")
    _wait_text(other, ".explorer-status-curve div", "theory on 15 values", 60)
    assert not other.locator(".explorer-rank input").first.is_visible()
    other.close()
    _wait_text(page, ".explorer-status-curve div", "theory on 5 values of S/N", 600)
    status = _text(page, ".explorer-status-curve div")
    assert "N = 53,940, low-rank kernel m = 64" in status and "ADATAP iterations" in status
    assert "Waits for 'Run Monte-Carlo'" in _text(page, ".explorer-job-message-curve pre")
    save_screenshot(page, "large-data-curve.png")
    page.locator(".explorer-run-curve button").first.click()
    _wait_text(page, ".explorer-job-message-curve pre", "samples", 120)  # Monte-Carlo started, with its progress
    assert not errors, errors
